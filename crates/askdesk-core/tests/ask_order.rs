//! `ask()` outcomes of protocol section 2: one test per row of the table, the order of the checks
//! (data-driven over every combination of failures), and what answerers' failures become.

mod common;

use askdesk_core::{
    AgentRegistration, Answer, AnswerItem, AskError, Config, ErrorCode, Failure, Handle, Question,
    Scope, Service, ShapeError, UserQuestionError,
};
use common::*;
use tokio_util::sync::CancellationToken;

/// Which agent a case asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caller {
    /// No agent.
    Nobody,
    /// The live root "root".
    Root,
    /// The handle of "gone", which was unregistered.
    Unregistered,
    /// The id "root" with a made-up instance token.
    MadeUp,
    /// "child", live and owned by "root".
    Child,
}

#[derive(Debug, Clone, PartialEq)]
enum Expected {
    /// Claimed by the answerer, every question skipped.
    Answered,
    /// A shape error at this path.
    Shape(&'static str, &'static str),
    /// A domain error with this code and message.
    Code(&'static str, String),
}

#[derive(Debug, Clone)]
struct Case {
    name: String,
    cancelled: bool,
    caller: Caller,
    questions: Vec<Question>,
    /// Whether an answerer that claims everything is registered.
    provider: bool,
    expected: Expected,
}

impl Case {
    fn new(name: impl Into<String>, questions: Vec<Question>, expected: Expected) -> Self {
        Case {
            name: name.into(),
            cancelled: false,
            caller: Caller::Nobody,
            questions,
            provider: true,
            expected,
        }
    }
    fn cancelled(mut self) -> Self {
        self.cancelled = true;
        self
    }
    fn caller(mut self, caller: Caller) -> Self {
        self.caller = caller;
        self
    }
    fn no_provider(mut self) -> Self {
        self.provider = false;
        self
    }
}

fn code(code: &'static str, message: &str) -> Expected {
    Expected::Code(code, message.to_owned())
}

/// Runs one case on a fresh service and checks its outcome, and that a request refused before
/// dispatch reaches no answerer and leaves nothing pending.
async fn check(case: Case) {
    let service = Service::new(Config::default());
    let root = service
        .register_agent(AgentRegistration {
            id: "root".into(),
            ..Default::default()
        })
        .unwrap();
    let child = service
        .register_agent(AgentRegistration {
            id: "child".into(),
            owner: Some(root.clone()),
            ..Default::default()
        })
        .unwrap();
    let gone = service
        .register_agent(AgentRegistration {
            id: "gone".into(),
            ..Default::default()
        })
        .unwrap();
    service.unregister_agent(&gone).unwrap();
    let made_up = Handle {
        id: "root".into(),
        instance: "0123456789abcdef0123456789abcdef".into(),
    };
    let log = Log::default();
    if case.provider {
        register(&service, "claims", Script::Claim, Scope::All, false, &log);
    }
    let agent = match case.caller {
        Caller::Nobody => None,
        Caller::Root => Some(root),
        Caller::Unregistered => Some(gone),
        Caller::MadeUp => Some(made_up),
        Caller::Child => Some(child),
    };
    let cancel = CancellationToken::new();
    if case.cancelled {
        cancel.cancel();
    }
    let result = service
        .ask(ask_request(case.questions.clone(), agent.as_ref()), &cancel)
        .await;
    let name = &case.name;
    match &case.expected {
        Expected::Answered => assert_eq!(result, Ok(skipped(&case.questions)), "case {name}"),
        Expected::Shape(path, problem) => {
            assert_eq!(
                result,
                Err(AskError::Invalid(ShapeError::new(*path, *problem))),
                "case {name}"
            )
        }
        Expected::Code(code, message) => match &result {
            Err(AskError::Question(UserQuestionError {
                code: got,
                message: got_message,
            })) => {
                assert_eq!(
                    (got.as_str(), got_message.as_str()),
                    (*code, message.as_str()),
                    "case {name}"
                )
            }
            other => panic!("case {name}: expected {code}, got {other:?}"),
        },
    }
    let dispatched = matches!(
        case.expected,
        Expected::Answered | Expected::Code("NO_PROVIDER", _)
    );
    if !dispatched {
        assert_eq!(
            log.offered(),
            Vec::<String>::new(),
            "case {name}: refused before dispatch"
        );
    }
    assert!(
        service.pending().is_empty(),
        "case {name}: nothing left pending"
    );
}

fn bad_approve_message(id: &str, kind: &str, label: &str) -> String {
    format!("question {id} declares intent {kind} whose approve label {label} names none of its options")
}

fn no_detail_message(id: &str, kind: &str) -> String {
    format!("question {id} declares intent {kind} without the detail it reviews")
}

// ----- one test per row of the table -----

#[tokio::test]
async fn row_1_already_cancelled_is_ask_aborted() {
    check(Case::new("aborted", vec![question("a")], code("ASK_ABORTED", ABORTED)).cancelled())
        .await;
}

#[tokio::test]
async fn row_2_empty_batch_is_empty_questions() {
    check(Case::new("empty", vec![], code("EMPTY_QUESTIONS", EMPTY))).await;
}

#[tokio::test]
async fn row_3_agent_not_live_is_caller_not_live() {
    check(
        Case::new(
            "unregistered",
            vec![question("a")],
            code("CALLER_NOT_LIVE", NOT_LIVE),
        )
        .caller(Caller::Unregistered),
    )
    .await;
    check(
        Case::new(
            "made up",
            vec![question("a")],
            code("CALLER_NOT_LIVE", NOT_LIVE),
        )
        .caller(Caller::MadeUp),
    )
    .await;
}

#[tokio::test]
async fn row_4_owned_agent_is_delegated_caller() {
    check(
        Case::new(
            "child",
            vec![question("a")],
            code("DELEGATED_CALLER", DELEGATED),
        )
        .caller(Caller::Child),
    )
    .await;
}

#[tokio::test]
async fn row_5a_approve_label_not_an_option_is_bad_intent() {
    let q = with_intent("plan", "plan-review", "Ship it", Some("# Plan"));
    let message = bad_approve_message("plan", "plan-review", "\"Ship it\"");
    assert_eq!(
        message,
        r#"question plan declares intent plan-review whose approve label "Ship it" names none of its options"#
    );
    check(Case::new(
        "5a",
        vec![q],
        Expected::Code("BAD_INTENT", message),
    ))
    .await;
}

#[tokio::test]
async fn row_5a_label_is_json_quoted() {
    let q = with_intent("plan", "plan-review", "Say \"go\"\n", Some("# Plan"));
    let message = r#"question plan declares intent plan-review whose approve label "Say \"go\"\n" names none of its options"#;
    check(Case::new("5a quoted", vec![q], code("BAD_INTENT", message))).await;
}

#[tokio::test]
async fn row_5b_intent_without_detail_is_bad_intent() {
    let q = with_intent("plan", "plan-review", "Approve", None);
    let message = "question plan declares intent plan-review without the detail it reviews";
    check(Case::new("5b", vec![q], code("BAD_INTENT", message))).await;
}

#[tokio::test]
async fn row_6_nobody_claims_is_no_provider() {
    check(
        Case::new(
            "no answerer",
            vec![question("a")],
            code("NO_PROVIDER", NO_PROVIDER),
        )
        .no_provider(),
    )
    .await;

    // Answerers that all delegate are no better than none.
    let service = Service::new(Config::default());
    let log = Log::default();
    register(&service, "one", Script::Delegate, Scope::All, false, &log);
    register(&service, "two", Script::Delegate, Scope::All, true, &log);
    let result = service
        .ask(
            ask_request(vec![question("a")], None),
            &CancellationToken::new(),
        )
        .await;
    assert_question_error(result, "NO_PROVIDER", NO_PROVIDER);
    assert_eq!(log.offered(), ["two", "one"]);
}

#[tokio::test]
async fn valid_requests_are_answered() {
    check(Case::new(
        "plain",
        vec![question("a"), question("b")],
        Expected::Answered,
    ))
    .await;
    check(Case::new("root", vec![question("a")], Expected::Answered).caller(Caller::Root)).await;
    let plan = with_intent("plan", "plan-review", "Approve", Some("# Plan"));
    check(Case::new("plan review", vec![plan], Expected::Answered)).await;
    // Unknown intent kinds pass through when consistent.
    let gate = with_intent("gate", "deploy-gate", "Approve", Some("deploy to prod"));
    check(Case::new("unknown kind", vec![gate], Expected::Answered)).await;
}

// ----- the order of the checks -----

#[tokio::test]
async fn named_orderings() {
    let bad_id = Question {
        id: String::new(),
        ..question("x")
    };
    let bad_intent = || with_intent("plan", "plan-review", "Ship", Some("# Plan"));
    let bad_intent_message = bad_approve_message("plan", "plan-review", "\"Ship\"");
    let cases = vec![
        Case::new(
            "shape beats everything",
            vec![bad_id.clone(), bad_intent()],
            Expected::Shape("questions[0].id", "expected a non-empty string"),
        )
        .cancelled()
        .caller(Caller::Child)
        .no_provider(),
        Case::new(
            "shape beats cancelled",
            vec![question("a"), bad_id.clone()],
            Expected::Shape("questions[1].id", "expected a non-empty string"),
        )
        .cancelled(),
        Case::new(
            "cancelled beats empty",
            vec![],
            code("ASK_ABORTED", ABORTED),
        )
        .cancelled(),
        Case::new(
            "cancelled beats stale agent",
            vec![question("a")],
            code("ASK_ABORTED", ABORTED),
        )
        .cancelled()
        .caller(Caller::Unregistered),
        Case::new(
            "empty with stale agent",
            vec![],
            code("EMPTY_QUESTIONS", EMPTY),
        )
        .caller(Caller::Unregistered),
        Case::new(
            "empty with owned child",
            vec![],
            code("EMPTY_QUESTIONS", EMPTY),
        )
        .caller(Caller::Child),
        Case::new(
            "stale agent with bad intent",
            vec![bad_intent()],
            code("CALLER_NOT_LIVE", NOT_LIVE),
        )
        .caller(Caller::Unregistered),
        Case::new(
            "made-up token with bad intent",
            vec![bad_intent()],
            code("CALLER_NOT_LIVE", NOT_LIVE),
        )
        .caller(Caller::MadeUp),
        Case::new(
            "owned child with bad intent",
            vec![bad_intent()],
            code("DELEGATED_CALLER", DELEGATED),
        )
        .caller(Caller::Child),
        Case::new(
            "owned child without answerer",
            vec![question("a")],
            code("DELEGATED_CALLER", DELEGATED),
        )
        .caller(Caller::Child)
        .no_provider(),
        Case::new(
            "bad intent without answerer",
            vec![bad_intent()],
            Expected::Code("BAD_INTENT", bad_intent_message.clone()),
        )
        .no_provider(),
        Case::new(
            "bad intent from a root",
            vec![bad_intent()],
            Expected::Code("BAD_INTENT", bad_intent_message),
        )
        .caller(Caller::Root),
        // 5a before 5b within one question.
        Case::new(
            "5a before 5b",
            vec![
                question("a"),
                with_intent("plan", "plan-review", "Ship", None),
            ],
            Expected::Code(
                "BAD_INTENT",
                bad_approve_message("plan", "plan-review", "\"Ship\""),
            ),
        ),
        // Batch order across questions: an earlier question's 5b beats a later question's 5a.
        Case::new(
            "earlier question's 5b before a later question's 5a",
            vec![
                with_intent("first", "plan-review", "Approve", None),
                with_intent("second", "plan-review", "Ship", Some("# Plan")),
            ],
            Expected::Code("BAD_INTENT", no_detail_message("first", "plan-review")),
        ),
        Case::new(
            "earlier question's 5a before a later question's 5a",
            vec![
                with_intent("first", "deploy-gate", "Go", Some("d")),
                with_intent("second", "plan-review", "Ship", Some("d")),
            ],
            Expected::Code(
                "BAD_INTENT",
                bad_approve_message("first", "deploy-gate", "\"Go\""),
            ),
        ),
        Case::new(
            "a consistent intent does not hide a later bad one",
            vec![
                with_intent("first", "plan-review", "Approve", Some("d")),
                with_intent("second", "deploy-gate", "Revise", None),
            ],
            Expected::Code("BAD_INTENT", no_detail_message("second", "deploy-gate")),
        ),
    ];
    for case in cases {
        check(case).await;
    }
}

/// The failures of protocol section 2 in step order, shape first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Shape,
    Cancelled,
    Empty,
    NotLive,
    Owned,
    BadIntent,
    NoAnswerer,
}

