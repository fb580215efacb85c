//! The broker: accepts connections, runs one task per connection, dispatches methods (SPEC 5.4),
//! and relays requests to answerer connections (SPEC 5.5) through `SocketAnswerer`.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Waker};
use std::time::SystemTime;

use askdesk_core::{
    decision_channel, AgentInfo, AgentRegistration, Answer, Answerer, AnswererId,
    AnswererRegistration, AskError, AskRequest, Decision, ErrorCode, Failure, Handle, Offer,
    Question, Request, RequestId, Scope, Service, UserQuestionError,
};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::codec::FramedRead;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::framing::{FramingError, LineCodec};
use crate::journal::{millis, Journal, Line, Outcome, Record, RecordedError, Settled};
use crate::outbox::Outbox;
use crate::protocol::{self, Id, Message, Notification, Response, RpcError, PROTOCOL_VERSION};
use crate::transport::Listener;
use serde_json::value::{to_raw_value, RawValue};

/// How the broker is set up. The defaults are SPEC's.
#[derive(Clone)]
pub struct ServerConfig {
    /// The longest line accepted; a longer one gets Invalid Request and the connection closes.
    pub max_message_bytes: usize,
    pub max_connections: usize,
    pub max_pending_per_connection: usize,
    /// Where settled requests are recorded; `None` records nothing.
    pub journal: Option<Journal>,
    /// Called for the `askdesk/focus` extension (the desktop app shows its window); `None` makes
    /// that method unknown.
    pub focus: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_message_bytes: 4 * 1024 * 1024,
            max_connections: 256,
            max_pending_per_connection: 64,
            journal: None,
            focus: None,
        }
    }
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConfig")
            .field("max_message_bytes", &self.max_message_bytes)
            .field("max_connections", &self.max_connections)
            .field(
                "max_pending_per_connection",
                &self.max_pending_per_connection,
            )
            .field("journal", &self.journal)
            .field("focus", &self.focus.is_some())
            .finish()
    }
}

/// Serves `service` on `listener` until `shutdown` is cancelled.
///
/// On shutdown it stops accepting, settles every pending ask with `SHUTTING_DOWN` (the asker gets
/// that error), lets every connection task end, and removes the socket file. Returns only when
/// every connection task has ended.
pub async fn run(
    listener: Listener,
    service: Service,
    config: ServerConfig,
    shutdown: CancellationToken,
) {
    let socket = Some(listener.path().to_owned());
    let server = Server::new(service, config, socket, shutdown.clone());
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(stream) => server.spawn_connection(stream),
                Err(error) => {
                    // Usually out of file descriptors: back off instead of spinning.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            },
        }
    }
    server.shared.service.shutdown();
    server.shared.tracker.close();
    server.shared.tracker.wait().await;
    listener.remove();
    tracing::info!("broker stopped");
}

/// Serves one already-accepted stream (any transport, or an in-memory pair in tests) until it
/// closes or `shutdown` is cancelled.
pub async fn serve_connection<S>(
    stream: S,
    service: Service,
    config: ServerConfig,
    shutdown: CancellationToken,
) where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let server = Server::new(service, config, None, shutdown);
    server.spawn_connection(stream);
    server.shared.tracker.close();
    server.shared.tracker.wait().await;
}

struct Server {
    shared: Arc<Shared>,
}

struct Shared {
    service: Service,
    config: ServerConfig,
    /// The socket served, for `askdesk/status` (`None` for a stream served on its own).
    socket: Option<PathBuf>,
    shutdown: CancellationToken,
    connections: Arc<Semaphore>,
    tracker: TaskTracker,
}

impl Server {
    fn new(
        service: Service,
        config: ServerConfig,
        socket: Option<PathBuf>,
        shutdown: CancellationToken,
    ) -> Server {
        let connections = Arc::new(Semaphore::new(config.max_connections));
        Server {
            shared: Arc::new(Shared {
                service,
                config,
                socket,
                shutdown,
                connections,
                tracker: TaskTracker::new(),
            }),
        }
    }

    fn spawn_connection<S>(&self, stream: S)
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let shared = self.shared.clone();
        match shared.connections.clone().try_acquire_owned() {
            Ok(permit) => {
                self.shared
                    .tracker
                    .spawn(connection(stream, shared, permit));
            }
            Err(_) => {
                self.shared.tracker.spawn(async move {
                    let (_, mut write) = tokio::io::split(stream);
                    let error = RpcError::limit(
                        "connections",
                        format_args!(
                            "the broker serves at most {} connections",
                            shared.config.max_connections
                        ),
                    );
                    let line = protocol::encode_response::<Value>(&Id::Null, Err(&error));
                    let _ = write.write_all(&line).await;
                    let _ = write.shutdown().await;
                });
            }
        }
    }
}

