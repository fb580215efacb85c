//! [`Conn`]: a raw JSON-RPC 2.0 line client over a Unix socket, for tests that check the wire.
//!
//! A reader task keeps every line the broker sends (exact text), files responses by id and queues
//! the broker's own requests and notifications. Writes are whatever bytes the test chooses.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;
use tokio::sync::Notify;

use super::PATIENCE;

/// A JSON-RPC error object as the broker sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    /// `null` when the error has no `data`.
    pub data: Value,
}

impl RpcError {
    fn from_value(error: &Value) -> RpcError {
        RpcError {
            code: error["code"]
                .as_i64()
                .unwrap_or_else(|| panic!("error without an integer code: {error}")),
            message: error["message"]
                .as_str()
                .unwrap_or_else(|| panic!("error without a message: {error}"))
                .to_owned(),
            data: error.get("data").cloned().unwrap_or(Value::Null),
        }
    }

    /// `data.code`: the stable code of a -32001, -32003 or -32004 error.
    pub fn data_code(&self) -> Option<&str> {
        self.data["code"].as_str()
    }
}

/// One connection to the broker.
pub struct Conn {
    writer: tokio::sync::Mutex<OwnedWriteHalf>,
    shared: Arc<Shared>,
    next_id: AtomicU64,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Notify,
}

#[derive(Default)]
struct State {
    /// Every line received, exactly as sent (without the newline).
    lines: Vec<String>,
    /// Responses not yet collected, keyed by the JSON text of their id (`1`, `"a"`, `null`).
    responses: HashMap<String, VecDeque<Value>>,
    /// Broker-sent requests and notifications not yet collected.
    incoming: VecDeque<Value>,
    /// The broker closed the connection (or reading failed).
    closed: bool,
}

impl Conn {
    pub async fn connect(path: &Path) -> std::io::Result<Conn> {
        let stream = UnixStream::connect(path).await?;
        let (reader, writer) = stream.into_split();
        let shared = Arc::new(Shared::default());
        tokio::spawn(read_loop(reader, shared.clone()));
        Ok(Conn {
            writer: tokio::sync::Mutex::new(writer),
            shared,
            next_id: AtomicU64::new(1),
        })
    }

    /// `initialize` with protocol version 1; panics unless it succeeds.
    pub async fn initialize(&self, name: &str) -> Value {
        self.call(
            "initialize",
            json!({ "protocolVersion": 1, "client": { "name": name, "version": "0" } }),
        )
        .await
        .unwrap_or_else(|e| panic!("initialize failed: {e:?}"))
    }

    /// Writes the bytes as they are. Errors (the broker closed the socket) are returned.
    pub async fn try_send_raw(&self, bytes: &[u8]) -> std::io::Result<()> {
        let mut writer = self.writer.lock().await;
        writer.write_all(bytes).await?;
        writer.flush().await
    }

    /// Shuts down the writing half: the broker reads the end of input while this side still reads.
    pub async fn shutdown_write(&self) {
        self.writer
            .lock()
            .await
            .shutdown()
            .await
            .expect("shut down writing to the broker");
    }

    /// Writes the bytes as they are; panics if the socket is closed.
    pub async fn send_raw(&self, bytes: &[u8]) {
        self.try_send_raw(bytes).await.expect("write to the broker");
    }

    /// Writes one message as a line.
    pub async fn send(&self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("a Value serializes");
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    /// Sends a request with a fresh numeric id and returns the id without waiting.
    pub async fn start(&self, method: &str, params: Value) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        id
    }

    /// The whole response message to the request with this id (any JSON id, `null` included).
    pub async fn response(&self, id: &Value) -> Value {
        let key = id.to_string();
        self.wait_for(&format!("a response with id {key}"), |state| {
            let queue = state.responses.get_mut(&key)?;
            let message = queue.pop_front();
            if queue.is_empty() {
                state.responses.remove(&key);
            }
            message
        })
        .await
    }

    /// The result of request `id`, or its error.
    pub async fn wait(&self, id: u64) -> Result<Value, RpcError> {
        let message = self.response(&json!(id)).await;
        result_of(&message)
    }

