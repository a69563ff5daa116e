//! Tiling (Kronecker product), its inverses, and the direct sum.
//!
//! All three interleave, dimension by dimension, a block of an *outer* layout with a block of an *inner*
//! one. Tiling scales the outer strides by the inner layout's span `σ` so tiles do not overlap; the direct
//! sum does not.

use crate::axis::Axis;
use crate::coord::Coord;
use crate::error::{overflow, LayoutError, Result};
use crate::group::Grouped;
use crate::iter::Iter;
use crate::layout::Layout;

/// Per-axis scale factors (axes not listed scale by 1).
type Scale = Vec<(Axis, i64)>;

fn factor(scale: &Scale, axis: &Axis) -> i64 {
    scale.iter().find(|(a, _)| a == axis).map_or(1, |(_, s)| *s)
}

fn scale_iter(it: &Iter, scale: &Scale) -> Result<Iter> {
    let s = it
        .stride()
        .checked_mul(factor(scale, it.axis()))
        .ok_or_else(|| overflow("scaling strides by a span"))?;
    Ok(it.with_stride(s))
}

/// `it` with its stride divided by the scale, if it divides exactly.
fn unscale_iter(it: &Iter, scale: &Scale) -> Option<Iter> {
    let f = factor(scale, it.axis());
    (it.stride() % f == 0).then(|| it.with_stride(it.stride() / f))
}

fn check_rank(a: &[u64], b: &[u64], what: &str) -> Result<()> {
    if a.len() != b.len() {
        return Err(LayoutError::RankMismatch(format!(
            "{what}: shapes {a:?} and {b:?} have different ranks"
        )));
    }
    Ok(())
}

/// Elementwise product of two shapes (checked).
fn shape_product(a: &[u64], b: &[u64]) -> Result<Vec<u64>> {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            x.checked_mul(*y)
                .ok_or_else(|| overflow("multiplying shapes"))
        })
        .collect()
}

/// Per dimension: the outer block then the inner block.
fn interleave(outer: &Grouped, inner: &Grouped) -> Vec<Iter> {
    let mut shard = Vec::with_capacity(outer.layout.shard().len() + inner.layout.shard().len());
    for i in 0..outer.blocks.len() {
        shard.extend_from_slice(outer.block(i));
        shard.extend_from_slice(inner.block(i));
    }
    shard
}

/// The shape `(S_0·T_0, S_1·T_1, ...)` interleaved as `(S_0, T_0, S_1, T_1, ...)`.
fn interleaved(outer: &[u64], inner: &[u64]) -> Vec<u64> {
    outer
        .iter()
        .zip(inner)
        .flat_map(|(o, i)| [*o, *i])
        .collect()
}

impl Layout {
    /// `tile(A, B, S_A, S_B)`, the Kronecker product with `self = A` inner and `outer = B` outer.
    ///
    /// Law: with `σ = span(A)` per axis, the result admits `(S_A,i·S_B,i)_i` and
    /// `T(x) = A(x mod S_A) + σ⊙B(x div S_A)` holds set-wise. Construction: per dimension the block `B_i`
    /// with strides scaled by `σ`, then the block `A_i`; `R = R_A ∪ σ⊙R_B`; `O = O_A + σ⊙O_B`.
    ///
    /// ```
    /// # use axe_layout::Layout;
    /// // A 2×2 row-major tile, repeated over a 2×3 row-major grid of tiles: a 4×6 block layout.
    /// let a = Layout::row_major(&[2, 2])?;
    /// let b = Layout::row_major(&[2, 3])?;
    /// let (t, shape) = a.tile(&b, &[2, 2], &[2, 3])?;
    /// assert_eq!(shape, vec![4, 6]);
    /// assert_eq!(t.to_string(), "S[(2,2,3,2):(12,2,4,1)]");
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn tile(
        &self,
        outer: &Layout,
        inner_shape: &[u64],
        outer_shape: &[u64],
    ) -> Result<(Layout, Vec<u64>)> {
        check_rank(inner_shape, outer_shape, "tile")?;
        // Appendix F.3: tiling is the direct sum with the outer layout scaled by span(A).
        outer
            .scaled(&self.span_factor()?)?
            .direct_sum(self, outer_shape, inner_shape)
    }

