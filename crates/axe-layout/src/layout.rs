//! The layout model: `L = (D, R, O)` and its induced map.
//!
//! * `D` (shard) is an ordered list of iters; a flat index `x ∈ [0, size)` is written in the mixed radix of
//!   their extents (last iter fastest) and `D(x) = Σ x_k·s_k @ a_k`.
//! * `R` (replica) is a multiset of iters; `Rset = { Σ y_r·s_r @ a_r }` (`{0}` when empty).
//! * `O` (offset) is a coordinate.
//!
//! The meaning of the layout is the set-valued map `L(x) = { D(x) + r + O : r ∈ Rset }`. The base map
//! `D(x) + O` (one coordinate, replicas left out) is offered separately as [`Layout::base_at`].

use crate::axis::Axis;
use crate::coord::Coord;
use crate::error::{overflow, LayoutError, Result};
use crate::iter::Iter;

/// The most points any enumeration in this crate produces before it gives up with
/// [`LayoutError::TooLarge`].
pub const MAX_ENUMERATION: u64 = 1 << 24;

/// An Axe layout: shard iters `D`, replica iters `R` and offset `O`.
///
/// ```
/// # use axe_layout::Layout;
/// let l: Layout = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp".parse()?;
/// assert_eq!(l.size(), 128);
/// // Element (1, 3) of the 8×16 tile lives in lane 5 of warps 5 and 9, register 1.
/// let at = l.apply_multi(&[1, 3], &[8, 16])?;
/// assert_eq!(at.len(), 2);
/// assert_eq!(at[0].to_string(), "{lane: 5, reg: 1, warp: 5}");
/// assert_eq!(at[1].to_string(), "{lane: 5, reg: 1, warp: 9}");
/// # Ok::<(), axe_layout::LayoutError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    shard: Vec<Iter>,
    replica: Vec<Iter>,
    offset: Coord,
}

impl Layout {
    /// A layout from its three parts. The size (product of shard extents) and the replica count must fit
    /// in `u64`.
    pub fn new(shard: Vec<Iter>, replica: Vec<Iter>, offset: Coord) -> Result<Layout> {
        product(shard.iter().map(Iter::extent))
            .ok_or_else(|| overflow("computing the layout size"))?;
        product(replica.iter().map(Iter::extent))
            .ok_or_else(|| overflow("computing the replica count"))?;
        Ok(Layout {
            shard,
            replica,
            offset,
        })
    }

    /// A layout with shard iters only.
    pub fn from_shard(shard: Vec<Iter>) -> Result<Layout> {
        Layout::new(shard, Vec::new(), Coord::zero())
    }

    /// `(extents, strides, axes)` zipped into shard iters.
    ///
    /// ```
    /// # use axe_layout::{Axis, Layout};
    /// let l = Layout::strided(&[4, 8], &[1, 4], &[Axis::memory(), Axis::memory()])?;
    /// assert_eq!(l.to_string(), "S[(4,8):(1,4)]");
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn strided(extents: &[u64], strides: &[i64], axes: &[Axis]) -> Result<Layout> {
        if extents.len() != strides.len() || extents.len() != axes.len() {
            return Err(LayoutError::RankMismatch(format!(
                "{} extents, {} strides and {} axes",
                extents.len(),
                strides.len(),
                axes.len()
            )));
        }
        let shard = extents
            .iter()
            .zip(strides)
            .zip(axes)
            .map(|((&e, &s), a)| Iter::new(e, s, *a))
            .collect::<Result<Vec<_>>>()?;
        Layout::from_shard(shard)
    }

    /// Row-major (C order) over `shape` on axis `m`: the last dimension has stride 1.
    ///
    /// ```
    /// # use axe_layout::Layout;
    /// assert_eq!(Layout::row_major(&[8, 16])?.to_string(), "S[(8,16):(16,1)]");
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn row_major(shape: &[u64]) -> Result<Layout> {
        let strides = row_major_strides(shape)?;
        Layout::strided(shape, &strides, &vec![Axis::memory(); shape.len()])
    }

