//! Settings files in every layout people keep them in: Connect adds askdesk's entry as one run of
//! text and changes no other byte, the diff shows only askdesk's lines, and Disconnect gives the
//! file back byte for byte.

use std::path::Path;

use askdesk_connect::hook::{self, HookEntry, HookState};
use askdesk_connect::mcp::{self, McpState};
use askdesk_connect::{Change, HookClient};

const PROGRAM: &str = "/usr/bin/askdesk";

/// Files as people write them: the layout each one has, and its text.
const FILES: &[(&str, &str)] = &[
    ("two spaces", "{\n  \"model\": \"opus\",\n  \"env\": {\n    \"A\": \"1\"\n  }\n}\n"),
    ("four spaces", "{\n    \"zeta\": true,\n    \"alpha\": [\n        1,\n        2\n    ]\n}\n"),
    ("tabs", "{\n\t\"permissions\": {\n\t\t\"allow\": [\"Bash(ls)\"]\n\t}\n}\n"),
    ("one line", "{\"model\":\"opus\",\"env\":{\"A\":\"1\"}}"),
    ("one line with spaces", "{ \"model\": \"opus\", \"n\": 1 }\n"),
    ("CRLF", "{\r\n  \"model\": \"opus\",\r\n  \"n\": 2\r\n}\r\n"),
    ("no final newline", "{\n  \"model\": \"opus\"\n}"),
    ("numbers as written", "{\n  \"big\": 1E2,\n  \"p\": 0.1000,\n  \"huge\": 12345678901234567890123,\n  \"neg\": -0.0\n}\n"),
    ("repeated keys", "{\n  \"a\": 1,\n  \"a\": 2,\n  \"b\": {\"c\": 1, \"c\": 2}\n}\n"),
    ("unicode escapes", "{\n  \"name\": \"caf\\u00e9 \\ud83d\\ude00\",\n  \"\\u0074heme\": \"dark\"\n}\n"),
    ("a repeated hooks key", "{\n  \"hooks\": {\"Stop\": []},\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n"),
    ("comments", "{\n  // the model\n  \"model\": \"opus\", /* why */\n  \"n\": 1,\n}\n"),
    ("empty object", "{}\n"),
    (
        "other hooks",
        "{\n  \"hooks\": {\n    \"PermissionRequest\": [\n      {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"mine.sh\"}]}\n    ],\n    \"Stop\": []\n  }\n}\n",
    ),
    ("other hooks on one line", "{\"hooks\":{\"PermissionRequest\":[{\"matcher\":\"Bash\",\"hooks\":[]}]}}\n"),
    ("other servers", "{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}\n  },\n  \"theme\": \"dark\"\n}\n"),
];

fn entry() -> HookEntry {
    HookEntry::new(
        HookClient::ClaudeCode,
        Path::new(PROGRAM),
        Path::new("/run/user/1/askdesk/askdesk.sock"),
        None,
        "*",
        None,
        "askdesk",
    )
    .unwrap()
}

/// The text `after` has that `before` has not, when `before` is `after` with one run of text
/// taken out; `None` when any other byte differs.
fn added<'a>(before: &str, after: &'a str) -> Option<&'a str> {
    let start = before
        .bytes()
        .zip(after.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let end = before[start..]
        .bytes()
        .rev()
        .zip(after[start..].bytes().rev())
        .take_while(|(a, b)| a == b)
        .count();
    (start + end == before.len()).then(|| &after[start..after.len() - end])
}

/// Checks one Connect and Disconnect of `file`, holding `text`, with `connect` and `disconnect`;
/// `marker` is a piece of askdesk's entry.
fn round_trip(
    layout: &str,
    text: &str,
    marker: &str,
    connect: impl Fn(&Path) -> Change,
    disconnect: impl Fn(&Path) -> Change,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(&path, text).unwrap();

    let change = connect(&path);
    let after = change.after_text().to_owned();
    let inserted = added(text, &after)
        .unwrap_or_else(|| panic!("{layout}: bytes besides askdesk's entry changed:\n{after}"));
    assert!(inserted.contains(marker), "{layout}: {inserted}");
    assert!(
        serde_json::from_str::<serde_json::Value>(&after).is_ok() || layout == "comments",
        "{layout}: not JSON:\n{after}"
    );
    // The file's line ends and indentation, in askdesk's lines too.
    if text.contains("\r\n") {
        assert_eq!(
            after.matches('\n').count(),
            after.matches("\r\n").count(),
            "{layout}"
        );
    }
    // The file's indent: the first line's below the opening brace.
    let second = text.split('\n').nth(1).unwrap_or_default();
    let unit = &second[..second.len() - second.trim_start().len()];
    if text.trim_end().contains('\n') {
        let depths: Vec<usize> = inserted
            .split('\n')
            .skip(1)
            .map(|line| {
                let indent = &line[..line.len() - line.trim_start().len()];
                assert!(
                    !unit.is_empty()
                        && indent.len() % unit.len() == 0 && indent == unit.repeat(indent.len() / unit.len()),
                    "{layout}: a line askdesk adds is not indented as the file is: {line:?}\n{after}"
                );
                indent.len() / unit.len()
            })
            .collect();
        assert!(depths.iter().any(|&d| d >= 3), "{layout}: {depths:?}");
    }
    // The diff: only added lines, unless the file is a single line.
    let diff = change.diff();
    let removed: Vec<&str> = diff
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
        .collect();
    if text.trim_end().contains('\n') {
        assert!(
            removed.is_empty(),
            "{layout}: the diff removes lines:\n{diff}"
        );
    } else {
        assert_eq!(removed.len(), 1, "{layout}: one line replaced:\n{diff}");
    }

    change.write().unwrap();
    let removal = disconnect(&path);
    assert!(removal.changes(), "{layout}");
    removal.write().unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "{layout}: Disconnect did not give the file back"
    );
}

#[test]
fn the_hook_is_added_and_removed_as_one_run_of_text_in_every_layout() {
    let entry = entry();
    for (layout, text) in FILES {
        round_trip(
            layout,
            text,
            &entry.command,
            |path| {
                assert_eq!(hook::state(path, &entry).unwrap(), HookState::Absent);
                hook::install(path, &entry).unwrap()
            },
            |path| {
                assert_eq!(
                    hook::state(path, &entry).unwrap(),
                    HookState::Current,
                    "{layout}"
                );
                hook::uninstall(path, HookClient::ClaudeCode).unwrap()
            },
        );
    }
}

#[test]
fn the_mcp_server_is_added_and_removed_as_one_run_of_text_in_every_layout() {
    let program = Path::new(PROGRAM);
    for (layout, text) in FILES {
        round_trip(
            layout,
            text,
            "\"mcp\"",
            |path| {
                assert_eq!(mcp::state(path, program).unwrap(), McpState::Absent);
                mcp::install(path, program).unwrap()
            },
            |path| {
                assert_eq!(
                    mcp::state(path, program).unwrap(),
                    McpState::Current,
                    "{layout}"
                );
                mcp::uninstall(path).unwrap()
            },
        );
    }
}
