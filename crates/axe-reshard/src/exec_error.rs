//! Errors of executing a reshard: communication, layouts, plans and buffers.

use crate::error::CommError;

/// What went wrong executing or verifying a reshard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// Moving bytes between ranks failed.
    #[error(transparent)]
    Comm(#[from] CommError),
    /// A mesh or sharding could not be used.
    #[error(transparent)]
    Shard(#[from] axe_shard::ShardError),
    /// A per-device memory layout could not be used, or a piece could not be packed or unpacked.
    #[error("layout: {0}")]
    Relayout(#[from] axe_relayout::RelayoutError),
    /// The plan does not fit the shardings, the mesh or the communicator.
    #[error("bad plan: {0}")]
    Plan(String),
    /// A buffer, element type or argument is unusable.
    #[error("bad input: {0}")]
    Input(String),
    /// Verification found a destination element that differs from the expected value.
    #[error("device {device}: element {index:?} is {got}, expected {expected}")]
    Mismatch {
        /// The device.
        device: u64,
        /// The global index of the element.
        index: Vec<u64>,
        /// The bytes found, in hex.
        got: String,
        /// The bytes expected, in hex.
        expected: String,
    },
}

/// Results of executing a reshard.
pub type ExecResult<T> = std::result::Result<T, ExecError>;
