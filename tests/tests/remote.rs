//! `askdesk remote` beside `askdesk serve`: it joins the `person` group as "phone", holds ordinary
//! questions for phones, passes permission prompts to the next answerer at once, leaves the broker
//! on SIGTERM, and fails clearly when there is no broker or the broker goes away. A phone paired
//! through `--pair` (played by the remote's own test phone) hears asks, answers them with a signed
//! answer, hears it was used (the broker's `askdesk/settled`, protocol 4.2), and hears requests
//! withdrawn with the reason the broker gives: the asker cancelled or went, the desk answered first.

use std::io::Write;
use std::time::Instant;

use askdesk_e2e::journal::{complete_records, journal_path};
use askdesk_e2e::{ask, expect_question_error, q, Background, Broker, Conn, PATIENCE};
use futures_util::SinkExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

/// The remote's test phone; the parts for an in-process desk go unused here.
#[allow(dead_code)]
#[path = "../../crates/askdesk-remote/tests/remote/phone.rs"]
mod phone;

use phone::{next, nonce, token_of, Link, Phone, Socket};

/// `askdesk remote` on a free port of 127.0.0.1, its data in the broker's home.
fn start_remote(broker: &Broker) -> Background {
    broker.spawn_cli(&["remote", "--listen", "127.0.0.1:0"])
}

/// Checks again every few milliseconds until `check` gives a value; after PATIENCE, fails with
/// `what` and the remote's output.
async fn until<T, F: std::future::Future<Output = Option<T>>>(
    remote: &Background,
    what: &str,
    mut check: impl FnMut() -> F,
) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "{what}; askdesk remote's output:\n{}",
            remote.log()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Waits until the broker's status satisfies `done`, and returns that status.
async fn status_until(conn: &Conn, remote: &Background, done: impl Fn(&Value) -> bool) -> Value {
    until(remote, "the status never changed as expected", || async {
        let status = conn.call("askdesk/status", json!({})).await.unwrap();
        done(&status).then_some(status)
    })
    .await
}

fn has_phone(status: &Value) -> bool {
    status["answerers"]
        .as_array()
        .is_some_and(|all| all.iter().any(|a| a["label"] == "phone"))
}

