//! CuTe ⇄ Axe. A CuTe layout is an Axe layout on one axis with the order of its (flattened) modes
//! reversed: CuTe counts colexicographically (leftmost leaf fastest), Axe row-major (last iter fastest),
//! so the flat index is the same on both sides. A TV layout `(thread, value) → tile index` becomes the
//! Axe layout of the tile onto the axes `tid` and `val` (its inverse); thread modes of stride 0 (several
//! threads holding one element) become replicas `R[..@tid]`.

use axe_layout::{Axis, Coord, Iter, Layout as AxeLayout};

use crate::error::{mul, CuteError, Result};
use crate::int_tuple::IntTuple;
use crate::layout::Layout;

/// The thread axis of a converted TV layout.
pub const TID: &str = "tid";
/// The value axis of a converted TV layout.
pub const VAL: &str = "val";

fn conv(why: impl Into<String>) -> CuteError {
    CuteError::Convert(why.into())
}

fn extent(s: i64) -> Result<u64> {
    u64::try_from(s).map_err(|_| conv(format!("extent {s}")))
}

fn signed(e: u64) -> Result<i64> {
    i64::try_from(e).map_err(|_| conv(format!("extent {e} does not fit in i64")))
}

impl Layout {
    /// The Axe layout on axis `m` with the same map: the leaves reversed, `S[(s_k,..,s_0):(d_k,..,d_0)]`.
    ///
    /// **Law**: `axe(x) = {m: L(x)}` for every flat index `x`.
    ///
    /// ```
    /// let l: axe_cute::Layout = "(4,(2,3)):(1,(4,8))".parse()?;
    /// assert_eq!(l.to_axe()?.to_string(), "S[(3,2,4):(8,4,1)]");
    /// # Ok::<(), axe_cute::CuteError>(())
    /// ```
    pub fn to_axe(&self) -> Result<AxeLayout> {
        self.to_axe_on(Axis::memory())
    }

    /// [`Layout::to_axe`] onto `axis`.
    pub fn to_axe_on(&self, axis: Axis) -> Result<AxeLayout> {
        let shard = self
            .modes_flat()
            .into_iter()
            .rev()
            .map(|(s, d)| Ok(Iter::new(extent(s)?, d, axis)?))
            .collect::<Result<Vec<_>>>()?;
        Ok(AxeLayout::from_shard(shard)?)
    }

    /// The CuTe layout of an Axe layout whose shard iters all lie on one axis, with no replica and no
    /// offset (CuTe layouts are functions to one integer with `L(0) = 0`). Without `shape` the leaves are
    /// the iters reversed; with `shape` each leaf of `shape` (colexicographic) takes the next iters whose
    /// extents multiply to it, an iter split in two where needed (`(e, s) → (f, s), (e/f, f·s)`), a leaf
    /// that takes several iters becoming a tuple.
    ///
    /// **Law**: `R(x) = axe(x)` on the axis for every `x`; with `shape`, `size(R_leaf) = leaf`.
    ///
    /// ```
    /// use axe_cute::{Layout, parse_int_tuple};
    /// let axe: axe_layout::Layout = "S[(24,4):(1,8)]".parse()?;
    /// let l = Layout::from_axe(&axe, Some(&parse_int_tuple("(4,(2,12))")?))?;
    /// assert_eq!(l.to_string(), "(4,(2,12)):(8,(1,2))");
    /// # Ok::<(), axe_cute::CuteError>(())
    /// ```
    pub fn from_axe(l: &AxeLayout, shape: Option<&IntTuple>) -> Result<Layout> {
        if !l.replica().is_empty() {
            return Err(conv(format!(
                "{l} has replicas; a CuTe layout maps each index to one value"
            )));
        }
        if !l.offset().is_zero() {
            return Err(conv(format!(
                "{l} has an offset; a CuTe layout maps index 0 to 0"
            )));
        }
        let axes: Vec<Axis> = {
            let mut a: Vec<Axis> = l.shard().iter().map(|i| *i.axis()).collect();
            a.sort();
            a.dedup();
            a
        };
        if axes.len() > 1 {
            let names: Vec<&str> = axes.iter().map(|a| a.name()).collect();
            return Err(conv(format!(
                "{l} uses the axes {}; a CuTe layout has one codomain",
                names.join(", ")
            )));
        }
        let modes = l
            .shard()
            .iter()
            .rev()
            .map(|i| Ok((signed(i.extent())?, i.stride())))
            .collect::<Result<Vec<_>>>()?;
        match shape {
            None => Layout::from_modes(&modes),
            Some(shape) => regroup(&modes, shape),
        }
    }
}

