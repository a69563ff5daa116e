//! `right_inverse` and `left_inverse`.

use crate::coalesce::coalesce_modes;
use crate::complement::{complement, complement_is_exact};
use crate::error::{mul, no_layout, CuteError, Result};
use crate::fit::MAX_CHECK;
use crate::layout::Layout;
use crate::left_search::{search_generalised_inverse, search_left_inverse, SEARCH_SIZE};

/// `right_inverse(L)`.
///
/// **Law**: `L(R(i)) = i` for every `i ∈ [0, size(R))`. `R` is built as CuTe does: the leaves of `L`
/// taken in stride order while each stride equals the product `s·d` reached so far (starting at 1,
/// skipping stride-0 and extent-1 leaves), each mapped to its colexicographic position in `L`. So
/// `size(R)` is the largest `n` for which `[0, n)` is covered by such a chain of leaves (1 when `L` has
/// no stride-1 leaf). When `L` is a bijection onto `[0, size)`, `R` is its inverse; when `L` is injective,
/// no layout longer than `R` has the law (the tests confirm it exhaustively). For a non-injective `L`
/// a longer one may exist: `(4,2):(1,2)` gives `4:1`, and `(3,2):(1,5)` also works.
///
/// ```
/// let l: axe_cute::Layout = "(4,(2,3)):(2,(1,8))".parse()?;
/// assert_eq!(l.right_inverse()?.to_string(), "(2,4,3):(4,1,8)");
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn right_inverse(l: &Layout) -> Result<Layout> {
    Layout::from_modes(&coalesce_modes(right_inverse_modes(&l.modes_flat())?))
}

/// CuTe's right inverse of flat leaves, uncoalesced.
fn right_inverse_modes(flat: &[(i64, i64)]) -> Result<Vec<(i64, i64)>> {
    let mut with_pos = Vec::with_capacity(flat.len());
    let mut pos = 1i64;
    for &(s, d) in flat {
        with_pos.push((d, s, pos));
        pos = mul(pos, s)?;
    }
    with_pos.sort_unstable();
    let mut out = Vec::with_capacity(flat.len());
    let mut current = 1i64;
    while let Some(&(d, s, p)) = with_pos.iter().find(|&&(d, s, _)| s > 1 && d == current) {
        out.push((s, p));
        current = mul(s, d)?;
    }
    Ok(out)
}

/// `left_inverse(L)`, as CuTe gives it: for an injective `L` the true left inverse
/// ([`left_inverse_strict`]); for a non-injective one a generalised inverse.
///
/// **Law**: for an injective `L`, `R(L(i)) = i` for every `i ∈ [0, size(L))` and
/// `size(R) ≥ cosize(L)`. For a non-injective `L` (no true left inverse exists) `R` is a generalised
/// inverse: `L(R(L(i))) = L(i)` for every `i`, `R(L(i)) ∈ [0, size(L))` and `size(R) ≥ cosize(L)`;
/// it picks one index of each value. It is CuTe's `right_inverse((L, complement(L)))` when that
/// satisfies the law, else `L'`'s inverse mapped back to `L`'s indices, where `L'` is `L` without its
/// stride-0 leaves, else, for `size(L) ≤ 64`, a bounded search over the sizes `cosize(L)..2·cosize(L)`
/// (`(3,6):(1,1)` has `(2,2,2):(1,4,12)`); every answer is checked against the law. Nothing found is
/// [`CuteError::Unsupported`] (one may exist past the bounds). [`is_true_left_inverse`] tells the
/// injective and non-injective cases apart.
///
/// ```
/// let l: axe_cute::Layout = "(2,2):(0,1)".parse()?;
/// let r = l.left_inverse()?;                 // not a true inverse: L(0) = L(1)
/// assert_eq!(r.to_string(), "2:2");
/// for i in 0..l.size() { assert_eq!(l.eval(r.eval(l.eval(i)?)?)?, l.eval(i)?); }
/// assert!(axe_cute::left_inverse_strict(&l).is_err());
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn left_inverse(l: &Layout) -> Result<Layout> {
    negative_values("left_inverse", l)?;
    match left_inverse_strict(l) {
        Err(CuteError::NoLayout { reason, .. }) if reason.contains("not injective") => {
            generalised_inverse(l, &reason)
        }
        other => other,
    }
}

/// Refuses a layout with a negative stride on a leaf of extent above 1: it takes a negative value
/// there, which no layout's domain `[0, size)` holds, so no `R` has `R(L(i)) = i`.
fn negative_values(op: &'static str, l: &Layout) -> Result<()> {
    match l.modes_flat().into_iter().find(|&(s, d)| s > 1 && d < 0) {
        Some((s, d)) => Err(no_layout(
            op,
            format!(
                "{l} has the negative stride {d} (on a leaf of extent {s}), so it takes negative values, which no layout's domain [0, size) holds: no R has R(L(i)) = i"
            ),
        )),
        None => Ok(()),
    }
}

/// Whether `L` is injective (so [`left_inverse`] is a true left inverse), by enumeration.
pub fn is_true_left_inverse(l: &Layout) -> Result<bool> {
    Ok(collision(l)?.is_none())
}

