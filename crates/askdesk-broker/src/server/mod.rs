//! The broker: the accept loop, and admission of each connection under the connection limit.
//!
//! - `connection`: one connection's task: reads lines, keeps the connection's state (its asks,
//!   agents, answerers and the requests relayed to it), cleans up when the peer goes.
//! - `handlers`: the dispatch table (SPEC 5.4) and one handler per method.
//! - `answerer`: `SocketAnswerer`, which relays requests to answerer connections (SPEC 5.5) and
//!   reads their responses as decisions.

mod answerer;
mod connection;
mod handlers;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use askdesk_core::Service;

use crate::journal::Journal;
use crate::protocol::{self, Id, RpcError};
use crate::transport::Listener;

/// How the broker is set up. The defaults are SPEC's.
#[derive(Clone)]
pub struct ServerConfig {
    /// The longest line accepted; a longer one gets Invalid Request and the connection closes.
    pub max_message_bytes: usize,
    pub max_connections: usize,
    pub max_pending_per_connection: usize,
    /// Where settled requests are recorded; `None` records nothing.
    pub journal: Option<Journal>,
    /// Called for the `askdesk/focus` extension (the desktop app shows its window); `None` makes
    /// that method unknown.
    pub focus: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_message_bytes: 4 * 1024 * 1024,
            max_connections: 256,
            max_pending_per_connection: 64,
            journal: None,
            focus: None,
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
            .field("focus", &self.focus.is_some())
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
    let shared = Arc::new(Shared {
        connections: Arc::new(Semaphore::new(config.max_connections)),
        service,
        config,
        socket: listener.path().to_owned(),
        shutdown: shutdown.clone(),
        tracker: TaskTracker::new(),
    });
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(stream) => admit(&shared, stream),
                Err(error) => {
                    // Usually out of file descriptors: back off instead of spinning.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
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
