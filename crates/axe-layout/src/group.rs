//! Grouping: viewing a layout's shard list as consecutive blocks, one per dimension of a shape.

use std::ops::Range;

use crate::error::{LayoutError, Result};
use crate::iter::Iter;
use crate::layout::{product, Layout};

/// A layout whose shard list is split into one block of consecutive iters per dimension of a shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grouped {
    /// The layout, with iters split as needed (same map as the input).
    pub layout: Layout,
    /// For dimension `i`, the range of shard iters forming its block; their extents multiply to `S_i`.
    pub blocks: Vec<Range<usize>>,
}

impl Grouped {
    /// The iters of dimension `i`'s block.
    pub fn block(&self, i: usize) -> &[Iter] {
        &self.layout.shard()[self.blocks[i].clone()]
    }

    /// The grouped shape `S`.
    pub fn shape(&self) -> Vec<u64> {
        (0..self.blocks.len())
            .map(|i| self.block(i).iter().map(Iter::extent).product())
            .collect()
    }
}

impl Layout {
    /// `group(L, S)`: splits or fuses the iters of the canonical `D` (never reordering) into consecutive
    /// blocks whose extent products are `S_1..S_m`, with the fewest iters of any grouping.
    ///
    /// Law: the result has the same map as `L`, and block `i`'s extents multiply to `S_i`, so
    /// `L(x) = Σ_i block_i(x_i) + R + O` for the row-major multi-index `x` over `S`.
    /// Split rule: `(e, s@a)` → `(e/f, f·s@a), (f, s@a)` for `f | e`. Greedy from the most major iter:
    /// if `e` divides the remaining block size take the whole iter; if the remaining size `r` divides `e`,
    /// split off `(r, (e/r)·s)` and close the block; otherwise no grouping exists.
    ///
    /// ```
    /// let l: axe_layout::Layout = "S[(3,5,7):(35,7,1)]".parse()?;
    /// let g = l.group(&[5, 21])?;
    /// assert_eq!(g.layout.to_string(), "S[(5,21):(21,1)]");
    /// assert_eq!(g.blocks, vec![0..1, 1..2]);
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn group(&self, shape: &[u64]) -> Result<Grouped> {
        self.check_admits(shape)?;
        let fail = |reason: String| LayoutError::NoGrouping {
            shape: shape.to_vec(),
            reason,
        };
        let canonical = crate::canonical::normalize_shard(self.shard());
        let mut source = canonical.iter().cloned();
        let mut current: Option<Iter> = source.next();
        let mut out: Vec<Iter> = Vec::with_capacity(canonical.len() + shape.len());
        let mut blocks = Vec::with_capacity(shape.len());
        for (dim, &target) in shape.iter().enumerate() {
            let start = out.len();
            let mut remaining = target;
            while remaining > 1 {
                let Some(it) = current.take() else {
                    return Err(fail(format!("ran out of iters in dimension {dim}")));
                };
                let e = it.extent();
                if remaining % e == 0 {
                    remaining /= e;
                    out.push(it);
                    current = source.next();
                } else if e % remaining == 0 {
                    let outer = e / remaining;
                    let stride = i64::try_from(outer)
                        .ok()
                        .and_then(|o| o.checked_mul(it.stride()))
                        .ok_or_else(|| fail(format!("splitting {it:?} overflows")))?;
                    out.push(Iter::new(remaining, stride, *it.axis())?);
                    current = Some(it.with_extent(outer));
                    remaining = 1;
                } else {
                    let done = product(out[start..].iter().map(Iter::extent)).unwrap_or(0);
                    return Err(fail(format!(
                        "dimension {dim} needs a factor {remaining} (after {done}), but the next iter {it:?} has \
                         extent {e}, and neither divides the other"
                    )));
                }
            }
            blocks.push(start..out.len());
        }
        let layout = Layout::new(out, self.replica().to_vec(), self.offset().clone())?;
        Ok(Grouped { layout, blocks })
    }
}
