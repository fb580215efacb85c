//! Shared fixtures of the askdesk-core integration tests: question builders, the protocol section 2
//! messages, and a scripted answerer that records what it was offered and told to drop.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use askdesk_core::{
    decision_channel, Answer, AnswerItem, Answerer, AnswererId, AnswererRegistration, AskError,
    AskRequest, Decision, Failure, Handle, Intent, Offer, Question, Request, RequestId, Responder,
    Scope, Service, Withdrawal,
};
use tokio::sync::mpsc;

// The messages of protocol section 2, written out here rather than taken from the crate's
// constructors, so that a changed constructor fails the tests.
pub const ABORTED: &str = "ask_user_question was aborted before the user answered";
pub const EMPTY: &str = "ask_user_question requires at least one question";
pub const NOT_LIVE: &str =
    "human interaction requires the exact live calling agent when an agent is supplied";
pub const DELEGATED: &str = "human interaction is unavailable while the calling agent is owned by another live agent; include the unresolved question or decision in the child agent's final result";
pub const NO_PROVIDER: &str = "no user-questions answerer accepted the request";
pub const CANCELLED: &str = "the user cancelled ask_user_question";
pub const SHUTTING_DOWN: &str = "askdesk shut down before the user answered";

// The crate's shared builders, for `use common::*`; not every test uses each.
#[allow(unused_imports)]
pub use askdesk_core::testing::{member, option, Holding};

/// A single-select question with the options "Yes" and "No".
pub fn question(id: &str) -> Question {
    askdesk_core::testing::question(id, &format!("Proceed with {id}?"), &["Yes", "No"])
}

/// A question with an intent of `kind` whose options are "Approve" and "Revise".
pub fn with_intent(id: &str, kind: &str, approve: &str, detail: Option<&str>) -> Question {
    Question {
        header: Some("Plan".to_owned()),
        detail: detail.map(str::to_owned),
        intent: Some(Intent {
            kind: kind.to_owned(),
            approve: approve.to_owned(),
        }),
        ..askdesk_core::testing::question(id, "Approve the plan?", &["Approve", "Revise"])
    }
}

/// A rule-abiding answer to `questions`: every question skipped.
pub fn skipped(questions: &[Question]) -> Answer {
    Answer {
        answers: questions
            .iter()
            .map(|q| AnswerItem::skipped(q.id.clone()))
            .collect(),
    }
}

pub fn ask_request(questions: Vec<Question>, agent: Option<&Handle>) -> AskRequest {
    AskRequest {
        questions,
        agent: agent.cloned(),
    }
}

/// Asserts that `result` is the domain error with exactly this code and message.
#[track_caller]
pub fn assert_question_error<T: std::fmt::Debug>(
    result: Result<T, AskError>,
    code: &str,
    message: &str,
) {
    match result {
        Err(AskError::Question(error)) => {
            assert_eq!(
                (error.code.as_str(), error.message.as_str()),
                (code, message)
            );
        }
        other => panic!("expected {code} {message:?}, got {other:?}"),
    }
}

/// What a scripted answerer saw, in the order it happened across all answerers sharing a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Offered(String, RequestId),
    Withdrawn(String, RequestId),
    /// Withdrawn because an override decided it, signed with the override's label.
    Overruled(String, RequestId, String),
    /// Withdrawn because another member of its race group settled it, named by its label.
    Lost(String, RequestId, String),
}

#[derive(Debug, Clone, Default)]
pub struct Log {
    events: Arc<Mutex<Vec<Event>>>,
    /// Why each request was withdrawn, in order.
    why: Arc<Mutex<Vec<(RequestId, Withdrawal)>>>,
}

impl Log {
    pub fn events(&self) -> Vec<Event> {
        self.events.lock().unwrap().clone()
    }

    /// The (request, reason) of every withdrawal, in order.
    pub fn withdrawn_why(&self) -> Vec<(RequestId, Withdrawal)> {
        self.why.lock().unwrap().clone()
    }

    /// The names of the answerers offered a request, in order.
    pub fn offered(&self) -> Vec<String> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Offered(name, _) => Some(name),
                Event::Withdrawn(..) | Event::Overruled(..) | Event::Lost(..) => None,
            })
            .collect()
    }

    /// The (answerer, request) pairs that were withdrawn, in order.
    pub fn withdrawn(&self) -> Vec<(String, RequestId)> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Withdrawn(name, id) => Some((name, id)),
                Event::Offered(..) | Event::Overruled(..) | Event::Lost(..) => None,
            })
            .collect()
    }

    /// The (answerer, request, override label) of requests overruled while held, in order.
    pub fn overruled(&self) -> Vec<(String, RequestId, String)> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Overruled(name, id, by) => Some((name, id, by)),
                Event::Offered(..) | Event::Withdrawn(..) | Event::Lost(..) => None,
            })
            .collect()
    }

    /// The (answerer, request, winner) of race members withdrawn because another won, in order.
    pub fn lost(&self) -> Vec<(String, RequestId, String)> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Lost(name, id, by) => Some((name, id, by)),
                Event::Offered(..) | Event::Withdrawn(..) | Event::Overruled(..) => None,
            })
            .collect()
    }

    /// The names offered a request since the last call, and forgets them.
    pub fn take_offered(&self) -> Vec<String> {
        let events = std::mem::take(&mut *self.events.lock().unwrap());
        Log {
            events: Arc::new(Mutex::new(events)),
            why: Arc::default(),
        }
        .offered()
    }

    fn push(&self, event: Event) {
        self.events.lock().unwrap().push(event);
    }
}