    /// Every stride (shard and replica) and the offset multiplied by a per-axis factor.
    fn scaled(&self, scale: &Scale) -> Result<Layout> {
        let shard = self
            .shard()
            .iter()
            .map(|it| scale_iter(it, scale))
            .collect::<Result<_>>()?;
        let replica = self
            .replica()
            .iter()
            .map(|it| scale_iter(it, scale))
            .collect::<Result<_>>()?;
        Layout::new(shard, replica, self.offset().scaled(|a| factor(scale, a))?)
    }

    /// `direct_sum(A, B, S_A, S_B)` (paper Appendix F), `self = A` outer and `inner = B`: tiling without the
    /// span scaling.
    ///
    /// Law: the result admits `(S_A,i·S_B,i)_i` and `(A⊕B)(x) = A(x div S_B) + B(x mod S_B)` set-wise.
    /// Construction: per dimension the block `A_i` then the block `B_i`; `R = R_A ∪ R_B`; `O = O_A + O_B`.
    ///
    /// ```
    /// let a: axe_layout::Layout = "S[(2,2):(8,2)]".parse()?;
    /// let b: axe_layout::Layout = "S[(2,2):(4,1)]".parse()?;
    /// let (s, shape) = a.direct_sum(&b, &[2, 2], &[2, 2])?;
    /// assert_eq!(shape, vec![4, 4]);
    /// assert_eq!(s.canonicalize()?.to_string(), "S[16:1]");
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn direct_sum(
        &self,
        inner: &Layout,
        outer_shape: &[u64],
        inner_shape: &[u64],
    ) -> Result<(Layout, Vec<u64>)> {
        check_rank(outer_shape, inner_shape, "direct_sum")?;
        let (ga, gb) = (self.group(outer_shape)?, inner.group(inner_shape)?);
        let shard = interleave(&ga, &gb);
        let replica = self
            .replica()
            .iter()
            .chain(inner.replica())
            .cloned()
            .collect();
        let offset = self.offset().checked_add(inner.offset())?;
        Ok((
            Layout::new(shard, replica, offset)?,
            shape_product(outer_shape, inner_shape)?,
        ))
    }

