//! What a device signs, byte for byte, and the request digest inside it (docs/remote.md, "What a
//! phone signs"): each is the canonical JSON ([`crate::canonical`]) of one object whose `kind`
//! says what it is, so a signature made for one can never pass as another.

use askdesk_core::{AgentInfo, Question, RequestId};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::canonical;
use crate::keys;

/// The request as the remote sends it to devices: what the digest covers, plus the agent's
/// display information (label, meta), which the digest leaves out.
pub fn request_wire(
    id: RequestId,
    key: &[u8; 16],
    agent: Option<&AgentInfo>,
    questions: &[Question],
) -> Value {
    json!({
        "id": id.to_string(),
        "key": keys::encode(key),
        "agent": agent,
        "questions": questions,
    })
}

/// SHA-256 of the canonical JSON of
/// `{"agent": <agent id or null>, "id": "r<n>", "key": <request key>, "kind": "askdesk/request",
/// "questions": [<each question as the wire carries it>], "v": 1}`.
/// The key is random per offer, so a signed answer can never match a later request that happens
/// to have the same id, agent and questions (request ids start again when the desk restarts).
pub fn request_digest(
    id: RequestId,
    key: &[u8; 16],
    agent: Option<&AgentInfo>,
    questions: &[Question],
) -> [u8; 32] {
    let value = json!({
        "agent": agent.map(|agent| agent.id.as_str()),
        "id": id.to_string(),
        "key": keys::encode(key),
        "kind": "askdesk/request",
        "questions": questions,
        "v": 1,
    });
    let text = canonical::to_string(&value).expect("questions hold no numbers");
    Sha256::digest(text.as_bytes()).into()
}

/// The bytes a device signs to answer: the canonical JSON of
/// `{"answer": <the answer exactly as sent>, "comments": <the comments on the plan, exactly as
/// sent, only when sent>, "digest": <request digest>, "kind": "askdesk/answer", "nonce": <nonce>,
/// "v": 1}`. `None` if the answer has no canonical form.
pub fn answer_message(
    digest: &[u8; 32],
    nonce: &str,
    answer: &Value,
    comments: Option<&Value>,
) -> Option<Vec<u8>> {
    let mut value = json!({
        "answer": answer,
        "digest": keys::encode(digest),
        "kind": "askdesk/answer",
        "nonce": nonce,
        "v": 1,
    });
    if let Some(comments) = comments {
        value["comments"] = comments.clone();
    }
    canonical::to_string(&value).ok().map(String::into_bytes)
}

/// The digest of an answer a passkey is asserted over: SHA-256 of its [`answer_message`], so the
/// assertion covers the request, the answer, its comments and its nonce exactly.
pub fn answer_digest(message: &[u8]) -> [u8; 32] {
    Sha256::digest(message).into()
}

/// The bytes a device signs to open a socket: the canonical JSON of
/// `{"challenge": <the server's challenge>, "kind": "askdesk/hello", "origin": <the origin>, "v": 1}`.
pub fn hello_message(challenge: &str, origin: &str) -> Vec<u8> {
    let value = json!({
        "challenge": challenge,
        "kind": "askdesk/hello",
        "origin": origin,
        "v": 1,
    });
    canonical::to_string(&value)
        .expect("strings only")
        .into_bytes()
}

/// The bytes a device signs to set its push subscription: the canonical JSON of
/// `{"kind": "askdesk/push-subscription", "origin": <the origin>, "subscription": <the
/// subscription as sent, or null>, "v": 1}`. `None` if it has no canonical form.
pub fn push_message(origin: &str, subscription: &Value) -> Option<Vec<u8>> {
    let value = json!({
        "kind": "askdesk/push-subscription",
        "origin": origin,
        "subscription": subscription,
        "v": 1,
    });
    canonical::to_string(&value).ok().map(String::into_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question() -> Question {
        askdesk_core::testing::question("go", "Proceed?", &["Yes"])
    }

    #[test]
    fn the_request_digest_is_sha256_of_the_documented_text() {
        let agent = AgentInfo {
            id: "coder".into(),
            label: Some("shown, not signed".into()),
            meta: None,
        };
        let key = [7u8; 16];
        let text = format!(
            "{{\"agent\":\"coder\",\"id\":\"r3\",\"key\":\"{}\",\"kind\":\"askdesk/request\",\
             \"questions\":[{{\"id\":\"go\",\"options\":[{{\"label\":\"Yes\"}}],\"question\":\"Proceed?\"}}],\"v\":1}}",
            keys::encode(&key)
        );
        let expected: [u8; 32] = Sha256::digest(text.as_bytes()).into();
        assert_eq!(
            request_digest(RequestId(3), &key, Some(&agent), &[question()]),
            expected
        );
    }

    #[test]
    fn every_part_of_the_request_changes_the_digest() {
        let agent = AgentInfo {
            id: "coder".into(),
            label: None,
            meta: None,
        };
        let base = request_digest(RequestId(3), &[7; 16], Some(&agent), &[question()]);
        let mut changed = question();
        changed.options[0].label = "No".into();
        let other_agent = AgentInfo {
            id: "coder2".into(),
            ..agent.clone()
        };
        for other in [
            request_digest(RequestId(4), &[7; 16], Some(&agent), &[question()]),
            request_digest(RequestId(3), &[8; 16], Some(&agent), &[question()]),
            request_digest(RequestId(3), &[7; 16], None, &[question()]),
            request_digest(RequestId(3), &[7; 16], Some(&other_agent), &[question()]),
            request_digest(RequestId(3), &[7; 16], Some(&agent), &[changed]),
        ] {
            assert_ne!(base, other);
        }
    }

    #[test]
    fn the_answer_message_is_the_documented_text() {
        let answer = json!({ "answers": [{ "selected": ["Yes"], "id": "go" }] });
        let message = answer_message(&[1; 32], "bm9uY2U", &answer, None).unwrap();
        let expected = format!(
            "{{\"answer\":{{\"answers\":[{{\"id\":\"go\",\"selected\":[\"Yes\"]}}]}},\"digest\":\"{}\",\
             \"kind\":\"askdesk/answer\",\"nonce\":\"bm9uY2U\",\"v\":1}}",
            keys::encode(&[1; 32])
        );
        assert_eq!(String::from_utf8(message).unwrap(), expected);
    }

    #[test]
    fn a_picture_in_the_answer_is_signed_byte_for_byte() {
        let answer = |data: &str| {
            json!({ "answers": [{ "id": "go", "selected": [],
                "images": [{ "mime": "image/png", "data": data }] }] })
        };
        let message = |answer: &Value| answer_message(&[1; 32], "bm9uY2U", answer, None).unwrap();
        let signed = message(&answer("iVBORw0KGgoAAAA"));
        let text = String::from_utf8(signed.clone()).unwrap();
        assert!(
            text.starts_with(
                "{\"answer\":{\"answers\":[{\"id\":\"go\",\"images\":[{\"data\":\"iVBORw0KGgoAAAA\",\
                 \"mime\":\"image/png\"}],\"selected\":[]}]},"
            ),
            "{text}"
        );
        // One byte of the picture, its type, or the picture gone: another message to sign.
        let mut no_picture = answer("");
        no_picture["answers"][0]["images"] = json!([]);
        let mut other_type = answer("iVBORw0KGgoAAAA");
        other_type["answers"][0]["images"][0]["mime"] = json!("image/jpeg");
        for other in [answer("iVBORw0KGgoAAAB"), other_type, no_picture] {
            assert_ne!(message(&other), signed);
            assert_ne!(answer_digest(&message(&other)), answer_digest(&signed));
        }
    }
}
