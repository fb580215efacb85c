//! What the desktop thread, the commands and the start-up share through Tauri's state: the journal
//! History reads ([`History`]), the answer rules engine ([`Rules`]), the broker's socket ([`Socket`]), and the page told whenever
//! the rules in force change ([`follow_rules`]).
//!
//! These sit apart from the modules that read them, so none of those modules needs another.

use askdesk_journal::Journal;
use askdesk_rules::Engine;
use askdesk_view::page::EVENT_RULES;
use tauri::{AppHandle, Emitter};

/// The socket this app's broker listens on, which Connect writes into Codex's hook.
pub struct Socket(pub std::path::PathBuf);

/// The journal the History view reads, if there is one.
pub struct History(pub Option<Journal>);

/// The answer rules engine, once its file has been read (never, without a configuration folder).
#[derive(Default)]
pub struct Rules(pub std::sync::OnceLock<Engine>);

/// Tells the page every time the rules in force or the file's error change, for as long as the
/// engine lives; once at the start, since the page may have asked before the file was read.
pub async fn follow_rules(app: AppHandle, engine: Engine) {
    let mut changes = engine.subscribe();
    drop(engine);
    loop {
        if let Err(error) = app.emit(EVENT_RULES, ()) {
            tracing::debug!(%error, "rules change not delivered");
        }
        if changes.changed().await.is_err() {
            return;
        }
    }
}
