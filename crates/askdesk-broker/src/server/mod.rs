//! The broker: the accept loop, and admission of each connection under the connection limit.
//!
//! - `connection`: one connection's task: reads lines, keeps the connection's state (its asks,
//!   agents, answerers and the requests relayed to it), cleans up when the peer goes.
//! - `handlers`: the dispatch table (protocol 5.4) and one handler per method.
//! - `answerer`: `SocketAnswerer`, which relays requests to answerer connections (protocol 5.5) and
//!   reads their responses as decisions.
//! - `busy_poll`: keeps the thread polling the reactor for a moment after each line.

mod answerer;
mod busy_poll;
mod connection;
mod handlers;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use askdesk_core::Service;
use askdesk_journal::Journal;

use crate::protocol::{self, Id, RpcError};
use crate::transport::Listener;
use busy_poll::BusyPoll;

/// The longest message (line) a broker takes by default, protocol 1.1's 4 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// How the broker is set up. The defaults are the protocol's (docs/protocol.md 1.1).
#[derive(Clone)]
pub struct ServerConfig {
    /// The longest line accepted; a longer one gets Invalid Request and the connection closes.
    pub max_message_bytes: usize,
    pub max_connections: usize,
    pub max_pending_per_connection: usize,
    /// Where settled requests are recorded; `None` records nothing.
    pub journal: Option<Journal>,
    /// Why there is no journal when one was wanted (it could not be opened), for `askdesk/status`.
    pub history_error: Option<String>,
    /// Called for the `askdesk/focus` extension with the second launch's activation token, if it
    /// had one (the desktop app shows its window); `None` makes that method unknown.
    pub focus: Option<Arc<dyn Fn(Option<String>) + Send + Sync>>,
    /// How long the broker's thread keeps polling its sockets after a line comes in or goes out
    /// before it sleeps (see `busy_poll`); zero, the default, never polls. Only a current-thread
    /// runtime polls its reactor while a task yields, so only such a runtime gains from it.
    pub busy_poll: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_connections: 256,
            max_pending_per_connection: 64,
            journal: None,
            history_error: None,
            focus: None,
            busy_poll: Duration::ZERO,
        }
    }
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConfig")
            .field("max_message_bytes", &self.max_message_bytes)
            .field("max_connections", &self.max_connections)
            .field(
                "max_pending_per_connection",
                &self.max_pending_per_connection,
            )
            .field("journal", &self.journal)
            .field("history_error", &self.history_error)
            .field("focus", &self.focus.is_some())
            .field("busy_poll", &self.busy_poll)
            .finish()
    }
}

/// Serves `service` on `listener` until `shutdown` is cancelled.
///
/// On shutdown it stops accepting, settles every pending ask with `SHUTTING_DOWN` (the asker gets
/// that error), lets every connection task end, and removes the socket file. Returns only when
/// every connection task has ended.
pub async fn run(
    listener: Listener,
    service: Service,
    config: ServerConfig,
    shutdown: CancellationToken,
) {
    if let Some(journal) = &config.journal {
        // Two of the broker's windows: the next record of an asker asking in turn comes a whole
        // round trip (reply, next ask, relay, answer) after the last commit.
        journal.set_busy_poll(config.busy_poll * 2);
    }
    let shared = Arc::new(Shared {
        connections: Arc::new(Semaphore::new(config.max_connections)),
        busy_poll: Arc::new(BusyPoll::new(config.busy_poll)),
        service,
        config,
        socket: listener.path().to_owned(),
        shutdown: shutdown.clone(),
        tracker: TaskTracker::new(),
    });
    shared.tracker.spawn({
        let shared = shared.clone();
        async move { shared.busy_poll.run(&shared.shutdown).await }
    });
    // On a current-thread runtime (`askdesk serve`) every wake from the journal's writer thread
    // is a system call: a relay task takes each committed batch with one and wakes its asks
    // locally. Commits acknowledged after shutdown go straight to their asks again.
    let current_thread = tokio::runtime::Handle::current().runtime_flavor()
        == tokio::runtime::RuntimeFlavor::CurrentThread;
    if let Some(relay) = shared
        .config
        .journal
        .as_ref()
        .filter(|_| current_thread)
        .and_then(Journal::relay_acks)
    {
        let shutdown = shutdown.clone();
        shared.tracker.spawn(async move {
            tokio::select! {
                _ = shutdown.cancelled() => {}
                _ = relay => {}
            }
        });
    }
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(stream) => admit(&shared, stream),
                Err(error) => {
                    // Usually out of file descriptors: back off instead of spinning.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
    shared.service.shutdown();
    shared.tracker.close();
    shared.tracker.wait().await;
    listener.remove();
    tracing::info!("broker stopped");
}

/// What every connection of one broker shares.
struct Shared {
    service: Service,
    config: ServerConfig,
    /// The socket served, for `askdesk/status`.
    socket: PathBuf,
    shutdown: CancellationToken,
    /// One permit per open connection.
    connections: Arc<Semaphore>,
    /// Every connection task, so `run` returns only when they all ended.
    tracker: TaskTracker,
    /// Restarted by every line a connection reads or writes.
    busy_poll: Arc<BusyPoll>,
}

/// Serves an accepted peer on a task of its own, or refuses it with a limit error when the broker
/// already serves `max_connections`.
fn admit<S>(shared: &Arc<Shared>, stream: S)
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    match shared.connections.clone().try_acquire_owned() {
        Ok(permit) => {
            shared
                .tracker
                .spawn(connection::serve(stream, shared.clone(), permit));
        }
        Err(_) => {
            let max = shared.config.max_connections;
            shared.tracker.spawn(async move {
                let (_, mut write) = tokio::io::split(stream);
                let error = RpcError::limit(
                    "connections",
                    format_args!("the broker serves at most {max} connections"),
                );
                let line = protocol::encode_error(&Id::Null, &error);
                let _ = write.write_all(&line).await;
                let _ = write.shutdown().await;
            });
        }
    }
}
