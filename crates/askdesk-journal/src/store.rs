//! The history journal's record types, group commit, files and reading, before they are split
//! into modules of their own.

use std::fs::{self, File, OpenOptions};
use std::future::Future;
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use askdesk_core::{AgentInfo, Answer, Question, Request};
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use crate::error::{AtPath, Error, Result};

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

/// A settled request on its way to the journal, written exactly as its [`Record`] would be. It
/// holds the request the service kept while the ask waited, so nothing is copied for the journal
/// while it waits, and the line is serialized on the journal's writer thread.
#[derive(Debug, Clone)]
pub struct Settled {
    pub request: Arc<Request>,
    pub settled_at: u64,
    pub outcome: Outcome,
    pub answer: Option<Answer>,
    pub error: Option<RecordedError>,
    pub answerer: Option<String>,
}

impl Serialize for Settled {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        RecordRef {
            asked_at: millis(self.request.asked_at),
            settled_at: self.settled_at,
            agent: self.request.agent.as_ref(),
            questions: &self.request.questions,
            outcome: self.outcome,
            answer: self.answer.as_ref(),
            error: self.error.as_ref(),
            answerer: self.answerer.as_deref(),
        }
        .serialize(serializer)
    }
}

/// [`Record`]'s fields, borrowed: the same JSON.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordRef<'a> {
    asked_at: u64,
    settled_at: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'a AgentInfo>,
    questions: &'a [Question],
    outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    answer: Option<&'a Answer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a RecordedError>,
    #[serde(skip_serializing_if = "Option::is_none")]
    answerer: Option<&'a str>,
}

/// What the writer serializes: a record, or a settled request (serialized as its record).
#[derive(Debug)]
pub enum Line {
    Record(Record),
    Settled(Settled),
}

impl From<Record> for Line {
    fn from(record: Record) -> Line {
        Line::Record(record)
    }
}

impl From<Settled> for Line {
    fn from(settled: Settled) -> Line {
        Line::Settled(settled)
    }
}

impl Line {
    fn write_to(&self, out: &mut Vec<u8>) {
        match self {
            Line::Record(record) => serde_json::to_writer(&mut *out, record),
            Line::Settled(settled) => serde_json::to_writer(&mut *out, settled),
        }
        .expect("a record serializes");
        out.push(b'\n');
    }
}

/// Milliseconds since the Unix epoch.
pub fn millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The append-only journal. Cheap to clone; every clone feeds the same writer.
///
/// Appends are committed in groups: one writer thread takes every record queued so far, writes
/// them and calls `fdatasync` once, then acknowledges each of them. Records that settle while a
/// sync is in flight share the next one. An append is acknowledged only once its line is on disk.
#[derive(Debug, Clone)]
pub struct Journal {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    dir: PathBuf,
    queue: Arc<Queue>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Inner {
    /// Lets the writer finish what is queued and close the file, and waits for it.
    fn close(&self) {
        self.queue.lock().closed = true;
        self.queue.ready.notify_one();
        let writer = askdesk_core::sync::lock(&self.writer).take();
        if let Some(writer) = writer {
            // A writer that panicked has already failed every append; nothing more to say.
            let _ = writer.join();
        }
    }
}

impl Drop for Inner {
    /// The last clone closes the journal, so a broker that stops leaves it complete and cut back
    /// to its lines.
    fn drop(&mut self) {
        self.close();
    }
}

impl Journal {
    /// The journal under `$XDG_DATA_HOME/askdesk/` (else `~/.local/share/askdesk/`).
    pub fn open_default() -> Result<Journal> {
        Journal::open(&default_dir()?)
    }

    /// Opens (creating) the journal in `dir` and starts its writer thread. The directory is made
    /// private (0700) and the journal files 0600, tightening those of an existing journal. A torn
    /// last line left by a crash is fenced off with a newline so later appends stay readable;
    /// `read` skips it with a warning.
    pub fn open(dir: &Path) -> Result<Journal> {
        Journal::open_with_limit(dir, DEFAULT_MAX_BYTES)
    }

    pub fn open_with_limit(dir: &Path, max_bytes: u64) -> Result<Journal> {
        let file = open_in(dir)?;
        let store = FileStore {
            dir: dir.to_owned(),
            max_bytes,
            file: Some(file),
        };
        Journal::start(dir.to_owned(), store)
    }

    /// The journal under the default directory, as [`Journal::open_default`], except that a
    /// journal that cannot be opened now (its directory in the way of a file, unwritable, the file
    /// a directory) is opened by the first commit after the cause is gone: until then every commit
    /// fails and [`Journal::failure`] says why, starting with the reason returned here. `Err` only
    /// when there is no default directory at all.
    pub fn open_default_or_later() -> Result<(Journal, Option<Error>)> {
        let dir = default_dir()?;
        let (file, error) = match open_in(&dir) {
            Ok(file) => (Some(file), None),
            Err(error) => (None, Some(error)),
        };
        let store = FileStore {
            dir: dir.clone(),
            max_bytes: DEFAULT_MAX_BYTES,
            file,
        };
        let journal = Journal::start(dir, store)?;
        if let Some(error) = &error {
            *askdesk_core::sync::lock(&journal.inner.queue.failure) = Some(error.to_string());
        }
        Ok((journal, error))
    }

    fn start(dir: PathBuf, store: impl Store) -> Result<Journal> {
        let queue = Arc::new(Queue::default());
        let writer = std::thread::Builder::new()
            .name("askdesk-journal".into())
            .spawn({
                let queue = queue.clone();
                move || write_batches(&queue, store)
            })
            .at(&dir)?;
        Ok(Journal {
            inner: Arc::new(Inner {
                dir,
                queue,
                writer: Mutex::new(Some(writer)),
            }),
        })
    }

    /// After committing a lone record the writer thread polls for the next one for `window`
    /// instead of sleeping at once (the broker's `--busy-poll`): one asker asking in turn then
    /// finds the writer awake. Zero, the default, sleeps at once. Shared by every clone.
    pub fn set_busy_poll(&self, window: Duration) {
        let nanos = u64::try_from(window.as_nanos()).unwrap_or(u64::MAX);
        self.inner.queue.poll_nanos.store(nanos, Ordering::Relaxed);
    }

    /// Hands commit acknowledgements to the returned future, a batch at a time, while it is
    /// polled. The writer thread then wakes one task per batch instead of one per record: on a
    /// current-thread runtime each wake from another thread is a system call, while the future
    /// completes the batch's waiters with wakes local to the runtime. Dropping the future (polled
    /// or not) delivers what it holds and lets the writer acknowledge each record again. `None`
    /// while another relay runs. The future never completes: select it against shutdown.
    pub fn relay_acks(&self) -> Option<impl Future<Output = ()> + Send + 'static> {
        let queue = self.inner.queue.clone();
        {
            let mut relay = askdesk_core::sync::lock(&queue.relay.state);
            if relay.active {
                return None;
            }
            relay.active = true;
        }
        // Made before the future, so dropping it unpolled deactivates the relay too.
        let guard = RelayGuard(queue);
        Some(async move {
            let relay = &guard.0.relay;
            let mut batches = Vec::new();
            loop {
                relay.wake.notified().await;
                std::mem::swap(
                    &mut askdesk_core::sync::lock(&relay.state).batches,
                    &mut batches,
                );
                deliver(batches.drain(..));
            }
        })
    }

