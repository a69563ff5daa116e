//! Typed errors: what was wrong and, for text, where (offset and caret).

use axe_layout::LayoutError;
pub use axe_layout::ParseError;

/// Everything that can go wrong with XLA shapes and layouts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XlaError {
    /// Shape text could not be parsed (or is something XLA aborts or silently misreads on).
    #[error("{0}")]
    Parse(Box<ParseError>),
    /// The layout breaks one of XLA's rules for the shape (`ValidateLayoutForShape`).
    #[error("invalid layout: {0}")]
    Invalid(String),
    /// A sharding breaks one of XLA's rules (tile assignment, devices, replication).
    #[error("invalid sharding: {0}")]
    InvalidSharding(String),
    /// The tiling asks for something XLA gives no meaning to (e.g. `*` outside the first tile).
    #[error("undefined: {0}")]
    Undefined(String),
    /// A checked integer operation overflowed.
    #[error("integer overflow while {0}")]
    Overflow(String),
    /// An index with another number of coordinates than the array has dimensions.
    #[error("index {index:?} has {} coordinate(s), but the array has {} dimension(s) {dims:?}", index.len(), dims.len())]
    IndexRank {
        /// The index.
        index: Vec<i64>,
        /// The array's dimensions.
        dims: Vec<i64>,
    },
    /// An index outside the array.
    #[error("index {index:?} is out of bounds for dimensions {dims:?}")]
    IndexOutOfBounds {
        /// The index.
        index: Vec<i64>,
        /// The array's dimensions.
        dims: Vec<i64>,
    },
    /// The operation needs something the shape does not have (an array, static sizes, ...).
    #[error("{0}")]
    Unsupported(String),
    /// An HLO module could not be read: where, what, and the line with a caret.
    #[error("{line}:{column}: {message}\n  {source_line}\n  {caret}^", caret = axe_layout::caret_pad(source_line, *caret_column))]
    Module {
        /// 1-based line.
        line: usize,
        /// 1-based column (in characters).
        column: usize,
        /// What was wrong.
        message: String,
        /// The offending line around the column: a window of it when it is long (`…` marks the cuts).
        source_line: String,
        /// The caret's column in `source_line`, in characters from 0 (the caret line copies the tabs
        /// before it, so it lines up however a terminal expands them).
        caret_column: usize,
    },
    /// An error from the Axe layout algebra.
    #[error(transparent)]
    Layout(#[from] LayoutError),
}

impl From<ParseError> for XlaError {
    fn from(e: ParseError) -> Self {
        XlaError::Parse(Box::new(e))
    }
}

/// Shorthand for `Result<T, XlaError>`.
pub type Result<T> = std::result::Result<T, XlaError>;

pub(crate) fn overflow(what: &str) -> XlaError {
    XlaError::Overflow(what.to_string())
}
