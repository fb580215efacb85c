//! askdesk-e2e: the harness the end-to-end tests use to drive the real `askdesk` binary.
//!
//! The tests in `tests/tests/` start `askdesk serve` as a user's process would and talk to it over
//! its Unix socket, byte for byte. This library links nothing of askdesk: the wire is the only
//! interface (only `tests/client.rs` uses the Rust client library, to test that library).
//!
//! - [`home`]: [`Home`], a fresh private directory that holds the socket, `XDG_DATA_HOME` and
//!   `XDG_RUNTIME_DIR`, and builds `askdesk` commands that point into it; [`askdesk_bin`] finds the
//!   binary under test.
//! - [`broker`]: [`Broker`], a running `askdesk serve` that is killed when dropped.
//! - [`conn`]: [`Conn`], a raw JSON-RPC line client (send raw bytes, start a request and wait for
//!   its response by id, queue and answer the broker's own requests) and [`RpcError`].
//! - [`wire`]: small builders for questions and answers used by many tests.
//!
//! Run them with `cargo build -p askdesk-cli && cargo test -p askdesk-e2e`: cargo does not build
//! another package's binary for a test, so `scripts/test.sh` builds the whole workspace first.
//! The round-trip benchmark is `scripts/bench.sh`.

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
