//! # axe-render: see a layout
//!
//! Pictures of layouts — the XLA tiling doc's figures (each element's memory offset, tiles coloured,
//! repeated tiles outlined, padding hatched, the memory order), thread/value maps and device maps of Axe
//! layouts, CuTe's `print_layout` grids and TV pictures, and which register, lane and warp hold each
//! element under a Triton or Gluon layout — as SVG, PNG and terminal text, and `explain`: a layout's
//! facts in plain words.

mod axe;
mod blocks;
mod cute;
mod error;
pub mod explain;
mod holders;
#[cfg(feature = "kernels")]
mod kernels;
mod legend;
mod memory;
mod picture;
mod png;
mod replicas;
#[cfg(feature = "shardings")]
mod shardings;
mod svg;
mod text;
mod triton;

pub use axe::axe_picture;
pub use blocks::{id_list, sharding_blocks, sharding_blocks_labelled, Piece, MAX_BLOCKS};
pub use cute::{cute_layout_picture, tv_picture};
pub use error::{RenderError, Result};
pub use holders::{Holders, MAX_HOLDERS};
#[cfg(feature = "kernels")]
pub use kernels::{cute_picture, triton_picture};
pub use legend::COLOURS;
pub use memory::memory_picture;
pub use picture::{
    one_line, Cell, Kind, Mark, Picture, Slot, MAX_COLS, MAX_LABEL, MAX_LEGEND, MAX_ROWS, MAX_STRIP,
};
pub use png::{to_png, to_png_with, Fonts, FONT_FAMILY, MAX_PNG_PIXELS};
pub use replicas::MAX_REPLICAS;
#[cfg(feature = "shardings")]
pub use shardings::{sharding_svg, sharding_text, sharding_txt};
pub use svg::{fill, to_svg, BORDERS, PALETTE};
pub use text::to_text;
pub use triton::hardware_picture;
