//! askdesk-core: the semantics of askdesk, shared by the broker, the CLI and the desktop app.
//!
//! The crate does no I/O and knows nothing of sockets, JSON-RPC or Tauri. It owns:
//!
//! - [`types`]: the wire-shaped question and answer types (camelCase on the wire, protocol section 1).
//! - [`error`]: [`UserQuestionError`] with its stable codes and messages (protocol section 2), and the
//!   other error types of the core.
//! - [`validate`]: shape validation of a batch (protocol 1.1) and answer validation (protocol 1.2).
//! - [`registry`]: the live agent registry, handles with unguessable instance tokens (protocol 3).
//! - [`answerer`]: the [`Answerer`] trait and the decision channel an answerer replies through.
//! - [`service`]: [`Service`], which runs `ask()` in the order of protocol 2 and walks the answerer
//!   waterfall (protocol 4).
//! - [`meta`]: the agent `meta` keys askdesk writes and reads, and how an agent is named.
//! - [`xdg`]: where the configuration and data directories are, from the environment.
//! - [`sync`]: [`sync::lock`], the poison-tolerant mutex lock every crate of askdesk uses.
//! - `testing` (feature `test-support`, for tests only): the question and answer builders and the
//!   holding answerer the workspace's tests share.
//! - [`text`]: agent-supplied text made safe to show (control and bidi characters escaped).

pub mod answerer;
pub mod error;
pub mod meta;
pub mod registry;
pub mod service;
pub mod sync;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
pub mod text;
pub mod types;
pub mod validate;
pub mod xdg;

pub use answerer::{
    decision_channel, Answerer, Decision, DecisionReceiver, Failure, Offer, Responder, Withdrawal,
};
pub use error::{AskError, ErrorCode, RegistryError, ShapeError, UserQuestionError};
pub use registry::{AgentRegistration, AgentSummary, Handle};
pub use service::{
    AnswererId, AnswererRegistration, AnswererSummary, AskRequest, AskSettlement, Config,
    ImageGate, Override, PendingSummary, Scope, Service, WeakService,
};
pub use types::{
    has_images, shown_label, without_images, AgentInfo, Answer, AnswerItem, Image, Intent,
    Question, QuestionOption, Request, RequestId, RECOMMENDED_MARK,
};
pub use validate::Limits;
