//! askdesk-connect: how askdesk is connected to the agents on this computer, shared by the
//! `askdesk` command line (`hook install`, `doctor`) and the desktop app's Connect view.
//!
//! - [`client`]: the agent clients (Claude Code, Codex, Gemini CLI), their configuration folders,
//!   and the `askdesk` program their entries run.
//! - [`hook`]: askdesk's `PermissionRequest` entry in Claude Code's and Codex's settings.
//! - [`mcp`]: askdesk's MCP server entry in the clients' settings.
//! - [`change`]: a change to a settings file, shown as a diff before it is written with a backup.
//! - `document`: a settings file edited in place, everything but askdesk's entries kept as
//!   it was written.
//! - [`overview`]: what the desktop's Connect view shows, previews and writes.
//! - [`autostart`]: whether the desktop app starts at login, and the per-user switch.
//! - [`version`]: the version and git commit both binaries print.

pub mod autostart;
pub mod change;
pub mod client;
mod document;
pub mod error;
pub mod hook;
pub mod mcp;
pub mod overview;
pub mod version;

pub use change::Change;
pub use client::{Agent, HookClient};
pub use error::{Error, Result};
pub use version::VERSION;

/// The label the desktop app's answerer registers under (`askdesk_view::answerer` re-exports it):
/// `askdesk doctor` tells the desktop's broker from `askdesk serve`'s by it.
pub const DESKTOP_ANSWERER: &str = "desktop";

/// The race group of the person's own surfaces (the desktop's dialog, a paired phone): each is
/// offered a request at the same moment, and the first answer settles it.
pub const PERSON_GROUP: &str = "person";

/// The name askdesk's MCP server is added under, in every client.
pub const MCP_SERVER: &str = "askdesk";
