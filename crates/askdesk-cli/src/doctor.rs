//! `askdesk doctor`: checks the whole set-up and explains each finding (ok, warning or problem,
//! with the fix): the broker, the socket each client's hook will use, the session bus's
//! notification server and tray host, the hooks and MCP entries per client, the rules file and the
//! history journal.

use std::fmt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use askdesk_broker::protocol::methods::{HistoryState, StatusResult};
use askdesk_connect::hook;
use askdesk_connect::{client, mcp, Agent};
use clap::Args;

use crate::connect::{connect, HANDSHAKE_WAIT};
use crate::exit::{Error, Result};
use crate::output::{out, outln};
use crate::terminal::one_line;

/// Check the set-up: broker, sockets, notifications and tray, hooks and MCP entries, rules, history
#[derive(Debug, Args)]
#[command(
    after_help = "Each line says ok, warning or problem, and how to fix what is not ok. \
It reads the clients' settings, the rules file and the journal and asks the broker for its \
status; it changes nothing.

Exit status: 0 nothing is a problem (warnings allowed); 1 at least one problem.

Examples:
  askdesk doctor
  ASKDESK_SOCKET=/tmp/other.sock askdesk doctor   # the set-up another socket would see"
)]
pub struct DoctorArgs {}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Ok,
    Warning,
    Problem,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Level::Ok => "ok",
            Level::Warning => "warning",
            Level::Problem => "problem",
        })
    }
}

/// One finding: what was checked, what was found, and the fix when it is not ok.
struct Finding {
    level: Level,
    topic: String,
    what: String,
    fix: Option<String>,
}

#[derive(Default)]
struct Report(Vec<Finding>);

impl Report {
    fn ok(&mut self, topic: impl Into<String>, what: impl Into<String>) {
        self.push(Level::Ok, topic, what, None::<String>);
    }

    fn warn(&mut self, topic: impl Into<String>, what: impl Into<String>, fix: impl Into<String>) {
        self.push(Level::Warning, topic, what, Some(fix));
    }

    fn problem(
        &mut self,
        topic: impl Into<String>,
        what: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.push(Level::Problem, topic, what, Some(fix));
    }

    fn push(
        &mut self,
        level: Level,
        topic: impl Into<String>,
        what: impl Into<String>,
        fix: Option<impl Into<String>>,
    ) {
        self.0.push(Finding {
            level,
            topic: topic.into(),
            what: what.into(),
            fix: fix.map(Into::into),
        });
    }

    fn count(&self, level: Level) -> usize {
        self.0.iter().filter(|f| f.level == level).count()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for finding in &self.0 {
            writeln!(
                f,
                "{:<8} {}: {}",
                finding.level,
                finding.topic,
                one_line(&finding.what)
            )?;
            if let Some(fix) = &finding.fix {
                writeln!(f, "{:<8} fix: {}", "", one_line(fix))?;
            }
        }
        Ok(())
    }
}

