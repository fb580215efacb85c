//! The agent `meta` keys askdesk itself writes and reads, and the one way to read them.
//!
//! `meta` is free-form on the wire (protocol 3): an agent may put anything in it. The keys below are
//! the ones askdesk's own clients (the hooks, the MCP server, `askdesk ask`) fill in and its answer
//! rules, plan threads, memory and views read; each is named here once so a writer and its readers
//! cannot drift apart.

use serde_json::{Map, Value};

use crate::types::AgentInfo;

/// The agent's working directory (absolute when askdesk's clients set it).
pub const CWD: &str = "cwd";
/// The agent runtime's process id.
pub const PID: &str = "pid";
/// The client's session, which groups the rounds of a plan review into one thread.
pub const SESSION: &str = "session";
/// Which client asks (`claude-code`, `codex`, `gemini`, an MCP client's name).
pub const CLIENT: &str = "client";
/// How it reached askdesk: `hook` or `mcp`.
pub const VIA: &str = "via";
/// The tool a permission prompt is about (`Bash`, `Edit`, ...).
pub const TOOL: &str = "tool";
/// What a shell tool would run.
pub const COMMAND: &str = "command";
/// The file a tool would change (absolute, or relative to [`CWD`]).
pub const PATH: &str = "path";
/// The URL a tool would fetch.
pub const URL: &str = "url";
/// The client's transcript file.
pub const TRANSCRIPT: &str = "transcript";
/// The model the client runs.
pub const MODEL: &str = "model";
/// The client's permission mode.
pub const PERMISSION_MODE: &str = "permissionMode";

/// Whether a request is a permission prompt: the asking agent's meta names a [`TOOL`] (set means
/// there, whatever its type, as the answer rules read it). Phones are never offered one.
pub fn is_permission_prompt(agent: Option<&AgentInfo>) -> bool {
    agent
        .and_then(|agent| agent.meta.as_ref())
        .and_then(|meta| meta.get(TOOL))
        .is_some_and(|tool| !tool.is_null())
}

impl AgentInfo {
    /// A non-empty string entry of `meta`; any other value (a number, an object, `""`) is `None`.
    pub fn meta_str(&self, key: &str) -> Option<&str> {
        meta_str(self.meta.as_ref(), key)
    }

    /// Who asks, as every view of askdesk names them: the label, else the id.
    pub fn display_name(&self) -> &str {
        self.label
            .as_deref()
            .map(str::trim)
            .filter(|label| !label.is_empty())
            .unwrap_or(&self.id)
    }
}

/// A non-empty string entry of a `meta` map.
pub fn meta_str<'a>(meta: Option<&'a Map<String, Value>>, key: &str) -> Option<&'a str> {
    meta?.get(key)?.as_str().filter(|value| !value.is_empty())
}

/// Who asks, for a request that may have no agent: an ask without one came from a script.
pub fn display_name(agent: Option<&AgentInfo>) -> &str {
    agent.map_or("a script", AgentInfo::display_name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn agent(label: Option<&str>, meta: Value) -> AgentInfo {
        AgentInfo {
            id: "coder-1".into(),
            label: label.map(str::to_owned),
            meta: meta.as_object().cloned(),
        }
    }

    #[test]
    fn an_agent_is_named_by_its_label_else_its_id_else_as_a_script() {
        assert_eq!(
            display_name(Some(&agent(Some("Claude Code"), json!({})))),
            "Claude Code"
        );
        assert_eq!(display_name(Some(&agent(Some("  "), json!({})))), "coder-1");
        assert_eq!(display_name(Some(&agent(None, json!({})))), "coder-1");
        assert_eq!(display_name(None), "a script");
    }

    #[test]
    fn only_non_empty_strings_are_read_from_meta() {
        let a = agent(None, json!({ "cwd": "/src", "pid": 42, "session": "" }));
        assert_eq!(a.meta_str(CWD), Some("/src"));
        assert_eq!(a.meta_str(PID), None);
        assert_eq!(a.meta_str(SESSION), None);
        assert_eq!(a.meta_str(TOOL), None);
        assert_eq!(agent(None, Value::Null).meta_str(CWD), None);
    }
}