    /// The live journal file.
    pub fn path(&self) -> PathBuf {
        self.inner.dir.join(FILE_NAME)
    }

    /// Queues one record at once; the returned future resolves when its line is on disk (or the
    /// write or sync of its batch failed). Dropping the future does not withdraw the record.
    pub fn submit(&self, record: impl Into<Line>) -> Commit {
        let (done, receiver) = oneshot::channel();
        self.inner.queue.push(Entry {
            record: record.into(),
            done: Done::Task(done),
        });
        Commit { receiver }
    }

    /// Appends one record and returns once it is on disk. Blocks: call it off the async path.
    pub fn append(&self, record: &Record) -> Result<()> {
        let (done, receiver) = mpsc::sync_channel(1);
        self.inner.queue.push(Entry {
            record: Line::Record(record.clone()),
            done: Done::Thread(done),
        });
        match receiver.recv() {
            Ok(result) => result.map_err(BatchError::into_error),
            Err(_) => Err(writer_gone(&self.inner.dir)),
        }
    }

    /// Writes what is queued, cuts the file back to its lines and stops the writer, for a host
    /// that ends its process without dropping every clone. Appends after it fail at once.
    pub fn close(&self) {
        self.inner.close();
    }

    /// Why the last commit failed, while no commit has succeeded since.
    pub fn failure(&self) -> Option<String> {
        askdesk_core::sync::lock(&self.inner.queue.failure).clone()
    }

    /// Every readable record, oldest first. Unreadable lines (a torn write) are skipped with a warning.
    pub fn read(&self) -> Result<Vec<Record>> {
        read_dir(&self.inner.dir)
    }

    /// Hands every record to `visit`, oldest first, without holding them all ([`visit_dir`]).
    pub fn visit(&self, visit: impl FnMut(Record)) -> Result<()> {
        visit_dir(&self.inner.dir, visit)
    }
}

/// A queued record's acknowledgement: resolves once its line is on disk.
#[derive(Debug)]
#[must_use = "the record is on disk only once the commit resolves"]
pub struct Commit {
    receiver: oneshot::Receiver<Result<(), BatchError>>,
}

impl Future for Commit {
    type Output = Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        Pin::new(&mut self.receiver)
            .poll(cx)
            .map(|sent| match sent {
                Ok(result) => result.map_err(BatchError::into_error),
                // The writer thread only ends once every queued record is acknowledged.
                Err(_) => Err(writer_gone(Path::new(FILE_NAME))),
            })
    }
}

fn writer_gone(path: &Path) -> Error {
    Error::Io {
        path: path.to_owned(),
        source: io::Error::other("the journal writer stopped"),
    }
}

/// The records waiting for the writer, and whether the journal was dropped.
#[derive(Debug, Default)]
struct Queue {
    state: Mutex<QueueState>,
    ready: Condvar,
    /// Entries are queued (written under the lock; read without it while the writer polls).
    queued: AtomicBool,
    /// How long the writer polls for the next record after committing a lone one, in
    /// nanoseconds; zero sleeps at once (see [`Journal::set_busy_poll`]).
    poll_nanos: AtomicU64,
    /// Where acknowledgements go while a relay runs (see [`Journal::relay_acks`]).
    relay: Relay,
    /// Why the last commit failed, cleared by the next that succeeds (see [`Journal::failure`]).
    failure: Mutex<Option<String>>,
}

/// Acknowledgements on their way to a relay task, a batch at a time.
#[derive(Debug, Default)]
struct Relay {
    state: Mutex<RelayState>,
    /// Wakes the relay task: once per batch, a permit kept when it is not waiting.
    wake: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct RelayState {
    /// A relay task takes the acknowledgements; otherwise the writer sends each itself.
    active: bool,
    batches: Vec<Acks>,
}

/// A committed batch's acknowledgements and the batch's result, held for the relay.
type Acks = (Vec<Done>, Result<(), BatchError>);

/// Sends each acknowledgement of each batch its batch's result.
fn deliver(batches: impl IntoIterator<Item = Acks>) {
    for (dones, result) in batches {
        for done in dones {
            done.send(result.clone());
        }
    }
}

/// Ends a relay: what it still holds is delivered and the writer acknowledges directly again.
struct RelayGuard(Arc<Queue>);

impl Drop for RelayGuard {
    fn drop(&mut self) {
        let batches = {
            let mut relay = askdesk_core::sync::lock(&self.0.relay.state);
            relay.active = false;
            std::mem::take(&mut relay.batches)
        };
        deliver(batches);
    }
}

#[derive(Debug, Default)]
struct QueueState {
    entries: Vec<Entry>,
    closed: bool,
    /// The writer thread ended by panicking: appends fail at once instead of waiting forever.
    dead: bool,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        askdesk_core::sync::lock(&self.state)
    }

    fn push(&self, entry: Entry) {
        let was_empty = {
            let mut state = self.lock();
            if state.dead || state.closed {
                // Dropping its acknowledgement tells the waiter at once that nothing writes.
                return;
            }
            state.entries.push(entry);
            self.queued.store(true, Ordering::Release);
            state.entries.len() == 1
        };
        // A non-empty queue means the writer is already due to look at it again.
        if was_empty {
            self.ready.notify_one();
        }
    }

    /// Every queued entry, waiting for one; `None` once the journal is dropped and all are taken.
    /// After a lone record (`poll`), polls for the busy-poll window before it sleeps.
    fn take(&self, into: &mut Vec<Entry>, poll: bool) -> bool {
        let window = Duration::from_nanos(self.poll_nanos.load(Ordering::Relaxed));
        if poll && !window.is_zero() {
            let until = Instant::now() + window;
            while !self.queued.load(Ordering::Acquire) && Instant::now() < until {
                // Polite: anything else runnable on this CPU goes first.
                std::thread::yield_now();
            }
        }
        let mut state = self.lock();
        while state.entries.is_empty() {
            if state.closed {
                return false;
            }
            state = self.ready.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        std::mem::swap(&mut state.entries, into);
        self.queued.store(false, Ordering::Relaxed);
        true
    }

    /// Acknowledges a committed batch: through the relay when one runs (one wake for the batch;
    /// a blocked thread is still told at once), else each record on its own.
    fn acknowledge(&self, batch: &mut Vec<Entry>, result: &Result<(), BatchError>) {
        let mut relay = askdesk_core::sync::lock(&self.relay.state);
        if !relay.active {
            drop(relay);
            for entry in batch.drain(..) {
                entry.done.send(result.clone());
            }
            return;
        }
        let mut tasks = Vec::with_capacity(batch.len());
        for entry in batch.drain(..) {
            match entry.done {
                done @ Done::Task(_) => tasks.push(done),
                thread @ Done::Thread(_) => thread.send(result.clone()),
            }
        }
        relay.batches.push((tasks, result.clone()));
        drop(relay);
        self.relay.wake.notify_one();
    }
}

#[derive(Debug)]
struct Entry {
    record: Line,
    done: Done,
}

/// Where an entry's acknowledgement goes: an async waiter or a blocked thread.
#[derive(Debug)]
enum Done {
    Task(oneshot::Sender<Result<(), BatchError>>),
    Thread(mpsc::SyncSender<Result<(), BatchError>>),
}

impl Done {
    fn send(self, result: Result<(), BatchError>) {
        // A waiter that went away no longer needs to hear; its record is written all the same.
        match self {
            Done::Task(sender) => {
                let _ = sender.send(result);
            }
            Done::Thread(sender) => {
                let _ = sender.send(result);
            }
        }
    }
}

/// Why a batch failed, shared by every record in it.
#[derive(Debug, Clone)]
struct BatchError {
    path: PathBuf,
    source: Arc<io::Error>,
}

impl BatchError {
    fn new(path: &Path) -> impl FnOnce(io::Error) -> BatchError + '_ {
        move |source| BatchError {
            path: path.to_owned(),
            source: Arc::new(source),
        }
    }

