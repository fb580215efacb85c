//! askdesk-journal: the history journal, one JSON line per settled request under
//! `$XDG_DATA_HOME/askdesk/`, written and flushed to disk before the answer is delivered (group
//! commit: one writer thread, one data-only `fdatasync` per batch into room written ahead), rotated
//! so it stays bounded, private to its owner (0700/0600).

mod error;
mod store;

pub use error::{Error, Result};
pub use store::*;
