//! A client's permission prompt as askdesk questions, and the human's answer as the client's
//! decision JSON: the plan review (`ExitPlanMode`), `AskUserQuestion`, and every other tool.

use std::path::Path;

use askdesk_core::{Answer, AnswerItem, Intent, Question, QuestionOption};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::detail;
use super::json::Json;

pub use askdesk_connect::HookClient;

/// The hook's stdin: the fields both clients send for `PermissionRequest` (unknown ones ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct HookInput {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub hook_event_name: Option<String>,
    #[serde(default)]
    pub permission_mode: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    pub tool_name: String,
    pub tool_input: Map<String, Value>,
    /// Claude Code: the subagent whose call this is (absent for the main thread).
    #[serde(default)]
    pub agent_id: Option<String>,
    /// Claude Code: the MCP server of an `mcp__*` tool, as Claude Code reports it.
    #[serde(default)]
    pub mcp_server: Option<McpServer>,
    /// Claude Code: the "always allow" rules its own prompt would offer (`null` is none).
    #[serde(default, deserialize_with = "null_is_none")]
    pub permission_suggestions: Vec<Value>,
    /// `tool_input` with its keys in the client's order, echoed back in `updatedInput`.
    #[serde(skip, default = "empty_object")]
    pub echo: Json,
}

/// Claude Code's `mcp_server`: the server's name as configured and where it was configured.
#[derive(Debug, Clone, Deserialize)]
pub struct McpServer {
    pub name: String,
    pub source: String,
}

fn null_is_none<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<Value>, D::Error> {
    Ok(Option::<Vec<Value>>::deserialize(deserializer)?.unwrap_or_default())
}

fn empty_object() -> Json {
    Json::Object(Vec::new())
}

impl HookInput {
    /// The command a shell tool asks to run (`tool_input.command`, a string for Claude Code's
    /// Bash, a string or an argument list for Codex's shell), when there is one. An argument list
    /// is written as a shell would read it back (`rm -rf 'my dir'`), as the prompt shows it.
    pub fn command(&self) -> Option<String> {
        match self.tool_input.get("command")? {
            Value::String(command) => Some(command.clone()),
            Value::Array(words) => detail::shell_command(words),
            _ => None,
        }
    }

    /// The file a tool would change or read, as the client names it (Claude Code's `Edit`,
    /// `MultiEdit`, `Write`, `Read`: `tool_input.file_path`; `NotebookEdit`:
    /// `tool_input.notebook_path`), for the answer rules' `path` glob, which resolves it against
    /// the session's directory.
    pub fn path(&self) -> Option<String> {
        let key = path_field(&self.tool_name)?;
        self.tool_input.get(key)?.as_str().map(str::to_owned)
    }

    /// The URL a tool would fetch (Claude Code's `WebFetch`: `tool_input.url`), for the answer
    /// rules' `host` and `url_path` globs.
    pub fn url(&self) -> Option<String> {
        let key = url_field(&self.tool_name)?;
        self.tool_input.get(key)?.as_str().map(str::to_owned)
    }

    /// Why the answer rules could not read this call, when they could not: a field of
    /// `tool_input` they read is missing, empty or not text. They read `command` for a shell tool
    /// and for any tool that gives one (a string, or an argument list of strings), and the file
    /// ([`HookInput::path`]) or the URL ([`HookInput::url`]) of the tools that touch one (a
    /// string). Such a call is not asked in askdesk: the client shows its own prompt. Asked, a
    /// rule naming the tool would see no command, file or address where the call has one, and
    /// could allow it.
    pub fn unreadable(&self) -> Option<String> {
        let tool = self.tool_name.as_str();
        let mut read = Vec::new();
        if detail::SHELL_TOOLS.contains(&tool) || self.tool_input.contains_key("command") {
            read.push(("command", self.command()));
        }
        read.extend(path_field(tool).map(|field| (field, self.path())));
        read.extend(url_field(tool).map(|field| (field, self.url())));
        let (field, _) = read
            .into_iter()
            .find(|(_, text)| text.as_deref().is_none_or(str::is_empty))?;
        let what = match self.tool_input.get(field) {
            None => return Some(format!("the {tool} call has no tool_input.{field}")),
            // Only an empty string is read as no text.
            Some(Value::String(_)) => "empty",
            Some(Value::Array(_)) if field == "command" => {
                "a list that is not all shell words (a word is not a string, or holds a NUL byte)"
            }
            Some(Value::Array(_)) => "a list",
            Some(Value::Object(_)) => "an object",
            Some(Value::Number(_)) => "a number",
            Some(Value::Bool(_)) => "true or false",
            Some(Value::Null) => "null",
        };
        Some(format!(
            "the {tool} call's tool_input.{field} is {what}, not text askdesk's answer rules can read"
        ))
    }

