//! # axe-triton: Triton linear layouts, Gluon layouts, and Axe layouts
//!
//! * [`LinearLayout`]: Triton's GF(2) layouts, read from JSON ([`parse_json`]) or the TTGIR
//!   `#ttg.linear<...>` attribute ([`parse_ttg`]), printed back, with `apply`, `compose`, `invert`,
//!   `pseudoinvert`, `invert_and_compose`, injectivity and surjectivity.
//! * [`LinearLayout::to_axe`] / [`LinearLayout::from_axe`]: the same placement as an Axe layout from
//!   tensor index to hardware axes `reg`/`lane`/`warp`/`block`, each answer checked by enumeration.
//! * [`gluon`]: Gluon's layout constructors (`BlockedLayout(...)`, `SliceLayout(...)`) over a tensor shape
//!   to the linear layout Triton computes, and, for any shape Triton cannot lay out (not powers of two),
//!   straight to an Axe layout.
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
mod linear;
mod syntax;
mod text;

pub use axe::{axis_of, in_dim_of, out_shape};
pub use error::{Result, TritonError};
pub use linear::{InDim, LinearLayout, MAX_BITS, MAX_MAP};
pub use syntax::{parse_value, Spanned, Value, MAX_DEPTH};
pub use text::{parse_json, parse_linear, parse_ttg};
