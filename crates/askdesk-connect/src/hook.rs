//! askdesk's `PermissionRequest` entry in Claude Code's `settings.json` or Codex's `hooks.json`:
//! merged without clobbering what is there, idempotent, with a backup of the previous file; a
//! settings file that is a symbolic link is written through it. `askdesk hook install|uninstall`,
//! `askdesk doctor` and the desktop's Connect view all use this.

use std::path::{Path, PathBuf};

use askdesk_i18n::t;
use jsonc_parser::cst::{CstArray, CstObject, CstObjectProp};
use serde_json::Value;

use crate::change::Change;
use crate::document::{self, entry_value, property, render, Document, Entry};
use crate::error::{Error, Result};
use crate::HookClient;

/// The entry askdesk's hook has in a client's settings: which prompts, how long, what runs.
#[derive(Debug, Clone, PartialEq)]
pub struct HookEntry {
    pub client: HookClient,
    pub matcher: String,
    pub timeout: u64,
    pub command: String,
}

impl HookEntry {
    /// The entry `askdesk hook install` writes: `program` (the `askdesk` executable) runs
    /// `hook <client>`. `socket` is the broker's socket as resolved, `named` the `--socket` given,
    /// if any; `timeout` defaults to the client's.
    pub fn new(
        client: HookClient,
        program: &Path,
        socket: &Path,
        named: Option<&Path>,
        matcher: &str,
        timeout: Option<u64>,
        mcp_server: &str,
    ) -> Result<HookEntry> {
        // Codex runs every hook with the environment of the first `codex` started (its app-server
        // outlives the terminal that started it), so `ASKDESK_SOCKET` or `XDG_RUNTIME_DIR` given to a
        // later `codex` would not reach the hook: its command names the socket, always.
        let socket = match client {
            HookClient::ClaudeCode => named,
            HookClient::Codex => Some(socket),
        };
        let mut command = our_command(program, client, socket)?;
        if client == HookClient::ClaudeCode && mcp_server != crate::MCP_SERVER {
            command.push_str(&format!(" --mcp-server={}", shell_quote(mcp_server)));
        }
        Ok(HookEntry {
            client,
            matcher: matcher.to_owned(),
            timeout: timeout.unwrap_or(client.default_timeout()),
            command,
        })
    }

    /// The snippet to merge by hand: `{"hooks": {"PermissionRequest": [<entry>]}}`.
    pub fn snippet(&self) -> String {
        render(&Entry::Object(vec![(
            "hooks".into(),
            hooks_entry(self.group()),
        )]))
    }

    fn group(&self) -> Entry {
        group(&self.matcher, self.timeout, &self.command)
    }
}

/// What the settings file at `path` holds of askdesk's hook for `entry`'s client.
#[derive(Debug, Clone, PartialEq)]
pub enum HookState {
    /// No entry of ours.
    Absent,
    /// Exactly the entry `entry` would write, once.
    Current,
    /// Ours, but not what would be written now (another path, socket or timeout), or more than
    /// one: the commands found.
    Outdated(Vec<String>),
}

/// What `path` holds of our hook, compared with `entry`; an error when the file cannot be read
/// or is not the JSON askdesk expects.
pub fn state(path: &Path, entry: &HookEntry) -> Result<HookState> {
    let list = groups(&Document::load(&link_target(path)?)?, path)?;
    let commands = commands_in(&list, entry.client);
    Ok(if commands.is_empty() {
        HookState::Absent
    } else if commands.len() == 1 && list.contains(&entry_value(&entry.group())) {
        HookState::Current
    } else {
        HookState::Outdated(commands)
    })
}

/// The commands of every handler of ours in the file (none when it does not exist).
pub fn installed_commands(path: &Path, client: HookClient) -> Result<Vec<String>> {
    let list = groups(&Document::load(&link_target(path)?)?, path)?;
    Ok(commands_in(&list, client))
}

