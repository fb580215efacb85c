//! Signed answers over a device's socket: yielded only when a paired device signed this request's
//! digest and a new nonce, while the request still waits; everything else refused.

use askdesk_core::testing::{choose, option, question};
use askdesk_core::{AgentInfo, Question, RequestId};
use askdesk_remote::{Ending, PendingRequest, Refusal, SignedAnswer};
use futures_util::SinkExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

use crate::phone::{desk, desk_with, next, nonce, paired, Desk, Phone, Socket, CEILING, PICTURE};

pub fn request(id: u64) -> PendingRequest {
    PendingRequest {
        id: RequestId(id),
        deadline: None,
        agent: Some(AgentInfo {
            id: "coder".into(),
            label: Some("Coder".into()),
            meta: None,
        }),
        questions: vec![Question {
            header: Some("Deploy".into()),
            ..question("go", "Deploy to staging?", &["Yes (Recommended)", "No"])
        }],
    }
}

pub fn yes() -> Value {
    json!({ "answers": [{ "id": "go", "selected": ["Yes (Recommended)"] }] })
}

/// A paired phone's socket, past its welcome and the (empty) snapshot.
pub async fn connected(desk: &Desk, name: &str) -> (Phone, Socket) {
    let phone = paired(desk, name).await;
    let (mut socket, welcome) = phone.connect(desk).await;
    assert_eq!(welcome["type"], "welcome");
    assert_eq!(next(&mut socket).await["type"], "requests");
    (phone, socket)
}

/// Offers a request and returns it as the phone received it.
async fn offered(desk: &Desk, socket: &mut Socket, id: u64) -> (askdesk_remote::Offered, Value) {
    let held = desk.remote.offer(request(id)).unwrap();
    let message = next(socket).await;
    assert_eq!(message["type"], "request");
    (held, message["request"].clone())
}

/// The name of the device whose verified answer claimed the request.
async fn answered_by(held: askdesk_remote::Offered) -> String {
    let verified = tokio::time::timeout(CEILING, held)
        .await
        .expect("answered within the ceiling");
    verified.expect("the remote still runs").device
}

pub async fn send(socket: &mut Socket, message: &Value) -> Value {
    socket
        .send(Message::Text(message.to_string().into()))
        .await
        .unwrap();
    next(socket).await
}

#[tokio::test]
async fn a_signed_answer_is_yielded_with_its_device() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (held, wire) = offered(&desk, &mut socket, 7).await;
    assert_eq!(wire["id"], "r7");
    assert_eq!(wire["agent"]["label"], "Coder", "the phone sees who asks");
    let reply = send(&mut socket, &phone.answer(&wire, &nonce(), yes())).await;
    assert_eq!(reply, json!({ "type": "accepted", "id": "r7" }));
    let verified = tokio::time::timeout(CEILING, held).await.unwrap().unwrap();
    assert_eq!(verified.request, RequestId(7));
    assert_eq!(verified.device, "Pixel");
    assert_eq!(verified.answer, Some(choose("go", "Yes (Recommended)")));
    assert_eq!(
        next(&mut socket).await,
        json!({ "type": "withdrawn", "id": "r7", "reason": "claimed" })
    );
}

#[tokio::test]
async fn a_replayed_answer_is_refused() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (_held, wire) = offered(&desk, &mut socket, 1).await;
    let signed = phone.answer(&wire, &nonce(), yes());
    assert_eq!(send(&mut socket, &signed).await["type"], "accepted");
    assert_eq!(next(&mut socket).await["type"], "withdrawn");
    let replay = send(&mut socket, &signed).await;
    assert_eq!(replay["reason"], "not-pending");
}

#[tokio::test]
async fn a_nonce_is_used_once_while_its_request_waits() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (_held, wire) = offered(&desk, &mut socket, 1).await;
    // Signed, but against the question's rules: refused, and the request keeps waiting.
    let bad = json!({ "answers": [{ "id": "go", "selected": ["Maybe"] }] });
    let used = nonce();
    let first = send(&mut socket, &phone.answer(&wire, &used, bad.clone())).await;
    assert_eq!(first["reason"], "bad-answer");
    let again = send(&mut socket, &phone.answer(&wire, &used, bad)).await;
    assert_eq!(again["reason"], "nonce-reused");
    let reused = send(&mut socket, &phone.answer(&wire, &used, yes())).await;
    assert_eq!(
        reused["reason"], "nonce-reused",
        "a new answer cannot reuse the nonce either"
    );
    assert_eq!(
        send(&mut socket, &phone.answer(&wire, &nonce(), yes())).await["type"],
        "accepted"
    );
}

