//! The journal's records: what one line holds ([`Record`]), a settled ask on its way to the
//! writer, serialized as its record ([`AskRecord`]), and what the writer serializes ([`Line`]).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use askdesk_core::{AgentInfo, Answer, Question, Request};
use serde::{Deserialize, Serialize};

/// How a request settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// An answerer claimed it; `answer` is what the agent received.
    Answered,
    /// The human dismissed the batch (`ASK_CANCELLED`).
    Dismissed,
    /// The asker cancelled, disconnected or its agent went (`ASK_ABORTED`).
    Withdrawn,
    /// Any other failure; `error` says which.
    Failed,
    /// An answer that arrived after the request had settled; it was discarded.
    LateAnswer,
}

impl Outcome {
    /// Every outcome, in the order History offers them.
    pub const ALL: [Outcome; 5] = [
        Outcome::Answered,
        Outcome::Dismissed,
        Outcome::Withdrawn,
        Outcome::Failed,
        Outcome::LateAnswer,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Answered => "answered",
            Outcome::Dismissed => "dismissed",
            Outcome::Withdrawn => "withdrawn",
            Outcome::Failed => "failed",
            Outcome::LateAnswer => "late-answer",
        }
    }
}

/// An error as recorded: its domain code when it had one, and its message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedError {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub message: String,
}

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// Milliseconds since the Unix epoch.
    pub asked_at: u64,
    pub settled_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentInfo>,
    pub questions: Vec<Question>,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Answer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RecordedError>,
    /// The answerer that claimed the request or sent the late answer, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answerer: Option<String>,
    /// On a request that settled without the answerer holding it (withdrawn, its asker gone):
    /// what the person had chosen and typed so far, never sent (and not a valid answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<Answer>,
    /// How many images the record does not keep: a request's images and its answer's are kept
    /// only while they fit [`IMAGE_BUDGET`] together, so one request cannot push History out of
    /// the journal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images_omitted: Option<usize>,
}

/// The most base64 image data one record keeps (1 MiB); a request whose images take more is
/// recorded without them, with their number in `imagesOmitted`.
pub const IMAGE_BUDGET: usize = 1024 * 1024;

/// What a record keeps of a request's questions and of the answers it carries: with every image
/// while the images of all of them fit [`IMAGE_BUDGET`] together, else without any, and how many
/// were left out.
struct Kept<'a> {
    questions: Cow<'a, [Question]>,
    answer: Option<Cow<'a, Answer>>,
    draft: Option<Cow<'a, Answer>>,
    images_omitted: Option<usize>,
}

fn kept<'a>(
    questions: &'a [Question],
    answer: Option<&'a Answer>,
    draft: Option<&'a Answer>,
) -> Kept<'a> {
    let answers = || answer.into_iter().chain(draft);
    let images = || {
        questions
            .iter()
            .flat_map(|q| {
                q.images
                    .iter()
                    .chain(q.options.iter().flat_map(|o| &o.images))
            })
            .chain(answers().flat_map(|a| a.answers.iter().flat_map(|item| &item.images)))
    };
    let bytes: usize = images()
        .map(|image| image.data.as_ref().map_or(0, String::len))
        .sum();
    if bytes <= IMAGE_BUDGET {
        return Kept {
            questions: Cow::Borrowed(questions),
            answer: answer.map(Cow::Borrowed),
            draft: draft.map(Cow::Borrowed),
            images_omitted: None,
        };
    }
    let count = images().count();
    let stripped = |answer: &Answer| {
        let mut answer = answer.clone();
        for item in &mut answer.answers {
            item.images.clear();
        }
        Cow::Owned(answer)
    };
    Kept {
        questions: Cow::Owned(askdesk_core::without_images(questions.to_vec())),
        answer: answer.map(stripped),
        draft: draft.map(stripped),
        images_omitted: Some(count),
    }
}

