//! `askdesk hook`: the agents' own permission prompts answered in askdesk, and the hook's
//! installation into the agents' settings.
//!
//! - [`prompt`]: a `PermissionRequest` hook input as questions, and the answer as the client's
//!   decision JSON.
//! - [`json`]: JSON that keeps its key order and numbers as written, for `tool_input` echoed
//!   back in a decision.
//! - [`attachments`]: the pictures a person answered with, saved under the project's folder and
//!   named in the answer's text.
//! - [`detail`]: the markdown that shows what a tool call will do (command, diff, URL, arguments).
//! - [`settings`]: `askdesk hook install|uninstall`, the command line around the merge of our entry
//!   into the client's settings (`askdesk_connect::hook`).
//! - [`parent`]: the process that started the hook, taken at start, and the wait for its end.
//! - [`transcript`]: Claude Code's transcript followed while a prompt waits, to see the prompt's
//!   call settled in the terminal.
//!
//! `askdesk hook claude-code` and `askdesk hook codex` fail open: whatever goes wrong (no broker,
//! bad input, the human dismisses or skips), they print nothing, exit 0 and say why in one line
//! on stderr, and the client shows its own prompt. Only a decision the human made is printed,
//! and the `allow` of askdesk's own MCP question tools, which ask the human themselves.

mod attachments;
mod detail;
mod json;
pub mod parent;
mod prompt;
mod settings;
mod transcript;

use std::path::{Path, PathBuf};

use askdesk_broker::client::{answered_within, Client, ClientError};
use askdesk_core::{meta, AgentRegistration, AskRequest, Handle, RegistryError};
use clap::{Args, Subcommand};
use serde_json::{Map, Value};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use crate::exit::Result;
use prompt::HookInput;
pub use prompt::{HookClient, MCP_SERVER};
pub use settings::{InstallArgs, UninstallArgs};

/// Answer Claude Code's and Codex's permission prompts in askdesk (their PermissionRequest hook)
#[derive(Debug, Args)]
#[command(
    after_help = "The client runs `askdesk hook claude-code` (or `codex`) for each permission \
prompt: plan approval, AskUserQuestion, and \"may I run this tool?\". It reads the hook's JSON on \
stdin, asks you through askdesk, and prints the client's decision JSON. Whenever askdesk cannot \
decide (no broker and no display, you dismiss or skip the question, bad input) it prints nothing, \
exits 0 and says why on stderr: the client then shows its own prompt.

Examples:
  askdesk hook install claude-code                 # merge the hook into ~/.claude/settings.json
  askdesk hook install codex --print               # show the ~/.codex/hooks.json entry instead
  askdesk hook uninstall claude-code"
)]
pub struct HookArgs {
    #[command(subcommand)]
    pub command: HookCommand,
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Answer one Claude Code PermissionRequest (hook input on stdin, decision on stdout)
    ClaudeCode(HookRunArgs),
    /// Answer one Codex PermissionRequest (hook input on stdin, decision on stdout)
    Codex(HookRunArgs),
    /// Add the hook to the client's settings (merged, idempotent, previous file backed up)
    Install(InstallArgs),
    /// Remove askdesk's hook from the client's settings, and nothing else
    Uninstall(UninstallArgs),
}

#[derive(Debug, Args)]
pub struct HookRunArgs {
    /// Never start the desktop app; without a broker the client shows its own prompt
    #[arg(long)]
    pub no_launch: bool,
    /// The name askdesk's MCP server has in Claude Code (`claude mcp add NAME -- askdesk mcp`): its question tools are allowed without asking twice
    #[arg(long, value_name = "NAME", default_value = MCP_SERVER,
          value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub mcp_server: String,
}

/// The most bytes of hook input read; a plan or a file write beyond this is not a prompt we show.
const INPUT_LIMIT: u64 = 16 * 1024 * 1024;
/// How many agents of one session may ask at once (parallel tool calls) before a prompt gives up.
const AGENTS_PER_SESSION: u32 = 64;

