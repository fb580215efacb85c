//! Thousands of simultaneous asks on a multi-thread runtime: each settles exactly once, with the
//! answer to its own request, and nothing is left pending.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use askdesk_core::{
    decision_channel, AgentRegistration, Answer, AnswerItem, Answerer, Config, Decision, Offer,
    Request, Scope, Service,
};
use common::*;
use tokio_util::sync::CancellationToken;

const ASKS: usize = 5000;
const AGENTS: usize = 8;

/// The answer that echoes what is specific to one request: its question id and its agent.
fn echo(request: &Request) -> Answer {
    let agent = request.agent.as_ref().map_or("-", |a| a.id.as_str());
    Answer {
        answers: request
            .questions
            .iter()
            .map(|q| AnswerItem {
                id: q.id.clone(),
                custom: Some(format!("{}|{agent}", q.id)),
                ..Default::default()
            })
            .collect(),
    }
}

/// Delegates every request, in four ways in turn: at once, from another task, by dropping the
/// responder on another task, and through a responder decided before the offer returns.
struct Flaky {
    offers: AtomicUsize,
}

impl Answerer for Flaky {
    fn offer(&self, _: &Arc<Request>) -> Offer {
        match self.offers.fetch_add(1, Ordering::Relaxed) % 4 {
            0 => Offer::Now(Decision::Delegate),
            1 => {
                let (responder, receiver) = decision_channel();
                tokio::spawn(async move {
                    tokio::task::yield_now().await;
                    responder.decide(Decision::Delegate).unwrap();
                });
                Offer::Later(receiver)
            }
            2 => {
                // Dropping the responder on another task delegates too.
                let (responder, receiver) = decision_channel();
                tokio::spawn(async move { drop(responder) });
                Offer::Later(receiver)
            }
            _ => {
                // Decided before the offer even returns.
                let (responder, receiver) = decision_channel();
                responder.decide(Decision::Delegate).unwrap();
                Offer::Later(receiver)
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thousands_of_simultaneous_asks_each_get_their_own_answer() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let agents: Vec<_> = (0..AGENTS)
        .map(|i| {
            service
                .register_agent(AgentRegistration {
                    id: format!("agent-{i}"),
                    ..Default::default()
                })
                .unwrap()
        })
        .collect();
    let registration = member("flaky", None);
    service
        .register_answerer(
            registration,
            Arc::new(Flaky {
                offers: AtomicUsize::new(0),
            }),
        )
        .unwrap();
    let (_, mut echoer) = register(&service, "echo", Script::Hold, Scope::All, false, &log);

    let mut asks = Vec::with_capacity(ASKS);
    for i in 0..ASKS {
        let agent = if i % 3 == 0 {
            None
        } else {
            Some(&agents[i % AGENTS])
        };
        let questions = vec![question(&format!("q{i}")), question(&format!("extra-{i}"))];
        let ask = service.ask(ask_request(questions, agent), &CancellationToken::new());
        let expected_agent = agent.map_or("-".to_owned(), |h| h.id.clone());
        asks.push(tokio::spawn(async move { (i, expected_agent, ask.await) }));
    }

    // Every request reaches the echoing answerer and is held there at the same time.
    let mut held = Vec::with_capacity(ASKS);
    for _ in 0..ASKS {
        held.push(echoer.next().await);
    }
    assert_eq!(service.pending().len(), ASKS, "all asks pending at once");
    assert!(service
        .pending()
        .iter()
        .all(|p| p.holder.as_deref() == Some("echo")));

    // Answer them from many tasks at once, in an order unrelated to the asking order.
    held.reverse();
    let decided = Arc::new(AtomicUsize::new(0));
    let mut answering = Vec::new();
    let mut held = held.into_iter();
    loop {
        let batch: Vec<_> = held.by_ref().take(97).collect();
        if batch.is_empty() {
            break;
        }
        let decided = decided.clone();
        answering.push(tokio::spawn(async move {
            for h in batch {
                tokio::task::yield_now().await;
                let answer = echo(&h.request);
                h.responder
                    .decide(Decision::Claim(answer))
                    .expect("decided before the request settled");
                decided.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for task in answering {
        task.await.unwrap();
    }
    assert_eq!(decided.load(Ordering::Relaxed), ASKS);

    let mut settled = vec![0u32; ASKS];
    for ask in asks {
        let (i, agent, result) = ask.await.unwrap();
        let answer = result.unwrap_or_else(|e| panic!("ask {i}: {e:?}"));
        let expected = Answer {
            answers: vec![
                AnswerItem {
                    id: format!("q{i}"),
                    custom: Some(format!("q{i}|{agent}")),
                    ..Default::default()
                },
                AnswerItem {
                    id: format!("extra-{i}"),
                    custom: Some(format!("extra-{i}|{agent}")),
                    ..Default::default()
                },
            ],
        };
        assert_eq!(answer, expected, "ask {i} got someone else's answer");
        settled[i] += 1;
    }
    assert!(settled.iter().all(|&n| n == 1));
    assert_eq!(
        log.offered().len(),
        ASKS,
        "each request offered to the echo once"
    );
    assert!(log.withdrawn().is_empty());
    assert!(service.pending().is_empty());
}
