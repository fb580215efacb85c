//! Race groups (docs/protocol.md, section 4.1): a group's members are offered a request at the same
//! moment, the first decision settles it and the others are withdrawn; passes, failures, members
//! leaving, cancellation, overrides, and the group's place in the chain among ungrouped answerers.

mod common;

use std::sync::Arc;

use askdesk_core::{
    Answer, AnswerItem, AnswererId, AskError, AskSettlement, Config, Decision, Failure, Scope,
    Service, UserQuestionError,
};
use common::*;
use tokio_util::sync::CancellationToken;

fn choose(label: &str) -> Answer {
    Answer {
        answers: vec![AnswerItem {
            id: "q".into(),
            selected: vec![label.into()],
            ..Default::default()
        }],
    }
}

/// An answer that breaks protocol 1.2: "Maybe" is none of the question's options.
fn malformed() -> Answer {
    choose("Maybe")
}

fn member(service: &Service, name: &str, script: Script, log: &Log) -> Holds {
    register_in(
        service,
        name,
        script,
        Scope::All,
        false,
        Some("person"),
        log,
    )
    .1
}

fn ask(service: &Service) -> tokio::task::JoinHandle<askdesk_core::AskSettlement> {
    ask_with(service, &CancellationToken::new())
}

fn ask_with(
    service: &Service,
    cancel: &CancellationToken,
) -> tokio::task::JoinHandle<askdesk_core::AskSettlement> {
    tokio::spawn(service.ask_settled(ask_request(vec![question("q")], None), cancel))
}

/// A service whose group `person` has the members "desk" and "phone" (in that order), both
/// holding each request they are offered.
struct Pair {
    service: Service,
    log: Log,
    desk: (AnswererId, Holds),
    phone: (AnswererId, Holds),
}

fn pair() -> Pair {
    let service = Service::new(Config::default());
    let log = Log::default();
    let join = |name| {
        register_in(
            &service,
            name,
            Script::Hold,
            Scope::All,
            false,
            Some("person"),
            &log,
        )
    };
    let (desk, phone) = (join("desk"), join("phone"));
    Pair {
        service,
        log,
        desk,
        phone,
    }
}

impl Pair {
    /// Adds the ungrouped answerer "next" after the group, which claims at once.
    fn then_next(&self) {
        register(
            &self.service,
            "next",
            Script::Claim,
            Scope::All,
            false,
            &self.log,
        );
    }

    /// Asks once, and returns the ask with the request as the desk and the phone hold it.
    async fn race(
        &mut self,
        cancel: &CancellationToken,
    ) -> (tokio::task::JoinHandle<AskSettlement>, Held, Held) {
        let asked = ask_with(&self.service, cancel);
        let at_desk = self.desk.1.next().await;
        let on_phone = self.phone.1.next().await;
        assert_eq!(at_desk.request.id, on_phone.request.id);
        (asked, at_desk, on_phone)
    }
}

/// Decides for the member holding `held`; the decision must be taken.
fn decide(held: Held, decision: Decision) {
    held.responder
        .decide(decision)
        .expect("the request still races");
}

#[tokio::test]
async fn every_member_is_offered_at_once_and_the_first_answer_settles() {
    let mut pair = pair();
    let (asked, at_desk, on_phone) = pair.race(&CancellationToken::new()).await;
    assert_eq!(
        pair.service.pending()[0].holder.as_deref(),
        Some("desk, phone"),
        "status names every member holding it"
    );
    let id = at_desk.request.id;
    decide(on_phone, Decision::Claim(choose("No")));
    let settled = asked.await.unwrap();
    assert_eq!(settled.result, Ok(choose("No")));
    assert_eq!(settled.answerer.as_deref(), Some("phone"));
    assert!(settled.crossed.is_empty());
    assert_eq!(
        pair.log.lost(),
        [("desk".to_owned(), id, "phone".to_owned())]
    );
    assert!(
        pair.log.withdrawn().is_empty(),
        "the winner is not withdrawn"
    );
    assert_eq!(
        at_desk.responder.decide(Decision::Claim(choose("Yes"))),
        Err(Decision::Claim(choose("Yes"))),
        "the desk's answer after the phone's comes back as late"
    );
    assert!(pair.service.pending().is_empty());
}

