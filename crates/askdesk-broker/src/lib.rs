//! askdesk-broker: serves the askdesk [`Service`](askdesk_core::Service) over a local socket.
//!
//! - [`framing`]: splits a byte stream into newline-terminated lines, with a size limit.
//! - [`protocol`]: JSON-RPC 2.0 messages, one per line, and the error codes of protocol 5.3. The only
//!   module that knows JSON-RPC's shape; [`protocol::methods`] defines each method's name, params
//!   and result once, for the server, the client and every caller.
//! - [`transport`]: where the socket lives, its directory and permission checks, peer uid checks,
//!   stale-socket recovery; the [`Listener`] the server accepts from.
//! - [`server`]: [`run`], the accept loop; inside it one task per connection, the method dispatch
//!   table, and the socket answerer that relays requests to answerer connections. Each
//!   connection's outgoing lines go through an `outbox` (written in place, queued when the socket
//!   is full).
//! - [`socket`]: an accepted peer's socket, watched for readability only (writes go straight out).
//! - `settled`: turns a settled ask into its record in the history journal ([`askdesk_journal`],
//!   JSON lines flushed to disk before an answer is delivered) and appends it off the async path.
//! - [`client`]: the Rust client library used by the CLI, the MCP server and tests.
//! - [`host`]: what the processes hosting a broker share: log setup (colour only on a terminal)
//!   and the SIGINT/SIGTERM wait.
//! - [`error`]: this crate's error type.

pub mod client;
pub mod error;
pub mod framing;
pub mod host;
mod outbox;
pub mod protocol;
pub mod server;
mod settled;
pub mod socket;
pub mod transport;

pub use error::{Error, Result};
pub use server::{run, ServerConfig};
pub use transport::{bind, socket_path, Listener};