#[tokio::test]
async fn every_altered_field_is_refused() {
    // More bad signatures than suspend a device by default (the abuse tests check that).
    let desk = desk_with(|config| config.limits.bad_signatures = 100).await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (_other, other_wire) = offered(&desk, &mut socket, 2).await;
    let (held, wire) = offered(&desk, &mut socket, 1).await;
    let signed = phone.answer(&wire, &nonce(), yes());
    let mut changes: Vec<(&str, Value, &str)> = Vec::new();
    let mut altered = signed.clone();
    altered["answer"]["answers"][0]["selected"] = json!(["No"]);
    changes.push(("answer", altered, "bad-signature"));
    let mut altered = signed.clone();
    altered["answer"]["answers"][0]["custom"] = json!("and also rm -rf");
    changes.push(("answer's custom", altered, "bad-signature"));
    let mut altered = signed.clone();
    altered["nonce"] = json!(nonce());
    changes.push(("nonce", altered, "bad-signature"));
    let mut altered = signed.clone();
    altered["id"] = other_wire["id"].clone();
    changes.push(("request id", altered, "stale"));
    let mut altered = signed.clone();
    altered["id"] = other_wire["id"].clone();
    altered.as_object_mut().unwrap().remove("digest");
    changes.push(("request id without a digest", altered, "bad-signature"));
    let mut altered = signed.clone();
    altered["digest"] = json!(crate::phone::digest_of(&other_wire));
    changes.push(("digest", altered, "stale"));
    let mut altered = signed.clone();
    let mut signature =
        askdesk_remote::keys::decode(signed["signature"].as_str().unwrap()).unwrap();
    signature[10] ^= 1;
    altered["signature"] = json!(askdesk_remote::keys::encode(&signature));
    changes.push(("signature", altered, "bad-signature"));
    let mut altered = signed.clone();
    altered["signature"] = json!(askdesk_remote::keys::encode(&signature[..63]));
    changes.push(("a short signature", altered, "bad-signature"));
    for (what, message, expected) in changes {
        let reply = send(&mut socket, &message).await;
        assert_eq!(reply["reason"], expected, "altered {what}: {reply}");
    }
    // The request was never claimed: the intact answer still is accepted.
    assert_eq!(send(&mut socket, &signed).await["type"], "accepted");
    assert_eq!(answered_by(held).await, "Pixel");
}

/// A request of three questions: a choice, several choices, free text.
fn batch(id: u64) -> PendingRequest {
    let mut request = request(id);
    let first = request.questions[0].clone();
    let mut platforms = first.clone();
    platforms.id = "targets".into();
    platforms.question = "Which platforms?".into();
    platforms.multi_select = true;
    platforms.options = ["Linux", "macOS"].into_iter().map(option).collect();
    let mut notes = first;
    notes.id = "notes".into();
    notes.question = "Anything else?".into();
    notes.options = Vec::new();
    request.questions.extend([platforms, notes]);
    request
}

#[tokio::test]
async fn a_batch_of_questions_is_answered_whole_from_a_phone() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let held = desk.remote.offer(batch(3)).unwrap();
    let message = next(&mut socket).await;
    let wire = message["request"].clone();
    assert_eq!(wire["questions"].as_array().unwrap().len(), 3);
    // The first question alone is not an answer to the batch: the desk checks it whole.
    for partial in [
        json!({ "answers": [{ "id": "go", "selected": ["No"] }] }),
        json!({ "answers": [{ "id": "go", "selected": ["No"] },
                            { "id": "targets", "selected": ["Linux"] }] }),
        json!({ "answers": [{ "id": "go", "selected": ["No"] },
                            { "id": "targets", "selected": ["Linux"] },
                            { "id": "go", "selected": ["No"] }] }),
        json!({ "answers": [{ "id": "go", "selected": ["No"] },
                            { "id": "targets", "selected": ["Linux", "BSD"] },
                            { "id": "notes", "selected": [], "custom": "x" }] }),
    ] {
        let reply = send(&mut socket, &phone.answer(&wire, &nonce(), partial.clone())).await;
        assert_eq!(reply["reason"], "bad-answer", "{partial}: {reply}");
    }
    let whole = json!({ "answers": [
        { "id": "notes", "selected": [], "custom": "Keep the old flag." },
        { "id": "go", "selected": ["No"] },
        { "id": "targets", "selected": ["Linux", "macOS"] },
    ] });
    let reply = send(&mut socket, &phone.answer(&wire, &nonce(), whole)).await;
    assert_eq!(reply["type"], "accepted", "{reply}");
    let verified = tokio::time::timeout(CEILING, held).await.unwrap().unwrap();
    let answers = verified.answer.expect("answered").answers;
    let ids: Vec<&str> = answers.iter().map(|item| item.id.as_str()).collect();
    assert_eq!(
        ids,
        ["go", "targets", "notes"],
        "every question, in the batch's order"
    );
    assert_eq!(answers[1].selected, ["Linux", "macOS"]);
    assert_eq!(answers[2].custom.as_deref(), Some("Keep the old flag."));
}

