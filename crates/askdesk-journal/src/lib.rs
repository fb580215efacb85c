//! askdesk-journal: the history journal, one JSON line per settled request under
//! `$XDG_DATA_HOME/askdesk/`, written and flushed to disk before the answer is delivered (group
//! commit: one writer thread, one data-only `fdatasync` per batch into room written ahead), rotated
//! so it stays bounded, private to its owner (0700/0600).
//!
//! - `record`: the record types and their JSON ([`Record`], [`Outcome`], [`Line`]).
//! - `commit`: [`Journal`], the group-commit queue and its writer thread.
//! - `store`: the files: opening them private, the spaces held ahead, rotation, a removed or
//!   rotated file followed.
//! - `read`: reading the records back, oldest first, skipping what does not parse.
//! - `error`: this crate's error type.

mod commit;
mod error;
mod read;
mod record;
mod store;

pub use commit::{Commit, Journal};
pub use error::{Error, Result};
pub use read::{read_dir, visit_default, visit_dir};
pub use record::{millis, AskRecord, Line, Outcome, Record, RecordedError, IMAGE_BUDGET};
pub use store::{default_dir, DEFAULT_MAX_BYTES, FILE_NAME};
