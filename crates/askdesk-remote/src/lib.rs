//! askdesk-remote: the phone's server. An HTTPS and WebSocket server on one address the person
//! picks, that pairs phones only from the desk and yields answers only when a paired device signed
//! them for a request it holds. A broker-facing adapter feeds it requests ([`Remote::offer`]) and
//! passes on the [`VerifiedAnswer`]s; the desk drives pairing and devices through [`Remote`].
//!
//! - [`answerer`]: [`RemoteAnswerer`], the remote on an in-process waterfall (the desktop app's).
//! - [`server`]: [`bind`] the chosen address (never every interface unless forced), TLS,
//!   HTTP/1.1, the routes and the `Host`/`Origin` guard in front of them.
//! - [`names`]: the served names and port, and what `Host` and `Origin` must say.
//! - [`certs`]: the person's certificate, else askdesk's own name-constrained authority.
//! - [`remote`]: [`Remote`], the state the desk and the handlers share; the checks of a signed
//!   answer ([`Remote::verify`]).
//! - [`pairing`]: pairing offers, their token, tries, proof and code.
//! - [`devices`]: the paired devices' store (`devices.json`), shared with `askdesk devices`.
//! - [`pending`]: the requests held for devices, their nonces, the updates devices hear.
//! - `socket`: a device's WebSocket: its signed hello, the requests it hears, its answers.
//! - [`digest`]: what a device signs, byte for byte; [`canonical`]: the canonical JSON under it.
//! - [`keys`]: a device's P-256 key and its P1363 signatures; base64url; randomness.
//! - `pages`: the pages served (landing, pairing landing, installing the authority).
//! - [`files`]: the private directory and atomic 0600 files; [`error`]: [`Error`].

pub mod answerer;
pub mod canonical;
pub mod certs;
pub mod devices;
pub mod digest;
pub mod error;
pub mod files;
pub mod keys;
pub mod names;
mod pages;
pub mod pairing;
pub mod pending;
pub mod remote;
pub mod server;
mod socket;

pub use answerer::RemoteAnswerer;
pub use certs::{CertificateSource, Certificates};
pub use devices::{Device, DeviceStore};
pub use error::Error;
pub use names::{Name, Served};
pub use pairing::{Claimed, PairingError, PairingId};
pub use pending::{OfferError, PendingRequest, VerifiedAnswer};
pub use remote::{Offered, PairingOffer, Refusal, Remote, SignedAnswer};
pub use server::{bind, RemoteConfig, Server};
