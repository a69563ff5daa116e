//! Typed errors of the CuTe algebra. Every fallible function returns [`CuteError`]; parse errors carry the
//! byte offset and a caret (the same [`ParseError`] that `axe-layout` uses).

use axe_layout::{LayoutError, ParseError};

/// Everything that can go wrong with a CuTe layout or operator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CuteError {
    /// Notation text could not be parsed (offset and caret in the message).
    #[error("{0}")]
    Parse(Box<ParseError>),
    /// A checked integer operation overflowed.
    #[error("integer overflow while {0}")]
    Overflow(String),
    /// A shape and stride that do not make a layout (extent below 1, shape and stride not congruent).
    #[error("invalid layout: {0}")]
    BadLayout(String),
    /// An operator's argument other than a layout out of its range (a complement bound below 1, ...).
    #[error("{op}: {reason}")]
    BadArgument {
        /// The operator.
        op: &'static str,
        /// Which argument, its value, and what it must be.
        reason: String,
    },
    /// A flat index outside `[0, size)`.
    #[error("index {index} is out of range for a layout of size {size}")]
    IndexOutOfRange {
        /// The offending index.
        index: i64,
        /// The layout's size.
        size: i64,
    },
    /// A coordinate that does not fit the shape (rank, nesting or a component out of range).
    #[error("coordinate {coord} does not fit shape {shape}")]
    BadCoord {
        /// The coordinate as written.
        coord: String,
        /// The shape.
        shape: String,
    },
    /// Ranks that do not fit (a by-mode tiler with more modes than the layout, ...).
    #[error("rank mismatch: {0}")]
    RankMismatch(String),
    /// No layout satisfies the operator's law; the reason names the violated condition.
    #[error("{op}: no layout satisfies the law: {reason}")]
    NoLayout {
        /// The operator.
        op: &'static str,
        /// Why no result exists.
        reason: String,
    },
    /// CuTe's construction gives a result that breaks one of CuTe's stated postconditions, so it is
    /// refused; another layout may meet them (the reason names the postcondition and the numbers).
    #[error("{op}: CuTe's construction breaks its postcondition {reason}")]
    Postcondition {
        /// The operator.
        op: &'static str,
        /// The postcondition, what the construction gives, and how it fails.
        reason: String,
    },
    /// A result may exist but this crate does not construct it (the reason says which case).
    #[error("{op}: unsupported: {reason}")]
    Unsupported {
        /// The operator.
        op: &'static str,
        /// The case that is not handled.
        reason: String,
    },
    /// A result that could only be checked by enumerating more points than allowed.
    #[error("too large: {0}")]
    TooLarge(String),
    /// Invalid swizzle parameters, or swizzles whose composition is not a swizzle.
    #[error("swizzle: {0}")]
    Swizzle(String),
    /// A layout that has no counterpart on the other side of the CuTe ⇄ Axe conversion.
    #[error("cannot convert: {0}")]
    Convert(String),
    /// An error of the Axe layout algebra.
    #[error(transparent)]
    Axe(#[from] LayoutError),
}

impl From<ParseError> for CuteError {
    fn from(e: ParseError) -> Self {
        CuteError::Parse(Box::new(e))
    }
}

/// Shorthand for `Result<T, CuteError>`.
pub type Result<T> = std::result::Result<T, CuteError>;

pub(crate) fn overflow(what: impl Into<String>) -> CuteError {
    CuteError::Overflow(what.into())
}

/// An overflow error with what was being computed put first: "evaluating 4:9 at index 2: multiplying …".
pub(crate) fn overflow_in(e: CuteError, context: impl FnOnce() -> String) -> CuteError {
    match e {
        CuteError::Overflow(m) => CuteError::Overflow(format!("{}: {m}", context())),
        other => other,
    }
}

pub(crate) fn postcondition(op: &'static str, reason: impl Into<String>) -> CuteError {
    CuteError::Postcondition {
        op,
        reason: reason.into(),
    }
}

pub(crate) fn no_layout(op: &'static str, reason: impl Into<String>) -> CuteError {
    CuteError::NoLayout {
        op,
        reason: reason.into(),
    }
}

/// Checked `a * b`.
pub(crate) fn mul(a: i64, b: i64) -> Result<i64> {
    a.checked_mul(b)
        .ok_or_else(|| overflow(format!("multiplying {a} by {b}")))
}

/// Checked `a + b`.
pub(crate) fn add(a: i64, b: i64) -> Result<i64> {
    a.checked_add(b)
        .ok_or_else(|| overflow(format!("adding {a} and {b}")))
}
