//! `askdesk mcp`: an MCP server over stdio (rmcp) offering `ask_user_question` and `review_plan`,
//! forwarded to the broker as one root agent per MCP session.
//!
//! Nothing but MCP goes to stdout. The broker connection is made when the client has initialized
//! (without starting anything) or at the first call (starting the desktop app if need be), and is
//! made again if the broker restarts. When the session ends the agent is unregistered.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use askdesk_broker::client::{Client, ClientError};
use askdesk_core::{
    AgentRegistration, Answer, AskRequest, Handle, Intent, Question, QuestionOption, RegistryError,
};
use rmcp::handler::server::common::schema_for_input;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, JsonObject, ProgressNotificationParam,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{tool, tool_handler, tool_router, RoleServer, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};
use tokio::sync::Mutex;

use crate::ask::{APPROVE, KEEP_PLANNING};
use crate::cli::McpArgs;
use crate::exit::{Error, Result};

/// How often a waiting call tells the client it is still alive.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);
/// How long a call waits for a desktop app it started to open the socket.
const LAUNCH_WAIT: Duration = Duration::from_secs(10);
/// A failed launch is not retried sooner than this.
const LAUNCH_RETRY: Duration = Duration::from_secs(30);
/// The desktop app's executable.
const DESKTOP_EXE: &str = "askdesk-desktop";

pub async fn run(args: McpArgs, socket: PathBuf) -> Result<()> {
    let bridge = Arc::new(Bridge::new(socket, !args.no_launch));
    let server = AskdeskMcp::new(bridge.clone());
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| Error::Internal(format!("the MCP session could not start: {e}")))?;
    let quit = running.waiting().await;
    tracing::debug!(?quit, "MCP session ended");
    bridge.close().await;
    Ok(())
}

// ----- arguments -----

/// The arguments of `ask_user_question`: the harness tool's, snake_case.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AskUserQuestionArgs {
    /// The questions, shown together as one batch in this order (1 to 64).
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
    /// The choices, usually 2 to 4. The recommended one goes first and ends its label with
    /// "(Recommended)". Omit for a free-text question.
    #[serde(default)]
    pub options: Vec<McpOption>,
    /// Whether several options may be chosen together.
    #[serde(default, alias = "multiSelect")]
    pub multi_select: bool,
}

/// One choice.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct McpOption {
    /// What the user picks; returned unchanged in the answer.
    pub label: String,
    /// One line on what choosing it means.
    #[serde(default)]
    pub description: Option<String>,
}

/// The arguments of `review_plan`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewPlanArgs {
    /// The plan, as markdown (headings, lists, task lists, tables, code blocks).
    pub plan: String,
    /// The question shown above the plan; defaults to "Do you approve this plan?".
    #[serde(default)]
    pub question: Option<String>,
}

impl From<McpQuestion> for Question {
    fn from(q: McpQuestion) -> Question {
        Question {
            id: q.id,
            question: q.question,
            header: q.header,
            detail: None,
            options: q
                .options
                .into_iter()
                .map(|o| QuestionOption {
                    label: o.label,
                    description: o.description,
                })
                .collect(),
            multi_select: q.multi_select,
            intent: None,
        }
    }
}

/// The one plan-review question `review_plan` asks.
pub fn plan_question(args: ReviewPlanArgs) -> Question {
    Question {
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
            },
            QuestionOption {
                label: KEEP_PLANNING.to_owned(),
                description: Some("Revise the plan first; say what to change".into()),
            },
        ],
        multi_select: false,
        intent: Some(Intent {
            kind: Intent::PLAN_REVIEW.to_owned(),
            approve: APPROVE.to_owned(),
        }),
    }
}

/// The text of a `review_plan` result: plainly approved or not, with the human's feedback.
pub fn plan_verdict(answer: &Answer) -> String {
    let item = answer.answers.first();
    let approved = item.is_some_and(|i| i.selected.iter().any(|l| l == APPROVE));
    let feedback = item
        .and_then(|i| i.custom.as_deref())
        .map(str::trim)
        .filter(|f| !f.is_empty());
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
    text
}

