//! JSON-RPC 2.0 messages, one per line (protocol 5.2), and the error codes of protocol 5.3.
//!
//! Architecture invariant: this is the only module that knows the shape of a JSON-RPC message
//! and picks error numbers. The server and the client exchange [`Message`]s and [`RpcError`]s,
//! never raw `jsonrpc` objects; each method's name, params and result are defined once, in
//! [`methods`], and lines are encoded from those types.

pub mod methods;

use askdesk_core::{AskError, RegistryError, UserQuestionError};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use methods::{NotificationMethod, RequestMethod};

/// The line is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// Not a JSON-RPC 2.0 object, a batch, or a line over the size limit.
pub const INVALID_REQUEST: i64 = -32600;
/// Unknown method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Params that do not fit the method; the message names the field path.
pub const INVALID_PARAMS: i64 = -32602;
/// An answerer failed with a non-domain error.
pub const INTERNAL_ERROR: i64 = -32603;
/// A `UserQuestionError`; `data.code` carries its code.
pub const USER_QUESTION_ERROR: i64 = -32001;
/// A request other than `initialize` or `ping` before `initialize`.
pub const NOT_INITIALIZED: i64 = -32002;
/// An agent registry error; `data.code` is `AGENT_ID_TAKEN` or `AGENT_NOT_LIVE`.
pub const REGISTRY_ERROR: i64 = -32003;
/// A limit was reached; `data` is `{ code: "LIMIT", limit: <name> }`.
pub const LIMIT_REACHED: i64 = -32004;

/// The protocol version this broker speaks.
pub const PROTOCOL_VERSION: u64 = 1;

/// A request id: a number or a string (null only in error responses to unreadable requests).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Id {
    Number(i64),
    String(String),
    Null,
}

/// One JSON-RPC message, as read from a line.
///
/// Params and results stay raw JSON text until a handler deserializes them into its own type, so a
/// batch of questions is parsed once, straight into `Question`s, never into an intermediate tree.
#[derive(Debug, Clone)]
pub enum Message {
    Request(Request),
    Notification(Notification),
    Response(Response),
}

#[derive(Debug, Clone)]
pub struct Request {
    pub id: Id,
    pub method: String,
    /// `None` when the message had no params.
    pub params: Option<Box<RawValue>>,
}

#[derive(Debug, Clone)]
pub struct Notification {
    pub method: String,
    pub params: Option<Box<RawValue>>,
}

#[derive(Debug, Clone)]
pub struct Response {
    pub id: Id,
    pub result: Result<Box<RawValue>, RpcError>,
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The same error (code and data kept) told in other words, for a reader other than the
    /// wire's (the CLI's own message for a dismissal).
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    pub fn parse_error(detail: impl std::fmt::Display) -> Self {
        Self::new(PARSE_ERROR, format!("parse error: {detail}"))
    }

    pub fn invalid_request(detail: impl Into<String>) -> Self {
        Self::new(INVALID_REQUEST, detail)
    }

    /// A request reusing the id of one of the connection's pending asks: answered under that id,
    /// as JSON-RPC has no other way to name it (the pending ask still gets its own response later).
    pub fn id_in_use() -> Self {
        Self::invalid_request("id: already used by a pending request of this connection")
    }

    pub fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, format!("method not found: {method}"))
    }

    pub fn invalid_params(detail: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, detail)
    }

    pub fn not_initialized(method: &str) -> Self {
        Self::new(NOT_INITIALIZED, format!("{method} sent before initialize"))
    }

    pub fn limit(name: &str, detail: impl std::fmt::Display) -> Self {
        Self::new(LIMIT_REACHED, format!("limit reached: {detail}"))
            .with_data(json!({ "code": "LIMIT", "limit": name }))
    }

    pub fn registry(error: &RegistryError) -> Self {
        Self::new(REGISTRY_ERROR, error.to_string()).with_data(json!({ "code": error.code() }))
    }

    pub fn user_question(error: &UserQuestionError) -> Self {
        Self::new(USER_QUESTION_ERROR, error.message.clone())
            .with_data(json!({ "code": error.code.as_str() }))
    }

    /// What an answerer's broken response to a relayed request means for that request.
    pub fn malformed_response(problem: &RpcError) -> Self {
        Self::new(
            INTERNAL_ERROR,
            format!("a malformed response: {}", problem.message),
        )
    }

    pub fn internal(answerer: &str, message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message).with_data(json!({ "answerer": answerer }))
    }

    /// An answerer's failure of a `user-questions/request` without a domain code (protocol 5.5): the
    /// broker fails the ask as an internal error carrying `message`.
    pub fn answerer_failure(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }

    /// The code in `data.code`, for domain and registry errors.
    pub fn data_code(&self) -> Option<&str> {
        self.data.as_ref()?.get("code")?.as_str()
    }

    /// The `UserQuestionError` code (`NO_PROVIDER`, ...), when this is one.
    pub fn question_code(&self) -> Option<&str> {
        match self.code {
            USER_QUESTION_ERROR => self.data_code(),
            _ => None,
        }
    }

    /// Whether this error, sent with a null id, is the broker refusing the whole connection (too
    /// many connections, or a line over its limit) as it closes it.
    pub fn refuses_connection(&self) -> bool {
        matches!(self.code, LIMIT_REACHED | INVALID_REQUEST)
    }
}

