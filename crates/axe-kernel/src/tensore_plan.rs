//! The TensorE plan of a gemm (Appendix H): group, intersect each dimension's iters between the two
//! operands that share it, and pick the largest instruction tile; the rest is the loop nest.
//!
//! **Tiles.** Along a dimension shared by operands X and Y, a tile is a set of logical indices with a
//! position `i < T` each, such that X holds the element at position `i` at `x0 + i·sX` on X's axis
//! and Y at `y0 + i·sY` on Y's (the other axis unchanged; `s = 1` on a partition axis, `s ≥ 1` on a
//! free axis), and whose translates by the loop nest's bases tile the dimension. Over the intersected
//! sub-iters this is a *chain*: a sub-iter with strides `(sX, sY)`, then one with `(sX·e₁, sY·e₁)`, then
//! `(sX·e₁e₂, sY·e₁e₂)`, … — the paper's "canonicalizes to a single iter"; the last one may be cut to
//! a divisor of its extent to stay within the bound. The tile is the longest chain within the bound;
//! the sub-iters outside it (and the cut-off part) are loops.

use axe_layout::Iter;

use crate::desc::{space_name, Space, Tensor};
use crate::error::{overflow, Result};
use crate::tensore::{MAX_K, MAX_M, MAX_N};

/// A logical dimension's instruction tile and loop nest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimPlan {
    /// `M`, `N` or `K`.
    pub name: &'static str,
    /// The dimension's extent.
    pub size: u64,
    /// The instruction's extent along it.
    pub tile: u64,
    /// The tile's sub-iters in the first and the second operand, position 1 first (`i = Σ digit·r`):
    /// their strides are the steps `(sX, sY)` times the positions' weights.
    pub chain: Vec<(Iter, Iter)>,
    /// The loops over the rest: `(extent, logical weight)`, outer to inner; the tile's base index is
    /// `Σ var·weight`.
    pub loops: Vec<(u64, u64)>,
    /// The two operands' intersected digits, outer to inner.
    pub joint: Vec<Part>,
}

impl DimPlan {
    /// The steps `(sX, sY)` between consecutive positions in the two operands.
    pub fn steps(&self) -> (i64, i64) {
        self.chain
            .first()
            .map_or((1, 1), |(a, b)| (a.stride(), b.stride()))
    }
}

/// The TensorE schedule of a gemm: one instruction shape and its loop nest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// M: A's free axis, C's partitions (operands A, C).
    pub m: DimPlan,
    /// N: the free axis of B and C (operands B, C).
    pub n: DimPlan,
    /// K: the partitions of A and B (operands A, B).
    pub k: DimPlan,
}

fn show(iters: &[Iter]) -> String {
    if iters.is_empty() {
        return "(1)".into();
    }
    let parts: Vec<String> = iters
        .iter()
        .map(|i| format!("{}:{}@{}", i.extent(), i.stride(), i.axis()))
        .collect();
    format!("({})", parts.join(", "))
}

/// A part of a dimension's logical index: the digit of `extent` values at logical `weight`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Its weight in the logical index.
    pub weight: u64,
    /// Its extent.
    pub extent: u64,
    /// The digit as one iter of each operand, when both hold it in a single iter; `None` when the
    /// part spans several iters of an operand (then it can only be looped over).
    pub pair: Option<(Iter, Iter)>,
}

/// Iters of one operand, inner to outer, with their logical weights.
fn weighted(x: &[Iter]) -> Result<Vec<(u64, &Iter)>> {
    let mut w: u64 = 1;
    let mut out = Vec::new();
    for it in x.iter().rev().filter(|i| i.extent() > 1) {
        out.push((w, it));
        w = w
            .checked_mul(it.extent())
            .ok_or_else(|| overflow("computing a dimension's weights"))?;
    }
    Ok(out)
}

/// Whether a digit boundary at weight `w` can be made by splitting one iter (`w = u·f`, `f | e`).
fn splits_at(ws: &[(u64, &Iter)], w: u64) -> bool {
    w == 1
        || ws
            .iter()
            .any(|(u, it)| w.is_multiple_of(*u) && it.extent().is_multiple_of(w / u) && w / u > 1)
}

/// The part `[lo, hi)` of weights as one iter of the operand, if one iter holds it.
fn within(ws: &[(u64, &Iter)], lo: u64, hi: u64) -> Result<Option<Iter>> {
    for (u, it) in ws {
        if lo.is_multiple_of(*u) && lo >= *u && hi <= u.saturating_mul(it.extent()) {
            let stride = it
                .stride()
                .checked_mul((lo / u) as i64)
                .ok_or_else(|| overflow("computing a sub-iter's stride"))?;
            let sub = Iter::new(hi / lo, stride, *it.axis())
                .map_err(crate::error::layout("a sub-iter"))?;
            return Ok(Some(sub));
        }
    }
    Ok(None)
}

