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
    /// The ranks were not given the same inputs, or some could not set up the run (see
    /// [`crate::agree`]); nothing was moved.
    #[error("{0}")]
    Disagree(String),
    /// Verification found a destination element that differs from the expected value.
    #[error(
        "device {device}: {} is {got}, expected {expected}",
        element_text(index)
    )]
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

/// `[4,4]`: dims or an index as the shape notation writes them (no Rust `Debug` text in messages).
pub(crate) fn dims_text(d: &[u64]) -> String {
    let parts: Vec<String> = d.iter().map(u64::to_string).collect();
    format!("[{}]", parts.join(","))
}

/// `[0:4, 2:3]`: a box of index ranges as `axe shard show` writes regions.
pub(crate) fn region_text(r: &[std::ops::Range<u64>]) -> String {
    let parts: Vec<String> = r.iter().map(|r| format!("{}:{}", r.start, r.end)).collect();
    format!("[{}]", parts.join(", "))
}

/// `element [1,2]`, or `a padding byte` for an empty index (a padding byte).
fn element_text(index: &[u64]) -> String {
    if index.is_empty() {
        return "a padding byte".into();
    }
    let parts: Vec<String> = index.iter().map(|i| i.to_string()).collect();
    format!("element [{}]", parts.join(","))
}