/// What `hooks.PermissionRequest` holds, as read (nothing when it is missing).
fn groups(document: &Document, path: &Path) -> Result<Vec<Value>> {
    let (_, _, list) = permission_requests(&document.object(), path)?;
    Ok(list
        .map(|list| list.elements().iter().map(document::value).collect())
        .unwrap_or_default())
}

/// What an installed hook command runs: the program, and the socket it names (`--socket PATH` or
/// `--socket=PATH`), if any. `None` for a command that is not askdesk's.
pub fn command_parts(command: &str) -> Option<(String, Option<String>)> {
    let words = shell_words(command)?;
    let mut words = words.iter().map(String::as_str);
    let program = skip_launchers(&mut words)?.to_owned();
    let mut socket = None;
    while let Some(word) = words.next() {
        match word {
            "--socket" => socket = words.next().map(str::to_owned),
            _ => {
                if let Some(path) = word.strip_prefix("--socket=") {
                    socket = Some(path.to_owned());
                }
            }
        }
        if word == "hook" {
            break;
        }
    }
    Some((program, socket))
}

fn commands_in(list: &[Value], client: HookClient) -> Vec<String> {
    list.iter()
        .filter_map(|group| group.get("hooks").and_then(Value::as_array))
        .flatten()
        .filter(|handler| is_ours(handler, client))
        .filter_map(|handler| handler.get("command").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// The file at `path` with `entry` merged in: our earlier entries replaced where the first of
/// them stood (else ours comes first), everything else kept as it was written. A change that changes nothing when the
/// entry is there.
pub fn install(path: &Path, entry: &HookEntry) -> Result<Change> {
    let target = link_target(path)?;
    let doc = Document::load(&target)?;
    let group = entry.group();
    match permission_requests(&doc.object(), path)? {
        (None, _, _) => document::prepend(&doc.object(), "hooks", hooks_entry(group)),
        (Some(hooks), _, None) => {
            document::prepend(&hooks, "PermissionRequest", Entry::Array(vec![group]))
        }
        (Some(_), _, Some(list)) => {
            let groups: Vec<Value> = list.elements().iter().map(document::value).collect();
            let installed = groups
                .iter()
                .filter(|g| holds_ours(g, entry.client))
                .count();
            if installed == 1 && groups.contains(&entry_value(&group)) {
                return Ok(Change::none(path, &target, &doc));
            }
            let at = remove_ours(&list, entry.client).unwrap_or(0);
            document::insert(&list, at, group);
        }
    }
    Ok(Change::new(path, &target, &doc))
}

/// The file at `path` without our entries for `client`, and without the `PermissionRequest`
/// and `hooks` they leave empty; everything else stays as it was written. A change that changes
/// nothing when there are none.
pub fn uninstall(path: &Path, client: HookClient) -> Result<Change> {
    let target = link_target(path)?;
    let doc = Document::load(&target)?;
    if !doc.existed() {
        return Ok(Change::none(path, &target, &doc));
    }
    let (Some(hooks), Some(hooks_prop), Some(list)) = permission_requests(&doc.object(), path)?
    else {
        return Ok(Change::none(path, &target, &doc));
    };
    if remove_ours(&list, client).is_none() {
        return Ok(Change::none(path, &target, &doc));
    }
    if list.elements().is_empty() {
        if let Some(requests) = property(&hooks, "PermissionRequest") {
            requests.remove();
        }
        if hooks.properties().is_empty() {
            hooks_prop.remove();
        }
    }
    Ok(Change::new(path, &target, &doc))
}

/// Where the client reads its hooks: `~/.claude/settings.json`, or `$CODEX_HOME/hooks.json`
/// (`~/.codex/hooks.json`), unless `--config` names the file.
pub fn settings_path(client: HookClient, config: Option<&Path>) -> Result<PathBuf> {
    if let Some(config) = config {
        return Ok(config.to_owned());
    }
    Ok(
        crate::client::config_dir(client.into())?.join(match client {
            HookClient::ClaudeCode => "settings.json",
            HookClient::Codex => "hooks.json",
        }),
    )
}

/// The file `path` names: `path` itself, or, when it is a symbolic link, the file the link leads
/// to (through every link on the way), so that writing it keeps the link; a link that leads
/// nowhere is an error.
pub(crate) fn link_target(path: &Path) -> Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(path).map_err(|e| {
            // The link's own text; a link read a moment ago that cannot be read now says "?".
            let target = std::fs::read_link(path)
                .map_or_else(|_| "?".to_owned(), |to| to.display().to_string());
            let path = path.display().to_string();
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::Input(t!("connect-link-nowhere", path = path, target = target))
            } else {
                Error::Input(t!(
                    "connect-link-unfollowable",
                    path = path,
                    target = target,
                    error = e.to_string()
                ))
            }
        }),
        _ => Ok(path.to_owned()),
    }
}