#[tokio::test]
async fn an_answer_signed_for_questions_the_desk_did_not_ask_is_refused() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (_held, wire) = offered(&desk, &mut socket, 1).await;
    // A page (or a tampered copy) that shows another question signs another digest.
    let mut shown = wire.clone();
    shown["questions"][0]["question"] = json!("Deploy to production?");
    let mut signed = phone.answer(&shown, &nonce(), yes());
    assert_eq!(send(&mut socket, &signed).await["reason"], "stale");
    signed.as_object_mut().unwrap().remove("digest");
    assert_eq!(send(&mut socket, &signed).await["reason"], "bad-signature");
}

#[tokio::test]
async fn an_unsigned_answer_is_refused() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (_held, wire) = offered(&desk, &mut socket, 1).await;
    let mut unsigned = phone.answer(&wire, &nonce(), yes());
    unsigned.as_object_mut().unwrap().remove("signature");
    assert_eq!(send(&mut socket, &unsigned).await["reason"], "unsigned");
    unsigned["signature"] = json!("");
    assert_eq!(
        send(&mut socket, &unsigned).await["reason"],
        "bad-signature"
    );
}

#[tokio::test]
async fn an_answer_signed_by_another_key_is_refused() {
    let desk = desk().await;
    let (_phone, mut socket) = connected(&desk, "Pixel").await;
    let (_held, wire) = offered(&desk, &mut socket, 1).await;
    // Another paired device's key, and a key never paired: neither speaks for this socket.
    let tablet = paired(&desk, "Tablet").await;
    let stranger = Phone::new("stranger");
    for signer in [&tablet, &stranger] {
        let reply = send(&mut socket, &signer.answer(&wire, &nonce(), yes())).await;
        assert_eq!(reply["reason"], "bad-signature", "{}", signer.name);
    }
}

#[tokio::test]
async fn a_revoked_device_cannot_answer() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (_held, wire) = offered(&desk, &mut socket, 1).await;
    let signed: SignedAnswer =
        serde_json::from_value(phone.answer(&wire, &nonce(), yes())).unwrap();
    desk.remote.revoke("Pixel").unwrap().unwrap();
    assert_eq!(next(&mut socket).await["type"], "revoked");
    let key = askdesk_remote::keys::DeviceKey::from_raw(&phone.public_raw()).unwrap();
    assert_eq!(desk.remote.verify(&key, signed), Err(Refusal::NotPaired));
}

#[tokio::test]
async fn a_device_revoked_from_another_process_loses_its_socket_at_once() {
    let desk = desk().await;
    let (_phone, mut socket) = connected(&desk, "Pixel").await;
    let (_tablet, mut kept) = connected(&desk, "Tablet").await;
    // As `askdesk devices revoke` does it: the store alone, not this remote.
    let store = askdesk_remote::DeviceStore::new(&desk.dir.path().join("remote"));
    store.revoke("Pixel").unwrap().unwrap();
    assert_eq!(next(&mut socket).await["type"], "revoked");
    let (_held, _) = offered(&desk, &mut kept, 1).await;
}

#[tokio::test]
async fn a_device_revoked_from_another_process_cannot_answer() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (_held, wire) = offered(&desk, &mut socket, 1).await;
    let signed: SignedAnswer =
        serde_json::from_value(phone.answer(&wire, &nonce(), yes())).unwrap();
    askdesk_remote::DeviceStore::new(&desk.dir.path().join("remote"))
        .revoke("Pixel")
        .unwrap()
        .unwrap();
    // The device list is read for every answer, whatever the sockets heard.
    let key = askdesk_remote::keys::DeviceKey::from_raw(&phone.public_raw()).unwrap();
    assert_eq!(desk.remote.verify(&key, signed), Err(Refusal::NotPaired));
}

