# The page's words (ui/*.js and ui/index.html).

# This language's name in its own words, in the language choice.
language-name = English

## The window's frame (ui/index.html)

queue-toggle =
    .aria-label = Show the waiting requests
    .title = Waiting requests
sidebar =
    .aria-label = Requests
nav-waiting = Waiting
queue-list =
    .aria-label = Waiting requests
rules-notice = ⚠ The rules file has an error
nav-history = History
nav-rules = Rules
nav-connect = Connect
nav-devices = Devices
sidebar-dnd = Do not disturb
    .title = While on, new questions go to the next answerer (or fail NO_PROVIDER)
sidebar-notify-only = Notify only
    .title = { notify-only-title }
sidebar-without-focus = Show without focus
    .title = A window a question opens does not take the keyboard focus from what you are doing
sidebar-language = Language
    .title = The language of askdesk's own words; agents' questions stay as they wrote them
language-system = System ({ $language })
language-fixed = Set for this run by ASKDESK_LANG
idle-title = No questions waiting
idle-text = When an agent asks you something, it appears here and as a notification. Closing this window keeps askdesk running in the tray.
sent-title = Sent
sent-text = Your answer went to the agent. This window closes by itself.
keys-hint = 1–9 pick · Tab moves · Enter submits · Esc hides
dismiss = Dismiss
    .title = Cancel the whole request: the agent is told you declined
always = Always answer this way here
    .title = Submit, and save a rule that answers the same request from this project this way from now on (you see it before it is saved)
submit = Submit
close-ended = Close
    .title = Close this ended question: what you typed stays in History
history-title = History
history-search =
    .placeholder = Search questions, answers, plans…
    .aria-label = Search History
history-filter-agent = Agent
history-all-agents = All agents
history-filter-answerer = Answered by
history-anyone = Anyone
history-filter-outcome = Outcome
history-all-outcomes = All outcomes
rules-title = Rules
confirm-title = Open this link in your browser?
confirm-cancel = Cancel
confirm-ok = Open in browser

## Notify only (ui/choices.js)

notify-only-forced = Set for this run by --notify-only or ASKDESK_NOTIFY_ONLY
notify-only-title = New questions raise a notification; the window opens only when you open it
setting-not-kept = The setting was not kept: { $error }

## Times (ui/dom.js)

waited-just-now = just now
waited-minutes = { $minutes } min
waited-hours = { $hours } h
waited-hours-minutes = { $hours } h { $minutes } min
waited-days = { $days ->
        [one] { $days } day
       *[other] { $days } days
    }
day-today = today
day-yesterday = yesterday
day-on = on { $date }

## The queue and the asker (ui/app.js)

queue-toggle-waiting = { $waiting ->
        [0] Show the waiting requests (none waiting)
       *[other] Show the waiting requests ({ $waiting } waiting)
    }
queue-ended = ended
queue-progress =
    .title = questions answered of the batch
queue-rule-title = Rule “{ $rule }” will { $action }
queue-rule-held = rule held
rule-differs = Your choice differs: you picked { $ours }, the rule will answer { $theirs }.
rule-differs-in = Your choice differs: you picked { $ours }, the rule will answer { $theirs } to “{ $question }”.
rule-differs-more = { $more ->
        [one] ({ $more } more question differs.)
       *[other] ({ $more } more questions differ.)
    }
rule-differs-nothing = nothing
asker-asks = { $questions ->
        [1] asks
       *[other] asks { $questions } questions
    }
asker-asked = { $questions ->
        [1] asked
       *[other] asked { $questions } questions
    }
# A sentence the desk composed (why a request ended), ended as a sentence.
ended-said = { $said }.
ended-note = Nothing was sent. What you typed stays here to copy, and in History, until you close it.
age-asked = asked
age-waiting = waiting
chip-agent-id = agent id
deadline-hold = Hold
deadline-release = Release
deadline-not-held = Not held: { $error }
deadline-held-before = Rule “{ $rule }” would { $action }: held by you with
deadline-held-after = left. It waits until you release it.
deadline-will-before = Rule “{ $rule }” will { $action } in
deadline-will-after = unless you answer
keys-pick = 1–{ $digits } pick
keys-pick-one = 1 picks
keys-send = Ctrl+Enter sends
keys-tab = Tab moves
keys-esc = Esc hides
use-again = Use again
draft-not-kept = What you typed is not kept if the window closes: { $error }
too-late = Too late: the agent withdrew this question before your answer arrived.
too-late-kept = Too late: the agent withdrew this question before your answer arrived. It is kept in History.
not-sent = Not sent: { $error }
answer-missing = { $missing ->
        [one] Answer or skip the highlighted question.
       *[other] Answer or skip the { $missing } highlighted questions.
    }