/// Runs `askdesk hook ...`; `socket` is the broker's socket as resolved, `named_socket` the
/// `--socket` given on the command line, which an installed hook's command keeps.
pub async fn run(args: HookArgs, socket: PathBuf, named_socket: Option<&Path>) -> Result<()> {
    match args.command {
        HookCommand::ClaudeCode(run) => answer(HookClient::ClaudeCode, run, &socket).await,
        HookCommand::Codex(run) => answer(HookClient::Codex, run, &socket).await,
        HookCommand::Install(args) => settings::install(&args, &socket, named_socket),
        HookCommand::Uninstall(args) => settings::uninstall(&args),
    }
}

/// Answers one prompt: the decision on stdout, or nothing and the reason on stderr.
async fn answer(client: HookClient, args: HookRunArgs, socket: &Path) -> Result<()> {
    // Opened before anything waits: a parent that ends from now on is seen, however late the
    // watch is first polled.
    let parent = parent::Watch::open();
    match decision(client, &args, socket, parent).await {
        Ok(line) => crate::output::outln!("{line}"),
        // One line, whatever the hook input or the broker put in the reason.
        Err(reason) => {
            eprintln!(
                "{}",
                askdesk_i18n::t!(
                    "hook-fell-back",
                    reason = crate::terminal::one_line(&reason),
                    client = client.to_string()
                )
            );
            Ok(())
        }
    }
}

async fn decision(
    client: HookClient,
    args: &HookRunArgs,
    socket: &Path,
    parent: parent::Watch,
) -> Result<String, String> {
    let mut text = String::new();
    tokio::io::stdin()
        .take(INPUT_LIMIT)
        .read_to_string(&mut text)
        .await
        .map_err(|e| format!("cannot read the hook input: {e}"))?;
    let input = HookInput::parse(&text)?;
    // askdesk's own question tools ask the person themselves: asking first whether they may ask
    // would ask twice.
    if let Some(decision) = prompt::own_question_tool(client, &input, &args.mcp_server) {
        return Ok(decision.output());
    }
    let prompt = prompt::prompt(client, &input)?;
    // Before the question is sent: a result written from then on is this prompt's.
    let settled = settled_elsewhere(client, &input).await;
    let broker = connect(client, socket, !args.no_launch).await?;
    // A broker that answered the handshake and then stopped answering is given up on as well.
    let agent = answered_within(
        socket,
        crate::connect::HANDSHAKE_WAIT,
        register(&broker, client, &input),
    )
    .await
    .map_err(|e| e.to_string())??;
    // The client kills this process when its hook timeout passes (and Codex when it stops
    // waiting): the connection then closes, which withdraws the question (ASK_ABORTED). When it
    // kills only the shell that runs this command, this process is orphaned: that withdraws it
    // too. Claude Code leaves the hook running when the person answers in the terminal: its
    // transcript then shows the call's result, which withdraws the question as well.
    let stop = CancellationToken::new();
    // Cancelled as the client is found gone, before the agent is unregistered.
    let client_gone = CancellationToken::new();
    let watcher = tokio::spawn({
        let (stop, client_gone, broker, agent) = (
            stop.clone(),
            client_gone.clone(),
            broker.clone(),
            agent.clone(),
        );
        async move {
            let why = tokio::select! {
                () = parent.gone() => {
                    // The client itself ended: its agent goes, which ends the question as the
                    // asker's going rather than as a withdrawal (the desktop keeps what the person
                    // typed and says the client disconnected).
                    client_gone.cancel();
                    broker.unregister_agent_promptly(&agent).await;
                    "the client stopped waiting for this prompt"
                }
                () = settled => "the call was settled in Claude Code (its result is in the transcript)",
            };
            stop.cancel();
            why
        }
    });
    let answer = broker
        .ask(
            &AskRequest {
                questions: prompt.questions.clone(),
                agent: Some(agent.clone()),
            },
            &stop,
        )
        .await;
    let stopped = if stop.is_cancelled() || client_gone.is_cancelled() {
        watcher.await.ok()
    } else {
        watcher.abort();
        None
    };
    broker.unregister_agent_promptly(&agent).await;
    if let Some(why) = stopped {
        return Err(why.into());
    }
    let answer = match answer {
        // An answer rule denied it (docs/rules.md): that is a decision, with the rule's message.
        Err(ClientError::Rpc(error))
            if error.question_code() == Some(askdesk_rules::ASK_DENIED) =>
        {
            return Ok(prompt::Decision::Deny {
                message: error.message.clone(),
            }
            .output())
        }
        answer => answer.map_err(|error| explain(&error))?,
    };
    let answer = attachments::save(answer, input.cwd.as_deref())?;
    let decision = prompt::decide(&input, &prompt, &answer).map_err(|none| none.0)?;
    Ok(decision.output())
}

