//! # axe-relayout: move bytes between layouts
//!
//! A tensor in memory is bytes plus an element width plus a layout: an XLA array layout (tiles, padding,
//! `L`, packing) or an Axe layout on the memory axis `m` (any strides, replicas). [`relayout`] writes
//! the same logical tensor in another layout.
//!
//! Both layouts are reduced to one offset table per logical dimension (an XLA layout's Axe form groups by
//! its padded shape, so every dimension's offsets are separable); [`split::pair`] first cuts long
//! dimensions into the factors both layouts follow, so the tables cost the sum of the factors. Then a [`Plan`] orders the loops for
//! contiguous writes and picks a kernel: block copies of contiguous runs, k-way interleaves for minor
//! sub-tiles such as bf16's `(2,1)`, register transposes in cache-sized tiles (through a buffer where
//! source rows lie far apart), bit packing for pred into `E(1)`. Kernels use the best SIMD instructions the processor reports ([`Isa`]), with a portable
//! fallback; large destinations are written with non-temporal stores; only the padding is zero-filled (the
//! whole destination first where the padding is a sixteenth of it or more); [`split::pieces`] moves a
//! long padded dimension, or one with no factors to split at (a prime length), as a body split into
//! factors and a tail, so a plan's tables ([`TensorLayout::table_entries`]) stay near the square root of
//! the dimension;
//! the outer loops run in parallel.

mod error;
mod execute;
mod kernels;
mod plan;
pub mod split;
mod tensor;
mod values;
mod xla_side;

pub use error::{RelayoutError, Result};
pub use execute::relayout;
pub use kernels::Isa;
pub use plan::{
    plan, Block, Mode, Options, Plan, Straight, ZeroFill, MAX_THREADS, PARALLEL_MIN_BYTES,
    STREAM_MIN_BYTES,
};
pub use tensor::{TensorLayout, PADDING_ALONE_MAX};
pub use values::{first_out_of_range, value_bits};
