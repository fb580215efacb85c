//! A phone's answers that must not count, whatever it signs: from a revoked or suspended device,
//! past its rate limit, outside its scope, with the signature of another request, replayed.

use askdesk_core::RequestId;
use askdesk_remote::keys::DeviceKey;
use askdesk_remote::{Class, Refusal, Scope, SignedAnswer};
use serde_json::{json, Value};

use crate::phone::{assert_closed, next, nonce, paired, Phone, Socket};
use crate::risk::{chose, connected, connected_within, offered, outcome, plan, send};

const APPROVE: &str = "Approve (Recommended)";

/// The phone's answer as the library receives it, for checks made without a socket.
fn signed(phone: &Phone, wire: &Value, answer: Value) -> (DeviceKey, SignedAnswer) {
    let message = phone.answer(wire, &nonce(), answer);
    (
        DeviceKey::from_raw(&phone.public_raw()).unwrap(),
        serde_json::from_value(message).unwrap(),
    )
}

/// A signed answer with a signature that is not the device's over it.
fn forged(phone: &Phone, wire: &Value) -> Value {
    let mut message = phone.answer(wire, &nonce(), chose(APPROVE));
    message["signature"] = phone.sign(b"something else").into();
    message
}

#[tokio::test]
async fn an_approval_from_a_revoked_device_is_refused() {
    let desk = crate::phone::desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (held, wire) = offered(&desk, &mut socket, plan(1, "coder", "/w")).await;
    desk.remote.revoke("Pixel").unwrap().unwrap();
    assert_eq!(next(&mut socket).await["type"], "revoked");
    let (key, answer) = signed(&phone, &wire, chose(APPROVE));
    assert_eq!(desk.remote.verify(&key, answer), Err(Refusal::NotPaired));
    drop(held);
}

#[tokio::test]
async fn bad_signatures_suspend_a_device_until_the_desk_confirms_it() {
    let desk = crate::phone::desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (held, wire) = offered(&desk, &mut socket, plan(1, "coder", "/w")).await;
    for _ in 0..5 {
        let reply = send(&mut socket, &forged(&phone, &wire)).await;
        assert_eq!(reply["reason"], "bad-signature");
    }
    assert_eq!(next(&mut socket).await["type"], "suspended");
    assert_closed(&mut socket).await;
    let device = &desk.remote.devices().list().unwrap()[0];
    assert!(device.is_suspended());

    // Suspended: a well-signed approval is refused, and no socket opens.
    let (key, answer) = signed(&phone, &wire, chose(APPROVE));
    assert_eq!(desk.remote.verify(&key, answer), Err(Refusal::Suspended));
    let (mut again, refused) = phone.connect(&desk).await;
    assert_eq!(refused, json!({ "type": "refused", "reason": "suspended" }));
    assert_closed(&mut again).await;

    // Confirmed at the desk, it answers again.
    desk.remote.confirm_device("Pixel").unwrap().unwrap();
    let (mut socket, welcome) = phone.connect(&desk).await;
    assert_eq!(welcome["type"], "welcome");
    assert_eq!(next(&mut socket).await["requests"][0]["id"], "r1");
    assert_eq!(
        outcome(&phone, &mut socket, &wire, chose(APPROVE)).await,
        "accepted"
    );
    assert_eq!(held.await.unwrap().device, "Pixel");
}

#[tokio::test]
async fn approvals_past_the_rate_limit_are_refused_and_other_answers_are_not() {
    let desk = crate::phone::desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    for id in 1..=3 {
        let (held, wire) = offered(&desk, &mut socket, plan(id, "coder", "/w")).await;
        assert_eq!(
            outcome(&phone, &mut socket, &wire, chose(APPROVE)).await,
            "accepted"
        );
        assert_eq!(next(&mut socket).await["type"], "withdrawn");
        assert_eq!(held.await.unwrap().request, RequestId(id));
    }
    let (held, wire) = offered(&desk, &mut socket, plan(4, "coder", "/w")).await;
    assert_eq!(
        outcome(&phone, &mut socket, &wire, chose(APPROVE)).await,
        "rate-limited"
    );
    // Sending the plan back is no approval: it still counts.
    assert_eq!(
        outcome(&phone, &mut socket, &wire, chose("Keep planning")).await,
        "accepted"
    );
    assert_eq!(next(&mut socket).await["type"], "withdrawn");
    assert_eq!(
        held.await.unwrap().answer.unwrap().answers[0].selected,
        ["Keep planning"]
    );
    // Another device has its own limit.
    let (other, mut other_socket) = connected(&desk, "Tablet").await;
    let (held, wire) = offered(&desk, &mut socket, plan(5, "coder", "/w")).await;
    assert_eq!(next(&mut other_socket).await["type"], "request");
    assert_eq!(
        outcome(&other, &mut other_socket, &wire, chose(APPROVE)).await,
        "accepted"
    );
    assert_eq!(held.await.unwrap().device, "Tablet");
}

