//! `askdesk serve`: the broker without a GUI, in the foreground, until SIGINT or SIGTERM.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use askdesk_broker::ServerConfig;
use askdesk_core::{Config, Limits, Service};
use askdesk_journal::Journal;
use clap::Args;
use tokio_util::sync::CancellationToken;

use crate::exit::Result;

/// Run the broker without a GUI, in the foreground
#[derive(Debug, Args)]
#[command(
    after_help = "The broker has no answerer of its own: run `askdesk answer` (or the desktop app's \
                        answerer) next to it, or every ask fails NO_PROVIDER. Logs go to stderr \
                        (ASKDESK_LOG=debug for more). SIGINT or SIGTERM stops it: pending asks settle \
                        SHUTTING_DOWN and the socket is removed.

Exit status: 0 after a clean stop; 1 when it cannot start (another broker is live on the socket, or \
the socket directory is unsafe); 2 usage error.

Examples:
  askdesk serve
  askdesk serve --no-history
  ASKDESK_SOCKET=/tmp/t/askdesk.sock askdesk serve"
)]
pub struct ServeArgs {
    /// Do not record settled requests in the history journal
    #[arg(long)]
    pub no_history: bool,
    /// After each line in or out, keep polling the sockets this long before sleeping (0: never;
    /// the history journal's writer polls twice as long after a lone record); saves a wake-up per
    /// line while a conversation is under way, costs nothing while idle
    #[arg(long, value_name = "MICROSECONDS", default_value_t = 100,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub busy_poll: u64,
    /// The most client connections served at once (1 to 1000000)
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub max_connections: usize,
    /// The most asks one connection may have pending at once (1 to 1000000)
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub max_pending: usize,
    /// The longest message (one line) accepted; a longer one closes its connection
    #[arg(long, value_name = "BYTES", default_value_t = 4 * 1024 * 1024,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1024..=1 << 30))]
    pub max_message_bytes: usize,
    /// The most questions in one batch
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub max_questions: usize,
    /// The most options in one question
    #[arg(long, value_name = "N", default_value_t = 64,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1_000_000))]
    pub max_options: usize,
    /// The most bytes of text in one field (question, detail, label, ...)
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1 << 30))]
    pub max_field_bytes: usize,
}

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
        images: Some(Arc::new(askdesk_image::Gate::default())),
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
