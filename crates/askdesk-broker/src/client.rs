//! The Rust client library: connect to a broker, register agents, ask, and serve as an answerer.
//!
//! One [`Client`] is one connection. Requests run concurrently on it; a reader task matches
//! responses to requests by id and hands broker-sent requests to the [`Incoming`] queue.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use askdesk_core::{AgentRegistration, Answer, AskRequest, Handle, Scope};
use futures_util::StreamExt;
use serde_json::value::RawValue;
use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::codec::FramedRead;
use tokio_util::sync::CancellationToken;

use crate::framing::LineCodec;
use crate::protocol::methods::{
    AgentsRegister, AgentsUnregister, AnswerersRegister, Ask, CancelParams, CancelReason,
    CancelRequest, Capabilities, ClientInfo, Deadline, DeadlineParams, Empty, Initialize,
    InitializeParams, NotificationMethod, Ping, QuestionRequest, RegisterAnswererParams,
    RegisteredAnswerer, RequestMethod, RequestParams, Settled, SettledParams, Status, StatusResult,
    UnregisterAgentParams,
};
use crate::protocol::{self, Id, Message, Notification, Response, RpcError, PROTOCOL_VERSION};
use crate::server::DEFAULT_MAX_MESSAGE_BYTES;

/// What a client call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No broker listens at the path: start `askdesk serve` or the desktop app.
    #[error("askdesk is not running (no broker at {}); start the desktop app or run `askdesk serve`", path.display())]
    NotRunning { path: PathBuf },
    /// The connection failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The broker answered with an error.
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// The broker closed the connection before answering.
    #[error("the askdesk broker closed the connection")]
    Closed,
    /// The broker's reply did not have the expected shape.
    #[error("unexpected reply from the broker: {0}")]
    Protocol(String),
    /// Something listens at the path but did not complete the handshake in time: a stopped
    /// (suspended) or hung broker.
    #[error(
        "the askdesk broker at {} did not answer within {} s; it may be stopped or hung",
        path.display(),
        waited.as_secs_f64()
    )]
    NoReply {
        path: PathBuf,
        waited: std::time::Duration,
    },
    /// A request was withdrawn (`$/cancelRequest`) and the broker did not confirm it in time: a
    /// broker stopped or hung while the request waited. The caller stops waiting all the same.
    #[error(
        "the askdesk broker did not confirm the withdrawal within {} s; it may be stopped or hung",
        WITHDRAW_WAIT.as_secs_f64()
    )]
    WithdrawalUnconfirmed,
}

/// How long a withdrawn request waits for the broker's final response (an ask's `ASK_ABORTED`, or
/// the answer that crossed the withdrawal). A live broker replies at once; one that was stopped
/// (Ctrl-Z) or hung does not, and the caller that gave up must not wait on it.
pub const WITHDRAW_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// `exchange` with the broker at `path`, or [`ClientError::NoReply`] when it has not finished
/// after `wait` (a broker that stopped answering).
pub async fn answered_within<F: std::future::Future>(
    path: &Path,
    wait: std::time::Duration,
    exchange: F,
) -> Result<F::Output> {
    tokio::time::timeout(wait, exchange)
        .await
        .map_err(|_| ClientError::NoReply {
            path: path.to_owned(),
            waited: wait,
        })
}

impl ClientError {
    /// The `UserQuestionError` code (`NO_PROVIDER`, ...), when this is one.
    pub fn question_code(&self) -> Option<&str> {
        match self {
            ClientError::Rpc(error) => error.question_code(),
            _ => None,
        }
    }
}

pub type Result<T, E = ClientError> = std::result::Result<T, E>;

/// One connection to the broker. Cheap to clone; clones share the connection.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    out: mpsc::Sender<Vec<u8>>,
    next_id: AtomicI64,
    state: Mutex<State>,
    closed: CancellationToken,
    /// What the broker said it knows in `initialize`'s result.
    capabilities: OnceLock<Capabilities>,
}

/// What the broker says became of a request it sent this answerer (protocol 4.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// This answerer's reply settled the request: the asker has it (`askdesk/settled`, or for a
    /// broker without `capabilities.outcomes`, no withdrawal by two pings after the reply).
    Used,
    /// The broker withdrew the request (`$/cancelRequest`): why, when it says, and who settled it.
    Withdrawn {
        reason: Option<CancelReason>,
        by: Option<String>,
    },
    /// The connection closed first.
    Closed,
}

