//! The command line: every command, flag, help text and example.

use std::path::PathBuf;
use std::time::Duration;

use askdesk_journal::Outcome;
use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "askdesk",
    version,
    about = "Let AI agents on this computer stop and ask you a structured question",
    long_about = "askdesk lets AI agents running on this computer stop in the middle of a tool call and ask \
                  the human a structured question. This command talks to the askdesk broker (embedded in \
                  the desktop app, or run headless with `askdesk serve`) over a local socket.",
    after_help = "Examples:
  askdesk serve                                   # a broker without a GUI
  askdesk ask 'Delete the build cache?' -o Yes -o No
  askdesk answer --policy first                    # answer every request with its first option
  askdesk status
  askdesk history --limit 10
  askdesk rules test --since 7d                   # what the answer rules would have done
  claude mcp add askdesk -- askdesk mcp            # offer ask_user_question to an MCP client
  askdesk hook install claude-code                 # Claude Code's own prompts land in askdesk"
)]
pub struct Cli {
    /// The broker's socket [default: $ASKDESK_SOCKET when set and not empty, else
    /// $XDG_RUNTIME_DIR/askdesk/askdesk.sock, else /tmp/askdesk-UID/askdesk.sock]
    // The variable is read with the rest of the default (`askdesk_broker::socket_path`), not by
    // clap, which would refuse it empty: empty means unset, as for the desktop app.
    #[arg(long, global = true, value_name = "PATH")]
    pub socket: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Serve(ServeArgs),
    // Boxed: its many flags would make every command as large as `ask`.
    Ask(Box<AskArgs>),
    Answer(AnswerArgs),
    Status(StatusArgs),
    History(HistoryArgs),
    Mcp(McpArgs),
    Hook(HookArgs),
    Rules(RulesArgs),
}

/// Run the broker without a GUI, in the foreground
#[derive(Debug, Args)]
#[command(
    after_help = "The broker has no answerer of its own: run `askdesk answer` (or the desktop app's \
                        answerer) next to it, or every ask fails NO_PROVIDER. Logs go to stderr \
                        (ASKDESK_LOG=debug for more). SIGINT or SIGTERM stops it: pending asks settle \
                        SHUTTING_DOWN and the socket is removed.

Exit status: 0 after a clean stop; 1 when it cannot start (another broker is live on the socket, or \
the socket directory is unsafe); 2 usage error.

Examples:
  askdesk serve
  askdesk serve --no-history
  ASKDESK_SOCKET=/tmp/t/askdesk.sock askdesk serve"
)]
pub struct ServeArgs {
    /// Do not record settled requests in the history journal
    #[arg(long)]
    pub no_history: bool,
    /// After each line in or out, keep polling the sockets this long before sleeping (0: never;
    /// the history journal's writer polls twice as long after a lone record); saves a wake-up per
    /// line while a conversation is under way, costs nothing while idle
    #[arg(long, value_name = "MICROSECONDS", default_value_t = 100,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub busy_poll: u64,
    /// The most client connections served at once (1 to 1000000)
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub max_connections: usize,
    /// The most asks one connection may have pending at once (1 to 1000000)
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub max_pending: usize,
    /// The longest message (one line) accepted; a longer one closes its connection
    #[arg(long, value_name = "BYTES", default_value_t = 4 * 1024 * 1024,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1024..=1 << 30))]
    pub max_message_bytes: usize,
    /// The most questions in one batch
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub max_questions: usize,
    /// The most options in one question
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1_000_000))]
    pub max_options: usize,
    /// The most bytes of text in one field (question, detail, label, ...)
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1 << 30))]
    pub max_field_bytes: usize,
}

