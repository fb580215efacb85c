//! The answerer waterfall (protocol section 4 and the "after dispatch" rules of section 2): chain
//! order, scopes, delegation, the snapshot at dispatch, answerers leaving mid-request, late
//! answers, cancellation, shutdown, and dropping an ask. Timing uses paused tokio time.

mod common;

use askdesk_core::{
    AgentRegistration, Answer, AnswerItem, AskError, Config, Decision, Handle, RequestId, Scope,
    Service,
};
use common::*;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

fn root(service: &Service, id: &str) -> Handle {
    service
        .register_agent(AgentRegistration {
            id: id.into(),
            ..Default::default()
        })
        .unwrap()
}

fn custom(id: &str, text: &str) -> Answer {
    Answer {
        answers: vec![AnswerItem {
            id: id.into(),
            custom: Some(text.into()),
            ..Default::default()
        }],
    }
}

#[tokio::test]
async fn prepended_answerers_come_first_newest_first() {
    let service = Service::new(Config::default());
    let log = Log::default();
    for (name, prepend) in [
        ("a", false),
        ("b", true),
        ("c", false),
        ("d", true),
        ("e", true),
        ("f", false),
    ] {
        register(&service, name, Script::Delegate, Scope::All, prepend, &log);
    }
    let chain = service.answerers();
    let shape: Vec<(&str, bool)> = chain
        .iter()
        .map(|a| (a.label.as_str(), a.prepend))
        .collect();
    assert_eq!(
        shape,
        [
            ("e", true),
            ("d", true),
            ("b", true),
            ("a", false),
            ("c", false),
            ("f", false)
        ]
    );
    assert!(chain.iter().all(|a| a.scope == "all"));

    let result = service
        .ask(
            ask_request(vec![question("q")], None),
            &CancellationToken::new(),
        )
        .await;
    assert_question_error(result, "NO_PROVIDER", NO_PROVIDER);
    assert_eq!(log.take_offered(), ["e", "d", "b", "a", "c", "f"]);

    // Removing one keeps the others' order.
    let d = chain[1].answerer;
    assert!(service.unregister_answerer(d));
    assert!(!service.unregister_answerer(d), "already gone");
    service
        .ask(
            ask_request(vec![question("q")], None),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(log.take_offered(), ["e", "b", "a", "c", "f"]);
}

#[tokio::test]
async fn scopes_filter_what_each_answerer_is_offered() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let a = root(&service, "a");
    let b = root(&service, "b");
    register(&service, "all-1", Script::Delegate, Scope::All, false, &log);
    register(
        &service,
        "agents",
        Script::Delegate,
        Scope::Agents,
        false,
        &log,
    );
    register(
        &service,
        "only-a",
        Script::Delegate,
        Scope::Agent(a.clone()),
        false,
        &log,
    );
    register(
        &service,
        "only-b",
        Script::Delegate,
        Scope::Agent(b.clone()),
        true,
        &log,
    );
    register(&service, "all-2", Script::Delegate, Scope::All, false, &log);
    let scopes: Vec<String> = service.answerers().into_iter().map(|a| a.scope).collect();
    assert_eq!(scopes, ["agent:b", "all", "agents", "agent:a", "all"]);

    let cases: [(Option<&Handle>, &[&str]); 3] = [
        (None, &["all-1", "all-2"]),
        (Some(&a), &["all-1", "agents", "only-a", "all-2"]),
        (Some(&b), &["only-b", "all-1", "agents", "all-2"]),
    ];
    for (agent, expected) in cases {
        let result = service
            .ask(
                ask_request(vec![question("q")], agent),
                &CancellationToken::new(),
            )
            .await;
        assert_question_error(result, "NO_PROVIDER", NO_PROVIDER);
        assert_eq!(log.take_offered(), expected, "agent {agent:?}");
    }

    // An agents-scoped answerer that would claim still lets an agentless request fall through.
    let service = Service::new(Config::default());
    let c = root(&service, "c");
    register(
        &service,
        "agents",
        Script::Claim,
        Scope::Agents,
        false,
        &log,
    );
    let result = service
        .ask(
            ask_request(vec![question("q")], None),
            &CancellationToken::new(),
        )
        .await;
    assert_question_error(result, "NO_PROVIDER", NO_PROVIDER);
    let result = service
        .ask(
            ask_request(vec![question("q")], Some(&c)),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(result, Ok(skipped(&[question("q")])));
}

#[tokio::test]
async fn each_answerer_delegates_or_claims_in_turn() {
    let service = Service::new(Config::default());
    let log = Log::default();
    register(&service, "rules", Script::Delegate, Scope::All, false, &log);
    let (_, mut phone) = register(&service, "phone", Script::Hold, Scope::All, false, &log);
    let (_, mut gui) = register(&service, "gui", Script::Hold, Scope::All, false, &log);
    register(&service, "never", Script::Claim, Scope::All, false, &log);

    let agent = root(&service, "coder");
    let ask = tokio::spawn(service.ask(
        ask_request(vec![question("q")], Some(&agent)),
        &CancellationToken::new(),
    ));
    let held = phone.next().await;
    let pending = service.pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].request, held.request.id);
    assert_eq!(pending[0].holder.as_deref(), Some("phone"));
    assert_eq!(pending[0].questions, 1);
    assert_eq!(
        pending[0].agent.as_ref().map(|a| a.id.as_str()),
        Some("coder")
    );
    held.responder.decide(Decision::Delegate).unwrap();

    let held_by_gui = gui.next().await;
    assert_eq!(
        held_by_gui.request.id, held.request.id,
        "the same request moves on"
    );
    assert_eq!(service.pending()[0].holder.as_deref(), Some("gui"));
    held_by_gui
        .responder
        .decide(Decision::Claim(custom("q", "from the gui")))
        .unwrap();

    assert_eq!(ask.await.unwrap(), Ok(custom("q", "from the gui")));
    assert_eq!(log.offered(), ["rules", "phone", "gui"]);
    assert!(log.withdrawn().is_empty(), "a claim withdraws nothing");
    assert!(service.pending().is_empty());
}

