//! The test harness: a desk (a remote on 127.0.0.1 with its own authority in a temporary
//! directory) and phones (a P-256 key, an HTTPS client and a WebSocket client that trust the
//! desk's authority through rustls, never by switching checks off). The end-to-end tests of
//! `askdesk remote` (tests/tests/remote.rs) play their phones with this file too, through a
//! [`Link`] to the remote the binary serves.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use askdesk_remote::{bind, canonical, keys, Remote, RemoteConfig};
use futures_util::{SinkExt, StreamExt};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{HeaderMap, Request, StatusCode};
use hyper_util::rt::TokioIo;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// A generous ceiling for an event the test waits for; never a measure of speed.
pub const CEILING: Duration = Duration::from_secs(20);

/// A remote in this process, and the phones' link to it.
pub struct Desk {
    pub remote: Remote,
    pub dir: tempfile::TempDir,
    link: Link,
}

impl std::ops::Deref for Desk {
    type Target = Link;

    fn deref(&self) -> &Link {
        &self.link
    }
}

/// How a phone reaches a remote on 127.0.0.1: its address, and TLS trusting one root.
pub struct Link {
    pub addr: SocketAddr,
    tls: TlsConnector,
}

pub async fn desk() -> Desk {
    desk_with(|_| {}).await
}

pub async fn desk_with(change: impl FnOnce(&mut RemoteConfig)) -> Desk {
    desk_trusting(change, None).await
}

/// A desk whose phones trust `root` (DER), or the desk's own authority when `None`.
pub async fn desk_trusting(change: impl FnOnce(&mut RemoteConfig), root: Option<Vec<u8>>) -> Desk {
    let dir = tempfile::tempdir().unwrap();
    let mut config = RemoteConfig::new("127.0.0.1:0".parse().unwrap(), dir.path().join("remote"));
    change(&mut config);
    let (remote, server) = bind(config).await.unwrap();
    let addr = server.local_addr();
    tokio::spawn(server.run());
    let root = root.unwrap_or_else(|| remote.authority_der().unwrap().to_vec());
    Desk {
        link: Link::trusting(addr, root),
        remote,
        dir,
    }
}

pub type Socket = WebSocketStream<TlsStream<TcpStream>>;

impl Link {
    /// A link to the remote at `addr` whose certificate chains to `root` (DER).
    pub fn trusting(addr: SocketAddr, root: Vec<u8>) -> Link {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(CertificateDer::from(root)).unwrap();
        let client =
            rustls::ClientConfig::builder_with_provider(askdesk_remote::certs::crypto_provider())
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(roots)
                .with_no_client_auth();
        Link {
            addr,
            tls: TlsConnector::from(Arc::new(client)),
        }
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.addr.port())
    }

    pub fn origin(&self) -> String {
        format!("https://{}", self.host())
    }

    /// A TLS connection that verified the desk's certificate for 127.0.0.1.
    pub async fn connect(&self) -> TlsStream<TcpStream> {
        let tcp = TcpStream::connect(self.addr).await.unwrap();
        let name = ServerName::try_from("127.0.0.1").unwrap();
        self.tls.connect(name, tcp).await.unwrap()
    }

    /// One HTTPS request with exactly these headers (no Host unless given).
    pub async fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> (StatusCode, HeaderMap, Bytes) {
        let io = TokioIo::new(self.connect().await);
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await.unwrap();
        tokio::spawn(connection);
        let mut request = Request::builder().method(method).uri(path);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(Full::new(Bytes::copy_from_slice(body)))
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        (parts.status, parts.headers, bytes)
    }

    /// A GET with the right Host and no Origin, as a browser navigates.
    pub async fn get(&self, path: &str) -> (StatusCode, HeaderMap, Bytes) {
        let host = self.host();
        self.request("GET", path, &[("host", &host)], b"").await
    }

    /// A same-origin POST of JSON, as the pairing page sends it.
    pub async fn post_json(&self, path: &str, body: &Value) -> (StatusCode, Value) {
        let (host, origin) = (self.host(), self.origin());
        let headers = [
            ("host", host.as_str()),
            ("origin", origin.as_str()),
            ("content-type", "application/json"),
        ];
        let (status, _, bytes) = self
            .request("POST", path, &headers, body.to_string().as_bytes())
            .await;
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    /// A WebSocket upgrade with these headers (besides the upgrade's own); the handshake's
    /// status on refusal.
    pub async fn socket_with(&self, headers: &[(&str, &str)]) -> Result<Socket, StatusCode> {
        let mut request = format!("wss://{}/socket", self.host())
            .into_client_request()
            .unwrap();
        for (name, value) in headers {
            let name: hyper::header::HeaderName = name.parse().unwrap();
            request.headers_mut().insert(name, value.parse().unwrap());
        }
        match tokio_tungstenite::client_async(request, self.connect().await).await {
            Ok((socket, _)) => Ok(socket),
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => Err(response.status()),
            Err(error) => panic!("the upgrade failed: {error}"),
        }
    }

    /// A same-origin WebSocket.
    pub async fn socket(&self) -> Socket {
        let origin = self.origin();
        self.socket_with(&[("origin", &origin)]).await.unwrap()
    }
}

