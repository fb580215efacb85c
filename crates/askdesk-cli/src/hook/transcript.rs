//! Claude Code's transcript followed while a prompt waits: the prompt's tool call found by its
//! name and input, and the moment that call has a result there, which means the prompt was
//! settled without askdesk (answered in the terminal, interrupted), so the question is withdrawn.
//!
//! Claude Code does not end a `PermissionRequest` hook when the person answers its own prompt,
//! and the hook input names no tool call id. Its transcript (`transcript_path`, JSON lines) does:
//! the assistant's `tool_use` block (`id`, `name`, `input`) is written before the prompt, and a
//! `tool_result` naming that id once the call is over: run after "Yes", refused after "No",
//! interrupted by Esc. Nothing is written at the moment of an approval, so an approved call's
//! question leaves askdesk when the call finishes.
//!
//! Fail safe: the prompt's calls are the `tool_use` blocks with exactly the prompt's tool name and
//! input that have no result when the hook first reads the transcript, or that are written after.
//! The question is withdrawn only once there is at least one such call and every one of them has
//! its result; a call of another tool or with other input never counts, and neither does an
//! identical call settled before this prompt. Whatever cannot be read or followed leaves the
//! question waiting, as it did before.

use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

/// How often the transcript is read when its directory cannot be watched.
const POLL: Duration = Duration::from_secs(1);

/// The calls of one prompt, as the transcript's lines arrive.
#[derive(Debug)]
pub struct Calls {
    tool_name: String,
    tool_input: Value,
    /// The ids of the prompt's calls: unsettled at the first reading, or written since.
    ours: HashSet<String>,
    /// The ids of every result seen.
    results: HashSet<String>,
    /// Whether the first reading is over.
    started: bool,
}

/// One transcript line, as far as it matters here.
#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    message: Option<Message>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<Value>,
}

impl Calls {
    pub fn new(tool_name: &str, tool_input: &Map<String, Value>) -> Calls {
        Calls {
            tool_name: tool_name.to_owned(),
            tool_input: Value::Object(tool_input.clone()),
            ours: HashSet::new(),
            results: HashSet::new(),
            started: false,
        }
    }

    /// Reads the lines of the first reading, the transcript as it was when the prompt began.
    pub fn start<'a>(&mut self, lines: impl IntoIterator<Item = &'a str>) {
        let mut matching = Vec::new();
        for line in lines {
            self.read(line, &mut matching);
        }
        // An identical call settled before this prompt is not this prompt's.
        self.ours
            .extend(matching.into_iter().filter(|id| !self.results.contains(id)));
        self.started = true;
    }

    /// Reads one line written after the first reading.
    pub fn line(&mut self, line: &str) {
        debug_assert!(self.started, "the first reading comes first");
        let mut matching = Vec::new();
        self.read(line, &mut matching);
        self.ours.extend(matching);
    }

    /// Whether the prompt's calls are known and all of them have their result.
    pub fn settled(&self) -> bool {
        !self.ours.is_empty() && self.ours.iter().all(|id| self.results.contains(id))
    }

    fn read(&mut self, line: &str, matching: &mut Vec<String>) {
        // Most lines are neither; they are not parsed.
        if !(line.contains("\"tool_use\"") || line.contains("\"tool_result\"")) {
            return;
        }
        let Ok(Entry {
            message:
                Some(Message {
                    content: Some(Value::Array(blocks)),
                }),
        }) = serde_json::from_str::<Entry>(line)
        else {
            return;
        };
        for block in &blocks {
            let text = |key: &str| block.get(key).and_then(Value::as_str);
            match text("type") {
                Some("tool_use") => {
                    if let Some(id) = text("id") {
                        if text("name") == Some(self.tool_name.as_str())
                            && block.get("input") == Some(&self.tool_input)
                        {
                            matching.push(id.to_owned());
                        }
                    }
                }
                Some("tool_result") => {
                    if let Some(id) = text("tool_use_id") {
                        self.results.insert(id.to_owned());
                    }
                }
                _ => {}
            }
        }
    }
}

/// Follows the transcript at `path` on a thread of its own; the receiver hears `()` once the
/// prompt's calls are settled there, and nothing when they never are or the transcript cannot be
/// read.
pub fn follow(path: &Path, calls: Calls) -> tokio::sync::oneshot::Receiver<()> {
    let (settled, receiver) = tokio::sync::oneshot::channel();
    let path = path.to_owned();
    let spawned = std::thread::Builder::new()
        .name("transcript".into())
        .spawn(move || {
            if run(&path, calls, &settled) {
                let _ = settled.send(());
            }
        });
    if let Err(error) = spawned {
        tracing::debug!("cannot follow the transcript: {error}");
    }
    receiver
}

/// Reads the transcript as it grows until the calls are settled (true), or until it cannot be
/// followed or nobody waits any more (false).
fn run(path: &Path, mut calls: Calls, waiting: &tokio::sync::oneshot::Sender<()>) -> bool {
    let (tx, changes) = mpsc::channel();
    // The directory is watched, not the file, so a transcript made or replaced later is seen.
    let watcher = watch(path, tx);
    let mut reader = Reader::new(path.to_owned());
    let Some(first) = reader.read() else {
        return false;
    };
    calls.start(first.iter().map(String::as_str));
    loop {
        if calls.settled() {
            return true;
        }
        if waiting.is_closed() {
            return false;
        }
        let timeout = if watcher.is_some() {
            // Also woken now and then to see whether anyone still waits.
            POLL * 5
        } else {
            POLL
        };
        match changes.recv_timeout(timeout) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return false,
        }
        let Some(lines) = reader.read() else {
            return false;
        };
        for line in &lines {
            calls.line(line);
        }
    }
}