sent-answer = Answer sent.
sent-feedback = Feedback sent.
sent-feedback-answers = Feedback and answers sent.
rule-saved = Rule saved.
always-save = Save rule and submit
dismissed = Dismissed: the agent was told you declined.
note-close = Close
    .aria-label = Close this note
note-answered = Rule “{ $rule }” answered { $who }'s question “{ $question }”: { $answer }.
note-acted = Rule “{ $rule }” acted on { $who }'s question “{ $question }”: { $action }.
note-history = Show in History
history-not-yet = That request is not in History (yet).
history-unavailable = History unavailable: { $error }
rules-file-open = The rules file is open in your editor: the rules show here once you save it.
not-opened = Not opened: { $error }
rules-unavailable = Rules unavailable: { $error }
# The mode is the rules file's word for it (on, shadow, off).
rule-mode-now = Rule “{ $name }” is { $mode } now.
not-changed = Not changed: { $error }
link-not-opened = Could not open the link: { $error }
not-dismissed = Not dismissed: you have typed an answer. Click Dismiss to drop it.
elsewhere-where = Answered on { $device }
elsewhere-toast = Answered on { $device }: { $who }'s question.
elsewhere-who = { $who }'s question was answered there.

## A question (ui/question.js)

other-placeholder-free = Type your answer…
other-placeholder-multi = Add something of your own…
other-placeholder-single = Type your own answer instead…
other-aria = Other answer to: { $question }
answer-aria = Answer to: { $question }
recommended = Recommended
option-image = Image of { $option }
other = Other
skip = Skip this question
undo-skip = Undo skip
skipped-note = Skipped — the agent gets no answer to this one.
kept-note = Your text is kept: clear it, or click Skip, to skip this question.
choose-any = Choose any
choose-one = Choose one

## A plan review (ui/plan.js)

plan-doc =
    .aria-label = Plan. J and K move between blocks, C comments on the selected block.
plan-comment-block = Comment on this block (C)
plan-comment-selection = Comment on selection (C)
plan-what-added = added
plan-what-changed = changed
plan-what-removed = removed
plan-what-moved = moved
plan-removed-title = Removed: { $path }
plan-carried = Carried forward from your last review
plan-edit = Edit
plan-remove = Remove
plan-edit-on = Edit comment on { $path }
plan-remove-on = Remove comment on { $path }
plan-outdated = Outdated
plan-outdated-small = outdated
plan-last-review = Last review
plan-outdated-why = the block changed since this comment
plan-carry = Carry forward
plan-resolve = Resolve
plan-comment-placeholder = Your comment on this part of the plan…
plan-comment-on = Comment on { $path }
plan-the-block = the block
# Byte counts as digits alone: they name a limit to compare, not a quantity to read.
plan-too-long = Too long: a comment may have at most { NUMBER($max, useGrouping: 0) } bytes (this one has { NUMBER($bytes, useGrouping: 0) }). Shorten it or split it.
plan-bytes = { NUMBER($bytes, useGrouping: 0) } of at most { NUMBER($max, useGrouping: 0) } bytes
plan-editor-keys = Ctrl+Enter saves · Esc leaves the box
plan-cancel = Cancel
plan-save-comment = Save comment
plan-changes-nav =
    .aria-label = Changes since the last review
plan-changes = Changes
plan-changes-keys = N / P
    .title = N: next change · P: previous change
plan-comments-empty = Select a block (J/K or a click) and press C, or select text inside it, to comment.
plan-from-last-review = From your last review
plan-gone = No longer in the plan
plan-comments-go = { $comments ->
        [one] Your comment goes back with your feedback, quoted from the plan.
       *[other] Your { $comments } comments go back with your feedback, quoted from the plan.
    }
plan-version = Version { $version }
plan-version-decision = Version { $version }: { $decision }
plan-asked-at = asked { $when }
plan-back-to = Back to version { $version }
plan-show-clean = Show clean plan
plan-show-changes = Show changes
plan-change-first = { $count ->
        [one] { $count } block { $what }
       *[other] { $count } blocks { $what }
    }
