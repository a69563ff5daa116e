//! Typed errors. Every fallible operation in this crate returns [`LayoutError`]; its message says what was
//! wrong and, for text input, where (byte offset and a caret under the offending character).

use std::fmt;

/// A position in notation text where parsing failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The whole input that was being parsed.
    pub input: String,
    /// Byte offset of the offending character (may equal `input.len()` at end of input).
    pub offset: usize,
    /// What was expected or what was wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at offset {}", self.message, self.offset)?;
        // Show the line holding the offset with a caret under it. Column counted in characters so the
        // caret lines up for non-ASCII input too.
        let line_start = self.input[..self.offset.min(self.input.len())]
            .rfind('\n')
            .map_or(0, |p| p + 1);
        let line_end = self.input[line_start..]
            .find('\n')
            .map_or(self.input.len(), |p| line_start + p);
        let line = &self.input[line_start..line_end];
        let col = self.input[line_start..self.offset.min(self.input.len())]
            .chars()
            .count();
        write!(f, "\n  {}\n  {}^", line, " ".repeat(col))
    }
}

/// Everything that can go wrong in the layout algebra.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// Notation text could not be parsed.
    #[error("{0}")]
    Parse(Box<ParseError>),
    /// An iter was given extent 0 (extents are at least 1).
    #[error("iter extent must be at least 1, got 0")]
    ZeroExtent,
    /// An axis name is not an identifier `[A-Za-z_][A-Za-z0-9_]*`.
    #[error("invalid axis name {0:?}: expected an identifier [A-Za-z_][A-Za-z0-9_]*")]
    InvalidAxis(String),
    /// A checked integer operation overflowed.
    #[error("integer overflow while {0}")]
    Overflow(String),
    /// A flat index outside `[0, size)`.
    #[error("index {index} is out of range for a layout of size {size}")]
    IndexOutOfRange {
        /// The offending index.
        index: u64,
        /// The layout's size.
        size: u64,
    },
    /// A multi-index whose rank or components do not fit the shape.
    #[error("multi-index {index:?} does not fit shape {shape:?}")]
    MultiIndexOutOfRange {
        /// The offending multi-index.
        index: Vec<u64>,
        /// The shape it was evaluated over.
        shape: Vec<u64>,
    },
    /// A shape whose product is not the layout size.
    #[error(
        "shape {shape:?} is not admitted by a layout of size {size} (its product is {product})"
    )]
    NotAdmitted {
        /// The shape.
        shape: Vec<u64>,
        /// Product of the shape, saturating.
        product: u64,
        /// The layout size.
        size: u64,
    },
    /// Two shapes or a shape and a region of different rank.
    #[error("rank mismatch: {0}")]
    RankMismatch(String),
    /// The layout cannot be grouped by the shape.
    #[error("cannot group by shape {shape:?}: {reason}")]
    NoGrouping {
        /// The target shape.
        shape: Vec<u64>,
        /// Why.
        reason: String,
    },
    /// No layout satisfies the tile equation.
    #[error("no such layout: {0}")]
    NoTile(String),
    /// The region has no layout describing it.
    #[error("no slice: {0}")]
    NoSlice(String),
    /// The region is empty or leaves the shape.
    #[error("invalid region: {0}")]
    BadRegion(String),
    /// A set too large to enumerate was asked for.
    #[error("too large: {0}")]
    TooLarge(String),
}

impl From<ParseError> for LayoutError {
    fn from(e: ParseError) -> Self {
        LayoutError::Parse(Box::new(e))
    }
}

/// Shorthand for `Result<T, LayoutError>`.
pub type Result<T> = std::result::Result<T, LayoutError>;

pub(crate) fn overflow(what: &str) -> LayoutError {
    LayoutError::Overflow(what.to_string())
}
