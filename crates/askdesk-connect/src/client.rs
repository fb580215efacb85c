//! The agent clients askdesk connects to: their names, their configuration folders, and how
//! askdesk reaches each (a permission hook, or an MCP server entry).

use std::path::{Path, PathBuf};

use askdesk_i18n::t;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A client whose permission hook askdesk answers (`askdesk hook <slug>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum HookClient {
    ClaudeCode,
    Codex,
}

impl HookClient {
    /// How the human sees the asking agent.
    pub fn label(self) -> &'static str {
        Agent::from(self).label()
    }

    /// How long the client lets an installed hook wait, unless `--timeout` says otherwise.
    /// Claude Code shows its own prompt beside a waiting hook, so the hook may wait long for
    /// askdesk. Codex runs the hook before its prompt and shows nothing to answer while the hook
    /// waits: two minutes, after which a person at the terminal gets Codex's own prompt.
    pub fn default_timeout(self) -> u64 {
        match self {
            HookClient::ClaudeCode => 1800,
            HookClient::Codex => 120,
        }
    }

    /// The command-line name (`askdesk hook <slug>`), also the prefix of the agent ids.
    pub fn slug(self) -> &'static str {
        Agent::from(self).slug()
    }
}

impl std::fmt::Display for HookClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// An agent client the Connect view and `askdesk doctor` know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    ClaudeCode,
    Codex,
    GeminiCli,
}

impl Agent {
    pub const ALL: [Agent; 3] = [Agent::ClaudeCode, Agent::Codex, Agent::GeminiCli];

    pub fn label(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Codex => "Codex",
            Agent::GeminiCli => "Gemini CLI",
        }
    }

    pub fn slug(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini-cli",
        }
    }

    pub fn from_slug(slug: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|agent| agent.slug() == slug)
    }

    /// The client's permission hook, when askdesk answers it; else askdesk reaches the client as
    /// its MCP server.
    pub fn hook(self) -> Option<HookClient> {
        match self {
            Agent::ClaudeCode => Some(HookClient::ClaudeCode),
            Agent::Codex => Some(HookClient::Codex),
            Agent::GeminiCli => None,
        }
    }

    /// What the person still does after connecting, for the change to take effect, in their
    /// language.
    pub fn after_connecting(self) -> Vec<String> {
        match self {
            Agent::ClaudeCode => vec![t!("connect-next-claude-code")],
            Agent::Codex => vec![
                t!("connect-next-codex-trust"),
                t!("connect-next-codex-restart"),
            ],
            Agent::GeminiCli => vec![t!("connect-next-gemini")],
        }
    }
}

impl From<HookClient> for Agent {
    fn from(client: HookClient) -> Agent {
        match client {
            HookClient::ClaudeCode => Agent::ClaudeCode,
            HookClient::Codex => Agent::Codex,
        }
    }
}

/// The client's configuration folder: `~/.claude`, `$CODEX_HOME` (else `~/.codex`), `~/.gemini`.
/// The client counts as present when it exists.
pub fn config_dir(agent: Agent) -> Result<PathBuf> {
    let home = || {
        std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .map(PathBuf::from)
            .ok_or_else(|| Error::Usage(t!("connect-no-home")))
    };
    Ok(match agent {
        Agent::ClaudeCode => home()?.join(".claude"),
        Agent::Codex => match std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => home()?.join(".codex"),
        },
        Agent::GeminiCli => home()?.join(".gemini"),
    })
}

/// The `askdesk` program a hook or MCP entry runs: this executable when it is `askdesk`, else the
/// `askdesk` beside it (the desktop app is installed next to it, in /usr/bin or target/debug).
pub fn askdesk_program() -> Result<PathBuf> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::Internal(t!("connect-no-exe", error = e.to_string())))?;
    if exe.file_name().is_some_and(|name| name == "askdesk") {
        return Ok(exe);
    }
    let beside = exe.with_file_name("askdesk");
    if is_program(&beside) {
        Ok(beside)
    } else {
        Err(Error::Internal(t!(
            "connect-no-program",
            path = exe.display().to_string()
        )))
    }
}

/// Whether `path` is a file this user may run.
pub fn is_program(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}
