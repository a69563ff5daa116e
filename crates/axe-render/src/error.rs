//! Errors.

/// What can go wrong drawing or explaining a layout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// The XLA shape or layout is unusable.
    #[error(transparent)]
    Xla(#[from] axe_xla::XlaError),
    /// The Axe layout or shape is unusable.
    #[error("{0}")]
    Layout(String),
    /// Rasterising failed.
    #[error("rasterising: {0}")]
    Raster(String),
}

/// Shorthand.
pub type Result<T> = std::result::Result<T, RenderError>;
