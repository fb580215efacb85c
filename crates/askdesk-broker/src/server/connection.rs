//! One connection: its reader loop, its state (pending asks, agents, answerers, requests relayed
//! to it), and its clean-up when the peer goes or the broker stops.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use askdesk_core::{AnswererId, Handle, Request, RequestId, Service};
use futures_util::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::{timeout_at, Instant};
use tokio_util::codec::FramedRead;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::Shared;
use crate::framing::{FramingError, LineCodec};
use crate::outbox::Outbox;
use crate::protocol::methods::RequestMethod;
use crate::protocol::{self, Id, Message, Response, RpcError};

/// The read buffer a connection starts with (it grows for longer lines): a typical request fits,
/// and an idle connection with asks pending holds no more than that.
const READ_BUFFER: usize = 1024;

/// Lines a peer may leave unread before the connection's handlers wait for it.
const OUTGOING_QUEUE: usize = 256;

/// How long a stopping broker lets a peer take its last lines (its asks' `SHUTTING_DOWN` answers)
/// before it closes the connection anyway: a peer that stopped reading must not keep the broker
/// from stopping.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// A connection's writing half, whatever the transport.
type BoxedWrite = Pin<Box<dyn AsyncWrite + Send>>;

/// Serves one admitted connection until the peer closes it or the broker stops; `_permit` holds
/// its place under the connection limit until then.
pub(super) async fn serve<S>(stream: S, shared: Arc<Shared>, _permit: OwnedSemaphorePermit)
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (read, write) = tokio::io::split(stream);
    let out: Arc<Outbox<BoxedWrite>> = Arc::new(Outbox::new(Box::pin(write), OUTGOING_QUEUE));
    let mut flusher = tokio::spawn({
        let out = out.clone();
        async move { out.flush().await }
    });
    let conn = Arc::new(Conn {
        shared: shared.clone(),
        out: out.clone(),
        state: Mutex::default(),
        asks: TaskTracker::new(),
        gone: CancellationToken::new(),
    });
    let mut lines = FramedRead::with_capacity(
        read,
        LineCodec::new(shared.config.max_message_bytes),
        READ_BUFFER,
    );
    loop {
        let frame = tokio::select! {
            _ = shared.shutdown.cancelled() => {
                // Pending asks settle SHUTTING_DOWN and their responses still go out below.
                shared.service.shutdown();
                break;
            }
            frame = lines.next() => frame,
        };
        match frame {
            None => break,
            Some(Ok(line)) => {
                shared.busy_poll.touch();
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                conn.handle_line(&line).await;
            }
            Some(Err(FramingError::TooLong(_))) => {
                let error = RpcError::invalid_request(format!(
                    "message over the limit of {} bytes; closing the connection",
                    shared.config.max_message_bytes
                ));
                conn.send(protocol::encode_error(&Id::Null, &error)).await;
                break;
            }
            Some(Err(FramingError::Io(error))) => {
                tracing::debug!(%error, "connection read failed");
                break;
            }
        }
    }
    if shared.shutdown.is_cancelled() {
        // Let the asks settle SHUTTING_DOWN and answer their askers before the peer is let go,
        // within the grace a stopping broker gives.
        let deadline = Instant::now() + SHUTDOWN_GRACE;
        conn.asks.close();
        if timeout_at(deadline, conn.asks.wait()).await.is_err() {
            // Asks wait for room the peer does not make: what it did not take is dropped.
            out.abandon();
            conn.asks.wait().await;
        }
        conn.close();
        out.close();
        if timeout_at(deadline, &mut flusher).await.is_err() {
            let client = conn.state().client.clone();
            tracing::warn!(
                client = client.as_deref().unwrap_or("?"),
                "closing a connection whose peer did not read its last messages while the broker stopped"
            );
            flusher.abort();
        }
    } else {
        // The peer is gone: its asks are aborted, not answered.
        conn.close();
        conn.asks.close();
        conn.asks.wait().await;
        out.close();
        let _ = flusher.await;
    }
}

/// One connection's shared state.
pub(super) struct Conn {
    pub(super) shared: Arc<Shared>,
    pub(super) out: Arc<Outbox<BoxedWrite>>,
    state: Mutex<ConnState>,
    /// The tasks running this connection's asks.
    pub(super) asks: TaskTracker,
    /// Cancelled when the peer is gone: the parent of every ask's token, so the answerer holding
    /// an ask learns that its asker went rather than that it withdrew the question.
    pub(super) gone: CancellationToken,
}

