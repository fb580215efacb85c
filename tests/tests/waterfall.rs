//! The answerer waterfall over sockets (protocol 1.2, 4, 5.5): chain order, scopes, the chain snapshot,
//! how an answerer's reply reaches the asker (claim, delegate, domain error, internal error, bad
//! answer), and answerer unregistration.

use std::time::Duration;

use askdesk_e2e::{answer_first, ask, expect_question_error, expect_rpc_error, q, Broker, Conn};
use serde_json::{json, Value};

const QUIET: Duration = Duration::from_millis(300);

async fn answerer(broker: &Broker, scope: Value, prepend: bool, label: &str) -> Conn {
    let conn = broker.conn().await;
    conn.register_answerer(scope, prepend, label).await;
    conn
}

/// Asserts that none of `conns` receives anything for a short while.
async fn all_quiet(conns: &[&Conn]) {
    for conn in conns {
        if let Some(message) = conn.next_incoming_within(QUIET).await {
            panic!("expected nothing, got {message}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn prepended_answerers_come_first_newest_first_then_the_others_in_order() {
    let broker = Broker::start();
    let a = answerer(&broker, json!("all"), false, "a").await;
    let b = answerer(&broker, json!("all"), false, "b").await;
    let c = answerer(&broker, json!("all"), true, "c").await;
    let d = answerer(&broker, json!("all"), true, "d").await;
    let status = a.call("askdesk/status", json!({})).await.unwrap();
    let labels: Vec<&str> = status["answerers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["d", "c", "a", "b"],
        "status shows the chain order: {status}"
    );

    let asker = broker.conn().await;
    let id = asker
        .start(
            "user-questions/ask",
            ask(vec![q("x", "Go?", &["Yes", "No"])], None),
        )
        .await;
    // Each in turn delegates; nobody else sees the request meanwhile.
    let order = [(&d, [&c, &a, &b]), (&c, [&d, &a, &b]), (&a, [&d, &c, &b])];
    for (current, others) in order {
        let request = current.next_request().await;
        all_quiet(&others).await;
        current.reply(&request, Value::Null).await;
    }
    let request = b.next_request().await;
    b.reply(
        &request,
        json!({ "answers": [{ "id": "x", "selected": ["No"] }] }),
    )
    .await;
    assert_eq!(
        asker.wait(id).await.unwrap(),
        json!({ "answers": [{ "id": "x", "selected": ["No"] }] })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_chain_is_taken_at_dispatch() {
    let broker = Broker::start();
    let first = answerer(&broker, json!("all"), false, "first").await;
    let asker = broker.conn().await;
    let id = asker
        .start(
            "user-questions/ask",
            ask(vec![q("x", "Go?", &["Yes"])], None),
        )
        .await;
    let request = first.next_request().await;
    let late_prepended = answerer(&broker, json!("all"), true, "late-prepended").await;
    let late_appended = answerer(&broker, json!("all"), false, "late-appended").await;
    first.reply(&request, Value::Null).await;
    expect_question_error(asker.wait(id).await, "NO_PROVIDER");
    all_quiet(&[&late_prepended, &late_appended]).await;
    // The next request sees them.
    let id = asker
        .start(
            "user-questions/ask",
            ask(vec![q("y", "Again?", &["Yes"])], None),
        )
        .await;
    let request = late_prepended.next_request().await;
    late_prepended
        .reply(&request, answer_first(&request["params"]))
        .await;
    assert_eq!(
        asker.wait(id).await.unwrap(),
        json!({ "answers": [{ "id": "y", "selected": ["Yes"] }] })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn scopes_decide_who_receives_what() {
    let broker = Broker::start();
    let agents = broker.conn().await;
    let mine = agents
        .register_agent(json!({ "id": "mine", "label": "Mine" }))
        .await;
    let theirs = agents.register_agent(json!({ "id": "theirs" })).await;
    let for_mine = answerer(&broker, json!({ "agent": mine }), false, "for-mine").await;
    let for_agents = answerer(&broker, json!("agents"), false, "for-agents").await;
    let for_all = answerer(&broker, json!("all"), false, "for-all").await;
    let asker = broker.conn().await;

    // An agentless request skips the agent-scoped and `agents` answerers.
    let id = asker
        .start("user-questions/ask", ask(vec![q("a", "?", &["Y"])], None))
        .await;
    let request = for_all.next_request().await;
    assert!(
        request["params"].get("agent").is_none(),
        "no agent field for an agentless request: {request}"
    );
    for_all
        .reply(&request, answer_first(&request["params"]))
        .await;
    asker.wait(id).await.unwrap();
    all_quiet(&[&for_mine, &for_agents]).await;

    // `theirs` skips the answerer scoped to `mine`.
    let id = asker
        .start(
            "user-questions/ask",
            ask(vec![q("b", "?", &["Y"])], Some(&theirs)),
        )
        .await;
    let request = for_agents.next_request().await;
    assert_eq!(request["params"]["agent"], json!({ "id": "theirs" }));
    for_agents
        .reply(&request, answer_first(&request["params"]))
        .await;
    asker.wait(id).await.unwrap();
    all_quiet(&[&for_mine, &for_all]).await;

    // `mine` reaches its own answerer first (registration order), then the rest on delegation.
    let id = asker
        .start(
            "user-questions/ask",
            ask(vec![q("c", "?", &["Y"])], Some(&mine)),
        )
        .await;
    let request = for_mine.next_request().await;
    assert_eq!(
        request["params"]["agent"],
        json!({ "id": "mine", "label": "Mine" })
    );
    for_mine.reply(&request, Value::Null).await;
    let request = for_agents.next_request().await;
    for_agents.reply(&request, Value::Null).await;
    let request = for_all.next_request().await;
    for_all
        .reply(&request, answer_first(&request["params"]))
        .await;
    assert_eq!(
        asker.wait(id).await.unwrap(),
        json!({ "answers": [{ "id": "c", "selected": ["Y"] }] })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answerer_scoped_to_a_dead_agent_is_refused() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    let error = expect_rpc_error(
        conn.call(
            "answerers/register",
            json!({ "scope": { "agent": { "id": "ghost", "instance": "00" } } }),
        )
        .await,
        -32003,
    );
    assert_eq!(error.data_code(), Some("AGENT_NOT_LIVE"), "{error:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn any_number_of_answerers_may_stack_on_one_connection() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    let one = conn.register_answerer(json!("all"), false, "same").await;
    let two = conn.register_answerer(json!("all"), false, "same").await;
    assert_ne!(one, two, "each registration gets its own id");
    let asker = broker.conn().await;
    let id = asker
        .start("user-questions/ask", ask(vec![q("a", "?", &["Y"])], None))
        .await;
    let first = conn.next_request().await;
    conn.reply(&first, Value::Null).await;
    let second = conn.next_request().await;
    assert_ne!(first["id"], second["id"], "each offer is its own request");
    conn.reply(&second, answer_first(&second["params"])).await;
    asker.wait(id).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn unregistering_an_answerer_while_it_holds_a_request_moves_the_request_on() {
    let broker = Broker::start();
    let backup = answerer(&broker, json!("all"), false, "backup").await;
    let front = broker.conn().await;
    let front_id = front.register_answerer(json!("all"), true, "front").await;
    let asker = broker.conn().await;
    let id = asker
        .start(
            "user-questions/ask",
            ask(vec![q("a", "?", &["Y", "N"])], None),
        )
        .await;
    let held = front.next_request().await;
    assert_eq!(
        front
            .call("answerers/unregister", json!({ "answerer": front_id }))
            .await
            .unwrap(),
        Value::Null
    );
    // It is told the request is no longer its own, so its UI can drop it.
    let notice = front.next_incoming().await;
    assert_eq!(notice["method"], "$/cancelRequest", "{notice}");
    assert_eq!(notice["params"]["id"], held["id"], "{notice}");
    let request = backup.next_request().await;
    backup
        .reply(
            &request,
            json!({ "answers": [{ "id": "a", "selected": ["N"] }] }),
        )
        .await;
    assert_eq!(
        asker.wait(id).await.unwrap(),
        json!({ "answers": [{ "id": "a", "selected": ["N"] }] })
    );
    // Its late answer changes nothing, and it receives no more requests.
    front
        .reply(
            &held,
            json!({ "answers": [{ "id": "a", "selected": ["Y"] }] }),
        )
        .await;
    let id = asker
        .start("user-questions/ask", ask(vec![q("b", "?", &["Y"])], None))
        .await;
    let request = backup.next_request().await;
    backup
        .reply(&request, answer_first(&request["params"]))
        .await;
    asker.wait(id).await.unwrap();
    all_quiet(&[&front]).await;
    // Unregistering again, or someone else's answerer, is invalid params.
    expect_rpc_error(
        front
            .call("answerers/unregister", json!({ "answerer": front_id }))
            .await,
        -32602,
    );
    expect_rpc_error(
        front
            .call(
                "answerers/unregister",
                json!({ "answerer": "answerer-999" }),
            )
            .await,
        -32602,
    );
}

/// A reply the answerer sent before it disconnected is its decision: a claim settles the ask and a
/// rule-breaking answer fails it, and neither goes on down the chain.
#[tokio::test(flavor = "multi_thread")]
async fn an_answerer_that_replies_then_disconnects_has_decided() {
    let broker = Broker::start();
    let backup = answerer(&broker, json!("all"), false, "backup").await;
    let asker = broker.conn().await;
    let cases = [
        (
            json!(["N"]),
            Ok(json!({ "answers": [{ "id": "a", "selected": ["N"] }] })),
        ),
        (json!(["Maybe"]), Err("BAD_ANSWER")),
    ];
    for (selected, outcome) in cases {
        let front = answerer(&broker, json!("all"), true, "front").await;
        let id = asker
            .start(
                "user-questions/ask",
                ask(vec![q("a", "?", &["Y", "N"])], None),
            )
            .await;
        let held = front.next_request().await;
        front
            .reply(
                &held,
                json!({ "answers": [{ "id": "a", "selected": selected }] }),
            )
            .await;
        front.close();
        match outcome {
            Ok(answer) => assert_eq!(asker.wait(id).await.unwrap(), answer),
            Err(code) => {
                expect_question_error(asker.wait(id).await, code);
            }
        }
    }
    all_quiet(&[&backup]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_domain_error_from_an_answerer_reaches_the_asker_unchanged() {
    let broker = Broker::start();
    let backup = answerer(&broker, json!("all"), false, "backup").await;
    let front = answerer(&broker, json!("all"), true, "front").await;
    let asker = broker.conn().await;
    let cases = [
        json!({ "code": -32001, "message": "the user cancelled ask_user_question", "data": { "code": "ASK_CANCELLED" } }),
        json!({ "code": -32001, "message": "the human is on holiday until Monday", "data": { "code": "ON_HOLIDAY" } }),
        // Any JSON-RPC code with a data.code is a domain error.
        json!({ "code": -32000, "message": "rate limited, retry later", "data": { "code": "RATE_LIMITED", "retry": 5 } }),
    ];
    for error in cases {
        let id = asker
            .start("user-questions/ask", ask(vec![q("a", "?", &["Y"])], None))
            .await;
        let request = front.next_request().await;
        front.reply_error(&request, error.clone()).await;
        let got = expect_rpc_error(asker.wait(id).await, -32001);
        assert_eq!(
            got.message,
            error["message"].as_str().unwrap(),
            "the message is unchanged"
        );
        assert_eq!(
            got.data_code(),
            error["data"]["code"].as_str(),
            "the code is unchanged: {got:?}"
        );
        // A failure ends the ask: the next answerer never sees it.
        all_quiet(&[&backup]).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_non_domain_answerer_error_is_32603_naming_the_answerer() {
    let broker = Broker::start();
    let backup = answerer(&broker, json!("all"), false, "backup").await;
    let flaky = answerer(&broker, json!("all"), true, "flaky bridge").await;
    let asker = broker.conn().await;
    for error in [
        json!({ "code": -32000, "message": "the phone bridge lost its connection" }),
        json!({ "code": -32603, "message": "the phone bridge lost its connection", "data": { "detail": "x" } }),
    ] {
        let id = asker
            .start("user-questions/ask", ask(vec![q("a", "?", &["Y"])], None))
            .await;
        let request = flaky.next_request().await;
        flaky.reply_error(&request, error).await;
        let got = expect_rpc_error(asker.wait(id).await, -32603);
        assert_eq!(
            got.data["answerer"], "flaky bridge",
            "data names the answerer: {got:?}"
        );
        assert!(
            got.message.contains("the phone bridge lost its connection"),
            "carries its message: {got:?}"
        );
        all_quiet(&[&backup]).await;
    }
}

/// Answers that break protocol 1.2 fail the ask with BAD_ANSWER; none is passed on half-right.
#[tokio::test(flavor = "multi_thread")]
async fn rule_breaking_answers_fail_with_bad_answer() {
    let broker = Broker::start();
    let backup = answerer(&broker, json!("all"), false, "backup").await;
    let sloppy = answerer(&broker, json!("all"), true, "sloppy").await;
    let asker = broker.conn().await;
    let single = q("single", "Pick one", &["Yes", "No"]);
    let mut multi = q("multi", "Pick some", &["Rust", "Go", "Python"]);
    multi["multiSelect"] = json!(true);
    let free = q("free", "Anything to add?", &[]);
    let batch = vec![single, multi, free];
    let ok_multi = json!({ "id": "multi", "selected": ["Go"] });
    let ok_free = json!({ "id": "free", "selected": [] });
    // (what is wrong, the answer, a word the message must contain)
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "one item missing",
            json!({ "answers": [{ "id": "single", "selected": ["Yes"] }, ok_multi] }),
            "",
        ),
        (
            "an item too many",
            json!({ "answers": [{ "id": "single", "selected": ["Yes"] }, ok_multi, ok_free, { "id": "extra", "selected": [] }] }),
            "",
        ),
        (
            "an unknown question id",
            json!({ "answers": [{ "id": "single", "selected": ["Yes"] }, ok_multi, { "id": "other", "selected": [] }] }),
            "free",
        ),
        (
            "a duplicate item",
            json!({ "answers": [{ "id": "single", "selected": ["Yes"] }, { "id": "single", "selected": ["No"] }, ok_free] }),
            "multi",
        ),
        (
            "an unknown label",
            json!({ "answers": [{ "id": "single", "selected": ["Maybe"] }, ok_multi, ok_free] }),
            "Maybe",
        ),
        (
            "an unknown label in a multi-select",
            json!({ "answers": [{ "id": "single", "selected": [] }, { "id": "multi", "selected": ["Go", "Java"] }, ok_free] }),
            "Java",
        ),
        (
            "a label on a free-text question",
            json!({ "answers": [{ "id": "single", "selected": [] }, ok_multi, { "id": "free", "selected": ["Yes"] }] }),
            "free",
        ),
        (
            "two labels on a single-select",
            json!({ "answers": [{ "id": "single", "selected": ["Yes", "No"] }, ok_multi, ok_free] }),
            "single",
        ),
        (
            "custom with a label on a single-select",
            json!({ "answers": [{ "id": "single", "selected": ["Yes"], "custom": "but" }, ok_multi, ok_free] }),
            "single",
        ),
        ("not an answer object", json!("Yes"), ""),
        ("no answers field", json!({ "answer": [] }), "answers"),
        (
            "answers not a list",
            json!({ "answers": { "single": "Yes" } }),
            "answers",
        ),
        (
            "an item without selected",
            json!({ "answers": [{ "id": "single" }, ok_multi, ok_free] }),
            "selected",
        ),
        (
            "a label that is not a string",
            json!({ "answers": [{ "id": "single", "selected": [1] }, ok_multi, ok_free] }),
            "",
        ),
    ];
    for (name, answer, needle) in cases {
        let id = asker
            .start("user-questions/ask", ask(batch.clone(), None))
            .await;
        let request = sloppy.next_request().await;
        sloppy.reply(&request, answer).await;
        let error = expect_question_error(asker.wait(id).await, "BAD_ANSWER");
        assert!(!error.message.is_empty(), "{name}");
        assert!(
            error.message.contains(needle),
            "{name}: the message {:?} should mention {needle:?}",
            error.message
        );
        all_quiet(&[&backup]).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn valid_answers_of_every_kind_come_back_in_question_order() {
    let broker = Broker::start();
    let answerer = answerer(&broker, json!("all"), false, "a").await;
    let asker = broker.conn().await;
    let single = q("single", "Pick one", &["Yes (Recommended)", "No"]);
    let mut multi = q("multi", "Pick some", &["Rust", "Go", "Python"]);
    multi["multiSelect"] = json!(true);
    multi["options"][0]["description"] = json!("fast");
    let free = q("free", "Anything to add?", &[]);
    let skipped = q("skipped", "Skip me", &["A", "B"]);
    let batch = vec![single, multi, free, skipped];
    let id = asker
        .start("user-questions/ask", ask(batch.clone(), None))
        .await;
    let request = answerer.next_request().await;
    assert_eq!(
        request["params"],
        json!({ "questions": batch }),
        "the answerer sees the batch exactly"
    );
    // Reversed order, custom text that overrides a single choice, a multi-select with a supplement.
    answerer
        .reply(
            &request,
            json!({ "answers": [
                { "id": "skipped", "selected": [] },
                { "id": "free", "selected": [], "custom": "ship on Friday" },
                { "id": "multi", "selected": ["Rust", "Python"], "custom": "and Zig" },
                { "id": "single", "selected": [], "custom": "only on staging" },
            ] }),
        )
        .await;
    let answer = asker.wait(id).await.unwrap();
    assert_eq!(
        answer,
        json!({ "answers": [
            { "id": "single", "selected": [], "custom": "only on staging" },
            { "id": "multi", "selected": ["Rust", "Python"], "custom": "and Zig" },
            { "id": "free", "selected": [], "custom": "ship on Friday" },
            { "id": "skipped", "selected": [] },
        ] })
    );
    // The exact bytes: no `custom` key when unused.
    let line = asker
        .lines()
        .into_iter()
        .find(|l| l.contains("\"skipped\""))
        .unwrap();
    assert!(line.contains(r#"{"id":"skipped","selected":[]}"#), "{line}");
    // The recommended label comes back unchanged.
    let id = asker
        .start("user-questions/ask", ask(vec![batch[0].clone()], None))
        .await;
    let request = answerer.next_request().await;
    answerer
        .reply(&request, answer_first(&request["params"]))
        .await;
    assert_eq!(
        asker.wait(id).await.unwrap(),
        json!({ "answers": [{ "id": "single", "selected": ["Yes (Recommended)"] }] })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_delegating_chain_fails_closed_with_no_provider() {
    let broker = Broker::start();
    let one = answerer(&broker, json!("all"), false, "one").await;
    let two = answerer(&broker, json!("all"), true, "two").await;
    let asker = broker.conn().await;
    let id = asker
        .start("user-questions/ask", ask(vec![q("a", "?", &["Y"])], None))
        .await;
    for conn in [&two, &one] {
        let request = conn.next_request().await;
        conn.reply(&request, Value::Null).await;
    }
    let error = expect_question_error(asker.wait(id).await, "NO_PROVIDER");
    assert_eq!(
        error.message,
        "no user-questions answerer accepted the request"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn responses_to_unknown_ids_are_ignored() {
    let broker = Broker::start();
    let answerer = answerer(&broker, json!("all"), false, "a").await;
    let asker = broker.conn().await;
    let id = asker
        .start("user-questions/ask", ask(vec![q("a", "?", &["Y"])], None))
        .await;
    let request = answerer.next_request().await;
    answerer
        .send(&json!({ "jsonrpc": "2.0", "id": 4242, "result": { "answers": [] } }))
        .await;
    answerer
        .send(&json!({ "jsonrpc": "2.0", "id": "x", "result": null }))
        .await;
    assert_eq!(answerer.call("ping", json!({})).await.unwrap(), json!({}));
    answerer
        .reply(&request, answer_first(&request["params"]))
        .await;
    assert_eq!(
        asker.wait(id).await.unwrap(),
        json!({ "answers": [{ "id": "a", "selected": ["Y"] }] })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_response_fails_the_request_it_answers() {
    let broker = Broker::start();
    let broken = answerer(&broker, json!("all"), false, "broken").await;
    let asker = broker.conn().await;
    for (n, response) in [
        // Neither a result nor an error.
        json!({ "jsonrpc": "2.0" }),
        // An error that is not an error object.
        json!({ "jsonrpc": "2.0", "error": "nope" }),
        // Another protocol version.
        json!({ "jsonrpc": "1.0", "result": null }),
    ]
    .into_iter()
    .enumerate()
    {
        let id = asker
            .start("user-questions/ask", ask(vec![q("a", "?", &["Y"])], None))
            .await;
        let request = broken.next_request().await;
        let mut response = response;
        response["id"] = request["id"].clone();
        broken.send(&response).await;
        // The answerer hears what was wrong with its line, and the asker is not left waiting.
        let reply = broken.response(&request["id"]).await;
        assert_eq!(reply["error"]["code"], -32600, "{n}: {reply}");
        let error = expect_rpc_error(asker.wait(id).await, -32603);
        assert!(
            error.message.starts_with("a malformed response: "),
            "{n}: {error:?}"
        );
        assert_eq!(error.data["answerer"], "broken", "{n}");
    }
    let status = asker.call("askdesk/status", json!({})).await.unwrap();
    assert_eq!(status["pending"], json!([]), "{status}");
}
