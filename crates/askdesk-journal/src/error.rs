//! The journal crate's error type.

use std::io;
use std::path::{Path, PathBuf};

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong opening, writing or reading the journal.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No directory for the journal could be found ($XDG_DATA_HOME and $HOME are both unset).
    #[error("no data directory: set XDG_DATA_HOME or HOME")]
    NoDataDir,
    /// An I/O failure on the journal's directory or one of its files.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

/// Names the path an I/O failure happened at.
pub(crate) trait AtPath<T> {
    /// The failure as [`Error::Io`] at `path`.
    fn at(self, path: &Path) -> Result<T>;
}

impl<T> AtPath<T> for io::Result<T> {
    fn at(self, path: &Path) -> Result<T> {
        self.map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })
    }
}
