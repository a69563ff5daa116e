//! XLA tiled layouts as Axe layouts, and back.
//!
//! An XLA array layout over dimensions `d` is the Axe layout on axis `m` of a *padded* shape (each
//! dimension rounded up where tiles pad it), restricted to the region `[0, d)`. The construction follows
//! each logical dimension through the tiles as a list of mixed-radix digits: a tile splits the last digits
//! of the dimensions it covers into (count, size) digits, `*` concatenates the digit lists of adjacent
//! dimensions, and padding grows the most major digit. A digit that a later tile splits unevenly in the
//! middle of a dimension (with more than one tile above it) has no Axe form; that is reported as an error.

use std::ops::Range;

use axe_layout::{Iter, Layout as AxeLayout};

use crate::error::{overflow, Result, XlaError};
use crate::shape::{ArrayShape, Layout, Tile, TileDim};
use crate::tiling::static_dims;

/// An XLA layout in Axe form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxeForm {
    /// The Axe layout on axis `m` (element offsets), over `padded_shape`.
    pub layout: AxeLayout,
    /// The logical dimensions rounded up by tiling padding.
    pub padded_shape: Vec<u64>,
    /// The logical elements: `[0, d_i)` per dimension.
    pub region: Vec<Range<u64>>,
}

#[derive(Clone, Copy)]
struct Digit {
    logical: Option<usize>,
    extent: i64,
}

struct Digits {
    digits: Vec<Digit>,
    chains: Vec<Vec<usize>>,
}

impl Digits {
    fn new_digit(&mut self, logical: Option<usize>, extent: i64) -> usize {
        self.digits.push(Digit { logical, extent });
        self.digits.len() - 1
    }

    /// Whether every digit of `id`'s dimension that is more major than `id` has extent 1.
    fn is_effectively_most_major(&self, id: usize) -> bool {
        match self.digits[id].logical {
            None => true,
            Some(l) => self.chains[l]
                .iter()
                .take_while(|&&d| d != id)
                .all(|&d| self.digits[d].extent == 1),
        }
    }

    /// Replaces digit `id` by (hi, lo) in its dimension's chain; returns (hi, lo).
    fn split(&mut self, id: usize, hi: i64, lo: i64) -> (usize, usize) {
        let logical = self.digits[id].logical;
        let h = self.new_digit(logical, hi);
        let l = self.new_digit(logical, lo);
        if let Some(ell) = logical {
            if let Some(pos) = self.chains[ell].iter().position(|&d| d == id) {
                self.chains[ell].splice(pos..=pos, [h, l]);
            }
        }
        (h, l)
    }

    fn extent(&self, ids: &[usize]) -> Result<i64> {
        ids.iter()
            .try_fold(1i64, |p, &d| p.checked_mul(self.digits[d].extent))
            .ok_or_else(|| overflow("multiplying digit extents"))
    }

    /// Splits a (possibly combined) dimension's digits by tile size `t` into (outer, inner) digits.
    fn tile(
        &mut self,
        mut dim: Vec<usize>,
        t: i64,
        tile: &Tile,
    ) -> Result<(Vec<usize>, Vec<usize>)> {
        let mut rem = t;
        let mut inner: Vec<usize> = Vec::new();
        while rem > 1 {
            let Some(&id) = dim.last() else {
                // The tile is larger than the whole dimension: the rest is padding no element reaches.
                let pad = self.new_digit(None, rem);
                inner.insert(0, pad);
                break;
            };
            let e = self.digits[id].extent;
            if rem % e == 0 {
                inner.insert(0, id);
                dim.pop();
                rem /= e;
            } else if e % rem == 0 {
                let (h, l) = self.split(id, e / rem, rem);
                let last = dim.len() - 1;
                dim[last] = h;
                inner.insert(0, l);
                rem = 1;
            } else if dim.len() == 1 && self.is_effectively_most_major(id) {
                // Pad the most major digit up to a multiple of the tile.
                let (h, l) = self.split(id, crate::tiling::ceil_div(e, rem), rem);
                dim[0] = h;
                inner.insert(0, l);
                rem = 1;
            } else {
                return Err(XlaError::Unsupported(format!(
                    "tile {tile} splits a digit of extent {e} by {rem} in the middle of a dimension: \
                     elements and padding interleave there, which no Axe layout over a padded box describes"
                )));
            }
        }
        Ok((dim, inner))
    }
}

