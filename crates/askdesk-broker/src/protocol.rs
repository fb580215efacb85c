//! JSON-RPC 2.0 messages, one per line (SPEC 5.2), and the error codes of SPEC 5.3.
//!
//! Architecture invariant: this is the only module that knows the shape of a JSON-RPC message.
//! The server and the client exchange [`Message`]s and [`RpcError`]s, never raw `jsonrpc` objects.

use askdesk_core::{AskError, RegistryError, UserQuestionError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

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

impl From<u64> for Id {
    fn from(n: u64) -> Self {
        Id::Number(n as i64)
    }
}

/// One JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Request(Request),
    Notification(Notification),
    Response(Response),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub id: Id,
    pub method: String,
    /// `Value::Null` when the message had no params.
    pub params: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    pub method: String,
    pub params: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub id: Id,
    pub result: Result<Value, RpcError>,
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

    pub fn parse_error(detail: impl std::fmt::Display) -> Self {
        Self::new(PARSE_ERROR, format!("parse error: {detail}"))
    }

    pub fn invalid_request(detail: impl Into<String>) -> Self {
        Self::new(INVALID_REQUEST, detail)
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

    pub fn internal(answerer: &str, message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message).with_data(json!({ "answerer": answerer }))
    }

    /// The code in `data.code`, for domain and registry errors.
    pub fn data_code(&self) -> Option<&str> {
        self.data.as_ref()?.get("code")?.as_str()
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
}

/// Parses one line (without its newline).
pub fn parse(line: &[u8]) -> Result<Message, BadMessage> {
    let value: Value = serde_json::from_slice(line).map_err(|e| BadMessage {
        id: Id::Null,
        error: RpcError::parse_error(e),
    })?;
    let mut object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(invalid(
                Id::Null,
                "batches are not supported: send one JSON-RPC object per line",
            ))
        }
        _ => return Err(invalid(Id::Null, "expected a JSON-RPC 2.0 object")),
    };
    let id = match object.remove("id") {
        None => None,
        Some(value) => Some(
            serde_json::from_value::<Id>(value)
                .map_err(|_| invalid(Id::Null, "id: expected a string, an integer or null"))?,
        ),
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(
            id.unwrap_or(Id::Null),
            r#"jsonrpc: expected "2.0""#,
        ));
    }
    if let Some(method) = object.remove("method") {
        let Value::String(method) = method else {
            return Err(invalid(id.unwrap_or(Id::Null), "method: expected a string"));
        };
        let params = object.remove("params").unwrap_or(Value::Null);
        if !matches!(params, Value::Object(_) | Value::Array(_) | Value::Null) {
            return Err(invalid(
                id.unwrap_or(Id::Null),
                "params: expected an object or an array",
            ));
        }
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
    if let Some(error) = object.remove("error") {
        let error = serde_json::from_value::<RpcError>(error)
            .map_err(|_| invalid(id.clone(), "error: expected { code, message, data? }"))?;
        return Ok(Message::Response(Response {
            id,
            result: Err(error),
        }));
    }
    match object.remove("result") {
        Some(result) => Ok(Message::Response(Response {
            id,
            result: Ok(result),
        })),
        None => Err(invalid(
            id,
            "expected a method, or an id with a result or an error",
        )),
    }
}

fn invalid(id: Id, detail: &str) -> BadMessage {
    BadMessage {
        id,
        error: RpcError::invalid_request(detail),
    }
}

/// Encodes a message as one line, newline included.
pub fn encode(message: &Message) -> Vec<u8> {
    let mut object = Map::new();
    object.insert("jsonrpc".into(), Value::from("2.0"));
    match message {
        Message::Request(Request { id, method, params }) => {
            object.insert(
                "id".into(),
                serde_json::to_value(id).expect("ids serialize"),
            );
            object.insert("method".into(), Value::from(method.as_str()));
            if !params.is_null() {
                object.insert("params".into(), params.clone());
            }
        }
        Message::Notification(Notification { method, params }) => {
            object.insert("method".into(), Value::from(method.as_str()));
            if !params.is_null() {
                object.insert("params".into(), params.clone());
            }
        }
        Message::Response(Response { id, result }) => {
            object.insert(
                "id".into(),
                serde_json::to_value(id).expect("ids serialize"),
            );
            match result {
                Ok(value) => object.insert("result".into(), value.clone()),
                Err(error) => object.insert(
                    "error".into(),
                    serde_json::to_value(error).expect("errors serialize"),
                ),
            };
        }
    }
    let mut line = serde_json::to_vec(&Value::Object(object)).expect("a JSON value serializes");
    line.push(b'\n');
    line
}

