//! Errors of the sharding model and its notations.

/// What went wrong reading, building or converting a mesh or a sharding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// The mesh itself is invalid.
    #[error("bad mesh: {0}")]
    Mesh(String),
    /// The sharding does not fit the mesh or the array.
    #[error("bad sharding: {0}")]
    Sharding(String),
    /// Text in a notation could not be read; `offset` is a byte offset into `text`.
    #[error("{msg} at offset {offset}:\n  {text}\n  {caret}^", caret = " ".repeat(*offset))]
    Parse {
        /// What was wrong.
        msg: String,
        /// The text read.
        text: String,
        /// Where, in bytes.
        offset: usize,
    },
    /// The notation cannot express this sharding.
    #[error("not expressible in {notation}: {why}")]
    Inexpressible {
        /// The target notation.
        notation: &'static str,
        /// Why not.
        why: String,
    },
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, ShardError>;
