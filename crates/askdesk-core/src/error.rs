//! The core's errors: [`UserQuestionError`] with the stable codes and messages of protocol section 2,
//! shape errors, registry errors, and [`AskError`], everything `ask()` can fail with.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The stable code of a [`UserQuestionError`].
///
/// Answerers may bring codes of their own; they pass through as [`ErrorCode::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The ask was cancelled by the asker, its connection or its agent going away.
    AskAborted,
    /// The batch has no question.
    EmptyQuestions,
    /// The supplied agent handle is not the live instance.
    CallerNotLive,
    /// The agent is owned by another live agent.
    DelegatedCaller,
    /// A question's intent is inconsistent with the question.
    BadIntent,
    /// No answerer claimed the request.
    NoProvider,
    /// The human dismissed the whole batch.
    AskCancelled,
    /// A socket answerer sent an answer that breaks protocol 1.2.
    BadAnswer,
    /// The broker is shutting down while the request was pending.
    ShuttingDown,
    /// An attached image is unreadable, malformed, of a refused type, or a path askdesk will not
    /// read (protocol 1.4).
    BadImage,
    /// An attached image, or the request's images together, exceed a limit (protocol 1.4).
    ImageLimit,
    /// A code an answerer brought.
    Other(String),
}

impl ErrorCode {
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::AskAborted => "ASK_ABORTED",
            ErrorCode::EmptyQuestions => "EMPTY_QUESTIONS",
            ErrorCode::CallerNotLive => "CALLER_NOT_LIVE",
            ErrorCode::DelegatedCaller => "DELEGATED_CALLER",
            ErrorCode::BadIntent => "BAD_INTENT",
            ErrorCode::NoProvider => "NO_PROVIDER",
            ErrorCode::AskCancelled => "ASK_CANCELLED",
            ErrorCode::BadAnswer => "BAD_ANSWER",
            ErrorCode::ShuttingDown => "SHUTTING_DOWN",
            ErrorCode::BadImage => "BAD_IMAGE",
            ErrorCode::ImageLimit => "IMAGE_LIMIT",
            ErrorCode::Other(code) => code,
        }
    }

    /// Every code the core itself defines, in the protocol's order, then the extensions.
    pub const KNOWN: [ErrorCode; 11] = [
        ErrorCode::AskAborted,
        ErrorCode::EmptyQuestions,
        ErrorCode::CallerNotLive,
        ErrorCode::DelegatedCaller,
        ErrorCode::BadIntent,
        ErrorCode::NoProvider,
        ErrorCode::AskCancelled,
        ErrorCode::BadAnswer,
        ErrorCode::ShuttingDown,
        ErrorCode::BadImage,
        ErrorCode::ImageLimit,
    ];

    pub fn parse(code: &str) -> ErrorCode {
        Self::KNOWN
            .iter()
            .find(|known| known.as_str() == code)
            .cloned()
            .unwrap_or_else(|| ErrorCode::Other(code.to_owned()))
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = Cow::<str>::deserialize(deserializer)?;
        Ok(ErrorCode::parse(&code))
    }
}

/// A domain failure of `ask()`: a stable code and a human-readable message.
///
/// The constructors give exactly the messages of protocol section 2; callers match on `code`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct UserQuestionError {
    pub code: ErrorCode,
    pub message: String,
}

