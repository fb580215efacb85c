//! Images over the socket (protocol 1.4): a path read from the agent's `meta.cwd` reaches the
//! answerer as a re-encoded PNG; a link out of that folder and a limit are refused before any
//! answerer sees the request. An answerer's picture reaches the asker as a re-encoded PNG; a
//! malformed or oversized one fails the ask `BAD_ANSWER`, naming it.

use std::os::unix::fs::symlink;
use std::time::Duration;

use askdesk_e2e::{ask, expect_question_error, q, Broker, Conn};
use serde_json::{json, Value};

/// A 1×1 GIF.
const GIF_1X1: &str = "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==";
/// The base64 of a PNG's signature.
const PNG_START: &str = "iVBORw0KGgo";

async fn setup(cwd: &std::path::Path) -> (Broker, Conn, Conn, Value) {
    let broker = Broker::start();
    let answerer = broker.conn().await;
    answerer.register_answerer(json!("all"), false, "a").await;
    let asker = broker.conn().await;
    let agent = asker
        .register_agent(json!({ "id": "coder", "meta": { "cwd": cwd } }))
        .await;
    (broker, answerer, asker, agent)
}

fn with_images(images: Value) -> Value {
    let mut question = q("layout", "Which layout?", &["A", "B"]);
    question["images"] = images;
    question
}

#[tokio::test(flavor = "multi_thread")]
async fn a_path_in_the_agents_folder_reaches_the_answerer_as_a_png() {
    let dir = tempfile::tempdir().unwrap();
    let gif = [
        0x47u8, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0xff, 0xff,
        0xff, 0x00, 0x00, 0x00, 0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00,
        0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b,
    ];
    std::fs::write(dir.path().join("shot.gif"), gif).unwrap();
    let (_broker, answerer, asker, agent) = setup(dir.path()).await;
    let images = json!([{ "path": "shot.gif" }, { "mime": "image/gif", "data": GIF_1X1 }]);
    let id = asker
        .start(
            "user-questions/ask",
            ask(vec![with_images(images)], Some(&agent)),
        )
        .await;
    let request = answerer.next_request().await;
    let sent = request["params"]["questions"][0]["images"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(sent.len(), 2, "{request}");
    for image in &sent {
        assert_eq!(
            image.as_object().unwrap().len(),
            2,
            "only mime and data: {image}"
        );
        assert_eq!(image["mime"], "image/png");
        assert!(
            image["data"].as_str().unwrap().starts_with(PNG_START),
            "{image}"
        );
    }
    answerer
        .reply(
            &request,
            json!({ "answers": [{ "id": "layout", "selected": ["B"] }] }),
        )
        .await;
    let answer = asker.wait(id).await.unwrap();
    assert_eq!(answer["answers"][0]["selected"], json!(["B"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_link_out_of_the_agents_folder_is_refused_before_any_answerer() {
    let outside = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.gif"), b"GIF89a").unwrap();
    symlink(
        outside.path().join("secret.gif"),
        cwd.path().join("shot.gif"),
    )
    .unwrap();
    let (_broker, answerer, asker, agent) = setup(cwd.path()).await;
    let result = asker
        .call(
            "user-questions/ask",
            ask(
                vec![with_images(json!([{ "path": "shot.gif" }]))],
                Some(&agent),
            ),
        )
        .await;
    let error = expect_question_error(result, "BAD_IMAGE");
    assert_eq!(
        error.message,
        "questions[0].images[0]: \"shot.gif\" leads through a link out of the agent's working directory"
    );
    assert!(answerer
        .next_incoming_within(Duration::from_millis(300))
        .await
        .is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn too_many_images_is_image_limit_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_broker, answerer, asker, agent) = setup(dir.path()).await;
    let images: Vec<Value> = (0..17)
        .map(|_| json!({ "mime": "image/gif", "data": GIF_1X1 }))
        .collect();
    let result = asker
        .call(
            "user-questions/ask",
            ask(vec![with_images(Value::Array(images))], Some(&agent)),
        )
        .await;
    let error = expect_question_error(result, "IMAGE_LIMIT");
    assert!(
        error.message.starts_with("questions[0].images[16]: ")
            && error.message.ends_with("(images)"),
        "{error:?}"
    );
    assert!(answerer
        .next_incoming_within(Duration::from_millis(300))
        .await
        .is_none());
}

/// A PNG whose header claims 9000×9000 pixels, with no pixel data.
const PNG_9000: &str =
    "iVBORw0KGgoAAAANSUhEUgAAIygAACMoCAYAAABt1XK6AAAAAElEQVQ1rwYeAAAAAElFTkSuQmCC";

/// An ask of one question answered by the socket answerer with `custom` text and `images`: what
/// the asker got.
async fn answered_with(images: Value) -> Result<Value, askdesk_e2e::RpcError> {
    let dir = tempfile::tempdir().unwrap();
    let (_broker, answerer, asker, agent) = setup(dir.path()).await;
    let id = asker
        .start(
            "user-questions/ask",
            ask(
                vec![q("layout", "Which layout?", &["A", "B"])],
                Some(&agent),
            ),
        )
        .await;
    let request = answerer.next_request().await;
    answerer
        .reply(
            &request,
            json!({ "answers": [{ "id": "layout", "selected": [], "custom": "like this", "images": images }] }),
        )
        .await;
    asker.wait(id).await
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answerers_picture_reaches_the_asker_as_a_png() {
    let answer = answered_with(json!([{ "mime": "image/gif", "data": GIF_1X1 }]))
        .await
        .unwrap();
    let item = &answer["answers"][0];
    assert_eq!(item["custom"], "like this");
    let image = &item["images"][0];
    assert_eq!(image.as_object().unwrap().len(), 2, "{image}");
    assert_eq!(image["mime"], "image/png");
    assert!(
        image["data"].as_str().unwrap().starts_with(PNG_START),
        "{image}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_answer_picture_fails_the_ask_naming_it() {
    let result = answered_with(json!([{ "data": "R0lGODlhAQAB" }])).await;
    let error = expect_question_error(result, "BAD_ANSWER");
    assert!(
        error.message.starts_with(
            "the answerer sent a bad answer: answers[0].images[0]: a malformed image/gif"
        ),
        "{error:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_answer_picture_fails_the_ask_naming_the_limit() {
    let result = answered_with(json!([{ "mime": "image/png", "data": PNG_9000 }])).await;
    let error = expect_question_error(result, "BAD_ANSWER");
    assert_eq!(
        error.message,
        "the answerer sent a bad answer: answers[0].images[0]: an image of 9000×9000 pixels is over \
         the limit of 8192 pixels a side (image-side)"
    );
}