/// Ask one batch of questions and print the answer as JSON
#[derive(Debug, Args)]
#[command(after_help = ASK_AFTER_HELP)]
pub struct AskArgs {
    /// The question (or use --question)
    #[arg(value_name = "QUESTION", conflicts_with_all = ["question", "json"])]
    pub positional: Option<String>,
    /// The question
    #[arg(short, long, value_name = "TEXT", conflicts_with = "json")]
    pub question: Option<String>,
    /// The question's id, named again in the answer
    #[arg(long, value_name = "ID", default_value = "q1", conflicts_with = "json")]
    pub id: String,
    /// An option: its label, optionally `=` and a description; repeat for more. The first `=` splits.
    #[arg(
        short,
        long = "option",
        value_name = "LABEL[=DESCRIPTION]",
        conflicts_with = "json"
    )]
    pub options: Vec<String>,
    /// Several options may be chosen
    #[arg(short, long, conflicts_with = "json")]
    pub multi: bool,
    /// A short heading shown above the question
    #[arg(long, value_name = "TEXT", conflicts_with = "json")]
    pub header: Option<String>,
    /// Supporting markdown shown with the question, inline
    #[arg(long, value_name = "MARKDOWN", conflicts_with_all = ["json", "detail_file"])]
    pub detail: Option<String>,
    /// Supporting markdown shown with the question, from a file (`-` reads stdin)
    #[arg(long, value_name = "PATH|-", conflicts_with = "json")]
    pub detail_file: Option<PathBuf>,
    /// Ask for a plan review: the detail is the plan; without options, offers "Approve" and "Keep planning"
    #[arg(long, conflicts_with = "json")]
    pub plan_review: bool,
    /// The option label that approves the plan (required with --plan-review and --option)
    #[arg(long, value_name = "LABEL", requires = "plan_review")]
    pub approve: Option<String>,
    /// The whole batch as JSON: `{"questions":[...]}` or a bare array (`-` reads stdin)
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<PathBuf>,
    /// Ask as an agent with this id: registered as a root agent for the duration of the ask
    #[arg(long, value_name = "ID")]
    pub agent_id: Option<String>,
    /// The agent's display label (registers an agent; the id defaults to `askdesk-ask-<pid>`)
    #[arg(long, value_name = "TEXT")]
    pub agent_label: Option<String>,
    /// Ask as an agent registered elsewhere: its instance token (with --agent-id); nothing is registered
    #[arg(long, value_name = "TOKEN", requires = "agent_id", conflicts_with_all = ["agent_label", "owner", "meta"])]
    pub agent_instance: Option<String>,
    /// Register the agent as owned by this live agent (a delegated child; its asks fail DELEGATED_CALLER)
    #[arg(long, value_name = "ID:INSTANCE")]
    pub owner: Option<String>,
    /// Extra display information about the agent (`cwd` is added from the current directory); repeatable
    #[arg(long, value_name = "KEY=VALUE")]
    pub meta: Vec<String>,
    /// Give up after this many seconds, counted from the start (a broker that does not answer
    /// included), more than 0 and at most 31536000 (365 days); the ask is cancelled: exit 10
    #[arg(long, value_name = "SECONDS", value_parser = seconds)]
    pub timeout: Option<Duration>,
    /// Print the answer indented
    #[arg(long)]
    pub pretty: bool,
}

// The exit-status table comes from `exit::exit_table!`, the one place it is written.
const ASK_AFTER_HELP: &str = concat!(
        "Prints the answer JSON on stdout, e.g. {\"answers\":[{\"id\":\"q1\",\"selected\":[\"Yes\"]}]}. \
On failure prints `Error: <message>` on stderr and exits with the status of its error code. \
Ctrl-C while waiting cancels the ask (exit 10).

",
        crate::exit::exit_table!(),
        "

Examples:
  askdesk ask 'Delete the build cache?' -o 'Yes (Recommended)=frees 2 GB' -o No
  askdesk ask --id langs --multi -q 'Which languages?' -o Rust -o Go -o Python
  askdesk ask 'What should the release be called?'          # free text: the answer has `custom`
  askdesk ask --plan-review --detail-file PLAN.md 'Approve this plan?'
  askdesk ask --agent-label 'release bot' 'Ship it?' -o Yes -o No
  echo '[{\"id\":\"a\",\"question\":\"Proceed?\",\"options\":[{\"label\":\"Yes\"}]}]' | askdesk ask --json -
  askdesk ask --timeout 60 'Still there?' -o Yes || echo \"exit $?\""
);

/// Answer requests headlessly, with a policy or an external command
#[derive(Debug, Args)]
#[command(
    after_help = "Registers as an answerer on the broker's waterfall and answers every request it is \
offered until Ctrl-C (or --count requests). With --exec, CMD runs via `sh -c` once per request: the \
request JSON {\"questions\":[...],\"agent\":{...}} is written to its stdin and its stdout must be an \
answer JSON ({\"answers\":[...]}) to claim the request, `null` to pass it to the next answerer, or \
{\"error\":{\"code\":\"CODE\",\"message\":\"...\"}} to fail it with that error code. A non-zero exit \
fails the request as an internal error. A request that is withdrawn (the asker cancelled) kills CMD.