#[tokio::test]
async fn a_pass_from_one_member_leaves_the_others_racing() {
    let mut pair = pair();
    pair.then_next();
    let (asked, at_desk, on_phone) = pair.race(&CancellationToken::new()).await;
    decide(on_phone, Decision::Delegate);
    tokio::task::yield_now().await;
    assert!(!at_desk.responder.is_withdrawn(), "the desk still races");
    assert_eq!(pair.service.pending()[0].holder.as_deref(), Some("desk"));
    decide(at_desk, Decision::Claim(choose("Yes")));
    let settled = asked.await.unwrap();
    assert_eq!(settled.result, Ok(choose("Yes")));
    assert_eq!(settled.answerer.as_deref(), Some("desk"));
    assert_eq!(
        pair.log.offered(),
        ["desk", "phone"],
        "the next link is never asked"
    );
    assert!(pair.log.lost().is_empty() && pair.log.withdrawn().is_empty());
}

#[tokio::test]
async fn when_every_member_passes_the_waterfall_moves_on() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let mut desk = member(&service, "desk", Script::Hold, &log);
    member(&service, "dnd", Script::Delegate, &log);
    register(&service, "next", Script::Claim, Scope::All, false, &log);
    let asked = ask(&service);
    decide(desk.next().await, Decision::Delegate);
    let settled = asked.await.unwrap();
    assert_eq!(settled.result, Ok(skipped(&[question("q")])));
    assert_eq!(settled.answerer.as_deref(), Some("next"));
    assert_eq!(log.offered(), ["desk", "dnd", "next"]);

    // With nobody after the group, nobody claimed it.
    let service = Service::new(Config::default());
    member(&service, "dnd", Script::Delegate, &log);
    let settled = ask(&service).await.unwrap();
    assert_question_error(settled.result, "NO_PROVIDER", NO_PROVIDER);
}

#[tokio::test]
async fn a_member_that_leaves_mid_race_counts_as_passing() {
    let mut pair = pair();
    pair.then_next();
    let (asked, at_desk, on_phone) = pair.race(&CancellationToken::new()).await;
    let id = at_desk.request.id;

    assert!(pair.service.unregister_answerer(pair.phone.0));
    // The phone is told at once; the desk races on.
    while pair.log.withdrawn().is_empty() {
        tokio::task::yield_now().await;
    }
    assert_eq!(pair.log.withdrawn(), [("phone".to_owned(), id)]);
    assert!(on_phone.responder.is_withdrawn());
    assert!(!at_desk.responder.is_withdrawn());

    // The last member leaving moves the request on.
    assert!(pair.service.unregister_answerer(pair.desk.0));
    let settled = asked.await.unwrap();
    assert_eq!(settled.answerer.as_deref(), Some("next"));
    assert_eq!(
        pair.log.withdrawn(),
        [("phone".to_owned(), id), ("desk".to_owned(), id)]
    );
}

#[tokio::test]
async fn an_answer_sent_before_its_member_left_still_counts() {
    let mut pair = pair();
    let (asked, at_desk, on_phone) = pair.race(&CancellationToken::new()).await;
    let id = at_desk.request.id;
    // Answered and gone in one step, before the walk saw either.
    decide(on_phone, Decision::Claim(choose("No")));
    pair.service.unregister_answerer(pair.phone.0);
    let settled = asked.await.unwrap();
    assert_eq!(settled.result, Ok(choose("No")));
    assert_eq!(settled.answerer.as_deref(), Some("phone"));
    assert_eq!(
        pair.log.lost(),
        [("desk".to_owned(), id, "phone".to_owned())]
    );
}

