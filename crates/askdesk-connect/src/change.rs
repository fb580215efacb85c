//! A change to a client's settings file, computed before anything is written: the file as it is
//! and as it would be, the unified diff between them, and the write itself (through a temporary
//! file and a rename, the previous file kept as `<file>.askdesk-backup`).

use std::path::{Path, PathBuf};

use crate::document::Document;
use crate::error::Result;
use crate::hook::{save, shown};

/// A settings file's text as it is and as it would be.
#[derive(Debug, Clone)]
pub struct Change {
    path: PathBuf,
    target: PathBuf,
    before: String,
    after: String,
    existed: bool,
    changes: bool,
}

impl Change {
    /// `document` as edited.
    pub(crate) fn new(path: &Path, target: &Path, document: &Document) -> Change {
        Change {
            path: path.to_owned(),
            target: target.to_owned(),
            before: document.before().to_owned(),
            after: document.text(),
            existed: document.existed(),
            changes: true,
        }
    }

    /// Nothing to do: the file already is as it should be.
    pub(crate) fn none(path: &Path, target: &Path, document: &Document) -> Change {
        Change {
            after: document.before().to_owned(),
            changes: false,
            ..Change::new(path, target, document)
        }
    }

    /// Whether writing would change the file.
    pub fn changes(&self) -> bool {
        self.changes
    }

    /// The settings file as the person knows it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path, and the file it links to when that is another.
    pub fn shown(&self) -> String {
        shown(&self.path, &self.target)
    }

    /// The file as it would be written: as it is, but for askdesk's entries.
    pub fn after_text(&self) -> &str {
        &self.after
    }

    /// The change as a unified diff of the file's text as it is and as it would be written
    /// (`--- <file>` / `+++ <file>`, three lines of context); empty when nothing changes.
    pub fn diff(&self) -> String {
        if !self.changes {
            return String::new();
        }
        let name = self.path.display().to_string();
        let old = if self.existed {
            name.clone()
        } else {
            "/dev/null".to_owned()
        };
        similar::TextDiff::from_lines(&self.before, &self.after)
            .unified_diff()
            .context_radius(3)
            .header(&old, &name)
            .to_string()
    }

    /// Writes the file (nothing when it does not change); returns the backup of the previous
    /// file, if there was one.
    pub fn write(&self) -> Result<Option<PathBuf>> {
        if !self.changes {
            return Ok(None);
        }
        save(&self.path, &self.target, &self.after, self.existed)
    }
}
