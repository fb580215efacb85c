//! Agents and the checks of `ask()` over the wire (protocol 2 and 3): every `UserQuestionError` code
//! with its exact message, the check order, registry errors, `agents/list`, cascades, and what a
//! closing connection takes with it.

use std::time::Duration;

use askdesk_e2e::{answer_first, ask, expect_question_error, expect_rpc_error, q, Broker, Conn};
use serde_json::{json, Value};

const QUIET: Duration = Duration::from_millis(300);

const ABORTED: &str = "ask_user_question was aborted before the user answered";
const EMPTY: &str = "ask_user_question requires at least one question";
const NOT_LIVE: &str =
    "human interaction requires the exact live calling agent when an agent is supplied";
const DELEGATED: &str = "human interaction is unavailable while the calling agent is owned by another live agent; \
                         include the unresolved question or decision in the child agent's final result";
const NO_PROVIDER: &str = "no user-questions answerer accepted the request";

fn plan(id: &str, approve: &str, detail: Option<&str>) -> Value {
    let mut question = q(id, "Approve the plan?", &["Approve", "Keep planning"]);
    question["intent"] = json!({ "kind": "plan-review", "approve": approve });
    if let Some(detail) = detail {
        question["detail"] = json!(detail);
    }
    question
}

/// Polls `agents/list` until `done` holds for it; panics after the usual patience.
async fn wait_for_agents(conn: &Conn, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + askdesk_e2e::PATIENCE;
    loop {
        let list = conn.call("agents/list", json!({})).await.unwrap();
        let agents = list["agents"]
            .as_array()
            .unwrap_or_else(|| panic!("agents/list result: {list}"))
            .clone();
        if done(&agents) {
            return agents;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}; agents/list still says {list}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn ids(agents: &[Value]) -> Vec<&str> {
    agents.iter().map(|a| a["id"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_check_of_ask_has_its_code_and_exact_message() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    let root = conn.register_agent(json!({ "id": "root" })).await;
    let child = conn
        .register_agent(json!({ "id": "child", "owner": root }))
        .await;
    let forged = json!({ "id": "root", "instance": "0".repeat(32) });
    let never = json!({ "id": "nobody", "instance": "0123456789abcdef0123456789abcdef" });
    let yes_no = || q("go", "Go?", &["Yes", "No"]);
    let cases: Vec<(&str, Value, &str, String)> = vec![
        ("empty batch", ask(vec![], None), "EMPTY_QUESTIONS", EMPTY.into()),
        ("forged instance", ask(vec![yes_no()], Some(&forged)), "CALLER_NOT_LIVE", NOT_LIVE.into()),
        ("never registered", ask(vec![yes_no()], Some(&never)), "CALLER_NOT_LIVE", NOT_LIVE.into()),
        ("owned child", ask(vec![yes_no()], Some(&child)), "DELEGATED_CALLER", DELEGATED.into()),
        (
            "approve names no option",
            ask(vec![plan("plan", "Ship it", Some("# Plan"))], None),
            "BAD_INTENT",
            r#"question plan declares intent plan-review whose approve label "Ship it" names none of its options"#.into(),
        ),
        (
            "intent without detail",
            ask(vec![plan("plan", "Approve", None)], None),
            "BAD_INTENT",
            "question plan declares intent plan-review without the detail it reviews".into(),
        ),
        (
            "unknown intent kinds are checked too",
            ask(
                vec![{
                    let mut question = q("dep", "Add the dependency?", &["Add", "Skip"]);
                    question["intent"] = json!({ "kind": "dependency-review", "approve": "Merge" });
                    question["detail"] = json!("serde 1.0");
                    question
                }],
                None,
            ),
            "BAD_INTENT",
            r#"question dep declares intent dependency-review whose approve label "Merge" names none of its options"#.into(),
        ),
        (
            "a quote in the approve label is JSON-quoted",
            ask(vec![plan("plan", "Say \"go\"", Some("# Plan"))], None),
            "BAD_INTENT",
            r#"question plan declares intent plan-review whose approve label "Say \"go\"" names none of its options"#.into(),
        ),
        ("nobody answers", ask(vec![yes_no()], None), "NO_PROVIDER", NO_PROVIDER.into()),
        ("a live root with nobody to answer", ask(vec![yes_no()], Some(&root)), "NO_PROVIDER", NO_PROVIDER.into()),
    ];
    for (name, params, code, message) in cases {
        let error = expect_question_error(conn.call("user-questions/ask", params).await, code);
        assert_eq!(error.message, message, "{name}");
        assert_eq!(
            error.data,
            json!({ "code": code }),
            "{name}: data is exactly {{code}}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_checks_run_in_spec_order() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    let root = conn.register_agent(json!({ "id": "root" })).await;
    let child = conn
        .register_agent(json!({ "id": "child", "owner": root }))
        .await;
    let forged = json!({ "id": "root", "instance": "f".repeat(32) });
    let bad_intent = plan("plan", "Ship it", Some("# Plan"));
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "step 2 before step 3",
            ask(vec![], Some(&forged)),
            "EMPTY_QUESTIONS",
        ),
        (
            "step 3 before step 5",
            ask(vec![bad_intent.clone()], Some(&forged)),
            "CALLER_NOT_LIVE",
        ),
        (
            "step 4 before step 5",
            ask(vec![bad_intent.clone()], Some(&child)),
            "DELEGATED_CALLER",
        ),
        (
            "step 5 before step 6",
            ask(vec![bad_intent.clone()], Some(&root)),
            "BAD_INTENT",
        ),
    ];
    for (name, params, code) in cases {
        let error = expect_rpc_error(conn.call("user-questions/ask", params).await, -32001);
        assert_eq!(error.data_code(), Some(code), "{name}: {error:?}");
    }
    // Shape validation comes before every step: an empty option label beats a forged agent.
    let mut shapeless = q("a", "?", &["x"]);
    shapeless["options"][0]["label"] = json!("");
    expect_rpc_error(
        conn.call("user-questions/ask", ask(vec![shapeless], Some(&forged)))
            .await,
        -32602,
    );
    // Step 5 in batch order, 5a before 5b for each question.
    let batch = vec![
        plan("first", "Approve", None),
        plan("second", "Nope", Some("# Plan")),
    ];
    let error = expect_question_error(
        conn.call("user-questions/ask", ask(batch, None)).await,
        "BAD_INTENT",
    );
    assert_eq!(
        error.message,
        "question first declares intent plan-review without the detail it reviews"
    );
    let batch = vec![plan("only", "Nope", None)];
    let error = expect_question_error(
        conn.call("user-questions/ask", ask(batch, None)).await,
        "BAD_INTENT",
    );
    assert!(
        error.message.contains("approve label \"Nope\""),
        "5a before 5b: {}",
        error.message
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_valid_intent_reaches_the_answerer_unchanged() {
    let broker = Broker::start();
    let answerer = broker.conn().await;
    answerer
        .register_answerer(json!("all"), false, "reviewer")
        .await;
    let asker = broker.conn().await;
    let mut question = plan("plan", "Approve", Some("# Plan\n\n- [ ] step"));
    question["header"] = json!("Plan review");
    let unknown = {
        let mut question = q("dep", "Add it?", &["Add", "Skip"]);
        question["intent"] = json!({ "kind": "dependency-review", "approve": "Add" });
        question["detail"] = json!("serde");
        question
    };
    let id = asker
        .start(
            "user-questions/ask",
            ask(vec![question.clone(), unknown.clone()], None),
        )
        .await;
    let request = answerer.next_request().await;
    assert_eq!(
        request["params"],
        json!({ "questions": [question, unknown] }),
        "passed through exactly"
    );
    answerer
        .reply(
            &request,
            json!({ "answers": [
                { "id": "plan", "selected": [], "custom": "split step 2" },
                { "id": "dep", "selected": ["Add"] }
            ] }),
        )
        .await;
    let answer = asker.wait(id).await.unwrap();
    assert_eq!(
        answer["answers"][0],
        json!({ "id": "plan", "selected": [], "custom": "split step 2" })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn registry_errors_are_32003_with_their_codes() {
    let broker = Broker::start();
    let one = broker.conn().await;
    let two = broker.conn().await;
    let handle = one.register_agent(json!({ "id": "dup" })).await;
    assert_eq!(handle["id"], "dup");
    let token = handle["instance"].as_str().expect("an instance token");
    assert!(token.len() >= 16, "an unguessable token: {token}");
    for conn in [&one, &two] {
        let error = expect_rpc_error(
            conn.call("agents/register", json!({ "id": "dup" })).await,
            -32003,
        );
        assert_eq!(error.data, json!({ "code": "AGENT_ID_TAKEN" }), "{error:?}");
    }
    let forged = json!({ "id": "dup", "instance": format!("{token}0") });
    let error = expect_rpc_error(
        one.call("agents/unregister", json!({ "agent": forged }))
            .await,
        -32003,
    );
    assert_eq!(error.data, json!({ "code": "AGENT_NOT_LIVE" }));
    let error = expect_rpc_error(
        one.call(
            "agents/register",
            json!({ "id": "orphan", "owner": { "id": "ghost", "instance": "00" } }),
        )
        .await,
        -32003,
    );
    assert_eq!(
        error.data_code(),
        Some("AGENT_NOT_LIVE"),
        "an owner must be live: {error:?}"
    );
    // Another connection may unregister a handle it was given (handles, not connections, are identity).
    assert_eq!(
        two.call("agents/unregister", json!({ "agent": handle }))
            .await
            .unwrap(),
        Value::Null
    );
    let error = expect_rpc_error(
        one.call("agents/unregister", json!({ "agent": handle }))
            .await,
        -32003,
    );
    assert_eq!(
        error.data_code(),
        Some("AGENT_NOT_LIVE"),
        "unregistering twice: {error:?}"
    );
    // The id is free again, with a new instance; the old handle stays dead.
    let again = one.register_agent(json!({ "id": "dup" })).await;
    assert_ne!(again["instance"], handle["instance"]);
    let error = expect_question_error(
        one.call(
            "user-questions/ask",
            ask(vec![q("a", "?", &[])], Some(&handle)),
        )
        .await,
        "CALLER_NOT_LIVE",
    );
    assert_eq!(error.message, NOT_LIVE);
}

#[tokio::test(flavor = "multi_thread")]
async fn agents_list_shows_ids_owners_roots_labels_and_meta_but_no_tokens() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    let root = conn
        .register_agent(json!({ "id": "root-a", "label": "Release bot", "meta": { "cwd": "/src/app", "pid": 42 } }))
        .await;
    let child = conn
        .register_agent(json!({ "id": "child-a", "owner": root }))
        .await;
    conn.register_agent(json!({ "id": "grandchild-a", "owner": child, "label": "helper" }))
        .await;
    conn.register_agent(json!({ "id": "resumed", "meta": { "lineage": ["x", "y", "z"] } }))
        .await;
    let id = conn.start("agents/list", json!({})).await;
    let mut agents = conn.wait(id).await.unwrap()["agents"]
        .as_array()
        .unwrap()
        .clone();
    agents.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    assert_eq!(
        agents,
        vec![
            json!({ "id": "child-a", "owner": "root-a", "root": false }),
            json!({ "id": "grandchild-a", "owner": "child-a", "root": false, "label": "helper" }),
            json!({ "id": "resumed", "owner": null, "root": true, "meta": { "lineage": ["x", "y", "z"] } }),
            json!({ "id": "root-a", "owner": null, "root": true, "label": "Release bot", "meta": { "cwd": "/src/app", "pid": 42 } }),
        ]
    );
    let line = conn
        .lines()
        .into_iter()
        .find(|l| l.contains("root-a") && l.contains("\"agents\""))
        .unwrap();
    assert!(
        !line.contains("instance"),
        "no instance tokens on the wire: {line}"
    );
    assert!(
        !line.contains(root["instance"].as_str().unwrap()),
        "no instance tokens on the wire: {line}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resumed_root_may_ask_and_the_answerer_sees_the_agent_without_its_token() {
    let broker = Broker::start();
    let answerer = broker.conn().await;
    answerer
        .register_answerer(json!("agents"), false, "agents-only")
        .await;
    let conn = broker.conn().await;
    let meta = json!({ "cwd": "/w", "repo": "askdesk", "branch": "main", "model": "m", "pid": 7 });
    let root = conn
        .register_agent(json!({ "id": "resumed-root", "label": "Resumed", "meta": meta }))
        .await;
    let id = conn
        .start(
            "user-questions/ask",
            ask(vec![q("a", "Go?", &["Yes", "No"])], Some(&root)),
        )
        .await;
    let request = answerer.next_request().await;
    assert_eq!(
        request["params"]["agent"],
        json!({ "id": "resumed-root", "label": "Resumed", "meta": meta })
    );
    let raw = answerer
        .lines()
        .into_iter()
        .find(|l| l.contains("user-questions/request"))
        .unwrap();
    assert!(
        !raw.contains("instance"),
        "no instance token goes to answerers: {raw}"
    );
    answerer
        .reply(&request, answer_first(&request["params"]))
        .await;
    assert_eq!(
        conn.wait(id).await.unwrap(),
        json!({ "answers": [{ "id": "a", "selected": ["Yes"] }] })
    );
}

/// Unregistering an owner takes its whole subtree: the owner's pending ask settles ASK_ABORTED (its
/// answerer is told to drop it), descendants are gone, and answerers scoped to any of them are removed.
#[tokio::test(flavor = "multi_thread")]
async fn unregistering_an_owner_cascades() {
    let broker = Broker::start();
    let general = broker.conn().await;
    general
        .register_answerer(json!("all"), false, "general")
        .await;
    let scoped = broker.conn().await;
    let conn = broker.conn().await;
    let root = conn.register_agent(json!({ "id": "owner" })).await;
    let child = conn
        .register_agent(json!({ "id": "child", "owner": root }))
        .await;
    let grandchild = conn
        .register_agent(json!({ "id": "grandchild", "owner": child }))
        .await;
    let bystander = conn.register_agent(json!({ "id": "bystander" })).await;
    scoped
        .register_answerer(json!({ "agent": child }), true, "child-scoped")
        .await;
    scoped
        .register_answerer(json!({ "agent": grandchild }), true, "grandchild-scoped")
        .await;
    let root_scoped = broker.conn().await;
    root_scoped
        .register_answerer(json!({ "agent": root }), true, "owner-scoped")
        .await;
    let status = conn.call("askdesk/status", json!({})).await.unwrap();
    assert_eq!(
        status["socket"].as_str(),
        broker.socket().to_str(),
        "the socket served: {status}"
    );
    let labels = |status: &Value| -> Vec<String> {
        status["answerers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["label"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(labels(&status).len(), 4, "{status}");

    let pending = conn
        .start(
            "user-questions/ask",
            ask(vec![q("a", "Go?", &["Yes"])], Some(&root)),
        )
        .await;
    let request = root_scoped.next_request().await;
    assert_eq!(request["params"]["agent"]["id"], "owner");
    conn.call("agents/unregister", json!({ "agent": root }))
        .await
        .unwrap();

    let error = expect_question_error(conn.wait(pending).await, "ASK_ABORTED");
    assert_eq!(error.message, ABORTED);
    let note = root_scoped.next_incoming().await;
    assert_eq!(
        note,
        json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": request["id"], "reason": "agent-gone" } })
    );
    let agents = wait_for_agents(&conn, "only the bystander is left", |a| {
        ids(a) == ["bystander"]
    })
    .await;
    assert_eq!(
        agents,
        vec![json!({ "id": "bystander", "owner": null, "root": true })]
    );
    for gone in [&child, &grandchild] {
        let error = expect_question_error(
            conn.call(
                "user-questions/ask",
                ask(vec![q("a", "?", &[])], Some(gone)),
            )
            .await,
            "CALLER_NOT_LIVE",
        );
        assert_eq!(error.message, NOT_LIVE);
        expect_rpc_error(
            conn.call("agents/unregister", json!({ "agent": gone }))
                .await,
            -32003,
        );
    }
    let status = conn.call("askdesk/status", json!({})).await.unwrap();
    assert_eq!(
        labels(&status),
        vec!["general".to_owned()],
        "scoped answerers went with their agents: {status}"
    );
    // The answerer connections themselves stay open, and the bystander still asks.
    assert_eq!(scoped.call("ping", json!({})).await.unwrap(), json!({}));
    let id = conn
        .start(
            "user-questions/ask",
            ask(vec![q("b", "Still?", &["Yes"])], Some(&bystander)),
        )
        .await;
    let request = general.next_request().await;
    general
        .reply(&request, answer_first(&request["params"]))
        .await;
    assert_eq!(
        conn.wait(id).await.unwrap(),
        json!({ "answers": [{ "id": "b", "selected": ["Yes"] }] })
    );
    assert!(
        scoped.next_incoming_within(QUIET).await.is_none(),
        "removed answerers receive nothing"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn unregistering_a_child_leaves_its_owner() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    let root = conn.register_agent(json!({ "id": "keep" })).await;
    let child = conn
        .register_agent(json!({ "id": "go", "owner": root }))
        .await;
    conn.call("agents/unregister", json!({ "agent": child }))
        .await
        .unwrap();
    let agents = conn.call("agents/list", json!({})).await.unwrap();
    assert_eq!(
        agents,
        json!({ "agents": [{ "id": "keep", "owner": null, "root": true }] })
    );
    // The child id can be taken again, now as a root that may ask.
    let reborn = conn.register_agent(json!({ "id": "go" })).await;
    expect_question_error(
        conn.call(
            "user-questions/ask",
            ask(vec![q("a", "?", &[])], Some(&reborn)),
        )
        .await,
        "NO_PROVIDER",
    );
}

/// A closing connection unregisters its agents (and what they own), cancels its pending asks at their
/// answerers, and the requests it held as an answerer move down the chain.
#[tokio::test(flavor = "multi_thread")]
async fn a_closing_connection_takes_its_agents_and_asks_and_hands_on_what_it_held() {
    let broker = Broker::start();
    let backup = broker.conn().await;
    backup
        .register_answerer(json!("all"), false, "backup")
        .await;
    let holder = broker.conn().await;
    holder.register_answerer(json!("all"), true, "holder").await;
    let observer = broker.conn().await;
    let other_asker = broker.conn().await;

    let leaving = broker.conn().await;
    let root = leaving
        .register_agent(json!({ "id": "leaving-root", "label": "L" }))
        .await;
    leaving
        .register_agent(json!({ "id": "leaving-child", "owner": root }))
        .await;
    observer.register_agent(json!({ "id": "staying" })).await;
    // `leaving` asks (held by `holder`), and another connection asks for `leaving`'s agent.
    let own = leaving
        .start(
            "user-questions/ask",
            ask(vec![q("own", "Mine?", &["Yes"])], Some(&root)),
        )
        .await;
    let own_request = holder.next_request().await;
    let borrowed = other_asker
        .start(
            "user-questions/ask",
            ask(vec![q("borrowed", "Theirs?", &["Yes"])], Some(&root)),
        )
        .await;
    let borrowed_request = holder.next_request().await;
    // `leaving` is also an answerer (first in the chain) holding a third request.
    leaving
        .register_answerer(json!("all"), true, "leaving-answerer")
        .await;
    let third = other_asker
        .start(
            "user-questions/ask",
            ask(vec![q("third", "Anyone?", &["Yes", "No"])], None),
        )
        .await;
    let held = leaving.next_request().await;
    assert_eq!(held["params"]["questions"][0]["id"], "third");

    leaving.close();

    // Its pending ask is cancelled at the answerer holding it; so is the ask made for its agent. The
    // request it held moves on to `holder` too; the three may arrive in any order.
    let mut cancelled = Vec::new();
    let mut moved = None;
    for _ in 0..3 {
        let message = holder.next_incoming().await;
        match message["method"].as_str() {
            Some("$/cancelRequest") => cancelled.push(message["params"]["id"].clone()),
            Some("user-questions/request") => moved = Some(message),
            _ => panic!("unexpected message at holder: {message}"),
        }
    }
    cancelled.sort_by_key(|id| id.as_i64());
    let mut expected = vec![own_request["id"].clone(), borrowed_request["id"].clone()];
    expected.sort_by_key(|id| id.as_i64());
    assert_eq!(cancelled, expected);
    let _ = own; // its response can never arrive: the connection is gone
    let error = expect_question_error(other_asker.wait(borrowed).await, "ASK_ABORTED");
    assert_eq!(error.message, ABORTED);
    // The request `leaving` held moves on: past `holder` (it delegates) to `backup`.
    let moved = moved.expect("the held request moved down the chain to holder");
    assert_eq!(moved["params"]["questions"][0]["id"], "third");
    holder.reply(&moved, Value::Null).await;
    let at_backup = backup.next_request().await;
    backup
        .reply(
            &at_backup,
            json!({ "answers": [{ "id": "third", "selected": ["No"] }] }),
        )
        .await;
    assert_eq!(
        other_asker.wait(third).await.unwrap(),
        json!({ "answers": [{ "id": "third", "selected": ["No"] }] })
    );
    // Its agents are gone, the others stay.
    wait_for_agents(&observer, "leaving's agents are unregistered", |a| {
        ids(a) == ["staying"]
    })
    .await;
}

/// Ownership crosses connections: when the owner's connection closes, the children another connection
/// registered under it go too, with the answerers scoped to them, and their ids are free again.
#[tokio::test(flavor = "multi_thread")]
async fn a_child_on_another_connection_goes_when_its_owners_connection_closes() {
    let broker = Broker::start();
    let general = broker.conn().await;
    general
        .register_answerer(json!("all"), false, "general")
        .await;
    let owners = broker.conn().await;
    let root = owners.register_agent(json!({ "id": "root" })).await;
    let children = broker.conn().await;
    let child = children
        .register_agent(json!({ "id": "child", "owner": root }))
        .await;
    let grandchild = children
        .register_agent(json!({ "id": "grandchild", "owner": child }))
        .await;
    let scoped = broker.conn().await;
    scoped
        .register_answerer(json!({ "agent": grandchild }), true, "grandchild-scoped")
        .await;

    owners.close();

    wait_for_agents(&children, "the root's subtree is unregistered", |a| {
        a.is_empty()
    })
    .await;
    for gone in [&child, &grandchild] {
        let error = expect_question_error(
            children
                .call(
                    "user-questions/ask",
                    ask(vec![q("a", "?", &["Yes"])], Some(gone)),
                )
                .await,
            "CALLER_NOT_LIVE",
        );
        assert_eq!(error.message, NOT_LIVE);
    }
    let error = expect_rpc_error(
        children
            .call("agents/register", json!({ "id": "late", "owner": root }))
            .await,
        -32003,
    );
    assert_eq!(error.data, json!({ "code": "AGENT_NOT_LIVE" }));
    let status = children.call("askdesk/status", json!({})).await.unwrap();
    assert_eq!(
        status["answerers"].as_array().map(Vec::len),
        Some(1),
        "only the unscoped answerer is left: {status}"
    );
    // The child's id is free, and registered again without an owner it is a root that may ask.
    let reborn = children.register_agent(json!({ "id": "child" })).await;
    let id = children
        .start(
            "user-questions/ask",
            ask(vec![q("a", "?", &["Yes"])], Some(&reborn)),
        )
        .await;
    let request = general.next_request().await;
    assert_eq!(request["params"]["agent"], json!({ "id": "child" }));
    general
        .reply(&request, answer_first(&request["params"]))
        .await;
    assert_eq!(
        children.wait(id).await.unwrap(),
        json!({ "answers": [{ "id": "a", "selected": ["Yes"] }] })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_last_answerer_leaving_while_holding_fails_closed() {
    let broker = Broker::start();
    let only = broker.conn().await;
    only.register_answerer(json!("all"), false, "only").await;
    let asker = broker.conn().await;
    let id = asker
        .start(
            "user-questions/ask",
            ask(vec![q("a", "Go?", &["Yes"])], None),
        )
        .await;
    only.next_request().await;
    only.close();
    let error = expect_question_error(asker.wait(id).await, "NO_PROVIDER");
    assert_eq!(error.message, NO_PROVIDER);
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_settles_aborted_at_once_even_with_a_stuck_answerer() {
    let broker = Broker::start();
    let stuck = broker.conn().await;
    stuck.register_answerer(json!("all"), false, "stuck").await;
    let asker = broker.conn().await;
    let id = asker
        .start(
            "user-questions/ask",
            ask(vec![q("a", "Go?", &["Yes"])], None),
        )
        .await;
    let request = stuck.next_request().await;
    asker.cancel(id).await;
    // The stuck answerer never replies: only the cancel itself can settle the ask.
    let error = expect_question_error(asker.wait(id).await, "ASK_ABORTED");
    assert_eq!(error.message, ABORTED);
    let note = stuck.next_incoming().await;
    assert_eq!(
        note,
        json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": request["id"], "reason": "withdrawn" } })
    );
    // A late answer is ignored: the asker gets nothing more, and both connections still work.
    stuck
        .reply(&request, answer_first(&request["params"]))
        .await;
    assert_eq!(stuck.call("ping", json!({})).await.unwrap(), json!({}));
    assert_eq!(asker.call("ping", json!({})).await.unwrap(), json!({}));
    let responses = asker
        .lines()
        .iter()
        .filter(|l| l.contains(&format!("\"id\":{id},")))
        .count();
    assert_eq!(
        responses,
        1,
        "exactly one response to the cancelled ask: {:?}",
        asker.lines()
    );
    // Cancelling an id that is not pending (or is not ours) is harmless.
    asker.cancel(9999).await;
    asker
        .notify("$/cancelRequest", json!({ "id": "nope" }))
        .await;
    asker.notify("$/cancelRequest", json!({})).await;
    assert_eq!(asker.call("ping", json!({})).await.unwrap(), json!({}));
}

#[tokio::test(flavor = "multi_thread")]
async fn one_connection_cannot_cancel_another_connections_ask() {
    let broker = Broker::start();
    let answerer = broker.conn().await;
    answerer.register_answerer(json!("all"), false, "a").await;
    let asker = broker.conn().await;
    let meddler = broker.conn().await;
    let id = asker
        .start(
            "user-questions/ask",
            ask(vec![q("a", "Go?", &["Yes"])], None),
        )
        .await;
    let request = answerer.next_request().await;
    meddler.cancel(id).await;
    assert_eq!(meddler.call("ping", json!({})).await.unwrap(), json!({}));
    assert!(
        answerer.next_incoming_within(QUIET).await.is_none(),
        "nothing was cancelled"
    );
    answerer
        .reply(&request, answer_first(&request["params"]))
        .await;
    assert_eq!(
        asker.wait(id).await.unwrap(),
        json!({ "answers": [{ "id": "a", "selected": ["Yes"] }] })
    );
}
