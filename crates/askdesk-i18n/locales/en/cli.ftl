# askdesk's command-line output for people (the tables and sentences; never --json, never the
# protocol's error messages, which stay as the protocol gives them).

## askdesk history

history-none-match = no request in the history matches ({ $recorded } recorded)
history-empty = no history yet
history-col-when = WHEN (UTC)
history-col-agent = AGENT
history-col-outcome = OUTCOME
history-col-question = QUESTION
history-col-answer = ANSWER
history-col-by = BY
# After a question's text when the request asked several.
history-more = { " " }(+more)
history-skipped = (skipped)

## askdesk status

status-server = { $name } { $version } at { $socket }
status-connections = connections: { $count }
status-history = history: { $state }
status-history-on = on
status-history-off = off (--no-history)
status-history-failing = FAILING, answers are delivered but not recorded
status-history-unavailable = UNAVAILABLE, nothing is recorded
status-agents = agents: { $count }
status-owned = { " " } (owned)
status-answerers = answerers (chain order): { $count }
status-prepended = { " " } prepended
status-pending = pending requests: { $count }
status-no-agent = no agent
status-request = { $agent }  { $questions ->
        [one] { $questions } question
       *[other] { $questions } questions
    }  waiting { $age }
status-held-by = { " " } held by { $holder }
# How long a request has waited: "59s", "1m 0s", "2h 5m".
age-seconds = { $seconds }s
age-minutes = { $minutes }m { $seconds }s
age-hours = { $hours }h { $minutes }m

## askdesk devices

devices-none = no device is paired
devices-never = never
devices-suspended = suspended
devices-ok = ok
devices-col-name = NAME
devices-col-paired = PAIRED (UTC)
devices-col-seen = LAST SEEN (UTC)
devices-col-scope = SCOPE
devices-col-passkey = PASSKEY
devices-col-push = PUSH
devices-passkey-may = may register
devices-passkey-yes = yes
devices-passkey-no = no
devices-push-on = on
devices-push-off = off
devices-push-dropped = dropped { $when } ({ $status })
devices-col-state = STATE
devices-scope-up-to = up to { $class }
devices-scope-agents = ; agents { $agents }
devices-scope-projects = ; in { $projects }
devices-revoked = revoked { $name }
devices-scoped = scoped { $name }
devices-confirmed = confirmed { $name }

## askdesk remote

remote-serving = serving phones at { $origin }
remote-pairing-failed = Pairing failed: { $reason }
remote-open-on-phone = open on the phone within { $seconds } s: { $url }
remote-asks-to-pair = "{ $name }" asks to pair: type the code it shows
remote-paired = paired "{ $name }"

## askdesk hook install / uninstall

# The hook could not get a decision: the agent's client asks the person itself.
hook-fell-back = askdesk hook: { $reason }; { $client } shows its own prompt instead
hook-merge-into = Merge this into { $path }:
hook-installed-already = The askdesk hook for { $client } is installed in { $path } already; nothing changed.
hook-installed = Installed the askdesk hook for { $client } in { $path } (PermissionRequest, matcher { $matcher }, timeout { $timeout } s).
hook-backup = The previous file is kept as { $path }.
hook-not-installed = The askdesk hook for { $client } is not installed in { $path }; nothing changed.
hook-without = { $path } without the askdesk hook:
hook-removed = Removed the askdesk hook for { $client } from { $path }.

## askdesk rules list / test

rules-none = no rules in { $path }
rules-col-rule = RULE
rules-col-mode = MODE
rules-col-after = AFTER
rules-col-action = ACTION
rules-col-hits = HITS
rules-col-acted = ACTED
rules-col-agreed = AGREED
rules-col-differed = DIFFERED
rules-warning = warning: { $warning }
rules-span-all = the whole journal
rules-span-since = the last { $since }
rules-replayed = { $requests ->
        [one] { $requests } request
       *[other] { $requests } requests
    } from { $span }, replayed through { $path }
rules-rule = rule { $name } ({ $mode }, line { $line }): { $action }
rules-applies = { " " } applies to { $hits ->
        [one] { $hits } request
       *[other] { $hits } requests
    }; settled { $acted } itself; agrees with you on { $agreed }, differs on { $differed }
rules-differs-rule = { "    " }rule: { $verdict }
rules-differs-you = { "    " }you:  { $settled }
rules-verdict-answer = answer { $answer }
rules-verdict-ask = ask you
rules-settled-answered = answered { $answer }
rules-settled-dismissed = dismissed
rules-settled-failed = failed ({ $code })
rules-settled-withdrawn = withdrawn
rules-unmatched = no rule applies to { $unmatched ->
        [one] { $unmatched } request
       *[other] { $unmatched } requests
    }

## askdesk doctor

# Each finding's level, at the start of its line.
doctor-ok = ok
doctor-warning = warning
doctor-problem = problem
# The line under a finding that is not ok.
# A finding: what it is about, and what was found.
doctor-finding = { $topic }: { $what }
doctor-fix = fix: { $fix }
doctor-summary = { $problems ->
        [one] { $problems } problem
       *[other] { $problems } problems
    }, { $warnings ->
        [one] { $warnings } warning
       *[other] { $warnings } warnings
    }