/// The read buffer a connection starts with (it grows for longer lines): a typical request fits,
/// and an idle connection with asks pending holds no more than that.
const READ_BUFFER: usize = 1024;

/// Lines a peer may leave unread before the connection's handlers wait for it.
const OUTGOING_QUEUE: usize = 256;

/// A connection's writing half, whatever the transport.
type BoxedWrite = Pin<Box<dyn AsyncWrite + Send>>;
/// How many withdrawn requests per answerer connection are remembered to recognise late answers.
const WITHDRAWN_MEMORY: usize = 256;

async fn connection<S>(stream: S, shared: Arc<Shared>, _permit: OwnedSemaphorePermit)
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (read, write) = tokio::io::split(stream);
    let out: Arc<Outbox<BoxedWrite>> = Arc::new(Outbox::new(Box::pin(write), OUTGOING_QUEUE));
    let flusher = tokio::spawn({
        let out = out.clone();
        async move { out.flush().await }
    });
    let conn = Arc::new(Conn {
        shared: shared.clone(),
        out: out.clone(),
        state: Mutex::default(),
        asks: TaskTracker::new(),
    });
    let mut lines = FramedRead::with_capacity(
        read,
        LineCodec::new(shared.config.max_message_bytes),
        READ_BUFFER,
    );
    loop {
        let frame = tokio::select! {
            _ = shared.shutdown.cancelled() => {
                // Pending asks settle SHUTTING_DOWN and their responses still go out below.
                shared.service.shutdown();
                break;
            }
            frame = lines.next() => frame,
        };
        match frame {
            None => break,
            Some(Ok(line)) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                conn.handle_line(&line).await;
            }
            Some(Err(FramingError::TooLong(_))) => {
                let error = RpcError::invalid_request(format!(
                    "message over the limit of {} bytes; closing the connection",
                    shared.config.max_message_bytes
                ));
                conn.send(protocol::encode_response::<Value>(&Id::Null, Err(&error)))
                    .await;
                break;
            }
            Some(Err(FramingError::Io(error))) => {
                tracing::debug!(%error, "connection read failed");
                break;
            }
        }
    }
    if shared.shutdown.is_cancelled() {
        // Let the asks settle SHUTTING_DOWN and answer their askers before the peer is let go.
        conn.asks.close();
        conn.asks.wait().await;
        conn.close();
    } else {
        // The peer is gone: its asks are aborted, not answered.
        conn.close();
        conn.asks.close();
        conn.asks.wait().await;
    }
    out.close();
    let _ = flusher.await;
}

/// One connection's shared state.
struct Conn {
    shared: Arc<Shared>,
    out: Arc<Outbox<BoxedWrite>>,
    state: Mutex<ConnState>,
    /// The tasks running this connection's asks.
    asks: TaskTracker,
}

#[derive(Default)]
struct ConnState {
    initialized: bool,
    client: Option<String>,
    agents: Vec<Handle>,
    answerers: Vec<AnswererId>,
    /// This connection's pending asks, by the id it gave them, for `$/cancelRequest`.
    asks: HashMap<Id, CancellationToken>,
    /// Requests sent to this connection as an answerer, awaiting its response.
    outgoing: HashMap<i64, Outgoing>,
    /// Recently withdrawn outgoing requests, to recognise (and record) late answers.
    withdrawn: VecDeque<(i64, Arc<Request>)>,
    next_outgoing: i64,
    closed: bool,
}

struct Outgoing {
    request: Arc<Request>,
    responder: askdesk_core::Responder,
}

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

#[derive(Serialize)]
struct RequestParams<'a> {
    questions: &'a [Question],
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'a AgentInfo>,
}

