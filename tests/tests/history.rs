//! The history journal against a real `askdesk serve`: every way a request settles (answered,
//! dismissed, withdrawn, failed, late answer) lands in `$XDG_DATA_HOME/askdesk/history.jsonl` with
//! its questions, agent, answer and error; a settled request is on disk before its asker hears of
//! it and survives `kill -9`, also of a broker under load from 32 askers; an answer that races its asker's cancellation is delivered or
//! journaled as a late answer, never lost; a torn last line is skipped with a warning and never
//! stops the broker; `askdesk history` lists the journal newest first as a table or JSON lines,
//! filtered by outcome, agent and count, and creates nothing.

use std::io::Write;
use std::os::unix::net::UnixStream as StdUnixStream;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use askdesk_e2e::journal::{complete_records, journal_path};
use askdesk_e2e::{
    expect_question_error, expect_rpc_error, q, run_with_timeout, Broker, Conn, Home, PATIENCE,
};
use serde_json::{json, Value};

const ABORTED: &str = "ask_user_question was aborted before the user answered";
const DISMISSED: &str = "the user cancelled ask_user_question";
const NO_PROVIDER: &str = "no user-questions answerer accepted the request";

// ----- reading the journal and the log, running commands -----

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The journal's lines: the file without the spaces a running broker writes ahead of its next
/// lines (a stopped one cuts them off). A read racing that cut may see zeros where the spaces were
/// (seen on Linux with ext4), so those go too; a stopped broker's journal is checked to end with
/// its last line.
fn held_off(text: &str) -> &str {
    text.trim_end_matches([' ', '\0'])
}

/// The whole journal, which must be nothing but complete JSON lines (and, while a broker runs or
/// after it was killed, the spaces it held for the next ones).
fn strict_records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("read the journal {}: {e}", path.display()));
    let lines = held_off(&text);
    assert!(
        lines.is_empty() || lines.ends_with('\n'),
        "the journal ends with a complete line:\n{lines}"
    );
    complete_records(path)
}

/// Polls the journal (bounded by [`PATIENCE`]) until `done` holds for its complete records.
async fn journal_until(path: &Path, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let records = complete_records(path);
        if done(&records) {
            return records;
        }
        assert!(
            Instant::now() < deadline,
            "the journal never showed {what} within {PATIENCE:?}; it holds:\n{}",
            std::fs::read_to_string(path).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Polls the broker's log (bounded by [`PATIENCE`]) until a line satisfies `found`: `serve` binds
/// its socket before it opens the journal, so a ready broker may not have logged about it yet.
async fn log_until(broker: &Broker, what: &str, found: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let log = broker.log();
        if log.lines().any(&found) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "askdesk serve never logged {what} within {PATIENCE:?}; log:\n{log}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Runs `askdesk <args>` in `home` off the async runtime.
async fn askdesk(home: &Home, args: &[&str]) -> Output {
    let mut cmd = home.command(args);
    tokio::task::spawn_blocking(move || run_with_timeout(&mut cmd, Duration::from_secs(30)))
        .await
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[track_caller]
fn assert_success(output: &Output) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        text(&output.stdout),
        text(&output.stderr)
    );
}

/// `askdesk history --json <args>` as parsed records.
async fn history_json(home: &Home, args: &[&str]) -> Vec<Value> {
    let mut full = vec!["history", "--json"];
    full.extend_from_slice(args);
    let output = askdesk(home, &full).await;
    assert_success(&output);
    text(&output.stdout)
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("history --json line ({e}): {line:?}"))
        })
        .collect()
}

/// The first question id of each record: what the tests use to tell records apart.
fn first_ids(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .map(|r| r["questions"][0]["id"].as_str().unwrap_or("?").to_owned())
        .collect()
}

fn summary(records: &[Value]) -> Vec<(String, String)> {
    records
        .iter()
        .map(|r| {
            (
                r["questions"][0]["id"].as_str().unwrap_or("?").to_owned(),
                r["outcome"].as_str().unwrap_or("?").to_owned(),
            )
        })
        .collect()
}

/// An answerer connection registered with scope `all` under the label `scripted`.
async fn scripted_answerer(broker: &Broker) -> Conn {
    let conn = broker.conn().await;
    conn.register_answerer(json!("all"), false, "scripted")
        .await;
    conn
}

// ----- the scenario: one request per outcome -----

/// The answer [`ask_go`] gets: its one question answered "Go".
fn went() -> Value {
    json!({ "answers": [{ "id": "q", "selected": ["Go"] }] })
}

/// Asks one question `q` with `text` and the option "Go", answers it "Go" through `answerer`,
/// and returns what the asker received.
async fn ask_go(asker: &Conn, answerer: &Conn, text: &str) -> Value {
    let id = asker
        .start(
            "user-questions/ask",
            json!({ "questions": [q("q", text, &["Go"])] }),
        )
        .await;
    let request = answerer.next_request().await;
    answerer.reply(&request, went()).await;
    asker.wait(id).await.unwrap()
}

fn deploy_questions() -> Vec<Value> {
    vec![
        json!({
            "id": "deploy", "question": "Deploy 2.4 to production?", "header": "Release",
            "detail": "All **checks** passed.",
            "options": [{ "label": "Yes (Recommended)", "description": "roll out now" }, { "label": "No" }]
        }),
        q("note", "Anything to tell the on-call?", &[]),
    ]
}

fn builder_meta() -> Value {
    json!({ "cwd": "/src/app", "branch": "main", "model": "m-1" })
}

/// What the scenario expects of each journal line, in journal order.
struct Expected {
    id: &'static str,
    outcome: &'static str,
    questions: Vec<Value>,
    agent: Option<Value>,
    answer: Option<Value>,
    /// `(code, message)`; `code` is `None` for an internal error.
    error: Option<(Option<String>, String)>,
}

