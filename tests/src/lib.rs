//! The end-to-end harness: drives the real `askdesk` binary the way a user's process would.
//!
//! The tests in `tests/tests/` start `askdesk serve` and talk to it over its Unix socket, byte for
//! byte. The harness links nothing of askdesk: the wire is the only interface (only
//! `tests/tests/client.rs` uses the Rust client library, to test that library).
//!
//! - [`home`]: [`Home`], a fresh private directory that holds the socket, `XDG_DATA_HOME` and
//!   `XDG_RUNTIME_DIR`, and builds `askdesk` commands that point into it; [`askdesk_bin`] is the
//!   binary under test.
//! - [`broker`]: [`Broker`], a running `askdesk serve` that is killed when dropped.
//! - [`conn`]: [`Conn`], a raw JSON-RPC line client (send raw bytes, start a request and wait for
//!   its response by id, queue and answer the broker's own requests) and [`RpcError`].
//! - [`journal`]: the broker's history journal read back, line by line.
//! - [`wire`]: small builders for questions and answers used by many tests.
//!
//! How the tests find the binary: the tests in `tests/tests/` (one binary, `tests/tests/main.rs`) and
//! the round-trip benchmark in `tests/benches/` are targets of the `askdesk-cli` package, declared in
//! `crates/askdesk-cli/Cargo.toml`, with this library as a dev-dependency. Cargo builds a package's
//! binaries before its tests and benchmarks, so a plain `cargo test` (or `cargo bench`) from a clean
//! checkout tests the `askdesk` it just built; [`askdesk_bin`] finds it (see there how).

pub mod broker;
pub mod conn;
pub mod home;
pub mod journal;
pub mod wire;

pub use broker::{Background, Broker};
pub use conn::{expect_question_error, expect_rpc_error, Conn, RpcError};
pub use home::{askdesk_bin, run_with_stdin, run_with_timeout, Home};
pub use wire::{answer_first, ask, q};

/// How long a test waits for anything the broker should do promptly before it fails.
pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);
