//! [`Remote`]: what the server's handlers and the desk share: the served names, the device store,
//! the pairing offers, the held requests, the devices' passkeys, and the checks a signed answer
//! passes before it is yielded to the adapter.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use askdesk_core::sync::lock;
use askdesk_core::{Answer, RequestId};
use askdesk_i18n::t;
use askdesk_view::plan_thread::{self, CommentInput, PlanThreads};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::{broadcast, oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::devices::{Device, DeviceStore};
use crate::digest;
use crate::error::Error;
use crate::keys::{self, DeviceKey};
use crate::limits::{Approvals, Limits};
use crate::names::Served;
use crate::pairing::{Claim, Claimed, PairingError, PairingId, Pairings};
use crate::passkeys::{Passkeys, StoredPasskey, REGISTRATION_WINDOW};
use crate::pending::{
    Ending, OfferError, Pending, PendingRequest, Settled, Shown, Update, VerifiedAnswer,
    MAX_ATTEMPTS,
};
use crate::push::{PushReport, PushSettings, Pusher, Pushing, Subscription, Vapid};
use crate::risk::{Class, Risk};
use crate::scope::Scope;

/// The remote's shared state; cheap to clone.
#[derive(Clone)]
pub struct Remote {
    inner: Arc<Inner>,
}

struct Inner {
    served: Served,
    fingerprint: String,
    authority_der: Option<Vec<u8>>,
    devices: DeviceStore,
    pairings: Mutex<Pairings>,
    claims: broadcast::Sender<Claimed>,
    pending: Mutex<Pending>,
    /// The plan reviews offered, by thread, for each revision's changes (askdesk-view's). It
    /// knows the versions, not what was decided on them (the desk's answers do not pass here).
    threads: PlanThreads,
    limits: Limits,
    approvals: Mutex<Approvals>,
    passkeys: Passkeys,
    pushing: Pushing,
    /// Bumped on every revoke and every change of the device list on disk: each socket then
    /// checks its own device is still paired.
    revocations: Arc<watch::Sender<u64>>,
    /// Reports changes of the device list made by other processes; held for the remote's life.
    /// `None` where it cannot be set up (no inotify, its limit reached): a device revoked by
    /// another process then keeps an open socket until it next sends, which is refused and
    /// closes it.
    _store_watch: Option<notify::RecommendedWatcher>,
    shutdown: CancellationToken,
}

/// A pairing offer for the desk to show as a QR code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairingOffer {
    pub id: PairingId,
    /// `https://<host>:<port>/pair#v1.<token>.<certificate fingerprint>`.
    pub url: String,
    /// How long the offer stays valid.
    pub lifetime: Duration,
}

/// A device's signed answer as it arrives.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedAnswer {
    /// The request's id as the remote sent it (`r<n>`).
    pub id: String,
    /// base64url of 16 random bytes, new for each answer.
    pub nonce: String,
    /// The answer exactly as signed; `null` dismisses the whole batch.
    pub answer: Value,
    /// The request digest the device computed (base64url); optional, for a clearer refusal.
    #[serde(default)]
    pub digest: Option<String>,
    /// Comments on blocks of the plan under review (`[{"block", "quote"?, "text"}]`), signed with
    /// the answer; the remote folds them into the plan's feedback text as the desk does.
    #[serde(default)]
    pub comments: Option<Value>,
    /// base64url of the 64-byte P1363 signature.
    #[serde(default)]
    pub signature: Option<String>,
    /// The passkey's assertion (WebAuthn `PublicKeyCredential`, binary fields base64url) over the
    /// challenge the remote bound to this answer's digest: needed to allow a permission prompt.
    #[serde(default)]
    pub passkey: Option<Value>,
}

/// A device asks for a passkey challenge to allow a permission prompt with this answer: the
/// answer, comments and nonce it will sign, so the challenge is bound to their digest.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllowIntent {
    pub id: String,
    pub nonce: String,
    pub answer: Value,
    #[serde(default)]
    pub comments: Option<Value>,
}