fn regroup(modes: &[(i64, i64)], shape: &IntTuple) -> Result<Layout> {
    let size: i64 = modes.iter().try_fold(1i64, |a, m| mul(a, m.0))?;
    if shape.product()? != size {
        return Err(conv(format!(
            "shape {shape} has size {}, the layout {size}",
            shape.product()?
        )));
    }
    // Iters of extent 1 take no index; a leaf of extent 1 keeps the stride of one that stands at its
    // place (so CuTe → Axe → CuTe keeps `1:12`), and the others are passed over.
    let mut queue: std::collections::VecDeque<(i64, i64)> = modes.iter().copied().collect();
    let mut parts = Vec::new();
    for leaf in shape.leaves() {
        let mut need = leaf;
        let mut part = Vec::new();
        if need == 1 {
            if let Some(&(1, d)) = queue.front() {
                queue.pop_front();
                part.push((1, d));
            }
        }
        while need > 1 {
            let Some((e, d)) = queue.pop_front() else {
                return Err(conv(format!(
                    "shape {shape} needs more than the layout has"
                )));
            };
            if e == 1 {
                continue;
            }
            if need % e == 0 {
                part.push((e, d));
                need /= e;
            } else if e % need == 0 {
                part.push((need, d));
                queue.push_front((e / need, mul(d, need)?));
                need = 1;
            } else {
                return Err(conv(format!(
                    "leaf {leaf} of {shape} would split an iter of extent {e} at {need}, which does not divide it"
                )));
            }
        }
        parts.push(part);
    }
    let mut it = parts.into_iter();
    let (s, d) = build(shape, &mut it);
    Layout::new(s, d)
}

fn build(
    shape: &IntTuple,
    parts: &mut impl Iterator<Item = Vec<(i64, i64)>>,
) -> (IntTuple, IntTuple) {
    match shape {
        IntTuple::Int(_) => {
            let p = parts.next().unwrap_or_default();
            match p.as_slice() {
                [] => (IntTuple::Int(1), IntTuple::Int(0)),
                [(s, d)] => (IntTuple::Int(*s), IntTuple::Int(*d)),
                _ => (
                    IntTuple::Tuple(p.iter().map(|m| IntTuple::Int(m.0)).collect()),
                    IntTuple::Tuple(p.iter().map(|m| IntTuple::Int(m.1)).collect()),
                ),
            }
        }
        IntTuple::Tuple(v) => {
            let (s, d): (Vec<_>, Vec<_>) = v.iter().map(|t| build(t, parts)).unzip();
            (IntTuple::Tuple(s), IntTuple::Tuple(d))
        }
    }
}

/// One leaf of a TV layout: extent, stride into the tile, axis, and its weight (colexicographic
/// position) on that axis.
struct TvLeaf {
    extent: i64,
    stride: i64,
    axis: Axis,
    weight: i64,
}

fn tv_leaves(mode: &Layout, axis: Axis, out: &mut Vec<TvLeaf>) -> Result<()> {
    let mut w = 1i64;
    for (s, d) in mode.modes_flat() {
        if s > 1 {
            out.push(TvLeaf {
                extent: s,
                stride: d,
                axis,
                weight: w,
            });
        }
        w = mul(w, s)?;
    }
    Ok(())
}