/// Drives one request to each outcome through a hand-scripted answerer and checks what the asker
/// receives; returns what the journal must then hold, oldest first.
async fn settle_one_of_each(broker: &Broker) -> Vec<Expected> {
    let journal = journal_path(broker.home());
    let mut expected = Vec::new();
    let asker = broker.conn().await;

    // Failed, NO_PROVIDER: no answerer yet.
    let nobody = vec![q("nobody", "Is anyone there?", &["Yes", "No"])];
    let error = expect_question_error(
        asker
            .call("user-questions/ask", json!({ "questions": nobody }))
            .await,
        "NO_PROVIDER",
    );
    assert_eq!(error.message, NO_PROVIDER);
    expected.push(Expected {
        id: "nobody",
        outcome: "failed",
        questions: nobody,
        agent: None,
        answer: None,
        error: Some((Some("NO_PROVIDER".into()), NO_PROVIDER.into())),
    });

    let answerer = scripted_answerer(broker).await;
    let builder = asker
        .register_agent(json!({ "id": "builder", "label": "Build bot", "meta": builder_meta() }))
        .await;
    let reviewer = asker.register_agent(json!({ "id": "reviewer" })).await;

    // Failed, DELEGATED_CALLER: refused before it reached anyone, still a question an agent asked.
    let helper = asker
        .register_agent(json!({ "id": "helper", "label": "Helper", "owner": builder }))
        .await;
    let delegated = vec![q("delegated", "May I push to main?", &["Yes", "No"])];
    let error = expect_question_error(
        asker
            .call(
                "user-questions/ask",
                json!({ "questions": delegated, "agent": helper }),
            )
            .await,
        "DELEGATED_CALLER",
    );
    expected.push(Expected {
        id: "delegated",
        outcome: "failed",
        questions: delegated,
        agent: Some(json!({ "id": "helper", "label": "Helper" })),
        answer: None,
        error: Some((Some("DELEGATED_CALLER".into()), error.message)),
    });

    // Answered, for an agent with a label and meta; the answerer sends the items out of order.
    let deploy = deploy_questions();
    let id = asker
        .start(
            "user-questions/ask",
            json!({ "questions": deploy, "agent": builder }),
        )
        .await;
    let request = answerer.next_request().await;
    assert_eq!(
        request["params"]["agent"],
        json!({ "id": "builder", "label": "Build bot", "meta": builder_meta() })
    );
    answerer
        .reply(
            &request,
            json!({ "answers": [
                { "id": "note", "selected": [], "custom": "pager is on \"mute\"\nuntil 9:00 ✓" },
                { "id": "deploy", "selected": ["Yes (Recommended)"] },
            ] }),
        )
        .await;
    let answer = asker.wait(id).await.expect("the deploy ask is answered");
    assert_eq!(
        answer,
        json!({ "answers": [
            { "id": "deploy", "selected": ["Yes (Recommended)"] },
            { "id": "note", "selected": [], "custom": "pager is on \"mute\"\nuntil 9:00 ✓" },
        ] }),
        "the broker returns the items in question order"
    );
    expected.push(Expected {
        id: "deploy",
        outcome: "answered",
        questions: deploy,
        agent: Some(json!({ "id": "builder", "label": "Build bot", "meta": builder_meta() })),
        answer: Some(answer),
        error: None,
    });

    // Dismissed: the human dismissed the batch (ASK_CANCELLED).
    let dismiss = vec![q("dismiss", "Rotate the signing key?", &["Rotate", "Keep"])];
    let id = asker
        .start("user-questions/ask", json!({ "questions": dismiss }))
        .await;
    let request = answerer.next_request().await;
    answerer
        .reply_error(
            &request,
            json!({ "code": -32001, "message": DISMISSED, "data": { "code": "ASK_CANCELLED" } }),
        )
        .await;
    let error = expect_question_error(asker.wait(id).await, "ASK_CANCELLED");
    assert_eq!(error.message, DISMISSED);
    expected.push(Expected {
        id: "dismiss",
        outcome: "dismissed",
        questions: dismiss,
        agent: None,
        answer: None,
        error: Some((Some("ASK_CANCELLED".into()), DISMISSED.into())),
    });

    // Failed: the answerer fails with a non-domain error (internal, -32603).
    let crash = vec![q("crash", "Run the migration?", &["Run", "Skip"])];
    let id = asker
        .start("user-questions/ask", json!({ "questions": crash }))
        .await;
    let request = answerer.next_request().await;
    answerer
        .reply_error(
            &request,
            json!({ "code": -32603, "message": "the rule engine crashed: stack overflow" }),
        )
        .await;
    let error = expect_rpc_error(asker.wait(id).await, -32603);
    assert!(
        error
            .message
            .contains("the rule engine crashed: stack overflow"),
        "{error:?}"
    );
    assert_eq!(error.data["answerer"], "scripted", "{error:?}");
    expected.push(Expected {
        id: "crash",
        outcome: "failed",
        questions: crash,
        agent: None,
        answer: None,
        error: Some((None, "the rule engine crashed: stack overflow".into())),
    });

    // Failed: an answer that breaks the answer rules (BAD_ANSWER) is never passed on.
    let garbled = vec![q("garbled", "Pick a colour", &["Red", "Blue"])];
    let id = asker
        .start("user-questions/ask", json!({ "questions": garbled }))
        .await;
    let request = answerer.next_request().await;
    answerer
        .reply(
            &request,
            json!({ "answers": [{ "id": "garbled", "selected": ["Green"] }] }),
        )
        .await;
    let error = expect_question_error(asker.wait(id).await, "BAD_ANSWER");
    expected.push(Expected {
        id: "garbled",
        outcome: "failed",
        questions: garbled,
        agent: None,
        answer: None,
        error: Some((Some("BAD_ANSWER".into()), error.message.clone())),
    });

    // Withdrawn: the asker cancels while the answerer holds the request.
    let withdraw = vec![q("withdraw", "Merge the branch?", &["Merge", "Wait"])];
    let id = asker
        .start(
            "user-questions/ask",
            json!({ "questions": withdraw, "agent": reviewer }),
        )
        .await;
    let request = answerer.next_request().await;
    asker.cancel(id).await;
    let error = expect_question_error(asker.wait(id).await, "ASK_ABORTED");
    assert_eq!(error.message, ABORTED);
    let notice = answerer.next_incoming().await;
    assert_eq!(notice["method"], "$/cancelRequest", "{notice}");
    assert_eq!(notice["params"]["id"], request["id"], "{notice}");
    // A late delegation or error is no answer: nothing more is journaled for it.
    answerer.reply(&request, Value::Null).await;
    expected.push(Expected {
        id: "withdraw",
        outcome: "withdrawn",
        questions: withdraw.clone(),
        agent: Some(json!({ "id": "reviewer" })),
        answer: None,
        error: Some((Some("ASK_ABORTED".into()), ABORTED.into())),
    });

    // Late answer: the answerer answers after the `$/cancelRequest` it received. The request is
    // journaled withdrawn first, then the discarded answer as late-answer.
    let late = vec![q(
        "late",
        "Still need the staging DB?",
        &["Keep it", "Drop it"],
    )];
    let id = asker
        .start(
            "user-questions/ask",
            json!({ "questions": late, "agent": reviewer }),
        )
        .await;
    let request = answerer.next_request().await;
    asker.cancel(id).await;
    expect_question_error(asker.wait(id).await, "ASK_ABORTED");
    let notice = answerer.next_incoming().await;
    assert_eq!(notice["method"], "$/cancelRequest", "{notice}");
    assert_eq!(notice["params"]["id"], request["id"], "{notice}");
    let late_answer = json!({ "answers": [{ "id": "late", "selected": ["Drop it"] }] });
    answerer.reply(&request, late_answer.clone()).await;
    expected.push(Expected {
        id: "late",
        outcome: "withdrawn",
        questions: late.clone(),
        agent: Some(json!({ "id": "reviewer" })),
        answer: None,
        error: Some((Some("ASK_ABORTED".into()), ABORTED.into())),
    });
    expected.push(Expected {
        id: "late",
        outcome: "late-answer",
        questions: late,
        agent: Some(json!({ "id": "reviewer" })),
        answer: Some(late_answer),
        error: None,
    });
    let count = expected.len();
    journal_until(&journal, "the late answer", |records| {
        records.len() >= count && records.iter().any(|r| r["outcome"] == "late-answer")
    })
    .await;

    // Withdrawn: the asker's connection closes while the answerer holds the request.
    let hangup = vec![q("hangup", "Retry the flaky test?", &["Retry", "Skip"])];
    let leaver = broker.conn().await;
    leaver
        .start("user-questions/ask", json!({ "questions": hangup }))
        .await;
    let request = answerer.next_request().await;
    leaver.close();
    let notice = answerer.next_incoming().await;
    assert_eq!(notice["method"], "$/cancelRequest", "{notice}");
    assert_eq!(notice["params"]["id"], request["id"], "{notice}");
    expected.push(Expected {
        id: "hangup",
        outcome: "withdrawn",
        questions: hangup,
        agent: None,
        answer: None,
        error: Some((Some("ASK_ABORTED".into()), ABORTED.into())),
    });
    let count = expected.len();
    journal_until(&journal, "the hang-up", |records| records.len() >= count).await;
    expected
}