/// `path`, and the file it links to when that is another.
pub(crate) fn shown(path: &Path, target: &Path) -> String {
    if path == target {
        path.display().to_string()
    } else {
        t!(
            "connect-link-shown",
            path = path.display().to_string(),
            target = target.display().to_string()
        )
    }
}

/// The command the client runs: `program` (askdesk), by absolute path, and `hook <client>`.
fn our_command(program: &Path, client: HookClient, socket: Option<&Path>) -> Result<String> {
    // The client runs the hook in its project's directory: a relative path would name another
    // socket there.
    let socket = match socket {
        Some(path) => {
            let path = std::path::absolute(path).map_err(|e| {
                Error::Internal(t!(
                    "connect-cannot-absolute",
                    path = path.display().to_string(),
                    error = e.to_string()
                ))
            })?;
            format!(" --socket {}", shell_quote(&path.display().to_string()))
        }
        None => String::new(),
    };
    Ok(format!(
        "{}{socket} hook {}",
        shell_quote(&program.display().to_string()),
        client.slug()
    ))
}

/// `{"matcher": ..., "hooks": [{"type": "command", "command": ..., "timeout": ...}]}`.
fn group(matcher: &str, timeout: u64, command: &str) -> Entry {
    Entry::Object(vec![
        ("matcher".into(), matcher.into()),
        (
            "hooks".into(),
            Entry::Array(vec![Entry::Object(vec![
                ("type".into(), "command".into()),
                ("command".into(), command.into()),
                ("timeout".into(), timeout.into()),
            ])]),
        ),
    ])
}

/// `{"PermissionRequest": [group]}`, the `hooks` a file without one gets.
fn hooks_entry(group: Entry) -> Entry {
    Entry::Object(vec![(
        "PermissionRequest".into(),
        Entry::Array(vec![group]),
    )])
}

/// `hooks` (the object, and its property) and `hooks.PermissionRequest`, each `None` when
/// missing; an error when either has another type.
fn permission_requests(
    root: &CstObject,
    path: &Path,
) -> Result<(Option<CstObject>, Option<CstObjectProp>, Option<CstArray>)> {
    let path = path.display().to_string();
    let Some(hooks_prop) = property(root, "hooks") else {
        return Ok((None, None, None));
    };
    let hooks = hooks_prop.object_value().ok_or_else(|| {
        Error::Input(t!(
            "connect-key-not-object",
            key = "\"hooks\"",
            path = path.as_str()
        ))
    })?;
    let list = property(&hooks, "PermissionRequest")
        .map(|list| {
            list.array_value().ok_or_else(|| {
                Error::Input(t!(
                    "connect-key-not-array",
                    key = "\"hooks.PermissionRequest\"",
                    path = path.as_str()
                ))
            })
        })
        .transpose()?;
    Ok((Some(hooks), Some(hooks_prop), list))
}

