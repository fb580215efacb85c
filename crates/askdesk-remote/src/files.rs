//! The remote's private files: its directory (0700) under askdesk's data directory, and files
//! written whole and atomically with mode 0600 (a temporary file beside the target, renamed over it).

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::Error;

/// `$XDG_DATA_HOME/askdesk/remote` (else `$HOME/.local/share/askdesk/remote`).
pub fn default_dir() -> Result<PathBuf, Error> {
    askdesk_core::xdg::data_home()
        .map(|data| data.join("askdesk").join("remote"))
        .ok_or(Error::NoDataDirectory)
}

/// Creates `dir` (and its parents) if missing and makes it 0700: it holds private keys.
pub fn private_dir(dir: &Path) -> Result<(), Error> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(Error::io(dir))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(Error::io(dir))
}

/// Writes `bytes` as `path`, mode 0600: a reader sees the old file or the new one, never a part.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    // tempfile creates its files 0600.
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(Error::io(dir))?;
    temp.write_all(bytes).map_err(Error::io(path))?;
    temp.as_file().sync_all().map_err(Error::io(path))?;
    temp.persist(path)
        .map_err(|error| Error::io(path)(error.error))?;
    Ok(())
}

/// The file's contents, or `None` when it does not exist.
pub fn read_if_present(path: &Path) -> Result<Option<Vec<u8>>, Error> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(Error::io(path)(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_files_are_0600_and_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key.pem");
        write_private(&path, b"first").unwrap();
        write_private(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }

    #[test]
    fn the_private_directory_is_0700_even_if_it_existed_wider() {
        let dir = tempfile::tempdir().unwrap();
        let remote = dir.path().join("askdesk/remote");
        fs::create_dir_all(&remote).unwrap();
        fs::set_permissions(&remote, fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&remote).unwrap();
        let mode = fs::metadata(&remote).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}