/// Why a signed answer was refused; the device is told the code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("{}", t!("remote-refusal-not-paired"))]
    NotPaired,
    #[error("{}", t!("remote-refusal-not-pending"))]
    NotPending,
    #[error("{}", t!("remote-refusal-unsigned"))]
    Unsigned,
    #[error("{}", t!("remote-refusal-stale"))]
    Stale,
    #[error("{}", t!("remote-refusal-bad-signature"))]
    BadSignature,
    #[error("{}", t!("remote-refusal-nonce-reused"))]
    NonceReused,
    #[error("{}", t!("remote-refusal-too-many-attempts"))]
    TooManyAttempts,
    #[error("{}", t!("remote-refusal-expired"))]
    Expired,
    #[error("{}", t!("remote-refusal-bad-answer", reason = .0.as_str()))]
    BadAnswer(String),
    #[error("{}", t!("remote-refusal-malformed", reason = .0.as_str()))]
    Malformed(String),
    #[error("{}", t!("remote-refusal-desk-only", reason = .0.as_str()))]
    DeskOnly(String),
    #[error("{}", t!("remote-refusal-standing"))]
    Standing,
    #[error("{}", t!("remote-refusal-passkey-required"))]
    PasskeyRequired,
    #[error("{}", t!("remote-refusal-passkeys-unavailable"))]
    PasskeysUnavailable,
    #[error("{}", t!("remote-refusal-passkey-not-allowed"))]
    PasskeyNotAllowed,
    #[error("{}", t!("remote-refusal-no-passkey"))]
    NoPasskey,
    #[error("{}", t!("remote-refusal-bad-passkey", reason = .0.as_str()))]
    BadPasskey(String),
    #[error("{}", t!("remote-refusal-out-of-scope"))]
    OutOfScope,
    #[error("{}", t!("remote-refusal-rate-limited"))]
    RateLimited,
    #[error("{}", t!("remote-refusal-suspended"))]
    Suspended,
    #[error("{}", t!("remote-refusal-unknown-push-service", host = .0.as_str()))]
    UnknownPushService(String),
    #[error("{}", t!("remote-refusal-internal", reason = .0.as_str()))]
    Internal(String),
}

impl Refusal {
    /// The stable code the device is sent.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::NotPaired => "not-paired",
            Refusal::NotPending => "not-pending",
            Refusal::Unsigned => "unsigned",
            Refusal::Stale => "stale",
            Refusal::BadSignature => "bad-signature",
            Refusal::NonceReused => "nonce-reused",
            Refusal::TooManyAttempts => "too-many-attempts",
            Refusal::Expired => "expired",
            Refusal::BadAnswer(_) => "bad-answer",
            Refusal::Malformed(_) => "malformed",
            Refusal::DeskOnly(_) => "desk-only",
            Refusal::Standing => "standing",
            Refusal::PasskeyRequired => "passkey-required",
            Refusal::PasskeysUnavailable => "passkeys-unavailable",
            Refusal::PasskeyNotAllowed => "passkey-not-allowed",
            Refusal::NoPasskey => "no-passkey",
            Refusal::BadPasskey(_) => "bad-passkey",
            Refusal::OutOfScope => "out-of-scope",
            Refusal::RateLimited => "rate-limited",
            Refusal::Suspended => "suspended",
            Refusal::UnknownPushService(_) => "unknown-push-service",
            Refusal::Internal(_) => "internal",
        }
    }
}

/// A request held for devices; resolves to the verified answer that claims it (`None` if the
/// remote stopped). Dropping it withdraws the request from every device.
pub struct Offered {
    id: RequestId,
    answer: oneshot::Receiver<VerifiedAnswer>,
    remote: Weak<Inner>,
}

impl Offered {
    pub fn id(&self) -> RequestId {
        self.id
    }

    /// The verified answer, if one already claimed the request: for an adapter whose request was
    /// withdrawn at the moment a device's answer claimed it, so that device hears its answer was
    /// not used ([`Remote::settled`]) instead of waiting for word forever. Call it after
    /// [`Remote::withdraw`], when no answer can claim the request any more.
    pub fn try_answer(&mut self) -> Option<VerifiedAnswer> {
        self.answer.try_recv().ok()
    }
}