impl Record {
    /// The record of an answer that arrived after its request had settled (and was discarded).
    ///
    /// Its images are not kept (they count in `imagesOmitted`): the service makes safe only the
    /// answer a request settles with, so these are as the answerer sent them.
    pub fn late_answer(request: &Request, mut answer: Answer, answerer: Option<String>) -> Record {
        let unsafe_images: usize = answer
            .answers
            .iter_mut()
            .map(|item| std::mem::take(&mut item.images).len())
            .sum();
        let kept = kept(&request.questions, Some(&answer), None);
        let images_omitted = match (kept.images_omitted, unsafe_images) {
            (omitted, 0) => omitted,
            (omitted, late) => Some(omitted.unwrap_or(0) + late),
        };
        Record {
            asked_at: millis(request.asked_at),
            settled_at: millis(SystemTime::now()),
            agent: request.agent.clone(),
            questions: kept.questions.into_owned(),
            outcome: Outcome::LateAnswer,
            answer: kept.answer.map(Cow::into_owned),
            error: None,
            answerer,
            draft: None,
            images_omitted,
        }
    }
}

/// The record of a settled ask on its way to the journal, written exactly as its [`Record`] would
/// be. It holds the request the service kept while the ask waited, so nothing is copied for the
/// journal while it waits, and the line is serialized on the journal's writer thread.
#[derive(Debug, Clone)]
pub struct AskRecord {
    pub request: Arc<Request>,
    pub settled_at: u64,
    pub outcome: Outcome,
    pub answer: Option<Answer>,
    pub error: Option<RecordedError>,
    pub answerer: Option<String>,
    pub draft: Option<Answer>,
}

impl Serialize for AskRecord {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        let kept = kept(
            &self.request.questions,
            self.answer.as_ref(),
            self.draft.as_ref(),
        );
        RecordRef {
            asked_at: millis(self.request.asked_at),
            settled_at: self.settled_at,
            agent: self.request.agent.as_ref(),
            questions: &kept.questions,
            outcome: self.outcome,
            answer: kept.answer.as_deref(),
            error: self.error.as_ref(),
            answerer: self.answerer.as_deref(),
            draft: kept.draft.as_deref(),
            images_omitted: kept.images_omitted,
        }
        .serialize(serializer)
    }
}

/// [`Record`]'s fields, borrowed: the same JSON.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordRef<'a> {
    asked_at: u64,
    settled_at: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'a AgentInfo>,
    questions: &'a [Question],
    outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    answer: Option<&'a Answer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a RecordedError>,
    #[serde(skip_serializing_if = "Option::is_none")]
    answerer: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    draft: Option<&'a Answer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    images_omitted: Option<usize>,
}

/// What the writer serializes: a record, or a settled ask's record (serialized as a [`Record`]).
#[derive(Debug)]
pub enum Line {
    Record(Record),
    Ask(AskRecord),
}

impl From<Record> for Line {
    fn from(record: Record) -> Line {
        Line::Record(record)
    }
}

impl From<AskRecord> for Line {
    fn from(record: AskRecord) -> Line {
        Line::Ask(record)
    }
}

impl Line {
    pub(crate) fn write_to(&self, out: &mut Vec<u8>) {
        match self {
            Line::Record(record) => serde_json::to_writer(&mut *out, record),
            Line::Ask(record) => serde_json::to_writer(&mut *out, record),
        }
        .expect("a record serializes");
        out.push(b'\n');
    }
}