    fn into_error(self) -> Error {
        Error::Io {
            path: self.path,
            source: io::Error::new(self.source.kind(), self.source.to_string()),
        }
    }
}

/// Where batches go: the journal files, or a scripted store in tests.
trait Store: Send + 'static {
    /// Writes `lines` (whole lines) and makes them durable before returning.
    fn commit(&mut self, lines: &[u8]) -> Result<(), BatchError>;
}

/// Marks the queue dead if the writer thread unwinds, failing every waiting append.
struct WriterAlive<'a>(&'a Queue);

impl Drop for WriterAlive<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut state = self.0.lock();
            state.dead = true;
            state.entries.clear();
        }
    }
}

/// The writer thread: take everything queued, write it, sync once, acknowledge each record.
/// Should it panic, every record it held or that is queued later fails instead of hanging.
fn write_batches(queue: &Queue, mut store: impl Store) {
    let _alive = WriterAlive(queue);
    let mut batch = Vec::new();
    let mut lines = Vec::new();
    // A lone record predicts another soon (one asker asking in turn); a batch means load, where
    // the queue refills while the sync runs anyway.
    let mut lone = false;
    // A journal opened later starts out failing (see `Journal::open_default_or_later`).
    let mut failing = askdesk_core::sync::lock(&queue.failure).is_some();
    while queue.take(&mut batch, lone) {
        lone = batch.len() == 1;
        lines.clear();
        for entry in &batch {
            entry.record.write_to(&mut lines);
        }
        let result = store.commit(&lines);
        if let Err(error) = &result {
            tracing::error!(path = %error.path.display(), error = %error.source, records = batch.len(), "the history journal could not be written");
            let failure = format!("{}: {}", error.path.display(), error.source);
            *askdesk_core::sync::lock(&queue.failure) = Some(failure);
            failing = true;
        } else if failing {
            tracing::info!("the history journal is written again");
            *askdesk_core::sync::lock(&queue.failure) = None;
            failing = false;
        }
        queue.acknowledge(&mut batch, &result);
        // Keep the capacity of an ordinary batch, not of a rare burst.
        if lines.capacity() > 1 << 20 {
            lines = Vec::new();
        }
    }
}

/// The journal files: the live one written at its end, rotated to `history.1.jsonl` past
/// `max_bytes`.
///
/// While the journal is open the live file is longer than its lines: spaces are written ahead of
/// the next lines, a chunk at a time, and the lines overwrite them. A commit then changes neither
/// the file's size nor its blocks, so its `fdatasync` flushes the data alone, without a commit of
/// the filesystem's own journal (on ext4 that is a quarter to a third of an appending sync). The
/// spaces are one blank line after the last newline, which every JSON-lines reader skips; the file
/// is cut back to its last line when the journal closes and before it is rotated.
struct FileStore {
    dir: PathBuf,
    max_bytes: u64,
    /// `None` after a failed write: the next batch reopens it (fencing off a torn line).
    file: Option<Live>,
}

/// The open live file: where its lines end, and how far spaces are written beyond them.
struct Live {
    file: File,
    /// Which file it is, to tell whether it is still the one at the journal's path.
    id: FileId,
    end: u64,
    allocated: u64,
}

/// A file's identity: its device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: (u32, u32),
    ino: u64,
}

impl FileId {
    /// The identity of the open `file`.
    fn of_file(file: &File) -> io::Result<FileId> {
        use std::os::fd::AsRawFd;
        FileId::statx(file.as_raw_fd(), c"", libc::AT_EMPTY_PATH)
    }

    /// The identity of the file at `path` (not following a symbolic link).
    fn of_path(path: &Path) -> io::Result<FileId> {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        FileId::statx(libc::AT_FDCWD, &path, libc::AT_SYMLINK_NOFOLLOW)
    }

    /// `statx` for the inode alone. Asking for the file's times (as `fs::metadata` does) would
    /// mark them as seen, and the file's next write would then take a fine-grained time and dirty
    /// its inode: see [`Live::catch_up`].
    fn statx(dirfd: libc::c_int, path: &std::ffi::CStr, flags: libc::c_int) -> io::Result<FileId> {
        // SAFETY: `statx` writes at most one `struct statx` into `buf`, which is that size and
        // zeroed (all its fields are plain integers), and reads `path`, a valid C string.
        let mut buf: libc::statx = unsafe { std::mem::zeroed() };
        let done = unsafe { libc::statx(dirfd, path.as_ptr(), flags, libc::STATX_INO, &mut buf) };
        if done != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(FileId {
            dev: (buf.stx_dev_major, buf.stx_dev_minor),
            ino: buf.stx_ino,
        })
    }
}

impl Store for FileStore {
    fn commit(&mut self, lines: &[u8]) -> Result<(), BatchError> {
        let path = self.dir.join(FILE_NAME);
        let chunk = self.chunk();
        self.lock_live(&path)?;
        let live = self.file.as_mut().expect("locked just now");
        let written = live.catch_up().and_then(|()| {
            live.write(lines, chunk)?;
            live.file.sync_data()
        });
        if let Err(error) = written {
            // What reached the disk is unknown: start over from the file itself next time (closing
            // it releases the lock).
            self.file = None;
            return Err(BatchError::new(&path)(error));
        }
        if let Err(error) = self.rotate_if_full(&path) {
            // The batch is on disk; only the rotation failed, and the next batch retries it.
            tracing::error!(%error, "the history journal could not be rotated");
            self.file = None;
        }
        if let Some(live) = &self.file {
            let _ = live.file.unlock();
        }
        Ok(())
    }
}

impl Drop for FileStore {
    /// Cuts off the spaces held for the next lines, so a journal at rest is only its lines.
    fn drop(&mut self) {
        if let Some(mut live) = self.file.take() {
            if let Err(error) = live.file.lock().and_then(|()| live.trim()) {
                tracing::warn!(%error, "the history journal's reserved space could not be cut off");
            }
        }
    }
}

