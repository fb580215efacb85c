//! A race group of one in-process member (as the desktop's dialog is) and one socket member (as a
//! phone bridge is), through a real broker with a journal: both answer every request at once, a
//! thousand times; each ask settles once, the loser is told (`withdraw` with the winner's label,
//! or `$/cancelRequest` with the reason and the winner), the socket member that won is told
//! (`askdesk/settled`), and the journal agrees with what the asker received.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use askdesk_broker::client::Client;
use askdesk_broker::ServerConfig;
use askdesk_core::testing::{ask, choose, member, question};
use askdesk_core::{
    decision_channel, Answer, Answerer, Config, Decision, Offer, Request, RequestId, Service,
    Withdrawal,
};
use askdesk_journal::{Journal, Outcome, Record};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio_util::sync::CancellationToken;

const RACES: usize = 1000;
const PATIENCE: Duration = Duration::from_secs(30);

/// An in-process member that answers "Yes" the moment it is offered a request, from a task of
/// its own, and records how each request was taken from it. An answer that comes back late it
/// journals itself, as the desktop's answerer does.
struct Desk {
    journal: Journal,
    withdrawn: Mutex<Vec<(RequestId, Withdrawal)>>,
}

impl Answerer for Desk {
    fn offer(&self, request: &Arc<Request>) -> Offer {
        let (responder, receiver) = decision_channel();
        let answer = choose(&request.questions[0].id, "Yes");
        let (request, journal) = (request.clone(), self.journal.clone());
        tokio::spawn(async move {
            if let Err(Decision::Claim(late)) = responder.decide(Decision::Claim(answer)) {
                let record = Record::late_answer(&request, late, Some("desk".into()));
                journal.submit(record).await.unwrap();
            }
        });
        Offer::Later(receiver)
    }

    fn withdraw(&self, request: RequestId, reason: Withdrawal) -> Option<Answer> {
        self.withdrawn.lock().unwrap().push((request, reason));
        None
    }
}

