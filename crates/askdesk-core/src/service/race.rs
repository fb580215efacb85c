//! A race group's link of the waterfall: its members are offered a request at the same moment,
//! and the first decision settles it; the others are told at once.
//!
//! What counts, member by member (docs/protocol.md, section 4.1):
//! - a valid answer (protocol 1.2) or a domain error (a dismissal is the person's decision)
//!   settles the request, and every other member still holding it is withdrawn with
//!   [`Withdrawal::AnsweredElsewhere`];
//! - `null` takes that member out of the race; the others race on;
//! - a member that breaks (an answer that breaks protocol 1.2, an error without a domain code,
//!   an offer that panics) is out of the race as well, so a malformed answer never wins against
//!   the person; its failure is the link's only when every member is out and none decided;
//! - a member that leaves (unregisters, disconnects) counts as having passed;
//! - when every member is out, the waterfall moves on (or the first failure fails the ask).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use super::{offer, settle, AskSettlement, Entry, News, OverrideReceiver, PendingGuard, Stops};
use crate::answerer::{Decision, DecisionReceiver, Failure, Offer, Withdrawal};
use crate::error::{AskError, ErrorCode, UserQuestionError};
use crate::types::{Answer, Request};
use crate::validate::check_answer;

/// What one member's decision does to its race.
enum Verdict {
    /// Settles the request: a valid answer, or a domain error.
    Settles(Result<Answer, AskError>),
    /// The member passed: the others race on.
    Passed,
    /// The member broke: it is out of the race, and this is the link's failure if nobody decides.
    Broke(AskError),
}

/// What `decision`, from the member labelled `label`, does to its race.
fn judge(request: &Request, label: &str, decision: Decision) -> Verdict {
    match decision {
        Decision::Claim(answer) => match check_answer(&request.questions, answer) {
            Ok(answer) => Verdict::Settles(Ok(answer)),
            Err(error) => Verdict::Broke(error.into()),
        },
        Decision::Delegate => Verdict::Passed,
        // A response that does not parse as an answer arrives as a `BAD_ANSWER` failure.
        Decision::Fail(Failure::Domain(error)) if error.code == ErrorCode::BadAnswer => {
            Verdict::Broke(error.into())
        }
        Decision::Fail(Failure::Domain(error)) => Verdict::Settles(Err(error.into())),
        Decision::Fail(Failure::Internal(message)) => Verdict::Broke(AskError::Internal {
            answerer: label.to_owned(),
            message,
        }),
    }
}

/// The members a race was closed for, each with the decision it sent before the close, if any.
type Closed = Vec<(Arc<Entry>, Option<Decision>)>;

/// The members still holding the request, each with the receiver it decides through, and the
/// first failure of a member that broke.
#[derive(Default)]
struct Racing {
    entries: Vec<Arc<Entry>>,
    receivers: Vec<DecisionReceiver>,
    broke: Option<(String, AskError)>,
}

impl Racing {
    fn take(&mut self, at: usize, guard: &PendingGuard) -> (Arc<Entry>, DecisionReceiver) {
        let taken = (self.entries.remove(at), self.receivers.remove(at));
        guard.set_racing(&self.entries);
        taken
    }

    /// Ends the race for every member still in it: each receiver is closed, so a decision sent
    /// from now on comes back to its member as late, and one sent before the close is returned.
    fn close(&mut self, guard: &PendingGuard) -> Closed {
        guard.set_racing(&[]);
        let receivers = std::mem::take(&mut self.receivers);
        std::mem::take(&mut self.entries)
            .into_iter()
            .zip(receivers)
            .map(|(entry, mut receiver)| (entry, receiver.close_and_take()))
            .collect()
    }

    /// `member`, out of the race, decided: the settlement when its decision settles the race.
    fn decided(
        &mut self,
        request: &Arc<Request>,
        guard: &PendingGuard,
        member: &Entry,
        decision: Decision,
    ) -> Option<AskSettlement> {
        match judge(request, &member.label, decision) {
            Verdict::Settles(result) => Some(won(request, member, result, self.close(guard))),
            Verdict::Passed => None,
            Verdict::Broke(error) => {
                self.broke.get_or_insert((member.label.clone(), error));
                None
            }
        }
    }

    /// The race is stopped from outside: a decision a member sent before the close still wins;
    /// otherwise every member still in it is told with `tell`, and `None` is returned.
    ///
    /// `Err` carries the first draft a member gave back (a person's unsent typing), for the
    /// journal.
    fn stop(
        &mut self,
        request: &Arc<Request>,
        guard: &PendingGuard,
        tell: impl Fn(&Entry) -> Option<Answer>,
    ) -> Result<AskSettlement, Option<Answer>> {
        match winner_among(request, self.close(guard)) {
            Ok(settlement) => Ok(settlement),
            Err(rest) => Err(rest
                .iter()
                .map(|(member, _)| tell(member))
                .fold(None, Option::or)),
        }
    }
}

