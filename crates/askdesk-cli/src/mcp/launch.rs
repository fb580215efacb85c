//! Starting the desktop app when an MCP call needs a broker and none runs, at most once per
//! [`LAUNCH_RETRY`]; the launch itself is [`crate::launch`]'s.

use std::path::Path;
use std::time::{Duration, Instant};

use askdesk_broker::client::Client;

use crate::exit::{Error, Result};

/// A failed launch is not retried sooner than this.
const LAUNCH_RETRY: Duration = Duration::from_secs(30);

/// Starts the desktop app at most once per [`LAUNCH_RETRY`].
#[derive(Default)]
pub struct Launcher {
    last_launch: std::sync::Mutex<Option<Instant>>,
}

impl Launcher {
    /// Starts the desktop app and waits for its socket; the error says how to start askdesk.
    pub async fn launch(&self, socket: &Path, client_name: &str) -> Result<Client> {
        let not_running = || Error::NoBroker {
            path: socket.to_owned(),
        };
        let Some(exe) = crate::launch::launchable() else {
            return Err(not_running());
        };
        {
            let mut last = askdesk_core::sync::lock(&self.last_launch);
            if last.is_some_and(|at| at.elapsed() < LAUNCH_RETRY) {
                return Err(not_running());
            }
            *last = Some(Instant::now());
        }
        crate::launch::start_and_connect(&exe, socket, client_name).await
    }
}
