//! `askdesk serve`: the broker without a GUI, in the foreground, until SIGINT or SIGTERM.

use std::path::PathBuf;

use askdesk_broker::journal::Journal;
use askdesk_broker::ServerConfig;
use askdesk_core::{Config, Service};
use tokio_util::sync::CancellationToken;

use crate::cli::ServeArgs;
use crate::exit::Result;

pub async fn run(args: ServeArgs, socket: PathBuf) -> Result<()> {
    let listener = askdesk_broker::bind(&socket)?;
    let journal = if args.no_history {
        None
    } else {
        // The broker is worth more than its history: without a journal it still serves.
        match tokio::task::spawn_blocking(Journal::open_default).await {
            Ok(Ok(journal)) => {
                tracing::info!(path = %journal.path().display(), "recording history");
                Some(journal)
            }
            Ok(Err(error)) => {
                tracing::error!(%error, "history is off: the journal cannot be opened");
                None
            }
            Err(error) => {
                tracing::error!(%error, "history is off: opening the journal failed");
                None
            }
        }
    };
    let config = ServerConfig {
        max_connections: args.max_connections,
        max_pending_per_connection: args.max_pending,
        journal,
        ..ServerConfig::default()
    };
    tracing::info!(socket = %socket.display(), version = env!("CARGO_PKG_VERSION"), "askdesk broker listening");
    let shutdown = CancellationToken::new();
    let server = tokio::spawn(askdesk_broker::run(
        listener,
        Service::new(Config::default()),
        config,
        shutdown.clone(),
    ));
    interrupted().await;
    tracing::info!("stopping: pending asks settle SHUTTING_DOWN");
    shutdown.cancel();
    server
        .await
        .map_err(|e| crate::exit::Error::Internal(format!("the broker task failed: {e}")))?;
    Ok(())
}

/// Resolves on the first SIGINT (Ctrl-C) or SIGTERM.
pub async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
