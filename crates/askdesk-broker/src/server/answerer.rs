//! The socket answerer (protocol 5.5): relays requests to an answerer connection as
//! `user-questions/request`, withdraws them with `$/cancelRequest` saying why, tells a race
//! group's member whose reply settled a request with `askdesk/settled` (protocol 4.2), tells it
//! when a request's deadline runs out with `askdesk/deadline` (4.3), and reads
//! the connection's responses as decisions (late ones are journaled).

use std::sync::{Arc, OnceLock};

use std::borrow::Cow;

use askdesk_core::{
    decision_channel, Answer, Answerer, Decision, ErrorCode, Failure, Offer, Request, RequestId,
    UserQuestionError, Withdrawal,
};
use askdesk_journal::Record;
use serde_json::value::RawValue;

use super::connection::{Conn, ConnState, Outgoing, Withdrawn};
use crate::protocol::methods::{
    CancelParams, CancelReason, CancelRequest, Deadline, DeadlineParams, QuestionRequest,
    RequestMethod, RequestParams, Settled, SettledParams,
};
use crate::protocol::{self, Id, Response, RpcError};
use crate::settled;

/// How many withdrawn requests per answerer connection are remembered to recognise late answers.
const WITHDRAWN_MEMORY: usize = 256;

/// An answerer that lives at the other end of a connection (protocol 5.5).
pub(super) struct SocketAnswerer {
    conn: Arc<Conn>,
    /// Its label in the chain (the registration's, else its id), set once registered.
    label: OnceLock<Arc<str>>,
    /// A member of a race group.
    raced: bool,
}

impl SocketAnswerer {
    pub(super) fn new(conn: Arc<Conn>, raced: bool) -> SocketAnswerer {
        SocketAnswerer {
            conn,
            label: OnceLock::new(),
            raced,
        }
    }

    /// Names it as the chain does, once its registration has an id.
    pub(super) fn set_label(&self, label: &str) {
        let _ = self.label.set(label.into());
    }

    fn label(&self) -> Arc<str> {
        // Offered before `set_label` ran (a registration racing its first request): the
        // connection's client is the best name there is.
        self.label
            .get()
            .cloned()
            .unwrap_or_else(|| self.conn.state().client.as_deref().unwrap_or("?").into())
    }
}

impl Answerer for SocketAnswerer {
    fn offer(&self, request: &Arc<Request>) -> Offer {
        let (responder, receiver) = decision_channel();
        let label = self.label();
        let id = {
            let mut state = self.conn.state();
            if state.closed {
                return Offer::Now(Decision::Delegate);
            }
            state.next_outgoing += 1;
            let id = state.next_outgoing;
            state.outgoing.insert(
                id,
                Outgoing {
                    request: request.clone(),
                    responder,
                    label,
                    raced: self.raced,
                },
            );
            id
        };
        let params = RequestParams {
            questions: Cow::Borrowed(&request.questions),
            agent: request.agent.as_ref().map(Cow::Borrowed),
        };
        self.conn.shared.busy_poll.touch();
        self.conn
            .out
            .push(protocol::encode_request::<QuestionRequest>(
                &Id::Number(id),
                &params,
            ));
        Offer::Later(receiver)
    }

    /// Whatever the reason, the socket answerer is sent `$/cancelRequest` (protocol 5.5), with
    /// the reason and who settled it (4.2); it has nothing of an answer to give back.
    fn withdraw(&self, request: RequestId, why: Withdrawal) -> Option<Answer> {
        let (reason, by) = match why {
            Withdrawal::AnsweredElsewhere { by } => (CancelReason::AnsweredElsewhere, Some(by)),
            Withdrawal::Cancelled => (CancelReason::Withdrawn, None),
            Withdrawal::AskerGone => (CancelReason::AgentGone, None),
            Withdrawal::ShuttingDown => (CancelReason::ShuttingDown, None),
            Withdrawal::Unregistered => (CancelReason::Unregistered, None),
        };
        self.withdraw_for(request, reason, by);
        None
    }

    /// The request's deadline runs out at `at` (or no longer runs): `askdesk/deadline`, while
    /// the connection holds the request.
    fn deadline(&self, request: RequestId, at: Option<std::time::SystemTime>) {
        let Some(id) = outgoing_id(&self.conn.state(), request) else {
            return;
        };
        let at = at.map(askdesk_journal::millis);
        self.conn
            .out
            .push(protocol::encode_notification::<Deadline>(&DeadlineParams {
                id: Id::Number(id),
                at,
            }));
    }

    /// An answer rule's deadline decided the request: `$/cancelRequest` with `expired`.
    fn overruled(&self, request: RequestId, by: &str) {
        self.withdraw_for(request, CancelReason::Expired, Some(by.to_owned()));
    }

    /// A race group's member whose reply settles the request is told so (`askdesk/settled`), so
    /// it knows its answer was used without guessing from silence. An answerer alone on its link
    /// is not: protocol 5.5 sends it nothing after its reply.
    fn signer(&self, request: RequestId) -> Option<String> {
        if self.raced {
            let mut state = self.conn.state();
            if let Some(at) = state.answered.iter().position(|(_, r)| *r == request) {
                let (id, _) = state.answered.remove(at).expect("position found");
                drop(state);
                self.conn
                    .out
                    .push(protocol::encode_notification::<Settled>(&SettledParams {
                        id: Id::Number(id),
                    }));
            }
        }
        None
    }
}