/// The compact answer JSON `ask_user_question` returns (`custom` omitted when unused).
pub fn answer_text(answer: &Answer) -> String {
    serde_json::to_string(answer).expect("an answer serializes")
}

/// A tool failure: `Error: <message>`, flagged `isError`.
fn failure(message: impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("Error: {message}"))])
}

fn arguments<T: DeserializeOwned>(arguments: JsonObject) -> Result<T, CallToolResult> {
    serde_json::from_value(Value::Object(arguments))
        .map_err(|e| failure(format!("invalid arguments: {e}")))
}

// ----- the MCP server -----

const ASK_DESCRIPTION: &str = "\
Ask the human user one or more structured questions and wait for the answer. Call this when you need a \
decision, a preference, or information only the user has, and guessing would risk wasted or unwanted \
work: choosing between approaches, confirming a destructive or irreversible action, resolving an \
ambiguous requirement. Do not call it for things you can find out yourself, and batch related questions \
into one call. Give each question a short unique id, the question, a very short header, and usually 2 to \
4 options, each with a label and a one-line description. Put the option you recommend first and end its \
label with \"(Recommended)\". Set multi_select when several options may be chosen together. The user may \
also answer in free text or skip a question. The result is JSON: \
{\"answers\":[{\"id\":\"...\",\"selected\":[\"<labels>\"],\"custom\":\"<free text, when given>\"}]}; an \
empty selected list without custom means the user skipped that question.";

const REVIEW_DESCRIPTION: &str = "\
Show a plan (markdown) to the human user for review before carrying it out, and wait for the verdict. \
Call this when you have finished planning a non-trivial, risky or long change and want approval first. \
The result says plainly whether the plan was approved; if it was not, it carries the user's feedback: \
revise the plan accordingly and call review_plan again.";

const INSTRUCTIONS: &str = "\
askdesk puts your question in front of the human on this computer (a desktop dialog) and returns the \
answer. Use ask_user_question for decisions and missing information, review_plan to get a plan approved. \
Both wait until the human answers.";

