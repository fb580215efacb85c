//! `askdesk hook claude-code|codex` end to end: each fixture of `tests/hooks/` is fed to the real
//! hook binary against a real `askdesk serve`, a scripted socket answerer plays the human, and the
//! hook's exact stdout, stderr and exit status are checked; then `askdesk hook install|uninstall`
//! on a temporary HOME.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use askdesk_e2e::{Broker, Conn, Home, PATIENCE};
use serde_json::{json, Value};

/// How long a hook may take to print its decision once answered.
const HOOK_LIMIT: Duration = Duration::from_secs(30);

/// A recorded hook input, `tests/hooks/<name>.json`.
fn fixture(name: &str) -> String {
    read_fixture(&format!("{name}.json"))
}

/// A file of `tests/hooks/`.
fn read_fixture(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/hooks")
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The hook as the client runs it: the input on stdin (then closed), and no display, so it never
/// starts the desktop app.
fn spawn_hook(broker: &Broker, client: &str, input: &str, extra: &[&str]) -> Child {
    let mut cmd = broker.cli(["hook", client].iter().chain(extra));
    cmd.env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn askdesk hook");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    stdin
        .write_all(input.as_bytes())
        .expect("write the hook input");
    drop(stdin);
    child
}

/// Waits for the hook to exit and collects what it printed; kills it and fails after the limit.
async fn finish(child: Child) -> Output {
    let pid = child.id() as libc::pid_t;
    let waited = tokio::task::spawn_blocking(move || child.wait_with_output());
    match tokio::time::timeout(HOOK_LIMIT, waited).await {
        Ok(output) => output.unwrap().expect("collect the hook's output"),
        Err(_) => {
            // SAFETY: kill(2) on the pid of a child we spawned and have not reaped yet.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("askdesk hook did not finish within {HOOK_LIMIT:?}");
        }
    }
}

async fn answerer(broker: &Broker) -> Conn {
    let conn = broker.conn().await;
    conn.register_answerer(json!("all"), false, "script").await;
    conn
}

/// Runs one prompt: the hook asks, the answerer receives the request and replies `answer(request)`;
/// returns the request's params and the hook's output.
async fn prompt(client: &str, name: &str, answer: impl FnOnce(&Value) -> Value) -> (Value, Output) {
    let broker = Broker::start();
    let script = answerer(&broker).await;
    let hook = spawn_hook(&broker, client, &fixture(name), &[]);
    let request = script.next_request().await;
    script.reply(&request, answer(&request["params"])).await;
    (request["params"].clone(), finish(hook).await)
}

/// An answer item for the batch's only question.
fn one(params: &Value, selected: &[&str], custom: Option<&str>) -> Value {
    let mut item = json!({ "id": params["questions"][0]["id"], "selected": selected });
    if let Some(custom) = custom {
        item["custom"] = json!(custom);
    }
    json!({ "answers": [item] })
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The hook printed exactly this decision, said nothing on stderr and exited 0.
fn assert_decision(output: &Output, decision: &str) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        text(&output.stderr)
    );
    assert_eq!(
        text(&output.stdout),
        format!(
            "{{\"hookSpecificOutput\":{{\"hookEventName\":\"PermissionRequest\",\"decision\":{decision}}}}}\n"
        )
    );
    assert_eq!(text(&output.stderr), "");
}

/// The hook printed nothing, exited 0, and said why in one stderr line containing `reason`.
fn assert_fell_open(output: &Output, reason: &str) {
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(text(&output.stdout), "", "a fail-open hook prints nothing");
    let stderr = text(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "one stderr line: {stderr}");
    assert!(
        stderr.starts_with("askdesk hook: ") && stderr.contains(reason),
        "stderr lacks {reason:?}: {stderr}"
    );
}

const PLAN_INPUT: &str = r##"{"plan":"# Add a cart export\n\n1. Add `export_csv()` to `cart.rs`\n2. Wire it to the **Export** button\n3. Test both paths"}"##;

