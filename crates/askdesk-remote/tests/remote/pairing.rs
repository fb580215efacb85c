//! Pairing through HTTPS as a phone does it: only from an offer made at the desk, once, in time,
//! within five tries, and only when the desk confirms the code the phone shows.

use std::time::Duration;

use askdesk_remote::{keys, PairingError};
use hyper::StatusCode;
use sha2::{Digest, Sha256};
use tokio_rustls::rustls::pki_types::CertificateDer;

use crate::phone::{assert_closed, desk, desk_with, next, paired, token_of, Phone, CEILING};

#[tokio::test]
async fn a_phone_pairs_when_the_desk_confirms_the_code_both_show() {
    let desk = desk().await;
    let mut claims = desk.remote.pairing_claims();
    let offer = desk.remote.offer_pairing();
    let phone = Phone::new("Pixel 8");
    let token = token_of(&offer.url);
    let (status, body) = desk.post_json("/pair", &phone.pair_body(&token)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let claimed = tokio::time::timeout(CEILING, claims.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, offer.id);
    assert_eq!(
        claimed.code,
        phone.code(&token),
        "the desk shows the code the page computes"
    );
    assert_eq!(claimed.name, "Pixel 8");
    assert!(
        desk.remote.devices().list().unwrap().is_empty(),
        "nothing stored before the desk confirms"
    );

    let device = desk
        .remote
        .confirm_pairing(offer.id, &claimed.code)
        .unwrap();
    assert_eq!(device.name, "Pixel 8");
    assert_eq!(device.public_key, keys::encode(&phone.public_raw()));
    assert_eq!(desk.remote.devices().list().unwrap(), vec![device]);

    let (_socket, welcome) = phone.connect(&desk).await;
    assert_eq!(welcome["type"], "welcome");
    assert_eq!(welcome["device"], "Pixel 8");
    assert!(desk.remote.devices().list().unwrap()[0].last_seen.is_some());
}

#[tokio::test]
async fn the_pairing_url_names_the_served_origin_and_the_certificate_it_serves() {
    let desk = desk().await;
    let offer = desk.remote.offer_pairing();
    let prefix = format!("{}/pair#v1.", desk.origin());
    assert!(offer.url.starts_with(&prefix), "{}", offer.url);
    assert_eq!(token_of(&offer.url).len(), 32);
    assert_eq!(offer.lifetime, Duration::from_secs(120));
    let tls = desk.connect().await;
    let served: &CertificateDer<'_> = &tls.get_ref().1.peer_certificates().unwrap()[0];
    let fingerprint = keys::encode(&Sha256::digest(served.as_ref()));
    assert!(
        offer.url.ends_with(&format!(".{fingerprint}")),
        "{}",
        offer.url
    );
}

#[tokio::test]
async fn an_unpaired_key_cannot_open_a_socket() {
    let desk = desk().await;
    let stranger = Phone::new("stranger");
    let (mut socket, reply) = stranger.connect(&desk).await;
    assert_eq!(reply["type"], "refused");
    assert_eq!(reply["reason"], "not-paired");
    assert_closed(&mut socket).await;
}

#[tokio::test]
async fn a_used_token_is_refused_and_a_racing_second_phone_loses() {
    let desk = desk().await;
    let offer = desk.remote.offer_pairing();
    let token = token_of(&offer.url);
    let first = Phone::new("mine");
    let second = Phone::new("theirs");
    let (status, _) = desk.post_json("/pair", &first.pair_body(&token)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, body) = desk.post_json("/pair", &second.pair_body(&token)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::CONFLICT, Some("already-used"))
    );
    let (status, _) = desk.post_json("/pair", &first.pair_body(&token)).await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "the same phone cannot claim twice"
    );
    // The desk confirms the code its own phone shows: the second phone never pairs.
    desk.remote
        .confirm_pairing(offer.id, &first.code(&token))
        .unwrap();
    let names: Vec<String> = desk
        .remote
        .devices()
        .list()
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(names, ["mine"]);
    let (status, _) = desk.post_json("/pair", &second.pair_body(&token)).await;
    assert_eq!(status, StatusCode::CONFLICT, "a confirmed token stays used");
}

#[tokio::test]
async fn the_sixth_try_is_refused_even_with_the_token() {
    let desk = desk().await;
    let offer = desk.remote.offer_pairing();
    let token = token_of(&offer.url);
    let phone = Phone::new("Pixel");
    let guess = [0u8; 32];
    for attempt in 1..=5 {
        let (status, body) = desk.post_json("/pair", &phone.pair_body(&guess)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "try {attempt}");
        let expected = if attempt < 5 {
            "bad-proof"
        } else {
            "too-many-tries"
        };
        assert_eq!(body["error"], expected, "try {attempt}");
    }
    let (status, body) = desk.post_json("/pair", &phone.pair_body(&token)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::FORBIDDEN, Some("too-many-tries"))
    );
    assert_eq!(
        desk.remote.confirm_pairing(offer.id, &phone.code(&token)),
        Err(PairingError::Unknown)
    );
}