/// Resolves once the prompt's call is settled without askdesk: Claude Code's transcript shows
/// its result. Never, for Codex, when the input names no transcript, or for a subagent's call
/// (`agent_id`): a subagent's calls are not in the session's transcript, and an identical call of
/// the main thread settling there would say nothing of the subagent's. The transcript's length
/// is taken before this returns, so before the question is asked: only a result written after it
/// settles the prompt.
async fn settled_elsewhere(
    client: HookClient,
    input: &HookInput,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let path = input.transcript_path.as_deref().filter(|path| {
        client == HookClient::ClaudeCode && !path.is_empty() && input.agent_id.is_none()
    });
    let followed = match path {
        Some(path) => {
            let calls = transcript::Calls::new(&input.tool_name, &input.tool_input);
            Some(transcript::follow(Path::new(path), calls).await)
        }
        None => None,
    };
    async move {
        let settled = match followed {
            Some(settled) => settled.await.is_ok(),
            None => false,
        };
        if !settled {
            // Not followed to a result: the question waits as before.
            std::future::pending::<()>().await;
        }
    }
}

/// Connects to the broker, starting the desktop app when none runs and a display is there.
async fn connect(client: HookClient, socket: &Path, launch: bool) -> Result<Client, String> {
    let name = format!("askdesk hook {}", client.slug());
    match Client::connect_within(socket, &name, crate::connect::HANDSHAKE_WAIT).await {
        Ok(broker) => Ok(broker),
        Err(ClientError::NotRunning { .. }) => match crate::launch::launchable().filter(|_| launch)
        {
            Some(exe) => crate::launch::start_and_connect(&exe, socket, &name)
                .await
                .map_err(|e| e.to_string()),
            None => Err(format!(
                "no askdesk broker is running at {} and the desktop app cannot be started here",
                socket.display()
            )),
        },
        Err(error) => Err(error.to_string()),
    }
}

/// Registers the prompt's root agent.
///
/// Each prompt registers its own agent with the same label and meta, and an id derived from the
/// session: `<client>-<session_id>`, or `<client>-<session_id>-2`, `-3`, ... while the lower ids
/// are live. Two prompts of one session pending at once (parallel tool calls) are then both
/// asked, and the human sees the same agent; each agent lives only as long as its prompt.
async fn register(
    broker: &Client,
    client: HookClient,
    input: &HookInput,
) -> Result<Handle, String> {
    let base = agent_id(client, input);
    let taken = RegistryError::IdTaken { id: String::new() }.code();
    let mut registration = registration(client, input, &base);
    for n in 2..=AGENTS_PER_SESSION + 1 {
        match broker.register_agent(&registration).await {
            Err(ClientError::Rpc(error)) if error.data_code() == Some(taken) => {
                registration.id = format!("{base}-{n}");
            }
            result => return result.map_err(|e| e.to_string()),
        }
    }
    Err(format!(
        "{AGENTS_PER_SESSION} prompts of session {base} are pending already"
    ))
}

fn agent_id(client: HookClient, input: &HookInput) -> String {
    match input.session_id.as_deref().filter(|s| !s.is_empty()) {
        Some(session) => format!("{}-{session}", client.slug()),
        None => format!("{}-{}", client.slug(), parent::at_start()),
    }
}