/// Waits for `remote` to exit and returns its status code.
async fn exit_code(remote: &mut Background) -> Option<i32> {
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        if let Some(status) = remote.try_status() {
            return status.code();
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("askdesk remote still runs; its output:\n{}", remote.log());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_remote_joins_the_person_group_and_holds_questions_for_phones() {
    let broker = Broker::start();
    let remote = start_remote(&broker);
    let conn = broker.conn().await;
    let status = status_until(&conn, &remote, has_phone).await;
    let phone = &status["answerers"][0];
    assert_eq!(
        (&phone["label"], &phone["group"], &phone["scope"]),
        (&json!("phone"), &json!("person"), &json!("all")),
        "{status}"
    );
    // Said once it registered: the broker may list it a moment before.
    until(
        &remote,
        "askdesk remote never said where it serves",
        || async {
            remote
                .log()
                .contains("serving phones at https://127.0.0.1:")
                .then_some(())
        },
    )
    .await;

    // An ordinary question waits for a phone, held by the remote, until the asker cancels.
    let asked = conn
        .start(
            "user-questions/ask",
            ask(vec![q("a", "Deploy?", &["Yes", "No"])], None),
        )
        .await;
    status_until(&conn, &remote, |s| s["pending"][0]["holder"] == "phone").await;
    conn.cancel(asked).await;
    status_until(&conn, &remote, |s| {
        s["pending"].as_array().is_some_and(Vec::is_empty)
    })
    .await;
}

/// A permission prompt (the agent's meta names a tool) must never be offered to a phone: the
/// remote passes it on at once, to the next answerer, or to nobody (NO_PROVIDER).
#[tokio::test(flavor = "multi_thread")]
async fn a_permission_prompt_is_passed_on_and_never_held_for_phones() {
    let broker = Broker::start();
    let remote = start_remote(&broker);
    let conn = broker.conn().await;
    status_until(&conn, &remote, has_phone).await;
    for tool in [json!("Bash"), json!(""), json!(7)] {
        let agent = conn
            .register_agent(json!({ "id": format!("a-{tool}"), "meta": { "tool": tool } }))
            .await;
        let prompt = ask(
            vec![q("a", "Allow Bash?", &["Allow", "Deny"])],
            Some(&agent),
        );
        expect_question_error(
            conn.call("user-questions/ask", prompt.clone()).await,
            "NO_PROVIDER",
        );

        // With a next answerer after the group, that one gets it.
        let next = broker.conn().await;
        next.register_answerer(json!("all"), false, "next").await;
        let asked = conn.start("user-questions/ask", prompt).await;
        let request = next.next_request().await;
        next.reply(
            &request,
            json!({ "answers": [{ "id": "a", "selected": ["Deny"] }] }),
        )
        .await;
        assert_eq!(
            conn.wait(asked).await.unwrap(),
            json!({ "answers": [{ "id": "a", "selected": ["Deny"] }] })
        );
        next.close();
        status_until(&conn, &remote, |s| {
            s["answerers"].as_array().is_some_and(|a| a.len() == 1)
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_remote_leaves_the_broker_on_sigterm_and_exits_zero() {
    let broker = Broker::start();
    let mut remote = start_remote(&broker);
    let conn = broker.conn().await;
    status_until(&conn, &remote, has_phone).await;
    // SAFETY: kill(2) on our own child, not yet reaped.
    assert_eq!(
        unsafe { libc::kill(remote.pid() as libc::pid_t, libc::SIGTERM) },
        0
    );
    assert_eq!(exit_code(&mut remote).await, Some(0), "{}", remote.log());
    status_until(&conn, &remote, |s| !has_phone(s)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_remote_fails_clearly_when_the_broker_goes_away() {
    let mut broker = Broker::start();
    let mut remote = start_remote(&broker);
    let conn = broker.conn().await;
    status_until(&conn, &remote, has_phone).await;
    broker.signal(libc::SIGTERM);
    broker.wait_exit(PATIENCE).await;
    assert_eq!(exit_code(&mut remote).await, Some(20), "{}", remote.log());
    assert!(
        remote
            .log()
            .contains("Error: the broker closed the connection"),
        "{}",
        remote.log()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_remote_without_a_broker_says_to_start_one() {
    let home = askdesk_e2e::Home::new();
    let output = askdesk_e2e::run_with_timeout(
        &mut home.command(["remote", "--listen", "127.0.0.1:0"]),
        PATIENCE,
    );
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("no askdesk broker is running"),
        "{output:?}"
    );
}

/// Waits until the remote's output has a line containing `marker`, and returns that line.
async fn line_with(remote: &Background, marker: &str) -> String {
    let what = format!("no {marker:?} from askdesk remote");
    until(remote, &what, || async {
        let log = remote.log();
        let line = log.lines().find(|line| line.contains(marker));
        line.map(str::to_owned)
    })
    .await
}

/// `askdesk remote --pair` with a phone paired through it (the URL it prints, the phone's claim,
/// the code typed at the desk), and the phone's socket after its welcome and first snapshot.
async fn paired_phone(broker: &Broker) -> (Background, Phone, Socket) {
    let (remote, mut stdin) =
        broker.spawn_cli_piped(&["remote", "--listen", "127.0.0.1:0", "--pair"]);
    let line = line_with(&remote, "open on the phone within").await;
    let url = line.rsplit(' ').next().unwrap().to_owned();
    let port: u16 = url
        .strip_prefix("https://127.0.0.1:")
        .and_then(|rest| rest.split('/').next())
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("a pairing URL on 127.0.0.1: {line}"));
    let authority = broker.home().data_home().join("askdesk/remote/ca.der");
    let link = Link::trusting(
        ([127, 0, 0, 1], port).into(),
        std::fs::read(&authority).unwrap(),
    );
    let phone = Phone::new("Pixel");
    let token = token_of(&url);
    let (status, body) = link.post_json("/pair", &phone.pair_body(&token)).await;
    assert_eq!(status, 202, "{body}");
    line_with(&remote, "asks to pair").await;
    writeln!(stdin, "{}", phone.code(&token)).unwrap();
    line_with(&remote, "paired \"Pixel\"").await;
    let conn = broker.conn().await;
    status_until(&conn, &remote, has_phone).await;

    let (mut socket, welcome) = phone.connect(&link).await;
    // Served by address only: no passkeys (browsers refuse them there), though the pairing just
    // opened the desk's window for one.
    assert_eq!(
        welcome,
        json!({ "type": "welcome", "device": "Pixel",
                "passkey": { "available": false, "registered": false, "allowed": true } })
    );
    assert_eq!(
        next(&mut socket).await,
        json!({ "type": "requests", "requests": [] })
    );
    (remote, phone, socket)
}

/// The next message must offer a request with `question`; returns the request as sent.
async fn offered(socket: &mut Socket, question: &str) -> Value {
    let message = next(socket).await;
    assert_eq!(message["type"], "request", "{message}");
    assert_eq!(
        message["request"]["questions"][0]["question"], question,
        "{message}"
    );
    message["request"].clone()
}

/// Asks "Deploy?" and returns the ask's id and the request as the phone heard it next.
async fn ask_deploy(asker: &Conn, socket: &mut Socket) -> (u64, Value) {
    let question = ask(vec![q("a", "Deploy?", &["Yes", "No"])], None);
    let asked = asker.start("user-questions/ask", question).await;
    (asked, offered(socket, "Deploy?").await)
}

/// Sends `message` on the phone's socket.
async fn send(socket: &mut Socket, message: &Value) {
    let text = message.to_string();
    socket.send(Message::Text(text.into())).await.unwrap();
}

fn pick(id: &str, label: &str) -> Value {
    json!({ "answers": [{ "id": id, "selected": [label] }] })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paired_phone_hears_an_ask_and_its_signed_answer_reaches_the_asker() {
    let broker = Broker::start();
    let (remote, phone, mut socket) = paired_phone(&broker).await;
    let asker = broker.conn().await;
    let (asked, request) = ask_deploy(&asker, &mut socket).await;
    let answer = phone.answer(&request, &nonce(), pick("a", "No"));
    send(&mut socket, &answer).await;
    assert_eq!(
        next(&mut socket).await,
        json!({ "type": "accepted", "id": request["id"] })
    );
    assert_eq!(asker.wait(asked).await.unwrap(), pick("a", "No"));
    // The phone says "Sent" only now: the broker said it used the answer.
    assert_eq!(
        next(&mut socket).await,
        json!({ "type": "withdrawn", "id": request["id"], "reason": "claimed" })
    );
    assert_eq!(
        next(&mut socket).await,
        json!({ "type": "settled", "id": request["id"], "device": "Pixel", "used": true })
    );
    // The history names the answerer, "phone" (the protocol carries no device name).
    let path = journal_path(broker.home());
    let record = until(&remote, "no answered record in the journal", || async {
        let records = complete_records(&path);
        records.into_iter().find(|r| r["outcome"] == "answered")
    })
    .await;
    assert_eq!(
        (&record["answerer"], &record["answer"]),
        (&json!("phone"), &pick("a", "No")),
        "{record}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_permission_prompt_never_reaches_a_paired_phone() {
    let broker = Broker::start();
    let (_remote, _phone, mut socket) = paired_phone(&broker).await;
    let asker = broker.conn().await;
    let agent = asker
        .register_agent(json!({ "id": "claude", "meta": { "tool": "Bash" } }))
        .await;
    expect_question_error(
        asker
            .call(
                "user-questions/ask",
                ask(
                    vec![q("a", "Allow Bash?", &["Allow", "Deny"])],
                    Some(&agent),
                ),
            )
            .await,
        "NO_PROVIDER",
    );
    // The phone's next message is the ordinary question asked after: the prompt came before it.
    let (asked, _) = ask_deploy(&asker, &mut socket).await;
    asker.cancel(asked).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_asker_cancelling_withdraws_the_request_from_the_phone() {
    let broker = Broker::start();
    let (_remote, _phone, mut socket) = paired_phone(&broker).await;
    let asker = broker.conn().await;
    let (asked, request) = ask_deploy(&asker, &mut socket).await;
    asker.cancel(asked).await;
    assert_eq!(
        next(&mut socket).await,
        json!({ "type": "withdrawn", "id": request["id"], "reason": "withdrawn" })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_asker_going_withdraws_the_request_saying_the_agent_went() {
    let broker = Broker::start();
    let (_remote, _phone, mut socket) = paired_phone(&broker).await;
    let asker = broker.conn().await;
    let (_, request) = ask_deploy(&asker, &mut socket).await;
    drop(asker);
    assert_eq!(
        next(&mut socket).await,
        json!({ "type": "withdrawn", "id": request["id"], "reason": "agent-gone" })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_desk_answering_first_wins_and_the_phone_hears_the_request_gone() {
    let broker = Broker::start();
    let (_remote, phone, mut socket) = paired_phone(&broker).await;
    let desk = broker.conn().await;
    desk.call(
        "answerers/register",
        json!({ "scope": "all", "label": "desk", "group": "person" }),
    )
    .await
    .unwrap();
    let asker = broker.conn().await;
    let (asked, request) = ask_deploy(&asker, &mut socket).await;
    let at_desk = desk.next_request().await;
    desk.reply(&at_desk, pick("a", "Yes")).await;
    assert_eq!(asker.wait(asked).await.unwrap(), pick("a", "Yes"));
    assert_eq!(
        next(&mut socket).await,
        json!({ "type": "withdrawn", "id": request["id"], "reason": "answered-elsewhere" })
    );
    // Too late: the phone's answer is refused.
    let late = phone.answer(&request, &nonce(), pick("a", "No"));
    send(&mut socket, &late).await;
    let refused = next(&mut socket).await;
    assert_eq!(
        (&refused["type"], &refused["reason"]),
        (&json!("refused"), &json!("not-pending")),
        "{refused}"
    );
}
