//! Concurrency, limits and shutdown: asks never block each other, every ask gets its own answer,
//! the connection and pending-ask limits answer -32004, and SIGTERM settles pending asks
//! SHUTTING_DOWN, removes the socket and exits 0.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use askdesk_e2e::{answer_first, ask, expect_question_error, expect_rpc_error, q, Broker, Conn};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

/// Answers every request on `conn` with each free-text question's own text as `custom`, holding
/// requests until `batch` have arrived and then answering them in reverse order, so answers can only
/// reach the right asker if the broker routes by id.
async fn echo_answerer(conn: Arc<Conn>, batch: usize, total: usize) {
    let mut answered = 0;
    while answered < total {
        let mut held = Vec::new();
        while held.len() < batch.min(total - answered) {
            held.push(conn.next_request().await);
        }
        for request in held.iter().rev() {
            let answers: Vec<Value> = request["params"]["questions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|question| json!({ "id": question["id"], "selected": [], "custom": question["question"] }))
                .collect();
            conn.reply(request, json!({ "answers": answers })).await;
        }
        answered += held.len();
    }
}

fn echoed(question: &str) -> Value {
    json!({ "answers": [{ "id": "q", "selected": [], "custom": question }] })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pending_ask_blocks_neither_ping_nor_another_ask_on_the_same_connection() {
    let broker = Broker::start();
    let answerer = broker.conn().await;
    answerer.register_answerer(json!("all"), false, "a").await;
    let asker = broker.conn().await;
    let first = asker
        .start("user-questions/ask", ask(vec![q("q", "first", &[])], None))
        .await;
    let first_request = answerer.next_request().await;
    assert_eq!(
        asker.call("ping", json!({})).await.unwrap(),
        json!({}),
        "ping while an ask is pending"
    );
    assert_eq!(
        asker.call("agents/list", json!({})).await.unwrap(),
        json!({ "agents": [] })
    );
    let second = asker
        .start("user-questions/ask", ask(vec![q("q", "second", &[])], None))
        .await;
    let second_request = answerer.next_request().await;
    answerer.reply(&second_request, echoed("second")).await;
    assert_eq!(
        asker.wait(second).await.unwrap(),
        echoed("second"),
        "the later ask settles first"
    );
    answerer.reply(&first_request, echoed("first")).await;
    assert_eq!(asker.wait(first).await.unwrap(), echoed("first"));
}

#[tokio::test(flavor = "multi_thread")]
async fn many_concurrent_asks_on_one_connection_each_get_their_own_answer() {
    let broker = Broker::start();
    let answerer = Arc::new(broker.conn().await);
    answerer
        .register_answerer(json!("all"), false, "echo")
        .await;
    const ASKS: usize = 60;
    let serving = tokio::spawn(echo_answerer(answerer.clone(), ASKS, ASKS));
    let asker = broker.conn().await;
    let mut ids = HashMap::new();
    for i in 0..ASKS {
        let text = format!("question number {i}");
        ids.insert(
            asker
                .start("user-questions/ask", ask(vec![q("q", &text, &[])], None))
                .await,
            text,
        );
    }
    for (id, text) in ids {
        assert_eq!(asker.wait(id).await.unwrap(), echoed(&text), "ask {id}");
    }
    serving.await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn many_concurrent_asks_on_many_connections_each_get_their_own_answer() {
    let broker = Broker::start();
    let answerer = Arc::new(broker.conn().await);
    answerer
        .register_answerer(json!("all"), false, "echo")
        .await;
    const CONNECTIONS: usize = 24;
    const PER_CONNECTION: usize = 8;
    let serving = tokio::spawn(echo_answerer(
        answerer.clone(),
        32,
        CONNECTIONS * PER_CONNECTION,
    ));
    let mut askers = Vec::new();
    for c in 0..CONNECTIONS {
        let conn = broker.conn().await;
        let agent = conn
            .register_agent(json!({ "id": format!("agent-{c}") }))
            .await;
        askers.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for i in 0..PER_CONNECTION {
                let text = format!("connection {c} ask {i}");
                // Half of them for the connection's agent, half agentless.
                let agent = (i % 2 == 0).then_some(&agent);
                ids.push((
                    conn.start("user-questions/ask", ask(vec![q("q", &text, &[])], agent))
                        .await,
                    text,
                ));
            }
            for (id, text) in ids {
                assert_eq!(
                    conn.wait(id).await.unwrap(),
                    echoed(&text),
                    "connection {c} ask {id}"
                );
            }
        }));
    }
    for asker in askers {
        asker.await.unwrap();
    }
    serving.await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_connection_limit_answers_32004_and_frees_up_when_a_connection_closes() {
    let broker = Broker::start_with(&["--max-connections", "2"]);
    let one = broker.admitted_conn().await;
    let two = broker.admitted_conn().await;
    let three = broker.conn_uninit().await;
    // The refused connection is told why (it may be before or instead of answering its first request).
    let _ = three
        .try_send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
        .await;
    assert!(
        three.closed_within(askdesk_e2e::PATIENCE).await,
        "the connection over the limit is closed"
    );
    let lines = three.lines();
    assert_eq!(
        lines.len(),
        1,
        "exactly one message to the refused connection: {lines:?}"
    );
    let message: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(message["error"]["code"], -32004, "{message}");
    assert_eq!(message["error"]["data"]["code"], "LIMIT", "{message}");
    assert_eq!(
        message["error"]["data"]["limit"], "connections",
        "{message}"
    );
    assert!(
        !lines[0].contains("\"result\""),
        "the ping was not served: {lines:?}"
    );
    // The two admitted connections are unaffected.
    assert_eq!(one.call("ping", json!({})).await.unwrap(), json!({}));
    assert_eq!(two.call("ping", json!({})).await.unwrap(), json!({}));
    // Once one closes, a new connection is served again.
    one.close();
    let deadline = tokio::time::Instant::now() + askdesk_e2e::PATIENCE;
    loop {
        let conn = broker.conn_uninit().await;
        let _ = conn
            .try_send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
            .await;
        let lines = conn.lines_within(1, askdesk_e2e::PATIENCE).await;
        let response: Value =
            serde_json::from_str(lines.first().expect("a response or a refusal")).unwrap();
        if response["id"] == json!(1) {
            assert_eq!(response["result"], json!({}));
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the limit never freed up: {response}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_pending_ask_limit_is_per_connection() {
    let broker = Broker::start_with(&["--max-pending", "2"]);
    let answerer = broker.conn().await;
    answerer
        .register_answerer(json!("all"), false, "holder")
        .await;
    let asker = broker.conn().await;
    let first = asker
        .start("user-questions/ask", ask(vec![q("q", "1", &[])], None))
        .await;
    let second = asker
        .start("user-questions/ask", ask(vec![q("q", "2", &[])], None))
        .await;
    // The two asks run side by side, so their requests may arrive in either order.
    let mut held = [answerer.next_request().await, answerer.next_request().await];
    held.sort_by_key(|r| {
        r["params"]["questions"][0]["question"]
            .as_str()
            .unwrap()
            .to_owned()
    });
    assert_eq!(held[0]["params"]["questions"][0]["question"], "1");
    let error = expect_rpc_error(
        asker
            .call("user-questions/ask", ask(vec![q("q", "3", &[])], None))
            .await,
        -32004,
    );
    assert_eq!(
        error.data,
        json!({ "code": "LIMIT", "limit": "pending-asks" }),
        "{error:?}"
    );
    assert!(
        answerer
            .next_incoming_within(Duration::from_millis(300))
            .await
            .is_none(),
        "the refused ask was not dispatched"
    );
    // Other requests and other connections are not limited by it.
    assert_eq!(asker.call("ping", json!({})).await.unwrap(), json!({}));
    let other = broker.conn().await;
    let other_ask = other
        .start("user-questions/ask", ask(vec![q("q", "other", &[])], None))
        .await;
    let other_request = answerer.next_request().await;
    answerer.reply(&other_request, echoed("other")).await;
    assert_eq!(other.wait(other_ask).await.unwrap(), echoed("other"));
    // The limit frees up when an ask settles; the pending ones were untouched.
    answerer
        .reply(&held[0], answer_first(&held[0]["params"]))
        .await;
    asker.wait(first).await.unwrap();
    let third = asker
        .start("user-questions/ask", ask(vec![q("q", "3", &[])], None))
        .await;
    let third_request = answerer.next_request().await;
    answerer.reply(&third_request, echoed("3")).await;
    assert_eq!(asker.wait(third).await.unwrap(), echoed("3"));
    answerer.reply(&held[1], echoed("2")).await;
    assert_eq!(asker.wait(second).await.unwrap(), echoed("2"));
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_settles_pending_asks_shutting_down_removes_the_socket_and_exits_zero() {
    let mut broker = Broker::start();
    let answerer = broker.conn().await;
    answerer
        .register_answerer(json!("all"), false, "holder")
        .await;
    let asker = broker.conn().await;
    let agent = asker.register_agent(json!({ "id": "waiting" })).await;
    let first = asker
        .start("user-questions/ask", ask(vec![q("q", "1", &["Y"])], None))
        .await;
    let second = asker
        .start(
            "user-questions/ask",
            ask(vec![q("q", "2", &["Y"])], Some(&agent)),
        )
        .await;
    answerer.next_request().await;
    answerer.next_request().await;
    broker.signal(libc::SIGTERM);
    for id in [first, second] {
        let error = expect_question_error(asker.wait(id).await, "SHUTTING_DOWN");
        assert_eq!(error.message, "askdesk shut down before the user answered");
    }
    let status = broker.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(
        status.code(),
        Some(0),
        "a clean stop exits 0; log: {}",
        broker.log()
    );
    assert!(!broker.socket().exists(), "the socket file is removed");
    assert!(
        asker.closed_within(askdesk_e2e::PATIENCE).await,
        "connections are closed"
    );
    assert!(
        answerer.closed_within(askdesk_e2e::PATIENCE).await,
        "connections are closed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_with_idle_connections_exits_promptly() {
    let mut broker = Broker::start();
    let idle = broker.conn().await;
    let _uninitialized = broker.conn_uninit().await;
    idle.register_answerer(json!("all"), false, "idle").await;
    broker.signal(libc::SIGTERM);
    let status = broker.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(status.code(), Some(0), "log: {}", broker.log());
    assert!(!broker.socket().exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_is_not_held_up_by_a_peer_that_stopped_reading() {
    let mut broker = Broker::start();
    // An answerer that registers and then never reads: the questions relayed to it fill its
    // socket and then its queue at the broker.
    let mut stuck = tokio::net::UnixStream::connect(broker.socket())
        .await
        .unwrap();
    stuck
        .write_all(
            concat!(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"client":{"name":"stuck"}}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":2,"method":"answerers/register","params":{"scope":"all","label":"stuck"}}"#,
                "\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let asker = broker.conn().await;
    let mut ids = Vec::new();
    for n in 0..8 {
        let mut question = q(&format!("q{n}"), "Proceed?", &["Yes", "No"]);
        question["detail"] = json!("x".repeat(200_000));
        ids.push(
            asker
                .start("user-questions/ask", ask(vec![question], None))
                .await,
        );
    }
    // The broker has relayed them all to the answerer, which holds them.
    let observer = broker.conn().await;
    let deadline = tokio::time::Instant::now() + askdesk_e2e::PATIENCE;
    loop {
        let status = observer.call("askdesk/status", json!({})).await.unwrap();
        let pending = status["pending"].as_array().unwrap();
        if pending.len() == 8 && pending.iter().all(|p| p["holder"] == "stuck") {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the questions never reached the answerer: {status}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    broker.signal(libc::SIGTERM);
    for id in ids {
        expect_question_error(asker.wait(id).await, "SHUTTING_DOWN");
    }
    // Within the two seconds' grace a stopping broker gives each peer, and a margin.
    let status = broker.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(status.code(), Some(0), "log: {}", broker.log());
    assert!(!broker.socket().exists(), "the socket file is removed");
    assert!(
        broker.log().contains("did not read its last messages"),
        "log: {}",
        broker.log()
    );
    drop(stuck);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_log_written_to_a_file_is_plain_text() {
    // The harness sends the broker's stderr to a file: no terminal, so no colour codes.
    let mut broker = Broker::start();
    broker.signal(libc::SIGINT);
    let status = broker.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(
        status.code(),
        Some(0),
        "SIGINT stops it cleanly; log: {}",
        broker.log()
    );
    let log = broker.log();
    assert!(log.contains("askdesk broker listening"), "{log}");
    assert!(log.contains("stopping"), "{log}");
    assert!(
        !log.contains('\u{1b}'),
        "colour codes in a log file: {log:?}"
    );
}

/// The broker's CPU time over `span` of wall time.
async fn cpu_over(broker: &Broker, span: Duration) -> Duration {
    let before = broker.cpu_time();
    tokio::time::sleep(span).await;
    broker.cpu_time() - before
}

#[tokio::test(flavor = "multi_thread")]
async fn busy_polling_follows_a_conversation_and_stops_when_it_goes_quiet() {
    // The default window (100 µs): after a hundred answered asks the broker goes back to sleep.
    let broker = Broker::start();
    let answerer = Arc::new(broker.conn().await);
    answerer
        .register_answerer(json!("all"), false, "echo")
        .await;
    let answering = tokio::spawn(echo_answerer(answerer.clone(), 1, 100));
    let asker = broker.conn().await;
    for n in 0..100 {
        let question = format!("question {n}");
        let answer = asker
            .call(
                "user-questions/ask",
                ask(vec![q("q", &question, &[])], None),
            )
            .await;
        assert_eq!(answer.unwrap(), echoed(&question));
    }
    answering.await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let quiet = cpu_over(&broker, Duration::from_millis(500)).await;
    assert!(
        quiet < Duration::from_millis(50),
        "an idle broker used {quiet:?} of CPU in 500 ms: it kept polling"
    );

    // A window of a second: one line in keeps the broker's thread running through it.
    let polling = Broker::start_with(&["--busy-poll", "1000000"]);
    let conn = polling.conn().await;
    assert_eq!(conn.call("ping", json!({})).await.unwrap(), json!({}));
    let busy = cpu_over(&polling, Duration::from_millis(500)).await;
    assert!(
        busy > Duration::from_millis(50),
        "a broker polling for a second after a line used only {busy:?} of CPU in 500 ms"
    );
    tokio::time::sleep(Duration::from_millis(700)).await;
    let after = cpu_over(&polling, Duration::from_millis(500)).await;
    assert!(
        after < Duration::from_millis(50),
        "the window had passed, yet the broker used {after:?} of CPU in 500 ms"
    );
}
