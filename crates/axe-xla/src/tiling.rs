//! Index functions of tiled layouts.
//!
//! Without tiles, element `e` of an array with physical (major-to-minor) dimensions `d` sits at the
//! row-major index of `e` in `d`. Each tile `(t_1..t_k)` then acts on the *last k* dimensions of the current
//! shape, splitting each into (tile count `⌈d/t⌉`, tile size `t`) and moving the tile sizes after all outer
//! dimensions; a later tile acts on that expanded shape, so it may split within-tile or cross-tile
//! dimensions. A tile of higher rank than the current shape first extends it with leading 1s. In the first
//! tile, `*` combines a dimension into the next more minor one before tiling. The element's linear index is
//! its row-major index in the final expanded shape; slots no element maps to are padding.

use crate::error::{overflow, Result, XlaError};
use crate::shape::{ArrayShape, Dim, TileDim};

/// One tile applied to a shape.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    /// Leading 1s added before tiling.
    pub(crate) lead: usize,
    /// Index (in the extended shape) where the tiled dimensions start.
    pub(crate) offset: usize,
    /// For each tiled dimension: the extended dimensions combined into it (more than one with `*`).
    pub(crate) groups: Vec<Vec<usize>>,
    /// The extents of the extended shape.
    pub(crate) extended: Vec<i64>,
    /// Tile size per group.
    pub(crate) sizes: Vec<i64>,
}

/// The expansion of an array's layout: physical order, then every tile in turn.
#[derive(Clone, Debug)]
pub struct Tiling {
    /// Logical dimension sizes (bounded dynamic dims use their bound).
    pub logical: Vec<i64>,
    /// Physical order, major to minor: `physical[j]` is a logical dimension.
    pub physical: Vec<usize>,
    steps: Vec<Step>,
    /// The final expanded shape; its row-major order is memory order.
    pub expanded: Vec<i64>,
}

/// `⌈a / b⌉` for `a ≥ 0`, `b > 0`, without overflow.
pub(crate) fn ceil_div(a: i64, b: i64) -> i64 {
    a / b + i64::from(a % b != 0)
}

fn product(dims: &[i64]) -> Result<i64> {
    dims.iter()
        .try_fold(1i64, |p, &d| p.checked_mul(d))
        .ok_or_else(|| overflow("multiplying dimensions"))
}

/// Static sizes of an array's dimensions (bounded dynamic dimensions use their bound).
pub fn static_dims(a: &ArrayShape) -> Result<Vec<i64>> {
    a.dims
        .iter()
        .map(|d| match d {
            Dim::Static(n) | Dim::Bounded(n) => Ok(*n),
            Dim::Unbounded => Err(XlaError::Unsupported(format!(
                "{a} has an unbounded dimension '?': it has no size or memory layout"
            ))),
        })
        .collect()
}

impl Tiling {
    /// Expands the layout of `a` (which should have passed [`crate::validate()`]). Split configs take no
    /// part: this is the memory order of the unsplit array. An overflow names `a`.
    pub fn new(a: &ArrayShape) -> Result<Tiling> {
        crate::size::named(a, Tiling::expand_layout(a))
    }