#[tokio::test]
async fn a_request_no_longer_pending_is_refused() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (_held, wire) = offered(&desk, &mut socket, 1).await;
    desk.remote.withdraw(RequestId(1), Ending::Withdrawn);
    assert_eq!(
        next(&mut socket).await,
        json!({ "type": "withdrawn", "id": "r1", "reason": "withdrawn" })
    );
    let reply = send(&mut socket, &phone.answer(&wire, &nonce(), yes())).await;
    assert_eq!(reply["reason"], "not-pending");

    // Dropping the offer withdraws it too: the remote stopped holding it.
    let (held, wire) = offered(&desk, &mut socket, 2).await;
    drop(held);
    assert_eq!(
        next(&mut socket).await,
        json!({ "type": "withdrawn", "id": "r2", "reason": "stopped" })
    );
    let reply = send(&mut socket, &phone.answer(&wire, &nonce(), yes())).await;
    assert_eq!(reply["reason"], "not-pending");
}

#[tokio::test]
async fn an_answer_for_an_earlier_request_with_the_same_id_is_refused() {
    // After a restart request ids start again: the same id, agent and questions are a new request.
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (held, wire) = offered(&desk, &mut socket, 1).await;
    let old = phone.answer(&wire, &nonce(), yes());
    drop(held);
    assert_eq!(next(&mut socket).await["type"], "withdrawn");
    let (_held, again) = offered(&desk, &mut socket, 1).await;
    assert_ne!(again["key"], wire["key"]);
    assert_eq!(send(&mut socket, &old).await["reason"], "stale");
    let mut old = old;
    old.as_object_mut().unwrap().remove("digest");
    assert_eq!(send(&mut socket, &old).await["reason"], "bad-signature");
}

#[tokio::test]
async fn one_request_is_claimed_by_one_device_only() {
    let desk = desk().await;
    let (pixel, mut first) = connected(&desk, "Pixel").await;
    let (tablet, mut second) = connected(&desk, "Tablet").await;
    let held = desk.remote.offer(request(1)).unwrap();
    let wire = next(&mut first).await["request"].clone();
    assert_eq!(
        next(&mut second).await["request"],
        wire,
        "every device hears the same request"
    );
    assert_eq!(
        send(&mut first, &pixel.answer(&wire, &nonce(), yes())).await["type"],
        "accepted"
    );
    assert_eq!(next(&mut second).await["type"], "withdrawn");
    let late = send(&mut second, &tablet.answer(&wire, &nonce(), yes())).await;
    assert_eq!(late["reason"], "not-pending");
    assert_eq!(answered_by(held).await, "Pixel");
}

#[tokio::test]
async fn a_new_socket_hears_the_requests_already_waiting() {
    let desk = desk().await;
    let phone = paired(&desk, "Pixel").await;
    let _first = desk.remote.offer(request(1)).unwrap();
    let _second = desk.remote.offer(request(2)).unwrap();
    let (mut socket, _) = phone.connect(&desk).await;
    let snapshot = next(&mut socket).await;
    assert_eq!(snapshot["type"], "requests");
    let ids: Vec<&str> = snapshot["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["r1", "r2"]);
    assert_eq!(
        desk.remote.offer(request(1)).err(),
        Some(askdesk_remote::OfferError::Duplicate(RequestId(1)))
    );
}

#[tokio::test]
async fn a_malformed_message_is_refused_and_the_socket_stays() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    for message in [
        json!({ "type": "delete-everything" }),
        json!("text"),
        json!({ "type": "answer" }),
    ] {
        assert_eq!(
            send(&mut socket, &message).await["reason"],
            "malformed",
            "{message}"
        );
    }
    let (_held, wire) = offered(&desk, &mut socket, 1).await;
    let mut short_nonce = phone.answer(&wire, "c2hvcnQ", yes());
    assert_eq!(send(&mut socket, &short_nonce).await["reason"], "malformed");
    short_nonce["id"] = json!("r01");
    assert_eq!(send(&mut socket, &short_nonce).await["reason"], "malformed");
}

#[tokio::test]
async fn a_signed_null_dismisses_the_batch() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (held, wire) = offered(&desk, &mut socket, 3).await;
    let reply = send(&mut socket, &phone.answer(&wire, &nonce(), Value::Null)).await;
    assert_eq!(reply["type"], "accepted");
    let verified = tokio::time::timeout(CEILING, held).await.unwrap().unwrap();
    assert_eq!((verified.device.as_str(), verified.answer), ("Pixel", None));
}

