# The phone's server (crates/askdesk-remote/src): what it tells a phone, the lock screen, the
# certificate authority's page, and the problems the desk's Devices view and `askdesk remote` show.

## The lock screen (push.rs)

remote-push-waiting = An agent is waiting ({ $waiting })
remote-push-answered = Answered on the desk

## Why a phone's answer was refused (remote.rs)

remote-refusal-not-paired = this device is not paired (or was revoked)
remote-refusal-not-pending = the request is no longer waiting
remote-refusal-unsigned = the answer is not signed
remote-refusal-stale = the request changed: its digest does not match
remote-refusal-bad-signature = the signature does not match the device's key and this request
remote-refusal-nonce-reused = this nonce was already used
remote-refusal-too-many-attempts = too many attempts on this request
remote-refusal-expired = the request's deadline has passed: the desk decides it
remote-refusal-bad-answer = the answer breaks the rules of its questions: { $reason }
remote-refusal-malformed = the message is malformed: { $reason }
remote-refusal-desk-only = only the desk may allow this: { $reason }
remote-refusal-standing = a standing permission is given only at the desk
remote-refusal-passkey-required = allowing a permission prompt needs this device's passkey
remote-refusal-passkeys-unavailable = passkeys need the desk served under a name, not an address
remote-refusal-passkey-not-allowed = the desk does not allow this device to register a passkey now: allow one at the desk
remote-refusal-no-passkey = this device has no passkey: allow one at the desk
remote-refusal-bad-passkey = the passkey was refused: { $reason }
remote-refusal-out-of-scope = this request is outside the device's scope
remote-refusal-rate-limited = this device gave too many approvals lately: answer at the desk
remote-refusal-suspended = this device is suspended after bad signatures: confirm it again at the desk
remote-refusal-unknown-push-service = { $host } is not a known push service: the desk sends notices only to those
remote-refusal-internal = the desk cannot check the device: { $reason }
remote-passkey-other-answer = the passkey was asked for another answer
remote-passkey-not-verified = the passkey did not verify the person

## Pairing (pairing.rs)

remote-pairing-bad-proof = the pairing proof does not match any pairing offered at the desk
remote-pairing-too-many-tries = too many tries: start pairing again at the desk
remote-pairing-expired = the pairing expired: start pairing again at the desk
remote-pairing-already-used = this pairing was already used: start pairing again at the desk
remote-pairing-not-claimed = no phone has claimed this pairing yet
remote-pairing-wrong-code = the code does not match: the pairing was ended, start again
remote-pairing-unknown = no such pairing
remote-pairing-store = cannot store the device: { $reason }

## Why only the desk may answer a permission prompt (desk_only.rs)

remote-desk-only-unreadable = its { $key } is not text the desk can read
remote-desk-only-unclear = the desk cannot tell everything it runs
remote-desk-only-escape = the desk cannot read it without running it: { $escape }
remote-desk-only-outside = it reaches outside the project: { $path }
remote-desk-only-protected = it touches a place that runs code or holds trust (askdesk's rules, an agent's settings or hooks, a shell's start-up files, git's hooks or config)
remote-desk-only-other-user = it runs a command as another user ({ $name })
remote-desk-only-rm = it deletes recursively (rm)
remote-desk-only-find-delete = it deletes recursively (find -delete)
remote-desk-only-force-push = it force-pushes (git push)
remote-desk-only-download = it runs a download ({ $downloader }) with a shell or an interpreter ({ $interpreter })
remote-desk-only-no-project = the desk cannot tell where its project is (no absolute working directory)

## The remote's problems, in the Devices view and from `askdesk remote` (error.rs, devices.rs, push.rs)

remote-error-no-data-directory = no data directory: set XDG_DATA_HOME or HOME
remote-error-every-interface = refusing to listen on { $addr }: that is every network interface; pick one address (a LAN or tailnet address), or force all interfaces explicitly
remote-error-no-served-name = no name to serve: give the address or name the phone will use
remote-error-bad-name = { $name } is not a host name or an IP address
remote-error-listen = cannot listen on { $addr }: { $reason }
remote-error-certificate-name = the certificate { $path } is not valid for { $name }: { $reason }
remote-error-generate = cannot make the certificates: { $reason }
remote-error-device-store = { $path }: not a device list askdesk wrote: { $reason }
remote-error-device-store-version = version { $version } (this askdesk reads { $reads })
remote-error-no-certificate = no certificate in the file
remote-quiet-hours-bad = { $text } is not quiet hours: write HH:MM-HH:MM, as 22:00-07:00
remote-quiet-hours-empty = { $text } is empty: the quiet hours start and end at once

## The certificate authority's page (pages.rs, /ca)

remote-ca-title = Trust this desk
remote-ca-nothing = This desk serves a certificate from an authority your phone already trusts: there is nothing to install.
remote-ca-own = This desk made its own certificate authority. It can vouch only for { $names } (it is name-constrained), so installing it lets your phone trust this desk and nothing else.
remote-ca-fingerprint = Fingerprint of the desk's certificate (SHA-256, base64url):
remote-ca-download = Download the certificate authority
remote-ca-ios = iPhone and iPad
remote-ca-ios-1 = Open this page in Safari and tap the download link; allow the profile download.
remote-ca-ios-2 = Settings, General, VPN & Device Management: open the askdesk profile, Install.
remote-ca-ios-3 = Settings, General, About, Certificate Trust Settings: turn on full trust for askdesk.
remote-ca-android = Android
remote-ca-android-1 = Tap the download link and keep the file.
remote-ca-android-2 = Settings, Security (or Security & privacy), More security settings, Encryption & credentials, Install a certificate, CA certificate; choose the file.
remote-ca-android-3 = Chrome trusts it from then on; some apps do not use user certificates.
remote-ca-remove = To remove it later: the same settings pages, Remove or Delete.

## The installed page's description (manifest.webmanifest)

remote-manifest-description = Answer the questions your agents ask at the desk.

## An answer whose pictures, re-encoded, make it longer than the host passes on

remote-answer-too-big = with its pictures re-encoded the answer is { $bytes } bytes, over the limit of { $max } bytes this desk passes on (answer-bytes): send fewer or smaller pictures
