//! The rules engine on a real `Service`: a rule answering at once (signed `rule:<name>`), a
//! deadline firing at the right moment on paused time, the human beating a deadline, shadow
//! rules and their proposals, and a broken or changing rules file.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use askdesk_core::testing::{self, member};
use askdesk_core::{
    decision_channel, Answer, Answerer, AskSettlement, Config, Decision, Offer, Question, Request,
    RequestId, Responder, Service, Withdrawal,
};
use askdesk_rules::{Engine, Proposal, Verdict};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The human: holds every request until the test decides through the responder.
struct Human {
    offered: mpsc::UnboundedSender<(Arc<Request>, Responder)>,
    withdrawn: Mutex<Vec<RequestId>>,
    /// Each deadline the service told, in order.
    deadlines: Mutex<Vec<(RequestId, Option<std::time::SystemTime>)>>,
}

impl Answerer for Human {
    fn offer(&self, request: &Arc<Request>) -> Offer {
        let (responder, receiver) = decision_channel();
        let _ = self.offered.send((request.clone(), responder));
        Offer::Later(receiver)
    }

    fn withdraw(&self, request: RequestId, _why: Withdrawal) -> Option<Answer> {
        self.withdrawn.lock().unwrap().push(request);
        None
    }

    fn deadline(&self, request: RequestId, at: Option<std::time::SystemTime>) {
        self.deadlines.lock().unwrap().push((request, at));
    }
}

struct Setup {
    service: Service,
    engine: Engine,
    human: Arc<Human>,
    offered: mpsc::UnboundedReceiver<(Arc<Request>, Responder)>,
    _dir: tempfile::TempDir,
}

async fn setup(rules: &str) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rules.toml");
    std::fs::write(&path, rules).unwrap();
    let service = Service::new(Config::default());
    let (tx, offered) = mpsc::unbounded_channel();
    let human = Arc::new(Human {
        offered: tx,
        withdrawn: Mutex::default(),
        deadlines: Mutex::default(),
    });
    service
        .register_answerer(member("human", None), human.clone())
        .unwrap();
    let engine = Engine::open(path).await;
    engine.install(&service).unwrap();
    Setup {
        service,
        engine,
        human,
        offered,
        _dir: dir,
    }
}

fn question(id: &str, text: &str) -> Question {
    testing::question(id, text, &["Yes (Recommended)", "No"])
}

fn ask(service: &Service, text: &str) -> tokio::task::JoinHandle<AskSettlement> {
    tokio::spawn(service.ask_settled(
        testing::ask(vec![question("q", text)]),
        &CancellationToken::new(),
    ))
}

/// Picks `label` in question "q".
fn answer(label: &str) -> Answer {
    testing::choose("q", label)
}

fn chose(settled: &AskSettlement) -> Vec<String> {
    settled.result.as_ref().unwrap().answers[0].selected.clone()
}

const RULES: &str = r#"
[[rule]]
name = "clean"
match.question = "^Clean up"
answer = { recommended = true }

[[rule]]
name = "slow deploy"
match.question = "^Deploy"
answer = "No"
after = "10m"

[[rule]]
name = "guess"
match.question = "^Guess"
answer = "No"
mode = "shadow"
"#;

#[tokio::test(start_paused = true)]
async fn a_rule_answers_at_once_and_signs_the_answer() {
    let mut s = setup(RULES).await;
    let settled = ask(&s.service, "Clean up the build?").await.unwrap();
    assert_eq!(settled.answerer.as_deref(), Some("rule:clean"));
    assert_eq!(chose(&settled), ["Yes (Recommended)"]);
    assert!(s.offered.try_recv().is_err(), "the human was never asked");
    let chain: Vec<_> = s.service.answerers().into_iter().map(|a| a.label).collect();
    assert_eq!(chain, ["rules", "human"]);
}

#[tokio::test(start_paused = true)]
async fn a_rule_that_answers_at_once_is_announced_with_the_answer_it_sent() {
    let mut s = setup(RULES).await;
    let mut acted = s.engine.acted();
    let settled = ask(&s.service, "Clean up the build?").await.unwrap();
    let heard = acted.try_recv().expect("the rule's answer was announced");
    assert_eq!(heard.rule, "clean");
    assert_eq!(heard.action, "answer the recommended option");
    assert_eq!(heard.answer.as_ref(), settled.result.as_ref().ok());
    assert_eq!(heard.request.questions[0].question, "Clean up the build?");
    // A rule with `after` decides what the human was shown: its answerer hears of that, not this.
    let pending = ask(&s.service, "Deploy to staging?");
    let (_request, _responder) = s.offered.recv().await.unwrap();
    assert_eq!(chose(&pending.await.unwrap()), ["No"]);
    assert!(
        acted.try_recv().is_err(),
        "a deadline is not announced here"
    );
}

