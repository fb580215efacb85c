//! Wire-shaped question, answer and request types (protocol section 1), camelCase on the wire.

use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One question of a batch.
///
/// `Default` is for building one field by field (`..Default::default()`); its empty `id` and
/// `question` are refused by validation like any other empty ones.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Question {
    /// Unique within the batch; the answer item names it.
    pub id: String,
    /// The question itself, one line.
    pub question: String,
    /// A short heading shown above the question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// Supporting markdown shown with the question; never an option label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The choices. Empty means a free-text question.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<QuestionOption>,
    /// Whether several options may be selected.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub multi_select: bool,
    /// What kind of decision this question is, for UIs that present it specially.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<Intent>,
    /// Pictures shown with the question, or with the plan of a plan review (protocol 1.4).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

/// One choice of a question. `Default`'s empty label is refused by validation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionOption {
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Pictures shown with this choice (protocol 1.4).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

/// An image attached to a question or an option (protocol 1.4, an askdesk extension).
///
/// As asked it carries `data` (base64) or a `path` on the asking agent's machine; once the
/// service dispatches the request every image is a re-encoded PNG: `mime` is
/// [`Image::SAFE_MIME`], `data` is set and `path` is not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    /// The declared media type; when given, the content must be of that type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
    /// The image's bytes in standard base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// A file to read, relative to the agent's `meta.cwd` unless absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl Image {
    /// The one media type an image has after it was made safe.
    pub const SAFE_MIME: &'static str = "image/png";
}

/// The batch with every image taken out: what is kept of a request refused before its images were
/// made safe, so no image as asked is kept or shown.
pub fn without_images(mut questions: Vec<Question>) -> Vec<Question> {
    for question in &mut questions {
        question.images.clear();
        for option in &mut question.options {
            option.images.clear();
        }
    }
    questions
}

/// Whether any question or option of the batch carries an image.
pub fn has_images(questions: &[Question]) -> bool {
    questions
        .iter()
        .any(|q| !q.images.is_empty() || q.options.iter().any(|o| !o.images.is_empty()))
}

/// The mark that ends the label of a recommended option (protocol 1).
pub const RECOMMENDED_MARK: &str = "(Recommended)";

impl QuestionOption {
    /// Whether this is the recommended option: its label ends with [`RECOMMENDED_MARK`] (trailing
    /// whitespace aside). The one rule for Rust; the page mirrors it only to shorten a label for
    /// display (`displayLabel` in `ui/dom.js`). Answers always carry the label unchanged.
    pub fn is_recommended(&self) -> bool {
        self.label.trim_end().ends_with(RECOMMENDED_MARK)
    }
}

/// `label` as a person reads it: without a trailing [`RECOMMENDED_MARK`] and the whitespace
/// before it ("Yes (Recommended)" → "Yes"). The one place Rust shortens a label, for display
/// (memory, notification buttons) and for a rule naming an option without the mark; the page
/// mirrors it (`displayLabel` in `ui/dom.js`). What is sent back is always the label unchanged.
pub fn shown_label(label: &str) -> &str {
    label
        .trim_end()
        .strip_suffix(RECOMMENDED_MARK)
        .map_or(label, str::trim_end)
}

/// The presentation intent of a question (protocol 1.3).
///
/// `kind` is kept as a string so unknown kinds pass through to answerers unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Intent {
    pub kind: String,
    /// The option label that means "approve".
    pub approve: String,
}

impl Intent {
    /// The kind a plan under review carries.
    pub const PLAN_REVIEW: &'static str = "plan-review";

    pub fn is_plan_review(&self) -> bool {
        self.kind == Self::PLAN_REVIEW
    }
}

/// The human's answer to a whole batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    pub answers: Vec<AnswerItem>,
}

/// The answer to one question. `Default` names no question, so validation refuses it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerItem {
    pub id: String,
    pub selected: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<String>,
    /// Pictures the person answered with, beside `custom` (protocol 1.4, an askdesk extension):
    /// made safe by the service like a question's before the asker gets them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

