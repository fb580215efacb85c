//! `askdesk devices list|revoke|confirm|scope NAME` against a device store written as the remote
//! writes it (`$XDG_DATA_HOME/askdesk/remote/devices.json`): the list, its JSON, a revoke that
//! removes the device and keeps the file private, a suspended device confirmed, a scope set, an
//! unknown name, and a store of another format.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Output;

use askdesk_e2e::{run_with_timeout, Home, PATIENCE};
use serde_json::{json, Value};

fn store_path(home: &Home) -> PathBuf {
    home.data_home().join("askdesk/remote/devices.json")
}

/// Two paired phones, one of them never seen, written in the store's format (docs/remote.md).
fn write_store(home: &Home) {
    let path = store_path(home);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let store = json!({
        "version": 1,
        "devices": [
            { "name": "Pixel 8", "publicKey": "BPixel", "pairedAt": 1_780_000_000u64, "lastSeen": 1_780_003_600u64 },
            { "name": "iPad \u{202e}x", "publicKey": "BiPad", "pairedAt": 1_780_000_060u64 }
        ]
    });
    std::fs::write(&path, serde_json::to_vec_pretty(&store).unwrap()).unwrap();
}

fn devices(home: &Home, args: &[&str]) -> Output {
    let mut command = home.command(["devices"].iter().chain(args));
    run_with_timeout(&mut command, PATIENCE)
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn list_shows_each_device_with_its_dates_and_names_made_safe() {
    let home = Home::new();
    write_store(&home);
    let output = devices(&home, &["list"]);
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("NAME") && lines[0].contains("LAST SEEN (UTC)"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("Pixel 8")
            && lines[1].contains("2026-05-28 20:26:40")
            && lines[1].contains("2026-05-28 21:26:40"),
        "{text}"
    );
    assert!(
        lines[2].starts_with("iPad \\u{202e}x")
            && lines[2].contains("never")
            && lines[2].contains("up to plan-review")
            && lines[2].trim_end().ends_with("ok"),
        "{text}"
    );
}

#[test]
fn list_json_is_the_store_exactly() {
    let home = Home::new();
    write_store(&home);
    let output = devices(&home, &["list", "--json"]);
    assert!(output.status.success(), "{output:?}");
    let listed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let stored: Value = serde_json::from_slice(&std::fs::read(store_path(&home)).unwrap()).unwrap();
    assert_eq!(listed, stored["devices"]);
}

#[test]
fn no_store_is_no_device_and_creates_nothing() {
    let home = Home::new();
    let output = devices(&home, &["list"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(stdout(&output), "no device is paired\n");
    assert!(!home.data_home().join("askdesk").exists());
}

#[test]
fn revoke_removes_the_named_device_and_keeps_the_store_private() {
    let home = Home::new();
    write_store(&home);
    let output = devices(&home, &["revoke", "Pixel 8"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(stdout(&output), "revoked Pixel 8\n");
    let stored: Value = serde_json::from_slice(&std::fs::read(store_path(&home)).unwrap()).unwrap();
    let names: Vec<&str> = stored["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["iPad \u{202e}x"]);
    let mode = std::fs::metadata(store_path(&home))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let again = devices(&home, &["revoke", "Pixel 8"]);
    assert_eq!(again.status.code(), Some(2), "{again:?}");
    let error = String::from_utf8_lossy(&again.stderr);
    assert!(
        error.contains("no paired device is named \"Pixel 8\""),
        "{error}"
    );
}

#[test]
fn a_suspended_device_is_listed_and_confirmed_again() {
    let home = Home::new();
    write_store(&home);
    let path = store_path(&home);
    let mut stored: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    stored["devices"][0]["badSignatures"] = 5.into();
    stored["devices"][0]["suspendedAt"] = 1_780_004_000u64.into();
    std::fs::write(&path, serde_json::to_vec(&stored).unwrap()).unwrap();
    let listed = stdout(&devices(&home, &["list"]));
    assert!(
        listed
            .lines()
            .nth(1)
            .unwrap()
            .trim_end()
            .ends_with("suspended"),
        "{listed}"
    );
    let output = devices(&home, &["confirm", "Pixel 8"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(stdout(&output), "confirmed Pixel 8\n");
    let stored: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(stored["devices"][0].get("suspendedAt"), None);
    assert_eq!(stored["devices"][0].get("badSignatures"), None);
    assert_eq!(
        devices(&home, &["confirm", "Nobody"]).status.code(),
        Some(2)
    );
}

#[test]
fn a_scope_set_on_the_command_line_is_kept_with_the_device() {
    let home = Home::new();
    write_store(&home);
    let output = devices(
        &home,
        &[
            "scope",
            "Pixel 8",
            "--agent",
            "coder",
            "--project",
            "/w/app",
            "--up-to",
            "text-and-choices",
        ],
    );
    assert!(output.status.success(), "{output:?}");
    assert_eq!(stdout(&output), "scoped Pixel 8\n");
    let stored: Value = serde_json::from_slice(&std::fs::read(store_path(&home)).unwrap()).unwrap();
    assert_eq!(
        stored["devices"][0]["scope"],
        json!({ "agents": ["coder"], "projects": ["/w/app"], "upTo": "text-and-choices" })
    );
    let listed = stdout(&devices(&home, &["list"]));
    assert!(
        listed.contains("up to text-and-choices; agents coder; in /w/app"),
        "{listed}"
    );
    // No option: the default scope again, and nothing of it is written.
    assert!(devices(&home, &["scope", "Pixel 8"]).status.success());
    let stored: Value = serde_json::from_slice(&std::fs::read(store_path(&home)).unwrap()).unwrap();
    assert_eq!(stored["devices"][0].get("scope"), None);
    let wrong = devices(&home, &["scope", "Pixel 8", "--up-to", "everything"]);
    assert_eq!(wrong.status.code(), Some(2), "{wrong:?}");
}

#[test]
fn a_store_of_another_format_is_an_error_and_is_left_alone() {
    let home = Home::new();
    let path = store_path(&home);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"{\"version\":9,\"devices\":[]}").unwrap();
    for args in [&["list"][..], &["revoke", "x"][..]] {
        let output = devices(&home, args);
        assert_eq!(output.status.code(), Some(20), "{output:?}");
        let error = String::from_utf8_lossy(&output.stderr);
        assert!(error.contains("not a device list askdesk wrote"), "{error}");
    }
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"{\"version\":9,\"devices\":[]}"
    );
}

#[test]
fn list_says_whether_each_phone_is_woken_and_when_its_push_service_dropped_it() {
    let home = Home::new();
    let path = store_path(&home);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let subscription = json!({ "endpoint": "https://fcm.googleapis.com/fcm/send/x",
                               "keys": { "p256dh": "BKey", "auth": "secret" } });
    let store = json!({
        "version": 1,
        "devices": [
            { "name": "woken", "publicKey": "B1", "pairedAt": 1_780_000_000u64, "push": subscription },
            { "name": "dropped", "publicKey": "B2", "pairedAt": 1_780_000_000u64,
              "pushDropped": { "at": 1_780_003_600u64, "status": 410 } },
            { "name": "silent", "publicKey": "B3", "pairedAt": 1_780_000_000u64 }
        ]
    });
    std::fs::write(&path, serde_json::to_vec_pretty(&store).unwrap()).unwrap();
    let output = devices(&home, &["list"]);
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("PUSH"), "{text}");
    let push_column = lines[0].find("PUSH").unwrap();
    let push = |line: &str| line[push_column..].split("  ").next().unwrap().to_owned();
    assert_eq!(push(lines[1]), "on", "{text}");
    assert_eq!(
        push(lines[2]),
        "dropped 2026-05-28 21:26:40 (410)",
        "{text}"
    );
    assert_eq!(push(lines[3]), "off", "{text}");
}
