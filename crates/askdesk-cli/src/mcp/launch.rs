//! Starting the desktop app when an MCP call needs a broker and none runs.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use askdesk_broker::client::{Client, ClientError};

use crate::exit::{Error, Result};

/// How long a call waits for a desktop app it started to open the socket.
const LAUNCH_WAIT: Duration = Duration::from_secs(10);
/// A failed launch is not retried sooner than this.
const LAUNCH_RETRY: Duration = Duration::from_secs(30);
/// The desktop app's executable.
const DESKTOP_EXE: &str = "askdesk-desktop";

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
        let has_display = ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()));
        let Some(exe) = desktop_exe().filter(|_| has_display) else {
            return Err(not_running());
        };
        {
            let mut last = self.last_launch.lock().unwrap_or_else(|p| p.into_inner());
            if last.is_some_and(|at| at.elapsed() < LAUNCH_RETRY) {
                return Err(not_running());
            }
            *last = Some(Instant::now());
        }
        tracing::info!(exe = %exe.display(), "no broker running: starting the desktop app");
        let mut command = tokio::process::Command::new(&exe);
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        #[cfg(unix)]
        command.process_group(0); // the app outlives this MCP session and its client's signals
        let mut child = command.spawn().map_err(|e| {
            Error::Internal(format!(
                "cannot start {}: {e}; start askdesk yourself",
                exe.display()
            ))
        })?;
        // Reap it if it exits while this process runs.
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        let deadline = Instant::now() + LAUNCH_WAIT;
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            match Client::connect(socket, client_name).await {
                Ok(client) => return Ok(client),
                Err(ClientError::NotRunning { .. }) if Instant::now() < deadline => continue,
                Err(ClientError::NotRunning { .. }) => {
                    return Err(Error::Internal(format!(
                        "started {} but no broker opened {} within {}s; start askdesk with `askdesk serve` or the desktop app",
                        exe.display(),
                        socket.display(),
                        LAUNCH_WAIT.as_secs()
                    )))
                }
                Err(error) => return Err(error.into()),
            }
        }
    }
}

/// `askdesk-desktop` next to this executable, else on PATH.
fn desktop_exe() -> Option<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(DESKTOP_EXE)));
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join(DESKTOP_EXE));
    beside.into_iter().chain(on_path).find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}
