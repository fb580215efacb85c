//! Starting the desktop app when no broker runs: finding `askdesk-desktop`, the display check,
//! spawning it detached and waiting for its socket. Used by `askdesk mcp` and `askdesk hook`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use askdesk_broker::client::{Client, ClientError};

use crate::exit::{Error, Result};

/// How long a launch waits for the desktop app's socket.
pub const LAUNCH_WAIT: Duration = Duration::from_secs(10);

const DESKTOP_EXE: &str = "askdesk-desktop";

/// Whether a graphical session is there to show the desktop app in.
pub fn has_display() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

/// The desktop app to start: `askdesk-desktop` next to this executable, else on PATH; `None`
/// when there is no display to show it in or no such executable.
pub fn launchable() -> Option<PathBuf> {
    desktop_exe().filter(|_| has_display())
}

/// Starts `exe` (the desktop app) detached from this process and connects to the broker it
/// opens at `socket`, waiting up to [`LAUNCH_WAIT`]. The error says how to start askdesk.
pub async fn start_and_connect(exe: &Path, socket: &Path, client_name: &str) -> Result<Client> {
    tracing::info!(exe = %exe.display(), "no broker running: starting the desktop app");
    let mut command = tokio::process::Command::new(exe);
    // The app opens the socket this process waits on, whichever `--socket` named it.
    command
        .env("ASKDESK_SOCKET", socket)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // The app outlives this process and the signals its parent sends to its process group.
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn().map_err(|e| {
        Error::Internal(format!(
            "cannot start {}: {e}; start askdesk yourself",
            exe.display()
        ))
    })?;
    let deadline = Instant::now() + LAUNCH_WAIT;
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        // An app that ended without opening the socket (another instance's socket directory, a
        // refused one) is not waited for.
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Error::Internal(format!(
                "started {} but it exited ({status}) without opening {}; run it in a terminal to see why",
                exe.display(),
                socket.display()
            )));
        }
        match Client::connect_within(socket, client_name, crate::connect::HANDSHAKE_WAIT).await {
            Ok(client) => {
                // Reap it if it exits while this process runs.
                tokio::spawn(async move {
                    let _ = child.wait().await;
                });
                return Ok(client);
            }
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
