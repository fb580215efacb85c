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
use askdesk_i18n::t;
use clap::Args;
use unicode_width::UnicodeWidthStr;

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

impl Level {
    /// The level in words, at the start of a finding's line.
    fn word(self) -> String {
        match self {
            Level::Ok => t!("doctor-ok"),
            Level::Warning => t!("doctor-warning"),
            Level::Problem => t!("doctor-problem"),
        }
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
        // The levels in a column as wide as the widest of them, by display width (a Chinese
        // character takes two columns).
        let words = [Level::Ok, Level::Warning, Level::Problem].map(Level::word);
        let column = words.iter().map(|w| w.width()).max().unwrap_or(0).max(8);
        for finding in &self.0 {
            let word = finding.level.word();
            let pad = " ".repeat(column - word.width());
            let said = t!(
                "doctor-finding",
                topic = finding.topic.as_str(),
                what = one_line(&finding.what)
            );
            writeln!(f, "{word}{pad} {said}")?;
            if let Some(fix) = &finding.fix {
                let fix = t!("doctor-fix", fix = one_line(fix));
                writeln!(f, "{} {fix}", " ".repeat(column))?;
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
        "{}",
        t!("doctor-summary", problems = problems, warnings = warnings)
    )?;
    if problems > 0 {
        return Err(Error::Problems(problems));
    }
    Ok(())
}

/// A broker on the socket, and which: the desktop app's (its answerer is registered) or `serve`'s.
async fn broker(report: &mut Report, socket: &Path) -> Option<StatusResult> {
    let asked = async {
        let client = connect(socket, "doctor").await?;
        Ok::<_, Error>(client.status().await?)
    };
    let start = t!("doctor-start");
    let topic = t!("doctor-topic-broker");
    let at = socket.display().to_string();
    match tokio::time::timeout(HANDSHAKE_WAIT, asked).await {
        Ok(Ok(status)) => {
            let desktop = status
                .answerers
                .iter()
                .any(|a| a.label == askdesk_connect::DESKTOP_ANSWERER);
            let which = if desktop {
                t!("doctor-broker-desktop")
            } else {
                t!("doctor-broker-serve")
            };
            report.ok(
                topic,
                t!(
                    "doctor-broker-answers",
                    which = which,
                    socket = at,
                    version = status.server.version.as_str()
                ),
            );
            Some(status)
        }
        Ok(Err(Error::NoBroker { .. })) => {
            report.problem(topic, t!("doctor-broker-none", socket = at), start);
            None
        }
        Ok(Err(error)) => {
            report.problem(
                topic,
                t!(
                    "doctor-broker-failed",
                    socket = at,
                    error = error.to_string()
                ),
                t!("doctor-broker-failed-fix", start = start),
            );
            None
        }
        Err(_) => {
            report.problem(
                topic,
                t!(
                    "doctor-broker-silent",
                    socket = at,
                    seconds = HANDSHAKE_WAIT.as_secs()
                ),
                t!("doctor-broker-silent-fix"),
            );
            None
        }
    }
}

/// A session bus, and on it a notification server and a tray host (StatusNotifierWatcher).
fn session_bus(report: &mut Report) {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none_or(|a| a.is_empty()) {
        report.problem(
            t!("doctor-topic-session-bus"),
            t!("doctor-bus-unset"),
            t!("doctor-bus-unset-fix"),
        );
        return;
    }
    let checks = [
        (
            t!("doctor-topic-notifications"),
            "org.freedesktop.Notifications",
            t!("doctor-notifications-ok"),
            t!("doctor-notifications-missing"),
            t!("doctor-notifications-fix"),
        ),
        (
            t!("doctor-topic-tray"),
            "org.kde.StatusNotifierWatcher",
            t!("doctor-tray-ok"),
            t!("doctor-tray-missing"),
            t!("doctor-tray-fix"),
        ),
    ];
    for (topic, name, there, missing, fix) in checks {
        match name_has_owner(name) {
            Ok(true) => report.ok(topic, there),
            Ok(false) => report.warn(topic, missing, fix),
            Err(why) => report.warn(
                topic,
                t!("doctor-bus-unasked", name = name, reason = why),
                t!("doctor-bus-unasked-fix"),
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
        .map_err(|e| t!("doctor-no-dbus-send", error = e.to_string()))?;
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
        Err(error) => return report.problem(topic, error.to_string(), t!("doctor-set-home")),
    };
    if !dir.is_dir() {
        report.ok(
            topic,
            t!("doctor-client-absent", dir = dir.display().to_string()),
        );
        return;
    }
    let mut connected = false;
    if let Some(hook_client) = agent.hook() {
        let path = match hook::settings_path(hook_client, None) {
            Ok(path) => path,
            Err(error) => return report.problem(topic, error.to_string(), t!("doctor-set-home")),
        };
        let install = t!("doctor-hook-install", client = hook_client.slug());
        match hook::installed_commands(&path, hook_client) {
            Err(error) => report.problem(
                topic,
                error.to_string(),
                t!("doctor-fix-file-then", install = install.as_str()),
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
        Err(error) => report.problem(topic, error.to_string(), t!("doctor-fix-named-file")),
        Ok(Some(command)) => {
            connected = true;
            match program_problem(&command) {
                None => report.ok(topic, t!("doctor-mcp-ok", command = command.as_str())),
                Some(why) => report.problem(
                    topic,
                    t!("doctor-mcp-broken", command = command.as_str(), why = why),
                    t!("doctor-mcp-broken-fix"),
                ),
            }
        }
        Ok(None) => {}
    }
    if !connected {
        let fix = match agent.hook() {
            Some(hook_client) => t!("doctor-hook-install", client = hook_client.slug()),
            None => t!("doctor-connect-by-hand"),
        };
        report.warn(
            topic,
            t!("doctor-not-connected", dir = dir.display().to_string()),
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
            t!("doctor-hook-broken", program = program.as_str(), why = why),
            install.to_owned(),
        );
    }
    let here = socket.display().to_string();
    match (agent, hook_socket) {
        (_, Some(asks)) if asks == here => report.ok(topic, t!("doctor-hook-ok", socket = asks)),
        (Agent::Codex, Some(asks)) => report.problem(
            topic,
            t!("doctor-hook-elsewhere", asks = asks, here = here.as_str()),
            t!("doctor-hook-restart-codex", install = install),
        ),
        (_, Some(asks)) => report.warn(
            topic,
            t!("doctor-hook-elsewhere", asks = asks, here = here.as_str()),
            install.to_owned(),
        ),
        (Agent::Codex, None) => report.problem(
            topic,
            t!("doctor-hook-codex-unnamed"),
            t!("doctor-hook-codex-unnamed-fix", install = install),
        ),
        (_, None) => {
            let how = if named.is_some() {
                t!("doctor-hook-env-given")
            } else {
                t!("doctor-hook-env")
            };
            report.ok(
                topic,
                t!("doctor-hook-env-ok", how = how, here = here.as_str()),
            )
        }
    }
}

/// Why `program` cannot run, or `None`: a path must be an executable file; a bare name must be
/// on PATH.
fn program_problem(program: &str) -> Option<String> {
    if program.contains('/') {
        return (!client::is_program(Path::new(program))).then(|| t!("doctor-program-missing"));
    }
    let found = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| client::is_program(&dir.join(program)))
    });
    (!found).then(|| t!("doctor-program-off-path"))
}

/// The rules file: whether it parses, how many rules, any that answers everything.
fn rules(report: &mut Report) {
    use askdesk_rules::file;
    let topic = t!("doctor-topic-rules");
    let topic = topic.as_str();
    let path = match file::default_path() {
        Ok(path) => path,
        Err(error) => return report.problem(topic, error.to_string(), t!("doctor-rules-set-home")),
    };
    let shown = path.display().to_string();
    if !path.exists() {
        report.ok(topic, t!("doctor-rules-none", path = shown));
        return;
    }
    match file::load(&path) {
        Err(error) => report.problem(topic, error.to_string(), t!("doctor-rules-broken-fix")),
        Ok(rules) => {
            let count = rules.rules.len();
            report.ok(topic, t!("doctor-rules-count", path = shown, count = count));
            for warning in rules.warnings() {
                report.warn(topic, warning.said(), t!("doctor-rules-warning-fix"));
            }
        }
    }
}

/// The journal: where, how large, writable, private; and what the broker says of it.
fn history(report: &mut Report, status: Option<&StatusResult>) {
    let topic = t!("doctor-topic-history");
    let topic = topic.as_str();
    let dir = match askdesk_journal::default_dir() {
        Ok(dir) => dir,
        Err(error) => {
            return report.problem(topic, error.to_string(), t!("doctor-history-set-home"))
        }
    };
    let file = dir.join(askdesk_journal::FILE_NAME);
    let (dir_shown, file_shown) = (dir.display().to_string(), file.display().to_string());
    if let Some(history) = status.and_then(|s| s.history.as_ref()) {
        match history.state {
            HistoryState::Failing | HistoryState::Unavailable => report.problem(
                topic,
                t!(
                    "doctor-history-failing",
                    reason = history
                        .error
                        .clone()
                        .unwrap_or_else(|| t!("doctor-history-no-reason"))
                ),
                t!("doctor-history-failing-fix"),
            ),
            HistoryState::Off => report.warn(
                topic,
                t!("doctor-history-off"),
                t!("doctor-history-off-fix"),
            ),
            HistoryState::On => {}
        }
    }
    let dir_meta = match std::fs::metadata(&dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return report.ok(topic, t!("doctor-history-none", path = file_shown));
        }
        Err(e) => {
            return report.problem(
                topic,
                t!(
                    "doctor-history-unreadable",
                    path = dir_shown,
                    error = e.to_string()
                ),
                t!("doctor-history-unreadable-fix"),
            );
        }
    };
    if !dir_meta.is_dir() {
        return report.problem(
            topic,
            t!("doctor-history-not-folder", path = dir_shown.as_str()),
            t!("doctor-history-move", path = dir_shown),
        );
    }
    let file_meta = std::fs::symlink_metadata(&file).ok();
    let mut loose = Vec::new();
    let mode = |path: &str, meta: &std::fs::Metadata| {
        let mode = format!("{:o}", meta.permissions().mode() & 0o777);
        t!("doctor-history-mode", path = path, mode = mode)
    };
    if dir_meta.permissions().mode() & 0o077 != 0 {
        loose.push(mode(&dir_shown, &dir_meta));
    }
    if let Some(meta) = &file_meta {
        if meta.permissions().mode() & 0o077 != 0 {
            loose.push(mode(&file_shown, meta));
        }
    }
    let uid = effective_uid();
    let foreign = dir_meta.uid() != uid || file_meta.as_ref().is_some_and(|m| m.uid() != uid);
    let writable = access_w(&dir) && file_meta.as_ref().is_none_or(|_| access_w(&file));
    if !writable || foreign {
        let what = if foreign {
            t!("doctor-history-foreign", path = file_shown)
        } else {
            t!("doctor-history-not-writable", path = file_shown)
        };
        report.problem(topic, what, t!("doctor-history-chown", dir = dir_shown));
    } else if !loose.is_empty() {
        report.problem(
            topic,
            t!("doctor-history-loose", loose = loose.join(", ")),
            t!("doctor-history-chmod", dir = dir_shown),
        );
    } else {
        let size = file_meta.map_or(0, |m| m.len());
        report.ok(
            topic,
            t!(
                "doctor-history-ok",
                path = file_shown,
                kib = size.div_ceil(1024)
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
