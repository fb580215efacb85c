//! Web Push from the desk to paired phones: the desk's VAPID key (RFC 8292), each device's push
//! subscription, the notices (never a permission prompt's content: by default only "An agent is
//! waiting (N)", replaced by "Answered on the desk" under the same tag), and their delivery,
//! encrypted as RFC 8291 `aes128gcm` (`web-push-native`) and posted over HTTPS. A push service
//! that answers 404 or 410 has dropped the subscription: the desk drops it too and says so.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{header, Uri};
use hyper_util::rt::TokioIo;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use rustls::pki_types::{CertificateDer, ServerName};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::net::TcpStream;
use tokio::sync::broadcast;
use tokio_rustls::TlsConnector;

use askdesk_core::sync::lock;
use askdesk_i18n::t;

use crate::devices::{Device, DeviceStore};
use crate::error::Error;
use crate::files;
use crate::keys;
use crate::pending::Shown;
use crate::presence::{Idle, Presence};
use crate::risk::Class;

/// How long a push service keeps a notice for a phone that is off (its `TTL`).
const TIME_TO_LIVE: Duration = Duration::from_secs(10 * 60);
/// A delivery that takes longer is given up.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a VAPID token is valid (RFC 8292 allows at most 24 hours).
const TOKEN_LIFETIME: Duration = Duration::from_secs(12 * 60 * 60);

/// A device's push subscription, as the page's `PushSubscription.toJSON()` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subscription {
    /// The push service's URL for this phone (HTTPS only).
    pub endpoint: String,
    pub keys: SubscriptionKeys,
}

/// The phone's keys for payload encryption, base64url.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubscriptionKeys {
    /// Its P-256 public key, raw uncompressed.
    pub p256dh: String,
    /// Its 16-byte authentication secret.
    pub auth: String,
}

impl Subscription {
    /// Whether the subscription can be used: an `https` endpoint with a host, a P-256 point and a
    /// 16-byte secret.
    pub fn is_valid(&self) -> bool {
        let endpoint = self.endpoint.parse::<Uri>().ok();
        endpoint.is_some_and(|uri| uri.scheme_str() == Some("https") && uri.host().is_some())
            && keys::decode(&self.keys.p256dh)
                .is_some_and(|key| web_push_native::p256::PublicKey::from_sec1_bytes(&key).is_ok())
            && keys::decode(&self.keys.auth).is_some_and(|auth| auth.len() == 16)
    }
}

/// Hours in which no new notice is sent, as minutes of the desk's local day (`from` included,
/// `to` not; `from` after `to` spans midnight). Written `HH:MM-HH:MM` (`22:00-07:00`), in
/// settings files too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct QuietHours {
    pub from: u16,
    pub to: u16,
}

impl QuietHours {
    /// Whether `minute` (of the local day, 0 to 1439) falls in the quiet hours.
    pub fn holds(&self, minute: u16) -> bool {
        if self.from <= self.to {
            (self.from..self.to).contains(&minute)
        } else {
            minute >= self.from || minute < self.to
        }
    }
}

impl std::str::FromStr for QuietHours {
    type Err = String;

    /// `HH:MM-HH:MM`, each a time of day (`00:00` to `23:59`); the two must differ.
    fn from_str(text: &str) -> Result<QuietHours, String> {
        let minute = |part: &str| {
            let (hours, minutes) = part.trim().split_once(':')?;
            let (hours, minutes) = (hours.parse::<u16>().ok()?, minutes.parse::<u16>().ok()?);
            (hours < 24 && minutes < 60 && part.trim().len() == 5).then_some(hours * 60 + minutes)
        };
        let wrong = || t!("remote-quiet-hours-bad", text = format!("{text:?}"));
        let (from, to) = text.split_once('-').ok_or_else(wrong)?;
        let (from, to) = (
            minute(from).ok_or_else(wrong)?,
            minute(to).ok_or_else(wrong)?,
        );
        if from == to {
            return Err(t!("remote-quiet-hours-empty", text = format!("{text:?}")));
        }
        Ok(QuietHours { from, to })
    }
}

impl TryFrom<String> for QuietHours {
    type Error = String;

    fn try_from(text: String) -> Result<QuietHours, String> {
        text.parse()
    }
}

impl From<QuietHours> for String {
    fn from(quiet: QuietHours) -> String {
        quiet.to_string()
    }
}

impl std::fmt::Display for QuietHours {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = |minute: u16| format!("{:02}:{:02}", minute / 60, minute % 60);
        write!(f, "{}-{}", at(self.from), at(self.to))
    }
}

