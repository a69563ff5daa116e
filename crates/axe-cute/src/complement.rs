//! `complement(A, M)`: the layout that fills in what `A` leaves out, up to the bound `M`.

use crate::coalesce::coalesce_modes;
use crate::error::{mul, no_layout, CuteError, Result};
use crate::layout::Layout;

/// `complement(A, M)`.
///
/// Let `A'` be `A` without its extent-1 and stride-0 leaves, its `k` leaves sorted by stride
/// `(s_1,d_1) … (s_k,d_k)`, and `N = ⌈M / (s_k·d_k)⌉·(s_k·d_k)` (`N = M` when `A'` is empty).
///
/// **Law**: `R` is strictly increasing, and the concatenation `(A', R)` is a bijection from
/// `[0, N)` onto `[0, N)`; so `size(A')·size(R) = N ≥ M` and `R` takes its values in `[0, N)`.
///
/// It exists iff every sorted stride is a multiple of the previous leaf's `s·d` (then the leaves are the
/// digits of a mixed radix with the gaps as `R`'s modes). Otherwise no such `R` exists for any `N`: the
/// smallest index not yet covered must start a new translate of `A'`'s image, and the first collision
/// (which the exhaustive tests confirm) leaves no choice. Negative strides and `M < 1` are errors.
///
/// ```
/// use axe_cute::Layout;
/// let a: Layout = "(2,2):(1,6)".parse()?;
/// assert_eq!(a.complement(24)?.to_string(), "(3,2):(2,12)");
/// let a: Layout = "(5,5):(5,5)".parse()?;   // not injective: no complement (CuTe C++ divides by zero)
/// assert!(a.complement(125).is_err());
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn complement(a: &Layout, bound: i64) -> Result<Layout> {
    Layout::from_modes(&complement_modes(a, bound)?)
}

/// The coalesced leaves of [`complement`].
pub(crate) fn complement_modes(a: &Layout, bound: i64) -> Result<Vec<(i64, i64)>> {
    const OP: &str = "complement";
    if bound < 1 {
        return Err(CuteError::BadLayout(format!(
            "the complement bound is {bound}; it must be at least 1"
        )));
    }
    let mut leaves: Vec<(i64, i64)> = a
        .modes_flat()
        .into_iter()
        .filter(|&(s, d)| s > 1 && d != 0)
        .collect();
    if let Some(&(_, d)) = leaves.iter().find(|m| m.1 < 0) {
        return Err(CuteError::Unsupported {
            op: OP,
            reason: format!("{a} has the negative stride {d}"),
        });
    }
    leaves.sort_by_key(|&(s, d)| (d, s));
    let mut out = Vec::new();
    let mut current = 1i64;
    for &(s, d) in &leaves {
        if d % current != 0 {
            return Err(no_layout(
                OP,
                format!(
                    "the leaf {s}:{d} of {a} starts inside or across the {current} values covered by the smaller strides, so A's translates collide"
                ),
            ));
        }
        out.push((d / current, current));
        current = mul(s, d)?;
    }
    let rest = bound
        .checked_add(current - 1)
        .ok_or_else(|| crate::error::overflow("rounding the bound up"))?
        / current;
    out.push((rest, current));
    Ok(coalesce_modes(out))
}

impl Layout {
    /// `complement(self, bound)`; see [`complement`].
    pub fn complement(&self, bound: i64) -> Result<Layout> {
        complement(self, bound)
    }
}
