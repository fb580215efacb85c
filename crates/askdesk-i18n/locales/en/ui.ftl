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
history-images-omitted = { $images ->
        [one] Its image is not kept in History: over 1 MiB
       *[other] Its { $images } images are not kept in History: over 1 MiB
    }
history-make-rule = Make a rule
history-rule-saved = Rule saved
history-was-skipped = skipped