/// Plays a phone: a P-256 key like WebCrypto's, and the page's side of every exchange.
pub struct Phone {
    key: SigningKey,
    pub name: String,
}

impl Phone {
    pub fn new(name: &str) -> Phone {
        Phone {
            key: SigningKey::from_slice(&keys::random::<32>()).unwrap(),
            name: name.to_string(),
        }
    }

    /// The raw uncompressed SEC1 public key, as WebCrypto exports it.
    pub fn public_raw(&self) -> Vec<u8> {
        self.key
            .verifying_key()
            .to_sec1_point(false)
            .as_bytes()
            .to_vec()
    }

    /// ECDSA P-256 SHA-256 in P1363 form, base64url: what WebCrypto's sign() gives.
    pub fn sign(&self, message: &[u8]) -> String {
        let signature: Signature = self.key.sign(message);
        keys::encode(&signature.to_bytes())
    }

    /// The body the pairing page posts for the token in the URL.
    pub fn pair_body(&self, token: &[u8]) -> Value {
        use hmac::{KeyInit, Mac};
        let mut mac = hmac::Hmac::<Sha256>::new_from_slice(token).unwrap();
        mac.update(&self.public_raw());
        json!({
            "publicKey": keys::encode(&self.public_raw()),
            "proof": keys::encode(&mac.finalize().into_bytes()),
            "name": self.name,
        })
    }

    /// The code the page shows: computed independently of the crate's code.
    pub fn code(&self, token: &[u8]) -> String {
        use hmac::{KeyInit, Mac};
        let mut mac = hmac::Hmac::<Sha256>::new_from_slice(token).unwrap();
        mac.update(b"askdesk pairing code v1");
        mac.update(&self.public_raw());
        let bytes = mac.finalize().into_bytes();
        let n = u32::from_be_bytes(bytes[..4].try_into().unwrap()) % 1_000_000;
        format!("{n:06}")
    }

    /// Opens a socket and proves the key: returns the socket and the first message after hello.
    pub async fn connect(&self, desk: &Link) -> (Socket, Value) {
        let mut socket = desk.socket().await;
        let challenge = next(&mut socket).await;
        assert_eq!(challenge["type"], "challenge");
        let message = canonical::to_string(&json!({
            "challenge": challenge["challenge"],
            "kind": "askdesk/hello",
            "origin": desk.origin(),
            "v": 1,
        }))
        .unwrap();
        let hello = json!({
            "type": "hello",
            "publicKey": keys::encode(&self.public_raw()),
            "signature": self.sign(message.as_bytes()),
        });
        socket
            .send(Message::Text(hello.to_string().into()))
            .await
            .unwrap();
        let reply = next(&mut socket).await;
        (socket, reply)
    }