    /// Column-major (Fortran order) over `shape` on axis `m`: the first dimension has stride 1.
    ///
    /// ```
    /// # use axe_layout::Layout;
    /// assert_eq!(Layout::column_major(&[3, 5])?.to_string(), "S[(3,5):(1,3)]");
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn column_major(shape: &[u64]) -> Result<Layout> {
        let mut strides = vec![0i64; shape.len()];
        let mut acc: i64 = 1;
        for (i, &e) in shape.iter().enumerate() {
            strides[i] = acc;
            acc = i64::try_from(e)
                .ok()
                .and_then(|e| acc.checked_mul(e))
                .ok_or_else(|| overflow("computing column-major strides"))?;
        }
        Layout::strided(shape, &strides, &vec![Axis::memory(); shape.len()])
    }

    /// The same layout with replica iters `replica` added.
    pub fn with_replica(mut self, replica: impl IntoIterator<Item = Iter>) -> Result<Layout> {
        self.replica.extend(replica);
        Layout::new(self.shard, self.replica, self.offset)
    }

    /// The same layout with `offset` added to its offset.
    pub fn with_offset(mut self, offset: &Coord) -> Result<Layout> {
        self.offset = self.offset.checked_add(offset)?;
        Ok(self)
    }

    /// The shard iters `D`, most major first.
    pub fn shard(&self) -> &[Iter] {
        &self.shard
    }

    /// The replica iters `R`.
    pub fn replica(&self) -> &[Iter] {
        &self.replica
    }

    /// The offset `O`.
    pub fn offset(&self) -> &Coord {
        &self.offset
    }

    /// Splits the layout into its parts.
    pub fn into_parts(self) -> (Vec<Iter>, Vec<Iter>, Coord) {
        (self.shard, self.replica, self.offset)
    }

    /// `size(L) = Π e_k` over `D` (1 when `D` is empty).
    pub fn size(&self) -> u64 {
        // Checked at construction.
        self.shard
            .iter()
            .fold(1u64, |p, it| p.wrapping_mul(it.extent()))
    }

    /// Number of replica points counted with multiplicity (`Π e_r` over `R`).
    pub fn replica_count(&self) -> u64 {
        self.replica
            .iter()
            .fold(1u64, |p, it| p.wrapping_mul(it.extent()))
    }

    /// Every axis the layout mentions (in `D`, `R` or `O`), sorted by name.
    pub fn axes(&self) -> Vec<Axis> {
        let mut axes: Vec<Axis> = self
            .shard
            .iter()
            .chain(&self.replica)
            .map(|it| *it.axis())
            .chain(self.offset.components().map(|(a, _)| *a))
            .collect();
        axes.sort();
        axes.dedup();
        axes
    }

    /// The axis named `name`, for reading this layout's coordinates: one of [`Layout::axes`], so that a
    /// misspelt or absent name is an error rather than a column of zeros (a coordinate is 0 on every
    /// axis it does not mention).
    ///
    /// A layout that mentions no axis at all (`S[]`: no iter and a zero offset) maps its one index to the
    /// origin, which is 0 on every axis: it has nothing to check a name against, and accepts any valid
    /// name.
    ///
    /// Errors: [`LayoutError::InvalidAxis`] for a name that is not an identifier,
    /// [`LayoutError::UnknownAxis`] (naming it and listing the layout's axes) for one it does not mention.
    ///
    /// ```
    /// # use axe_layout::{Axis, Layout, LayoutError};
    /// let l: Layout = "S[(8,4):(4@lane,1@reg)] + R[2:1@warp]".parse()?;
    /// assert_eq!(l.axis("lane")?, Axis::new("lane")?);
    /// let e = l.axis("lnae").unwrap_err();
    /// assert!(matches!(e, LayoutError::UnknownAxis { .. }));
    /// assert_eq!(e.to_string(), r#"the layout has no axis "lnae"; its axes are lane, reg, warp"#);
    /// assert!("S[]".parse::<Layout>()?.axis("lane").is_ok());
    /// # Ok::<(), LayoutError>(())
    /// ```
    pub fn axis(&self, name: &str) -> Result<Axis> {
        let axis = Axis::new(name)?;
        let axes = self.axes();
        if axes.is_empty() || axes.contains(&axis) {
            return Ok(axis);
        }
        Err(LayoutError::UnknownAxis {
            axis: name.to_string(),
            axes: axes.iter().map(|a| a.name().to_string()).collect(),
        })
    }