/// Watches the transcript's directory; `None` when it cannot (the caller then polls).
fn watch(path: &Path, tx: mpsc::Sender<()>) -> Option<notify::RecommendedWatcher> {
    use notify::Watcher;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
    let name = path.file_name()?.to_owned();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let ours = match &event {
            Ok(event) => event.paths.iter().any(|p| p.file_name() == Some(&name)),
            Err(_) => true,
        };
        if ours {
            let _ = tx.send(());
        }
    })
    .ok()?;
    match watcher.watch(dir, notify::RecursiveMode::NonRecursive) {
        Ok(()) => Some(watcher),
        Err(error) => {
            tracing::debug!("cannot watch {}: {error}", dir.display());
            None
        }
    }
}

/// The transcript's complete lines, read from where the last reading ended.
struct Reader {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
}

impl Reader {
    fn new(path: PathBuf) -> Reader {
        Reader {
            path,
            offset: 0,
            partial: Vec::new(),
        }
    }

    /// The lines written since the last reading (none when the file is missing); `None` when the
    /// file shrank (rewritten: the reading cannot go on) or cannot be read.
    fn read(&mut self) -> Option<Vec<String>> {
        let mut file = match File::open(&self.path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Some(Vec::new()),
            Err(_) => return None,
        };
        let len = file.metadata().ok()?.len();
        if len < self.offset {
            return None;
        }
        file.seek(SeekFrom::Start(self.offset)).ok()?;
        let mut bytes = std::mem::take(&mut self.partial);
        let read = file.take(len - self.offset).read_to_end(&mut bytes).ok()?;
        self.offset += read as u64;
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        self.partial = bytes.split_off(complete);
        Some(
            bytes
                .split(|&b| b == b'\n')
                .filter(|line| !line.is_empty())
                .map(|line| String::from_utf8_lossy(line).into_owned())
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn use_line(id: &str, name: &str, input: Value) -> String {
        json!({ "type": "assistant", "message": { "role": "assistant", "content": [
            { "type": "tool_use", "id": id, "name": name, "input": input } ] } })
        .to_string()
    }

    fn result_line(id: &str) -> String {
        json!({ "type": "user", "message": { "role": "user", "content": [
            { "tool_use_id": id, "type": "tool_result", "content": "ok", "is_error": false } ] } })
        .to_string()
    }

    fn bash(command: &str) -> Value {
        json!({ "command": command, "description": "d" })
    }

    fn calls(command: &str) -> Calls {
        match bash(command) {
            Value::Object(input) => Calls::new("Bash", &input),
            _ => unreachable!(),
        }
    }

    #[test]
    fn the_prompts_call_settles_with_its_result() {
        let mut c = calls("make");
        c.start([use_line("a", "Bash", bash("make")).as_str()]);
        assert!(!c.settled());
        c.line(&result_line("a"));
        assert!(c.settled());
    }

    #[test]
    fn other_calls_never_settle_it() {
        let mut c = calls("make");
        c.start(
            [
                use_line("a", "Bash", bash("make")),
                use_line("b", "Bash", bash("make install")),
                use_line("c", "Write", bash("make")),
                "not json".to_owned(),
                "{\"message\":{\"content\":\"tool_result\"}}".to_owned(),
            ]
            .iter()
            .map(String::as_str),
        );
        for other in ["b", "c", "zzz"] {
            c.line(&result_line(other));
            assert!(!c.settled(), "{other}");
        }
        c.line(&result_line("a"));
        assert!(c.settled());
    }

    #[test]
    fn an_identical_call_settled_before_is_not_this_prompts() {
        let mut c = calls("make");
        c.start(
            [
                use_line("old", "Bash", bash("make")),
                result_line("old"),
                use_line("new", "Bash", bash("make")),
            ]
            .iter()
            .map(String::as_str),
        );
        assert!(!c.settled());
        c.line(&result_line("new"));
        assert!(c.settled());
        // Nothing of ours at the start: a settled identical call alone settles nothing.
        let mut c = calls("make");
        c.start(
            [use_line("old", "Bash", bash("make")), result_line("old")]
                .iter()
                .map(String::as_str),
        );
        assert!(!c.settled());
        // Written later, the prompt's call is still found.
        c.line(&use_line("late", "Bash", bash("make")));
        assert!(!c.settled());
        c.line(&result_line("late"));
        assert!(c.settled());
    }

    #[test]
    fn identical_calls_pending_together_settle_when_all_have_results() {
        let mut c = calls("make");
        c.start(
            [
                use_line("a", "Bash", bash("make")),
                use_line("b", "Bash", bash("make")),
            ]
            .iter()
            .map(String::as_str),
        );
        c.line(&result_line("a"));
        assert!(!c.settled());
        c.line(&result_line("b"));
        assert!(c.settled());
    }

    #[test]
    fn the_reader_returns_complete_lines_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut reader = Reader::new(path.clone());
        assert_eq!(reader.read(), Some(vec![]));
        std::fs::write(&path, "one\ntw").unwrap();
        assert_eq!(reader.read(), Some(vec!["one".to_owned()]));
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut file, b"o\n\nthree\n").unwrap();
        assert_eq!(
            reader.read(),
            Some(vec!["two".to_owned(), "three".to_owned()])
        );
        assert_eq!(reader.read(), Some(vec![]));
        std::fs::write(&path, "x\n").unwrap();
        assert_eq!(reader.read(), None, "a shrunk file is not followed");
    }
}
