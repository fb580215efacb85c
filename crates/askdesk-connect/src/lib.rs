//! askdesk-connect: how askdesk is connected to the agents on this computer, shared by the
//! `askdesk` command line (`hook install`, `doctor`) and the desktop app's Connect view.
//!
//! - [`version`]: the version and git commit both binaries print.

pub mod version;

pub use version::VERSION;
