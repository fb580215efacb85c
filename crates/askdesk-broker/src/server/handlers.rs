//! The dispatch table (protocol 5.4) and one handler per method a client may call.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::SystemTime;

use futures_util::FutureExt;

use askdesk_core::validate::check_group;
use askdesk_core::{AgentRegistration, AnswererId, AnswererRegistration, Handle};
use serde_json::value::RawValue;

use super::answerer::SocketAnswerer;
use super::connection::Conn;
use crate::protocol::methods::{
    AgentList, AgentsList, AgentsRegister, AgentsUnregister, AnswerersRegister,
    AnswerersUnregister, Ask, CancelParams, CancelRequest, Capabilities, ClientInfo, Empty, Focus,
    HistoryState, HistoryStatus, Initialize, InitializeParams, InitializeResult,
    NotificationMethod, PendingRequest, Ping, RegisterAnswererParams, RegisteredAnswerer,
    RequestMethod, ServerInfo, Status, StatusResult, UnregisterAgentParams,
    UnregisterAnswererParams,
};
use crate::protocol::{self, Id, Notification, RpcError, PROTOCOL_VERSION};
use crate::settled;
use askdesk_journal::Record;

impl Conn {
    /// The dispatch table: every method the broker serves, in one place. Each handler gets its
    /// method's params already read; what no handler takes is `MethodNotFound`.
    pub(super) async fn handle_request(
        self: &Arc<Self>,
        id: Id,
        method: String,
        params: Option<Box<RawValue>>,
    ) {
        let params = params.as_deref();
        let method = method.as_str();
        if !matches!(method, Initialize::NAME | Ping::NAME) && !self.state().initialized {
            return self
                .reply_error(&id, RpcError::not_initialized(method))
                .await;
        }
        // Only an ask stays pending; it checks its own id under the lock that records it.
        if method != Ask::NAME && self.state().asks.contains_key(&id) {
            return self.reply_error(&id, RpcError::id_in_use()).await;
        }
        let line = match method {
            // Session.
            Initialize::NAME => respond::<Initialize>(&id, params, |p| self.initialize(p)),
            Ping::NAME => respond::<Ping>(&id, params, |Empty {}| Ok(Empty {})),
            // Agents (protocol 3).
            AgentsRegister::NAME => {
                respond::<AgentsRegister>(&id, params, |p| self.register_agent(p))
            }
            AgentsUnregister::NAME => {
                respond::<AgentsUnregister>(&id, params, |p| self.unregister_agent(p))
            }
            AgentsList::NAME => respond::<AgentsList>(&id, params, |Empty {}| {
                Ok(AgentList {
                    agents: self.service().agents(),
                })
            }),
            // Answerers (protocol 4).
            AnswerersRegister::NAME => {
                respond::<AnswerersRegister>(&id, params, |p| self.register_answerer(p))
            }
            AnswerersUnregister::NAME => {
                respond::<AnswerersUnregister>(&id, params, |p| self.unregister_answerer(p))
            }
            // Questions: the only method that waits, so it runs beside the reader.
            Ask::NAME => return self.start_ask(id, params).await,
            // askdesk's own extensions.
            Status::NAME => respond::<Status>(&id, params, |Empty {}| Ok(self.status())),
            Focus::NAME if self.shared.config.focus.is_some() => {
                respond::<Focus>(&id, params, |p| {
                    (self.shared.config.focus.as_ref().expect("guarded"))(p.activation_token);
                    Ok(Empty {})
                })
            }
            _ => protocol::encode_error(&id, &RpcError::method_not_found(method)),
        };
        self.send(line).await;
    }

    pub(super) fn handle_notification(&self, notification: Notification) {
        match notification.method.as_str() {
            CancelRequest::NAME => {
                match protocol::notification_params::<CancelRequest>(notification.params.as_deref())
                {
                    Ok(CancelParams { id, .. }) => {
                        if let Some(token) = self.state().asks.get(&id) {
                            token.cancel();
                        }
                    }
                    Err(error) => tracing::debug!(%error, "ignored a malformed $/cancelRequest"),
                }
            }
            // Unknown notifications, `$/` or not, are ignored (protocol 5.3).
            other => tracing::debug!(method = other, "ignored an unknown notification"),
        }
    }