// ----- 1. every outcome is recorded -----

#[tokio::test(flavor = "multi_thread")]
async fn every_outcome_is_journaled_with_its_questions_agent_answer_and_error() {
    let started = now_ms();
    let broker = Broker::start();
    let expected = settle_one_of_each(&broker).await;
    let journal = journal_path(broker.home());
    let raw = std::fs::read_to_string(&journal).unwrap();
    let records = strict_records(&journal);
    let finished = now_ms();

    let want: Vec<(String, String)> = expected
        .iter()
        .map(|e| (e.id.to_owned(), e.outcome.to_owned()))
        .collect();
    assert_eq!(summary(&records), want, "journal:\n{raw}");

    for (record, expect) in records.iter().zip(&expected) {
        let at = format!("record {} ({}): {record}", expect.id, expect.outcome);
        assert_eq!(record["outcome"], expect.outcome, "{at}");
        assert_eq!(record["questions"], json!(expect.questions), "{at}");
        match &expect.agent {
            Some(agent) => assert_eq!(&record["agent"], agent, "{at}"),
            None => assert!(record.get("agent").is_none(), "no agent: {at}"),
        }
        match &expect.answer {
            Some(answer) => assert_eq!(&record["answer"], answer, "{at}"),
            None => assert!(record.get("answer").is_none(), "no answer: {at}"),
        }
        match &expect.error {
            Some((code, message)) => {
                assert_eq!(record["error"]["message"], json!(message), "{at}");
                match code {
                    Some(code) => assert_eq!(record["error"]["code"], json!(code), "{at}"),
                    None => assert!(record["error"].get("code").is_none(), "no code: {at}"),
                }
            }
            None => assert!(record.get("error").is_none(), "no error: {at}"),
        }
        let asked = record["askedAt"]
            .as_u64()
            .unwrap_or_else(|| panic!("askedAt: {at}"));
        let settled = record["settledAt"]
            .as_u64()
            .unwrap_or_else(|| panic!("settledAt: {at}"));
        assert!(
            started <= asked && asked <= settled && settled <= finished,
            "times in order and within the test ({started}..{finished}): {at}"
        );
    }

    // The late answer names who sent it as the chain does (its label, as an answered request
    // records it), and never an instance token.
    let late = records
        .iter()
        .find(|r| r["outcome"] == "late-answer")
        .unwrap();
    assert_eq!(
        late["answerer"], "scripted",
        "a late answer records its answerer's label: {late}"
    );
    for line in raw.lines() {
        assert!(
            !line.contains("instance"),
            "no instance token in the journal: {line}"
        );
    }
}

