//! The group commit: [`Journal`], the queue every clone feeds, and its writer thread, which takes
//! what is queued, has the store write it and sync once, and acknowledges each record.

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::error::{AtPath, Error, Result};
use crate::read::{read_dir, visit_dir};
use crate::record::{Line, Record};
use crate::store::{default_dir, FileStore, DEFAULT_MAX_BYTES, FILE_NAME};

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
        let store = FileStore::open(dir, max_bytes)?;
        Journal::start(dir.to_owned(), store)
    }

    /// The journal under the default directory, as [`Journal::open_default`], except that a
    /// journal that cannot be opened now (its directory in the way of a file, unwritable, the file
    /// a directory) is opened by the first commit after the cause is gone: until then every commit
    /// fails and [`Journal::failure`] says why, starting with the reason returned here. `Err` only
    /// when there is no default directory at all.
    pub fn open_default_or_later() -> Result<(Journal, Option<Error>)> {
        let dir = default_dir()?;
        let (store, error) = FileStore::open_or_later(&dir, DEFAULT_MAX_BYTES);
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
pub(crate) struct BatchError {
    path: PathBuf,
    source: Arc<io::Error>,
}

impl BatchError {
    pub(crate) fn new(path: &Path) -> impl FnOnce(io::Error) -> BatchError + '_ {
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
pub(crate) trait Store: Send + 'static {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::tests::record;
    use crate::record::Outcome;

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
}