impl AnswerItem {
    /// The answer of a skipped question: the shape is kept, nothing is chosen.
    pub fn skipped(id: impl Into<String>) -> Self {
        AnswerItem {
            id: id.into(),
            ..Default::default()
        }
    }
}

impl Answer {
    /// Whether any item of the answer carries an image.
    pub fn has_images(&self) -> bool {
        self.answers.iter().any(|item| !item.images.is_empty())
    }
}

/// Identifies one dispatched request for as long as the service runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestId(pub u64);

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "r{}", self.0)
    }
}

/// What an answerer is told about the asking agent: never its instance token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInfo {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A validated request as offered to answerers.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub id: RequestId,
    pub questions: Vec<Question>,
    pub agent: Option<AgentInfo>,
    pub asked_at: SystemTime,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip<T>(value: Value)
    where
        T: Serialize + for<'de> Deserialize<'de>,
    {
        let parsed: T = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&parsed).unwrap(), value);
    }

    #[test]
    fn a_shown_label_loses_only_a_trailing_recommended_mark() {
        assert_eq!(shown_label("Yes (Recommended)"), "Yes");
        assert_eq!(shown_label("Yes  (Recommended)  "), "Yes");
        assert_eq!(shown_label("Yes"), "Yes");
        // The mark anywhere but at the end is part of the label.
        assert_eq!(shown_label("(Recommended) Yes"), "(Recommended) Yes");
        assert_eq!(shown_label("Yes (recommended)"), "Yes (recommended)");
    }

    #[test]
    fn minimal_question_is_exact() {
        round_trip::<Question>(json!({ "id": "q", "question": "Proceed?" }));
    }

    #[test]
    fn full_question_is_exact() {
        round_trip::<Question>(json!({
            "id": "plan",
            "question": "Approve the plan?",
            "header": "Plan",
            "detail": "# Steps",
            "options": [
                { "label": "Approve (Recommended)", "description": "go ahead" },
                { "label": "Keep planning" }
            ],
            "multiSelect": true,
            "intent": { "kind": "plan-review", "approve": "Approve (Recommended)" }
        }));
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let q: Question = serde_json::from_value(json!({
            "id": "q", "question": "?", "colour": "blue", "options": [{ "label": "a", "x": 1 }]
        }))
        .unwrap();
        assert_eq!(
            serde_json::to_value(&q).unwrap(),
            json!({ "id": "q", "question": "?", "options": [{ "label": "a" }] })
        );
    }

    #[test]
    fn answer_omits_absent_custom() {
        round_trip::<Answer>(json!({ "answers": [{ "id": "cleanup", "selected": ["Yes"] }] }));
        round_trip::<Answer>(
            json!({ "answers": [{ "id": "c", "selected": [], "custom": "later" }] }),
        );
        let compact = serde_json::to_string(&Answer {
            answers: vec![AnswerItem::skipped("cleanup")],
        })
        .unwrap();
        assert_eq!(compact, r#"{"answers":[{"id":"cleanup","selected":[]}]}"#);
    }

    #[test]
    fn agent_info_never_carries_instance() {
        round_trip::<AgentInfo>(json!({ "id": "a", "label": "coder", "meta": { "cwd": "/src" } }));
        round_trip::<AgentInfo>(json!({ "id": "a" }));
    }

    #[test]
    fn request_id_is_a_bare_number() {
        assert_eq!(serde_json::to_value(RequestId(7)).unwrap(), json!(7));
    }

    #[test]
    fn recommended_is_the_mark_at_the_end_of_the_label() {
        let cases = [
            ("Yes (Recommended)", true),
            ("Yes (Recommended)  ", true),
            ("(Recommended)", true),
            ("Yes", false),
            ("(Recommended) yes", false),
            ("Yes (recommended)", false),
            ("Yes Recommended", false),
        ];
        for (label, expected) in cases {
            let option = QuestionOption {
                label: label.into(),
                ..Default::default()
            };
            assert_eq!(option.is_recommended(), expected, "{label:?}");
        }
    }
}
