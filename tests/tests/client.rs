//! The Rust client library (`askdesk_broker::client`) against the real broker binary: connect,
//! ask, answer, cancel, agents, and its error mapping.

use std::time::Duration;

use askdesk_broker::client::{Client, ClientError};
use askdesk_broker::protocol::methods::{AgentList, AgentsList, Empty};
use askdesk_core::{
    AgentRegistration, AgentSummary, Answer, AnswerItem, AskRequest, Question, QuestionOption,
    Scope,
};
use askdesk_e2e::{Broker, Home};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn question(id: &str, labels: &[&str]) -> Question {
    serde_json::from_value(json!({
        "id": id,
        "question": "Proceed?",
        "options": labels.iter().map(|l| json!({ "label": l })).collect::<Vec<_>>(),
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn connecting_without_a_broker_is_not_running() {
    let home = Home::new();
    match Client::connect(home.socket(), "e2e").await {
        Err(ClientError::NotRunning { path }) => assert_eq!(path, home.socket()),
        Err(other) => panic!("expected NotRunning, got {other:?}"),
        Ok(_) => panic!("connected to nothing"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ask_and_answer_through_the_client_library() {
    let broker = Broker::start();
    let answerer = Client::connect(broker.socket(), "e2e-answerer")
        .await
        .unwrap();
    let (id, mut incoming) = answerer
        .register_answerer(Scope::Agents, false, Some("library"))
        .await
        .unwrap();
    assert!(!id.is_empty());
    let asker = Client::connect(broker.socket(), "e2e-asker").await.unwrap();
    let handle = asker
        .register_agent(&AgentRegistration {
            id: "lib-agent".into(),
            label: Some("Library".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let request = AskRequest {
        questions: vec![question("q", &["Yes", "No"])],
        agent: Some(handle.clone()),
    };
    let asking = tokio::spawn({
        let asker = asker.clone();
        async move { asker.ask(&request, &CancellationToken::new()).await }
    });
    let incoming_request = tokio::time::timeout(askdesk_e2e::PATIENCE, incoming.next())
        .await
        .unwrap()
        .unwrap();
    let params = &incoming_request.params;
    assert_eq!(
        params.questions[0].options,
        vec![
            QuestionOption {
                label: "Yes".into(),
                ..Default::default()
            },
            QuestionOption {
                label: "No".into(),
                ..Default::default()
            }
        ]
    );
    assert_eq!(
        params.agent.as_ref().map(|a| a.id.as_str()),
        Some("lib-agent")
    );
    assert_eq!(
        params.agent.as_ref().and_then(|a| a.label.as_deref()),
        Some("Library")
    );
    let answer = Answer {
        answers: vec![AnswerItem {
            id: "q".into(),
            selected: vec!["No".into()],
            ..Default::default()
        }],
    };
    incoming_request.reply(Ok(Some(answer.clone()))).await;
    assert_eq!(asking.await.unwrap().unwrap(), answer);

    let list = asker.call::<AgentsList>(&Empty {}).await.unwrap();
    assert_eq!(
        list,
        AgentList {
            agents: vec![AgentSummary {
                id: "lib-agent".into(),
                owner: None,
                root: true,
                label: Some("Library".into()),
                meta: None,
            }]
        }
    );
    asker.unregister_agent(&handle).await.unwrap();
    assert_eq!(
        asker.call::<AgentsList>(&Empty {}).await.unwrap(),
        AgentList { agents: vec![] }
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn domain_errors_carry_their_code() {
    let broker = Broker::start();
    let client = Client::connect(broker.socket(), "e2e").await.unwrap();
    let error = client
        .ask(
            &AskRequest {
                questions: vec![question("q", &["Yes"])],
                agent: None,
            },
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.question_code(), Some("NO_PROVIDER"), "{error:?}");
    assert_eq!(
        error.to_string(),
        "no user-questions answerer accepted the request"
    );
    let error = client
        .ask(
            &AskRequest {
                questions: vec![],
                agent: None,
            },
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.question_code(), Some("EMPTY_QUESTIONS"), "{error:?}");
    client
        .register_agent(&AgentRegistration {
            id: "x".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    match client
        .register_agent(&AgentRegistration {
            id: "x".into(),
            ..Default::default()
        })
        .await
    {
        Err(ClientError::Rpc(rpc)) => {
            assert_eq!(rpc.code, -32003);
            assert_eq!(rpc.data_code(), Some("AGENT_ID_TAKEN"));
        }
        other => panic!("expected AGENT_ID_TAKEN, got {other:?}"),
    }
}

/// An ask of question `q` from a new connection, waiting at an answerer that holds it.
struct Held {
    /// Kept open: the request it holds lives on its connection.
    _answerer: Client,
    asker: Client,
    asking: tokio::task::JoinHandle<Result<Answer, ClientError>>,
    request: askdesk_broker::client::IncomingRequest,
}

async fn ask_held(broker: &Broker, cancel: &CancellationToken) -> Held {
    let answerer = Client::connect(broker.socket(), "e2e-answerer")
        .await
        .unwrap();
    let (_, mut incoming) = answerer
        .register_answerer(Scope::All, false, Some("holder"))
        .await
        .unwrap();
    let asker = Client::connect(broker.socket(), "e2e-asker").await.unwrap();
    let asking = tokio::spawn({
        let (asker, cancel) = (asker.clone(), cancel.clone());
        async move {
            let request = AskRequest {
                questions: vec![question("q", &["Yes"])],
                agent: None,
            };
            asker.ask(&request, &cancel).await
        }
    });
    let request = tokio::time::timeout(askdesk_e2e::PATIENCE, incoming.next())
        .await
        .unwrap()
        .unwrap();
    Held {
        _answerer: answerer,
        asker,
        asking,
        request,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_an_ask_withdraws_it_at_the_answerer() {
    let broker = Broker::start();
    let cancel = CancellationToken::new();
    let Held {
        _answerer,
        asker,
        asking,
        request: held,
    } = ask_held(&broker, &cancel).await;
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(5), asking)
        .await
        .expect("the ask settles promptly")
        .unwrap();
    let error = result.expect_err("a cancelled ask fails");
    assert_eq!(error.question_code(), Some("ASK_ABORTED"), "{error:?}");
    tokio::time::timeout(askdesk_e2e::PATIENCE, held.cancelled.cancelled())
        .await
        .expect("the answerer is told");
    // The connection is still usable afterwards.
    asker.ping().await.unwrap();
}

/// A request longer than a broker takes would make it close the connection, failing every other
/// request on it (an MCP session's asks share one): the client refuses that one alone, unsent.
#[tokio::test(flavor = "multi_thread")]
async fn a_request_over_the_message_limit_is_refused_unsent_and_the_others_go_on() {
    let broker = Broker::start();
    let Held {
        _answerer,
        asker,
        asking,
        request: held,
    } = ask_held(&broker, &CancellationToken::new()).await;
    let mut huge = question("big", &["Yes"]);
    huge.detail = Some("x".repeat(5 * 1024 * 1024));
    let request = AskRequest {
        questions: vec![huge],
        agent: None,
    };
    let error = asker
        .ask(&request, &CancellationToken::new())
        .await
        .expect_err("over the limit");
    let ClientError::Rpc(rpc) = &error else {
        panic!("expected a limit error, got {error:?}")
    };
    assert_eq!(rpc.data_code(), Some("LIMIT"), "{error}");
    assert!(
        error
            .to_string()
            .contains("over the 4194304 a message may have; it was not sent"),
        "{error}"
    );
    // The held ask was neither withdrawn nor failed: it is answered as usual.
    assert!(!held.cancelled.is_cancelled());
    held.reply(Ok(Some(Answer {
        answers: vec![AnswerItem {
            id: "q".into(),
            selected: vec!["Yes".into()],
            ..Default::default()
        }],
    })))
    .await;
    let answer = tokio::time::timeout(askdesk_e2e::PATIENCE, asking)
        .await
        .unwrap()
        .unwrap()
        .expect("answered");
    assert_eq!(answer.answers[0].selected, ["Yes"]);
}

/// A broker at its connection limit refuses at once, often before the client's `initialize` is
/// even waiting for a reply: the client still reports the refusal, never a bare closed connection.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_connection_reports_the_limit_whenever_the_refusal_arrives() {
    let broker = Broker::start_with(&["--max-connections", "1"]);
    let _holder = broker.admitted_conn().await;
    for attempt in 0..30 {
        match Client::connect(broker.socket(), "e2e").await {
            Err(ClientError::Rpc(error)) => {
                assert_eq!(
                    error.data_code(),
                    Some("LIMIT"),
                    "attempt {attempt}: {error:?}"
                )
            }
            Err(other) => panic!("attempt {attempt}: expected the limit error, got {other:?}"),
            Ok(_) => panic!("attempt {attempt}: admitted past the limit"),
        }
    }
}
