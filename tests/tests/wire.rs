//! Framing and the error codes of protocol 5.2 and 5.3, checked on the exact bytes the broker sends.

use askdesk_e2e::{ask, expect_question_error, expect_rpc_error, q, Broker, Conn};
use serde_json::{json, Value};
use std::time::Duration;

const QUIET: Duration = Duration::from_millis(300);

#[tokio::test(flavor = "multi_thread")]
async fn initialize_and_ping_have_the_documented_shape() {
    let broker = Broker::start();
    let conn = broker.conn_uninit().await;
    assert_eq!(
        conn.call("ping", json!({})).await.unwrap(),
        json!({}),
        "ping is allowed before initialize"
    );
    let result = conn
        .call(
            "initialize",
            json!({ "protocolVersion": 1, "client": { "name": "e2e", "version": "1.2.3" } }),
        )
        .await
        .unwrap();
    assert_eq!(result["protocolVersion"], 1, "{result}");
    assert_eq!(result["server"]["name"], "askdesk", "{result}");
    assert!(
        result["server"]["version"]
            .as_str()
            .is_some_and(|v| !v.is_empty()),
        "{result}"
    );
    // Every line is one JSON object with jsonrpc 2.0 and the id echoed exactly.
    conn.send_raw(br#"{"jsonrpc":"2.0","id":"str-id","method":"ping","params":{}}"#)
        .await;
    conn.send_raw(b"\n").await;
    let response = conn.response(&json!("str-id")).await;
    assert_eq!(
        response,
        json!({ "jsonrpc": "2.0", "id": "str-id", "result": {} })
    );
    for line in conn.lines() {
        let message: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(message.is_object() && message["jsonrpc"] == "2.0", "{line}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ping_without_params_and_with_id_zero() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    conn.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\n")
        .await;
    assert_eq!(conn.response(&json!(0)).await["result"], json!({}));
}

#[tokio::test(flavor = "multi_thread")]
async fn parse_error_has_null_id_and_keeps_the_connection() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    for garbage in [
        &b"{not json\n"[..],
        b"\"unterminated\n",
        b"{\"jsonrpc\":\"2.0\",\n",
        b"\xff\xfe\n",
    ] {
        conn.send_raw(garbage).await;
        let response = conn.response(&Value::Null).await;
        assert_eq!(
            response["error"]["code"],
            -32700,
            "for {:?}: {response}",
            String::from_utf8_lossy(garbage)
        );
        assert_eq!(response["id"], Value::Null);
        assert_eq!(
            conn.call("ping", json!({})).await.unwrap(),
            json!({}),
            "the connection stays open"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_requests_get_32600_and_keep_the_connection() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    // (line, the id the error response must carry)
    let cases: &[(&str, Value)] = &[
        ("[]", Value::Null),
        (
            r#"[{"jsonrpc":"2.0","id":555,"method":"ping"}]"#,
            Value::Null,
        ),
        ("42", Value::Null),
        (r#""ping""#, Value::Null),
        ("null", Value::Null),
        ("true", Value::Null),
        (r#"{"id":7,"method":"ping"}"#, json!(7)),
        (r#"{"jsonrpc":"1.0","id":8,"method":"ping"}"#, json!(8)),
        (r#"{"jsonrpc":2,"id":9,"method":"ping"}"#, json!(9)),
        (r#"{"jsonrpc":"2.0","id":10,"method":5}"#, json!(10)),
        (r#"{"jsonrpc":"2.0"}"#, Value::Null),
    ];
    for (line, id) in cases {
        conn.send_raw(format!("{line}\n").as_bytes()).await;
        let response = conn.response(id).await;
        assert_eq!(response["error"]["code"], -32600, "for {line}: {response}");
        assert_eq!(response["jsonrpc"], "2.0", "for {line}: {response}");
        assert_eq!(
            conn.call("ping", json!({})).await.unwrap(),
            json!({}),
            "connection open after {line}"
        );
    }
    // A batch is refused as a whole: its request is not served.
    assert!(
        !conn.lines().iter().any(|l| l.contains("555")),
        "{:?}",
        conn.lines()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn blank_lines_are_ignored() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    let before = conn.lines().len();
    conn.send_raw(b"\n\n   \n\t\n\r\n").await;
    assert_eq!(conn.call("ping", json!({})).await.unwrap(), json!({}));
    let after = conn.lines();
    assert_eq!(
        after.len(),
        before + 1,
        "only the ping was answered: {after:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_line_over_the_default_limit_gets_32600_and_closes_only_that_connection() {
    let broker = Broker::start();
    let bystander = broker.conn().await;
    let conn = broker.conn().await;
    // protocol 1.1: 4 MiB per message by default. A valid JSON line just over it.
    let filler = "x".repeat(4 * 1024 * 1024 + 16);
    let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":777,\"method\":\"ping\",\"params\":{{\"pad\":\"{filler}\"}}}}\n");
    // The broker may close while we are still writing; what it sent back is what counts.
    let _ = conn.try_send_raw(line.as_bytes()).await;
    assert_cut_off_unserved(&conn, 777).await;
    assert_eq!(
        bystander.call("ping", json!({})).await.unwrap(),
        json!({}),
        "other connections are undisturbed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endless_line_without_newline_is_cut_off() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    let chunk = vec![b'a'; 1024 * 1024];
    for _ in 0..6 {
        if conn.try_send_raw(&chunk).await.is_err() {
            break;
        }
    }
    let response = conn.response(&Value::Null).await;
    assert_eq!(response["error"]["code"], -32600, "{response}");
    assert!(
        conn.closed_within(askdesk_e2e::PATIENCE).await,
        "the connection is closed"
    );
    let other = broker.conn().await;
    assert_eq!(other.call("ping", json!({})).await.unwrap(), json!({}));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_line_just_under_the_limit_is_served() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    let filler = "x".repeat(4 * 1024 * 1024 - 1024);
    let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"pad\":\"{filler}\"}}}}\n");
    conn.send_raw(line.as_bytes()).await;
    assert_eq!(conn.wait(1).await.unwrap(), json!({}));
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_methods_get_32601_and_unknown_dollar_notifications_are_ignored() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    let error = expect_rpc_error(conn.call("no/such/method", json!({})).await, -32601);
    assert!(
        error.message.contains("no/such/method"),
        "the message names the method: {error:?}"
    );
    expect_rpc_error(conn.call("$/unknownRequest", json!({})).await, -32601);
    expect_rpc_error(conn.call("user-questions/request", json!({})).await, -32601);
    let before = conn.lines().len();
    conn.notify("$/unknownNotification", json!({ "x": 1 }))
        .await;
    conn.notify("$/progress", json!({})).await;
    assert_eq!(conn.call("ping", json!({})).await.unwrap(), json!({}));
    assert_eq!(
        conn.lines().len(),
        before + 1,
        "notifications get no response: {:?}",
        conn.lines()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_before_initialize_get_32002_except_ping() {
    let broker = Broker::start();
    let conn = broker.conn_uninit().await;
    for method in [
        "agents/list",
        "agents/register",
        "user-questions/ask",
        "answerers/register",
        "askdesk/status",
    ] {
        let params = if method == "user-questions/ask" {
            ask(vec![q("a", "?", &["Yes"])], None)
        } else {
            json!({})
        };
        expect_rpc_error(conn.call(method, params).await, -32002);
    }
    expect_rpc_error(conn.call("no/such/method", json!({})).await, -32002);
    assert_eq!(conn.call("ping", json!({})).await.unwrap(), json!({}));
    conn.initialize("late").await;
    assert_eq!(
        conn.call("agents/list", json!({})).await.unwrap(),
        json!({ "agents": [] })
    );
}

/// Every invalid-params case names the offending field's path in its message.
#[tokio::test(flavor = "multi_thread")]
async fn invalid_params_name_the_field_path() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    let many: Vec<Value> = (0..65).map(|i| q(&format!("q{i}"), "?", &[])).collect();
    let many_options: Vec<String> = (0..65).map(|i| format!("o{i}")).collect();
    let many_options: Vec<&str> = many_options.iter().map(String::as_str).collect();
    let huge = "y".repeat(256 * 1024 + 1);
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "user-questions/ask",
            json!({ "questions": [{ "id": "a", "question": "?", "options": [{ "label": "x" }, { "label": "" }] }] }),
            "questions[0].options[1].label: expected a non-empty string",
        ),
        (
            "user-questions/ask",
            json!({ "questions": [{ "id": "a", "question": "?", "options": [{ "label": 7 }] }] }),
            "questions[0].options[0].label",
        ),
        (
            "user-questions/ask",
            json!({ "questions": [{ "id": "", "question": "?" }] }),
            "questions[0].id",
        ),
        (
            "user-questions/ask",
            json!({ "questions": [{ "id": "a", "question": "" }] }),
            "questions[0].question",
        ),
        (
            "user-questions/ask",
            json!({ "questions": [{ "id": "a" }] }),
            "question",
        ),
        (
            "user-questions/ask",
            json!({ "questions": [{ "id": "a", "question": "?" }, { "id": "a", "question": "?" }] }),
            "questions[1].id",
        ),
        (
            "user-questions/ask",
            json!({ "questions": [{ "id": "a", "question": "?", "options": [{ "label": "x" }, { "label": "x" }] }] }),
            "questions[0].options[1].label",
        ),
        (
            "user-questions/ask",
            json!({ "questions": [{ "id": "a", "question": "?", "multiSelect": "yes" }] }),
            "questions[0].multiSelect",
        ),
        (
            "user-questions/ask",
            json!({ "questions": "a" }),
            "questions",
        ),
        ("user-questions/ask", json!({}), "questions"),
        (
            "user-questions/ask",
            json!({ "questions": many }),
            "questions",
        ),
        (
            "user-questions/ask",
            json!({ "questions": [q("a", "?", &many_options)] }),
            "questions[0].options",
        ),
        (
            "user-questions/ask",
            json!({ "questions": [{ "id": "a", "question": huge }] }),
            "questions[0].question",
        ),
        (
            "user-questions/ask",
            json!({ "questions": [q("a", "?", &["Yes"])], "agent": { "id": "x" } }),
            "agent",
        ),
        ("agents/register", json!({}), "id"),
        ("agents/register", json!({ "id": 5 }), "id"),
        ("agents/register", json!({ "id": "" }), "id"),
        (
            "agents/register",
            json!({ "id": "a", "owner": "root" }),
            "owner",
        ),
        ("agents/register", json!({ "id": "a", "meta": [1] }), "meta"),
        ("agents/unregister", json!({}), "agent"),
        (
            "answerers/register",
            json!({ "scope": "everyone" }),
            "scope",
        ),
        (
            "answerers/register",
            json!({ "scope": { "agent": { "id": "a" } } }),
            "scope",
        ),
        ("answerers/unregister", json!({}), "answerer"),
        (
            "initialize",
            json!({ "protocolVersion": "one", "client": { "name": "x" } }),
            "protocolVersion",
        ),
        ("initialize", json!({ "protocolVersion": 1 }), "client"),
    ];
    for (method, params, path) in cases {
        let shown = params.to_string();
        let shown = if shown.len() > 200 {
            format!("{}...", &shown[..200])
        } else {
            shown
        };
        let error = match conn.call(method, params).await {
            Err(error) => error,
            Ok(result) => panic!("{method} {shown}: expected -32602, got the result {result}"),
        };
        assert_eq!(error.code, -32602, "{method} {shown}: {error:?}");
        assert!(
            error.message.contains(path),
            "{method} {shown}: the message {:?} should name {path:?}",
            error.message
        );
        assert_eq!(
            conn.call("ping", json!({})).await.unwrap(),
            json!({}),
            "connection open after {method} {shown}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_fields_are_ignored() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    let result = conn
        .call(
            "agents/register",
            json!({ "id": "extra-fields", "colour": "blue", "label": "L", "meta": { "cwd": "/" } }),
        )
        .await
        .unwrap();
    assert_eq!(result["id"], "extra-fields");
    let error = expect_rpc_error(
        conn.call(
            "user-questions/ask",
            json!({ "questions": [{ "id": "a", "question": "?", "future": true, "options": [{ "label": "Y", "icon": "x" }] }], "priority": 3 }),
        )
        .await,
        -32001,
    );
    assert_eq!(
        error.data_code(),
        Some("NO_PROVIDER"),
        "the request passed shape validation: {error:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_message_never_disturbs_another_connection() {
    let broker = Broker::start();
    let answerer = broker.conn().await;
    answerer
        .register_answerer(json!("all"), false, "holder")
        .await;
    let asker = broker.conn().await;
    let pending = asker
        .start(
            "user-questions/ask",
            ask(vec![q("a", "Go?", &["Yes", "No"])], None),
        )
        .await;
    let request = answerer.next_request().await;
    let rowdy = broker.conn().await;
    rowdy.send_raw(b"{oops\n[1,2]\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"user-questions/ask\",\"params\":{\"questions\":7}}\n").await;
    rowdy
        .send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{\"answers\":[]}}\n")
        .await;
    assert_eq!(rowdy.call("ping", json!({})).await.unwrap(), json!({}));
    answerer
        .reply(
            &request,
            json!({ "answers": [{ "id": "a", "selected": ["No"] }] }),
        )
        .await;
    assert_eq!(
        asker.wait(pending).await.unwrap(),
        json!({ "answers": [{ "id": "a", "selected": ["No"] }] })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_duplicate_pending_id_on_one_connection_is_refused_without_losing_the_first() {
    let broker = Broker::start();
    let answerer = broker.conn().await;
    answerer
        .register_answerer(json!("all"), false, "holder")
        .await;
    let asker = broker.conn().await;
    let line = json!({ "jsonrpc": "2.0", "id": "same", "method": "user-questions/ask",
                       "params": ask(vec![q("a", "Go?", &["Yes"])], None) });
    asker.send(&line).await;
    let request = answerer.next_request().await;
    asker.send(&line).await;
    let refused = json!({ "code": -32600,
                          "message": "id: already used by a pending request of this connection" });
    let refusal = asker.response(&json!("same")).await;
    assert_eq!(
        refusal["error"], refused,
        "the second request with a pending id is refused: {refusal}"
    );
    assert!(
        answerer.next_incoming_within(QUIET).await.is_none(),
        "the duplicate was not dispatched"
    );
    // Any other method under the pending id is refused too: a client matching replies by id
    // would take its result for the ask's.
    for method in ["ping", "agents/list", "askdesk/status", "agents/register"] {
        let params = if method == "agents/register" {
            json!({ "id": "under-a-pending-id" })
        } else {
            json!({})
        };
        asker
            .send(&json!({ "jsonrpc": "2.0", "id": "same", "method": method, "params": params }))
            .await;
        let refusal = asker.response(&json!("same")).await;
        assert_eq!(refusal["error"], refused, "{method}: {refusal}");
    }
    let agents = asker.call("agents/list", json!({})).await.unwrap();
    assert_eq!(agents, json!({ "agents": [] }), "nothing was registered");
    answerer
        .reply(
            &request,
            json!({ "answers": [{ "id": "a", "selected": ["Yes"] }] }),
        )
        .await;
    let answer = asker.response(&json!("same")).await;
    assert_eq!(
        answer["result"],
        json!({ "answers": [{ "id": "a", "selected": ["Yes"] }] }),
        "{answer}"
    );
}

/// A message is a line ended by a newline (protocol 5.2): what a peer leaves unended when its input
/// ends is cut short, never served, so an ask whose asker is gone never reaches an answerer.
#[tokio::test(flavor = "multi_thread")]
async fn an_unended_last_line_is_not_served() {
    let broker = Broker::start();
    let answerer = broker.conn().await;
    answerer
        .register_answerer(json!("all"), false, "holder")
        .await;
    for (id, method, params) in [
        (1, "ping", json!({})),
        (
            2,
            "user-questions/ask",
            ask(vec![q("a", "Go?", &["Yes"])], None),
        ),
    ] {
        let conn = broker.conn().await;
        let before = conn.lines().len();
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        conn.send_raw(line.to_string().as_bytes()).await;
        conn.shutdown_write().await;
        assert!(
            conn.closed_within(askdesk_e2e::PATIENCE).await,
            "the broker closes the connection at the end of its input"
        );
        assert_eq!(conn.lines().len(), before, "{method} was not answered");
    }
    assert!(
        answerer.next_incoming_within(QUIET).await.is_none(),
        "the ask was not dispatched"
    );
    let status = answerer.call("askdesk/status", json!({})).await.unwrap();
    assert_eq!(status["pending"], json!([]), "{status}");
}

/// protocol 1.1: the 4 MiB message bound is configurable (`askdesk serve --max-message-bytes`).
#[tokio::test(flavor = "multi_thread")]
async fn a_configured_message_limit_applies() {
    let broker = Broker::start_with(&["--max-message-bytes", "1024"]);
    let conn = broker.conn().await;
    let fits = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}\n",
        "x".repeat(900)
    );
    conn.send_raw(fits.as_bytes()).await;
    assert_eq!(conn.wait(5).await.unwrap(), json!({}));
    let over = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}\n",
        "x".repeat(2000)
    );
    let _ = conn.try_send_raw(over.as_bytes()).await;
    assert_cut_off_unserved(&conn, 6).await;
}

/// protocol 1.1 and 5.2 at each bound: a value of exactly the limit is served, one more is refused
/// naming the field. Text is counted in UTF-8 bytes, so two two-byte letters fill four.
#[tokio::test(flavor = "multi_thread")]
async fn each_limit_admits_exactly_its_value_and_refuses_one_more() {
    let broker = Broker::start_with(&[
        "--max-questions",
        "2",
        "--max-options",
        "2",
        "--max-field-bytes",
        "4",
        "--max-message-bytes",
        "1024",
    ]);
    let conn = broker.conn().await;
    let cases: Vec<(Value, Value, &str)> = vec![
        (
            json!([q("a", "?", &[]), q("b", "?", &[])]),
            json!([q("a", "?", &[]), q("b", "?", &[]), q("c", "?", &[])]),
            "questions: at most 2 questions are allowed, got 3",
        ),
        (
            json!([q("a", "?", &["x", "y"])]),
            json!([q("a", "?", &["x", "y", "z"])]),
            "questions[0].options: at most 2 options are allowed, got 3",
        ),
        (
            json!([q("a", "éé", &[])]),
            json!([q("a", "ééa", &[])]),
            "questions[0].question: text of 5 bytes is over the limit of 4 bytes",
        ),
        (
            json!([q("abcd", "?", &["wxyz"])]),
            json!([q("abcd", "?", &["wxyz", "vwxyz"])]),
            "questions[0].options[1].label: text of 5 bytes is over the limit of 4 bytes",
        ),
    ];
    for (fits, over, message) in cases {
        expect_question_error(
            conn.call("user-questions/ask", json!({ "questions": fits.clone() }))
                .await,
            "NO_PROVIDER",
        );
        let error = expect_rpc_error(
            conn.call("user-questions/ask", json!({ "questions": over }))
                .await,
            -32602,
        );
        assert_eq!(error.message, message, "for {fits}");
    }
    // A line of exactly 1024 bytes (newline aside) is served; one of 1025 closes the connection.
    let line = |id: u64, len: usize| {
        let head =
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\",\"params\":{{\"p\":\"");
        let tail = "\"}}";
        format!(
            "{head}{}{tail}\n",
            "x".repeat(len - head.len() - tail.len())
        )
    };
    conn.send_raw(line(1001, 1024).as_bytes()).await;
    assert_eq!(conn.wait(1001).await.unwrap(), json!({}));
    let _ = conn.try_send_raw(line(1002, 1025).as_bytes()).await;
    assert_cut_off_unserved(&conn, 1002).await;
}

/// Asserts that the broker answered an over-long line with -32600 and closed the connection
/// without serving request `id`.
async fn assert_cut_off_unserved(conn: &Conn, id: u64) {
    let response = conn.response(&Value::Null).await;
    assert_eq!(response["error"]["code"], -32600, "{response}");
    assert!(
        conn.closed_within(askdesk_e2e::PATIENCE).await,
        "the connection is closed after an over-long line"
    );
    assert!(
        !conn
            .lines()
            .iter()
            .any(|l| l.contains(&format!("\"id\":{id}"))),
        "the over-long request was not served: {:?}",
        conn.lines()
    );
}

/// The default bounds of protocol 1.1 admit a request that reaches every one of them.
#[tokio::test(flavor = "multi_thread")]
async fn the_default_limits_admit_a_request_at_every_bound() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    let labels: Vec<String> = (0..64).map(|i| format!("o{i}")).collect();
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    let mut questions: Vec<Value> = (0..64).map(|i| q(&format!("q{i}"), "?", &labels)).collect();
    // 256 KiB of three-byte letters: the byte count, not the letter count, is at the bound.
    questions[0]["detail"] = json!("€".repeat(256 * 1024 / 3) + "x");
    assert_eq!(questions[0]["detail"].as_str().unwrap().len(), 256 * 1024);
    expect_question_error(
        conn.call(
            "user-questions/ask",
            json!({ "questions": questions.clone() }),
        )
        .await,
        "NO_PROVIDER",
    );
    questions[0]["detail"] = json!("€".repeat(256 * 1024 / 3) + "xy");
    let error = expect_rpc_error(
        conn.call("user-questions/ask", json!({ "questions": questions }))
            .await,
        -32602,
    );
    assert_eq!(
        error.message,
        "questions[0].detail: text of 262145 bytes is over the limit of 262144 bytes"
    );
}
