//! A phone's push subscription: stored only when a paired, unsuspended device signed it for this
//! origin; a subscription the desk could not use, or could be tricked into posting in plain HTTP,
//! is refused.

use askdesk_remote::{canonical, keys};
use hyper::StatusCode;
use serde_json::{json, Value};

use crate::phone::{desk, paired, Desk, Phone};

fn subscription(endpoint: &str) -> Value {
    let phone_key = p256::ecdsa::SigningKey::from_slice(&keys::random::<32>()).unwrap();
    json!({
        "endpoint": endpoint,
        "keys": {
            "p256dh": keys::encode(phone_key.verifying_key().to_sec1_point(false).as_bytes()),
            "auth": keys::encode(&keys::random::<16>()),
        },
    })
}

/// The body the page posts, signed by `phone` over the documented message for `origin`.
fn signed(phone: &Phone, origin: &str, subscription: &Value) -> Value {
    let message = canonical::to_string(&json!({
        "kind": "askdesk/push-subscription",
        "origin": origin,
        "subscription": subscription,
        "v": 1,
    }))
    .unwrap();
    json!({
        "publicKey": keys::encode(&phone.public_raw()),
        "subscription": subscription,
        "signature": phone.sign(message.as_bytes()),
    })
}

fn stored(desk: &Desk) -> Option<String> {
    let devices = desk.remote.devices().list().unwrap();
    devices[0].push.as_ref().map(|push| push.endpoint.clone())
}

#[tokio::test]
async fn a_paired_phone_sets_and_clears_its_subscription_signed() {
    let desk = desk().await;
    let phone = paired(&desk, "Pixel").await;
    let (status, _, body) = desk.get("/push/key").await;
    assert_eq!(status, StatusCode::OK);
    let key: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(key["publicKey"], desk.remote.push_key());
    let wanted = subscription("https://fcm.googleapis.com/fcm/send/abc");
    let (status, _) = desk
        .post_json(
            "/push/subscription",
            &signed(&phone, &desk.origin(), &wanted),
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(
        stored(&desk).as_deref(),
        Some("https://fcm.googleapis.com/fcm/send/abc")
    );
    let (status, _) = desk
        .post_json(
            "/push/subscription",
            &signed(&phone, &desk.origin(), &Value::Null),
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(stored(&desk), None);
}

#[tokio::test]
async fn a_subscription_to_a_host_that_is_no_push_service_is_refused() {
    let desk = desk().await;
    let phone = paired(&desk, "Pixel").await;
    for endpoint in [
        "https://192.168.1.1/send/abc",
        "https://127.0.0.1:8443/send/abc",
        "https://fcm.googleapis.com.evil.example/send/abc",
    ] {
        let (status, body) = desk
            .post_json(
                "/push/subscription",
                &signed(&phone, &desk.origin(), &subscription(endpoint)),
            )
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{endpoint}");
        assert_eq!(body["error"], "unknown-push-service", "{endpoint}: {body}");
        assert_eq!(stored(&desk), None, "{endpoint}");
    }
}

#[tokio::test]
async fn a_subscription_not_signed_by_a_paired_usable_device_is_refused() {
    let desk = desk().await;
    let phone = paired(&desk, "Pixel").await;
    let wanted = subscription("https://fcm.googleapis.com/fcm/send/abc");
    let stranger = Phone::new("Stranger");
    let other_origin = signed(&phone, "https://elsewhere.example", &wanted);
    let mut swapped = signed(&phone, &desk.origin(), &wanted);
    swapped["subscription"] = subscription("https://attacker.example/x");
    for (what, body, status, code) in [
        (
            "an unpaired key",
            signed(&stranger, &desk.origin(), &wanted),
            StatusCode::FORBIDDEN,
            "not-paired",
        ),
        (
            "signed for another origin",
            other_origin,
            StatusCode::FORBIDDEN,
            "bad-signature",
        ),
        (
            "another subscription than signed",
            swapped,
            StatusCode::FORBIDDEN,
            "bad-signature",
        ),
        (
            "a plain HTTP endpoint",
            signed(
                &phone,
                &desk.origin(),
                &subscription("http://push.example/x"),
            ),
            StatusCode::BAD_REQUEST,
            "bad-subscription",
        ),
    ] {
        let (got, reply) = desk.post_json("/push/subscription", &body).await;
        assert_eq!(
            (got, reply["error"].as_str()),
            (status, Some(code)),
            "{what}: {reply}"
        );
    }
    assert_eq!(stored(&desk), None);
    // A suspended device cannot subscribe either.
    let limit = desk.remote.limits().bad_signatures;
    let key = keys::DeviceKey::from_raw(&phone.public_raw()).unwrap();
    for _ in 0..limit {
        desk.remote.devices().bad_signature(&key, limit).unwrap();
    }
    let (got, reply) = desk
        .post_json(
            "/push/subscription",
            &signed(&phone, &desk.origin(), &wanted),
        )
        .await;
    assert_eq!(
        (got, reply["error"].as_str()),
        (StatusCode::FORBIDDEN, Some("suspended"))
    );
}
