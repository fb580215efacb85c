//! The question and answer builders and the holding answerer the workspace's tests share: built
//! only for this crate's tests and for crates that turn on the `test-support` feature (their
//! dev-dependencies), never into a binary.

use std::sync::{Arc, Mutex};

use crate::answerer::{decision_channel, Answerer, Decision, Offer, Responder};
use crate::service::{AnswererRegistration, AskRequest, Scope, Service};
use crate::sync::lock;
use crate::types::{Answer, AnswerItem, Question, QuestionOption, Request, RequestId};

/// The option labelled `label`, with nothing else set.
pub fn option(label: &str) -> QuestionOption {
    QuestionOption {
        label: label.to_owned(),
        ..QuestionOption::default()
    }
}

/// A single-select question `id` asking `text`, one option for each of `labels` (none: a
/// free-text question).
pub fn question(id: &str, text: &str, labels: &[&str]) -> Question {
    Question {
        id: id.to_owned(),
        question: text.to_owned(),
        options: labels.iter().copied().map(option).collect(),
        ..Question::default()
    }
}

/// What an asker that names no agent sends with `questions`.
pub fn ask(questions: Vec<Question>) -> AskRequest {
    AskRequest {
        questions,
        agent: None,
    }
}

/// The answer to question `id` that chooses `labels`.
pub fn chosen(id: &str, labels: &[&str]) -> AnswerItem {
    AnswerItem {
        id: id.to_owned(),
        selected: labels.iter().copied().map(str::to_owned).collect(),
        ..AnswerItem::default()
    }
}

/// The answer to question `id` that types `text` and chooses nothing.
pub fn typed(id: &str, text: &str) -> AnswerItem {
    AnswerItem {
        id: id.to_owned(),
        custom: Some(text.to_owned()),
        ..AnswerItem::default()
    }
}

/// The answer to a batch of the one question `id` that chooses `label`.
pub fn choose(id: &str, label: &str) -> Answer {
    Answer {
        answers: vec![chosen(id, &[label])],
    }
}

/// How an answerer labelled `label` joins the end of the chain for every request, in race group
/// `group` when one is given.
pub fn member(label: &str, group: Option<&str>) -> AnswererRegistration {
    AnswererRegistration {
        scope: Scope::All,
        prepend: false,
        label: Some(label.to_owned()),
        group: group.map(str::to_owned),
    }
}

/// Decides pending request `id` with `answer`, as answer rule `by`'s deadline would (`by` is
/// `rule:<name>`). Panics when the request is not pending or its override was taken.
pub fn overrule(service: &Service, id: RequestId, by: &str, answer: Answer) {
    service
        .take_override(id, by)
        .expect("the request is pending and its override free")
        .decide(Decision::Claim(answer))
        .expect("the request is still pending");
}

/// An answerer that holds every request it is offered until the test decides for it through the
/// responder it takes ([`Holding::take`]). Told a request was withdrawn, it does nothing: a
/// decision for it then is discarded.
#[derive(Default)]
pub struct Holding {
    held: Mutex<Vec<Responder>>,
}

impl Holding {
    /// The responder of the request offered last of those still held, taken from the holder.
    pub fn take(&self) -> Option<Responder> {
        lock(&self.held).pop()
    }

    /// How many requests it holds whose responder the test has not taken.
    pub fn count(&self) -> usize {
        lock(&self.held).len()
    }
}

impl Answerer for Holding {
    fn offer(&self, _request: &Arc<Request>) -> Offer {
        let (responder, receiver) = decision_channel();
        lock(&self.held).push(responder);
        Offer::Later(receiver)
    }
}