plan-change-more = { $count } { $what }
plan-changes-since = Changes since version { $version }
plan-no-changes-since = No changes since version { $version }
plan-you-asked = You asked last time
plan-earlier = { " " }· earlier:
plan-outline =
    .aria-label = Plan outline
plan-contents = Contents
plan-send-feedback = Send feedback · keep planning
plan-send-option = Send “{ $option }”
plan-approving-drops = Approving drops { $what }.
plan-feedback-placeholder = What should change? Your feedback goes back to the agent instead of a choice.
plan-feedback-aria = Feedback on the plan
plan-sends-skipped = Skipped: nothing is sent for this plan
plan-sends-instead = Sends: your feedback, instead of a choice
plan-sends-labels = Sends: { $labels }
plan-sends-labels-feedback = Sends: { $labels } and your feedback
plan-sends-feedback = Sends: your feedback
plan-sends-nothing = Nothing chosen yet
plan-feedback = Feedback
plan-comments-panel =
    .aria-label = Comments on the plan
plan-comments = Comments
plan-kicker = Plan for review
plan-keys = J/K select a block · C comment
plan-image = Image of the plan
plan-key-select = J/K select a block
plan-key-comment = C comment
plan-key-changes = N/P changes
plan-pending-feedback = your feedback
plan-pending-comments = { $count ->
        [one] { $count } comment
       *[other] { $count } comments
    }
plan-pending-pictures = { $count ->
        [one] { $count } picture
       *[other] { $count } pictures
    }
plan-picture-label = Your picture for the plan
plan-drop-title = Approve and drop { $what }?
plan-drop-text = This review takes an approval or feedback, not both: approving drops { $what }.
plan-drop-send-itself = { $items ->
        [one] To send it instead, go back and use Send feedback.
       *[other] To send them instead, go back and use Send feedback.
    }
plan-drop-submit = { $items ->
        [one] To send it instead, go back and Submit.
       *[other] To send them instead, go back and Submit.
    }
plan-go-back = Go back
plan-drop-ok = { $items ->
        [one] Approve and drop it
       *[other] Approve and drop them
    }
plan-notes-title = { $comments ->
        [one] Send your comment with the approval?
       *[other] Send your { $comments } comments with the approval?
    }
plan-notes-text = { $comments ->
        [one] This review can carry notes with the approval: your comment would go back quoted from the plan, next to the approval.
       *[other] This review can carry notes with the approval: your { $comments } comments would go back quoted from the plan, next to the approval.
    }
plan-notes-send = { $comments ->
        [one] Approve and send your comment as notes
       *[other] Approve and send your { $comments } comments as notes
    }
plan-notes-drop = Approve without them

## History (ui/history.js)

history-nothing-matches = Nothing matches.
history-nothing-yet = Nothing has been asked yet.
history-show-more = Show { $count } more
history-newest = The newest { $shown } of { $matching }.
history-today = Today
history-yesterday = Yesterday
history-by = by
history-when =
    .title = asked { $asked }, settled { $settled }
history-plan-versions = { $versions ->
        [one] Plan · { $versions } version
       *[other] Plan · { $versions } versions
    }
history-show-all = Show all of it
history-show-line = Show one line
history-draft = draft, not sent
history-answer-picture = Picture in the answer
history-draft-picture = Picture in the draft, not sent
history-images-omitted = { $images ->
        [one] Its image is not kept in History: over 1 MiB
       *[other] Its { $images } images are not kept in History: over 1 MiB
    }
history-make-rule = Make a rule
history-rule-saved = Rule saved
history-was-skipped = skipped

## Rules (ui/rules.js)

# The rules file's own words for the modes (on, shadow, off) stay as they are; these name the switch.
rules-mode-on = On
    .title = The rule acts
rules-mode-shadow = Shadow
    .title = The rule only suggests; you decide
rules-mode-off = Off
    .title = The rule is ignored
rules-mode-aria = Mode of rule { $name }
rules-no-folder = No configuration folder: answer rules are off.
rules-error-title = The rules file has an error
rules-error-at = Line { $line }, column { $column }: { $problem }
rules-error-kept = { $rules ->
        [0] No rules are in force until it is fixed.
        [one] The last good rules stay in force until it is fixed: the rule below.
       *[other] The last good rules stay in force until it is fixed: the { $rules } rules below.
    }
