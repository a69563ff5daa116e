//! # axe-xla: XLA shapes and tiled layouts, exactly
//!
//! The HLO text syntax of shapes (`bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)S(1)}`), parsed and printed
//! byte for byte as XLA does; XLA's validation rules; the index functions of tiled layouts (every tile
//! applied in turn, combined dimensions, sub-byte packing); padded sizes; and the translation of every
//! tiled layout into an Axe layout on the memory axis `m`.

mod axe;
#[doc(hidden)]
pub mod bench_cases;
mod error;
mod fast;
pub mod hlo;
mod inline;
mod numpy;
mod primitive;
mod recognise;
mod shape;
mod size;
mod text;
mod tiling;
mod tpu;
mod validate;

pub use axe::{from_axe, to_axe, AxeForm};
pub use error::{ParseError, Result, XlaError};
pub use inline::InlineVec;
pub use numpy::numpy_program;
pub use primitive::PrimitiveType;
pub use shape::{
    ArrayShape, Dim, DimLevel, DimLevelType, Dims, Layout, MinorToMajor, Shape, SplitConfig, Tile,
    TileDim, TileDims, Tiles,
};
pub use size::{
    array_size_reasons, element_bits, element_offset, memory_slots, part_sizes, part_totals, sizes,
    ElementOffset, PartSize, PartTotals, Sizes, POINTER_BYTES,
};
pub use text::{parse_layout, parse_shape, parse_shape_general, MAX_NESTING};
pub use tiling::{index_of_linear, linear_index, static_dims, Tiling};
pub use tpu::tpu_default_layout;
pub use validate::{validate, validate_array};