/// A bug in an answerer (a panic in `offer`) fails that ask as an internal error of the answerer:
/// the asker is told, nothing waits forever, and the service goes on.
#[tokio::test]
async fn an_answerer_that_panics_fails_the_ask_and_the_service_goes_on() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (broken, _) = register(&service, "broken", Script::Panic, Scope::All, false, &log);
    register(&service, "later", Script::Claim, Scope::All, false, &log);
    let ask = service.ask(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    );
    let settled = tokio::time::timeout(std::time::Duration::from_secs(5), ask)
        .await
        .expect("the ask settles");
    match settled {
        Err(AskError::Internal { answerer, message }) => {
            assert_eq!(answerer, "broken");
            assert_eq!(
                message,
                r#"the answerer "broken" failed while it was offered the request"#
            );
        }
        other => panic!("expected an internal error, got {other:?}"),
    }
    assert!(service.pending().is_empty());
    service.unregister_answerer(broken);
    let next = service.ask(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    );
    assert!(next.await.is_ok(), "the next ask is answered");
}

#[tokio::test]
async fn the_chain_is_taken_at_dispatch() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut first) = register(&service, "first", Script::Hold, Scope::All, false, &log);
    let ask = tokio::spawn(service.ask(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    ));
    let held = first.next().await;

    register(
        &service,
        "late-append",
        Script::Claim,
        Scope::All,
        false,
        &log,
    );
    register(
        &service,
        "late-prepend",
        Script::Claim,
        Scope::All,
        true,
        &log,
    );
    held.responder.decide(Decision::Delegate).unwrap();
    assert_question_error(ask.await.unwrap(), "NO_PROVIDER", NO_PROVIDER);
    assert_eq!(log.take_offered(), ["first"]);

    // The next request sees them.
    let result = service
        .ask(
            ask_request(vec![question("q")], None),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(result, Ok(skipped(&[question("q")])));
    assert_eq!(log.take_offered(), ["late-prepend"]);
}