/// Why a new notice was held back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    QuietHours,
    /// "Only when the desk is idle" is set and the person is at the desk.
    DeskInUse,
}

/// Whether a new notice waits: in quiet hours, or while the desk is in use when the person wants
/// the phone to ring only once the desk has been idle (`idle` is asked only then). A desk that
/// cannot tell whether it is in use wakes the phone. Replacements ("Answered on the desk") are
/// never held.
pub fn held(
    settings: &PushSettings,
    local_minute: u16,
    idle: impl FnOnce() -> Idle,
) -> Option<Held> {
    if settings
        .quiet_hours
        .is_some_and(|quiet| quiet.holds(local_minute))
    {
        return Some(Held::QuietHours);
    }
    let minimum = settings.only_when_idle?;
    (idle().at_least(minimum) == Some(false)).then_some(Held::DeskInUse)
}

/// What the person chose for notices.
#[derive(Debug, Clone, Default)]
pub struct PushSettings {
    /// Show the question of a text and choice request on the lock screen (never a plan's or a
    /// permission prompt's).
    pub show_questions: bool,
    pub quiet_hours: Option<QuietHours>,
    /// Wake the phone only once the desk has been idle (screen locked, or no input) this long;
    /// `None`: whenever a request waits.
    pub only_when_idle: Option<Duration>,
    /// Where the desk learns whether the person is at it, for `only_when_idle` (by default it
    /// cannot tell: [`Presence::unknown`]).
    pub presence: Presence,
    /// The VAPID contact (`mailto:` or `https:`) push services may write to; empty: none given.
    pub contact: String,
    /// Roots trusted for push services besides Mozilla's (DER), for a push service of one's own.
    pub extra_roots: Vec<Vec<u8>>,
    /// Hosts of push services of one's own, besides [`PUSH_SERVICES`].
    pub extra_services: Vec<String>,
}

/// The browsers' push services (Chrome and Android, Firefox, Safari and iOS, Edge), each a host
/// or the domain its hosts end in. A phone's subscription names where the desk sends notices; one
/// to any other host is refused, so a paired phone cannot make the desk send requests to a
/// server of its choosing (a machine on the person's network, say).
pub const PUSH_SERVICES: &[&str] = &[
    "fcm.googleapis.com",
    "push.services.mozilla.com",
    "push.apple.com",
    "notify.windows.com",
];

impl PushSettings {
    /// The endpoint's host when it is no push service the desk knows; `None` when it is one.
    pub fn unknown_service(&self, subscription: &Subscription) -> Option<String> {
        let endpoint = subscription.endpoint.parse::<Uri>().ok();
        let host = endpoint
            .as_ref()
            .and_then(Uri::host)
            .map(|host| host.trim_end_matches('.').to_ascii_lowercase())
            .unwrap_or_default();
        let known = |service: &str| {
            host == service
                || host
                    .strip_suffix(service)
                    .is_some_and(|rest| rest.ends_with('.'))
        };
        let admitted = PUSH_SERVICES.iter().any(|service| known(service))
            || self
                .extra_services
                .iter()
                .any(|service| known(&service.to_ascii_lowercase()));
        (!admitted).then_some(host)
    }
}

/// The most characters of a question a lock screen shows, its ellipsis included.
pub const LOCK_SCREEN_CHARS: usize = 120;

/// `line` cut to at most `max` characters, the last of them an ellipsis when it was longer.
fn cut(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        None => line.to_owned(),
        Some(_) => {
            let end = line
                .char_indices()
                .nth(max - 1)
                .map_or(line.len(), |(at, _)| at);
            format!("{}…", &line[..end])
        }
    }
}

/// A notice for the lock screen: its text and the tag that replaces an earlier one, with what the
/// phone's service worker needs to hold the desk to its rules (it shows a request's own text only
/// for a text and choice request: [`Notice::payload`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub tag: String,
    pub body: String,
    /// What the lock screen says when it shows no request's text: that an agent waits, or that
    /// the request was answered on the desk, in the desk's language.
    pub summary: String,
    /// The request's class.
    pub class: Class,
    /// The requests waiting for the device (none once answered).
    pub waiting: usize,
    /// The request was settled: this notice replaces its earlier one.
    pub answered: bool,
}

