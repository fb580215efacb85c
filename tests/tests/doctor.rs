//! `askdesk doctor` against a real `askdesk serve` in a private home (its own `HOME`, XDG folders,
//! socket and session bus): a healthy set-up exits 0, and each problem it names is reported with
//! its fix and exits 1.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use askdesk_e2e::{run_with_timeout, Broker, Home, PATIENCE};

/// A private session bus (`dbus-daemon`), ended when dropped.
struct Bus {
    daemon: Child,
    address: String,
}

impl Bus {
    fn start() -> Bus {
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dbus-daemon (the dbus-daemon package; scripts/test.sh installs it)");
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(daemon.stdout.as_mut().expect("piped")),
            &mut line,
        )
        .expect("read the bus address");
        assert!(!line.trim().is_empty(), "dbus-daemon printed no address");
        Bus {
            daemon,
            address: line.trim().to_owned(),
        }
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// `askdesk doctor` in the broker's home, on `bus` (or with no session bus at all).
fn doctor(broker: &Broker, bus: Option<&Bus>) -> (String, i32) {
    doctor_in(broker.home(), bus)
}

fn doctor_in(home: &Home, bus: Option<&Bus>) -> (String, i32) {
    let mut cmd = home.command(["doctor"]);
    match bus {
        Some(bus) => cmd.env("DBUS_SESSION_BUS_ADDRESS", &bus.address),
        None => cmd.env_remove("DBUS_SESSION_BUS_ADDRESS"),
    };
    let Output { status, stdout, .. } = run_with_timeout(&mut cmd, PATIENCE * 3);
    (
        String::from_utf8(stdout).expect("UTF-8 output"),
        status.code().expect("an exit status"),
    )
}

/// The line of `level` about `topic` that contains `text`, and the fix after it.
fn finding<'a>(out: &'a str, level: &str, topic: &str, text: &str) -> (&'a str, Option<&'a str>) {
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|line| {
            line.split_whitespace().next() == Some(level)
                && line.contains(&format!(" {topic}: "))
                && line.contains(text)
        })
        .unwrap_or_else(|| panic!("no `{level} {topic}: …{text}…` line in:\n{out}"));
    let fix = lines
        .get(at + 1)
        .and_then(|line| line.trim_start().strip_prefix("fix: "));
    (lines[at], fix)
}

/// Claude Code and Codex present and connected to the broker, as `askdesk hook install` does.
fn connect_clients(broker: &Broker) {
    let home = broker.home().path();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    for client in ["claude-code", "codex"] {
        let out = run_with_timeout(&mut broker.cli(["hook", "install", client]), PATIENCE);
        assert!(out.status.success(), "{out:?}");
    }
}

fn healthy() -> Broker {
    let broker = Broker::start_in(Home::user(), &[]);
    connect_clients(&broker);
    let rules = broker.home().path().join("config/askdesk/rules.toml");
    std::fs::create_dir_all(rules.parent().unwrap()).unwrap();
    std::fs::write(
        &rules,
        "[[rule]]\nname = \"tests\"\nmatch = { tool = \"Bash\", command = \"cargo test*\" }\nanswer = \"Allow once\"\n",
    )
    .unwrap();
    broker
}

#[test]
fn a_healthy_setup_exits_0_and_says_what_it_checked() {
    let broker = healthy();
    let bus = Bus::start();
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 0, "{out}");
    let socket = broker.socket().display().to_string();
    finding(&out, "ok", "broker", "`askdesk serve`");
    finding(&out, "ok", "broker", &socket);
    finding(&out, "ok", "Claude Code", &format!("here {socket}"));
    finding(
        &out,
        "ok",
        "Codex",
        &format!("hook installed, asking at {socket}"),
    );
    finding(&out, "ok", "Gemini CLI", "not installed here");
    finding(&out, "ok", "rules", "holds 1 rule");
    finding(&out, "ok", "history", "private, writable");
    // A bare bus has no notification server or tray host: warnings, with their fixes.
    let (_, fix) = finding(&out, "warning", "notifications", "no notification server");
    assert!(fix.is_some_and(|f| f.contains("dunst")), "{out}");
    finding(&out, "warning", "tray", "StatusNotifierWatcher");
    assert!(out.trim_end().ends_with("0 problems, 2 warnings"), "{out}");
}

#[test]
fn no_session_bus_is_a_problem_with_its_fix() {
    let broker = healthy();
    let (out, status) = doctor(&broker, None);
    assert_eq!(status, 1, "{out}");
    let (_, fix) = finding(
        &out,
        "problem",
        "session bus",
        "DBUS_SESSION_BUS_ADDRESS is not set",
    );
    assert!(fix.is_some_and(|f| f.contains("dbus-run-session")), "{out}");
    assert!(out.trim_end().ends_with("1 problem, 0 warnings"), "{out}");
}