# What each finding is about (a client is named by its own name).
doctor-topic-broker = broker
doctor-topic-session-bus = session bus
doctor-topic-notifications = notifications
doctor-topic-tray = tray
doctor-topic-rules = rules
doctor-topic-history = history
doctor-start = start the desktop app (askdesk-desktop, or from your launcher), or run `askdesk serve`
doctor-broker-desktop = the desktop app
doctor-broker-serve = `askdesk serve` (no desktop answerer: nothing shows a dialog)
doctor-broker-answers = { $which } answers at { $socket } (askdesk { $version })
doctor-broker-none = no askdesk broker is running at { $socket }
doctor-broker-failed = the broker at { $socket } failed: { $error }
doctor-broker-failed-fix = stop whatever holds the socket, then { $start }
doctor-broker-silent = the broker at { $socket } did not answer within { $seconds } s (stopped or hung)
doctor-broker-silent-fix = resume it (`kill -CONT`) or end it, then start it again
doctor-bus-unset = DBUS_SESSION_BUS_ADDRESS is not set: the desktop app can raise no notification and show no tray icon
doctor-bus-unset-fix = run askdesk in your desktop session (a terminal of it has the variable), or start one with `dbus-run-session -- askdesk-desktop`
doctor-notifications-ok = a notification server runs on the session bus
doctor-notifications-missing = no notification server on the session bus: questions open the window but raise no notification
doctor-notifications-fix = start your desktop's notification daemon (or `dunst`)
doctor-tray-ok = a tray host (StatusNotifierWatcher) runs on the session bus
doctor-tray-missing = no tray host (StatusNotifierWatcher) on the session bus: the app's tray icon and waiting count do not show
doctor-tray-fix = on GNOME enable the AppIndicator extension (gnome-shell-extension-appindicator); other desktops have a tray of their own
doctor-bus-unasked = cannot ask the session bus for { $name }: { $reason }
doctor-bus-unasked-fix = install dbus-send (the dbus-bin package) so doctor can check
doctor-no-dbus-send = cannot run dbus-send: { $error }
doctor-set-home = set HOME
doctor-client-absent = not installed here (no { $dir })
doctor-hook-install = `askdesk hook install { $client }`, or Connect in the desktop app
doctor-fix-file-then = fix the file, then { $install }
doctor-fix-named-file = fix the file the message names
doctor-mcp-ok = askdesk is an MCP server: { $command } mcp
doctor-mcp-broken = askdesk's MCP entry runs { $command }, which { $why }
doctor-mcp-broken-fix = add it again with the askdesk installed now (see docs/mcp.md), or Connect in the desktop app
doctor-connect-by-hand = Connect in the desktop app, or add the MCP entry by hand (docs/mcp.md)
doctor-not-connected = installed ({ $dir }) but not connected to askdesk
doctor-hook-broken = the hook runs { $program }, which { $why }
doctor-hook-ok = hook installed, asking at { $socket }
doctor-hook-elsewhere = the hook asks at { $asks }, but the broker here is at { $here }
doctor-hook-restart-codex = { $install }, then restart Codex: its background server keeps the environment of the first codex started
doctor-hook-codex-unnamed = the hook names no socket: it asks wherever the environment of the first codex started points
doctor-hook-codex-unnamed-fix = { $install } (it writes the socket into the command)
doctor-hook-env-given = the environment Claude Code gives it, not --socket
doctor-hook-env = Claude Code's environment (ASKDESK_SOCKET, else XDG_RUNTIME_DIR)
doctor-hook-env-ok = hook installed, asking at the socket of { $how }: here { $here }
# Why a program a client's entry runs cannot run, after "which".
doctor-program-missing = is not there (or is not executable)
doctor-program-off-path = is not on PATH
doctor-rules-set-home = set XDG_CONFIG_HOME or HOME
doctor-rules-none = no rules file ({ $path }): nothing is answered by rule
doctor-rules-broken-fix = fix the line it names (docs/rules.md); meanwhile a running broker keeps the last rules that loaded
doctor-rules-count = { $path } holds { $count ->
        [one] { $count } rule
       *[other] { $count } rules
    }
doctor-rules-warning-fix = add a `match` that names the agent, tool or project it is for
doctor-history-set-home = set XDG_DATA_HOME or HOME
doctor-history-failing = the broker cannot record answers: { $reason }
doctor-history-no-reason = no reason given
doctor-history-failing-fix = free disk space, or fix the journal's folder (answers are delivered meanwhile)
doctor-history-off = the broker runs with --no-history: answers are not recorded
doctor-history-off-fix = start it without --no-history
doctor-history-none = none yet; it will be kept in { $path }
doctor-history-unreadable = cannot read { $path }: { $error }
doctor-history-unreadable-fix = fix the folder's permissions
doctor-history-not-folder = { $path } is not a folder: nothing can be recorded
doctor-history-move = move { $path } away
# A file or folder and its permission bits: "/home/me/.local/share/askdesk is 755".
doctor-history-mode = { $path } is { $mode }
doctor-history-not-writable = { $path } is not writable by you
doctor-history-foreign = { $path } is not writable by you (another user owns it)
doctor-history-chown = give it back to you: chown -R $USER { $dir }; chmod 700 { $dir }
doctor-history-loose = not private: { $loose }; others can read your answers
doctor-history-chmod = chmod 700 { $dir } && chmod 600 { $dir }/* (a broker tightens them when it opens the journal)
doctor-history-ok = { $path } ({ $kib } KiB, private, writable)
