//! The end-to-end harness: drives the real `askdesk` binary the way a user's process would.
//!
//! The tests in `tests/tests/` start `askdesk serve` and talk to it over its Unix socket, byte for
//! byte. The harness links nothing of askdesk: the wire is the only interface (only
//! `tests/client.rs` uses the Rust client library, to test that library).
//!
//! - [`home`]: [`Home`], a fresh private directory that holds the socket, `XDG_DATA_HOME` and
//!   `XDG_RUNTIME_DIR`, and builds `askdesk` commands that point into it; [`askdesk_bin`] is the
//!   binary under test.
//! - [`broker`]: [`Broker`], a running `askdesk serve` that is killed when dropped.
//! - [`conn`]: [`Conn`], a raw JSON-RPC line client (send raw bytes, start a request and wait for
//!   its response by id, queue and answer the broker's own requests) and [`RpcError`].
//! - [`wire`]: small builders for questions and answers used by many tests.
//!
//! How the tests find the binary: every file in `tests/tests/` (and the round-trip benchmark in
//! `tests/benches/`) is a `[[test]]` (or `[[bench]]`) target of the `askdesk-cli` package, declared
//! in `crates/askdesk-cli/Cargo.toml`. Cargo builds a package's binaries before its tests and
//! benchmarks and names each one in `CARGO_BIN_EXE_<name>` while compiling them, so a plain
//! `cargo test` (or `cargo bench`) from a clean checkout tests the `askdesk` it just built. That
//! variable exists only while a target of askdesk-cli compiles, which is why this harness is not
//! a library of its own: each target compiles it in as a module (`#[path = "../src/lib.rs"] mod
//! askdesk_e2e;`). A new test file needs that line and a `[[test]]` entry; the `layout` test
//! checks that no file is left out.

// Each target compiles the whole harness in and uses only part of it (and of its re-exports).
#![allow(dead_code, unused_imports)]

pub mod broker;
pub mod conn;
pub mod home;
pub mod wire;

pub use broker::{Background, Broker};
pub use conn::{expect_question_error, expect_rpc_error, Conn, RpcError};
pub use home::{askdesk_bin, run_with_stdin, run_with_timeout, Home};
pub use wire::{answer_first, ask, q};

/// How long a test waits for anything the broker should do promptly before it fails.
pub const PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);