#[test]
fn no_broker_is_a_problem() {
    let home = Home::user();
    let bus = Bus::start();
    let (out, status) = doctor_in(&home, Some(&bus));
    assert_eq!(status, 1, "{out}");
    let (_, fix) = finding(&out, "problem", "broker", "no askdesk broker is running");
    assert!(fix.is_some_and(|f| f.contains("askdesk serve")), "{out}");
}

#[test]
fn a_codex_hook_asking_at_another_socket_is_a_problem() {
    let broker = healthy();
    let bus = Bus::start();
    // Installed while another broker's socket was in the environment.
    let out = run_with_timeout(
        broker
            .cli(["hook", "install", "codex"])
            .env("ASKDESK_SOCKET", "/tmp/elsewhere/askdesk.sock"),
        PATIENCE,
    );
    assert!(out.status.success(), "{out:?}");
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 1, "{out}");
    let (_, fix) = finding(
        &out,
        "problem",
        "Codex",
        "asks at /tmp/elsewhere/askdesk.sock",
    );
    assert!(fix.is_some_and(|f| f.contains("restart Codex")), "{out}");
}

#[test]
fn a_hook_whose_program_is_gone_is_a_problem() {
    let broker = healthy();
    let bus = Bus::start();
    let settings = broker.home().path().join(".claude/settings.json");
    let text = std::fs::read_to_string(&settings).unwrap();
    let program = askdesk_e2e::askdesk_bin().display().to_string();
    std::fs::write(&settings, text.replace(&program, "/gone/askdesk")).unwrap();
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 1, "{out}");
    let (_, fix) = finding(
        &out,
        "problem",
        "Claude Code",
        "runs /gone/askdesk, which is not there",
    );
    assert!(
        fix.is_some_and(|f| f.contains("askdesk hook install claude-code")),
        "{out}"
    );
}

#[test]
fn a_client_present_but_not_connected_is_a_warning() {
    let broker = healthy();
    let bus = Bus::start();
    std::fs::create_dir_all(broker.home().path().join(".gemini")).unwrap();
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 0, "{out}");
    let (_, fix) = finding(&out, "warning", "Gemini CLI", "not connected to askdesk");
    assert!(fix.is_some_and(|f| f.contains("Connect")), "{out}");
}

#[test]
fn an_mcp_entry_whose_program_is_gone_is_a_problem() {
    let broker = healthy();
    let bus = Bus::start();
    let gemini = broker.home().path().join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    std::fs::write(
        gemini.join("settings.json"),
        r#"{"mcpServers": {"askdesk": {"command": "/gone/askdesk", "args": ["mcp"]}}}"#,
    )
    .unwrap();
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 1, "{out}");
    finding(
        &out,
        "problem",
        "Gemini CLI",
        "MCP entry runs /gone/askdesk",
    );
}

#[test]
fn a_settings_file_that_is_not_json_is_a_problem() {
    let broker = healthy();
    let bus = Bus::start();
    std::fs::write(broker.home().path().join(".claude/settings.json"), "{ nope").unwrap();
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 1, "{out}");
    finding(&out, "problem", "Claude Code", "is not valid JSON");
}

fn rules_file(broker: &Broker) -> PathBuf {
    broker.home().path().join("config/askdesk/rules.toml")
}

#[test]
fn a_broken_rules_file_is_a_problem_naming_the_line() {
    let broker = healthy();
    let bus = Bus::start();
    std::fs::write(rules_file(&broker), "[[rule]]\nname = \"x\"\nanswer = \n").unwrap();
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 1, "{out}");
    let (line, _) = finding(&out, "problem", "rules", "rules.toml");
    assert!(line.contains("line 3"), "{out}");
}

#[test]
fn a_rule_that_matches_everything_is_a_warning() {
    let broker = healthy();
    let bus = Bus::start();
    std::fs::write(
        rules_file(&broker),
        "[[rule]]\nname = \"all\"\nanswer = { recommended = true }\n",
    )
    .unwrap();
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 0, "{out}");
    finding(&out, "ok", "rules", "holds 1 rule");
    finding(
        &out,
        "warning",
        "rules",
        "rule \"all\" (line 1) answers with an empty match",
    );
}

fn journal_dir(broker: &Broker) -> PathBuf {
    broker.home().data_home().join("askdesk")
}

/// One ask with nobody to answer it: it settles `NO_PROVIDER` and is journaled, so the journal
/// exists.
fn write_history(broker: &Broker) {
    let out = run_with_timeout(
        &mut broker.cli(["ask", "Anyone?", "-o", "Yes", "-o", "No"]),
        PATIENCE,
    );
    assert_eq!(out.status.code(), Some(15), "NO_PROVIDER expected: {out:?}");
    assert!(journal_dir(broker).join("history.jsonl").exists());
}

#[test]
fn a_journal_others_can_read_is_a_problem() {
    let broker = healthy();
    let bus = Bus::start();
    write_history(&broker);
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 0, "{out}");
    finding(&out, "ok", "history", "private, writable");
    let file = journal_dir(&broker).join("history.jsonl");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 1, "{out}");
    let (_, fix) = finding(&out, "problem", "history", "not private");
    assert!(fix.is_some_and(|f| f.contains("chmod 600")), "{out}");
}