impl Notice {
    /// "An agent is waiting (N)", or the question of a text and choice request where the person
    /// chose to see it (never a plan's or a permission prompt's): on one line, its control and
    /// bidi characters escaped as the command line escapes them (`askdesk_core::text::one_line`),
    /// cut to [`LOCK_SCREEN_CHARS`] with an ellipsis.
    pub fn waiting(tag: &str, class: Class, waiting: usize, question: Option<&str>) -> Notice {
        let question = question
            .filter(|_| class == Class::TextAndChoices)
            .map(askdesk_core::text::one_line)
            .filter(|line| !line.is_empty());
        let summary = t!("remote-push-waiting", waiting = waiting);
        Notice {
            tag: tag.to_owned(),
            body: question.map_or_else(|| summary.clone(), |line| cut(&line, LOCK_SCREEN_CHARS)),
            summary,
            class,
            waiting,
            answered: false,
        }
    }

    /// The request was settled elsewhere: the earlier notice under the same tag is replaced.
    pub fn answered(tag: &str, class: Class) -> Notice {
        let summary = t!("remote-push-answered");
        Notice {
            tag: tag.to_owned(),
            body: summary.clone(),
            summary,
            class,
            waiting: 0,
            answered: true,
        }
    }

    /// The JSON the phone's service worker shows: `{"title", "body", "summary", "tag", "class",
    /// "waiting", "answered"}`.
    pub fn payload(&self) -> Vec<u8> {
        json!({
            "title": "askdesk",
            "body": self.body,
            "summary": self.summary,
            "tag": self.tag,
            "class": self.class.name(),
            "waiting": self.waiting,
            "answered": self.answered,
        })
        .to_string()
        .into_bytes()
    }
}

/// How a push service took a notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// 2xx: it will deliver it.
    Accepted,
    /// 404 or 410: the subscription is gone; the desk drops it.
    Gone(u16),
    /// 429: too many notices; this one is lost, the subscription kept.
    Throttled,
    /// Anything else: this notice is lost, the subscription kept.
    Failed(String),
}

/// The desk's VAPID key pair, kept in the remote's directory (`vapid-key`, 0600).
#[derive(Clone)]
pub struct Vapid {
    key: SigningKey,
}

impl Vapid {
    /// The key in `dir`, made the first time.
    pub fn load_or_create(dir: &Path) -> Result<Vapid, Error> {
        let path = dir.join("vapid-key");
        let stored = files::read_if_present(&path)?
            .and_then(|bytes| keys::decode(String::from_utf8_lossy(&bytes).trim()))
            .and_then(|raw| SigningKey::from_slice(&raw).ok());
        if let Some(key) = stored {
            return Ok(Vapid { key });
        }
        let key = loop {
            if let Ok(key) = SigningKey::from_slice(&keys::random::<32>()) {
                break key;
            }
        };
        files::private_dir(dir)?;
        files::write_private(&path, keys::encode(&key.to_bytes()).as_bytes())?;
        Ok(Vapid { key })
    }

    /// The public key the page subscribes with (`applicationServerKey`): raw uncompressed,
    /// base64url.
    pub fn public_key(&self) -> String {
        keys::encode(self.key.verifying_key().to_sec1_point(false).as_bytes())
    }

    /// The `Authorization` header for `endpoint`: `vapid t=<ES256 JWT>, k=<public key>`, the
    /// JWT's audience the endpoint's origin.
    fn authorization(&self, endpoint: &Uri, contact: &str, now: u64) -> String {
        let port = endpoint
            .port_u16()
            .filter(|port| *port != 443)
            .map(|port| format!(":{port}"))
            .unwrap_or_default();
        let audience = format!("https://{}{port}", endpoint.host().unwrap_or_default());
        let mut claims = json!({ "aud": audience, "exp": now + TOKEN_LIFETIME.as_secs() });
        if !contact.is_empty() {
            claims["sub"] = contact.into();
        }
        let signing_input = format!(
            "{}.{}",
            keys::encode(br#"{"typ":"JWT","alg":"ES256"}"#),
            keys::encode(claims.to_string().as_bytes())
        );
        let signature: Signature = self.key.sign(signing_input.as_bytes());
        format!(
            "vapid t={signing_input}.{}, k={}",
            keys::encode(&signature.to_bytes()),
            self.public_key()
        )
    }
}

/// Sends notices to push services.
#[derive(Clone)]
pub struct Pusher {
    vapid: Vapid,
    contact: String,
    /// The push services it sends to ([`PushSettings::unknown_service`]).
    settings: PushSettings,
    tls: TlsConnector,
}

impl Pusher {
    pub fn new(vapid: Vapid, settings: &PushSettings) -> Result<Pusher, Error> {
        let mut roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        for root in &settings.extra_roots {
            roots
                .add(CertificateDer::from(root.clone()))
                .map_err(|error| Error::Generate(format!("a push service root: {error}")))?;
        }
        let provider = crate::certs::crypto_provider();
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| Error::Generate(error.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Pusher {
            vapid,
            contact: settings.contact.clone(),
            settings: settings.clone(),
            tls: TlsConnector::from(Arc::new(config)),
        })
    }

