//! Slicing: the layout of a rectangular sub-region.

use std::ops::Range;

use crate::axis::Axis;
use crate::coord::Coord;
use crate::error::{overflow, LayoutError, Result};
use crate::fit::{add_iters_at, fit};
use crate::iter::Iter;
use crate::layout::{flatten, product, unflatten, Layout, MAX_ENUMERATION};

impl Layout {
    /// `slice(L, S, region)`: the layout `L'` admitting `(n_i)` with `L'(x) = L(b + x)` for every `x` in the
    /// region `Π [b_i, b_i + n_i)`, or [`LayoutError::NoSlice`] when no layout has that map.
    ///
    /// Grouping by `S` makes the map separable, so each dimension is sliced on its own: peel the fastest
    /// digits that start at 0 and divide the length, then either the pivot digit does not wrap (one iter)
    /// or the remaining one-dimensional map is fitted exactly. `R` is kept and `O' = O + D(b)`.
    ///
    /// ```
    /// # use axe_layout::Layout;
    /// let l = Layout::row_major(&[8, 8])?;
    /// assert_eq!(l.slice(&[8, 8], &[2..6, 0..8])?.to_string(), "S[(4,8):(8,1)] + 16");
    /// assert_eq!(l.slice(&[8, 8], &[2..6, 1..3])?.to_string(), "S[(4,2):(8,1)] + 17");
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn slice(&self, shape: &[u64], region: &[Range<u64>]) -> Result<Layout> {
        self.check_admits(shape)?;
        if region.len() != shape.len() {
            return Err(LayoutError::RankMismatch(format!(
                "region has {} dimensions, shape has {}",
                region.len(),
                shape.len()
            )));
        }
        for (i, (r, &s)) in region.iter().zip(shape).enumerate() {
            if r.start >= r.end || r.end > s {
                return Err(LayoutError::BadRegion(format!(
                    "dimension {i}: [{}, {}) is empty or leaves [0, {s})",
                    r.start, r.end
                )));
            }
        }
        let begin: Vec<u64> = region.iter().map(|r| r.start).collect();
        let offset = self.base_at(flatten(&begin, shape)?)?;
        let shard = match self.group(shape) {
            Ok(g) => {
                let mut shard = Vec::with_capacity(g.layout.shard().len());
                for (i, r) in region.iter().enumerate() {
                    shard.extend(slice_block(g.block(i), r.start, r.end - r.start, i)?);
                }
                shard
            }
            Err(LayoutError::NoGrouping { .. }) => self.slice_flat(shape, region, &begin)?,
            Err(e) => return Err(e),
        };
        Layout::new(shard, self.replica().to_vec(), offset)
    }

    /// Exact fallback when `L` does not group by `S`: fit the whole region's map as one flat list.
    fn slice_flat(&self, shape: &[u64], region: &[Range<u64>], begin: &[u64]) -> Result<Vec<Iter>> {
        let lens: Vec<u64> = region.iter().map(|r| r.end - r.start).collect();
        let n =
            product(lens.iter().copied()).ok_or_else(|| overflow("computing the region size"))?;
        if n > MAX_ENUMERATION {
            return Err(LayoutError::TooLarge(format!(
                "the layout does not group by {shape:?}, and checking a region of {n} elements point by point \
                 exceeds the limit of {MAX_ENUMERATION}"
            )));
        }
        let axes = self.axes();
        let base = dense(&self.shard_at(flatten(begin, shape)?)?, &axes);
        let at = |x: u64| -> Result<Option<Vec<i64>>> {
            let local = unflatten(x, &lens)?;
            let global: Vec<u64> = local.iter().zip(begin).map(|(l, b)| l + b).collect();
            let mut out = vec![0; axes.len()];
            if add_iters_at(self.shard(), &axes, flatten(&global, shape)?, &mut out).is_none() {
                return Ok(None);
            }
            Ok(out
                .iter()
                .zip(&base)
                .map(|(v, b)| v.checked_sub(*b))
                .collect())
        };
        fit(n, &axes, at)?.ok_or_else(|| {
            LayoutError::NoSlice(format!(
                "the region {region:?} of shape {shape:?} is not described by any list of iters"
            ))
        })
    }
}

fn dense(c: &Coord, axes: &[Axis]) -> Vec<i64> {
    axes.iter().map(|a| c.get(a)).collect()
}

/// Slices one grouped block (iters with extents multiplying to the dimension) to `[b, b + n)`.
fn slice_block(block: &[Iter], b: u64, n: u64, dim: usize) -> Result<Vec<Iter>> {
    // Digits of b in the block's mixed radix, most major first.
    let mut digits = vec![0u64; block.len()];
    let mut rest = b;
    for (j, it) in block.iter().enumerate().rev() {
        digits[j] = rest % it.extent();
        rest /= it.extent();
    }
    // Peel the fastest digits that start at 0 and whose extent divides what is left.
    let mut peeled = 0;
    let mut remaining = n;
    let mut period: u64 = 1;
    for j in (0..block.len()).rev() {
        if remaining == 1 || digits[j] != 0 || !remaining.is_multiple_of(block[j].extent()) {
            break;
        }
        remaining /= block[j].extent();
        period *= block[j].extent();
        peeled += 1;
    }
    let tail = &block[block.len() - peeled..];
    if remaining == 1 {
        return Ok(tail.to_vec());
    }
    let pivot = block.len() - peeled - 1;
    let mut out = if digits[pivot] + remaining <= block[pivot].extent() {
        // No wrap: the pivot digit runs from its start without carrying.
        vec![block[pivot].with_extent(remaining)]
    } else if remaining > MAX_ENUMERATION {
        return Err(LayoutError::TooLarge(format!(
            "dimension {dim}: the elements [{b}, {}) carry across iters of block {block:?}, and checking \
             their {remaining} steps point by point exceeds the limit of {MAX_ENUMERATION}",
            b + n
        )));
    } else {
        let head = &block[..=pivot];
        let mut axes: Vec<Axis> = head.iter().map(|it| *it.axis()).collect();
        axes.sort();
        axes.dedup();
        let start = b / period;
        let mut base = vec![0; axes.len()];
        add_iters_at(head, &axes, start, &mut base)
            .ok_or_else(|| overflow("evaluating a block"))?;
        let at = |q: u64| -> Result<Option<Vec<i64>>> {
            let mut out = vec![0; axes.len()];
            if add_iters_at(head, &axes, start + q, &mut out).is_none() {
                return Ok(None);
            }
            Ok(out
                .iter()
                .zip(&base)
                .map(|(v, b)| v.checked_sub(*b))
                .collect())
        };
        fit(remaining, &axes, at)?.ok_or_else(|| {
            LayoutError::NoSlice(format!(
                "dimension {dim}: the elements [{b}, {}) of block {block:?} are not described by any list of iters",
                b + n
            ))
        })?
    };
    out.extend_from_slice(tail);
    Ok(out)
}
