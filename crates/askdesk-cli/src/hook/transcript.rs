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
//! input that have no result in the transcript as it was when the hook began to follow it (its
//! length, taken before the question is sent, however late the following thread gets to read
//! it), or that are written after.
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
    /// The matching calls of the first reading, until it ends.
    first: Vec<String>,
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
            first: Vec::new(),
            started: false,
        }
    }

    /// Reads the lines of the first reading, the transcript as it was when the prompt began.
    #[cfg(test)]
    fn start<'a>(&mut self, lines: impl IntoIterator<Item = &'a str>) {
        for line in lines {
            self.line(line);
        }
        self.first_reading_done();
    }

    /// Ends the first reading: of the matching calls read so far, those without a result are the
    /// prompt's (an identical call settled before this prompt is not).
    pub fn first_reading_done(&mut self) {
        let first = std::mem::take(&mut self.first);
        self.ours
            .extend(first.into_iter().filter(|id| !self.results.contains(id)));
        self.started = true;
    }

    /// Reads one line of the transcript.
    pub fn line(&mut self, line: &str) {
        let mut matching = Vec::new();
        self.read(line, &mut matching);
        if self.started {
            self.ours.extend(matching);
        } else {
            self.first.extend(matching);
        }
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
///
/// The transcript's length is taken here, before the caller sends its question: what is written
/// up to it is the first reading, what comes after was written during the prompt. Taken on the
/// thread, a result written between the question and the thread's first look (a loaded machine,
/// a quick answer in the terminal) would count as settled before the prompt, and the question
/// would never be withdrawn.
pub async fn follow(path: &Path, calls: Calls) -> tokio::sync::oneshot::Receiver<()> {
    let (settled, receiver) = tokio::sync::oneshot::channel();
    let start = match tokio::fs::metadata(path).await {
        Ok(meta) => meta.len(),
        // Not written yet: everything in it will be.
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => 0,
        Err(error) => {
            tracing::debug!("cannot follow the transcript: {error}");
            return receiver;
        }
    };
    let path = path.to_owned();
    let spawned = std::thread::Builder::new()
        .name("transcript".into())
        .spawn(move || {
            if run(&path, start, calls, &settled) {
                let _ = settled.send(());
            }
        });
    if let Err(error) = spawned {
        tracing::debug!("cannot follow the transcript: {error}");
    }
    receiver
}

/// Reads the transcript as it grows until the calls are settled (true), or until it cannot be
/// followed (false); its first `start` bytes are the first reading. When the question ends first,
/// the process ends, and this thread with it.
fn run(
    path: &Path,
    start: u64,
    mut calls: Calls,
    waiting: &tokio::sync::oneshot::Sender<()>,
) -> bool {
    let (tx, changes) = mpsc::channel();
    // The directory is watched, not the file, so a transcript made or replaced later is seen.
    let watcher = watch(path, tx);
    let mut reader = Reader::new(path.to_owned());
    if reader
        .read_to(Some(start), |line| calls.line(line))
        .is_none()
    {
        return false;
    }
    calls.first_reading_done();
    // What was written since `start`, before the watch began, gives no change to wait for.
    if reader.read(|line| calls.line(line)).is_none() {
        return false;
    }
    loop {
        if calls.settled() {
            return true;
        }
        if waiting.is_closed() {
            return false;
        }
        let changed = match &watcher {
            Some(_) => changes.recv().map_err(|_| ()),
            None => match changes.recv_timeout(POLL) {
                Err(mpsc::RecvTimeoutError::Disconnected) => Err(()),
                _ => Ok(()),
            },
        };
        if changed.is_err() || reader.read(|line| calls.line(line)).is_none() {
            return false;
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

/// How much of the transcript is read at a time: a long transcript is never held whole.
const CHUNK: usize = 1 << 20;

impl Reader {
    fn new(path: PathBuf) -> Reader {
        Reader {
            path,
            offset: 0,
            partial: Vec::new(),
        }
    }

    /// Hands each line written since the last reading to `each` (none when the file is missing);
    /// `None` when the file shrank (rewritten: the reading cannot go on) or cannot be read.
    fn read(&mut self, each: impl FnMut(&str)) -> Option<()> {
        self.read_to(None, each)
    }

    /// [`Reader::read`], up to the offset `end` when given (a file shorter than that has shrunk);
    /// a line that runs past `end` is finished by a later reading.
    fn read_to(&mut self, end: Option<u64>, mut each: impl FnMut(&str)) -> Option<()> {
        let mut file = match File::open(&self.path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return (end.unwrap_or(0) <= self.offset).then_some(());
            }
            Err(_) => return None,
        };
        let len = file.metadata().ok()?.len();
        let end = end.unwrap_or(len);
        if len < self.offset || len < end {
            return None;
        }
        file.seek(SeekFrom::Start(self.offset)).ok()?;
        let mut file = file.take(end.saturating_sub(self.offset));
        let mut chunk = vec![0; CHUNK];
        loop {
            let read = file.read(&mut chunk).ok()?;
            if read == 0 {
                return Some(());
            }
            self.offset += read as u64;
            let mut bytes = &chunk[..read];
            while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
                self.partial.extend_from_slice(&bytes[..end]);
                if !self.partial.is_empty() {
                    each(&String::from_utf8_lossy(&self.partial));
                }
                self.partial.clear();
                bytes = &bytes[end + 1..];
            }
            self.partial.extend_from_slice(bytes);
        }
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
    fn a_result_written_after_the_prompt_began_settles_it_however_late_the_first_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, format!("{}\n", use_line("a", "Bash", bash("make")))).unwrap();
        // The prompt begins: the hook takes the transcript's length before its question leaves.
        let start = std::fs::metadata(&path).unwrap().len();
        // The person answers in the terminal before the following thread first reads.
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut file, format!("{}\n", result_line("a")).as_bytes()).unwrap();
        // No one waits any more: `run` returns at once whether or not the call is settled.
        let (waiting, gone) = tokio::sync::oneshot::channel();
        drop(gone);
        assert!(run(&path, start, calls("make"), &waiting));
        // Read from where the file ended when the thread first looked, the same result counts as
        // settled before the prompt, and the question would wait on.
        let late = std::fs::metadata(&path).unwrap().len();
        assert!(!run(&path, late, calls("make"), &waiting));
        // A transcript that shrank below the length taken cannot be followed.
        assert!(!run(&path, late + 1, calls("make"), &waiting));
        // One not written yet when the prompt began: everything in it came later.
        let fresh = dir.path().join("fresh.jsonl");
        assert!(!run(&fresh, 0, calls("make"), &waiting));
    }

    #[test]
    fn the_reader_returns_complete_lines_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut reader = Reader::new(path.clone());
        let read = |reader: &mut Reader| {
            let mut lines = Vec::new();
            reader
                .read(|line| lines.push(line.to_owned()))
                .map(|()| lines)
        };
        assert_eq!(read(&mut reader), Some(vec![]));
        std::fs::write(&path, "one\ntw").unwrap();
        assert_eq!(read(&mut reader), Some(vec!["one".to_owned()]));
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut file, b"o\n\nthree\n").unwrap();
        assert_eq!(
            read(&mut reader),
            Some(vec!["two".to_owned(), "three".to_owned()])
        );
        assert_eq!(read(&mut reader), Some(vec![]));
        // Lines longer than a chunk, and lines across chunks.
        let long = "x".repeat(CHUNK + 10);
        std::io::Write::write_all(&mut file, format!("{long}\n{long}\nend\n").as_bytes()).unwrap();
        assert_eq!(
            read(&mut reader),
            Some(vec![long.clone(), long, "end".to_owned()])
        );
        std::fs::write(&path, "x\n").unwrap();
        assert_eq!(read(&mut reader), None, "a shrunk file is not followed");
    }

    #[test]
    fn a_reading_up_to_an_offset_leaves_the_rest_for_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, "one\ntwo\nthree\n").unwrap();
        let mut reader = Reader::new(path.clone());
        let mut lines = Vec::new();
        // Up to the middle of "two": it is finished by the next reading.
        reader
            .read_to(Some(6), |line| lines.push(line.to_owned()))
            .unwrap();
        assert_eq!(lines, ["one"]);
        reader.read(|line| lines.push(line.to_owned())).unwrap();
        assert_eq!(lines, ["one", "two", "three"]);
        // An offset past the end: the file shrank since it was taken.
        let mut reader = Reader::new(path.clone());
        assert_eq!(reader.read_to(Some(100), |_| {}), None);
        // A file gone that had bytes when the offset was taken cannot be followed; one that had
        // none is not written yet.
        let missing = dir.path().join("missing.jsonl");
        assert_eq!(Reader::new(missing.clone()).read_to(Some(3), |_| {}), None);
        assert_eq!(Reader::new(missing).read_to(Some(0), |_| {}), Some(()));
    }
}
