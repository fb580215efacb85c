//! What the desktop's Connect view shows and does, decided here so the page only renders it: each
//! client (present or not, connected, outdated or not), the change Connect or Disconnect would
//! make as a unified diff, and the write, refused when the file changed since the diff was shown.

use std::path::Path;

use askdesk_i18n::t;
use serde::Serialize;

use crate::autostart::{self, Autostart};
use crate::client::{askdesk_program, config_dir, Agent};
use crate::error::{Error, Result};
use crate::hook::{self, HookEntry, HookState};
use crate::mcp::{self, McpState};
use crate::Change;

/// The whole view.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Overview {
    pub clients: Vec<ClientView>,
    /// Shown instead of an empty window: no question was ever settled and no client is connected.
    pub first_run: bool,
    /// The `mcpServers` entry for any other MCP client, to paste by hand; absent without askdesk.
    pub snippet: Option<String>,
    /// Why nothing can be connected (no `askdesk` program beside the app), if so.
    pub problem: Option<String>,
    /// Starting at login; absent when the autostart folders cannot be found.
    pub autostart: Option<Autostart>,
}

/// One client's card.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientView {
    pub client: Agent,
    pub label: &'static str,
    /// Its configuration folder exists.
    pub present: bool,
    pub folder: String,
    /// The settings file Connect changes.
    pub file: String,
    /// `hook` (its permission prompts come to askdesk) or `mcp` (askdesk is one of its tools).
    pub via: &'static str,
    /// `connected`, `outdated` (ours, but not what Connect writes now), `not-connected`, `error`.
    pub state: &'static str,
    /// The state in words.
    pub detail: String,
}

/// The change Connect or Disconnect would make.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    pub client: Agent,
    pub connect: bool,
    pub file: String,
    /// A unified diff; empty when nothing would change.
    pub diff: String,
}

/// What a write did, and what the person still does.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    pub client: Agent,
    pub message: String,
    pub backup: Option<String>,
    pub next: Vec<String>,
}

/// The view for the broker at `socket`; `history_empty` says no question was settled yet.
pub fn overview(socket: &Path, history_empty: bool) -> Overview {
    let program = askdesk_program();
    let clients: Vec<ClientView> = Agent::ALL
        .into_iter()
        .map(|agent| client_view(agent, socket, program.as_deref().ok()))
        .collect();
    let connected = clients
        .iter()
        .any(|c| c.state == "connected" || c.state == "outdated");
    Overview {
        first_run: history_empty && !connected,
        snippet: program.as_ref().ok().map(|p| mcp::snippet(p)),
        problem: program.as_ref().err().map(ToString::to_string),
        autostart: autostart::status().ok(),
        clients,
    }
}

fn client_view(agent: Agent, socket: &Path, program: Option<&Path>) -> ClientView {
    let folder = config_dir(agent);
    let file = settings_file(agent);
    let mut view = ClientView {
        client: agent,
        label: agent.label(),
        present: folder.as_ref().is_ok_and(|f| f.is_dir()),
        folder: folder.map(|f| f.display().to_string()).unwrap_or_default(),
        file: file
            .as_ref()
            .map(|f| f.display().to_string())
            .unwrap_or_default(),
        via: if agent.hook().is_some() {
            "hook"
        } else {
            "mcp"
        },
        state: "not-connected",
        detail: String::new(),
    };
    let found = file.and_then(|file| match (agent.hook(), program) {
        (_, None) => Ok(None),
        (Some(client), Some(program)) => {
            let entry = entry(client, program, socket)?;
            Ok(Some(match hook::state(&file, &entry)? {
                HookState::Absent => ("not-connected", t!("connect-hook-absent")),
                HookState::Current => ("connected", t!("connect-hook-current")),
                HookState::Outdated(commands) => (
                    "outdated",
                    t!("connect-hook-outdated", command = commands.join("; ")),
                ),
            }))
        }
        (None, Some(program)) => Ok(Some(match mcp::state(&file, program)? {
            McpState::Absent => ("not-connected", t!("connect-mcp-absent")),
            McpState::Current => ("connected", t!("connect-mcp-current")),
            McpState::Outdated(command) => {
                ("outdated", t!("connect-mcp-outdated", command = command))
            }
        })),
    });
    match found {
        Ok(Some((state, detail))) => {
            view.state = state;
            view.detail = detail;
        }
        Ok(None) => view.detail = t!("connect-askdesk-missing"),
        Err(error) => {
            view.state = "error";
            view.detail = error.to_string();
        }
    }
    view
}

fn settings_file(agent: Agent) -> Result<std::path::PathBuf> {
    match agent.hook() {
        Some(client) => hook::settings_path(client, None),
        None => mcp::gemini_settings(),
    }
}

/// The entry `askdesk hook install <client>` would write from this environment.
fn entry(client: crate::HookClient, program: &Path, socket: &Path) -> Result<HookEntry> {
    HookEntry::new(client, program, socket, None, "*", None, crate::MCP_SERVER)
}

fn change(agent: Agent, connect: bool, socket: &Path) -> Result<Change> {
    let file = settings_file(agent)?;
    match (agent.hook(), connect) {
        (Some(client), true) => hook::install(&file, &entry(client, &askdesk_program()?, socket)?),
        (Some(client), false) => hook::uninstall(&file, client),
        (None, true) => mcp::install(&file, &askdesk_program()?),
        (None, false) => mcp::uninstall(&file),
    }
}

/// The change Connect (`connect`) or Disconnect would make to `agent`'s settings, unwritten.
pub fn preview(agent: Agent, connect: bool, socket: &Path) -> Result<Preview> {
    let change = change(agent, connect, socket)?;
    Ok(Preview {
        client: agent,
        connect,
        file: change.shown(),
        diff: change.diff(),
    })
}

/// Writes the change `shown` previewed, with a backup of the previous file; refused, with
/// nothing written, when the change differs now (the file changed since).
pub fn apply(agent: Agent, connect: bool, socket: &Path, shown: &str) -> Result<Applied> {
    let change = change(agent, connect, socket)?;
    if change.diff() != shown {
        return Err(Error::Input(t!(
            "connect-changed-since",
            file = change.shown()
        )));
    }
    let backup = change.write()?;
    let (client, file) = (agent.label(), change.shown());
    Ok(Applied {
        client: agent,
        message: match (change.changes(), connect) {
            (true, true) => t!("connect-done-connected", client = client, file = file),
            (true, false) => t!("connect-done-disconnected", client = client, file = file),
            (false, true) => t!("connect-already-connected", client = client),
            (false, false) => t!("connect-already-disconnected", client = client),
        },
        backup: backup.map(|b| b.display().to_string()),
        next: if connect && change.changes() {
            agent.after_connecting()
        } else {
            Vec::new()
        },
    })
}
