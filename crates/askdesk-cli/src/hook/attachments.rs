//! The pictures a person answered a hook's prompt with, saved as files under the project's folder
//! (`.askdesk/attachments/`), since a hook's decision carries only text: each file's path goes into
//! the answer's text in its place.

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use askdesk_core::Answer;

/// The folder under the project's folder the pictures are saved in, one component at a time.
pub const FOLDER: [&str; 2] = [".askdesk", "attachments"];

/// `answer` with each item's pictures saved under `project` and named in its `custom` text (and
/// taken off the item), or why they could not be: then no decision is made from the answer.
pub fn save(mut answer: Answer, project: Option<&str>) -> Result<Answer, String> {
    if !answer.has_images() {
        return Ok(answer);
    }
    let project = project
        .map(Path::new)
        .filter(|path| path.is_absolute())
        .ok_or("the answer has a picture, and the client named no project folder to save it in")?;
    let folder = Folder::open(project)?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis());
    for (i, item) in answer.answers.iter_mut().enumerate() {
        let mut lines = Vec::new();
        for (k, image) in std::mem::take(&mut item.images).iter().enumerate() {
            let png = askdesk_image::safe_png(image)
                .map_err(|refusal| format!("the answer's picture cannot be saved: {refusal}"))?;
            let path = folder.write(&format!("{stamp}-{i}-{k}"), &png)?;
            lines.push(format!("[The user attached a picture: {}]", path.display()));
        }
        if lines.is_empty() {
            continue;
        }
        let text = item.custom.take().unwrap_or_default();
        let text = text.trim_end();
        item.custom = Some(if text.is_empty() {
            lines.join("\n")
        } else {
            format!("{text}\n\n{}", lines.join("\n"))
        });
    }
    Ok(answer)
}

/// `.askdesk/attachments` under a project's folder, opened without following a link at either
/// component, each created 0700 when missing.
struct Folder {
    fd: OwnedFd,
    path: PathBuf,
}

impl Folder {
    fn open(project: &Path) -> Result<Folder, String> {
        let fail = |what: &Path, error: std::io::Error| {
            format!(
                "the answer's picture cannot be saved in {}: {error}",
                what.display()
            )
        };
        let mut fd = open_dir(None, project, false).map_err(|e| fail(project, e))?;
        let mut path = project.to_path_buf();
        for name in FOLDER {
            path.push(name);
            fd = open_dir(Some(&fd), Path::new(name), true).map_err(|e| fail(&path, e))?;
        }
        Ok(Folder { fd, path })
    }

    /// A new 0600 file `<stem>.png` (or `<stem>-<n>.png` when taken) holding `png`: its path.
    fn write(&self, stem: &str, png: &[u8]) -> Result<PathBuf, String> {
        for n in 0..100 {
            let name = match n {
                0 => format!("{stem}.png"),
                n => format!("{stem}-{n}.png"),
            };
            let c_name = CString::new(name.as_str()).expect("no NUL in a file name");
            let flags =
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
            // SAFETY: `c_name` is a NUL-terminated string and `self.fd` an open directory.
            let raw = unsafe { libc::openat(self.fd.as_raw_fd(), c_name.as_ptr(), flags, 0o600) };
            let path = self.path.join(&name);
            if raw < 0 {
                let error = std::io::Error::last_os_error();
                if error.kind() == std::io::ErrorKind::AlreadyExists {
                    continue;
                }
                return Err(format!(
                    "the answer's picture cannot be saved as {}: {error}",
                    path.display()
                ));
            }
            // SAFETY: `raw` is a file descriptor just opened and owned by nobody else.
            let mut file = File::from(unsafe { OwnedFd::from_raw_fd(raw) });
            file.write_all(png)
                .and_then(|()| file.sync_all())
                .map_err(|error| {
                    format!(
                        "the answer's picture cannot be saved as {}: {error}",
                        path.display()
                    )
                })?;
            return Ok(path);
        }
        Err(format!(
            "the answer's picture cannot be saved in {}: too many files of its name",
            self.path.display()
        ))
    }
}