/// Runs every check; `socket` is the broker's socket as resolved, `named` the `--socket` given.
pub async fn run(_args: DoctorArgs, socket: PathBuf, named: Option<&Path>) -> Result<()> {
    let mut report = Report::default();
    let status = broker(&mut report, &socket).await;
    session_bus(&mut report);
    for agent in Agent::ALL {
        client_checks(&mut report, agent, &socket, named);
    }
    rules(&mut report);
    history(&mut report, status.as_ref());
    out!("{report}")?;
    let (problems, warnings) = (report.count(Level::Problem), report.count(Level::Warning));
    outln!(
        "{problems} problem{}, {warnings} warning{}",
        plural(problems),
        plural(warnings)
    )?;
    if problems > 0 {
        return Err(Error::Problems(problems));
    }
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A broker on the socket, and which: the desktop app's (its answerer is registered) or `serve`'s.
async fn broker(report: &mut Report, socket: &Path) -> Option<StatusResult> {
    let asked = async {
        let client = connect(socket, "doctor").await?;
        Ok::<_, Error>(client.status().await?)
    };
    let start =
        "start the desktop app (askdesk-desktop, or from your launcher), or run `askdesk serve`";
    match tokio::time::timeout(HANDSHAKE_WAIT, asked).await {
        Ok(Ok(status)) => {
            let desktop = status
                .answerers
                .iter()
                .any(|a| a.label == askdesk_connect::DESKTOP_ANSWERER);
            let which = if desktop {
                "the desktop app"
            } else {
                "`askdesk serve` (no desktop answerer: nothing shows a dialog)"
            };
            report.ok(
                "broker",
                format!(
                    "{which} answers at {} (askdesk {})",
                    socket.display(),
                    status.server.version
                ),
            );
            Some(status)
        }
        Ok(Err(Error::NoBroker { .. })) => {
            report.problem(
                "broker",
                format!("no askdesk broker is running at {}", socket.display()),
                start,
            );
            None
        }
        Ok(Err(error)) => {
            report.problem(
                "broker",
                format!("the broker at {} failed: {error}", socket.display()),
                format!("stop whatever holds the socket, then {start}"),
            );
            None
        }
        Err(_) => {
            report.problem(
                "broker",
                format!(
                    "the broker at {} did not answer within {} s (stopped or hung)",
                    socket.display(),
                    HANDSHAKE_WAIT.as_secs()
                ),
                "resume it (`kill -CONT`) or end it, then start it again",
            );
            None
        }
    }
}

/// A session bus, and on it a notification server and a tray host (StatusNotifierWatcher).
fn session_bus(report: &mut Report) {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none_or(|a| a.is_empty()) {
        report.problem(
            "session bus",
            "DBUS_SESSION_BUS_ADDRESS is not set: the desktop app can raise no notification and show no tray icon",
            "run askdesk in your desktop session (a terminal of it has the variable), or start one with `dbus-run-session -- askdesk-desktop`",
        );
        return;
    }
    let checks = [
        (
            "notifications",
            "org.freedesktop.Notifications",
            "a notification server runs on the session bus",
            "no notification server on the session bus: questions open the window but raise no notification",
            "start your desktop's notification daemon (or `dunst`)",
        ),
        (
            "tray",
            "org.kde.StatusNotifierWatcher",
            "a tray host (StatusNotifierWatcher) runs on the session bus",
            "no tray host (StatusNotifierWatcher) on the session bus: the app's tray icon and waiting count do not show",
            "on GNOME enable the AppIndicator extension (gnome-shell-extension-appindicator); other desktops have a tray of their own",
        ),
    ];
    for (topic, name, there, missing, fix) in checks {
        match name_has_owner(name) {
            Ok(true) => report.ok(topic, there),
            Ok(false) => report.warn(topic, missing, fix),
            Err(why) => report.warn(
                topic,
                format!("cannot ask the session bus for {name}: {why}"),
                "install dbus-send (the dbus-bin package) so doctor can check",
            ),
        }
    }
}

/// Asks the bus whether `name` has an owner, with `dbus-send`.
fn name_has_owner(name: &str) -> std::result::Result<bool, String> {
    let output = Command::new("dbus-send")
        .args([
            "--session",
            "--print-reply=literal",
            "--reply-timeout=2000",
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner",
            &format!("string:{name}"),
        ])
        .output()
        .map_err(|e| format!("cannot run dbus-send: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_owned());
    }
    Ok(String::from_utf8_lossy(&output.stdout).contains("true"))
}

/// One client: present or not, its hook (with the socket its command will use) and its MCP entry.
fn client_checks(report: &mut Report, agent: Agent, socket: &Path, named: Option<&Path>) {
    let topic = agent.label();
    let dir = match client::config_dir(agent) {
        Ok(dir) => dir,
        Err(error) => return report.problem(topic, error.to_string(), "set HOME"),
    };
    if !dir.is_dir() {
        report.ok(topic, format!("not installed here (no {})", dir.display()));
        return;
    }
    let mut connected = false;
    if let Some(hook_client) = agent.hook() {
        let path = match hook::settings_path(hook_client, None) {
            Ok(path) => path,
            Err(error) => return report.problem(topic, error.to_string(), "set HOME"),
        };
        let install = format!(
            "`askdesk hook install {}`, or Connect in the desktop app",
            hook_client.slug()
        );
        match hook::installed_commands(&path, hook_client) {
            Err(error) => report.problem(
                topic,
                error.to_string(),
                format!("fix the file, then {install}"),
            ),
            Ok(commands) => {
                connected = !commands.is_empty();
                for command in &commands {
                    hook_command(report, agent, command, socket, named, &install);
                }
            }
        }
    }
    match mcp::configured(agent) {
        Err(error) => report.problem(topic, error.to_string(), "fix the file the message names"),
        Ok(Some(command)) => {
            connected = true;
            match program_problem(&command) {
                None => report.ok(topic, format!("askdesk is an MCP server: {command} mcp")),
                Some(why) => report.problem(
                    topic,
                    format!("askdesk's MCP entry runs {command}, which {why}"),
                    "add it again with the askdesk installed now (see docs/mcp.md), or Connect in the desktop app",
                ),
            }
        }
        Ok(None) => {}
    }
    if !connected {
        let fix = match agent.hook() {
            Some(hook_client) => format!(
                "`askdesk hook install {}`, or Connect in the desktop app",
                hook_client.slug()
            ),
            None => {
                "Connect in the desktop app, or add the MCP entry by hand (docs/mcp.md)".to_owned()
            }
        };
        report.warn(
            topic,
            format!("installed ({}) but not connected to askdesk", dir.display()),
            fix,
        );
    }
}

/// One installed hook command: the program it runs, and the socket it will ask at.
fn hook_command(
    report: &mut Report,
    agent: Agent,
    command: &str,
    socket: &Path,
    named: Option<&Path>,
    install: &str,
) {
    let topic = agent.label();
    let Some((program, hook_socket)) = hook::command_parts(command) else {
        return;
    };
    if let Some(why) = program_problem(&program) {
        return report.problem(
            topic,
            format!("the hook runs {program}, which {why}"),
            install.to_owned(),
        );
    }
    let here = socket.display().to_string();
    match (agent, hook_socket) {
        (_, Some(asks)) if asks == here => {
            report.ok(topic, format!("hook installed, asking at {asks}"))
        }
        (Agent::Codex, Some(asks)) => report.problem(
            topic,
            format!("the hook asks at {asks}, but the broker here is at {here}"),
            format!("{install}, then restart Codex: its background server keeps the environment of the first codex started"),
        ),
        (_, Some(asks)) => report.warn(
            topic,
            format!("the hook asks at {asks}, but the broker here is at {here}"),
            install.to_owned(),
        ),
        (Agent::Codex, None) => report.problem(
            topic,
            "the hook names no socket: it asks wherever the environment of the first codex started points",
            format!("{install} (it writes the socket into the command)"),
        ),
        (_, None) => {
            let how = if named.is_some() {
                "the environment Claude Code gives it, not --socket"
            } else {
                "Claude Code's environment (ASKDESK_SOCKET, else XDG_RUNTIME_DIR)"
            };
            report.ok(
                topic,
                format!("hook installed, asking at the socket of {how}: here {here}"),
            )
        }
    }
}

/// Why `program` cannot run, or `None`: a path must be an executable file; a bare name must be
/// on PATH.
fn program_problem(program: &str) -> Option<&'static str> {
    if program.contains('/') {
        return (!client::is_program(Path::new(program)))
            .then_some("is not there (or is not executable)");
    }
    let found = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| client::is_program(&dir.join(program)))
    });
    (!found).then_some("is not on PATH")
}