#[tokio::test]
async fn an_unsigned_dismissal_is_refused() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (_held, wire) = offered(&desk, &mut socket, 3).await;
    let mut unsigned = phone.answer(&wire, &nonce(), Value::Null);
    unsigned.as_object_mut().unwrap().remove("signature");
    assert_eq!(send(&mut socket, &unsigned).await["reason"], "unsigned");
    // A dismissal signed for another answer does not pass either.
    let mut altered = phone.answer(&wire, &nonce(), yes());
    altered["answer"] = Value::Null;
    assert_eq!(send(&mut socket, &altered).await["reason"], "bad-signature");
}

#[tokio::test]
async fn every_device_hears_how_an_answer_fared_at_the_broker() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (_other, mut watching) = connected(&desk, "Tablet").await;
    let (held, wire) = offered(&desk, &mut socket, 4).await;
    assert_eq!(next(&mut watching).await["type"], "request");
    assert_eq!(
        send(&mut socket, &phone.answer(&wire, &nonce(), yes())).await["type"],
        "accepted"
    );
    let verified = tokio::time::timeout(CEILING, held).await.unwrap().unwrap();
    desk.remote.settled(askdesk_remote::Settled::lost(
        verified.request,
        verified.device,
        Ending::AnsweredElsewhere { device: None },
    ));
    let claimed = json!({ "type": "withdrawn", "id": "r4", "reason": "claimed" });
    let settled = json!({ "type": "settled", "id": "r4", "device": "Pixel", "used": false,
        "instead": { "reason": "answered-elsewhere" } });
    assert_eq!(next(&mut socket).await, claimed);
    assert_eq!(next(&mut socket).await, settled);
    assert_eq!(next(&mut watching).await, claimed);
    assert_eq!(next(&mut watching).await, settled);
}

#[tokio::test]
async fn devices_hear_why_a_request_stopped_waiting() {
    let desk = desk().await;
    let (_phone, mut socket) = connected(&desk, "Pixel").await;
    for (n, why, told) in [
        (11, Ending::Expired, json!({ "reason": "expired" })),
        (12, Ending::Withdrawn, json!({ "reason": "withdrawn" })),
        (13, Ending::AgentGone, json!({ "reason": "agent-gone" })),
        (
            14,
            Ending::answered_by(Some("desktop")),
            json!({ "reason": "answered-elsewhere" }),
        ),
        (
            15,
            Ending::answered_by(Some("phone:Tablet")),
            json!({ "reason": "answered-elsewhere", "device": "Tablet" }),
        ),
    ] {
        let (_held, _) = offered(&desk, &mut socket, n).await;
        desk.remote.withdraw(RequestId(n), why);
        let mut expected = json!({ "type": "withdrawn", "id": format!("r{n}") });
        expected
            .as_object_mut()
            .unwrap()
            .extend(told.as_object().unwrap().clone());
        assert_eq!(next(&mut socket).await, expected);
    }
}

#[tokio::test]
async fn an_answer_that_claimed_a_request_as_it_was_withdrawn_is_still_found() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (mut held, wire) = offered(&desk, &mut socket, 5).await;
    assert_eq!(held.try_answer(), None, "nothing claimed it yet");
    assert_eq!(
        send(&mut socket, &phone.answer(&wire, &nonce(), yes())).await["type"],
        "accepted"
    );
    desk.remote.withdraw(RequestId(5), Ending::Withdrawn);
    assert_eq!(held.try_answer().map(|v| v.device), Some("Pixel".into()));
}

#[tokio::test]
async fn the_phone_gets_the_request_as_the_desk_renders_it() {
    let desk = desk().await;
    let (_phone, mut socket) = connected(&desk, "Pixel").await;
    let mut plan = request(6);
    plan.agent.as_mut().unwrap().meta = Some(
        json!({ "cwd": "/home/dana/src/askdesk" })
            .as_object()
            .unwrap()
            .clone(),
    );
    plan.questions[0].detail = Some("# Plan\n\n<script>alert(1)</script>\n\n- one step\n".into());
    let _held = desk.remote.offer(plan).unwrap();
    let wire = next(&mut socket).await["request"].clone();
    let view = &wire["view"];
    assert_eq!(
        (&view["who"], &view["project"]),
        (&json!("Coder"), &json!("askdesk"))
    );
    let question = &view["questions"][0];
    let html = question["detailHtml"].as_str().unwrap();
    assert!(
        html.contains("<h1") && html.contains("data-block"),
        "{html}"
    );
    assert!(
        !html.contains("<script"),
        "sanitized as at the desk: {html}"
    );
    assert_eq!(question["options"][0]["recommended"], true);
    assert!(!question["blocks"].as_array().unwrap().is_empty());
}