    fn initialize(&self, params: InitializeParams) -> Result<InitializeResult, RpcError> {
        if params.protocol_version != PROTOCOL_VERSION {
            return Err(RpcError::invalid_params(format!(
                "protocolVersion: this broker speaks version {PROTOCOL_VERSION}, not {}",
                params.protocol_version
            )));
        }
        let ClientInfo { name, version } = params.client;
        let client = match version {
            Some(version) => format!("{name} {version}"),
            None => name,
        };
        let mut state = self.state();
        state.initialized = true;
        state.client = Some(client);
        Ok(InitializeResult {
            protocol_version: PROTOCOL_VERSION,
            server: server_info(),
            capabilities: Capabilities {
                answerer_groups: true,
                outcomes: true,
            },
        })
    }

    fn register_agent(&self, registration: AgentRegistration) -> Result<Handle, RpcError> {
        if registration.id.is_empty() {
            return Err(RpcError::invalid_params("id: expected a non-empty string"));
        }
        let handle = self
            .service()
            .register_agent(registration)
            .map_err(|e| RpcError::registry(&e))?;
        self.state().agents.push(handle.clone());
        Ok(handle)
    }

    fn unregister_agent(&self, params: UnregisterAgentParams) -> Result<(), RpcError> {
        let UnregisterAgentParams { agent } = params;
        self.service()
            .unregister_agent(&agent)
            .map_err(|e| RpcError::registry(&e))?;
        self.state().agents.retain(|h| h != &agent);
        Ok(())
    }

    fn register_answerer(
        self: &Arc<Self>,
        params: RegisterAnswererParams,
    ) -> Result<RegisteredAnswerer, RpcError> {
        let RegisterAnswererParams {
            scope,
            prepend,
            label,
            group,
        } = params;
        if let Some(group) = &group {
            check_group(group).map_err(|error| RpcError::invalid_params(error.to_string()))?;
        }
        let answerer = Arc::new(SocketAnswerer::new(self.clone(), group.is_some()));
        let named = label.clone();
        let id = self
            .service()
            .register_answerer(
                AnswererRegistration {
                    scope,
                    prepend,
                    label,
                    group,
                },
                answerer.clone(),
            )
            .map_err(|e| RpcError::registry(&e))?;
        // The chain's own name for it: the registration's label, else its id.
        answerer.set_label(&named.unwrap_or_else(|| id.to_string()));
        let mut state = self.state();
        if state.closed {
            // The connection closed while registering: do not leave an answerer nobody serves.
            drop(state);
            self.service().unregister_answerer(id);
        } else {
            state.answerers.push(id);
        }
        Ok(RegisteredAnswerer { answerer: id })
    }

    fn unregister_answerer(&self, params: UnregisterAnswererParams) -> Result<(), RpcError> {
        let UnregisterAnswererParams { answerer } = params;
        let not_ours = || {
            RpcError::invalid_params(format!(
                "answerer: {answerer:?} is not registered on this connection"
            ))
        };
        let id: AnswererId = answerer.parse().map_err(|_| not_ours())?;
        let mut state = self.state();
        let before = state.answerers.len();
        state.answerers.retain(|a| *a != id);
        if state.answerers.len() == before {
            return Err(not_ours());
        }
        drop(state);
        self.service().unregister_answerer(id);
        Ok(())
    }