    fn expand_layout(a: &ArrayShape) -> Result<Tiling> {
        crate::validate::validate_array(a)?;
        let logical = static_dims(a)?;
        let physical: Vec<usize> = a
            .layout
            .minor_to_major
            .iter()
            .rev()
            .map(|&d| d as usize)
            .collect();
        let mut shape: Vec<i64> = physical.iter().map(|&d| logical[d]).collect();
        let mut steps = Vec::with_capacity(a.layout.tiles.len());
        for (n, tile) in a.layout.tiles.iter().enumerate() {
            let k = tile.0.len();
            let lead = k.saturating_sub(shape.len());
            let mut extended = vec![1i64; lead];
            extended.extend_from_slice(&shape);
            let offset = extended.len() - k;
            let mut groups: Vec<Vec<usize>> = Vec::new();
            let mut sizes = Vec::new();
            let mut pending: Vec<usize> = Vec::new();
            for (j, td) in tile.0.iter().enumerate() {
                pending.push(offset + j);
                match td {
                    TileDim::Combined if n > 0 => {
                        return Err(XlaError::Undefined(format!(
                            "'*' in tile {n} ({tile}): XLA defines combined dimensions only in the first tile"
                        )))
                    }
                    TileDim::Combined => {}
                    TileDim::Size(t) => {
                        groups.push(std::mem::take(&mut pending));
                        sizes.push(*t);
                    }
                }
            }
            if !pending.is_empty() {
                return Err(XlaError::Undefined(format!(
                    "'*' on the most minor dimension of tile {tile} has no next dimension to combine with"
                )));
            }
            let mut next: Vec<i64> = extended[..offset].to_vec();
            for (g, &t) in groups.iter().zip(&sizes) {
                let merged = product(&g.iter().map(|&i| extended[i]).collect::<Vec<_>>())?;
                next.push(ceil_div(merged, t));
            }
            next.extend_from_slice(&sizes);
            product(&next)?;
            steps.push(Step {
                lead,
                offset,
                groups,
                extended,
                sizes,
            });
            shape = next;
        }
        Ok(Tiling {
            logical,
            physical,
            steps,
            expanded: shape,
        })
    }

    /// The expanded shape after each tile, in order.
    pub fn shapes_after_tiles(&self) -> Vec<Vec<i64>> {
        (0..self.steps.len())
            .map(|k| {
                self.steps.get(k + 1).map_or_else(
                    || self.expanded.clone(),
                    |next| next.extended[next.lead..].to_vec(),
                )
            })
            .collect()
    }

    /// The tiles as applied, in order.
    pub(crate) fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Elements of the expanded shape (data and padding), before `L`.
    pub fn expanded_elements(&self) -> Result<i64> {
        product(&self.expanded)
    }

    fn check(&self, index: &[i64]) -> Result<()> {
        check_index(index, &self.logical)
    }

    /// Index in the expanded shape of logical element `index`.
    pub fn expanded_index(&self, index: &[i64]) -> Result<Vec<i64>> {
        self.check(index)?;
        Ok(self.expand(index, None))
    }

    /// For each tile level, the coordinates that name the tile holding `index` at that level (everything
    /// but that tile's within-tile part). Two elements share a level-`k` tile iff these agree. Indices may
    /// lie in the padding beyond the logical dimensions (up to the padded extents), so padding slots can be
    /// placed in tiles too; there is no bounds check.
    pub fn tile_path(&self, index: &[i64]) -> Vec<Vec<i64>> {
        let mut path = Vec::with_capacity(self.steps.len());
        self.expand(index, Some(&mut path));
        path
    }

    fn expand(&self, index: &[i64], mut path: Option<&mut Vec<Vec<i64>>>) -> Vec<i64> {
        let mut idx: Vec<i64> = self
            .physical
            .iter()
            .map(|&d| index.get(d).copied().unwrap_or(0))
            .collect();
        for s in &self.steps {
            let mut ext = vec![0i64; s.lead];
            ext.extend_from_slice(&idx);
            let mut next = ext[..s.offset].to_vec();
            let mut inner = Vec::with_capacity(s.sizes.len());
            for (g, &t) in s.groups.iter().zip(&s.sizes) {
                let mut v: i64 = 0;
                for &i in g {
                    // Bounded by the merged extent (checked at construction) for indices in the array.
                    v = v.saturating_mul(s.extended[i]).saturating_add(ext[i]);
                }
                next.push(v / t);
                inner.push(v % t);
            }
            if let Some(p) = path.as_deref_mut() {
                p.push(next.clone());
            }
            next.extend(inner);
            idx = next;
        }
        idx
    }

    /// `linear_index_with_tiles`: the element's position in memory order (in elements, before packing).
    ///
    /// ```
    /// use axe_xla::{parse_shape, Tiling};
    /// let s = parse_shape("f32[3,5]{1,0:T(2,2)}")?;
    /// let t = Tiling::new(s.as_array().unwrap())?;
    /// assert_eq!(t.linear_index(&[2, 3])?, 17);
    /// # Ok::<(), axe_xla::XlaError>(())
    /// ```
    pub fn linear_index(&self, index: &[i64]) -> Result<i64> {
        let idx = self.expanded_index(index)?;
        let mut x: i64 = 0;
        for (i, d) in idx.iter().zip(&self.expanded) {
            x = x
                .checked_mul(*d)
                .and_then(|x| x.checked_add(*i))
                .ok_or_else(|| overflow("computing a linear index"))?;
        }
        Ok(x)
    }

