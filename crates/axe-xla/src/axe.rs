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
/// tiles), with the fewest tiles. The layout must use only axis `m`, with no replica and no offset.
///
/// Law: `from_axe(l, shape) = Some(x)` only when the XLA layout `x` over `shape` has `l`'s map (its Axe
/// form, restricted to `shape` where `x`'s tiles pad it further, is equivalent to `l`), with no layout of
/// fewer tiles found; `None` when no layout this reading can produce has it (property-tested: the Axe
/// form of every layout of up to two tiles, sub-tiles and leading tile dimensions included, is
/// recognised). The order and tile sizes are read off `l`'s digits sorted by stride: a tile ends at a
/// stride no digit straddles, its sizes are the spans of the digits below, and the order merges the
/// dimensions' runs below and above it (`recognise.rs`). That is `O(n²)` candidates for `n` digits,
/// each checked before it is returned: milliseconds at rank 6.
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
    crate::recognise::recognise(l, shape)
}