#[tokio::test]
async fn the_answerer_is_on_the_chain_only_while_there_are_rules() {
    let s = setup("").await;
    let chain =
        |s: &Setup| -> Vec<String> { s.service.answerers().into_iter().map(|a| a.label).collect() };
    assert_eq!(chain(&s), ["human"]);
    rewrite(s.engine.path(), RULES);
    assert!(s.engine.reload().await);
    assert_eq!(chain(&s), ["rules", "human"]);
    rewrite(
        s.engine.path(),
        "[[rule]]\nname = \"x\"\nask = true\nmode = \"off\"\n",
    );
    assert!(s.engine.reload().await);
    assert_eq!(
        chain(&s),
        ["human"],
        "rules that are all off need no answerer"
    );
}

#[tokio::test(start_paused = true)]
async fn a_deadline_fires_at_the_right_moment() {
    let mut s = setup(RULES).await;
    let started = tokio::time::Instant::now();
    let pending = ask(&s.service, "Deploy to staging?");
    let (request, responder) = s.offered.recv().await.unwrap();
    let deadline = s.engine.deadline(request.id).expect("a deadline is set");
    assert_eq!(deadline.rule, "slow deploy");
    assert_eq!(deadline.action, "answer \"No\"");

    tokio::time::sleep(Duration::from_secs(599)).await;
    assert!(!pending.is_finished(), "not before ten minutes");
    assert!(!responder.is_withdrawn());

    let settled = pending.await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_secs(600));
    assert_eq!(settled.answerer.as_deref(), Some("rule:slow deploy"));
    assert_eq!(chose(&settled), ["No"]);
    assert_eq!(
        *s.human.withdrawn.lock().unwrap(),
        [request.id],
        "the dialog is withdrawn"
    );
    assert!(responder.is_withdrawn());
    assert_eq!(s.engine.deadline(request.id), None);
}

#[tokio::test(start_paused = true)]
async fn changing_a_rule_s_after_moves_its_running_deadline() {
    let mut s = setup(RULES).await;
    let started = tokio::time::Instant::now();
    let pending = ask(&s.service, "Deploy to staging?");
    let (request, _responder) = s.offered.recv().await.unwrap();
    let first = s.engine.deadline(request.id).unwrap();

    // Five minutes in, the rule waits twenty minutes instead of ten: the deadline moves on by ten.
    tokio::time::sleep(Duration::from_secs(300)).await;
    rewrite(
        s.engine.path(),
        &RULES.replace("after = \"10m\"", "after = \"20m\""),
    );
    assert!(s.engine.reload().await);
    let moved = s.engine.deadline(request.id).expect("the deadline stays");
    assert_eq!(
        moved.at.duration_since(first.at).unwrap(),
        Duration::from_secs(600)
    );
    tokio::time::sleep_until(started + Duration::from_secs(1199)).await;
    assert!(
        !pending.is_finished(),
        "not at the old deadline, nor before the new one"
    );
    let settled = pending.await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_secs(1200));
    assert_eq!(settled.answerer.as_deref(), Some("rule:slow deploy"));

    // Shortened to a time already past: the rule acts at once.
    let started = tokio::time::Instant::now();
    let pending = ask(&s.service, "Deploy again?");
    let (request, _responder) = s.offered.recv().await.unwrap();
    assert!(s.engine.deadline(request.id).is_some());
    tokio::time::sleep(Duration::from_secs(180)).await;
    rewrite(
        s.engine.path(),
        &RULES.replace("after = \"10m\"", "after = \"2m\""),
    );
    assert!(s.engine.reload().await);
    let settled = pending.await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_secs(180));
    assert_eq!(settled.answerer.as_deref(), Some("rule:slow deploy"));

    // Its `after` taken out, the rule would act at once on a new request; this one is called off
    // and the human decides.
    rewrite(s.engine.path(), RULES);
    assert!(s.engine.reload().await);
    let pending = ask(&s.service, "Deploy once more?");
    let (request, responder) = s.offered.recv().await.unwrap();
    rewrite(s.engine.path(), &RULES.replace("after = \"10m\"\n", ""));
    assert!(s.engine.reload().await);
    assert_eq!(s.engine.deadline(request.id), None);
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert!(!pending.is_finished(), "the called-off deadline never acts");
    responder
        .decide(Decision::Claim(answer("Yes (Recommended)")))
        .unwrap();
    assert_eq!(pending.await.unwrap().answerer.as_deref(), Some("human"));
}

