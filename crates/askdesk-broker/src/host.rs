//! What a process that hosts the broker (`askdesk serve`, the desktop app) sets up the same way:
//! its logs ([`init_logging`]) and the wait for SIGINT or SIGTERM ([`interrupted`]).

use std::future::Future;
use std::io::IsTerminal;

use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

/// The variable whose `EnvFilter` directive (`debug`, `askdesk_broker=trace`) overrides the
/// default log level.
pub const LOG_ENV: &str = "ASKDESK_LOG";

/// Sends the process's logs to stderr, at `default` level (`info`, `warn`) unless `ASKDESK_LOG`
/// says otherwise. Colour codes only when stderr is a terminal: a log redirected to a file, a pipe
/// or a journal stays plain text. Does nothing when a logger is already installed.
pub fn init_logging(default: &str) {
    let ansi = std::io::stderr().is_terminal();
    let _ = subscriber(default, std::io::stderr, ansi).try_init();
}

/// The subscriber [`init_logging`] installs, writing to `writer`.
fn subscriber<W>(
    default: &str,
    writer: W,
    ansi: bool,
) -> impl tracing::Subscriber + Send + Sync + 'static
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    let filter = EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(ansi)
        .finish()
}

/// Resolves on the first SIGINT (Ctrl-C) or SIGTERM.
///
/// The handlers are installed when this is called, not when the future is first polled, so a
/// signal that arrives in between is not missed. Call it inside a tokio runtime. When the
/// handlers cannot be installed the default actions stay (the signal ends the process) and the
/// future never resolves.
pub fn interrupted() -> impl Future<Output = ()> {
    use tokio::signal::unix::{signal, SignalKind};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    async move {
        match (term, int) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            (Err(error), _) | (_, Err(error)) => {
                tracing::warn!("cannot listen for SIGINT and SIGTERM: {error}");
                std::future::pending().await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer that keeps everything written to it.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            askdesk_core::sync::lock(&self.0).extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Captured {
        type Writer = Captured;
        fn make_writer(&'a self) -> Captured {
            self.clone()
        }
    }

    fn logged(ansi: bool) -> String {
        let out = Captured::default();
        tracing::subscriber::with_default(subscriber("info", out.clone(), ansi), || {
            tracing::info!(socket = "/run/askdesk.sock", "listening");
        });
        let bytes = askdesk_core::sync::lock(&out.0).clone();
        String::from_utf8(bytes).expect("the log is UTF-8")
    }

    #[test]
    fn a_log_that_is_not_a_terminal_has_no_colour_codes() {
        let plain = logged(false);
        assert!(plain.contains("listening"), "{plain:?}");
        assert!(!plain.contains('\u{1b}'), "{plain:?}");
        // The same line on a terminal is coloured: the test above is not vacuous.
        assert!(logged(true).contains('\u{1b}'));
    }
}
