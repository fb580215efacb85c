//! askdesk-core: the semantics of askdesk, shared by the broker, the CLI and the desktop app.
//!
//! The crate does no I/O and knows nothing of sockets, JSON-RPC or Tauri. It owns:
//!
//! - [`types`]: the wire-shaped question and answer types (camelCase on the wire, SPEC section 1).
//! - [`error`]: [`UserQuestionError`] with its stable codes and messages (SPEC section 2), and the
//!   other error types of the core.
//! - [`validate`]: shape validation of a batch (SPEC 1.1) and answer validation (SPEC 1.2).
//! - [`registry`]: the live agent registry, handles with unguessable instance tokens (SPEC 3).
//! - [`answerer`]: the [`Answerer`] trait and the decision channel an answerer replies through.
//! - [`service`]: [`Service`], which runs `ask()` in the order of SPEC 2 and walks the answerer
//!   waterfall (SPEC 4).
//! - [`sync`]: [`sync::lock`], the poison-tolerant mutex lock every crate of askdesk uses.

pub mod answerer;
pub mod error;
pub mod registry;
pub mod service;
pub mod sync;
pub mod types;
pub mod validate;

pub use answerer::{
    decision_channel, Answerer, Decision, DecisionReceiver, Failure, Offer, Responder,
};
pub use error::{AskError, ErrorCode, RegistryError, ShapeError, UserQuestionError};
pub use registry::{AgentRegistration, AgentSummary, Handle};
pub use service::{
    AnswererId, AnswererRegistration, AnswererSummary, AskRequest, Config, Override,
    PendingSummary, Scope, Service, Settled, WeakService,
};
pub use types::{
    AgentInfo, Answer, AnswerItem, Intent, Question, QuestionOption, Request, RequestId,
};
pub use validate::Limits;