    /// `tile_of(T, A, S_T, S_A) → B`: the outer layout `B` (admitting `S_T / S_A`) with `tile(A, B) ≡ T`, or
    /// [`LayoutError::NoTile`].
    ///
    /// Law: if it returns `B` then `tile(A, B, S_A, S_T/S_A) ≡ T` (checked before returning). Without
    /// replicas it is complete: `T_i(y·S_A,i + z) = σ⊙B_i(y) + A_i(z)` forces `B_i`, which is read off the
    /// canonical `T` grouped by `(S_B,0, S_A,0, S_B,1, S_A,1, ...)`. Replicas of `T` not explained by `A`
    /// are divided by `σ` and given to `B` (paper Appendix D).
    ///
    /// ```
    /// # use axe_layout::Layout;
    /// let t: Layout = "S[(2,2,3,2):(12,2,4,1)]".parse()?;
    /// let a = Layout::row_major(&[2, 2])?;
    /// let (b, shape) = t.tile_of(&a, &[4, 6], &[2, 2])?;
    /// assert_eq!((b.to_string(), shape), ("S[(2,3):(3,1)]".to_string(), vec![2, 3]));
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn tile_of(
        &self,
        inner: &Layout,
        tiled_shape: &[u64],
        inner_shape: &[u64],
    ) -> Result<(Layout, Vec<u64>)> {
        let (outer_shape, t, a, g) = self.split_tiled(inner, tiled_shape, inner_shape, false)?;
        let no = |why: String| LayoutError::NoTile(format!("no B with tile(A, B) = T: {why}"));
        let sigma = a.span_factor()?;
        let mut shard = Vec::with_capacity(t.shard().len());
        for i in 0..outer_shape.len() {
            for it in g.block(2 * i) {
                shard.push(unscale_iter(it, &sigma).ok_or_else(|| {
                    no(format!(
                        "T's outer iter {it:?} in dimension {i} is not a multiple of span(A)"
                    ))
                })?);
            }
        }
        // Replicas: take A's out of T's (splitting merged chains), the rest belongs to B, scaled down.
        let mut rest: Vec<Iter> = t.replica().to_vec();
        for it in a.replica() {
            let k = rest
                .iter()
                .position(|r| {
                    r.axis() == it.axis()
                        && r.stride() == it.stride()
                        && r.extent() % it.extent() == 0
                })
                .ok_or_else(|| no(format!("A's replica {it:?} is not among T's replicas")))?;
            let r = rest.remove(k);
            if r.extent() > it.extent() {
                let stride = it
                    .stride()
                    .checked_mul(
                        i64::try_from(it.extent()).map_err(|_| overflow("splitting a replica"))?,
                    )
                    .ok_or_else(|| overflow("splitting a replica"))?;
                rest.push(Iter::new(r.extent() / it.extent(), stride, *r.axis())?);
            }
        }
        let replica = rest
            .iter()
            .map(|it| {
                unscale_iter(it, &sigma)
                    .ok_or_else(|| no(format!("T's replica {it:?} is not a multiple of span(A)")))
            })
            .collect::<Result<Vec<_>>>()?;
        let diff = t.offset().checked_sub(a.offset())?;
        let offset = divide_coord(&diff, &sigma)
            .ok_or_else(|| no(format!("the offset {diff} is not a multiple of span(A)")))?;
        let b = Layout::new(shard, replica, offset)?;
        // Re-tile and compare. σ⊙B_i is exactly T's outer block i (the division above was exact), so the
        // tiled shard is T's outer blocks interleaved with A's blocks; R and O as in `tile`.
        let ga = a
            .group(inner_shape)
            .map_err(|e| no(format!("A cannot be grouped: {e}")))?;
        let mut tiled = Vec::with_capacity(t.shard().len() + a.shard().len());
        for i in 0..outer_shape.len() {
            tiled.extend_from_slice(g.block(2 * i));
            tiled.extend_from_slice(ga.block(i));
        }
        let mut tiled_replica = a.replica().to_vec();
        for it in b.replica() {
            tiled_replica.push(scale_iter(it, &sigma)?);
        }
        let tiled_offset = a
            .offset()
            .checked_add(&b.offset().scaled(|x| factor(&sigma, x))?)?;
        let check = Layout::new(tiled, tiled_replica, tiled_offset)?;
        if !check.equivalent(&t)? {
            return Err(no(format!("the only candidate, {b}, does not tile to T")));
        }
        Ok((b, outer_shape))
    }

