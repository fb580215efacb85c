//! Connecting to the broker; a missing broker becomes the "start one" error.

use std::path::Path;

use askdesk_broker::client::Client;

use crate::exit::Result;

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