impl UserQuestionError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        UserQuestionError {
            code,
            message: message.into(),
        }
    }

    pub fn aborted() -> Self {
        Self::new(
            ErrorCode::AskAborted,
            "ask_user_question was aborted before the user answered",
        )
    }

    pub fn empty_questions() -> Self {
        Self::new(
            ErrorCode::EmptyQuestions,
            "ask_user_question requires at least one question",
        )
    }

    pub fn caller_not_live() -> Self {
        Self::new(
            ErrorCode::CallerNotLive,
            "human interaction requires the exact live calling agent when an agent is supplied",
        )
    }

    pub fn delegated_caller() -> Self {
        Self::new(
            ErrorCode::DelegatedCaller,
            "human interaction is unavailable while the calling agent is owned by another live agent; \
             include the unresolved question or decision in the child agent's final result",
        )
    }

    pub fn bad_intent_approve(question: &str, kind: &str, approve: &str) -> Self {
        let label = serde_json::to_string(approve).expect("a string always serializes");
        Self::new(
            ErrorCode::BadIntent,
            format!("question {question} declares intent {kind} whose approve label {label} names none of its options"),
        )
    }

    pub fn bad_intent_detail(question: &str, kind: &str) -> Self {
        Self::new(
            ErrorCode::BadIntent,
            format!("question {question} declares intent {kind} without the detail it reviews"),
        )
    }

    pub fn no_provider() -> Self {
        Self::new(
            ErrorCode::NoProvider,
            "no user-questions answerer accepted the request",
        )
    }

    pub fn cancelled_by_user() -> Self {
        Self::new(
            ErrorCode::AskCancelled,
            "the user cancelled ask_user_question",
        )
    }

    pub fn bad_answer(problem: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::BadAnswer,
            format!("the answerer sent a bad answer: {problem}"),
        )
    }

    /// An attached image refused (protocol 1.4); `field` is its path, e.g.
    /// `questions[0].options[1].images[0]`.
    pub fn bad_image(field: &str, problem: impl fmt::Display) -> Self {
        Self::new(ErrorCode::BadImage, format!("{field}: {problem}"))
    }

    /// An image limit exceeded (protocol 1.4); `problem` names the limit.
    pub fn image_limit(field: &str, problem: impl fmt::Display) -> Self {
        Self::new(ErrorCode::ImageLimit, format!("{field}: {problem}"))
    }

    pub fn shutting_down() -> Self {
        Self::new(
            ErrorCode::ShuttingDown,
            "askdesk shut down before the user answered",
        )
    }
}

/// A request that breaks the shape rules of protocol 1.1 ("invalid params").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct ShapeError {
    /// The field path, e.g. `questions[0].options[1].label`.
    pub path: String,
    /// What is wrong with it, e.g. `expected a non-empty string`.
    pub problem: String,
}

impl ShapeError {
    pub fn new(path: impl Into<String>, problem: impl Into<String>) -> Self {
        ShapeError {
            path: path.into(),
            problem: problem.into(),
        }
    }
}

/// A failure of the agent registry (wire code -32003).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// The id is already live; the caller should pick another id or unregister the live one.
    #[error("agent id {id:?} is already registered by a live agent")]
    IdTaken { id: String },
    /// The handle does not name a live agent; the caller should register again.
    #[error("agent {id:?} is not live (never registered, or unregistered)")]
    NotLive { id: String },
    /// The id is live, but under another instance token: the handle is from an earlier
    /// registration of the id, or was never issued. The caller should use the handle the live
    /// agent's registration returned.
    #[error(
        "agent {id:?} is live, but not under this instance token (a handle from an earlier registration of the id, or one never issued); use the handle its registration returned"
    )]
    StaleHandle { id: String },
}

impl RegistryError {
    /// The stable code sent in `data.code`.
    pub fn code(&self) -> &'static str {
        match self {
            RegistryError::IdTaken { .. } => "AGENT_ID_TAKEN",
            RegistryError::NotLive { .. } | RegistryError::StaleHandle { .. } => "AGENT_NOT_LIVE",
        }
    }
}

/// Everything `ask()` can fail with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    /// The request breaks the shape rules; the asker should fix the request.
    #[error(transparent)]
    Invalid(#[from] ShapeError),
    /// A domain failure with a stable code; the asker should act on the code.
    #[error(transparent)]
    Question(#[from] UserQuestionError),
    /// An answerer failed with something other than a domain error.
    #[error("{message}")]
    Internal { answerer: String, message: String },
}

impl AskError {
    /// The domain code, when this is a [`UserQuestionError`].
    pub fn code(&self) -> Option<&ErrorCode> {
        match self {
            AskError::Question(e) => Some(&e.code),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_through_strings() {
        for code in ErrorCode::KNOWN {
            assert_eq!(ErrorCode::parse(code.as_str()), code);
        }
        assert_eq!(
            ErrorCode::parse("RATE_LIMITED"),
            ErrorCode::Other("RATE_LIMITED".into())
        );
        assert_eq!(
            serde_json::to_string(&ErrorCode::NoProvider).unwrap(),
            r#""NO_PROVIDER""#
        );
    }

    #[test]
    fn intent_label_is_json_quoted() {
        let e = UserQuestionError::bad_intent_approve("plan", "plan-review", "Say \"go\"");
        assert_eq!(
            e.message,
            r#"question plan declares intent plan-review whose approve label "Say \"go\"" names none of its options"#
        );
    }

    #[test]
    fn shape_error_names_path() {
        let e = ShapeError::new(
            "questions[0].options[1].label",
            "expected a non-empty string",
        );
        assert_eq!(
            e.to_string(),
            "questions[0].options[1].label: expected a non-empty string"
        );
    }
}
