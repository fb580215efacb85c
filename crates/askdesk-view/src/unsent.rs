//! The page's draft of an answer read back as what the person had chosen and typed, for a request
//! that ended before they sent it: the journal keeps it with the withdrawn request, and History
//! shows it as a draft.
//!
//! The draft is the page's own format (`ui/question.js` and `ui/plan.js`, `draft()`): a plain
//! question's `checked` labels and `text`; a plan review's `chosen` labels, `feedback`, its
//! comments' `text` and a comment still being written (`editing.text`); either's `pictures`, the
//! numbers the desk keeps the attached pictures under while the request waits ([`picture_refs`]),
//! which the unsent answer carries as the pictures themselves (made safe when they were attached).
//! Anything else in it is ignored, and a draft that cannot be read is none.

use askdesk_core::{Answer, AnswerItem, Image, Question};
use serde::Deserialize;
use serde_json::value::RawValue;

/// The page's draft of one request.
#[derive(Deserialize)]
struct PageDraft {
    #[serde(default)]
    questions: Vec<serde_json::Value>,
}

/// One question's draft, the fields both kinds of card write.
#[derive(Default, Deserialize)]
#[serde(default)]
struct QuestionDraft {
    id: String,
    /// A plain question's checked options.
    checked: Vec<String>,
    /// A plan review's chosen options.
    chosen: Vec<String>,
    /// A plain question's text box.
    text: String,
    /// A plan review's general feedback.
    feedback: String,
    comments: Vec<CommentDraft>,
    editing: Option<CommentDraft>,
    /// The attached pictures, by the numbers the desk keeps them under.
    pictures: Vec<u64>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct CommentDraft {
    text: Option<String>,
}

/// The page's drafts of each question of `draft`; those that cannot be read are left out.
fn question_drafts(draft: &RawValue) -> Vec<QuestionDraft> {
    let Ok(page) = serde_json::from_str::<PageDraft>(draft.get()) else {
        return Vec::new();
    };
    page.questions
        .into_iter()
        .filter_map(|value| serde_json::from_value(value).ok())
        .collect()
}

/// The numbers of the pictures the page's `draft` names, of every question.
pub fn picture_refs(draft: &RawValue) -> Vec<u64> {
    question_drafts(draft)
        .into_iter()
        .flat_map(|question| question.pictures)
        .collect()
}

/// What the person had chosen, typed and attached in the page's `draft` of an answer to
/// `questions`, in question order: the labels they picked among the question's own options, their
/// text (a plan review's feedback and comments, one after the other) and the pictures the draft
/// names that `picture` still has (a number it does not know is left out). `None` when they had
/// picked, typed and attached nothing, or the draft cannot be read. Not checked as an answer: it
/// was never sent.
pub fn unsent_answer(
    questions: &[Question],
    draft: &RawValue,
    picture: impl Fn(u64) -> Option<Image>,
) -> Option<Answer> {
    let drafts = question_drafts(draft);
    let answers: Vec<AnswerItem> = questions
        .iter()
        .filter_map(|question| {
            let draft = drafts.iter().find(|d| d.id == question.id)?;
            let selected: Vec<String> = question
                .options
                .iter()
                .filter(|o| draft.checked.contains(&o.label) || draft.chosen.contains(&o.label))
                .map(|o| o.label.clone())
                .collect();
            let texts: Vec<&str> = [draft.text.as_str(), draft.feedback.as_str()]
                .into_iter()
                .chain(draft.comments.iter().filter_map(|c| c.text.as_deref()))
                .chain(draft.editing.iter().filter_map(|c| c.text.as_deref()))
                .map(str::trim)
                .filter(|text| !text.is_empty())
                .collect();
            let custom = (!texts.is_empty()).then(|| texts.join("\n\n"));
            let images: Vec<Image> = draft.pictures.iter().filter_map(|&n| picture(n)).collect();
            (!selected.is_empty() || custom.is_some() || !images.is_empty()).then(|| AnswerItem {
                id: question.id.clone(),
                selected,
                custom,
                images,
            })
        })
        .collect();
    (!answers.is_empty()).then_some(Answer { answers })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(id: &str, options: &[&str]) -> Question {
        askdesk_core::testing::question(id, &format!("{id}?"), options)
    }

    fn read(questions: &[Question], json: &str) -> Option<Answer> {
        unsent_answer(
            questions,
            &RawValue::from_string(json.into()).unwrap(),
            |_| None,
        )
    }

    fn picture(n: u64) -> Image {
        Image {
            mime: Some(Image::SAFE_MIME.into()),
            data: Some(format!("picture-{n}")),
            path: None,
        }
    }

    #[test]
    fn the_pictures_a_draft_names_go_with_their_own_question_and_unknown_ones_are_left_out() {
        let questions = [question("why", &[]), question("plan", &["Approve"])];
        let draft = r#"{"questions":[
            {"id":"why","text":"","pictures":[2, 9]},
            {"id":"plan","chosen":[],"feedback":"","pictures":[1]}
        ]}"#;
        let kept = |n: u64| (n <= 2).then(|| picture(n));
        let got = unsent_answer(
            &questions,
            &RawValue::from_string(draft.into()).unwrap(),
            kept,
        )
        .unwrap();
        let images: Vec<(&str, Vec<Option<&str>>)> = got
            .answers
            .iter()
            .map(|a| {
                let data = a.images.iter().map(|i| i.data.as_deref()).collect();
                (a.id.as_str(), data)
            })
            .collect();
        // A picture alone is something attached: each question keeps its own; 9 is not kept.
        assert_eq!(
            images,
            [
                ("why", vec![Some("picture-2")]),
                ("plan", vec![Some("picture-1")])
            ]
        );
        assert!(got
            .answers
            .iter()
            .all(|a| a.custom.is_none() && a.selected.is_empty()));
        // A draft naming only pictures that are gone is no draft.
        assert_eq!(
            unsent_answer(
                &questions,
                &RawValue::from_string(draft.into()).unwrap(),
                |_| None
            ),
            None
        );
    }

    #[test]
    fn typed_text_and_picked_options_are_read_in_question_order() {
        let questions = [question("why", &[]), question("which", &["A", "B"])];
        let got = read(
            &questions,
            r#"{"questions":[
                {"id":"which","checked":["B","Z"],"other":false,"text":"","skipped":false},
                {"id":"why","checked":[],"other":true,"text":"  because the tests  ","skipped":false}
            ]}"#,
        )
        .unwrap();
        let items: Vec<(&str, &[String], Option<&str>)> = got
            .answers
            .iter()
            .map(|a| (a.id.as_str(), a.selected.as_slice(), a.custom.as_deref()))
            .collect();
        // "Z" is no option of the question: only its own labels are kept.
        assert_eq!(
            items,
            [
                ("why", &[][..], Some("because the tests")),
                ("which", &["B".to_owned()][..], None)
            ]
        );
    }

    #[test]
    fn a_plan_reviews_feedback_comments_and_open_comment_are_its_text() {
        let questions = [question("plan", &["Approve", "Keep planning"])];
        let got = read(
            &questions,
            r#"{"questions":[{"id":"plan","chosen":[],"skipped":false,"feedback":"Split step 2.",
                "comments":[{"block":"b1","quote":null,"text":"Why this order?"}],
                "editing":{"block":"b3","quote":null,"comment":null,"text":"Half a tho"}}]}"#,
        )
        .unwrap();
        assert_eq!(
            got.answers[0].custom.as_deref(),
            Some("Split step 2.\n\nWhy this order?\n\nHalf a tho")
        );
        assert!(got.answers[0].selected.is_empty());
    }

    #[test]
    fn nothing_picked_or_typed_and_unreadable_drafts_are_no_draft() {
        let questions = [question("q", &["Yes", "No"])];
        let empty =
            r#"{"questions":[{"id":"q","checked":[],"other":false,"text":"   ","skipped":true}]}"#;
        assert_eq!(read(&questions, empty), None);
        assert_eq!(read(&questions, r#"{"questions":"nope"}"#), None);
        assert_eq!(read(&questions, r#"{"other":1}"#), None);
        // One question's broken draft does not lose another's.
        let questions = [question("a", &[]), question("b", &[])];
        let mixed = r#"{"questions":[{"id":"a","text":7},{"id":"b","text":"kept"}]}"#;
        let got = read(&questions, mixed).unwrap();
        assert_eq!(got.answers.len(), 1);
        assert_eq!(got.answers[0].custom.as_deref(), Some("kept"));
    }
}