impl FileStore {
    /// Opens the live file if need be and locks it, making sure the file locked is the one at
    /// `path`: another broker with the same data directory may have rotated it away (renaming it
    /// to `history.1.jsonl`, which it does only with the file locked), or someone removed it. The
    /// file at `path` is then opened instead, so no line goes to a rotated or unlinked file and no
    /// rotation renames over the other broker's.
    fn lock_live(&mut self, path: &Path) -> Result<(), BatchError> {
        const ATTEMPTS: usize = 8;
        for _ in 0..ATTEMPTS {
            let live = match self.file.as_mut() {
                Some(live) => live,
                None => self.file.insert(open_in(&self.dir).map_err(|e| match e {
                    Error::Io { path, source } => BatchError::new(&path)(source),
                    other => BatchError::new(path)(io::Error::other(other.to_string())),
                })?),
            };
            live.file.lock().map_err(BatchError::new(path))?;
            match FileId::of_path(path) {
                Ok(at_path) if at_path == live.id => return Ok(()),
                Ok(_) => {
                    tracing::debug!(path = %path.display(), "the live journal was rotated by another broker; writing to the new one")
                }
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    tracing::warn!(path = %path.display(), "the history journal was removed while in use; starting a new one")
                }
                Err(error) => {
                    let _ = live.file.unlock();
                    self.file = None;
                    return Err(BatchError::new(path)(error));
                }
            }
            let _ = live.file.unlock();
            self.file = None;
        }
        Err(BatchError::new(path)(io::Error::other(format!(
            "the journal file was replaced {ATTEMPTS} times in a row while opening it"
        ))))
    }

    /// How much is written ahead at a time: an eighth of the rotation size, at most 1 MiB.
    fn chunk(&self) -> u64 {
        (self.max_bytes / 8).clamp(1, 1 << 20)
    }

    /// Rotates a full live file; called with the live file locked.
    fn rotate_if_full(&mut self, path: &Path) -> Result<()> {
        let live = self.file.as_ref().expect("open after a commit");
        if live.end <= self.max_bytes {
            return Ok(());
        }
        let mut live = self.file.take().expect("open after a commit");
        live.trim().at(path)?;
        let rotated = self.dir.join(ROTATED_NAME);
        fs::rename(path, &rotated).at(&rotated)?;
        drop(live);
        self.file = Some(open_live(path)?);
        sync_dir(&self.dir)
    }
}

impl Live {
    /// Another journal on the same file (a second broker with the same data directory) may have
    /// written since this one did: its lines start where this one's ended, so the byte there is no
    /// longer a held space (or the file ends there, cut back). Only then is the file looked at
    /// again. Called with the file locked.
    ///
    /// The check reads one byte and does not `stat` the file: on Linux, reading a file's times
    /// makes its next write take a fine-grained time, which dirties the inode, and the next
    /// `fdatasync` then pays for a commit of the filesystem's journal (measured: +50-70 µs).
    fn catch_up(&mut self) -> io::Result<()> {
        let mut next = [0u8; 1];
        let read = self.file.read_at(&mut next, self.end)?;
        if read == 1 && next[0] == FILL && self.end < self.allocated {
            return Ok(());
        }
        self.find_end().map(drop)
    }

    /// Reads where the file ends and where its lines end, before the spaces held after them.
    fn find_end(&mut self) -> io::Result<Tail> {
        self.allocated = self.file.metadata()?.len();
        let (end, tail) = data_end(&self.file, self.allocated)?;
        self.end = end;
        Ok(tail)
    }

    /// Finds where the lines end and, when the last one is torn, ends it so later lines stay
    /// readable; says whether it was torn. Called with the file locked.
    fn fence(&mut self) -> io::Result<bool> {
        if self.find_end()? == Tail::Zeros {
            // Room written ahead whose spaces never reached the disk (a crash): cut it off, so
            // later lines are written over nothing but spaces.
            self.file.set_len(self.end)?;
            self.file.sync_all()?;
            self.allocated = self.end;
        }
        if self.end == 0 {
            return Ok(false);
        }
        let mut last = [0u8; 1];
        self.file.read_exact_at(&mut last, self.end - 1)?;
        if last[0] == b'\n' {
            return Ok(false);
        }
        self.write(b"\n", 0)?;
        self.file.sync_data()?;
        Ok(true)
    }

    /// Writes `lines` at the end and, when they grow the file, spaces ahead of the next ones.
    /// Without room for those spaces (a full disk) the lines are written alone; when the lines
    /// themselves do not fit, the file is cut back to where they were to start.
    fn write(&mut self, lines: &[u8], chunk: u64) -> io::Result<()> {
        let end = self.end + lines.len() as u64;
        if let Err(error) = self.file.write_all_at(lines, self.end) {
            // Part of them may be written over the spaces held: no torn line may stay.
            if self.file.set_len(self.end).is_ok() {
                self.allocated = self.end;
            }
            return Err(error);
        }
        if end > self.allocated {
            let fill = vec![FILL; chunk as usize];
            match self.file.write_all_at(&fill, end) {
                Ok(()) => self.allocated = end + chunk,
                Err(error) => {
                    tracing::debug!(%error, "no room written ahead of the journal's lines");
                    self.file.set_len(end)?;
                    self.allocated = end;
                }
            }
        }
        self.end = end;
        Ok(())
    }

    /// Cuts the file back to its last line and makes that durable. Called with the file locked.
    fn trim(&mut self) -> io::Result<()> {
        self.catch_up()?;
        if self.allocated > self.end {
            self.file.set_len(self.end)?;
            self.file.sync_all()?;
            self.allocated = self.end;
        }
        Ok(())
    }
}

/// Opens (creating, 0600) the live journal, tightens its mode, makes a new file's directory entry
/// durable, finds where its lines end (before spaces written ahead, left by a crash) and fences off
/// a torn last line.
fn open_live(path: &Path) -> Result<Live> {
    let created = !path.exists();
    let file = OpenOptions::new()
        .create(true)
        .read(true)
        .write(true)
        .truncate(false)
        .mode(FILE_MODE)
        // The journal is a file of its own, never somewhere a link points to.
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .at(path)?;
    if created {
        sync_dir(path.parent().expect("the journal file is in a directory"))?;
    } else {
        make_private_file(path)?;
    }
    let id = FileId::of_file(&file).at(path)?;
    let mut live = Live {
        file,
        id,
        end: 0,
        allocated: 0,
    };
    live.file.lock().at(path)?;
    if live.fence().at(path)? {
        tracing::warn!(path = %path.display(), "the journal's last line is torn (a crash mid-write); it is skipped");
    }
    live.file.unlock().at(path)?;
    Ok(live)
}

/// What the live file holds beyond its lines, for the next ones. A line ends with a newline, never
/// with a space.
const FILL: u8 = b' ';

/// What a live file holds after its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tail {
    /// Nothing, or only the spaces held for the next lines.
    Spaces,
    /// Zeros too: room written ahead just before a crash, whose spaces never reached the disk.
    Zeros,
}

/// Where the lines of a live file of `len` bytes end: after its last byte that is neither
/// [`FILL`] nor zero; and what follows them.
fn data_end(file: &File, len: u64) -> io::Result<(u64, Tail)> {
    let mut block = vec![0u8; 64 * 1024];
    let mut end = len;
    let mut tail = Tail::Spaces;
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let block = &mut block[..(end - start) as usize];
        file.read_exact_at(block, start)?;
        let last = block.iter().rposition(|b| *b != FILL && *b != 0);
        let after = last.map_or(0, |last| last + 1);
        if block[after..].contains(&0) {
            tail = Tail::Zeros;
        }
        if let Some(last) = last {
            return Ok((start + last as u64 + 1, tail));
        }
        end = start;
    }
    Ok((0, tail))
}

/// The journal's directory: 0700, only its owner may list or read it.
const DIR_MODE: u32 = 0o700;
/// The journal files: 0600, only their owner may read them.
const FILE_MODE: u32 = 0o600;

/// The live journal file in `dir`, the directory and the files made private first (a directory
/// removed while a broker runs is made again).
fn open_in(dir: &Path) -> Result<Live> {
    make_private_dir(dir)?;
    let rotated = dir.join(ROTATED_NAME);
    if rotated.exists() {
        make_private_file(&rotated)?;
    }
    open_live(&dir.join(FILE_NAME))
}

