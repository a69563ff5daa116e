//! # axe-cute: CuTe layouts and their algebra, never silently wrong
//!
//! A CuTe layout is a hierarchical shape with a congruent stride, `(4,(2,3)):(1,(4,8))`: a coordinate
//! goes to `Σ c_k·d_k` over the leaves, a flat index is first written colexicographically (the leftmost
//! leaf fastest). This crate parses and prints CuTe's notation, evaluates layouts, implements CuTe's
//! algebra with each operator's law checked on every result, swizzles, and converts to and from Axe
//! layouts ([`axe_layout::Layout`]), TV layouts included.
//!
//! ```
//! use axe_cute::Layout;
//! let a: Layout = "(6,2):(8,2)".parse()?;
//! let b: Layout = "(4,3):(3,1)".parse()?;
//! let r = a.compose(&b)?;
//! assert_eq!(r.to_string(), "((2,2),3):((24,2),8)");
//! for i in 0..r.size() {
//!     assert_eq!(r.eval(i)?, a.eval(b.eval(i)?)?);
//! }
//! # Ok::<(), axe_cute::CuteError>(())
//! ```
//!
//! ## Operators and their laws
//!
//! | operator | law |
//! |---|---|
//! | [`Layout::coalesce`], [`Layout::coalesce_by`] | same map, fewest modes (per mode for a profile) |
//! | [`composition`] | `R(c) = A(B(c))`, `size(R_i) = size(B_i)` |
//! | [`Layout::filter`] | the values through the nonzero-stride leaves, coalesced |
//! | [`complement`] | CuTe's postconditions: `R` increasing, `R(i) ∉ A` for `i ≥ 1`, size and cosize bounds |
//! | [`right_inverse`] | `L(R(i)) = i` on `[0, size(R))` |
//! | [`left_inverse`] | `R(L(i)) = i` on `[0, size(L))`; `L(R(L(i))) = L(i)` for a non-injective `L` |
//! | [`Layout::slice_and_offset`] | `offset + R(j) = L(c[_ ← j])` |
//! | [`BasisLayout::compose`] | `R(c) = A(B(c))` as coordinates (`1@0`-style strides) |
//! | [`logical_divide`] & co. | `A ∘ (B, complement(B, size A))`, regrouped |
//! | [`logical_product`] & co. | `(A, complement(A, size A·cosize B) ∘ B)`, regrouped |
//! | [`Swizzle::compose`] | `R(x) = S1(S2(x))` for every offset |
//! | [`Layout::to_axe`], [`Layout::from_axe`] | same map, mode order reversed |
//! | [`tv_to_axe`], [`tv_from_axe`] | the tile's layout onto `tid`/`val` is the TV layout's inverse |
//!
//! Where no layout satisfies a law the operator returns [`CuteError::NoLayout`] naming why; where CuTe's
//! closed forms do not apply but an answer exists (e.g. `(4,4):(0,1) ∘ 2:3 = 2:0`), it is found by an
//! exact fit and checked. Integers are `i64` with checked arithmetic, nesting is bounded by
//! [`MAX_DEPTH`], and no function panics on any input.

mod axe;
mod basis;
#[doc(hidden)]
pub mod bench_cases;
mod coalesce;
mod complement;
mod compose;
mod divide;
mod error;
mod fit;
mod grid;
mod int_tuple;
mod inverse;
mod layout;
mod left_search;
mod parse;
mod slice;
mod swizzle;

pub use axe::{tv_from_axe, tv_to_axe, TID, VAL};
pub use basis::BasisLayout;
pub use bench_cases::{bench_cases, BenchCase};
pub use complement::{complement, complement_is_exact};
pub use compose::{composition, composition_tiler, Tiler};
pub use divide::{
    blocked_product, flat_divide, flat_product, logical_divide, logical_product, raked_product,
    tiled_divide, tiled_product, zipped_divide, zipped_product,
};
pub use error::{CuteError, Result};
pub use fit::MAX_CHECK;
pub use grid::{layout_grid, tv_grid};
pub use int_tuple::{IntTuple, MAX_DEPTH};
pub use inverse::{is_true_left_inverse, left_inverse, left_inverse_strict, right_inverse};
pub use layout::{crd2idx, idx2crd, Layout};
pub use parse::parse_int_tuple;
pub use slice::SliceCoord;
pub use swizzle::{AnyLayout, ComposedLayout, Swizzle};
