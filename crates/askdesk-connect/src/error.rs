//! What connecting can fail with; each variant says what the caller should do.

/// An error of reading or changing a client's settings.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Something the person must name (HOME is not set): ask them.
    #[error("{0}")]
    Usage(String),
    /// The file is not what askdesk can change safely (not JSON, another shape, read-only, a
    /// broken link); it was left unchanged: show the message.
    #[error("{0}")]
    Input(String),
    /// The system refused (a read, a write, a rename): show the message.
    #[error("{0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