/// A broker-sent request being served: cancelled when it is withdrawn, and what became of it.
struct Serving {
    cancelled: CancellationToken,
    outcome: watch::Sender<Option<Outcome>>,
    /// When its deadline runs out, as the broker last said (`askdesk/deadline`).
    deadline: watch::Sender<Option<SystemTime>>,
}

impl Serving {
    /// Records the request's outcome, unless one was already told.
    fn tell(&self, outcome: Outcome) {
        self.outcome.send_if_modified(|told| {
            let first = told.is_none();
            if first {
                *told = Some(outcome);
            }
            first
        });
    }
}

#[derive(Default)]
struct State {
    waiting: HashMap<i64, oneshot::Sender<Result<Box<RawValue>, RpcError>>>,
    /// Where broker-sent requests go once this connection registered an answerer.
    incoming: Option<mpsc::Sender<IncomingRequest>>,
    /// The broker-sent requests being served, by their id.
    serving: HashMap<Id, Serving>,
    /// The broker refused this connection (it may say so before any request is sent): every
    /// request, waiting or later, gets this error.
    refused: Option<RpcError>,
}

impl Client {
    /// Connects to the broker at `path` and performs `initialize`.
    pub async fn connect(path: &Path, client_name: &str) -> Result<Client> {
        let stream = UnixStream::connect(path)
            .await
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused => {
                    ClientError::NotRunning {
                        path: path.to_owned(),
                    }
                }
                _ => ClientError::Io(e),
            })?;
        let client = Client::over(stream);
        let initialized = client
            .call::<Initialize>(&InitializeParams {
                protocol_version: PROTOCOL_VERSION,
                client: ClientInfo {
                    name: client_name.to_owned(),
                    version: Some(env!("CARGO_PKG_VERSION").to_owned()),
                },
            })
            .await?;
        let _ = client.inner.capabilities.set(initialized.capabilities);
        Ok(client)
    }

    /// The extensions the broker said it knows; none before `initialize` (or after [`Client::over`]
    /// alone).
    pub fn capabilities(&self) -> Capabilities {
        self.inner.capabilities.get().copied().unwrap_or_default()
    }

    /// [`Client::connect`], giving up after `wait` ([`ClientError::NoReply`]) when something
    /// listens at `path` but does not answer: for callers that must never hang on a broker that
    /// was suspended or hung (a hook the agent waits on, an MCP server).
    pub async fn connect_within(
        path: &Path,
        client_name: &str,
        wait: std::time::Duration,
    ) -> Result<Client> {
        answered_within(path, wait, Client::connect(path, client_name)).await?
    }

    /// Runs the protocol over a connected stream, without `initialize`.
    pub fn over(stream: UnixStream) -> Client {
        let (read, mut write) = stream.into_split();
        let (out, mut outgoing) = mpsc::channel::<Vec<u8>>(256);
        let inner = Arc::new(Inner {
            out,
            next_id: AtomicI64::new(1),
            state: Mutex::default(),
            closed: CancellationToken::new(),
            capabilities: OnceLock::new(),
        });
        let closed = inner.closed.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    line = outgoing.recv() => match line {
                        Some(line) => if write.write_all(&line).await.is_err() { break },
                        None => break,
                    },
                    _ = closed.cancelled() => break,
                }
            }
        });
        let client = Client { inner };
        let reader = client.downgrade();
        tokio::spawn(async move {
            // The broker is trusted to bound its own lines.
            let mut lines = FramedRead::new(read, LineCodec::new(usize::MAX));
            while let Some(Ok(line)) = lines.next().await {
                let Some(client) = reader.upgrade().map(|inner| Client { inner }) else {
                    return;
                };
                if !line.iter().all(u8::is_ascii_whitespace) {
                    client.dispatch(&line).await;
                }
            }
            if let Some(client) = reader.upgrade().map(|inner| Client { inner }) {
                client.inner.closed.cancel();
                let mut state = client.state();
                state.waiting.clear(); // Dropped senders report `Closed`.
                state.incoming = None;
                for serving in state.serving.values() {
                    serving.tell(Outcome::Closed);
                    serving.cancelled.cancel();
                }
            }
        });
        client
    }

    fn downgrade(&self) -> std::sync::Weak<Inner> {
        Arc::downgrade(&self.inner)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        askdesk_core::sync::lock(&self.inner.state)
    }

    /// Resolves when the broker closed the connection.
    pub async fn closed(&self) {
        self.inner.closed.cancelled().await
    }

    async fn send(&self, line: Vec<u8>) -> Result<()> {
        self.inner
            .out
            .send(line)
            .await
            .map_err(|_| ClientError::Closed)
    }

    async fn dispatch(&self, line: &[u8]) {
        match protocol::parse(line) {
            Ok(Message::Response(Response {
                id: Id::Number(id),
                result,
            })) => {
                if let Some(waiting) = self.state().waiting.remove(&id) {
                    let _ = waiting.send(result);
                }
            }
            Ok(Message::Response(Response {
                id: Id::Null,
                result: Err(error),
            })) if error.refuses_connection() => {
                // The broker refuses the whole connection (too many connections, or a line over
                // its limit) and is closing it: every request waiting, or made later, gets that
                // reason.
                let waiting = {
                    let mut state = self.state();
                    state.refused = Some(error.clone());
                    std::mem::take(&mut state.waiting)
                };
                for (_, waiting) in waiting {
                    let _ = waiting.send(Err(error.clone()));
                }
            }
            Ok(Message::Response(response)) => {
                tracing::warn!(
                    ?response,
                    "the broker reported an error for no request of ours"
                )
            }
            Ok(Message::Request(request)) => self.serve(request).await,
            Ok(Message::Notification(Notification { method, params }))
                if method == CancelRequest::NAME =>
            {
                if let Ok(CancelParams { id, reason, by }) =
                    protocol::notification_params::<CancelRequest>(params.as_deref())
                {
                    if let Some(serving) = self.state().serving.get(&id) {
                        serving.tell(Outcome::Withdrawn { reason, by });
                        serving.cancelled.cancel();
                    }
                }
            }
            Ok(Message::Notification(Notification { method, params }))
                if method == Settled::NAME =>
            {
                if let Ok(SettledParams { id }) =
                    protocol::notification_params::<Settled>(params.as_deref())
                {
                    if let Some(serving) = self.state().serving.get(&id) {
                        serving.tell(Outcome::Used);
                    }
                }
            }
            Ok(Message::Notification(Notification { method, params }))
                if method == Deadline::NAME =>
            {
                if let Ok(DeadlineParams { id, at }) =
                    protocol::notification_params::<Deadline>(params.as_deref())
                {
                    if let Some(serving) = self.state().serving.get(&id) {
                        let at = at.map(|ms| UNIX_EPOCH + Duration::from_millis(ms));
                        serving.deadline.send_replace(at);
                    }
                }
            }
            Ok(Message::Notification(_)) => {}
            Err(bad) => tracing::warn!(error = %bad.error, "unreadable message from the broker"),
        }
    }

    /// A request from the broker: `user-questions/request` goes to the [`Incoming`] queue once
    /// this connection registered an answerer; anything else is answered with an error here.
    async fn serve(&self, request: protocol::Request) {
        let incoming = self.state().incoming.clone();
        let params = match (request.method.as_str(), incoming) {
            (QuestionRequest::NAME, Some(incoming)) => {
                protocol::request_params::<QuestionRequest>(request.params.as_deref())
                    .map(|params| (params, incoming))
            }
            (method, _) => Err(RpcError::method_not_found(method)),
        };
        let (params, incoming) = match params {
            Ok(ready) => ready,
            Err(error) => {
                let _ = self.send(protocol::encode_error(&request.id, &error)).await;
                return;
            }
        };
        let cancelled = CancellationToken::new();
        let (outcome, told) = watch::channel(None);
        let (deadline, deadline_told) = watch::channel(None);
        self.state().serving.insert(
            request.id.clone(),
            Serving {
                cancelled: cancelled.clone(),
                outcome,
                deadline,
            },
        );
        let served = IncomingRequest {
            id: request.id,
            params,
            cancelled,
            told,
            deadline: deadline_told,
            client: self.clone(),
        };
        if let Err(mpsc::error::SendError(served)) = incoming.send(served).await {
            served.reply(Ok(None)).await;
        }
    }

    /// Calls method `M` and waits for its result.
    pub async fn call<M: RequestMethod>(&self, params: &M::Params<'_>) -> Result<M::Result> {
        self.call_cancellable::<M>(params, &CancellationToken::new())
            .await
    }

    /// Calls method `M`; cancelling `cancel` sends `$/cancelRequest` and waits for the broker's
    /// final response (for an ask, `ASK_ABORTED`) for at most [`WITHDRAW_WAIT`].
    pub async fn call_cancellable<M: RequestMethod>(
        &self,
        params: &M::Params<'_>,
        cancel: &CancellationToken,
    ) -> Result<M::Result> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let line = protocol::encode_request::<M>(&Id::Number(id), params);
        // A broker closes the connection on a line over its limit, failing every other request on
        // it (the asks of an MCP session share one): refuse this one alone, before sending it.
        let bytes = line.len() - 1;
        if bytes > DEFAULT_MAX_MESSAGE_BYTES {
            return Err(ClientError::Rpc(RpcError::limit(
                "message-bytes",
                format_args!(
                    "this {} request is {bytes} bytes, over the {DEFAULT_MAX_MESSAGE_BYTES} a message may have; it was not sent",
                    M::NAME
                ),
            )));
        }
        let (tx, mut rx) = oneshot::channel();
        {
            let mut state = self.state();
            if let Some(error) = &state.refused {
                return Err(ClientError::Rpc(error.clone()));
            }
            state.waiting.insert(id, tx);
        }
        if let Err(error) = self.send(line).await {
            self.state().waiting.remove(&id);
            // The connection ended, but a refusal read before the end still says why.
            return match rx.try_recv() {
                Ok(Err(refusal)) => Err(ClientError::Rpc(refusal)),
                _ => Err(error),
            };
        }
        let result = tokio::select! {
            result = &mut rx => result,
            _ = cancel.cancelled() => {
                let note = protocol::encode_notification::<CancelRequest>(&CancelParams::of(
                    Id::Number(id),
                ));
                let confirmed = async {
                    let _ = self.send(note).await;
                    rx.await
                };
                match tokio::time::timeout(WITHDRAW_WAIT, confirmed).await {
                    Ok(result) => result,
                    Err(_) => {
                        self.state().waiting.remove(&id);
                        return Err(ClientError::WithdrawalUnconfirmed);
                    }
                }
            }
        };
        match result {
            Ok(Ok(raw)) => serde_json::from_str(raw.get())
                .map_err(|e| ClientError::Protocol(format!("{}: {e}", M::NAME))),
            Ok(Err(error)) => Err(ClientError::Rpc(error)),
            Err(_) => Err(ClientError::Closed),
        }
    }

    pub async fn ping(&self) -> Result<()> {
        self.call::<Ping>(&Empty {}).await.map(drop)
    }

    pub async fn register_agent(&self, registration: &AgentRegistration) -> Result<Handle> {
        self.call::<AgentsRegister>(registration).await
    }

    pub async fn unregister_agent(&self, handle: &Handle) -> Result<()> {
        self.call::<AgentsUnregister>(&UnregisterAgentParams {
            agent: handle.clone(),
        })
        .await
    }

    /// Unregisters an agent this connection registered, before the connection closes (which
    /// unregisters it anyway): giving up after [`WITHDRAW_WAIT`], so a broker stopped or hung
    /// never holds a caller that is done (an ask that ended, a hook whose client went).
    pub async fn unregister_agent_promptly(&self, handle: &Handle) {
        let _ = tokio::time::timeout(WITHDRAW_WAIT, self.unregister_agent(handle)).await;
    }

    /// Asks the human. Cancelling `cancel` withdraws the ask; the result is then `ASK_ABORTED`.
    pub async fn ask(&self, request: &AskRequest, cancel: &CancellationToken) -> Result<Answer> {
        self.call_cancellable::<Ask>(request, cancel).await
    }

    /// Joins the waterfall as an answerer; requests arrive on the returned [`Incoming`].
    pub async fn register_answerer(
        &self,
        scope: Scope,
        prepend: bool,
        label: Option<&str>,
    ) -> Result<(String, Incoming)> {
        self.register_answerer_in(scope, prepend, label, None).await
    }

    /// [`Client::register_answerer`], in race group `group` when one is given (protocol 4.1).
    pub async fn register_answerer_in(
        &self,
        scope: Scope,
        prepend: bool,
        label: Option<&str>,
        group: Option<&str>,
    ) -> Result<(String, Incoming)> {
        let (tx, rx) = mpsc::channel(64);
        self.state().incoming.get_or_insert(tx);
        let params = RegisterAnswererParams {
            scope,
            prepend,
            label: label.map(str::to_owned),
            group: group.map(str::to_owned),
        };
        let RegisteredAnswerer { answerer } = self.call::<AnswerersRegister>(&params).await?;
        Ok((answerer.to_string(), Incoming { rx }))
    }

    /// The broker's `askdesk/status`: version, connections, agents, answerers, pending requests.
    pub async fn status(&self) -> Result<StatusResult> {
        self.call::<Status>(&Empty {}).await
    }
}

