//! The two tools: their definitions (schemas, title, annotations), their arguments, and the
//! results they return (text for every client, `structuredContent` for those that read it).

use askdesk_core::{Answer, AnswerItem, Image, Intent, Question, QuestionOption};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::schema;
use crate::ask::{APPROVE, KEEP_PLANNING};

pub const ASK_USER_QUESTION: &str = "ask_user_question";
pub const REVIEW_PLAN: &str = "review_plan";

// ----- arguments -----

// The arguments of `ask_user_question`: the harness tool's, snake_case. The doc comments of the
// argument and result types are the schemas' descriptions, which models read.

/// Questions for the user, asked together.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AskUserQuestionArgs {
    /// The questions, shown together as one batch in this order (1 to 64).
    #[schemars(length(min = 1, max = 64))]
    pub questions: Vec<McpQuestion>,
}

/// One question.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct McpQuestion {
    /// A short id, unique within this call; the answer names it.
    pub id: String,
    /// The question itself, one clear sentence.
    pub question: String,
    /// A very short heading shown above the question (a few words).
    #[serde(default)]
    pub header: Option<String>,
    /// The choices, usually 2 to 4 and at most 64; the recommended one first, its label ending in "(Recommended)". Omit for a free-text question.
    #[serde(default)]
    #[schemars(length(max = 64))]
    pub options: Vec<McpOption>,
    /// Whether several options may be chosen together.
    #[serde(default, alias = "multiSelect")]
    pub multi_select: bool,
    /// Pictures shown with the question (at most 16 in a call, 8 MiB each).
    #[serde(default)]
    #[schemars(length(max = 16))]
    pub images: Vec<McpImage>,
}

/// A picture: MCP image content (`{"type": "image", "data": "<base64>", "mimeType": "image/png"}`),
/// or a local file (`{"path": "shot.png"}`, relative to the working directory). PNG, JPEG, GIF or
/// WebP; never a URL.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct McpImage {
    /// "image", as in MCP image content; may be left out.
    #[serde(default, rename = "type")]
    pub kind: McpImageKind,
    /// The image's bytes in base64.
    #[serde(default)]
    pub data: Option<String>,
    /// The image's type: image/png, image/jpeg, image/gif or image/webp.
    #[serde(default, rename = "mimeType", alias = "mime_type")]
    pub mime_type: Option<String>,
    /// A local file instead of data.
    #[serde(default)]
    pub path: Option<String>,
}

/// The one content type an image argument may name.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpImageKind {
    #[default]
    Image,
}

impl From<McpImage> for Image {
    fn from(image: McpImage) -> Image {
        Image {
            mime: image.mime_type,
            data: image.data,
            path: image.path,
        }
    }
}

/// `images` given as arguments, then those markdown image syntax in `texts` points at on this
/// machine (`![alt](shot.png)`, `![alt](file:///tmp/shot.png)`); a remote URL is left in the
/// text, where the desktop shows it as a link, never loaded.
fn attached<'a>(images: Vec<McpImage>, texts: impl IntoIterator<Item = &'a str>) -> Vec<Image> {
    use pulldown_cmark::{Event, Parser, Tag};
    let mut all: Vec<Image> = images.into_iter().map(Image::from).collect();
    for text in texts {
        for event in Parser::new(text) {
            let Event::Start(Tag::Image { dest_url, .. }) = event else {
                continue;
            };
            let path = match dest_url.strip_prefix("file://") {
                Some(path) => path,
                // A scheme (`https:`, `data:`) before any slash is a URL, not a path.
                None if dest_url
                    .split('/')
                    .next()
                    .is_some_and(|head| head.contains(':')) =>
                {
                    continue
                }
                None => &dest_url,
            };
            let image = Image {
                path: Some(path.to_owned()),
                ..Image::default()
            };
            if !path.is_empty() && !all.contains(&image) {
                all.push(image);
            }
        }
    }
    all
}