#[tokio::test]
async fn an_answerer_unregistered_while_holding_counts_as_delegating() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (first_id, mut first) = register(&service, "first", Script::Hold, Scope::All, false, &log);
    let (_, mut second) = register(&service, "second", Script::Hold, Scope::All, false, &log);
    register(&service, "third", Script::Claim, Scope::All, false, &log);

    let ask = tokio::spawn(service.ask(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    ));
    let held = first.next().await;
    assert!(service.unregister_answerer(first_id));
    let moved = second.next().await;
    assert_eq!(moved.request.id, held.request.id);
    // The first is told the request is no longer its own (a socket answerer's UI drops it).
    assert_eq!(log.withdrawn(), [("first".to_owned(), held.request.id)]);
    // The first answerer's answer now comes too late and is handed back.
    let late = Decision::Claim(custom("q", "too late"));
    assert_eq!(held.responder.decide(late.clone()), Err(late));
    moved
        .responder
        .decide(Decision::Claim(custom("q", "second")))
        .unwrap();
    assert_eq!(ask.await.unwrap(), Ok(custom("q", "second")));
    assert_eq!(log.offered(), ["first", "second"]);
    assert!(service.pending().is_empty());
}

#[tokio::test]
async fn an_answerer_unregistered_before_its_turn_is_skipped() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut first) = register(&service, "first", Script::Hold, Scope::All, false, &log);
    let (second_id, _) = register(&service, "second", Script::Claim, Scope::All, false, &log);
    register(&service, "third", Script::Delegate, Scope::All, false, &log);
    let ask = tokio::spawn(service.ask(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    ));
    let held = first.next().await;
    assert!(service.unregister_answerer(second_id));
    held.responder.decide(Decision::Delegate).unwrap();
    assert_question_error(ask.await.unwrap(), "NO_PROVIDER", NO_PROVIDER);
    assert_eq!(log.offered(), ["first", "third"]);
}

#[tokio::test]
async fn a_dropped_responder_counts_as_delegating() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut first) = register(&service, "first", Script::Hold, Scope::All, false, &log);
    let (_, mut second) = register(&service, "second", Script::Hold, Scope::All, false, &log);
    let ask = tokio::spawn(service.ask(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    ));
    drop(first.next().await);
    let held = second.next().await;
    held.responder
        .decide(Decision::Claim(custom("q", "second")))
        .unwrap();
    assert_eq!(ask.await.unwrap(), Ok(custom("q", "second")));

    // And when the last one drops its responder, nobody claimed.
    let ask = tokio::spawn(service.ask(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    ));
    drop(first.next().await);
    drop(second.next().await);
    assert_question_error(ask.await.unwrap(), "NO_PROVIDER", NO_PROVIDER);
}