#[test]
fn a_file_where_the_journal_folder_should_be_is_a_problem() {
    let home = Home::user();
    std::fs::create_dir_all(home.data_home()).unwrap();
    std::fs::write(home.data_home().join("askdesk"), "").unwrap();
    let broker = Broker::start_in(home, &[]);
    let bus = Bus::start();
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 1, "{out}");
    // The broker says it cannot record, and so does the folder check.
    finding(
        &out,
        "problem",
        "history",
        "the broker cannot record answers",
    );
    finding(&out, "problem", "history", "is not a folder");
}

#[test]
fn a_broker_that_does_not_answer_is_a_problem() {
    let broker = healthy();
    let bus = Bus::start();
    broker.signal(libc::SIGSTOP);
    let (out, status) = doctor(&broker, Some(&bus));
    broker.signal(libc::SIGCONT);
    assert_eq!(status, 1, "{out}");
    let (_, fix) = finding(&out, "problem", "broker", "did not answer within");
    assert!(fix.is_some_and(|f| f.contains("kill -CONT")), "{out}");
}

#[test]
fn a_broker_without_history_is_a_warning() {
    let broker = Broker::start_in(Home::user(), &["--no-history"]);
    connect_clients(&broker);
    let bus = Bus::start();
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 0, "{out}");
    finding(&out, "warning", "history", "--no-history");
}

#[test]
fn a_codex_hook_that_names_no_socket_is_a_problem() {
    let broker = healthy();
    let bus = Bus::start();
    let hooks = broker.home().path().join(".codex/hooks.json");
    let text = std::fs::read_to_string(&hooks).unwrap();
    let socket = format!(" --socket {}", broker.socket().display());
    assert!(text.contains(&socket), "{text}");
    std::fs::write(&hooks, text.replace(&socket, "")).unwrap();
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 1, "{out}");
    let (_, fix) = finding(&out, "problem", "Codex", "names no socket");
    assert!(
        fix.is_some_and(|f| f.contains("askdesk hook install codex")),
        "{out}"
    );
}

#[test]
fn a_claude_code_hook_naming_another_socket_is_a_warning() {
    let broker = healthy();
    let bus = Bus::start();
    let out = run_with_timeout(
        &mut broker.cli([
            "--socket",
            "/tmp/elsewhere/askdesk.sock",
            "hook",
            "install",
            "claude-code",
        ]),
        PATIENCE,
    );
    assert!(out.status.success(), "{out:?}");
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 0, "{out}");
    finding(
        &out,
        "warning",
        "Claude Code",
        "asks at /tmp/elsewhere/askdesk.sock",
    );
}

#[test]
fn a_journal_this_user_cannot_write_is_a_problem() {
    let broker = healthy();
    let bus = Bus::start();
    write_history(&broker);
    let file = journal_dir(&broker).join("history.jsonl");
    // As root every file is writable: the journal is then given to another user instead.
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
    } else {
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o400)).unwrap();
    }
    let (out, status) = doctor(&broker, Some(&bus));
    assert_eq!(status, 1, "{out}");
    let (_, fix) = finding(&out, "problem", "history", "is not writable by you");
    assert!(fix.is_some_and(|f| f.contains("chown")), "{out}");
}

/// `ASKDESK_LANG=zh-CN` gives every finding, its fix and the count in Chinese; the paths and
/// commands it names stay as they are.
#[test]
fn doctor_speaks_chinese_when_askdesk_lang_says_so() {
    let home = Home::user();
    let mut cmd = home.command(["doctor"]);
    cmd.env("ASKDESK_LANG", "zh-CN")
        .env_remove("DBUS_SESSION_BUS_ADDRESS");
    let Output { status, stdout, .. } = run_with_timeout(&mut cmd, PATIENCE * 3);
    let out = String::from_utf8(stdout).expect("UTF-8 output");
    assert_eq!(status.code(), Some(1), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    let broker = lines
        .iter()
        .position(|l| {
            l.starts_with("问题") && l.contains("中转服务：") && l.contains("没有运行中的")
        })
        .unwrap_or_else(|| panic!("no Chinese broker problem in:\n{out}"));
    assert!(
        lines[broker + 1].trim_start().starts_with("修复：")
            && lines[broker + 1].contains("`askdesk serve`"),
        "{out}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("问题")
            && l.contains("会话总线：")
            && l.contains("DBUS_SESSION_BUS_ADDRESS")),
        "{out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("正常") && l.contains("历史：")),
        "{out}"
    );
    assert_eq!(lines.last(), Some(&"2 个问题，0 个警告"), "{out}");
    for english in ["problem", "ok ", "fix:", "not installed", "warning"] {
        assert!(
            !out.contains(english),
            "{english:?} left in English:\n{out}"
        );
    }
}