#[tokio::test(flavor = "multi_thread")]
async fn plan_approval_echoes_the_input() {
    let (params, output) = prompt("claude-code", "claude-plan", |p| {
        one(p, &["Approve, ask before edits"], None)
    })
    .await;
    let question = &params["questions"][0];
    assert_eq!(
        question["intent"],
        json!({ "kind": "plan-review", "approve": "Approve, ask before edits" })
    );
    assert_eq!(
        question["detail"],
        "# Add a cart export\n\n1. Add `export_csv()` to `cart.rs`\n2. Wire it to the **Export** button\n3. Test both paths"
    );
    let labels: Vec<&str> = question["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "Approve, ask before edits",
            "Approve, accept edits",
            "Keep planning"
        ]
    );
    let agent = &params["agent"];
    assert_eq!(agent["id"], "claude-code-3f2a9c1e-plan");
    assert_eq!(agent["label"], "Claude Code");
    assert_eq!(
        agent["meta"],
        json!({ "cwd": "/home/dev/shop", "tool": "ExitPlanMode",
                "transcript": "/home/dev/.claude/projects/shop/3f2a9c1e-plan.jsonl",
                "session": "3f2a9c1e-plan", "permissionMode": "plan",
                "client": "claude-code", "via": "hook" })
    );
    assert_decision(
        &output,
        &format!(r#"{{"behavior":"allow","updatedInput":{PLAN_INPUT}}}"#),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_approval_with_accept_edits_sets_the_mode() {
    let (_, output) = prompt("claude-code", "claude-plan", |p| {
        one(p, &["Approve, accept edits"], None)
    })
    .await;
    assert_decision(
        &output,
        &format!(
            r#"{{"behavior":"allow","updatedInput":{PLAN_INPUT},"updatedPermissions":[{{"destination":"session","mode":"acceptEdits","type":"setMode"}}]}}"#
        ),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_feedback_denies_with_the_feedback() {
    let (_, output) = prompt("claude-code", "claude-plan", |p| {
        one(
            p,
            &[],
            Some("Export JSON too, and keep the button hidden behind a flag."),
        )
    })
    .await;
    assert_decision(
        &output,
        r#"{"behavior":"deny","message":"Export JSON too, and keep the button hidden behind a flag."}"#,
    );
}

/// A 1×1 GIF, as an answerer sends a picture the person gave; the broker re-encodes it as a PNG.
const GIF_1X1: &str = "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==";

/// The plan prompt of `claude-plan`, asked from `project`.
fn plan_prompt_in(project: &Path) -> String {
    let mut input: Value = serde_json::from_str(&fixture("claude-plan")).unwrap();
    input["cwd"] = json!(project);
    input.to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_feedback_with_a_picture_saves_it_under_the_project_and_names_it() {
    use std::os::unix::fs::PermissionsExt;
    let project = tempfile::tempdir().unwrap();
    let broker = Broker::start();
    let script = answerer(&broker).await;
    let hook = spawn_hook(&broker, "claude-code", &plan_prompt_in(project.path()), &[]);
    let request = script.next_request().await;
    let mut answer = one(&request["params"], &[], Some("Put the button here."));
    answer["answers"][0]["images"] = json!([{ "mime": "image/gif", "data": GIF_1X1 }]);
    script.reply(&request, answer).await;
    let output = finish(hook).await;
    let folder = project.path().join(".askdesk/attachments");
    let saved: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let file = &saved[0];
    assert!(std::fs::read(file)
        .unwrap()
        .starts_with(b"\x89PNG\r\n\x1a\n"));
    assert_eq!(
        std::fs::metadata(file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(&folder).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let message = format!(
        "Put the button here.\n\n[The user attached a picture: {}]",
        file.display()
    );
    assert_decision(
        &output,
        &json!({ "behavior": "deny", "message": message }).to_string(),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_picture_is_never_saved_through_a_link_out_of_the_project() {
    let project = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), project.path().join(".askdesk")).unwrap();
    let broker = Broker::start();
    let script = answerer(&broker).await;
    let hook = spawn_hook(&broker, "claude-code", &plan_prompt_in(project.path()), &[]);
    let request = script.next_request().await;
    let mut answer = one(&request["params"], &[], Some("Like this."));
    answer["answers"][0]["images"] = json!([{ "data": GIF_1X1 }]);
    script.reply(&request, answer).await;
    let output = finish(hook).await;
    assert_fell_open(&output, "the answer's picture cannot be saved");
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

/// Claude Code 2.1.328 passes `{plan, planFilePath}` when the model wrote its plan file, and `{}`
/// for a plan given only inline (recorded inputs). Without `plan`, the file is shown; the decision
/// echoes the input as given either way.
#[tokio::test(flavor = "multi_thread")]
async fn plans_from_claude_codes_plan_file() {
    let broker = Broker::start();
    let script = answerer(&broker).await;
    let recorded: Value = serde_json::from_str(&fixture("claude-2.1.328-plan-file")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plan-an-export-magical-otter.md");
    std::fs::write(&file, "# From the plan file\n\n1. Export\n").unwrap();
    let mut file_only = recorded.clone();
    file_only["tool_input"] = json!({ "planFilePath": file });
    for (input, shown) in [
        (
            &recorded,
            "# Add a cart export\n\n1. Add export_csv()\n2. Test it\n",
        ),
        (&file_only, "# From the plan file\n\n1. Export\n"),
    ] {
        let hook = spawn_hook(&broker, "claude-code", &input.to_string(), &[]);
        let request = script.next_request().await;
        assert_eq!(request["params"]["questions"][0]["detail"], shown);
        script
            .reply(
                &request,
                one(&request["params"], &["Approve, ask before edits"], None),
            )
            .await;
        assert_decision(
            &finish(hook).await,
            &format!(
                r#"{{"behavior":"allow","updatedInput":{}}}"#,
                input["tool_input"]
            ),
        );
    }
    let hook = spawn_hook(
        &broker,
        "claude-code",
        &fixture("claude-2.1.328-plan-inline"),
        &[],
    );
    assert_fell_open(
        &finish(hook).await,
        "ExitPlanMode input has no tool_input.plan and no tool_input.planFilePath",
    );
    let mut too_big = file_only.clone();
    std::fs::write(&file, "p".repeat(256 * 1024 + 1)).unwrap();
    too_big["tool_input"]["planFilePath"] = json!(file);
    let hook = spawn_hook(&broker, "claude-code", &too_big.to_string(), &[]);
    assert_fell_open(
        &finish(hook).await,
        "is more than askdesk shows in one question",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ask_user_question_answers_by_question_text() {
    let (params, output) = prompt("claude-code", "claude-questions", |p| {
        let ids: Vec<&Value> = p["questions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| &q["id"])
            .collect();
        json!({ "answers": [
            { "id": ids[0], "selected": [], "custom": "DuckDB, in memory" },
            { "id": ids[1], "selected": ["CSV", "Parquet"] }
        ]})
    })
    .await;
    assert_eq!(
        params["questions"],
        json!([
            { "id": "q1", "question": "Which storage should the export use?", "header": "Storage",
              "detail": "**SQLite**\n\n```sql\nCREATE TABLE cart (id INTEGER PRIMARY KEY);\n```",
              "options": [{ "label": "SQLite", "description": "One file next to the app" },
                          { "label": "Postgres", "description": "The shared server" }] },
            { "id": "q2", "question": "Which formats should it write?", "header": "Formats",
              "options": [{ "label": "CSV" }, { "label": "JSON" }, { "label": "Parquet" }],
              "multiSelect": true }
        ])
    );
    let input = fixture("claude-questions");
    let tool_input =
        &input[input.find(r#""tool_input":"#).unwrap() + 13..input.trim_end().len() - 1];
    let updated = format!(
        r#"{},"answers":{{"Which storage should the export use?":"DuckDB, in memory","Which formats should it write?":"CSV, Parquet"}}}}"#,
        &tool_input[..tool_input.len() - 1]
    );
    assert_decision(
        &output,
        &format!(r#"{{"behavior":"allow","updatedInput":{updated}}}"#),
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bash_is_allowed_once_for_the_session_or_denied() {
    let (params, output) = prompt("claude-code", "claude-bash", |p| {
        one(p, &["Allow once"], None)
    })
    .await;
    let question = &params["questions"][0];
    assert_eq!(question["question"], "Allow Bash?");
    assert_eq!(
        question["detail"],
        "The agent says:\n\n> Run the test suite\n\n```sh\ncargo test --workspace\n```"
    );
    assert_eq!(
        question["options"],
        json!([
            { "label": "Allow once", "description": "Let it run this time; ask again next time" },
            { "label": "Always allow in this session", "description": "Allow Bash(cargo test:*) until this session ends" },
            { "label": "Deny", "description": "Do not run it; type feedback instead to tell the agent why" }
        ])
    );
    assert_decision(&output, r#"{"behavior":"allow"}"#);

    let (_, output) = prompt("claude-code", "claude-bash", |p| {
        one(p, &["Always allow in this session"], None)
    })
    .await;
    assert_decision(
        &output,
        r#"{"behavior":"allow","updatedPermissions":[{"behavior":"allow","destination":"session","rules":[{"ruleContent":"cargo test:*","toolName":"Bash"}],"type":"addRules"}]}"#,
    );

    let (_, output) = prompt("claude-code", "claude-bash", |p| {
        one(p, &[], Some("Run only the cart tests"))
    })
    .await;
    assert_decision(
        &output,
        r#"{"behavior":"deny","message":"Run only the cart tests"}"#,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn edit_shows_a_unified_diff() {
    let (params, output) = prompt("claude-code", "claude-edit", |p| one(p, &["Deny"], None)).await;
    assert_eq!(params["questions"][0]["question"], "Allow Edit?");
    assert_eq!(
        params["questions"][0]["detail"],
        "Edit `/home/dev/shop/src/cart.rs`\n\n```diff\n--- /home/dev/shop/src/cart.rs\n+++ /home/dev/shop/src/cart.rs\n@@ -1,3 +1,7 @@\n pub fn total(&self) -> u64 {\n-    self.items.iter().map(|i| i.price).sum()\n+    self.items.iter().map(|i| i.price * i.quantity).sum()\n }\n+\n+pub fn export_csv(&self) -> String {\n+    String::new()\n+}\n```"
    );
    assert_eq!(
        params["questions"][0]["options"][1]["description"],
        "Allow acceptEdits mode until this session ends"
    );
    assert_decision(
        &output,
        r#"{"behavior":"deny","message":"The user denied this Edit call."}"#,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_tools_show_server_tool_and_arguments() {
    let (params, output) = prompt("claude-code", "claude-mcp", |p| {
        one(p, &["Allow once"], None)
    })
    .await;
    let question = &params["questions"][0];
    assert_eq!(
        question["question"],
        "Allow the MCP tool create_issue of github?"
    );
    assert_eq!(question["header"], "MCP: github");
    assert_eq!(
        question["detail"],
        "Call `create_issue` on the MCP server `github` with:\n\n```json\n{\n  \"labels\": [\n    \"bug\"\n  ],\n  \"repo\": \"dev/shop\",\n  \"title\": \"Export fails on empty carts\"\n}\n```"
    );
    // No suggestions in the input: no "always".
    assert_eq!(question["options"].as_array().unwrap().len(), 2);
    assert_decision(&output, r#"{"behavior":"allow"}"#);
}

/// askdesk's own question tools, called through its MCP server as the user added it, are
/// allowed without a question (the tool asks the person itself); a server of the same name from
/// a repository's `.mcp.json`, a look-alike, or a server not reported is asked as any tool.
#[tokio::test(flavor = "multi_thread")]
async fn askdesks_own_question_tools_are_not_asked_twice() {
    let broker = Broker::start();
    let recorded: Value = serde_json::from_str(&fixture("claude-2.1.328-askdesk-mcp")).unwrap();
    // Decided before any broker is asked: no answerer is registered.
    let hook = spawn_hook(&broker, "claude-code", &recorded.to_string(), &[]);
    assert_decision(&finish(hook).await, r#"{"behavior":"allow"}"#);
    let mut named = recorded.clone();
    named["tool_name"] = json!("mcp__desk__review_plan");
    named["mcp_server"]["name"] = json!("desk");
    let hook = spawn_hook(
        &broker,
        "claude-code",
        &named.to_string(),
        &["--mcp-server", "desk"],
    );
    assert_decision(&finish(hook).await, r#"{"behavior":"allow"}"#);

    let script = answerer(&broker).await;
    let mut from_repository = recorded.clone();
    from_repository["mcp_server"]["source"] = json!("project");
    let mut look_alike = recorded.clone();
    look_alike["tool_name"] = json!("mcp__askdesk2__review_plan");
    look_alike["mcp_server"]["name"] = json!("askdesk2");
    let mut unreported = recorded.clone();
    unreported.as_object_mut().unwrap().remove("mcp_server");
    for (input, server) in [
        (from_repository, "askdesk"),
        (look_alike, "askdesk2"),
        (unreported, "askdesk"),
        (named, "desk"),
    ] {
        let hook = spawn_hook(&broker, "claude-code", &input.to_string(), &[]);
        let request = script.next_request().await;
        assert_eq!(
            request["params"]["questions"][0]["question"],
            format!("Allow the MCP tool review_plan of {server}?")
        );
        script
            .reply(&request, one(&request["params"], &["Deny"], None))
            .await;
        assert_decision(
            &finish(hook).await,
            &format!(
                r#"{{"behavior":"deny","message":"The user denied this {} call."}}"#,
                input["tool_name"].as_str().unwrap()
            ),
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_shell_and_network_prompts() {
    let (params, output) = prompt("codex", "codex-shell", |p| one(p, &["Allow once"], None)).await;
    assert_eq!(params["agent"]["id"], "codex-0199a5c2-shell");
    assert_eq!(params["agent"]["label"], "Codex");
    assert_eq!(params["agent"]["meta"]["model"], "gpt-5");
    assert_eq!(
        params["questions"][0]["detail"],
        "The agent says:\n\n> Free disk space before the build\n\n```sh\nrm -rf target/debug/incremental\n```"
    );
    assert_decision(&output, r#"{"behavior":"allow"}"#);

    let (params, output) = prompt("codex", "codex-network", |p| {
        one(p, &[], Some("Use the vendored copy instead"))
    })
    .await;
    assert_eq!(
        params["questions"][0]["question"],
        "Allow network access to crates.io?"
    );
    assert!(params["agent"]["meta"].get("transcript").is_none());
    assert_decision(
        &output,
        r#"{"behavior":"deny","message":"Use the vendored copy instead"}"#,
    );
}

/// The person sees what runs: the sandbox escape in bold, every field of the input that changes
/// the run, the agent's description as its quoted words (its fake "Command:" block stays text),
/// and a long command's beginning and end, with the whole one click away.
#[tokio::test(flavor = "multi_thread")]
async fn the_approval_shows_everything_that_changes_what_runs() {
    let (params, output) = prompt("claude-code", "claude-bash-unsandboxed", |p| {
        one(p, &["Deny"], None)
    })
    .await;
    let detail = params["questions"][0]["detail"].as_str().unwrap();
    let fences: Vec<&str> = detail
        .lines()
        .filter(|line| line.starts_with("```"))
        .collect();
    // Head, tail and whole: three blocks opened and closed, none from the description.
    assert_eq!(
        fences,
        ["```sh", "```", "```sh", "```", "```sh", "```"],
        "{detail}"
    );
    for said in [
        "The agent says:\n\n> Set up the toolchain\\.\\\n> \\`\\`\\`\n>\n> Command\\:\n",
        "> \\# Safe\\: read\\-only\n",
        "**It asks to run outside the sandbox** (`dangerouslyDisableSandbox`).",
        "A long command (121 lines, ",
        "```sh\necho step 1\n",
        "echo step 20\n```",
        "left out here; the whole command is below.*",
        "```sh\necho step 112\n",
        "| sh\n```\n\n<details>\n<summary>Whole command (121 lines)</summary>\n\n```sh\necho step 1\n",
        "- `dangerouslyDisableSandbox`: `true`",
        "- `run_in_background`: `true`",
        "- `timeout`: `600000`",
    ] {
        assert!(detail.contains(said), "{said:?} in:\n{detail}");
    }
    assert_decision(
        &output,
        r#"{"behavior":"deny","message":"The user denied this Bash call."}"#,
    );

    let (params, _) = prompt("codex", "codex-escalated", |p| one(p, &["Deny"], None)).await;
    assert_eq!(
        params["questions"][0]["detail"],
        "Why, in the agent's words:\n\n> Publish the release branch\n\n**It asks to run outside the sandbox** (`sandbox_permissions`).\n\n```sh\ngit push origin main\n```\n\nAlso in the call:\n\n- `sandbox_permissions`: `\"require_escalated\"`\n- `timeout_ms`: `120000`\n- `workdir`: `\"/home/dev/shop\"`"
    );
}

/// Answer rules (docs/rules.md) see the hook's tool and command: one allows the tests, one denies a
/// push with its message, which the hook hands back as the client's deny.
#[tokio::test(flavor = "multi_thread")]
async fn answer_rules_decide_hook_prompts_by_tool_and_command() {
    let home = Home::new();
    let rules = home
        .path()
        .join("config")
        .join("askdesk")
        .join("rules.toml");
    std::fs::create_dir_all(rules.parent().unwrap()).unwrap();
    std::fs::write(
        &rules,
        r#"
[[rule]]
name = "tests"
match = { tool = "Bash", command = "cargo test*" }
answer = "Allow once"

[[rule]]
name = "no-push"
match = { tool = "Bash", command = "git push*" }
deny = "Pushing is for humans"
"#,
    )
    .unwrap();
    let broker = Broker::start_in(home, &[]);
    let tests = fixture("claude-bash");
    let output = finish(spawn_hook(&broker, "claude-code", &tests, &[])).await;
    assert_decision(&output, r#"{"behavior":"allow"}"#);
    let push = tests.replace("cargo test --workspace", "git push origin main");
    let output = finish(spawn_hook(&broker, "claude-code", &push, &[])).await;
    assert_decision(
        &output,
        r#"{"behavior":"deny","message":"Pushing is for humans"}"#,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn dismissed_and_skipped_prompts_fall_open() {
    let broker = Broker::start();
    let script = answerer(&broker).await;
    let hook = spawn_hook(&broker, "claude-code", &fixture("claude-plan"), &[]);
    let request = script.next_request().await;
    script
        .reply_error(
            &request,
            json!({ "code": -32001, "message": "the user cancelled ask_user_question",
                    "data": { "code": "ASK_CANCELLED" } }),
        )
        .await;
    assert_fell_open(&finish(hook).await, "dismissed");

    let hook = spawn_hook(&broker, "claude-code", &fixture("claude-bash"), &[]);
    let request = script.next_request().await;
    script
        .reply(&request, one(&request["params"], &[], None))
        .await;
    assert_fell_open(&finish(hook).await, "skipped");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_answerer_no_broker_and_bad_input_fall_open() {
    let broker = Broker::start();
    let hook = spawn_hook(&broker, "claude-code", &fixture("claude-bash"), &[]);
    assert_fell_open(&finish(hook).await, "no answerer took the question");

    let cases = [
        (
            "codex",
            r#"{"tool_name": 7}"#,
            "not a PermissionRequest object",
        ),
        // No tool, no prompt: a rule that names no tool could otherwise answer it.
        (
            "claude-code",
            r#"{"tool_name":" ","tool_input":{}}"#,
            "names no tool (tool_name is empty)",
        ),
        // `permission_suggestions: null` is none: the prompt is asked (and here nobody answers).
        (
            "claude-code",
            r#"{"tool_name":"Bash","tool_input":{"command":"ls"},"permission_suggestions":null}"#,
            "no answerer took the question",
        ),
        (
            "claude-code",
            r#"{"hook_event_name":"Stop","tool_name":"Bash","tool_input":{}}"#,
            "PermissionRequest only",
        ),
        // What the input says is echoed on one line, its control characters escaped.
        (
            "claude-code",
            r#"{"hook_event_name":"St\u001b[2J\nop","tool_name":"Bash","tool_input":{}}"#,
            "a St\\u{1b}[2J op event",
        ),
    ];
    for (client, input, reason) in cases {
        let hook = spawn_hook(&broker, client, input, &[]);
        assert_fell_open(&finish(hook).await, reason);
    }

    // A socket nobody listens on, with and without --no-launch (and no display either way).
    let home = Home::new();
    let gone = Broker::start_in(home, &[]);
    let socket = gone.socket().to_owned();
    let mut stopped = gone;
    stopped.signal(libc::SIGTERM);
    stopped.wait_exit(PATIENCE).await;
    for extra in [&[][..], &["--no-launch"][..]] {
        let hook = spawn_hook(&stopped, "claude-code", &fixture("claude-plan"), extra);
        let output = finish(hook).await;
        assert_fell_open(
            &output,
            &format!("no askdesk broker is running at {}", socket.display()),
        );
    }
}

/// A broker that accepts the connection but never answers (suspended, as Ctrl-Z leaves one in a
/// terminal) does not hold the client's prompt: the hook gives up after the handshake wait and the
/// client asks in its own way.
#[tokio::test(flavor = "multi_thread")]
async fn a_broker_that_does_not_answer_is_given_up_on() {
    let broker = Broker::start();
    broker.signal(libc::SIGSTOP);
    let started = std::time::Instant::now();
    let hooks = ["codex", "claude-code"].map(|client| {
        let input = fixture(if client == "codex" {
            "codex-shell"
        } else {
            "claude-bash"
        });
        spawn_hook(&broker, client, &input, &[])
    });
    let mut outputs = Vec::new();
    for hook in hooks {
        outputs.push(finish(hook).await);
    }
    let waited = started.elapsed();
    broker.signal(libc::SIGCONT);
    for output in &outputs {
        assert_fell_open(
            output,
            &format!(
                "the askdesk broker at {} did not answer within 5 s; it may be stopped or hung",
                broker.socket().display()
            ),
        );
    }
    assert!(
        waited >= Duration::from_secs(5) && waited < Duration::from_secs(15),
        "gave up after {waited:?}"
    );
}

/// Runs a prepared hook command with `input` on stdin, off the async runtime.
async fn run_hook(mut cmd: std::process::Command, input: String) -> Output {
    tokio::task::spawn_blocking(move || {
        askdesk_e2e::run_with_stdin(&mut cmd, Some(input.as_bytes()), HOOK_LIMIT)
    })
    .await
    .unwrap()
}

/// A broker that completes the handshake and then stops answering (its agent registration never
/// answered) is given up on too.
#[tokio::test(flavor = "multi_thread")]
async fn a_broker_that_stops_answering_after_the_handshake_is_given_up_on() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let home = Home::new();
    std::fs::create_dir_all(home.socket().parent().unwrap()).unwrap();
    let listener = tokio::net::UnixListener::bind(home.socket()).unwrap();
    let server = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            let (read, mut write) = stream.into_split();
            let mut lines = tokio::io::BufReader::new(read).lines();
            if let Ok(Some(line)) = lines.next_line().await {
                let id = serde_json::from_str::<Value>(&line).unwrap()["id"].clone();
                let reply = json!({ "jsonrpc": "2.0", "id": id,
                    "result": { "protocolVersion": 1, "server": { "name": "askdesk", "version": "0" } } });
                write
                    .write_all(format!("{reply}\n").as_bytes())
                    .await
                    .unwrap();
            }
            held.push((lines, write));
        }
    });
    let mut cmd = home.command(["hook", "claude-code"]);
    cmd.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
    let started = std::time::Instant::now();
    let output = run_hook(cmd, fixture("claude-bash")).await;
    server.abort();
    assert_fell_open(
        &output,
        "did not answer within 5 s; it may be stopped or hung",
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "gave up after {:?}",
        started.elapsed()
    );
}

/// With no broker but a display, the hook starts the desktop app (here a stand-in beside a copy of
/// the binary that runs `askdesk serve`) and asks there; that broker has no answerer, so the hook
/// still falls open, saying so. The app is started on the socket the hook was given (`--socket`).
#[tokio::test(flavor = "multi_thread")]
async fn no_broker_with_a_display_starts_the_desktop_app() {
    let home = Home::new();
    let bin = home.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let askdesk = bin.join("askdesk");
    // A hard link, not a copy: a copy is open for writing while other tests fork, and a child that
    // inherited that descriptor makes the exec below fail with ETXTBSY.
    if std::fs::hard_link(askdesk_e2e::askdesk_bin(), &askdesk).is_err() {
        std::fs::copy(askdesk_e2e::askdesk_bin(), &askdesk).unwrap();
    }
    let pidfile = home.path().join("desktop.pid");
    let desktop = bin.join("askdesk-desktop");
    std::fs::write(
        &desktop,
        format!(
            "#!/bin/sh\necho $$ > '{}'\nexec '{}' serve --no-history\n",
            pidfile.display(),
            askdesk.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &desktop,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    // The socket named on the command line, not the default one: the app is started on it.
    let socket = home.path().join("named.sock");
    let mut cmd = std::process::Command::new(&askdesk);
    cmd.arg("--socket")
        .arg(&socket)
        .args(["hook", "claude-code"])
        .env_remove("ASKDESK_SOCKET")
        .env("XDG_DATA_HOME", home.data_home())
        .env("XDG_RUNTIME_DIR", home.runtime_dir())
        .env("DISPLAY", ":99");
    let output = run_hook(cmd, fixture("claude-bash")).await;
    let pid: Option<libc::pid_t> = std::fs::read_to_string(&pidfile)
        .ok()
        .and_then(|text| text.trim().parse().ok());
    if let Some(pid) = pid {
        // SAFETY: kill(2) on the stand-in app, which runs in a process group of its own.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    assert!(pid.is_some(), "the desktop app was not started");
    assert_fell_open(&output, "no answerer took the question");

    // An app that exits without opening the socket is not waited for.
    std::fs::remove_file(&desktop).unwrap();
    std::fs::write(&desktop, "#!/bin/sh\nexit 3\n").unwrap();
    std::fs::set_permissions(
        &desktop,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut cmd = std::process::Command::new(&askdesk);
    cmd.arg("--socket")
        .arg(home.path().join("other.sock"))
        .args(["hook", "claude-code"])
        .env("XDG_RUNTIME_DIR", home.runtime_dir())
        .env("DISPLAY", ":99");
    let started = std::time::Instant::now();
    let output = run_hook(cmd, fixture("claude-bash")).await;
    assert_fell_open(&output, "but it exited (exit status: 3) without opening");
    // Short of the 10 s the hook waits for an app that runs.
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "waited {:?} for an app that had exited",
        started.elapsed()
    );
}

/// The client kills the hook when its hook timeout passes (Codex also when it stops waiting): the
/// question is withdrawn from the answerer.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_hook_withdraws_its_question() {
    let broker = Broker::start();
    let script = answerer(&broker).await;
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let hook = spawn_hook(&broker, "claude-code", &fixture("claude-plan"), &[]);
        let request = script.next_request().await;
        // SAFETY: kill(2) on the pid of a child we spawned and have not reaped yet.
        assert_eq!(unsafe { libc::kill(hook.id() as libc::pid_t, signal) }, 0);
        let output = finish(hook).await;
        assert_eq!(text(&output.stdout), "", "a killed hook prints nothing");
        let cancel = script.next_incoming().await;
        assert_withdrawn(&cancel, &request);
    }
    let agents = script.call("agents/list", json!({})).await.unwrap();
    assert_eq!(
        agents,
        json!({ "agents": [] }),
        "the prompts' agents are gone"
    );
}

/// Claude Code 2.1.328's Bash prompt (recorded) with its transcript as it was when the prompt
/// began, in a temporary file the input names; returns the input and the transcript's path.
fn recorded_bash_prompt(dir: &Path, extra_lines: &str) -> (String, PathBuf) {
    let transcript = dir.join("session.jsonl");
    let before = read_fixture("claude-transcript-bash.jsonl");
    std::fs::write(&transcript, format!("{extra_lines}{before}")).unwrap();
    let mut input: Value = serde_json::from_str(&fixture("claude-2.1.328-bash")).unwrap();
    input["transcript_path"] = json!(transcript);
    (input.to_string(), transcript)
}

/// Appends to the transcript as Claude Code does, one write per line.
fn append(transcript: &Path, lines: &str) {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(transcript)
        .unwrap();
    for line in lines.lines() {
        file.write_all(format!("{line}\n").as_bytes()).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_settled_in_the_terminal_withdraws_its_question() {
    let broker = Broker::start();
    let script = answerer(&broker).await;
    // "Yes" in the terminal: the call ran and its result is written; "No": the refusal is.
    for result in [
        "claude-transcript-bash-ran.jsonl",
        "claude-transcript-bash-denied.jsonl",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (input, transcript) = recorded_bash_prompt(dir.path(), "");
        let hook = spawn_hook(&broker, "claude-code", &input, &[]);
        let request = script.next_request().await;
        append(&transcript, &read_fixture(result));
        let cancel = script.next_incoming().await;
        assert_withdrawn(&cancel, &request);
        assert_fell_open(
            &finish(hook).await,
            "the call was settled in Claude Code (its result is in the transcript)",
        );
    }
    let agents = script.call("agents/list", json!({})).await.unwrap();
    assert_eq!(agents, json!({ "agents": [] }));
}

#[tokio::test(flavor = "multi_thread")]
async fn other_calls_in_the_transcript_leave_the_question_waiting() {
    let broker = Broker::start();
    let script = answerer(&broker).await;
    let dir = tempfile::tempdir().unwrap();
    // Before the prompt: the same command ran once already (settled), and another call of the
    // same tool is pending beside it.
    let recorded = read_fixture("claude-transcript-bash.jsonl");
    let ours = recorded.lines().nth(1).unwrap();
    let earlier = ours.replace("toolu_mock0001", "toolu_earlier");
    let earlier_result =
        read_fixture("claude-transcript-bash-ran.jsonl").replace("toolu_mock0001", "toolu_earlier");
    let sibling = ours
        .replace("toolu_mock0001", "toolu_sibling")
        .replace("cargo build --release", "cargo build --release ");
    let (input, transcript) =
        recorded_bash_prompt(dir.path(), &format!("{earlier}\n{earlier_result}"));
    append(&transcript, &sibling);
    let hook = spawn_hook(&broker, "claude-code", &input, &[]);
    let request = script.next_request().await;
    // The sibling's result, a result for an id never asked, and a line cut short.
    append(
        &transcript,
        &read_fixture("claude-transcript-bash-denied.jsonl")
            .replace("toolu_mock0001", "toolu_sibling"),
    );
    append(
        &transcript,
        &read_fixture("claude-transcript-bash-ran.jsonl").replace("toolu_mock0001", "toolu_other"),
    );
    std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap()
        .write_all(br#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_mock0001""#)
        .unwrap();
    script
        .reply(&request, one(&request["params"], &["Allow once"], None))
        .await;
    assert_decision(&finish(hook).await, r#"{"behavior":"allow"}"#);

    // A subagent's prompt: the session's transcript is not its own, so nothing there withdraws it.
    let dir = tempfile::tempdir().unwrap();
    let (input, transcript) = recorded_bash_prompt(dir.path(), "");
    let mut input: Value = serde_json::from_str(&input).unwrap();
    input["agent_id"] = json!("a1b2c3");
    input["agent_type"] = json!("general-purpose");
    let hook = spawn_hook(&broker, "claude-code", &input.to_string(), &[]);
    let request = script.next_request().await;
    append(
        &transcript,
        &read_fixture("claude-transcript-bash-ran.jsonl"),
    );
    script
        .reply(&request, one(&request["params"], &["Deny"], None))
        .await;
    assert_decision(
        &finish(hook).await,
        r#"{"behavior":"deny","message":"The user denied this Bash call."}"#,
    );
}

/// `askdesk hook claude-code` run by a shell, as a client runs its hook command, with the Bash
/// fixture as its input: the shell, and the file the hook's pid is written to.
fn shell_running_hook(broker: &Broker) -> (Child, PathBuf) {
    let pid_file = broker.home().path().join("hook.pid");
    let command = format!(
        // The shell stays (it waits), and a background command's input, /dev/null otherwise, is
        // the shell's own.
        "exec 3<&0; '{}' hook claude-code <&3 & echo $! > '{}'; wait",
        askdesk_e2e::askdesk_bin().display(),
        pid_file.display()
    );
    let mut shell = std::process::Command::new("sh");
    shell
        .args(["-c", &command])
        .env("ASKDESK_SOCKET", broker.socket())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = shell.spawn().expect("spawn sh");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(fixture("claude-bash").as_bytes()).unwrap();
    drop(stdin);
    (child, pid_file)
}

/// The pid the shell wrote, once it has written it.
async fn written_pid(pid_file: &Path) -> libc::pid_t {
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let text = std::fs::read_to_string(pid_file).unwrap_or_default();
        if text.ends_with('\n') {
            return text.trim().parse().unwrap();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no pid in {pid_file:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// [`shell_running_hook`], once the hook's question has reached `script`: the shell, the question
/// as `script` received it, and the hook's pid. Killing the shell orphans the hook.
async fn hook_in_a_shell(broker: &Broker, script: &Conn) -> (Child, Value, libc::pid_t) {
    let (child, pid_file) = shell_running_hook(broker);
    let request = script.next_request().await;
    (child, request, written_pid(&pid_file).await)
}

/// Every CPU kept busy (twice over) until dropped: the load under which a hook used to miss that
/// its shell was killed.
struct Load {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    spinners: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start() -> Load {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let spinners = (0..2 * cpus)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        Load { stop, spinners }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for spinner in self.spinners.drain(..) {
            let _ = spinner.join();
        }
    }
}

/// Sends `signal` to the process `pid` (a hook the test started through a shell).
fn signal(pid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill(2) on the hook the test started; it is reaped by init only after it exits,
    // which it cannot do while the test still holds its question.
    assert_eq!(
        unsafe { libc::kill(pid, signal) },
        0,
        "kill({pid}, {signal})"
    );
}

/// A client that kills only the shell running the hook command orphans the hook: the question
/// is withdrawn all the same, with every CPU busy, and however late the hook gets to run after
/// the kill. The hook is stopped from the moment its question arrives until its shell is dead
/// and reaped, so only what it took when it started can tell it that its parent is gone.
#[tokio::test(flavor = "multi_thread")]
async fn an_orphaned_hook_withdraws_its_question() {
    let broker = Broker::start();
    let script = answerer(&broker).await;
    let load = Load::start();
    let (mut shell, request, hook) = hook_in_a_shell(&broker, &script).await;
    signal(hook, libc::SIGSTOP);
    shell.kill().expect("kill the shell");
    shell.wait().unwrap();
    signal(hook, libc::SIGCONT);
    let cancel = script
        .next_incoming_within(Duration::from_secs(60))
        .await
        .expect("the orphaned hook withdrew its question");
    drop(load);
    assert_withdrawn(&cancel, &request);
}

/// `cancel` withdraws `request` because the hook withdrew it or went (protocol 4.2): a phone says
/// "The agent withdrew it" for either.
fn assert_withdrawn(cancel: &Value, request: &Value) {
    assert_eq!(
        (&cancel["method"], &cancel["params"]["id"]),
        (&json!("$/cancelRequest"), &request["id"]),
        "{cancel}"
    );
    let reason = cancel["params"]["reason"].as_str();
    assert!(
        matches!(reason, Some("withdrawn" | "agent-gone")),
        "{cancel}"
    );
}

/// Whether `pid` has a socket open (the hook connected to the broker).
fn has_a_socket(pid: libc::pid_t) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|target| target.to_string_lossy().starts_with("socket:"))
        })
}

/// A hook whose shell is killed before it has even asked (its broker stopped meanwhile, so the
/// hook waits on the handshake) still knows the shell was its parent: it withdraws its question
/// and ends, instead of asking as an orphan nobody waits for.
#[tokio::test(flavor = "multi_thread")]
async fn a_hook_orphaned_before_it_asks_ends_without_a_question() {
    let broker = Broker::start();
    let script = answerer(&broker).await;
    broker.signal(libc::SIGSTOP);
    let (mut shell, pid_file) = shell_running_hook(&broker);
    let hook = written_pid(&pid_file).await;
    let deadline = std::time::Instant::now() + PATIENCE;
    while !has_a_socket(hook) {
        if std::time::Instant::now() > deadline {
            broker.signal(libc::SIGCONT);
            panic!("the hook never connected");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    shell.kill().expect("kill the shell");
    shell.wait().unwrap();
    broker.signal(libc::SIGCONT);
    let orphaned = std::time::Instant::now();
    // SAFETY: kill with signal 0 only checks that the process exists.
    while unsafe { libc::kill(hook, 0) } == 0 {
        assert!(
            orphaned.elapsed() < Duration::from_secs(60),
            "the orphaned hook is still waiting"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let status = script.call("askdesk/status", json!({})).await.unwrap();
    assert_eq!(status["pending"], json!([]), "{status}");
}

/// An orphaned hook ends even when the broker was stopped (Ctrl-Z) while the question waited: its
/// withdrawal and its agent's unregistration are given up on after a short wait, so no process is
/// left behind for as long as the broker stays stopped.
#[tokio::test(flavor = "multi_thread")]
async fn an_orphaned_hook_ends_while_the_broker_is_stopped() {
    let broker = Broker::start();
    let script = answerer(&broker).await;
    let (mut child, _, hook) = hook_in_a_shell(&broker, &script).await;
    broker.signal(libc::SIGSTOP);
    child.kill().expect("kill the shell");
    child.wait().unwrap();
    let orphaned = std::time::Instant::now();
    // SAFETY: kill with signal 0 only checks that the process exists.
    while unsafe { libc::kill(hook, 0) } == 0 && orphaned.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let waited = orphaned.elapsed();
    broker.signal(libc::SIGCONT);
    assert!(
        waited < Duration::from_secs(60),
        "the orphaned hook was still there {waited:?} later"
    );
}

/// Parallel tool calls: two prompts of one session pending at once both reach the human, as the
/// same agent.
#[tokio::test(flavor = "multi_thread")]
async fn two_prompts_of_one_session_are_both_asked() {
    let broker = Broker::start();
    let script = answerer(&broker).await;
    let first = spawn_hook(&broker, "claude-code", &fixture("claude-bash"), &[]);
    let a = script.next_request().await;
    let second = spawn_hook(&broker, "claude-code", &fixture("claude-bash"), &[]);
    let b = script.next_request().await;
    let ids = [&a["params"]["agent"]["id"], &b["params"]["agent"]["id"]];
    assert_eq!(
        ids,
        [
            &json!("claude-code-3f2a9c1e-bash"),
            &json!("claude-code-3f2a9c1e-bash-2")
        ]
    );
    assert_eq!(a["params"]["agent"]["label"], b["params"]["agent"]["label"]);
    assert_eq!(a["params"]["agent"]["meta"], b["params"]["agent"]["meta"]);
    script
        .reply(&b, one(&b["params"], &[], Some("not now")))
        .await;
    script
        .reply(&a, one(&a["params"], &["Allow once"], None))
        .await;
    assert_decision(&finish(first).await, r#"{"behavior":"allow"}"#);
    assert_decision(
        &finish(second).await,
        r#"{"behavior":"deny","message":"not now"}"#,
    );
}

// ----- install / uninstall -----

fn install_cmd(home: &Home, args: &[&str]) -> Output {
    let mut cmd = home.command(["hook"].iter().chain(args));
    cmd.env("HOME", home.path()).env_remove("CODEX_HOME");
    askdesk_e2e::run_with_timeout(&mut cmd, HOOK_LIMIT)
}

fn our_command(client: &str) -> String {
    format!("{} hook {client}", askdesk_e2e::askdesk_bin().display())
}

/// The installed Codex command: askdesk, the socket, `hook codex`.
fn codex_command(socket: &Path) -> String {
    format!(
        "{} --socket {} hook codex",
        askdesk_e2e::askdesk_bin().display(),
        socket.display()
    )
}

fn read(path: &PathBuf) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

#[test]
fn install_merges_is_idempotent_backs_up_and_uninstalls_only_ours() {
    let home = Home::new();
    let settings = home.path().join(".claude").join("settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let original = r#"{
  "model": "opus",
  "permissions": {
    "allow": ["Bash(ls:*)"]
  },
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [{ "type": "command", "command": "audit.sh" }] }
    ],
    "PermissionRequest": [
      { "matcher": "Write", "hooks": [{ "type": "command", "command": "notify.sh" }] }
    ]
  }
}
"#;
    std::fs::write(&settings, original).unwrap();

    let output = install_cmd(&home, &["install", "claude-code"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let installed: Value = serde_json::from_str(&read(&settings)).unwrap();
    let mut expected: Value = serde_json::from_str(original).unwrap();
    // Ours goes first: no line of the person's changes (a group added last would add a comma).
    expected["hooks"]["PermissionRequest"]
        .as_array_mut()
        .unwrap()
        .insert(
            0,
            json!({ "matcher": "*", "hooks": [{ "type": "command",
            "command": our_command("claude-code"), "timeout": 1800 }] }),
        );
    assert_eq!(installed, expected);
    let written = read(&settings);
    let order: Vec<usize> = [
        "\"model\"",
        "\"permissions\"",
        "\"hooks\"",
        "\"PreToolUse\"",
    ]
    .iter()
    .map(|key| written.find(key).expect("key kept"))
    .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "key order kept:\n{written}"
    );
    let backup = home
        .path()
        .join(".claude")
        .join("settings.json.askdesk-backup");
    assert_eq!(read(&backup), original, "the backup is the previous file");

    // Again: nothing changes.
    let output = install_cmd(&home, &["install", "claude-code"]);
    assert!(
        text(&output.stdout).contains("already; nothing changed"),
        "{}",
        text(&output.stdout)
    );
    assert_eq!(read(&settings), written);

    // A different matcher replaces our entry in place; there is still one.
    let output = install_cmd(
        &home,
        &[
            "install",
            "claude-code",
            "--matcher",
            "ExitPlanMode|Bash",
            "--timeout",
            "600",
        ],
    );
    assert!(output.status.success());
    let changed: Value = serde_json::from_str(&read(&settings)).unwrap();
    let groups = changed["hooks"]["PermissionRequest"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0]["matcher"], "ExitPlanMode|Bash");
    assert_eq!(groups[0]["hooks"][0]["timeout"], 600);

    let before = read(&settings);
    let output = install_cmd(&home, &["uninstall", "claude-code", "--print"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed, serde_json::from_str::<Value>(original).unwrap());
    assert_eq!(read(&settings), before, "--print writes nothing");

    let output = install_cmd(&home, &["uninstall", "claude-code"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(
        read(&settings),
        original,
        "uninstall gives the file back byte for byte"
    );
    let output = install_cmd(&home, &["uninstall", "claude-code"]);
    assert!(
        text(&output.stdout).contains("not installed"),
        "{}",
        text(&output.stdout)
    );
}

#[test]
fn install_creates_codex_hooks_and_print_changes_nothing() {
    let home = Home::new();
    let hooks = home.path().join(".codex").join("hooks.json");
    let output = install_cmd(&home, &["install", "codex", "--print"]);
    assert!(output.status.success());
    let snippet: Value = serde_json::from_slice(&output.stdout).unwrap();
    // Codex's hook names the socket always, and waits two minutes by default.
    let group = json!({ "matcher": "*", "hooks": [{ "type": "command",
        "command": codex_command(home.socket()), "timeout": 120 }] });
    assert_eq!(
        snippet,
        json!({ "hooks": { "PermissionRequest": [group] } })
    );
    assert!(!hooks.exists(), "--print writes nothing");

    let output = install_cmd(&home, &["install", "codex"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("/hooks"),
        "tells about trusting the hook"
    );
    let written: Value = serde_json::from_str(&read(&hooks)).unwrap();
    assert_eq!(
        written,
        json!({ "hooks": { "PermissionRequest": [group] } })
    );
    assert!(!home
        .path()
        .join(".codex")
        .join("hooks.json.askdesk-backup")
        .exists());

    let output = install_cmd(&home, &["uninstall", "codex"]);
    assert!(output.status.success());
    let written: Value = serde_json::from_str(&read(&hooks)).unwrap();
    assert_eq!(written, json!({}));
}

/// A socket named with `--socket` is part of the installed command (without it the hook would ask
/// another broker), and uninstall still knows the entry; a timeout of 0 is refused.
#[test]
fn install_keeps_a_named_socket_and_refuses_a_zero_timeout() {
    let home = Home::new();
    let hooks = home.path().join(".codex").join("hooks.json");
    let output = install_cmd(
        &home,
        &["--socket", "/run/my broker/a.sock", "install", "codex"],
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let written: Value = serde_json::from_str(&read(&hooks)).unwrap();
    let command = format!(
        "{} --socket '/run/my broker/a.sock' hook codex",
        askdesk_e2e::askdesk_bin().display()
    );
    assert_eq!(
        written["hooks"]["PermissionRequest"][0]["hooks"][0]["command"],
        json!(command),
        "{written}"
    );
    let output = install_cmd(&home, &["uninstall", "codex"]);
    assert!(output.status.success());
    let written: Value = serde_json::from_str(&read(&hooks)).unwrap();
    assert_eq!(written, json!({}));

    // A relative socket is written absolute: the client runs the hook in another directory.
    let mut cmd = home.command(["hook", "--socket", "run/rel.sock", "install", "codex"]);
    cmd.env("HOME", home.path())
        .env_remove("CODEX_HOME")
        .current_dir(home.path());
    let output = askdesk_e2e::run_with_timeout(&mut cmd, HOOK_LIMIT);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let written: Value = serde_json::from_str(&read(&hooks)).unwrap();
    assert_eq!(
        written["hooks"]["PermissionRequest"][0]["hooks"][0]["command"],
        json!(format!(
            "{} --socket {} hook codex",
            askdesk_e2e::askdesk_bin().display(),
            home.path().join("run/rel.sock").display()
        )),
        "{written}"
    );

    let output = install_cmd(&home, &["install", "codex", "--timeout", "0"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("--timeout"),
        "{}",
        text(&output.stderr)
    );
}

/// Codex runs hooks with the environment of the first `codex` started, so the socket a later one
/// is given never reaches the hook: the installed command names the socket the install resolved,
/// whichever way it was given, and Claude Code's (which runs hooks in its own environment) names
/// one only when `--socket` does.
#[test]
fn install_writes_the_resolved_socket_into_codex_hooks() {
    let home = Home::new();
    let hooks = home.path().join(".codex").join("hooks.json");
    let installed = |cmd: &mut std::process::Command| {
        cmd.env("HOME", home.path()).env_remove("CODEX_HOME");
        let output = askdesk_e2e::run_with_timeout(cmd, HOOK_LIMIT);
        assert!(output.status.success(), "{}", text(&output.stderr));
        let written: Value = serde_json::from_str(&read(&hooks)).unwrap();
        written["hooks"]["PermissionRequest"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // $ASKDESK_SOCKET, as Home sets it.
    let mut cmd = home.command(["hook", "install", "codex"]);
    assert_eq!(installed(&mut cmd), codex_command(home.socket()));
    // No $ASKDESK_SOCKET: the default under $XDG_RUNTIME_DIR.
    let mut cmd = home.command(["hook", "install", "codex"]);
    cmd.env_remove("ASKDESK_SOCKET");
    assert_eq!(
        installed(&mut cmd),
        codex_command(&home.runtime_dir().join("askdesk").join("askdesk.sock"))
    );
    // Neither: /tmp/askdesk-UID.
    let mut cmd = home.command(["hook", "install", "codex"]);
    cmd.env_remove("ASKDESK_SOCKET")
        .env_remove("XDG_RUNTIME_DIR");
    // SAFETY: geteuid(2) has no preconditions.
    let uid = unsafe { libc::geteuid() };
    assert_eq!(
        installed(&mut cmd),
        codex_command(Path::new(&format!("/tmp/askdesk-{uid}/askdesk.sock")))
    );
    let output = install_cmd(&home, &["uninstall", "codex"]);
    assert!(output.status.success());

    let settings = home.path().join(".claude").join("settings.json");
    let output = install_cmd(&home, &["install", "claude-code"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let written: Value = serde_json::from_str(&read(&settings)).unwrap();
    assert_eq!(
        written["hooks"]["PermissionRequest"][0]["hooks"][0],
        json!({ "type": "command", "command": our_command("claude-code"), "timeout": 1800 })
    );
    // askdesk's MCP server added under another name: the hook is told it, and is still ours.
    let output = install_cmd(
        &home,
        &["install", "claude-code", "--mcp-server", "my desk"],
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let written: Value = serde_json::from_str(&read(&settings)).unwrap();
    let list = written["hooks"]["PermissionRequest"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{written}");
    assert_eq!(
        list[0]["hooks"][0]["command"],
        json!(format!(
            "{} --mcp-server='my desk'",
            our_command("claude-code")
        ))
    );
    let output = install_cmd(&home, &["uninstall", "claude-code"]);
    assert!(output.status.success());
    let written: Value = serde_json::from_str(&read(&settings)).unwrap();
    assert_eq!(written, json!({}));
    // No server has an empty name.
    let output = install_cmd(&home, &["install", "claude-code", "--mcp-server", ""]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
}

#[test]
fn install_refuses_a_file_it_cannot_merge() {
    let home = Home::new();
    let settings = home.path().join(".claude").join("settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    for bad in [
        "{ \"model\": ",
        "[]",
        "{\"hooks\": {\"PermissionRequest\": {}}}",
    ] {
        std::fs::write(&settings, bad).unwrap();
        let output = install_cmd(&home, &["install", "claude-code"]);
        assert!(!output.status.success(), "{bad}");
        assert!(
            text(&output.stderr).contains("left unchanged"),
            "{}",
            text(&output.stderr)
        );
        assert_eq!(read(&settings), bad, "the file is untouched");
    }
}

#[test]
fn install_keeps_the_users_numbers_as_written() {
    let home = Home::new();
    let settings = home.path().join(".claude").join("settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let numbers = [
        ("big", "12345678901234567890123"),
        ("exp", "1e2"),
        ("ratio", "0.1000000000000000055511151231257827"),
        ("small", "-1.50E-3"),
        ("whole", "1.0"),
    ];
    let fields: Vec<String> = numbers
        .iter()
        .map(|(key, number)| format!("\"{key}\": {number}"))
        .collect();
    let original = format!("{{{}}}", fields.join(", "));
    std::fs::write(&settings, &original).unwrap();

    for command in ["install", "uninstall"] {
        let output = install_cmd(&home, &[command, "claude-code"]);
        assert!(output.status.success(), "{}", text(&output.stderr));
        let written = read(&settings);
        for (key, number) in numbers {
            assert!(
                written.contains(&format!("\"{key}\": {number}")),
                "{command} keeps {key} as {number}:\n{written}"
            );
        }
    }
    assert_eq!(read(&settings), original);
}

#[test]
fn install_writes_through_a_symlinked_settings_file() {
    use std::os::unix::fs::PermissionsExt;
    let home = Home::new();
    let claude = home.path().join(".claude");
    let settings = claude.join("settings.json");
    let dotfiles = home.path().join("dotfiles");
    let target = dotfiles.join("settings.json");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::create_dir_all(&dotfiles).unwrap();
    let original = "{\"model\": \"opus\"}\n";
    std::fs::write(&target, original).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink("../dotfiles/settings.json", &settings).unwrap();

    let output = install_cmd(&home, &["install", "claude-code"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains(&format!("(a link to {})", target.display())),
        "{}",
        text(&output.stdout)
    );
    let is_link = |path: &PathBuf| {
        std::fs::symlink_metadata(path)
            .unwrap()
            .file_type()
            .is_symlink()
    };
    assert!(is_link(&settings), "the link is kept");
    let written: Value = serde_json::from_str(&read(&target)).unwrap();
    assert_eq!(written["model"], "opus");
    assert_eq!(
        written["hooks"]["PermissionRequest"][0]["hooks"][0]["command"],
        our_command("claude-code")
    );
    let mode = std::fs::metadata(&target).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the target keeps its mode");
    assert_eq!(
        read(&claude.join("settings.json.askdesk-backup")),
        original,
        "the backup is beside the link"
    );
    assert!(!dotfiles.join("settings.json.askdesk-tmp").exists());

    let output = install_cmd(&home, &["uninstall", "claude-code"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(is_link(&settings), "the link is kept");
    assert_eq!(read(&target), original, "uninstall gives the file back");

    // A link that leads nowhere is refused, and stays as it was.
    std::fs::remove_file(&target).unwrap();
    for command in ["install", "uninstall"] {
        let output = install_cmd(&home, &[command, "claude-code"]);
        assert_eq!(output.status.code(), Some(4), "{command}");
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains("is a symbolic link to ../dotfiles/settings.json, which does not exist; nothing was written"),
            "{stderr}"
        );
        assert!(
            is_link(&settings) && !target.exists(),
            "{command} wrote nothing"
        );
    }
}

#[test]
fn install_refuses_a_read_only_settings_file() {
    use std::os::unix::fs::PermissionsExt;
    let home = Home::new();
    let settings = home.path().join(".claude").join("settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let installed = json!({ "model": "opus", "hooks": { "PermissionRequest": [
        { "matcher": "*", "hooks": [{ "type": "command", "command": our_command("claude-code") }] }
    ] } })
    .to_string();
    for (command, original) in [
        ("install", "{\"model\": \"opus\"}"),
        ("uninstall", &installed),
    ] {
        std::fs::write(&settings, original).unwrap();
        std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o444)).unwrap();
        let output = install_cmd(&home, &[command, "claude-code"]);
        assert_eq!(output.status.code(), Some(4), "{command}");
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains(&format!(
                "{} is read-only; it was left unchanged",
                settings.display()
            )),
            "{stderr}"
        );
        assert_eq!(read(&settings), original, "{command} wrote nothing");
        let mode = std::fs::metadata(&settings).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o444);
        assert!(!settings.with_extension("json.askdesk-backup").exists());
        std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
}

#[test]
fn uninstall_keeps_handlers_that_only_mention_askdesk() {
    let home = Home::new();
    let settings = home.path().join(".claude").join("settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let handler = |command: &str| json!({ "type": "command", "command": command });
    let theirs = [
        "notify-send 'askdesk hook claude-code asked'",
        "echo askdesk hook claude-code >> /tmp/log",
        "my-askdesk hook claude-code",
        "askdesk hook codex",
    ];
    let group = |commands: &[&str]| json!({ "matcher": "*", "hooks": commands.iter().map(|c| handler(c)).collect::<Vec<_>>() });
    let mut mixed = theirs.to_vec();
    mixed.push("A=1 exec '/opt/ask desk/askdesk' --socket /x hook claude-code");
    let original = json!({ "hooks": { "PermissionRequest": [
        group(&mixed),
        group(&["/usr/local/bin/askdesk hook claude-code --no-launch"]),
    ] } });
    std::fs::write(&settings, original.to_string()).unwrap();

    let output = install_cmd(&home, &["uninstall", "claude-code"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let after: Value = serde_json::from_str(&read(&settings)).unwrap();
    assert_eq!(
        after,
        json!({ "hooks": { "PermissionRequest": [group(&theirs)] } })
    );
    let output = install_cmd(&home, &["uninstall", "claude-code"]);
    assert!(
        text(&output.stdout).contains("not installed"),
        "{}",
        text(&output.stdout)
    );
}
