//! Exit statuses, and the one error type every command fails with (printed as `Error: <message>`).
//!
//! The statuses are a contract with scripts: each broker error code has its own, listed in
//! `askdesk ask --help` and docs/cli.md. Changing a number is a breaking change.

use std::path::PathBuf;
use std::process::ExitCode;

use askdesk_broker::client::ClientError;
use askdesk_broker::protocol::{self, RpcError};
use askdesk_core::ErrorCode;

/// Why `askdesk` exited. `0` is success and is not listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Status {
    /// `serve` could not start: another broker is live on the socket, or the socket is unusable;
    /// `doctor` found a problem.
    Startup = 1,
    /// The command line is wrong (unknown flag, missing value, conflicting flags).
    Usage = 2,
    /// No broker is listening on the socket.
    NoBroker = 3,
    /// The questions break the shape rules, or the `--json` input is not a batch (-32602).
    InvalidParams = 4,
    /// An agent registry error: `AGENT_ID_TAKEN` or `AGENT_NOT_LIVE` (-32003).
    Registry = 5,
    /// A broker limit was reached: too many connections or pending asks (-32004).
    Limit = 6,
    AskAborted = 10,
    EmptyQuestions = 11,
    CallerNotLive = 12,
    DelegatedCaller = 13,
    BadIntent = 14,
    NoProvider = 15,
    AskCancelled = 16,
    BadAnswer = 17,
    ShuttingDown = 18,
    /// A `UserQuestionError` with a code an answerer brought (not one of the above).
    OtherCode = 19,
    /// An answerer failed with a non-domain error (-32603), the connection broke, the broker did
    /// not answer in time (`status --timeout`), or an I/O error.
    Internal = 20,
    BadImage = 21,
    ImageLimit = 22,
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> ExitCode {
        ExitCode::from(status as u8)
    }
}

impl Status {
    /// The status for a `UserQuestionError` code (`data.code` of a -32001 error).
    ///
    /// The match is exhaustive on purpose: a code added to the core does not compile until it has
    /// a status here (and a row in `exit_table!`).
    pub fn for_question_code(code: &ErrorCode) -> Status {
        match code {
            ErrorCode::AskAborted => Status::AskAborted,
            ErrorCode::EmptyQuestions => Status::EmptyQuestions,
            ErrorCode::CallerNotLive => Status::CallerNotLive,
            ErrorCode::DelegatedCaller => Status::DelegatedCaller,
            ErrorCode::BadIntent => Status::BadIntent,
            ErrorCode::NoProvider => Status::NoProvider,
            ErrorCode::AskCancelled => Status::AskCancelled,
            ErrorCode::BadAnswer => Status::BadAnswer,
            ErrorCode::ShuttingDown => Status::ShuttingDown,
            ErrorCode::BadImage => Status::BadImage,
            ErrorCode::ImageLimit => Status::ImageLimit,
            ErrorCode::Other(_) => Status::OtherCode,
        }
    }

    /// The status for a JSON-RPC error from the broker.
    pub fn for_rpc(error: &RpcError) -> Status {
        match error.code {
            protocol::INVALID_PARAMS => Status::InvalidParams,
            protocol::REGISTRY_ERROR => Status::Registry,
            protocol::LIMIT_REACHED => Status::Limit,
            protocol::USER_QUESTION_ERROR => match error.data_code() {
                Some(code) => Status::for_question_code(&ErrorCode::parse(code)),
                None => Status::OtherCode,
            },
            _ => Status::Internal,
        }
    }
}

/// The exit-status table as `askdesk ask --help` and docs/cli.md show it, as a literal so that
/// `concat!` can place it in the help text; tests check it against [`Status`].
macro_rules! exit_table {
    () => {
        "\
Exit status:
   0  the answer was printed
   2  usage error (bad flags)
   3  no broker is running (start one: `askdesk serve`, or open the askdesk desktop app)
   4  invalid params: the questions break the shape rules, or --json/--detail-file is unreadable or not a batch
   5  agent registry error (AGENT_ID_TAKEN: the --agent-id is live already; AGENT_NOT_LIVE)
   6  a broker limit was reached (connections, pending asks, message size)
  10  ASK_ABORTED       the ask was cancelled (Ctrl-C, --timeout) before the user answered
  11  EMPTY_QUESTIONS   the batch has no question
  12  CALLER_NOT_LIVE   --agent-id/--agent-instance name no live agent
  13  DELEGATED_CALLER  the agent is owned by another live agent (--owner)
  14  BAD_INTENT        the plan-review intent is inconsistent (approve label not an option, or no detail)
  15  NO_PROVIDER       no answerer accepted the request
  16  ASK_CANCELLED     the user dismissed the questions
  17  BAD_ANSWER        an answerer sent an answer that breaks the rules
  18  SHUTTING_DOWN     the broker shut down before the user answered
  19  any other error code an answerer brought
  20  internal error: an answerer failed, the connection broke, or an I/O error
  21  BAD_IMAGE         an attached image is malformed, of a refused type, or a path not read
  22  IMAGE_LIMIT       an attached image, or the request's images together, exceed a limit"
    };
}
pub(crate) use exit_table;