/// A plan under review, offered and received.
async fn plan_offered(desk: &Desk, socket: &mut Socket) -> (askdesk_remote::Offered, Value) {
    let mut plan = request(8);
    plan.questions[0].detail =
        Some("# Cache\n\n## Steps\n\n1. Write files.\n2. Read them back.\n".into());
    plan.questions[0].intent = Some(askdesk_core::Intent {
        kind: "plan-review".into(),
        approve: "Yes (Recommended)".into(),
    });
    let held = desk.remote.offer(plan).unwrap();
    let wire = next(socket).await["request"].clone();
    (held, wire)
}

#[tokio::test]
async fn comments_on_a_plan_are_folded_into_its_feedback_as_at_the_desk() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (held, wire) = plan_offered(&desk, &mut socket).await;
    let blocks = wire["view"]["questions"][0]["blocks"].as_array().unwrap();
    let step = blocks
        .iter()
        .find(|b| b["text"] == "Read them back.")
        .unwrap();
    let answer =
        json!({ "answers": [{ "id": "go", "selected": [], "custom": "Otherwise fine." }] });
    let comments = json!([{ "block": step["key"], "text": "Only at start." }]);
    let signed = phone.review(&wire, &nonce(), answer, comments);
    assert_eq!(send(&mut socket, &signed).await["type"], "accepted");
    let verified = tokio::time::timeout(CEILING, held).await.unwrap().unwrap();
    let custom = verified.answer.unwrap().answers[0].custom.clone().unwrap();
    let expected = askdesk_view::plan_thread::feedback(
        &askdesk_view::plan_thread::resolve(
            &serde_json::from_value::<Vec<askdesk_view::markdown::Block>>(json!(blocks)).unwrap(),
            vec![askdesk_view::plan_thread::CommentInput {
                block: step["key"].as_str().unwrap().into(),
                quote: None,
                text: "Only at start.".into(),
            }],
        )
        .unwrap(),
        "Otherwise fine.",
    );
    assert_eq!(custom, expected);
    assert!(
        custom.contains("Read them back.") && custom.contains("Only at start."),
        "{custom}"
    );
}

#[tokio::test]
async fn comments_are_signed_and_checked_against_the_plan() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (_held, wire) = plan_offered(&desk, &mut socket).await;
    let key = wire["view"]["questions"][0]["blocks"][0]["key"].clone();
    let answer = json!({ "answers": [{ "id": "go", "selected": [] }] });
    let mut altered = phone.review(
        &wire,
        &nonce(),
        answer.clone(),
        json!([{ "block": key, "text": "Fine." }]),
    );
    altered["comments"][0]["text"] = json!("Throw it all away.");
    assert_eq!(send(&mut socket, &altered).await["reason"], "bad-signature");
    let mut added = phone.answer(&wire, &nonce(), answer.clone());
    added["comments"] = json!([{ "block": key, "text": "Sneaked in." }]);
    assert_eq!(send(&mut socket, &added).await["reason"], "bad-signature");
    let unknown = phone.review(
        &wire,
        &nonce(),
        answer,
        json!([{ "block": "s9.p9", "text": "Here." }]),
    );
    assert_eq!(send(&mut socket, &unknown).await["reason"], "bad-answer");
}

