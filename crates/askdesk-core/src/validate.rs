//! Shape validation of a batch (protocol 1.1) and validation of an answerer's answer (protocol 1.2).

use std::collections::HashSet;

use crate::error::{ShapeError, UserQuestionError};
use crate::types::{Answer, AnswerItem, Question};

/// Size bounds of a request. The defaults are protocol 1.1's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_questions: usize,
    pub max_options: usize,
    /// Bytes of UTF-8 text in any one string field.
    pub max_field_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_questions: 64,
            max_options: 64,
            max_field_bytes: 256 * 1024,
        }
    }
}

/// Checks the shape rules of protocol 1.1; the error names the first offending field's path.
///
/// An empty batch passes here: it is the domain error `EMPTY_QUESTIONS`, checked later in order.
pub fn check_shape(questions: &[Question], limits: &Limits) -> Result<(), ShapeError> {
    if questions.len() > limits.max_questions {
        return Err(ShapeError::new(
            "questions",
            format!(
                "at most {} questions are allowed, got {}",
                limits.max_questions,
                questions.len()
            ),
        ));
    }
    let text = |path: &dyn Fn() -> String, value: &str, required: bool| -> Result<(), ShapeError> {
        if required && value.is_empty() {
            return Err(ShapeError::new(path(), "expected a non-empty string"));
        }
        if value.len() > limits.max_field_bytes {
            return Err(ShapeError::new(
                path(),
                format!(
                    "text of {} bytes is over the limit of {} bytes",
                    value.len(),
                    limits.max_field_bytes
                ),
            ));
        }
        Ok(())
    };
    let mut ids = Seen::new(questions.len());
    for (i, q) in questions.iter().enumerate() {
        text(&|| format!("questions[{i}].id"), &q.id, true)?;
        if ids.repeats(&questions[..i], |q| &q.id, &q.id) {
            return Err(ShapeError::new(
                format!("questions[{i}].id"),
                format!("duplicate question id {:?}", q.id),
            ));
        }
        text(&|| format!("questions[{i}].question"), &q.question, true)?;
        if let Some(header) = &q.header {
            text(&|| format!("questions[{i}].header"), header, false)?;
        }
        if let Some(detail) = &q.detail {
            text(&|| format!("questions[{i}].detail"), detail, false)?;
        }
        if q.options.len() > limits.max_options {
            return Err(ShapeError::new(
                format!("questions[{i}].options"),
                format!(
                    "at most {} options are allowed, got {}",
                    limits.max_options,
                    q.options.len()
                ),
            ));
        }
        let mut labels = Seen::new(q.options.len());
        for (j, option) in q.options.iter().enumerate() {
            text(
                &|| format!("questions[{i}].options[{j}].label"),
                &option.label,
                true,
            )?;
            if labels.repeats(&q.options[..j], |o| &o.label, &option.label) {
                return Err(ShapeError::new(
                    format!("questions[{i}].options[{j}].label"),
                    format!("duplicate option label {:?}", option.label),
                ));
            }
            if let Some(description) = &option.description {
                text(
                    &|| format!("questions[{i}].options[{j}].description"),
                    description,
                    false,
                )?;
            }
        }
        if let Some(intent) = &q.intent {
            text(
                &|| format!("questions[{i}].intent.kind"),
                &intent.kind,
                true,
            )?;
            text(
                &|| format!("questions[{i}].intent.approve"),
                &intent.approve,
                false,
            )?;
        }
    }
    Ok(())
}

/// Finds repeated keys (question ids, option labels) in field order.
///
/// Short lists, the common case, are scanned without allocating; longer ones (limits can be
/// raised) use a set so the check stays linear.
enum Seen<'a> {
    Scan,
    Set(HashSet<&'a str>),
}

impl<'a> Seen<'a> {
    const SCAN_UP_TO: usize = 16;

    fn new(len: usize) -> Self {
        if len <= Self::SCAN_UP_TO {
            Seen::Scan
        } else {
            Seen::Set(HashSet::with_capacity(len))
        }
    }