/// The Axe layout of the tile of a TV layout `(thread, value) → tile index` (rank 2: mode 0 threads,
/// mode 1 values) onto the axes `tid` and `val`.
///
/// **Law**: for every tile index `x ∈ [0, N)`, `axe(x) = { {tid: t, val: v} : TV(t, v) = x }` as a set,
/// with `N` the number of distinct tile indices. It exists iff the leaves of nonzero stride, sorted by
/// stride, are compact (`1`, then each the previous `s·d`): then `x`'s digits in that radix give the
/// thread and value, and the stride-0 leaves are the replicas (a stride-0 value leaf repeats an element
/// in several registers: `R[..@val]`). Otherwise the error names the leaf that leaves a gap or overlaps.
///
/// ```
/// // 4 threads × 2 values over an 8-element tile, thread fastest, plus 2 threads replicating it.
/// let tv: axe_cute::Layout = "((4,2),2):((1,0),4)".parse()?;
/// assert_eq!(axe_cute::tv_to_axe(&tv)?.to_string(), "S[(2,4):(1@val,1@tid)] + R[2:4@tid]");
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn tv_to_axe(tv: &Layout) -> Result<AxeLayout> {
    if tv.rank() != 2 {
        return Err(conv(format!(
            "a TV layout has two modes (thread, value); {tv} has {}",
            tv.rank()
        )));
    }
    let (tid, val) = (Axis::new(TID)?, Axis::new(VAL)?);
    let mut leaves = Vec::new();
    tv_leaves(&tv.mode(0)?, tid, &mut leaves)?;
    tv_leaves(&tv.mode(1)?, val, &mut leaves)?;
    if let Some(l) = leaves.iter().find(|l| l.stride < 0) {
        return Err(conv(format!(
            "{tv} has the negative stride {}; tile indices start at 0",
            l.stride
        )));
    }
    let mut replica = Vec::new();
    let mut dense: Vec<&TvLeaf> = Vec::new();
    for l in &leaves {
        if l.stride == 0 {
            replica.push(Iter::new(extent(l.extent)?, l.weight, l.axis)?);
        } else {
            dense.push(l);
        }
    }
    dense.sort_by_key(|l| l.stride);
    let mut current = 1i64;
    for l in &dense {
        if l.stride != current {
            let what = if l.stride < current {
                "overlaps the elements of the smaller strides"
            } else {
                "leaves a gap in the tile"
            };
            return Err(conv(format!(
                "{tv}: the {} leaf {}:{} {what} (expected stride {current}), so the tile is not covered exactly once",
                l.axis, l.extent, l.stride
            )));
        }
        current = mul(l.extent, l.stride)?;
    }
    let shard = dense
        .iter()
        .rev()
        .map(|l| Ok(Iter::new(extent(l.extent)?, l.weight, l.axis)?))
        .collect::<Result<Vec<_>>>()?;
    Ok(AxeLayout::new(shard, replica, Coord::zero())?)
}

/// The TV layout `((thread leaves),(value leaves)) → tile index` of an Axe layout of a tile onto `tid` and
/// `val` (shard and replica iters on those axes only, no offset): the inverse of [`tv_to_axe`].
///
/// **Law**: `TV(t, v) = x` exactly when `{tid: t, val: v} ∈ axe(x)`. It exists iff on each axis the
/// iters (shard and replica), sorted by stride, are compact (`1`, then each the previous extent·stride),
/// so threads and values are numbered `0..T` and `0..V` with nothing missing or doubled.
pub fn tv_from_axe(l: &AxeLayout) -> Result<Layout> {
    if !l.offset().is_zero() {
        return Err(conv(format!(
            "{l} has an offset; TV layouts start at thread 0, value 0"
        )));
    }
    let (tid, val) = (Axis::new(TID)?, Axis::new(VAL)?);
    let shard = l.shard();
    let mut pos = vec![0i64; shard.len()];
    let mut acc = 1i64;
    for k in (0..shard.len()).rev() {
        pos[k] = acc;
        acc = mul(acc, signed(shard[k].extent())?)?;
    }
    let mut modes = Vec::new();
    for axis in [tid, val] {
        let mut items: Vec<(i64, i64, i64)> = Vec::new(); // (weight, extent, tile stride)
        for (k, it) in shard.iter().enumerate() {
            if it.axis() == &axis && it.extent() > 1 {
                items.push((it.stride(), signed(it.extent())?, pos[k]));
            }
        }
        for it in l.replica() {
            if it.axis() == &axis && it.extent() > 1 {
                items.push((it.stride(), signed(it.extent())?, 0));
            }
        }
        items.sort();
        let mut current = 1i64;
        for &(w, e, _) in &items {
            if w != current {
                return Err(conv(format!(
                    "{l}: on {axis} an iter of extent {e} has stride {w} where {current} is needed, so the {axis} numbers are not 0.. without gaps or repeats"
                )));
            }
            current = mul(w, e)?;
        }
        let leaves: Vec<(i64, i64)> = items.iter().map(|&(_, e, p)| (e, p)).collect();
        modes.push(Layout::from_modes(&leaves)?);
    }
    for it in shard.iter().chain(l.replica()) {
        if it.axis() != &tid && it.axis() != &val {
            return Err(conv(format!(
                "{l} uses the axis {}; a TV layout has only {TID} and {VAL}",
                it.axis()
            )));
        }
    }
    Layout::concat(&modes)
}