#[derive(Clone)]
pub struct AskdeskMcp {
    bridge: Arc<Bridge>,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl AskdeskMcp {
    fn new(bridge: Arc<Bridge>) -> Self {
        AskdeskMcp {
            bridge,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "ask_user_question",
        description = ASK_DESCRIPTION,
        input_schema = schema_for_input::<AskUserQuestionArgs>().expect("the arguments are an object")
    )]
    async fn ask_user_question(
        &self,
        args: JsonObject,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let args: AskUserQuestionArgs = match arguments(args) {
            Ok(args) => args,
            Err(failure) => return failure,
        };
        let questions = args.questions.into_iter().map(Question::from).collect();
        match self.ask(questions, &context).await {
            Ok(answer) => CallToolResult::success(vec![ContentBlock::text(answer_text(&answer))]),
            Err(message) => failure(message),
        }
    }

    #[tool(
        name = "review_plan",
        description = REVIEW_DESCRIPTION,
        input_schema = schema_for_input::<ReviewPlanArgs>().expect("the arguments are an object")
    )]
    async fn review_plan(
        &self,
        args: JsonObject,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let args: ReviewPlanArgs = match arguments(args) {
            Ok(args) => args,
            Err(failure) => return failure,
        };
        match self.ask(vec![plan_question(args)], &context).await {
            Ok(answer) => CallToolResult::success(vec![ContentBlock::text(plan_verdict(&answer))]),
            Err(message) => failure(message),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for AskdeskMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("askdesk", env!("CARGO_PKG_VERSION")).with_title("askdesk"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Register the session's agent now if a broker runs, so the desktop shows it before it asks;
        // starting the desktop app waits for a call that needs it.
        let client = context
            .peer
            .peer_info()
            .map(|info| info.client_info.clone());
        let bridge = self.bridge.clone();
        tokio::spawn(async move {
            if let Err(error) = bridge.link(client.as_ref(), false).await {
                tracing::debug!(%error, "no broker yet");
            }
        });
    }
}

impl AskdeskMcp {
    /// Asks through the broker, keeping the client's request alive with progress notifications
    /// and cancelling the ask when the client cancels the call. `Err` is the message after `Error: `.
    async fn ask(
        &self,
        questions: Vec<Question>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Answer, String> {
        let client_info = context.client_info();
        let link = self
            .bridge
            .link(client_info.as_ref(), true)
            .await
            .map_err(|e| e.to_string())?;
        let request = AskRequest {
            questions,
            agent: Some(link.agent.clone()),
        };
        let cancel = context.ct.child_token();
        let ask = link.client.ask(&request, &cancel);
        tokio::pin!(ask);
        let progress_token = context.meta.get_progress_token();
        let started = Instant::now();
        let mut ticks =
            tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
        let mut sent = 0u32;
        let result = loop {
            tokio::select! {
                result = &mut ask => break result,
                _ = ticks.tick(), if progress_token.is_some() => {
                    sent += 1;
                    let token = progress_token.clone().expect("checked by the guard");
                    let param = ProgressNotificationParam::new(token, f64::from(sent)).with_message(format!(
                        "waiting for the user's answer ({}s)",
                        started.elapsed().as_secs()
                    ));
                    if let Err(error) = context.peer.notify_progress(param).await {
                        tracing::debug!(%error, "progress notification not sent");
                    }
                }
            }
        };
        result.map_err(|error| {
            if matches!(error, ClientError::Io(_) | ClientError::Closed) {
                // The broker went away; the next call connects again.
                self.bridge.forget(&link);
            }
            Error::from(error).to_string()
        })
    }
}

// ----- the broker side -----

/// The session's link to the broker: its connection and its root agent.
pub struct Link {
    client: Client,
    agent: Handle,
}

pub struct Bridge {
    socket: PathBuf,
    launch: bool,
    link: Mutex<Option<Arc<Link>>>,
    last_launch: std::sync::Mutex<Option<Instant>>,
}

impl Bridge {
    fn new(socket: PathBuf, launch: bool) -> Self {
        Bridge {
            socket,
            launch,
            link: Mutex::new(None),
            last_launch: std::sync::Mutex::new(None),
        }
    }

    /// The live link, connecting and registering the agent if there is none. With `launch`, a
    /// missing broker is started (the desktop app) when that can work.
    async fn link(&self, client_info: Option<&Implementation>, launch: bool) -> Result<Arc<Link>> {
        // Held across the connect so concurrent first calls register one agent, not several.
        let mut slot = self.link.lock().await;
        if let Some(link) = slot.as_ref() {
            // A broker that went away (restarted, stopped) closed the connection: connect again.
            let closed = tokio::time::timeout(Duration::ZERO, link.client.closed())
                .await
                .is_ok();
            if !closed {
                return Ok(link.clone());
            }
            tracing::info!("the broker closed the connection; connecting again");
            *slot = None;
        }
        let client = match Client::connect(&self.socket, "askdesk mcp").await {
            Ok(client) => client,
            Err(ClientError::NotRunning { .. }) if launch && self.launch => {
                self.launch_desktop().await?
            }
            Err(error) => return Err(error.into()),
        };
        let agent = register(&client, client_info).await?;
        tracing::info!(agent = %agent.id, "registered the MCP session's agent");
        let link = Arc::new(Link { client, agent });
        *slot = Some(link.clone());
        Ok(link)
    }

    /// Drops a link whose connection broke, unless a newer one replaced it already.
    fn forget(&self, broken: &Arc<Link>) {
        if let Ok(mut slot) = self.link.try_lock() {
            if slot.as_ref().is_some_and(|link| Arc::ptr_eq(link, broken)) {
                *slot = None;
            }
        }
    }

    /// Unregisters the session's agent; closing the connection would too, this makes it prompt.
    async fn close(&self) {
        if let Some(link) = self.link.lock().await.take() {
            let _ = tokio::time::timeout(
                Duration::from_secs(2),
                link.client.unregister_agent(&link.agent),
            )
            .await;
        }
    }

    /// Starts the desktop app and waits for its socket; the error says how to start askdesk.
    async fn launch_desktop(&self) -> Result<Client> {
        let not_running = || Error::NoBroker {
            path: self.socket.clone(),
        };
        let has_display = ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()));
        let Some(exe) = desktop_exe().filter(|_| has_display) else {
            return Err(not_running());
        };
        {
            let mut last = askdesk_core::sync::lock(&self.last_launch);
            if last.is_some_and(|at| at.elapsed() < LAUNCH_RETRY) {
                return Err(not_running());
            }
            *last = Some(Instant::now());
        }
        tracing::info!(exe = %exe.display(), "no broker running: starting the desktop app");
        let mut command = tokio::process::Command::new(&exe);
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        #[cfg(unix)]
        command.process_group(0); // the app outlives this MCP session and its client's signals
        let mut child = command.spawn().map_err(|e| {
            Error::Internal(format!(
                "cannot start {}: {e}; start askdesk yourself",
                exe.display()
            ))
        })?;
        // Reap it if it exits while this process runs.
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        let deadline = Instant::now() + LAUNCH_WAIT;
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            match Client::connect(&self.socket, "askdesk mcp").await {
                Ok(client) => return Ok(client),
                Err(ClientError::NotRunning { .. }) if Instant::now() < deadline => continue,
                Err(ClientError::NotRunning { .. }) => {
                    return Err(Error::Internal(format!(
                        "started {} but no broker opened {} within {}s; start askdesk with `askdesk serve` or the desktop app",
                        exe.display(),
                        self.socket.display(),
                        LAUNCH_WAIT.as_secs()
                    )))
                }
                Err(error) => return Err(error.into()),
            }
        }
    }
}