impl From<&AskError> for RpcError {
    fn from(error: &AskError) -> Self {
        match error {
            AskError::Invalid(shape) => RpcError::invalid_params(shape.to_string()),
            AskError::Question(question) => RpcError::user_question(question),
            AskError::Internal { answerer, message } => {
                RpcError::internal(answerer, message.clone())
            }
        }
    }
}

/// Why a line could not be read as a message: the error to send back, with the id when one was readable.
#[derive(Debug, Clone, PartialEq)]
pub struct BadMessage {
    pub id: Id,
    pub error: RpcError,
    /// It has an id and no method: the peer meant it as a response to one of our requests.
    pub answering: bool,
}

/// The fields of a JSON-RPC message; unknown fields are ignored. Small fields are borrowed from
/// the line and read only once the message's kind is known.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    method: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "present")]
    params: Option<Box<RawValue>>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Box<RawValue>>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

/// Tells a field that is present as `null` from one that is absent.
fn present<'de, T: Deserialize<'de>, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

/// Reads a request id: a string, a whole number that fits an `i64`, or null.
fn read_id(raw: &RawValue) -> Option<Id> {
    match raw.get().as_bytes().first() {
        Some(b'"') => serde_json::from_str(raw.get()).ok().map(Id::String),
        Some(b'n') => Some(Id::Null),
        _ => serde_json::from_str(raw.get()).ok().map(Id::Number),
    }
}

/// Parses one line (without its newline).
pub fn parse(line: &[u8]) -> Result<Message, BadMessage> {
    let first = line.iter().find(|b| !b.is_ascii_whitespace()).copied();
    let envelope: Envelope = match serde_json::from_slice(line) {
        Ok(envelope) if first == Some(b'{') => envelope,
        // Valid JSON that is not an object (serde would read an array as a struct's fields).
        Ok(_) => return Err(not_an_object(first)),
        Err(e) if e.is_data() => match serde_json::from_slice::<serde::de::IgnoredAny>(line) {
            Ok(_) if first == Some(b'{') => {
                return Err(invalid(
                    Id::Null,
                    &format!("not a JSON-RPC 2.0 message: {e}"),
                ))
            }
            Ok(_) => return Err(not_an_object(first)),
            Err(e) => {
                return Err(BadMessage {
                    id: Id::Null,
                    error: RpcError::parse_error(e),
                    answering: false,
                })
            }
        },
        Err(e) => {
            return Err(BadMessage {
                id: Id::Null,
                error: RpcError::parse_error(e),
                answering: false,
            })
        }
    };
    let Envelope {
        jsonrpc,
        id,
        method,
        params,
        result,
        error,
    } = envelope;
    let id = match id {
        None => None,
        Some(raw) => Some(read_id(raw).ok_or_else(|| {
            invalid(
                Id::Null,
                "id: expected a string, a whole number from -2^63 to 2^63-1, or null",
            )
        })?),
    };
    let version_ok = jsonrpc.is_some_and(|raw| {
        raw.get() == r#""2.0""#
            || serde_json::from_str::<String>(raw.get()).is_ok_and(|v| v == "2.0")
    });
    if !version_ok {
        const DETAIL: &str = r#"jsonrpc: expected "2.0""#;
        return Err(match id {
            Some(id) if method.is_none() => invalid_response(id, DETAIL),
            id => invalid(id.unwrap_or(Id::Null), DETAIL),
        });
    }
    if let Some(method) = method {
        let Ok(method) = serde_json::from_str::<String>(method.get()) else {
            return Err(invalid(id.unwrap_or(Id::Null), "method: expected a string"));
        };
        if let Some(params) = &params {
            if !matches!(params.get().as_bytes().first(), Some(b'{' | b'[' | b'n')) {
                return Err(invalid(
                    id.unwrap_or(Id::Null),
                    "params: expected an object or an array",
                ));
            }
        }
        let params = params.filter(|p| p.get() != "null");
        return Ok(match id {
            Some(id) => Message::Request(Request { id, method, params }),
            None => Message::Notification(Notification { method, params }),
        });
    }
    let Some(id) = id else {
        return Err(invalid(
            Id::Null,
            "expected a method, or an id with a result or an error",
        ));
    };
    if let Some(error) = error {
        let error = serde_json::from_str::<RpcError>(error.get()).map_err(|_| {
            invalid_response(id.clone(), "error: expected { code, message, data? }")
        })?;
        return Ok(Message::Response(Response {
            id,
            result: Err(error),
        }));
    }
    match result {
        Some(result) => Ok(Message::Response(Response {
            id,
            result: Ok(result),
        })),
        None => Err(invalid_response(
            id,
            "expected a method, or an id with a result or an error",
        )),
    }
}

