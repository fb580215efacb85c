//! Edits of the rules file that keep everything a person wrote: appending a rule and setting a
//! rule's `mode`; and a new file, created with a commented header when the person asks to open a
//! file that is not there yet. Every comment, blank line and key order outside the edit stays byte for byte; the
//! whole resulting text must load with [`RuleSet::parse`] before anything is written, and the file
//! is replaced atomically (a temporary file in the same directory, renamed over it, with the old
//! file's permissions), so it is never left half-written. The running [`crate::Engine`] picks the
//! change up by its reload.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use askdesk_i18n::t;
use toml_edit::{DocumentMut, Item, Value};

use crate::file::{self, Error, Mode, RuleSet};

/// Held while an edit reads, changes and writes the file: two edits from one process (a rule
/// saved while another's mode is switched) never both start from the same old text, which would
/// lose the first.
static EDITING: Mutex<()> = Mutex::new(());

/// Appends one rule, written as a rules file holding exactly one `[[rule]]` (comments before it
/// are kept with it), at the end of the rules file at `path`. Creates the file and its directory
/// when missing. Refused, with the file unchanged: a file that does not load, a rule text that is
/// not exactly one valid rule, a rule whose name the file already has.
pub fn append_rule(path: &Path, rule_toml: &str) -> Result<(), Error> {
    let _one_at_a_time = askdesk_core::sync::lock(&EDITING);
    let path = real_path(path);
    let refuse = |message: String| refused(&path, message);
    let existing = read(&path)?.unwrap_or_default();
    let rules = loaded(&path, &existing)?;

    let draft = RuleSet::parse(rule_toml)
        .map_err(|e| refuse(t!("rules-edit-new-invalid", error = e.to_string())))?;
    let [rule] = draft.rules.as_slice() else {
        return Err(refuse(t!("rules-edit-not-one", count = draft.rules.len())));
    };
    let written_as_tables = rule_toml
        .parse::<DocumentMut>()
        .ok()
        .is_some_and(|doc| doc.get("rule").is_some_and(Item::is_array_of_tables));
    if !written_as_tables {
        return Err(refuse(t!("rules-edit-not-table")));
    }
    if let Some(same) = rules.get(&rule.name) {
        return Err(refuse(t!(
            "rules-edit-name-taken",
            name = format!("{:?}", rule.name),
            line = same.line
        )));
    }
    if existing
        .parse::<DocumentMut>()
        .ok()
        .and_then(|doc| doc.get("rule").map(|item| !item.is_array_of_tables()))
        .unwrap_or(false)
    {
        return Err(refuse(t!("rules-edit-inline-array")));
    }

    let mut text = existing;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if !text.trim().is_empty() && !text.ends_with("\n\n") {
        text.push('\n');
    }
    text.push_str(rule_toml);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    RuleSet::parse(&text)
        .map_err(|e| refuse(t!("rules-edit-would-not-load", error = e.to_string())))?;
    write_atomically(&path, &text)
}

/// Sets the `mode` of the rule named `name`: rewrites its `mode` value in place (keeping the
/// comments around it), or adds `mode = "..."` at the end of the rule when it has none. Setting
/// `on` on a rule without `mode` changes nothing, since `on` is the default. Refused, with the file
/// unchanged: a missing or broken file, no rule of that name.
pub fn set_mode(path: &Path, name: &str, mode: Mode) -> Result<(), Error> {
    let _one_at_a_time = askdesk_core::sync::lock(&EDITING);
    let path = real_path(path);
    let refuse = |message: String| refused(&path, message);
    let Some(existing) = read(&path)? else {
        return Err(refuse(t!("rules-edit-no-file")));
    };
    loaded(&path, &existing)?;
    let mut doc: DocumentMut = existing.parse().map_err(|e: toml_edit::TomlError| {
        refuse(t!("rules-edit-not-toml", error = e.to_string()))
    })?;
    let Some(rules) = doc.get_mut("rule").and_then(Item::as_array_of_tables_mut) else {
        return Err(refuse(t!("rules-edit-not-tables")));
    };
    let Some(table) = rules
        .iter_mut()
        .find(|t| t.get("name").and_then(Item::as_str) == Some(name))
    else {
        return Err(refuse(t!("rules-edit-no-rule", name = format!("{name:?}"))));
    };
    match table.get_mut("mode") {
        Some(Item::Value(old)) => {
            let mut new = Value::from(mode.as_str());
            *new.decor_mut() = old.decor().clone();
            *old = new;
        }
        Some(_) => {
            return Err(refuse(t!(
                "rules-edit-mode-not-string",
                name = format!("{name:?}")
            )))
        }
        None if mode == Mode::On => return Ok(()),
        None => {
            table.insert("mode", toml_edit::value(mode.as_str()));
        }
    }
    let text = doc.to_string();
    RuleSet::parse(&text)
        .map_err(|e| refuse(t!("rules-edit-mode-would-not-load", error = e.to_string())))?;
    write_atomically(&path, &text)
}