/// A generalised inverse of a non-injective `L`: CuTe's answer if it obeys the law, else the inverse of
/// `L` without its stride-0 leaves mapped back to `L`'s indices, else the bounded search
/// ([`search_generalised_inverse`]). `why` says why `L` is not injective, for the error.
fn generalised_inverse(l: &Layout, why: &str) -> Result<Layout> {
    let cosize = l.cosize()?;
    if let Ok(c) = complement(l, cosize) {
        let mut flat = l.modes_flat();
        flat.extend(c.modes_flat());
        let r = Layout::from_modes(&coalesce_modes(right_inverse_modes(&flat)?))?;
        if generalised_law(l, &r)? {
            return Ok(r);
        }
    }
    if let Some(r) = reduced_inverse(l)? {
        if generalised_law(l, &r)? {
            return Ok(r);
        }
    }
    let searched = l.size() <= SEARCH_SIZE && cosize <= 16 * SEARCH_SIZE;
    if searched {
        if let Some(r) = search_generalised_inverse(&l.values(MAX_CHECK)?, cosize)? {
            if generalised_law(l, &r)? {
                return Ok(r);
            }
        }
    }
    Err(CuteError::Unsupported {
        op: "left_inverse",
        reason: format!(
            "{why}, so it has no true left inverse, and no generalised inverse (L(R(L(i))) = L(i), size(R) ≥ cosize(L)) was found: not CuTe's right_inverse((L, complement(L))), not the inverse of L without its stride-0 leaves{}",
            if searched {
                format!(", and none among the layouts of size {cosize}..{} searched", cosize.saturating_mul(2))
            } else {
                format!(" (L is too large to search: size {} > {SEARCH_SIZE} or cosize {cosize} > {})", l.size(), 16 * SEARCH_SIZE)
            }
        ),
    })
}

/// The inverse of `L' = L` without its stride-0 leaves, carried back to `L`'s indices (`E` maps an
/// index of `L'` to the index of `L` with the same value, the stride-0 digits zero); `None` when `L'`
/// has no left inverse here or the composition is no layout.
fn reduced_inverse(l: &Layout) -> Result<Option<Layout>> {
    let mut kept = Vec::new();
    let mut weights = Vec::new();
    let mut w = 1i64;
    for (s, d) in l.modes_flat() {
        if s > 1 && d != 0 {
            kept.push((s, d));
            weights.push((s, w));
        }
        w = mul(w, s)?;
    }
    let reduced = Layout::from_modes(&kept)?;
    let Ok(inner) = left_inverse_strict(&reduced) else {
        return Ok(None);
    };
    let embed = Layout::from_modes(&weights)?;
    match crate::compose::composition(&embed, &inner) {
        Ok(r) => Ok(Some(r)),
        // `inner` may take negative values: fit E ∘ inner from its values instead.
        Err(_) => {
            let vals = inner
                .values(MAX_CHECK)?
                .into_iter()
                .map(|j| embed.eval(j))
                .collect::<Result<Vec<_>>>();
            match vals {
                Ok(v) => crate::fit::fit(&v)?
                    .map(|m| Layout::from_modes(&m))
                    .transpose(),
                Err(_) => Ok(None),
            }
        }
    }
}

