//! `Error`: setting up or running the remote (its address, certificates, files). Refusals of a
//! phone's requests are not errors of the remote: they are `pairing::PairingError` and
//! `answer::Refusal`, each answered to the phone.

use askdesk_i18n::t;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Neither `$XDG_DATA_HOME` nor `$HOME` is set: say where the data directory is.
    #[error("{}", t!("remote-error-no-data-directory"))]
    NoDataDirectory,
    /// The address listens on every interface: pick one address (a LAN or tailnet address), or
    /// force it knowingly.
    #[error("{}", t!("remote-error-every-interface", addr = .0.to_string()))]
    EveryInterface(SocketAddr),
    /// No name to serve: the address is unspecified and no name was given.
    #[error("{}", t!("remote-error-no-served-name"))]
    NoServedName,
    /// A served name that is neither an IP address nor a DNS name.
    #[error("{}", t!("remote-error-bad-name", name = format!("{:?}", .0)))]
    BadName(String),
    /// Binding the address failed (not an address of this machine, or in use).
    #[error("{}", t!("remote-error-listen", addr = .addr.to_string(), reason = .source.to_string()))]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
    /// The person's certificate or key file cannot be used: fix or replace the file.
    #[error("{path}: {reason}")]
    Certificate { path: PathBuf, reason: String },
    /// The person's certificate does not cover a served name: a phone would refuse it.
    #[error("{}", t!("remote-error-certificate-name", path = .path.display().to_string(), name = .name.as_str(), reason = .reason.as_str()))]
    CertificateName {
        path: PathBuf,
        name: String,
        reason: String,
    },
    /// Making or using askdesk's own certificates failed.
    #[error("{}", t!("remote-error-generate", reason = .0.as_str()))]
    Generate(String),
    /// The device store cannot be read: it is not askdesk's format (fix or remove the file).
    #[error("{}", t!("remote-error-device-store", path = .path.display().to_string(), reason = .reason.as_str()))]
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