/// One choice.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct McpOption {
    /// What the user picks; returned unchanged in the answer.
    pub label: String,
    /// One line on what choosing it means.
    #[serde(default)]
    pub description: Option<String>,
    /// Pictures shown with this choice (e.g. one layout of several).
    #[serde(default)]
    #[schemars(length(max = 16))]
    pub images: Vec<McpImage>,
}

/// A plan for the user to review.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewPlanArgs {
    /// The plan, as markdown (headings, lists, task lists, tables, code blocks).
    pub plan: String,
    /// The question shown above the plan; defaults to "Do you approve this plan?".
    #[serde(default)]
    pub question: Option<String>,
    /// Pictures shown with the plan (markdown image syntax naming a local file attaches it too).
    #[serde(default)]
    #[schemars(length(max = 16))]
    pub images: Vec<McpImage>,
}

impl From<McpQuestion> for Question {
    fn from(q: McpQuestion) -> Question {
        Question {
            images: attached(q.images, [q.question.as_str()]),
            id: q.id,
            question: q.question,
            header: q.header,
            options: q
                .options
                .into_iter()
                .map(|o| QuestionOption {
                    images: attached(o.images, o.description.as_deref()),
                    label: o.label,
                    description: o.description,
                })
                .collect(),
            multi_select: q.multi_select,
            ..Default::default()
        }
    }
}

/// Reads a tool's arguments; the error names the field path, as the broker's invalid params do
/// (`questions[1].multi_select: invalid type: string "yes", expected a boolean`).
pub fn arguments<T: DeserializeOwned>(arguments: JsonObject) -> Result<T, String> {
    let text = Value::Object(arguments).to_string();
    askdesk_broker::protocol::from_str_with_path(&text).map_err(|(path, problem)| {
        if path == "." {
            format!("invalid arguments: {problem}")
        } else {
            format!("invalid arguments: {path}: {problem}")
        }
    })
}

// ----- results -----

/// The user's answer.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AnswerOutput {
    /// One item per question, in question order.
    pub answers: Vec<AnswerItemOutput>,
}

/// The answer to one question.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AnswerItemOutput {
    /// The question's id.
    pub id: String,
    /// The labels the user chose; empty when the user skipped the question or wrote instead.
    pub selected: Vec<String>,
    /// The user's free text, present only when the user wrote some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom: Option<String>,
    /// How many pictures the user answered this question with, present only when there are some:
    /// they follow the text as image content, in question order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<usize>,
}

impl From<&Answer> for AnswerOutput {
    fn from(answer: &Answer) -> Self {
        AnswerOutput {
            answers: answer
                .answers
                .iter()
                .map(
                    |AnswerItem {
                         id,
                         selected,
                         custom,
                         images,
                     }| AnswerItemOutput {
                        id: id.clone(),
                        selected: selected.clone(),
                        custom: custom.clone(),
                        images: (!images.is_empty()).then_some(images.len()),
                    },
                )
                .collect(),
        }
    }
}

/// The pictures of an answer as MCP image content, in question order: each one a PNG the broker
/// re-encoded (protocol 1.4).
fn image_content(answer: &Answer) -> impl Iterator<Item = ContentBlock> + '_ {
    answer
        .answers
        .iter()
        .flat_map(|item| &item.images)
        .filter_map(|image| {
            let data = image.data.as_deref()?;
            Some(ContentBlock::image(
                data,
                image.mime.as_deref().unwrap_or(Image::SAFE_MIME),
            ))
        })
}

/// The user's verdict on the plan. Clients that read structured content give the model this
/// object instead of the text, so it says in words all that the text says.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
pub struct PlanVerdict {
    /// Whether the user approved the plan.
    pub approved: bool,
    /// The verdict in words and what to do next, with the user's feedback: act on this.
    pub message: String,
    /// What the user wrote, present only when the user wrote something.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// How many pictures the user gave with the feedback, present only when there are some:
    /// they follow the text as image content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<usize>,
}

