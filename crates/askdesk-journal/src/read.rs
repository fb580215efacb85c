//! Reading the journal back, oldest first: the rotated file, then the live one, record by record
//! without holding them all; blank lines, held spaces and zeros skipped, an unreadable line skipped
//! with a warning.

use std::fs;
use std::path::Path;

use crate::error::{Error, Result};
use crate::record::Record;
use crate::store::{default_dir, not_a_directory, FILE_NAME, ROTATED_NAME};

/// [`visit_dir`] on the default journal directory, without creating anything (no record when
/// there is no journal yet).
pub fn visit_default(visit: impl FnMut(Record)) -> Result<()> {
    visit_dir(&default_dir()?, visit)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::tests::record;
    use crate::record::Outcome;

    #[test]
    fn zeros_where_held_spaces_were_hold_no_record_but_a_zero_in_a_line_does_not_pass() {
        // What a read racing the live file's cut-back may see after the last line.
        assert!(is_filler(b""));
        assert!(is_filler(b"   \0\0\0\0 \0"));
        assert!(!is_filler(b"\0\0{\"askedAt\":1"));
        assert!(!is_filler(b" x "));
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
}