    /// A signed answer to `request` as the wire carries it, the digest computed from the wire
    /// form alone, as the page does.
    pub fn answer(&self, request: &Value, nonce: &str, answer: Value) -> Value {
        let digest = digest_of(request);
        let message = canonical::to_string(&json!({
            "answer": answer,
            "digest": digest,
            "kind": "askdesk/answer",
            "nonce": nonce,
            "v": 1,
        }))
        .unwrap();
        json!({
            "type": "answer",
            "id": request["id"],
            "nonce": nonce,
            "answer": answer,
            "digest": digest,
            "signature": self.sign(message.as_bytes()),
        })
    }
}

impl Phone {
    /// A signed answer with comments on the plan's blocks, signed with it.
    pub fn review(&self, request: &Value, nonce: &str, answer: Value, comments: Value) -> Value {
        let digest = digest_of(request);
        let message = canonical::to_string(&json!({
            "answer": answer,
            "comments": comments,
            "digest": digest,
            "kind": "askdesk/answer",
            "nonce": nonce,
            "v": 1,
        }))
        .unwrap();
        let mut signed = self.answer(request, nonce, answer);
        signed["comments"] = comments;
        signed["signature"] = json!(self.sign(message.as_bytes()));
        signed
    }
}

/// The request digest from the wire form (docs/remote.md).
pub fn digest_of(request: &Value) -> String {
    let agent = match &request["agent"] {
        Value::Null => Value::Null,
        agent => agent["id"].clone(),
    };
    let text = canonical::to_string(&json!({
        "agent": agent,
        "id": request["id"],
        "key": request["key"],
        "kind": "askdesk/request",
        "questions": request["questions"],
        "v": 1,
    }))
    .unwrap();
    keys::encode(&Sha256::digest(text.as_bytes()))
}

/// A 3×2 PNG, the bytes of a picture as a phone's page sends them (standard base64).
pub const PICTURE: &str = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGM4YRMFQQxwFgBUsAg1nqIGFQAAAABJRU5ErkJggg==";

pub fn nonce() -> String {
    keys::encode(&keys::random::<16>())
}

/// The next text message, parsed; panics on close or after the ceiling.
pub async fn next(socket: &mut Socket) -> Value {
    loop {
        let message = tokio::time::timeout(CEILING, socket.next())
            .await
            .expect("a message within the ceiling")
            .expect("the socket is open")
            .unwrap();
        match message {
            Message::Text(text) => return serde_json::from_str(text.as_str()).unwrap(),
            Message::Close(frame) => panic!("closed: {frame:?}"),
            _ => continue,
        }
    }
}

/// Asserts that the remote closes the socket next (a close frame, or the end of the stream).
pub async fn assert_closed(socket: &mut Socket) {
    let closed = tokio::time::timeout(CEILING, socket.next())
        .await
        .expect("closed within the ceiling");
    assert!(
        matches!(closed, Some(Ok(Message::Close(_))) | None),
        "{closed:?}"
    );
}

/// The token of a pairing URL `https://…/pair#v1.<token>.<fingerprint>`.
pub fn token_of(url: &str) -> Vec<u8> {
    let fragment = url.split_once('#').unwrap().1;
    let parts: Vec<&str> = fragment.split('.').collect();
    assert_eq!(parts.len(), 3, "{fragment}");
    assert_eq!(parts[0], "v1");
    keys::decode(parts[1]).unwrap()
}

/// A paired phone: offered, claimed and confirmed at the desk.
pub async fn paired(desk: &Desk, name: &str) -> Phone {
    let phone = Phone::new(name);
    let offer = desk.remote.offer_pairing();
    let token = token_of(&offer.url);
    let (status, _) = desk.post_json("/pair", &phone.pair_body(&token)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    desk.remote
        .confirm_pairing(offer.id, &phone.code(&token))
        .unwrap();
    phone
}