#[tokio::test]
async fn a_revised_plan_reaches_the_phone_with_the_desks_diff_against_the_version_before() {
    let desk = desk().await;
    let (_phone, mut socket) = connected(&desk, "Pixel").await;
    let (first, wire) = plan_offered(&desk, &mut socket).await;
    assert!(wire["view"]["questions"][0]["revision"].is_null(), "{wire}");
    drop(first);
    assert_eq!(next(&mut socket).await["type"], "withdrawn");
    // The same agent sends the plan back revised: one step changed, one added.
    let mut revised = request(9);
    revised.questions[0].detail = Some(
        "# Cache\n\n## Steps\n\n1. Write files atomically.\n2. Read them back.\n3. Expire old ones.\n"
            .into(),
    );
    revised.questions[0].intent = Some(askdesk_core::Intent {
        kind: "plan-review".into(),
        approve: "Yes (Recommended)".into(),
    });
    let _held = desk.remote.offer(revised).unwrap();
    let wire = next(&mut socket).await["request"].clone();
    let revision = &wire["view"]["questions"][0]["revision"];
    assert_eq!(revision["version"], 2, "{wire}");
    assert_eq!(revision["previous"][0]["version"], 1);
    let statuses: Vec<&str> = revision["changes"]["marks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|mark| mark["status"].as_str().unwrap())
        .collect();
    assert!(
        statuses.contains(&"changed") && statuses.contains(&"added"),
        "{revision}"
    );
}

/// `at` as the phone is sent it: milliseconds since the Unix epoch.
fn millis(at: std::time::SystemTime) -> u64 {
    at.duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        .try_into()
        .unwrap()
}

#[tokio::test]
async fn a_deadline_reaches_the_phone_and_follows_the_desk() {
    let desk = desk().await;
    let (_phone, mut socket) = connected(&desk, "Pixel").await;
    let at = std::time::SystemTime::now() + std::time::Duration::from_secs(300);
    let _held = desk
        .remote
        .offer(PendingRequest {
            deadline: Some(at),
            ..request(4)
        })
        .unwrap();
    let offered = next(&mut socket).await;
    assert_eq!(offered["request"]["deadline"], millis(at));
    // Moved (a reload changed the rule's `after`), held at the desk, released.
    let moved = at + std::time::Duration::from_secs(60);
    for told in [Some(moved), None, Some(at)] {
        desk.remote.set_deadline(RequestId(4), told);
        assert_eq!(
            next(&mut socket).await,
            json!({ "type": "deadline", "id": "r4", "deadline": told.map(millis) })
        );
    }
    // A socket opened later hears the deadline as it stands now.
    desk.remote.set_deadline(RequestId(4), Some(moved));
    assert_eq!(next(&mut socket).await["deadline"], millis(moved));
    let tablet = crate::phone::paired(&desk, "Tablet").await;
    let (mut later, welcome) = tablet.connect(&desk).await;
    assert_eq!(welcome["type"], "welcome");
    let snapshot = next(&mut later).await;
    assert_eq!(snapshot["requests"][0]["deadline"], millis(moved));
    // A request without one says so; a deadline for a request not held tells nobody.
    let _plain = desk.remote.offer(request(5)).unwrap();
    assert_eq!(next(&mut socket).await["request"]["deadline"], Value::Null);
    desk.remote.set_deadline(RequestId(99), Some(at));
    desk.remote.withdraw(RequestId(5), Ending::Withdrawn);
    assert_eq!(next(&mut socket).await["type"], "withdrawn");
}

#[tokio::test]
async fn an_answer_after_the_deadline_is_refused_whatever_the_page_shows() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let past = std::time::SystemTime::now() - std::time::Duration::from_millis(1);
    let held = desk
        .remote
        .offer(PendingRequest {
            deadline: Some(past),
            ..request(6)
        })
        .unwrap();
    let wire = next(&mut socket).await["request"].clone();
    // A page that ignores its countdown: the desk's clock says the time is up.
    for answer in [yes(), Value::Null] {
        let reply = send(&mut socket, &phone.answer(&wire, &nonce(), answer)).await;
        assert_eq!(reply["reason"], "expired", "{reply}");
    }
    // Held at the desk, no deadline runs: the phone may answer again.
    desk.remote.set_deadline(RequestId(6), None);
    assert_eq!(next(&mut socket).await["deadline"], Value::Null);
    let reply = send(&mut socket, &phone.answer(&wire, &nonce(), yes())).await;
    assert_eq!(reply["type"], "accepted", "{reply}");
    assert_eq!(answered_by(held).await, "Pixel");
}

/// A PNG whose header claims 9000×9000 pixels, over the desk's 8192 a side.
const HUGE: &str = "iVBORw0KGgoAAAANSUhEUgAAIygAACMoCAYAAABt1XK6AAAAAElEQVQ1rwYeAAAAAElFTkSuQmCC";

fn with_picture(picture: Value) -> Value {
    json!({ "answers": [{ "id": "go", "selected": [], "images": [picture] }] })
}