    /// Parses the hook's stdin; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<HookInput, String> {
        let mut input: HookInput = serde_json::from_str(text)
            .map_err(|e| format!("the hook input is not a PermissionRequest object: {e}"))?;
        #[derive(Deserialize)]
        struct Echo {
            tool_input: Json,
        }
        input.echo = serde_json::from_str::<Echo>(text)
            .map_err(|e| format!("the hook input is not a PermissionRequest object: {e}"))?
            .tool_input;
        // The tool is what a prompt is about, and what keeps rules that do not name it away.
        if input.tool_name.trim().is_empty() {
            return Err("the hook input names no tool (tool_name is empty)".into());
        }
        match input.hook_event_name.as_deref() {
            None | Some("PermissionRequest") => Ok(input),
            Some(other) => Err(format!(
                "the hook input is a {other} event; askdesk answers PermissionRequest only"
            )),
        }
    }
}

/// The field of `tool_input` that names the file a tool would change, for the tools that have one.
fn path_field(tool: &str) -> Option<&'static str> {
    match tool {
        "Edit" | "MultiEdit" | "Write" | "Read" => Some("file_path"),
        "NotebookEdit" => Some("notebook_path"),
        _ => None,
    }
}

/// The field of `tool_input` that names the URL a tool would fetch, for the tools that have one.
fn url_field(tool: &str) -> Option<&'static str> {
    match tool {
        "WebFetch" => Some("url"),
        _ => None,
    }
}

/// The plan-review options (Claude Code's `ExitPlanMode`); the approving ones are
/// [`askdesk_rules::standing`]'s, which no rule answers with when they grant a standing permission.
pub use askdesk_rules::standing::{APPROVE_ACCEPT, APPROVE_ASK};
pub const KEEP_PLANNING: &str = "Keep planning";
/// The options of a tool approval.
pub use askdesk_rules::standing::{ALLOW_ONCE, ALLOW_SESSION};
pub const DENY: &str = "Deny";

/// What the prompt is, which decides how an answer becomes a decision.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Plan,
    /// `AskUserQuestion`: the question texts, in batch order (ids are `q1`, `q2`, ...).
    Questions(Vec<String>),
    /// Any other tool; `always` when "Always allow in this session" is offered.
    Tool {
        always: bool,
    },
}

/// The questions one prompt asks the human.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub kind: Kind,
    pub questions: Vec<Question>,
}

/// The client's decision, as its hook output carries it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "behavior", rename_all = "camelCase")]
pub enum Decision {
    #[serde(rename_all = "camelCase")]
    Allow {
        #[serde(skip_serializing_if = "Option::is_none")]
        updated_input: Option<Json>,
        #[serde(skip_serializing_if = "Option::is_none")]
        updated_permissions: Option<Vec<Value>>,
    },
    Deny {
        message: String,
    },
}

impl Decision {
    /// The line the hook prints:
    /// `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{...}}}`.
    pub fn output(&self) -> String {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Output<'a> {
            hook_specific_output: Specific<'a>,
        }
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Specific<'a> {
            hook_event_name: &'static str,
            decision: &'a Decision,
        }
        serde_json::to_string(&Output {
            hook_specific_output: Specific {
                hook_event_name: "PermissionRequest",
                decision: self,
            },
        })
        .expect("a decision serializes")
    }
}

/// Why an answer gives no decision: the client then shows its own prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoDecision(pub String);

/// The longest plan shown: the broker's default per-field limit (256 KiB).
const PLAN_LIMIT: usize = 256 * 1024;

/// The name askdesk's MCP server is given in Claude Code unless the user chose another
/// (`claude mcp add askdesk -- askdesk mcp`).
pub use askdesk_connect::MCP_SERVER;

/// The tools of askdesk's MCP server that only ask the person.
const QUESTION_TOOLS: [&str; 2] = ["ask_user_question", "review_plan"];

/// Where a server comes from that the user configured with `claude mcp add` (`-s user`, and the
/// default, `-s local`). Not `project` (a repository's `.mcp.json`, whose author chooses its
/// names and whose server of a name takes precedence over the user's), nor a plugin's, an
/// SDK host's, `--mcp-config`'s or an administrator's: a server of our name from there may be
/// anything.
const USER_SOURCES: [&str; 2] = ["user", "local"];

/// `allow` for a call of askdesk's own question tools (`ask_user_question`, `review_plan`), which
/// ask the person themselves; `None` for anything else, which is asked as usual.
///
/// Only Claude Code names the tool's server, and only a server named `server` that the user
/// configured (source `user` or `local`) counts: the tool name alone (`mcp__askdesk__...`) says
/// nothing of which server it is, and a look-alike of another name or from another source is
/// asked like any tool.
pub fn own_question_tool(client: HookClient, input: &HookInput, server: &str) -> Option<Decision> {
    let reported = input.mcp_server.as_ref()?;
    let ours = client == HookClient::ClaudeCode
        && reported.name == server
        && USER_SOURCES.contains(&reported.source.as_str())
        && QUESTION_TOOLS
            .iter()
            .any(|tool| input.tool_name == format!("mcp__{server}__{tool}"));
    ours.then_some(Decision::Allow {
        updated_input: None,
        updated_permissions: None,
    })
}

