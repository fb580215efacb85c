//! The command line as a whole: the program's name, help and global `--socket`, and the list of
//! commands. Each command's arguments, help text and examples live beside its code (`serve`,
//! `ask`, `answer`, `status`, `history`, `mcp`, `hook`, `rules`, `doctor`, `devices`, `remote`); this module only assembles them,
//! and no command's module depends on it.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::answer::AnswerArgs;
use crate::ask::AskArgs;
use crate::devices::DevicesArgs;
use crate::doctor::DoctorArgs;
use crate::history::HistoryArgs;
use crate::hook::HookArgs;
use crate::mcp::McpArgs;
use crate::remote::RemoteArgs;
use crate::rules::RulesArgs;
use crate::serve::ServeArgs;
use crate::status::StatusArgs;

#[derive(Debug, Parser)]
#[command(
    name = "askdesk",
    version = askdesk_connect::VERSION,
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
  askdesk hook install claude-code                 # Claude Code's own prompts land in askdesk
  askdesk doctor                                   # what is not set up right, and the fix
  askdesk devices list                             # the phones paired to answer from afar
  askdesk remote --listen 100.64.0.7:8443          # let paired phones answer"
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
    Doctor(DoctorArgs),
    Devices(DevicesArgs),
    Remote(RemoteArgs),
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
