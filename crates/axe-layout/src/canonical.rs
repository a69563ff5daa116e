//! Canonical form and exact equivalence (spec §4).
//!
//! Rewrite rules, each preserving `L(x)` for every `x`, applied to a fixpoint:
//!
//! * **D0** drop shard iters with `e = 1`;
//! * **D1** merge adjacent shard iters on one axis when `s_k = e_{k+1}·s_{k+1}` into `(e_k·e_{k+1}, s_{k+1}@a)`;
//! * **D2** a shard iter with `s = 0` moves to axis `m` (it contributes nothing anywhere), so D1 can merge
//!   adjacent broadcasts;
//! * **C0** drop replica iters with `e = 1` or `s = 0`;
//! * **C1** a replica iter with `s < 0` becomes `(e, −s@a)` and `O_a += (e−1)·s`;
//! * **C2** two replica iters on one axis with `s_2 = e_1·s_1` merge into `(e_1·e_2, s_1@a)`;
//! * `R` is sorted by (axis, stride, extent); zero offset components are dropped.
//!
//! The canonical `D` is unique for a given map (paper Thm A.8). The replica part is unique when every axis
//! satisfies the gap condition; [`Layout::equivalent`] compares replica point sets directly where it does not.

use std::borrow::Cow;

use crate::axis::Axis;
use crate::error::{overflow, LayoutError, Result};
use crate::iter::Iter;
use crate::layout::{Layout, MAX_ENUMERATION};

/// Whether two adjacent shard iters merge by D1.
fn chains(a: &Iter, b: &Iter) -> bool {
    a.axis() == b.axis()
        && i64::try_from(b.extent())
            .ok()
            .and_then(|e| e.checked_mul(b.stride()))
            == Some(a.stride())
}

/// Whether no rule of D0–D2 applies to a shard list.
fn is_normalized(shard: &[Iter]) -> bool {
    shard
        .iter()
        .all(|it| it.extent() > 1 && (it.stride() != 0 || it.axis().is_memory()))
        && shard.windows(2).all(|w| !chains(&w[0], &w[1]))
}

/// D0, D1 and D2 on a shard list: the normalized `D` (borrowed when already normalized).
pub(crate) fn normalize_shard(shard: &[Iter]) -> Cow<'_, [Iter]> {
    if is_normalized(shard) {
        return Cow::Borrowed(shard);
    }
    let mut out: Vec<Iter> = Vec::with_capacity(shard.len());
    for it in shard {
        if it.extent() == 1 {
            continue;
        }
        let it = if it.stride() == 0 && !it.axis().is_memory() {
            it.with_axis(Axis::memory())
        } else {
            *it
        };
        out.push(it);
        while let [.., a, b] = out.as_slice() {
            if !chains(a, b) {
                break;
            }
            // The product is at most the layout size, which fits in u64.
            let merged = b.with_extent(a.extent() * b.extent());
            out.truncate(out.len() - 2);
            out.push(merged);
        }
    }
    Cow::Owned(out)
}