#[tokio::test]
async fn a_request_outside_the_scope_is_not_shown_and_its_answer_is_refused() {
    let desk = crate::phone::desk().await;
    let narrow = Scope {
        agents: vec!["coder".into()],
        projects: vec!["/w".into()],
        up_to: Class::PlanReview,
    };
    let (phone, mut socket) = connected_within(&desk, "Pixel", narrow).await;
    let (_wide, mut wide_socket) = connected(&desk, "Tablet").await;
    let (_other_agent, wire) = offered(&desk, &mut wide_socket, plan(1, "intruder", "/w")).await;
    let (_other_project, wire2) =
        offered(&desk, &mut wide_socket, plan(2, "coder", "/elsewhere")).await;
    let (_inside, inside) = offered(&desk, &mut wide_socket, plan(3, "coder", "/w/app")).await;
    // The narrow phone hears only the request within its scope.
    assert_eq!(next(&mut socket).await["request"]["id"], inside["id"]);
    // Signing what another device was shown does not help.
    for wire in [&wire, &wire2] {
        assert_eq!(
            outcome(&phone, &mut socket, wire, chose(APPROVE)).await,
            "out-of-scope"
        );
    }
    // Narrowed to text at the desk, the phone is shown the requests again without the plan.
    let text_only = Scope {
        up_to: Class::TextAndChoices,
        ..Scope::default()
    };
    desk.remote.set_scope("Pixel", text_only).unwrap().unwrap();
    assert_eq!(
        next(&mut socket).await,
        json!({ "type": "requests", "requests": [] })
    );
    assert_eq!(
        outcome(&phone, &mut socket, &inside, chose(APPROVE)).await,
        "out-of-scope"
    );
}

#[tokio::test]
async fn the_signature_of_another_request_does_not_answer_this_one() {
    let desk = crate::phone::desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (_a, first) = offered(&desk, &mut socket, plan(1, "coder", "/w")).await;
    let (_b, second) = offered(&desk, &mut socket, plan(2, "coder", "/w")).await;
    let mut moved = phone.answer(&first, &nonce(), chose(APPROVE));
    moved["id"] = second["id"].clone();
    assert_eq!(send(&mut socket, &moved).await["reason"], "stale");
    moved.as_object_mut().unwrap().remove("digest");
    assert_eq!(send(&mut socket, &moved).await["reason"], "bad-signature");
}

#[tokio::test]
async fn a_replayed_approval_is_refused_while_the_request_waits_and_after() {
    let desk = crate::phone::desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (held, wire) = offered(&desk, &mut socket, plan(1, "coder", "/w")).await;
    let standing = phone.answer(&wire, &nonce(), chose("Approve, accept edits"));
    assert_eq!(send(&mut socket, &standing).await["reason"], "standing");
    assert_eq!(send(&mut socket, &standing).await["reason"], "nonce-reused");
    let approval = phone.answer(&wire, &nonce(), chose(APPROVE));
    assert_eq!(send(&mut socket, &approval).await["type"], "accepted");
    assert_eq!(next(&mut socket).await["type"], "withdrawn");
    assert_eq!(send(&mut socket, &approval).await["reason"], "not-pending");
    assert_eq!(
        held.await.unwrap().answer.unwrap().answers[0].selected,
        [APPROVE]
    );
}

/// A phone never paired: its socket is refused before it hears anything.
#[tokio::test]
async fn an_unpaired_phone_hears_nothing() {
    let desk = crate::phone::desk().await;
    let _paired = paired(&desk, "Pixel").await;
    let stranger = Phone::new("Stranger");
    let (mut socket, refused): (Socket, Value) = stranger.connect(&desk).await;
    assert_eq!(refused["reason"], "not-paired");
    assert_closed(&mut socket).await;
}