// ----- 2. durable before delivery -----

#[tokio::test(flavor = "multi_thread")]
async fn the_journal_line_exists_when_the_asker_receives_the_response() {
    let broker = Broker::start();
    let journal = journal_path(broker.home());
    let answerer = scripted_answerer(&broker).await;
    let asker = broker.conn().await;
    for n in 0..16u32 {
        let id_text = format!("n{n}");
        let dismiss = n % 4 == 3;
        let id = asker
            .start(
                "user-questions/ask",
                json!({ "questions": [q(&id_text, &format!("Step {n}?"), &[])] }),
            )
            .await;
        let request = answerer.next_request().await;
        let answer = json!({ "answers": [{ "id": id_text, "selected": [], "custom": format!("answer {n}") }] });
        if dismiss {
            answerer
                .reply_error(
                    &request,
                    json!({ "code": -32001, "message": DISMISSED, "data": { "code": "ASK_CANCELLED" } }),
                )
                .await;
        } else {
            answerer.reply(&request, answer.clone()).await;
        }
        let result = asker.wait(id).await;
        // Read at once: the line must already be there, complete.
        let records = strict_records(&journal);
        assert_eq!(
            records.len(),
            n as usize + 1,
            "ask {n}: the journal holds every settled ask when its response arrives: {records:?}"
        );
        let last = records.last().unwrap();
        assert_eq!(last["questions"][0]["id"], id_text.as_str(), "{last}");
        if dismiss {
            expect_question_error(result, "ASK_CANCELLED");
            assert_eq!(last["outcome"], "dismissed", "{last}");
        } else {
            assert_eq!(result.expect("answered"), answer);
            assert_eq!(last["outcome"], "answered", "{last}");
            assert_eq!(last["answer"], answer, "{last}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_journaled_answer_survives_kill_9_of_the_broker() {
    let mut broker = Broker::start();
    let journal = journal_path(broker.home());
    let answerer = scripted_answerer(&broker).await;

    // The asker writes its ask and never reads its socket.
    let mut asker = StdUnixStream::connect(broker.socket()).expect("connect the asker");
    let questions = deploy_questions();
    let mut lines = serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": 1, "client": { "name": "silent asker" } }
    }))
    .unwrap();
    lines.push(b'\n');
    lines.extend(
        serde_json::to_vec(&json!({
            "jsonrpc": "2.0", "id": 2, "method": "user-questions/ask",
            "params": { "questions": questions }
        }))
        .unwrap(),
    );
    lines.push(b'\n');
    asker.write_all(&lines).expect("send the ask");

    let request = answerer.next_request().await;
    let custom = format!("ship it — {}\nsecond line ✓", "x".repeat(2000));
    answerer
        .reply(
            &request,
            json!({ "answers": [
                { "id": "note", "selected": [], "custom": custom },
                { "id": "deploy", "selected": ["No"] },
            ] }),
        )
        .await;
    let expected_answer = json!({ "answers": [
        { "id": "deploy", "selected": ["No"] },
        { "id": "note", "selected": [], "custom": custom },
    ] });

    journal_until(&journal, "the answered line", |records| {
        records.iter().any(|r| r["outcome"] == "answered")
    })
    .await;
    broker.signal(libc::SIGKILL);
    let status = broker.wait_exit(PATIENCE).await;
    assert!(!status.success(), "killed, not exited: {status}");

    let raw = std::fs::read_to_string(&journal).unwrap();
    assert!(held_off(&raw).ends_with('\n'), "the last line is complete");
    let records = strict_records(&journal);
    assert_eq!(records.len(), 1, "{records:?}");
    let last = records.last().unwrap();
    assert_eq!(last["outcome"], "answered", "{last}");
    assert_eq!(
        last["answer"], expected_answer,
        "the exact answer the human gave"
    );
    assert_eq!(last["questions"], json!(questions));

    // After the crash the history reads back cleanly: no torn line, no warning.
    let output = askdesk(broker.home(), &["history", "--json"]).await;
    assert_success(&output);
    let listed: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["answer"], expected_answer);
    assert!(
        !text(&output.stderr).contains("WARN"),
        "no warning for a clean journal: {}",
        text(&output.stderr)
    );
    drop(asker);
}

