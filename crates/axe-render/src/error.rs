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
    /// The data of a CuTe or Triton picture is unusable (a shape, a coordinate, a size).
    #[error("{0}")]
    Input(String),
    /// A PNG would have more pixels than the budget allows.
    #[error(
        "a {width}×{height} PNG exceeds the limit of {max_pixels} pixels: use a smaller scale, or SVG"
    )]
    PngTooLarge {
        /// Width in pixels.
        width: u64,
        /// Height in pixels.
        height: u64,
        /// The budget ([`crate::MAX_PNG_PIXELS`]).
        max_pixels: u64,
    },
    /// The PNG scale is not a positive finite number.
    #[error("the scale must be a positive number, not {0}")]
    Scale(String),
    /// Rasterising failed.
    #[error("rasterising: {0}")]
    Raster(String),
}

/// Shorthand.
pub type Result<T> = std::result::Result<T, RenderError>;
