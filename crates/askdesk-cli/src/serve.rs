//! `askdesk serve`: the broker without a GUI, in the foreground, until SIGINT or SIGTERM.

use std::path::PathBuf;
use std::time::Duration;

use askdesk_broker::ServerConfig;
use askdesk_core::{Config, Limits, Service};
use askdesk_journal::Journal;
use tokio_util::sync::CancellationToken;

use crate::cli::ServeArgs;
use crate::exit::Result;

pub async fn run(args: ServeArgs, socket: PathBuf) -> Result<()> {
    // Before the socket exists: a signal as soon as it accepts must already stop us cleanly.
    let interrupted = askdesk_broker::host::interrupted();
    let listener = askdesk_broker::bind(&socket)?;
    let (journal, history_error) = if args.no_history {
        (None, None)
    } else {
        // The broker is worth more than its history: without a journal it still serves, and
        // `askdesk status` says why nothing is recorded. A journal that cannot be opened yet is
        // opened by the first commit after the cause is gone.
        match tokio::task::spawn_blocking(Journal::open_default_or_later).await {
            Ok(Ok((journal, None))) => {
                tracing::info!(path = %journal.path().display(), "recording history");
                (Some(journal), None)
            }
            Ok(Ok((journal, Some(error)))) => {
                tracing::error!(%error, "history is off until the journal can be opened");
                (Some(journal), None)
            }
            Ok(Err(error)) => {
                tracing::error!(%error, "history is off: the journal cannot be opened");
                (None, Some(error.to_string()))
            }
            Err(error) => {
                tracing::error!(%error, "history is off: opening the journal failed");
                (None, Some(error.to_string()))
            }
        }
    };
    let service_config = Config {
        limits: Limits {
            max_questions: args.max_questions,
            max_options: args.max_options,
            max_field_bytes: args.max_field_bytes,
        },
    };
    let config = ServerConfig {
        max_connections: args.max_connections,
        max_pending_per_connection: args.max_pending,
        max_message_bytes: args.max_message_bytes,
        journal,
        history_error,
        busy_poll: Duration::from_micros(args.busy_poll),
        ..ServerConfig::default()
    };
    tracing::info!(socket = %socket.display(), version = env!("CARGO_PKG_VERSION"), "askdesk broker listening");
    let shutdown = CancellationToken::new();
    let service = Service::new(service_config);
    askdesk_rules::Engine::start_default(&service, &shutdown).await;
    let server = tokio::spawn(askdesk_broker::run(
        listener,
        service,
        config,
        shutdown.clone(),
    ));
    interrupted.await;
    tracing::info!("stopping: pending asks settle SHUTTING_DOWN");
    shutdown.cancel();
    server
        .await
        .map_err(|e| crate::exit::Error::Internal(format!("the broker task failed: {e}")))?;
    Ok(())
}
