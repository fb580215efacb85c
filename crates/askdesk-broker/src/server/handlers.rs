//! The dispatch table (SPEC 5.4) and one handler per method a client may call.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Waker};
use std::time::SystemTime;

use askdesk_core::{
    AgentRegistration, AnswererId, AnswererRegistration, AskRequest, Handle, Scope,
};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::answerer::SocketAnswerer;
use super::connection::Conn;
use crate::protocol::{self, Id, Notification, RpcError, PROTOCOL_VERSION};
use crate::settled;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    protocol_version: u64,
    client: ClientInfo,
}

#[derive(Deserialize)]
struct ClientInfo {
    name: String,
    #[serde(default)]
    version: Option<String>,
}

#[derive(Deserialize)]
struct UnregisterAgentParams {
    agent: Handle,
}

#[derive(Deserialize)]
struct RegisterAnswererParams {
    scope: Scope,
    #[serde(default)]
    prepend: bool,
    #[serde(default)]
    label: Option<String>,
}

#[derive(Deserialize)]
struct UnregisterAnswererParams {
    answerer: String,
}

#[derive(Deserialize)]
struct CancelParams {
    id: Id,
}

impl Conn {
    /// The dispatch table: every method the broker serves, in one place.
    pub(super) async fn handle_request(
        self: &Arc<Self>,
        id: Id,
        method: String,
        params: Option<Box<RawValue>>,
    ) {
        let params = params.as_deref();
        if !matches!(method.as_str(), "initialize" | "ping") && !self.state().initialized {
            return self
                .reply::<Value>(id, Err(RpcError::not_initialized(&method)))
                .await;
        }
        let result = match method.as_str() {
            // Session.
            "initialize" => self.initialize(params),
            "ping" => Ok(json!({})),
            // Agents (SPEC 3).
            "agents/register" => self.register_agent(params),
            "agents/unregister" => self.unregister_agent(params),
            "agents/list" => Ok(json!({ "agents": self.service().agents() })),
            // Answerers (SPEC 4).
            "answerers/register" => self.register_answerer(params),
            "answerers/unregister" => self.unregister_answerer(params),
            // Questions: the only method that waits, so it runs beside the reader.
            "user-questions/ask" => return self.start_ask(id, params).await,
            // askdesk's own extensions.
            "askdesk/status" => Ok(self.status()),
            "askdesk/focus" if self.shared.config.focus.is_some() => {
                (self.shared.config.focus.as_ref().expect("guarded"))();
                Ok(json!({}))
            }
            _ => Err(RpcError::method_not_found(&method)),
        };
        self.reply(id, result).await;
    }

    pub(super) fn handle_notification(&self, notification: Notification) {
        match notification.method.as_str() {
            "$/cancelRequest" => {
                match protocol::params::<CancelParams>(notification.params.as_deref()) {
                    Ok(CancelParams { id }) => {
                        if let Some(token) = self.state().asks.get(&id) {
                            token.cancel();
                        }
                    }
                    Err(error) => tracing::debug!(%error, "ignored a malformed $/cancelRequest"),
                }
            }
            // Unknown notifications, `$/` or not, are ignored (SPEC 5.3).
            other => tracing::debug!(method = other, "ignored an unknown notification"),
        }
    }

    fn initialize(&self, params: Option<&RawValue>) -> Result<Value, RpcError> {
        let params: InitializeParams = protocol::params(params)?;
        if params.protocol_version != PROTOCOL_VERSION {
            return Err(RpcError::invalid_params(format!(
                "protocolVersion: this broker speaks version {PROTOCOL_VERSION}, not {}",
                params.protocol_version
            )));
        }
        let client = match params.client.version {
            Some(version) => format!("{} {version}", params.client.name),
            None => params.client.name,
        };
        let mut state = self.state();
        state.initialized = true;
        state.client = Some(client);
        Ok(json!({
            "protocolVersion": PROTOCOL_VERSION,
            "server": { "name": "askdesk", "version": env!("CARGO_PKG_VERSION") },
        }))
    }

