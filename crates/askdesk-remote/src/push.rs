//! Web Push from the desk to paired phones: the desk's VAPID key (RFC 8292), each device's push
//! subscription, the notices (never a permission prompt's content: by default only "An agent is
//! waiting (N)", replaced by "Answered on the desk" under the same tag), and their delivery,
//! encrypted as RFC 8291 `aes128gcm` (`web-push-native`) and posted over HTTPS. A push service
//! that answers 404 or 410 has dropped the subscription: the desk drops it too and says so.

use std::path::Path;
use std::sync::Arc;
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

use crate::devices::{Device, DeviceStore};
use crate::error::Error;
use crate::files;
use crate::keys;
use crate::pending::Shown;
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

/// Hours in which no notice is sent, as minutes of the day (`from` included, `to` not; `from`
/// after `to` spans midnight), in the desk's time zone given as its offset from UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietHours {
    pub from: u16,
    pub to: u16,
    /// The desk's offset from UTC in minutes (east positive).
    pub utc_offset: i32,
}

impl QuietHours {
    /// Whether `unix_seconds` falls in the quiet hours.
    pub fn holds(&self, unix_seconds: u64) -> bool {
        let local = unix_seconds as i64 / 60 + i64::from(self.utc_offset);
        let minute = local.rem_euclid(24 * 60) as u16;
        if self.from <= self.to {
            (self.from..self.to).contains(&minute)
        } else {
            minute >= self.from || minute < self.to
        }
    }
}

/// What the person chose for notices.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushSettings {
    /// Show the question of a text and choice request on the lock screen (never a plan's or a
    /// permission prompt's).
    pub show_questions: bool,
    pub quiet_hours: Option<QuietHours>,
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

/// A notice for the lock screen: its text and the tag that replaces an earlier one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub tag: String,
    pub body: String,
}

impl Notice {
    /// "An agent is waiting (N)", or the question itself where the person chose to see it.
    pub fn waiting(tag: &str, waiting: usize, question: Option<&str>) -> Notice {
        Notice {
            tag: tag.to_owned(),
            body: question
                .map_or_else(|| format!("An agent is waiting ({waiting})"), str::to_owned),
        }
    }

    /// The request was settled elsewhere: the earlier notice under the same tag is replaced.
    pub fn answered(tag: &str) -> Notice {
        Notice {
            tag: tag.to_owned(),
            body: "Answered on the desk".into(),
        }
    }

    /// The JSON the phone's service worker shows: `{"title", "body", "tag"}`.
    pub fn payload(&self) -> Vec<u8> {
        json!({ "title": "askdesk", "body": self.body, "tag": self.tag })
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
}

impl Pushing {
    /// A request was offered: each subscribed device within whose scope it is hears how many
    /// requests wait for it (or, where chosen, a text and choice question itself); nothing in
    /// quiet hours.
    pub fn offered(&self, shown: Arc<Shown>, held: Vec<Arc<Shown>>) {
        if self
            .settings
            .quiet_hours
            .is_some_and(|quiet| quiet.holds(unix_now()))
        {
            return;
        }
        let show_question = self.settings.show_questions && shown.class == Class::TextAndChoices;
        self.spawn(shown, move |device, shown| {
            let waiting = held
                .iter()
                .filter(|held| device.scope.admits(held.agent.as_ref(), held.class))
                .count();
            let question = shown.wire["questions"][0]["question"]
                .as_str()
                .filter(|_| show_question)
                .map(|text| text.chars().take(120).collect::<String>());
            Notice::waiting(&tag(shown), waiting, question.as_deref())
        });
    }

    /// A request was settled (anywhere): the notice under its tag is replaced.
    pub fn settled(&self, shown: Arc<Shown>) {
        self.spawn(shown, |_, shown| Notice::answered(&tag(shown)));
    }

    /// Sends `notice` to every subscribed, unsuspended device within whose scope `shown` is, off
    /// the caller's thread; a subscription its push service says is gone is dropped.
    fn spawn(
        &self,
        shown: Arc<Shown>,
        notice: impl Fn(&Device, &Shown) -> Notice + Send + 'static,
    ) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("no runtime to push from");
            return;
        };
        let this = self.clone();
        runtime.spawn(async move {
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
                let delivery = this.pusher.send(&subscription, &notice(&device, &shown)).await;
                if let Delivery::Gone(status) = delivery {
                    tracing::warn!(device = ?device.name, status, "the push service dropped the phone's subscription");
                    let store = this.store.clone();
                    let name = device.name.clone();
                    let endpoint = subscription.endpoint;
                    let _ = tokio::task::spawn_blocking(move || store.drop_push(&name, &endpoint))
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

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_hours_span_midnight_in_the_desks_zone() {
        let night = QuietHours {
            from: 22 * 60,
            to: 7 * 60,
            utc_offset: 60,
        };
        let at = |hour: u64, minute: u64| (hour * 60 + minute) * 60;
        assert!(night.holds(at(21, 0)), "22:00 at UTC+1");
        assert!(night.holds(at(5, 59)), "06:59 at UTC+1");
        assert!(!night.holds(at(6, 0)), "07:00 at UTC+1");
        assert!(!night.holds(at(12, 0)));
        let lunch = QuietHours {
            from: 12 * 60,
            to: 13 * 60,
            utc_offset: 0,
        };
        assert!(lunch.holds(at(12, 30)) && !lunch.holds(at(13, 0)));
    }

    #[test]
    fn notices_say_only_that_an_agent_waits_unless_chosen() {
        assert_eq!(
            Notice::waiting("r7", 2, None).body,
            "An agent is waiting (2)"
        );
        assert_eq!(Notice::answered("r7").tag, "r7");
        let payload: serde_json::Value =
            serde_json::from_slice(&Notice::answered("r7").payload()).unwrap();
        assert_eq!(
            payload,
            json!({ "title": "askdesk", "body": "Answered on the desk", "tag": "r7" })
        );
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
}