    pub fn vapid(&self) -> &Vapid {
        &self.vapid
    }

    /// Encrypts `notice` for the subscription and posts it to its push service.
    pub async fn send(&self, subscription: &Subscription, notice: &Notice) -> Delivery {
        match tokio::time::timeout(DELIVERY_TIMEOUT, self.post(subscription, notice)).await {
            Ok(Ok(delivery)) => delivery,
            Ok(Err(error)) => Delivery::Failed(error),
            Err(_) => Delivery::Failed("the push service did not answer in time".into()),
        }
    }

    async fn post(&self, subscription: &Subscription, notice: &Notice) -> Result<Delivery, String> {
        if !subscription.is_valid() {
            return Err("the subscription is not usable".into());
        }
        if let Some(host) = self.settings.unknown_service(subscription) {
            return Err(format!("{host} is not a known push service"));
        }
        let endpoint: Uri = subscription.endpoint.parse().map_err(|e| format!("{e}"))?;
        let host = endpoint.host().ok_or("no host")?.to_owned();
        let port = endpoint.port_u16().unwrap_or(443);
        let ua_public = keys::decode(&subscription.keys.p256dh)
            .and_then(|key| web_push_native::p256::PublicKey::from_sec1_bytes(&key).ok())
            .ok_or("not a P-256 key")?;
        let auth = keys::decode(&subscription.keys.auth).ok_or("not base64url")?;
        let body = web_push_native::encrypt(
            notice.payload(),
            &ua_public,
            web_push_native::Auth::from_slice(&auth),
        )
        .map_err(|error| error.to_string())?;
        let now = unix_now();
        let authority = endpoint.authority().ok_or("no host")?.as_str().to_owned();
        let request = hyper::Request::post(
            endpoint
                .path_and_query()
                .map_or("/", |path| path.as_str())
                .to_owned(),
        )
        .header(header::HOST, authority)
        .header(
            header::AUTHORIZATION,
            self.vapid.authorization(&endpoint, &self.contact, now),
        )
        .header("TTL", TIME_TO_LIVE.as_secs())
        .header("Urgency", "high")
        .header(header::CONTENT_ENCODING, "aes128gcm")
        .header(header::CONTENT_TYPE, "application/octet-stream")
        .header(header::CONTENT_LENGTH, body.len())
        .body(Full::new(Bytes::from(body)))
        .map_err(|error| error.to_string())?;
        let tcp = TcpStream::connect((host.trim_matches(['[', ']']), port))
            .await
            .map_err(|error| error.to_string())?;
        let name = ServerName::try_from(host.trim_matches(['[', ']']).to_owned())
            .map_err(|error| error.to_string())?;
        let tls = self
            .tls
            .connect(name, tcp)
            .await
            .map_err(|error| error.to_string())?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|error| error.to_string())?;
        tokio::spawn(connection);
        let response = sender
            .send_request(request)
            .await
            .map_err(|error| error.to_string())?;
        let status = response.status().as_u16();
        let _ = response.into_body().collect().await;
        Ok(match status {
            200..=299 => Delivery::Accepted,
            404 | 410 => Delivery::Gone(status),
            429 => Delivery::Throttled,
            other => Delivery::Failed(format!("the push service answered {other}")),
        })
    }
}

/// How one delivery went, for the desk: a subscription dropped by its push service is reported
/// as [`Delivery::Gone`] (the desk drops it too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushReport {
    pub device: String,
    pub delivery: Delivery,
}

/// The remote's side of pushing: what to send to whom when requests come and go.
#[derive(Clone)]
pub(crate) struct Pushing {
    pub pusher: Pusher,
    pub settings: PushSettings,
    pub store: DeviceStore,
    pub reports: broadcast::Sender<PushReport>,
    /// The devices each held request's waiting notice went to, by tag: only they hear it was
    /// answered, so a request held back (quiet hours, the desk in use) never rings a phone when it
    /// is settled.
    pub sent: Arc<Mutex<HashMap<String, Vec<String>>>>,
}

