//! Errors of communication and execution.

/// What went wrong moving a reshard's bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommError {
    /// A peer rank stopped (died, or closed its side) before the exchange finished.
    #[error("rank {rank} is gone: {why}")]
    PeerGone {
        /// The rank.
        rank: usize,
        /// What was seen.
        why: String,
    },
    /// An operation did not finish within the time limit.
    #[error("timed out after {seconds} s waiting for {what}")]
    Timeout {
        /// The limit.
        seconds: u64,
        /// What was awaited.
        what: String,
    },
    /// A message or buffer had the wrong size, or a rank out of range was named.
    #[error("bad exchange: {0}")]
    Usage(String),
    /// The backend reported an error.
    #[error("{backend}: {why}")]
    Backend {
        /// The backend (`threads`, `mpi`).
        backend: &'static str,
        /// Its message.
        why: String,
    },
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, CommError>;