impl Layout {
    /// The canonical form (spec §4): D0–D2 on the shard list, C0–C2 on the replicas, `R` sorted.
    ///
    /// Law: `canonicalize(L)(x) = L(x)` for every `x`, and equivalent layouts have equal canonical `D` and `O`.
    ///
    /// ```
    /// let l: axe_layout::Layout = "S[(3,1,5,7):(35,9,7,1)] + R[(2,1):(-4@warp,3)] + 1@warp".parse()?;
    /// assert_eq!(l.canonicalize()?.to_string(), "S[105:1] + R[2:4@warp] + -3@warp");
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn canonicalize(&self) -> Result<Layout> {
        let shard = normalize_shard(self.shard()).into_owned();
        let mut offset = self.offset().clone();
        let mut replica = Vec::with_capacity(self.replica().len());
        for it in self.replica() {
            if it.extent() == 1 || it.stride() == 0 {
                continue; // C0
            }
            if it.stride() < 0 {
                // C1
                let shift = i64::try_from(it.extent() - 1)
                    .ok()
                    .and_then(|e| e.checked_mul(it.stride()))
                    .ok_or_else(|| overflow("normalizing a replica sign"))?;
                offset.add_on(it.axis(), shift)?;
                let s = it
                    .stride()
                    .checked_neg()
                    .ok_or_else(|| overflow("normalizing a replica sign"))?;
                replica.push(it.with_stride(s));
            } else {
                replica.push(*it);
            }
        }
        // C2 to a fixpoint, in sorted order so the result is deterministic.
        loop {
            replica.sort_by(|a, b| {
                (a.axis(), a.stride(), a.extent()).cmp(&(b.axis(), b.stride(), b.extent()))
            });
            let mut merged = false;
            'search: for i in 0..replica.len() {
                for j in 0..replica.len() {
                    let (a, b) = (&replica[i], &replica[j]);
                    if i != j
                        && a.axis() == b.axis()
                        && i64::try_from(a.extent())
                            .ok()
                            .and_then(|e| e.checked_mul(a.stride()))
                            == Some(b.stride())
                    {
                        let m = a.with_extent(a.extent() * b.extent());
                        let (hi, lo) = (i.max(j), i.min(j));
                        replica.remove(hi);
                        replica.remove(lo);
                        replica.push(m);
                        merged = true;
                        break 'search;
                    }
                }
            }
            if !merged {
                break;
            }
        }
        Layout::new(shard, replica, offset)
    }

    /// Whether every axis' replica list (after canonicalization) satisfies the gap condition: with strides
    /// sorted `s_1 < s_2 < ...`, `s_{j+1} > Σ_{i≤j} (e_i−1)·s_i`. Under it the canonical form is unique.
    ///
    /// ```
    /// let ok: axe_layout::Layout = "S[4:1] + R[(2,2):(1@warp,8@warp)]".parse()?;
    /// assert!(ok.satisfies_gap_condition()?);
    /// let dense: axe_layout::Layout = "S[4:1] + R[(3,2):(1@warp,2@warp)]".parse()?;
    /// assert!(!dense.satisfies_gap_condition()?);
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn satisfies_gap_condition(&self) -> Result<bool> {
        let c = self.canonicalize()?;
        Ok(c.axes().iter().all(|a| axis_gap_condition(c.replica(), a)))
    }

    /// Exact equivalence: `A ≡ B` iff `A(x) = B(x)` as sets for every `x` (and the sizes agree).
    ///
    /// Decided from canonical forms: equal canonical `D`, equal `O` after C1, and equal replica point sets
    /// per axis (compared structurally under the gap condition, by enumeration otherwise).
    ///
    /// ```
    /// # use axe_layout::Layout;
    /// let a: Layout = "S[(2,4):(4,1)] + R[(2,2):(1@w,1@w)]".parse()?;
    /// let b: Layout = "S[8:1] + R[3:1@w]".parse()?;
    /// assert!(a.equivalent(&b)?);
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn equivalent(&self, other: &Layout) -> Result<bool> {
        if self.size() != other.size() {
            return Ok(false);
        }
        if self.replica().is_empty() && other.replica().is_empty() {
            // No replicas: the map is D(x) + O, so compare normalized D and O (no allocation when both
            // shard lists are already normalized).
            return Ok(self.offset() == other.offset()
                && normalize_shard(self.shard()) == normalize_shard(other.shard()));
        }
        let (a, b) = (self.canonicalize()?, other.canonicalize()?);
        if a.shard() != b.shard() || a.offset() != b.offset() {
            return Ok(false);
        }
        if a.replica() == b.replica() {
            return Ok(true);
        }
        let mut axes: Vec<Axis> = a
            .replica()
            .iter()
            .chain(b.replica())
            .map(|it| *it.axis())
            .collect();
        axes.sort();
        axes.dedup();
        for axis in &axes {
            let ia = on_axis(a.replica(), axis);
            let ib = on_axis(b.replica(), axis);
            if ia == ib {
                continue;
            }
            if axis_gap_condition(&ia, axis) && axis_gap_condition(&ib, axis) {
                return Ok(false); // Unique saturated form under GC (paper Thm A.12).
            }
            // Equal point sets have equal spans (lowest to highest point): a cheap test first, before
            // the sets are enumerated.
            if matches!((reach(&ia), reach(&ib)), (Some(x), Some(y)) if x != y) {
                return Ok(false);
            }
            if axis_points(&ia)? != axis_points(&ib)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// How far the points of `iters` reach on their axis, from the lowest to the highest:
/// `Σ (e − 1)·|s|` (`None` past 128 bits).
fn reach(iters: &[Iter]) -> Option<u128> {
    iters.iter().try_fold(0u128, |acc, it| {
        let term =
            u128::from(it.extent() - 1).checked_mul(u128::from(it.stride().unsigned_abs()))?;
        acc.checked_add(term)
    })
}

/// The iters of a list that lie on `axis`.
fn on_axis(iters: &[Iter], axis: &Axis) -> Vec<Iter> {
    iters
        .iter()
        .filter(|it| it.axis() == axis)
        .cloned()
        .collect()
}

/// The gap condition for the (canonical, positive-stride) replica iters on one axis.
fn axis_gap_condition(replica: &[Iter], axis: &Axis) -> bool {
    let mut its: Vec<&Iter> = replica.iter().filter(|it| it.axis() == axis).collect();
    its.sort_by_key(|it| it.stride());
    let mut reach: i128 = 0; // Σ_{i≤j} (e_i−1)·s_i so far
    for (j, it) in its.iter().enumerate() {
        let s = it.stride() as i128;
        if j > 0 && (s <= its[j - 1].stride() as i128 || s <= reach) {
            return false;
        }
        reach += (it.extent() as i128 - 1) * s;
    }
    true
}

/// The sorted point set `{ Σ y_i·s_i }` of one axis' replica iters (non-negative strides).
///
/// Each iter is added to the set over the range its sums fill when that is within [`MAX_ENUMERATION`]
/// and smaller than the list of every sum (sums that repeat: `(60000,60000):(1,1)` makes 3.6·10^9 sums
/// but fills 120,000 points), else by listing every sum when they are within the limit; else the set is
/// too large to compare. Work and memory stay within a few times the limit.
fn axis_points(iters: &[Iter]) -> Result<Vec<i64>> {
    let mut pts: Vec<i64> = vec![0];
    for it in iters {
        let reach = it
            .reach()
            .ok_or_else(|| overflow("enumerating replica points"))?;
        let span = pts.last().copied().unwrap_or(0) as u64;
        let range = span.saturating_add(reach).saturating_add(1);
        let listed = (pts.len() as u64).saturating_mul(it.extent());
        let dense = pts.first().is_some_and(|&p| p >= 0) && it.stride() > 0;
        if dense && range <= MAX_ENUMERATION && range < listed {
            // The sums repeat: one pass over the range they fill costs less than listing them.
            pts = sum_with_progression(&pts, it.stride().unsigned_abs(), it.extent(), range);
        } else if listed <= MAX_ENUMERATION {
            let mut next = Vec::with_capacity(listed as usize);
            for y in 0..it.extent() as i64 {
                let d = y
                    .checked_mul(it.stride())
                    .ok_or_else(|| overflow("enumerating replica points"))?;
                for p in &pts {
                    next.push(
                        p.checked_add(d)
                            .ok_or_else(|| overflow("enumerating replica points"))?,
                    );
                }
            }
            next.sort_unstable();
            next.dedup();
            pts = next;
        } else {
            return Err(LayoutError::TooLarge(format!(
                "comparing replica sets that violate the gap condition needs {} points (limit {MAX_ENUMERATION})",
                listed.min(range)
            )));
        }
    }
    Ok(pts)
}

/// `{ p + y·s : p ∈ pts, 0 ≤ y < e }`, sorted, for sorted `pts` in `[0, range)` whose sums lie below
/// `range` (`s > 0`): a value is a sum when the nearest point at or below it in its residue class mod `s`
/// lies fewer than `e` strides below. One pass over each class; two bytes a value of the range.
fn sum_with_progression(pts: &[i64], s: u64, e: u64, range: u64) -> Vec<i64> {
    let mut is_point = vec![false; range as usize];
    for &p in pts {
        is_point[p as usize] = true;
    }
    let mut is_sum = vec![false; range as usize];
    for class in 0..s.min(range) {
        let mut nearest: Option<u64> = None;
        for x in (class..range).step_by(s as usize) {
            if is_point[x as usize] {
                nearest = Some(x);
            }
            if nearest.is_some_and(|p| (x - p) / s < e) {
                is_sum[x as usize] = true;
            }
        }
    }
    is_sum
        .iter()
        .enumerate()
        .filter(|&(_, &sum)| sum)
        .map(|(x, _)| x as i64)
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// As listing every sum: sorted, without repeats.
        #[test]
        fn progression_sums_are_the_listed_sums(
            mut pts in proptest::collection::vec(0i64..60, 1..12),
            s in 1u64..9,
            e in 1u64..7,
        ) {
            pts.sort_unstable();
            pts.dedup();
            let range = *pts.last().unwrap() as u64 + (e - 1) * s + 1;
            let mut listed: Vec<i64> = pts
                .iter()
                .flat_map(|&p| (0..e).map(move |y| p + (y * s) as i64))
                .collect();
            listed.sort_unstable();
            listed.dedup();
            prop_assert_eq!(sum_with_progression(&pts, s, e, range), listed);
        }
    }

    /// Iters whose sums repeat are compared over the range they fill, not by listing 3.6·10^9 sums.
    #[test]
    fn repeating_sums_are_compared_within_the_limit() {
        let a: Layout = "S[] + R[(60000,60000):(1,1)]".parse().unwrap();
        let b: Layout = "S[] + R[119999:1]".parse().unwrap();
        let c: Layout = "S[] + R[(60000,30000,30001):(1,1,1)]".parse().unwrap();
        assert!(a.equivalent(&b).unwrap());
        assert!(a.equivalent(&c).unwrap());
        let d: Layout = "S[] + R[(60000,60000):(1,3)]".parse().unwrap();
        assert!(!a.equivalent(&d).unwrap());
        // Sums that neither fit the limit listed nor fill a range within it: refused where the spans
        // agree, answered at once where they differ (equal point sets have equal spans).
        let e: Layout = "S[] + R[(60000,60000,60000):(1,1,1000)]".parse().unwrap();
        let g: Layout = "S[] + R[(60000,60000,60000):(1,2,999)]".parse().unwrap();
        assert!(matches!(e.equivalent(&g), Err(LayoutError::TooLarge(_))));
        assert!(!e.equivalent(&b).unwrap());
        let h: Layout = "S[] + R[(1073741824,1073741824):(2147483648,2147483649)]"
            .parse()
            .unwrap();
        let k: Layout = "S[] + R[(1073741824,1073741824):(2147483648,2147483647)]"
            .parse()
            .unwrap();
        assert!(!h.equivalent(&k).unwrap());
    }
}