impl Pushing {
    /// A request was offered: each subscribed device within whose scope it is hears how many
    /// requests wait for it (or, where chosen, a text and choice question itself); nothing while
    /// [`held`].
    pub fn offered(&self, shown: Arc<Shown>, held_now: Vec<Arc<Shown>>) {
        lock(&self.sent).insert(tag(&shown), Vec::new());
        let show_question = self.settings.show_questions && shown.class == Class::TextAndChoices;
        let this = self.clone();
        self.spawn(
            shown,
            move || {
                let presence = this.settings.presence.clone();
                held(&this.settings, local_minute(), move || presence.idle())
            },
            move |device, shown| {
                let waiting = held_now
                    .iter()
                    .filter(|held| device.scope.admits(held.agent.as_ref(), held.class))
                    .count();
                let question = shown.wire["questions"][0]["question"]
                    .as_str()
                    .filter(|_| show_question);
                Notice::waiting(&tag(shown), shown.class, waiting, question)
            },
            None,
        );
    }

    /// A request was settled (anywhere): the notice under its tag is replaced on the devices it
    /// went to; none was sent (held back, or not yet sent), none is replaced.
    pub fn settled(&self, shown: Arc<Shown>) {
        let Some(devices) = lock(&self.sent).remove(&tag(&shown)) else {
            return;
        };
        if devices.is_empty() {
            return;
        }
        self.spawn(
            shown,
            || None,
            |_, shown| Notice::answered(&tag(shown), shown.class),
            Some(devices),
        );
    }

    /// Sends `notice` to every subscribed, unsuspended device within whose scope `shown` is, off
    /// the caller's thread; a subscription its push service says is gone is dropped.
    fn spawn(
        &self,
        shown: Arc<Shown>,
        hold: impl FnOnce() -> Option<Held> + Send + 'static,
        notice: impl Fn(&Device, &Shown) -> Notice + Send + 'static,
        only: Option<Vec<String>>,
    ) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("no runtime to push from");
            return;
        };
        let this = self.clone();
        runtime.spawn(async move {
            // Asked off the runtime: the desk's idleness is a D-Bus round trip.
            let hold = tokio::task::spawn_blocking(hold).await.ok().flatten();
            if let Some(why) = hold {
                tracing::debug!(?why, "no push for this request");
                return;
            }
            let store = this.store.clone();
            let devices = tokio::task::spawn_blocking(move || store.list())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            for device in devices {
                let Some(subscription) = device.push.clone() else {
                    continue;
                };
                if device.is_suspended() || !device.scope.admits(shown.agent.as_ref(), shown.class)
                {
                    continue;
                }
                match &only {
                    // A replacement: only where the waiting notice went.
                    Some(only) if !only.contains(&device.name) => continue,
                    Some(_) => {}
                    // A waiting notice: recorded before it is sent; none once the request was
                    // settled.
                    None => match lock(&this.sent).get_mut(&tag(&shown)) {
                        Some(sent) => sent.push(device.name.clone()),
                        None => break,
                    },
                }
                let delivery = this.pusher.send(&subscription, &notice(&device, &shown)).await;
                if let Delivery::Gone(status) = delivery {
                    tracing::warn!(device = ?device.name, status, "the push service dropped the phone's subscription");
                    let store = this.store.clone();
                    let name = device.name.clone();
                    let endpoint = subscription.endpoint;
                    let _ = tokio::task::spawn_blocking(move || store.drop_push(&name, &endpoint, status))
                        .await;
                }
                let _ = this.reports.send(PushReport {
                    device: device.name,
                    delivery,
                });
            }
        });
    }
}

/// The tag of a request's notices: its id.
fn tag(shown: &Shown) -> String {
    shown.wire["id"].as_str().unwrap_or_default().to_owned()
}

