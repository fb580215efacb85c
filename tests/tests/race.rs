//! Race groups over sockets (docs/protocol.md, section 4.1): `initialize` says the broker knows
//! them, `answerers/register` checks the group's name, status shows it; two members answering at
//! the same moment a thousand times settle each ask once, the loser hears `$/cancelRequest` with
//! the reason and the winner, the winner `askdesk/settled` (section 4.2), and the journal agrees
//! with what the asker received; a pass, a member leaving, the asker cancelling, and a group that
//! passes on to the next link.

use askdesk_e2e::journal::{complete_records, journal_path};
use askdesk_e2e::{expect_question_error, expect_rpc_error, q, Broker, Conn, PATIENCE};
use serde_json::{json, Value};

async fn member(broker: &Broker, label: &str, prepend: bool) -> Conn {
    let conn = broker.conn().await;
    conn.call(
        "answerers/register",
        json!({ "scope": "all", "prepend": prepend, "label": label, "group": "person" }),
    )
    .await
    .unwrap_or_else(|e| panic!("{label} joins the group: {e:?}"));
    conn
}

fn choose(id: &str, label: &str) -> Value {
    json!({ "answers": [{ "id": id, "selected": [label] }] })
}

async fn ask_one(asker: &Conn, id: &str) -> u64 {
    asker
        .start(
            "user-questions/ask",
            json!({ "questions": [q(id, "Deploy?", &["Yes", "No"])] }),
        )
        .await
}

/// Asks question `id` and returns the ask's id with the request as `desk` and `phone` hold it.
async fn race(asker: &Conn, desk: &Conn, phone: &Conn, id: &str) -> (u64, Value, Value) {
    let ask = ask_one(asker, id).await;
    let (at_desk, on_phone) = tokio::join!(desk.next_request(), phone.next_request());
    (ask, at_desk, on_phone)
}

/// The next thing `conn` hears must be `$/cancelRequest` for `request`, with `reason` and `by`
/// (`Value::Null` where the broker names nobody).
async fn expect_cancel(conn: &Conn, request: &Value, reason: &str, by: Value) {
    let message = conn.next_incoming().await;
    let mut params = json!({ "id": request["id"], "reason": reason });
    if !by.is_null() {
        params["by"] = by;
    }
    assert_eq!(
        message,
        json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": params }),
        "expected $/cancelRequest for {request}"
    );
}