impl Conn {
    fn state(&self) -> MutexGuard<'_, ConnState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn service(&self) -> &Service {
        &self.shared.service
    }

    async fn send(&self, line: Vec<u8>) {
        // A failed write means the peer is gone; its cleanup runs from the reader loop.
        self.out.send(line).await;
    }

    async fn reply<T: Serialize>(&self, id: Id, result: Result<T, RpcError>) {
        self.send(protocol::encode_response(&id, result.as_ref()))
            .await;
    }

    async fn handle_line(self: &Arc<Self>, line: &[u8]) {
        match protocol::parse(line) {
            Err(bad) => self.reply::<Value>(bad.id, Err(bad.error)).await,
            Ok(Message::Request(request)) => {
                self.handle_request(request.id, request.method, request.params)
                    .await
            }
            Ok(Message::Notification(notification)) => self.handle_notification(notification),
            Ok(Message::Response(response)) => self.handle_response(response),
        }
    }

    /// The dispatch table: every method the broker serves, in one place.
    async fn handle_request(
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

    fn handle_notification(&self, notification: Notification) {
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
        let answerer = Arc::new(SocketAnswerer { conn: self.clone() });
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
        let mut request: AskRequest = match protocol::params(params) {
            Ok(request) => request,
            Err(error) => return self.reply::<Value>(id, Err(error)).await,
        };
        compact(&mut request);
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
            // The journal needs the questions and the agent after `ask` has consumed them: their
            // JSON text is kept, smaller than parsed copies while the ask waits.
            let journaled = conn.shared.config.journal.as_ref().map(|_| {
                let agent = request
                    .agent
                    .as_ref()
                    .and_then(|h| conn.service().agent_info(h))
                    .map(|agent| to_raw_value(&agent).expect("an agent serializes"));
                let questions = to_raw_value(&request.questions).expect("questions serialize");
                (questions, agent)
            });
            let result = conn.service().ask(request, &cancel).await;
            if let (Some((questions, agent)), Some(journal)) =
                (journaled, &conn.shared.config.journal)
            {
                if let Some(record) = settled_record(asked_at, agent, questions, &result) {
                    append(journal, record).await;
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

    fn handle_response(&self, response: Response) {
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
            tokio::spawn(append(journal, record));
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

    /// The peer is gone (or the broker is stopping): cancel its asks, move the requests it held
    /// down the chain, and unregister its agents (with everything they own).
    fn close(&self) {
        let (asks, answerers, agents, outgoing) = {
            let mut state = self.state();
            state.closed = true;
            (
                std::mem::take(&mut state.asks),
                std::mem::take(&mut state.answerers),
                std::mem::take(&mut state.agents),
                std::mem::take(&mut state.outgoing),
            )
        };
        for token in asks.values() {
            token.cancel();
        }
        for answerer in answerers {
            self.service().unregister_answerer(answerer);
        }
        drop(outgoing); // Dropped responders delegate.
        for agent in agents {
            // Already gone when an owner's cascade or an explicit unregister took it first.
            let _ = self.service().unregister_agent(&agent);
        }
    }
}

/// Drops the spare room deserialization leaves in the request's vectors (they grow to four slots
/// before their length is known): a pending ask keeps only what it holds.
fn compact(request: &mut AskRequest) {
    request.questions.shrink_to_fit();
    for question in &mut request.questions {
        question.options.shrink_to_fit();
    }
}

/// What an answerer connection's response means for the waterfall.
fn decision(result: Result<Box<RawValue>, RpcError>) -> Decision {
    match result {
        Ok(raw) if raw.get() == "null" => Decision::Delegate,
        Ok(raw) => match protocol::from_str_with_path::<Answer>(raw.get()) {
            Ok(answer) => Decision::Claim(answer),
            Err((path, problem)) => Decision::Fail(Failure::Domain(UserQuestionError::bad_answer(
                format_args!("{path}: {problem}"),
            ))),
        },
        Err(error) => match error.data_code() {
            Some(code) => Decision::Fail(Failure::Domain(UserQuestionError::new(
                ErrorCode::parse(code),
                error.message,
            ))),
            None => Decision::Fail(Failure::Internal(error.message)),
        },
    }
}

fn settled_record(
    asked_at: SystemTime,
    agent: Option<Box<RawValue>>,
    questions: Box<RawValue>,
    result: &Result<Answer, AskError>,
) -> Option<Settled> {
    let (outcome, answer, error) = match result {
        Ok(answer) => (Outcome::Answered, Some(answer.clone()), None),
        // A malformed request was never a question to anyone.
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
    Some(Settled {
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

/// Queues the record for the journal's writer (group commit) and resolves once it is on disk; a
/// journal failure is logged, never lost silently, and never withholds the agent's answer.
fn append(journal: &Journal, record: impl Into<Line>) -> impl Future<Output = ()> + Send + 'static {
    let commit = journal.submit(record);
    async move {
        if let Err(error) = commit.await {
            tracing::error!(%error, "could not record a settled request in the history journal")
        }
    }
}

/// An answerer that lives at the other end of a connection (SPEC 5.5).
struct SocketAnswerer {
    conn: Arc<Conn>,
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
            questions: &request.questions,
            agent: request.agent.as_ref(),
        };
        self.conn.out.push(protocol::encode_request(
            &Id::Number(id),
            "user-questions/request",
            Some(&params),
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
        self.conn.out.push(protocol::encode_notification(
            "$/cancelRequest",
            Some(&json!({ "id": id })),
        ));
    }
}