impl Future for Offered {
    type Output = Option<VerifiedAnswer>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.answer).poll(cx).map(Result::ok)
    }
}

impl Drop for Offered {
    /// Still held when its adapter let it go without a word from the broker: the remote stops.
    fn drop(&mut self) {
        if let Some(inner) = self.remote.upgrade() {
            inner.settle(self.id, Ending::Stopped);
        }
    }
}

impl Inner {
    /// Removes a request settled elsewhere; devices are told why, and their notices replaced.
    fn settle(&self, id: RequestId, why: Ending) {
        let removed = lock(&self.pending).remove(id, why);
        if let Some(entry) = removed {
            self.pushing.settled(entry.shown);
        }
    }
}

impl Remote {
    pub(crate) fn new(
        served: Served,
        fingerprint: String,
        authority_der: Option<Vec<u8>>,
        devices: DeviceStore,
        pairing_lifetime: Duration,
        limits: Limits,
        push: PushSettings,
    ) -> Result<Remote, Error> {
        let revocations = Arc::new(watch::channel(0).0);
        crate::files::private_dir(&devices.dir())?;
        let pushing = Pushing {
            pusher: Pusher::new(Vapid::load_or_create(&devices.dir())?, &push)?,
            settings: push,
            store: devices.clone(),
            reports: broadcast::channel(64).0,
            sent: Arc::default(),
        };
        let store_watch = watch_store(&devices, revocations.clone())
            .inspect_err(|error| {
                tracing::warn!(%error, "revokes by other processes will close sockets only when the device next sends")
            })
            .ok();
        Ok(Remote {
            inner: Arc::new(Inner {
                passkeys: Passkeys::new(&served),
                served,
                fingerprint,
                authority_der,
                devices,
                pairings: Mutex::new(Pairings::new(pairing_lifetime)),
                claims: broadcast::channel(16).0,
                pending: Mutex::new(Pending::new()),
                threads: PlanThreads::default(),
                limits,
                approvals: Mutex::new(Approvals::default()),
                pushing,
                revocations,
                _store_watch: store_watch,
                shutdown: CancellationToken::new(),
            }),
        })
    }

    pub fn served(&self) -> &Served {
        &self.inner.served
    }

    /// The server certificate's SHA-256 (base64url), as pairing URLs carry it.
    pub fn fingerprint(&self) -> &str {
        &self.inner.fingerprint
    }

    /// The own authority's certificate (DER), `None` with a provided certificate.
    pub fn authority_der(&self) -> Option<&[u8]> {
        self.inner.authority_der.as_deref()
    }

    pub fn devices(&self) -> &DeviceStore {
        &self.inner.devices
    }

