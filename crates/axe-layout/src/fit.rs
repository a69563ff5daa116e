//! Exact recovery of an iter list from a one-dimensional map.
//!
//! Given `h: [0, n) → Z^axes` with `h(0) = 0`, [`fit`] returns the canonical iter list whose map is `h`, or
//! `None` when no iter list has that map. In a canonical list the innermost iter `(e, v)` has
//! `v = h(1)` on a single axis and `e` equal to the length of the run `h(j) = j·v` (a longer run would make
//! it mergeable with the next iter), so the list is forced level by level; every point is verified.

use crate::axis::Axis;
use crate::error::Result;
use crate::iter::Iter;

/// A point of the axis space in dense form: one component per axis of a fixed list.
pub(crate) type Dense = Vec<i64>;

/// Adds the map of `iters` at flat index `y` into `out` (dense over `axes`). `None` on overflow.
pub(crate) fn add_iters_at(
    iters: &[Iter],
    axes: &[Axis],
    mut y: u64,
    out: &mut [i64],
) -> Option<()> {
    for it in iters.iter().rev() {
        let digit = y % it.extent();
        y /= it.extent();
        if digit != 0 {
            let k = axes.iter().position(|a| a == it.axis())?;
            let v = i64::try_from(digit).ok()?.checked_mul(it.stride())?;
            out[k] = out[k].checked_add(v)?;
        }
    }
    Some(())
}

fn is_multiple(value: &[i64], j: u64, v: &[i64]) -> bool {
    let Ok(j) = i64::try_from(j) else {
        return false;
    };
    value
        .iter()
        .zip(v)
        .all(|(&x, &s)| s.checked_mul(j) == Some(x))
}

fn is_shifted(value: &[i64], base: &[i64], r: u64, v: &[i64]) -> bool {
    let Ok(r) = i64::try_from(r) else {
        return false;
    };
    value
        .iter()
        .zip(base)
        .zip(v)
        .all(|((&x, &b), &s)| s.checked_mul(r).and_then(|d| d.checked_add(b)) == Some(x))
}

/// The canonical iter list (most major first) whose map on `[0, n)` is `h`, or `None` if there is none.
/// `h(0)` must be the origin. Evaluates `h` at most `2n` times.
pub(crate) fn fit(
    n: u64,
    axes: &[Axis],
    mut h: impl FnMut(u64) -> Result<Option<Dense>>,
) -> Result<Option<Vec<Iter>>> {
    let mut inner_first: Vec<Iter> = Vec::new();
    let mut p: u64 = 1; // product of the extents found so far: g(q) = h(q·p)
    let mut m: u64 = n;
    while m > 1 {
        let Some(v) = h(p)? else { return Ok(None) };
        let nonzero: Vec<usize> = (0..v.len()).filter(|&k| v[k] != 0).collect();
        if nonzero.len() > 1 {
            return Ok(None); // one step moves on two axes: no single iter does that
        }
        let mut run: u64 = 2;
        while run < m {
            match h(run * p)? {
                Some(x) if is_multiple(&x, run, &v) => run += 1,
                _ => break,
            }
        }
        if !m.is_multiple_of(run) {
            return Ok(None);
        }
        for q in 1..m / run {
            let Some(base) = h(q * run * p)? else {
                return Ok(None);
            };
            for r in 1..run {
                match h((q * run + r) * p)? {
                    Some(x) if is_shifted(&x, &base, r, &v) => {}
                    _ => return Ok(None),
                }
            }
        }
        let iter = match nonzero.first() {
            Some(&k) => Iter::new(run, v[k], axes[k])?,
            None => Iter::mem(run, 0)?,
        };
        inner_first.push(iter);
        p *= run;
        m /= run;
    }
    inner_first.reverse();
    Ok(Some(inner_first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;

    fn fit_layout(l: &Layout) -> Option<Vec<Iter>> {
        let axes = l.axes();
        fit(l.size(), &axes, |x| {
            let mut out = vec![0; axes.len()];
            Ok(add_iters_at(l.shard(), &axes, x, &mut out).map(|_| out))
        })
        .unwrap()
    }

    #[test]
    fn recovers_canonical_lists() {
        for s in [
            "S[(3,5,7):(35,7,1)]",
            "S[(2,3):(1@a,2@b)]",
            "S[(4,2,3):(0,5,0)]",
            "S[(2,2):(-3,1)]",
            "S[]",
        ] {
            let l: Layout = s.parse().unwrap();
            let got = Layout::from_shard(fit_layout(&l).unwrap()).unwrap();
            assert_eq!(
                got,
                Layout::from_shard(l.canonicalize().unwrap().shard().to_vec()).unwrap(),
                "{s}"
            );
        }
    }
}