const FAULTS: [Fault; 7] = [
    Fault::Shape,
    Fault::Cancelled,
    Fault::Empty,
    Fault::NotLive,
    Fault::Owned,
    Fault::BadIntent,
    Fault::NoAnswerer,
];

/// Builds the request that has exactly `faults`, or `None` when they cannot coexist (an empty
/// batch has no question to be malformed; one agent cannot be both stale and owned).
/// `alternate` picks the other flavour of each fault: a made-up token instead of an unregistered
/// handle, a bad intent that also lacks its detail (5a still wins), a root caller instead of none.
fn combined(faults: &[Fault], alternate: bool) -> Option<Case> {
    let has = |f: Fault| faults.contains(&f);
    if has(Fault::Empty) && (has(Fault::Shape) || has(Fault::BadIntent))
        || has(Fault::NotLive) && has(Fault::Owned)
    {
        return None;
    }
    let mut questions = Vec::new();
    if !has(Fault::Empty) {
        questions.push(question("ok"));
        if has(Fault::Shape) {
            questions.push(Question {
                id: String::new(),
                ..question("x")
            });
        }
        if has(Fault::BadIntent) {
            questions.push(with_intent(
                "plan",
                "plan-review",
                "Ship",
                if alternate { None } else { Some("# Plan") },
            ));
        }
    }
    let expected = match faults.first() {
        None => Expected::Answered,
        Some(Fault::Shape) => Expected::Shape("questions[1].id", "expected a non-empty string"),
        Some(Fault::Cancelled) => code("ASK_ABORTED", ABORTED),
        Some(Fault::Empty) => code("EMPTY_QUESTIONS", EMPTY),
        Some(Fault::NotLive) => code("CALLER_NOT_LIVE", NOT_LIVE),
        Some(Fault::Owned) => code("DELEGATED_CALLER", DELEGATED),
        Some(Fault::BadIntent) => Expected::Code(
            "BAD_INTENT",
            bad_approve_message("plan", "plan-review", "\"Ship\""),
        ),
        Some(Fault::NoAnswerer) => code("NO_PROVIDER", NO_PROVIDER),
    };
    let mut case = Case::new(format!("{faults:?}"), questions, expected);
    case.cancelled = has(Fault::Cancelled);
    case.provider = !has(Fault::NoAnswerer);
    case.caller = if has(Fault::NotLive) {
        if alternate {
            Caller::MadeUp
        } else {
            Caller::Unregistered
        }
    } else if has(Fault::Owned) {
        Caller::Child
    } else if alternate {
        Caller::Root
    } else {
        Caller::Nobody
    };
    Some(case)
}

