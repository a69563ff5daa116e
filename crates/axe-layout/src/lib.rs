//! # axe-layout: the Axe layout algebra
//!
//! An Axe layout maps a logical index to a **set of coordinates on named axes** — memory (`m`), threads
//! (`lane`, `warp`), devices (`gpu`), accelerator memories (`P`, `F`, `TLane`, `TCol`) — through three parts:
//!
//! * **shard** `D`: an ordered list of iters `(e, s@a)`; the index is written in their mixed radix
//!   (last iter fastest) and each digit moves `s` along axis `a`;
//! * **replica** `R`: iters enumerating extra copies, independent of the index;
//! * **offset** `O`: a constant coordinate.
//!
//! `L(x) = { D(x) + r + O : r ∈ Rset }`. The paper's tensor-core tile, for example:
//!
//! ```
//! use axe_layout::Layout;
//! // 8×16 tile over 2 warps of 32 lanes, 2 registers each, replicated to warps +4, shifted to warp 5.
//! let l: Layout = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp".parse()?;
//! let coords = l.apply_multi(&[1, 3], &[8, 16])?;
//! let shown: Vec<String> = coords.iter().map(|c| c.to_string()).collect();
//! assert_eq!(shown, ["{lane: 5, reg: 1, warp: 5}", "{lane: 5, reg: 1, warp: 9}"]);
//! # Ok::<(), axe_layout::LayoutError>(())
//! ```
//!
//! ## Operators
//!
//! | operator | law |
//! |---|---|
//! | [`Layout::canonicalize`] | same map; canonical `D` unique per map |
//! | [`Layout::equivalent`] | `A ≡ B` iff `A(x) = B(x)` for all `x` (exact) |
//! | [`Layout::group`] | `L(x) = Σ_i block_i(x_i) + R + O` over shape `S`, fewest iters |
//! | [`Layout::tile`] | `T(x) = A(x mod S_A) + σ⊙B(x div S_A)`, `σ = span(A)` |
//! | [`Layout::tile_of`] / [`Layout::tile_of_outer`] | the `B` (resp. `A`) with `tile(A, B) ≡ T` |
//! | [`Layout::slice`] | `L'(x) = L(b + x)` on the region, iff such a layout exists |
//! | [`Layout::direct_sum`] | `(A⊕B)(x) = A(x div S_B) + B(x mod S_B)` |
//!
//! Integers are checked everywhere: extents are `u64`, strides and offsets `i64`, and overflow is an
//! error. No function panics on any input; errors say what was wrong and where.

mod axis;
#[doc(hidden)]
pub mod bench_cases;
mod canonical;
mod coord;
mod error;
mod fit;
mod group;
mod iter;
mod layout;
mod notation;
mod slice;
mod tile;

pub use axis::{Axis, AxisKind};
pub use coord::Coord;
pub use error::{caret_pad, caret_window, visible, LayoutError, ParseError, Result};
pub use group::Grouped;
pub use iter::Iter;
pub use layout::{flatten, unflatten, Layout, MAX_ENUMERATION};
pub use notation::parse;