/// The next thing `conn` hears must be `askdesk/settled` for `request`: its reply was used.
async fn expect_settled(conn: &Conn, request: &Value) {
    let message = conn.next_incoming().await;
    assert_eq!(
        message,
        json!({ "jsonrpc": "2.0", "method": "askdesk/settled", "params": { "id": request["id"] } }),
        "expected askdesk/settled for {request}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_broker_says_it_knows_groups_checks_their_names_and_shows_them() {
    let broker = Broker::start();
    let conn = broker.conn_uninit().await;
    let result = conn.initialize("t").await;
    assert_eq!(
        result["capabilities"],
        json!({ "answererGroups": true, "outcomes": true })
    );

    for bad in [
        json!(""),
        json!("two words"),
        json!("x".repeat(65)),
        json!(7),
    ] {
        let error = expect_rpc_error(
            conn.call(
                "answerers/register",
                json!({ "scope": "all", "group": bad }),
            )
            .await,
            -32602,
        );
        assert!(
            error.message.starts_with("group: "),
            "{bad}: {}",
            error.message
        );
    }
    let error = expect_rpc_error(
        conn.call("answerers/register", json!({ "scope": "all", "group": "" }))
            .await,
        -32602,
    );
    assert_eq!(
        error.message,
        "group: expected a name of 1 to 64 letters, digits, '-', '_' or '.' (ASCII)"
    );

    let _desk = member(&broker, "desk", false).await;
    conn.register_answerer(json!("all"), false, "solo").await;
    let status = conn.call("askdesk/status", json!({})).await.unwrap();
    assert_eq!(status["answerers"][0]["group"], "person", "{status}");
    assert!(
        status["answerers"][1].get("group").is_none(),
        "no group, no field: {status}"
    );
}

/// Two socket members answer every request at once, a thousand times. Each ask settles once with
/// one member's answer; that member hears `askdesk/settled`, the other `$/cancelRequest` naming
/// the winner; the
/// journal has one `answered` record signed by the winner with the answer the asker got, and the
/// loser's answer as a late answer.
#[tokio::test(flavor = "multi_thread")]
async fn a_thousand_races_of_simultaneous_answers_settle_once_and_the_journal_agrees() {
    const RACES: usize = 1000;
    let broker = Broker::start();
    let desk = member(&broker, "desk", false).await;
    let phone = member(&broker, "phone", false).await;
    let asker = broker.conn().await;
    let mut received = Vec::with_capacity(RACES);
    for n in 0..RACES {
        let id = format!("r{n}");
        // Both hold the request before either answers; then both answer together.
        let (ask, at_desk, on_phone) = race(&asker, &desk, &phone, &id).await;
        tokio::join!(
            desk.reply(&at_desk, choose(&id, "Yes")),
            phone.reply(&on_phone, choose(&id, "No"))
        );
        let answer = asker.wait(ask).await.expect("the race settles");
        let (winner, loser) = match answer["answers"][0]["selected"][0].as_str() {
            Some("Yes") => ((&desk, &at_desk, "desk"), (&phone, &on_phone)),
            Some("No") => ((&phone, &on_phone, "phone"), (&desk, &at_desk)),
            other => panic!("an answer from neither member: {other:?}"),
        };
        // Each hears exactly one word (the next line is the next request, checked by
        // `next_request` in the next round).
        expect_settled(winner.0, winner.1).await;
        expect_cancel(loser.0, loser.1, "answered-elsewhere", json!(winner.2)).await;
        received.push(answer);
    }
    // One more, answered by the desk alone, so the winner of the last race is checked too.
    let (ask, at_desk, on_phone) = race(&asker, &desk, &phone, "last").await;
    phone.reply(&on_phone, Value::Null).await;
    desk.reply(&at_desk, choose("last", "Yes")).await;
    asker.wait(ask).await.unwrap();
    expect_settled(&desk, &at_desk).await;

    // One answer and one late answer per race, and the last ask's answer.
    const EXPECTED: usize = 2 * RACES + 1;
    let path = journal_path(broker.home());
    let deadline = std::time::Instant::now() + PATIENCE;
    let records = loop {
        let records = complete_records(&path);
        if records.len() >= EXPECTED || std::time::Instant::now() > deadline {
            break records;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(
        records.len(),
        EXPECTED,
        "one answer and one late answer per race"
    );
    for (n, answer) in received.iter().enumerate() {
        let id = format!("r{n}");
        let of_race: Vec<&Value> = records
            .iter()
            .filter(|r| r["questions"][0]["id"] == id.as_str())
            .collect();
        let answered: Vec<&&Value> = of_race
            .iter()
            .filter(|r| r["outcome"] == "answered")
            .collect();
        let late: Vec<&&Value> = of_race
            .iter()
            .filter(|r| r["outcome"] == "late-answer")
            .collect();
        assert_eq!(
            (answered.len(), late.len()),
            (1, 1),
            "race {n}: {of_race:?}"
        );
        assert_eq!(
            &answered[0]["answer"], answer,
            "race {n}: the journal agrees"
        );
        let winner = if answer["answers"][0]["selected"][0] == "Yes" {
            ("desk", "phone")
        } else {
            ("phone", "desk")
        };
        assert_eq!(answered[0]["answerer"], winner.0, "race {n}");
        assert_eq!(late[0]["answerer"], winner.1, "race {n}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pass_leaves_the_other_racing_and_a_group_that_passes_moves_on() {
    let broker = Broker::start();
    let desk = member(&broker, "desk", false).await;
    let phone = member(&broker, "phone", false).await;
    let next = broker.conn().await;
    next.register_answerer(json!("all"), false, "next").await;
    let asker = broker.conn().await;

    let (ask, at_desk, on_phone) = race(&asker, &desk, &phone, "a").await;
    phone.reply(&on_phone, Value::Null).await;
    // The broker has read the pass when only the desk holds the request.
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let status = asker.call("askdesk/status", json!({})).await.unwrap();
        if status["pending"][0]["holder"] == "desk" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still racing: {status}"
        );
        tokio::task::yield_now().await;
    }
    desk.reply(&at_desk, choose("a", "Yes")).await;
    assert_eq!(asker.wait(ask).await.unwrap(), choose("a", "Yes"));
    expect_settled(&desk, &at_desk).await;

    let (ask, at_desk, on_phone) = race(&asker, &desk, &phone, "b").await;
    phone.reply(&on_phone, Value::Null).await;
    desk.reply(&at_desk, Value::Null).await;
    let request = next.next_request().await;
    next.reply(&request, choose("b", "No")).await;
    assert_eq!(asker.wait(ask).await.unwrap(), choose("b", "No"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_member_that_disconnects_mid_race_leaves_the_other_racing() {
    let broker = Broker::start();
    let desk = member(&broker, "desk", false).await;
    let phone = member(&broker, "phone", false).await;
    let asker = broker.conn().await;
    let (ask, at_desk, _on_phone) = race(&asker, &desk, &phone, "a").await;
    phone.close();
    // The broker learns of the close on its own time; the desk's answer settles either way.
    desk.reply(&at_desk, choose("a", "No")).await;
    assert_eq!(asker.wait(ask).await.unwrap(), choose("a", "No"));
    expect_settled(&desk, &at_desk).await;

    // With the only member left gone too, nobody claims it.
    let ask = ask_one(&asker, "b").await;
    desk.next_request().await;
    desk.close();
    expect_question_error(asker.wait(ask).await, "NO_PROVIDER");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_asker_cancelling_mid_race_cancels_every_member() {
    let broker = Broker::start();
    let desk = member(&broker, "desk", false).await;
    let phone = member(&broker, "phone", false).await;
    let asker = broker.conn().await;
    let (ask, at_desk, on_phone) = race(&asker, &desk, &phone, "a").await;
    asker.cancel(ask).await;
    expect_question_error(asker.wait(ask).await, "ASK_ABORTED");
    expect_cancel(&desk, &at_desk, "withdrawn", Value::Null).await;
    expect_cancel(&phone, &on_phone, "withdrawn", Value::Null).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prepended_member_joins_its_group_where_the_oldest_member_stands() {
    let broker = Broker::start();
    let first = broker.conn().await;
    first.register_answerer(json!("all"), false, "first").await;
    let desk = member(&broker, "desk", false).await;
    let phone = member(&broker, "phone", true).await;
    let rules = broker.conn().await;
    rules.register_answerer(json!("all"), true, "rules").await;
    let status = rules.call("askdesk/status", json!({})).await.unwrap();
    let chain: Vec<(&str, Option<&str>)> = status["answerers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["label"].as_str().unwrap(), a["group"].as_str()))
        .collect();
    assert_eq!(
        chain,
        [
            ("rules", None),
            ("first", None),
            ("desk", Some("person")),
            ("phone", Some("person"))
        ]
    );

    let asker = broker.conn().await;
    let ask = ask_one(&asker, "a").await;
    for conn in [&rules, &first] {
        let request = conn.next_request().await;
        conn.reply(&request, Value::Null).await;
    }
    let (at_desk, on_phone) = tokio::join!(desk.next_request(), phone.next_request());
    desk.reply(&at_desk, choose("a", "Yes")).await;
    assert_eq!(asker.wait(ask).await.unwrap(), choose("a", "Yes"));
    expect_cancel(&phone, &on_phone, "answered-elsewhere", json!("desk")).await;
}