/// The questions for a hook input.
pub fn prompt(client: HookClient, input: &HookInput) -> Result<Prompt, String> {
    match (client, input.tool_name.as_str()) {
        (HookClient::ClaudeCode, "ExitPlanMode") => plan_prompt(input),
        (HookClient::ClaudeCode, "AskUserQuestion") => questions_prompt(input),
        _ => match input.unreadable() {
            Some(why) => Err(why),
            None => Ok(tool_prompt(client, input)),
        },
    }
}

/// The plan an `ExitPlanMode` prompt is about: `tool_input.plan`, else the plan file that
/// `tool_input.planFilePath` names. Claude Code (2.1.328) passes `{plan, planFilePath}` when the
/// model wrote its plan file, and `{}` when the plan was only inline (its own prompt then shows no
/// plan either): no plan, no question.
fn plan_text(input: &HookInput) -> Result<String, String> {
    let field = |key: &str| input.tool_input.get(key).and_then(Value::as_str);
    let plan = match (field("plan"), field("planFilePath")) {
        (Some(plan), _) => plan.to_owned(),
        (None, Some(path)) => read_plan_file(Path::new(path))?,
        (None, None) => {
            return Err(
                "ExitPlanMode input has no tool_input.plan and no tool_input.planFilePath".into(),
            )
        }
    };
    if plan.trim().is_empty() {
        return Err("the ExitPlanMode plan is empty".into());
    }
    // A plan is what the human approves: it is shown whole or not at all.
    if plan.len() > PLAN_LIMIT {
        return Err(format!(
            "the plan is {} bytes, more than askdesk shows in one question ({PLAN_LIMIT} bytes)",
            plan.len()
        ));
    }
    Ok(plan)
}

/// The plan file's text: an absolute path to a regular file (a link to one is followed) of at most
/// [`PLAN_LIMIT`] bytes of UTF-8; anything else is refused with the reason.
fn read_plan_file(path: &Path) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let shown = crate::terminal::one_line(&path.display().to_string());
    if !path.is_absolute() {
        return Err(format!("the plan file {shown} is not an absolute path"));
    }
    // Non-blocking, so that a FIFO in its place cannot hold the hook at open(2).
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot read the plan file {shown}: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read the plan file {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("the plan file {shown} is not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(PLAN_LIMIT as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the plan file {shown}: {e}"))?;
    if bytes.len() > PLAN_LIMIT {
        return Err(format!(
            "the plan file {shown} is more than askdesk shows in one question ({PLAN_LIMIT} bytes)"
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("the plan file {shown} is not UTF-8 text"))
}

fn plan_prompt(input: &HookInput) -> Result<Prompt, String> {
    let plan = plan_text(input)?;
    let option = |label: &str, description: &str| QuestionOption {
        label: label.to_owned(),
        description: Some(description.to_owned()),
        ..Default::default()
    };
    Ok(Prompt {
        kind: Kind::Plan,
        questions: vec![Question {
            id: "plan".into(),
            question: "Approve this plan?".into(),
            header: Some("Plan review".into()),
            detail: Some(plan),
            options: vec![
                option(APPROVE_ASK, "Leave plan mode; each edit still asks first"),
                option(
                    APPROVE_ACCEPT,
                    "Leave plan mode and accept file edits for this session",
                ),
                option(
                    KEEP_PLANNING,
                    "Stay in plan mode; say in the feedback what to change",
                ),
            ],
            intent: Some(Intent {
                kind: Intent::PLAN_REVIEW.into(),
                approve: APPROVE_ASK.into(),
            }),
            ..Default::default()
        }],
    })
}

/// One question of `AskUserQuestion`'s input.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AskedQuestion {
    question: String,
    #[serde(default)]
    header: Option<String>,
    #[serde(default)]
    options: Vec<AskedOption>,
    #[serde(default)]
    multi_select: bool,
}

#[derive(Deserialize)]
struct AskedOption {
    label: String,
    #[serde(default)]
    description: Option<String>,
    /// A preview of what the option means, as markdown.
    #[serde(default)]
    markdown: Option<String>,
}