/// Everything a command can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line is inconsistent in a way clap cannot express; fix the flags.
    #[error("{0}")]
    Usage(String),
    /// The input (a `--json` batch, a detail file) cannot be used; fix the input.
    #[error("{0}")]
    Input(String),
    /// No broker listens on the socket; start one.
    #[error(
        "no askdesk broker is running at {}; start one with `askdesk serve` or open the askdesk desktop app",
        path.display()
    )]
    NoBroker { path: PathBuf },
    /// The broker accepted the connection but did not answer in time: it is stopped or overloaded.
    #[error(
        "the askdesk broker at {} did not answer within {} s; it may be stopped or overloaded",
        path.display(),
        waited.as_secs_f64()
    )]
    NoAnswer {
        path: PathBuf,
        waited: std::time::Duration,
    },
    /// The broker answered with an error; the message is the broker's (protocol 2 for domain errors).
    #[error("{}", .0.message)]
    Rpc(RpcError),
    /// The connection to the broker broke or could not be used.
    #[error("{0}")]
    Client(ClientError),
    /// The broker could not start.
    #[error(transparent)]
    Broker(#[from] askdesk_broker::Error),
    /// A local failure: reading a file, starting a command.
    #[error("{0}")]
    Internal(String),
    /// `askdesk doctor` found this many problems (each printed with its fix).
    #[error("askdesk doctor found {0} problem(s); each has its fix above")]
    Problems(usize),
    /// The reader of standard output closed it before the command had written everything (a
    /// pipe into `head -1`): not a failure, so `main` ends quietly with status 0 and no message.
    #[error("standard output was closed by its reader")]
    OutputClosed,
}

impl Error {
    pub fn status(&self) -> Status {
        match self {
            Error::Usage(_) => Status::Usage,
            Error::Input(_) => Status::InvalidParams,
            Error::NoBroker { .. } => Status::NoBroker,
            Error::Rpc(error) => Status::for_rpc(error),
            // `main` ends with 0 for `OutputClosed` and asks no status for it.
            Error::Client(_)
            | Error::NoAnswer { .. }
            | Error::Internal(_)
            | Error::OutputClosed => Status::Internal,
            Error::Broker(_) | Error::Problems(_) => Status::Startup,
        }
    }
}

impl From<ClientError> for Error {
    fn from(error: ClientError) -> Error {
        match error {
            ClientError::NotRunning { path } => Error::NoBroker { path },
            ClientError::Rpc(error) => Error::Rpc(error),
            other => Error::Client(other),
        }
    }
}