    /// Axis-wise span: `span_a(L) = 1 + Σ (e−1)·|s|` over the iters of `D` and `R` on axis `a`; 1 for an
    /// axis no iter uses. It is the length of the footprint on that axis and leaves out `O`.
    ///
    /// ```
    /// # use axe_layout::{Axis, Layout};
    /// let l: Layout = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp".parse()?;
    /// assert_eq!(l.span(&Axis::new("lane")?)?, 32);
    /// assert_eq!(l.span(&Axis::new("warp")?)?, 6);
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn span(&self, axis: &Axis) -> Result<u64> {
        let mut span: u64 = 1;
        for it in self
            .shard
            .iter()
            .chain(&self.replica)
            .filter(|it| it.axis() == axis)
        {
            span = it
                .reach()
                .and_then(|r| span.checked_add(r))
                .ok_or_else(|| overflow("computing a span"))?;
        }
        Ok(span)
    }

    /// The span of every axis the layout mentions, sorted by axis.
    pub fn spans(&self) -> Result<Vec<(Axis, u64)>> {
        self.axes()
            .into_iter()
            .map(|a| Ok((a, self.span(&a)?)))
            .collect()
    }

    /// The span as a per-axis `i64` factor, for scaling: one entry per axis some iter uses (others span 1).
    /// Errors if a span exceeds `i64::MAX`.
    pub(crate) fn span_factor(&self) -> Result<Vec<(Axis, i64)>> {
        let mut out: Vec<(Axis, i64)> = Vec::with_capacity(4);
        for it in self.shard.iter().chain(&self.replica) {
            let reach = it
                .reach()
                .and_then(|r| i64::try_from(r).ok())
                .ok_or_else(|| overflow("computing a span"))?;
            match out.iter_mut().find(|(a, _)| a == it.axis()) {
                Some((_, s)) => {
                    *s = s
                        .checked_add(reach)
                        .ok_or_else(|| overflow("computing a span"))?
                }
                None => out.push((
                    *it.axis(),
                    reach
                        .checked_add(1)
                        .ok_or_else(|| overflow("computing a span"))?,
                )),
            }
        }
        Ok(out)
    }

    /// `D(x)`: the shard part alone.
    pub fn shard_at(&self, x: u64) -> Result<Coord> {
        let size = self.size();
        if x >= size {
            return Err(LayoutError::IndexOutOfRange { index: x, size });
        }
        let mut c = Coord::zero();
        let mut rest = x;
        for it in self.shard.iter().rev() {
            let digit = rest % it.extent();
            rest /= it.extent();
            let v = i64::try_from(digit)
                .ok()
                .and_then(|d| d.checked_mul(it.stride()))
                .ok_or_else(|| overflow("evaluating the shard map"))?;
            c.add_on(it.axis(), v)?;
        }
        Ok(c)
    }

    /// The base map `D(x) + O` (replicas left out).
    pub fn base_at(&self, x: u64) -> Result<Coord> {
        self.shard_at(x)?.checked_add(&self.offset)
    }

    /// The replica point set `Rset` (sorted, without duplicates; `{0}` when `R` is empty).
    pub fn replica_points(&self) -> Result<Vec<Coord>> {
        enumerate_iters(&self.replica)
    }

    /// `L(x) = { D(x) + r + O : r ∈ Rset }`, sorted, without duplicates.
    pub fn apply(&self, x: u64) -> Result<Vec<Coord>> {
        let base = self.base_at(x)?;
        // The replica points are sorted and distinct, and adding one coordinate to all of them keeps
        // both (coordinates order as integer tuples).
        self.replica_points()?
            .iter()
            .map(|r| base.checked_add(r))
            .collect()
    }

    /// `L` at a multi-index over an admitted shape (flattened row-major first).
    pub fn apply_multi(&self, index: &[u64], shape: &[u64]) -> Result<Vec<Coord>> {
        self.check_admits(shape)?;
        self.apply(flatten(index, shape)?)
    }

    /// Errors unless `Π shape = size`.
    pub fn check_admits(&self, shape: &[u64]) -> Result<()> {
        match product(shape.iter().copied()) {
            Some(p) if p == self.size() => Ok(()),
            p => Err(LayoutError::NotAdmitted {
                shape: shape.to_vec(),
                product: p.unwrap_or(u64::MAX),
                size: self.size(),
            }),
        }
    }
}

