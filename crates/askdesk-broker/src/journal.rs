//! The history journal (SPEC 6): one JSON line per settled request under `$XDG_DATA_HOME/askdesk/`,
//! written and flushed to disk before the answer is delivered, rotated so it stays bounded.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use askdesk_core::{AgentInfo, Answer, Question, Request};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The journal file's name; the rotated generation is `history.1.jsonl`.
pub const FILE_NAME: &str = "history.jsonl";
const ROTATED_NAME: &str = "history.1.jsonl";
/// Rotate once the live file passes this size, so the journal stays under twice it.
pub const DEFAULT_MAX_BYTES: u64 = 8 * 1024 * 1024;

/// How a request settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// An answerer claimed it; `answer` is what the agent received.
    Answered,
    /// The human dismissed the batch (`ASK_CANCELLED`).
    Dismissed,
    /// The asker cancelled, disconnected or its agent went (`ASK_ABORTED`).
    Withdrawn,
    /// Any other failure; `error` says which.
    Failed,
    /// An answer that arrived after the request had settled; it was discarded.
    LateAnswer,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Answered => "answered",
            Outcome::Dismissed => "dismissed",
            Outcome::Withdrawn => "withdrawn",
            Outcome::Failed => "failed",
            Outcome::LateAnswer => "late-answer",
        }
    }
}

/// An error as recorded: its domain code when it had one, and its message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedError {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub message: String,
}

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// Milliseconds since the Unix epoch.
    pub asked_at: u64,
    pub settled_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentInfo>,
    pub questions: Vec<Question>,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Answer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RecordedError>,
    /// The answerer that claimed the request or sent the late answer, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answerer: Option<String>,
}

impl Record {
    /// The record of an answer that arrived after its request had settled (and was discarded).
    pub fn late_answer(request: &Request, answer: Answer, answerer: Option<String>) -> Record {
        Record {
            asked_at: millis(request.asked_at),
            settled_at: millis(SystemTime::now()),
            agent: request.agent.clone(),
            questions: request.questions.clone(),
            outcome: Outcome::LateAnswer,
            answer: Some(answer),
            error: None,
            answerer,
        }
    }
}

/// Milliseconds since the Unix epoch.
pub fn millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The append-only journal. Cheap to clone; appends are serialized.
///
/// Its methods block (they write and fsync): call them from `spawn_blocking` on an async path.
#[derive(Debug, Clone)]
pub struct Journal {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    dir: PathBuf,
    max_bytes: u64,
    file: Mutex<Option<File>>,
}

impl Journal {
    /// The journal under `$XDG_DATA_HOME/askdesk/` (else `~/.local/share/askdesk/`).
    pub fn open_default() -> Result<Journal> {
        Journal::open(&default_dir()?)
    }

    /// Opens (creating) the journal in `dir`. A torn last line left by a crash is fenced off with a
    /// newline so later appends stay readable; `read` skips it with a warning.
    pub fn open(dir: &Path) -> Result<Journal> {
        Journal::open_with_limit(dir, DEFAULT_MAX_BYTES)
    }

    pub fn open_with_limit(dir: &Path, max_bytes: u64) -> Result<Journal> {
        fs::create_dir_all(dir).map_err(Error::io(dir))?;
        let journal = Journal {
            inner: Arc::new(Inner {
                dir: dir.to_owned(),
                max_bytes,
                file: Mutex::new(None),
            }),
        };
        let path = journal.path();
        let created = !path.exists();
        let mut file = open_append(&path)?;
        if created {
            sync_dir(dir)?;
        }
        let len = file.metadata().map_err(Error::io(&path))?.len();
        if len > 0 {
            let mut last = [0u8; 1];
            let mut reader = File::open(&path).map_err(Error::io(&path))?;
            reader
                .seek(SeekFrom::Start(len - 1))
                .map_err(Error::io(&path))?;
            reader.read_exact(&mut last).map_err(Error::io(&path))?;
            if last[0] != b'\n' {
                tracing::warn!(path = %path.display(), "the journal's last line is torn (a crash mid-write); it is skipped");
                file.write_all(b"\n").map_err(Error::io(&path))?;
                file.sync_data().map_err(Error::io(&path))?;
            }
        }
        *askdesk_core::sync::lock(&journal.inner.file) = Some(file);
        Ok(journal)
    }

    /// The live journal file.
    pub fn path(&self) -> PathBuf {
        self.inner.dir.join(FILE_NAME)
    }