/// The agent a prompt asks as: labelled after the client, with the session's directory, the
/// tool, and the transcript when the client names one.
fn registration(client: HookClient, input: &HookInput, id: &str) -> AgentRegistration {
    let mut meta = Map::new();
    let cwd = input.cwd.clone().or_else(crate::connect::current_dir);
    let fields = [
        (meta::CWD, cwd),
        (meta::TOOL, Some(input.tool_name.clone())),
        // What a shell tool runs, for the answer rules' `command` glob.
        (meta::COMMAND, input.command()),
        // What a file or web tool touches, for the answer rules' `path`, `host` and `url_path`.
        (meta::PATH, input.path()),
        (meta::URL, input.url()),
        (meta::TRANSCRIPT, input.transcript_path.clone()),
        (meta::SESSION, input.session_id.clone()),
        (meta::MODEL, input.model.clone()),
        (meta::PERMISSION_MODE, input.permission_mode.clone()),
    ];
    for (key, value) in fields {
        if let Some(value) = value.filter(|v| !v.is_empty()) {
            meta.insert(key.into(), Value::String(value));
        }
    }
    meta.insert(meta::CLIENT.into(), Value::String(client.slug().into()));
    meta.insert(meta::VIA.into(), Value::String("hook".into()));
    AgentRegistration {
        id: id.to_owned(),
        owner: None,
        label: Some(client.label().into()),
        meta: Some(meta),
    }
}

/// Why an ask gave no answer, for the stderr line.
fn explain(error: &ClientError) -> String {
    match error.question_code() {
        Some("NO_PROVIDER") => {
            "no answerer took the question (askdesk is on do-not-disturb, or nothing answers)"
                .into()
        }
        Some("ASK_CANCELLED") => "the question was dismissed in askdesk".into(),
        _ => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn agents_are_named_after_the_session() {
        let input = HookInput::parse(
            &json!({ "session_id": "abc", "transcript_path": "/t.jsonl", "cwd": "/work",
                     "tool_name": "Bash", "tool_input": { "command": "ls" } })
            .to_string(),
        )
        .unwrap();
        assert_eq!(agent_id(HookClient::ClaudeCode, &input), "claude-code-abc");
        assert_eq!(input.command().as_deref(), Some("ls"));
        let argv = HookInput::parse(
            &json!({ "tool_name": "shell", "tool_input": { "command": ["git", "status"] } })
                .to_string(),
        )
        .unwrap();
        assert_eq!(argv.command().as_deref(), Some("git status"));
        let quoted = HookInput::parse(
            &json!({ "tool_name": "shell", "tool_input": { "command": ["rm", "my dir"] } })
                .to_string(),
        )
        .unwrap();
        assert_eq!(quoted.command().as_deref(), Some("rm 'my dir'"));
        for (tool, tool_input, path, url) in [
            (
                "Edit",
                json!({ "file_path": "src/a.rs" }),
                Some("src/a.rs"),
                None,
            ),
            (
                "MultiEdit",
                json!({ "file_path": "/w/b.rs" }),
                Some("/w/b.rs"),
                None,
            ),
            (
                "Write",
                json!({ "file_path": "/w/c.rs" }),
                Some("/w/c.rs"),
                None,
            ),
            (
                "NotebookEdit",
                json!({ "notebook_path": "/w/n.ipynb" }),
                Some("/w/n.ipynb"),
                None,
            ),
            (
                "WebFetch",
                json!({ "url": "https://docs.rs/" }),
                None,
                Some("https://docs.rs/"),
            ),
            ("Read", json!({ "file_path": ".env" }), Some(".env"), None),
            (
                "Bash",
                json!({ "command": "ls", "url": "https://x/" }),
                None,
                None,
            ),
        ] {
            let input = HookInput::parse(
                &json!({ "cwd": "/w", "tool_name": tool, "tool_input": tool_input }).to_string(),
            )
            .unwrap();
            let meta = registration(HookClient::ClaudeCode, &input, "c")
                .meta
                .unwrap();
            let got = |key: &str| meta.get(key).and_then(Value::as_str);
            assert_eq!((got("path"), got("url")), (path, url), "{tool}");
        }
        let reg = registration(HookClient::Codex, &input, "codex-abc");
        assert_eq!(reg.label.as_deref(), Some("Codex"));
        assert_eq!(reg.owner, None);
        assert_eq!(
            Value::Object(reg.meta.unwrap()),
            json!({ "cwd": "/work", "tool": "Bash", "command": "ls", "transcript": "/t.jsonl",
                    "session": "abc", "client": "codex", "via": "hook" })
        );
    }
}
