//! # axe-render: see a layout
//!
//! Pictures of layouts — the XLA tiling doc's figures (each element's memory offset, tiles coloured,
//! repeated tiles outlined, padding hatched, the memory order), thread/value maps and device maps of Axe
//! layouts — as SVG, PNG and terminal text, and `explain`: a layout's facts in plain words.

mod error;
pub mod explain;
mod picture;
mod png;
mod svg;
mod text;

pub use error::{RenderError, Result};
pub use picture::{
    axe_picture, memory_picture, Cell, Kind, Picture, Slot, MAX_COLS, MAX_ROWS, MAX_STRIP,
};
pub use png::to_png;
pub use svg::{fill, to_svg, BORDERS, PALETTE};
pub use text::to_text;