#[tokio::test(start_paused = true)]
async fn the_human_beats_the_deadline() {
    let mut s = setup(RULES).await;
    let pending = ask(&s.service, "Deploy to production?");
    let (request, responder) = s.offered.recv().await.unwrap();
    tokio::time::sleep(Duration::from_secs(60)).await;
    responder
        .decide(Decision::Claim(answer("Yes (Recommended)")))
        .unwrap();
    let settled = pending.await.unwrap();
    assert_eq!(settled.answerer.as_deref(), Some("human"));
    assert_eq!(chose(&settled), ["Yes (Recommended)"]);
    // The deadline task notices the request settled and forgets it, without waiting it out.
    tokio::task::yield_now().await;
    assert_eq!(s.engine.deadline(request.id), None);
    assert!(s.human.withdrawn.lock().unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn shadow_rules_and_unmatched_requests_go_to_the_human() {
    let mut s = setup(RULES).await;
    for text in ["Guess a number?", "Something else?"] {
        let pending = ask(&s.service, text);
        let (request, responder) = s.offered.recv().await.unwrap();
        assert_eq!(request.questions[0].question, text);
        assert_eq!(s.engine.deadline(request.id), None);
        drop(responder); // The human passes too: nobody is left.
        let settled = pending.await.unwrap();
        assert_eq!(settled.answerer, None);
        let error = settled.result.unwrap_err().to_string();
        assert!(error.contains("no user-questions answerer"), "{error}");
    }
}

fn proposed(label: &str) -> Verdict {
    Verdict::Answer(answer(label))
}

#[tokio::test(start_paused = true)]
async fn shadow_proposals_are_kept_while_the_human_decides_and_dropped_when_it_settles() {
    let mut s = setup(&format!(
        "{RULES}\n[[rule]]\nname = \"guess deny\"\nmatch.question = \"^Guess\"\ndeny = \"no guessing\"\nmode = \"shadow\"\n"
    ))
    .await;
    let pending = ask(&s.service, "Guess a number?");
    let (request, responder) = s.offered.recv().await.unwrap();
    assert_eq!(
        s.engine.proposals(request.id),
        [
            Proposal {
                rule: "guess".into(),
                verdict: proposed("No"),
            },
            Proposal {
                rule: "guess deny".into(),
                verdict: Verdict::Deny("no guessing".into()),
            },
        ]
    );
    assert_eq!(s.engine.deadline(request.id), None);
    responder.decide(Decision::Claim(answer("No"))).unwrap();
    let settled = pending.await.unwrap();
    assert_eq!(
        settled.answerer.as_deref(),
        Some("human"),
        "a proposal never answers"
    );
    tokio::task::yield_now().await;
    assert_eq!(s.engine.proposals(request.id), []);

    // A request no shadow rule applies to has none.
    let pending = ask(&s.service, "Something else?");
    let (request, responder) = s.offered.recv().await.unwrap();
    assert_eq!(s.engine.proposals(request.id), []);
    drop(responder);
    pending.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_shadow_proposal_beside_a_deadline_goes_when_the_deadline_acts() {
    let mut s = setup(
        r#"
[[rule]]
name = "deploy guess"
match.question = "^Deploy"
answer = { recommended = true }
mode = "shadow"

[[rule]]
name = "slow deploy"
match.question = "^Deploy"
answer = "No"
after = "10m"
"#,
    )
    .await;
    let pending = ask(&s.service, "Deploy to staging?");
    let (request, _responder) = s.offered.recv().await.unwrap();
    assert_eq!(s.engine.deadline(request.id).unwrap().rule, "slow deploy");
    assert_eq!(
        s.engine.proposals(request.id),
        [Proposal {
            rule: "deploy guess".into(),
            verdict: proposed("Yes (Recommended)"),
        }]
    );
    let settled = pending.await.unwrap();
    assert_eq!(settled.answerer.as_deref(), Some("rule:slow deploy"));
    assert_eq!(s.engine.proposals(request.id), []);
    assert_eq!(s.engine.deadline(request.id), None);
}

#[tokio::test(start_paused = true)]
async fn a_rule_that_acts_at_once_leaves_no_proposals_behind() {
    let s = setup(
        r#"
[[rule]]
name = "clean guess"
match.question = "^Clean"
answer = "No"
mode = "shadow"

[[rule]]
name = "clean"
match.question = "^Clean"
answer = "Yes"
"#,
    )
    .await;
    let settled = ask(&s.service, "Clean up the build?").await.unwrap();
    assert_eq!(settled.answerer.as_deref(), Some("rule:clean"));
    // The service numbers its requests from 1: this was the first.
    assert_eq!(s.engine.proposals(RequestId(1)), []);
}

fn rewrite(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn a_broken_file_keeps_the_last_good_rules_and_answers_nothing() {
    let mut s = setup(RULES).await;
    let path = s.engine.path().to_owned();
    assert_eq!(s.engine.current().rules.rules.len(), 3);

    rewrite(
        &path,
        "[[rule]]\nname = \"clean\"\nanswer = \"Yes\"\nafter = \"soon\"\n",
    );
    assert!(!s.engine.reload().await);
    let loaded = s.engine.current();
    assert_eq!(loaded.rules.rules.len(), 3, "the last good rules stay");
    let error = loaded.error.expect("the breakage is reported");
    assert!(error.contains("line 4, column 9"), "{error}");
    let located = loaded.parse_error.expect("a parse error is located");
    assert_eq!((located.line, located.column), (4, 9));
    assert!(
        located.message.contains("\"soon\" is not a duration"),
        "{located:?}"
    );
    let settled = ask(&s.service, "Clean up the build?").await.unwrap();
    assert_eq!(settled.answerer.as_deref(), Some("rule:clean"));

    rewrite(
        &path,
        "[[rule]]\nname = \"only\"\nmatch.question = \"^Never\"\nask = true\n",
    );
    assert!(s.engine.reload().await);
    assert_eq!(s.engine.current().error, None);
    assert_eq!(s.engine.current().parse_error, None);
    let pending = ask(&s.service, "Clean up the build?");
    let (_, responder) = s.offered.recv().await.unwrap();
    drop(responder);
    assert!(pending.await.unwrap().result.is_err());
}

#[tokio::test]
async fn a_file_broken_from_the_start_is_no_rules() {
    let mut s = setup("[[rule]]\nname = \"x\"\n").await;
    let loaded = s.engine.current();
    assert!(loaded.rules.rules.is_empty());
    assert!(loaded.error.unwrap().contains("has no action"));
    let pending = ask(&s.service, "Clean up the build?");
    let (_, responder) = s.offered.recv().await.unwrap();
    drop(responder);
    assert_eq!(pending.await.unwrap().answerer, None);
}

#[tokio::test]
async fn the_watcher_reloads_a_changed_file() {
    let s = setup("").await;
    let mut changes = s.engine.subscribe();
    let stop = CancellationToken::new();
    let watcher = tokio::spawn(
        s.engine
            .clone()
            .watch(Duration::from_millis(10), stop.clone()),
    );
    rewrite(s.engine.path(), RULES);
    tokio::time::timeout(
        Duration::from_secs(30),
        changes.wait_for(|l| l.rules.rules.len() == 3),
    )
    .await
    .expect("the change is picked up")
    .unwrap();
    rewrite(s.engine.path(), "this is not toml");
    tokio::time::timeout(
        Duration::from_secs(30),
        changes.wait_for(|l| l.error.is_some()),
    )
    .await
    .expect("the breakage is picked up")
    .unwrap();
    assert_eq!(s.engine.current().rules.rules.len(), 3);
    std::fs::remove_file(s.engine.path()).unwrap();
    tokio::time::timeout(
        Duration::from_secs(30),
        changes.wait_for(|l| l.rules.rules.is_empty() && l.error.is_none()),
    )
    .await
    .expect("a removed file is no rules")
    .unwrap();
    stop.cancel();
    watcher.await.unwrap();
}

/// Waits (up to 30 s of real time) until the engine's rules satisfy `ready`.
async fn picked_up(
    changes: &mut tokio::sync::watch::Receiver<askdesk_rules::Loaded>,
    what: &str,
    ready: impl FnMut(&askdesk_rules::Loaded) -> bool,
) {
    tokio::time::timeout(Duration::from_secs(30), changes.wait_for(ready))
        .await
        .unwrap_or_else(|_| panic!("{what} is not picked up"))
        .unwrap();
}

/// Follows the engine's file, polling once an hour: anything picked up within a test was reported
/// by the system. Returns once the watch has had time to be set up.
async fn following(engine: &Engine) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let stop = CancellationToken::new();
    let follower = tokio::spawn(
        engine
            .clone()
            .follow(Duration::from_secs(3600), stop.clone()),
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    (stop, follower)
}

/// Each state the engine's rules go through from now until they number `last`: how many rules,
/// and whether the file was broken.
fn went_through(engine: &Engine, last: usize) -> tokio::task::JoinHandle<Vec<(usize, bool)>> {
    let mut changes = engine.subscribe();
    tokio::spawn(async move {
        let mut counts = Vec::new();
        while changes.changed().await.is_ok() {
            let loaded = changes.borrow_and_update().clone();
            counts.push((loaded.rules.rules.len(), loaded.error.is_some()));
            if loaded.rules.rules.len() == last {
                break;
            }
        }
        counts
    })
}

#[tokio::test]
async fn the_follower_is_told_of_changes_instead_of_polling() {
    // Polling once an hour: anything picked up within the test was reported by the system.
    let s = setup("").await;
    let mut changes = s.engine.subscribe();
    let (stop, follower) = following(&s.engine).await;
    rewrite(s.engine.path(), RULES);
    picked_up(&mut changes, "a file written in place", |l| {
        l.rules.rules.len() == 3
    })
    .await;

    // An editor's save: a new file renamed over the old one.
    let fresh = s.engine.path().with_file_name("rules.toml.new");
    std::fs::write(&fresh, "this is not toml").unwrap();
    std::fs::rename(&fresh, s.engine.path()).unwrap();
    picked_up(&mut changes, "a file renamed into place", |l| {
        l.error.is_some()
    })
    .await;
    assert_eq!(s.engine.current().rules.rules.len(), 3);

    // A save that truncates the file and writes it a while later is read once it is closed:
    // the rules never pass through "none" on the way.
    let seen = went_through(&s.engine, 1);
    {
        use std::io::Write;
        let mut slow = std::fs::File::create(s.engine.path()).unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        slow.write_all(b"[[rule]]\nname = \"one\"\nanswer = \"Yes\"\n")
            .unwrap();
    }
    let counts = tokio::time::timeout(Duration::from_secs(30), seen)
        .await
        .expect("the slow save is picked up")
        .unwrap();
    assert_eq!(counts, vec![(1, false)], "what the engine went through");

    std::fs::remove_file(s.engine.path()).unwrap();
    picked_up(&mut changes, "a removed file", |l| {
        l.rules.rules.is_empty() && l.error.is_none()
    })
    .await;
    stop.cancel();
    follower.await.unwrap();
}

#[tokio::test]
async fn a_file_made_and_written_in_pieces_is_read_once_it_is_closed() {
    // Polling once an hour: only the system's reports count.
    let s = setup(RULES).await;
    let seen = went_through(&s.engine, 4);
    let (stop, follower) = following(&s.engine).await;
    // The file is removed and made again (IN_DELETE, IN_CREATE), written in pieces, each a
    // valid rules file with fewer rules, well apart, and closed at the end (IN_CLOSE_WRITE).
    std::fs::remove_file(s.engine.path()).unwrap();
    {
        use std::io::Write;
        let mut slow = std::fs::File::create(s.engine.path()).unwrap();
        for piece in [RULES, "\n[[rule]]\nname = \"fourth\"\nask = true\n"] {
            tokio::time::sleep(Duration::from_millis(300)).await;
            slow.write_all(piece.as_bytes()).unwrap();
            slow.flush().unwrap();
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let counts = tokio::time::timeout(Duration::from_secs(30), seen)
        .await
        .expect("the finished file is picked up")
        .unwrap();
    // Removing the file is a finished change (no rules), read only if the file is still gone
    // when it is read; never the empty new file or its first piece.
    assert!(
        counts == [(4, false)] || counts == [(0, false), (4, false)],
        "what the engine went through: {counts:?}"
    );
    stop.cancel();
    follower.await.unwrap();
}

#[tokio::test]
async fn the_follower_makes_a_missing_directory_and_follows_it() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("askdesk").join("rules.toml");
    let engine = Engine::open(path.clone()).await;
    let mut changes = engine.subscribe();
    let stop = CancellationToken::new();
    let follower = tokio::spawn(
        engine
            .clone()
            .follow(Duration::from_secs(3600), stop.clone()),
    );
    // The directory is there once the follower runs; the file written next is picked up.
    tokio::time::timeout(Duration::from_secs(10), async {
        while !path.parent().unwrap().is_dir() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the directory is made");
    tokio::time::sleep(Duration::from_millis(200)).await;
    std::fs::write(&path, RULES).unwrap();
    picked_up(&mut changes, "the new file", |l| l.rules.rules.len() == 3).await;
    stop.cancel();
    follower.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_held_deadline_never_acts_and_resumes_with_the_time_it_had_left() {
    let mut s = setup(RULES).await;
    let started = tokio::time::Instant::now();
    let pending = ask(&s.service, "Deploy to staging?");
    let (request, responder) = s.offered.recv().await.unwrap();
    let deadline = s.engine.deadline(request.id).unwrap();
    assert_eq!(
        deadline.answer,
        Some(answer("No")),
        "the answer it will give"
    );

    // Held with four minutes left, for far longer than the deadline.
    tokio::time::sleep(Duration::from_secs(360)).await;
    let held = s.engine.hold(request.id, true).unwrap();
    assert_eq!(held.held, s.engine.deadline(request.id).unwrap().held);
    // (The time left the page shows is on the wall clock, which paused time does not move.)
    let left = held.held.expect("held");
    assert!(left <= Duration::from_secs(600), "{left:?}");
    tokio::time::sleep(Duration::from_secs(7200)).await;
    assert!(!pending.is_finished(), "a held deadline never acts");
    assert!(!responder.is_withdrawn());

    // Released: the four minutes run again, from now.
    let released = tokio::time::Instant::now();
    assert_eq!(s.engine.hold(request.id, false).unwrap().held, None);
    tokio::time::sleep(Duration::from_secs(239)).await;
    assert!(
        !pending.is_finished(),
        "not before the time left has passed"
    );
    let settled = pending.await.unwrap();
    assert_eq!(released.elapsed(), Duration::from_secs(240));
    assert_eq!(started.elapsed(), Duration::from_secs(600 + 7200));
    assert_eq!(settled.answerer.as_deref(), Some("rule:slow deploy"));

    // Nothing is left to hold once the rule acted.
    assert_eq!(
        s.engine.hold(request.id, true),
        Err(askdesk_rules::HoldError::NoDeadline)
    );
}

#[tokio::test(start_paused = true)]
async fn a_hold_made_as_the_time_runs_out_wins_and_the_human_answers() {
    let mut s = setup(RULES).await;
    let pending = ask(&s.service, "Deploy to staging?");
    let (request, responder) = s.offered.recv().await.unwrap();
    // The time is up, and the hold comes before the deadline task has run.
    tokio::time::advance(Duration::from_secs(600)).await;
    s.engine.hold(request.id, true).unwrap();
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert!(
        !pending.is_finished(),
        "the held request waits for the human"
    );
    responder
        .decide(Decision::Claim(answer("Yes (Recommended)")))
        .unwrap();
    let settled = pending.await.unwrap();
    assert_eq!(settled.answerer.as_deref(), Some("human"));
    assert_eq!(chose(&settled), ["Yes (Recommended)"]);
}

#[tokio::test(start_paused = true)]
async fn the_human_is_told_the_deadline_as_it_is_held_and_released() {
    let mut s = setup(RULES).await;
    let pending = ask(&s.service, "Deploy to staging?");
    let (request, responder) = s.offered.recv().await.unwrap();
    let told = || s.human.deadlines.lock().unwrap().clone();
    let at = s.engine.deadline(request.id).unwrap().at;
    assert_eq!(told(), [(request.id, Some(at))], "told once it holds it");
    s.engine.hold(request.id, true).unwrap();
    assert_eq!(told().last(), Some(&(request.id, None)), "no clock runs");
    let released = s.engine.hold(request.id, false).unwrap().at;
    assert_eq!(told().last(), Some(&(request.id, Some(released))));
    assert_eq!(told().len(), 3);
    responder
        .decide(Decision::Claim(answer("Yes (Recommended)")))
        .unwrap();
    pending.await.unwrap();
}