/// Milliseconds since the Unix epoch.
pub fn millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A record of one question, asked at `n` and settled just after.
    pub(crate) fn record(outcome: Outcome, n: u64) -> Record {
        Record {
            asked_at: n,
            settled_at: n + 1,
            agent: None,
            questions: vec![serde_json::from_value(
                serde_json::json!({"id": "q", "question": "?"}),
            )
            .unwrap()],
            outcome,
            answer: None,
            error: None,
            answerer: None,
            draft: None,
            images_omitted: None,
        }
    }

    #[test]
    fn a_request_whose_images_are_over_the_budget_is_kept_without_them() {
        let image =
            |bytes: usize| serde_json::json!({"mime": "image/png", "data": "A".repeat(bytes)});
        let request = |option_image: usize| {
            Arc::new(Request {
                id: askdesk_core::RequestId(3),
                questions: vec![serde_json::from_value(serde_json::json!({
                    "id": "q", "question": "Which layout?", "images": [image(1000)],
                    "options": [{"label": "A", "images": [image(option_image)]}, {"label": "B"}],
                }))
                .unwrap()],
                agent: None,
                asked_at: UNIX_EPOCH,
            })
        };
        let line = |request: Arc<Request>| answered(request, None);
        let small = line(request(2000));
        assert_eq!(small.images_omitted, None);
        assert_eq!(small.questions[0].images.len(), 1);
        assert_eq!(small.questions[0].options[0].images.len(), 1);
        let big = line(request(IMAGE_BUDGET));
        assert_eq!(big.images_omitted, Some(2));
        assert!(big.questions[0].images.is_empty());
        assert!(big.questions[0].options[0].images.is_empty());
        assert_eq!(big.questions[0].question, "Which layout?");
        let late = Record::late_answer(
            &request(IMAGE_BUDGET),
            serde_json::from_value(
                serde_json::json!({"answers": [{"id": "q", "selected": ["A"]}]}),
            )
            .unwrap(),
            None,
        );
        assert_eq!(late.images_omitted, Some(2));
        assert!(late.questions[0].images.is_empty());
    }

    /// The record of `request` answered with `answer`, as written to the journal and read back.
    fn answered(request: Arc<Request>, answer: Option<Answer>) -> Record {
        let ask = AskRecord {
            request,
            settled_at: 1,
            outcome: Outcome::Answered,
            answer,
            error: None,
            answerer: None,
            draft: None,
        };
        let mut out = Vec::new();
        Line::Ask(ask).write_to(&mut out);
        serde_json::from_slice::<Record>(&out).unwrap()
    }

    /// Request `id`: the one free-text question "q", "Which layout?".
    fn which_layout(id: u64) -> Request {
        Request {
            id: askdesk_core::RequestId(id),
            questions: vec![serde_json::from_value(
                serde_json::json!({"id": "q", "question": "Which layout?"}),
            )
            .unwrap()],
            agent: None,
            asked_at: UNIX_EPOCH,
        }
    }

    /// The answer to "q" that types `text` with one picture, its base64 `data`.
    fn typed_with_picture(text: &str, data: &str) -> Answer {
        serde_json::from_value(serde_json::json!({"answers": [{
            "id": "q", "selected": [], "custom": text,
            "images": [{"mime": "image/png", "data": data}],
        }]}))
        .unwrap()
    }

    #[test]
    fn an_answers_image_is_kept_within_the_same_budget() {
        let request = Arc::new(which_layout(4));
        let line = |bytes: usize| {
            let answer = typed_with_picture("like this", &"A".repeat(bytes));
            answered(request.clone(), Some(answer))
        };
        let small = line(1000);
        assert_eq!(small.images_omitted, None);
        assert_eq!(small.answer.unwrap().answers[0].images.len(), 1);
        let big = line(IMAGE_BUDGET + 1);
        assert_eq!(big.images_omitted, Some(1));
        let answer = big.answer.unwrap();
        assert!(answer.answers[0].images.is_empty());
        assert_eq!(answer.answers[0].custom.as_deref(), Some("like this"));
    }

    #[test]
    fn a_late_answers_images_are_never_kept() {
        let answer = typed_with_picture("this", "iVBORw0KGgo=");
        let late = Record::late_answer(&which_layout(5), answer, None);
        let answer = late.answer.unwrap();
        assert!(answer.answers[0].images.is_empty());
        assert_eq!(answer.answers[0].custom.as_deref(), Some("this"));
        assert_eq!(late.images_omitted, Some(1));
    }

    #[test]
    fn an_ask_record_is_written_exactly_as_the_same_record() {
        let mut full = record(Outcome::Failed, 5);
        full.agent =
            Some(serde_json::from_value(serde_json::json!({"id": "bot", "label": "Bot"})).unwrap());
        full.error = Some(RecordedError {
            code: Some("NO_PROVIDER".into()),
            message: "nobody".into(),
        });
        full.answerer = Some("desk".into());
        full.draft = Some(serde_json::from_value(
            serde_json::json!({"answers": [{"id": "q", "selected": [], "custom": "half a tho"}]}),
        )
        .unwrap());
        // Whole milliseconds, as the record keeps them.
        full.asked_at = 1_796_000_000_123;
        let ask = AskRecord {
            request: Arc::new(Request {
                id: askdesk_core::RequestId(7),
                questions: full.questions.clone(),
                agent: full.agent.clone(),
                asked_at: UNIX_EPOCH + std::time::Duration::from_millis(full.asked_at),
            }),
            settled_at: full.settled_at,
            outcome: full.outcome,
            answer: full.answer.clone(),
            error: full.error.clone(),
            answerer: full.answerer.clone(),
            draft: full.draft.clone(),
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        Line::Record(full).write_to(&mut a);
        Line::Ask(ask).write_to(&mut b);
        assert_eq!(String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap());
    }
}