/// The common refinement of two factorizations of one extent: digit boundaries both can make by
/// splitting an iter, from the innermost out (each the smallest above the last that it divides);
/// the parts between them, outer to inner, each one iter of both operands or an unshared span.
/// Shared parts that chain in both operands are fused.
pub fn intersect(x: &[Iter], y: &[Iter]) -> Result<Vec<Part>> {
    let size: u64 = x.iter().map(Iter::extent).product();
    let (wx, wy) = (weighted(x)?, weighted(y)?);
    let mut divisors: Vec<u64> = (1..)
        .take_while(|d: &u64| d.saturating_mul(*d) <= size)
        .filter(|d| size.is_multiple_of(*d))
        .flat_map(|d| [d, size / d])
        .collect();
    divisors.sort_unstable();
    divisors.dedup();
    let mut parts: Vec<Part> = Vec::new(); // inner to outer
    let mut lo = 1;
    while lo < size {
        let Some(&hi) = divisors
            .iter()
            .find(|&&d| d > lo && d.is_multiple_of(lo) && splits_at(&wx, d) && splits_at(&wy, d))
        else {
            break;
        };
        let pair = match (within(&wx, lo, hi)?, within(&wy, lo, hi)?) {
            (Some(a), Some(b)) => Some((a, b)),
            _ => None,
        };
        let chains = |inner: &Iter, outer: &Iter| {
            inner.axis() == outer.axis()
                && inner.stride().checked_mul(inner.extent() as i64) == Some(outer.stride())
        };
        if let (
            Some((a, b)),
            Some(Part {
                pair: Some((ia, ib)),
                ..
            }),
        ) = (&pair, parts.last())
        {
            if chains(ia, a) && chains(ib, b) {
                let e = ia.extent() * a.extent();
                let err = || crate::error::layout("fusing iters");
                let na = Iter::new(e, ia.stride(), *ia.axis()).map_err(err())?;
                let nb = Iter::new(e, ib.stride(), *ib.axis()).map_err(err())?;
                if let Some(last) = parts.last_mut() {
                    last.extent = e;
                    last.pair = Some((na, nb));
                }
                lo = hi;
                continue;
            }
        }
        parts.push(Part {
            weight: lo,
            extent: hi / lo,
            pair,
        });
        lo = hi;
    }
    parts.reverse();
    Ok(parts)
}

/// The largest divisor of `e` that is at most `limit`.
pub fn largest_divisor(e: u64, limit: u64) -> u64 {
    (1..=limit.min(e))
        .rev()
        .find(|d| e.is_multiple_of(*d))
        .unwrap_or(1)
}

/// On the partition axis (a chain of them starts at stride 1).
fn consecutive_partitions(i: &Iter) -> bool {
    i.axis().name() == "P" && i.stride() >= 1
}

fn free_run(i: &Iter) -> bool {
    i.axis().name() == "F" && i.stride() >= 1
}

type Rule = fn(&Iter) -> bool;

/// The chain from part `start` (among those `ok` accepts), within `limit`: `(index, taken extent)`
/// pairs, position 1 first.
fn chain(parts: &[Part], ok: &[bool], start: usize, limit: u64) -> Vec<(usize, u64)> {
    let Some((a0, b0)) = &parts[start].pair else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut r: u64 = 1;
    let mut next = Some(start);
    while let Some(j) = next {
        let e = parts[j].extent;
        let fits = r.checked_mul(e).is_some_and(|t| t <= limit);
        let d = if fits {
            e
        } else {
            largest_divisor(e, limit / r)
        };
        if d > 1 {
            out.push((j, d));
        }
        if !fits {
            break;
        }
        r *= e;
        let want = |s: i64| s.checked_mul(r as i64);
        next = (0..parts.len()).find(|&l| {
            let Some((a, b)) = &parts[l].pair else {
                return false;
            };
            ok[l]
                && out.iter().all(|(x, _)| *x != l)
                && a.axis() == a0.axis()
                && b.axis() == b0.axis()
                && Some(a.stride()) == want(a0.stride())
                && Some(b.stride()) == want(b0.stride())
        });
    }
    out
}

