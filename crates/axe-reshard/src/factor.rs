//! Long dimensions of a shard indexed as factors, so that a shard's offset tables cost the sum of the
//! factors rather than one entry per index.
//!
//! A reshard only ever addresses boxes of a shard whose bounds along dimension `i` are region bounds of
//! the two shardings and of the plan's pieces. Where all of them (and the dimension's extent) are
//! multiples of a grain `g`, the dimension's index `x` in a shard of padded extent `P` can be written
//! row-major as `(x div g, x mod g)` — factors `(P/g, g)`, and `g` itself cut near its square root when it
//! is long — and every box the reshard addresses is still a box over the factors: `s..e` becomes
//! `(s/g..e/g, 0..g/h, 0..h)`. The same elements lie at the same offsets (a row-major split of one index
//! changes no element's linear position), so the bytes a reshard moves are unchanged while the tables
//! cost `P/g + g/h + h` entries instead of `P`. Dimensions shorter than
//! [`axe_relayout::split::SPLIT_MIN`] stay whole (their tables are small), as `axe-relayout` does for
//! its own tensors.

use std::ops::Range;

use axe_relayout::split::{FACTOR_MAX, SPLIT_MIN};
use axe_shard::{DeviceRegion, Plan};

use crate::exec_error::ExecResult;
use crate::placement::{DeviceBuffer, MemoryLayout, Placement};

/// The largest common divisor of `a` and `b` (`gcd(0, b) = b`).
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Per dimension, the grain every bound seen so far is a multiple of: starts as the array's extents,
/// then each box and shape is folded in with [`Grains::bounds`] and [`Grains::shape`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Grains {
    dims: Vec<u64>,
    grain: Vec<u64>,
}

impl Grains {
    /// The grains of an array of extents `dims` before any bound is seen: the extents themselves.
    pub(crate) fn of(dims: &[u64]) -> Grains {
        Grains {
            dims: dims.to_vec(),
            grain: dims.to_vec(),
        }
    }

    /// No dimension split (every grain 1).
    pub(crate) fn whole(dims: &[u64]) -> Grains {
        Grains {
            dims: dims.to_vec(),
            grain: vec![1; dims.len()],
        }
    }

    /// Folds in a box's bounds (a box of another rank leaves the grains unchanged: it fails its own
    /// checks elsewhere).
    pub(crate) fn bounds(&mut self, region: &[Range<u64>]) {
        if region.len() == self.grain.len() {
            for (g, r) in self.grain.iter_mut().zip(region) {
                *g = gcd(gcd(*g, r.start), r.end);
            }
        }
    }

    /// Folds in a shape's extents (a shard's local and padded shapes).
    pub(crate) fn shape(&mut self, shape: &[u64]) {
        if shape.len() == self.grain.len() {
            for (g, &d) in self.grain.iter_mut().zip(shape) {
                *g = gcd(*g, d);
            }
        }
    }

    /// The factors a dimension of padded extent `p` is indexed by, outermost first: `[p]` where the
    /// dimension stays whole, else `[p/g, g]` or `[p/g, g/h, h]` with `h` the divisor of a long grain `g`
    /// nearest below its square root (without the outer factor where `g` is the whole extent). Every buffer built from the same grains has the same inner
    /// factors, so a box has the same factored extents in each.
    pub(crate) fn factors(&self, i: usize, p: u64) -> Vec<u64> {
        let (Some(&d), Some(&g)) = (self.dims.get(i), self.grain.get(i)) else {
            return vec![p];
        };
        if d < SPLIT_MIN || g < 2 || !p.is_multiple_of(g) {
            return vec![p];
        }
        let inner = match (g > FACTOR_MAX).then(|| near_root(g)).flatten() {
            Some(h) => vec![g / h, h],
            None => vec![g],
        };
        if g == d {
            // Every shard holds the whole dimension (or none of it): no outer factor.
            return if p == d { inner } else { vec![p] };
        }
        let mut out = vec![p / g];
        out.extend(inner);
        out
    }