impl From<&Answer> for PlanVerdict {
    fn from(answer: &Answer) -> Self {
        let item = answer.answers.first();
        let approved = item.is_some_and(|i| i.selected.iter().any(|l| l == APPROVE));
        let feedback = item
            .and_then(|i| i.custom.as_deref())
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(str::to_owned);
        let images = item.map_or(0, |i| i.images.len());
        PlanVerdict {
            approved,
            message: plan_verdict_text(approved, feedback.as_deref(), images),
            feedback,
            images: (images > 0).then_some(images),
        }
    }
}

/// The one plan-review question `review_plan` asks.
pub fn plan_question(args: ReviewPlanArgs) -> Question {
    Question {
        images: attached(args.images, [args.plan.as_str()]),
        id: "plan".to_owned(),
        question: args
            .question
            .filter(|q| !q.trim().is_empty())
            .unwrap_or_else(|| "Do you approve this plan?".into()),
        header: Some("Plan review".to_owned()),
        detail: Some(args.plan),
        options: vec![
            QuestionOption {
                label: APPROVE.to_owned(),
                description: Some("Go ahead with this plan".into()),
                ..Default::default()
            },
            QuestionOption {
                label: KEEP_PLANNING.to_owned(),
                description: Some("Revise the plan first; say what to change".into()),
                ..Default::default()
            },
        ],
        intent: Some(Intent {
            kind: Intent::PLAN_REVIEW.to_owned(),
            approve: APPROVE.to_owned(),
        }),
        ..Default::default()
    }
}

/// The text of a `review_plan` result: plainly approved or not, what to do next, and the human's
/// feedback.
fn plan_verdict_text(approved: bool, feedback: Option<&str>, images: usize) -> String {
    let mut text = if approved {
        "The user APPROVED the plan. Go ahead and carry it out.".to_owned()
    } else {
        "The user did NOT approve the plan. Keep planning: revise it, then call review_plan again."
            .to_owned()
    };
    match feedback {
        Some(feedback) => {
            text.push_str("\n\nThe user's feedback:\n");
            text.push_str(feedback);
        }
        None if !approved => {
            text.push_str("\n\nThe user gave no feedback; ask what to change if it is unclear.")
        }
        None => {}
    }
    match images {
        0 => {}
        1 => text.push_str("\n\nThe user attached a picture to the feedback: it follows."),
        n => text.push_str(&format!(
            "\n\nThe user attached {n} pictures to the feedback: they follow."
        )),
    }
    text
}

/// The compact answer JSON `ask_user_question` returns (`custom` and `images` omitted when unused;
/// the pictures themselves are image content, never base64 in the text).
pub fn answer_text(answer: &Answer) -> String {
    serde_json::to_string(&AnswerOutput::from(answer)).expect("an answer serializes")
}

/// `ask_user_question`'s result: the answer JSON as text, then the pictures the user answered with
/// as image content, and the same object as structured content.
pub fn answer_result(answer: &Answer) -> CallToolResult {
    let structured =
        serde_json::to_value(AnswerOutput::from(answer)).expect("an answer serializes");
    let mut content = vec![ContentBlock::text(answer_text(answer))];
    content.extend(image_content(answer));
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(structured);
    result
}

/// `review_plan`'s result: the verdict in words, then the pictures given with the feedback as
/// image content, and `{approved, message, feedback?, images?}` (the same words in `message`) as
/// structured content.
pub fn verdict_result(answer: &Answer) -> CallToolResult {
    let verdict = PlanVerdict::from(answer);
    let mut content = vec![ContentBlock::text(verdict.message.clone())];
    content.extend(image_content(answer));
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(serde_json::to_value(&verdict).expect("a verdict serializes"));
    result
}

/// A tool failure: `Error: <message>`, flagged `isError`, without structured content.
pub fn failure(message: impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("Error: {message}"))])
}

