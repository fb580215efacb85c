//! The MCP session's standard input, watched for its end: a client ends a stdio session by closing
//! our input, and then nobody is left to read an answer.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

/// Reads `R` and cancels `ended` once it reaches its end (or fails): the session's pending asks
/// are withdrawn at once rather than after the SDK's wait for its handlers to finish.
pub struct WatchedInput<R> {
    inner: R,
    ended: CancellationToken,
}

impl<R> WatchedInput<R> {
    pub fn new(inner: R, ended: CancellationToken) -> Self {
        WatchedInput { inner, ended }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for WatchedInput<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) if buf.filled().len() == before && buf.remaining() > 0 => {
                self.ended.cancel()
            }
            Poll::Ready(Err(_)) => self.ended.cancel(),
            _ => {}
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn the_end_of_input_cancels_and_data_does_not() {
        let (mut writer, reader) = tokio::io::duplex(64);
        let ended = CancellationToken::new();
        let mut input = WatchedInput::new(reader, ended.clone());
        writer.write_all(b"{}\n").await.unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(input.read(&mut buf).await.unwrap(), 3);
        assert!(!ended.is_cancelled());
        drop(writer);
        assert_eq!(input.read(&mut buf).await.unwrap(), 0);
        assert!(ended.is_cancelled());
    }
}
