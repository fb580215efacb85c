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
rules-verdict-deny = deny ({ $message })
rules-verdict-dismiss = dismiss ({ $message })
rules-verdict-ask = ask you
rules-settled-answered = answered { $answer }
rules-settled-dismissed = dismissed
rules-settled-failed = failed ({ $code })
rules-settled-withdrawn = withdrawn
rules-unmatched = no rule applies to { $unmatched ->
        [one] { $unmatched } request
       *[other] { $unmatched } requests
    }