#[tokio::test]
async fn a_picture_answered_from_the_phone_reaches_the_desk_re_encoded() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (held, wire) = offered(&desk, &mut socket, 1).await;
    let answer = with_picture(json!({ "mime": "image/png", "data": PICTURE }));
    let reply = send(&mut socket, &phone.answer(&wire, &nonce(), answer)).await;
    assert_eq!(reply["type"], "accepted", "{reply}");
    let verified = tokio::time::timeout(CEILING, held).await.unwrap().unwrap();
    let answer = verified.answer.expect("an answer, not a dismissal");
    let images = &answer.answers[0].images;
    assert_eq!(images.len(), 1);
    // Re-encoded by the desk: a PNG it wrote, never the bytes as the phone sent them.
    let safe = askdesk_image::safe_png(&images[0]).expect("a safe PNG");
    assert!(safe.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert_eq!(images[0].path, None);
}

#[tokio::test]
async fn a_picture_that_is_malformed_oversized_or_no_image_is_refused_naming_why() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (held, wire) = offered(&desk, &mut socket, 1).await;
    let cut = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGM4YRMFQQxwFgA=";
    // Over the 8 MiB of one picture: refused by its length, before it is decoded.
    let heavy = "A".repeat(12 << 20);
    let text = "bm90IGEgcGljdHVyZSBhdCBhbGw="; // "not a picture at all"
    let cases: [(Value, &str); 5] = [
        (json!({ "mime": "image/png", "data": HUGE }), "(image-side)"),
        (json!({ "mime": "image/png", "data": cut }), "malformed"),
        (json!({ "data": heavy }), "(image-bytes)"),
        (json!({ "data": text }), "answers[0].images[0]"),
        (
            json!({ "mime": "image/png", "path": "/etc/passwd" }),
            "a path is never read",
        ),
    ];
    for (picture, named) in cases {
        let reply = send(
            &mut socket,
            &phone.answer(&wire, &nonce(), with_picture(picture)),
        )
        .await;
        assert_eq!(reply["type"], "refused", "{reply}");
        assert_eq!(reply["reason"], "bad-answer", "{reply}");
        let message = reply["message"].as_str().unwrap();
        assert!(
            message.starts_with(
                "the answer breaks the rules of its questions: answers[0].images[0]: "
            ),
            "{message}"
        );
        assert!(message.contains(named), "{message} names {named}");
    }
    // The request still waits: a good answer is taken.
    let reply = send(&mut socket, &phone.answer(&wire, &nonce(), yes())).await;
    assert_eq!(reply["type"], "accepted");
    assert_eq!(answered_by(held).await, "Pixel");
}

#[tokio::test]
async fn a_picture_swapped_after_signing_is_refused() {
    let desk = desk().await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (_held, wire) = offered(&desk, &mut socket, 1).await;
    let answer = with_picture(json!({ "mime": "image/png", "data": PICTURE }));
    let mut swapped = phone.answer(&wire, &nonce(), answer.clone());
    swapped["answer"]["answers"][0]["images"][0]["data"] = json!(HUGE);
    assert_eq!(send(&mut socket, &swapped).await["reason"], "bad-signature");
    let mut dropped = phone.answer(&wire, &nonce(), answer);
    dropped["answer"]["answers"][0]["images"] = json!([]);
    assert_eq!(send(&mut socket, &dropped).await["reason"], "bad-signature");
}

#[tokio::test]
async fn an_answer_larger_than_its_host_passes_on_is_refused_naming_the_limit() {
    // The size `askdesk remote` passes on is its broker's line; here, room for a few hundred bytes.
    let desk = desk_with(|config| config.limits.answer_bytes = Some(200)).await;
    let (phone, mut socket) = connected(&desk, "Pixel").await;
    let (held, wire) = offered(&desk, &mut socket, 1).await;
    let answer = with_picture(json!({ "mime": "image/png", "data": PICTURE }));
    let reply = send(&mut socket, &phone.answer(&wire, &nonce(), answer)).await;
    assert_eq!(reply["reason"], "bad-answer", "{reply}");
    let message = reply["message"].as_str().unwrap();
    assert!(
        message.contains("over the limit of 200 bytes this desk passes on (answer-bytes)"),
        "{message}"
    );
    // Text alone is held to it too; an answer within it is taken.
    let long = json!({ "answers": [{ "id": "go", "selected": [], "custom": "x".repeat(300) }] });
    let reply = send(&mut socket, &phone.answer(&wire, &nonce(), long)).await;
    assert_eq!(reply["reason"], "bad-answer", "{reply}");
    assert_eq!(
        send(&mut socket, &phone.answer(&wire, &nonce(), yes())).await["type"],
        "accepted"
    );
    assert_eq!(answered_by(held).await, "Pixel");
}
