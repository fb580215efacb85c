//! `askdesk mcp`: an MCP server over stdio (rmcp) offering `ask_user_question` and `review_plan`,
//! forwarded to the broker as one root agent per MCP session.
//!
//! - [`tools`]: the tool definitions, their arguments and their results.
//! - [`schema`]: portable JSON Schemas for arguments and results.
//! - [`bridge`]: the session's connection and agent on the broker.
//! - [`launch`]: starting the desktop app when no broker runs.
//! - [`input`]: standard input, watched for the client ending the session.
//!
//! Nothing but MCP goes to stdout. The broker connection is made when the client has initialized
//! (without starting anything) or at the first call (starting the desktop app if need be), and is
//! made again if the broker restarts. When the session ends (the client closes our input) the
//! questions still waiting are withdrawn at once and the agent is unregistered.

mod bridge;
mod input;
mod launch;
mod schema;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use askdesk_broker::client::ClientError;
use askdesk_core::{Answer, AskRequest, Question};
use clap::Args;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult,
    ErrorCode, ErrorData, Implementation, JsonObject, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{RoleServer, ServerHandler, ServiceExt};

use tokio_util::sync::CancellationToken;

use self::bridge::{Bridge, Launch};
use self::input::WatchedInput;
use self::tools::{AskUserQuestionArgs, ReviewPlanArgs, ASK_USER_QUESTION, REVIEW_PLAN};
use crate::exit::{Error, Result};

/// Serve MCP over stdio: the tools ask_user_question and review_plan, forwarded to the broker
#[derive(Debug, Args)]
#[command(
    after_help = "Speaks MCP on stdin/stdout (logs on stderr). Each MCP session registers one root \
agent with the broker, labelled with the client's name, with the current directory as meta.cwd. When no \
broker is running and a display is available, starts askdesk-desktop (next to this executable or on \
PATH) and waits for it up to 10 seconds; otherwise each call fails with an `Error:` saying how to start \
askdesk.

Examples:
  claude mcp add askdesk -- askdesk mcp
  # ~/.codex/config.toml
  [mcp_servers.askdesk]
  command = \"askdesk\"
  args = [\"mcp\"]
  tool_timeout_sec = 3600   # let a question wait an hour (Codex's default is 60 s)

While the user thinks, progress notifications go out at once and then every 5 seconds; clients \
that cut tool calls short need their deadline raised (docs/mcp.md lists each client's setting)."
)]
pub struct McpArgs {
    /// Never start the desktop app; fail calls while no broker runs
    #[arg(long)]
    pub no_launch: bool,
}

/// How often a waiting call tells the client it is still alive. The first notification goes out
/// as soon as the call waits, so a client whose timer restarts on progress never sees a gap longer
/// than this.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// The log filter of `askdesk mcp` when `ASKDESK_LOG` is not set. Clients show the server's
/// stderr to their users, so it carries only what a user should act on. The SDK logs every error
/// response it sends at WARN (an unknown tool, a bad request): those are the client's mistakes,
/// already answered with a proper error, so the SDK's own lines are kept to its errors.
pub const DEFAULT_LOG_FILTER: &str = "warn,rmcp=error";

pub async fn run(args: McpArgs, socket: PathBuf) -> Result<()> {
    let launch = if args.no_launch {
        Launch::Never
    } else {
        Launch::IfNeeded
    };
    let bridge = Arc::new(Bridge::new(socket, launch));
    let ended = CancellationToken::new();
    let server = AskdeskMcp {
        bridge: bridge.clone(),
        tools: tools::all(),
        ended: ended.clone(),
    };
    let (stdin, stdout) = rmcp::transport::stdio();
    let running = server
        .serve((WatchedInput::new(stdin, ended), stdout))
        .await
        .map_err(|e| Error::Internal(format!("the MCP session could not start: {e}")))?;
    let quit = running.waiting().await;
    tracing::debug!(?quit, "MCP session ended");
    bridge.close().await;
    Ok(())
}

const INSTRUCTIONS: &str = "\
askdesk puts your question in front of the human on this computer (a desktop dialog) and returns the \
answer. Use ask_user_question for decisions and missing information, review_plan to get a plan approved. \
Both wait until the human answers.";

pub struct AskdeskMcp {
    bridge: Arc<Bridge>,
    tools: Vec<Tool>,
    /// Cancelled when the client closes our input: no one is left to read an answer.
    ended: CancellationToken,
}

