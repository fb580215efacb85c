//! The process that started the hook (the client, or the shell it runs the hook command in): its
//! pid, taken first thing in `main`, and the wait that ends when it is gone, which orphans the
//! hook and withdraws its question. On Linux the kernel says so (a pidfd on the parent, readable
//! once it exits); elsewhere the parent pid is checked four times a second.

use std::sync::OnceLock;

/// The parent this process had when `main` began.
static AT_START: OnceLock<u32> = OnceLock::new();

/// Takes this process's parent now; `main` calls it before anything else, so a parent killed
/// while the hook connects and asks is still the one it watches (read later, the new parent, init
/// or a subreaper, would be taken for the client, and the hook would never see it go).
pub fn record() {
    let _ = AT_START.set(current());
}

/// The parent taken at start (the current one, when [`record`] was not called).
pub fn at_start() -> u32 {
    *AT_START.get_or_init(current)
}

fn current() -> u32 {
    #[cfg(unix)]
    {
        std::os::unix::process::parent_id()
    }
    #[cfg(not(unix))]
    {
        std::process::id()
    }
}

/// How often the parent pid is checked where the kernel cannot tell us.
const PARENT_CHECK: std::time::Duration = std::time::Duration::from_millis(250);

/// A watch on the parent taken at start, opened at once so that however late [`Watch::gone`] is
/// first polled, a parent that ended in between is seen.
pub struct Watch {
    parent: u32,
    #[cfg(target_os = "linux")]
    pidfd: Option<std::os::fd::OwnedFd>,
}

impl Watch {
    pub fn open() -> Watch {
        let parent = at_start();
        Watch {
            parent,
            #[cfg(target_os = "linux")]
            pidfd: pidfd_open(parent),
        }
    }

    /// Whether the parent taken at start is already gone: this process has another parent now.
    /// A pidfd opened after the parent ended could name a new process given its pid; this check,
    /// made after opening, sees that case too.
    fn orphaned(&self) -> bool {
        current() != self.parent
    }

    /// Returns once the parent taken at start has ended.
    pub async fn gone(#[allow(unused_mut)] mut self) {
        if self.orphaned() {
            return;
        }
        #[cfg(target_os = "linux")]
        if let Some(pidfd) = self.pidfd.take() {
            use tokio::io::{unix::AsyncFd, Interest};
            // SAFETY: the AsyncFd owns the descriptor, which stays open until it is dropped.
            match unsafe { AsyncFd::register_with_interest(pidfd, Interest::READABLE) } {
                // A pidfd is readable once its process has exited.
                Ok(pidfd) => {
                    let _ = pidfd.readable().await;
                    return;
                }
                Err(error) => tracing::debug!(%error, "cannot watch the parent's pidfd; polling"),
            }
        }
        let mut ticks = tokio::time::interval(PARENT_CHECK);
        loop {
            ticks.tick().await;
            if self.orphaned() {
                return;
            }
        }
    }
}

/// A pidfd on `pid`, or `None` where the kernel has none (before Linux 5.3, or a seccomp filter
/// refuses it), or for a parent outside our pid namespace (0) or init (1), which never ends
/// while we run.
#[cfg(target_os = "linux")]
fn pidfd_open(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let pid = libc::pid_t::try_from(pid).ok().filter(|&pid| pid > 1)?;
    // SAFETY: pidfd_open(2) takes a pid and flags and returns a new file descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = i32::try_from(fd).ok().filter(|&fd| fd >= 0)?;
    // SAFETY: the descriptor was just returned to us and is owned by nothing else.
    Some(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pidfd on a child that exits becomes readable: the wait a hook makes on its parent.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_pidfd_wait_ends_when_its_process_exits() {
        let mut child = std::process::Command::new("sleep")
            .arg("300")
            .spawn()
            .unwrap();
        let watch = Watch {
            // Not our parent: only the pidfd can end this wait.
            parent: current(),
            pidfd: Some(pidfd_open(child.id()).expect("pidfd_open")),
        };
        let waiting = tokio::spawn(watch.gone());
        tokio::task::yield_now().await;
        assert!(
            !waiting.is_finished(),
            "the wait ended with the process alive"
        );
        child.kill().unwrap();
        child.wait().unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(60), waiting)
            .await
            .expect("the wait ended once the process exited")
            .unwrap();
    }
}
