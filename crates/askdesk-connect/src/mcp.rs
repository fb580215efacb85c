//! askdesk as an MCP server in a client's settings: the `mcpServers.askdesk` entry of Gemini CLI's
//! `settings.json` (the format Cursor and most other clients share), merged, checked and removed
//! as the hook is; and, read only, whether Claude Code (`~/.claude.json`, where `claude mcp add`
//! writes) and Codex (`config.toml`) have askdesk as a server.

use std::path::{Path, PathBuf};

use askdesk_i18n::t;
use jsonc_parser::cst::{CstObject, CstObjectProp};
use serde_json::Value;

use crate::change::Change;
use crate::client::{config_dir, Agent};
use crate::document::{self, entry_value, property, render, Document, Entry};
use crate::error::{Error, Result};
use crate::hook::link_target;

/// How long a client may let a tool call wait, in milliseconds: a person may take minutes to
/// answer, and Gemini CLI's own default ends a call after ten.
pub const TIMEOUT_MS: u64 = 3_600_000;

/// `{"command": <askdesk>, "args": ["mcp"], "timeout": 3600000}`.
fn entry(program: &Path) -> Entry {
    Entry::Object(vec![
        ("command".into(), program.display().to_string().into()),
        ("args".into(), Entry::Array(vec!["mcp".into()])),
        ("timeout".into(), TIMEOUT_MS.into()),
    ])
}

/// `{"askdesk": <entry>}`, the `mcpServers` a file without one gets.
fn servers_entry(program: &Path) -> Entry {
    Entry::Object(vec![(crate::MCP_SERVER.into(), entry(program))])
}

/// The snippet for a client with the `mcpServers` format, to merge by hand.
pub fn snippet(program: &Path) -> String {
    render(&Entry::Object(vec![(
        "mcpServers".into(),
        servers_entry(program),
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

/// `mcpServers` (the object, and its property), `None` when missing; an error when it is not an
/// object.
fn servers(document: &Document, path: &Path) -> Result<Option<(CstObject, CstObjectProp)>> {
    let Some(prop) = property(&document.object(), "mcpServers") else {
        return Ok(None);
    };
    let servers = prop.object_value().ok_or_else(|| {
        Error::Input(t!(
            "connect-key-not-object",
            key = "\"mcpServers\"",
            path = path.display().to_string()
        ))
    })?;
    Ok(Some((servers, prop)))
}

/// What the file's `mcpServers.askdesk` says, if it has one.
fn ours(document: &Document, path: &Path) -> Result<Option<Value>> {
    Ok(servers(document, path)?
        .and_then(|(servers, _)| property(&servers, crate::MCP_SERVER))
        .and_then(|prop| prop.value())
        .map(|value| document::value(&value)))
}

/// Compares the `mcpServers.askdesk` entry of `path` with the one `program` would get.
pub fn state(path: &Path, program: &Path) -> Result<McpState> {
    let document = Document::load(&link_target(path)?)?;
    Ok(match ours(&document, path)? {
        None => McpState::Absent,
        Some(found) if found == entry_value(&entry(program)) => McpState::Current,
        Some(found) => McpState::Outdated(command_of(&found)),
    })
}

fn command_of(entry: &Value) -> String {
    entry
        .get("command")
        .and_then(Value::as_str)
        .map_or_else(|| t!("connect-no-command"), str::to_owned)
}

/// The file at `path` with askdesk's entry added or replaced, everything else kept as it was
/// written.
pub fn install(path: &Path, program: &Path) -> Result<Change> {
    let target = link_target(path)?;
    let doc = Document::load(&target)?;
    if ours(&doc, path)? == Some(entry_value(&entry(program))) {
        return Ok(Change::none(path, &target, &doc));
    }
    match servers(&doc, path)? {
        None => document::prepend(&doc.object(), "mcpServers", servers_entry(program)),
        Some((servers, _)) => match property(&servers, crate::MCP_SERVER) {
            Some(found) => found.set_value(entry(program)),
            None => document::prepend(&servers, crate::MCP_SERVER, entry(program)),
        },
    }
    Ok(Change::new(path, &target, &doc))
}

/// The file at `path` without askdesk's entry (and without `mcpServers` when that leaves it
/// empty); everything else stays as it was written.
pub fn uninstall(path: &Path) -> Result<Change> {
    let target = link_target(path)?;
    let doc = Document::load(&target)?;
    let Some((servers, prop)) = servers(&doc, path)? else {
        return Ok(Change::none(path, &target, &doc));
    };
    let found = document::properties(&servers, crate::MCP_SERVER);
    if !doc.existed() || found.is_empty() {
        return Ok(Change::none(path, &target, &doc));
    }
    found.into_iter().for_each(CstObjectProp::remove);
    if servers.properties().is_empty() {
        prop.remove();
    }
    Ok(Change::new(path, &target, &doc))
}

/// The command of askdesk's MCP server as `agent` has it (Claude Code's user scope in
/// `~/.claude.json`, Codex's `[mcp_servers.askdesk]`, Gemini CLI's `settings.json`), or `None`.
pub fn configured(agent: Agent) -> Result<Option<String>> {
    match agent {
        Agent::ClaudeCode => {
            let home = config_dir(Agent::ClaudeCode)?;
            let file = home.with_file_name(".claude.json");
            let document = Document::load(&link_target(&file)?)?;
            Ok(ours(&document, &file)?.map(|found| command_of(&found)))
        }
        Agent::Codex => {
            let file = config_dir(Agent::Codex)?.join("config.toml");
            let text = match std::fs::read_to_string(&file) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => {
                    return Err(Error::Internal(t!(
                        "connect-cannot-read",
                        path = file.display().to_string(),
                        error = e.to_string()
                    )))
                }
            };
            let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
                Error::Input(t!(
                    "connect-not-toml",
                    path = file.display().to_string(),
                    error = e.to_string()
                ))
            })?;
            Ok(table
                .get("mcp_servers")
                .and_then(|servers| servers.get(crate::MCP_SERVER))
                .map(|server| {
                    server
                        .get("command")
                        .and_then(|c| c.as_str())
                        .map_or_else(|| t!("connect-no-command"), str::to_owned)
                }))
        }
        Agent::GeminiCli => {
            let file = gemini_settings()?;
            let document = Document::load(&link_target(&file)?)?;
            Ok(ours(&document, &file)?.map(|found| command_of(&found)))
        }
    }
}
