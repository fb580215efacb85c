//! The broker crate's error type.

use std::io;
use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong setting up or running the broker.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Another broker is listening on the socket: use it, or stop it first.
    #[error("another askdesk broker is already running on {}", path.display())]
    AlreadyRunning { path: PathBuf },
    /// The socket's directory is not private to this user; fix its owner or mode, or pick another path.
    #[error("refusing to use socket directory {}: {problem}", dir.display())]
    UnsafeDirectory { dir: PathBuf, problem: String },
    /// Something that is not a socket sits at the socket path; remove it or pick another path.
    #[error("{} exists and is not a socket", path.display())]
    NotASocket { path: PathBuf },
    /// An I/O failure at a path.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }
}