/// Every combination of failures: the earliest step's failure is the one reported.
#[tokio::test]
async fn every_combination_reports_the_earliest_failure() {
    let mut checked = 0;
    for mask in 0u32..(1 << FAULTS.len()) {
        let faults: Vec<Fault> = FAULTS
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, f)| *f)
            .collect();
        for alternate in [false, true] {
            if let Some(case) = combined(&faults, alternate) {
                check(case).await;
                checked += 1;
            }
        }
    }
    // 128 subsets minus those with an impossible pair, each in two variants.
    assert_eq!(checked, 2 * 60);
}

// ----- after dispatch: what answerers' decisions become -----

async fn ask_through(script: Script, questions: Vec<Question>) -> Result<Answer, AskError> {
    let service = Service::new(Config::default());
    let log = Log::default();
    register(&service, "first", script, Scope::All, false, &log);
    register(&service, "fallback", Script::Claim, Scope::All, false, &log);
    let result = service
        .ask(ask_request(questions, None), &CancellationToken::new())
        .await;
    if result.is_err() {
        assert_eq!(log.offered(), ["first"], "a failure ends the waterfall");
    }
    assert!(service.pending().is_empty());
    result
}

#[tokio::test]
async fn ask_cancelled_passes_through_unchanged() {
    let result = ask_through(
        Script::Fail(Failure::Domain(UserQuestionError::cancelled_by_user())),
        vec![question("a")],
    )
    .await;
    assert_question_error(result, "ASK_CANCELLED", CANCELLED);
}

