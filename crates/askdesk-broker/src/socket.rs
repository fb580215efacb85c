//! One accepted peer's Unix socket, watched by the reactor for readability only.
//!
//! Tokio's `UnixStream` registers for readability and writability at once, so every time a peer
//! reads what the broker wrote, the kernel reports the socket writable again and wakes the broker
//! for nothing: on a question's round trip that is two wake-ups in six. The broker's writes almost
//! always go straight through (a line is small and the socket buffer is large), so [`Socket`] asks
//! to hear about writability only after a write found the buffer full, through a second
//! registration of a duplicate descriptor that lives until the buffer drains.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// A connected, non-blocking Unix socket; reads wait on the reactor, writes are attempted at once.
#[derive(Debug)]
pub struct Socket {
    read: AsyncFd<UnixStream>,
    /// Registered for writability while a write waits for room, dropped once one succeeds.
    write: Option<AsyncFd<OwnedFd>>,
}

impl Socket {
    /// Takes over a connected socket (set non-blocking here). Must be called inside a Tokio runtime.
    pub fn new(stream: UnixStream) -> io::Result<Socket> {
        stream.set_nonblocking(true)?;
        // SAFETY: the `UnixStream` owns its descriptor, and nothing here closes or replaces it
        // while the `AsyncFd` holds it.
        let read = unsafe { AsyncFd::register_with_interest(stream, Interest::READABLE)? };
        Ok(Socket { read, write: None })
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut ready = ready!(self.read.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let wanted = unfilled.len();
            match ready.try_io(|socket| socket.get_ref().read(unfilled)) {
                Ok(Ok(n)) => {
                    // A short read drained the socket: wait for the reactor instead of paying a
                    // read that would only say "would block" (what tokio's own streams do too).
                    if n > 0 && n < wanted {
                        ready.clear_ready();
                    }
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(error)) => return Poll::Ready(Err(error)),
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            match self.read.get_ref().write(buf) {
                Ok(n) => {
                    self.write = None;
                    return Poll::Ready(Ok(n));
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Poll::Ready(Err(error)),
            }
            // The buffer is full: watch for room. A registration made now reports a socket that
            // became writable in between at once, so no wake-up is lost.
            if self.write.is_none() {
                let duplicate = self.read.get_ref().as_fd().try_clone_to_owned()?;
                // SAFETY: as in `new`: the `OwnedFd` owns the duplicate and keeps it open.
                let watch =
                    unsafe { AsyncFd::register_with_interest(duplicate, Interest::WRITABLE)? };
                self.write = Some(watch);
            }
            let watch = self.write.as_ref().expect("registered above");
            let mut ready = ready!(watch.poll_write_ready(cx))?;
            // Try again; if the room is gone already, the next poll waits for the next edge.
            ready.clear_ready();
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.read.get_ref().shutdown(Shutdown::Write))
    }
}