/// A rule to start from, as the Rules view shows it while there are none and a new file carries
/// it commented out.
pub const EXAMPLE: &str = "[[rule]]\nname = \"tests\"\nmatch = { tool = \"Bash\", command = \"cargo test*\", cwd = \"/home/me/src\" }\nanswer = \"Allow once\"\n";

/// What a rules file the app creates holds: what it is, where the rules are explained, and
/// [`EXAMPLE`] commented out. No rule is in force until the person writes one.
pub fn new_file_text() -> String {
    let mut text = String::from(
        "# askdesk answer rules: each [[rule]] answers the questions it matches, so they never reach you.\n\
         # Rules are tried in order; the file is read again as soon as it is saved.\n\
         # How to write them: docs/rules.md in askdesk's documentation; `askdesk rules test`\n\
         # replays your history through them.\n\
         #\n\
         # For example, running the tests in one project is always fine:\n\
         #\n",
    );
    for line in EXAMPLE.lines() {
        text.push_str("# ");
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// Creates the rules file at `path` (and its directory) holding [`new_file_text`] when there is
/// none; a file already there, whatever it holds, is left as it is. Returns whether it was created.
pub fn create_if_missing(path: &Path) -> Result<bool, Error> {
    let _one_at_a_time = askdesk_core::sync::lock(&EDITING);
    let failed = |error: std::io::Error| Error::Write {
        path: path.to_owned(),
        error,
    };
    fs::create_dir_all(file::directory_of(path)).map_err(failed)?;
    // `create_new`: a file made meanwhile by anyone else is never written over.
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(mut created) => {
            created
                .write_all(new_file_text().as_bytes())
                .map_err(failed)?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(failed(e)),
    }
}

fn refused(path: &Path, message: String) -> Error {
    Error::Refused {
        path: path.to_owned(),
        message,
    }
}

/// The file to edit: a symbolic link is followed, so a linked rules file is edited where it lives
/// and the link stays.
fn real_path(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// The file's text; `None` when it does not exist.
fn read(path: &Path) -> Result<Option<String>, Error> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

/// The file's rules; a file that does not load is refused, since editing it could hide or
/// compound the problem.
fn loaded(path: &Path, text: &str) -> Result<RuleSet, Error> {
    RuleSet::parse(text)
        .map_err(|e| refused(path, t!("rules-edit-does-not-load", error = e.to_string())))
}

/// Writes `text` to a new file beside `path` and renames it over `path`: a reader sees the old
/// file or the new one, never a part. The old file's permissions carry over.
fn write_atomically(path: &Path, text: &str) -> Result<(), Error> {
    let failed = |error: std::io::Error| Error::Write {
        path: path.to_owned(),
        error,
    };
    let dir = file::directory_of(path);
    fs::create_dir_all(dir).map_err(failed)?;
    let permissions = fs::metadata(path).ok().map(|m| m.permissions());
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (temp, mut file) = (0u32..)
        .map(|n| dir.join(format!(".{file_name}.{}.{n}.tmp", std::process::id())))
        .find_map(|temp| {
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temp)
            {
                Ok(file) => Some(Ok((temp, file))),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
                Err(e) => Some(Err(e)),
            }
        })
        .expect("an unbounded range")
        .map_err(failed)?;
    let written = (|| {
        file.write_all(text.as_bytes())?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&temp, path)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(failed(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMENTED: &str = "# My rules.\n\n# Tests are fine.\n[[rule]]\nname = \"tests\"   # short\nmatch = { tool = \"Bash\", command = \"cargo test*\" }\nanswer = \"Allow once\"\n\n\n# end of file, keep me\n";

    const DRAFT: &str =
        "# From an answer on 2026-12-03.\n[[rule]]\nname = \"deploy\"\nmatch = { header = \"Deploy\" }\nanswer = \"No\"\n";

    #[test]
    fn a_missing_file_is_created_with_the_commented_example_and_an_existing_one_is_kept() {
        let (_dir, path) = setup(None);
        assert!(create_if_missing(&path).unwrap());
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# askdesk answer rules"), "{text}");
        assert!(text.lines().all(|l| l.starts_with('#')), "{text}");
        assert!(RuleSet::parse(&text).unwrap().rules.is_empty());
        // The example, uncommented, is one valid rule.
        let example: String = text
            .lines()
            .filter_map(|l| l.strip_prefix("# "))
            .skip_while(|l| !l.starts_with("[[rule]]"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(example, EXAMPLE);
        assert_eq!(RuleSet::parse(EXAMPLE).unwrap().rules.len(), 1);
        // Created again: a file already there, even a broken one, is left as it is.
        fs::write(&path, "[[rule]]\nname = \"half\"\n").unwrap();
        assert!(!create_if_missing(&path).unwrap());
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "[[rule]]\nname = \"half\"\n"
        );
    }

    fn setup(text: Option<&str>) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("askdesk").join("rules.toml");
        if let Some(text) = text {
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, text).unwrap();
        }
        (dir, path)
    }

    fn contents(path: &Path) -> String {
        fs::read_to_string(path).unwrap()
    }

    /// No temporary file is left beside the rules file.
    #[track_caller]
    fn only_the_file(path: &Path) {
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["rules.toml"]);
    }

    #[track_caller]
    fn refusal(result: Result<(), Error>, says: &str) {
        match result {
            Err(e @ Error::Refused { .. }) => {
                let message = e.to_string();
                assert!(message.contains(says), "{message:?} should say {says:?}");
                assert!(message.ends_with("the file is unchanged"), "{message}");
            }
            other => panic!("expected a refusal saying {says:?}, got {other:?}"),
        }
    }

    #[test]
    fn append_keeps_every_byte_and_adds_the_rule_last() {
        let (_dir, path) = setup(Some(COMMENTED));
        append_rule(&path, DRAFT).unwrap();
        let text = contents(&path);
        assert_eq!(text, format!("{COMMENTED}\n{DRAFT}"));
        let names: Vec<_> = RuleSet::parse(&text)
            .unwrap()
            .rules
            .into_iter()
            .map(|r| r.name)
            .collect();
        assert_eq!(names, ["tests", "deploy"]);
        only_the_file(&path);
    }

    #[test]
    fn append_separates_the_rule_with_one_blank_line() {
        let (_dir, path) = setup(Some("[[rule]]\nname = \"a\"\nask = true"));
        append_rule(&path, DRAFT).unwrap();
        assert_eq!(
            contents(&path),
            format!("[[rule]]\nname = \"a\"\nask = true\n\n{DRAFT}")
        );
    }

    #[test]
    fn append_creates_a_missing_file_and_directory() {
        let (_dir, path) = setup(None);
        append_rule(&path, DRAFT.trim_end()).unwrap();
        assert_eq!(contents(&path), DRAFT);
        only_the_file(&path);
    }

    #[test]
    fn append_refuses_a_broken_file() {
        let broken = "# half done\n[[rule]]\nname = \"a\"\n";
        let (_dir, path) = setup(Some(broken));
        refusal(append_rule(&path, DRAFT), "line 2, column 1");
        refusal(append_rule(&path, DRAFT), "fix it first");
        assert_eq!(contents(&path), broken);
        only_the_file(&path);
    }

    #[test]
    fn append_refuses_a_name_the_file_has() {
        let (_dir, path) = setup(Some(COMMENTED));
        let twin = DRAFT.replace("deploy", "tests");
        refusal(
            append_rule(&path, &twin),
            "a rule named \"tests\" already exists (line 4)",
        );
        assert_eq!(contents(&path), COMMENTED);
    }

    #[test]
    fn append_refuses_anything_but_one_valid_rule() {
        let (_dir, path) = setup(Some(COMMENTED));
        refusal(append_rule(&path, ""), "exactly one [[rule]], not 0");
        refusal(
            append_rule(&path, &format!("{DRAFT}\n{}", DRAFT.replace("deploy", "x"))),
            "exactly one [[rule]], not 2",
        );
        refusal(
            append_rule(&path, "[[rule]]\nname = \"x\"\n"),
            "the new rule is not valid: line 1, column 1: rule \"x\" has no action",
        );
        refusal(
            append_rule(&path, "rule = [{ name = \"x\", ask = true }]\n"),
            "written as a [[rule]] table",
        );
        assert_eq!(contents(&path), COMMENTED);
    }

    #[test]
    fn append_refuses_after_an_inline_array() {
        let inline = "rule = [{ name = \"a\", ask = true }]\n";
        let (_dir, path) = setup(Some(inline));
        refusal(append_rule(&path, DRAFT), "inline array");
        assert_eq!(contents(&path), inline);
    }

    #[cfg(unix)]
    #[test]
    fn edits_keep_the_permissions_and_follow_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, real) = setup(Some(COMMENTED));
        fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("linked.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        append_rule(&link, DRAFT).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(contents(&real), format!("{COMMENTED}\n{DRAFT}"));
        let mode = fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn edits_at_the_same_time_lose_nothing() {
        let (_dir, path) = setup(Some(COMMENTED));
        std::thread::scope(|scope| {
            for n in 0..8 {
                let path = &path;
                scope.spawn(move || {
                    let rule = DRAFT.replace("\"deploy\"", &format!("\"deploy-{n}\""));
                    append_rule(path, &rule).unwrap();
                    set_mode(path, &format!("deploy-{n}"), Mode::Shadow).unwrap();
                });
            }
        });
        let text = contents(&path);
        assert!(text.starts_with(COMMENTED), "{text}");
        let rules = RuleSet::parse(&text).unwrap().rules;
        assert_eq!(rules.len(), 9);
        for n in 0..8 {
            let rule = rules.iter().find(|r| r.name == format!("deploy-{n}"));
            assert_eq!(
                rule.map(|r| r.mode),
                Some(Mode::Shadow),
                "deploy-{n} in\n{text}"
            );
        }
        only_the_file(&path);
    }

    const THREE: &str = "# three rules\n\n[[rule]]\nname = \"one\"\nanswer = \"Yes\"\nmode = \"shadow\"  # trying it\n\n# the second one\n[[rule]]\nname = \"two\"\n# why: noisy\nanswer = \"No\"\nmatch = { header = \"Two\" }\n\n[[rule]]\nname = \"three\"\n# not yet\nmode = \"off\" # later\nask = true\n";

    #[test]
    fn set_mode_on_the_second_of_three_touches_only_it() {
        let (_dir, path) = setup(Some(THREE));
        set_mode(&path, "two", Mode::Off).unwrap();
        let expected = THREE.replace(
            "match = { header = \"Two\" }\n",
            "match = { header = \"Two\" }\nmode = \"off\"\n",
        );
        assert_eq!(contents(&path), expected);
        set_mode(&path, "two", Mode::Shadow).unwrap();
        assert_eq!(
            contents(&path),
            expected.replace("\"Two\" }\nmode = \"off\"", "\"Two\" }\nmode = \"shadow\"")
        );
        let modes: Vec<_> = RuleSet::parse(&contents(&path))
            .unwrap()
            .rules
            .into_iter()
            .map(|r| r.mode)
            .collect();
        assert_eq!(modes, [Mode::Shadow, Mode::Shadow, Mode::Off]);
        only_the_file(&path);
    }

    #[test]
    fn set_mode_rewrites_a_value_keeping_its_comments() {
        let (_dir, path) = setup(Some(THREE));
        set_mode(&path, "three", Mode::On).unwrap();
        assert_eq!(
            contents(&path),
            THREE.replace("mode = \"off\" # later", "mode = \"on\" # later")
        );
        set_mode(&path, "one", Mode::Off).unwrap();
        assert!(contents(&path).contains("mode = \"off\"  # trying it\n"));
    }

    #[test]
    fn set_mode_on_a_rule_without_mode_leaves_the_file_alone() {
        let (_dir, path) = setup(Some(THREE));
        set_mode(&path, "two", Mode::On).unwrap();
        assert_eq!(contents(&path), THREE);
    }

    #[test]
    fn set_mode_refusals() {
        let (_dir, path) = setup(Some(THREE));
        refusal(
            set_mode(&path, "four", Mode::Off),
            "there is no rule named \"four\"",
        );
        assert_eq!(contents(&path), THREE);
        let (_dir, missing) = setup(None);
        refusal(
            set_mode(&missing, "one", Mode::Off),
            "there is no rules file",
        );
        assert!(!missing.exists());
        let broken = "[[rule]]\nname = \"one\"\nanswer = \"Yes\"\nafter = \"soon\"\n";
        let (_dir, path) = setup(Some(broken));
        refusal(set_mode(&path, "one", Mode::Off), "line 4, column 9");
        assert_eq!(contents(&path), broken);
    }
}
