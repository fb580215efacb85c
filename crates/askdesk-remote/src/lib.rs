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
//! - [`risk`]: each request's class, decided on the desk, and the standing permissions among its
//!   options; [`desk_only`]: the permission prompts no phone may allow, with the reason.
//! - [`passkeys`]: the remote as a WebAuthn relying party: a device's passkey, registered only
//!   while the desk allows it, asserted over the digest of an allow of a permission prompt.
//! - [`push`]: Web Push to the paired phones (VAPID, `aes128gcm`), the notices, quiet hours and
//!   "only when the desk is idle"; [`presence`]: whether the person is at the desk (D-Bus).
//! - [`scope`]: what one device may answer (agents, projects, the highest class), set at the
//!   desk; [`limits`]: approvals per device in a window, bad signatures that suspend it.
//! - `socket`: a device's WebSocket: its signed hello, the requests it hears, its answers.
//! - [`digest`]: what a device signs, byte for byte; [`canonical`]: the canonical JSON under it.
//! - [`keys`]: a device's P-256 key and its P1363 signatures; base64url; randomness.
//! - `pages`: the pages served: the phone's page (`page/`, built in), installing the authority.
//! - [`files`]: the private directory and atomic 0600 files; [`error`]: [`Error`].

pub mod answerer;
pub mod canonical;
pub mod certs;
pub mod desk_only;
pub mod devices;
pub mod digest;
pub mod error;
pub mod files;
pub mod keys;
pub mod limits;
pub mod names;
mod pages;
pub mod pairing;
pub mod passkeys;
pub mod pending;
pub mod presence;
pub mod push;
pub mod remote;
pub mod risk;
pub mod scope;
pub mod server;
mod socket;

pub use answerer::RemoteAnswerer;
pub use certs::{CertificateSource, Certificates};
pub use devices::{Device, DeviceStore, PushDropped};
pub use error::Error;
pub use limits::Limits;
pub use names::{Name, Served};
pub use pairing::{Claimed, PairingError, PairingId};
pub use pending::{Ending, OfferError, PendingRequest, Settled, VerifiedAnswer};
pub use presence::{Idle, Presence};
pub use remote::{AllowIntent, Offered, PairingOffer, Refusal, Remote, SignedAnswer};
pub use risk::{Class, Risk};
pub use scope::Scope;
pub use server::{bind, RemoteConfig, Server};