    /// `tile_of_outer(T, B, S_T, S_B) → A`: the inner layout `A` (admitting `S_T / S_B`) with
    /// `tile(A, B) ≡ T`, or [`LayoutError::NoTile`].
    ///
    /// Law: if it returns `A` then `tile(A, B, S_T/S_B, S_B) ≡ T` (checked before returning). `A`'s shard is
    /// forced (`A_i(z) = T_i(z)`); `A`'s replicas are searched among `T`'s replica iters (whole, split, or
    /// left to `B`), and `O_A = O_T − σ⊙O_B`.
    ///
    /// ```
    /// # use axe_layout::Layout;
    /// let t: Layout = "S[(2,2,3,2):(12,2,4,1)]".parse()?;
    /// let b = Layout::row_major(&[2, 3])?;
    /// let (a, shape) = t.tile_of_outer(&b, &[4, 6], &[2, 3])?;
    /// assert_eq!((a.to_string(), shape), ("S[(2,2):(2,1)]".to_string(), vec![2, 2]));
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn tile_of_outer(
        &self,
        outer: &Layout,
        tiled_shape: &[u64],
        outer_shape: &[u64],
    ) -> Result<(Layout, Vec<u64>)> {
        let (inner_shape, t, b, g) = self.split_tiled(outer, tiled_shape, outer_shape, true)?;
        let no = |why: String| LayoutError::NoTile(format!("no A with tile(A, B) = T: {why}"));
        let shard: Vec<Iter> = (0..inner_shape.len())
            .flat_map(|i| g.block(2 * i + 1).to_vec())
            .collect();
        // Each replica iter of T goes to A whole, to B whole, or is split (inner part to A).
        let mut options: Vec<Vec<Option<Iter>>> = Vec::new();
        for it in t.replica() {
            let mut choices = vec![None, Some(*it)];
            for f in 2..it.extent() {
                if it.extent() % f == 0 {
                    choices.push(Some(it.with_extent(f)));
                }
            }
            options.push(choices);
        }
        let total: u64 = options
            .iter()
            .map(|c| c.len() as u64)
            .try_fold(1u64, |p, n| p.checked_mul(n))
            .unwrap_or(u64::MAX);
        if total > 4096 {
            return Err(LayoutError::TooLarge(format!(
                "searching A's replicas among {total} candidates (limit 4096)"
            )));
        }
        for mut pick in 0..total {
            let mut replica = Vec::new();
            for choices in &options {
                let k = (pick % choices.len() as u64) as usize;
                pick /= choices.len() as u64;
                replica.extend(choices[k]);
            }
            let candidate = Layout::new(shard.clone(), replica.clone(), Coord::zero())?;
            let sigma = candidate.span_factor()?;
            let offset = t
                .offset()
                .checked_sub(&b.offset().scaled(|a| factor(&sigma, a))?)?;
            let a = Layout::new(shard.clone(), replica, offset)?;
            let (check, _) = a.tile(&b, &inner_shape, outer_shape).map_err(|e| match e {
                LayoutError::NoGrouping { .. } => no(format!("B cannot be grouped: {e}")),
                e => e,
            })?;
            if check.equivalent(&t)? {
                return Ok((a, inner_shape));
            }
        }
        Err(no("no candidate for A tiles to T".to_string()))
    }
}

impl Layout {
    /// The common first step of `tile_of` and `tile_of_outer`: given `T = self` and one factor `part` with
    /// its shape, returns the other factor's shape, canonical `T` and `part`, and canonical `T` grouped by
    /// the interleaved shape `(S_B,0, S_A,0, S_B,1, S_A,1, ...)` (even blocks outer, odd blocks inner).
    fn split_tiled(
        &self,
        part: &Layout,
        tiled_shape: &[u64],
        part_shape: &[u64],
        part_is_outer: bool,
    ) -> Result<(Vec<u64>, Layout, Layout, Grouped)> {
        let (name, unknown) = if part_is_outer {
            ("S_B", "A")
        } else {
            ("S_A", "B")
        };
        let other_shape = quotient_shape(tiled_shape, part_shape, name)?;
        self.check_admits(tiled_shape)?;
        part.check_admits(part_shape)?;
        let t = self.canonicalize()?;
        let p = part.canonicalize()?;
        let (outer_shape, inner_shape) = if part_is_outer {
            (part_shape, &other_shape[..])
        } else {
            (&other_shape[..], part_shape)
        };
        let g = t.group(&interleaved(outer_shape, inner_shape)).map_err(|e| {
            LayoutError::NoTile(format!(
                "no {unknown} with tile(A, B) = T: T does not split into outer and inner blocks ({e})"
            ))
        })?;
        Ok((other_shape, t, p, g))
    }
}

/// `tiled / part` elementwise, when every dimension divides.
fn quotient_shape(tiled: &[u64], part: &[u64], name: &str) -> Result<Vec<u64>> {
    check_rank(tiled, part, "tile_of")?;
    tiled
        .iter()
        .zip(part)
        .enumerate()
        .map(|(i, (&t, &p))| {
            if p == 0 || t % p != 0 {
                Err(LayoutError::NoTile(format!(
                    "{name} {part:?} does not divide S_T {tiled:?} in dimension {i}"
                )))
            } else {
                Ok(t / p)
            }
        })
        .collect()
}

fn divide_coord(c: &Coord, scale: &Scale) -> Option<Coord> {
    let mut out = Coord::zero();
    for (a, v) in c.components() {
        let f = factor(scale, a);
        if v % f != 0 {
            return None;
        }
        out.add_on(a, v / f).ok()?;
    }
    Some(out)
}