/// Registers the session's root agent, labelled after the MCP client.
async fn register(client: &Client, client_info: Option<&Implementation>) -> Result<Handle> {
    let base = format!("mcp-{}", std::process::id());
    let mut registration = agent_registration(&base, client_info);
    for attempt in 2..=5 {
        match client.register_agent(&registration).await {
            Err(ClientError::Rpc(error))
                if error.data_code()
                    == Some(RegistryError::IdTaken { id: String::new() }.code()) =>
            {
                registration.id = format!("{base}-{attempt}");
            }
            result => return Ok(result?),
        }
    }
    Ok(client.register_agent(&registration).await?)
}

/// The agent an MCP session registers: label from the client's name and version, meta with the
/// current directory and the client's pid (this process's parent: the agent runtime).
pub fn agent_registration(id: &str, client_info: Option<&Implementation>) -> AgentRegistration {
    let label = match client_info {
        Some(info) if !info.version.is_empty() => format!("{} {}", info.name, info.version),
        Some(info) => info.name.clone(),
        None => "MCP client".to_owned(),
    };
    let mut meta = Map::new();
    if let Some(cwd) = crate::connect::current_dir() {
        meta.insert("cwd".into(), Value::String(cwd));
    }
    #[cfg(unix)]
    meta.insert(
        "pid".into(),
        Value::from(std::os::unix::process::parent_id()),
    );
    if let Some(info) = client_info {
        meta.insert("client".into(), Value::String(info.name.clone()));
    }
    meta.insert("via".into(), Value::String("mcp".into()));
    AgentRegistration {
        id: id.to_owned(),
        owner: None,
        label: Some(label),
        meta: Some(meta),
    }
}