impl From<askdesk_connect::Error> for Error {
    fn from(error: askdesk_connect::Error) -> Error {
        match error {
            askdesk_connect::Error::Usage(message) => Error::Usage(message),
            askdesk_connect::Error::Input(message) => Error::Input(message),
            askdesk_connect::Error::Internal(message) => Error::Internal(message),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The table as the help text and docs/cli.md show it.
    pub const TABLE: &str = exit_table!();
    use serde_json::json;

    fn check(code: i64, data: Option<serde_json::Value>, expected: u8) {
        let mut error = RpcError::new(code, "message");
        if let Some(data) = data {
            error = error.with_data(data);
        }
        assert_eq!(
            Status::for_rpc(&error) as u8,
            expected,
            "{code} {:?}",
            error.data
        );
    }

    #[test]
    fn every_question_code_has_its_status() {
        let cases = [
            ("ASK_ABORTED", 10),
            ("EMPTY_QUESTIONS", 11),
            ("CALLER_NOT_LIVE", 12),
            ("DELEGATED_CALLER", 13),
            ("BAD_INTENT", 14),
            ("NO_PROVIDER", 15),
            ("ASK_CANCELLED", 16),
            ("BAD_ANSWER", 17),
            ("SHUTTING_DOWN", 18),
            ("RATE_LIMITED", 19),
        ];
        for (code, status) in cases {
            check(
                protocol::USER_QUESTION_ERROR,
                Some(json!({ "code": code })),
                status,
            );
        }
        // The core knows exactly the codes the table lists by name.
        for code in askdesk_core::ErrorCode::KNOWN {
            assert_ne!(
                Status::for_question_code(&code),
                Status::OtherCode,
                "{code}"
            );
        }
    }

    #[test]
    fn rpc_codes_map_to_their_statuses() {
        check(protocol::INVALID_PARAMS, None, 4);
        check(
            protocol::REGISTRY_ERROR,
            Some(json!({ "code": "AGENT_ID_TAKEN" })),
            5,
        );
        check(
            protocol::LIMIT_REACHED,
            Some(json!({ "code": "LIMIT", "limit": "connections" })),
            6,
        );
        check(
            protocol::INTERNAL_ERROR,
            Some(json!({ "answerer": "a" })),
            20,
        );
        check(protocol::METHOD_NOT_FOUND, None, 20);
        check(protocol::USER_QUESTION_ERROR, None, 19);
    }

    #[test]
    fn statuses_are_distinct_and_in_the_table() {
        let all = [
            Status::Startup,
            Status::Usage,
            Status::NoBroker,
            Status::InvalidParams,
            Status::Registry,
            Status::Limit,
            Status::AskAborted,
            Status::EmptyQuestions,
            Status::CallerNotLive,
            Status::DelegatedCaller,
            Status::BadIntent,
            Status::NoProvider,
            Status::AskCancelled,
            Status::BadAnswer,
            Status::ShuttingDown,
            Status::OtherCode,
            Status::Internal,
            Status::BadImage,
            Status::ImageLimit,
        ];
        let mut seen = std::collections::BTreeSet::new();
        for status in all {
            assert!(seen.insert(status as u8), "{status:?} repeats a number");
            if status != Status::Startup {
                let row = format!("\n{:>4}  ", status as u8);
                assert!(TABLE.contains(&row), "{status:?} is missing from the table");
            }
        }
    }

    /// One row of an exit-status table: the status, the error code when the row names one, and
    /// the meaning, with markdown's backticks dropped.
    fn row(status: &str, code: &str, meaning: &str) -> (u8, String, String) {
        let status = status.trim().parse().expect("a status number");
        (
            status,
            code.trim().replace('`', ""),
            meaning.trim().replace('`', ""),
        )
    }

    /// The rows of the CLI's own table (`exit_table!`): "  10  ASK_ABORTED       meaning".
    fn cli_rows() -> Vec<(u8, String, String)> {
        let body = TABLE
            .strip_prefix("Exit status:\n")
            .expect("the table's heading");
        body.lines()
            .map(|line| {
                let line = line.trim_start();
                let (status, rest) = line.split_once("  ").expect("status, two spaces, the rest");
                let (code, meaning) = match rest.split_once("  ") {
                    Some((code, meaning))
                        if !code.is_empty()
                            && code.chars().all(|c| c.is_ascii_uppercase() || c == '_') =>
                    {
                        (code, meaning)
                    }
                    _ => ("", rest),
                };
                row(status, code, meaning)
            })
            .collect()
    }

    /// The rows of docs/cli.md's table: "| 10 | `ASK_ABORTED` | meaning |".
    fn doc_rows() -> Vec<(u8, String, String)> {
        let doc = include_str!("../../../docs/cli.md");
        let table = doc
            .split_once("| status | code | meaning |\n|---|---|---|\n")
            .expect("docs/cli.md has the exit-status table")
            .1;
        table
            .lines()
            .take_while(|line| line.starts_with('|'))
            .map(|line| {
                let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
                assert_eq!(cells.len(), 3, "a docs/cli.md row with three cells: {line}");
                row(cells[0], cells[1], cells[2])
            })
            .collect()
    }

    #[test]
    fn the_documented_table_is_the_cli_table() {
        let cli = cli_rows();
        assert_eq!(
            cli.len(),
            19,
            "every row of the CLI's table was read: {cli:?}"
        );
        assert_eq!(doc_rows(), cli);
    }

    #[test]
    fn no_broker_says_how_to_start_one() {
        let error = Error::from(ClientError::NotRunning {
            path: "/run/askdesk.sock".into(),
        });
        assert_eq!(error.status(), Status::NoBroker);
        let message = error.to_string();
        assert!(
            message.contains("askdesk serve") && message.contains("desktop app"),
            "{message}"
        );
    }
}