/// The requests the broker sends this connection as an answerer.
pub struct Incoming {
    rx: mpsc::Receiver<IncomingRequest>,
}

impl Incoming {
    /// The next request; `None` once the connection closed.
    pub async fn next(&mut self) -> Option<IncomingRequest> {
        self.rx.recv().await
    }
}

/// One `user-questions/request` from the broker to this answerer. Reply exactly once; dropping it
/// unanswered leaves the broker waiting until the connection closes, so always reply (`Ok(None)`
/// delegates).
pub struct IncomingRequest {
    id: Id,
    /// The questions and the asking agent.
    pub params: RequestParams<'static>,
    /// Cancelled when the broker withdraws the request (`$/cancelRequest`) or the connection closes.
    pub cancelled: CancellationToken,
    /// What the broker said became of it, once it said.
    told: watch::Receiver<Option<Outcome>>,
    deadline: watch::Receiver<Option<SystemTime>>,
    client: Client,
}

impl IncomingRequest {
    /// Claims with `Ok(Some(answer))`, delegates with `Ok(None)`, fails with `Err`.
    pub async fn reply(self, result: Result<Option<Answer>, RpcError>) {
        self.client.state().serving.remove(&self.id);
        let _ = self
            .client
            .send(protocol::encode_response::<QuestionRequest>(
                &self.id,
                result.as_ref(),
            ))
            .await;
    }