    async fn start_ask(self: &Arc<Self>, id: Id, params: Option<&RawValue>) {
        let mut request = match protocol::request_params::<Ask>(params) {
            Ok(request) => request,
            Err(error) => return self.reply_error(&id, error).await,
        };
        compact(&mut request);
        // `$/cancelRequest` cancels this token alone; the peer going cancels its parent.
        let cancel = self.gone.child_token();
        let refusal = {
            let mut state = self.state();
            let max = self.shared.config.max_pending_per_connection;
            if state.asks.len() >= max {
                Some(RpcError::limit(
                    "pending-asks",
                    format_args!("at most {max} pending asks per connection"),
                ))
            } else if state.asks.contains_key(&id) {
                Some(RpcError::id_in_use())
            } else {
                state.asks.insert(id.clone(), cancel.clone());
                None
            }
        };
        if let Some(error) = refusal {
            return self.reply_error(&id, error).await;
        }
        let conn = self.clone();
        // A combinator, not an async block, and what follows the wait boxed: a waiting ask then
        // holds the core's wait and the few values its end needs, not a second copy of the wait
        // (an awaited capture) nor the journal's and the reply's state.
        let ask = self
            .service()
            .ask_settled_from(request, &cancel, Some(&self.gone))
            .then(move |outcome| {
                Box::pin(async move {
                    let result = outcome.result;
                    // The journal records the request as the service dispatched it: nothing was
                    // copied for it while the ask waited.
                    if let Some(journal) = &conn.shared.config.journal {
                        let request = outcome.request;
                        if let Some(mut record) = settled::record(request.clone(), &result) {
                            record.answerer = outcome.answerer;
                            record.draft = outcome.draft;
                            // The commit is due within a sync's time: stay awake for it.
                            let _awake = conn.shared.busy_poll.hold();
                            settled::append(journal, record).await;
                        }
                        // Race members' answers that crossed the winner's are late answers.
                        for (label, answer) in outcome.crossed {
                            let late = Record::late_answer(&request, answer, Some(label));
                            tokio::spawn(settled::append(journal, late));
                        }
                    }
                    conn.state().asks.remove(&id);
                    conn.reply::<Ask>(&id, result.map_err(|error| RpcError::from(&error)))
                        .await;
                })
            });
        let ask = self.asks.track_future(ask);
        // Run the ask up to its first wait right here, so the question is on its way to the
        // answerer before a task is spawned for the rest. Nothing is lost by the inert waker:
        // the spawned task polls the ask again at once, and every wait it is in checks its
        // state and registers the task's own waker then.
        let mut ask = Box::pin(ask);
        if ask
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
            .is_pending()
        {
            tokio::spawn(ask);
        }
    }

    fn status(&self) -> StatusResult {
        let now = SystemTime::now();
        let pending = self
            .service()
            .pending()
            .into_iter()
            .map(|p| PendingRequest {
                request: p.request,
                agent: p.agent,
                questions: p.questions,
                holder: p.holder,
                age_ms: now
                    .duration_since(p.asked_at)
                    .unwrap_or_default()
                    .as_millis() as u64,
            })
            .collect();
        let connections =
            self.shared.config.max_connections - self.shared.connections.available_permits();
        StatusResult {
            server: server_info(),
            socket: self.shared.socket.display().to_string(),
            connections,
            agents: self.service().agents(),
            answerers: self.service().answerers(),
            pending,
            history: Some(self.history()),
        }
    }

    fn history(&self) -> HistoryStatus {
        let config = &self.shared.config;
        match (&config.journal, &config.history_error) {
            (Some(journal), _) => {
                let failure = journal.failure();
                HistoryStatus {
                    state: if failure.is_some() {
                        HistoryState::Failing
                    } else {
                        HistoryState::On
                    },
                    path: Some(journal.path().display().to_string()),
                    error: failure,
                }
            }
            (None, Some(error)) => HistoryStatus {
                state: HistoryState::Unavailable,
                path: None,
                error: Some(error.clone()),
            },
            (None, None) => HistoryStatus {
                state: HistoryState::Off,
                path: None,
                error: None,
            },
        }
    }
}

/// This broker, as `initialize` and `askdesk/status` name it.
fn server_info() -> ServerInfo {
    ServerInfo {
        name: "askdesk".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

/// The response line to request `id` of method `M`: its params read (invalid params name the
/// field path), then `handler`'s result or error.
fn respond<M: RequestMethod>(
    id: &Id,
    params: Option<&RawValue>,
    handler: impl FnOnce(M::Params<'static>) -> Result<M::Result, RpcError>,
) -> Vec<u8> {
    let result = protocol::request_params::<M>(params).and_then(handler);
    protocol::encode_response::<M>(id, result.as_ref())
}

/// Drops the spare room deserialization leaves in the request's vectors (they grow to four slots
/// before their length is known): a pending ask keeps only what it holds.
fn compact(request: &mut askdesk_core::AskRequest) {
    request.questions.shrink_to_fit();
    for question in &mut request.questions {
        question.options.shrink_to_fit();
    }
}