    /// Whether some dimension is split.
    pub(crate) fn splits(&self) -> bool {
        (0..self.dims.len()).any(|i| self.factors(i, self.grain[i]).len() > 1)
    }
}

/// The divisor of `g` nearest below its square root and above 1, looking at no more than 2^16
/// candidates (`None` when none is found, as for a prime).
fn near_root(g: u64) -> Option<u64> {
    (2..=g.isqrt())
        .rev()
        .take(1 << 16)
        .find(|&h| g.is_multiple_of(h))
}

/// The factors a row-major shard's dimension of padded extent `p` is indexed by when no grain splits it
/// (see [`crate::boxes`]): `[p/h, h]` with `h` the divisor of `p` nearest below its square root, the
/// outer factor cut again where it is long; `[p]` for a short dimension or one without such a divisor
/// (a prime extent).
pub(crate) fn own_factors(p: u64) -> Vec<u64> {
    if p < SPLIT_MIN {
        return vec![p];
    }
    let Some(h) = near_root(p) else {
        return vec![p];
    };
    let outer = p / h;
    match (outer > FACTOR_MAX).then(|| near_root(outer)).flatten() {
        Some(k) => vec![outer / k, k, h],
        None => vec![outer, h],
    }
}

/// The box `local` (local indices, one range per dimension) over the factors `split` (per dimension,
/// outermost first): `s..e` becomes `(s/c..e/c, 0..f_2, ..)` with `c` the product of the inner
/// factors. `None` where a bound is not a multiple of `c` or the box leaves the factors' span.
pub(crate) fn split_box(split: &[Vec<u64>], local: &[Range<u64>]) -> Option<Vec<Range<u64>>> {
    if split.len() != local.len() {
        return None;
    }
    let mut out = Vec::with_capacity(local.len());
    for (f, r) in split.iter().zip(local) {
        let (outer, inner) = f.split_first()?;
        let c = inner.iter().try_fold(1u64, |a, &x| a.checked_mul(x))?;
        if c == 0 || !r.start.is_multiple_of(c) || !r.end.is_multiple_of(c) {
            return None;
        }
        let (s, e) = (r.start / c, r.end / c);
        if s > e || e > *outer {
            return None;
        }
        out.push(s..e);
        out.extend(inner.iter().map(|&x| 0..x));
    }
    Some(out)
}

/// The extents of a shape over the factors `split`: the box `0..shape` split by [`split_box`].
pub(crate) fn split_shape(split: &[Vec<u64>], shape: &[u64]) -> Option<Vec<u64>> {
    let whole: Vec<Range<u64>> = shape.iter().map(|&d| 0..d).collect();
    Some(
        split_box(split, &whole)?
            .iter()
            .map(|r| r.end - r.start)
            .collect(),
    )
}

