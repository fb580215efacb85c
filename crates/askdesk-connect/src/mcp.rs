//! askdesk as an MCP server in a client's settings: the `mcpServers.askdesk` entry of Gemini CLI's
//! `settings.json` (the format Cursor and most other clients share), merged, checked and removed
//! as the hook is; and, read only, whether Claude Code (`~/.claude.json`, where `claude mcp add`
//! writes) and Codex (`config.toml`) have askdesk as a server.

use std::path::{Path, PathBuf};

use crate::change::Change;
use crate::client::{config_dir, Agent};
use crate::error::{Error, Result};
use crate::hook::{link_target, load, pretty};
use crate::json::Json;

/// How long a client may let a tool call wait, in milliseconds: a person may take minutes to
/// answer, and Gemini CLI's own default ends a call after ten.
pub const TIMEOUT_MS: u64 = 3_600_000;

/// `{"command": <askdesk>, "args": ["mcp"], "timeout": 3600000}`.
fn entry(program: &Path) -> Json {
    Json::object([
        ("command", Json::str(program.display().to_string())),
        ("args", Json::Array(vec![Json::str("mcp")])),
        ("timeout", Json::from(TIMEOUT_MS)),
    ])
}

/// The snippet for a client with the `mcpServers` format, to merge by hand.
pub fn snippet(program: &Path) -> String {
    pretty(&Json::object([(
        "mcpServers",
        Json::object([(crate::MCP_SERVER, entry(program))]),
    )]))
}

/// Gemini CLI's settings file, `~/.gemini/settings.json`.
pub fn gemini_settings() -> Result<PathBuf> {
    Ok(config_dir(Agent::GeminiCli)?.join("settings.json"))
}

/// What a settings file holds of askdesk's MCP entry.
#[derive(Debug, Clone, PartialEq)]
pub enum McpState {
    Absent,
    /// The entry that would be written now.
    Current,
    /// An `askdesk` entry of another shape (another program, no timeout): its command.
    Outdated(String),
}

fn servers<'a>(root: &'a mut Json, path: &Path) -> Result<&'a mut Json> {
    root.field_or("mcpServers", Json::Object(Vec::new()))
        .filter(|servers| matches!(servers, Json::Object(_)))
        .ok_or_else(|| {
            Error::Input(format!(
                "\"mcpServers\" in {} is not an object; it was left unchanged",
                path.display()
            ))
        })
}

/// Compares the `mcpServers.askdesk` entry of `path` with the one `program` would get.
pub fn state(path: &Path, program: &Path) -> Result<McpState> {
    let (mut root, _) = load(&link_target(path)?)?;
    let servers = servers(&mut root, path)?;
    Ok(match servers.get(crate::MCP_SERVER) {
        None => McpState::Absent,
        Some(found) if *found == entry(program) => McpState::Current,
        Some(found) => McpState::Outdated(command_of(found)),
    })
}

fn command_of(entry: &Json) -> String {
    entry
        .get("command")
        .and_then(Json::as_str)
        .unwrap_or("(no command)")
        .to_owned()
}

/// The file at `path` with askdesk's entry added or replaced, everything else kept.
pub fn install(path: &Path, program: &Path) -> Result<Change> {
    let target = link_target(path)?;
    let (mut root, existed) = load(&target)?;
    let before = root.clone();
    let servers = servers(&mut root, path)?;
    if servers.get(crate::MCP_SERVER) == Some(&entry(program)) {
        return Ok(Change::none(path, &target, before, existed));
    }
    match servers.get_mut(crate::MCP_SERVER) {
        Some(found) => *found = entry(program),
        None => {
            if let Json::Object(fields) = servers {
                fields.push((crate::MCP_SERVER.to_owned(), entry(program)));
            }
        }
    }
    Ok(Change::new(path, &target, before, root, existed))
}

/// The file at `path` without askdesk's entry (and without `mcpServers` when that leaves it
/// empty).
pub fn uninstall(path: &Path) -> Result<Change> {
    let target = link_target(path)?;
    let (mut root, existed) = load(&target)?;
    let before = root.clone();
    if !existed
        || servers(&mut root.clone(), path)?
            .get(crate::MCP_SERVER)
            .is_none()
    {
        return Ok(Change::none(path, &target, before, existed));
    }
    let servers = servers(&mut root, path)?;
    servers.remove(crate::MCP_SERVER);
    if matches!(servers, Json::Object(fields) if fields.is_empty()) {
        root.remove("mcpServers");
    }
    Ok(Change::new(path, &target, before, root, existed))
}

/// The command of askdesk's MCP server as `agent` has it (Claude Code's user scope in
/// `~/.claude.json`, Codex's `[mcp_servers.askdesk]`, Gemini CLI's `settings.json`), or `None`.
pub fn configured(agent: Agent) -> Result<Option<String>> {
    match agent {
        Agent::ClaudeCode => {
            let home = config_dir(Agent::ClaudeCode)?;
            let file = home.with_file_name(".claude.json");
            let (mut root, _) = load(&link_target(&file)?)?;
            Ok(servers(&mut root, &file)?
                .get(crate::MCP_SERVER)
                .map(command_of))
        }
        Agent::Codex => {
            let file = config_dir(Agent::Codex)?.join("config.toml");
            let text = match std::fs::read_to_string(&file) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => {
                    return Err(Error::Internal(format!(
                        "cannot read {}: {e}",
                        file.display()
                    )))
                }
            };
            let table: toml::Table = text
                .parse()
                .map_err(|e| Error::Input(format!("{} is not valid TOML ({e})", file.display())))?;
            Ok(table
                .get("mcp_servers")
                .and_then(|servers| servers.get(crate::MCP_SERVER))
                .map(|server| {
                    server
                        .get("command")
                        .and_then(|c| c.as_str())
                        .unwrap_or("(no command)")
                        .to_owned()
                }))
        }
        Agent::GeminiCli => {
            let file = gemini_settings()?;
            let (mut root, _) = load(&link_target(&file)?)?;
            Ok(servers(&mut root, &file)?
                .get(crate::MCP_SERVER)
                .map(command_of))
        }
    }
}
