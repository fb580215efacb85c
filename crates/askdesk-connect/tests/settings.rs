//! The merges askdesk makes in a client's settings, on real files in a private folder: the
//! change computed and shown as a diff before anything is written, the write with its backup,
//! the status each check reports, and removal.

use std::path::Path;

use askdesk_connect::hook::{self, HookEntry, HookState};
use askdesk_connect::mcp::{self, McpState};
use askdesk_connect::HookClient;

fn entry(client: HookClient, program: &str) -> HookEntry {
    HookEntry::new(
        client,
        Path::new(program),
        Path::new("/run/user/1/askdesk/askdesk.sock"),
        None,
        "*",
        None,
        "askdesk",
    )
    .unwrap()
}

#[test]
fn connecting_shows_the_exact_diff_and_writes_nothing_until_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(&path, "{\n  \"model\": \"opus\"\n}\n").unwrap();
    let entry = entry(HookClient::ClaudeCode, "/usr/bin/askdesk");
    assert_eq!(hook::state(&path, &entry).unwrap(), HookState::Absent);

    let change = hook::install(&path, &entry).unwrap();
    assert!(change.changes());
    let diff = change.diff();
    assert!(
        diff.starts_with(&format!("--- {0}\n+++ {0}\n", path.display())),
        "{diff}"
    );
    // Only askdesk's lines: the entry comes first, so no line of the person's gains a comma.
    assert!(
        diff.contains(" {\n+  \"hooks\": {\n") && diff.contains("+  },\n   \"model\": \"opus\"\n"),
        "{diff}"
    );
    assert!(!diff.lines().any(|l| l.starts_with("-  ")), "{diff}");
    assert!(
        diff.contains("+            \"command\": \"/usr/bin/askdesk hook claude-code\",\n"),
        "{diff}"
    );
    // Computing the change wrote nothing.
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\n  \"model\": \"opus\"\n}\n"
    );

    let backup = change
        .write()
        .unwrap()
        .expect("the previous file is backed up");
    assert_eq!(
        std::fs::read_to_string(backup).unwrap(),
        "{\n  \"model\": \"opus\"\n}\n"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), change.after_text());
    assert_eq!(hook::state(&path, &entry).unwrap(), HookState::Current);
    // Again: nothing to change, an empty diff.
    let again = hook::install(&path, &entry).unwrap();
    assert!(!again.changes());
    assert_eq!(again.diff(), "");
}

#[test]
fn a_hook_of_another_askdesk_is_outdated_and_replaced_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hooks.json");
    let old = entry(
        HookClient::Codex,
        "/home/me/src/askdesk/target/debug/askdesk",
    );
    hook::install(&path, &old).unwrap().write().unwrap();
    let new = entry(HookClient::Codex, "/usr/bin/askdesk");
    assert_eq!(
        hook::state(&path, &new).unwrap(),
        HookState::Outdated(vec![old.command.clone()])
    );
    assert!(
        old.command
            .contains("--socket /run/user/1/askdesk/askdesk.sock"),
        "{}",
        old.command
    );
    let change = hook::install(&path, &new).unwrap();
    let diff = change.diff();
    assert!(
        diff.contains(&format!("-            \"command\": \"{}\",", old.command)),
        "{diff}"
    );
    change.write().unwrap();
    assert_eq!(hook::state(&path, &new).unwrap(), HookState::Current);
    assert_eq!(
        hook::installed_commands(&path, HookClient::Codex).unwrap(),
        vec![new.command.clone()]
    );

    let removal = hook::uninstall(&path, HookClient::Codex).unwrap();
    assert!(removal.diff().contains("-            \"command\""));
    removal.write().unwrap();
    assert_eq!(hook::state(&path, &new).unwrap(), HookState::Absent);
    // The containers the entry brought go with it.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}\n");
}

#[test]
fn a_new_file_diffs_against_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new").join("settings.json");
    let change = mcp::install(&path, Path::new("/usr/bin/askdesk")).unwrap();
    let diff = change.diff();
    assert!(
        diff.starts_with(&format!("--- /dev/null\n+++ {}\n", path.display())),
        "{diff}"
    );
    assert_eq!(change.write().unwrap(), None, "no previous file, no backup");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        mcp::snippet(Path::new("/usr/bin/askdesk")) + "\n"
    );
}

#[test]
fn the_mcp_entry_is_merged_checked_and_removed_keeping_the_other_servers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(
        &path,
        r#"{"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}"#,
    )
    .unwrap();
    let program = Path::new("/usr/bin/askdesk");
    assert_eq!(mcp::state(&path, program).unwrap(), McpState::Absent);
    mcp::install(&path, program).unwrap().write().unwrap();
    assert_eq!(mcp::state(&path, program).unwrap(), McpState::Current);
    assert_eq!(
        mcp::state(&path, Path::new("/opt/askdesk")).unwrap(),
        McpState::Outdated("/usr/bin/askdesk".into())
    );
    // A file written on one line keeps its line; the entry joins it without spaces.
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        format!(
            r#"{{"mcpServers": {{"askdesk":{{"command":"/usr/bin/askdesk","args":["mcp"],"timeout":{}}},"other": {{"command": "x"}}}}, "theme": "dark"}}"#,
            mcp::TIMEOUT_MS
        )
    );
    mcp::uninstall(&path).unwrap().write().unwrap();
    assert_eq!(mcp::state(&path, program).unwrap(), McpState::Absent);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        r#"{"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}"#
    );
}

#[test]
fn a_file_askdesk_cannot_read_safely_is_an_error_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    // Comments and trailing commas are read (Gemini CLI allows them); JSON5's other liberties are not.
    for text in [
        "{ not json",
        "{'model': 'opus'}",
        "{\"n\": 0x10}",
        "{\"n\": +1}",
        "{\"n\": .5}",
        "{model: 1}",
        "{\"a\": 1 \"b\": 2}",
        "[]",
    ] {
        std::fs::write(&path, text).unwrap();
        let error =
            hook::install(&path, &entry(HookClient::ClaudeCode, "/usr/bin/askdesk")).unwrap_err();
        assert!(
            error.to_string().contains("is not valid JSON")
                || error.to_string().contains("is not a JSON object"),
            "{text}: {error}"
        );
        assert!(mcp::uninstall(&path).is_err(), "{text}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
    std::fs::write(&path, r#"{"mcpServers": []}"#).unwrap();
    let error = mcp::install(&path, Path::new("/usr/bin/askdesk")).unwrap_err();
    assert!(error.to_string().contains("\"mcpServers\""), "{error}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        r#"{"mcpServers": []}"#
    );
}
