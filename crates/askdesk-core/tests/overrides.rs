//! Overrides (deciding a pending request from outside the waterfall, as a rule's deadline does)
//! and the answerer named by `ask_settled`: who wins a race, who is told to drop the request, and
//! that a request still settles exactly once.

mod common;

use std::sync::{Arc, Mutex};

use askdesk_core::{
    Answer, AnswerItem, Answerer, AnswererRegistration, Config, Decision, Failure, Offer, Request,
    Scope, Service, UserQuestionError, WeakService,
};
use common::*;
use tokio_util::sync::CancellationToken;

fn yes(id: &str) -> Answer {
    Answer {
        answers: vec![AnswerItem {
            id: id.into(),
            selected: vec!["Yes".into()],
            ..Default::default()
        }],
    }
}

#[tokio::test]
async fn claims_are_signed_by_the_answerer_that_made_them() {
    let service = Service::new(Config::default());
    let log = Log::default();
    register(&service, "first", Script::Delegate, Scope::All, false, &log);
    register(&service, "second", Script::Claim, Scope::All, false, &log);
    let settled = service
        .ask_settled(
            ask_request(vec![question("q")], None),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(settled.answerer.as_deref(), Some("second"));
    assert!(settled.result.is_ok());
    // Only a withdrawn request carries what its holder had of an answer.
    assert_eq!(settled.draft, None);

    // A failure names its answerer too; a request nobody claimed names nobody.
    let failing = Service::new(Config::default());
    register(
        &failing,
        "refuser",
        Script::Fail(Failure::Domain(UserQuestionError::aborted())),
        Scope::All,
        false,
        &log,
    );
    let settled = failing
        .ask_settled(
            ask_request(vec![question("q")], None),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(settled.answerer.as_deref(), Some("refuser"));
    let settled = Service::new(Config::default())
        .ask_settled(
            ask_request(vec![question("q")], None),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(settled.answerer, None);
    assert_question_error(settled.result, "NO_PROVIDER", NO_PROVIDER);
}

#[tokio::test]
async fn an_override_settles_a_held_request_and_withdraws_the_holder() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut holds) = register(&service, "human", Script::Hold, Scope::All, false, &log);
    let ask = tokio::spawn(service.ask_settled(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    ));
    let held = holds.next().await;
    let overrule = service
        .take_override(held.request.id, "rule:deadline")
        .expect("a pending request has an override");
    assert!(
        service.take_override(held.request.id, "again").is_none(),
        "there is one override per request"
    );
    overrule.decide(Decision::Claim(yes("q"))).unwrap();
    let settled = ask.await.unwrap();
    assert_eq!(settled.result.unwrap(), yes("q"));
    assert_eq!(settled.answerer.as_deref(), Some("rule:deadline"));
    // The holder hears who decided it, so its UI can say a rule answered, not the agent.
    assert_eq!(
        log.overruled(),
        [(
            "human".to_owned(),
            held.request.id,
            "rule:deadline".to_owned()
        )]
    );
    assert!(log.withdrawn().is_empty());
    assert!(
        held.responder.is_withdrawn(),
        "the human's late answer is refused"
    );
    assert!(service.pending().is_empty());
}

#[tokio::test]
async fn the_holders_decision_beats_a_later_override() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut holds) = register(&service, "human", Script::Hold, Scope::All, false, &log);
    let ask = tokio::spawn(service.ask_settled(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    ));
    let held = holds.next().await;
    let mut overrule = service.take_override(held.request.id, "rule:late").unwrap();
    held.responder
        .decide(Decision::Claim(skipped(&held.request.questions)))
        .unwrap();
    let settled = ask.await.unwrap();
    assert_eq!(settled.answerer.as_deref(), Some("human"));
    overrule.settled().await;
    assert!(overrule.is_settled());
    assert_eq!(
        overrule.decide(Decision::Claim(yes("q"))),
        Err(Decision::Claim(yes("q"))),
        "the override's decision comes back: the request had settled"
    );
    assert!(
        log.withdrawn().is_empty(),
        "the holder decided; nothing to drop"
    );
}

#[tokio::test]
async fn an_override_failure_reaches_the_asker() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut holds) = register(&service, "human", Script::Hold, Scope::All, false, &log);
    let ask = tokio::spawn(service.ask_settled(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    ));
    let held = holds.next().await;
    let denied = UserQuestionError::new(
        askdesk_core::ErrorCode::Other("ASK_DENIED".into()),
        "not on main",
    );
    service
        .take_override(held.request.id, "rule:no-main")
        .unwrap()
        .decide(Decision::Fail(Failure::Domain(denied)))
        .unwrap();
    let settled = ask.await.unwrap();
    assert_eq!(settled.answerer.as_deref(), Some("rule:no-main"));
    assert_question_error(settled.result, "ASK_DENIED", "not on main");
}

#[tokio::test]
async fn an_invalid_override_answer_is_bad_answer() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut holds) = register(&service, "human", Script::Hold, Scope::All, false, &log);
    let ask = tokio::spawn(service.ask_settled(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    ));
    let held = holds.next().await;
    service
        .take_override(held.request.id, "rule:broken")
        .unwrap()
        .decide(Decision::Claim(yes("other")))
        .unwrap();
    let settled = ask.await.unwrap();
    match settled.result {
        Err(askdesk_core::AskError::Question(e)) => assert_eq!(e.code.as_str(), "BAD_ANSWER"),
        other => panic!("expected BAD_ANSWER, got {other:?}"),
    }
}

/// An answerer that decides through the request's override while it is being offered the
/// request, then delegates: the way a rule engine signs its claims with the rule's name.
struct SignsThroughOverride {
    service: WeakService,
    offered: Mutex<usize>,
}

impl Answerer for SignsThroughOverride {
    fn offer(&self, request: &Arc<Request>) -> Offer {
        *self.offered.lock().unwrap() += 1;
        let service = self.service.upgrade().expect("the service lives");
        let overrule = service.take_override(request.id, "rule:at-once").unwrap();
        overrule
            .decide(Decision::Claim(skipped(&request.questions)))
            .unwrap();
        Offer::Now(Decision::Delegate)
    }
}

#[tokio::test]
async fn an_override_decided_during_an_offer_settles_before_the_next_answerer() {
    let service = Service::new(Config::default());
    let log = Log::default();
    register(&service, "human", Script::Hold, Scope::All, false, &log);
    let signer = Arc::new(SignsThroughOverride {
        service: service.downgrade(),
        offered: Mutex::new(0),
    });
    service
        .register_answerer(
            AnswererRegistration {
                scope: Scope::All,
                prepend: true,
                label: Some("rules".into()),
                group: None,
            },
            signer.clone(),
        )
        .unwrap();
    let settled = service
        .ask_settled(
            ask_request(vec![question("q")], None),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(settled.answerer.as_deref(), Some("rule:at-once"));
    assert!(settled.result.is_ok());
    assert_eq!(*signer.offered.lock().unwrap(), 1);
    assert!(log.offered().is_empty(), "the human was never shown it");

    // The weak handle does not keep the service alive.
    let weak = service.downgrade();
    drop(service);
    assert!(weak.upgrade().is_none());
}

#[tokio::test]
async fn no_override_once_settled() {
    let service = Service::new(Config::default());
    let log = Log::default();
    register(&service, "claims", Script::Claim, Scope::All, false, &log);
    let settled = service
        .ask_settled(
            ask_request(vec![question("q")], None),
            &CancellationToken::new(),
        )
        .await;
    assert!(settled.result.is_ok());
    assert!(service
        .take_override(askdesk_core::RequestId(1), "late")
        .is_none());
}
