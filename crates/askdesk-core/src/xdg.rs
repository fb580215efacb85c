//! Where the XDG base directories are, as the environment says: read one way for the rules file,
//! the journal and the login entry. Only the environment is read; nothing touches the disk.

use std::path::PathBuf;

/// `$XDG_CONFIG_HOME`, else `$HOME/.config`; `None` when neither is set (an empty value is unset).
pub fn config_home() -> Option<PathBuf> {
    base("XDG_CONFIG_HOME", ".config")
}

/// `$XDG_DATA_HOME`, else `$HOME/.local/share`; `None` when neither is set.
pub fn data_home() -> Option<PathBuf> {
    base("XDG_DATA_HOME", ".local/share")
}

fn base(variable: &str, under_home: &str) -> Option<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    set(variable)
        .map(PathBuf::from)
        .or_else(|| set("HOME").map(|home| PathBuf::from(home).join(under_home)))
}