#[tokio::test(start_paused = true)]
async fn cancelling_while_held_aborts_at_once_and_withdraws() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut gui) = register(&service, "gui", Script::Hold, Scope::All, false, &log);
    register(&service, "fallback", Script::Claim, Scope::All, false, &log);
    let cancel = CancellationToken::new();
    let ask = tokio::spawn(service.ask(ask_request(vec![question("q")], None), &cancel));
    let held = gui.next().await;
    assert!(!held.responder.is_withdrawn());

    let start = Instant::now();
    cancel.cancel();
    assert_question_error(ask.await.unwrap(), "ASK_ABORTED", ABORTED);
    assert_eq!(
        Instant::now(),
        start,
        "no time passed: nothing waited on a timer"
    );
    assert_eq!(log.withdrawn(), [("gui".to_owned(), held.request.id)]);
    assert!(held.responder.is_withdrawn());
    let late = Decision::Claim(custom("q", "late"));
    assert_eq!(
        held.responder.decide(late.clone()),
        Err(late),
        "a late answer is discarded"
    );
    assert_eq!(
        log.offered(),
        ["gui"],
        "a cancelled request does not move on"
    );
    assert!(service.pending().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_stuck_answerer_never_delays_cancellation() {
    let service = Service::new(Config::default());
    // It takes requests and never decides, keeping its responders alive; told of a withdrawal, it
    // does nothing.
    let stuck = std::sync::Arc::new(Holding::default());
    let registration = member("stuck", None);
    service
        .register_answerer(registration, stuck.clone())
        .unwrap();
    let agent = root(&service, "coder");

    // Cancelled by the asker, from another task, after an hour.
    let cancel = CancellationToken::new();
    let ask = tokio::spawn(service.ask(ask_request(vec![question("q")], None), &cancel));
    tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
    assert!(!ask.is_finished());
    assert_eq!(service.pending()[0].holder.as_deref(), Some("stuck"));
    let start = Instant::now();
    tokio::spawn({
        let cancel = cancel.clone();
        async move { cancel.cancel() }
    });
    assert_question_error(ask.await.unwrap(), "ASK_ABORTED", ABORTED);
    assert_eq!(Instant::now(), start);

    // Aborted by its agent going away.
    let ask = tokio::spawn(service.ask(
        ask_request(vec![question("q")], Some(&agent)),
        &CancellationToken::new(),
    ));
    tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
    assert!(!ask.is_finished());
    let start = Instant::now();
    service.unregister_agent(&agent).unwrap();
    assert_question_error(ask.await.unwrap(), "ASK_ABORTED", ABORTED);
    assert_eq!(Instant::now(), start);

    let responders: Vec<_> = std::iter::from_fn(|| stuck.take()).collect();
    assert_eq!(responders.len(), 2);
    assert!(responders.iter().all(|r| r.is_withdrawn()));
    assert!(service.pending().is_empty());
}

#[tokio::test]
async fn cancelled_or_agent_gone_after_dispatch_but_before_the_first_poll_is_aborted() {
    let service = Service::new(Config::default());
    let log = Log::default();
    register(&service, "claims", Script::Claim, Scope::All, false, &log);
    let cancel = CancellationToken::new();
    let ask = service.ask(ask_request(vec![question("q")], None), &cancel);
    assert_eq!(service.pending().len(), 1, "pending from dispatch on");
    cancel.cancel();
    assert_question_error(ask.await, "ASK_ABORTED", ABORTED);

    let agent = root(&service, "coder");
    let ask = service.ask(
        ask_request(vec![question("q")], Some(&agent)),
        &CancellationToken::new(),
    );
    service.unregister_agent(&agent).unwrap();
    assert_question_error(ask.await, "ASK_ABORTED", ABORTED);
    assert!(
        log.offered().is_empty(),
        "a settled request is offered to nobody"
    );
    assert!(service.pending().is_empty());
}

#[tokio::test(start_paused = true)]
async fn shutdown_settles_pending_asks_with_shutting_down() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut phone) = register(&service, "phone", Script::Hold, Scope::Agents, true, &log);
    let (_, mut gui) = register(&service, "gui", Script::Hold, Scope::All, false, &log);
    let agent = root(&service, "coder");
    let by_agent = tokio::spawn(service.ask(
        ask_request(vec![question("a")], Some(&agent)),
        &CancellationToken::new(),
    ));
    let agentless = tokio::spawn(service.ask(
        ask_request(vec![question("b")], None),
        &CancellationToken::new(),
    ));
    let held_by_phone = phone.next().await;
    let held_by_gui = gui.next().await;
    assert_eq!(service.pending().len(), 2);

    let start = Instant::now();
    service.shutdown();
    assert_question_error(by_agent.await.unwrap(), "SHUTTING_DOWN", SHUTTING_DOWN);
    assert_question_error(agentless.await.unwrap(), "SHUTTING_DOWN", SHUTTING_DOWN);
    assert_eq!(Instant::now(), start);
    let mut withdrawn = log.withdrawn();
    withdrawn.sort();
    let mut expected = vec![
        ("gui".to_owned(), held_by_gui.request.id),
        ("phone".to_owned(), held_by_phone.request.id),
    ];
    expected.sort();
    assert_eq!(withdrawn, expected);
    assert!(held_by_gui
        .responder
        .decide(Decision::Claim(custom("b", "late")))
        .is_err());
    assert!(held_by_phone.responder.decide(Decision::Delegate).is_err());
    assert!(service.pending().is_empty());

    // And nothing new is taken.
    let result = service
        .ask(
            ask_request(vec![question("c")], None),
            &CancellationToken::new(),
        )
        .await;
    assert_question_error(result, "SHUTTING_DOWN", SHUTTING_DOWN);
    assert!(gui.is_empty() && phone.is_empty());
}

