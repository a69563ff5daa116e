//! The exhaustive search `from_axe` once used: every minor_to_major order (up to rank 5) and the
//! cartesian product of candidate tile sizes per dimension, one and two tiles, each candidate checked.
//! Exponential in the rank; kept only as the tests' oracle for [`super::recognise`].

use axe_layout::Layout as AxeLayout;

use super::Target;
use crate::error::{overflow, Result};
use crate::shape::{Layout, Tile, TileDim};

/// The old search over a plain memory layout (the caller has checked it is one).
pub(crate) fn search(l: &AxeLayout, shape: &[u64]) -> Result<Option<Layout>> {
    let grouped = l.group(shape)?;
    let rank = shape.len();
    let dims: Vec<i64> = shape
        .iter()
        .map(|&d| i64::try_from(d).map_err(|_| overflow("converting a shape")))
        .collect::<Result<_>>()?;
    let target = Target::new(&grouped.layout, shape)?;
    // Candidate tile sizes per logical dimension: products of its fastest digits, and the strides (a
    // padded dimension shows its padded extent as the stride of the next more major one).
    let raw: Vec<i64> = l
        .shard()
        .iter()
        .map(|it| it.stride())
        .filter(|&s| s > 0)
        .collect();
    let mut strides: Vec<i64> = raw.iter().copied().filter(|&s| s > 1).collect();
    for &a in &raw {
        for &b in &raw {
            if a > b && a % b == 0 {
                strides.push(a / b);
            }
        }
    }
    strides.sort_unstable();
    strides.dedup();
    let candidates: Vec<Vec<i64>> = (0..rank)
        .map(|i| {
            let mut c = vec![1i64];
            let mut p = 1i64;
            for it in grouped.block(i).iter().rev() {
                p = p.saturating_mul(it.extent() as i64);
                c.push(p);
            }
            c.extend(strides.iter().copied().filter(|&s| s > dims[i]));
            c.sort_unstable();
            c.dedup();
            c
        })
        .collect();
    let orders = minor_to_major_orders(&grouped, rank);
    let matches = |layout: &Layout| target.matches(layout);
    for m2m in &orders {
        let plain = Layout::with_minor_to_major(m2m.clone());
        if matches(&plain) {
            return Ok(Some(plain));
        }
    }
    for tiles in 1..=2 {
        for m2m in &orders {
            let physical: Vec<usize> = m2m.iter().rev().map(|&d| d as usize).collect();
            // A tile may cover the last k physical dimensions, or one more than the rank (a leading 1).
            let mut lead = vec![1i64];
            lead.extend(strides.iter().copied());
            lead.sort_unstable();
            lead.dedup();
            for k in 1..=rank + 1 {
                let covered: Vec<Vec<i64>> = if k <= rank {
                    physical[rank - k..]
                        .iter()
                        .map(|&d| candidates[d].clone())
                        .collect()
                } else {
                    std::iter::once(lead.clone())
                        .chain(physical.iter().map(|&d| candidates[d].clone()))
                        .collect()
                };
                for first in cartesian(covered.clone()) {
                    if first.iter().all(|&t| t == 1) {
                        continue;
                    }
                    let mut layout = Layout::with_minor_to_major(m2m.clone());
                    layout.tiles = [Tile(first.iter().map(|&t| TileDim::Size(t)).collect())].into();
                    if tiles == 1 {
                        if matches(&layout) {
                            return Ok(Some(layout));
                        }
                        continue;
                    }
                    for second in second_tiles(&first, &covered) {
                        let mut two = layout.clone();
                        two.tiles
                            .push(Tile(second.into_iter().map(TileDim::Size).collect()));
                        if matches(&two) {
                            return Ok(Some(two));
                        }
                    }
                }
            }
        }
    }
    Ok(None)
}

/// minor_to_major candidates: every permutation for rank ≤ 5, otherwise the order of the dimensions'
/// most major strides.
fn minor_to_major_orders(grouped: &axe_layout::Grouped, rank: usize) -> Vec<Vec<i64>> {
    let key = |i: usize| grouped.block(i).first().map_or(0, |it| it.stride());
    let mut by_stride: Vec<i64> = (0..rank as i64).collect();
    by_stride.sort_by_key(|&i| key(i as usize));
    let mut out = vec![by_stride];
    if rank <= 5 {
        let mut all = permutations(rank);
        all.retain(|p| *p != out[0]);
        out.extend(all);
    }
    out
}

fn permutations(n: usize) -> Vec<Vec<i64>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for pos in 0..=p.len() {
            let mut q = p.clone();
            q.insert(pos, (n - 1) as i64);
            out.push(q);
        }
    }
    out
}

fn cartesian(lists: Vec<Vec<i64>>) -> Vec<Vec<i64>> {
    let mut out = vec![Vec::new()];
    for l in lists {
        let mut next = Vec::with_capacity(out.len() * l.len());
        for prefix in &out {
            for &x in &l {
                let mut p = prefix.clone();
                p.push(x);
                next.push(p);
            }
        }
        out = next;
        if out.len() > 1 << 16 {
            out.truncate(1 << 16);
        }
    }
    out
}

/// Second-tile candidates: rank 1 or 2 tiles over the first tile's minor sizes.
fn second_tiles(first: &[i64], covered: &[Vec<i64>]) -> Vec<Vec<i64>> {
    let k = first.len();
    let last = &covered[k - 1];
    let mut out = Vec::new();
    for &y in last {
        if y <= first[k - 1] && y > 1 {
            out.push(vec![y]);
        }
    }
    if k >= 2 {
        for &x in &covered[k - 2] {
            for &y in last {
                if x <= first[k - 2] && y <= first[k - 1] && (x, y) != (1, 1) {
                    out.push(vec![x, y]);
                }
            }
        }
    }
    out
}
