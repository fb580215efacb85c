//! The socket answerer (SPEC 5.5): relays requests to an answerer connection as
//! `user-questions/request`, withdraws them with `$/cancelRequest`, and reads the connection's
//! responses as decisions (late ones are journaled).

use std::sync::Arc;

use std::borrow::Cow;

use askdesk_core::{
    decision_channel, Answer, Answerer, Decision, ErrorCode, Failure, Offer, Request, RequestId,
    UserQuestionError,
};
use serde_json::value::RawValue;

use super::connection::{Conn, Outgoing};
use crate::journal::Record;
use crate::protocol::methods::{
    CancelParams, CancelRequest, QuestionRequest, RequestMethod, RequestParams,
};
use crate::protocol::{self, Id, Response, RpcError};
use crate::settled;

/// How many withdrawn requests per answerer connection are remembered to recognise late answers.
const WITHDRAWN_MEMORY: usize = 256;

/// An answerer that lives at the other end of a connection (SPEC 5.5).
pub(super) struct SocketAnswerer {
    conn: Arc<Conn>,
}

impl SocketAnswerer {
    pub(super) fn new(conn: Arc<Conn>) -> SocketAnswerer {
        SocketAnswerer { conn }
    }
}

impl Answerer for SocketAnswerer {
    fn offer(&self, request: &Arc<Request>) -> Offer {
        let (responder, receiver) = decision_channel();
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

    fn withdraw(&self, request: RequestId) {
        let id = {
            let mut state = self.conn.state();
            let Some(id) = state
                .outgoing
                .iter()
                .find(|(_, o)| o.request.id == request)
                .map(|(id, _)| *id)
            else {
                return;
            };
            let outgoing = state.outgoing.remove(&id).expect("found above");
            if state.withdrawn.len() == WITHDRAWN_MEMORY {
                state.withdrawn.pop_front();
            }
            state.withdrawn.push_back((id, outgoing.request));
            id
        };
        self.conn
            .out
            .push(protocol::encode_notification::<CancelRequest>(
                &CancelParams { id: Id::Number(id) },
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
        if let Some(Outgoing { request, responder }) = state.outgoing.remove(&id) {
            drop(state);
            if let Err(Decision::Claim(answer)) = responder.decide(decision(response.result)) {
                self.record_late(&request, answer);
            }
        } else if let Some(at) = state.withdrawn.iter().position(|(n, _)| *n == id) {
            let (_, request) = state.withdrawn.remove(at).expect("position found");
            drop(state);
            if let Decision::Claim(answer) = decision(response.result) {
                self.record_late(&request, answer);
            }
        } else {
            tracing::debug!(id, "ignored a response to no pending request");
        }
    }

    fn record_late(&self, request: &Request, answer: Answer) {
        tracing::info!(request = %request.id, "discarded an answer that came after the request settled");
        if let Some(journal) = &self.shared.config.journal {
            let record = Record::late_answer(request, answer, self.state().client.clone());
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
                    UserQuestionError::bad_answer(format_args!("{path}: {problem}")),
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
