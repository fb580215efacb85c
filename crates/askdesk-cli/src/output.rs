//! The CLI's standard output: everything a command prints goes through [`write()`], so a reader that
//! stops reading early (`askdesk history | head -1`) ends the command quietly, status 0, where
//! `println!` would panic with "failed printing to stdout: Broken pipe".
//!
//! Rust starts every program with SIGPIPE ignored, so a write to a closed pipe fails with
//! `BrokenPipe`. Restoring the signal's default instead would end the process at that write, but
//! also at a write to a broker socket whose other end has closed (a client would die without its
//! `Error:` line and status), and inside `askdesk mcp` and `askdesk hook`, which talk to agent
//! clients: the signal stays ignored, and the error is handled here.

use std::fmt;
use std::io::{ErrorKind, Write};

use crate::exit::{Error, Result};

/// Writes `text` to standard output and flushes it: [`Error::OutputClosed`] when the reader has
/// closed it, [`Error::Internal`] for any other failure.
pub fn write(text: fmt::Arguments<'_>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(text)
        .and_then(|()| out.flush())
        .map_err(|error| match error.kind() {
            ErrorKind::BrokenPipe => Error::OutputClosed,
            _ => Error::Internal(format!("cannot write to standard output: {error}")),
        })
}

/// `print!` through [`write()`]: `Err` when standard output does not take it.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*))
    };
}

/// `println!` through [`write()`]: `Err` when standard output does not take it.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {out, outln};
