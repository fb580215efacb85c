//! A connection's outgoing lines: written straight to the peer when its socket takes them, queued
//! for the connection's flusher task when it does not.
//!
//! Writing in place saves a task switch per message and puts the bytes on the wire before the
//! sender's own clean-up runs; both show on a round trip. Only one side
//! writes at a time (the lock), and lines never interleave or reorder: a line is written in place
//! only when nothing is queued, and the flusher alone writes while something is.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::io::AsyncWrite;
use tokio::sync::Notify;

/// The outgoing side of one connection.
pub(crate) struct Outbox<W> {
    state: Mutex<State<W>>,
    /// Woken whenever the queue shrinks (or writing fails), for senders waiting for room.
    room: Notify,
    /// Queue length at which [`Outbox::send`] waits: the peer is not reading.
    limit: usize,
}

struct State<W> {
    write: W,
    queue: VecDeque<Vec<u8>>,
    /// Bytes of the queue's first line already written.
    written: usize,
    /// Written lines may sit in a buffer of `write` until flushed.
    unflushed: bool,
    /// The flusher, parked while the queue is empty.
    flusher: Option<Waker>,
    /// No more lines: flush, shut the writing side down, end the flusher.
    closing: bool,
    /// Writing failed (the peer is gone): everything is dropped from now on.
    failed: bool,
}

impl<W: AsyncWrite + Unpin> Outbox<W> {
    pub(crate) fn new(write: W, limit: usize) -> Outbox<W> {
        Outbox {
            state: Mutex::new(State {
                write,
                queue: VecDeque::new(),
                written: 0,
                unflushed: false,
                flusher: None,
                closing: false,
                failed: false,
            }),
            room: Notify::new(),
            limit,
        }
    }