/// This device's source and destination shards, their long dimensions indexed as factors that every
/// box this device addresses follows (see [`crate::factor`]): the grains divide the array's extents,
/// the device's source and destination regions and shapes, and the plan's pieces it sends, receives or
/// keeps (messages are row-major bytes, whatever either side's factors). Where one side's layout cannot
/// follow the factors, both stay whole (a box must have the same extents on both sides of a copy).
pub(crate) fn buffers(
    src: &Placement,
    dst: &Placement,
    plan: &Plan,
    mine_src: &DeviceRegion,
    mine_dst: &DeviceRegion,
) -> ExecResult<(DeviceBuffer, DeviceBuffer)> {
    let mut g = Grains::of(src.sharding.dims());
    for r in [mine_src, mine_dst] {
        g.bounds(&r.region);
        g.shape(&r.local_shape);
        g.shape(&r.padded_shape);
    }
    let me = mine_src.device;
    for t in plan.transfers.iter().filter(|t| t.from == me || t.to == me) {
        g.bounds(&t.region);
    }
    for l in plan.locals.iter().filter(|l| l.device == me) {
        g.bounds(&l.region);
    }
    if src.layout == MemoryLayout::RowMajor && dst.layout == MemoryLayout::RowMajor {
        // Both row-major: every copy goes as runs; the factors only keep the tables short.
        return Ok((
            src.buffer_of(mine_src.clone(), &g, true)?,
            dst.buffer_of(mine_dst.clone(), &g, true)?,
        ));
    }
    if g.splits() {
        let sb = src.buffer_of(mine_src.clone(), &g, false)?;
        let db = dst.buffer_of(mine_dst.clone(), &g, false)?;
        let split = |b: &DeviceBuffer| b.split.iter().map(|f| f.len() > 1).collect::<Vec<_>>();
        if split(&sb) == split(&db) {
            return Ok((sb, db));
        }
    }
    let whole = Grains::whole(src.sharding.dims());
    Ok((
        src.buffer_of(mine_src.clone(), &whole, false)?,
        dst.buffer_of(mine_dst.clone(), &whole, false)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grains_divide_every_bound() {
        let mut g = Grains::of(&[1 << 24, 12]);
        g.bounds(&[0..1 << 23, 0..12]);
        g.bounds(&[1 << 23..1 << 24, 4..8]);
        g.shape(&[1 << 23, 4]);
        assert_eq!(g.grain, [1 << 23, 4]);
        // The long dimension: two rows of a 2^23 grain, the grain cut near its square root; the short
        // one stays whole.
        assert_eq!(g.factors(0, 1 << 23), [1, 4096, 2048]);
        assert_eq!(g.factors(0, 1 << 24), [2, 4096, 2048]);
        assert_eq!(g.factors(1, 4), [4]);
        assert!(g.splits());
        // A bound off the grain shrinks it; a grain of 1 leaves the dimension whole.
        g.bounds(&[1..2, 0..12]);
        assert_eq!(g.factors(0, 1 << 23), [1 << 23]);
        assert!(!g.splits());
        assert!(!Grains::whole(&[1 << 24]).splits());
    }

    #[test]
    fn a_reshard_of_a_long_array_tables_its_factors() {
        use axe_shard::{notation::jax::parse_jax, plan, CostModel, Mesh};
        let mesh = Mesh::new(&[("x", 2)]).unwrap();
        let dims = [1u64 << 24];
        let s = parse_jax("P('x')", &mesh, &dims).unwrap();
        let d = parse_jax("P()", &mesh, &dims).unwrap();
        let p = plan(&mesh, &s, &d, 4, &CostModel::default()).unwrap();
        let (sr, dr) = (s.regions(&mesh).unwrap(), d.regions(&mesh).unwrap());
        let t = axe_xla::PrimitiveType::F32;
        let rm = crate::MemoryLayout::RowMajor;
        let src = Placement::new(s, rm.clone(), t).unwrap();
        let dst = Placement::new(d, rm, t).unwrap();
        for me in 0..2 {
            let (sb, db) = buffers(&src, &dst, &p, &sr[me], &dr[me]).unwrap();
            for b in [&sb, &db] {
                let n: usize = b.layout.tables.iter().map(Vec::len).sum();
                assert!(n <= 1 << 13, "{n} table entries");
            }
            // The plan's pieces are boxes over the factors.
            for t in p.transfers.iter().filter(|t| t.from == me as u64) {
                let local = crate::check::localize(&t.region, &sb.region).unwrap();
                assert_eq!(sb.sub(&local).unwrap().count(), 1 << 23);
            }
        }
    }

    /// For every device of a reshard between row-major shardings: its shards' tables hold at most
    /// `max_tables` entries, and each piece it sends, receives or keeps is at most one run per row of the
    /// piece's outer dims (its elements over its last extent), however the dims split.
    fn tables_and_runs(
        mesh: &[(&str, u64)],
        dims: &[u64],
        from: &str,
        to: &str,
        max_tables: usize,
    ) {
        use crate::boxes::Runs;
        use crate::check::localize;
        use axe_shard::{notation::jax::parse_jax, plan, CostModel, Mesh};
        let mesh = Mesh::new(mesh).unwrap();
        let s = parse_jax(from, &mesh, dims).unwrap();
        let d = parse_jax(to, &mesh, dims).unwrap();
        let p = plan(&mesh, &s, &d, 4, &CostModel::default()).unwrap();
        let (sr, dr) = (s.regions(&mesh).unwrap(), d.regions(&mesh).unwrap());
        let t = axe_xla::PrimitiveType::F32;
        let rm = crate::MemoryLayout::RowMajor;
        let src = Placement::new(s, rm.clone(), t).unwrap();
        let dst = Placement::new(d, rm, t).unwrap();
        for me in 0..sr.len() {
            let (sb, db) = buffers(&src, &dst, &p, &sr[me], &dr[me]).unwrap();
            for b in [&sb, &db] {
                assert!(b.rows);
                let n: usize = b.layout.tables.iter().map(Vec::len).sum();
                assert!(n <= max_tables, "device {me}: {n} table entries");
            }
            let me = me as u64;
            let pieces = p
                .transfers
                .iter()
                .filter(|t| t.from == me)
                .map(|t| (&sb, &t.region))
                .chain(
                    p.transfers
                        .iter()
                        .filter(|t| t.to == me)
                        .map(|t| (&db, &t.region)),
                )
                .chain(
                    p.locals
                        .iter()
                        .filter(|l| l.device == me)
                        .map(|l| (&sb, &l.region)),
                );
            for (b, region) in pieces {
                let local = localize(region, &b.region).unwrap();
                let runs = Runs::of(&b.region.padded_shape, &local).unwrap();
                let rows: u64 = local[..local.len().saturating_sub(1)]
                    .iter()
                    .map(|r| r.end - r.start)
                    .product();
                assert!(
                    runs.count() <= rows,
                    "{} runs for {rows} rows",
                    runs.count()
                );
            }
        }
    }

    #[test]
    fn an_uneven_reshard_tables_no_element() {
        // 2^24 - 1 elements over 2 devices: shards of 2^23 and 2^23 - 1 (padded), gathered whole.
        tables_and_runs(&[("x", 2)], &[(1 << 24) - 1], "P('x')", "P()", 1 << 14);
        tables_and_runs(&[("x", 2)], &[(1 << 24) - 1], "P()", "P('x')", 1 << 14);
        // A prime length, split three ways.
        tables_and_runs(
            &[("x", 3)],
            &[1_000_003],
            "P('x')",
            "P()",
            1_000_003 + (1 << 14),
        );
        // Odd dims on both axes of a 2×2 mesh, and a 3-D array with a long odd last dim.
        tables_and_runs(
            &[("x", 2), ("y", 2)],
            &[4097, 4095],
            "P('x', 'y')",
            "P()",
            1 << 14,
        );
        tables_and_runs(
            &[("x", 2), ("y", 2)],
            &[4097, 4095],
            "P('y', 'x')",
            "P('x')",
            1 << 14,
        );
        tables_and_runs(
            &[("x", 2), ("y", 2)],
            &[3, 5, 200_001],
            "P('x', None, 'y')",
            "P(None, 'y', 'x')",
            1 << 14,
        );
    }

    #[test]
    fn a_prime_grain_is_one_factor() {
        let mut g = Grains::of(&[2 * 1_000_003]);
        g.shape(&[1_000_003]);
        assert_eq!(g.factors(0, 1_000_003), [1, 1_000_003]);
    }

    #[test]
    fn boxes_over_factors() {
        let split = vec![vec![4, 8, 16], vec![3]];
        assert_eq!(
            split_box(&split, &[128..384, 1..2]),
            Some(vec![1..3, 0..8, 0..16, 1..2])
        );
        assert_eq!(split_box(&split, &[1..128, 0..3]), None);
        assert_eq!(split_box(&split, &[0..640, 0..3]), None);
        assert_eq!(split_shape(&split, &[256, 3]), Some(vec![2, 8, 16, 3]));
        // Row-major positions agree: index x of the dimension is (x/128, x/16 % 8, x % 16).
        let b = split_box(&split, &[256..384, 0..3]).unwrap_or_default();
        assert_eq!(b[0], 2..3);
    }
}
