//! Answer rules in the broker: a rule answering (the journal names it), a permission prompt
//! answered only by the rule that names its tool, shadow mode, a broken rules file at start and
//! after a change, and a deadline firing at the right moment (an in-process broker on paused time).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use askdesk_e2e::{expect_question_error, q, Broker, Conn, Home, PATIENCE};
use serde_json::{json, Value};

fn rules_path(home: &Home) -> PathBuf {
    home.path()
        .join("config")
        .join("askdesk")
        .join("rules.toml")
}

fn write_rules(home: &Home, text: &str) {
    let path = rules_path(home);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn journal(home: &Home) -> Vec<Value> {
    let path = home.data_home().join("askdesk").join("history.jsonl");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        // Spaces held for the next lines, or zeros where a read raced their cut-off.
        .filter(|l| {
            !l.trim_matches(|c: char| c.is_whitespace() || c == '\0')
                .is_empty()
        })
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Polls (bounded by PATIENCE) until `done` holds for what `probe` returns.
async fn eventually<T>(
    what: &str,
    mut probe: impl AsyncFnMut() -> T,
    done: impl Fn(&T) -> bool,
) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let value = probe().await;
        if done(&value) {
            return value;
        }
        assert!(Instant::now() < deadline, "never saw {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

const RULES: &str = r#"
[[rule]]
name = "clean"
match.header = "Cleanup"
answer = { recommended = true }

[[rule]]
name = "tests"
match = { tool = "Bash", command = "cargo test*" }
answer = "Allow once"

[[rule]]
name = "guess"
match.question = "^Guess"
answer = "No"
mode = "shadow"
"#;

fn cleanup() -> Value {
    let mut question = q(
        "c",
        "Remove the build directory?",
        &["Yes (Recommended)", "No"],
    );
    question["header"] = json!("Cleanup");
    question
}

fn prompt() -> Value {
    q("p", "Allow Bash?", &["Allow once", "Deny"])
}

fn started(rules: &str) -> Broker {
    let home = Home::new();
    write_rules(&home, rules);
    Broker::start_in(home, &[])
}

#[tokio::test]
async fn a_rule_answers_and_the_journal_names_it() {
    let broker = started(RULES);
    let conn = broker.conn().await;
    let answer = conn
        .call("user-questions/ask", json!({ "questions": [cleanup()] }))
        .await
        .unwrap();
    assert_eq!(
        answer,
        json!({ "answers": [{ "id": "c", "selected": ["Yes (Recommended)"] }] })
    );
    let status = conn.call("askdesk/status", json!({})).await.unwrap();
    assert_eq!(status["answerers"][0]["label"], "rules", "{status}");
    let records = eventually(
        "the journal line",
        async || journal(broker.home()),
        |r| !r.is_empty(),
    )
    .await;
    assert_eq!(records[0]["answerer"], "rule:clean", "{}", records[0]);
    assert_eq!(records[0]["outcome"], "answered");
}

/// The time `askdesk/deadline` next tells `human` for `request` (milliseconds, or null).
async fn deadline_told(human: &Conn, request: &Value) -> Value {
    let told = human.next_incoming().await;
    assert_eq!(told["method"], "askdesk/deadline", "{told}");
    assert_eq!(told["params"]["id"], request["id"], "{told}");
    told["params"]["at"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deadline_is_called_off_when_its_rule_is_switched_off_or_removed() {
    const LATER: &str = r#"
[[rule]]
name = "cleanup later"
match.header = "Cleanup"
answer = "No"
after = "2s"
"#;
    for (case, edit) in [
        ("switched off", Some(format!("{LATER}mode = \"off\"\n"))),
        (
            "answering otherwise",
            Some(LATER.replace(r#"answer = "No""#, r#"answer = "Yes (Recommended)""#)),
        ),
        ("file removed", None),
    ] {
        let broker = started(LATER);
        let human = broker.conn().await;
        human.register_answerer(json!("all"), false, "human").await;
        let asker = broker.conn().await;
        let id = asker
            .start("user-questions/ask", json!({ "questions": [cleanup()] }))
            .await;
        let request = human.next_request().await;
        assert!(deadline_told(&human, &request).await.is_u64(), "{case}");
        match &edit {
            Some(text) => write_rules(broker.home(), text),
            None => std::fs::remove_file(rules_path(broker.home())).unwrap(),
        }
        eventually(
            "the reload",
            async || broker.log(),
            |log| log.matches("rules loaded").count() >= 2,
        )
        .await;
        // The human hears no deadline runs any more (protocol 4.3) ...
        assert_eq!(deadline_told(&human, &request).await, Value::Null, "{case}");
        // ... and past the deadline the question is still the human's.
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert!(
            human.next_incoming_within(Duration::ZERO).await.is_none(),
            "{case}: the request was taken from the human"
        );
        let answer = json!({ "answers": [{ "id": "c", "selected": ["Yes (Recommended)"] }] });
        human.reply(&request, answer.clone()).await;
        assert_eq!(asker.wait(id).await.unwrap(), answer, "{case}");
        assert!(
            broker
                .log()
                .contains("the rule changed before its deadline; the human decides"),
            "{case}: {}",
            broker.log()
        );
    }
}

#[tokio::test]
async fn a_permission_prompt_is_answered_only_by_the_rule_naming_its_tool() {
    let broker = started(RULES);
    let conn = broker.conn().await;
    let human = broker.conn().await;
    human.register_answerer(json!("all"), false, "human").await;

    let hook = |command: &str| json!({ "id": format!("session-{command}"), "meta": { "cwd": "/src", "tool": "Bash", "command": command } });
    let tests = conn.register_agent(hook("cargo test -p x")).await;
    let answer = conn
        .call(
            "user-questions/ask",
            json!({ "questions": [prompt()], "agent": tests }),
        )
        .await
        .unwrap();
    assert_eq!(answer["answers"][0]["selected"], json!(["Allow once"]));

    // Another command, or the clean-up rule (which names no tool) on a prompt: the human decides.
    let rm = conn.register_agent(hook("rm -rf /")).await;
    let mut batch = cleanup();
    batch["options"] = json!([{ "label": "Yes (Recommended)" }, { "label": "No" }]);
    for (agent, question) in [(&rm, prompt()), (&rm, batch)] {
        let id = conn
            .start(
                "user-questions/ask",
                json!({ "questions": [question], "agent": agent }),
            )
            .await;
        let request = human.next_request().await;
        human.reply(&request, Value::Null).await;
        expect_question_error(conn.wait(id).await, "NO_PROVIDER");
    }
    let records = eventually(
        "three journal lines",
        async || journal(broker.home()),
        |r| r.len() == 3,
    )
    .await;
    assert_eq!(records[0]["answerer"], "rule:tests");
    assert_eq!(records[1].get("answerer"), None, "{}", records[1]);
}

#[tokio::test]
async fn a_shadow_rule_leaves_the_decision_to_the_human() {
    let broker = started(RULES);
    let conn = broker.conn().await;
    let human = broker.conn().await;
    human.register_answerer(json!("all"), false, "human").await;
    let id = conn
        .start(
            "user-questions/ask",
            json!({ "questions": [q("g", "Guess a number?", &["Yes", "No"])] }),
        )
        .await;
    let request = human.next_request().await;
    human
        .reply(
            &request,
            json!({ "answers": [{ "id": "g", "selected": ["Yes"] }] }),
        )
        .await;
    assert_eq!(
        conn.wait(id).await.unwrap()["answers"][0]["selected"],
        json!(["Yes"])
    );
    let records = eventually(
        "the journal line",
        async || journal(broker.home()),
        |r| !r.is_empty(),
    )
    .await;
    assert_eq!(records[0]["answerer"], "human");
    assert!(
        broker.log().contains("shadow rule proposes"),
        "{}",
        broker.log()
    );
}

async fn ask_cleanup(conn: &Conn) -> Result<Value, askdesk_e2e::RpcError> {
    conn.call("user-questions/ask", json!({ "questions": [cleanup()] }))
        .await
}

/// The log says what is wrong with a broken rules file in English whatever the broker's language:
/// it is for whoever debugs; the person reads it in their language (`rules list`, the Rules view).
#[tokio::test]
async fn a_broken_rules_file_is_logged_in_english_under_another_language() {
    let home = Home::new();
    write_rules(
        &home,
        "[[rule]]\nname = \"clean\"\nmatch.header = \"Cleanup\"\n",
    );
    let broker = Broker::start_in_env(home, &[], &[("ASKDESK_LANG", "zh-CN")]);
    let _conn = broker.conn().await;
    let log = broker.log();
    assert!(
        log.contains("line 1, column 1: rule ") && log.contains("has no action"),
        "{log}"
    );
    assert!(
        !log.contains("没有动作") && !log.contains("第 1 行"),
        "{log}"
    );
}

#[tokio::test]
async fn a_broken_rules_file_never_stops_the_broker_nor_answers() {
    let broker = started("[[rule]]\nname = \"clean\"\nmatch.header = \"Cleanup\"\n");
    let conn = broker.conn().await;
    assert!(
        broker.log().contains("line 1, column 1")
            && broker
                .log()
                .contains("the rules file is broken; no rules are in force until it is fixed"),
        "{}",
        broker.log()
    );
    expect_question_error(ask_cleanup(&conn).await, "NO_PROVIDER");

    // Fixed: picked up without a restart.
    write_rules(broker.home(), RULES);
    let fixed = eventually(
        "the fixed rules",
        async || ask_cleanup(&conn).await,
        Result::is_ok,
    )
    .await;
    assert_eq!(
        fixed.unwrap()["answers"][0]["selected"],
        json!(["Yes (Recommended)"])
    );

    // Broken again: the last good rules stay in force, and the log says why.
    write_rules(
        broker.home(),
        &format!("{RULES}\n[[rule]]\nname = \"clean\"\nask = true\n"),
    );
    eventually(
        "the breakage in the log",
        async || broker.log(),
        |log| log.contains("already defined on line 2"),
    )
    .await;
    assert!(broker
        .log()
        .contains("the rules file is broken; the last good rules stay in force"));
    assert!(ask_cleanup(&conn).await.is_ok());
}

// ----- a deadline, on paused time -----

/// The broker of `askdesk serve` (its `run`, its rules engine) in this process, so that a ten
/// minute deadline runs on tokio's paused clock.
struct InProcess {
    socket: PathBuf,
    shutdown: tokio_util::sync::CancellationToken,
    _dir: tempfile::TempDir,
}

async fn in_process(rules: &str) -> (InProcess, askdesk_journal::Journal) {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("run").join("askdesk.sock");
    let rules_file = dir.path().join("rules.toml");
    std::fs::write(&rules_file, rules).unwrap();
    let journal = askdesk_journal::Journal::open(&dir.path().join("data")).unwrap();
    let service = askdesk_core::Service::new(askdesk_core::Config::default());
    let engine = askdesk_rules::Engine::open(rules_file).await;
    engine.install(&service).unwrap();
    let listener = askdesk_broker::bind(&socket).unwrap();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let config = askdesk_broker::ServerConfig {
        journal: Some(journal.clone()),
        ..Default::default()
    };
    tokio::spawn(askdesk_broker::run(
        listener,
        service,
        config,
        shutdown.clone(),
    ));
    (
        InProcess {
            socket,
            shutdown,
            _dir: dir,
        },
        journal,
    )
}

fn path(p: &InProcess) -> &Path {
    &p.socket
}

#[tokio::test(start_paused = true)]
async fn a_deadline_fires_at_the_right_moment() {
    let (broker, journal) = in_process(
        r#"
[[rule]]
name = "cleanup later"
match.header = "Cleanup"
answer = "No"
after = "10m"
"#,
    )
    .await;
    let asker = Conn::connect(path(&broker)).await.unwrap();
    asker.initialize("e2e").await;
    let human = Conn::connect(path(&broker)).await.unwrap();
    human.initialize("e2e").await;
    human.register_answerer(json!("all"), false, "human").await;

    let start = tokio::time::Instant::now();
    let asked = askdesk_journal::millis(std::time::SystemTime::now());
    let id = asker
        .start("user-questions/ask", json!({ "questions": [cleanup()] }))
        .await;
    let request = human.next_request().await;
    assert_eq!(request["params"]["questions"][0]["id"], "c");
    // The human is told when the rule decides (protocol 4.3), on the broker's clock.
    let at = deadline_told(&human, &request)
        .await
        .as_u64()
        .expect("a time");
    let told = askdesk_journal::millis(std::time::SystemTime::now());
    assert!(
        (asked + 600_000..=told + 600_000).contains(&at),
        "{at} ten minutes after {asked}..{told}"
    );

    tokio::time::sleep(Duration::from_secs(599)).await;
    assert!(
        human.next_incoming_within(Duration::ZERO).await.is_none(),
        "nothing withdrawn before ten minutes"
    );
    assert!(
        asker.lines().len() == 1,
        "only initialize answered so far: {:?}",
        asker.lines()
    );

    // One more second reaches the deadline. From then on the clock runs for real: the answer
    // waits for the journal's writer thread (real I/O, off the runtime), and a paused clock would
    // jump ahead to the next timer meanwhile.
    tokio::time::advance(Duration::from_secs(1)).await;
    tokio::time::resume();
    let answer = asker.wait(id).await.unwrap();
    let elapsed = start.elapsed();
    assert!(
        elapsed >= Duration::from_secs(600) && elapsed < Duration::from_secs(600) + PATIENCE,
        "answered after {elapsed:?}"
    );
    assert_eq!(
        answer,
        json!({ "answers": [{ "id": "c", "selected": ["No"] }] })
    );
    let withdrawn = human.next_incoming().await;
    assert_eq!(withdrawn["method"], "$/cancelRequest", "{withdrawn}");
    assert_eq!(withdrawn["params"]["id"], request["id"]);

    // The human's answer after the deadline is late, and journaled as such.
    human
        .reply(
            &request,
            json!({ "answers": [{ "id": "c", "selected": ["Yes (Recommended)"] }] }),
        )
        .await;
    let records = loop {
        let records = journal.read().unwrap();
        if records.len() == 2 {
            break records;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(records[0].answerer.as_deref(), Some("rule:cleanup later"));
    assert_eq!(records[1].outcome.as_str(), "late-answer");
    broker.shutdown.cancel();
}

// ----- askdesk rules list | test -----

fn record(asked_at: u64, question: &str, selected: &str, answerer: &str) -> Value {
    json!({
        "askedAt": asked_at, "settledAt": asked_at + 1000,
        "questions": [q("q", question, &["Yes", "No"])],
        "outcome": "answered",
        "answer": { "answers": [{ "id": "q", "selected": [selected] }] },
        "answerer": answerer,
    })
}

/// `askdesk rules <args>`: exit status, stdout, stderr.
fn rules_cli(home: &Home, args: &[&str]) -> (i32, String, String) {
    let output = home
        .command(std::iter::once("rules").chain(args.iter().copied()))
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn rules_list_and_test_replay_the_journal() {
    let home = Home::new();
    write_rules(
        &home,
        r#"
[[rule]]
name = "deploy"
match.question = "^Deploy"
answer = "No"

[[rule]]
name = "guess"
match.question = "^Guess"
answer = "Yes"
mode = "shadow"
after = "1h30m"
"#,
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let month_ago = now - 30 * 86_400_000;
    let lines: Vec<String> = [
        record(month_ago, "Deploy the old thing?", "Yes", "desktop"),
        record(now - 5000, "Deploy now?", "No", "desktop"),
        record(now - 4000, "Deploy again?", "Yes", "desktop"),
        record(now - 3000, "Deploy later?", "No", "rule:deploy"),
        record(now - 2000, "Guess?", "Yes", "desktop"),
        record(now - 1000, "Anything else?", "Yes", "desktop"),
    ]
    .iter()
    .map(Value::to_string)
    .collect();
    let dir = home.data_home().join("askdesk");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("history.jsonl"), lines.join("\n") + "\n").unwrap();

    let (status, out, err) = rules_cli(&home, &["list"]);
    assert_eq!(status, 0, "{err}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(
        rows,
        [
            vec!["RULE", "MODE", "AFTER", "ACTION", "HITS", "ACTED", "AGREED", "DIFFERED"],
            vec!["deploy", "on", "-", "answer \"No\"", "4", "1", "1", "2"],
            vec![
                "guess",
                "shadow",
                "1h30m",
                "answer \"Yes\"",
                "1",
                "0",
                "1",
                "0"
            ],
        ],
        "{out}"
    );

    let (status, out, err) = rules_cli(&home, &["test", "--since", "7d"]);
    assert_eq!(status, 0, "{err}");
    assert!(out.starts_with("5 requests from the last 7d"), "{out}");
    assert!(
        out.contains("applies to 3 requests; settled 1 itself; agrees with you on 1, differs on 1"),
        "{out}"
    );
    assert!(
        out.contains("\"Deploy again?\"\n    rule: answer q: No\n    you:  answered q: Yes"),
        "{out}"
    );
    assert!(
        !out.contains("Deploy the old thing"),
        "older than 7 days: {out}"
    );
    assert!(out.ends_with("no rule applies to 1 request\n"), "{out}");

    // A broken file is an error naming its line; a bad --since is a usage error.
    write_rules(&home, "[[rule]]\nname = \"x\"\n");
    let (status, _, err) = rules_cli(&home, &["list"]);
    assert_eq!(status, 4, "{err}");
    assert!(
        err.contains("line 1, column 1: rule \"x\" has no action"),
        "{err}"
    );
    let (status, _, err) = rules_cli(&home, &["test", "--since", "a week"]);
    assert_eq!(status, 2, "{err}");
    assert!(
        err.contains("--since: \"a week\" is not a duration"),
        "{err}"
    );
    let (status, _, err) = rules_cli(&home, &["test", "--since", "0s"]);
    assert_eq!(status, 2, "{err}");
    assert!(
        err.contains("--since must be longer than zero") && !err.contains("`after`"),
        "{err}"
    );
}

/// A home whose rules answer "No" to questions starting "Deploy" and whose journal holds one
/// request, asked in 1970 and answered `selected` by the desktop.
fn one_answer_and_a_deploy_rule(question: &str, selected: &str) -> Home {
    let home = Home::new();
    write_rules(
        &home,
        "[[rule]]\nname = \"deploy\"\nmatch.question = \"^Deploy\"\nanswer = \"No\"\n",
    );
    let dir = home.data_home().join("askdesk");
    std::fs::create_dir_all(&dir).unwrap();
    let line = record(1_000, question, selected, "desktop");
    std::fs::write(dir.join("history.jsonl"), format!("{line}\n")).unwrap();
    home
}

/// A `--since` longer than the clock can count back takes the whole journal, not a window its
/// milliseconds wrapped around to.
#[test]
fn rules_test_since_longer_than_the_clock_takes_the_whole_journal() {
    let home = one_answer_and_a_deploy_rule("Deploy long ago?", "No");
    // 213503982335 days is 18446744073744000000 ms, just past what a u64 holds.
    let (status, out, err) = rules_cli(&home, &["test", "--since", "213503982335d"]);
    assert_eq!(status, 0, "{err}");
    assert!(
        out.starts_with("1 request from the last 213503982335d"),
        "{out}"
    );
}

/// An answer in the journal that holds escape sequences or bidi overrides is shown by `rules test`
/// as visible `\u{..}` escapes, never as the characters themselves.
#[test]
fn rules_test_shows_control_characters_in_answers_as_escapes() {
    let home = one_answer_and_a_deploy_rule("Deploy\u{1b}[2J?", "Y\u{1b}]0;t\u{7}es\u{202e}");

    let (status, out, err) = rules_cli(&home, &["test"]);
    assert_eq!(status, 0, "{err}");
    assert!(
        out.contains(
            "\"Deploy\\u{1b}[2J?\"\n    rule: answer q: No\n    you:  answered q: Y\\u{1b}]0;t\\u{7}es\\u{202e}\n"
        ),
        "{out}"
    );
    assert!(
        !out.chars()
            .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
        "{out:?}"
    );
}

/// A draft named with `--file` must exist (a mistyped path is not "no rules"); the installed file
/// may be missing.
#[test]
fn rules_with_a_missing_draft_fail_and_without_an_installed_file_list_none() {
    let home = Home::new();
    let draft = home.path().join("drafft.toml");
    for command in ["list", "test"] {
        let (status, out, err) = rules_cli(&home, &[command, "--file", draft.to_str().unwrap()]);
        assert_eq!(status, 20, "{command}: {out}{err}");
        assert_eq!(
            err.lines().last(),
            Some(
                format!(
                    "Error: cannot read {}: there is no such file",
                    draft.display()
                )
                .as_str()
            ),
            "{command}: {err}"
        );
    }
    let (status, out, err) = rules_cli(&home, &["list"]);
    assert_eq!(status, 0, "{err}");
    assert!(out.starts_with("no rules in "), "{out}");
}

/// `ASKDESK_LANG=zh-CN askdesk rules list` and `rules test` say what is wrong with a broken rules
/// file, and where, in Chinese; the file's keys and the rule's name stay as the file writes them.
#[test]
fn a_broken_rules_file_is_explained_in_the_language_chosen() {
    let home = Home::new();
    write_rules(&home, "[[rule]]\nname = \"x\"\n");
    let said = |command: &str, lang: &str| {
        let output = home
            .command(["rules", command])
            .env("ASKDESK_LANG", lang)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(4), "{output:?}");
        String::from_utf8(output.stderr).unwrap()
    };
    for command in ["list", "test"] {
        let err = said(command, "zh-CN");
        assert!(
            err.contains("第 1 行，第 1 列：规则 \"x\" 没有动作：请给出 `answer`、`deny`、`dismiss`、`ask` 之一"),
            "{command}: {err}"
        );
        assert!(!err.contains("has no action"), "{command}: {err}");
        let english = said(command, "en");
        assert!(
            english.contains("line 1, column 1: rule \"x\" has no action"),
            "{command}: {english}"
        );
    }
    // A value's own problem, reported by the parser through the file's reading, too.
    write_rules(
        &home,
        "[[rule]]\nname = \"y\"\nask = true\nafter = \"a week\"\n",
    );
    let err = said("list", "zh-CN");
    assert!(
        err.contains("\"a week\" 不是时长：请写成 \"30s\"、\"10m\" 或 \"1h30m\" 这样的形式"),
        "{err}"
    );
}

/// `ASKDESK_LANG=zh-CN askdesk rules list` says a rule's action and its broad-allow warning in
/// Chinese; the rule's name and answer stay as the file writes them.
#[test]
fn rules_list_says_the_action_and_the_warning_in_the_language_chosen() {
    let home = Home::new();
    write_rules(
        &home,
        "[[rule]]\nname = \"git\"\nmatch = { tool = \"Bash\", command = \"git *\" }\nanswer = \"Allow once\"\n",
    );
    let output = home
        .command(["rules", "list"])
        .env("ASKDESK_LANG", "zh-CN")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let out = String::from_utf8(output.stdout).unwrap();
    let row = out
        .lines()
        .find(|l| l.starts_with("git "))
        .unwrap_or_else(|| panic!("no row of the rule in:\n{out}"));
    assert!(row.contains("回答 \"Allow once\""), "{out}");
    let warning = out
        .lines()
        .find(|l| l.starts_with("警告："))
        .unwrap_or_else(|| panic!("no Chinese warning in:\n{out}"));
    assert!(
        warning.contains("规则 \"git\"（第 1 行）宽泛地允许命令"),
        "{warning}"
    );
    for english in ["warning:", "allows commands broadly", "answer \""] {
        assert!(
            !out.contains(english),
            "{english:?} left in English:\n{out}"
        );
    }
}