fn questions_prompt(input: &HookInput) -> Result<Prompt, String> {
    let asked: Vec<AskedQuestion> = input
        .tool_input
        .get("questions")
        .cloned()
        .ok_or("AskUserQuestion input has no tool_input.questions")
        .and_then(|value| {
            serde_json::from_value(value)
                .map_err(|_| "AskUserQuestion input has malformed tool_input.questions")
        })?;
    if asked.is_empty() {
        return Err("AskUserQuestion input has no questions".into());
    }
    // The decision maps each question's text to its answer, so two questions with one text
    // could not both be answered (the client itself requires distinct texts).
    for (index, later) in asked.iter().enumerate() {
        if asked[..index].iter().any(|q| q.question == later.question) {
            return Err(format!(
                "AskUserQuestion input asks {:?} twice; its answers are keyed by question text",
                later.question
            ));
        }
    }
    let texts = asked.iter().map(|q| q.question.clone()).collect();
    let questions = asked
        .into_iter()
        .enumerate()
        .map(|(index, asked)| {
            // Options carry no detail of their own on the wire: their previews go in the
            // question's detail, one section per option.
            let previews: Vec<String> = asked
                .options
                .iter()
                .filter_map(|o| {
                    let markdown = o.markdown.as_deref()?.trim();
                    (!markdown.is_empty()).then(|| format!("**{}**\n\n{markdown}", o.label))
                })
                .collect();
            Question {
                id: format!("q{}", index + 1),
                question: asked.question,
                header: asked.header.filter(|h| !h.is_empty()),
                detail: (!previews.is_empty()).then(|| detail::previews(previews)),
                options: asked
                    .options
                    .into_iter()
                    .map(|o| QuestionOption {
                        label: o.label,
                        description: o.description.filter(|d| !d.is_empty()),
                        ..Default::default()
                    })
                    .collect(),
                multi_select: asked.multi_select,
                ..Default::default()
            }
        })
        .collect();
    Ok(Prompt {
        kind: Kind::Questions(texts),
        questions,
    })
}

fn tool_prompt(client: HookClient, input: &HookInput) -> Prompt {
    let always = client == HookClient::ClaudeCode && !input.permission_suggestions.is_empty();
    let shown = detail::describe(&input.tool_name, &input.tool_input);
    let mut options = vec![QuestionOption {
        label: ALLOW_ONCE.into(),
        description: Some("Let it run this time; ask again next time".into()),
        ..Default::default()
    }];
    if always {
        options.push(QuestionOption {
            label: ALLOW_SESSION.into(),
            description: Some(detail::suggestions(&input.permission_suggestions)),
            ..Default::default()
        });
    }
    options.push(QuestionOption {
        label: DENY.into(),
        description: Some("Do not run it; type feedback instead to tell the agent why".into()),
        ..Default::default()
    });
    Prompt {
        kind: Kind::Tool { always },
        questions: vec![Question {
            id: "permission".into(),
            question: shown.question,
            header: Some(shown.header),
            detail: Some(shown.detail),
            options,
            ..Default::default()
        }],
    }
}

/// The decision the human's answer makes, or why it makes none.
pub fn decide(input: &HookInput, prompt: &Prompt, answer: &Answer) -> Result<Decision, NoDecision> {
    let first = answer.answers.first();
    match &prompt.kind {
        Kind::Plan => {
            let item = first.ok_or_else(skipped)?;
            match (item.selected.first().map(String::as_str), feedback(item)) {
                (Some(APPROVE_ASK), _) => Ok(allow_echo(input, None)),
                (Some(APPROVE_ACCEPT), _) => Ok(allow_echo(
                    input,
                    Some(vec![serde_json::json!({
                        "type": "setMode", "mode": "acceptEdits", "destination": "session"
                    })]),
                )),
                (Some(_), Some(text)) | (None, Some(text)) => Ok(Decision::Deny {
                    message: text.to_owned(),
                }),
                (Some(KEEP_PLANNING), None) => Ok(Decision::Deny {
                    message:
                        "The user wants to keep planning and gave no feedback; ask what to change."
                            .into(),
                }),
                _ => Err(skipped()),
            }
        }
        Kind::Questions(texts) => {
            let mut answers = Vec::new();
            for (text, item) in texts.iter().zip(&answer.answers) {
                let mut parts: Vec<&str> = item.selected.iter().map(String::as_str).collect();
                parts.extend(feedback(item));
                if !parts.is_empty() {
                    answers.push((text.clone(), Json::str(parts.join(", "))));
                }
            }
            if answers.is_empty() {
                return Err(skipped());
            }
            let mut updated = input.echo.clone();
            updated.remove("answers");
            if let Json::Object(fields) = &mut updated {
                fields.push(("answers".into(), Json::Object(answers)));
            }
            Ok(Decision::Allow {
                updated_input: Some(updated),
                updated_permissions: None,
            })
        }
        Kind::Tool { always } => {
            let item = first.ok_or_else(skipped)?;
            match (item.selected.first().map(String::as_str), feedback(item)) {
                (_, Some(text)) => Ok(Decision::Deny {
                    message: text.to_owned(),
                }),
                (Some(ALLOW_ONCE), None) => Ok(Decision::Allow {
                    updated_input: None,
                    updated_permissions: None,
                }),
                (Some(ALLOW_SESSION), None) if *always => Ok(Decision::Allow {
                    updated_input: None,
                    updated_permissions: Some(for_session(&input.permission_suggestions)),
                }),
                (Some(DENY), None) => Ok(Decision::Deny {
                    message: format!("The user denied this {} call.", input.tool_name),
                }),
                _ => Err(skipped()),
            }
        }
    }
}

fn skipped() -> NoDecision {
    NoDecision("the question was skipped".into())
}

/// The free text the human typed, if any.
fn feedback(item: &AnswerItem) -> Option<&str> {
    item.custom
        .as_deref()
        .filter(|text| !text.trim().is_empty())
}

