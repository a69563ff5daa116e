//! Errors.

/// What can go wrong moving bytes between layouts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RelayoutError {
    /// The two layouts do not describe the same logical tensor.
    #[error("layouts do not match: {0}")]
    Mismatch(String),
    /// A buffer is too small for its layout.
    #[error("buffer too small: {0}")]
    Buffer(String),
    /// The layout cannot be used here.
    #[error("{0}")]
    Layout(String),
}

impl From<axe_xla::XlaError> for RelayoutError {
    fn from(e: axe_xla::XlaError) -> Self {
        RelayoutError::Layout(e.to_string())
    }
}

impl From<axe_layout::LayoutError> for RelayoutError {
    fn from(e: axe_layout::LayoutError) -> Self {
        RelayoutError::Layout(e.to_string())
    }
}

/// Shorthand.
pub type Result<T> = std::result::Result<T, RelayoutError>;