fn not_an_object(first: Option<u8>) -> BadMessage {
    if first == Some(b'[') {
        invalid(
            Id::Null,
            "batches are not supported: send one JSON-RPC object per line",
        )
    } else {
        invalid(Id::Null, "expected a JSON-RPC 2.0 object")
    }
}

fn invalid(id: Id, detail: &str) -> BadMessage {
    BadMessage {
        id,
        error: RpcError::invalid_request(detail),
        answering: false,
    }
}

/// A message with an id and no method (meant as a response) that is not a valid one.
fn invalid_response(id: Id, detail: &str) -> BadMessage {
    BadMessage {
        answering: true,
        ..invalid(id, detail)
    }
}

#[derive(Serialize)]
struct OutRequest<'a, P> {
    jsonrpc: &'static str,
    id: &'a Id,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<P>,
}

#[derive(Serialize)]
struct OutNotification<'a, P> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<P>,
}

#[derive(Serialize)]
struct OutResponse<'a, R> {
    jsonrpc: &'static str,
    id: &'a Id,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<R>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a RpcError>,
}

fn line(message: &impl Serialize) -> Vec<u8> {
    // Most messages fit; growing from serde_json's default of 128 bytes costs copies.
    let mut line = Vec::with_capacity(512);
    serde_json::to_writer(&mut line, message).expect("protocol messages serialize");
    line.push(b'\n');
    line
}

/// Encodes a request of method `M` as one line, newline included.
pub fn encode_request<M: RequestMethod>(id: &Id, params: &M::Params<'_>) -> Vec<u8> {
    request_line(id, M::NAME, Some(params))
}

/// Encodes a notification of method `N` as one line, newline included.
pub fn encode_notification<N: NotificationMethod>(params: &N::Params) -> Vec<u8> {
    notification_line(N::NAME, Some(params))
}

/// Encodes the response to a request of method `M` as one line, newline included.
pub fn encode_response<M: RequestMethod>(
    id: &Id,
    result: Result<&M::Result, &RpcError>,
) -> Vec<u8> {
    response_line(id, result)
}

/// Encodes an error response as one line, newline included (`id` is null when the request's id
/// could not be read).
pub fn encode_error(id: &Id, error: &RpcError) -> Vec<u8> {
    response_line::<()>(id, Err(error))
}