#[tokio::test]
async fn the_asker_cancelling_mid_race_withdraws_every_member() {
    let mut pair = pair();
    let mut watch = member(&pair.service, "watch", Script::Hold, &pair.log);
    let cancel = CancellationToken::new();
    let (asked, at_desk, _on_phone) = pair.race(&cancel).await;
    decide(watch.next().await, Decision::Delegate);
    let id = at_desk.request.id;
    cancel.cancel();
    let settled = asked.await.unwrap();
    assert_question_error(settled.result, "ASK_ABORTED", ABORTED);
    assert_eq!(settled.answerer, None);
    let mut withdrawn = pair.log.withdrawn();
    withdrawn.sort();
    assert_eq!(
        withdrawn,
        [("desk".to_owned(), id), ("phone".to_owned(), id)],
        "every member still racing, not the one that passed"
    );
    assert!(pair.service.pending().is_empty());
}

#[tokio::test]
async fn a_dropped_ask_withdraws_every_member_still_racing() {
    let mut pair = pair();
    // Held, not dropped: a dropped responder passes.
    let (asked, at_desk, _on_phone) = pair.race(&CancellationToken::new()).await;
    let id = at_desk.request.id;
    asked.abort();
    assert!(asked.await.unwrap_err().is_cancelled());
    let mut withdrawn = pair.log.withdrawn();
    withdrawn.sort();
    assert_eq!(
        withdrawn,
        [("desk".to_owned(), id), ("phone".to_owned(), id)]
    );
    assert!(pair.service.pending().is_empty());
}

#[tokio::test]
async fn a_malformed_answer_cannot_win_the_race() {
    let mut pair = pair();
    let (asked, at_desk, on_phone) = pair.race(&CancellationToken::new()).await;
    decide(on_phone, Decision::Claim(malformed()));
    tokio::task::yield_now().await;
    assert!(
        !at_desk.responder.is_withdrawn(),
        "the person still answers"
    );
    decide(at_desk, Decision::Claim(choose("Yes")));
    let settled = asked.await.unwrap();
    assert_eq!(settled.result, Ok(choose("Yes")));
    assert_eq!(settled.answerer.as_deref(), Some("desk"));
}