/// How a [`Scripted`] answerer replies to every offer.
#[derive(Debug, Clone)]
pub enum Script {
    /// `Offer::Now(Decision::Delegate)`.
    Delegate,
    /// Claims at once with every question skipped (a rule-abiding answer).
    Claim,
    /// Claims at once with this answer, whatever the request.
    Answer(Answer),
    /// Fails at once.
    Fail(Failure),
    /// `Offer::Later`: the responder goes to the test through [`Holds`].
    Hold,
    /// Panics in `offer` (a bug in an answerer).
    Panic,
}

/// A request an answerer holds, with the responder the test decides through.
#[derive(Debug)]
pub struct Held {
    pub request: Arc<Request>,
    pub responder: Responder,
}

/// The requests a holding answerer was offered, in order.
pub struct Holds(mpsc::UnboundedReceiver<Held>);

impl Holds {
    /// The next request offered to the answerer. Fails the test rather than hang when none comes.
    pub async fn next(&mut self) -> Held {
        tokio::time::timeout(Duration::from_secs(30), self.0.recv())
            .await
            .expect("the answerer was offered a request in time")
            .expect("the answerer is still registered")
    }

    /// Whether a request is waiting that the test has not taken yet.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// An answerer that follows a [`Script`] and logs offers and withdrawals.
pub struct Scripted {
    name: String,
    script: Script,
    log: Log,
    holds: mpsc::UnboundedSender<Held>,
}

impl Answerer for Scripted {
    fn offer(&self, request: &Arc<Request>) -> Offer {
        self.log.push(Event::Offered(self.name.clone(), request.id));
        match &self.script {
            Script::Delegate => Offer::Now(Decision::Delegate),
            Script::Claim => Offer::Now(Decision::Claim(skipped(&request.questions))),
            Script::Answer(answer) => Offer::Now(Decision::Claim(answer.clone())),
            Script::Fail(failure) => Offer::Now(Decision::Fail(failure.clone())),
            Script::Panic => panic!("a scripted answerer's bug"),
            Script::Hold => {
                let (responder, receiver) = decision_channel();
                // When the test dropped its end the responder is dropped too: that delegates.
                let _ = self.holds.send(Held {
                    request: request.clone(),
                    responder,
                });
                Offer::Later(receiver)
            }
        }
    }

    fn withdraw(&self, request: RequestId, why: Withdrawal) -> Option<Answer> {
        let event = match &why {
            Withdrawal::AnsweredElsewhere { by } => {
                Event::Lost(self.name.clone(), request, by.clone())
            }
            _ => Event::Withdrawn(self.name.clone(), request),
        };
        self.log.push(event);
        self.log.why.lock().unwrap().push((request, why));
        None
    }

    fn overruled(&self, request: RequestId, by: &str) {
        self.log
            .push(Event::Overruled(self.name.clone(), request, by.to_owned()));
    }
}

pub fn scripted(name: &str, script: Script, log: &Log) -> (Arc<Scripted>, Holds) {
    let (tx, rx) = mpsc::unbounded_channel();
    let answerer = Scripted {
        name: name.to_owned(),
        script,
        log: log.clone(),
        holds: tx,
    };
    (Arc::new(answerer), Holds(rx))
}

/// Registers a scripted answerer labelled `name`.
pub fn register(
    service: &Service,
    name: &str,
    script: Script,
    scope: Scope,
    prepend: bool,
    log: &Log,
) -> (AnswererId, Holds) {
    register_in(service, name, script, scope, prepend, None, log)
}

/// Registers a scripted answerer labelled `name`, in race group `group` when one is given.
pub fn register_in(
    service: &Service,
    name: &str,
    script: Script,
    scope: Scope,
    prepend: bool,
    group: Option<&str>,
    log: &Log,
) -> (AnswererId, Holds) {
    let (answerer, holds) = scripted(name, script, log);
    let registration = AnswererRegistration {
        scope,
        prepend,
        ..member(name, group)
    };
    let id = service
        .register_answerer(registration, answerer)
        .expect("the answerer registers");
    (id, holds)
}
