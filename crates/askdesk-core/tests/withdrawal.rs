//! Why a held request was withdrawn, as its answerer is told: the asker withdrew the question, the
//! asker went (its connection, its agent), the service is stopping, or the answerer itself left;
//! and what the answerer had of an answer then, which goes with the settlement for the journal.

mod common;

use std::sync::{Arc, Mutex};

use askdesk_core::{
    AgentRegistration, Answer, Answerer, Config, ErrorCode, Offer, Request, RequestId, Scope,
    Service, Withdrawal,
};
use common::*;
use tokio_util::sync::CancellationToken;

/// Holds every request, remembers why each was withdrawn, and gives back a typed draft.
#[derive(Default)]
struct Typist {
    held: Holding,
    why: Mutex<Vec<(RequestId, Withdrawal)>>,
}

fn typed() -> Answer {
    Answer {
        answers: vec![askdesk_core::testing::typed("q", "half a thou")],
    }
}

impl Answerer for Typist {
    fn offer(&self, request: &Arc<Request>) -> Offer {
        self.held.offer(request)
    }

    fn withdraw(&self, request: RequestId, why: Withdrawal) -> Option<Answer> {
        self.why.lock().unwrap().push((request, why));
        Some(typed())
    }
}

fn setup() -> (Service, Arc<Typist>) {
    let service = Service::new(Config::default());
    let typist = Arc::new(Typist::default());
    service
        .register_answerer(member("typist", None), typist.clone())
        .unwrap();
    (service, typist)
}

async fn held(typist: &Typist) {
    while typist.held.count() == 0 {
        tokio::task::yield_now().await;
    }
}

fn why(typist: &Typist) -> Vec<Withdrawal> {
    typist
        .why
        .lock()
        .unwrap()
        .iter()
        .map(|(_, w)| w.clone())
        .collect()
}

#[tokio::test]
async fn a_cancelled_ask_is_a_withdrawn_question_and_its_draft_is_settled_with_it() {
    let (service, typist) = setup();
    let cancel = CancellationToken::new();
    let ask = tokio::spawn(service.ask_settled(ask_request(vec![question("q")], None), &cancel));
    held(&typist).await;
    cancel.cancel();
    let settled = ask.await.unwrap();
    assert_eq!(
        settled.result.unwrap_err().code(),
        Some(&ErrorCode::AskAborted)
    );
    assert_eq!(why(&typist), [Withdrawal::Cancelled]);
    assert_eq!(settled.draft, Some(typed()), "the journal gets the draft");
}

#[tokio::test]
async fn an_asker_that_goes_is_told_apart_from_one_that_cancels() {
    let (service, typist) = setup();
    // A connection: its asks' tokens are children of the token it cancels when it closes.
    let connection = CancellationToken::new();
    let (first, second) = (connection.child_token(), connection.child_token());
    let one = tokio::spawn(service.ask_settled_from(
        ask_request(vec![question("q")], None),
        &first,
        Some(&connection),
    ));
    held(&typist).await;
    // `$/cancelRequest` cancels one ask alone: a withdrawal.
    first.cancel();
    assert!(one.await.unwrap().result.is_err());
    let two = tokio::spawn(service.ask_settled_from(
        ask_request(vec![question("q")], None),
        &second,
        Some(&connection),
    ));
    while typist.held.count() < 2 {
        tokio::task::yield_now().await;
    }
    connection.cancel();
    let settled = two.await.unwrap();
    // The asker is told the same either way.
    assert_eq!(
        settled.result.unwrap_err().code(),
        Some(&ErrorCode::AskAborted)
    );
    assert_eq!(why(&typist), [Withdrawal::Cancelled, Withdrawal::AskerGone]);
    assert_eq!(settled.draft, Some(typed()));
}

#[tokio::test]
async fn an_agent_unregistered_while_it_asks_is_an_asker_gone() {
    let (service, typist) = setup();
    let agent = service
        .register_agent(AgentRegistration {
            id: "coder".into(),
            ..Default::default()
        })
        .unwrap();
    let ask = tokio::spawn(service.ask_settled(
        ask_request(vec![question("q")], Some(&agent)),
        &CancellationToken::new(),
    ));
    held(&typist).await;
    service.unregister_agent(&agent).unwrap();
    let settled = ask.await.unwrap();
    assert_eq!(
        settled.result.unwrap_err().code(),
        Some(&ErrorCode::AskAborted)
    );
    assert_eq!(why(&typist), [Withdrawal::AskerGone]);
}

#[tokio::test]
async fn a_stopping_service_and_a_departing_answerer_say_so() {
    let (service, typist) = setup();
    let ask = tokio::spawn(service.ask_settled(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    ));
    held(&typist).await;
    service.shutdown();
    let settled = ask.await.unwrap();
    assert_eq!(
        settled.result.unwrap_err().code(),
        Some(&ErrorCode::ShuttingDown)
    );
    assert_eq!(why(&typist), [Withdrawal::ShuttingDown]);

    // An answerer that leaves the chain while it holds a request is told so; the request moves
    // on, and nothing it had goes with the settlement of a request someone else decides.
    let (service, typist) = setup();
    let log = Log::default();
    register(&service, "next", Script::Claim, Scope::All, false, &log);
    let ask = tokio::spawn(service.ask_settled(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    ));
    held(&typist).await;
    let first = service.answerers()[0].answerer;
    service.unregister_answerer(first);
    let settled = ask.await.unwrap();
    assert!(settled.result.is_ok());
    assert_eq!(settled.answerer.as_deref(), Some("next"));
    assert_eq!(settled.draft, None);
    assert_eq!(why(&typist), [Withdrawal::Unregistered]);
}