fn request_line(id: &Id, method: &str, params: Option<&impl Serialize>) -> Vec<u8> {
    line(&OutRequest {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
}

fn notification_line(method: &str, params: Option<&impl Serialize>) -> Vec<u8> {
    line(&OutNotification {
        jsonrpc: "2.0",
        method,
        params,
    })
}

fn response_line<R: Serialize>(id: &Id, result: Result<&R, &RpcError>) -> Vec<u8> {
    match result {
        Ok(result) => line(&OutResponse {
            jsonrpc: "2.0",
            id,
            result: Some(result),
            error: None,
        }),
        Err(error) => line(&OutResponse::<&R> {
            jsonrpc: "2.0",
            id,
            result: None,
            error: Some(error),
        }),
    }
}

/// Reads the params of a request of method `M`, naming the offending field's path on failure.
pub fn request_params<M: RequestMethod>(
    params: Option<&RawValue>,
) -> Result<M::Params<'static>, RpcError> {
    self::params(params)
}

/// Reads the params of a notification of method `N`, naming the offending field's path on failure.
pub fn notification_params<N: NotificationMethod>(
    params: Option<&RawValue>,
) -> Result<N::Params, RpcError> {
    self::params(params)
}

/// Deserializes params, naming the offending field's path on failure (`questions[0].options[1].label: ...`).
/// Absent params read as `{}`.
pub fn params<T: serde::de::DeserializeOwned>(params: Option<&RawValue>) -> Result<T, RpcError> {
    from_str_with_path(params.map_or("{}", RawValue::get)).map_err(|(path, problem)| {
        if path == "." {
            RpcError::invalid_params(problem)
        } else {
            RpcError::invalid_params(format!("{path}: {problem}"))
        }
    })
}

/// Deserializes JSON text; on failure gives the offending field's path (`.` for the top level)
/// and the problem, without serde_json's line and column.
///
/// Tracking the path costs as much as the parse itself, so it is done only for text that already
/// failed: deserialization is deterministic, and the second pass fails at the same place.
pub fn from_str_with_path<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<T, (String, String)> {
    let plain = match serde_json::from_str(text) {
        Ok(value) => return Ok(value),
        Err(error) => error,
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
        Err(error) => {
            let path = error.path().to_string();
            Err((path, without_position(&error.into_inner())))
        }
        // Unreachable by determinism; report the first pass's error rather than panic.
        Ok(_) => Err((".".to_owned(), without_position(&plain))),
    }
}

/// A serde_json error's text without its " at line L column C" suffix: params are one line, and
/// the field path says where the problem is. serde_json's two words for half a surrogate pair
/// ("unexpected end of hex escape" for a high half alone, "lone leading surrogate" for a low one)
/// are put plainly, and so are the names of the broker's own types ([`in_json_terms`]).
fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    let text = match text.strip_suffix(&suffix) {
        Some(text) => text.to_owned(),
        None => text,
    };
    match text.as_str() {
        "unexpected end of hex escape" | "lone leading surrogate in hex escape" => {
            "a \\u escape is half of a UTF-16 surrogate pair (\\uD800-\\uDBFF must be followed by \\uDC00-\\uDFFF, which comes only after one)".to_owned()
        }
        _ => in_json_terms(&text),
    }
}

