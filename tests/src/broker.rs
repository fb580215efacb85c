//! [`Broker`]: a real `askdesk serve` process on a private socket, killed when dropped.

use std::fs::File;
use std::os::unix::net::UnixStream as StdUnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::conn::Conn;
use super::home::Home;
use super::PATIENCE;

/// A running `askdesk serve`.
///
/// Its stdout and stderr go to a log file in its [`Home`]; when a test panics while the broker is
/// alive, the log is printed on drop so the failure shows what the broker said.
pub struct Broker {
    child: Option<Child>,
    log: PathBuf,
    // Dropped last: the directory must outlive the process using it.
    home: Home,
}

impl Broker {
    /// `askdesk serve` in a fresh [`Home`], with default limits.
    pub fn start() -> Broker {
        Broker::start_in(Home::new(), &[])
    }

    /// `askdesk serve <extra args>` in a fresh [`Home`] (e.g. `["--max-connections", "2"]`).
    pub fn start_with(args: &[&str]) -> Broker {
        Broker::start_in(Home::new(), args)
    }

    /// `askdesk serve <extra args>` in the given home; returns once the socket accepts connections.
    pub fn start_in(home: Home, args: &[&str]) -> Broker {
        Broker::start_in_env(home, args, &[])
    }

    /// [`Broker::start_in`] with environment variables set for the broker (`ASKDESK_LANG`).
    pub fn start_in_env(home: Home, args: &[&str], env: &[(&str, &str)]) -> Broker {
        let log = home.path().join(format!("broker-{}.log", unique()));
        let mut cmd = home.command(std::iter::once("serve").chain(args.iter().copied()));
        cmd.envs(env.iter().copied());
        let child = spawn_logged(&mut cmd, &log);
        let mut broker = Broker {
            child: Some(child),
            log,
            home,
        };
        broker.wait_ready();
        broker
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child_mut().try_wait().expect("poll the broker") {
                panic!(
                    "askdesk serve exited with {status} before listening; log:\n{}",
                    self.log()
                );
            }
            if StdUnixStream::connect(self.socket()).is_ok() {
                return;
            }
            if Instant::now() >= deadline {
                panic!(
                    "askdesk serve never listened on {}; log:\n{}",
                    self.socket().display(),
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn home(&self) -> &Home {
        &self.home
    }

    pub fn socket(&self) -> &Path {
        self.home.socket()
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("the broker was not reaped").id()
    }

    /// The CPU time all of the broker's threads have run, from `/proc/PID/task/*/schedstat` (its
    /// first field, in nanoseconds: exact, where `/proc/PID/stat` counts clock ticks).
    pub fn cpu_time(&self) -> Duration {
        let nanos: u64 = std::fs::read_dir(format!("/proc/{}/task", self.pid()))
            .expect("the broker's threads")
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok())
            .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
            .sum();
        Duration::from_nanos(nanos)
    }

    /// Everything the broker printed so far.
    pub fn log(&self) -> String {
        std::fs::read(&self.log)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// A connection that has completed `initialize`.
    pub async fn conn(&self) -> Conn {
        let conn = self.conn_uninit().await;
        conn.initialize("e2e").await;
        conn
    }

    /// A connection that completed `initialize`, retrying while the broker still counts connections
    /// that just closed (such as the readiness probe of [`Broker::start`]) against a small
    /// `--max-connections`.
    pub async fn admitted_conn(&self) -> Conn {
        let deadline = Instant::now() + PATIENCE;
        let init = b"{\"jsonrpc\":\"2.0\",\"id\":\"admit\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"client\":{\"name\":\"e2e\"}}}\n";
        loop {
            let conn = self.conn_uninit().await;
            if conn.try_send_raw(init).await.is_ok() {
                let lines = conn.lines_within(1, PATIENCE).await;
                if lines
                    .first()
                    .is_some_and(|line| line.contains("\"result\""))
                {
                    conn.response(&serde_json::json!("admit")).await;
                    return conn;
                }
            }
            assert!(
                Instant::now() < deadline,
                "the broker never admitted a connection; log:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A connection that has sent nothing yet.
    pub async fn conn_uninit(&self) -> Conn {
        Conn::connect(self.socket())
            .await
            .expect("connect to the broker")
    }

    /// `askdesk <args>` pointed at this broker (same socket and XDG directories).
    pub fn cli<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.home.command(args)
    }

    /// Sends a signal (e.g. `libc::SIGTERM`) to the broker process.
    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill(2) on the pid of our own child, which is not reaped while `child` is Some.
        let rc = unsafe { libc::kill(self.pid() as libc::pid_t, signal) };
        assert_eq!(
            rc,
            0,
            "kill({}, {signal}) failed: {}",
            self.pid(),
            std::io::Error::last_os_error()
        );
    }

    /// Waits (without blocking the async runtime) for the broker to exit; panics after `limit`.
    pub async fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child_mut().try_wait().expect("poll the broker") {
                return status;
            }
            if Instant::now() >= deadline {
                panic!(
                    "askdesk serve still running {limit:?} after being asked to stop; log:\n{}",
                    self.log()
                );
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.child_mut()
            .try_wait()
            .expect("poll the broker")
            .is_none()
    }

    fn child_mut(&mut self) -> &mut Child {
        self.child.as_mut().expect("the broker was not reaped")
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if child.try_wait().ok().flatten().is_none() {
                child.kill().ok();
            }
            child.wait().ok();
        }
        if std::thread::panicking() {
            eprintln!(
                "--- askdesk serve log ({}) ---\n{}",
                self.log.display(),
                self.log()
            );
        }
    }
}

/// Spawns `cmd` with stdout and stderr appended to `log`.
pub(crate) fn spawn_logged(cmd: &mut Command, log: &Path) -> Child {
    let file = File::create(log).expect("create the log file");
    let err = file.try_clone().expect("clone the log file handle");
    cmd.stdout(Stdio::from(file))
        .stderr(Stdio::from(err))
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"))
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A long-running `askdesk` command (e.g. `askdesk answer`) killed when dropped.
pub struct Background {
    child: Child,
    log: PathBuf,
}

impl Broker {
    /// Starts `askdesk <args>` against this broker in the background, output to a log file.
    pub fn spawn_cli(&self, args: &[&str]) -> Background {
        let log = self.home.path().join(format!("cli-{}.log", unique()));
        let child = spawn_logged(&mut self.cli(args), &log);
        Background { child, log }
    }

    /// As [`Broker::spawn_cli`], with the command's standard input a pipe the test writes to.
    pub fn spawn_cli_piped(&self, args: &[&str]) -> (Background, ChildStdin) {
        let log = self.home.path().join(format!("cli-{}.log", unique()));
        let mut child = spawn_logged(self.cli(args).stdin(Stdio::piped()), &log);
        let stdin = child.stdin.take().expect("stdin is piped");
        (Background { child, log }, stdin)
    }
}

impl Background {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything the command printed so far.
    pub fn log(&self) -> String {
        std::fs::read(&self.log)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// Whether the command has exited, and how.
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().expect("poll the command")
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.child.kill().ok();
        }
        self.child.wait().ok();
        if std::thread::panicking() {
            eprintln!(
                "--- background command log ({}) ---\n{}",
                self.log.display(),
                self.log()
            );
        }
    }
}