    /// The logical element at memory position `linear`, or `None` for a padding slot.
    pub fn element_at(&self, linear: i64) -> Result<Option<Vec<i64>>> {
        let total = self.expanded_elements()?;
        if linear < 0 || linear >= total {
            return Err(XlaError::IndexOutOfBounds {
                index: vec![linear],
                dims: vec![total],
            });
        }
        let mut idx = vec![0i64; self.expanded.len()];
        let mut rest = linear;
        for i in (0..self.expanded.len()).rev() {
            idx[i] = rest % self.expanded[i];
            rest /= self.expanded[i];
        }
        for s in self.steps.iter().rev() {
            let g = s.groups.len();
            let mut ext: Vec<i64> = idx[..s.offset].to_vec();
            for (j, (group, &t)) in s.groups.iter().zip(&s.sizes).enumerate() {
                let mut v = idx[s.offset + j] * t + idx[s.offset + g + j];
                let mut vals = vec![0i64; group.len()];
                for (k, &i) in group.iter().enumerate().rev() {
                    vals[k] = v % s.extended[i];
                    v /= s.extended[i];
                }
                if v != 0 {
                    return Ok(None); // past the end of the (combined) dimension: padding
                }
                ext.extend(vals);
            }
            if ext[..s.lead].iter().any(|&v| v != 0) {
                return Ok(None);
            }
            idx = ext[s.lead..].to_vec();
        }
        let mut logical = vec![0i64; self.logical.len()];
        for (j, &d) in self.physical.iter().enumerate() {
            logical[d] = idx[j];
        }
        Ok(Some(logical))
    }
}

/// `index` names an element of an array of dimensions `dims`: as many coordinates as dimensions, each in
/// `0..dim`.
fn check_index(index: &[i64], dims: &[i64]) -> Result<()> {
    if index.len() != dims.len() {
        return Err(XlaError::IndexRank {
            index: index.to_vec(),
            dims: dims.to_vec(),
        });
    }
    if index.iter().zip(dims).any(|(i, d)| *i < 0 || i >= d) {
        return Err(XlaError::IndexOutOfBounds {
            index: index.to_vec(),
            dims: dims.to_vec(),
        });
    }
    Ok(())
}

/// The untiled linear index of `index` under `minor_to_major` (row-major in physical order). An overflow
/// names `a`.
pub fn linear_index(a: &ArrayShape, index: &[i64]) -> Result<i64> {
    crate::size::named(a, untiled_linear_index(a, index))
}

fn untiled_linear_index(a: &ArrayShape, index: &[i64]) -> Result<i64> {
    let dims = static_dims(a)?;
    check_index(index, &dims)?;
    crate::validate::validate_array(a)?;
    let mut x: i64 = 0;
    for &d in a.layout.minor_to_major.iter().rev() {
        let d = d as usize;
        x = x
            .checked_mul(dims[d])
            .and_then(|x| x.checked_add(index[d]))
            .ok_or_else(|| overflow("computing a linear index"))?;
    }
    Ok(x)
}

/// The inverse of [`linear_index`].
pub fn index_of_linear(a: &ArrayShape, mut linear: i64) -> Result<Vec<i64>> {
    let dims = static_dims(a)?;
    let total = crate::size::named(a, product(&dims))?;
    if linear < 0 || linear >= total {
        return Err(XlaError::IndexOutOfBounds {
            index: vec![linear],
            dims: vec![total],
        });
    }
    crate::validate::validate_array(a)?;
    let mut out = vec![0i64; dims.len()];
    for &d in &a.layout.minor_to_major {
        let d = d as usize;
        out[d] = linear % dims[d];
        linear /= dims[d];
    }
    Ok(out)
}
