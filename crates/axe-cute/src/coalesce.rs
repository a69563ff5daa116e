//! `coalesce`: the fewest modes computing the same function.

use crate::error::Result;
use crate::int_tuple::IntTuple;
use crate::layout::Layout;

/// Merges flat leaves: drops extent-1 leaves and merges `(s0,d0),(s1,d1)` when `d1 = s0·d0`. Each step
/// keeps `L(i)` for every `i`, including past the size through the last leaf.
pub(crate) fn coalesce_modes(mut modes: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    let mut n = 0usize;
    for k in 0..modes.len() {
        let (s, d) = modes[k];
        if s == 1 {
            continue;
        }
        if n > 0 {
            let last = modes[n - 1];
            if last.0.checked_mul(last.1) == Some(d) {
                if let Some(m) = last.0.checked_mul(s) {
                    modes[n - 1].0 = m;
                    continue;
                }
            }
        }
        modes[n] = (s, d);
        n += 1;
    }
    modes.truncate(n);
    modes
}

impl Layout {
    /// `coalesce(L)`: a flat layout with the fewest modes and the same map.
    ///
    /// **Law**: `size(R) = size(L)` and `R(i) = L(i)` for every `i ∈ [0, size)`; no two adjacent modes of
    /// `R` satisfy `d1 = s0·d0` and no mode has extent 1 (a layout of size 1 is `1:0`). The rewrite steps
    /// (drop extent 1, merge `(s0,d0),(s1,d1)` into `(s0·s1,d0)` when `d1 = s0·d0`) each keep the map.
    ///
    /// ```
    /// let l: axe_cute::Layout = "(2,(1,6)):(1,(6,2))".parse()?;
    /// assert_eq!(l.coalesce()?.to_string(), "12:1");
    /// # Ok::<(), axe_cute::CuteError>(())
    /// ```
    pub fn coalesce(&self) -> Result<Layout> {
        Layout::from_modes(&coalesce_modes(self.modes_flat()))
    }

    /// `coalesce(L, profile)`: coalesce by mode. For a tuple profile, mode `i < rank(profile)` is coalesced
    /// by `profile_i` and the modes after it are kept; an integer profile coalesces the whole layout.
    ///
    /// **Law**: same map as `L`, and for a tuple profile the result has `rank(L)` modes with
    /// `size(R_i) = size(L_i)`.
    ///
    /// ```
    /// let l: axe_cute::Layout = "((2,4),(3,1)):((1,2),(8,1))".parse()?;
    /// let p = axe_cute::parse_int_tuple("(1,1)")?;
    /// assert_eq!(l.coalesce_by(&p)?.to_string(), "(8,3):(1,8)");
    /// # Ok::<(), axe_cute::CuteError>(())
    /// ```
    pub fn coalesce_by(&self, profile: &IntTuple) -> Result<Layout> {
        self.by_profile(profile, Layout::coalesce, Layout::coalesce_by)
    }

    /// An operation with a profile, as CuTe applies one: `whole` to the whole layout when the profile is an
    /// integer, else to each mode with its own sub-profile (`by_mode`), modes past the profile kept as they are.
    fn by_profile(
        &self,
        profile: &IntTuple,
        whole: fn(&Layout) -> Result<Layout>,
        by_mode: fn(&Layout, &IntTuple) -> Result<Layout>,
    ) -> Result<Layout> {
        match profile {
            IntTuple::Int(_) => whole(self),
            IntTuple::Tuple(ps) => {
                if ps.len() > self.rank() {
                    return Err(crate::CuteError::RankMismatch(format!(
                        "profile {profile} has {} modes, the layout {}",
                        ps.len(),
                        self.rank()
                    )));
                }
                let mut modes = Vec::new();
                for (i, m) in self.modes()?.into_iter().enumerate() {
                    modes.push(match ps.get(i) {
                        Some(p) => by_mode(&m, p)?,
                        None => m,
                    });
                }
                Layout::concat(&modes)
            }
        }
    }

    /// `filter(L)`: `L` with its stride-0 and extent-1 leaves removed, coalesced (CuTe's `filter`).
    ///
    /// **Law**: the values of `R` are the distinct values `L` takes through its nonzero-stride leaves:
    /// `R(j) = L(i_j)` where `i_j` runs over the indices whose stride-0 digits are 0, in order, and
    /// `size(R)` is the product of the extents of those leaves (`1:0` when none).
    ///
    /// ```
    /// let l: axe_cute::Layout = "(2,(3,4)):(1,(0,2))".parse()?;
    /// assert_eq!(l.filter()?.to_string(), "8:1");
    /// # Ok::<(), axe_cute::CuteError>(())
    /// ```
    pub fn filter(&self) -> Result<Layout> {
        let kept: Vec<(i64, i64)> = self.modes_flat().into_iter().filter(|m| m.1 != 0).collect();
        Layout::from_modes(&coalesce_modes(kept))
    }

    /// `filter(L, profile)`: [`Layout::filter`] applied mode by mode as [`Layout::coalesce_by`] does.
    pub fn filter_by(&self, profile: &IntTuple) -> Result<Layout> {
        self.by_profile(profile, Layout::filter, Layout::filter_by)
    }
}