/// The id this connection was sent `request` under, while it holds it.
fn outgoing_id(state: &ConnState, request: RequestId) -> Option<i64> {
    state
        .outgoing
        .iter()
        .find(|(_, o)| o.request.id == request)
        .map(|(id, _)| *id)
}

impl SocketAnswerer {
    /// Drops `request` and sends `$/cancelRequest` for it with `reason` and `by`.
    fn withdraw_for(&self, request: RequestId, reason: CancelReason, by: Option<String>) {
        let id = {
            let mut state = self.conn.state();
            let Some(id) = outgoing_id(&state, request) else {
                // A race member whose answer crossed the winner's is told all the same.
                let Some(at) = state.answered.iter().position(|(_, r)| *r == request) else {
                    return;
                };
                let (id, _) = state.answered.remove(at).expect("position found");
                drop(state);
                self.cancel(id, reason, by);
                return;
            };
            let outgoing = state.outgoing.remove(&id).expect("found above");
            if state.withdrawn.len() == WITHDRAWN_MEMORY {
                state.withdrawn.pop_front();
            }
            state.withdrawn.push_back(Withdrawn {
                id,
                request: outgoing.request,
                label: outgoing.label,
            });
            id
        };
        self.cancel(id, reason, by);
    }

    fn cancel(&self, id: i64, reason: CancelReason, by: Option<String>) {
        self.conn
            .out
            .push(protocol::encode_notification::<CancelRequest>(
                &CancelParams {
                    id: Id::Number(id),
                    reason: Some(reason),
                    by,
                },
            ));
    }
}

impl Conn {
    /// A response from this connection as an answerer: the decision on a relayed request, or a
    /// late answer to one already withdrawn.
    pub(super) fn handle_response(&self, response: Response) {
        let Id::Number(id) = response.id else {
            return tracing::debug!(id = ?response.id, "ignored a response to no request of ours");
        };
        let mut state = self.state();
        if let Some(Outgoing {
            request,
            responder,
            label,
            raced,
        }) = state.outgoing.remove(&id)
        {
            // Remembered before deciding: the race this answer may lose withdraws its member at
            // once, and must find it.
            if raced {
                if state.answered.len() == WITHDRAWN_MEMORY {
                    state.answered.pop_front();
                }
                state.answered.push_back((id, request.id));
            }
            drop(state);
            if let Err(Decision::Claim(answer)) = responder.decide(decision(response.result)) {
                self.record_late(&request, answer, &label);
            }
        } else if let Some(at) = state.withdrawn.iter().position(|w| w.id == id) {
            let Withdrawn { request, label, .. } =
                state.withdrawn.remove(at).expect("position found");
            drop(state);
            if let Decision::Claim(answer) = decision(response.result) {
                self.record_late(&request, answer, &label);
            }
        } else {
            tracing::warn!(id, "ignored a response to no pending request (answered already, or withdrawn long ago)");
        }
    }

    fn record_late(&self, request: &Request, answer: Answer, label: &str) {
        tracing::info!(request = %request.id, "discarded an answer that came after the request settled");
        if let Some(journal) = &self.shared.config.journal {
            let record = Record::late_answer(request, answer, Some(label.to_owned()));
            tokio::spawn(settled::append(journal, record));
        }
    }
}

/// What an answerer connection's response to a `user-questions/request` means for the waterfall.
fn decision(result: Result<Box<RawValue>, RpcError>) -> Decision {
    match result {
        Ok(raw) => {
            match protocol::from_str_with_path::<<QuestionRequest as RequestMethod>::Result>(
                raw.get(),
            ) {
                Ok(Some(answer)) => Decision::Claim(answer),
                Ok(None) => Decision::Delegate,
                Err((path, problem)) => Decision::Fail(Failure::Domain(
                    UserQuestionError::bad_answer(if path == "." {
                        problem
                    } else {
                        format!("{path}: {problem}")
                    }),
                )),
            }
        }
        Err(error) => match error.data_code() {
            Some(code) => Decision::Fail(Failure::Domain(UserQuestionError::new(
                ErrorCode::parse(code),
                error.message,
            ))),
            None => Decision::Fail(Failure::Internal(error.message)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad_answer_of(result: &str) -> String {
        let raw = RawValue::from_string(result.to_owned()).unwrap();
        match decision(Ok(raw)) {
            Decision::Fail(Failure::Domain(error)) => error.to_string(),
            _ => panic!("{result} was taken"),
        }
    }

    #[test]
    fn a_bad_answer_names_its_field_in_json_terms() {
        assert_eq!(
            bad_answer_of("{}"),
            "the answerer sent a bad answer: missing field `answers`"
        );
        assert_eq!(
            bad_answer_of(r#"{"answers":[7]}"#),
            "the answerer sent a bad answer: answers[0]: invalid type: integer `7`, expected an object"
        );
    }
}