/// Removes our handlers from every group, and the groups they leave empty; returns the index of
/// the first group that held one.
fn remove_ours(list: &CstArray, client: HookClient) -> Option<usize> {
    let groups = list.elements();
    let first = groups
        .iter()
        .position(|g| holds_ours(&document::value(g), client))?;
    for group in groups {
        let Some(handlers) = group
            .as_object()
            .and_then(|group| property(&group, "hooks"))
            .and_then(|handlers| handlers.array_value())
        else {
            continue;
        };
        let (ours, theirs): (Vec<_>, Vec<_>) = handlers
            .elements()
            .into_iter()
            .partition(|handler| is_ours(&document::value(handler), client));
        if theirs.is_empty() && !ours.is_empty() {
            group.remove();
        } else {
            ours.into_iter().for_each(|handler| handler.remove());
        }
    }
    Some(first.min(list.elements().len()))
}

fn holds_ours(group: &Value, client: HookClient) -> bool {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .is_some_and(|handlers| handlers.iter().any(|h| is_ours(h, client)))
}

/// Whether a handler runs `askdesk hook <client>` (whatever path askdesk has). Its command, split
/// into words as `sh` would, must be: any `NAME=value` assignments, `exec`, `env` and its options; the
/// program, `askdesk` or a path ending in `/askdesk`; askdesk's options (words starting with `-`,
/// and the path after `--socket`); `hook <client>`; then only options. A command that merely
/// mentions the words, or runs more than that, is the user's.
fn is_ours(handler: &Value, client: HookClient) -> bool {
    let Some(words) = handler
        .get("command")
        .and_then(Value::as_str)
        .and_then(shell_words)
    else {
        return false;
    };
    let mut words = words.iter().map(String::as_str);
    let Some(program) = skip_launchers(&mut words) else {
        return false;
    };
    if !(program == "askdesk" || program.ends_with("/askdesk")) {
        return false;
    }
    loop {
        match words.next() {
            Some("--socket") => {
                words.next();
            }
            Some(option) if option.starts_with('-') => {}
            Some("hook") => break,
            _ => return false,
        }
    }
    words.next() == Some(client.slug()) && words.all(|word| word.starts_with('-'))
}

/// Takes the words that only set up how the program runs (`NAME=value` assignments, `exec`, and
/// `env` with its options, `-i`, `-u NAME`, `-C DIR` and their long forms) and returns the program.
/// `env -S` splits a string into more words, which is more than setting up: `None`.
fn skip_launchers<'a>(words: &mut impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut in_env = false;
    loop {
        let word = words.next()?;
        match word {
            "exec" => in_env = false,
            "env" => in_env = true,
            _ if is_assignment(word) => {}
            "-u" | "--unset" | "-C" | "--chdir" if in_env => {
                words.next()?;
            }
            _ if in_env && (word.starts_with("-S") || word.starts_with("--split-string")) => {
                return None
            }
            _ if in_env && word.starts_with('-') => {}
            program => return Some(program),
        }
    }
}

/// `NAME=value`, a shell variable assignment.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `command`'s words as `sh` splits them, with quotes and backslashes taken out; `None` when a
/// quote is not closed. Operators (`;`, `&&`, `|`, redirections) are not told apart: they stay in
/// the words, which then match nothing.
pub(crate) fn shell_words(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let text = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => text.push(c),
                    }
                }
            }
            '"' => {
                let text = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('$' | '`' | '"' | '\\') => text.push(c),
                            '\n' => {}
                            c => text.extend(['\\', c]),
                        },
                        c => text.push(c),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => word.get_or_insert_with(String::new).push('\\'),
            },
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

/// The suffix of the copy of the previous file kept next to it.
const BACKUP_SUFFIX: &str = ".askdesk-backup";