#[tokio::test]
async fn a_member_that_breaks_is_out_and_its_failure_stands_when_nobody_decides() {
    // A malformed answer at once, an internal failure later: the first failure is the link's.
    let service = Service::new(Config::default());
    let log = Log::default();
    member(&service, "bot", Script::Answer(malformed()), &log);
    let mut phone = member(&service, "phone", Script::Hold, &log);
    let mut desk = member(&service, "desk", Script::Hold, &log);
    register(&service, "next", Script::Claim, Scope::All, false, &log);
    let asked = ask(&service);
    let broken = Decision::Fail(Failure::Internal("render failed".into()));
    decide(phone.next().await, broken.clone());
    decide(desk.next().await, Decision::Delegate);
    let settled = asked.await.unwrap();
    assert_question_error(
        settled.result,
        "BAD_ANSWER",
        r#"the answerer sent a bad answer: question "q" has no option "Maybe""#,
    );
    assert_eq!(settled.answerer.as_deref(), Some("bot"));
    assert_eq!(
        log.offered(),
        ["bot", "phone", "desk"],
        "a broken group fails closed rather than moving on"
    );

    // An internal failure alone reaches the asker as the member's internal error.
    let service = Service::new(Config::default());
    let mut phone = member(&service, "phone", Script::Hold, &log);
    let asked = ask(&service);
    decide(phone.next().await, broken);
    match asked.await.unwrap().result {
        Err(AskError::Internal { answerer, message }) => {
            assert_eq!(
                (answerer.as_str(), message.as_str()),
                ("phone", "render failed")
            );
        }
        other => panic!("expected the phone's internal error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_panicking_member_is_out_of_the_race() {
    let service = Service::new(Config::default());
    let log = Log::default();
    member(&service, "broken", Script::Panic, &log);
    let mut desk = member(&service, "desk", Script::Hold, &log);
    let asked = ask(&service);
    decide(desk.next().await, Decision::Claim(choose("No")));
    assert_eq!(asked.await.unwrap().result, Ok(choose("No")));
}

#[tokio::test]
async fn a_dismissal_from_one_member_settles_the_race() {
    let mut pair = pair();
    let (asked, at_desk, on_phone) = pair.race(&CancellationToken::new()).await;
    let dismissed = Failure::Domain(UserQuestionError::cancelled_by_user());
    decide(on_phone, Decision::Fail(dismissed));
    let settled = asked.await.unwrap();
    assert_question_error(settled.result, "ASK_CANCELLED", CANCELLED);
    assert_eq!(settled.answerer.as_deref(), Some("phone"));
    let id = at_desk.request.id;
    assert_eq!(
        pair.log.lost(),
        [("desk".to_owned(), id, "phone".to_owned())]
    );
}

#[tokio::test]
async fn a_member_that_answers_at_once_settles_before_the_rest_are_offered() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let mut desk = member(&service, "desk", Script::Hold, &log);
    member(&service, "auto", Script::Answer(choose("No")), &log);
    member(&service, "phone", Script::Hold, &log);
    let asked = ask(&service);
    let id = desk.next().await.request.id;
    let settled = asked.await.unwrap();
    assert_eq!(settled.result, Ok(choose("No")));
    assert_eq!(settled.answerer.as_deref(), Some("auto"));
    assert_eq!(log.offered(), ["desk", "auto"]);
    assert_eq!(log.lost(), [("desk".to_owned(), id, "auto".to_owned())]);
}

/// Two members decide before the walk looks: the first in member order wins, and the other's
/// answer is handed back as crossed (for the journal) while its member is told it lost.
#[tokio::test]
async fn answers_that_cross_settle_once_and_the_other_is_kept_as_late() {
    let mut pair = pair();
    let (asked, at_desk, on_phone) = pair.race(&CancellationToken::new()).await;
    let id = at_desk.request.id;
    // The test's runtime runs on this thread: the walk cannot run between the two.
    decide(on_phone, Decision::Claim(choose("No")));
    decide(at_desk, Decision::Claim(choose("Yes")));
    let settled = asked.await.unwrap();
    assert_eq!(settled.result, Ok(choose("Yes")));
    assert_eq!(settled.answerer.as_deref(), Some("desk"));
    assert_eq!(settled.crossed, [("phone".to_owned(), choose("No"))]);
    assert_eq!(
        pair.log.lost(),
        [("phone".to_owned(), id, "desk".to_owned())]
    );
}

#[tokio::test]
async fn an_override_while_racing_overrules_every_member() {
    let mut pair = pair();
    let (asked, at_desk, _on_phone) = pair.race(&CancellationToken::new()).await;
    let id = at_desk.request.id;
    let rule = pair.service.take_override(id, "rule:auto no").unwrap();
    rule.decide(Decision::Claim(choose("No"))).unwrap();
    let settled = asked.await.unwrap();
    assert_eq!(settled.result, Ok(choose("No")));
    assert_eq!(settled.answerer.as_deref(), Some("rule:auto no"));
    let by = || "rule:auto no".to_owned();
    assert_eq!(
        pair.log.overruled(),
        [
            ("desk".to_owned(), id, by()),
            ("phone".to_owned(), id, by())
        ]
    );
}

#[tokio::test]
async fn scopes_pick_which_members_race() {
    let service = Service::new(Config::default());
    let log = Log::default();
    register_in(
        &service,
        "agents-only",
        Script::Claim,
        Scope::Agents,
        false,
        Some("person"),
        &log,
    );
    let mut desk = member(&service, "desk", Script::Hold, &log);
    let asked = ask(&service);
    desk.next()
        .await
        .responder
        .decide(Decision::Claim(choose("Yes")))
        .unwrap();
    assert_eq!(asked.await.unwrap().answerer.as_deref(), Some("desk"));
    assert_eq!(log.offered(), ["desk"], "an agentless request skips it");
}

/// The chain of protocol 4 with groups: a group is one link, where its oldest member would stand
/// alone; ungrouped answerers keep their order, prepended ones newest first.
#[tokio::test]
async fn a_group_stands_where_its_oldest_member_would_and_the_rest_keep_their_order() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let add = |name: &str, prepend: bool, group: Option<&str>| {
        register_in(
            &service,
            name,
            Script::Delegate,
            Scope::All,
            prepend,
            group,
            &log,
        )
        .0
    };
    add("a", false, None);
    let desk = add("desk", false, Some("person"));
    add("b", false, None);
    add("phone", true, Some("person"));
    add("rules", true, None);
    add("c", false, None);
    add("watch", false, Some("person"));
    add("x1", false, Some("other"));
    add("x2", true, Some("other"));

    let chain = || -> Vec<(String, Option<String>)> {
        service
            .answerers()
            .into_iter()
            .map(|a| (a.label, a.group))
            .collect()
    };
    let person = || Some("person".to_owned());
    let other = || Some("other".to_owned());
    assert_eq!(
        chain(),
        [
            ("rules".to_owned(), None),
            ("a".to_owned(), None),
            ("desk".to_owned(), person()),
            ("phone".to_owned(), person()),
            ("watch".to_owned(), person()),
            ("b".to_owned(), None),
            ("c".to_owned(), None),
            ("x1".to_owned(), other()),
            ("x2".to_owned(), other()),
        ]
    );
    ask(&service).await.unwrap();
    assert_eq!(
        log.take_offered(),
        ["rules", "a", "desk", "phone", "watch", "b", "c", "x1", "x2"]
    );

    // With its oldest member gone, the group stands where the next oldest (prepended) would.
    assert!(service.unregister_answerer(desk));
    ask(&service).await.unwrap();
    assert_eq!(
        log.take_offered(),
        ["rules", "phone", "watch", "a", "b", "c", "x1", "x2"]
    );
}