    fn register_agent(&self, params: Option<&RawValue>) -> Result<Value, RpcError> {
        let registration: AgentRegistration = protocol::params(params)?;
        if registration.id.is_empty() {
            return Err(RpcError::invalid_params("id: expected a non-empty string"));
        }
        let handle = self
            .service()
            .register_agent(registration)
            .map_err(|e| RpcError::registry(&e))?;
        self.state().agents.push(handle.clone());
        Ok(serde_json::to_value(handle).expect("a handle serializes"))
    }

    fn unregister_agent(&self, params: Option<&RawValue>) -> Result<Value, RpcError> {
        let UnregisterAgentParams { agent } = protocol::params(params)?;
        self.service()
            .unregister_agent(&agent)
            .map_err(|e| RpcError::registry(&e))?;
        self.state().agents.retain(|h| h != &agent);
        Ok(Value::Null)
    }

    fn register_answerer(self: &Arc<Self>, params: Option<&RawValue>) -> Result<Value, RpcError> {
        let RegisterAnswererParams {
            scope,
            prepend,
            label,
        } = protocol::params(params)?;
        let answerer = Arc::new(SocketAnswerer::new(self.clone()));
        let id = self
            .service()
            .register_answerer(
                AnswererRegistration {
                    scope,
                    prepend,
                    label,
                },
                answerer,
            )
            .map_err(|e| RpcError::registry(&e))?;
        let mut state = self.state();
        if state.closed {
            // The connection closed while registering: do not leave an answerer nobody serves.
            drop(state);
            self.service().unregister_answerer(id);
        } else {
            state.answerers.push(id);
        }
        Ok(json!({ "answerer": id }))
    }

    fn unregister_answerer(&self, params: Option<&RawValue>) -> Result<Value, RpcError> {
        let UnregisterAnswererParams { answerer } = protocol::params(params)?;
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
        Ok(Value::Null)
    }

    async fn start_ask(self: &Arc<Self>, id: Id, params: Option<&RawValue>) {
        let request: AskRequest = match protocol::params(params) {
            Ok(request) => request,
            Err(error) => return self.reply::<Value>(id, Err(error)).await,
        };
        let cancel = CancellationToken::new();
        let refusal = {
            let mut state = self.state();
            let max = self.shared.config.max_pending_per_connection;
            if state.asks.len() >= max {
                Some(RpcError::limit(
                    "pending-asks",
                    format_args!("at most {max} pending asks per connection"),
                ))
            } else if state.asks.contains_key(&id) {
                Some(RpcError::invalid_request(
                    "id: already used by a pending request of this connection",
                ))
            } else {
                state.asks.insert(id.clone(), cancel.clone());
                None
            }
        };
        if let Some(error) = refusal {
            return self.reply::<Value>(id, Err(error)).await;
        }
        let conn = self.clone();
        let ask = self.asks.track_future(async move {
            let asked_at = SystemTime::now();
            // The journal needs the questions after `ask` has consumed them.
            let journaled = conn.shared.config.journal.as_ref().map(|journal| {
                let agent = request
                    .agent
                    .as_ref()
                    .and_then(|h| conn.service().agent_info(h));
                (journal.clone(), request.questions.clone(), agent)
            });
            let result = conn.service().ask(request, &cancel).await;
            if let Some((journal, questions, agent)) = journaled {
                if let Some(record) = settled::record(asked_at, agent, questions, &result) {
                    settled::append(journal, record).await;
                }
            }
            conn.state().asks.remove(&id);
            conn.reply(id, result.map_err(|error| RpcError::from(&error)))
                .await;
        });
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

    fn status(&self) -> Value {
        let now = SystemTime::now();
        let pending: Vec<Value> = self
            .service()
            .pending()
            .into_iter()
            .map(|p| {
                let age = now.duration_since(p.asked_at).unwrap_or_default();
                json!({
                    "request": p.request,
                    "agent": p.agent,
                    "questions": p.questions,
                    "holder": p.holder,
                    "ageMs": age.as_millis() as u64,
                })
            })
            .collect();
        let connections =
            self.shared.config.max_connections - self.shared.connections.available_permits();
        json!({
            "server": { "name": "askdesk", "version": env!("CARGO_PKG_VERSION") },
            "socket": self.shared.socket,
            "connections": connections,
            "agents": self.service().agents(),
            "answerers": self.service().answerers(),
            "pending": pending,
        })
    }
}