/// Writes `root` to `target` (`path`, or the file the link `path` leads to) through a temporary
/// file beside it and a rename, keeping the previous file as `<path>.askdesk-backup`, next to the
/// name the user knows; returns the backup's path. A file that is read-only is refused, and
/// nothing is written.
pub(crate) fn save(
    path: &Path,
    target: &Path,
    text: &str,
    existed: bool,
) -> Result<Option<PathBuf>> {
    let shown_path = |p: &Path| p.display().to_string();
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::Internal(t!(
                "connect-cannot-create",
                path = shown_path(dir),
                error = e.to_string()
            ))
        })?;
    }
    let previous = if existed {
        Some(std::fs::metadata(target).map_err(|e| {
            Error::Internal(t!(
                "connect-cannot-read",
                path = shown_path(target),
                error = e.to_string()
            ))
        })?)
    } else {
        None
    };
    if let Some(previous) = &previous {
        let shown = shown(path, target);
        if previous.permissions().readonly() {
            return Err(Error::Input(t!("connect-read-only", path = shown)));
        }
        if !writable(target) {
            return Err(Error::Input(t!("connect-not-writable", path = shown)));
        }
    }
    let backup = if existed {
        let backup = PathBuf::from(format!("{}{BACKUP_SUFFIX}", path.display()));
        std::fs::copy(target, &backup).map_err(|e| {
            Error::Internal(t!(
                "connect-cannot-back-up",
                path = shown_path(target),
                backup = shown_path(&backup),
                error = e.to_string()
            ))
        })?;
        Some(backup)
    } else {
        None
    };
    let temporary = PathBuf::from(format!("{}.askdesk-tmp", target.display()));
    std::fs::write(&temporary, text).map_err(|e| {
        Error::Internal(t!(
            "connect-cannot-write",
            path = shown_path(&temporary),
            error = e.to_string()
        ))
    })?;
    if let Some(previous) = &previous {
        // The new file keeps the old one's permissions (settings may hold secrets).
        let _ = std::fs::set_permissions(&temporary, previous.permissions());
    }
    std::fs::rename(&temporary, target).map_err(|e| {
        Error::Internal(t!(
            "connect-cannot-replace",
            path = shown_path(target),
            error = e.to_string()
        ))
    })?;
    Ok(backup)
}

/// Whether this process may write `path` (access(2): the owner, the mode, a read-only mount).
fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return true;
    };
    // SAFETY: access(2) only reads the NUL-terminated path, which outlives the call.
    unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
}

