//! Typed errors of the Triton crate: every failure names what was wrong and, for text, where.

use axe_layout::{LayoutError, ParseError};

/// Everything that can go wrong reading, combining or converting Triton layouts.
#[derive(Debug, thiserror::Error)]
pub enum TritonError {
    /// Text that does not parse; the message carries the byte offset and a caret.
    #[error("{0}")]
    Parse(ParseError),
    /// A size that Triton requires to be a power of two is not one.
    #[error("{what} is {size}, not a power of two (Triton's linear layouts only have power-of-two sizes)")]
    NotPowerOfTwo {
        /// Which size (e.g. `out-dim dim0`).
        what: String,
        /// The size given.
        size: u64,
    },
    /// Input that parses but does not describe a valid layout.
    #[error("invalid layout: {0}")]
    Invalid(String),
    /// Two layouts whose dimensions do not fit the operation.
    #[error("dimension mismatch: {0}")]
    Mismatch(String),
    /// The operation needs an injective layout.
    #[error("the layout is not injective: {0}")]
    NotInjective(String),
    /// The operation needs a surjective layout.
    #[error("the layout is not surjective: {0}")]
    NotSurjective(String),
    /// More bits or points than this crate enumerates or represents.
    #[error("too large: {0}")]
    TooLarge(String),
    /// The inverse map (tensor -> hardware) is not a sum of strides on these in-dims (e.g. XOR swizzles).
    #[error("not affine on in-dim(s) {}: an Axe layout adds strides, these in-dims combine tensor bits by XOR with carries that addition would not produce", .0.join(", "))]
    NotAffine(Vec<String>),
    /// No Axe layout or linear layout has this map, and why.
    #[error("not expressible: {0}")]
    NotExpressible(String),
    /// A Gluon layout that is malformed or not supported.
    #[error("gluon layout: {0}")]
    Gluon(String),
    /// An error of the Axe layout algebra.
    #[error(transparent)]
    Layout(#[from] LayoutError),
}

/// Result type of this crate.
pub type Result<T> = std::result::Result<T, TritonError>;

/// `x` if it is a power of two, else [`TritonError::NotPowerOfTwo`] naming `what`.
pub(crate) fn log2_exact(size: u64, what: impl FnOnce() -> String) -> Result<u32> {
    if size.is_power_of_two() {
        Ok(size.trailing_zeros())
    } else {
        Err(TritonError::NotPowerOfTwo { what: what(), size })
    }
}