    fn state(&self) -> MutexGuard<'_, State<W>> {
        askdesk_core::sync::lock(&self.state)
    }

    /// Sends a line, waiting while the peer has `limit` lines unread (back-pressure for handlers).
    pub(crate) async fn send(&self, line: Vec<u8>) {
        loop {
            let room = self.room.notified();
            tokio::pin!(room);
            {
                let state = self.state();
                if state.failed || state.closing || state.queue.len() < self.limit {
                    return self.push_locked(state, line);
                }
                // Registered before the lock is released, so a line leaving the queue in between
                // is not missed.
                room.as_mut().enable();
            }
            room.await;
        }
    }

    /// Sends a line without waiting (for synchronous callers); the queue may grow past `limit`.
    pub(crate) fn push(&self, line: Vec<u8>) {
        self.push_locked(self.state(), line);
    }

    fn push_locked(&self, mut state: MutexGuard<'_, State<W>>, line: Vec<u8>) {
        if state.failed || state.closing {
            return;
        }
        if !state.queue.is_empty() {
            state.queue.push_back(line);
            return;
        }
        // Nothing is queued, so nothing can be written ahead of this line: write it in place. A
        // `Pending` here registers no one; the flusher, woken below, registers itself.
        let mut cx = Context::from_waker(Waker::noop());
        let mut written = 0;
        while written < line.len() {
            match Pin::new(&mut state.write).poll_write(&mut cx, &line[written..]) {
                Poll::Ready(Ok(0)) => {
                    return self.fail(&mut state, io::ErrorKind::WriteZero.into())
                }
                Poll::Ready(Ok(n)) => written += n,
                Poll::Ready(Err(error)) => return self.fail(&mut state, error),
                Poll::Pending => break,
            }
        }
        if written < line.len() {
            state.queue.push_back(line);
            state.written = written;
        } else {
            match Pin::new(&mut state.write).poll_flush(&mut cx) {
                Poll::Ready(Ok(())) => return,
                Poll::Ready(Err(error)) => return self.fail(&mut state, error),
                Poll::Pending => state.unflushed = true,
            }
        }
        if let Some(flusher) = state.flusher.take() {
            flusher.wake();
        }
    }

    /// Writing failed: the peer is gone. Drops what is queued and lets everyone waiting go on.
    fn fail(&self, state: &mut State<W>, error: io::Error) {
        tracing::debug!(%error, "connection write failed");
        state.failed = true;
        state.queue.clear();
        if let Some(flusher) = state.flusher.take() {
            flusher.wake();
        }
        self.room.notify_waiters();
    }

    /// Gives up on a peer that does not read: what is queued is dropped, later lines too, and
    /// senders waiting for room go on. The flusher, if it waits for the peer, is the caller's to
    /// stop.
    pub(crate) fn abandon(&self) {
        let mut state = self.state();
        state.failed = true;
        state.queue.clear();
        if let Some(flusher) = state.flusher.take() {
            flusher.wake();
        }
        self.room.notify_waiters();
    }

    /// No more lines: the flusher writes what is queued, shuts the writing side down and ends.
    pub(crate) fn close(&self) {
        let mut state = self.state();
        state.closing = true;
        if let Some(flusher) = state.flusher.take() {
            flusher.wake();
        }
    }

    /// The connection's flusher task: writes what could not be written in place, until
    /// [`Outbox::close`] and an empty queue, or a failed write.
    pub(crate) async fn flush(&self) {
        poll_fn(|cx| self.poll_flush(cx)).await
    }

    fn poll_flush(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.state();
        let state = &mut *state;
        loop {
            if state.failed {
                return Poll::Ready(());
            }
            if let Some(line) = state.queue.front() {
                match Pin::new(&mut state.write).poll_write(cx, &line[state.written..]) {
                    Poll::Ready(Ok(0)) => self.fail(state, io::ErrorKind::WriteZero.into()),
                    Poll::Ready(Err(error)) => self.fail(state, error),
                    Poll::Ready(Ok(n)) => {
                        state.written += n;
                        if state.written == line.len() {
                            state.queue.pop_front();
                            state.written = 0;
                            state.unflushed = true;
                            self.room.notify_waiters();
                        }
                    }
                    Poll::Pending => return Poll::Pending,
                }
            } else if state.unflushed {
                match Pin::new(&mut state.write).poll_flush(cx) {
                    Poll::Ready(Ok(())) => state.unflushed = false,
                    Poll::Ready(Err(error)) => self.fail(state, error),
                    Poll::Pending => return Poll::Pending,
                }
            } else if state.closing {
                // Best effort: the peer may already be gone.
                return Pin::new(&mut state.write).poll_shutdown(cx).map(|_| ());
            } else {
                state.flusher = Some(cx.waker().clone());
                return Poll::Pending;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, DuplexStream};
    use tokio::task::JoinHandle;

    /// An outbox over `near` and its running flusher.
    fn start(near: DuplexStream, limit: usize) -> (Arc<Outbox<DuplexStream>>, JoinHandle<()>) {
        let outbox = Arc::new(Outbox::new(near, limit));
        let flusher = tokio::spawn({
            let outbox = outbox.clone();
            async move { outbox.flush().await }
        });
        (outbox, flusher)
    }

    /// Lines pushed faster than the peer reads arrive whole and in order, through the queue.
    #[tokio::test]
    async fn lines_keep_their_order_when_the_peer_is_slow() {
        let (near, mut far) = tokio::io::duplex(64);
        let (outbox, flusher) = start(near, 1000);
        let mut expected = Vec::new();
        for n in 0..200 {
            let line =
                format!("{{\"line\":{n},\"pad\":\"{}\"}}\n", "x".repeat(n % 37)).into_bytes();
            expected.extend_from_slice(&line);
            outbox.push(line);
        }
        outbox.close();
        let mut received = Vec::new();
        far.read_to_end(&mut received).await.unwrap();
        flusher.await.unwrap();
        assert_eq!(received, expected);
    }

    /// A task sending `line` into `outbox`, checked to be waiting for room (the queue is full).
    async fn blocked_send(
        outbox: &Arc<Outbox<DuplexStream>>,
        line: &'static [u8],
    ) -> JoinHandle<()> {
        let blocked = tokio::spawn({
            let outbox = outbox.clone();
            async move { outbox.send(line.to_vec()).await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!blocked.is_finished(), "send went on with the queue full");
        blocked
    }

    /// `send` waits while `limit` lines are unread and goes on once the peer reads.
    #[tokio::test]
    async fn send_waits_for_room() {
        let (near, mut far) = tokio::io::duplex(8);
        let (outbox, flusher) = start(near, 2);
        for _ in 0..3 {
            outbox.push(b"0123456789\n".to_vec());
        }
        let blocked = blocked_send(&outbox, b"last\n").await;
        let mut buf = vec![0; 33];
        far.read_exact(&mut buf).await.unwrap();
        blocked.await.unwrap();
        outbox.close();
        let mut rest = Vec::new();
        far.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, b"last\n");
        flusher.await.unwrap();
    }

    /// Abandoning a peer that does not read lets a sender waiting for room go on and drops what
    /// was queued and later lines (the flusher, waiting on the peer, is stopped by its owner).
    #[tokio::test]
    async fn abandoning_a_peer_that_does_not_read_frees_its_senders() {
        let (near, _far) = tokio::io::duplex(8);
        let (outbox, flusher) = start(near, 1);
        outbox.push(b"0123456789\n".to_vec());
        let blocked = blocked_send(&outbox, b"more\n").await;
        outbox.abandon();
        tokio::time::timeout(std::time::Duration::from_secs(5), blocked)
            .await
            .expect("the sender goes on")
            .unwrap();
        outbox.send(b"dropped\n".to_vec()).await;
        assert!(outbox.state().queue.is_empty());
        flusher.abort();
    }

    /// A peer that went away fails the writes; nothing waits forever and the flusher ends.
    #[tokio::test]
    async fn a_gone_peer_ends_everything() {
        let (near, far) = tokio::io::duplex(8);
        let (outbox, flusher) = start(near, 1);
        drop(far);
        outbox.push(b"0123456789\n".to_vec());
        outbox.send(b"more\n".to_vec()).await;
        outbox.send(b"and more\n".to_vec()).await;
        flusher.await.unwrap();
    }
}