/// One asker of the kill test: its own connection, free-text asks one after another, until the
/// broker dies. Returns every answer it received, keyed by question id.
fn ask_until_the_broker_dies(socket: &Path, asker: usize) -> Vec<(String, Value)> {
    use std::io::{BufRead, BufReader};
    let mut stream = StdUnixStream::connect(socket).expect("connect an asker");
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    let send = |stream: &mut StdUnixStream, message: Value| {
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(b'\n');
        stream.write_all(&bytes).is_ok()
    };
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "protocolVersion": 1, "client": { "name": format!("asker {asker}") } } });
    if !send(&mut stream, init) || reader.read_line(&mut line).unwrap_or(0) == 0 {
        return Vec::new();
    }
    let mut received = Vec::new();
    for n in 1.. {
        let qid = format!("a{asker}-{n}");
        let ask = json!({ "jsonrpc": "2.0", "id": n, "method": "user-questions/ask",
            "params": { "questions": [q(&qid, "Go on?", &[])] } });
        line.clear();
        if !send(&mut stream, ask) || reader.read_line(&mut line).unwrap_or(0) == 0 {
            return received; // The broker is gone.
        }
        let response: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("a response line ({e}): {line:?}"));
        assert_eq!(response["id"], n, "{response}");
        let answer = response
            .get("result")
            .unwrap_or_else(|| panic!("ask {qid} failed: {response}"));
        received.push((qid, answer.clone()));
    }
    unreachable!()
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_under_load_from_32_askers_loses_no_answer_any_of_them_received() {
    const ASKERS: usize = 32;
    let mut broker = Broker::start();
    let journal = journal_path(broker.home());
    // The answerer answers every request at once with a text naming its question.
    let answerer = scripted_answerer(&broker).await;
    let answering = tokio::spawn(async move {
        while let Some(request) = answerer.next_incoming_within(PATIENCE).await {
            if request["method"] != "user-questions/request" {
                continue;
            }
            let qid = request["params"]["questions"][0]["id"]
                .as_str()
                .unwrap()
                .to_owned();
            let answer = json!({ "answers": [{ "id": qid, "selected": [], "custom": format!("answer to {qid}") }] });
            if answerer
                .try_send_raw(&reply_line(&request, answer))
                .await
                .is_err()
            {
                break;
            }
        }
    });
    let askers: Vec<_> = (0..ASKERS)
        .map(|asker| {
            let socket = broker.socket().to_owned();
            std::thread::spawn(move || ask_until_the_broker_dies(&socket, asker))
        })
        .collect();
    // Kill while all 32 are asking: once the journal shows a few hundred settled asks.
    journal_until(&journal, "300 settled asks", |records| records.len() >= 300).await;
    broker.signal(libc::SIGKILL);
    let status = broker.wait_exit(PATIENCE).await;
    assert!(!status.success(), "killed, not exited: {status}");

    let mut answers = Vec::new();
    for asker in askers {
        answers.extend(asker.join().expect("an asker thread"));
    }
    let _ = answering.await;
    assert!(
        answers.len() >= 300 - ASKERS,
        "the askers were answered: {}",
        answers.len()
    );
    // Every complete line parses; at most the very last one may be cut short by the kill.
    let records = complete_records(&journal);
    let journaled: std::collections::HashMap<String, &Value> = records
        .iter()
        .filter(|r| r["outcome"] == "answered")
        .map(|r| {
            (
                r["questions"][0]["id"].as_str().unwrap().to_owned(),
                &r["answer"],
            )
        })
        .collect();
    // The history is private to its owner.
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&journal), 0o600, "history.jsonl");
    assert_eq!(
        mode(journal.parent().unwrap()),
        0o700,
        "the history directory"
    );
    for (qid, answer) in &answers {
        assert_eq!(
            journaled.get(qid).copied(),
            Some(answer),
            "the answer to {qid} reached its agent but is not in the journal ({} received, {} journaled)",
            answers.len(),
            journaled.len()
        );
    }
}

/// A response line to a broker-sent request.
fn reply_line(request: &Value, result: Value) -> Vec<u8> {
    let mut line =
        serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": result }))
            .unwrap();
    line.push(b'\n');
    line
}

// ----- 3. a torn last line -----

fn old_record() -> Value {
    json!({
        "askedAt": 1_700_000_000_000u64, "settledAt": 1_700_000_004_000u64,
        "agent": { "id": "old-bot", "label": "Old bot" },
        "questions": [{ "id": "old", "question": "Keep the old logs?", "options": [{ "label": "Keep" }, { "label": "Drop" }] }],
        "outcome": "answered",
        "answer": { "answers": [{ "id": "old", "selected": ["Keep"] }] }
    })
}

const TORN: &str = r#"{"askedAt":1700000010000,"settledAt":1700000011000,"questions":[{"id":"torn","question":"Half wri"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_torn_last_line_is_skipped_with_a_warning_and_the_broker_serves() {
    let home = Home::new();
    let journal = journal_path(&home);
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    let old_line = serde_json::to_string(&old_record()).unwrap();
    std::fs::write(&journal, format!("{old_line}\n{TORN}")).unwrap();

    let broker = Broker::start_in(home, &[]);
    log_until(&broker, "a warning about the torn line", |l| {
        l.contains("WARN") && l.contains("torn")
    })
    .await;

    let answerer = scripted_answerer(&broker).await;
    let asker = broker.conn().await;
    let id = asker
        .start(
            "user-questions/ask",
            json!({ "questions": [q("fresh", "Start the nightly build?", &["Start", "Skip"])] }),
        )
        .await;
    let request = answerer.next_request().await;
    let answer = json!({ "answers": [{ "id": "fresh", "selected": ["Start"] }] });
    answerer.reply(&request, answer.clone()).await;
    assert_eq!(asker.wait(id).await.unwrap(), answer);

    // The new record sits on its own line after the torn one, which is kept as it was.
    let raw =
        std::fs::read_to_string(broker.home().data_home().join("askdesk/history.jsonl")).unwrap();
    let raw = held_off(&raw);
    assert!(raw.ends_with('\n'), "{raw}");
    let lines: Vec<&str> = raw.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 3, "old, torn, new:\n{raw}");
    assert_eq!(lines[0], old_line);
    assert_eq!(lines[1], TORN);
    let fresh: Value = serde_json::from_str(lines[2])
        .unwrap_or_else(|e| panic!("the new record is a line of its own ({e}):\n{raw}"));
    assert_eq!(fresh["outcome"], "answered");
    assert_eq!(fresh["answer"], answer);

    let output = askdesk(broker.home(), &["history", "--json"]).await;
    assert_success(&output);
    let listed: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(first_ids(&listed), ["fresh", "old"], "{listed:?}");
    assert_eq!(
        listed[1],
        old_record(),
        "the old record reads back unchanged"
    );
    assert_eq!(listed[0], fresh);
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("WARN") && stderr.contains("line=2"),
        "history warns about the skipped line 2: {stderr}"
    );

    // The table reads the same journal.
    let output = askdesk(broker.home(), &["history"]).await;
    assert_success(&output);
    let table = text(&output.stdout);
    assert_eq!(table.lines().count(), 3, "header and two rows:\n{table}");
    assert!(!table.contains("Half wri"), "{table}");
}

