//! Allowing a permission prompt from a phone: only with the device's passkey, asserted with user
//! verification over the digest of that exact answer, checked by the remote itself. Every way
//! around it is refused: no assertion, no user verification, another answer's or request's
//! assertion, a replay, a revoked or suspended device, past the rate limit, a desk-only command,
//! a standing permission, outside the device's scope, a passkey registered outside the desk's
//! window.

use std::net::{IpAddr, Ipv4Addr};

use askdesk_remote::keys::DeviceKey;
use askdesk_remote::{Name, Scope, SignedAnswer};
use serde_json::{json, Value};

use crate::authenticator::Authenticator;
use crate::phone::{assert_closed, desk_with, next, nonce, Desk, Phone, Socket};
use crate::risk::{
    chose, connected_within, denies, offered, outcome, prompt, send, showing_prompts,
};

const ALLOW: &str = "Allow once";

/// A desk served as `127.0.0.1` and `localhost`: browsers use passkeys only under a name.
async fn passkey_desk() -> Desk {
    desk_with(|config| {
        config.names = vec![
            Name::Ip(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            Name::Dns("localhost".into()),
        ];
    })
    .await
}

fn origin(desk: &Desk) -> String {
    format!("https://localhost:{}", desk.addr.port())
}

/// Registers the authenticator's passkey over the socket: the remote's last reply.
async fn register(socket: &mut Socket, authenticator: &mut Authenticator) -> Value {
    let creation = send(socket, &json!({ "type": "passkey-register" })).await;
    if creation["type"] != "passkey-creation" {
        return creation;
    }
    let credential = authenticator.register(&creation["options"]);
    send(
        socket,
        &json!({ "type": "passkey-credential", "credential": credential }),
    )
    .await
}

/// A phone paired (within the desk's window), its scope reaching permission prompts, with a
/// registered passkey; the socket past the news of it.
async fn with_passkey(desk: &Desk, name: &str) -> (Phone, Socket, Authenticator) {
    let (phone, mut socket) = connected_within(desk, name, showing_prompts()).await;
    let mut authenticator = Authenticator::new(&origin(desk));
    let registered = register(&mut socket, &mut authenticator).await;
    assert_eq!(registered["type"], "passkey-registered", "{registered}");
    assert_eq!(
        next(&mut socket).await,
        json!({ "type": "passkey", "passkey": { "available": true, "registered": true, "allowed": false } })
    );
    (phone, socket, authenticator)
}

/// A challenge bound to `answer` under `nonce` for the request `wire`.
async fn challenge(socket: &mut Socket, wire: &Value, nonce: &str, answer: &Value) -> Value {
    send(
        socket,
        &json!({ "type": "passkey-challenge", "id": wire["id"], "nonce": nonce, "answer": answer }),
    )
    .await
}

/// The phone's allow: a challenge for this answer, the authenticator's assertion, the signed
/// answer with it. The remote's reply.
async fn allow(
    phone: &Phone,
    socket: &mut Socket,
    authenticator: &mut Authenticator,
    wire: &Value,
) -> Value {
    let nonce = nonce();
    let answer = chose(ALLOW);
    let options = challenge(socket, wire, &nonce, &answer).await;
    assert_eq!(options["type"], "passkey-challenge", "{options}");
    let mut signed = phone.answer(wire, &nonce, answer);
    signed["passkey"] = authenticator.assert(&options["options"]);
    send(socket, &signed).await
}

fn project(desk: &Desk) -> String {
    desk.dir.path().to_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_passkey_asserted_over_the_answer_allows_a_permission_prompt() {
    let desk = passkey_desk().await;
    let (phone, mut socket, mut authenticator) = with_passkey(&desk, "Pixel").await;
    let (held, wire) = offered(&desk, &mut socket, prompt(1, "cargo test", &project(&desk))).await;
    let reply = allow(&phone, &mut socket, &mut authenticator, &wire).await;
    assert_eq!(reply["type"], "accepted", "{reply}");
    let verified = held.await.unwrap();
    assert_eq!(verified.device, "Pixel");
    assert_eq!(verified.answer.unwrap().answers[0].selected, [ALLOW]);
}

#[tokio::test]
async fn deny_needs_no_passkey_and_an_allow_without_one_is_refused() {
    let desk = passkey_desk().await;
    let (phone, mut socket) = connected_within(&desk, "Pixel", showing_prompts()).await;
    let (held, wire) = offered(&desk, &mut socket, prompt(1, "cargo test", &project(&desk))).await;
    assert_eq!(
        outcome(&phone, &mut socket, &wire, chose(ALLOW)).await,
        "passkey-required"
    );
    // No passkey registered: no challenge either.
    let refused = challenge(&mut socket, &wire, &nonce(), &chose(ALLOW)).await;
    assert_eq!(
        (refused["type"].as_str(), refused["reason"].as_str()),
        (Some("passkey-refused"), Some("no-passkey"))
    );
    denies(&phone, &mut socket, &wire, held).await;
}

#[tokio::test]
async fn an_assertion_without_user_verification_is_refused_by_the_remote() {
    let desk = passkey_desk().await;
    let (phone, mut socket, mut authenticator) = with_passkey(&desk, "Pixel").await;
    let (held, wire) = offered(&desk, &mut socket, prompt(1, "cargo test", &project(&desk))).await;
    // The person was present but not verified: the page could not have stopped a forged one.
    authenticator.verifies_user = false;
    let reply = allow(&phone, &mut socket, &mut authenticator, &wire).await;
    assert_eq!(reply["reason"], "bad-passkey", "{reply}");
    authenticator.verifies_user = true;
    // Another origin's assertion is refused too.
    authenticator.origin = "https://evil.example".into();
    let reply = allow(&phone, &mut socket, &mut authenticator, &wire).await;
    assert_eq!(reply["reason"], "bad-passkey", "{reply}");
    authenticator.origin = origin(&desk);
    assert_eq!(
        allow(&phone, &mut socket, &mut authenticator, &wire).await["type"],
        "accepted"
    );
    assert_eq!(
        held.await.unwrap().answer.unwrap().answers[0].selected,
        [ALLOW]
    );
    // Each failed passkey was counted against the device.
    assert_eq!(desk.remote.devices().list().unwrap()[0].bad_signatures, 2);
}

#[tokio::test]
async fn the_assertion_for_another_answer_or_request_allows_nothing() {
    let desk = passkey_desk().await;
    let (phone, mut socket, mut authenticator) = with_passkey(&desk, "Pixel").await;
    let project = project(&desk);
    let (_first, first) = offered(&desk, &mut socket, prompt(1, "cargo test", &project)).await;
    let (_second, second) = offered(&desk, &mut socket, prompt(2, "cargo build", &project)).await;

    // Asked over "Deny", used for "Allow once".
    let nonce = nonce();
    let options = challenge(&mut socket, &first, &nonce, &chose("Deny")).await;
    let mut signed = phone.answer(&first, &nonce, chose(ALLOW));
    signed["passkey"] = authenticator.assert(&options["options"]);
    assert_eq!(send(&mut socket, &signed).await["reason"], "bad-passkey");

    // Asked for the first request, used for the second.
    let nonce = crate::phone::nonce();
    let options = challenge(&mut socket, &first, &nonce, &chose(ALLOW)).await;
    let assertion = authenticator.assert(&options["options"]);
    let mut moved = phone.answer(&second, &nonce, chose(ALLOW));
    moved["passkey"] = assertion.clone();
    assert_eq!(
        send(&mut socket, &moved).await["reason"],
        "passkey-required"
    );
    // ...even once the second request has a challenge of its own.
    let other = crate::phone::nonce();
    challenge(&mut socket, &second, &other, &chose(ALLOW)).await;
    let mut moved = phone.answer(&second, &other, chose(ALLOW));
    moved["passkey"] = assertion;
    assert_eq!(send(&mut socket, &moved).await["reason"], "bad-passkey");
}

#[tokio::test]
async fn a_replayed_assertion_is_refused() {
    let desk = passkey_desk().await;
    let (phone, mut socket, mut authenticator) = with_passkey(&desk, "Pixel").await;
    let project = project(&desk);
    let (_held, wire) = offered(&desk, &mut socket, prompt(1, "cargo test", &project)).await;
    let nonce = nonce();
    let options = challenge(&mut socket, &wire, &nonce, &chose(ALLOW)).await;
    let assertion = authenticator.assert(&options["options"]);
    // The challenge is used up by a refused answer (bad device signature) too.
    let mut forged = phone.answer(&wire, &nonce, chose(ALLOW));
    forged["passkey"] = assertion.clone();
    forged["signature"] = phone.sign(b"something else").into();
    assert_eq!(send(&mut socket, &forged).await["reason"], "bad-signature");
    // The same assertion again, under a new nonce the device signed: the challenge it answers
    // was bound to the first nonce's answer.
    let again = crate::phone::nonce();
    challenge(&mut socket, &wire, &again, &chose(ALLOW)).await;
    let mut replayed = phone.answer(&wire, &again, chose(ALLOW));
    replayed["passkey"] = assertion;
    assert_eq!(send(&mut socket, &replayed).await["reason"], "bad-passkey");

    // An accepted allow's assertion is no good for the next request.
    let reply = allow(&phone, &mut socket, &mut authenticator, &wire).await;
    assert_eq!(reply["type"], "accepted", "{reply}");
    assert_eq!(next(&mut socket).await["type"], "withdrawn");
    // An assertion whose signature counter does not move on (a cloned authenticator's).
    let (_next, later) = offered(&desk, &mut socket, prompt(2, "cargo test", &project)).await;
    let nonce = crate::phone::nonce();
    let options = challenge(&mut socket, &later, &nonce, &chose(ALLOW)).await;
    let mut signed = phone.answer(&later, &nonce, chose(ALLOW));
    authenticator.rewind();
    signed["passkey"] = authenticator.assert(&options["options"]);
    assert_eq!(send(&mut socket, &signed).await["reason"], "bad-passkey");
}

/// The phone's message as the library receives it, for checks made without a socket.
fn as_received(phone: &Phone, message: Value) -> (DeviceKey, SignedAnswer) {
    (
        DeviceKey::from_raw(&phone.public_raw()).unwrap(),
        serde_json::from_value(message).unwrap(),
    )
}

#[tokio::test]
async fn a_revoked_or_suspended_device_cannot_allow_with_its_passkey() {
    let desk = passkey_desk().await;
    let project = project(&desk);
    let (phone, mut socket, mut authenticator) = with_passkey(&desk, "Pixel").await;
    let (_held, wire) = offered(&desk, &mut socket, prompt(1, "cargo test", &project)).await;
    let nonce = nonce();
    let options = challenge(&mut socket, &wire, &nonce, &chose(ALLOW)).await;
    let mut signed = phone.answer(&wire, &nonce, chose(ALLOW));
    signed["passkey"] = authenticator.assert(&options["options"]);
    desk.remote.revoke("Pixel").unwrap().unwrap();
    assert_eq!(next(&mut socket).await["type"], "revoked");
    let (key, answer) = as_received(&phone, signed);
    assert_eq!(
        desk.remote.verify(&key, answer),
        Err(askdesk_remote::Refusal::NotPaired)
    );

    // Five failed passkeys suspend a device; then its good passkey allows nothing.
    let (phone, mut socket, mut authenticator) = with_passkey(&desk, "Tablet").await;
    let (_held, wire) = offered(&desk, &mut socket, prompt(2, "cargo test", &project)).await;
    authenticator.verifies_user = false;
    for _ in 0..5 {
        let reply = allow(&phone, &mut socket, &mut authenticator, &wire).await;
        assert_eq!(reply["reason"], "bad-passkey", "{reply}");
    }
    assert_eq!(next(&mut socket).await["type"], "suspended");
    assert_closed(&mut socket).await;
    authenticator.verifies_user = true;
    let nonce = crate::phone::nonce();
    let mut signed = phone.answer(&wire, &nonce, chose(ALLOW));
    signed["passkey"] =
        authenticator.assert(&json!({ "publicKey": { "rpId": "localhost", "challenge": "AAAA" } }));
    let (key, answer) = as_received(&phone, signed);
    assert_eq!(
        desk.remote.verify(&key, answer),
        Err(askdesk_remote::Refusal::Suspended)
    );
}

#[tokio::test]
async fn allows_past_the_rate_limit_are_refused_even_with_a_passkey() {
    let desk = passkey_desk().await;
    let project = project(&desk);
    let (phone, mut socket, mut authenticator) = with_passkey(&desk, "Pixel").await;
    for id in 1..=3 {
        let (held, wire) = offered(&desk, &mut socket, prompt(id, "cargo test", &project)).await;
        let reply = allow(&phone, &mut socket, &mut authenticator, &wire).await;
        assert_eq!(reply["type"], "accepted", "{reply}");
        assert_eq!(next(&mut socket).await["type"], "withdrawn");
        held.await.unwrap();
    }
    let (held, wire) = offered(&desk, &mut socket, prompt(4, "cargo test", &project)).await;
    let reply = allow(&phone, &mut socket, &mut authenticator, &wire).await;
    assert_eq!(reply["reason"], "rate-limited", "{reply}");
    // A denial is no approval: it still counts.
    denies(&phone, &mut socket, &wire, held).await;
}

#[tokio::test]
async fn a_desk_only_command_or_a_standing_permission_is_not_allowed_with_a_passkey() {
    let desk = passkey_desk().await;
    let project = project(&desk);
    let (phone, mut socket, mut authenticator) = with_passkey(&desk, "Pixel").await;
    let (_a, desk_only) = offered(&desk, &mut socket, prompt(1, "sudo id", &project)).await;
    let refused = challenge(&mut socket, &desk_only, &nonce(), &chose(ALLOW)).await;
    assert_eq!(refused["reason"], "desk-only", "{refused}");
    assert_eq!(
        outcome(&phone, &mut socket, &desk_only, chose("Deny")).await,
        "desk-only"
    );

    let (_b, wire) = offered(&desk, &mut socket, prompt(2, "cargo test", &project)).await;
    let standing = chose("Always allow in this session");
    let nonce = crate::phone::nonce();
    let options = challenge(&mut socket, &wire, &nonce, &standing).await;
    assert_eq!(options["type"], "passkey-challenge");
    let mut signed = phone.answer(&wire, &nonce, standing);
    signed["passkey"] = authenticator.assert(&options["options"]);
    assert_eq!(send(&mut socket, &signed).await["reason"], "standing");
}

#[tokio::test]
async fn a_passkey_is_registered_only_while_the_desk_allows_it() {
    let desk = passkey_desk().await;
    let (_phone, mut socket, _) = with_passkey(&desk, "Pixel").await;
    // The registration used the window the pairing opened: a second one is refused.
    let mut thief = Authenticator::new(&origin(&desk));
    let refused = register(&mut socket, &mut thief).await;
    assert_eq!(refused["reason"], "passkey-not-allowed", "{refused}");

    // A device whose window the desk closed cannot register its first passkey.
    let (_other, mut other) = connected_within(&desk, "Tablet", showing_prompts()).await;
    desk.remote.forget_passkey("Tablet").unwrap().unwrap();
    assert_eq!(
        next(&mut other).await["passkey"],
        json!({ "available": true, "registered": false, "allowed": false })
    );
    let refused = register(&mut other, &mut thief).await;
    assert_eq!(refused["reason"], "passkey-not-allowed", "{refused}");

    // A registration begun inside the window and finished after the desk closed it is refused.
    desk.remote.allow_passkey("Tablet").unwrap().unwrap();
    assert_eq!(next(&mut other).await["passkey"]["allowed"], true);
    let creation = send(&mut other, &json!({ "type": "passkey-register" })).await;
    assert_eq!(creation["type"], "passkey-creation");
    desk.remote.forget_passkey("Tablet").unwrap().unwrap();
    assert_eq!(next(&mut other).await["passkey"]["allowed"], false);
    let credential = thief.register(&creation["options"]);
    let refused = send(
        &mut other,
        &json!({ "type": "passkey-credential", "credential": credential }),
    )
    .await;
    assert_eq!(refused["reason"], "passkey-not-allowed", "{refused}");
    assert!(desk
        .remote
        .devices()
        .list()
        .unwrap()
        .iter()
        .find(|d| d.name == "Tablet")
        .is_some_and(|d| d.passkey.is_none()));

    // Allowed again at the desk, it registers one.
    desk.remote.allow_passkey("Tablet").unwrap().unwrap();
    assert_eq!(next(&mut other).await["passkey"]["allowed"], true);
    let mut own = Authenticator::new(&origin(&desk));
    assert_eq!(
        register(&mut other, &mut own).await["type"],
        "passkey-registered"
    );
}

#[tokio::test]
async fn a_registration_without_user_verification_is_refused() {
    let desk = passkey_desk().await;
    let (_phone, mut socket) = connected_within(&desk, "Pixel", showing_prompts()).await;
    let mut authenticator = Authenticator::new(&origin(&desk));
    authenticator.verifies_user = false;
    let refused = register(&mut socket, &mut authenticator).await;
    assert_eq!(refused["reason"], "bad-passkey", "{refused}");
}

#[tokio::test]
async fn a_desk_served_only_by_address_offers_no_passkeys() {
    let desk = crate::phone::desk().await;
    let (_phone, mut socket) = connected_within(&desk, "Pixel", Scope::default()).await;
    let refused = send(&mut socket, &json!({ "type": "passkey-register" })).await;
    assert_eq!(refused["reason"], "passkeys-unavailable", "{refused}");
}

#[tokio::test]
async fn a_device_whose_scope_stops_below_permission_prompts_cannot_allow_one() {
    let desk = passkey_desk().await;
    let (phone, mut socket, mut authenticator) = with_passkey(&desk, "Pixel").await;
    let (_held, wire) = offered(&desk, &mut socket, prompt(1, "cargo test", &project(&desk))).await;
    // An allow made ready while the scope reached the prompt...
    let nonce = nonce();
    let options = challenge(&mut socket, &wire, &nonce, &chose(ALLOW)).await;
    let mut signed = phone.answer(&wire, &nonce, chose(ALLOW));
    signed["passkey"] = authenticator.assert(&options["options"]);
    // ...is refused once the desk narrowed it, and no new challenge is given.
    desk.remote
        .set_scope("Pixel", Scope::default())
        .unwrap()
        .unwrap();
    assert_eq!(
        next(&mut socket).await,
        json!({ "type": "requests", "requests": [] })
    );
    assert_eq!(send(&mut socket, &signed).await["reason"], "out-of-scope");
    let refused = challenge(&mut socket, &wire, &crate::phone::nonce(), &chose(ALLOW)).await;
    assert_eq!(refused["reason"], "out-of-scope", "{refused}");
}