/// The first decision any racing member sends, with that member's place.
fn first_decision(
    receivers: &mut [DecisionReceiver],
) -> impl Future<Output = (usize, Decision)> + '_ {
    std::future::poll_fn(move |cx| {
        for (at, receiver) in receivers.iter_mut().enumerate() {
            if let Poll::Ready(decision) = Pin::new(receiver).poll(cx) {
                return Poll::Ready((at, decision));
            }
        }
        Poll::Pending
    })
}

/// The request settled by `winner` with `result`: every member still in the race (`rest`) is
/// withdrawn at once, and an answer one of them sent as the race closed is kept for the journal.
fn won(
    request: &Arc<Request>,
    winner: &Entry,
    result: Result<Answer, AskError>,
    rest: Closed,
) -> AskSettlement {
    let mut crossed = Vec::new();
    let by = winner.signed(request.id);
    for (member, taken) in rest {
        if let Some(Decision::Claim(answer)) = taken {
            crossed.push((member.label.clone(), answer));
        }
        let by = by.clone();
        // What the member had of an answer is not kept: the request was answered.
        drop(
            member
                .answerer
                .withdraw(request.id, Withdrawal::AnsweredElsewhere { by }),
        );
    }
    AskSettlement {
        result,
        answerer: Some(by),
        request: request.clone(),
        crossed,
        draft: None,
    }
}

/// A decision among those sent as the race closed that settles the request, if any: the first
/// in member order wins, as the race is closed all at once.
fn winner_among(request: &Arc<Request>, mut rest: Closed) -> Result<AskSettlement, Closed> {
    for at in 0..rest.len() {
        let Some(decision) = rest[at].1.take() else {
            continue;
        };
        if let Verdict::Settles(result) = judge(request, &rest[at].0.label, decision) {
            let (winner, _) = rest.remove(at);
            return Ok(won(request, &winner, result, rest));
        }
    }
    Err(rest)
}

/// Runs a race group's link for one request. `None`: every member passed (or left, or was out
/// of scope), and the waterfall moves on.
pub(super) async fn run(
    request: &Arc<Request>,
    members: &[Arc<Entry>],
    stops: &Stops,
    guard: &PendingGuard,
    overridden: &mut OverrideReceiver,
) -> Option<AskSettlement> {
    let mut racing = Racing::default();
    for entry in members.iter().filter(|entry| entry.takes(request)) {
        match offer(entry, request) {
            // A member that settles at once: those after it are never offered the request.
            Offer::Now(decision) => {
                if let Some(settled) = racing.decided(request, guard, entry, decision) {
                    return Some(settled);
                }
            }
            Offer::Later(receiver) => {
                racing.entries.push(entry.clone());
                racing.receivers.push(receiver);
            }
        }
    }
    guard.set_racing(&racing.entries);
    guard.tell_deadline(&racing.entries);
    while !racing.entries.is_empty() {
        // A decision already sent wins over any stop or override that crossed it.
        let waited = tokio::select! {
            biased;
            (at, decision) = first_decision(&mut racing.receivers) => Ok((at, decision)),
            _ = stops.cancel.cancelled() => Err(News::Stop(UserQuestionError::aborted(), stops.cancelled_why())),
            news = guard.news(&racing.entries, stops.agent_gone.as_ref(), overridden) => Err(news),
        };
        let settled = match waited {
            Ok((at, decision)) => {
                let (entry, _) = racing.take(at, guard);
                racing.decided(request, guard, &entry, decision)
            }
            Err(News::Stop(error, why)) => {
                let told = |m: &Entry| m.answerer.withdraw(request.id, why.clone());
                Some(
                    racing
                        .stop(request, guard, told)
                        .unwrap_or_else(|draft| AskSettlement {
                            draft,
                            ..AskSettlement::by_service(request, error)
                        }),
                )
            }
            Err(News::Override(label, decision)) => {
                let overruled = |m: &Entry| {
                    m.answerer.overruled(request.id, &label);
                    None
                };
                let stopped = racing.stop(request, guard, overruled);
                Some(stopped.unwrap_or_else(|_| settle(request, label, decision)))
            }
            // Members that left while they held the request: a decision one sent before it
            // left still counts; otherwise it is told the request is no longer its own.
            Err(News::HolderGone) => {
                let mut settled = None;
                while let Some(at) = racing.entries.iter().position(|e| e.gone.is_cancelled()) {
                    let (entry, mut receiver) = racing.take(at, guard);
                    match receiver.close_and_take() {
                        Some(decision) => {
                            settled = racing.decided(request, guard, &entry, decision);
                            if settled.is_some() {
                                break;
                            }
                        }
                        None => drop(
                            entry
                                .answerer
                                .withdraw(request.id, Withdrawal::Unregistered),
                        ),
                    }
                }
                settled
            }
        };
        if settled.is_some() {
            return settled;
        }
    }
    // A pass that crossed a stop does not move the request on.
    if let Some((error, _)) = stops.stopped(&guard.inner) {
        return Some(AskSettlement::by_service(request, error));
    }
    racing.broke.map(|(label, error)| AskSettlement {
        result: Err(error),
        answerer: Some(label),
        request: request.clone(),
        crossed: Vec::new(),
        draft: None,
    })
}