rules-list-none = No rules.
rules-empty = No rules yet. A rule answers the questions it matches, so they never reach you; write them in the rules file. For example, running the tests in one project is always fine:
rules-empty-from-answer = Or press “{ always }” beside { submit }, or “{ history-make-rule }” in { history-title }, to make one from an answer.
rules-open-file = Open rules file
rules-line = line { $line }
rules-matches = Matches
rules-does = Does
rules-after = After
# Each count's number is shown before these words.
rules-count-hits = { $count ->
        [one] hit
       *[other] hits
    }
    .title = Journaled requests this rule applies to now
rules-count-acted = acted
    .title = Requests this rule settled
rules-count-agreed = agreed
    .title = Requests you settled the way this rule would have
rules-count-differed = differed
    .title = Requests you settled differently
rules-suggests = Rule “{ $rule }” (shadow) suggests: { $says }
rules-use = Use
rules-used = Used

## A rule's preview (ui/rule_preview.js)

rule-preview-save = Save rule
rule-preview-drafting = Drafting the rule…
rule-preview-cancel = Cancel
rule-preview-close = Close
# The reason comes from the backend.
rule-preview-none = No rule is offered: { $why }.
rule-preview-not-offered = Not offered: { $why }.
rule-preview-scope = Answer this way
rule-preview-any-number = any number
rule-preview-any-name = any name (letters, digits, _ . / -)
rule-preview-shadow-first = Try it as a shadow first (it suggests, you decide)
rule-preview-says-shadow = As a shadow, the rule only suggests its answer under the question; you still decide.
rule-preview-says-on = From now on, these requests from this project are answered this way without asking you.
# The rules file's path goes between these two.
rule-preview-path-before = The rule is added at the end of
rule-preview-path-after = .
rule-preview-file-problem = The rules file has a problem, and saving will be refused until it is fixed: { $problem }
rule-preview-matched = { $count ->
        [0] no past requests
        [one] { $count } past request
       *[other] { $count } past requests
    }
rule-preview-matched-none = It would have matched nothing in History.
# $matched is rule-preview-matched.
rule-preview-matched-title = In History, it would have matched { $matched }:
rule-preview-who-by = { $who }, answered by { $by }
rule-preview-more = and { $more } earlier

## Connect (ui/connect.js)

connect-title = Connect your agents
connect-welcome = Welcome to askdesk. Connect the agents you use, and their questions and permission prompts come here instead of the terminal. Nothing is written until you have seen the change.
connect-unavailable = Connect unavailable: { $error }
connect-connected = Connected
connect-outdated = Needs update
connect-not-connected = Not connected
connect-error = Cannot read its settings
connect-not-installed = Not installed
connect-update = Update
connect-connect = Connect
connect-disconnect = Disconnect
# What a client is connected through: its hooks, or askdesk's MCP tools (their names stay).
connect-via-hook = permission prompts, plans, questions
connect-via-mcp = ask_user_question and review_plan tools
connect-install-first = No { $folder }: install { $client } first
connect-other-title = Other MCP clients
connect-other-text = Cursor and other clients with an mcpServers setting: add this to their settings file.
connect-copy = Copy
connect-copied = Copied
connect-not-copied = Not copied: select the text and press Ctrl+C.
connect-unchanged = { $file } already says this; nothing to change.
connect-write = Write this change
connect-cancel = Cancel
connect-diff-connecting = Connecting changes { $file }:
connect-diff-disconnecting = Disconnecting changes { $file }:
connect-backup = The previous file is kept as { $file }.
connect-next = What is left to do:
connect-autostart = Start askdesk in the tray when I log in
connect-autostart-on = askdesk starts in the tray when you log in.
connect-autostart-off = askdesk no longer starts when you log in.
connect-autostart-available = The app waits in the tray, so agents can ask you all day.
connect-autostart-from-source = Installed from source: the package adds the login entry.

## Devices (ui/devices.js)

