//! `complement(A, M)`: the layout that fills in what `A` leaves out, up to the bound `M`, as CuTe defines
//! it.

use crate::coalesce::coalesce_modes;
use crate::error::{mul, postcondition, CuteError, Result};
use crate::layout::Layout;

/// `complement(A, M)`, CuTe's definition.
///
/// Let `A'` be `A` without its extent-1 and stride-0 leaves (CuTe's `filter`), its `k` leaves sorted by
/// stride `(s_1,d_1) … (s_k,d_k)`, `c_1 = 1` and `c_{j+1} = s_j·d_j`. The result is
/// `coalesce((⌊d_1/c_1⌋, …, ⌊d_k/c_k⌋, ⌈M/c_{k+1}⌉) : (c_1, …, c_k, c_{k+1}))`.
///
/// **Law** (CuTe's postconditions, each checked): every extent is at least 1 (`d_j ≥ c_j`: the leaves'
/// spans do not overlap); `R` is strictly increasing; `R(i)` is not a value of `A` for `i ≥ 1`;
/// `size(R) ≥ ⌊M / size(A')⌋`; and `cosize((A, R)) ≥ M`. Increase and disjointness follow from the
/// construction: the partial sums of `R`'s low modes stay below `d_j` while any value of `A` using leaf
/// `j` is at least `d_j`, and `R`'s mode `j` spans at most `d_j < c_{j+1}`.
///
/// When every `d_j` is a multiple of `c_j` the complement is exact: `(A', R)` is a bijection of
/// `[0, N)` with `N = size(A')·size(R) ≥ M` (see [`complement_is_exact`]). Otherwise `(A', R)` leaves
/// gaps (`complement((4,6):(1,6), 34) = 1:0`), as in CuTe.
///
/// Errors: a negative stride ([`CuteError::Unsupported`]); `M < 1`; and, as
/// [`CuteError::Postcondition`] naming the postcondition, a construction that breaks one of CuTe's
/// postconditions: a leaf whose stride lies inside the span of the smaller ones gives an extent 0
/// (CuTe's "non-injective layout" assertion), and a result may be too small (`complement((2,2):(1,3),
/// 24)` would be `4:6`, of size `4 < ⌊24 / 4⌋`). Another layout may meet the postconditions there
/// (`6:6` does for the latter); this crate answers only with CuTe's construction.
///
/// ```
/// use axe_cute::Layout;
/// let a: Layout = "(2,2):(1,6)".parse()?;
/// assert_eq!(a.complement(24)?.to_string(), "(3,2):(2,12)");
/// let a: Layout = "(4,10):(1,10)".parse()?;
/// assert_eq!(a.complement(94)?.to_string(), "2:4");
/// let a: Layout = "(5,5):(5,5)".parse()?;   // not injective: no complement
/// assert!(a.complement(125).is_err());
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn complement(a: &Layout, bound: i64) -> Result<Layout> {
    Layout::from_modes(&complement_modes(a, bound)?)
}

/// Whether `complement(A, M)` is exact: every sorted stride of `A'` is a multiple of the span of the
/// smaller leaves, so `(A', R)` is a bijection onto `[0, size(A')·size(R))`.
pub fn complement_is_exact(a: &Layout) -> bool {
    let mut current = 1i64;
    for (s, d) in filtered_sorted(a) {
        if d <= 0 || d % current != 0 {
            return false;
        }
        match s.checked_mul(d) {
            Some(c) => current = c,
            None => return false,
        }
    }
    true
}

/// The leaves of `A` with extent > 1 and stride ≠ 0, sorted by stride (ties by extent).
fn filtered_sorted(a: &Layout) -> Vec<(i64, i64)> {
    let mut leaves: Vec<(i64, i64)> = a
        .modes_flat()
        .into_iter()
        .filter(|&(s, d)| s > 1 && d != 0)
        .collect();
    leaves.sort_by_key(|&(s, d)| (d, s));
    leaves
}

/// The coalesced leaves of [`complement`].
pub(crate) fn complement_modes(a: &Layout, bound: i64) -> Result<Vec<(i64, i64)>> {
    const OP: &str = "complement";
    if bound < 1 {
        return Err(CuteError::BadArgument {
            op: OP,
            reason: format!("the bound M is {bound}; it must be at least 1"),
        });
    }
    let leaves = filtered_sorted(a);
    if let Some(&(_, d)) = leaves.iter().find(|m| m.1 < 0) {
        return Err(CuteError::Unsupported {
            op: OP,
            reason: format!("{a} has the negative stride {d}"),
        });
    }
    let mut out = Vec::with_capacity(leaves.len() + 1);
    let mut current = 1i64;
    let mut filtered_size = 1i64;
    for &(s, d) in &leaves {
        if d < current {
            return Err(postcondition(
                OP,
                format!(
                    "that every extent is at least 1: the leaf {s}:{d} of {a} starts inside the {current} values spanned by the smaller strides, so its gap ⌊{d}/{current}⌋ = {} is an extent of 0 (CuTe asserts: non-injective layout)",
                    d / current
                ),
            ));
        }
        out.push((d / current, current));
        current = mul(s, d)?;
        filtered_size = mul(filtered_size, s)?;
    }
    let rest = bound
        .checked_add(current - 1)
        .ok_or_else(|| crate::error::overflow("rounding the bound up"))?
        / current;
    out.push((rest, current));
    let size = out.iter().try_fold(1i64, |acc, m| mul(acc, m.0))?;
    if size < bound / filtered_size {
        return Err(postcondition(
            OP,
            format!(
                "size(R) ≥ ⌊M / size(filter(A))⌋: it gives {}, and {size} < ⌊{bound} / {filtered_size}⌋ = {}",
                Layout::from_modes(&coalesce_modes(out))?,
                bound / filtered_size
            ),
        ));
    }
    // cosize((A, R)) = cosize(A) + R's last value (R's strides are positive).
    let r_last = out
        .iter()
        .try_fold(0i64, |acc, &(s, d)| crate::error::add(acc, mul(s - 1, d)?))?;
    let joint = crate::error::add(a.cosize()?, r_last)?;
    if joint < bound {
        return Err(postcondition(
            OP,
            format!(
                "cosize((A, R)) ≥ M: it gives {}, and cosize((A, R)) = {joint} < {bound}",
                Layout::from_modes(&coalesce_modes(out))?
            ),
        ));
    }
    Ok(coalesce_modes(out))
}

impl Layout {
    /// `complement(self, bound)`; see [`complement`].
    pub fn complement(&self, bound: i64) -> Result<Layout> {
        complement(self, bound)
    }
}
