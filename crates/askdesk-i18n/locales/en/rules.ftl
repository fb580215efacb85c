# The answer rules' own words, for the command line, the desktop and the log alike: what a rule
# does, and what is risky about one. A rule's name, its answer and its message are the file's own.

## What a rule does (the ACTION column, the Rules view, a rule's deadline)

# The answer as the rules file names it, quoted: answer "Yes".
rules-action-answer = answer { $label }
rules-action-recommended = answer the recommended option
rules-action-text = answer with the text { $text }
rules-action-ask = ask the human
# What a rule that does not answer decides, with the message the agent is sent.
rules-verdict-deny = deny ({ $message })
rules-verdict-dismiss = dismiss ({ $message })

## What is risky about a rule that loads

rules-warning-empty-match = rule { $name } (line { $line }) answers with an empty match: it answers every request it fits, from any agent in any project (permission prompts and plan reviews excepted); give it a `match`
# What a broad command allow still lets through (docs/rules.md says the same at length).
rules-broad-allow = it also allows whatever those programs run themselves: files run by an interpreter or build tool (`python3 x.py`, `make`, `npm test`), code read from a file or input, and options that run code (`awk` `system()`, `sed`'s `e`, a repository's own git hooks, aliases and filters); askdesk refuses only the wrappers, inline code and git settings it knows
rules-warning-broad-allow = rule { $name } (line { $line }) allows commands broadly: { rules-broad-allow }

## Why no rule is drafted from an answer ("Make a rule"); names, labels and texts are quoted

rules-draft-no-question = there is no question to make a rule from
rules-draft-plan = a plan review is not made into a rule: a rule cannot see the plan, so it would decide every plan from this project the same way
rules-draft-same = the rule { $name } (line { $line }) already answers this way here
rules-draft-shadowed = the rule { $name } (line { $line }) already decides this request, and a rule added after it would never act: change that rule or switch it off in the Rules view
rules-draft-no-cwd = the agent did not say which project it works in (no absolute `cwd`), so there is no “here” for a rule
rules-draft-standing = { $label } grants a standing permission for the rest of the session, and a rule answers one call at a time: answer { $once } to make a rule from the answer
rules-draft-prompt-exact = a permission prompt's rule names its exact command, file or address: a broader one would allow what you have not seen, so write it by hand
rules-draft-no-agent = the question came from no named agent, so there is no “this agent” for a rule
rules-draft-no-header = the question has no header
rules-draft-headers-differ = the questions do not share one header
rules-draft-nothing-varies = nothing in the question varies (it has no numbers or names), so questions like it are only this exact question
rules-draft-file-unsure = the file { $file } cannot be resolved for sure (a relative path without the agent's folder, a link to nowhere, a folder that cannot be read), or it is one no rule may allow changing, so no rule is made for it
rules-draft-not-http = { $url } is not a plain http or https address, so no rule is made for it
rules-draft-nothing-to-narrow = this { $tool } prompt names no command, file or web address to narrow a rule to, and a rule for every { $tool } call would answer them all: answer it each time, or write a rule by hand
rules-draft-unanswered = the answer has nothing for { $question }, and a rule answers every question
rules-draft-skipped = a skipped question cannot be skipped by a rule: a rule answers every question
rules-draft-several = several picks (or a pick with typed text) in one question cannot be given by one rule: a rule picks one option or types one text
rules-draft-different = the questions got different answers, and one rule gives every question the same answer
rules-draft-cannot = no rule could be drafted that gives this answer ({ $why })
rules-draft-would-not-answer = the rule would not answer this request
rules-draft-would-differ = the rule would answer differently

## Why a rule's deadline could not be held or released (the page shows it)

rules-hold-no-deadline = no rule's deadline runs on this request any more: it was answered, or its rule acted or changed