    /// Appends one record and flushes it to disk before returning.
    pub fn append(&self, record: &Record) -> Result<()> {
        let mut line = serde_json::to_vec(record).expect("a record serializes");
        line.push(b'\n');
        let path = self.path();
        let mut guard = askdesk_core::sync::lock(&self.inner.file);
        let file = match guard.as_mut() {
            Some(file) => file,
            None => guard.insert(open_append(&path)?),
        };
        file.write_all(&line).map_err(Error::io(&path))?;
        file.sync_data().map_err(Error::io(&path))?;
        if file.metadata().map_err(Error::io(&path))?.len() > self.inner.max_bytes {
            let rotated = self.inner.dir.join(ROTATED_NAME);
            fs::rename(&path, &rotated).map_err(Error::io(&rotated))?;
            *guard = Some(open_append(&path)?);
            sync_dir(&self.inner.dir)?;
        }
        Ok(())
    }

    /// Every readable record, oldest first. Unreadable lines (a torn write) are skipped with a warning.
    pub fn read(&self) -> Result<Vec<Record>> {
        read_dir(&self.inner.dir)
    }
}

/// The records of the journal in the default directory, without creating anything (empty when
/// there is no journal yet).
pub fn read_default() -> Result<Vec<Record>> {
    read_dir(&default_dir()?)
}

/// The records of the journal in `dir`, oldest first, without creating anything.
pub fn read_dir(dir: &Path) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    for path in [dir.join(ROTATED_NAME), dir.join(FILE_NAME)] {
        let text = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::Io { path, source: e }),
        };
        for (number, line) in text.split(|b| *b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Record>(line) {
                Ok(record) => records.push(record),
                Err(error) => {
                    tracing::warn!(path = %path.display(), line = number + 1, %error, "skipped an unreadable journal line")
                }
            }
        }
    }
    Ok(records)
}

/// Makes a new or renamed file's directory entry durable, not only its contents.
fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(Error::io(dir))
}

fn open_append(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(Error::io(path))
}

fn default_dir() -> Result<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| Path::new(&h).join(".local/share"))
        })
        .ok_or(Error::NoDataDir)?;
    Ok(data.join("askdesk"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(outcome: Outcome, n: u64) -> Record {
        Record {
            asked_at: n,
            settled_at: n + 1,
            agent: None,
            questions: vec![serde_json::from_value(
                serde_json::json!({"id": "q", "question": "?"}),
            )
            .unwrap()],
            outcome,
            answer: None,
            error: None,
            answerer: None,
        }
    }

    #[test]
    fn appends_and_reads_back_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let journal = Journal::open(tmp.path()).unwrap();
        journal.append(&record(Outcome::Answered, 1)).unwrap();
        journal.append(&record(Outcome::LateAnswer, 2)).unwrap();
        let got: Vec<_> = journal
            .read()
            .unwrap()
            .into_iter()
            .map(|r| (r.asked_at, r.outcome))
            .collect();
        assert_eq!(got, vec![(1, Outcome::Answered), (2, Outcome::LateAnswer)]);
        let text = fs::read_to_string(journal.path()).unwrap();
        assert!(text.contains(r#""outcome":"late-answer""#), "{text}");
    }

    #[test]
    fn torn_last_line_is_skipped_and_fenced() {
        let tmp = tempfile::tempdir().unwrap();
        let first = serde_json::to_string(&record(Outcome::Answered, 1)).unwrap();
        fs::write(
            tmp.path().join(FILE_NAME),
            format!("{first}\n{{\"askedAt\":2,\"sett"),
        )
        .unwrap();
        let journal = Journal::open(tmp.path()).unwrap();
        journal.append(&record(Outcome::Failed, 3)).unwrap();
        let got: Vec<_> = journal
            .read()
            .unwrap()
            .into_iter()
            .map(|r| r.asked_at)
            .collect();
        assert_eq!(got, vec![1, 3]);
    }

    #[test]
    fn rotation_keeps_it_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let journal = Journal::open_with_limit(tmp.path(), 1000).unwrap();
        for n in 0..100 {
            journal.append(&record(Outcome::Answered, n)).unwrap();
        }
        let total: u64 = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        assert!(total < 2 * 1000 + 400, "journal grew to {total} bytes");
        let got = journal.read().unwrap();
        assert_eq!(got.last().unwrap().asked_at, 99);
        assert!(got.windows(2).all(|w| w[0].asked_at < w[1].asked_at));
    }
}