#[tokio::test]
async fn a_member_registered_after_dispatch_does_not_join_a_race_under_way() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let mut desk = member(&service, "desk", Script::Hold, &log);
    let asked = ask(&service);
    let at_desk = desk.next().await;
    let mut phone = member(&service, "phone", Script::Hold, &log);
    decide(at_desk, Decision::Claim(choose("Yes")));
    asked.await.unwrap();
    assert_eq!(log.take_offered(), ["desk"]);
    assert!(phone.is_empty());

    // The next request races both.
    let asked = ask(&service);
    let _at_desk = desk.next().await;
    decide(phone.next().await, Decision::Claim(choose("No")));
    assert_eq!(asked.await.unwrap().answerer.as_deref(), Some("phone"));
}

/// Exactly once under real concurrency: two threads decide for two members of one race at the
/// same moment, a thousand times. Each ask settles once, with the answer of the member it names;
/// the other member either had its answer handed back as late or kept for the journal as
/// crossed, never both, never neither, and it is always told it lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_races_of_simultaneous_answers_each_settle_once() {
    let mut pair = pair();
    for _ in 0..1000 {
        let (asked, at_desk, on_phone) = pair.race(&CancellationToken::new()).await;
        let id = at_desk.request.id;
        let start = Arc::new(std::sync::Barrier::new(2));
        let racer = |held: Held, answer: Answer| {
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                held.responder.decide(Decision::Claim(answer)).is_ok()
            })
        };
        let desk_thread = racer(at_desk, choose("Yes"));
        let phone_thread = racer(on_phone, choose("No"));
        let delivered = [desk_thread.join().unwrap(), phone_thread.join().unwrap()];
        let settled = asked.await.unwrap();
        let (winner, loser, answer) = match settled.answerer.as_deref() {
            Some("desk") => ("desk", "phone", choose("Yes")),
            Some("phone") => ("phone", "desk", choose("No")),
            other => panic!("settled by {other:?}"),
        };
        assert_eq!(settled.result, Ok(answer));
        let loser_delivered = delivered[usize::from(loser == "phone")];
        assert!(
            delivered[usize::from(winner == "phone")],
            "the winner's answer was taken"
        );
        let crossed: Vec<&str> = settled.crossed.iter().map(|(l, _)| l.as_str()).collect();
        if loser_delivered {
            assert_eq!(crossed, [loser], "a crossed answer is kept for the journal");
        } else {
            assert!(
                crossed.is_empty(),
                "a refused answer was late to its member"
            );
        }
        assert_eq!(
            pair.log.lost(),
            [(loser.to_owned(), id, winner.to_owned())],
            "the loser is told"
        );
        assert!(pair.log.withdrawn().is_empty());
        pair.log.take_offered();
    }
    assert!(pair.service.pending().is_empty());
}

