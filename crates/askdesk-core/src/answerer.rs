//! The [`Answerer`] trait and the one-shot channel through which an answerer decides later.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::SystemTime;

use tokio::sync::oneshot;

use crate::error::UserQuestionError;
use crate::types::{Answer, Request, RequestId};

/// Why a request an answerer held settled without it: what [`Answerer::withdraw`] is told.
///
/// The asker gets `ASK_ABORTED` (or `SHUTTING_DOWN`) whichever it is; only the answerer holding
/// the request, which may have shown it to a person, tells them apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Withdrawal {
    /// The asker withdrew the question (`$/cancelRequest`, a dropped ask): it no longer needs the
    /// answer, e.g. the call was settled in the agent's own terminal.
    Cancelled,
    /// The asker went: its connection closed (its process ended) or its agent was unregistered.
    AskerGone,
    /// The broker is shutting down.
    ShuttingDown,
    /// This answerer left the chain while it held the request; the request moves on.
    Unregistered,
    /// Another member of this answerer's race group settled it first (its answer, or its
    /// domain error such as a dismissal); `by` is that member's label. An answer this answerer
    /// sent at the same moment lost and is recorded as a late answer.
    AnsweredElsewhere { by: String },
}

/// Something on the waterfall that may answer a request.
///
/// `offer` must not block: an answerer that needs time (a human, a socket peer) returns
/// [`Offer::Later`] and decides through the [`Responder`]. An answerer whose responder is dropped
/// without a decision has delegated; so has one that is unregistered while holding a request.
pub trait Answerer: Send + Sync + 'static {
    /// Offers a request to this answerer.
    fn offer(&self, request: &Arc<Request>) -> Offer;

    /// The request this answerer holds settled without it, for the reason `why` (the asker
    /// cancelled, the asker went, the broker is shutting down): drop it. Any later decision is
    /// discarded.
    ///
    /// Returns what the answerer had of an answer so far, unsent and unchecked (a person's choices
    /// and typing), which the history journal keeps with the withdrawn request; `None` when it had
    /// nothing.
    fn withdraw(&self, request: RequestId, why: Withdrawal) -> Option<Answer> {
        let _ = (request, why);
        None
    }

    /// The request this answerer holds was decided by an override while it waited (an answer
    /// rule's deadline), signed `by` (`rule:<name>`), as the journal records it. Drop it as for
    /// [`Answerer::withdraw`] (as cancelled), which is what this does unless an answerer tells
    /// the two apart.
    fn overruled(&self, request: RequestId, by: &str) {
        let _ = by;
        self.withdraw(request, Withdrawal::Cancelled);
    }

    /// The time `request`'s deadline runs out (an answer rule's `after`, [`Service::set_deadline`]),
    /// told while this answerer holds it: once after the offer when a deadline runs, and again
    /// whenever it is moved, held (`None`: no clock runs) or released. For showing a countdown
    /// only: the deadline's owner decides when the time is up. Does nothing unless an answerer
    /// shows it.
    ///
    /// [`Service::set_deadline`]: crate::Service::set_deadline
    fn deadline(&self, request: RequestId, at: Option<SystemTime>) {
        let _ = (request, at);
    }

    /// Who, among those this answerer speaks for, made the decision it just sent for `request`
    /// (a paired phone's name), asked once as that decision settles the request. The settlement
    /// is then signed `<label>:<signer>` (journals show it as the answerer, the other members of a
    /// race group are told it) instead of the answerer's label alone. `None`, the default: the
    /// label alone.
    fn signer(&self, request: RequestId) -> Option<String> {
        let _ = request;
        None
    }
}

/// An answerer's reply to an offer.
pub enum Offer {
    /// Decided at once (rules, policies, do-not-disturb).
    Now(Decision),
    /// Decided later through the [`Responder`] paired with this receiver.
    Later(DecisionReceiver),
}

/// What an answerer decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Claims the request with this answer.
    Claim(Answer),
    /// Passes the request to the next answerer.
    Delegate,
    /// Fails the ask.
    Fail(Failure),
}

/// How an answerer fails an ask.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// A domain error: reaches the asker unchanged, code and message.
    Domain(UserQuestionError),
    /// Anything else: reaches the asker as an internal error carrying this message.
    Internal(String),
}

/// Creates the channel an answerer decides through when it returns [`Offer::Later`].
pub fn decision_channel() -> (Responder, DecisionReceiver) {
    let (tx, rx) = oneshot::channel();
    (Responder(tx), DecisionReceiver(rx))
}

/// The sending half: decide once. Dropping it undecided counts as delegating.
#[derive(Debug)]
pub struct Responder(oneshot::Sender<Decision>);

impl Responder {
    /// Sends the decision. `Err` gives it back when the request had already settled (a late answer).
    pub fn decide(self, decision: Decision) -> Result<(), Decision> {
        self.0.send(decision)
    }

    /// Whether the request already settled without this answerer.
    pub fn is_withdrawn(&self) -> bool {
        self.0.is_closed()
    }
}

/// The receiving half, awaited by the service. Resolves to `Delegate` when the responder is dropped.
#[derive(Debug)]
pub struct DecisionReceiver(oneshot::Receiver<Decision>);

impl DecisionReceiver {
    /// Closes the channel, so a later `decide` gets its decision back (a late answer), and returns
    /// a decision that was sent before the close, if any.
    pub fn close_and_take(&mut self) -> Option<Decision> {
        self.0.close();
        self.0.try_recv().ok()
    }
}

impl Future for DecisionReceiver {
    type Output = Decision;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Decision> {
        Pin::new(&mut self.0)
            .poll(cx)
            .map(|result| result.unwrap_or(Decision::Delegate))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn dropped_responder_delegates() {
        let (responder, receiver) = decision_channel();
        drop(responder);
        assert_eq!(receiver.await, Decision::Delegate);
    }

    #[tokio::test]
    async fn late_decision_comes_back() {
        let (responder, receiver) = decision_channel();
        drop(receiver);
        assert!(responder.is_withdrawn());
        assert_eq!(
            responder.decide(Decision::Delegate),
            Err(Decision::Delegate)
        );
    }
}