/// `text` as one shell word.
pub(crate) fn shell_quote(text: &str) -> String {
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c));
    if plain && !text.is_empty() {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Document {
        Document::parse(text.into(), true, Path::new("s.json")).unwrap()
    }

    #[test]
    fn our_handlers_are_recognized_wherever_askdesk_lives() {
        let handler = |command: &str| serde_json::json!({ "command": command });
        let c = HookClient::ClaudeCode;
        assert!(is_ours(&handler("/usr/bin/askdesk hook claude-code"), c));
        assert!(is_ours(
            &handler("'/opt/my tools/askdesk' hook claude-code"),
            c
        ));
        assert!(is_ours(&handler("askdesk --socket /s hook claude-code"), c));
        assert!(!is_ours(&handler("/usr/bin/askdesk hook codex"), c));
        assert!(is_ours(&handler("askdesk --socket=/s hook claude-code"), c));
        assert!(is_ours(
            &handler("A=1 exec env B='x y' /bin/askdesk hook claude-code --no-launch"),
            c
        ));
        assert!(is_ours(
            &handler(r#""/opt/it's/askdesk" hook claude-code"#),
            c
        ));
        assert!(is_ours(
            &handler(r"'/a b/it'\''s/askdesk' hook claude-code"),
            c
        ));
        for launched in [
            "env -i /bin/askdesk hook claude-code",
            "env -u HOME --ignore-environment PATH=/bin askdesk hook claude-code",
            "env -C /tmp -uHOME --unset=LANG askdesk hook claude-code",
            "exec env -- askdesk hook claude-code",
        ] {
            assert!(is_ours(&handler(launched), c), "{launched}");
        }
        // env's own options are not the program; -S makes more words of a string.
        assert!(!is_ours(&handler("env -u askdesk hook claude-code"), c));
        assert!(!is_ours(&handler("env -S 'askdesk hook claude-code'"), c));
        assert!(!is_ours(&handler("env -S'askdesk hook' claude-code"), c));
        assert!(!is_ours(&handler("-i askdesk hook claude-code"), c));
        assert!(!is_ours(&handler("other-tool hook claude-code"), c));
        assert!(!is_ours(&handler("my-askdesk hook claude-code"), c));
        assert!(!is_ours(
            &handler("notify-send 'askdesk hook claude-code asked'"),
            c
        ));
        assert!(!is_ours(&handler("echo askdesk hook claude-code"), c));
        assert!(!is_ours(&handler("askdesk hook claude-code && rm x"), c));
        assert!(!is_ours(&handler("askdesk ask hook claude-code"), c));
        assert!(!is_ours(&handler("askdesk hook"), c));
        assert!(!is_ours(&handler("'askdesk hook claude-code"), c));
        assert!(!is_ours(&serde_json::json!({ "type": "command" }), c));
    }

    #[test]
    fn removal_keeps_the_users_handlers() {
        let doc = parse(
            r#"{"hooks":{"PermissionRequest":[
                {"matcher":"Bash","hooks":[{"type":"command","command":"mine.sh"},{"type":"command","command":"askdesk hook claude-code"}]},
                {"matcher":"*","hooks":[{"type":"command","command":"askdesk hook claude-code"}]},
                {"matcher":"*","hooks":[]}]}}"#,
        );
        let (_, _, list) = permission_requests(&doc.object(), Path::new("s.json")).unwrap();
        assert_eq!(remove_ours(&list.unwrap(), HookClient::ClaudeCode), Some(0));
        assert_eq!(
            doc.text(),
            r#"{"hooks":{"PermissionRequest":[
                {"matcher":"Bash","hooks":[{"type":"command","command":"mine.sh"}]},
                {"matcher":"*","hooks":[]}]}}"#
        );
    }

    #[test]
    fn unexpected_shapes_are_errors() {
        for text in [r#"{"hooks":[]}"#, r#"{"hooks":{"PermissionRequest":{}}}"#] {
            let doc = parse(text);
            let error = permission_requests(&doc.object(), Path::new("s.json")).unwrap_err();
            assert!(error.to_string().contains("left unchanged"), "{error}");
        }
    }

    #[test]
    fn an_installed_command_names_its_program_and_socket() {
        assert_eq!(
            command_parts("'/opt/a b/askdesk' --socket /run/s.sock hook codex"),
            Some((
                "/opt/a b/askdesk".to_owned(),
                Some("/run/s.sock".to_owned())
            ))
        );
        assert_eq!(
            command_parts("env A=1 /usr/bin/askdesk --socket=/s hook claude-code"),
            Some(("/usr/bin/askdesk".to_owned(), Some("/s".to_owned())))
        );
        assert_eq!(
            command_parts("/usr/bin/askdesk hook claude-code"),
            Some(("/usr/bin/askdesk".to_owned(), None))
        );
    }

    #[test]
    fn paths_are_quoted_for_the_shell() {
        assert_eq!(shell_quote("/usr/bin/askdesk"), "/usr/bin/askdesk");
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
        for path in ["/a b/it's", "plain", "\"$x\"\\"] {
            assert_eq!(
                shell_words(&format!("{} hook", shell_quote(path))),
                Some(vec![path.to_owned(), "hook".to_owned()])
            );
        }
        assert_eq!(
            shell_words(r#"a\ b "c\"d\x" ''e"#),
            Some(vec!["a b".to_owned(), "c\"d\\x".to_owned(), "e".to_owned()])
        );
    }
}