#[tokio::test]
async fn ask_cancelled_passes_through_from_a_later_decision() {
    let service = Service::new(Config::default());
    let log = Log::default();
    let (_, mut holds) = register(&service, "gui", Script::Hold, Scope::All, false, &log);
    register(&service, "fallback", Script::Claim, Scope::All, false, &log);
    let ask = tokio::spawn(service.ask(
        ask_request(vec![question("a")], None),
        &CancellationToken::new(),
    ));
    let held = holds.next().await;
    let dismissed = UserQuestionError::new(ErrorCode::AskCancelled, CANCELLED);
    held.responder
        .decide(askdesk_core::Decision::Fail(Failure::Domain(dismissed)))
        .unwrap();
    assert_question_error(ask.await.unwrap(), "ASK_CANCELLED", CANCELLED);
    assert_eq!(log.offered(), ["gui"]);
}

#[tokio::test]
async fn an_answerers_own_code_passes_through_unchanged() {
    let own = UserQuestionError::new(
        ErrorCode::parse("RATE_LIMITED"),
        "too many questions this hour; try at 15:00",
    );
    let result = ask_through(Script::Fail(Failure::Domain(own)), vec![question("a")]).await;
    assert_eq!(
        result.as_ref().unwrap_err().code(),
        Some(&ErrorCode::Other("RATE_LIMITED".into()))
    );
    assert_question_error(
        result,
        "RATE_LIMITED",
        "too many questions this hour; try at 15:00",
    );
}

