//! `askdesk`: the command-line client of the askdesk broker, and the MCP server over stdio.
//!
//! - [`cli`]: the command line (clap derive), assembled from the arguments, help text and examples
//!   each command's module keeps beside its code.
//! - [`duration`]: the `SECONDS` values of `--timeout`.
//! - [`exit`]: the exit statuses and the one error type every command fails with.
//! - [`serve`]: `askdesk serve`, the broker without a GUI.
//! - [`ask`]: `askdesk ask`, one batch of questions from flags or JSON.
//! - [`answer`]: `askdesk answer`, a headless answerer with a policy or an external command.
//! - [`status`]: `askdesk status`, what a running broker holds.
//! - [`history`]: `askdesk history`, the journal of settled requests.
//! - [`mcp`]: `askdesk mcp`, an MCP server over stdio that forwards to the broker.
//! - [`rules`]: `askdesk rules list|test`, the answer rules checked against the journal.
//! - [`devices`]: `askdesk devices list|revoke`, the phones paired with the remote.
//! - [`remote`]: `askdesk remote`, the phone's server beside a running broker, answering as the
//!   `person` group's "phone".
//! - [`doctor`]: `askdesk doctor`, the whole set-up checked, each finding with its fix.
//! - [`connect`]: connecting to the broker, with the "no broker running" advice.
//! - [`hook`]: `askdesk hook`, Claude Code's and Codex's permission prompts answered in askdesk.
//! - [`launch`]: starting the desktop app when no broker runs (for `mcp` and `hook`).
//! - [`terminal`]: agent-supplied text made safe to print (control and bidi characters escaped).
//! - [`output`]: standard output, which a reader may close early (`| head -1`): the command then
//!   ends quietly with status 0.
//!
//! Only protocol output goes to stdout (answers, tables, JSON), through [`output`]; logs and
//! errors go to stderr.

mod answer;
mod ask;
mod cli;
mod connect;
mod devices;
mod doctor;
mod duration;
mod exit;
mod history;
mod hook;
mod launch;
mod mcp;
mod output;
mod remote;
mod rules;
mod serve;
mod status;
mod terminal;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::exit::{Error, Status};

fn main() -> ExitCode {
    // First: a hook watches the process that started it, which may be killed while we start.
    hook::parent::record();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // clap prints help and version to stdout with success, usage errors to stderr.
            let _ = error.print();
            return if error.use_stderr() {
                Status::Usage.into()
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    init_tracing(&cli.command);
    // The broker runs on one thread: a round trip then wakes no other thread, which keeps its
    // latency near the raw socket floor. The journal's syncs run on its own writer thread, file
    // reads (opening the journal, loading rules) on the blocking pool. The clients are I/O bound
    // and use the default runtime.
    let runtime = match &cli.command {
        Command::Serve(_) => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    }
    .enable_all()
    .build();
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("Error: cannot start the async runtime: {error}");
            return Status::Internal.into();
        }
    };
    // A socket named on the command line goes into an installed hook's command too.
    let named_socket = cli.socket.clone();
    let socket = cli.socket.unwrap_or_else(askdesk_broker::socket_path);
    let result = runtime.block_on(async move {
        match cli.command {
            Command::Serve(args) => serve::run(args, socket).await,
            Command::Ask(args) => ask::run(*args, socket).await,
            Command::Answer(args) => answer::run(args, socket).await,
            Command::Status(args) => status::run(args, socket).await,
            Command::History(args) => history::run(args).await,
            Command::Mcp(args) => mcp::run(args, socket).await,
            Command::Hook(args) => hook::run(args, socket, named_socket.as_deref()).await,
            Command::Rules(args) => rules::run(args).await,
            Command::Doctor(args) => doctor::run(args, socket, named_socket.as_deref()).await,
            Command::Devices(args) => devices::run(args).await,
            Command::Remote(args) => remote::run(args, socket).await,
        }
    });
    // Pending reads of stdin (answer --exec children, the MCP transport) must not keep the
    // process alive once the command has finished.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match result {
        // The reader had what it wanted (`askdesk history | head -1`): nothing went wrong.
        Ok(()) | Err(Error::OutputClosed) => ExitCode::SUCCESS,
        Err(error) => {
            // The message can be an answerer's or the broker's: shown, not obeyed, by the terminal.
            eprintln!("Error: {}", terminal::visible(&error.to_string()));
            error.status().into()
        }
    }
}

/// Logs go to stderr. `serve` and `remote` log at info by default, `mcp` what [`mcp::DEFAULT_LOG_FILTER`]
/// keeps, the other commands only warnings; `ASKDESK_LOG` (an `EnvFilter` directive such as
/// `debug` or `askdesk_broker=trace`) overrides.
fn init_tracing(command: &Command) {
    let default = match command {
        Command::Serve(_) | Command::Remote(_) => "info",
        Command::Mcp(_) => mcp::DEFAULT_LOG_FILTER,
        _ => "warn",
    };
    askdesk_broker::host::init_logging(default);
}
