//! Whether the desktop app starts at login. The package installs the system-wide entry
//! `/etc/xdg/autostart/askdesk.desktop`; a person turns it off the XDG way, with an entry of the
//! same name in `$XDG_CONFIG_HOME/autostart` (`~/.config/autostart`) that says `Hidden=true`,
//! which the app's "Start at login" switch writes and removes.

use std::path::{Path, PathBuf};

use askdesk_i18n::t;
use serde::Serialize;

use crate::error::{Error, Result};

/// The entry's file name, in every autostart folder.
pub const ENTRY: &str = "askdesk.desktop";

/// What the switch shows: whether an autostart entry is installed at all, and whether it runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Autostart {
    /// An entry exists (the package's, or one of the person's own).
    pub available: bool,
    /// It starts the app at login.
    pub enabled: bool,
    /// The per-user entry the switch writes.
    pub user_entry: String,
}

/// `$XDG_CONFIG_HOME/autostart`, else `~/.config/autostart`.
fn user_dir() -> Result<PathBuf> {
    let config = askdesk_core::xdg::config_home()
        .ok_or_else(|| Error::Usage(t!("connect-no-config-home")))?;
    Ok(config.join("autostart"))
}

/// The system folders, `$XDG_CONFIG_DIRS` (else `/etc/xdg`), each with `autostart`.
fn system_dirs() -> Vec<PathBuf> {
    let dirs = std::env::var("XDG_CONFIG_DIRS")
        .ok()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "/etc/xdg".to_owned());
    dirs.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join("autostart"))
        .collect()
}

/// Whether a desktop entry's text says `Hidden=true` in its `[Desktop Entry]` group.
fn hidden(text: &str) -> bool {
    let mut in_entry = false;
    text.lines().map(str::trim).any(|line| {
        if line.starts_with('[') {
            in_entry = line == "[Desktop Entry]";
        }
        in_entry
            && line
                .strip_prefix("Hidden=")
                .is_some_and(|v| v.trim() == "true")
    })
}

/// Where autostart stands: the per-user entry, when there is one, decides; else the system's.
pub fn status() -> Result<Autostart> {
    Ok(status_in(&user_dir()?, &system_dirs()))
}

/// Turns starting at login on (the per-user entry removed, the system's applies) or off (a
/// per-user entry with `Hidden=true`). Only an entry that hides it is removed: a person's own
/// entry that starts the app is left.
pub fn set(enabled: bool) -> Result<Autostart> {
    set_in(&user_dir()?, enabled)?;
    status()
}

fn status_in(user_dir: &Path, system_dirs: &[PathBuf]) -> Autostart {
    let user = user_dir.join(ENTRY);
    let user_text = std::fs::read_to_string(&user).ok();
    let system = system_dirs
        .iter()
        .map(|d| d.join(ENTRY))
        .find(|p| p.is_file());
    let (available, enabled) = match (&user_text, &system) {
        (Some(text), _) => (true, !hidden(text)),
        (None, Some(_)) => (true, true),
        (None, None) => (false, false),
    };
    Autostart {
        available,
        enabled,
        user_entry: user.display().to_string(),
    }
}

fn set_in(dir: &Path, enabled: bool) -> Result<()> {
    let user = dir.join(ENTRY);
    let path = user.display().to_string();
    let path = path.as_str();
    if enabled {
        match std::fs::read_to_string(&user) {
            Ok(text) if hidden(&text) => std::fs::remove_file(&user).map_err(|e| {
                Error::Internal(t!(
                    "connect-cannot-remove",
                    path = path,
                    error = e.to_string()
                ))
            })?,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::Internal(t!(
                    "connect-cannot-read",
                    path = path,
                    error = e.to_string()
                )))
            }
        }
    } else {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::Internal(t!(
                "connect-cannot-create-folder-of",
                path = path,
                error = e.to_string()
            ))
        })?;
        let text = "# Written by askdesk's \"Start at login\" switch: keeps the system's askdesk autostart entry off.\n\
                    [Desktop Entry]\nType=Application\nName=askdesk\nExec=askdesk-desktop --hidden\nHidden=true\n";
        std::fs::write(&user, text).map_err(|e| {
            Error::Internal(t!(
                "connect-cannot-write",
                path = path,
                error = e.to_string()
            ))
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_is_read_from_the_desktop_entry_group_only() {
        assert!(hidden("[Desktop Entry]\nName=a\nHidden=true\n"));
        assert!(!hidden("[Desktop Entry]\nHidden=false\n"));
        assert!(!hidden(
            "[Desktop Entry]\nName=a\n[Desktop Action x]\nHidden=true\n"
        ));
        assert!(!hidden("[Desktop Entry]\nX-Hidden=true\n"));
    }

    #[test]
    fn the_switch_hides_the_system_entry_for_this_user_and_shows_it_again() {
        let root = tempfile::tempdir().unwrap();
        let (user, system) = (root.path().join("user"), root.path().join("system"));
        let systems = [root.path().join("absent"), system.clone()];
        assert!(!status_in(&user, &systems).available, "no entry anywhere");
        std::fs::create_dir_all(&system).unwrap();
        std::fs::write(
            system.join(ENTRY),
            "[Desktop Entry]\nExec=askdesk-desktop --hidden\n",
        )
        .unwrap();
        let on = status_in(&user, &systems);
        assert!(on.available && on.enabled, "{on:?}");

        set_in(&user, false).unwrap();
        assert!(hidden(&std::fs::read_to_string(user.join(ENTRY)).unwrap()));
        assert!(!status_in(&user, &systems).enabled);
        set_in(&user, true).unwrap();
        assert!(!user.join(ENTRY).exists());
        assert!(status_in(&user, &systems).enabled);
    }

    #[test]
    fn turning_it_on_keeps_a_persons_own_entry() {
        let root = tempfile::tempdir().unwrap();
        let own = "[Desktop Entry]\nExec=askdesk-desktop --hidden --notify-only\n";
        std::fs::write(root.path().join(ENTRY), own).unwrap();
        set_in(root.path(), true).unwrap();
        assert_eq!(
            std::fs::read_to_string(root.path().join(ENTRY)).unwrap(),
            own
        );
        let status = status_in(root.path(), &[]);
        assert!(status.available && status.enabled, "{status:?}");
    }
}
