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