#[tokio::test]
async fn dropping_the_ask_withdraws_it() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut gui) = register(&service, "gui", Script::Hold, Scope::All, false, &log);
    let ask = tokio::spawn(service.ask(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    ));
    let held = gui.next().await;
    assert_eq!(service.pending().len(), 1);
    ask.abort();
    assert!(ask.await.unwrap_err().is_cancelled());
    assert_eq!(log.withdrawn(), [("gui".to_owned(), held.request.id)]);
    assert!(held.responder.is_withdrawn());
    assert!(service.pending().is_empty());
}

#[tokio::test]
async fn dropping_an_ask_never_polled_removes_it_from_pending() {
    let service = Service::new(Config::default());
    let log = Log::default();
    register(&service, "gui", Script::Hold, Scope::All, false, &log);
    let ask = service.ask(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    );
    let pending = service.pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].holder, None);
    drop(ask);
    assert!(service.pending().is_empty());
    assert!(
        log.events().is_empty(),
        "never offered, so nothing to withdraw"
    );
}

#[tokio::test]
async fn request_ids_are_distinct_and_increasing() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut gui) = register(&service, "gui", Script::Hold, Scope::All, false, &log);
    let mut ids: Vec<RequestId> = Vec::new();
    for _ in 0..3 {
        let ask = tokio::spawn(service.ask(
            ask_request(vec![question("q")], None),
            &CancellationToken::new(),
        ));
        let held = gui.next().await;
        ids.push(held.request.id);
        held.responder
            .decide(Decision::Claim(skipped(&held.request.questions)))
            .unwrap();
        ask.await.unwrap().unwrap();
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
}

/// Decisions that reach the channel before the ask task runs again, racing a stop signal.
/// On the current-thread runtime the spawned ask cannot run between the two calls, so the race
/// is exact: both events are visible when the ask next polls.
#[tokio::test]
async fn a_decision_sent_before_a_stop_is_not_lost() {
    // Claim, then the answerer leaves (an answerer that replies and disconnects).
    let service = Service::new(Config::default());
    let log = Log::default();
    let (id, mut holds) = register(&service, "phone", Script::Hold, Scope::All, false, &log);
    let ask = tokio::spawn(service.ask(
        ask_request(vec![question("q")], None),
        &CancellationToken::new(),
    ));
    let held = holds.next().await;
    held.responder
        .decide(Decision::Claim(custom("q", "sent, then gone")))
        .unwrap();
    assert!(service.unregister_answerer(id));
    assert_eq!(ask.await.unwrap(), Ok(custom("q", "sent, then gone")));

    // Claim crossing the asker's cancel: the human's answer is delivered, not dropped.
    let (_, mut holds) = register(&service, "gui", Script::Hold, Scope::All, false, &log);
    let cancel = CancellationToken::new();
    let ask = tokio::spawn(service.ask(ask_request(vec![question("q")], None), &cancel));
    let held = holds.next().await;
    held.responder
        .decide(Decision::Claim(custom("q", "crossed the cancel")))
        .unwrap();
    cancel.cancel();
    assert_eq!(ask.await.unwrap(), Ok(custom("q", "crossed the cancel")));

    // A delegation crossing the cancel does not move the request on: the ask is aborted.
    let cancel = CancellationToken::new();
    let ask = tokio::spawn(service.ask(ask_request(vec![question("q")], None), &cancel));
    let held = holds.next().await;
    held.responder.decide(Decision::Delegate).unwrap();
    cancel.cancel();
    let result = ask.await.unwrap();
    assert_eq!(
        result.unwrap_err().code(),
        Some(&askdesk_core::ErrorCode::AskAborted)
    );

    // After the stop was seen, a decision comes back to its answerer as late.
    let cancel = CancellationToken::new();
    let ask = tokio::spawn(service.ask(ask_request(vec![question("q")], None), &cancel));
    let held = holds.next().await;
    cancel.cancel();
    assert!(ask.await.unwrap().is_err());
    assert!(held
        .responder
        .decide(Decision::Claim(custom("q", "too late")))
        .is_err());
}
