//! What the history journal records when an ask settles, and the append off the async path.

use std::time::SystemTime;

use askdesk_core::{AgentInfo, Answer, AskError, ErrorCode, Question};

use crate::journal::{millis, Journal, Outcome, Record, RecordedError};

/// The journal record of an ask that settled with `result`; `None` for a malformed request,
/// which was never a question to anyone.
pub(crate) fn record(
    asked_at: SystemTime,
    agent: Option<AgentInfo>,
    questions: Vec<Question>,
    result: &Result<Answer, AskError>,
) -> Option<Record> {
    let (outcome, answer, error) = match result {
        Ok(answer) => (Outcome::Answered, Some(answer.clone()), None),
        Err(AskError::Invalid(_)) => return None,
        Err(AskError::Question(e)) => {
            let outcome = match e.code {
                ErrorCode::AskCancelled => Outcome::Dismissed,
                ErrorCode::AskAborted => Outcome::Withdrawn,
                _ => Outcome::Failed,
            };
            (
                outcome,
                None,
                Some(RecordedError {
                    code: Some(e.code.as_str().to_owned()),
                    message: e.message.clone(),
                }),
            )
        }
        Err(AskError::Internal { message, .. }) => (
            Outcome::Failed,
            None,
            Some(RecordedError {
                code: None,
                message: message.clone(),
            }),
        ),
    };
    Some(Record {
        asked_at: millis(asked_at),
        settled_at: millis(SystemTime::now()),
        agent,
        questions,
        outcome,
        answer,
        error,
        answerer: None,
    })
}

/// Appends off the async path; a journal failure is logged, never lost silently, and never
/// withholds the agent's answer.
pub(crate) async fn append(journal: Journal, record: Record) {
    match tokio::task::spawn_blocking(move || journal.append(&record)).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => {
            tracing::error!(%error, "could not record a settled request in the history journal")
        }
        Err(error) => tracing::error!(%error, "the journal writer panicked"),
    }
}