    /// Whether `key`, the key of the item after `earlier`, is the key of one of `earlier`.
    fn repeats<T>(&mut self, earlier: &[T], key_of: impl Fn(&T) -> &String, key: &'a str) -> bool {
        match self {
            Seen::Scan => earlier.iter().any(|item| key_of(item) == key),
            Seen::Set(set) => !set.insert(key),
        }
    }
}

/// Checks step 5 of protocol 2 for every question in batch order, 5a before 5b. A `detail` that is
/// empty or only whitespace is no detail: there is nothing in it to review.
pub fn check_intents(questions: &[Question]) -> Result<(), UserQuestionError> {
    for q in questions {
        let Some(intent) = &q.intent else { continue };
        if !q.options.iter().any(|o| o.label == intent.approve) {
            return Err(UserQuestionError::bad_intent_approve(
                &q.id,
                &intent.kind,
                &intent.approve,
            ));
        }
        if q.detail
            .as_deref()
            .is_none_or(|detail| detail.trim().is_empty())
        {
            return Err(UserQuestionError::bad_intent_detail(&q.id, &intent.kind));
        }
    }
    Ok(())
}

/// Checks an answer against protocol 1.2 and returns it with its items in question order.
///
/// The error is `BAD_ANSWER` with a message that says what is wrong.
pub fn check_answer(questions: &[Question], answer: Answer) -> Result<Answer, UserQuestionError> {
    let mut items = answer.answers;
    if items.len() != questions.len() {
        return Err(UserQuestionError::bad_answer(format_args!(
            "expected {} answer items, one per question, got {}",
            questions.len(),
            items.len()
        )));
    }
    // Order items by their question, answering the common in-order case without searching.
    for (i, q) in questions.iter().enumerate() {
        if items[i].id != q.id {
            match items[i + 1..].iter().position(|item| item.id == q.id) {
                Some(offset) => items.swap(i, i + 1 + offset),
                None => {
                    return Err(UserQuestionError::bad_answer(format_args!(
                        "no answer item for question {:?} (or a duplicate item)",
                        q.id
                    )))
                }
            }
        }
        check_item(q, &items[i])?;
    }
    Ok(Answer { answers: items })
}

fn check_item(q: &Question, item: &AnswerItem) -> Result<(), UserQuestionError> {
    for (n, label) in item.selected.iter().enumerate() {
        if !q.options.iter().any(|o| &o.label == label) {
            return Err(UserQuestionError::bad_answer(format_args!(
                "question {:?} has no option {:?}",
                q.id, label
            )));
        }
        // A label chosen twice is not a choice the question offers: the asker would have to
        // guess whether it counts once.
        if item.selected[..n].contains(label) {
            return Err(UserQuestionError::bad_answer(format_args!(
                "question {:?}: option {:?} is selected twice",
                q.id, label
            )));
        }
    }
    if !q.multi_select {
        if item.selected.len() > 1 {
            return Err(UserQuestionError::bad_answer(format_args!(
                "question {:?} is single-select but {} labels were selected",
                q.id,
                item.selected.len()
            )));
        }
        if item.custom.is_some() && !item.selected.is_empty() {
            return Err(UserQuestionError::bad_answer(format_args!(
                "question {:?} is single-select: with custom text, selected must be empty",
                q.id
            )));
        }
    }
    Ok(())
}

/// The longest race group name, in bytes.
pub const MAX_GROUP_BYTES: usize = 64;

