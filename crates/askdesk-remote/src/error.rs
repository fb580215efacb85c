//! `Error`: setting up or running the remote (its address, certificates, files). Refusals of a
//! phone's requests are not errors of the remote: they are `pairing::PairingError` and
//! `answer::Refusal`, each answered to the phone.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Neither `$XDG_DATA_HOME` nor `$HOME` is set: say where the data directory is.
    #[error("no data directory: set XDG_DATA_HOME or HOME")]
    NoDataDirectory,
    /// The address listens on every interface: pick one address (a LAN or tailnet address), or
    /// force it knowingly.
    #[error(
        "refusing to listen on {0}: that is every network interface; pick one address \
         (a LAN or tailnet address), or force all interfaces explicitly"
    )]
    EveryInterface(SocketAddr),
    /// No name to serve: the address is unspecified and no name was given.
    #[error("no name to serve: give the address or name the phone will use")]
    NoServedName,
    /// A served name that is neither an IP address nor a DNS name.
    #[error("{0:?} is not a host name or an IP address")]
    BadName(String),
    /// Binding the address failed (not an address of this machine, or in use).
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
    /// The person's certificate or key file cannot be used: fix or replace the file.
    #[error("{path}: {reason}")]
    Certificate { path: PathBuf, reason: String },
    /// The person's certificate does not cover a served name: a phone would refuse it.
    #[error("the certificate {path} is not valid for {name}: {reason}")]
    CertificateName {
        path: PathBuf,
        name: String,
        reason: String,
    },
    /// Making or using askdesk's own certificates failed.
    #[error("cannot make the certificates: {0}")]
    Generate(String),
    /// The device store cannot be read: it is not askdesk's format (fix or remove the file).
    #[error("{path}: not a device list askdesk wrote: {reason}")]
    DeviceStore { path: PathBuf, reason: String },
    /// I/O on one of the remote's files.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Error {
    /// Wraps an I/O error with the path it happened on (for `map_err`).
    pub fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |source| Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