/// The directory `name` opened (relative to `at`, else as given) without following a link at its
/// last component; created 0700 first when `create`.
fn open_dir(at: Option<&OwnedFd>, name: &Path, create: bool) -> std::io::Result<OwnedFd> {
    let c_name = CString::new(name.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let dir = at.map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
    if create {
        // SAFETY: `c_name` is NUL-terminated and `dir` an open directory or AT_FDCWD.
        if unsafe { libc::mkdirat(dir, c_name.as_ptr(), 0o700) } < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(error);
            }
        }
    }
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: as above.
    let raw = unsafe { libc::openat(dir, c_name.as_ptr(), flags) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `raw` is a file descriptor just opened and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};

    use askdesk_core::{AnswerItem, Image};

    use super::*;

    /// A 1×1 PNG, as the broker hands it on.
    fn png() -> Image {
        Image {
            mime: Some("image/png".into()),
            data: Some("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==".into()),
            path: None,
        }
    }

    fn answer(custom: Option<&str>) -> Answer {
        let mut item = AnswerItem::skipped("plan");
        item.custom = custom.map(Into::into);
        item.images.push(png());
        Answer {
            answers: vec![item],
        }
    }

    #[test]
    fn a_picture_is_saved_private_under_the_project_and_named_in_the_text() {
        let project = tempfile::tempdir().unwrap();
        let saved = save(answer(Some("like this ")), project.path().to_str()).unwrap();
        let item = &saved.answers[0];
        assert!(item.images.is_empty());
        let text = item.custom.as_deref().unwrap();
        let path = text
            .strip_prefix("like this\n\n[The user attached a picture: ")
            .and_then(|rest| rest.strip_suffix(']'))
            .unwrap_or_else(|| panic!("{text}"));
        let path = Path::new(path);
        assert_eq!(
            path.parent().unwrap(),
            project.path().join(".askdesk/attachments")
        );
        assert_eq!(std::fs::metadata(path).unwrap().mode() & 0o777, 0o600);
        for folder in [".askdesk", ".askdesk/attachments"] {
            let mode = std::fs::metadata(project.path().join(folder))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700, "{folder}");
        }
        assert!(std::fs::read(path)
            .unwrap()
            .starts_with(b"\x89PNG\r\n\x1a\n"));
        // A second picture of the same moment gets a name of its own.
        let again = save(answer(None), project.path().to_str()).unwrap();
        let second = again.answers[0].custom.as_deref().unwrap();
        assert!(
            second.starts_with("[The user attached a picture: "),
            "{second}"
        );
        assert_ne!(second, &text[text.find('[').unwrap()..]);
    }

    #[test]
    fn a_link_in_the_attachments_path_is_never_followed() {
        let project = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        symlink(elsewhere.path(), project.path().join(".askdesk")).unwrap();
        let error = save(answer(None), project.path().to_str()).unwrap_err();
        assert!(error.contains(".askdesk"), "{error}");
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
        std::fs::remove_file(project.path().join(".askdesk")).unwrap();
        std::fs::create_dir(project.path().join(".askdesk")).unwrap();
        symlink(
            elsewhere.path(),
            project.path().join(".askdesk/attachments"),
        )
        .unwrap();
        assert!(save(answer(None), project.path().to_str()).is_err());
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }

    #[test]
    fn without_a_project_folder_or_with_an_unsafe_image_nothing_is_decided() {
        assert!(save(answer(None), None).is_err());
        assert!(save(answer(None), Some("relative/path")).is_err());
        let project = tempfile::tempdir().unwrap();
        let mut bad = answer(None);
        bad.answers[0].images[0].mime = Some("image/svg+xml".into());
        assert!(save(bad, project.path().to_str()).is_err());
        // An answer without pictures is left as it is.
        let plain = Answer {
            answers: vec![AnswerItem::skipped("plan")],
        };
        assert_eq!(save(plain.clone(), None).unwrap(), plain);
    }
}