#[tokio::test]
async fn without_a_group_nothing_changes() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut first) = register(&service, "first", Script::Hold, Scope::All, false, &log);
    register(&service, "second", Script::Claim, Scope::All, false, &log);
    let asked = ask(&service);
    let held = first.next().await;
    assert_eq!(log.offered(), ["first"], "one answerer at a time");
    decide(held, Decision::Delegate);
    assert_eq!(asked.await.unwrap().answerer.as_deref(), Some("second"));
    assert!(service.answerers().iter().all(|a| a.group.is_none()));
}

/// An answerer that answers "Yes" at once and names who decided (a phone hosted in-process names
/// its device), counting how often it is asked.
struct Signing {
    signer: Option<&'static str>,
    asked: std::sync::Mutex<Vec<askdesk_core::RequestId>>,
}

impl askdesk_core::Answerer for Signing {
    fn offer(&self, _request: &Arc<askdesk_core::Request>) -> askdesk_core::Offer {
        askdesk_core::Offer::Now(Decision::Claim(choose("Yes")))
    }

    fn signer(&self, request: askdesk_core::RequestId) -> Option<String> {
        self.asked.lock().unwrap().push(request);
        self.signer.map(str::to_owned)
    }
}

fn signing(service: &Service, signer: Option<&'static str>, group: Option<&str>) -> Arc<Signing> {
    let answerer = Arc::new(Signing {
        signer,
        asked: Default::default(),
    });
    let registration = askdesk_core::AnswererRegistration {
        scope: Scope::All,
        prepend: false,
        label: Some("phone".into()),
        group: group.map(str::to_owned),
    };
    service
        .register_answerer(registration, answerer.clone())
        .unwrap();
    answerer
}

#[tokio::test]
async fn a_winner_that_names_its_signer_settles_signed_by_it_and_the_others_hear_so() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut desk) = register_in(
        &service,
        "desk",
        Script::Hold,
        Scope::All,
        false,
        Some("person"),
        &log,
    );
    let phone = signing(&service, Some("Pixel 8"), Some("person"));
    let settled = ask(&service).await.unwrap();
    let id = desk.next().await.request.id;
    assert_eq!(settled.result, Ok(choose("Yes")));
    assert_eq!(settled.answerer.as_deref(), Some("phone:Pixel 8"));
    assert_eq!(
        log.lost(),
        [("desk".to_owned(), id, "phone:Pixel 8".to_owned())]
    );
    assert_eq!(
        *phone.asked.lock().unwrap(),
        [id],
        "asked once, as it settled"
    );
}

#[tokio::test]
async fn a_signer_alone_on_its_link_signs_and_none_keeps_the_label() {
    let service = Service::new(Config::default());
    signing(&service, Some("Pixel 8"), None);
    assert_eq!(
        ask(&service).await.unwrap().answerer.as_deref(),
        Some("phone:Pixel 8")
    );
    let service = Service::new(Config::default());
    signing(&service, None, Some("person"));
    assert_eq!(
        ask(&service).await.unwrap().answerer.as_deref(),
        Some("phone")
    );
}