Policies:
  first        the first option of each question; questions without options are skipped
  recommended  the option whose label ends with \"(Recommended)\", else the first
  skip         every question skipped (selected: [])
  dismiss      fail the request ASK_CANCELLED, as a human dismissing it would
  delegate     pass every request to the next answerer

A policy answers neither permission prompts (the asking agent's meta names a tool, as `askdesk \
hook` registers it) nor plan reviews (intent plan-review): it passes them to the next answerer, \
unless --include-permissions or --include-plans says to answer them too. An --exec command sees the \
agent and the intent, and decides for itself.

Exit status: 0 after Ctrl-C or --count requests; 2 usage error; 3 no broker is running; 6 the broker \
is at its connection limit; 20 the broker closed the connection.

Examples:
  askdesk answer --policy recommended --prepend --label autopilot
  askdesk answer --scope agents --policy dismiss
  askdesk answer --count 1 --exec 'jq -c \"{answers: [.questions[] | {id, selected: []}]}\"'"
)]
pub struct AnswerArgs {
    /// Which requests to receive: every one, or only those asked for an agent
    #[arg(long, value_enum, default_value_t = ScopeArg::All)]
    pub scope: ScopeArg,
    /// Go first in the waterfall (before the desktop app's answerer)
    #[arg(long)]
    pub prepend: bool,
    /// The label `askdesk status` and the history show for this answerer
    #[arg(long, value_name = "TEXT", default_value = "askdesk answer")]
    pub label: String,
    /// How to answer
    #[arg(long, value_enum, default_value_t = Policy::First, conflicts_with = "exec")]
    pub policy: Policy,
    /// Answer with a command, run via `sh -c` for each request (see below)
    #[arg(long, value_name = "CMD")]
    pub exec: Option<String>,
    /// Answer permission prompts too (an agent whose meta names a tool, as `askdesk hook` asks);
    /// by default a policy passes them to the next answerer
    #[arg(long, conflicts_with = "exec")]
    pub include_permissions: bool,
    /// Answer plan reviews too (intent plan-review); by default a policy passes them to the next
    /// answerer
    #[arg(long, conflicts_with = "exec")]
    pub include_plans: bool,
    /// Exit after handling this many requests
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    All,
    Agents,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Policy {
    First,
    Recommended,
    Skip,
    Dismiss,
    Delegate,
}

/// Show what the broker holds: connections, agents, answerers, pending requests
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 the status was printed; 2 usage error; 3 no broker is running; \
6 the broker is at its connection limit; 20 the broker did not answer within --timeout (stopped or \
overloaded), closed the connection or answered out of shape, or another I/O error (such as no \
permission on the socket).

Examples:
  askdesk status
  askdesk status --json | jq .pending
  askdesk status --timeout 30                       # a busy broker may take its time"
)]
pub struct StatusArgs {
    /// Print the broker's status object as JSON
    #[arg(long)]
    pub json: bool,
    /// Give up when the broker has not answered after this many seconds (exit 20); more than 0
    /// and at most 31536000 (365 days)
    #[arg(long, value_name = "SECONDS", default_value = "5", value_parser = seconds)]
    pub timeout: Duration,
}

/// Show the history of settled requests, newest first
#[derive(Debug, Args)]
#[command(
    after_help = "Reads the journal under $XDG_DATA_HOME/askdesk/ (no broker needed).

Examples:
  askdesk history
  askdesk history --outcome dismissed --limit 5
  askdesk history --agent release-bot --json | jq .answer"
)]
pub struct HistoryArgs {
    /// JSON lines (one record per line, newest first)
    #[arg(long)]
    pub json: bool,
    /// Only requests of this agent (its id or its label)
    #[arg(long, value_name = "ID|LABEL")]
    pub agent: Option<String>,
    /// Only requests that settled this way
    #[arg(long, value_parser = crate::history::outcome_parser())]
    pub outcome: Option<Outcome>,
    /// At most this many records
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

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
that cut tool calls short need their deadline raised (the README lists each client's setting)."
)]
pub struct McpArgs {
    /// Never start the desktop app; fail calls while no broker runs
    #[arg(long)]
    pub no_launch: bool,
}

