//! Images in a request (protocol 1.4): made safe by the host's gate after the checks of protocol 2
//! and before any answerer sees them; refused when there is no gate or the gate refuses. The
//! images of an answer: made safe by the gate before the asker gets them.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use askdesk_core::{
    AgentInfo, Answer, Config, Decision, Image, ImageGate, Question, Scope, Service,
    UserQuestionError,
};
use common::*;
use tokio_util::sync::CancellationToken;

/// A gate that replaces every question image by a fixed one, or refuses.
#[derive(Debug)]
struct Fake {
    refuse: bool,
}

impl ImageGate for Fake {
    fn make_safe(
        &self,
        mut questions: Vec<Question>,
        _agent: Option<AgentInfo>,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Question>, UserQuestionError>> + Send>> {
        let refuse = self.refuse;
        Box::pin(async move {
            if refuse {
                return Err(UserQuestionError::image_limit(
                    "questions[0].images[0]",
                    "too big (image-bytes)",
                ));
            }
            for image in questions.iter_mut().flat_map(|q| q.images.iter_mut()) {
                *image = Image {
                    mime: Some(Image::SAFE_MIME.into()),
                    data: Some("c2FmZQ==".into()),
                    path: None,
                };
            }
            Ok(questions)
        })
    }

    fn make_answer_safe(
        &self,
        mut answer: Answer,
    ) -> Pin<Box<dyn Future<Output = Result<Answer, UserQuestionError>> + Send>> {
        let refuse = self.refuse;
        Box::pin(async move {
            if refuse {
                return Err(UserQuestionError::bad_answer(
                    "answers[0].images[0]: too big (image-bytes)",
                ));
            }
            for image in answer.answers.iter_mut().flat_map(|a| a.images.iter_mut()) {
                *image = Image {
                    mime: Some(Image::SAFE_MIME.into()),
                    data: Some("YW5zd2Vy".into()),
                    path: None,
                };
            }
            Ok(answer)
        })
    }
}

fn with_image() -> Question {
    let mut q = question("q");
    q.images.push(Image {
        path: Some("/etc/passwd".into()),
        ..Image::default()
    });
    q
}

fn service(gate: Option<Fake>) -> Service {
    Service::new(Config {
        images: gate.map(|gate| Arc::new(gate) as Arc<dyn ImageGate>),
        ..Config::default()
    })
}

#[tokio::test]
async fn answerers_see_only_the_images_the_gate_made() {
    let service = service(Some(Fake { refuse: false }));
    let log = Log::default();
    let (_id, mut holds) = register(&service, "a", Script::Hold, Scope::All, false, &log);
    let ask = service.ask(
        ask_request(vec![with_image()], None),
        &CancellationToken::new(),
    );
    let ask = tokio::spawn(ask);
    let held = holds.next().await;
    assert_eq!(
        held.request.questions[0].images[0].data.as_deref(),
        Some("c2FmZQ==")
    );
    assert_eq!(held.request.questions[0].images[0].path, None);
    held.responder
        .decide(askdesk_core::Decision::Claim(skipped(
            &held.request.questions,
        )))
        .unwrap();
    ask.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_refusal_of_the_gate_settles_the_ask_before_any_answerer() {
    let service = service(Some(Fake { refuse: true }));
    let log = Log::default();
    register(&service, "a", Script::Claim, Scope::All, false, &log);
    let result = service
        .ask(
            ask_request(vec![with_image()], None),
            &CancellationToken::new(),
        )
        .await;
    assert_question_error(
        result,
        "IMAGE_LIMIT",
        "questions[0].images[0]: too big (image-bytes)",
    );
    assert!(log.offered().is_empty());
}

#[tokio::test]
async fn a_refused_request_is_settled_without_its_images() {
    // Whatever the journal keeps of a refusal, before the gate or by it, holds no image as asked.
    for (gate, plan_review) in [
        (Fake { refuse: true }, false),
        (Fake { refuse: false }, true),
    ] {
        let service = service(Some(gate));
        let mut q = with_image();
        if plan_review {
            q.intent = Some(askdesk_core::Intent {
                kind: "plan-review".into(),
                approve: "none".into(),
            });
        }
        let settled = service
            .ask_settled(ask_request(vec![q], None), &CancellationToken::new())
            .await;
        assert!(settled.result.is_err());
        assert!(settled.request.questions[0].images.is_empty());
    }
}

#[tokio::test]
async fn without_a_gate_an_image_is_refused() {
    let service = service(None);
    let log = Log::default();
    register(&service, "a", Script::Claim, Scope::All, false, &log);
    let result = service
        .ask(
            ask_request(vec![with_image()], None),
            &CancellationToken::new(),
        )
        .await;
    assert_question_error(
        result,
        "BAD_IMAGE",
        "questions: this broker takes no images",
    );
    assert!(log.offered().is_empty());
}

#[tokio::test]
async fn the_checks_of_protocol_2_come_before_the_images() {
    // An empty intent detail is step 5: it wins over a gate that would refuse.
    let service = service(Some(Fake { refuse: true }));
    let mut q = with_intent("q", "plan-review", "Go", None);
    q.options.push(option("Go"));
    q.images = with_image().images;
    let result = service
        .ask(ask_request(vec![q], None), &CancellationToken::new())
        .await;
    assert_question_error(
        result,
        "BAD_INTENT",
        "question q declares intent plan-review without the detail it reviews",
    );
}

/// Asks one plain question of a service whose one answerer answers it with a picture.
async fn answered_with_a_picture(gate: Option<Fake>) -> askdesk_core::AskSettlement {
    let service = service(gate);
    let log = Log::default();
    let (_id, mut holds) = register(&service, "a", Script::Hold, Scope::All, false, &log);
    let ask = tokio::spawn(async move {
        service
            .ask_settled(
                ask_request(vec![question("q")], None),
                &CancellationToken::new(),
            )
            .await
    });
    let held = holds.next().await;
    let mut answer = skipped(&held.request.questions);
    answer.answers[0].custom = Some("like this".into());
    answer.answers[0].images.push(Image {
        data: Some("bm90IHlldCBzYWZl".into()),
        ..Image::default()
    });
    held.responder.decide(Decision::Claim(answer)).unwrap();
    ask.await.unwrap()
}

#[tokio::test]
async fn the_asker_gets_the_answers_images_only_as_the_gate_made_them() {
    let settled = answered_with_a_picture(Some(Fake { refuse: false })).await;
    let answer = settled.result.unwrap();
    assert_eq!(answer.answers[0].custom.as_deref(), Some("like this"));
    assert_eq!(
        answer.answers[0].images[0].data.as_deref(),
        Some("YW5zd2Vy")
    );
}

#[tokio::test]
async fn an_answer_image_the_gate_refuses_fails_the_ask() {
    let settled = answered_with_a_picture(Some(Fake { refuse: true })).await;
    assert_question_error(
        settled.result,
        "BAD_ANSWER",
        "the answerer sent a bad answer: answers[0].images[0]: too big (image-bytes)",
    );
}

#[tokio::test]
async fn without_a_gate_an_answer_image_fails_the_ask() {
    let settled = answered_with_a_picture(None).await;
    assert_question_error(
        settled.result,
        "BAD_ANSWER",
        "the answerer sent a bad answer: this broker takes no images",
    );
}