/// The minute of the desk's local day now (its time zone as the system names it).
fn local_minute() -> u16 {
    use chrono::Timelike;
    let now = chrono::Local::now();
    (now.hour() * 60 + now.minute()) as u16
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn at(hour: u16, minute: u16) -> u16 {
        hour * 60 + minute
    }

    #[test]
    fn quiet_hours_span_midnight() {
        let night: QuietHours = "22:00-07:00".parse().unwrap();
        assert_eq!(
            night,
            QuietHours {
                from: at(22, 0),
                to: at(7, 0)
            }
        );
        assert_eq!(night.to_string(), "22:00-07:00");
        assert!(night.holds(at(22, 0)) && night.holds(at(23, 59)));
        assert!(night.holds(at(0, 0)) && night.holds(at(6, 59)));
        assert!(!night.holds(at(7, 0)) && !night.holds(at(12, 0)) && !night.holds(at(21, 59)));
        let lunch: QuietHours = "12:00-13:00".parse().unwrap();
        assert!(lunch.holds(at(12, 30)) && !lunch.holds(at(13, 0)) && !lunch.holds(at(11, 59)));
    }

    #[test]
    fn quiet_hours_that_are_not_two_times_of_day_are_refused() {
        for wrong in [
            "",
            "22:00",
            "22:00-",
            "24:00-07:00",
            "22:60-07:00",
            "7:00-8:00",
            "22:00-22:00",
            "22:00-07:00-08:00",
            "-1:00-07:00",
            "ab:cd-07:00",
        ] {
            assert!(wrong.parse::<QuietHours>().is_err(), "{wrong:?}");
        }
    }

    fn settings(quiet: Option<&str>, idle_minutes: Option<u64>) -> PushSettings {
        PushSettings {
            quiet_hours: quiet.map(|text| text.parse().unwrap()),
            only_when_idle: idle_minutes.map(|m| Duration::from_secs(m * 60)),
            ..PushSettings::default()
        }
    }

    #[test]
    fn nothing_is_held_by_default_and_idleness_is_not_asked() {
        let asked = std::cell::Cell::new(false);
        let idle = || {
            asked.set(true);
            Idle::For(Duration::ZERO)
        };
        assert_eq!(held(&settings(None, None), at(3, 0), idle), None);
        assert!(
            !asked.get(),
            "the desk is asked only when the person wants it"
        );
    }

    #[test]
    fn quiet_hours_hold_a_notice_whatever_the_desk_says() {
        let night = settings(Some("22:00-07:00"), Some(5));
        assert_eq!(
            held(&night, at(23, 0), || Idle::Locked),
            Some(Held::QuietHours)
        );
        assert_eq!(
            held(&night, at(6, 59), || Idle::Unknown),
            Some(Held::QuietHours)
        );
        assert_eq!(held(&night, at(7, 0), || Idle::Locked), None);
    }

    #[test]
    fn only_an_idle_or_locked_desk_wakes_the_phone_when_so_chosen() {
        let five = settings(None, Some(5));
        let noon = at(12, 0);
        assert_eq!(
            held(&five, noon, || Idle::For(Duration::from_secs(30))),
            Some(Held::DeskInUse)
        );
        assert_eq!(
            held(&five, noon, || Idle::For(Duration::from_secs(299))),
            Some(Held::DeskInUse)
        );
        assert_eq!(
            held(&five, noon, || Idle::For(Duration::from_secs(300))),
            None
        );
        assert_eq!(
            held(&five, noon, || Idle::Locked),
            None,
            "a locked screen is away"
        );
        assert_eq!(
            held(&five, noon, || Idle::Unknown),
            None,
            "a desk that cannot tell wakes the phone"
        );
        let at_once = settings(None, Some(0));
        assert_eq!(held(&at_once, noon, || Idle::For(Duration::ZERO)), None);
    }

    #[test]
    fn notices_say_only_that_an_agent_waits_unless_chosen() {
        assert_eq!(
            Notice::waiting("r7", Class::TextAndChoices, 2, None).body,
            "An agent is waiting (2)"
        );
        assert_eq!(
            Notice::waiting("r7", Class::TextAndChoices, 1, Some("Deploy?")).body,
            "Deploy?"
        );
        for class in [Class::PlanReview, Class::PermissionPrompt] {
            assert_eq!(
                Notice::waiting("r7", class, 3, Some("rm -rf ~/secret")).body,
                "An agent is waiting (3)",
                "{class:?} never shows its content"
            );
            assert_eq!(
                Notice::waiting("r7", class, 3, Some("rm -rf ~/secret")).summary,
                "An agent is waiting (3)",
            );
        }
        assert_eq!(Notice::answered("r7", Class::PermissionPrompt).tag, "r7");
        let payload: serde_json::Value =
            serde_json::from_slice(&Notice::answered("r7", Class::PermissionPrompt).payload())
                .unwrap();
        assert_eq!(
            payload,
            json!({ "title": "askdesk", "body": "Answered on the desk",
                    "summary": "Answered on the desk", "tag": "r7",
                    "class": "permission-prompt", "waiting": 0, "answered": true })
        );
    }

    /// The body of the notice a chosen question makes, as the service worker reads it.
    fn shown_on_the_lock_screen(question: &str) -> String {
        let notice = Notice::waiting("r7", Class::TextAndChoices, 1, Some(question));
        let payload: serde_json::Value = serde_json::from_slice(&notice.payload()).unwrap();
        assert_eq!(payload["body"], notice.body.as_str());
        notice.body
    }

    #[test]
    fn a_bidi_override_on_the_lock_screen_is_shown_escaped() {
        assert_eq!(
            shown_on_the_lock_screen("Open invoice_\u{202e}fdp.exe? \u{2066}ok\u{2069}\u{200f}"),
            "Open invoice_\\u{202e}fdp.exe? \\u{2066}ok\\u{2069}\\u{200f}"
        );
    }

    #[test]
    fn newlines_on_the_lock_screen_cannot_forge_lines() {
        assert_eq!(
            shown_on_the_lock_screen("Deploy?\n\nAnswered on the desk\r\n\tAll clear"),
            "Deploy? Answered on the desk All clear"
        );
        assert_eq!(
            shown_on_the_lock_screen(" \n\t "),
            "An agent is waiting (1)",
            "a question of nothing but whitespace says only that an agent waits"
        );
    }

    #[test]
    fn ansi_escapes_on_the_lock_screen_are_shown_as_code_points() {
        let body = shown_on_the_lock_screen("\u{1b}[2J\u{1b}]0;pwned\u{7}Ship it?\u{9b}31m\u{0}");
        assert_eq!(
            body,
            "\\u{1b}[2J\\u{1b}]0;pwned\\u{7}Ship it?\\u{9b}31m\\u{0}"
        );
        assert!(body.chars().all(|c| !askdesk_core::text::is_escaped(c)));
    }

    #[test]
    fn a_huge_question_is_cut_for_the_lock_screen() {
        let body = shown_on_the_lock_screen(&"Deploy the whole fleet? ".repeat(100_000));
        assert_eq!(body.chars().count(), LOCK_SCREEN_CHARS);
        assert!(body.ends_with('…'));
        assert!(body.starts_with("Deploy the whole fleet? Deploy"));
        // Cut after escaping: an escape near the end is cut, never a character let through raw.
        let body = shown_on_the_lock_screen(&"\u{202e}".repeat(1_000));
        assert_eq!(body.chars().count(), LOCK_SCREEN_CHARS);
        assert!(body.chars().all(|c| c.is_ascii_graphic() || c == '…'));
        let exact = "x".repeat(LOCK_SCREEN_CHARS);
        assert_eq!(
            shown_on_the_lock_screen(&exact),
            exact,
            "one that fits is whole"
        );
        let wide = "宽".repeat(LOCK_SCREEN_CHARS + 1);
        assert_eq!(
            shown_on_the_lock_screen(&wide),
            format!("{}…", "宽".repeat(LOCK_SCREEN_CHARS - 1))
        );
    }

    #[test]
    fn a_permission_prompt_never_shows_its_content_however_it_is_written() {
        for class in [Class::PlanReview, Class::PermissionPrompt] {
            for question in ["rm -rf ~\n\u{202e}", "\u{1b}[2J", &"x".repeat(10_000)] {
                let notice = Notice::waiting("r7", class, 1, Some(question));
                assert_eq!(notice.body, "An agent is waiting (1)", "{class:?}");
            }
        }
    }

    #[test]
    fn the_vapid_token_is_an_es256_jwt_for_the_endpoints_origin() {
        let dir = tempfile::tempdir().unwrap();
        let vapid = Vapid::load_or_create(dir.path()).unwrap();
        assert_eq!(
            Vapid::load_or_create(dir.path()).unwrap().public_key(),
            vapid.public_key(),
            "kept"
        );
        let endpoint: Uri = "https://push.example:8443/send/x".parse().unwrap();
        let header = vapid.authorization(&endpoint, "mailto:me@example.com", 1000);
        let (token, key) = header
            .strip_prefix("vapid t=")
            .unwrap()
            .split_once(", k=")
            .unwrap();
        assert_eq!(key, vapid.public_key());
        let parts: Vec<&str> = token.split('.').collect();
        let claims: serde_json::Value =
            serde_json::from_slice(&keys::decode(parts[1]).unwrap()).unwrap();
        assert_eq!(
            claims,
            json!({ "aud": "https://push.example:8443", "exp": 1000 + 12 * 3600, "sub": "mailto:me@example.com" })
        );
        let device_key = keys::DeviceKey::from_text(key).unwrap();
        assert!(device_key.verifies(format!("{}.{}", parts[0], parts[1]).as_bytes(), parts[2]));
    }

    #[test]
    fn only_the_browsers_push_services_and_ones_own_are_sent_to() {
        let key = SigningKey::from_slice(&[7; 32]).unwrap();
        let at = |endpoint: &str| Subscription {
            endpoint: endpoint.into(),
            keys: SubscriptionKeys {
                p256dh: keys::encode(key.verifying_key().to_sec1_point(false).as_bytes()),
                auth: keys::encode(&[1; 16]),
            },
        };
        let settings = PushSettings {
            extra_services: vec!["Push.Example.org".into()],
            ..PushSettings::default()
        };
        for known in [
            "https://fcm.googleapis.com/fcm/send/x",
            "https://updates.push.services.mozilla.com/wpush/v2/x",
            "https://web.push.apple.com/x",
            "https://wns2-par02p.notify.windows.com/w/?token=x",
            "https://FCM.googleapis.com./x",
            "https://push.example.org:8443/x",
        ] {
            assert_eq!(settings.unknown_service(&at(known)), None, "{known}");
        }
        for unknown in [
            "https://192.168.1.1/x",
            "https://127.0.0.1:8443/x",
            "https://evilfcm.googleapis.com.attacker.example/x",
            "https://notfcm.googleapis.com/x",
            "https://push.apple.com.evil.example/x",
            "https://[::1]/x",
            "https://nas.local/x",
        ] {
            assert!(
                settings.unknown_service(&at(unknown)).is_some(),
                "{unknown}"
            );
        }
        assert!(PushSettings::default()
            .unknown_service(&at("https://push.example.org/x"))
            .is_some());
    }

    #[test]
    fn only_https_subscriptions_with_real_keys_are_used() {
        let key = SigningKey::from_slice(&[7; 32]).unwrap();
        let good = Subscription {
            endpoint: "https://push.example/x".into(),
            keys: SubscriptionKeys {
                p256dh: keys::encode(key.verifying_key().to_sec1_point(false).as_bytes()),
                auth: keys::encode(&[1; 16]),
            },
        };
        assert!(good.is_valid());
        let mut plain = good.clone();
        plain.endpoint = "http://push.example/x".into();
        let mut short = good.clone();
        short.keys.auth = keys::encode(&[1; 8]);
        let mut junk = good.clone();
        junk.keys.p256dh = keys::encode(&[4; 65]);
        for bad in [plain, short, junk] {
            assert!(!bad.is_valid(), "{bad:?}");
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_request_held_back_rings_no_phone_when_it_is_settled() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let in_use = Arc::new(AtomicBool::new(true));
        let mut config =
            crate::RemoteConfig::new("127.0.0.1:0".parse().unwrap(), dir.path().join("remote"));
        config.push.only_when_idle = Some(Duration::from_secs(300));
        let desk = in_use.clone();
        config.push.presence = Presence::new(move || {
            if desk.load(Ordering::SeqCst) {
                Idle::For(Duration::ZERO)
            } else {
                Idle::Locked
            }
        });
        // A push service of one's own that refuses connections: every push is reported, failed.
        config.push.extra_services = vec!["127.0.0.1".into()];
        let (remote, _server) = crate::bind(config).await.unwrap();
        let phone = SigningKey::from_slice(&[9; 32]).unwrap();
        let key = keys::DeviceKey::from_raw(phone.verifying_key().to_sec1_point(false).as_bytes())
            .unwrap();
        remote.devices().add("phone", &key).unwrap();
        let subscription = Subscription {
            endpoint: "https://127.0.0.1:9/x".into(),
            keys: SubscriptionKeys {
                p256dh: keys::encode(phone.verifying_key().to_sec1_point(false).as_bytes()),
                auth: keys::encode(&[1; 16]),
            },
        };
        remote.devices().set_push(&key, Some(subscription)).unwrap();
        let mut reports = remote.push_reports();
        let request = |id| crate::PendingRequest {
            id: askdesk_core::RequestId(id),
            deadline: None,
            agent: None,
            questions: vec![
                serde_json::from_value(json!({ "id": "q", "question": "Deploy?" })).unwrap(),
            ],
        };
        // Offered while the person sits at the desk, and answered there.
        drop(remote.offer(request(1)).unwrap());
        in_use.store(false, Ordering::SeqCst);
        // Offered once the desk is locked: the phone hears it, then that it was answered.
        let second = remote.offer(request(2)).unwrap();
        let ceiling = Duration::from_secs(30);
        let waiting = tokio::time::timeout(ceiling, reports.recv())
            .await
            .unwrap()
            .unwrap();
        drop(second);
        let answered = tokio::time::timeout(ceiling, reports.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (waiting.device.as_str(), answered.device.as_str()),
            ("phone", "phone")
        );
        assert!(
            matches!(
                reports.try_recv(),
                Err(broadcast::error::TryRecvError::Empty)
            ),
            "the request held back sent nothing, not even its replacement"
        );
    }
}
