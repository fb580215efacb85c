//! A private directory for one test's broker, and the `askdesk` commands that live in it.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The `askdesk` binary under test: the one cargo built with the test or benchmark running now.
///
/// Cargo names it in `CARGO_BIN_EXE_askdesk` when it runs a target of askdesk-cli (since cargo
/// 1.94; before, only while compiling one, where this library cannot read it). Without that
/// variable (an older cargo, or the test binary run by hand) it is the `askdesk` of the same build:
/// cargo puts a test or benchmark in `<target>/<profile>/deps/` and the binaries in
/// `<target>/<profile>/`. Panics when there is none, rather than test something else.
pub fn askdesk_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let bin = match std::env::var_os("CARGO_BIN_EXE_askdesk") {
            Some(path) => PathBuf::from(path),
            None => {
                let exe = std::env::current_exe().expect("the path of the running test");
                let deps = exe.parent().expect("the test's directory");
                deps.parent()
                    .expect("the directory of the test's directory")
                    .join("askdesk")
            }
        };
        assert!(
            bin.is_file(),
            "no askdesk binary at {} (run the tests with `cargo test -p askdesk-cli`)",
            bin.display()
        );
        bin
    })
    .clone()
}

/// A fresh 0700 directory holding one broker's socket, data and runtime directories.
///
/// Removed when dropped.
pub struct Home {
    dir: tempfile::TempDir,
    socket: PathBuf,
    /// Whether every command's `$HOME` is this directory (see [`Home::user`]).
    user_home: bool,
}

impl Home {
    /// A new home whose socket is `<dir>/run/askdesk.sock` (the `run` directory does not exist yet:
    /// the broker creates it).
    pub fn new() -> Home {
        Home::named("askdesk-e2e-")
    }

    /// A new home that is also every command's `$HOME` (and no `$CLAUDE_CONFIG_DIR` or
    /// `$CODEX_HOME`): the user's files, the shell start-up files and the agents' settings among
    /// them, are the test's own. Its name does not say `askdesk`, which no answer rule allows a
    /// file's path to name.
    pub fn user() -> Home {
        let mut home = Home::named("e2e-home-");
        home.user_home = true;
        home
    }

    fn named(prefix: &str) -> Home {
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .expect("a temp dir");
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).expect("chmod 0700");
        let socket = dir.path().join("run").join("askdesk.sock");
        Home {
            dir,
            socket,
            user_home: false,
        }
    }

    /// The same home with the socket somewhere else (a path the test prepared).
    pub fn with_socket(mut self, socket: impl Into<PathBuf>) -> Home {
        self.socket = socket.into();
        self
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The socket path given to every command as `$ASKDESK_SOCKET`.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// `$XDG_DATA_HOME` of every command (the history journal lives under `askdesk/` in it).
    pub fn data_home(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// `$XDG_RUNTIME_DIR` of every command.
    pub fn runtime_dir(&self) -> PathBuf {
        self.dir.path().join("xdg-runtime")
    }

    /// `askdesk <args>` with the socket and the XDG directories pointing into this home.
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new(askdesk_bin());
        cmd.args(args)
            .env("ASKDESK_SOCKET", &self.socket)
            .env("XDG_DATA_HOME", self.data_home())
            .env("XDG_RUNTIME_DIR", self.runtime_dir())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env_remove("RUST_LOG")
            // The tests read the English output; the language of whoever runs them must not
            // choose another. A test of another language sets its own.
            .env("ASKDESK_LANG", "en")
            .stdin(Stdio::null());
        if self.user_home {
            cmd.env("HOME", self.dir.path())
                .env_remove("CLAUDE_CONFIG_DIR")
                .env_remove("CODEX_HOME");
        }
        cmd
    }
}

impl Default for Home {
    fn default() -> Self {
        Home::new()
    }
}

/// Runs `cmd` to completion with stdout and stderr captured; kills it and panics if it takes
/// longer than `limit`.
pub fn run_with_timeout(cmd: &mut Command, limit: Duration) -> Output {
    run_with_stdin(cmd, None, limit)
}

/// Like [`run_with_timeout`], writing `input` (when given) to the command's stdin and closing it.
pub fn run_with_stdin(cmd: &mut Command, input: Option<&[u8]>, limit: Duration) -> Output {
    if input.is_some() {
        cmd.stdin(Stdio::piped());
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    // An executable a test has just written can still be open for writing in a child another
    // test thread forked meanwhile (until that child execs): the kernel then refuses to run it
    // (ETXTBSY) for a moment.
    let mut attempts = 0;
    let mut child = loop {
        match cmd.spawn() {
            Err(error)
                if error.kind() == std::io::ErrorKind::ExecutableFileBusy && attempts < 50 =>
            {
                attempts += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            spawned => break spawned.expect("spawn the command"),
        }
    };
    if let Some(input) = input {
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let input = input.to_vec();
        // A separate writer so a child that does not read its input cannot block us.
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(&input);
        });
    }
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = std::sync::mpsc::channel();
    // Collecting on another thread drains both pipes while we wait, so a chatty child cannot block.
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(limit) {
        Ok(output) => output.expect("collect the output"),
        Err(_) => {
            // SAFETY: kill(2) on the pid of a child we spawned and have not reaped yet.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let output = rx
                .recv()
                .expect("the collector thread ends")
                .expect("collect the output");
            panic!(
                "{cmd:?} did not finish within {limit:?}; stdout: {} stderr: {}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
}
