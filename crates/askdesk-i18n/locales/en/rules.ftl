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

## The rules file's errors (`askdesk rules check`, `list` and `test`, the Rules view, a rule made or
## switched there). The file's keys, in backticks, are the file's own and stay as written.

# Where in the file a problem is, and what it is.
rules-error-where = line { $line }, column { $column }: { $message }
rules-error-read = cannot read { $path }: { $error }
rules-error-no-config-dir = no configuration directory: set XDG_CONFIG_HOME or HOME
rules-error-refused = { $path }: { $message }; the file is unchanged
rules-error-write = cannot write { $path }: { $error }; the file is unchanged
rules-error-not-utf8 = it is not UTF-8 text (the first bad byte is at offset { $offset })
# Names and values are quoted as the file writes them.
rules-error-duplicate = a rule named { $name } is already defined on line { $first }
rules-error-answer-form = `answer` is an option's label ("Yes") or a table: {"{"} option = "<label>" {"}"}, {"{"} recommended = true {"}"} or {"{"} text = "..." {"}"}
rules-error-ask-false = `ask = false` means nothing: leave it out
rules-error-no-action = rule { $name } has no action: give one of `answer`, `deny`, `dismiss`, `ask`
rules-error-two-actions = rule { $name } has more than one action: give only one of `answer`, `deny`, `dismiss`, `ask`
rules-error-after-ask = `after` with `ask = true` means nothing: the human is asked anyway
rules-error-command-needs-tool = `match.command` needs `match.tool`: say which tool runs the command
rules-error-cwd-absolute = `match.cwd` must be an absolute path, not { $cwd }
rules-error-url-path-needs-host = `match.url_path` needs `match.host`: say which site the path is on
rules-error-not-host = `match.host` { $host } is not a host name
rules-error-path-absolute = `match.{ $field }` must start with `/` or `*`, not { $glob }: it is matched against an absolute path
rules-error-path-dots = `match.{ $field }` { $glob } holds `.` or `..`: paths are matched resolved, so write the place itself
rules-error-host-empty = `match.host` must not be empty
rules-error-host-only = `match.host` is a host name only ("docs.rs", "*.github.com"), not { $host }
rules-error-intent-empty = `match.intent` must not be empty
rules-error-intent-typo = `match.intent` { $kind } is not a kind agents send: did you mean { $known }?
rules-error-recommended-false = `answer.recommended = false` means nothing: name an option instead
rules-error-answer-one = `answer` takes exactly one of `option = "<label>"`, `recommended = true`, `text = "..."`
rules-error-empty = `{ $field }` must not be empty
rules-error-after-zero = `after` must be longer than zero: leave it out to act at once
rules-error-after-long = `after` may be at most 7d, not { $text }: a rule that waits longer is no deadline
rules-error-duration = { $text } is not a duration: write it like "30s", "10m" or "1h30m"
rules-error-question-regex = `match.question` is not a regular expression: { $detail }
rules-error-glob-long = a glob with `*` or `?` may be at most { $limit } characters long, not { $length }
# A rule that answers with a standing permission (the labels are the client's own, quoted).
rules-error-standing = rule { $rule } answers { $label }, a standing permission for the rest of the session that covers more than the rule matches, and the calls it covers would never reach askdesk again: answer { $once } (the rule then answers each call it matches)

## Why a rule is not added or switched (the Rules view, "Make a rule"); the file is unchanged

rules-edit-new-invalid = the new rule is not valid: { $error }
rules-edit-not-one = the new rule text must hold exactly one [[rule]], not { $count }
rules-edit-not-table = the new rule must be written as a [[rule]] table
rules-edit-name-taken = a rule named { $name } already exists (line { $line }): choose another name
rules-edit-inline-array = its rules are written as an inline array (`rule = [...]`), which a [[rule]] cannot follow: add the rule by hand
rules-edit-would-not-load = with the new rule the file would not load: { $error }
rules-edit-no-file = there is no rules file
rules-edit-not-toml = it is not TOML: { $error }
rules-edit-not-tables = its rules are not written as [[rule]] tables: change the mode by hand
rules-edit-no-rule = there is no rule named { $name }
rules-edit-mode-not-string = rule { $name } has a `mode` that is not a string
rules-edit-mode-would-not-load = with the new mode the file would not load: { $error }
rules-edit-does-not-load = it does not load ({ $error }): fix it first, then try again

## Why a command line is never answered by a rule: it cannot be read without running it

rules-escape-unparseable = it does not parse as a shell command line
rules-escape-character = it holds a control, invisible or unquoted non-ASCII character
rules-escape-substitution = it substitutes a command's output
rules-escape-expansion = a word of it is expanded when it runs
rules-escape-assignment = it sets a variable
rules-escape-redirection = it redirects to or from a file
rules-escape-background = it runs a command in the background
rules-escape-construct = it uses a compound or unusual shell construct
rules-escape-program = it runs a program that runs other commands or code
rules-escape-subscript = it gives a builtin a variable name with a subscript
rules-escape-config = it sets git configuration that runs a program

## Why no rule may allow a change to a place: who reads it, and what a change could make run or trust

rules-place-askdesk-config = askdesk: the rules file and settings
rules-place-askdesk-data = askdesk: the history journal the rules and memory replay
rules-place-claude-code = Claude Code: settings.json (hooks, permissions, MCP servers), commands, agents
rules-place-claude-state = Claude Code: MCP servers and each project's trust
rules-place-claude-mcp = Claude Code: a project's MCP servers, started as commands
rules-place-claude-managed = Claude Code: managed settings (hooks, permissions)
rules-place-codex = Codex: config.toml (MCP servers, notify command), hooks.json
rules-place-codex-managed = Codex: managed configuration and requirements
rules-place-gemini = Gemini CLI: settings.json (MCP servers, hooks, tool commands)
rules-place-gemini-system = Gemini CLI: system settings and system defaults
rules-place-git-dir = git: hooks, config (core.hooksPath, core.fsmonitor, core.pager, filters), info/attributes, submodules' and worktrees' git folders
rules-place-git-config = git: the global config (aliases, core.pager, filters, hooksPath)
rules-place-git-xdg = git: config, attributes and ignore under the XDG configuration folder
rules-place-git-system = git: the system config
rules-place-bash = bash: start-up files (login, interactive, logout)
rules-place-bash-sourced = bash: sourced by the distributions' ~/.bashrc (Debian, Fedora)
rules-place-readline = readline (bash's line editor): key bindings, $include
rules-place-zsh = zsh: start-up files (in the home or $ZDOTDIR)
rules-place-oh-my-zsh = zsh: Oh My Zsh, sourced by ~/.zshrc where installed
rules-place-fish = fish: config.fish, conf.d, functions
rules-place-sh = sh, dash, ksh, mksh: start-up files
rules-place-csh = csh, tcsh: start-up files
rules-place-session = the desktop session: run at log-in
rules-place-ssh = ssh: config (ProxyCommand, LocalCommand) and authorized_keys
rules-place-shells-system = the shells: system-wide start-up files