// ----- definitions -----

const ASK_DESCRIPTION: &str = "\
Ask the human user one or more structured questions and wait for the answer. Call this when you need a \
decision, a preference, or information only the user has, and guessing would risk wasted or unwanted \
work: choosing between approaches, confirming a destructive or irreversible action, resolving an \
ambiguous requirement. Do not call it for things you can find out yourself, and batch related questions \
into one call (1 to 64 questions). Give each question a short unique id, the question, a very short \
header, and usually 2 to 4 options (at most 64), each with a label and a one-line description. Put the \
option you recommend first and end its label with \"(Recommended)\". Set multi_select when several \
options may be chosen together. The user may also answer in free text or skip a question. The result is \
JSON: {\"answers\":[{\"id\":\"...\",\"selected\":[\"<labels>\"],\"custom\":\"<free text, when given>\"}]}; \
an empty selected list without custom means the user skipped that question.";

const REVIEW_DESCRIPTION: &str = "\
Show a plan (markdown) to the human user for review before carrying it out, and wait for the verdict. \
Call this when you have finished planning a non-trivial, risky or long change and want approval first. \
The result says plainly whether the plan was approved; if it was not, it carries the user's feedback: \
revise the plan accordingly and call review_plan again.";

/// The annotations both tools share. A question changes nothing the agent works on: the human is
/// shown a dialog and askdesk keeps its own history, so the tool is read-only (and so neither
/// destructive nor idempotent in the spec's sense). The result comes from a person outside the
/// agent's closed world, free text included, so it is open-world.
fn annotations(title: &str) -> ToolAnnotations {
    ToolAnnotations::with_title(title)
        .read_only(true)
        .destructive(false)
        .idempotent(false)
        .open_world(true)
}