/// The longest wait a `SECONDS` option takes: a year.
const MAX_SECONDS: f64 = 365.0 * 86_400.0;

/// A `SECONDS` value (`--timeout`): a decimal number of seconds, more than 0 and at most a year,
/// so that it always makes a [`Duration`]; anything else is a usage error naming the range.
pub fn seconds(text: &str) -> Result<Duration, String> {
    let range = || format!("more than 0 and at most {MAX_SECONDS} (365 days)");
    match text.trim().parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs <= MAX_SECONDS => Ok(Duration::from_secs_f64(secs)),
        Ok(_) => Err(format!("a number of seconds must be {}", range())),
        Err(_) => Err(format!(
            "not a number of seconds: write one {}, e.g. 30 or 0.5",
            range()
        )),
    }
}

// ----- askdesk hook -----

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
    #[arg(long, value_name = "NAME", default_value = crate::hook::MCP_SERVER,
          value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub mcp_server: String,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The client whose settings get the hook
    #[arg(value_enum)]
    pub client: crate::hook::HookClient,
    /// Print the snippet to merge instead of changing any file
    #[arg(long)]
    pub print: bool,
    /// Which tools' prompts come to askdesk: `*` for all, or names such as `ExitPlanMode|AskUserQuestion|Bash`
    #[arg(long, value_name = "TOOLS", default_value = "*")]
    pub matcher: String,
    /// Seconds the client lets the hook wait for you before it shows its own prompt (1 or more) [default: Claude Code 1800; Codex 120, since Codex shows no prompt of its own until the hook ends]
    #[arg(long, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
    /// The settings file [default: ~/.claude/settings.json; Codex: $CODEX_HOME/hooks.json or ~/.codex/hooks.json]
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Claude Code: the name askdesk's MCP server was added under, when not `askdesk`
    #[arg(long, value_name = "NAME", default_value = crate::hook::MCP_SERVER,
          value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub mcp_server: String,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// The client whose settings lose the hook
    #[arg(value_enum)]
    pub client: crate::hook::HookClient,
    /// Print the file as it would be instead of changing it
    #[arg(long)]
    pub print: bool,
    /// The settings file (as for install)
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

// ----- askdesk rules -----

/// Check the answer rules against the history: what they would have done, and how often you agree
#[derive(Debug, Args)]
#[command(
    after_help = "Reads the rules file ($XDG_CONFIG_HOME/askdesk/rules.toml, or --file) and the journal \
under $XDG_DATA_HOME/askdesk/; no broker needed. The rules file's format: docs/rules.md.

Exit status: 0; 2 usage error; 4 the rules file is broken (the error names its line and column); \
20 a file cannot be read.

Examples:
  askdesk rules list
  askdesk rules test --since 7d
  askdesk rules test --file draft.toml"
)]
pub struct RulesArgs {
    #[command(subcommand)]
    pub command: RulesCommand,
    /// The rules file to check [default: $XDG_CONFIG_HOME/askdesk/rules.toml]
    #[arg(long, global = true, value_name = "PATH")]
    pub file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// Each rule with its mode, action, and its hit, act and agreement counts over the whole journal
    List,
    /// Replay the journal through the rules: per rule, what it would have done and where that
    /// differs from what you chose
    Test {
        /// Only requests asked within this long, e.g. 7d, 12h, 30m [default: the whole journal]
        #[arg(long, value_name = "DURATION")]
        since: Option<String>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit;
    use clap::CommandFactory;

    #[test]
    fn command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn seconds_are_a_positive_number_up_to_a_year() {
        assert_eq!(seconds("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(seconds("60"), Ok(Duration::from_secs(60)));
        assert_eq!(seconds("31536000"), Ok(Duration::from_secs(31_536_000)));
        for bad in [
            "nan",
            "NaN",
            "inf",
            "-inf",
            "-1",
            "-0",
            "0",
            "1e300",
            "31536000.5",
            "",
            "1m",
        ] {
            let error = seconds(bad).expect_err(bad);
            assert!(
                error.contains("at most 31536000 (365 days)"),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn ask_help_carries_the_exit_table() {
        let mut cli = Cli::command();
        let help = cli
            .find_subcommand_mut("ask")
            .expect("the ask command exists")
            .render_long_help()
            .to_string();
        assert!(
            help.contains(exit::tests::TABLE),
            "`askdesk ask --help` lacks the exit table:\n{help}"
        );
    }
}