/// Creates `dir` 0700 (its parents as usual), or tightens an existing one to 0700.
fn make_private_dir(dir: &Path) -> Result<()> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).at(parent)?;
    }
    match fs::DirBuilder::new().mode(DIR_MODE).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => {
            tighten(dir, DIR_MODE)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(not_a_directory(dir)),
        Err(e) => Err(Error::Io {
            path: dir.to_owned(),
            source: e,
        }),
    }
}

/// Tightens an existing journal file to 0600.
fn make_private_file(path: &Path) -> Result<()> {
    tighten(path, FILE_MODE)
}

/// Removes every permission beyond `mode` (the umask may have made a new one tighter still).
fn tighten(path: &Path, mode: u32) -> Result<()> {
    let current = fs::metadata(path).at(path)?.permissions().mode() & 0o7777;
    if current & !mode != 0 {
        tracing::info!(path = %path.display(), from = format_args!("{current:o}"), to = format_args!("{:o}", current & mode), "made the history journal private");
        fs::set_permissions(path, fs::Permissions::from_mode(current & mode)).at(path)?;
    }
    Ok(())
}

/// [`visit_dir`] on the default journal directory, without creating anything (no record when
/// there is no journal yet).
pub fn visit_default(visit: impl FnMut(Record)) -> Result<()> {
    visit_dir(&default_dir()?, visit)
}

/// The error for a journal directory that is something else.
fn not_a_directory(dir: &Path) -> Error {
    Error::Io {
        path: dir.to_owned(),
        source: io::Error::new(
            io::ErrorKind::NotADirectory,
            "it exists and is not a directory",
        ),
    }
}

/// The records of the journal in `dir`, oldest first, without creating anything.
pub fn read_dir(dir: &Path) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    visit_dir(dir, |record| records.push(record))?;
    Ok(records)
}

/// Hands each record of the journal in `dir` to `visit`, oldest first, without creating anything
/// and without holding them all: a reader that keeps only what it looks for stays small however
/// long the journal is.
pub fn visit_dir(dir: &Path, mut visit: impl FnMut(Record)) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(not_a_directory(dir));
    }
    // Each unreadable line is named up to a point; a journal mostly unreadable gets a count.
    const NAMED: usize = 10;
    let mut unreadable = 0usize;
    for path in [dir.join(ROTATED_NAME), dir.join(FILE_NAME)] {
        let text = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::Io { path, source: e }),
        };
        for (number, line) in text.split(|b| *b == b'\n').enumerate() {
            if is_filler(line) {
                continue;
            }
            // Zeros before a line: room written ahead that a crash left unwritten, then lines.
            let start = line.iter().position(|b| *b != 0).unwrap_or(line.len());
            match serde_json::from_slice::<Record>(&line[start..]) {
                Ok(record) => visit(record),
                Err(error) => {
                    unreadable += 1;
                    if unreadable <= NAMED {
                        tracing::warn!(path = %path.display(), line = number + 1, %error, "skipped an unreadable journal line");
                    }
                }
            }
        }
    }
    if unreadable > NAMED {
        tracing::warn!(
            dir = %dir.display(),
            "skipped {unreadable} unreadable journal lines in all ({} more than named above)",
            unreadable - NAMED
        );
    }
    Ok(())
}

/// A line that holds no record: blank, the spaces held for the live file's next lines (see
/// `FileStore`), or zeros. A read that races the live file being cut back (on close, before a
/// rotation) may see zeros where those spaces were: seen on Linux with ext4 as a read of the old
/// length with zeros after the last line.
fn is_filler(line: &[u8]) -> bool {
    line.iter().all(|b| b.is_ascii_whitespace() || *b == 0)
}