/// The Axe form of an array's layout (see the module docs).
///
/// ```
/// use axe_xla::{parse_shape, to_axe};
/// let a = parse_shape("f32[3,5]{1,0:T(2,2)}")?;
/// let form = to_axe(a.as_array().unwrap())?;
/// assert_eq!(form.layout.to_string(), "S[(2,2,3,2):(12,2,4,1)]");
/// assert_eq!(form.padded_shape, vec![4, 6]);
/// # Ok::<(), axe_xla::XlaError>(())
/// ```
pub fn to_axe(a: &ArrayShape) -> Result<AxeForm> {
    crate::validate::validate_array(a)?;
    let dims = static_dims(a)?;
    if dims.contains(&0) {
        return Err(XlaError::Unsupported(format!(
            "{a} has no elements, so no Axe layout"
        )));
    }
    let rank = dims.len();
    let mut ds = Digits {
        digits: Vec::new(),
        chains: vec![Vec::new(); rank],
    };
    let mut current: Vec<Vec<usize>> = Vec::new();
    for &d in a.layout.minor_to_major.iter().rev() {
        let d = d as usize;
        let id = ds.new_digit(Some(d), dims[d]);
        ds.chains[d].push(id);
        current.push(vec![id]);
    }
    for (n, tile) in a.layout.tiles.iter().enumerate() {
        let k = tile.0.len();
        while current.len() < k {
            current.insert(0, Vec::new());
        }
        let offset = current.len() - k;
        let mut outers = Vec::new();
        let mut inners = Vec::new();
        let mut pending: Vec<usize> = Vec::new();
        for (j, td) in tile.0.iter().enumerate() {
            pending.extend_from_slice(&current[offset + j]);
            match td {
                TileDim::Combined if n > 0 => {
                    return Err(XlaError::Undefined(format!(
                        "'*' in tile {n} ({tile}): XLA defines combined dimensions only in the first tile"
                    )))
                }
                TileDim::Combined if j + 1 == k => {
                    return Err(XlaError::Undefined(format!(
                        "'*' on the most minor dimension of tile {tile} has nothing to combine with"
                    )))
                }
                TileDim::Combined => {}
                TileDim::Size(t) => {
                    let (o, i) = ds.tile(std::mem::take(&mut pending), *t, tile)?;
                    outers.push(o);
                    inners.push(i);
                }
            }
        }
        current.truncate(offset);
        current.extend(outers);
        current.extend(inners);
    }
    // Strides: row-major over the current dimensions, and mixed radix within each.
    let mut stride = vec![0i64; ds.digits.len()];
    let mut acc: i64 = 1;
    for dim in current.iter().rev() {
        for &id in dim.iter().rev() {
            stride[id] = acc;
            acc = acc
                .checked_mul(ds.digits[id].extent)
                .ok_or_else(|| overflow("computing strides"))?;
        }
    }
    let mut shard = Vec::new();
    let mut padded_shape = Vec::with_capacity(rank);
    for chain in &ds.chains {
        let p = ds.extent(chain)?;
        padded_shape.push(p as u64);
        for &id in chain {
            shard.push(Iter::mem(ds.digits[id].extent as u64, stride[id])?);
        }
    }
    Ok(AxeForm {
        layout: AxeLayout::from_shard(shard)?,
        padded_shape,
        region: dims.iter().map(|&d| 0..d as u64).collect(),
    })
}

/// Recognises an Axe memory layout over `shape` that equals an XLA layout (minor_to_major plus up to two
/// tiles), trying the fewest tiles first. The layout must use only axis `m`, with no replica and no
/// offset. Tile sizes are searched among the products of each dimension's fastest digits and the strides
/// (and their ratios); every candidate is checked against the layout before it is returned, so an answer
/// is always right, while a layout whose tiles are wider than the dimensions they cover may go
/// unrecognised (`None`).
///
/// ```
/// use axe_xla::from_axe;
/// let l: axe_layout::Layout = "S[(2,2,3,2):(12,2,4,1)]".parse()?;
/// assert_eq!(from_axe(&l, &[4, 6])?.unwrap().to_string(), "{1,0:T(2,2)}");
/// # Ok::<(), axe_xla::XlaError>(())
/// ```
pub fn from_axe(l: &AxeLayout, shape: &[u64]) -> Result<Option<Layout>> {
    if l.shard().iter().any(|it| !it.axis().is_memory())
        || !l.replica().is_empty()
        || !l.offset().is_zero()
    {
        return Err(XlaError::Unsupported(format!(
            "{l} is not a plain memory layout: XLA layouts use only axis m, with no replicas or offset"
        )));
    }
    let grouped = l.group(shape)?;
    let rank = shape.len();
    let dims: Vec<i64> = shape
        .iter()
        .map(|&d| i64::try_from(d).map_err(|_| overflow("converting a shape")))
        .collect::<Result<_>>()?;
    let target = grouped.layout.canonicalize()?;
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
    let matches = |layout: &Layout| -> bool {
        let a = ArrayShape {
            element_type: crate::primitive::PrimitiveType::F32,
            dims: dims.iter().map(|&d| crate::shape::Dim::Static(d)).collect(),
            layout: layout.clone(),
        };
        let Ok(f) = to_axe(&a) else { return false };
        if f.padded_shape == shape {
            return f.layout.equivalent(&target).unwrap_or(false);
        }
        // Padding beyond the shape: compare the logical region only.
        f.layout
            .slice(&f.padded_shape, &f.region)
            .and_then(|s| s.equivalent(&target))
            .unwrap_or(false)
    };
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