/// A socket member speaking the wire by hand: it answers "No" to each request as soon as it reads
/// it, and records what the broker told it of each, by question: `cancel <reason> <by>` for a
/// `$/cancelRequest`, `settled` for an `askdesk/settled`.
async fn phone(socket: &std::path::Path, told: Arc<Mutex<Vec<(String, String)>>>) {
    let stream = UnixStream::connect(socket)
        .await
        .expect("connect the phone");
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    for (id, method, params) in [
        (
            1,
            "initialize",
            json!({ "protocolVersion": 1, "client": { "name": "phone" } }),
        ),
        (
            2,
            "answerers/register",
            json!({ "scope": "all", "label": "phone", "group": "person" }),
        ),
    ] {
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        let reply: Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert!(reply.get("result").is_some(), "{method}: {reply}");
    }
    let mut questions: HashMap<String, String> = HashMap::new();
    while let Ok(Some(line)) = lines.next_line().await {
        let message: Value = serde_json::from_str(&line).unwrap();
        match message["method"].as_str() {
            Some("user-questions/request") => {
                let question = message["params"]["questions"][0]["id"].as_str().unwrap();
                questions.insert(message["id"].to_string(), question.to_owned());
                let answer = choose(question, "No");
                let reply = json!({ "jsonrpc": "2.0", "id": message["id"], "result": answer });
                write
                    .write_all(format!("{reply}\n").as_bytes())
                    .await
                    .unwrap();
            }
            Some("$/cancelRequest") => {
                let params = &message["params"];
                let question = &questions[&params["id"].to_string()];
                let word = format!("cancel {} {}", params["reason"], params["by"]);
                told.lock().unwrap().push((question.clone(), word));
            }
            Some("askdesk/settled") => {
                let question = &questions[&message["params"]["id"].to_string()];
                told.lock()
                    .unwrap()
                    .push((question.clone(), "settled".into()));
            }
            _ => panic!("the phone did not expect {line}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_races_of_an_in_process_and_a_socket_member_settle_once() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("run").join("askdesk.sock");
    let journal = Journal::open(&dir.path().join("data")).unwrap();
    let service = Service::new(Config::default());
    let desk = Arc::new(Desk {
        journal: journal.clone(),
        withdrawn: Mutex::default(),
    });
    service
        .register_answerer(member("desk", Some("person")), desk.clone())
        .unwrap();
    let shutdown = CancellationToken::new();
    let listener = askdesk_broker::bind(&socket).unwrap();
    let config = ServerConfig {
        journal: Some(journal.clone()),
        ..ServerConfig::default()
    };
    let broker = tokio::spawn(askdesk_broker::run(
        listener,
        service.clone(),
        config,
        shutdown.clone(),
    ));
    let told = Arc::new(Mutex::new(Vec::new()));
    tokio::spawn({
        let (socket, told) = (socket.clone(), told.clone());
        async move { phone(&socket, told).await }
    });
    while service.answerers().len() < 2 {
        tokio::task::yield_now().await;
    }

    let asker = Client::connect(&socket, "asker").await.unwrap();
    let mut won_by = Vec::with_capacity(RACES);
    for n in 0..RACES {
        let id = format!("r{n}");
        let request = ask(vec![question(&id, "Deploy?", &["Yes", "No"])]);
        let answer = asker
            .ask(&request, &CancellationToken::new())
            .await
            .expect("the race settles");
        won_by.push(if answer == choose(&id, "Yes") {
            "desk"
        } else {
            assert_eq!(answer, choose(&id, "No"));
            "phone"
        });
    }

    // Every record is on disk, late answers included (they are committed after the asker's).
    let deadline = Instant::now() + PATIENCE;
    let records = loop {
        let records = journal.read().unwrap();
        // And the phone has read what it was told of every race.
        let heard = told.lock().unwrap().len();
        if records.len() >= 2 * RACES && heard >= RACES || Instant::now() > deadline {
            break records;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        records.len(),
        2 * RACES,
        "one answer and one late answer per race"
    );
    let desk_lost: Vec<(RequestId, Withdrawal)> = desk.withdrawn.lock().unwrap().clone();
    let phone_told = told.lock().unwrap().clone();
    for (n, winner) in won_by.iter().enumerate() {
        let id = format!("r{n}");
        let of_race: Vec<_> = records.iter().filter(|r| r.questions[0].id == id).collect();
        let answered: Vec<_> = of_race
            .iter()
            .filter(|r| r.outcome == Outcome::Answered)
            .collect();
        let late: Vec<_> = of_race
            .iter()
            .filter(|r| r.outcome == Outcome::LateAnswer)
            .collect();
        assert_eq!(
            (answered.len(), late.len()),
            (1, 1),
            "race {n}: {of_race:?}"
        );
        let (loser, answer) = match *winner {
            "desk" => ("phone", choose(&id, "Yes")),
            _ => ("desk", choose(&id, "No")),
        };
        assert_eq!(answered[0].answer.as_ref(), Some(&answer), "race {n}");
        assert_eq!(answered[0].answerer.as_deref(), Some(*winner), "race {n}");
        assert_eq!(late[0].answerer.as_deref(), Some(loser), "race {n}");
        // The phone was told what became of its answer, exactly once: used, or who won.
        let phone_told: Vec<&str> = phone_told
            .iter()
            .filter(|(q, _)| *q == id)
            .map(|(_, word)| word.as_str())
            .collect();
        let expected = match loser {
            "phone" => r#"cancel "answered-elsewhere" "desk""#,
            _ => "settled",
        };
        assert_eq!(phone_told, [expected], "race {n}");
    }
    let by_phone = won_by.iter().filter(|w| **w == "phone").count();
    assert_eq!(
        desk_lost.len(),
        by_phone,
        "the desk is withdrawn exactly when it lost"
    );
    assert!(desk_lost
        .iter()
        .all(|(_, reason)| *reason == Withdrawal::AnsweredElsewhere { by: "phone".into() }));
    shutdown.cancel();
    broker.await.unwrap();
}