#[tokio::test]
async fn an_expired_token_is_refused() {
    // A lifetime of zero: the offer is expired when it is made, no waiting needed.
    let desk = desk_with(|config| config.pairing_lifetime = Duration::ZERO).await;
    let offer = desk.remote.offer_pairing();
    let token = token_of(&offer.url);
    let phone = Phone::new("Pixel");
    let (status, body) = desk.post_json("/pair", &phone.pair_body(&token)).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::GONE, Some("expired"))
    );
    assert!(desk.remote.devices().list().unwrap().is_empty());
}

#[tokio::test]
async fn a_wrong_code_at_the_desk_pairs_nothing_and_ends_the_pairing() {
    let desk = desk().await;
    let offer = desk.remote.offer_pairing();
    let token = token_of(&offer.url);
    let phone = Phone::new("Pixel");
    let (status, _) = desk.post_json("/pair", &phone.pair_body(&token)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let right = phone.code(&token);
    let wrong = if right == "000000" {
        "000001"
    } else {
        "000000"
    };
    assert_eq!(
        desk.remote.confirm_pairing(offer.id, wrong),
        Err(PairingError::WrongCode)
    );
    assert_eq!(
        desk.remote.confirm_pairing(offer.id, &right),
        Err(PairingError::Unknown)
    );
    assert!(desk.remote.devices().list().unwrap().is_empty());
    let (_socket, reply) = phone.connect(&desk).await;
    assert_eq!(reply["reason"], "not-paired");
}

#[tokio::test]
async fn a_proof_that_is_not_for_the_sent_key_is_refused() {
    let desk = desk().await;
    let offer = desk.remote.offer_pairing();
    let token = token_of(&offer.url);
    let mut body = Phone::new("a").pair_body(&token);
    body["publicKey"] = Phone::new("b").pair_body(&token)["publicKey"].clone();
    let (status, reply) = desk.post_json("/pair", &body).await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (StatusCode::FORBIDDEN, Some("bad-proof"))
    );
    let mut bad_key = Phone::new("a").pair_body(&token);
    bad_key["publicKey"] = keys::encode(&[4u8; 65]).into();
    let (status, _) = desk.post_json("/pair", &bad_key).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn revoking_a_device_closes_its_socket_at_once_and_refuses_its_key() {
    let desk = desk().await;
    let phone = paired(&desk, "Pixel").await;
    let other = paired(&desk, "Tablet").await;
    let (mut socket, welcome) = phone.connect(&desk).await;
    assert_eq!(welcome["type"], "welcome");
    let (mut kept, _) = other.connect(&desk).await;
    assert_eq!(next(&mut socket).await["type"], "requests");
    assert_eq!(next(&mut kept).await["type"], "requests");

    let revoked = desk.remote.revoke("Pixel").unwrap().unwrap();
    assert_eq!(revoked.name, "Pixel");
    assert_eq!(next(&mut socket).await["type"], "revoked");
    assert_closed(&mut socket).await;

    let (_again, reply) = phone.connect(&desk).await;
    assert_eq!(reply["reason"], "not-paired");
    // The other device stays connected and still hears requests.
    let _held = desk.remote.offer(crate::answers::request(1)).unwrap();
    assert_eq!(next(&mut kept).await["type"], "request");
    assert_eq!(desk.remote.revoke("Pixel").unwrap(), None);
}

/// Everything logged, kept for the test to read.
#[derive(Clone, Default)]
struct Log(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Log {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

// One thread: the server's tasks run where the subscriber is set.
#[tokio::test(flavor = "current_thread")]
async fn the_pairing_token_never_reaches_the_log() {
    let log = Log::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);
    let desk = desk().await;
    let offer = desk.remote.offer_pairing();
    let token = token_of(&offer.url);
    let phone = Phone::new("Pixel");
    let (status, _) = desk.post_json("/pair", &phone.pair_body(&[1; 32])).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = desk.post_json("/pair", &phone.pair_body(&token)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, _) = desk.post_json("/pair", &phone.pair_body(&token)).await;
    assert_eq!(status, StatusCode::CONFLICT);
    desk.remote
        .confirm_pairing(offer.id, &phone.code(&token))
        .unwrap();
    let (_socket, welcome) = phone.connect(&desk).await;
    assert_eq!(welcome["type"], "welcome");
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    assert!(
        text.contains("a pairing claim was refused"),
        "the log was captured:\n{text}"
    );
    assert!(
        !text.contains(&keys::encode(&token)),
        "the token was logged:\n{text}"
    );
}