/// Deserializes params, naming the offending field's path on failure (`questions[0].options[1].label: ...`).
pub fn params<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    let params = if params.is_null() {
        Value::Object(Map::new())
    } else {
        params
    };
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            RpcError::invalid_params(inner.to_string())
        } else {
            RpcError::invalid_params(format!("{path}: {inner}"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &str, expected: Result<Message, (Id, i64)>) {
        let got = parse(line.as_bytes()).map_err(|bad| (bad.id, bad.error.code));
        assert_eq!(got, expected, "line: {line}");
    }

    #[test]
    fn parse_cases() {
        use Message::*;
        check(
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}"#,
            Ok(Request(super::Request {
                id: Id::Number(1),
                method: "ping".into(),
                params: json!({}),
            })),
        );
        check(
            r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#,
            Ok(Request(super::Request {
                id: Id::String("a".into()),
                method: "ping".into(),
                params: Value::Null,
            })),
        );
        check(
            r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3}}"#,
            Ok(Notification(super::Notification {
                method: "$/cancelRequest".into(),
                params: json!({"id": 3}),
            })),
        );
        check(
            r#"{"jsonrpc":"2.0","id":4,"result":null}"#,
            Ok(Response(super::Response {
                id: Id::Number(4),
                result: Ok(Value::Null),
            })),
        );
        check(
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no"}}"#,
            Ok(Response(super::Response {
                id: Id::Number(4),
                result: Err(RpcError::new(-1, "no")),
            })),
        );
        check("{not json", Err((Id::Null, PARSE_ERROR)));
        check("\u{0}", Err((Id::Null, PARSE_ERROR)));
        check("[]", Err((Id::Null, INVALID_REQUEST)));
        check(
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            Err((Id::Null, INVALID_REQUEST)),
        );
        check("7", Err((Id::Null, INVALID_REQUEST)));
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
            r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#,
            Err((Id::Null, INVALID_REQUEST)),
        );
        check(
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
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
        let cases = [
            (
                Message::Request(Request {
                    id: Id::Number(1),
                    method: "ping".into(),
                    params: json!({}),
                }),
                r#"{"id":1,"jsonrpc":"2.0","method":"ping","params":{}}"#,
            ),
            (
                Message::Notification(Notification {
                    method: "$/cancelRequest".into(),
                    params: json!({"id": 1}),
                }),
                r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#,
            ),
            (
                Message::Response(Response {
                    id: Id::Null,
                    result: Err(RpcError::parse_error("x")),
                }),
                r#"{"error":{"code":-32700,"message":"parse error: x"},"id":null,"jsonrpc":"2.0"}"#,
            ),
            (
                Message::Response(Response {
                    id: Id::String("7".into()),
                    result: Err(RpcError::user_question(&UserQuestionError::no_provider())),
                }),
                r#"{"error":{"code":-32001,"data":{"code":"NO_PROVIDER"},"message":"no user-questions answerer accepted the request"},"id":"7","jsonrpc":"2.0"}"#,
            ),
        ];
        for (message, expected) in cases {
            let line = encode(&message);
            assert_eq!(std::str::from_utf8(&line).unwrap(), format!("{expected}\n"));
            assert_eq!(parse(&line[..line.len() - 1]).unwrap(), message);
        }
    }

    #[test]
    fn params_errors_name_the_path() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct P {
            questions: Vec<askdesk_core::Question>,
        }
        let err = params::<P>(
            json!({"questions": [{"id": "a", "question": "?", "options": [{"label": 7}]}]}),
        )
        .unwrap_err();
        assert_eq!(err.code, INVALID_PARAMS);
        assert!(
            err.message
                .starts_with("questions[0].options[0].label: invalid type: integer `7`"),
            "{}",
            err.message
        );
        let err = params::<P>(Value::Null).unwrap_err();
        assert_eq!(err.message, "missing field `questions`");
    }
}