/// Makes a new or renamed file's directory entry durable, not only its contents.
fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).at(dir)
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
    fn a_settled_request_is_written_exactly_as_its_record() {
        let mut full = record(Outcome::Failed, 5);
        full.agent =
            Some(serde_json::from_value(serde_json::json!({"id": "bot", "label": "Bot"})).unwrap());
        full.error = Some(RecordedError {
            code: Some("NO_PROVIDER".into()),
            message: "nobody".into(),
        });
        full.answerer = Some("desk".into());
        // Whole milliseconds, as the record keeps them.
        full.asked_at = 1_796_000_000_123;
        let settled = Settled {
            request: Arc::new(Request {
                id: askdesk_core::RequestId(7),
                questions: full.questions.clone(),
                agent: full.agent.clone(),
                asked_at: UNIX_EPOCH + std::time::Duration::from_millis(full.asked_at),
            }),
            settled_at: full.settled_at,
            outcome: full.outcome,
            answer: full.answer.clone(),
            error: full.error.clone(),
            answerer: full.answerer.clone(),
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        Line::Record(full).write_to(&mut a);
        Line::Settled(settled).write_to(&mut b);
        assert_eq!(String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap());
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

    fn line(n: u64) -> String {
        serde_json::to_string(&record(Outcome::Answered, n)).unwrap() + "\n"
    }

    fn asked(journal: &Journal) -> Vec<u64> {
        journal.read().unwrap().iter().map(|r| r.asked_at).collect()
    }

    #[test]
    fn an_open_journal_holds_spaces_for_its_next_lines_and_one_at_rest_is_only_its_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(FILE_NAME);
        let journal = Journal::open(tmp.path()).unwrap();
        for n in 1..=3 {
            journal.append(&record(Outcome::Answered, n)).unwrap();
        }
        let lines = line(1) + &line(2) + &line(3);
        let open = fs::read_to_string(&path).unwrap();
        assert!(
            open.len() > lines.len(),
            "room is written ahead: {} bytes",
            open.len()
        );
        let (text, held) = open.split_at(lines.len());
        assert_eq!(text, lines);
        assert!(
            held.bytes().all(|b| b == b' '),
            "only spaces follow the lines"
        );
        assert_eq!(asked(&journal), vec![1, 2, 3]);

        drop(journal);
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            lines,
            "cut back on close"
        );
    }

    #[test]
    fn zeros_where_held_spaces_were_hold_no_record_but_a_zero_in_a_line_does_not_pass() {
        // What a read racing the live file's cut-back may see after the last line.
        assert!(is_filler(b""));
        assert!(is_filler(b"   \0\0\0\0 \0"));
        assert!(!is_filler(b"\0\0{\"askedAt\":1"));
        assert!(!is_filler(b" x "));
    }

    #[test]
    fn spaces_left_by_a_crash_are_written_over() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(FILE_NAME);
        fs::write(&path, line(1) + &" ".repeat(5000)).unwrap();
        let journal = Journal::open(tmp.path()).unwrap();
        journal.append(&record(Outcome::Answered, 2)).unwrap();
        assert_eq!(asked(&journal), vec![1, 2]);
        drop(journal);
        assert_eq!(fs::read_to_string(&path).unwrap(), line(1) + &line(2));
    }

    #[test]
    fn a_torn_line_before_the_spaces_is_fenced() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(FILE_NAME);
        let torn = "{\"askedAt\":2,\"sett";
        fs::write(&path, line(1) + torn + &" ".repeat(300)).unwrap();
        let journal = Journal::open(tmp.path()).unwrap();
        journal.append(&record(Outcome::Answered, 3)).unwrap();
        assert_eq!(asked(&journal), vec![1, 3]);
        drop(journal);
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            line(1) + torn + "\n" + &line(3)
        );
    }

    #[test]
    fn the_rotated_file_is_only_its_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let journal = Journal::open_with_limit(tmp.path(), 1000).unwrap();
        for n in 0..20 {
            journal.append(&record(Outcome::Answered, n)).unwrap();
        }
        let rotated = fs::read_to_string(tmp.path().join(ROTATED_NAME)).unwrap();
        assert!(rotated.ends_with('\n'), "{rotated:?}");
        assert!(
            rotated
                .lines()
                .all(|l| serde_json::from_str::<Record>(l).is_ok()),
            "whole records only: {rotated:?}"
        );
        let got = asked(&journal);
        assert_eq!(got.last(), Some(&19));
        assert!(got.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn two_journals_on_one_file_keep_every_line() {
        let tmp = tempfile::tempdir().unwrap();
        let a = Journal::open(tmp.path()).unwrap();
        let b = Journal::open(tmp.path()).unwrap();
        let threads: Vec<_> = [a, b]
            .into_iter()
            .enumerate()
            .map(|(j, journal)| {
                std::thread::spawn(move || {
                    for n in 0..50u64 {
                        journal
                            .append(&record(Outcome::Answered, j as u64 * 1000 + n))
                            .unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let text = fs::read_to_string(tmp.path().join(FILE_NAME)).unwrap();
        let mut got: Vec<u64> = text
            .lines()
            .map(|l| serde_json::from_str::<Record>(l).unwrap().asked_at)
            .collect();
        got.sort_unstable();
        let want: Vec<u64> = (0..50).chain(1000..1050).collect();
        assert_eq!(
            got, want,
            "every line of both, whole, and nothing after them"
        );
    }

    #[test]
    fn a_closed_journal_is_only_its_lines_and_refuses_appends() {
        let tmp = tempfile::tempdir().unwrap();
        let journal = Journal::open(tmp.path()).unwrap();
        journal.append(&record(Outcome::Answered, 1)).unwrap();
        let other = journal.clone();
        journal.close();
        assert_eq!(
            fs::read_to_string(tmp.path().join(FILE_NAME)).unwrap(),
            line(1),
            "cut back while a clone is still alive"
        );
        let error = other
            .append(&record(Outcome::Answered, 2))
            .expect_err("closed");
        assert!(error.to_string().contains("writer stopped"), "{error}");
    }

    /// A store that keeps the lines it made durable, holds each commit until the test gives its
    /// verdict, and counts commits (one per sync).
    struct Scripted {
        durable: Arc<Mutex<Vec<u64>>>,
        entered: mpsc::Sender<usize>,
        verdicts: mpsc::Receiver<io::Result<()>>,
    }

    impl Store for Scripted {
        fn commit(&mut self, lines: &[u8]) -> Result<(), BatchError> {
            let records: Vec<u64> = lines
                .split(|b| *b == b'\n')
                .filter(|l| !l.is_empty())
                .map(|l| serde_json::from_slice::<Record>(l).unwrap().asked_at)
                .collect();
            self.entered.send(records.len()).unwrap();
            self.verdicts
                .recv()
                .expect("the test gives a verdict")
                .map_err(BatchError::new(Path::new("scripted")))?;
            self.durable.lock().unwrap().extend(records);
            Ok(())
        }
    }

    struct Harness {
        journal: Journal,
        durable: Arc<Mutex<Vec<u64>>>,
        entered: mpsc::Receiver<usize>,
        verdicts: mpsc::Sender<io::Result<()>>,
    }

    fn scripted() -> Harness {
        let durable = Arc::new(Mutex::new(Vec::new()));
        let (entered, entered_rx) = mpsc::channel();
        let (verdicts_tx, verdicts) = mpsc::channel();
        let store = Scripted {
            durable: durable.clone(),
            entered,
            verdicts,
        };
        Harness {
            journal: Journal::start(PathBuf::from("scripted"), store).unwrap(),
            durable,
            entered: entered_rx,
            verdicts: verdicts_tx,
        }
    }

    fn is_pending(commit: &mut Commit) -> bool {
        Pin::new(commit)
            .poll(&mut Context::from_waker(std::task::Waker::noop()))
            .is_pending()
    }

    #[tokio::test]
    async fn appends_that_queue_during_a_sync_share_the_next_one_and_are_acknowledged_after_it() {
        let h = scripted();
        let mut first = h.journal.submit(record(Outcome::Answered, 0));
        assert_eq!(h.entered.recv().unwrap(), 1, "the first record syncs alone");
        // 63 more settle while that sync is in flight.
        let mut rest: Vec<Commit> = (1..64)
            .map(|n| h.journal.submit(record(Outcome::Answered, n)))
            .collect();
        assert!(is_pending(&mut first), "not acknowledged before its sync");
        h.verdicts.send(Ok(())).unwrap();
        first.await.unwrap();
        assert_eq!(*h.durable.lock().unwrap(), vec![0]);

        assert_eq!(
            h.entered.recv().unwrap(),
            63,
            "every record queued during the first sync goes in the second"
        );
        for commit in &mut rest {
            assert!(is_pending(commit), "not acknowledged before its sync");
        }
        h.verdicts.send(Ok(())).unwrap();
        for (n, commit) in (1..).zip(rest) {
            commit.await.unwrap();
            assert!(
                h.durable.lock().unwrap().contains(&n),
                "record {n} acknowledged before it was durable"
            );
        }
        assert_eq!(
            *h.durable.lock().unwrap(),
            (0..64).collect::<Vec<_>>(),
            "in order"
        );
        assert!(h.entered.try_recv().is_err(), "64 appends, 2 syncs");
    }

    #[tokio::test]
    async fn a_polling_writer_commits_records_that_come_while_it_polls_and_after_it_sleeps() {
        let h = scripted();
        h.journal.set_busy_poll(Duration::from_millis(300));
        let first = h.journal.submit(record(Outcome::Answered, 0));
        assert_eq!(h.entered.recv().unwrap(), 1);
        h.verdicts.send(Ok(())).unwrap();
        first.await.unwrap();
        // The writer now polls for the next record after a lone one: it comes within the window.
        let second = h.journal.submit(record(Outcome::Answered, 1));
        assert_eq!(h.entered.recv().unwrap(), 1, "taken while polling");
        h.verdicts.send(Ok(())).unwrap();
        second.await.unwrap();
        // Past the window the writer sleeps; a record wakes it.
        tokio::time::sleep(Duration::from_millis(600)).await;
        let third = h.journal.submit(record(Outcome::Answered, 2));
        assert_eq!(h.entered.recv().unwrap(), 1, "taken after sleeping");
        h.verdicts.send(Ok(())).unwrap();
        third.await.unwrap();
        assert_eq!(*h.durable.lock().unwrap(), vec![0, 1, 2]);
        // Closing while it polls still lets it go.
        let started = Instant::now();
        h.journal.close();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the writer ended"
        );
    }

    /// Waits (bounded) until the writer has handed `batches` batches to the relay.
    fn wait_for_relayed(journal: &Journal, batches: usize) {
        let started = Instant::now();
        while askdesk_core::sync::lock(&journal.inner.queue.relay.state)
            .batches
            .len()
            < batches
        {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the writer never handed its batch to the relay"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[tokio::test]
    async fn a_running_relay_takes_each_batch_and_acknowledges_its_records() {
        let h = scripted();
        let relay = h.journal.relay_acks().expect("the first relay");
        let first = h.journal.submit(record(Outcome::Answered, 0));
        assert_eq!(h.entered.recv().unwrap(), 1);
        let mut rest: Vec<Commit> = (1..4)
            .map(|n| h.journal.submit(record(Outcome::Answered, n)))
            .collect();
        h.verdicts.send(Ok(())).unwrap();
        assert_eq!(h.entered.recv().unwrap(), 3);
        h.verdicts.send(Ok(())).unwrap();
        wait_for_relayed(&h.journal, 2);
        // Durable, and acknowledged through the relay alone: nothing resolves until it runs.
        assert_eq!(*h.durable.lock().unwrap(), vec![0, 1, 2, 3]);
        for commit in &mut rest {
            assert!(is_pending(commit), "acknowledged around the relay");
        }
        let relay = tokio::spawn(relay);
        first.await.unwrap();
        for commit in rest {
            commit.await.unwrap();
        }
        // Later batches go through it too, and failures reach every waiter.
        let failing = h.journal.submit(record(Outcome::Answered, 4));
        assert_eq!(h.entered.recv().unwrap(), 1);
        h.verdicts
            .send(Err(io::Error::other("disk on fire")))
            .unwrap();
        let error = failing.await.expect_err("the batch failed");
        assert!(error.to_string().contains("disk on fire"), "{error}");
        relay.abort();
    }

    #[tokio::test]
    async fn dropping_a_relay_delivers_what_it_holds_and_the_writer_acknowledges_again() {
        let h = scripted();
        let relay = h.journal.relay_acks().expect("the first relay");
        assert!(h.journal.relay_acks().is_none(), "one relay at a time");
        let mut held = h.journal.submit(record(Outcome::Answered, 0));
        assert_eq!(h.entered.recv().unwrap(), 1);
        h.verdicts.send(Ok(())).unwrap();
        wait_for_relayed(&h.journal, 1);
        assert!(is_pending(&mut held));
        // Never polled, then dropped: what it held is delivered all the same.
        drop(relay);
        tokio::time::timeout(Duration::from_secs(10), held)
            .await
            .expect("delivered when the relay dropped")
            .unwrap();
        let direct = h.journal.submit(record(Outcome::Answered, 1));
        assert_eq!(h.entered.recv().unwrap(), 1);
        h.verdicts.send(Ok(())).unwrap();
        direct.await.unwrap();
        assert!(h.journal.relay_acks().is_some(), "a new relay may start");
    }

    #[test]
    fn a_blocking_append_is_answered_at_once_while_a_relay_runs() {
        let h = scripted();
        // Held and never polled: a blocked thread must not wait for it.
        let _relay = h.journal.relay_acks().expect("the first relay");
        let journal = h.journal.clone();
        let (appended, result) = mpsc::channel();
        std::thread::spawn(move || appended.send(journal.append(&record(Outcome::Failed, 7))));
        assert_eq!(h.entered.recv().unwrap(), 1);
        h.verdicts.send(Ok(())).unwrap();
        result
            .recv_timeout(Duration::from_secs(10))
            .expect("the blocked thread was told")
            .expect("acknowledged");
        assert_eq!(*h.durable.lock().unwrap(), vec![7]);
    }

    #[tokio::test]
    async fn a_failed_sync_is_reported_to_every_waiter_of_its_batch() {
        let h = scripted();
        let first = h.journal.submit(record(Outcome::Answered, 0));
        assert_eq!(h.entered.recv().unwrap(), 1);
        let batch: Vec<Commit> = (1..=10)
            .map(|n| h.journal.submit(record(Outcome::Answered, n)))
            .collect();
        h.verdicts.send(Ok(())).unwrap();
        first.await.unwrap();
        assert_eq!(h.entered.recv().unwrap(), 10);
        // Asked before the verdict: the writer records it as soon as it hears it.
        assert_eq!(h.journal.failure(), None, "no commit failed yet");
        h.verdicts
            .send(Err(io::Error::other("disk on fire")))
            .unwrap();
        for commit in batch {
            let error = commit.await.expect_err("the batch failed");
            assert!(error.to_string().contains("disk on fire"), "{error}");
        }
        // The failure shows (in `askdesk status`) until a commit succeeds.
        let failure = h.journal.failure().expect("the failure is kept");
        assert!(failure.contains("disk on fire"), "{failure}");
        // The journal keeps going: the next batch is written.
        let after = h.journal.submit(record(Outcome::Answered, 11));
        assert_eq!(h.entered.recv().unwrap(), 1);
        h.verdicts.send(Ok(())).unwrap();
        after.await.unwrap();
        assert_eq!(*h.durable.lock().unwrap(), vec![0, 11]);
        assert_eq!(h.journal.failure(), None, "written again");
    }

    #[test]
    fn a_blocking_append_waits_for_its_sync_and_hears_its_failure() {
        let h = scripted();
        let journal = h.journal.clone();
        let appender = std::thread::spawn(move || journal.append(&record(Outcome::Failed, 7)));
        assert_eq!(h.entered.recv().unwrap(), 1);
        assert!(!appender.is_finished() && h.durable.lock().unwrap().is_empty());
        h.verdicts.send(Err(io::Error::other("read-only"))).unwrap();
        let error = appender.join().unwrap().expect_err("the sync failed");
        assert!(error.to_string().contains("read-only"), "{error}");
    }

    #[tokio::test]
    async fn dropping_the_journal_writes_what_was_queued_and_waits_for_it() {
        let h = scripted();
        let commit = h.journal.submit(record(Outcome::Answered, 1));
        let journal = h.journal;
        let dropping = std::thread::spawn(move || drop(journal));
        assert_eq!(h.entered.recv().unwrap(), 1);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            !dropping.is_finished(),
            "the drop returned while its last record was not yet on disk"
        );
        h.verdicts.send(Ok(())).unwrap();
        commit.await.unwrap();
        dropping.join().unwrap();
        assert_eq!(*h.durable.lock().unwrap(), vec![1]);
    }

    /// A store that panics, as a writer thread might on a bug.
    struct Panicking;

    impl Store for Panicking {
        fn commit(&mut self, _: &[u8]) -> Result<(), BatchError> {
            panic!("a bug in the writer");
        }
    }

    #[tokio::test]
    async fn a_writer_that_panicked_fails_appends_instead_of_hanging_them() {
        let journal = Journal::start(PathBuf::from("panicking"), Panicking).unwrap();
        let error = journal
            .submit(record(Outcome::Answered, 1))
            .await
            .expect_err("no writer");
        assert!(error.to_string().contains("writer stopped"), "{error}");
        // Later appends fail at once too, async and blocking alike.
        let error = journal
            .submit(record(Outcome::Answered, 2))
            .await
            .expect_err("no writer");
        assert!(error.to_string().contains("writer stopped"), "{error}");
        let error = journal
            .append(&record(Outcome::Answered, 3))
            .expect_err("no writer");
        assert!(error.to_string().contains("writer stopped"), "{error}");
    }

    #[test]
    fn concurrent_appends_all_land_as_whole_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let journal = Journal::open(tmp.path()).unwrap();
        let threads: Vec<_> = (0..32u64)
            .map(|t| {
                let journal = journal.clone();
                std::thread::spawn(move || {
                    for n in 0..20 {
                        journal
                            .append(&record(Outcome::Answered, t * 100 + n))
                            .unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let mut got: Vec<u64> = journal.read().unwrap().iter().map(|r| r.asked_at).collect();
        got.sort_unstable();
        let want: Vec<u64> = (0..32u64)
            .flat_map(|t| (0..20).map(move |n| t * 100 + n))
            .collect();
        assert_eq!(got, want);
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_journal_is_private_rotated_file_included() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data/askdesk");
        let journal = Journal::open_with_limit(&dir, 500).unwrap();
        for n in 0..10 {
            journal.append(&record(Outcome::Answered, n)).unwrap();
        }
        assert!(dir.join(ROTATED_NAME).exists(), "rotated");
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join(FILE_NAME)), 0o600);
        assert_eq!(mode(&dir.join(ROTATED_NAME)), 0o600);
    }

    #[test]
    fn an_existing_journal_is_made_private_on_open() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("askdesk");
        fs::create_dir(&dir).unwrap();
        let line = serde_json::to_string(&record(Outcome::Answered, 1)).unwrap() + "\n";
        for name in [FILE_NAME, ROTATED_NAME] {
            fs::write(dir.join(name), &line).unwrap();
            fs::set_permissions(dir.join(name), fs::Permissions::from_mode(0o644)).unwrap();
        }
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        let journal = Journal::open(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join(FILE_NAME)), 0o600);
        assert_eq!(mode(&dir.join(ROTATED_NAME)), 0o600);
        assert_eq!(journal.read().unwrap().len(), 2, "the records are kept");
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

    fn line_len() -> u64 {
        serde_json::to_string(&record(Outcome::Answered, 1000))
            .unwrap()
            .len() as u64
            + 1
    }

    #[test]
    fn two_journals_rotating_one_file_lose_nothing() {
        // Each rotation renames the live file; the other journal must not keep writing to the
        // renamed one, nor rename its successor over it.
        let tmp = tempfile::tempdir().unwrap();
        let limit = 4000;
        let a = Journal::open_with_limit(tmp.path(), limit).unwrap();
        let b = Journal::open_with_limit(tmp.path(), limit).unwrap();
        // Past one rotation, short of a second: every record is still kept.
        let rounds = limit * 8 / 5 / line_len() / 2;
        for n in 0..rounds {
            a.append(&record(Outcome::Answered, 1000 + n)).unwrap();
            b.append(&record(Outcome::Answered, 2000 + n)).unwrap();
        }
        assert!(tmp.path().join(ROTATED_NAME).exists(), "the test rotates");
        let mut got = asked(&a);
        got.sort_unstable();
        let want: Vec<u64> = (1000..1000 + rounds).chain(2000..2000 + rounds).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_journal_removed_while_open_is_started_again() {
        let tmp = tempfile::tempdir().unwrap();
        let journal = Journal::open(tmp.path()).unwrap();
        journal.append(&record(Outcome::Answered, 1)).unwrap();
        fs::remove_file(journal.path()).unwrap();
        journal.append(&record(Outcome::Answered, 2)).unwrap();
        journal.append(&record(Outcome::Answered, 3)).unwrap();
        assert_eq!(asked(&journal), vec![2, 3]);
        assert_eq!(mode(&journal.path()), 0o600);
    }

    #[test]
    fn zeros_left_after_the_lines_are_cut_off_not_fenced() {
        // Room written ahead whose spaces never reached the disk reads back as zeros.
        let tmp = tempfile::tempdir().unwrap();
        let first = serde_json::to_string(&record(Outcome::Answered, 1)).unwrap();
        let mut bytes = format!("{first}\n").into_bytes();
        bytes.extend(std::iter::repeat_n(0u8, 4096));
        bytes.extend(b"   ");
        fs::write(tmp.path().join(FILE_NAME), &bytes).unwrap();
        let journal = Journal::open(tmp.path()).unwrap();
        journal.append(&record(Outcome::Answered, 2)).unwrap();
        journal.close();
        let second = serde_json::to_string(&record(Outcome::Answered, 2)).unwrap();
        assert_eq!(
            fs::read_to_string(tmp.path().join(FILE_NAME)).unwrap(),
            format!("{first}\n{second}\n")
        );
    }

    #[test]
    fn a_line_after_zeros_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        let first = serde_json::to_string(&record(Outcome::Answered, 1)).unwrap();
        let second = serde_json::to_string(&record(Outcome::Answered, 2)).unwrap();
        let mut bytes = format!("{first}\n").into_bytes();
        bytes.extend([0u8; 100]);
        bytes.extend(format!("{second}\n").bytes());
        fs::write(tmp.path().join(FILE_NAME), &bytes).unwrap();
        let got: Vec<u64> = read_dir(tmp.path())
            .unwrap()
            .iter()
            .map(|r| r.asked_at)
            .collect();
        assert_eq!(got, vec![1, 2]);
    }

    #[test]
    fn a_journal_that_is_a_symbolic_link_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("precious");
        fs::write(&elsewhere, "precious data\n").unwrap();
        std::os::unix::fs::symlink(&elsewhere, tmp.path().join(FILE_NAME)).unwrap();
        let error = Journal::open(tmp.path()).unwrap_err().to_string();
        assert!(error.contains(FILE_NAME), "{error}");
        assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "precious data\n");
        assert_eq!(mode(&elsewhere), 0o644 & !umask());
    }

    fn umask() -> u32 {
        // SAFETY: umask only swaps the process's mask; it is put back at once.
        unsafe {
            let mask = libc::umask(0o022);
            libc::umask(mask);
            mask as u32
        }
    }

    /// Set for the child process of [`a_full_disk_takes_the_lines_without_room_ahead`].
    const FULL_DISK_CHILD: &str = "ASKDESK_JOURNAL_TEST_FULL_DISK";

    #[test]
    fn a_full_disk_takes_the_lines_without_room_ahead() {
        // A file-size limit stands in for a full disk: writes past it fail. The room written
        // ahead (1 MiB) does not fit, the lines do; they must be committed and nothing held.
        const LIMIT: u64 = 64 * 1024;
        if let Some(dir) = std::env::var_os(FULL_DISK_CHILD) {
            let dir = Path::new(&dir);
            let journal = Journal::open(dir).unwrap();
            let fit = LIMIT / line_len();
            for n in 0..fit {
                journal
                    .append(&record(Outcome::Answered, 1000 + n))
                    .unwrap();
            }
            let error = journal
                .append(&record(Outcome::Answered, 1000 + fit))
                .unwrap_err();
            assert!(error.to_string().contains("too large"), "{error}");
            let len = fs::metadata(journal.path()).unwrap().len();
            assert_eq!(len, fit * line_len(), "nothing but the lines");
            assert_eq!(asked(&journal), (1000..1000 + fit).collect::<Vec<_>>());
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "--exact",
                "store::tests::a_full_disk_takes_the_lines_without_room_ahead",
            ])
            .env(FULL_DISK_CHILD, tmp.path());
        // SAFETY: between fork and exec only async-signal-safe calls (setrlimit, signal).
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut child, || {
                let limit = libc::rlimit {
                    rlim_cur: LIMIT,
                    rlim_max: LIMIT,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // A write past the limit then fails with EFBIG instead of killing the process.
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                Ok(())
            });
        }
        let output = child.output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