#[tokio::test(flavor = "multi_thread")]
async fn history_skips_a_torn_last_line_without_a_broker() {
    let home = Home::new();
    let journal = journal_path(&home);
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    let old_line = serde_json::to_string(&old_record()).unwrap();
    // Torn in the middle of a multi-byte character: not even valid UTF-8.
    let mut bytes = format!("{old_line}\n").into_bytes();
    let torn = r#"{"askedAt":1700000010000,"questions":[{"id":"é"#.as_bytes();
    bytes.extend_from_slice(&torn[..torn.len() - 1]);
    std::fs::write(&journal, &bytes).unwrap();

    let output = askdesk(&home, &["history", "--json"]).await;
    assert_success(&output);
    let listed: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(listed, vec![old_record()]);
    assert!(
        text(&output.stderr).contains("WARN"),
        "history warns: {}",
        text(&output.stderr)
    );
    // A viewer only reads: the journal is left byte for byte as it was (a broker may be writing it).
    assert_eq!(
        std::fs::read(&journal).unwrap(),
        bytes,
        "history changed the journal"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mostly_unreadable_journal_names_ten_lines_then_counts() {
    let home = Home::new();
    let journal = journal_path(&home);
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    let good = serde_json::to_string(&old_record()).unwrap();
    let mut text_lines: Vec<String> = (1..=25).map(|n| format!("garbage {n}")).collect();
    text_lines.push(good);
    std::fs::write(&journal, text_lines.join("\n") + "\n").unwrap();

    let output = askdesk(&home, &["history", "--json"]).await;
    assert_success(&output);
    assert_eq!(text(&output.stdout).lines().count(), 1, "the good record");
    let stderr = text(&output.stderr);
    let named = stderr
        .lines()
        .filter(|l| l.contains("skipped an unreadable journal line"))
        .count();
    assert_eq!(named, 10, "{stderr}");
    assert!(
        stderr.contains("skipped 25 unreadable journal lines in all (15 more than named above)"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn history_without_a_journal_prints_nothing_and_creates_nothing() {
    let home = Home::new();
    let output = askdesk(&home, &["history"]).await;
    assert_success(&output);
    assert_eq!(text(&output.stdout), "no history yet\n");
    assert_eq!(history_json(&home, &[]).await, Vec::<Value>::new());
    assert!(
        !home.data_home().exists(),
        "history created {} just by looking",
        home.data_home().display()
    );
}

/// The system's language chooses the words when nothing overrides it, and `ASKDESK_LANG` overrides
/// the system's; the table's data (an empty history's count) is the same in both.
#[tokio::test(flavor = "multi_thread")]
async fn history_speaks_the_systems_language_unless_askdesk_lang_says_otherwise() {
    let home = Home::new();
    let in_language = |lang: Option<&str>| {
        let mut cmd = home.command(["history"]);
        cmd.env_remove("ASKDESK_LANG")
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .env("LANG", "zh_CN.UTF-8");
        if let Some(lang) = lang {
            cmd.env("ASKDESK_LANG", lang);
        }
        let output = run_with_timeout(&mut cmd, Duration::from_secs(30));
        assert_success(&output);
        text(&output.stdout)
    };
    assert_eq!(in_language(None), "还没有历史\n");
    assert_eq!(in_language(Some("en")), "no history yet\n");
}

// ----- 4. `askdesk history` -----

/// A table's rows as cells, split at the header's column starts.
fn table_rows(table: &str) -> Vec<Vec<String>> {
    let mut lines = table.lines();
    let header = lines.next().expect("a header line");
    let columns = ["WHEN (UTC)", "AGENT", "OUTCOME", "QUESTION", "ANSWER", "BY"];
    let starts: Vec<usize> = columns
        .iter()
        .map(|c| {
            let byte = header
                .find(c)
                .unwrap_or_else(|| panic!("the header names {c}: {header:?}"));
            header[..byte].chars().count()
        })
        .collect();
    lines
        .map(|line| {
            let chars: Vec<char> = line.chars().collect();
            (0..starts.len())
                .map(|i| {
                    let from = starts[i].min(chars.len());
                    let to = starts
                        .get(i + 1)
                        .copied()
                        .unwrap_or(chars.len())
                        .min(chars.len());
                    chars[from..to].iter().collect::<String>().trim().to_owned()
                })
                .collect()
        })
        .collect()
}

/// Milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS` UTC, counted year by year.
fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let mut days = secs / 86_400;
    let rem = secs % 86_400;
    let leap = |y: u64| (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400);
    let mut year = 1970;
    while days >= if leap(year) { 366 } else { 365 } {
        days -= if leap(year) { 366 } else { 365 };
        year += 1;
    }
    let lengths = [
        31,
        if leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut month = 0;
    while days >= lengths[month] {
        days -= lengths[month];
        month += 1;
    }
    format!(
        "{year:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        month + 1,
        days + 1,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn history_prints_a_table_and_json_newest_first_and_filters() {
    let broker = Broker::start();
    let home = broker.home();
    settle_one_of_each(&broker).await;
    let journal = strict_records(&journal_path(home));
    let newest_first: Vec<Value> = journal.iter().rev().cloned().collect();

    // --json: every record, newest first, exactly as journaled.
    assert_eq!(history_json(home, &[]).await, newest_first);

    // The table: a header, then one row per record, newest first.
    let output = askdesk(home, &["history"]).await;
    assert_success(&output);
    let table = text(&output.stdout);
    let rows = table_rows(&table);
    assert_eq!(
        rows.len(),
        newest_first.len(),
        "one row per record:\n{table}"
    );
    for (row, record) in rows.iter().zip(&newest_first) {
        let at = format!("row {row:?} for {record}\n{table}");
        assert_eq!(row[0], utc(record["askedAt"].as_u64().unwrap()), "{at}");
        let agent = match record.get("agent") {
            None => "-".to_owned(),
            Some(agent) => agent
                .get("label")
                .unwrap_or(&agent["id"])
                .as_str()
                .unwrap()
                .to_owned(),
        };
        assert_eq!(row[1], agent, "{at}");
        assert_eq!(row[2], record["outcome"].as_str().unwrap(), "{at}");
        let question = record["questions"][0]["question"].as_str().unwrap();
        assert!(row[3].starts_with(question), "{at}");
        if let Some(code) = record["error"]["code"].as_str() {
            assert!(row[4].starts_with(code), "the error code shows: {at}");
        }
        // Who settled it, as journaled.
        assert_eq!(row[5], record["answerer"].as_str().unwrap_or("-"), "{at}");
    }
    assert!(
        rows.iter().any(|row| row[5] == "scripted"),
        "a socket answerer's label shows:\n{table}"
    );
    let by_id: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r[2].as_str(), r[1].as_str()))
        .collect();
    assert!(by_id.contains(&("answered", "Build bot")), "{table}");
    assert!(by_id.contains(&("late-answer", "reviewer")), "{table}");
    assert!(by_id.contains(&("dismissed", "-")), "{table}");
    let deploy_row = &rows[newest_first
        .iter()
        .position(|r| r["outcome"] == "answered")
        .unwrap()];
    assert_eq!(
        deploy_row[3], "Deploy 2.4 to production? (+more)",
        "{table}"
    );
    assert!(
        deploy_row[4].contains("deploy: Yes (Recommended)"),
        "{table}"
    );
    let newest = &rows[0];
    assert_eq!(newest[2], "withdrawn", "the hang-up settled last:\n{table}");
    assert_eq!(newest[3], "Retry the flaky test?", "{table}");

    // --outcome, for every outcome.
    for outcome in [
        "answered",
        "dismissed",
        "withdrawn",
        "failed",
        "late-answer",
    ] {
        let want: Vec<Value> = newest_first
            .iter()
            .filter(|r| r["outcome"] == outcome)
            .cloned()
            .collect();
        assert!(!want.is_empty(), "the scenario has a {outcome} record");
        assert_eq!(
            history_json(home, &["--outcome", outcome]).await,
            want,
            "--outcome {outcome}"
        );
    }
    assert_eq!(
        first_ids(&history_json(home, &["--outcome", "failed"]).await),
        ["garbled", "crash", "delegated", "nobody"]
    );

    // --agent, by id or by label.
    let by_builder = history_json(home, &["--agent", "builder"]).await;
    assert_eq!(first_ids(&by_builder), ["deploy"]);
    assert_eq!(
        history_json(home, &["--agent", "Build bot"]).await,
        by_builder
    );
    assert_eq!(
        summary(&history_json(home, &["--agent", "reviewer"]).await),
        [
            ("late".to_owned(), "late-answer".to_owned()),
            ("late".to_owned(), "withdrawn".to_owned()),
            ("withdraw".to_owned(), "withdrawn".to_owned()),
        ]
    );
    assert_eq!(
        history_json(home, &["--agent", "nobody-here"]).await,
        Vec::<Value>::new()
    );

    // Filters combine, and --limit keeps the newest.
    assert_eq!(
        first_ids(&history_json(home, &["--agent", "reviewer", "--outcome", "withdrawn"]).await),
        ["late", "withdraw"]
    );
    assert_eq!(
        history_json(home, &["--limit", "2"]).await,
        newest_first[..2].to_vec()
    );
    assert_eq!(
        first_ids(&history_json(home, &["--outcome", "withdrawn", "--limit", "1"]).await),
        ["hangup"]
    );

    // A filter that matches nothing says so; it does not call the history empty.
    let output = askdesk(home, &["history", "--agent", "nobody-here"]).await;
    assert_success(&output);
    assert_eq!(
        text(&output.stdout),
        format!(
            "no request in the history matches ({} recorded)\n",
            newest_first.len()
        )
    );

    // The table filters the same way.
    let output = askdesk(home, &["history", "--outcome", "dismissed"]).await;
    assert_success(&output);
    let rows = table_rows(&text(&output.stdout));
    assert_eq!(rows.len(), 1, "{}", text(&output.stdout));
    assert_eq!(rows[0][2], "dismissed");
    assert_eq!(rows[0][4], format!("ASK_CANCELLED: {DISMISSED}"));

    // An unknown outcome is a usage error.
    let output = askdesk(home, &["history", "--outcome", "lost"]).await;
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(output.stdout.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_with_no_history_journals_nothing() {
    let broker = Broker::start_with(&["--no-history"]);
    let answerer = scripted_answerer(&broker).await;
    let asker = broker.conn().await;
    ask_go(&asker, &answerer, "Go?").await;
    // The response is sent only after any journal write, so there is nothing to wait for.
    let journal = journal_path(broker.home());
    assert!(
        std::fs::metadata(&journal)
            .map(|m| m.len() == 0)
            .unwrap_or(true),
        "--no-history writes no journal: {:?}",
        std::fs::read_to_string(&journal)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_pending_at_sigterm_is_journaled_before_its_asker_hears_shutting_down() {
    let mut broker = Broker::start();
    let journal = journal_path(broker.home());
    let answerer = scripted_answerer(&broker).await;
    let asker = broker.conn().await;
    let questions = vec![q("pending", "Wait for the human?", &["Yes", "No"])];
    let id = asker
        .start("user-questions/ask", json!({ "questions": questions }))
        .await;
    answerer.next_request().await;
    broker.signal(libc::SIGTERM);
    let error = expect_question_error(asker.wait(id).await, "SHUTTING_DOWN");
    let records = strict_records(&journal);
    assert_eq!(
        summary(&records),
        [("pending".to_owned(), "failed".to_owned())]
    );
    assert_eq!(
        records[0]["error"]["code"], "SHUTTING_DOWN",
        "{}",
        records[0]
    );
    assert_eq!(records[0]["error"]["message"], json!(error.message));
    assert_eq!(records[0]["questions"], json!(questions));
    let status = broker.wait_exit(PATIENCE).await;
    assert!(status.success(), "a clean stop: {status}");
    assert_eq!(
        strict_records(&journal),
        records,
        "nothing more after the stop"
    );
    let at_rest = std::fs::read_to_string(&journal).unwrap();
    assert!(
        at_rest.ends_with('\n'),
        "a stopped broker leaves only its lines: {:?}",
        &at_rest[at_rest.len().saturating_sub(40)..]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_journal_that_cannot_be_opened_does_not_stop_the_broker_and_is_opened_once_it_can() {
    let home = Home::new();
    // `askdesk` under the data directory is a file, so the journal's directory cannot exist.
    std::fs::create_dir_all(home.data_home()).unwrap();
    std::fs::write(home.data_home().join("askdesk"), b"not a directory").unwrap();
    let broker = Broker::start_in(home, &[]);
    log_until(&broker, "that history is off", |l| {
        l.contains("ERROR") && l.contains("history is off")
    })
    .await;
    let answerer = scripted_answerer(&broker).await;
    let asker = broker.conn().await;
    assert_eq!(
        ask_go(&asker, &answerer, "Go?").await,
        went(),
        "the broker still answers"
    );
    // And says so: `askdesk status` shows why nothing is recorded.
    let status = asker.call("askdesk/status", json!({})).await.unwrap();
    assert_eq!(status["history"]["state"], "failing", "{status}");
    let error = status["history"]["error"].as_str().unwrap_or_default();
    assert!(
        error.ends_with("askdesk: it exists and is not a directory"),
        "{status}"
    );
    // `askdesk history` and the rules commands name the same culprit, with the status of a
    // file that cannot be read.
    for args in [&["history"][..], &["rules", "list"], &["rules", "test"]] {
        let output = broker.home().command(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(20), "{args:?}: {stderr}");
        assert!(
            stderr.contains("askdesk: it exists and is not a directory"),
            "{args:?}: {stderr}"
        );
    }
    // Once the cause is gone the next settled request is recorded, without a restart.
    std::fs::remove_file(broker.home().data_home().join("askdesk")).unwrap();
    assert_eq!(ask_go(&asker, &answerer, "Again?").await, went());
    let status = asker.call("askdesk/status", json!({})).await.unwrap();
    assert_eq!(status["history"]["state"], "on", "{status}");
    let recorded = history_json(broker.home(), &[]).await;
    assert_eq!(
        summary(&recorded),
        vec![("q".to_string(), "answered".to_string())],
        "{recorded:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn status_says_where_history_goes_or_that_it_is_off() {
    let broker = Broker::start();
    let conn = broker.conn().await;
    let status = conn.call("askdesk/status", json!({})).await.unwrap();
    assert_eq!(status["history"]["state"], "on", "{status}");
    let path = status["history"]["path"].as_str().unwrap_or_default();
    assert!(path.ends_with("askdesk/history.jsonl"), "{status}");

    let off = Broker::start_with(&["--no-history"]);
    let conn = off.conn().await;
    let status = conn.call("askdesk/status", json!({})).await.unwrap();
    assert_eq!(status["history"], json!({ "state": "off" }), "{status}");
}

/// The next `user-questions/request` on an answerer connection, skipping `$/cancelRequest` notices.
async fn next_request_skipping_cancels(answerer: &Conn) -> Value {
    loop {
        let message = answerer.next_incoming().await;
        match message["method"].as_str() {
            Some("user-questions/request") => return message,
            Some("$/cancelRequest") => continue,
            _ => panic!("unexpected message from the broker: {message}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_racing_the_askers_cancel_is_either_delivered_or_journaled_late() {
    let broker = Broker::start();
    let journal = journal_path(broker.home());
    let answerer = scripted_answerer(&broker).await;
    let asker = broker.conn().await;
    let mut aborted = Vec::new();
    let mut answered = Vec::new();
    // The window is narrow: a few hundred races hit it a few times.
    for n in 0..400u32 {
        let qid = format!("race{n}");
        let id = asker
            .start(
                "user-questions/ask",
                json!({ "questions": [q(&qid, "Race?", &["A", "B"])] }),
            )
            .await;
        let request = next_request_skipping_cancels(&answerer).await;
        let answer = json!({ "answers": [{ "id": qid, "selected": ["A"] }] });
        tokio::join!(asker.cancel(id), answerer.reply(&request, answer.clone()));
        match asker.wait(id).await {
            Ok(got) => {
                assert_eq!(got, answer);
                answered.push(qid);
            }
            Err(error) => {
                assert_eq!(error.data_code(), Some("ASK_ABORTED"), "{error:?}");
                aborted.push(qid);
            }
        }
    }
    // Every answer the human gave is in the journal: delivered (answered), or discarded because
    // the asker had already cancelled (withdrawn, then late-answer). None may vanish.
    let has = |records: &[Value], qid: &str, outcome: &str| {
        records
            .iter()
            .any(|r| r["questions"][0]["id"] == qid && r["outcome"] == outcome)
    };
    let deadline = Instant::now() + PATIENCE;
    let missing = loop {
        let records = complete_records(&journal);
        let missing: Vec<&String> = aborted
            .iter()
            .filter(|qid| !has(&records, qid, "late-answer"))
            .collect();
        if missing.is_empty() || Instant::now() >= deadline {
            for qid in &answered {
                assert!(
                    has(&records, qid, "answered"),
                    "{qid} answered but not journaled"
                );
            }
            for qid in &aborted {
                assert!(
                    has(&records, qid, "withdrawn"),
                    "{qid} aborted but not journaled"
                );
            }
            break missing;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert!(
        missing.is_empty(),
        "of {} asks cancelled as their answer arrived ({} answered first), {} lost the answer the \
         human gave: journaled withdrawn with no late-answer: {missing:?}",
        aborted.len(),
        answered.len(),
        missing.len()
    );
}
