//! The HTTPS server: one address the person picked (never every interface unless forced), TLS by
//! rustls, HTTP/1.1 by hyper serving the axum router, the `Host` and `Origin` guard in front of
//! every route. It waits in `accept` when no device is connected: no timer, no wake-up.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;

use crate::certs::{CertificateSource, Certificates};
use crate::devices::DeviceStore;
use crate::error::Error;
use crate::keys::{self, DeviceKey};
use crate::limits::Limits;
use crate::names::{Name, Served};
use crate::pages;
use crate::pairing::{Claim, PairingError, DEFAULT_LIFETIME};
use crate::push::PushSettings;
use crate::remote::{Refusal, Remote};
use crate::socket;

/// Connections served at once; more are closed on arrival.
const MAX_CONNECTIONS: usize = 64;
/// A TLS handshake that takes longer is dropped (a timer only while that connection exists).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest pairing request body.
const MAX_PAIR_BODY: usize = 4096;

/// How the remote is set up.
#[derive(Debug, Clone)]
pub struct RemoteConfig {
    /// The one address to listen on (port 0: any free port).
    pub listen: SocketAddr,
    /// The names phones use; empty means the listening address itself.
    pub names: Vec<Name>,
    /// Listen on 0.0.0.0 or :: (every interface): refused unless set.
    pub every_interface: bool,
    pub certificates: CertificateSource,
    /// The remote's private directory: the device store, the own authority's files.
    pub dir: PathBuf,
    /// How long a pairing offer stays valid.
    pub pairing_lifetime: Duration,
    /// The limits on each device: approvals in a window, bad signatures that suspend it.
    pub limits: Limits,
    /// Web Push: quiet hours, "only when the desk is idle" and where the desk learns it, what the
    /// lock screen may show, the VAPID contact.
    pub push: PushSettings,
}

impl RemoteConfig {
    /// `listen` with askdesk's own authority, everything kept in `dir`.
    pub fn new(listen: SocketAddr, dir: PathBuf) -> RemoteConfig {
        RemoteConfig {
            listen,
            names: Vec::new(),
            every_interface: false,
            certificates: CertificateSource::OwnAuthority { dir: dir.clone() },
            dir,
            pairing_lifetime: DEFAULT_LIFETIME,
            limits: Limits::default(),
            push: PushSettings::default(),
        }
    }
}

/// A bound server, not yet serving.
pub struct Server {
    listener: TcpListener,
    acceptor: TlsAcceptor,
    router: Router,
    remote: Remote,
}

/// Checks the address, binds it, loads or makes the certificates. The remote is ready for the desk
/// (pairing offers, requests) once this returns; [`Server::run`] serves the phones.
pub async fn bind(config: RemoteConfig) -> Result<(Remote, Server), Error> {
    let unspecified = config.listen.ip().is_unspecified();
    if unspecified && !config.every_interface {
        return Err(Error::EveryInterface(config.listen));
    }
    let names = match (config.names.is_empty(), unspecified) {
        (false, _) => config.names.clone(),
        (true, false) => vec![Name::Ip(config.listen.ip())],
        (true, true) => return Err(Error::NoServedName),
    };
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| Error::Listen {
            addr: config.listen,
            source,
        })?;
    let port = listener
        .local_addr()
        .map_err(|source| Error::Listen {
            addr: config.listen,
            source,
        })?
        .port();
    let served = Served::new(names.clone(), port)?;
    let source = config.certificates.clone();
    let certificates = tokio::task::spawn_blocking(move || Certificates::load(&source, &names))
        .await
        .map_err(|error| Error::Generate(error.to_string()))??;
    let acceptor = TlsAcceptor::from(certificates.server_config()?);
    let remote = Remote::new(
        served,
        certificates.fingerprint(),
        certificates.authority_der().map(<[u8]>::to_vec),
        DeviceStore::new(&config.dir),
        config.pairing_lifetime,
        config.limits,
        config.push,
    )?;
    let router = router(remote.clone());
    Ok((
        remote.clone(),
        Server {
            listener,
            acceptor,
            router,
            remote,
        },
    ))
}

impl Server {
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().expect("a bound listener")
    }

    /// Serves until [`Remote::shutdown`].
    pub async fn run(self) {
        let shutdown = self.remote.shutdown_token();
        let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        loop {
            let accepted = tokio::select! {
                () = shutdown.cancelled() => return,
                accepted = self.listener.accept() => accepted,
            };
            let Ok((stream, _peer)) = accepted else {
                continue;
            };
            let Ok(permit) = connections.clone().try_acquire_owned() else {
                continue;
            };
            let acceptor = self.acceptor.clone();
            let service = TowerToHyperService::new(self.router.clone());
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                let _permit = permit;
                let tls = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await;
                let Ok(Ok(tls)) = tls else {
                    return;
                };
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .with_upgrades();
                tokio::select! {
                    _ = connection => {}
                    () = shutdown.cancelled() => {}
                }
            });
        }
    }
}

fn router(remote: Remote) -> Router {
    pages::assets(Router::new())
        .route("/", get(pages::page))
        .route("/pair", get(pages::page).post(pair))
        .route("/ca", get(pages::authority))
        .route("/catalogue", get(pages::catalogue))
        .route("/manifest.webmanifest", get(pages::manifest))
        .route("/ca.crt", get(authority_certificate))
        .route("/socket", get(socket::upgrade))
        .route("/push/key", get(push_key))
        .route("/push/subscription", post(push_subscription))
        .layer(DefaultBodyLimit::max(MAX_PAIR_BODY))
        .layer(middleware::from_fn_with_state(remote.clone(), guard))
        .with_state(remote)
}