/// serde's words in those of JSON, which is what a client writes: `expected struct Handle` (or
/// `... with 2 elements`, for params given as an array) and `a map` are an object, `a sequence`
/// an array, `expected u64` a non-negative integer.
fn in_json_terms(text: &str) -> String {
    // What was found: "invalid type: map, expected ...".
    let text = text
        .replace("invalid type: map,", "invalid type: object,")
        .replace("invalid type: sequence,", "invalid type: array,");
    let Some(at) = text.rfind("expected ") else {
        return text;
    };
    let (problem, expected) = text.split_at(at + "expected ".len());
    let plain = if let Some(rest) = expected.strip_prefix("struct ") {
        match rest.split_once(" with ") {
            Some((_, elements)) => format!("an object (or an array of its {elements} in order)"),
            None => "an object".to_owned(),
        }
    } else {
        match expected {
            "u8" | "u16" | "u32" | "u64" | "usize" => "a non-negative integer".to_owned(),
            "i8" | "i16" | "i32" | "i64" | "isize" => "an integer".to_owned(),
            "a sequence" => "an array".to_owned(),
            "a map" => "an object".to_owned(),
            _ => return text,
        }
    };
    format!("{problem}{plain}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(raw: &RawValue) -> Value {
        serde_json::from_str(raw.get()).expect("raw values hold valid JSON")
    }

    fn raw(value: &impl Serialize) -> Box<RawValue> {
        serde_json::value::to_raw_value(value).expect("values serialize")
    }

    /// Encodes a parsed message back into its line.
    fn encode(message: &Message) -> Vec<u8> {
        match message {
            Message::Request(Request { id, method, params }) => {
                request_line(id, method, params.as_ref())
            }
            Message::Notification(Notification { method, params }) => {
                notification_line(method, params.as_ref())
            }
            Message::Response(Response { id, result }) => response_line(id, result.as_ref()),
        }
    }

    /// A message as a value tree, so cases can be compared.
    fn shape(message: &Message) -> Value {
        let raw = |p: &Option<Box<RawValue>>| p.as_deref().map(value).unwrap_or(Value::Null);
        match message {
            Message::Request(r) => {
                json!({ "request": { "id": r.id, "method": r.method, "params": raw(&r.params) } })
            }
            Message::Notification(n) => {
                json!({ "notification": { "method": n.method, "params": raw(&n.params) } })
            }
            Message::Response(r) => match &r.result {
                Ok(result) => json!({ "response": { "id": r.id, "result": value(result) } }),
                Err(error) => json!({ "response": { "id": r.id, "error": error } }),
            },
        }
    }

    fn check(line: &str, expected: Result<Value, (Id, i64)>) {
        let got = parse(line.as_bytes())
            .map(|m| shape(&m))
            .map_err(|bad| (bad.id, bad.error.code));
        assert_eq!(got, expected, "line: {line}");
    }

    #[test]
    fn parse_cases() {
        check(
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}"#,
            Ok(json!({ "request": { "id": 1, "method": "ping", "params": {} } })),
        );
        check(
            r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#,
            Ok(json!({ "request": { "id": "a", "method": "ping", "params": null } })),
        );
        check(
            r#"{"jsonrpc":"2.0","id":null,"method":"ping","params":null}"#,
            Ok(json!({ "request": { "id": null, "method": "ping", "params": null } })),
        );
        check(
            r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3}}"#,
            Ok(json!({ "notification": { "method": "$/cancelRequest", "params": { "id": 3 } } })),
        );
        check(
            r#"{"jsonrpc":"2.0","id":4,"result":null}"#,
            Ok(json!({ "response": { "id": 4, "result": null } })),
        );
        check(
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no"}}"#,
            Ok(json!({ "response": { "id": 4, "error": { "code": -1, "message": "no" } } })),
        );
        check(
            r#" {"jsonrpc":"2.0","id":1,"method":"ping","extra":[1]} "#,
            Ok(json!({ "request": { "id": 1, "method": "ping", "params": null } })),
        );
        // Fields are read from the line as written: escapes are decoded.
        check(
            r#"{"jsonrpc":"2\u002e0","id":"a\"b","method":"pi\u006eg"}"#,
            Ok(json!({ "request": { "id": "a\"b", "method": "ping", "params": null } })),
        );
        check(
            r#"{"jsonrpc":null,"id":6,"method":"ping"}"#,
            Err((Id::Number(6), INVALID_REQUEST)),
        );
        check(
            r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}"#,
            Ok(json!({ "request": { "id": i64::MIN, "method": "ping", "params": null } })),
        );
        check(
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#,
            Err((Id::Null, INVALID_REQUEST)),
        );
        // An id out of range says what the range is.
        let bad = parse(br#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#)
            .expect_err("out of range");
        assert_eq!(
            bad.error.message,
            "id: expected a string, a whole number from -2^63 to 2^63-1, or null"
        );
        check("{not json", Err((Id::Null, PARSE_ERROR)));
        check("\u{0}", Err((Id::Null, PARSE_ERROR)));
        check("", Err((Id::Null, PARSE_ERROR)));
        check("[]", Err((Id::Null, INVALID_REQUEST)));
        check(
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            Err((Id::Null, INVALID_REQUEST)),
        );
        check(r#"["2.0", 1, "ping"]"#, Err((Id::Null, INVALID_REQUEST)));
        check("7", Err((Id::Null, INVALID_REQUEST)));
        check(r#""text""#, Err((Id::Null, INVALID_REQUEST)));
        check(
            r#"{"id":5,"method":"ping"}"#,
            Err((Id::Number(5), INVALID_REQUEST)),
        );
        check(
            r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#,
            Err((Id::Number(5), INVALID_REQUEST)),
        );
        check(
            r#"{"jsonrpc":"2.0","id":5,"method":7}"#,
            Err((Id::Number(5), INVALID_REQUEST)),
        );
        check(
            r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":3}"#,
            Err((Id::Number(5), INVALID_REQUEST)),
        );
        check(
            r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":"x"}"#,
            Err((Id::Number(5), INVALID_REQUEST)),
        );
        check(
            r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#,
            Err((Id::Null, INVALID_REQUEST)),
        );
        check(
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            Err((Id::Null, INVALID_REQUEST)),
        );
        check(
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
            Err((Id::Null, INVALID_REQUEST)),
        );
        check(r#"{"jsonrpc":"2.0"}"#, Err((Id::Null, INVALID_REQUEST)));
        check(
            r#"{"jsonrpc":"2.0","id":2}"#,
            Err((Id::Number(2), INVALID_REQUEST)),
        );
    }

    #[test]
    fn encode_is_exact() {
        let params = json!({ "id": 1 });
        let cases: [(Vec<u8>, &str); 5] = [
            (
                request_line(&Id::Number(1), "ping", Some(&json!({}))),
                r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}"#,
            ),
            (
                request_line(&Id::Number(2), "ping", None::<&Value>),
                r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            ),
            (
                notification_line("$/cancelRequest", Some(&params)),
                r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#,
            ),
            (
                encode_error(&Id::Null, &RpcError::parse_error("x")),
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: x"}}"#,
            ),
            (
                encode_error(
                    &Id::String("7".into()),
                    &RpcError::user_question(&UserQuestionError::no_provider()),
                ),
                r#"{"jsonrpc":"2.0","id":"7","error":{"code":-32001,"message":"no user-questions answerer accepted the request","data":{"code":"NO_PROVIDER"}}}"#,
            ),
        ];
        for (line, expected) in cases {
            assert_eq!(std::str::from_utf8(&line).unwrap(), format!("{expected}\n"));
            // What is encoded parses back to the same message.
            let message = parse(&line[..line.len() - 1]).unwrap();
            assert_eq!(encode(&message), line);
        }
        let null = response_line(&Id::Number(3), Ok(&Value::Null));
        assert_eq!(
            std::str::from_utf8(&null).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":null}\n"
        );
    }

    #[test]
    fn params_errors_name_the_path() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct P {
            questions: Vec<askdesk_core::Question>,
        }
        let bad =
            raw(&json!({"questions": [{"id": "a", "question": "?", "options": [{"label": 7}]}]}));
        let err = params::<P>(Some(&bad)).unwrap_err();
        assert_eq!(err.code, INVALID_PARAMS);
        assert!(
            err.message
                .starts_with("questions[0].options[0].label: invalid type: integer `7`"),
            "{}",
            err.message
        );
        let err = params::<P>(None).unwrap_err();
        assert_eq!(err.message, "missing field `questions`");
    }

    #[test]
    fn type_names_are_put_in_json_terms() {
        assert_eq!(
            in_json_terms("invalid type: string \"x\", expected struct Handle"),
            "invalid type: string \"x\", expected an object"
        );
        assert_eq!(
            in_json_terms("invalid length 0, expected struct AskRequest with 2 elements"),
            "invalid length 0, expected an object (or an array of its 2 elements in order)"
        );
        assert_eq!(
            in_json_terms("invalid value: integer `-1`, expected u64"),
            "invalid value: integer `-1`, expected a non-negative integer"
        );
        assert_eq!(
            in_json_terms("invalid type: string \"yes\", expected a boolean"),
            "invalid type: string \"yes\", expected a boolean"
        );
        assert_eq!(in_json_terms("missing field `id`"), "missing field `id`");
        assert_eq!(
            in_json_terms("invalid type: integer `5`, expected a sequence"),
            "invalid type: integer `5`, expected an array"
        );
        assert_eq!(
            in_json_terms("invalid type: integer `5`, expected a map"),
            "invalid type: integer `5`, expected an object"
        );
        assert_eq!(
            in_json_terms("invalid type: map, expected a string"),
            "invalid type: object, expected a string"
        );
        assert_eq!(
            in_json_terms("invalid type: sequence, expected a string"),
            "invalid type: array, expected a string"
        );
        // Through a real parse, with the field path.
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct P {
            agent: askdesk_core::Handle,
        }
        let err = params::<P>(Some(&raw(&json!({ "agent": "coder" })))).unwrap_err();
        assert_eq!(
            err.message,
            "agent: invalid type: string \"coder\", expected an object"
        );
    }

    #[test]
    fn half_a_surrogate_pair_is_named_as_such() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct P {
            text: String,
        }
        for escaped in [
            r"a\ud800b",
            r"\ud800",
            r"\udc00x",
            r"\ud800\u0041",
            r"\ud800\n",
        ] {
            let text = format!(r#"{{"text":"{escaped}"}}"#);
            let raw = RawValue::from_string(text).unwrap();
            let err = params::<P>(Some(&raw)).unwrap_err();
            assert_eq!(
                err.message,
                r"text: a \u escape is half of a UTF-16 surrogate pair (\uD800-\uDBFF must be followed by \uDC00-\uDFFF, which comes only after one)",
                "{escaped}"
            );
        }
        // A whole pair is a character.
        let raw = RawValue::from_string(r#"{"text":"\ud83d\ude00"}"#.to_owned()).unwrap();
        assert_eq!(params::<P>(Some(&raw)).unwrap().text, "\u{1F600}");
    }
}