/// `askdesk-desktop` next to this executable, else on PATH.
fn desktop_exe() -> Option<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(DESKTOP_EXE)));
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join(DESKTOP_EXE));
    beside.into_iter().chain(on_path).find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use askdesk_core::AnswerItem;
    use serde_json::json;

    fn ask_args(value: Value) -> Vec<Question> {
        let Value::Object(object) = value else {
            panic!("arguments are an object")
        };
        let args: AskUserQuestionArgs = arguments(object).expect("arguments parse");
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
    fn bad_arguments_are_error_results() {
        let Value::Object(object) = json!({ "questions": [{ "question": "no id" }] }) else {
            unreachable!()
        };
        let result = arguments::<AskUserQuestionArgs>(object).unwrap_err();
        assert_eq!(result.is_error, Some(true));
        let text = &result.content[0].as_text().unwrap().text;
        assert!(
            text.starts_with("Error: invalid arguments: ") && text.contains("id"),
            "{text}"
        );
    }

    #[test]
    fn schema_lists_the_harness_fields() {
        let schema = Value::Object(
            schema_for_input::<AskUserQuestionArgs>()
                .unwrap()
                .as_ref()
                .clone(),
        );
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["questions"]));
        let text = schema.to_string();
        for field in [
            "\"multi_select\"",
            "\"header\"",
            "\"options\"",
            "\"label\"",
            "\"description\"",
        ] {
            assert!(text.contains(field), "{field} missing from {text}");
        }
        let plan = Value::Object(
            schema_for_input::<ReviewPlanArgs>()
                .unwrap()
                .as_ref()
                .clone(),
        );
        assert_eq!(plan["required"], json!(["plan"]));
    }

    #[test]
    fn answers_are_compact_json() {
        let answer = Answer {
            answers: vec![
                AnswerItem {
                    id: "cleanup".into(),
                    selected: vec!["Yes".into()],
                    custom: None,
                },
                AnswerItem {
                    id: "n".into(),
                    selected: vec![],
                    custom: Some("later".into()),
                },
            ],
        };
        assert_eq!(
            answer_text(&answer),
            r#"{"answers":[{"id":"cleanup","selected":["Yes"]},{"id":"n","selected":[],"custom":"later"}]}"#
        );
        assert_eq!(
            failure("no user-questions answerer accepted the request").content[0]
                .as_text()
                .unwrap()
                .text,
            "Error: no user-questions answerer accepted the request"
        );
    }

    #[test]
    fn plan_reviews_are_plain() {
        let question = plan_question(ReviewPlanArgs {
            plan: "# Plan\n- step".into(),
            question: None,
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
        let verdict = |selected: &[&str], custom: Option<&str>| {
            plan_verdict(&Answer {
                answers: vec![AnswerItem {
                    id: "plan".into(),
                    selected: selected.iter().map(|s| s.to_string()).collect(),
                    custom: custom.map(Into::into),
                }],
            })
        };
        assert_eq!(
            verdict(&["Approve"], None),
            "The user APPROVED the plan. Go ahead and carry it out."
        );
        let rejected = verdict(&[], Some("split step 2"));
        assert!(
            rejected.starts_with("The user did NOT approve the plan.")
                && rejected.ends_with("The user's feedback:\nsplit step 2"),
            "{rejected}"
        );
        assert!(verdict(&["Keep planning"], None).contains("no feedback"));
    }

    #[test]
    fn session_agent_is_labelled_after_the_client() {
        let info = Implementation::new("claude-code", "2.1.0");
        let reg = agent_registration("mcp-1", Some(&info));
        assert_eq!(reg.label.as_deref(), Some("claude-code 2.1.0"));
        assert_eq!(reg.owner, None);
        let meta = reg.meta.unwrap();
        assert_eq!(meta["client"], "claude-code");
        assert_eq!(
            meta["cwd"],
            std::env::current_dir().unwrap().display().to_string()
        );
        assert!(meta["pid"].is_u64());
        assert_eq!(
            agent_registration("mcp-1", None).label.as_deref(),
            Some("MCP client")
        );
    }
}