/// `allow` echoing the tool input unchanged: Claude Code ignores a bare `allow` for a tool that
/// needs the user (ExitPlanMode).
fn allow_echo(input: &HookInput, updated_permissions: Option<Vec<Value>>) -> Decision {
    Decision::Allow {
        updated_input: Some(input.echo.clone()),
        updated_permissions,
    }
}

/// The client's own suggestions, scoped to this session whatever settings file they named.
fn for_session(suggestions: &[Value]) -> Vec<Value> {
    suggestions
        .iter()
        .map(|suggestion| {
            let mut suggestion = suggestion.clone();
            if let Value::Object(fields) = &mut suggestion {
                fields.insert("destination".into(), Value::String("session".into()));
            }
            suggestion
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;

    fn input(value: Value) -> HookInput {
        HookInput::parse(&value.to_string()).expect("a valid input")
    }

    fn item(selected: &[&str], custom: Option<&str>) -> AnswerItem {
        AnswerItem {
            id: "x".into(),
            selected: selected.iter().map(|s| s.to_string()).collect(),
            custom: custom.map(Into::into),
            ..Default::default()
        }
    }

    fn check(client: HookClient, hook: Value, items: Vec<AnswerItem>, expected: Option<Value>) {
        let hook = input(hook);
        let prompt = prompt(client, &hook).expect("a prompt");
        let got = decide(&hook, &prompt, &Answer { answers: items });
        match expected {
            Some(expected) => {
                let line = got.expect("a decision").output();
                assert_eq!(
                    serde_json::from_str::<Value>(&line).unwrap(),
                    json!({ "hookSpecificOutput": { "hookEventName": "PermissionRequest", "decision": expected } })
                );
            }
            None => assert!(got.is_err(), "{got:?}"),
        }
    }

    fn plan() -> Value {
        json!({ "session_id": "s", "hook_event_name": "PermissionRequest", "tool_name": "ExitPlanMode",
                "tool_input": { "plan": "# Plan\n- one" } })
    }

    #[test]
    fn plan_answers_become_decisions() {
        let c = HookClient::ClaudeCode;
        let echoed = json!({ "plan": "# Plan\n- one" });
        check(
            c,
            plan(),
            vec![item(&[APPROVE_ASK], None)],
            Some(json!({ "behavior": "allow", "updatedInput": echoed })),
        );
        check(
            c,
            plan(),
            vec![item(&[APPROVE_ACCEPT], None)],
            Some(json!({ "behavior": "allow", "updatedInput": echoed,
                           "updatedPermissions": [{ "type": "setMode", "mode": "acceptEdits", "destination": "session" }] })),
        );
        check(
            c,
            plan(),
            vec![item(&[], Some("split step 2"))],
            Some(json!({ "behavior": "deny", "message": "split step 2" })),
        );
        check(
            c,
            plan(),
            vec![item(&[KEEP_PLANNING], None)],
            Some(
                json!({ "behavior": "deny", "message": "The user wants to keep planning and gave no feedback; ask what to change." }),
            ),
        );
        check(c, plan(), vec![item(&[], None)], None);
    }

    #[test]
    fn plan_question_is_a_plan_review() {
        let prompt = prompt(HookClient::ClaudeCode, &input(plan())).unwrap();
        let q = &prompt.questions[0];
        assert_eq!(q.detail.as_deref(), Some("# Plan\n- one"));
        assert_eq!(q.intent.as_ref().unwrap().approve, APPROVE_ASK);
        assert!(q.options.iter().any(|o| o.label == APPROVE_ACCEPT));
        let empty = json!({ "tool_name": "ExitPlanMode", "tool_input": { "plan": " " } });
        assert!(super::prompt(HookClient::ClaudeCode, &input(empty)).is_err());
        // A plan is shown whole or not at all: the longest the broker takes, and not a byte more.
        let sized = |n: usize| json!({ "tool_name": "ExitPlanMode", "tool_input": { "plan": "p".repeat(n) } });
        let whole = super::prompt(HookClient::ClaudeCode, &input(sized(PLAN_LIMIT))).unwrap();
        assert_eq!(
            whole.questions[0].detail.as_ref().unwrap().len(),
            PLAN_LIMIT
        );
        let Err(why) = super::prompt(HookClient::ClaudeCode, &input(sized(PLAN_LIMIT + 1))) else {
            panic!("a plan over the limit was shown");
        };
        assert_eq!(
            why,
            "the plan is 262145 bytes, more than askdesk shows in one question (262144 bytes)"
        );
    }

    #[test]
    fn a_plan_file_is_read_when_the_input_has_no_plan() {
        let dir = tempfile::tempdir().unwrap();
        let plan_at = |path: &Path| {
            input(json!({ "tool_name": "ExitPlanMode",
                          "tool_input": { "planFilePath": path.to_str().unwrap() } }))
        };
        let file = dir.path().join("plan.md");
        std::fs::write(&file, "# From the file\n- one").unwrap();
        let hook = plan_at(&file);
        let prompt = prompt(HookClient::ClaudeCode, &hook).unwrap();
        assert_eq!(
            prompt.questions[0].detail.as_deref(),
            Some("# From the file\n- one")
        );
        // Approving echoes the input as Claude Code gave it: it reads its plan file itself.
        check(
            HookClient::ClaudeCode,
            json!({ "tool_name": "ExitPlanMode", "tool_input": { "planFilePath": file } }),
            vec![item(&[APPROVE_ASK], None)],
            Some(json!({ "behavior": "allow", "updatedInput": { "planFilePath": file } })),
        );
        // `plan` wins over the file when both are given.
        let both = input(json!({ "tool_name": "ExitPlanMode",
                                 "tool_input": { "plan": "# Given", "planFilePath": file } }));
        let prompt = super::prompt(HookClient::ClaudeCode, &both).unwrap();
        assert_eq!(prompt.questions[0].detail.as_deref(), Some("# Given"));
        // At the limit it is shown; a byte more, empty, not text, not a file, missing or relative: refused.
        let whole = dir.path().join("whole.md");
        std::fs::write(&whole, "p".repeat(PLAN_LIMIT)).unwrap();
        assert!(super::prompt(HookClient::ClaudeCode, &plan_at(&whole)).is_ok());
        let big = dir.path().join("big.md");
        std::fs::write(&big, "p".repeat(PLAN_LIMIT + 1)).unwrap();
        let binary = dir.path().join("binary.md");
        std::fs::write(&binary, [0xff, 0xfe, b'#']).unwrap();
        let empty = dir.path().join("empty.md");
        std::fs::write(&empty, " \n").unwrap();
        let fifo = dir.path().join("fifo.md");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) reads the NUL-terminated path, which outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        for (path, why) in [
            (
                big.clone(),
                "is more than askdesk shows in one question (262144 bytes)",
            ),
            (binary, "is not UTF-8 text"),
            (empty, "the ExitPlanMode plan is empty"),
            (fifo, "is not a regular file"),
            (dir.path().to_owned(), "is not a regular file"),
            (dir.path().join("missing.md"), "cannot read the plan file"),
            (
                PathBuf::from("plans/relative.md"),
                "is not an absolute path",
            ),
        ] {
            let Err(error) = super::prompt(HookClient::ClaudeCode, &plan_at(&path)) else {
                panic!("{} was shown", path.display());
            };
            assert!(error.contains(why), "{}: {error}", path.display());
        }
        let none = input(json!({ "tool_name": "ExitPlanMode", "tool_input": {} }));
        assert_eq!(
            super::prompt(HookClient::ClaudeCode, &none).unwrap_err(),
            "ExitPlanMode input has no tool_input.plan and no tool_input.planFilePath"
        );
    }

    #[test]
    fn long_option_previews_are_cut_to_fit_one_detail() {
        let option = |label: &str, n: usize| json!({ "label": label, "markdown": "m".repeat(n) });
        let hook = json!({ "tool_name": "AskUserQuestion", "tool_input": { "questions": [
            { "question": "Which?", "options": [option("A", 200_000), option("B", 200_000), option("C", 5)] }
        ] } });
        let prompt = prompt(HookClient::ClaudeCode, &input(hook)).unwrap();
        let detail = prompt.questions[0].detail.as_deref().unwrap();
        assert!(detail.len() <= PLAN_LIMIT, "{}", detail.len());
        assert_eq!(detail.matches("more bytes not shown").count(), 2);
        assert!(
            detail.ends_with("**C**\n\nmmmmm"),
            "the short preview is whole"
        );
    }

    #[test]
    fn ask_user_question_answers_map_question_text_to_labels() {
        let hook = json!({ "tool_name": "AskUserQuestion", "tool_input": { "questions": [
            { "question": "Which database?", "header": "DB", "multiSelect": false,
              "options": [{ "label": "Postgres", "description": "server", "markdown": "```sql\nselect 1;\n```" },
                          { "label": "SQLite" }] },
            { "question": "Which targets?", "header": "Targets", "multiSelect": true,
              "options": [{ "label": "Linux" }, { "label": "macOS" }, { "label": "Windows" }] },
            { "question": "Anything else?", "options": [{ "label": "No" }] }
        ]}});
        let prompt = prompt(HookClient::ClaudeCode, &input(hook.clone())).unwrap();
        assert_eq!(
            prompt.questions[0].detail.as_deref(),
            Some("**Postgres**\n\n```sql\nselect 1;\n```")
        );
        assert!(prompt.questions[1].multi_select);
        let mut updated = hook["tool_input"].clone();
        updated["answers"] =
            json!({ "Which database?": "use DuckDB", "Which targets?": "Linux, Windows, BSD" });
        check(
            HookClient::ClaudeCode,
            hook,
            vec![
                item(&[], Some("use DuckDB")),
                item(&["Linux", "Windows"], Some("BSD")),
                item(&[], None),
            ],
            Some(json!({ "behavior": "allow", "updatedInput": updated })),
        );
    }

    #[test]
    fn ask_user_question_with_a_repeated_text_is_refused() {
        let hook = json!({ "tool_name": "AskUserQuestion", "tool_input": { "questions": [
            { "question": "Which one?", "options": [{ "label": "A" }] },
            { "question": "Why?", "options": [{ "label": "B" }] },
            { "question": "Which one?", "options": [{ "label": "C" }] }
        ]}});
        let error = prompt(HookClient::ClaudeCode, &input(hook)).unwrap_err();
        assert!(error.contains("asks \"Which one?\" twice"), "{error}");
    }

    #[test]
    fn tool_answers_become_decisions() {
        let suggestion = json!({ "type": "addRules", "rules": [{ "toolName": "Bash", "ruleContent": "npm test:*" }],
                                 "behavior": "allow", "destination": "localSettings" });
        let bash = json!({ "tool_name": "Bash", "tool_input": { "command": "npm test" },
                           "permission_suggestions": [suggestion] });
        let c = HookClient::ClaudeCode;
        check(
            c,
            bash.clone(),
            vec![item(&[ALLOW_ONCE], None)],
            Some(json!({ "behavior": "allow" })),
        );
        let mut session = suggestion.clone();
        session["destination"] = json!("session");
        check(
            c,
            bash.clone(),
            vec![item(&[ALLOW_SESSION], None)],
            Some(json!({ "behavior": "allow", "updatedPermissions": [session] })),
        );
        check(
            c,
            bash.clone(),
            vec![item(&[DENY], None)],
            Some(json!({ "behavior": "deny", "message": "The user denied this Bash call." })),
        );
        check(
            c,
            bash.clone(),
            vec![item(&[], Some("use cargo instead"))],
            Some(json!({ "behavior": "deny", "message": "use cargo instead" })),
        );
        check(c, bash, vec![item(&[], None)], None);
    }

    #[test]
    fn always_allow_only_when_the_client_suggests_rules() {
        let codex = json!({ "tool_name": "Bash", "tool_input": { "command": "ls" },
                            "permission_suggestions": [{ "type": "addRules" }] });
        let prompt = prompt(HookClient::Codex, &input(codex.clone())).unwrap();
        let labels: Vec<_> = prompt.questions[0]
            .options
            .iter()
            .map(|o| o.label.as_str())
            .collect();
        assert_eq!(labels, [ALLOW_ONCE, DENY]);
        // Even a forged "always" answer makes no decision where it was not offered.
        check(
            HookClient::Codex,
            codex,
            vec![item(&[ALLOW_SESSION], None)],
            None,
        );
        let bare = json!({ "tool_name": "Bash", "tool_input": { "command": "ls" } });
        let prompt = super::prompt(HookClient::ClaudeCode, &input(bare)).unwrap();
        assert_eq!(prompt.questions[0].options.len(), 2);
    }

    #[test]
    fn a_call_the_rules_cannot_read_is_left_to_the_clients_prompt() {
        let call = |tool: &str, tool_input: Value| {
            input(
                json!({ "tool_name": tool, "tool_input": tool_input, "cwd": "/w",
                          "permission_suggestions": [{ "type": "setMode", "mode": "acceptEdits" }] }),
            )
        };
        let odd = [
            json!(7),
            json!({ "path": "/w/a.rs" }),
            json!(null),
            json!(true),
            json!(""),
        ];
        for (tool, field) in [
            ("Edit", "file_path"),
            ("MultiEdit", "file_path"),
            ("Write", "file_path"),
            ("NotebookEdit", "notebook_path"),
            ("WebFetch", "url"),
            ("Bash", "command"),
            ("shell", "command"),
            // Any tool that gives a command: the rules read it.
            ("mcp__x__run", "command"),
        ] {
            // A list of strings is a command (Codex's argument list), and only a list of words
            // a shell can quote.
            let lists = match field {
                "command" => vec![json!(["rm", 7]), json!(["rm", "a\u{0}b"]), json!([])],
                _ => vec![json!(["/w/a.rs"])],
            };
            for value in odd.iter().cloned().chain(lists) {
                for client in [HookClient::ClaudeCode, HookClient::Codex] {
                    let Err(why) = prompt(client, &call(tool, json!({ field: value.clone() })))
                    else {
                        panic!("{tool} with {field} = {value} was asked");
                    };
                    assert!(
                        why.starts_with(&format!("the {tool} call's tool_input.{field} is ")),
                        "{why}"
                    );
                }
            }
            // Missing: a tool that touches a file, an address or runs a command says which.
            if !tool.starts_with("mcp__") {
                let Err(why) = prompt(HookClient::ClaudeCode, &call(tool, json!({}))) else {
                    panic!("{tool} without {field} was asked");
                };
                assert_eq!(why, format!("the {tool} call has no tool_input.{field}"));
            }
        }
        // Read as text, each is asked; a tool whose fields the rules do not read is asked whatever
        // they hold.
        for (tool, tool_input) in [
            (
                "Edit",
                json!({ "file_path": "src/a.rs", "old_string": "a", "new_string": "b" }),
            ),
            ("NotebookEdit", json!({ "notebook_path": "/w/n.ipynb" })),
            ("WebFetch", json!({ "url": "https://docs.rs/" })),
            ("Bash", json!({ "command": "ls" })),
            ("shell", json!({ "command": ["git", "status"] })),
            ("mcp__x__y", json!({ "url": ["a"], "path": 7 })),
        ] {
            assert!(
                prompt(HookClient::ClaudeCode, &call(tool, tool_input.clone())).is_ok(),
                "{tool} {tool_input}"
            );
        }
    }

    #[test]
    fn codex_decisions_never_carry_permissions() {
        // Codex refuses a decision with updatedPermissions, and its prompt offers no "always".
        let bash = json!({ "tool_name": "Bash", "tool_input": { "command": "ls" },
                           "permission_suggestions": [{ "type": "setMode", "mode": "bypassPermissions" }] });
        for label in [ALLOW_ONCE, ALLOW_SESSION, APPROVE_ACCEPT, DENY] {
            let hook = input(bash.clone());
            let prompt = prompt(HookClient::Codex, &hook).unwrap();
            let answer = Answer {
                answers: vec![item(&[label], None)],
            };
            if let Ok(Decision::Allow {
                updated_permissions,
                ..
            }) = decide(&hook, &prompt, &answer)
            {
                assert_eq!(updated_permissions, None, "{label}");
            }
        }
    }

    #[test]
    fn only_askdesks_own_question_tools_are_allowed_unasked() {
        let call = |tool: &str, server: Value| {
            let mut hook = json!({ "hook_event_name": "PermissionRequest", "tool_name": tool,
                                   "tool_input": { "plan": "# P" } });
            if !server.is_null() {
                hook["mcp_server"] = server;
            }
            input(hook)
        };
        let allowed =
            |client, input: &HookInput, name| own_question_tool(client, input, name).is_some();
        let c = HookClient::ClaudeCode;
        for tool in [
            "mcp__askdesk__review_plan",
            "mcp__askdesk__ask_user_question",
        ] {
            for source in ["user", "local"] {
                let ours = call(tool, json!({ "name": "askdesk", "source": source }));
                assert!(allowed(c, &ours, MCP_SERVER), "{tool} {source}");
                assert!(!allowed(HookClient::Codex, &ours, MCP_SERVER));
                assert!(!allowed(c, &ours, "desk"), "another configured name");
            }
            // A server of our name from a repository, a plugin, an SDK host, --mcp-config, an
            // administrator or a source no one knows yet; or no server reported at all.
            for source in [
                "project",
                "plugin",
                "sdk",
                "dynamic",
                "managed",
                "enterprise",
                "claudeai",
                "agent",
                "",
                "User",
            ] {
                let theirs = call(tool, json!({ "name": "askdesk", "source": source }));
                assert!(!allowed(c, &theirs, MCP_SERVER), "{tool} {source}");
            }
            assert!(!allowed(c, &call(tool, Value::Null), MCP_SERVER));
        }
        // Look-alikes: another server's name or tool, a server name that only normalises alike.
        for (tool, name) in [
            ("mcp__askdesk2__review_plan", "askdesk2"),
            ("mcp__askdesk__review_plan", "askdesk2"),
            ("mcp__askdesk2__review_plan", "askdesk"),
            ("mcp__ask_desk__review_plan", "ask desk"),
            ("mcp__askdesk__run_command", "askdesk"),
            ("mcp__askdesk__review_plan_and_run", "askdesk"),
            ("review_plan", "askdesk"),
            ("mcp__askdesk__review_plan ", "askdesk"),
        ] {
            let input = call(tool, json!({ "name": name, "source": "local" }));
            assert!(!allowed(c, &input, MCP_SERVER), "{tool} of {name}");
        }
        // A server the user named otherwise, with --mcp-server.
        let desk = call(
            "mcp__desk__ask_user_question",
            json!({ "name": "desk", "source": "user" }),
        );
        assert!(allowed(c, &desk, "desk"));
        assert!(!allowed(c, &desk, MCP_SERVER));
    }

    #[test]
    fn bad_inputs_are_refused_with_a_reason() {
        for (text, needle) in [
            ("not json", "not a PermissionRequest object"),
            ("{\"tool_name\":\"Bash\"}", "tool_input"),
            (
                "{\"tool_name\":\"Bash\",\"tool_input\":[]}",
                "not a PermissionRequest object",
            ),
            (
                "{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{}}",
                "PreToolUse event",
            ),
        ] {
            let error = HookInput::parse(text).unwrap_err();
            assert!(error.contains(needle), "{text}: {error}");
        }
        let bad = json!({ "tool_name": "AskUserQuestion", "tool_input": { "questions": "?" } });
        assert!(prompt(HookClient::ClaudeCode, &input(bad)).is_err());
    }
}