/// Checks a race group's name (`answerers/register`'s `group`): 1 to [`MAX_GROUP_BYTES`] ASCII
/// letters, digits, `-`, `_` or `.`. A name, not text for people: it is compared exactly, shown
/// as it is, and never needs escaping.
pub fn check_group(name: &str) -> Result<(), ShapeError> {
    let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || name.len() > MAX_GROUP_BYTES || !name.chars().all(fits) {
        return Err(ShapeError::new(
            "group",
            format!(
                "expected a name of 1 to {MAX_GROUP_BYTES} letters, digits, '-', '_' or '.' (ASCII)"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use serde_json::{json, Value};

    fn questions(value: Value) -> Vec<Question> {
        serde_json::from_value(value).unwrap()
    }

    fn shape(value: Value) -> Result<(), String> {
        check_shape(&questions(value), &Limits::default()).map_err(|e| e.to_string())
    }

    #[test]
    fn shape_cases() {
        let cases: Vec<(Value, Result<(), &str>)> = vec![
            (json!([]), Ok(())),
            (json!([{ "id": "a", "question": "?" }]), Ok(())),
            (
                json!([{ "id": "", "question": "?" }]),
                Err("questions[0].id: expected a non-empty string"),
            ),
            (
                json!([{ "id": "a", "question": "" }]),
                Err("questions[0].question: expected a non-empty string"),
            ),
            (
                json!([{ "id": "a", "question": "?" }, { "id": "a", "question": "?" }]),
                Err("questions[1].id: duplicate question id \"a\""),
            ),
            (
                json!([{ "id": "a", "question": "?", "options": [{ "label": "x" }, { "label": "" }] }]),
                Err("questions[0].options[1].label: expected a non-empty string"),
            ),
            (
                json!([{ "id": "a", "question": "?", "options": [{ "label": "x" }, { "label": "x" }] }]),
                Err("questions[0].options[1].label: duplicate option label \"x\""),
            ),
            (
                json!([{ "id": "a", "question": "?", "options": [{ "label": "x" }] }, { "id": "b", "question": "?", "options": [{ "label": "x" }] }]),
                Ok(()),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(
                shape(input.clone()),
                expected.map_err(str::to_owned),
                "input: {input}"
            );
        }
    }

    #[test]
    fn a_default_question_option_or_answer_item_is_refused_until_its_required_fields_are_set() {
        let limits = Limits::default();
        let shape_of = |question: Question| check_shape(&[question], &limits).map_err(|e| e.path);
        assert_eq!(shape_of(Question::default()), Err("questions[0].id".into()));
        let unasked = Question {
            id: "a".into(),
            ..Question::default()
        };
        assert_eq!(shape_of(unasked), Err("questions[0].question".into()));
        let unlabelled = Question {
            options: vec![crate::types::QuestionOption::default()],
            ..crate::testing::question("a", "?", &[])
        };
        assert_eq!(
            shape_of(unlabelled),
            Err("questions[0].options[0].label".into())
        );
        let asked = [crate::testing::question("a", "?", &["Yes"])];
        assert_eq!(check_shape(&asked, &limits), Ok(()));
        let unnamed = Answer {
            answers: vec![AnswerItem::default()],
        };
        assert_eq!(
            check_answer(&asked, unnamed).unwrap_err().code,
            ErrorCode::BadAnswer
        );
    }

    #[test]
    fn limits_are_enforced() {
        let limits = Limits {
            max_questions: 2,
            max_options: 1,
            max_field_bytes: 4,
        };
        let too_many = questions(
            json!([{ "id": "a", "question": "?" }, { "id": "b", "question": "?" }, { "id": "c", "question": "?" }]),
        );
        assert_eq!(
            check_shape(&too_many, &limits).unwrap_err().path,
            "questions"
        );
        let options = questions(
            json!([{ "id": "a", "question": "?", "options": [{ "label": "x" }, { "label": "y" }] }]),
        );
        assert_eq!(
            check_shape(&options, &limits).unwrap_err().path,
            "questions[0].options"
        );
        let long = questions(json!([{ "id": "a", "question": "?", "detail": "12345" }]));
        assert_eq!(
            check_shape(&long, &limits).unwrap_err().path,
            "questions[0].detail"
        );
        let fits = questions(json!([{ "id": "a", "question": "?", "detail": "1234" }]));
        assert_eq!(check_shape(&fits, &limits), Ok(()));
    }

    fn yes_no(multi: bool) -> Vec<Question> {
        questions(json!([
            { "id": "a", "question": "?", "options": [{ "label": "Yes" }, { "label": "No" }], "multiSelect": multi },
            { "id": "b", "question": "free?" }
        ]))
    }

    fn answer(value: Value) -> Answer {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn answers_are_reordered_into_question_order() {
        let got = check_answer(
            &yes_no(false),
            answer(json!({ "answers": [{ "id": "b", "selected": [], "custom": "hi" }, { "id": "a", "selected": ["No"] }] })),
        )
        .unwrap();
        assert_eq!(
            got,
            answer(
                json!({ "answers": [{ "id": "a", "selected": ["No"] }, { "id": "b", "selected": [], "custom": "hi" }] })
            )
        );
    }

    #[test]
    fn answer_rules() {
        let ok: &[(bool, Value)] = &[
            (
                false,
                json!([{ "id": "a", "selected": ["Yes"] }, { "id": "b", "selected": [] }]),
            ),
            (
                false,
                json!([{ "id": "a", "selected": [], "custom": "maybe" }, { "id": "b", "selected": [] }]),
            ),
            (
                true,
                json!([{ "id": "a", "selected": ["Yes", "No"], "custom": "and more" }, { "id": "b", "selected": [] }]),
            ),
            (
                true,
                json!([{ "id": "a", "selected": [] }, { "id": "b", "selected": [] }]),
            ),
        ];
        for (multi, items) in ok {
            let result = check_answer(&yes_no(*multi), answer(json!({ "answers": items })));
            assert!(result.is_ok(), "{items}: {result:?}");
        }
        let bad: &[(bool, Value, &str)] = &[
            (
                false,
                json!([{ "id": "a", "selected": ["Yes"] }]),
                "expected 2 answer items",
            ),
            (
                false,
                json!([{ "id": "a", "selected": [] }, { "id": "a", "selected": [] }]),
                "no answer item for question \"b\"",
            ),
            (
                false,
                json!([{ "id": "a", "selected": ["Maybe"] }, { "id": "b", "selected": [] }]),
                "has no option \"Maybe\"",
            ),
            (
                false,
                json!([{ "id": "a", "selected": ["Yes", "No"] }, { "id": "b", "selected": [] }]),
                "single-select but 2 labels",
            ),
            (
                false,
                json!([{ "id": "a", "selected": ["Yes"], "custom": "x" }, { "id": "b", "selected": [] }]),
                "with custom text, selected must be empty",
            ),
            (
                true,
                json!([{ "id": "a", "selected": [] }, { "id": "b", "selected": ["Yes"] }]),
                "question \"b\" has no option \"Yes\"",
            ),
            (
                true,
                json!([{ "id": "a", "selected": ["Yes", "No", "Yes"] }, { "id": "b", "selected": [] }]),
                "question \"a\": option \"Yes\" is selected twice",
            ),
            (
                false,
                json!([{ "id": "a", "selected": [] }, { "id": "c", "selected": [] }]),
                "no answer item for question \"b\"",
            ),
        ];
        for (multi, items, needle) in bad {
            let err =
                check_answer(&yes_no(*multi), answer(json!({ "answers": items }))).unwrap_err();
            assert_eq!(err.code, ErrorCode::BadAnswer);
            assert!(err.message.contains(needle), "{items}: {}", err.message);
        }
    }

    #[test]
    fn intent_checks_in_order() {
        let both_wrong = questions(json!([
            { "id": "ok", "question": "?", "options": [{ "label": "Go" }], "detail": "d", "intent": { "kind": "k", "approve": "Go" } },
            { "id": "p", "question": "?", "options": [{ "label": "Go" }], "intent": { "kind": "plan-review", "approve": "Ship" } },
            { "id": "q", "question": "?", "options": [{ "label": "Go" }], "intent": { "kind": "plan-review", "approve": "Go" } }
        ]));
        let err = check_intents(&both_wrong).unwrap_err();
        assert_eq!(
            err.message,
            r#"question p declares intent plan-review whose approve label "Ship" names none of its options"#
        );
        let no_detail = &both_wrong[2..];
        assert_eq!(
            check_intents(no_detail).unwrap_err().message,
            "question q declares intent plan-review without the detail it reviews"
        );
        assert_eq!(check_intents(&both_wrong[..1]), Ok(()));
        for blank in ["", " \n\t"] {
            let blank_plan = questions(json!([
                { "id": "q", "question": "?", "options": [{ "label": "Go" }], "detail": blank, "intent": { "kind": "plan-review", "approve": "Go" } }
            ]));
            assert_eq!(
                check_intents(&blank_plan).unwrap_err().message,
                "question q declares intent plan-review without the detail it reviews",
                "detail {blank:?}"
            );
        }
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn batch() -> impl Strategy<Value = Vec<Question>> {
            prop::collection::vec(
                (
                    prop::collection::btree_set("[a-d]{1,2}", 0..5),
                    any::<bool>(),
                ),
                1..5,
            )
            .prop_map(|qs| {
                qs.into_iter()
                    .enumerate()
                    .map(|(i, (labels, multi))| Question {
                        id: format!("q{i}"),
                        question: "?".into(),
                        options: labels
                            .into_iter()
                            .map(|label| crate::types::QuestionOption {
                                label,
                                ..Default::default()
                            })
                            .collect(),
                        multi_select: multi,
                        ..Default::default()
                    })
                    .collect()
            })
        }

        proptest! {
            /// Any answer built by the rules is accepted, in any order, and comes back in question order.
            #[test]
            fn rule_abiding_answers_pass(qs in batch(), pick in prop::collection::vec(any::<prop::sample::Index>(), 5), custom in any::<bool>(), rotate in 0usize..5) {
                let mut items: Vec<AnswerItem> = qs.iter().enumerate().map(|(i, q)| {
                    let mut selected = Vec::new();
                    if !q.options.is_empty() {
                        selected.push(q.options[pick[i].index(q.options.len())].label.clone());
                        if q.multi_select && q.options.len() > 1 { selected.push(q.options[(pick[i].index(q.options.len()) + 1) % q.options.len()].label.clone()); }
                    }
                    let custom = if custom { Some("note".to_owned()) } else { None };
                    if custom.is_some() && !q.multi_select { selected.clear(); }
                    AnswerItem {
                        id: q.id.clone(),
                        selected,
                        custom,
                        ..Default::default()
                    }
                }).collect();
                let n = items.len();
                items.rotate_left(rotate % n);
                let got = check_answer(&qs, Answer { answers: items }).unwrap();
                let ids: Vec<_> = got.answers.iter().map(|a| a.id.clone()).collect();
                let expected: Vec<_> = qs.iter().map(|q| q.id.clone()).collect();
                prop_assert_eq!(ids, expected);
            }

            /// A label that is not an option is always refused.
            #[test]
            fn foreign_labels_fail(qs in batch(), which in any::<prop::sample::Index>()) {
                let target = which.index(qs.len());
                let items: Vec<AnswerItem> = qs.iter().enumerate().map(|(i, q)| AnswerItem {
                    id: q.id.clone(),
                    selected: if i == target { vec!["zzz-not-an-option".into()] } else { vec![] },
                    ..Default::default()
                }).collect();
                let err = check_answer(&qs, Answer { answers: items }).unwrap_err();
                prop_assert_eq!(err.code, ErrorCode::BadAnswer);
            }
        }
    }

    #[test]
    fn a_group_name_is_a_short_ascii_name() {
        for good in [
            "person",
            "a",
            "desk-1",
            "my_group.v2",
            &"x".repeat(MAX_GROUP_BYTES),
        ] {
            assert_eq!(check_group(good), Ok(()), "{good:?}");
        }
        for bad in [
            "",
            " person",
            "per son",
            "person\n",
            "persön",
            "a/b",
            &"x".repeat(MAX_GROUP_BYTES + 1),
        ] {
            let error = check_group(bad).expect_err(bad);
            assert_eq!(error.path, "group");
            assert_eq!(
                error.problem,
                "expected a name of 1 to 64 letters, digits, '-', '_' or '.' (ASCII)"
            );
        }
    }
}
