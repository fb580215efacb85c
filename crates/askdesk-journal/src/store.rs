//! The journal's files under its directory (0700): the live `history.jsonl` and the rotated
//! `history.1.jsonl` (0600), opened without following links; the spaces held ahead of the next
//! lines, cut back at rest; a torn last line fenced off; rotation; a file rotated or removed by
//! someone else followed to the one now at the path.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::commit::{BatchError, Store};
use crate::error::{AtPath, Error, Result};

/// The journal file's name; the rotated generation is `history.1.jsonl`.
pub const FILE_NAME: &str = "history.jsonl";
pub(crate) const ROTATED_NAME: &str = "history.1.jsonl";
/// Rotate once the live file passes this size, so the journal stays under twice it.
pub const DEFAULT_MAX_BYTES: u64 = 8 * 1024 * 1024;

/// The journal files: the live one written at its end, rotated to `history.1.jsonl` past
/// `max_bytes`.
///
/// While the journal is open the live file is longer than its lines: spaces are written ahead of
/// the next lines, a chunk at a time, and the lines overwrite them. A commit then changes neither
/// the file's size nor its blocks, so its `fdatasync` flushes the data alone, without a commit of
/// the filesystem's own journal (on ext4 that is a quarter to a third of an appending sync). The
/// spaces are one blank line after the last newline, which every JSON-lines reader skips; the file
/// is cut back to its last line when the journal closes and before it is rotated.
pub(crate) struct FileStore {
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
    /// The store of the journal in `dir`, its live file opened (and the directory made) now.
    pub(crate) fn open(dir: &Path, max_bytes: u64) -> Result<FileStore> {
        Ok(FileStore {
            dir: dir.to_owned(),
            max_bytes,
            file: Some(open_in(dir)?),
        })
    }

    /// The store of the journal in `dir`; when its live file cannot be opened now, the first
    /// commit opens it, and the reason is returned with the store.
    pub(crate) fn open_or_later(dir: &Path, max_bytes: u64) -> (FileStore, Option<Error>) {
        let (file, error) = match open_in(dir) {
            Ok(file) => (Some(file), None),
            Err(error) => (None, Some(error)),
        };
        let store = FileStore {
            dir: dir.to_owned(),
            max_bytes,
            file,
        };
        (store, error)
    }

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

/// The error for a journal directory that is something else.
pub(crate) fn not_a_directory(dir: &Path) -> Error {
    Error::Io {
        path: dir.to_owned(),
        source: io::Error::new(
            io::ErrorKind::NotADirectory,
            "it exists and is not a directory",
        ),
    }
}

/// Makes a new or renamed file's directory entry durable, not only its contents.
fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).at(dir)
}

/// The journal's directory: `$XDG_DATA_HOME/askdesk/`, else `~/.local/share/askdesk/`.
pub fn default_dir() -> Result<PathBuf> {
    let data = askdesk_core::xdg::data_home().ok_or(Error::NoDataDir)?;
    Ok(data.join("askdesk"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commit::Journal;
    use crate::record::tests::record;
    use crate::record::{Outcome, Record};

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