    /// Stops the server and closes every socket.
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
    }

    pub(crate) fn shutdown_token(&self) -> CancellationToken {
        self.inner.shutdown.clone()
    }

    // --- pairing, started only at the desk ---

    /// A new pairing offer. Only the desk calls this: nothing a phone sends can make one.
    pub fn offer_pairing(&self) -> PairingOffer {
        let mut pairings = lock(&self.inner.pairings);
        let (id, token) = pairings.offer(Instant::now());
        PairingOffer {
            id,
            url: format!(
                "{}/pair#v1.{}.{}",
                self.inner.served.origin(),
                keys::encode(&token),
                self.inner.fingerprint
            ),
            lifetime: pairings.lifetime(),
        }
    }

    /// Claims made by phones, for the desk to show the code and ask for confirmation.
    pub fn pairing_claims(&self) -> broadcast::Receiver<Claimed> {
        self.inner.claims.subscribe()
    }

    pub(crate) fn claim_pairing(&self, claim: Claim) -> Result<Claimed, PairingError> {
        let claimed = lock(&self.inner.pairings).claim(claim, Instant::now())?;
        let _ = self.inner.claims.send(claimed.clone());
        Ok(claimed)
    }

    /// The desk confirms the code it shows for a claimed pairing: the device is stored and may
    /// connect from then on, and register a passkey within [`REGISTRATION_WINDOW`]. A wrong code
    /// ends the pairing.
    pub fn confirm_pairing(&self, id: PairingId, code: &str) -> Result<Device, PairingError> {
        let (key, name) = lock(&self.inner.pairings).confirm(id, code, Instant::now())?;
        let store = |error: Error| PairingError::Store(error.to_string());
        let device = self.inner.devices.add(&name, &key).map_err(store)?;
        Ok(self
            .inner
            .devices
            .allow_passkey(&device.name, REGISTRATION_WINDOW)
            .map_err(store)?
            .unwrap_or(device))
    }

    /// Ends an offer (the person closed the QR at the desk).
    pub fn cancel_pairing(&self, id: PairingId) {
        lock(&self.inner.pairings).cancel(id);
    }

    // --- devices ---

    /// Revokes the device named `name`: its key is refused from then on and its sockets close.
    pub fn revoke(&self, name: &str) -> Result<Option<Device>, Error> {
        let revoked = self.inner.devices.revoke(name)?;
        if revoked.is_some() {
            self.devices_changed();
        }
        Ok(revoked)
    }

    /// Confirms the device named `name` again at the desk, ending its suspension.
    pub fn confirm_device(&self, name: &str) -> Result<Option<Device>, Error> {
        self.inner.devices.confirm(name)
    }

    /// Sets what the device named `name` may answer; its sockets are shown the requests of its new
    /// scope at once.
    pub fn set_scope(&self, name: &str, scope: Scope) -> Result<Option<Device>, Error> {
        let changed = self.inner.devices.set_scope(name, scope)?;
        if changed.is_some() {
            self.devices_changed();
        }
        Ok(changed)
    }

    /// The person allows the device named `name` to register a passkey (in place of any it has)
    /// within [`REGISTRATION_WINDOW`]; its sockets are told at once.
    pub fn allow_passkey(&self, name: &str) -> Result<Option<Device>, Error> {
        let allowed = self
            .inner
            .devices
            .allow_passkey(name, REGISTRATION_WINDOW)?;
        if allowed.is_some() {
            self.devices_changed();
        }
        Ok(allowed)
    }

    /// Removes the passkey of the device named `name`: it can no longer allow a permission prompt.
    pub fn forget_passkey(&self, name: &str) -> Result<Option<Device>, Error> {
        let changed = self.inner.devices.forget_passkey(name)?;
        if changed.is_some() {
            self.devices_changed();
        }
        Ok(changed)
    }

    /// What a device's page is told of its passkey: `{"available", "registered", "allowed"}`.
    pub(crate) fn passkey_state(&self, device: &Device) -> Value {
        json!({
            "available": self.inner.passkeys.available(),
            "registered": device.passkey.is_some(),
            "allowed": device.may_register_passkey(crate::devices::now()),
        })
    }

    /// Begins the registration of a passkey for a paired, unsuspended device the desk allows one:
    /// the options for `navigator.credentials.create`. Reads the device store.
    pub(crate) fn start_passkey_registration(&self, key: &DeviceKey) -> Result<Value, Refusal> {
        let device = self.usable_device(key)?;
        if !device.may_register_passkey(crate::devices::now()) {
            return Err(Refusal::PasskeyNotAllowed);
        }
        self.inner
            .passkeys
            .start_registration(key, &device.name, Instant::now())
    }

    /// Finishes a registration: the passkey is kept if the desk still allows one, which ends the
    /// allowance. Reads and writes the device store.
    pub(crate) fn finish_passkey_registration(
        &self,
        key: &DeviceKey,
        credential: Value,
    ) -> Result<(), Refusal> {
        let device = self.usable_device(key)?;
        if !device.may_register_passkey(crate::devices::now()) {
            return Err(Refusal::PasskeyNotAllowed);
        }
        let passkey = self
            .inner
            .passkeys
            .finish_registration(key, credential, Instant::now())?;
        let kept = self
            .inner
            .devices
            .set_passkey(key, StoredPasskey(passkey))
            .map_err(|error| Refusal::Internal(error.to_string()))?;
        if kept.is_none() {
            return Err(Refusal::PasskeyNotAllowed);
        }
        tracing::info!(device = ?device.name, "a device registered a passkey");
        self.devices_changed();
        Ok(())
    }

    /// A passkey challenge for the device to allow a held permission prompt with exactly this
    /// answer: bound to the answer's digest, replacing any the device was given for the request.
    /// A desk-only prompt or one outside the device's scope gets none. Reads the device store.
    pub(crate) fn passkey_challenge(
        &self,
        key: &DeviceKey,
        intent: AllowIntent,
    ) -> Result<Value, Refusal> {
        let device = self.usable_device(key)?;
        let passkey = device.passkey.as_ref().ok_or(Refusal::NoPasskey)?;
        let id = parse_request_id(&intent.id)
            .ok_or_else(|| Refusal::Malformed(format!("no request id {:?}", intent.id)))?;
        if keys::decode(&intent.nonce).is_none_or(|nonce| nonce.len() != 16) {
            return Err(Refusal::Malformed(
                "the nonce is not 16 bytes of base64url".into(),
            ));
        }
        let mut pending = lock(&self.inner.pending);
        let entry = pending.get_mut(id).ok_or(Refusal::NotPending)?;
        let risk = &entry.risk;
        if risk.class != Class::PermissionPrompt {
            return Err(Refusal::Malformed(
                "only a permission prompt is allowed with a passkey".into(),
            ));
        }
        if let Some(reason) = &risk.desk_only {
            return Err(Refusal::DeskOnly(reason.clone()));
        }
        if !device
            .scope
            .admits(entry.request.agent.as_ref(), risk.class)
        {
            return Err(Refusal::OutOfScope);
        }
        let message = digest::answer_message(
            &entry.digest,
            &intent.nonce,
            &intent.answer,
            intent.comments.as_ref(),
        )
        .ok_or_else(|| Refusal::Malformed("the answer has no canonical form".into()))?;
        let (options, bound) = self
            .inner
            .passkeys
            .challenge(passkey, digest::answer_digest(&message))?;
        entry.assertions.insert(key.text(), bound);
        Ok(options)
    }

    /// Whether any paired, unsuspended device could be shown a permission prompt from `agent`
    /// (its scope reaches permission prompts): an adapter offers one to the phones only then, and
    /// otherwise passes it on at once. Reads the device store: call it off the async threads.
    pub fn takes_permission_prompt(&self, agent: Option<&askdesk_core::AgentInfo>) -> bool {
        self.inner.devices.list().is_ok_and(|devices| {
            devices.iter().any(|device| {
                !device.is_suspended() && device.scope.admits(agent, Class::PermissionPrompt)
            })
        })
    }

    /// The paired, unsuspended device with this key.
    fn usable_device(&self, key: &DeviceKey) -> Result<Device, Refusal> {
        let device = self
            .inner
            .devices
            .find(key)
            .map_err(|error| Refusal::Internal(error.to_string()))?
            .ok_or(Refusal::NotPaired)?;
        if device.is_suspended() {
            return Err(Refusal::Suspended);
        }
        Ok(device)
    }

    /// The limits on each device.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// Makes every socket read its device again (revoked, suspended, its scope).
    fn devices_changed(&self) {
        self.inner
            .revocations
            .send_modify(|generation| *generation += 1);
    }

    pub(crate) fn revocations(&self) -> watch::Receiver<u64> {
        self.inner.revocations.subscribe()
    }

    // --- requests, fed by the adapter ---

    /// Holds a request for devices until a verified answer claims it or the returned
    /// [`Offered`] is dropped.
    pub fn offer(&self, request: PendingRequest) -> Result<Offered, OfferError> {
        let id = request.id;
        // Rendered before the lock is taken: a long plan takes a while.
        let view = crate::pending::view(&request, &self.inner.threads);
        let (answer, shown, held) = {
            let mut pending = lock(&self.inner.pending);
            let answer = pending.offer(request, view)?;
            let shown = pending.get_mut(id).expect("just offered").shown.clone();
            (answer, shown, pending.snapshot())
        };
        self.inner.pushing.offered(shown, held);
        Ok(Offered {
            id,
            answer,
            remote: Arc::downgrade(&self.inner),
        })
    }

    /// The time a held request's deadline runs out was set, moved, held (`None`) or released:
    /// devices count down to the new time. Nothing when the request is not held (any more).
    pub fn set_deadline(&self, id: RequestId, at: Option<SystemTime>) {
        lock(&self.inner.pending).set_deadline(id, at);
    }

    /// Withdraws a request (settled elsewhere or cancelled); devices are told why.
    pub fn withdraw(&self, id: RequestId, why: Ending) {
        self.inner.settle(id, why);
    }

    // --- Web Push ---

    /// The desk's VAPID public key, the page's `applicationServerKey` (base64url).
    pub fn push_key(&self) -> String {
        self.inner.pushing.pusher.vapid().public_key()
    }

    /// How each push went; a subscription its push service dropped is reported
    /// ([`crate::push::Delivery::Gone`]) after the desk dropped it too.
    pub fn push_reports(&self) -> broadcast::Receiver<PushReport> {
        self.inner.pushing.reports.subscribe()
    }

    /// Stores (or with `None` removes) a paired, unsuspended device's push subscription.
    pub(crate) fn subscribe(
        &self,
        key: &DeviceKey,
        subscription: Option<Subscription>,
    ) -> Result<Device, Refusal> {
        let store = &self.inner.devices;
        let device = store
            .find(key)
            .map_err(|error| Refusal::Internal(error.to_string()))?
            .ok_or(Refusal::NotPaired)?;
        if device.is_suspended() {
            return Err(Refusal::Suspended);
        }
        if let Some(host) = subscription
            .as_ref()
            .and_then(|subscription| self.inner.pushing.settings.unknown_service(subscription))
        {
            return Err(Refusal::UnknownPushService(host));
        }
        store
            .set_push(key, subscription)
            .map_err(|error| Refusal::Internal(error.to_string()))?
            .ok_or(Refusal::NotPaired)
    }

    /// The adapter reports how a verified answer fared at the broker: every device hears it, so
    /// the device that answered says "Sent" only now (or that the desk answered first), and the
    /// others say which device answered.
    pub fn settled(&self, settled: Settled) {
        lock(&self.inner.pending).settled(settled);
    }

    pub(crate) fn updates(&self) -> broadcast::Receiver<Update> {
        lock(&self.inner.pending).updates.subscribe()
    }

    pub(crate) fn snapshot(&self) -> Vec<Arc<Shown>> {
        lock(&self.inner.pending).snapshot()
    }

    /// Checks a device's signed answer: the device is paired, the request still waits, the answer
    /// is signed by the device's key over this request's digest and the nonce, the nonce is new,
    /// its pictures are re-encoded within the desk's limits (and the answer fits what the host
    /// passes on), the request is not desk-only, the answer gives no standing permission, the
    /// request is within the device's scope, it keeps its questions' rules, an allow of a
    /// permission prompt comes with the device's passkey asserted over this answer's digest (with
    /// user verification), and an approval is within the device's limit. A suspended device
    /// answers nothing; a bad signature or a failed passkey is counted against the device, and
    /// enough of them suspend it ([`Limits`]). Then the request is claimed and the answer
    /// yielded to the adapter. Reads the device store: call it off the async threads.
    pub fn verify(&self, key: &DeviceKey, signed: SignedAnswer) -> Result<RequestId, Refusal> {
        let device = self.usable_device(key)?;
        let checked = self.check(key, &device, signed);
        if matches!(checked, Err(Refusal::BadSignature | Refusal::BadPasskey(_))) {
            self.count_bad_signature(key);
        }
        checked
    }

    /// [`Remote::verify`] for a device found paired and not suspended.
    fn check(
        &self,
        key: &DeviceKey,
        device: &Device,
        signed: SignedAnswer,
    ) -> Result<RequestId, Refusal> {
        let id = parse_request_id(&signed.id)
            .ok_or_else(|| Refusal::Malformed(format!("no request id {:?}", signed.id)))?;
        let mut pending = lock(&self.inner.pending);
        let entry = pending.get_mut(id).ok_or(Refusal::NotPending)?;
        if entry.expired() {
            return Err(Refusal::Expired);
        }
        let signature = signed.signature.as_deref().ok_or(Refusal::Unsigned)?;
        if let Some(digest) = &signed.digest {
            if *digest != keys::encode(&entry.digest) {
                return Err(Refusal::Stale);
            }
        }
        if keys::decode(&signed.nonce).is_none_or(|nonce| nonce.len() != 16) {
            return Err(Refusal::Malformed(
                "the nonce is not 16 bytes of base64url".into(),
            ));
        }
        let message = digest::answer_message(
            &entry.digest,
            &signed.nonce,
            &signed.answer,
            signed.comments.as_ref(),
        )
        .ok_or_else(|| Refusal::Malformed("the answer has no canonical form".into()))?;
        if !key.verifies(&message, signature) {
            return Err(Refusal::BadSignature);
        }
        let used = (key.text(), signed.nonce.clone());
        if entry.nonces.contains(&used) {
            return Err(Refusal::NonceReused);
        }
        let attempts = entry.nonces.iter().filter(|(k, _)| *k == used.0).count();
        if attempts >= MAX_ATTEMPTS {
            return Err(Refusal::TooManyAttempts);
        }
        entry.nonces.insert(used);
        // Pictures are decoded and re-encoded without holding the requests: that takes a while.
        drop(pending);
        // `null`, signed like any answer: the person dismissed the whole batch.
        let answer = match signed.answer {
            Value::Null => None,
            answer => Some(safe_answer(answer, self.inner.limits.answer_bytes)?),
        };
        let mut pending = lock(&self.inner.pending);
        let entry = pending.get_mut(id).ok_or(Refusal::NotPending)?;
        if entry.expired() {
            return Err(Refusal::Expired);
        }
        let answer = match answer {
            None => None,
            Some(mut answer) => {
                let comments: Vec<CommentInput> = match signed.comments {
                    Some(comments) => serde_json::from_value(comments)
                        .map_err(|error| Refusal::BadAnswer(error.to_string()))?,
                    None => Vec::new(),
                };
                // Folded into the plan's feedback as the desk's dialog folds them.
                let view = &entry.view;
                plan_thread::review(
                    &entry.request.questions,
                    |id| {
                        view.questions
                            .iter()
                            .find(|q| q.id == id)
                            .map(|q| q.blocks.as_slice())
                            .unwrap_or_default()
                    },
                    &mut answer,
                    comments,
                )
                .map_err(|error| Refusal::BadAnswer(error.to_string()))?;
                Some(answer)
            }
        };
        // What the desk decided when the request was offered; a dismissal is held to it as well.
        let risk = &entry.risk;
        if let Some(reason) = &risk.desk_only {
            return Err(Refusal::DeskOnly(reason.clone()));
        }
        if answer.as_ref().is_some_and(Risk::grants_standing) {
            return Err(Refusal::Standing);
        }
        if !device
            .scope
            .admits(entry.request.agent.as_ref(), risk.class)
        {
            return Err(Refusal::OutOfScope);
        }
        let questions = &entry.request.questions;
        let approves = answer
            .as_ref()
            .is_some_and(|answer| risk.approves(questions, answer));
        let answer = answer
            .map(|answer| askdesk_core::validate::check_answer(questions, answer))
            .transpose()
            .map_err(|error| Refusal::BadAnswer(error.message.clone()))?;
        // An allow of a permission prompt: the passkey's assertion over this answer's digest,
        // checked once (the challenge is used up whatever the outcome).
        if approves && risk.class == Class::PermissionPrompt {
            let bound = entry.assertions.remove(&key.text());
            let (Some(bound), Some(assertion)) = (bound, signed.passkey.as_ref()) else {
                return Err(Refusal::PasskeyRequired);
            };
            let result =
                self.inner
                    .passkeys
                    .verify(&bound, &digest::answer_digest(&message), assertion)?;
            let kept = self
                .inner
                .devices
                .passkey_used(key, &result)
                .map_err(|error| Refusal::Internal(error.to_string()))?;
            if !kept {
                return Err(Refusal::NoPasskey);
            }
        }
        let now = Instant::now();
        let mut approvals = lock(&self.inner.approvals);
        if approves && !approvals.allows(&key.text(), &self.inner.limits, now) {
            return Err(Refusal::RateLimited);
        }
        let entry = pending.remove(id, Ending::Claimed).expect("held above");
        // Handed over before the lock is let go: an adapter withdrawing the request meanwhile
        // (`Remote::withdraw`, then `Offered::try_answer`) finds this answer and tells the device
        // why it was not used, instead of the device hearing nothing after `claimed`.
        let sent = entry.answer.send(VerifiedAnswer {
            request: id,
            device: device.name.clone(),
            answer,
        });
        drop(pending);
        self.inner.pushing.settled(entry.shown.clone());
        sent.map_err(|_| Refusal::NotPending)?;
        if approves {
            approvals.record(&key.text(), now);
        }
        Ok(id)
    }

    /// Counts a bad signature against the device; the one that suspends it closes its sockets.
    fn count_bad_signature(&self, key: &DeviceKey) {
        match self
            .inner
            .devices
            .bad_signature(key, self.inner.limits.bad_signatures)
        {
            Ok(Some(device)) if device.is_suspended() => {
                tracing::warn!(device = ?device.name, "a device is suspended after bad signatures");
                self.devices_changed();
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(?error, "a bad signature could not be counted"),
        }
    }
}

