//! # axe-triton: Triton linear layouts, Gluon layouts, and Axe layouts
//!
//! * [`LinearLayout`]: Triton's GF(2) layouts, read from JSON ([`parse_json`]) or the TTGIR
//!   `#ttg.linear<...>` attribute ([`parse_ttg`]), printed back, with `apply`, `compose`, `invert`,
//!   `pseudoinvert`, `invert_and_compose`, injectivity and surjectivity.
//! * [`LinearLayout::to_axe`] / [`LinearLayout::from_axe`]: the same placement as an Axe layout from
//!   tensor index to hardware axes `reg`/`lane`/`warp`/`block`, each answer checked by enumeration.
//! * [`gluon`]: Gluon's layout constructors (`BlockedLayout(...)`, `SliceLayout(...)`, or the TTGIR
//!   attributes they print as, `#ttg.blocked<{...}>`, with alias definitions) over a tensor shape
//!   to the linear layout Triton computes, and, for any shape Triton cannot lay out (not powers of two),
//!   straight to an Axe layout.
//!
//! ```
//! use axe_triton::{gluon::parse_gluon, parse_linear};
//! let g = parse_gluon(
//!     "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])",
//! )?;
//! let ll = g.to_linear(&[32, 16])?;
//! assert_eq!(ll.apply(&[2, 5, 1, 0])?, [9, 6]); // register 2 of lane 5 of warp 1 holds (9, 6)
//! assert_eq!(ll.to_axe()?.to_string(), "S[(4,32,4):(1@warp,1@lane,1@reg)]");
//! // Beyond Triton's power-of-two wall: 48 rows of 16-row tiles.
//! let g = parse_gluon(
//!     "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[2, 2], order=[1, 0])",
//! )?;
//! assert!(g.to_linear(&[48, 64]).is_err());
//! assert_eq!(g.to_axe(&[48, 64])?.size(), 48 * 64);
//! let swizzled = parse_linear("#ttg.linear<{offset = [[0, 1], [0, 2], [1, 1], [2, 2]]}>")?;
//! assert!(swizzled.to_axe().is_err()); // XOR is not a stride
//! # Ok::<(), axe_triton::TritonError>(())
//! ```
//!
//! | operator | law |
//! |---|---|
//! | [`LinearLayout::apply`] | `L(x) = ⊕ base_{d,i}` over the set bits `i` of each in-dim `d` |
//! | [`LinearLayout::compose`] | `A.compose(B)(x) = B(A(x))` |
//! | [`LinearLayout::invert_and_compose`] | `A(x) = B(C(x))`, `C(x)` the smallest preimage |
//! | [`LinearLayout::pseudoinvert`] | `A(A⁺(y)) = y` |
//! | [`LinearLayout::invert`] | `A⁻¹(A(x)) = x`, `A(A⁻¹(y)) = y` |
//! | [`LinearLayout::to_axe`] | `Axe(t) = { h : L(h) = t }` |

mod axe;
mod error;
pub mod gluon;
mod hardware_map;
mod linear;
mod syntax;
mod text;

pub use axe::{axis_of, in_dim_of, out_shape, triton_in_dims};
pub use error::{Result, TritonError};
pub use hardware_map::{hardware_map, HardwareMap};
pub use linear::{InDim, LinearLayout, MAX_BITS, MAX_MAP};
pub use syntax::{parse_value, Spanned, Value, MAX_DEPTH};
pub use text::{parse_json, parse_linear, parse_ttg};
