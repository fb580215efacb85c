//! Answer rules on the command line: the rules engine of `askdesk serve`.

use askdesk_core::Service;
use askdesk_rules::{Engine, DEFAULT_POLL};
use tokio_util::sync::CancellationToken;

/// Loads the rules file, puts the rules answerer at the head of `service`'s waterfall and follows
/// the file until `shutdown`. Without a configuration directory the broker runs without rules.
pub async fn start(service: &Service, shutdown: &CancellationToken) {
    let path = match askdesk_rules::default_path() {
        Ok(path) => path,
        Err(error) => return tracing::warn!(%error, "answer rules are off"),
    };
    let engine = Engine::open(path).await;
    if let Err(error) = engine.install(service) {
        return tracing::error!(%error, "answer rules are off: the rules answerer cannot register");
    }
    tokio::spawn(engine.watch(DEFAULT_POLL, shutdown.clone()));
}
