# The phone's page (crates/askdesk-remote/page: app.js, passkey.js, push.js, index.html), sent to
# the page by the desk in the desk's language. Agents' text is never a message here.

## The frame and pairing

phone-loading = Loading…
phone-default-name = My phone
phone-pair-title = Pair with this desk
phone-pair-text = This phone will be able to answer the questions your agents ask at the desk.
phone-pair-name = Name of this phone
phone-pair-button = Pair this phone
phone-pair-bad-proof = The desk does not know this pairing link. Start again at the desk.
phone-pair-too-many-tries = Too many tries: start again at the desk.
phone-pair-expired = This pairing link expired. Start again at the desk.
phone-pair-already-used = This pairing link was already used. Start again at the desk.
phone-pair-refused = The desk refused the pairing ({ $status }).
phone-confirm-title = Confirm at the desk
phone-confirm-text = Check that the desk shows this code, and confirm it there:
phone-confirm-then = This page opens the questions once the desk has confirmed.
phone-not-confirmed-title = The desk did not confirm
phone-not-confirmed-text = The code was not confirmed at the desk in time, or not the one this phone showed. Pair again from the desk.
phone-not-paired = Not paired
phone-not-paired-title = This phone is not paired
phone-not-paired-text = The desk does not know this phone (or revoked it). Pair it again from the desk.
phone-unpaired-title = Pair this phone from the desk
phone-unpaired-text = At the desk: Devices, then Add a phone (or run askdesk remote --pair), then open the link it shows on this phone.
phone-install-authority = Install this desk's certificate authority

## The connection

phone-connecting = Connecting…
phone-connected = Connected as { $device }
phone-unreachable = Desk unreachable since { $time }

## The requests

phone-nothing-waiting = Nothing is waiting.
phone-an-agent = An agent
phone-send = Send
phone-dismiss = Dismiss
phone-remove = Remove
phone-skip = Skip
phone-recommended = Recommended
phone-choose-any = Choose any
phone-other = Other…
    .aria-label = Other
phone-your-answer = Your answer…
    .aria-label = Other
phone-expires-in = Expires in { $left }
phone-expired = Expired

## A plan under review

phone-feedback = Feedback for the agent…
    .aria-label = Feedback
phone-send-feedback = Send feedback
phone-comment-on = On { $block }
    .aria-label = Comment on { $block }
phone-tap-to-comment = Tap a part of the plan to comment on it.
phone-comments-are-feedback = Comments go back as feedback: send them, or remove them to approve.
phone-version = Version { $version } ·{" "}
phone-changes-since = Changes since version { $since }{" "}
phone-no-changes-since = No changes since version { $since }

## What became of a request (each line ends with the time it happened)

phone-sending = Sending…
phone-ended = { $why } { $time }
phone-sent = Sent { $time }
phone-lost = Sent, but the desk went away before confirming it: check at the desk { $time }
phone-claimed = Answered on another device…
phone-gone = No longer waiting…
phone-answered-on = Answered on { $device }
phone-answered-on-desk = Answered on the desk
phone-withdrawn = The agent withdrew it
phone-no-longer-waiting = No longer waiting
phone-not-sent = Not sent: { $reason }
phone-not-sent-unreachable = Not sent: the desk is unreachable

## Passkeys and permission prompts

phone-passkey-title = A passkey for this phone
phone-passkey-text = The desk allows this phone a passkey for a few minutes. With it (your fingerprint, face or PIN each time), this phone can allow an agent's permission prompts.
phone-passkey-add = Add a passkey
phone-passkey-replace = Replace this phone's passkey
phone-passkey-waiting = Waiting for your fingerprint, face or PIN…
phone-passkey-added = Passkey added: this phone can allow permission prompts.
phone-passkey-failed = No passkey added: { $reason }
phone-command-more =
    { $hidden ->
        [one] … { $hidden } more character …
       *[other] … { $hidden } more characters …
    }
phone-command-whole =
    { $lines ->
        [one] Show the whole command ({ $lines } line)
       *[other] Show the whole command ({ $lines } lines)
    }
phone-command-short = Show its head and tail
phone-desk-only = Only the desk may answer this: { $reason }
phone-only-at-desk = only at the desk
phone-passkey-needs-name = passkeys need the desk served under a name
phone-passkey-needed = needs a passkey: allow one at the desk
phone-permission-prompt = Permission prompt
phone-fact-tool = Tool
phone-fact-agent = Agent
phone-fact-cwd = Working directory
phone-fact-path = Path
phone-fact-command = Command

## Waking the phone (push.js)

phone-push-unsupported = This browser cannot wake the phone when a question waits.
phone-push-failed = This phone will not be woken: { $reason }.
phone-push-denied = Notifications are off for this page: the phone will not be woken.
phone-push-allow = Wake this phone when a question waits
phone-push-setting-up = Setting up notifications…
phone-push-on = This phone is woken when a question waits.
phone-push-no-answer = the browser's push service did not answer
phone-push-no-key = the desk did not give its key ({ $status })
phone-push-refused = the desk refused it ({ $reason })

## Answering with a picture
phone-picture-add = Add a picture
phone-picture-remove = Remove
phone-picture-named = { $name } · { $kib } KiB
phone-picture-unnamed = picture · { $kib } KiB
phone-picture-unreadable = This picture could not be read on this phone
phone-picture-not-with-approve = Pictures go back as feedback: send them, or remove them to approve.
