//! What the history journal records when an ask settles, and the append through the journal's
//! writer (group commit).

use std::future::Future;
use std::sync::Arc;
use std::time::SystemTime;

use askdesk_core::{Answer, AskError, ErrorCode, Request};
use askdesk_journal::{millis, AskRecord, Journal, Line, Outcome, RecordedError};

/// The journal record of `request`, settled with `result`; `None` for a malformed request, which
/// was never a question to anyone.
pub(crate) fn record(
    request: Arc<Request>,
    result: &Result<Answer, AskError>,
) -> Option<AskRecord> {
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
    Some(AskRecord {
        request,
        settled_at: millis(SystemTime::now()),
        outcome,
        answer,
        error,
        answerer: None,
        draft: None,
    })
}

/// Queues the record for the journal's writer (group commit) and resolves once it is on disk; a
/// journal failure is logged, never lost silently, and never withholds the agent's answer.
pub(crate) fn append(
    journal: &Journal,
    record: impl Into<Line>,
) -> impl Future<Output = ()> + Send + 'static {
    let commit = journal.submit(record);
    async move {
        if let Err(error) = commit.await {
            tracing::error!(%error, "could not record a settled request in the history journal")
        }
    }
}
