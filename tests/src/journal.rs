//! The history journal a test broker writes (`$XDG_DATA_HOME/askdesk/history.jsonl`), read back
//! line by line as JSON.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::Home;

/// Where the broker of `home` keeps its journal.
pub fn journal_path(home: &Home) -> PathBuf {
    home.data_home().join("askdesk").join("history.jsonl")
}

/// The journal's complete lines (a trailing partial line is left out), each parsed; panics on a
/// complete line that is not JSON.
pub fn complete_records(path: &Path) -> Vec<Value> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => panic!("read {}: {e}", path.display()),
    };
    let mut lines: Vec<&str> = text.split('\n').collect();
    lines.pop(); // After the last newline: empty, or a line still being written.
    lines
        .into_iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| {
                panic!("journal line is not JSON ({e}): {line:?}\nwhole file:\n{text}")
            })
        })
        .collect()
}