impl ServerHandler for AskdeskMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("askdesk", env!("CARGO_PKG_VERSION")).with_title("askdesk"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|tool| tool.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            ASK_USER_QUESTION => self.ask_user_question(arguments, &context).await,
            REVIEW_PLAN => self.review_plan(arguments, &context).await,
            unknown => {
                // A protocol error (MCP: unknown tools are invalid params), logged at debug only:
                // the client has its answer.
                tracing::debug!(tool = unknown, "call of an unknown tool");
                return Err(ErrorData::invalid_params(
                    format!("unknown tool {unknown:?}; askdesk offers {ASK_USER_QUESTION} and {REVIEW_PLAN}"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }

    /// The SDK hands over as "custom" every request it could not read, a known method with
    /// malformed params included; those get invalid params with serde's reason, not "method not
    /// found" under their own name.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(unreadable_request(&request))
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
            if let Err(error) = bridge.link(client.as_ref(), Launch::Never).await {
                tracing::debug!(%error, "no broker yet");
            }
        });
    }
}

/// The error for a request the SDK could not read: a method this server answers whose params are
/// malformed, or a method it does not know.
fn unreadable_request(request: &CustomRequest) -> ErrorData {
    let method = request.method.as_str();
    match method {
        "tools/call" => {
            let reason = match request.params_as::<CallToolRequestParams>() {
                Ok(Some(_)) => "they are not a tools/call request".to_owned(),
                Ok(None) => "they are missing".to_owned(),
                Err(error) => error.to_string(),
            };
            ErrorData::invalid_params(format!("invalid tools/call params: {reason}"), None)
        }
        "initialize" | "ping" | "tools/list" => {
            ErrorData::invalid_params(format!("invalid {method} params"), None)
        }
        _ => ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
            None,
        ),
    }
}

impl AskdeskMcp {
    async fn ask_user_question(
        &self,
        arguments: JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let args: AskUserQuestionArgs = match tools::arguments(arguments) {
            Ok(args) => args,
            Err(message) => return tools::failure(message),
        };
        let questions = args.questions.into_iter().map(Question::from).collect();
        match self.ask(questions, context).await {
            Ok(answer) => tools::answer_result(&answer),
            Err(message) => tools::failure(message),
        }
    }

    async fn review_plan(
        &self,
        arguments: JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let args: ReviewPlanArgs = match tools::arguments(arguments) {
            Ok(args) => args,
            Err(message) => return tools::failure(message),
        };
        // Said here in the tool's own terms; the broker would name a question and intent the
        // agent never wrote.
        if args.plan.trim().is_empty() {
            return tools::failure(
                "invalid arguments: plan: there is no plan to review (it is empty)",
            );
        }
        match self.ask(vec![tools::plan_question(args)], context).await {
            Ok(answer) => tools::verdict_result(&answer),
            Err(message) => tools::failure(message),
        }
    }

    /// Asks through the broker, keeping the client's request alive with progress notifications
    /// (the first at once, then every [`PROGRESS_EVERY`]) and cancelling the ask when the client
    /// cancels the call or ends the session. `Err` is the message after `Error: `.
    async fn ask(
        &self,
        questions: Vec<Question>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Answer, String> {
        let client_info = context.client_info();
        // Reaching the broker (connecting, perhaps starting the app, or waiting behind another
        // call doing so) ends early too when the call is cancelled or the session ends.
        let link = tokio::select! {
            link = self.bridge.link(client_info.as_ref(), Launch::IfNeeded) => {
                link.map_err(|e| e.to_string())?
            }
            _ = context.ct.cancelled() => {
                return Err("the call was cancelled before askdesk was reached".into())
            }
            _ = self.ended.cancelled() => {
                return Err("the session ended before askdesk was reached".into())
            }
        };
        let request = AskRequest {
            questions,
            agent: Some(link.agent.clone()),
        };
        let cancel = context.ct.child_token();
        let ask = link.client.ask(&request, &cancel);
        tokio::pin!(ask);
        let progress_token = context.meta.get_progress_token();
        let started = Instant::now();
        // The first tick completes at once.
        let mut ticks = tokio::time::interval(PROGRESS_EVERY);
        let mut sent = 0u32;
        let result = loop {
            tokio::select! {
                biased;
                result = &mut ask => break result,
                // The broker answers the withdrawn ask `ASK_ABORTED` at once.
                _ = self.ended.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
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