#[derive(Default)]
pub(super) struct ConnState {
    pub(super) initialized: bool,
    /// The client's name and version from `initialize`, for logs (and a late answer's record
    /// should its answerer not be named yet).
    pub(super) client: Option<String>,
    pub(super) agents: Vec<Handle>,
    pub(super) answerers: Vec<AnswererId>,
    /// This connection's pending asks, by the id it gave them, for `$/cancelRequest`.
    pub(super) asks: HashMap<Id, CancellationToken>,
    /// Requests sent to this connection as an answerer, awaiting its response.
    pub(super) outgoing: HashMap<i64, Outgoing>,
    /// Recently withdrawn outgoing requests, to recognise (and record) late answers.
    pub(super) withdrawn: VecDeque<Withdrawn>,
    /// Requests a race group's member answered lately (wire id, request): a member whose answer
    /// crossed the winner's still hears `$/cancelRequest`, which tells it the answer lost.
    pub(super) answered: VecDeque<(i64, RequestId)>,
    pub(super) next_outgoing: i64,
    pub(super) closed: bool,
}

/// A request relayed to this connection as an answerer, and how its decision goes back.
pub(super) struct Outgoing {
    pub(super) request: Arc<Request>,
    pub(super) responder: askdesk_core::Responder,
    /// The label of the answerer it was offered through, recorded with a late answer.
    pub(super) label: Arc<str>,
    /// Offered through a race group's member.
    pub(super) raced: bool,
}

/// An outgoing request withdrawn from the answerer, remembered to recognise a late answer.
#[derive(Debug)]
pub(super) struct Withdrawn {
    pub(super) id: i64,
    pub(super) request: Arc<Request>,
    pub(super) label: Arc<str>,
}

impl Conn {
    pub(super) fn state(&self) -> MutexGuard<'_, ConnState> {
        askdesk_core::sync::lock(&self.state)
    }

    pub(super) fn service(&self) -> &Service {
        &self.shared.service
    }

    pub(super) async fn send(&self, line: Vec<u8>) {
        // A line out usually brings one back soon (the asker's next ask).
        self.shared.busy_poll.touch();
        // A failed write means the peer is gone; its cleanup runs from the reader loop.
        self.out.send(line).await;
    }

    /// Answers request `id` of method `M`.
    pub(super) async fn reply<M: RequestMethod>(
        &self,
        id: &Id,
        result: Result<M::Result, RpcError>,
    ) {
        self.send(protocol::encode_response::<M>(id, result.as_ref()))
            .await;
    }

    /// Answers request `id` with an error.
    pub(super) async fn reply_error(&self, id: &Id, error: RpcError) {
        self.send(protocol::encode_error(id, &error)).await;
    }

    async fn handle_line(self: &Arc<Self>, line: &[u8]) {
        match protocol::parse(line) {
            Err(bad) => {
                if bad.answering {
                    // A broken answer to a request we relayed fails that request (as an answerer
                    // error would) instead of leaving it held until the answerer leaves.
                    self.handle_response(Response {
                        id: bad.id.clone(),
                        result: Err(RpcError::malformed_response(&bad.error)),
                    });
                }
                self.reply_error(&bad.id, bad.error).await
            }
            Ok(Message::Request(request)) => {
                self.handle_request(request.id, request.method, request.params)
                    .await
            }
            Ok(Message::Notification(notification)) => self.handle_notification(notification),
            Ok(Message::Response(response)) => self.handle_response(response),
        }
    }

    /// The peer is gone (or the broker is stopping): cancel its asks, move the requests it held
    /// down the chain, and unregister its agents (with everything they own).
    fn close(&self) {
        let (asks, answerers, agents, outgoing) = {
            let mut state = self.state();
            state.closed = true;
            (
                std::mem::take(&mut state.asks),
                std::mem::take(&mut state.answerers),
                std::mem::take(&mut state.agents),
                std::mem::take(&mut state.outgoing),
            )
        };
        // Every ask's token is a child of this one.
        self.gone.cancel();
        drop(asks);
        for answerer in answerers {
            self.service().unregister_answerer(answerer);
        }
        drop(outgoing); // Dropped responders delegate.
        for agent in agents {
            // Already gone when an owner's cascade or an explicit unregister took it first.
            let _ = self.service().unregister_agent(&agent);
        }
    }
}