/// Every point `Σ y_i·s_i @ a_i` of an iter list, sorted, without duplicates (`{0}` for no iters).
pub(crate) fn enumerate_iters(iters: &[Iter]) -> Result<Vec<Coord>> {
    let count = product(iters.iter().map(Iter::extent)).unwrap_or(u64::MAX);
    if count > MAX_ENUMERATION {
        return Err(LayoutError::TooLarge(format!(
            "{count} replica points exceed the enumeration limit of {MAX_ENUMERATION}"
        )));
    }
    if iters.is_empty() {
        return Ok(vec![Coord::zero()]);
    }
    // Each point as its values on the iters' axes (in axis order), `width` values a point in one
    // flat list: the sums `Σ y_i·stride_i` over every combination of the iters' indices.
    let mut axes: Vec<Axis> = iters.iter().map(|it| *it.axis()).collect();
    axes.sort();
    axes.dedup();
    let width = axes.len();
    // Every iter's axis is among `axes`.
    let column = |a: &Axis| axes.binary_search(a).unwrap_or(0);
    let mut values: Vec<i64> = vec![0; width];
    for it in iters {
        let c = column(it.axis());
        let mut next = Vec::with_capacity(values.len() * it.extent() as usize);
        for point in values.chunks_exact(width) {
            for y in 0..it.extent() {
                let v = i64::try_from(y)
                    .ok()
                    .and_then(|y| y.checked_mul(it.stride()))
                    .and_then(|v| v.checked_add(point[c]))
                    .ok_or_else(|| overflow("enumerating replicas"))?;
                next.extend_from_slice(point);
                let at = next.len() - width + c;
                next[at] = v;
            }
        }
        values = next;
    }
    // Sorted as coordinates order (integer tuples over the axes in axis order) and without repeats:
    // one sort of the points by their tuples, then each made a coordinate.
    if width == 1 {
        // Points on one axis (most replicas): the values themselves.
        values.sort_unstable();
        values.dedup();
        return Ok(values.iter().map(|&v| Coord::on(axes[0], v)).collect());
    }
    let mut points: Vec<&[i64]> = values.chunks_exact(width).collect();
    points.sort_unstable();
    points.dedup();
    points
        .iter()
        .map(|p| Coord::from_pairs(axes.iter().zip(p.iter().copied())))
        .collect()
}

/// Checked product of extents.
pub(crate) fn product(it: impl IntoIterator<Item = u64>) -> Option<u64> {
    it.into_iter().try_fold(1u64, |p, e| p.checked_mul(e))
}

/// Row-major strides of a shape (checked).
pub(crate) fn row_major_strides(shape: &[u64]) -> Result<Vec<i64>> {
    let mut strides = vec![0i64; shape.len()];
    let mut acc: i64 = 1;
    for i in (0..shape.len()).rev() {
        strides[i] = acc;
        acc = i64::try_from(shape[i])
            .ok()
            .and_then(|e| acc.checked_mul(e))
            .ok_or_else(|| overflow("computing row-major strides"))?;
    }
    Ok(strides)
}

/// Row-major flattening of a multi-index over a shape.
///
/// ```
/// assert_eq!(axe_layout::flatten(&[1, 3], &[8, 16])?, 19);
/// assert!(axe_layout::flatten(&[8, 0], &[8, 16]).is_err());
/// # Ok::<(), axe_layout::LayoutError>(())
/// ```
pub fn flatten(index: &[u64], shape: &[u64]) -> Result<u64> {
    if index.len() != shape.len() || index.iter().zip(shape).any(|(i, s)| i >= s) {
        return Err(LayoutError::MultiIndexOutOfRange {
            index: index.to_vec(),
            shape: shape.to_vec(),
        });
    }
    let mut x: u64 = 0;
    for (i, s) in index.iter().zip(shape) {
        x = x
            .checked_mul(*s)
            .and_then(|x| x.checked_add(*i))
            .ok_or_else(|| overflow("flattening a multi-index"))?;
    }
    Ok(x)
}

/// Row-major unflattening of `x` over `shape` (the inverse of [`flatten`]).
pub fn unflatten(mut x: u64, shape: &[u64]) -> Result<Vec<u64>> {
    let size =
        product(shape.iter().copied()).ok_or_else(|| overflow("computing a shape's size"))?;
    if x >= size {
        return Err(LayoutError::IndexOutOfRange { index: x, size });
    }
    let mut out = vec![0; shape.len()];
    for i in (0..shape.len()).rev() {
        out[i] = x % shape[i];
        x /= shape[i];
    }
    Ok(out)
}