/// Follows the device list's directory: any change to `devices.json` (a revoke by `askdesk devices`,
/// a pairing, a "last seen") makes every socket check its device again. inotify reports only
/// changes: nothing runs while the list stays as it is.
fn watch_store(
    devices: &DeviceStore,
    revocations: Arc<watch::Sender<u64>>,
) -> Result<notify::RecommendedWatcher, Error> {
    use notify::Watcher;
    let path = devices.path();
    let dir = devices.dir();
    let watch_error = |error: notify::Error| Error::Io {
        path: dir.clone(),
        source: std::io::Error::other(error.to_string()),
    };
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let touches_store = match event {
            Ok(event) => event.paths.contains(&path),
            // A lost report (an overflowed queue): check everything.
            Err(_) => true,
        };
        if touches_store {
            revocations.send_modify(|generation| *generation += 1);
        }
    })
    .map_err(watch_error)?;
    watcher
        .watch(&dir, notify::RecursiveMode::NonRecursive)
        .map_err(watch_error)?;
    Ok(watcher)
}

/// A device's answer read, with its pictures decoded and re-encoded as the desk's own are
/// (askdesk-image, under the desk's limits): anything but a picture within them is refused, naming
/// the limit, before the answer goes further; and so is an answer over `max_bytes` of JSON once its
/// pictures are re-encoded, which the host could not pass on.
fn safe_answer(answer: Value, max_bytes: Option<usize>) -> Result<Answer, Refusal> {
    let answer: Answer =
        serde_json::from_value(answer).map_err(|error| Refusal::BadAnswer(error.to_string()))?;
    let answer = if answer.has_images() {
        askdesk_image::make_answer_pictures_safe(answer, &askdesk_image::Limits::default())
            .map_err(Refusal::BadAnswer)?
    } else {
        answer
    };
    if let Some(max) = max_bytes {
        let bytes = serde_json::to_string(&answer)
            .map_err(|error| Refusal::Internal(error.to_string()))?
            .len();
        if bytes > max {
            return Err(Refusal::BadAnswer(t!(
                "remote-answer-too-big",
                bytes = bytes,
                max = max
            )));
        }
    }
    Ok(answer)
}

/// `r<n>` as [`RequestId`]'s display writes it.
fn parse_request_id(text: &str) -> Option<RequestId> {
    let digits = text.strip_prefix('r')?;
    if digits.is_empty() || digits.starts_with('0') && digits.len() > 1 {
        return None;
    }
    digits.parse().ok().map(RequestId)
}