devices-title = Devices
devices-unavailable = Devices unavailable: { $error }
devices-enable = Answer from your phone
devices-enable-text = Paired phones see the questions waiting here and may answer them, over your own network only: nothing goes through anyone else’s server. Permission prompts stay at the desk.
devices-listen-on = Listen on
devices-choose-address = Choose an address…
# An address to listen on: its IP, the kind of network (below) and the interface's name.
devices-address = { $ip } — { $kind } ({ $interface })
devices-kind-tailnet = tailnet
devices-kind-lan = LAN
devices-kind-loopback = this computer only
devices-kind-other = other network
devices-port = Port
devices-cert = Certificate (PEM)
devices-cert-placeholder = askdesk’s own authority
devices-key = Its key (PEM)
devices-key-placeholder = with your certificate only
devices-address-hint = A tailnet address reaches your phone wherever it is and admits only your devices; a LAN address, everything on that network. askdesk never listens on every interface.
devices-apply = Apply
devices-save = Save
# The address phones use follows.
devices-serving = Serving phones at
devices-answering-at = Phones can answer at { $origin }.
devices-answering-off = Phones can no longer answer.
devices-wake = Waking the phone
devices-wake-show = Show the question on the lock screen (text and choices only; otherwise “An agent is waiting”)
# Two times of day follow these: "from [22:00] to [07:00]".
devices-quiet-from = Quiet hours from
devices-quiet-to = to
# A number of minutes goes between these two.
devices-idle-before = Only when this desk is locked or idle for
devices-idle-after = minutes
devices-wake-hint = Permission prompts never show their content on the lock screen. Where this desk cannot tell whether you are at it, the phone is woken.
devices-push-woken = woken by notifications
devices-push-lost = notifications dropped by its push service { $when } ({ $status }): open the page on the phone to turn them on again
devices-push-unsubscribed = not subscribed to notifications
devices-trust-title = Your phone does not trust this desk yet
devices-trust-why = This desk’s certificate comes from askdesk’s own authority, which no phone trusts until you install it. Until then the phone’s browser warns about the page and cannot pair.
devices-trust-scan = Scan this code with the phone, accept the warning once, and download the certificate from the page it opens:
devices-trust-iphone = iPhone:
devices-trust-iphone-steps = install the downloaded profile in Settings, then turn on full trust in Settings → General → About → Certificate Trust Settings.
devices-trust-android = Android:
devices-trust-android-steps = Settings → Security → Encryption & credentials → Install a certificate → CA certificate.
devices-trust-own-cert = With a certificate of your own (tailscale cert, your domain) there is nothing to install.
devices-trust-qr = QR code of the page that installs askdesk’s authority
devices-paired = Paired phones
devices-none-paired = No phone is paired.
devices-add = Add a phone
devices-add-title = Show a QR code for the phone’s camera
devices-add-off-title = Turn on “{ devices-enable }” first
devices-paired-at = paired { $when }
devices-last-seen = last seen { $when }
devices-never-seen = never connected
devices-passkey-allowed = may add a passkey now
devices-passkey = passkey
devices-no-passkey = no passkey
devices-allow-passkey = Allow a passkey
devices-allow-passkey-title = Let this phone register a passkey (its fingerprint, face or PIN) in the next 5 minutes: it needs one to allow permission prompts
devices-passkey-allowed-toast = { $device } may add a passkey in the next 5 minutes.
devices-not-allowed = Not allowed: { $error }
devices-revoke = Revoke
devices-revoked-toast = { $device } can no longer answer.
devices-not-revoked = Not revoked: { $error }
devices-cannot-pair = Cannot pair now: { $error }
devices-cancel = Cancel
devices-close = Close
# $time is minutes:seconds.
devices-valid-for = Valid for { $time }
devices-expired = The code expired before a phone used it. Start again with “{ devices-add }”.
devices-pair-scan = Open the camera on your phone and point it at this code. Only a phone that scans it here can pair.
devices-pair-qr = QR code of the pairing address
# The phone's name is shown before this.
devices-asks-to-pair = asks to pair. Does the phone show this code?
devices-codes-differ = If the codes differ, press { devices-cancel }: another phone may have scanned the QR code.
devices-codes-match = Codes match
devices-is-paired = { $device } is paired.
devices-not-paired = Not paired: { $error }

## Images (ui/images.js)

image = Image
image-yours = Your picture
# One of several: "Image 2 of 3".
image-numbered = { $label } { $number } of { $count }
image-enlarge = { $name }: enlarge
image-remove = Remove
image-remove-aria = Remove { $name }