    /// When the request's deadline runs out, as the broker says (`askdesk/deadline`, protocol
    /// 4.3), from now on: `None` while no deadline runs.
    pub fn deadline(&self) -> watch::Receiver<Option<SystemTime>> {
        self.deadline.clone()
    }

    /// What the broker said became of the request so far: withdrawn (and why), or, after a
    /// reply, used (protocol 4.2).
    pub fn outcome(&self) -> Option<Outcome> {
        self.told.borrow().clone()
    }

    /// Replies with a claim or a domain error as a member of a race group (protocol 4.1) and
    /// learns what became of the reply (4.2): [`Outcome::Used`] when the broker says it settled
    /// the request (`askdesk/settled`), [`Outcome::Withdrawn`] when another member decided first
    /// and this reply was recorded as a late answer (with who decided), [`Outcome::Closed`] when
    /// the connection closed first. The request stays registered until then, so a withdrawal that
    /// crosses the reply still reaches it.
    ///
    /// A broker without `capabilities.outcomes` sends no `askdesk/settled`: there the reply counts
    /// as used when no withdrawal came before two pings sent after it were answered (the broker
    /// handles a connection's lines in order and decides a race on the race's own task as soon as
    /// the reply wakes it; the second ping leaves that task a whole round trip to run).
    pub async fn reply_confirmed(
        mut self,
        result: Result<Option<Answer>, RpcError>,
    ) -> Result<Outcome> {
        let sent = self
            .client
            .send(protocol::encode_response::<QuestionRequest>(
                &self.id,
                result.as_ref(),
            ))
            .await;
        let told = async {
            sent?;
            if self.client.capabilities().outcomes {
                let told = self.told.wait_for(Option::is_some).await;
                return Ok(told.map_or(Outcome::Closed, |told| {
                    told.clone().unwrap_or(Outcome::Closed)
                }));
            }
            self.client.ping().await?;
            self.client.ping().await?;
            Ok(self.outcome().unwrap_or(Outcome::Used))
        }
        .await;
        self.client.state().serving.remove(&self.id);
        told
    }
}