#[tokio::test]
async fn a_non_domain_failure_is_internal_with_the_answerer_label() {
    let result = ask_through(
        Script::Fail(Failure::Internal("socket reset by peer".into())),
        vec![question("a")],
    )
    .await;
    assert_eq!(
        result,
        Err(AskError::Internal {
            answerer: "first".into(),
            message: "socket reset by peer".into()
        })
    );

    // An answerer registered without a label is named by its id.
    let service = Service::new(Config::default());
    let (answerer, _) = scripted(
        "unlabelled",
        Script::Fail(Failure::Internal("boom".into())),
        &Log::default(),
    );
    let registration = askdesk_core::AnswererRegistration {
        scope: Scope::All,
        prepend: false,
        label: None,
        group: None,
    };
    let id = service.register_answerer(registration, answerer).unwrap();
    let result = service
        .ask(
            ask_request(vec![question("a")], None),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(
        result,
        Err(AskError::Internal {
            answerer: id.to_string(),
            message: "boom".into()
        })
    );
    assert!(id.to_string().starts_with("answerer-"));
}

#[tokio::test]
async fn a_rule_breaking_answer_is_bad_answer() {
    let item = |id: &str, selected: &[&str], custom: Option<&str>| AnswerItem {
        id: id.into(),
        selected: selected.iter().map(|s| s.to_string()).collect(),
        custom: custom.map(str::to_owned),
        ..Default::default()
    };
    let bad = [
        (vec![item("a", &["Yes"], None)], "one per question"),
        (
            vec![item("a", &["Maybe"], None), item("b", &[], None)],
            "no option \"Maybe\"",
        ),
        (
            vec![item("a", &["Yes", "No"], None), item("b", &[], None)],
            "single-select",
        ),
        (
            vec![item("a", &["Yes"], Some("and")), item("b", &[], None)],
            "single-select",
        ),
        (
            vec![item("a", &[], None), item("zz", &[], None)],
            "no answer item for question \"b\"",
        ),
    ];
    for (items, needle) in bad {
        let result = ask_through(
            Script::Answer(Answer {
                answers: items.clone(),
            }),
            vec![question("a"), question("b")],
        )
        .await;
        match result {
            Err(AskError::Question(e)) => {
                assert_eq!(e.code, ErrorCode::BadAnswer, "{items:?}");
                assert!(e.message.contains(needle), "{items:?}: {}", e.message);
            }
            other => panic!("{items:?}: expected BAD_ANSWER, got {other:?}"),
        }
    }
    // A right answer in the wrong order is put in question order, not refused.
    let reversed = Answer {
        answers: vec![item("b", &[], Some("later")), item("a", &["No"], None)],
    };
    let result = ask_through(Script::Answer(reversed), vec![question("a"), question("b")]).await;
    assert_eq!(
        result,
        Ok(Answer {
            answers: vec![item("a", &["No"], None), item("b", &[], Some("later"))]
        })
    );
}

// ----- shape errors name the first offending field, short batches and long alike -----

#[tokio::test]
async fn duplicates_are_found_in_field_order_at_any_size() {
    let service = Service::new(Config::default());
    let ask = |questions: Vec<Question>| {
        service.ask(ask_request(questions, None), &CancellationToken::new())
    };
    let ids = |n: usize| {
        (0..n)
            .map(|i| question(&format!("q{i}")))
            .collect::<Vec<_>>()
    };

    for n in [2, 10, 16, 17, 64] {
        let mut questions = ids(n);
        questions[n - 1].id = "q0".into();
        let expected = ShapeError::new(
            format!("questions[{}].id", n - 1),
            "duplicate question id \"q0\"",
        );
        assert_eq!(
            ask(questions).await,
            Err(AskError::Invalid(expected)),
            "{n} questions"
        );

        let mut one = question("a");
        one.options = (0..n).map(|j| option(&format!("o{j}"))).collect();
        one.options[n - 1].label = format!("o{}", n / 2 - 1);
        let expected = ShapeError::new(
            format!("questions[0].options[{}].label", n - 1),
            format!("duplicate option label \"o{}\"", n / 2 - 1),
        );
        assert_eq!(
            ask(vec![one]).await,
            Err(AskError::Invalid(expected)),
            "{n} options"
        );
    }

    // An earlier field's problem is reported before a later question's duplicate id.
    for n in [3, 40] {
        let mut questions = ids(n);
        questions[1].question = String::new();
        questions[n - 1].id = "q0".into();
        let expected = ShapeError::new("questions[1].question", "expected a non-empty string");
        assert_eq!(
            ask(questions).await,
            Err(AskError::Invalid(expected)),
            "{n} questions"
        );
    }

    // The same label in different questions is fine.
    register(
        &service,
        "claims",
        Script::Claim,
        Scope::All,
        false,
        &Log::default(),
    );
    let questions = ids(40);
    assert_eq!(ask(questions.clone()).await, Ok(skipped(&questions)));
}