    /// Sends a request and waits for its result.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = self.start(method, params).await;
        self.wait(id).await
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
            .await;
    }

    /// `$/cancelRequest` for one of this connection's own requests.
    pub async fn cancel(&self, id: u64) {
        self.notify("$/cancelRequest", json!({ "id": id })).await;
    }

    /// The next broker-sent request or notification; panics if none comes in time.
    pub async fn next_incoming(&self) -> Value {
        self.wait_for("a request or notification from the broker", |state| {
            state.incoming.pop_front()
        })
        .await
    }

    /// The next broker-sent request or notification if one comes within `limit`.
    pub async fn next_incoming_within(&self, limit: Duration) -> Option<Value> {
        tokio::time::timeout(limit, self.next_incoming_inner())
            .await
            .ok()
            .flatten()
    }

    async fn next_incoming_inner(&self) -> Option<Value> {
        loop {
            let changed = self.shared.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let mut state = self.shared.state.lock().unwrap();
                if let Some(message) = state.incoming.pop_front() {
                    return Some(message);
                }
                if state.closed {
                    return None;
                }
            }
            changed.await;
        }
    }

    /// The next broker-sent message, which must be a `user-questions/request`.
    pub async fn next_request(&self) -> Value {
        let message = self.next_incoming().await;
        assert_eq!(
            message["method"], "user-questions/request",
            "expected a user-questions/request, got {message}"
        );
        assert!(
            message.get("id").is_some_and(|id| !id.is_null()),
            "a request carries an id: {message}"
        );
        message
    }

    /// Answers a broker-sent request with a result (`Value::Null` delegates).
    pub async fn reply(&self, request: &Value, result: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": result }))
            .await;
    }

    /// Answers a broker-sent request with an error object.
    pub async fn reply_error(&self, request: &Value, error: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "id": request["id"], "error": error }))
            .await;
    }

    /// Registers this connection as an answerer and returns its answerer id.
    pub async fn register_answerer(&self, scope: Value, prepend: bool, label: &str) -> String {
        let result = self
            .call(
                "answerers/register",
                json!({ "scope": scope, "prepend": prepend, "label": label }),
            )
            .await
            .unwrap_or_else(|e| panic!("answerers/register failed: {e:?}"));
        result["answerer"]
            .as_str()
            .unwrap_or_else(|| panic!("answerers/register result: {result}"))
            .to_owned()
    }

    /// Registers an agent and returns its handle `{ id, instance }`.
    pub async fn register_agent(&self, params: Value) -> Value {
        self.call("agents/register", params)
            .await
            .unwrap_or_else(|e| panic!("agents/register failed: {e:?}"))
    }

    /// Waits until the broker closes the connection; false if it is still open after `limit`.
    pub async fn closed_within(&self, limit: Duration) -> bool {
        let wait = async {
            loop {
                let changed = self.shared.changed.notified();
                tokio::pin!(changed);
                changed.as_mut().enable();
                if self.shared.state.lock().unwrap().closed {
                    return;
                }
                changed.await;
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }

    /// Waits until at least `count` lines have arrived (or the connection closed, or `limit` passed)
    /// and returns every line received so far.
    pub async fn lines_within(&self, count: usize, limit: Duration) -> Vec<String> {
        let wait = async {
            loop {
                let changed = self.shared.changed.notified();
                tokio::pin!(changed);
                changed.as_mut().enable();
                {
                    let state = self.shared.state.lock().unwrap();
                    if state.lines.len() >= count || state.closed {
                        return;
                    }
                }
                changed.await;
            }
        };
        let _ = tokio::time::timeout(limit, wait).await;
        self.lines()
    }

    /// Every line received so far, exactly as the broker wrote it.
    pub fn lines(&self) -> Vec<String> {
        self.shared.state.lock().unwrap().lines.clone()
    }

    /// Closes the connection (both directions) by dropping it.
    pub fn close(self) {
        drop(self);
    }

    async fn wait_for<T>(&self, what: &str, mut take: impl FnMut(&mut State) -> Option<T>) -> T {
        let wait = async {
            loop {
                let changed = self.shared.changed.notified();
                tokio::pin!(changed);
                changed.as_mut().enable();
                {
                    let mut state = self.shared.state.lock().unwrap();
                    if let Some(found) = take(&mut state) {
                        return Ok(found);
                    }
                    if state.closed {
                        return Err(format!(
                            "the broker closed the connection before {what} arrived"
                        ));
                    }
                }
                changed.await;
            }
        };
        match tokio::time::timeout(PATIENCE, wait).await {
            Ok(Ok(found)) => found,
            Ok(Err(problem)) => panic!("{problem}; lines received: {:?}", self.lines()),
            Err(_) => panic!(
                "no {what} within {PATIENCE:?}; lines received: {:?}",
                self.lines()
            ),
        }
    }
}

/// The `result` of a response message, or its `error` as an [`RpcError`].
pub fn result_of(message: &Value) -> Result<Value, RpcError> {
    assert_eq!(
        message["jsonrpc"], "2.0",
        "every response carries jsonrpc 2.0: {message}"
    );
    match (message.get("result"), message.get("error")) {
        (Some(result), None) => Ok(result.clone()),
        (None, Some(error)) => Err(RpcError::from_value(error)),
        _ => panic!("a response has exactly one of result and error: {message}"),
    }
}

async fn read_loop(reader: OwnedReadHalf, shared: Arc<Shared>) {
    let mut reader = BufReader::new(reader);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&buf);
        let line = text.strip_suffix('\n').unwrap_or(&text).to_owned();
        let mut state = shared.state.lock().unwrap();
        if let Ok(message) = serde_json::from_str::<Value>(&line) {
            if message.get("method").is_some() {
                state.incoming.push_back(message);
            } else {
                let key = message
                    .get("id")
                    .cloned()
                    .unwrap_or(Value::Null)
                    .to_string();
                state.responses.entry(key).or_default().push_back(message);
            }
        }
        state.lines.push(line);
        drop(state);
        shared.changed.notify_waiters();
    }
    shared.state.lock().unwrap().closed = true;
    shared.changed.notify_waiters();
}

/// Asserts that `result` is the JSON-RPC error `code` and returns it.
#[track_caller]
pub fn expect_rpc_error(result: Result<Value, RpcError>, code: i64) -> RpcError {
    match result {
        Err(error) if error.code == code => error,
        Err(error) => panic!("expected error {code}, got {error:?}"),
        Ok(value) => panic!("expected error {code}, got the result {value}"),
    }
}

/// Asserts that `result` is a `UserQuestionError` (-32001) with `data.code == code` and returns it.
#[track_caller]
pub fn expect_question_error(result: Result<Value, RpcError>, code: &str) -> RpcError {
    let error = expect_rpc_error(result, -32001);
    assert_eq!(
        error.data_code(),
        Some(code),
        "expected {code}, got {error:?}"
    );
    error
}
