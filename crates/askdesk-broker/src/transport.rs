//! Where the broker's socket lives and how it is secured (protocol 5.1): a private directory, a 0600
//! socket, a uid check on every peer, stale-socket recovery, and no stealing from a live broker.
//!
//! Only Unix stream sockets are built today. A Windows named pipe would be one more module that
//! yields the same `AsyncRead + AsyncWrite` streams for the server to serve.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::net::UnixListener;

use crate::error::{Error, Result};
use crate::socket::Socket;

/// The socket path of protocol 5.1: `$ASKDESK_SOCKET`, else `$XDG_RUNTIME_DIR/askdesk/askdesk.sock`,
/// else `<tmp>/askdesk-<uid>/askdesk.sock`.
pub fn socket_path() -> PathBuf {
    if let Some(path) = std::env::var_os("ASKDESK_SOCKET").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").filter(|p| !p.is_empty()) {
        return Path::new(&runtime).join("askdesk").join("askdesk.sock");
    }
    std::env::temp_dir()
        .join(format!("askdesk-{}", current_uid()))
        .join("askdesk.sock")
}

/// The effective uid of this process.
pub fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// A bound, secured listening socket. Dropping it does not remove the file; [`Listener::remove`] does.
#[derive(Debug)]
pub struct Listener {
    inner: UnixListener,
    path: PathBuf,
    /// Device and inode of the socket file we created, so we never remove a successor's.
    identity: (u64, u64),
}

impl Listener {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Accepts the next peer of this user (or root). Peers of other uids are closed without a byte.
    pub async fn accept(&self) -> io::Result<Socket> {
        loop {
            let (stream, _) = self.inner.accept().await?;
            match stream.peer_cred() {
                Ok(cred) if cred.uid() == current_uid() || cred.uid() == 0 => {
                    return Socket::new(stream.into_std()?)
                }
                Ok(cred) => {
                    tracing::warn!(uid = cred.uid(), "refused a connection from another user")
                }
                Err(error) => {
                    tracing::warn!(%error, "refused a connection whose peer could not be identified")
                }
            }
            drop(stream);
        }
    }

    /// Removes the socket file, if it is still the one this listener created.
    pub fn remove(&self) {
        if let Ok(meta) = fs::symlink_metadata(&self.path) {
            if (meta.dev(), meta.ino()) == self.identity {
                let _ = fs::remove_file(&self.path);
            }
        }
    }
}

/// Binds the broker socket at `path`, securing its directory first.
///
/// Fails with [`Error::AlreadyRunning`] when a live broker answers on `path`; a socket file left by
/// a dead broker is replaced. Must be called inside a Tokio runtime.
pub fn bind(path: &Path) -> Result<Listener> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    secure_dir(dir)?;
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => {
            // A live broker accepts; a dead one's file refuses the connection.
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(Error::AlreadyRunning {
                    path: path.to_owned(),
                });
            }
            tracing::info!(path = %path.display(), "replacing a stale socket left by a broker that is gone");
            fs::remove_file(path).map_err(Error::io(path))?;
        }
        Ok(_) => {
            return Err(Error::NotASocket {
                path: path.to_owned(),
            })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(Error::Io {
                path: path.to_owned(),
                source: e,
            })
        }
    }
    let inner = UnixListener::bind(path).map_err(|e| match e.kind() {
        // Another broker won the race between our probe and our bind.
        io::ErrorKind::AddrInUse => Error::AlreadyRunning {
            path: path.to_owned(),
        },
        _ => Error::Io {
            path: path.to_owned(),
            source: e,
        },
    })?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600)).map_err(Error::io(path))?;
    let meta = fs::symlink_metadata(path).map_err(Error::io(path))?;
    Ok(Listener {
        inner,
        path: path.to_owned(),
        identity: (meta.dev(), meta.ino()),
    })
}

/// Creates `dir` 0700 if missing; refuses one not owned by this user or open to others.
fn secure_dir(dir: &Path) -> Result<()> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // Parents are ordinary directories (e.g. a runtime dir's parent); only the last is ours.
            if let Some(parent) = dir.parent() {
                fs::create_dir_all(parent).map_err(Error::io(parent))?;
            }
            fs::DirBuilder::new()
                .mode(0o700)
                .create(dir)
                .map_err(Error::io(dir))?;
        }
        Err(e) => {
            return Err(Error::Io {
                path: dir.to_owned(),
                source: e,
            })
        }
    }
    let meta = fs::symlink_metadata(dir).map_err(Error::io(dir))?;
    let unsafe_dir = |problem: String| Error::UnsafeDirectory {
        dir: dir.to_owned(),
        problem,
    };
    if !meta.is_dir() {
        return Err(unsafe_dir("it is not a directory (or is a symlink)".into()));
    }
    if meta.uid() != current_uid() {
        return Err(unsafe_dir(format!(
            "it is owned by uid {}, not by uid {}",
            meta.uid(),
            current_uid()
        )));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(unsafe_dir(format!(
            "its mode {mode:04o} lets other users in; it must be 0700"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn creates_private_dir_and_socket() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("run").join("askdesk.sock");
        let listener = bind(&path).unwrap();
        let dir_mode = fs::metadata(tmp.path().join("run")).unwrap().mode() & 0o777;
        let sock_mode = fs::symlink_metadata(&path).unwrap().mode() & 0o777;
        assert_eq!((dir_mode, sock_mode), (0o700, 0o600));
        listener.remove();
        assert!(!path.exists());
    }

    #[tokio::test]
    async fn refuses_open_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("open");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        let err = bind(&dir.join("askdesk.sock")).unwrap_err();
        assert!(
            err.to_string()
                .contains("its mode 0755 lets other users in"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn live_broker_is_not_stolen_and_stale_socket_is_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("run").join("askdesk.sock");
        let first = bind(&path).unwrap();
        assert!(matches!(bind(&path), Err(Error::AlreadyRunning { .. })));
        drop(first); // the file stays behind, as after a crash
        assert!(path.exists());
        let second = bind(&path).unwrap();
        second.remove();
    }

    #[tokio::test]
    async fn refuses_to_delete_a_regular_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
        fs::write(dir.join("askdesk.sock"), b"precious").unwrap();
        assert!(matches!(
            bind(&dir.join("askdesk.sock")),
            Err(Error::NotASocket { .. })
        ));
        assert_eq!(fs::read(dir.join("askdesk.sock")).unwrap(), b"precious");
    }
}
