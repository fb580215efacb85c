//! [`Remote`]: what the server's handlers and the desk share: the served names, the device store,
//! the pairing offers, the held requests, and the checks a signed answer passes before it is
//! yielded to the adapter.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use askdesk_core::sync::lock;
use askdesk_core::{Answer, RequestId};
use askdesk_view::plan_thread::{self, CommentInput};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{broadcast, oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::devices::{Device, DeviceStore};
use crate::digest;
use crate::error::Error;
use crate::keys::{self, DeviceKey};
use crate::limits::{Approvals, Limits};
use crate::names::Served;
use crate::pairing::{Claim, Claimed, PairingError, PairingId, Pairings};
use crate::pending::{
    OfferError, Pending, PendingRequest, Settled, Shown, Update, VerifiedAnswer, MAX_ATTEMPTS,
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
    limits: Limits,
    approvals: Mutex<Approvals>,
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
}

/// Why a signed answer was refused; the device is told the code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("this device is not paired (or was revoked)")]
    NotPaired,
    #[error("the request is no longer waiting")]
    NotPending,
    #[error("the answer is not signed")]
    Unsigned,
    #[error("the request changed: its digest does not match")]
    Stale,
    #[error("the signature does not match the device's key and this request")]
    BadSignature,
    #[error("this nonce was already used")]
    NonceReused,
    #[error("too many attempts on this request")]
    TooManyAttempts,
    #[error("the answer breaks the rules of its questions: {0}")]
    BadAnswer(String),
    #[error("the message is malformed: {0}")]
    Malformed(String),
    #[error("only the desk may allow this: {0}")]
    DeskOnly(String),
    #[error("a standing permission is given only at the desk")]
    Standing,
    #[error("a permission prompt is answered only at the desk until passkeys guard it")]
    PasskeyRequired,
    #[error("this request is outside the device's scope")]
    OutOfScope,
    #[error("this device gave too many approvals lately: answer at the desk")]
    RateLimited,
    #[error("this device is suspended after bad signatures: confirm it again at the desk")]
    Suspended,
    #[error("{0} is not a known push service: the desk sends notices only to those")]
    UnknownPushService(String),
    #[error("the desk cannot check the device: {0}")]
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
            Refusal::BadAnswer(_) => "bad-answer",
            Refusal::Malformed(_) => "malformed",
            Refusal::DeskOnly(_) => "desk-only",
            Refusal::Standing => "standing",
            Refusal::PasskeyRequired => "passkey-required",
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
    fn drop(&mut self) {
        if let Some(inner) = self.remote.upgrade() {
            inner.settle(self.id);
        }
    }
}

impl Inner {
    /// Removes a request settled elsewhere; devices are told, and their notices replaced.
    fn settle(&self, id: RequestId) {
        let removed = lock(&self.pending).remove(id);
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
                served,
                fingerprint,
                authority_der,
                devices,
                pairings: Mutex::new(Pairings::new(pairing_lifetime)),
                claims: broadcast::channel(16).0,
                pending: Mutex::new(Pending::new()),
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
    /// connect from then on. A wrong code ends the pairing.
    pub fn confirm_pairing(&self, id: PairingId, code: &str) -> Result<Device, PairingError> {
        let (key, name) = lock(&self.inner.pairings).confirm(id, code, Instant::now())?;
        self.inner
            .devices
            .add(&name, &key)
            .map_err(|error| PairingError::Store(error.to_string()))
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
        let view = crate::pending::view(&request);
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

    /// Withdraws a request (settled elsewhere or cancelled); devices are told.
    pub fn withdraw(&self, id: RequestId) {
        self.inner.settle(id);
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
    /// the request is not desk-only, the answer gives no standing permission and is not to a
    /// permission prompt (never allowed from a phone until passkeys guard them), the request is
    /// within the device's scope, it keeps its questions' rules, and an approval is within the
    /// device's limit. A suspended device answers nothing; a bad signature is counted against the
    /// device, and enough of them suspend it ([`Limits`]). Then the request is claimed and the answer
    /// yielded to the adapter. Reads the device store: call it off the async threads.
    pub fn verify(&self, key: &DeviceKey, signed: SignedAnswer) -> Result<RequestId, Refusal> {
        let device = self
            .inner
            .devices
            .find(key)
            .map_err(|error| Refusal::Internal(error.to_string()))?
            .ok_or(Refusal::NotPaired)?;
        if device.is_suspended() {
            return Err(Refusal::Suspended);
        }
        let checked = self.check(key, &device, signed);
        if checked == Err(Refusal::BadSignature) {
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
        // `null`, signed like any answer: the person dismissed the whole batch.
        let answer = match signed.answer {
            Value::Null => None,
            answer => {
                let mut answer: Answer = serde_json::from_value(answer)
                    .map_err(|error| Refusal::BadAnswer(error.to_string()))?;
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
        if risk.class == Class::PermissionPrompt {
            return Err(Refusal::PasskeyRequired);
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
        let now = Instant::now();
        let mut approvals = lock(&self.inner.approvals);
        if approves && !approvals.allows(&key.text(), &self.inner.limits, now) {
            return Err(Refusal::RateLimited);
        }
        let entry = pending.remove(id).expect("held above");
        drop(pending);
        self.inner.pushing.settled(entry.shown.clone());
        entry
            .answer
            .send(VerifiedAnswer {
                request: id,
                device: device.name.clone(),
                answer,
            })
            .map_err(|_| Refusal::NotPending)?;
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
            Err(error) => tracing::warn!(%error, "a bad signature could not be counted"),
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

/// `r<n>` as [`RequestId`]'s display writes it.
fn parse_request_id(text: &str) -> Option<RequestId> {
    let digits = text.strip_prefix('r')?;
    if digits.is_empty() || digits.starts_with('0') && digits.len() > 1 {
        return None;
    }
    digits.parse().ok().map(RequestId)
}