/// Every request and socket: `Host` (and an HTTP/2-style authority) must be a served name with
/// our port (421 otherwise: DNS rebinding); `Origin` must be ours when present, and must be
/// present on anything but a plain GET or HEAD (403 otherwise: a cross-site page).
async fn guard(State(remote): State<Remote>, request: Request, next: Next) -> Response {
    let served = remote.served();
    let headers = request.headers();
    let hosts: Vec<&HeaderValue> = headers.get_all(header::HOST).iter().collect();
    let host_ok =
        matches!(hosts.as_slice(), [host] if host.to_str().is_ok_and(|h| served.allows_host(h)));
    let authority_ok = request
        .uri()
        .authority()
        .is_none_or(|authority| served.allows_host(authority.as_str()));
    if !(host_ok && authority_ok) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            "not-served",
            "this server does not serve that host",
        );
    }
    let origins: Vec<&HeaderValue> = headers.get_all(header::ORIGIN).iter().collect();
    let needs_origin = !matches!(*request.method(), Method::GET | Method::HEAD)
        || headers.contains_key(header::UPGRADE);
    let origin_ok = match origins.as_slice() {
        [] => !needs_origin,
        [origin] => origin.to_str().is_ok_and(|o| served.allows_origin(o)),
        _ => false,
    };
    if !origin_ok {
        return refuse(
            StatusCode::FORBIDDEN,
            "cross-origin",
            "requests from other sites are refused",
        );
    }
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CACHE_CONTROL, "no-store"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (
            header::CONTENT_SECURITY_POLICY,
            pages::CONTENT_SECURITY_POLICY,
        ),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

fn refuse(status: StatusCode, code: &str, message: &str) -> Response {
    (status, Json(json!({ "error": code, "message": message }))).into_response()
}

/// The body of `POST /pair`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PairBody {
    /// Raw uncompressed SEC1 P-256 public key, base64url.
    public_key: String,
    /// HMAC-SHA256 keyed by the token over the raw public key, base64url.
    proof: String,
    #[serde(default)]
    name: String,
}

async fn pair(State(remote): State<Remote>, Json(body): Json<PairBody>) -> Response {
    let Some(key) = DeviceKey::from_text(&body.public_key) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "bad-key",
            "publicKey is not a raw P-256 public key",
        );
    };
    let Some(proof) = keys::decode(&body.proof) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "bad-proof",
            "proof is not base64url",
        );
    };
    let claim = Claim {
        key,
        proof,
        name: body.name,
    };
    match remote.claim_pairing(claim) {
        Ok(_) => (
            StatusCode::ACCEPTED,
            Json(json!({ "state": "confirm-at-desk" })),
        )
            .into_response(),
        Err(error) => {
            let (status, code) = match error {
                PairingError::BadProof => (StatusCode::FORBIDDEN, "bad-proof"),
                PairingError::TooManyTries => (StatusCode::FORBIDDEN, "too-many-tries"),
                PairingError::Expired => (StatusCode::GONE, "expired"),
                PairingError::AlreadyUsed => (StatusCode::CONFLICT, "already-used"),
                _ => (StatusCode::FORBIDDEN, "refused"),
            };
            // The log stays English: the variant, not the sentence the phone is told.
            tracing::info!(?error, "a pairing claim was refused");
            refuse(status, code, &error.to_string())
        }
    }
}

/// The desk's VAPID public key, for the page to subscribe with.
async fn push_key(State(remote): State<Remote>) -> Response {
    Json(json!({ "publicKey": remote.push_key() })).into_response()
}

/// The body of `POST /push/subscription`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SubscriptionBody {
    public_key: String,
    /// `PushSubscription.toJSON()`, or `null` to stop pushes.
    subscription: Value,
    /// The device's P1363 signature over [`crate::digest::push_message`].
    signature: String,
}

/// A paired device sets its push subscription, signed with its key: 204, or 400 for a
/// subscription that is not usable, 403 for a key not paired, suspended, or a bad signature.
async fn push_subscription(
    State(remote): State<Remote>,
    Json(body): Json<SubscriptionBody>,
) -> Response {
    let message = crate::digest::push_message(&remote.served().origin(), &body.subscription);
    let key = DeviceKey::from_text(&body.public_key).filter(|key| {
        message
            .as_ref()
            .is_some_and(|m| key.verifies(m, &body.signature))
    });
    let Some(key) = key else {
        return refuse(
            StatusCode::FORBIDDEN,
            "bad-signature",
            "the subscription is not signed by a paired device's key",
        );
    };
    let subscription = match body.subscription {
        Value::Null => None,
        value => match serde_json::from_value::<crate::push::Subscription>(value) {
            Ok(subscription) if subscription.is_valid() => Some(subscription),
            _ => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "bad-subscription",
                    "not an https push endpoint with a P-256 key and a 16-byte secret",
                )
            }
        },
    };
    let stored = tokio::task::spawn_blocking(move || remote.subscribe(&key, subscription))
        .await
        .unwrap_or_else(|error| Err(Refusal::Internal(error.to_string())));
    match stored {
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(refusal) => refuse(StatusCode::FORBIDDEN, refusal.code(), &refusal.to_string()),
    }
}

/// The own authority's certificate for a phone to install; 404 with a provided certificate.
async fn authority_certificate(State(remote): State<Remote>) -> Response {
    match remote.authority_der() {
        Some(der) => (
            [
                (header::CONTENT_TYPE, "application/x-x509-ca-cert"),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"askdesk-ca.crt\"",
                ),
            ],
            der.to_vec(),
        )
            .into_response(),
        None => refuse(
            StatusCode::NOT_FOUND,
            "no-authority",
            "this desk serves a certificate of its own choosing: nothing to install",
        ),
    }
}
