//! `askdesk hook install|uninstall`: the command line around `askdesk_connect::hook`, which merges
//! our `PermissionRequest` entry into Claude Code's `settings.json` or Codex's `hooks.json` (never
//! clobbering what is there, idempotent, with a backup of the previous file).

use std::path::{Path, PathBuf};

use askdesk_connect::hook::{self, HookEntry};
use askdesk_connect::Agent;
use askdesk_i18n::t;
use clap::Args;

use super::HookClient;
use crate::exit::Result;
use crate::output::{out, outln};

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The client whose settings get the hook
    #[arg(value_enum)]
    pub client: HookClient,
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
    #[arg(long, value_name = "NAME", default_value = super::MCP_SERVER,
          value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub mcp_server: String,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// The client whose settings lose the hook
    #[arg(value_enum)]
    pub client: HookClient,
    /// Print the file as it would be instead of changing it
    #[arg(long)]
    pub print: bool,
    /// The settings file (as for install)
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

/// `socket` is the broker's socket as resolved, `named` the `--socket` given, if any.
pub fn install(args: &InstallArgs, socket: &Path, named: Option<&Path>) -> Result<()> {
    let path = hook::settings_path(args.client, args.config.as_deref())?;
    let program = std::env::current_exe().map_err(|e| {
        crate::exit::Error::Internal(format!("cannot tell where askdesk is installed: {e}"))
    })?;
    let entry = HookEntry::new(
        args.client,
        &program,
        socket,
        named,
        &args.matcher,
        args.timeout,
        &args.mcp_server,
    )?;
    if args.print {
        eprintln!(
            "{}",
            t!("hook-merge-into", path = path.display().to_string())
        );
        outln!("{}", entry.snippet())?;
        return Ok(());
    }
    let change = hook::install(&path, &entry)?;
    if !change.changes() {
        outln!(
            "{}",
            t!(
                "hook-installed-already",
                client = args.client.to_string(),
                path = path.display().to_string()
            )
        )?;
        return Ok(());
    }
    let backup = change.write()?;
    outln!(
        "{}",
        t!(
            "hook-installed",
            client = args.client.to_string(),
            path = change.shown().to_string(),
            matcher = format!("{:?}", entry.matcher),
            timeout = entry.timeout
        )
    )?;
    if let Some(backup) = backup {
        outln!("{}", t!("hook-backup", path = backup.display().to_string()))?;
    }
    if args.client == HookClient::Codex {
        outln!("{}", Agent::Codex.after_connecting()[0])?;
    }
    Ok(())
}

pub fn uninstall(args: &UninstallArgs) -> Result<()> {
    let path = hook::settings_path(args.client, args.config.as_deref())?;
    let change = hook::uninstall(&path, args.client)?;
    if !change.changes() {
        outln!(
            "{}",
            t!(
                "hook-not-installed",
                client = args.client.to_string(),
                path = path.display().to_string()
            )
        )?;
        return Ok(());
    }
    if args.print {
        eprintln!("{}", t!("hook-without", path = path.display().to_string()));
        out!("{}", change.after_text())?;
        return Ok(());
    }
    let backup = change.write()?;
    outln!(
        "{}",
        t!(
            "hook-removed",
            client = args.client.to_string(),
            path = change.shown().to_string()
        )
    )?;
    if let Some(backup) = backup {
        outln!("{}", t!("hook-backup", path = backup.display().to_string()))?;
    }
    Ok(())
}
