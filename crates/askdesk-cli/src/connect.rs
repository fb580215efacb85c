//! Connecting to the broker; a missing broker becomes the "start one" error.

use std::path::Path;

use askdesk_broker::client::Client;

use crate::exit::Result;

/// How long a hook or the MCP server waits for a broker's handshake before giving up: a broker
/// answers in microseconds, so this only ends the wait on one that was suspended or hung.
pub const HANDSHAKE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Connects and initializes, naming this client `askdesk <command>` to the broker.
pub async fn connect(socket: &Path, command: &str) -> Result<Client> {
    Ok(Client::connect(socket, &format!("askdesk {command}")).await?)
}

/// The current directory, for an agent's `meta.cwd`.
pub fn current_dir() -> Option<String> {
    std::env::current_dir()
        .ok()
        .map(|dir| dir.display().to_string())
}