/// The rules file: whether it parses, how many rules, any that answers everything.
fn rules(report: &mut Report) {
    use askdesk_rules::file;
    let path = match file::default_path() {
        Ok(path) => path,
        Err(error) => {
            return report.problem("rules", error.to_string(), "set XDG_CONFIG_HOME or HOME")
        }
    };
    if !path.exists() {
        report.ok(
            "rules",
            format!(
                "no rules file ({}): nothing is answered by rule",
                path.display()
            ),
        );
        return;
    }
    match file::load(&path) {
        Err(error) => report.problem(
            "rules",
            error.to_string(),
            "fix the line it names (docs/rules.md); meanwhile a running broker keeps the last rules that loaded",
        ),
        Ok(rules) => {
            let n = rules.rules.len();
            report.ok("rules", format!("{} holds {n} rule{}", path.display(), plural(n)));
            for warning in rules.warnings() {
                report.warn("rules", warning, "add a `match` that names the agent, tool or project it is for");
            }
        }
    }
}

/// The journal: where, how large, writable, private; and what the broker says of it.
fn history(report: &mut Report, status: Option<&StatusResult>) {
    let dir = match askdesk_journal::default_dir() {
        Ok(dir) => dir,
        Err(error) => {
            return report.problem("history", error.to_string(), "set XDG_DATA_HOME or HOME")
        }
    };
    let file = dir.join(askdesk_journal::FILE_NAME);
    if let Some(history) = status.and_then(|s| s.history.as_ref()) {
        match history.state {
            HistoryState::Failing | HistoryState::Unavailable => report.problem(
                "history",
                format!(
                    "the broker cannot record answers: {}",
                    history.error.as_deref().unwrap_or("no reason given")
                ),
                "free disk space, or fix the journal's folder (answers are delivered meanwhile)",
            ),
            HistoryState::Off => report.warn(
                "history",
                "the broker runs with --no-history: answers are not recorded",
                "start it without --no-history",
            ),
            HistoryState::On => {}
        }
    }
    let dir_meta = match std::fs::metadata(&dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return report.ok(
                "history",
                format!("none yet; it will be kept in {}", file.display()),
            );
        }
        Err(e) => {
            return report.problem(
                "history",
                format!("cannot read {}: {e}", dir.display()),
                "fix the folder's permissions",
            );
        }
    };
    if !dir_meta.is_dir() {
        return report.problem(
            "history",
            format!("{} is not a folder: nothing can be recorded", dir.display()),
            format!("move {} away", dir.display()),
        );
    }
    let file_meta = std::fs::symlink_metadata(&file).ok();
    let mut loose = Vec::new();
    if dir_meta.permissions().mode() & 0o077 != 0 {
        loose.push(format!(
            "{} is {:o}",
            dir.display(),
            dir_meta.permissions().mode() & 0o777
        ));
    }
    if let Some(meta) = &file_meta {
        if meta.permissions().mode() & 0o077 != 0 {
            loose.push(format!(
                "{} is {:o}",
                file.display(),
                meta.permissions().mode() & 0o777
            ));
        }
    }
    let uid = effective_uid();
    let foreign = dir_meta.uid() != uid || file_meta.as_ref().is_some_and(|m| m.uid() != uid);
    let writable = access_w(&dir) && file_meta.as_ref().is_none_or(|_| access_w(&file));
    if !writable || foreign {
        report.problem(
            "history",
            format!(
                "{} is not writable by you{}",
                file.display(),
                if foreign {
                    " (another user owns it)"
                } else {
                    ""
                }
            ),
            format!(
                "give it back to you: chown -R $USER {}; chmod 700 {}",
                dir.display(),
                dir.display()
            ),
        );
    } else if !loose.is_empty() {
        report.problem(
            "history",
            format!(
                "not private: {}; others can read your answers",
                loose.join(", ")
            ),
            format!(
                "chmod 700 {} && chmod 600 {}/* (a broker tightens them when it opens the journal)",
                dir.display(),
                dir.display()
            ),
        );
    } else {
        let size = file_meta.map_or(0, |m| m.len());
        report.ok(
            "history",
            format!(
                "{} ({} KiB, private, writable)",
                file.display(),
                size.div_ceil(1024)
            ),
        );
    }
}

/// This process's user id.
fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether this process may write `path` (access(2)).
fn access_w(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: access(2) only reads the NUL-terminated path, which outlives the call.
    unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
}