/// `L(R(L(i))) = L(i)` with `R(L(i)) ∈ [0, size(L))` for every `i`, and `size(R) ≥ cosize(L)`.
fn generalised_law(l: &Layout, r: &Layout) -> Result<bool> {
    if r.size() < l.cosize()? {
        return Ok(false);
    }
    let lv = l.values(MAX_CHECK)?;
    for &v in &lv {
        // A value outside R's domain has no index to go back to.
        if v < 0 || v >= r.size() {
            return Ok(false);
        }
        let j = r.eval(v)?;
        if j < 0 || j >= l.size() || l.eval(j)? != v {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `left_inverse(L)` for an injective `L` only (the CLI's `--strict`).
///
/// **Law**: `R(L(i)) = i` for every `i ∈ [0, size(L))`, and `size(R) ≥ cosize(L)` (every value of `L`
/// is in `R`'s domain). When `complement(L)` is exact ([`crate::complement_is_exact`]) it is
/// `right_inverse((L, complement(L, cosize(L))))`, exact because `(L, complement)` is then a
/// bijection onto an interval.
///
/// When `L` is injective but its complement is not exact and its strides, sorted, each divide the next
/// with room for the leaf (`d_{k+1}/d_k ≥ s_k`), `R` reads the leaves' digits directly:
/// `(2,3):(1,3)` (which pycute answers wrongly) has `(3,3):(1,2)`.
///
/// Otherwise, for `size(L) ≤ 64`, a bounded search: each size `N ∈ [cosize, 2·cosize]` and each ordered
/// factorization of `N`, the strides solving `R(L(i)) = i` exactly over the integers (`(4,3):(6,5)` has
/// `(3,2,5):(-3,10,1)`); the answer is checked on every index.
///
/// Errors: `L` not injective (no left inverse exists; the error names two indices with one value);
/// `L` injective and nothing found ([`CuteError::Unsupported`]: an answer may exist past the bounds).
///
/// ```
/// use axe_cute::left_inverse_strict as li;
/// let l: axe_cute::Layout = "(4,(2,3)):(2,(1,8))".parse()?;
/// assert_eq!(li(&l)?.to_string(), "(2,4,3):(4,1,8)");
/// assert!(li(&"(2,2):(0,1)".parse()?).is_err());
/// let l: axe_cute::Layout = "(2,3):(1,3)".parse()?;
/// assert_eq!(li(&l)?.to_string(), "(3,3):(1,2)");
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn left_inverse_strict(l: &Layout) -> Result<Layout> {
    const OP: &str = "left_inverse";
    negative_values(OP, l)?;
    let mut flat = l.modes_flat();
    if let Some(&(s, _)) = flat.iter().find(|&&(s, d)| s > 1 && d == 0) {
        return Err(no_layout(
            OP,
            format!("{l} is not injective: a leaf of extent {s} has stride 0"),
        ));
    }
    let cosize = l.cosize()?;
    let exact = complement_is_exact(l);
    let c = match complement(l, cosize) {
        Ok(c) if exact => c,
        Ok(_) | Err(CuteError::NoLayout { .. } | CuteError::Postcondition { .. }) => {
            return Err(match collision(l)? {
                Some((i, j, v)) => {
                    no_layout(OP, format!("{l} is not injective: L({i}) = L({j}) = {v}"))
                }
                None => {
                    if let Some(r) = stride_chain_inverse(l)? {
                        return Ok(r);
                    }
                    if l.size() <= SEARCH_SIZE && cosize <= 16 * SEARCH_SIZE {
                        if let Some(r) = search_left_inverse(&l.values(MAX_CHECK)?, cosize)? {
                            return Ok(r);
                        }
                    }
                    CuteError::Unsupported {
                        op: OP,
                        reason: format!(
                            "{l} is injective and has no exact complement; no left inverse was found among the layouts of size {cosize}..{} whose strides solve R(L(i)) = i",
                            cosize.saturating_mul(2)
                        ),
                    }
                }
            })
        }
        Err(e) => return Err(e),
    };
    // The leaves of (L, complement), in that order: their colexicographic positions are those of the
    // concatenated layout.
    flat.extend(c.modes_flat());
    Layout::from_modes(&coalesce_modes(right_inverse_modes(&flat)?))
}

/// The left inverse of an injective `L` whose leaves, sorted by stride, have each stride a multiple of
/// the previous one with `d_{k+1}/d_k ≥ s_k`: `R = (d_1, d_2/d_1, …, d_m/d_{m−1}, s_m):(0, w_1, …, w_m)`
/// with `w_k` the colexicographic weight of leaf `k` in `L`. Then `L(c) = Σ c_k·d_k` has the digits
/// `(0, c_1, …, c_m)` in `R`'s radix (`c_k < s_k ≤ d_{k+1}/d_k`), so `R(L(c)) = Σ c_k·w_k`, the flat
/// index of `c`; and `size(R) = d_m·s_m ≥ cosize(L)`. `None` when the strides are not such a chain.
fn stride_chain_inverse(l: &Layout) -> Result<Option<Layout>> {
    let mut leaves = Vec::new();
    let mut w = 1i64;
    for (s, d) in l.modes_flat() {
        if s > 1 {
            if d <= 0 {
                return Ok(None);
            }
            leaves.push((d, s, w));
        }
        w = mul(w, s)?;
    }
    leaves.sort();
    let Some(&(d1, _, _)) = leaves.first() else {
        return Ok(None);
    };
    let mut modes = vec![(d1, 0i64)];
    for k in 0..leaves.len() {
        let (d, s, w) = leaves[k];
        let radix = match leaves.get(k + 1) {
            Some(&(next, _, _)) if next % d == 0 && next / d >= s => next / d,
            Some(_) => return Ok(None),
            None => s,
        };
        modes.push((radix, w));
    }
    Ok(Some(Layout::from_modes(&coalesce_modes(modes))?))
}

/// Two indices with the same value, by enumeration (`None` when `L` is injective).
fn collision(l: &Layout) -> Result<Option<(i64, i64, i64)>> {
    let vals = l.values(MAX_CHECK)?;
    let mut seen = std::collections::HashMap::with_capacity(vals.len());
    for (i, v) in vals.into_iter().enumerate() {
        let i = i64::try_from(i).map_err(|_| CuteError::TooLarge("index".into()))?;
        if let Some(j) = seen.insert(v, i) {
            return Ok(Some((j, i, v)));
        }
    }
    Ok(None)
}

impl Layout {
    /// `right_inverse(self)`; see [`right_inverse`].
    pub fn right_inverse(&self) -> Result<Layout> {
        right_inverse(self)
    }

    /// `left_inverse(self)`; see [`left_inverse`].
    pub fn left_inverse(&self) -> Result<Layout> {
        left_inverse(self)
    }

    /// `left_inverse_strict(self)`; see [`left_inverse_strict`].
    pub fn left_inverse_strict(&self) -> Result<Layout> {
        left_inverse_strict(self)
    }
}