/// One dimension: intersect, keep the sub-iters both rules accept, take the longest chain.
fn dim(
    name: &'static str,
    (first, second): (&str, &str),
    (x, y): (&[Iter], &[Iter]),
    (rx, ry): (Rule, Rule),
    need: &str,
    limit: u64,
) -> Result<std::result::Result<DimPlan, String>> {
    let size: u64 = x.iter().map(Iter::extent).product();
    let joint = intersect(x, y)?;
    if size == 1 {
        // A dimension of one index: the instruction's extent is 1, no loop.
        return Ok(Ok(DimPlan {
            name,
            size,
            tile: 1,
            chain: Vec::new(),
            loops: Vec::new(),
            joint,
        }));
    }
    let ok: Vec<bool> = joint
        .iter()
        .map(|p| p.pair.as_ref().is_some_and(|(a, b)| rx(a) && ry(b)))
        .collect();
    let mut best: Option<(u64, Vec<(usize, u64)>)> = None;
    for start in (0..joint.len()).rev().filter(|&j| ok[j]) {
        let Some((a, b)) = &joint[start].pair else {
            continue;
        };
        // A partition run starts at stride 1.
        if (a.axis().name() == "P" && a.stride() != 1)
            || (b.axis().name() == "P" && b.stride() != 1)
        {
            continue;
        }
        let c = chain(&joint, &ok, start, limit);
        let t: u64 = c.iter().map(|(_, d)| d).product();
        if best.as_ref().is_none_or(|(bt, _)| t > *bt) {
            best = Some((t, c));
        }
    }
    let Some((tile, picked)) = best.filter(|(_, c)| !c.is_empty()) else {
        let shared = if joint.iter().all(|p| p.pair.is_none()) && size > 1 {
            " (they share no digit of its index)"
        } else {
            ""
        };
        return Ok(Err(format!(
            "{name} is not {need}: {first}'s {name} is {}, {second}'s is {}{shared}",
            show(x),
            show(y)
        )));
    };
    let mut loops = Vec::new();
    for (j, p) in joint.iter().enumerate() {
        let taken = picked.iter().find(|(l, _)| *l == j).map_or(1, |(_, d)| *d);
        if p.extent / taken > 1 {
            let w = p
                .weight
                .checked_mul(taken)
                .ok_or_else(|| overflow("computing a loop weight"))?;
            loops.push((p.extent / taken, w));
        }
    }
    let chain = picked
        .iter()
        .filter_map(|&(j, d)| joint[j].pair.as_ref().map(|p| (p, d)))
        .map(|((a, b), d)| {
            let err = || crate::error::layout("a tile iter");
            Ok((
                Iter::new(d, a.stride(), *a.axis()).map_err(err())?,
                Iter::new(d, b.stride(), *b.axis()).map_err(err())?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Ok(DimPlan {
        name,
        size,
        tile,
        chain,
        loops,
        joint,
    }))
}

/// Appendix H's dispatch of `c += a·b` (`a: [M, K]`, `b: [K, N]`, `c: [M, N]`) onto TensorE: the
/// instruction shape and loop nest, or why there is none.
pub fn plan(c: &Tensor, a: &Tensor, b: &Tensor) -> Result<std::result::Result<Plan, String>> {
    for (role, t, want) in [
        ("A", a, Space::Sbuf),
        ("B", b, Space::Sbuf),
        ("C", c, Space::Psum),
    ] {
        if t.space != want {
            return Ok(Err(format!(
                "{role} {} is in {} memory; TensorE reads A and B from SBUF and accumulates C in PSUM",
                t.name,
                space_name(t.space)
            )));
        }
        if !t.layout.replica().is_empty() {
            return Ok(Err(format!(
                "{role} {} has replicas ({}); a TensorE tile holds each element once",
                t.name, t.layout
            )));
        }
    }
    let mut groups = Vec::new();
    for (role, t) in [("A", a), ("B", b), ("C", c)] {
        match t.layout.group(&t.shape) {
            Ok(g) => groups.push(g),
            Err(e) => {
                return Ok(Err(format!(
                    "{role} {}'s layout {} does not group by {:?}: {e}",
                    t.name, t.layout, t.shape
                )))
            }
        }
    }
    let (ga, gb, gc) = (&groups[0], &groups[1], &groups[2]);
    let k = match dim(
        "K",
        ("A", "B"),
        (ga.block(1), gb.block(0)),
        (consecutive_partitions, consecutive_partitions),
        "on the partition axis (stride 1) of both A and B",
        MAX_K,
    )? {
        Ok(d) => d,
        Err(why) => return Ok(Err(why)),
    };
    let m = match dim(
        "M",
        ("A", "C"),
        (ga.block(0), gc.block(0)),
        (free_run, consecutive_partitions),
        "on the free axis of A (a positive stride) and the partition axis (stride 1) of C",
        MAX_M,
    )? {
        Ok(d) => d,
        Err(why) => return Ok(Err(why)),
    };
    let n = match dim(
        "N",
        ("B", "C"),
        (gb.block(1), gc.block(1)),
        (free_run, free_run),
        "on the free axis (a positive stride) of both B and C",
        MAX_N,
    )? {
        Ok(d) => d,
        Err(why) => return Ok(Err(why)),
    };
    Ok(Ok(Plan { m, n, k }))
}