/// Every tool this server offers, in the order `tools/list` gives them.
pub fn all() -> Vec<Tool> {
    vec![
        Tool::new_with_raw(
            ASK_USER_QUESTION,
            Some(ASK_DESCRIPTION.into()),
            schema::input::<AskUserQuestionArgs>(),
        )
        .with_title("Ask the user")
        .with_raw_output_schema(schema::output::<AnswerOutput>())
        .with_annotations(annotations("Ask the user")),
        Tool::new_with_raw(
            REVIEW_PLAN,
            Some(REVIEW_DESCRIPTION.into()),
            schema::input::<ReviewPlanArgs>(),
        )
        .with_title("Review a plan with the user")
        .with_raw_output_schema(schema::output::<PlanVerdict>())
        .with_annotations(annotations("Review a plan with the user")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> JsonObject {
        match value {
            Value::Object(object) => object,
            other => panic!("not an object: {other}"),
        }
    }

    fn ask_args(value: Value) -> Vec<Question> {
        let args: AskUserQuestionArgs = arguments(object(value)).expect("arguments parse");
        args.questions.into_iter().map(Question::from).collect()
    }

    #[test]
    fn snake_case_arguments_become_wire_questions() {
        let questions = ask_args(json!({ "questions": [
            { "id": "cleanup", "question": "Delete?", "header": "Cleanup",
              "options": [{ "label": "Yes (Recommended)", "description": "frees space" }, { "label": "No" }] },
            { "id": "langs", "question": "Which?", "options": [{ "label": "Rust" }, { "label": "Go" }], "multi_select": true },
            { "id": "free", "question": "Name?", "unknown": 1 },
            { "id": "camel", "question": "?", "multiSelect": true }
        ]}));
        assert_eq!(
            serde_json::to_value(&questions).unwrap(),
            json!([
                { "id": "cleanup", "question": "Delete?", "header": "Cleanup",
                  "options": [{ "label": "Yes (Recommended)", "description": "frees space" }, { "label": "No" }] },
                { "id": "langs", "question": "Which?", "options": [{ "label": "Rust" }, { "label": "Go" }], "multiSelect": true },
                { "id": "free", "question": "Name?" },
                { "id": "camel", "question": "?", "multiSelect": true }
            ])
        );
    }

    #[test]
    fn image_content_and_local_markdown_images_are_attached() {
        let questions = ask_args(json!({ "questions": [{
            "id": "layout", "question": "Which layout? ![now](shots/now.png) ![web](https://example.com/x.png)",
            "images": [{ "type": "image", "data": "iVBORw0K", "mimeType": "image/png" }],
            "options": [
                { "label": "A", "description": "![a](file:///tmp/a.png)" },
                { "label": "B", "images": [{ "path": "b.webp" }] }
            ]
        }]}));
        assert_eq!(
            serde_json::to_value(&questions[0].images).unwrap(),
            json!([{ "mime": "image/png", "data": "iVBORw0K" }, { "path": "shots/now.png" }])
        );
        assert_eq!(
            serde_json::to_value(&questions[0].options[0].images).unwrap(),
            json!([{ "path": "/tmp/a.png" }])
        );
        assert_eq!(
            serde_json::to_value(&questions[0].options[1].images).unwrap(),
            json!([{ "path": "b.webp" }])
        );
        let args: ReviewPlanArgs = arguments(object(json!({
            "plan": "# Plan\n![before](before.png)\n![again](before.png)\n![data](data:image/png;base64,AAAA)",
            "images": [{ "type": "image", "data": "R0lG", "mimeType": "image/gif" }]
        })))
        .unwrap();
        assert_eq!(
            serde_json::to_value(&plan_question(args).images).unwrap(),
            json!([{ "mime": "image/gif", "data": "R0lG" }, { "path": "before.png" }])
        );
    }

    #[test]
    fn an_image_argument_of_another_content_type_is_refused() {
        let error = arguments::<AskUserQuestionArgs>(object(json!({ "questions": [{
            "id": "q", "question": "?", "images": [{ "type": "audio", "data": "AAAA" }]
        }]})))
        .unwrap_err();
        assert!(
            error.starts_with(
                "invalid arguments: questions[0].images[0].type: unknown variant `audio`"
            ),
            "{error}"
        );
    }

    #[test]
    fn bad_arguments_name_the_field() {
        let check = |value: Value, expected: &str| {
            let error = arguments::<AskUserQuestionArgs>(object(value)).unwrap_err();
            assert_eq!(error, expected);
        };
        check(
            json!({ "questions": [{ "id": "a", "question": "?" }, { "id": "b", "question": "?", "multi_select": "yes" }] }),
            "invalid arguments: questions[1].multi_select: invalid type: string \"yes\", expected a boolean",
        );
        check(
            json!({ "questions": [{ "question": "no id" }] }),
            "invalid arguments: questions[0]: missing field `id`",
        );
        check(
            json!({ "questions": [{ "id": "a", "question": "?", "options": [{ "label": 3 }] }] }),
            "invalid arguments: questions[0].options[0].label: invalid type: integer `3`, expected a string",
        );
        check(json!({}), "invalid arguments: missing field `questions`");
        let plan = arguments::<ReviewPlanArgs>(object(json!({ "plan": ["a"] }))).unwrap_err();
        assert_eq!(
            plan,
            "invalid arguments: plan: invalid type: array, expected a string"
        );
    }

    #[test]
    fn every_tool_schema_is_portable() {
        for tool in all() {
            let input = Value::Object(tool.input_schema.as_ref().clone());
            let output = Value::Object(
                tool.output_schema
                    .clone()
                    .expect("an output schema")
                    .as_ref()
                    .clone(),
            );
            for (which, schema) in [("input", &input), ("output", &output)] {
                assert_eq!(
                    crate::mcp::schema::tests::unportable(schema),
                    Vec::<String>::new(),
                    "{} {which} schema: {schema:#}",
                    tool.name
                );
                assert_eq!(schema["type"], "object", "{} {which}", tool.name);
            }
        }
    }

    #[test]
    fn schemas_state_the_limits_the_description_gives() {
        let tools = all();
        let ask = Value::Object(tools[0].input_schema.as_ref().clone());
        let questions = &ask["properties"]["questions"];
        assert_eq!(
            (&questions["minItems"], &questions["maxItems"]),
            (&json!(1), &json!(64))
        );
        let options = &questions["items"]["properties"]["options"];
        assert_eq!(options.get("minItems"), None);
        assert_eq!(options["maxItems"], 64);
        let description = tools[0].description.as_deref().unwrap();
        assert!(description.contains("1 to 64 questions") && description.contains("at most 64"));
        assert_eq!(ask["required"], json!(["questions"]));
        assert_eq!(questions["items"]["required"], json!(["id", "question"]));
        let item = &questions["items"]["properties"];
        assert_eq!(item["multi_select"]["type"], "boolean");
        assert_eq!(item["header"]["type"], "string");
        assert_eq!(options["items"]["required"], json!(["label"]));
        let plan = Value::Object(tools[1].input_schema.as_ref().clone());
        assert_eq!(plan["required"], json!(["plan"]));
        assert_eq!(plan["properties"]["question"]["type"], "string");
    }

    #[test]
    fn output_schemas_describe_the_structured_content() {
        let tools = all();
        let answer = Value::Object(tools[0].output_schema.clone().unwrap().as_ref().clone());
        assert_eq!(answer["required"], json!(["answers"]));
        let item = &answer["properties"]["answers"]["items"];
        assert_eq!(item["required"], json!(["id", "selected"]));
        assert_eq!(item["properties"]["custom"]["type"], "string");
        let verdict = Value::Object(tools[1].output_schema.clone().unwrap().as_ref().clone());
        assert_eq!(verdict["required"], json!(["approved", "message"]));
        assert_eq!(verdict["properties"]["message"]["type"], "string");
        assert_eq!(verdict["properties"]["approved"]["type"], "boolean");
        assert_eq!(verdict["properties"]["feedback"]["type"], "string");
    }

    #[test]
    fn tools_have_titles_and_honest_annotations() {
        for tool in all() {
            let annotations = tool.annotations.clone().expect("annotations");
            assert!(tool.title.is_some(), "{}", tool.name);
            assert_eq!(annotations.title, tool.title, "{}", tool.name);
            assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
            assert_eq!(annotations.destructive_hint, Some(false), "{}", tool.name);
            assert_eq!(annotations.open_world_hint, Some(true), "{}", tool.name);
        }
    }

    fn sample_answer() -> Answer {
        Answer {
            answers: vec![
                AnswerItem {
                    id: "cleanup".into(),
                    selected: vec!["Yes".into()],
                    ..Default::default()
                },
                AnswerItem {
                    id: "n".into(),
                    custom: Some("later".into()),
                    ..Default::default()
                },
            ],
        }
    }

    #[test]
    fn answers_are_compact_json_and_the_same_structured_object() {
        let answer = sample_answer();
        let text = r#"{"answers":[{"id":"cleanup","selected":["Yes"]},{"id":"n","selected":[],"custom":"later"}]}"#;
        assert_eq!(answer_text(&answer), text);
        let result = answer_result(&answer);
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.content[0].as_text().unwrap().text, text);
        assert_eq!(
            result.structured_content,
            Some(serde_json::from_str::<Value>(text).unwrap())
        );
        let failed = failure("no user-questions answerer accepted the request");
        assert_eq!(
            failed.content[0].as_text().unwrap().text,
            "Error: no user-questions answerer accepted the request"
        );
        assert_eq!(
            (failed.is_error, failed.structured_content),
            (Some(true), None)
        );
    }

    #[test]
    fn an_answers_pictures_follow_the_text_as_image_content() {
        let mut answer = sample_answer();
        answer.answers[1].images = vec![
            Image {
                mime: Some("image/png".into()),
                data: Some("iVBORw0K".into()),
                path: None,
            };
            2
        ];
        let text = r#"{"answers":[{"id":"cleanup","selected":["Yes"]},{"id":"n","selected":[],"custom":"later","images":2}]}"#;
        let result = answer_result(&answer);
        assert_eq!(result.content[0].as_text().unwrap().text, text);
        assert_eq!(result.content.len(), 3);
        for block in &result.content[1..] {
            let image = block.as_image().expect("image content");
            assert_eq!(
                (image.data.as_str(), image.mime_type.as_str()),
                ("iVBORw0K", "image/png")
            );
        }
        assert_eq!(
            result.structured_content,
            Some(serde_json::from_str::<Value>(text).unwrap())
        );
        let mut feedback = Answer {
            answers: vec![AnswerItem::skipped("plan")],
        };
        feedback.answers[0].custom = Some("like this".into());
        feedback.answers[0].images = answer.answers[1].images[..1].to_vec();
        let verdict = verdict_result(&feedback);
        let message = &verdict.content[0].as_text().unwrap().text;
        assert!(
            message
                .ends_with("like this\n\nThe user attached a picture to the feedback: it follows."),
            "{message}"
        );
        assert!(verdict.content[1].as_image().is_some());
        assert_eq!(verdict.structured_content.unwrap()["images"], 1);
    }

    #[test]
    fn plan_reviews_are_plain() {
        let question = plan_question(ReviewPlanArgs {
            plan: "# Plan\n- step".into(),
            question: None,
            images: Vec::new(),
        });
        assert_eq!(
            serde_json::to_value(&question).unwrap(),
            json!({ "id": "plan", "question": "Do you approve this plan?", "header": "Plan review", "detail": "# Plan\n- step",
                    "options": [
                        { "label": "Approve", "description": "Go ahead with this plan" },
                        { "label": "Keep planning", "description": "Revise the plan first; say what to change" }
                    ],
                    "intent": { "kind": "plan-review", "approve": "Approve" } })
        );
        let answer = |selected: &[&str], custom: Option<&str>| Answer {
            answers: vec![AnswerItem {
                id: "plan".into(),
                selected: selected.iter().map(|s| s.to_string()).collect(),
                custom: custom.map(Into::into),
                ..Default::default()
            }],
        };
        let approved = verdict_result(&answer(&["Approve"], None));
        assert_eq!(
            approved.content[0].as_text().unwrap().text,
            "The user APPROVED the plan. Go ahead and carry it out."
        );
        assert_eq!(
            approved.structured_content,
            Some(json!({ "approved": true,
                         "message": "The user APPROVED the plan. Go ahead and carry it out." }))
        );
        let rejected = verdict_result(&answer(&[], Some("  split step 2 ")));
        let text = &rejected.content[0].as_text().unwrap().text;
        assert!(
            text.starts_with("The user did NOT approve the plan.")
                && text.ends_with("The user's feedback:\nsplit step 2"),
            "{text}"
        );
        // What the text says, the structured content says: a client that shows the model only
        // the structured content loses nothing.
        assert_eq!(
            rejected.structured_content,
            Some(json!({ "approved": false, "message": text, "feedback": "split step 2" }))
        );
        let silent = PlanVerdict::from(&answer(&["Keep planning"], Some(" ")));
        assert_eq!((silent.approved, &silent.feedback), (false, &None));
        assert!(
            silent
                .message
                .starts_with("The user did NOT approve the plan. Keep planning")
                && silent
                    .message
                    .ends_with("The user gave no feedback; ask what to change if it is unclear."),
            "{}",
            silent.message
        );
        let with_notes = verdict_result(&answer(&["Approve"], Some("mind the cache")));
        assert_eq!(
            with_notes.structured_content.unwrap()["message"],
            "The user APPROVED the plan. Go ahead and carry it out.\n\nThe user's feedback:\nmind the cache"
        );
    }
}
