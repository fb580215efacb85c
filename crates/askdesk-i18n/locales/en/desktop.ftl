# The desktop app's own words outside the page: its notifications and its tray icon.

## Notifications

# The agent's name comes isolated, as the agent wrote it.
notify-asks = { $agent } asks
notify-more = ({ $more ->
        [one] +{ $more } more question
       *[other] +{ $more } more questions
    })
notify-rule-will = Rule “{ $rule }” will { $action } in { $left } unless you answer.
notify-open = Open
notify-hold = Hold
notify-waiting = { $count ->
        [one] { $count } question waiting
       *[other] { $count } questions waiting
    }
notify-and-more = and { $more } more
notify-gone-title = That question is no longer waiting
notify-gone-body = It was settled before your click; nothing was sent.
# A time left: "45 s", "10 min", "2 h", "2 h 5 min".
notify-seconds = { $seconds } s
notify-minutes = { $minutes } min
notify-hours = { $hours } h
notify-hours-minutes = { $hours } h { $minutes } min

## The tray icon

tray-open = Open askdesk
tray-dnd = Do not disturb
tray-quit = Quit askdesk
tray-waiting = { $waiting ->
        [0] askdesk — no questions waiting
        [one] askdesk — { $waiting } question waiting
       *[other] askdesk — { $waiting } questions waiting
    }

## The sentences the app composes for the page (the page shows them as they come)

# An outcome as History names it (its filter and its entries).
desktop-history-outcome-answered = Answered
desktop-history-outcome-dismissed = Dismissed
desktop-history-outcome-withdrawn = Withdrawn
desktop-history-outcome-failed = Failed
desktop-history-outcome-late-answer = Late answer
# Who answered, in History's "by" column and its filter, when it was the desktop's dialog.
desktop-history-you = you
# The line under a question answered before; the page adds the day. The labels are the options'.
desktop-past-you = You answered { $what }
desktop-past-rule = Rule “{ $rule }” answered { $what }
desktop-past-other = { $who } answered { $what }
desktop-past-unknown = Answered { $what }
# A rule acted on a waiting request: its note's headline and what it was about (also its
# notification's title and body).
desktop-rule-note-answered = Rule “{ $rule }” answered: { $answer }
desktop-rule-note-acted = Rule “{ $rule }”: { $action }
desktop-rule-note-about = { $who } asked: { $question }
# A question of an answer that has neither a pick nor text.
desktop-answer-skipped = skipped
# A request that left without the person, on its card.
desktop-ended-withdrew = { $who } withdrew the question
desktop-ended-disconnected = { $who } disconnected (the process ended)
# How a plan version ended, in the plan pane and History.
desktop-plan-approved-notes = approved with notes
desktop-plan-approved = approved
desktop-plan-feedback-sent = feedback sent
desktop-plan-chose = chose “{ $label }”
desktop-plan-skipped = skipped
desktop-plan-no-answer = no answer
desktop-plan-dismissed = dismissed
desktop-plan-withdrawn = withdrawn
desktop-plan-answered-on = answered on { $device }
desktop-plan-decided-by = decided by { $by }
# "Make a rule": the scopes offered, and why none is.
desktop-draft-exact = This exact question
desktop-draft-similar = Questions like it from { $agent }
desktop-draft-header = Every question headed “{ $header }”
desktop-draft-header-none = Every question with this header
desktop-draft-not-answered = this request was not answered, so there is no answer to repeat
desktop-draft-by-rule = this request was answered by a rule ({ $rule }), not by you
# A rule's match in the Rules view, where it is not the file's own words.
desktop-rules-match-everything = every request
desktop-rules-match-cwd = cwd under { $cwd }
# Who asked, when the request is no longer known.
desktop-the-agent = the agent

## What a command of the page reports when it cannot do what was asked (the page shows it)

desktop-command-picture-failed = the picture could not be processed
# The refusal names the limit or the type, as the image checks say it.
desktop-command-picture-refused = This picture is not attached: { $refusal }
desktop-command-no-rules-file = there is no rules file
desktop-command-no-journal = there is no history journal
desktop-command-entry-gone = this entry is no longer in the history
desktop-command-link-scheme = { $scheme } links are not opened
desktop-command-not-waiting = the request is no longer waiting
desktop-command-no-catalogue = askdesk has no catalogue for { $name }
desktop-phone-choose-address = choose the address your phone reaches this computer at
desktop-phone-certificate-pair = give both a certificate and its key, or neither
desktop-phone-no-config-dir = no configuration directory (HOME is not set)
desktop-phone-one-address = choose one address: listening on every interface is not offered here
desktop-phone-idle-limit = “only when this desk is idle” takes at most { $minutes } minutes
desktop-phone-no-device = no paired device has that name
desktop-phone-turn-on = turn on “Answer from your phone” first
desktop-phone-no-qr = no QR code fits the URL
desktop-phone-stopped = the remote stopped: start pairing again

## Why an answer, its plan comments or a draft were not taken (the page shows it)

desktop-request-gone = this request is no longer waiting: the agent withdrew it before the answer arrived
desktop-comment-no-plan = this request has no plan under review
# Comments count from 1, as the person does.
desktop-comment-no-block = comment { $index }: the plan has no block { $key }
# A comment the person should fix: the block it is on, and what is wrong with it (below).
desktop-comment-bad = your comment { $index } on “{ $path }” { $problem }
desktop-comment-empty = is empty
desktop-comment-too-long = is too long: { $bytes } bytes, and a comment may have at most { $limit } bytes (about as many characters of plain text); shorten it or split it
desktop-comment-quote-too-long = quotes too much of the plan: at most { $limit } bytes; select less text, or comment on the whole block
desktop-comment-too-many = at most { $limit } comments can be sent at once
desktop-comment-no-past = the last review has no comment { $index }
desktop-comment-cannot-carry = comment { $index } of the last review is on a part of the plan that is gone; it can only be resolved
desktop-draft-not-object = a draft is a JSON object
desktop-draft-too-large = a draft may have at most { $limit } bytes (this one has { $bytes })
desktop-draft-too-many-pictures = an answer may have at most { $limit } pictures
desktop-picture-not-attached = This picture is not attached: { $error }
