//! Divides and products: `logical_divide`, `zipped_divide`, `tiled_divide`, `flat_divide`,
//! `logical_product`, `zipped_product`, `tiled_product`, `flat_product`, `blocked_product`,
//! `raked_product`. Each is built from [`composition`] and [`complement`], whose laws are checked, so
//! each result obeys the law stated on it.

use crate::complement::{complement, complement_modes};
use crate::compose::{by_mode, compose_modes, composition, Tiler};
use crate::error::{mul, CuteError, Result};
use crate::layout::Layout;

fn logical_divide_one(a: &Layout, b: &Layout) -> Result<Layout> {
    let c = complement(b, a.size())?;
    composition(a, &Layout::concat_owned(vec![b.clone(), c])?)
}

fn logical_product_one(a: &Layout, b: &Layout) -> Result<Layout> {
    let bound = mul(a.size(), b.cosize()?)?;
    let mut c = complement_modes(a, bound)?;
    if c.is_empty() {
        c.push((1, 0));
    }
    let text = || Layout::from_modes(&c).map_or_else(|e| e.to_string(), |l| l.to_string());
    Layout::concat_owned(vec![a.clone(), compose_modes(&c, &text, b)?])
}

/// `logical_divide(A, T)`: for a layout tiler `B`, `A ∘ (B, B*)` with `B* = complement(B, size(A))`;
/// by mode for a tuple tiler.
///
/// **Law**: `R(c) = A((B, B*)(c))` for every `c` (the composition law), mode 0 of `R` is `A ∘ B`
/// (the elements of one tile) and mode 1 walks the tiles; `(B, B*)` is a bijection onto an interval
/// covering `[0, size(A))` (the complement law).
///
/// ```
/// use axe_cute::{logical_divide, Layout, Tiler};
/// let a: Layout = "(4,2,3):(2,1,8)".parse()?;
/// let t: Tiler = "4:2".parse()?;
/// assert_eq!(logical_divide(&a, &t)?.to_string(), "((2,2),(2,3)):((4,1),(2,8))");
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn logical_divide(a: &Layout, t: &Tiler) -> Result<Layout> {
    by_mode(a, t, &logical_divide_one)
}

/// `logical_product(A, T)`: for a layout tiler `B`, `(A, complement(A, size(A)·cosize(B)) ∘ B)`; by mode
/// for a tuple tiler.
///
/// **Law**: `R(c0, c1) = A(c0) + (A* ∘ B)(c1)` with `A* = complement(A, size(A)·cosize(B))`: mode 0 is
/// `A`, mode 1 places copies of `A` in the order `B` gives, never overlapping `A` (complement law) and
/// exactly `A* ∘ B` (composition law).
///
/// ```
/// use axe_cute::{logical_product, Layout, Tiler};
/// let a: Layout = "(2,2):(4,1)".parse()?;
/// let t: Tiler = "6:1".parse()?;
/// assert_eq!(logical_product(&a, &t)?.to_string(), "((2,2),(2,3)):((4,1),(2,8))");
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn logical_product(a: &Layout, t: &Tiler) -> Result<Layout> {
    by_mode(a, t, &logical_product_one)
}

/// Gathers the split modes of a hierarchical divide or product: `((T0,R0),(T1,R1),..,A_k..)` becomes
/// `((T0,T1,..),(R0,R1,..,A_k,..))`; for a layout tiler the rank-2 result itself.
fn hier_unzip(
    a: &Layout,
    t: &Tiler,
    op: &dyn Fn(&Layout, &Layout) -> Result<Layout>,
) -> Result<Layout> {
    match t {
        Tiler::Layout(b) => op(a, b),
        Tiler::Modes(v) => {
            crate::compose::tiler_fits(a, t, v)?;
            let modes = a.modes()?;
            let mut tiles = Vec::new();
            let mut rests = Vec::new();
            for (ai, ti) in modes.iter().zip(v) {
                let mut split = hier_unzip(ai, ti, op)?.into_modes().into_iter();
                match (split.next(), split.next()) {
                    (Some(t), Some(r)) => {
                        tiles.push(t);
                        rests.push(r);
                    }
                    _ => {
                        return Err(CuteError::RankMismatch(
                            "a divide or product of rank other than 2".into(),
                        ))
                    }
                }
            }
            rests.extend(modes.into_iter().skip(v.len()));
            Layout::concat_owned(vec![
                Layout::concat_owned(tiles)?,
                Layout::concat_owned(rests)?,
            ])
        }
    }
}

fn tiled(z: Layout) -> Result<Layout> {
    let mut zm = z.into_modes().into_iter();
    let mut modes: Vec<Layout> = zm.next().into_iter().collect();
    modes.extend(zm.flat_map(Layout::into_modes));
    Layout::concat_owned(modes)
}

fn flat(z: Layout) -> Result<Layout> {
    Layout::concat_owned(
        z.into_modes()
            .into_iter()
            .flat_map(Layout::into_modes)
            .collect(),
    )
}

/// `zipped_divide(A, T)`: [`logical_divide`] with the tile modes gathered into mode 0 and the rest into
/// mode 1: `((T0,T1,..),(R0,R1,..))`. **Law**: the same map as `logical_divide` with the modes regrouped
/// (every mode of the result is a mode of the logical divide).
///
/// ```
/// use axe_cute::{zipped_divide, Layout, Tiler};
/// let a: Layout = "(9,(4,8)):(59,(13,1))".parse()?;
/// let t: Tiler = "<3:3,(2,4):(1,8)>".parse()?;
/// assert_eq!(zipped_divide(&a, &t)?.to_string(), "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))");
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn zipped_divide(a: &Layout, t: &Tiler) -> Result<Layout> {
    hier_unzip(a, t, &logical_divide_one)
}

/// `tiled_divide(A, T)`: `zipped_divide` with the rest modes spread: `((T0,T1,..),R0,R1,..)`.
/// **Law**: as `zipped_divide`, regrouped.
pub fn tiled_divide(a: &Layout, t: &Tiler) -> Result<Layout> {
    tiled(zipped_divide(a, t)?)
}

/// `flat_divide(A, T)`: `zipped_divide` with both groups spread: `(T0,T1,..,R0,R1,..)`.
/// **Law**: as `zipped_divide`, regrouped.
pub fn flat_divide(a: &Layout, t: &Tiler) -> Result<Layout> {
    flat(zipped_divide(a, t)?)
}

/// `zipped_product(A, T)`: [`logical_product`] gathered as `((A0,A1,..),(P0,P1,..))`.
/// **Law**: as `logical_product`, regrouped.
pub fn zipped_product(a: &Layout, t: &Tiler) -> Result<Layout> {
    hier_unzip(a, t, &logical_product_one)
}

/// `tiled_product(A, T)`: `((A0,A1,..),P0,P1,..)`. **Law**: as `logical_product`, regrouped.
pub fn tiled_product(a: &Layout, t: &Tiler) -> Result<Layout> {
    tiled(zipped_product(a, t)?)
}

/// `flat_product(A, T)`: `(A0,A1,..,P0,P1,..)`. **Law**: as `logical_product`, regrouped.
pub fn flat_product(a: &Layout, t: &Tiler) -> Result<Layout> {
    flat(zipped_product(a, t)?)
}

/// Pads `l` to `r` top-level modes with `1:0`.
fn append_to_rank(l: &Layout, r: usize) -> Result<Layout> {
    let mut modes = l.modes()?;
    while modes.len() < r {
        modes.push(Layout::int(1, 0)?);
    }
    Layout::concat_owned(modes)
}

fn zip_product(a: &Layout, b: &Layout, block_first: bool) -> Result<Layout> {
    let r = a.rank().max(b.rank());
    let p = logical_product_one(&append_to_rank(a, r)?, &append_to_rank(b, r)?)?;
    let (pa, pb) = (p.mode(0)?.modes()?, p.mode(1)?.modes()?);
    let modes = pa
        .into_iter()
        .zip(pb)
        .map(|(x, y)| {
            if block_first {
                Layout::concat_owned(vec![x, y])
            } else {
                Layout::concat_owned(vec![y, x])
            }
        })
        .collect::<Result<Vec<_>>>()?;
    // CuTe coalesces each mode (profile `(1,…,1)`): same map, same mode sizes.
    let profile = crate::IntTuple::Tuple(vec![crate::IntTuple::Int(1); modes.len()]);
    Layout::concat_owned(modes)?.coalesce_by(&profile)
}

/// `blocked_product(A, B)`: with both padded to rank `r = max(rank A, rank B)` by `1:0` modes and
/// `P = logical_product(A, B) = (A, C)`, the result's mode `i` is `(A_i, C_i)`: a block `A` repeated
/// over `B`'s grid, `A`'s index fastest.
///
/// Each mode is then coalesced, as CuTe does (mode `i` keeps its size; an index `a_i + size(A_i)·c_i`
/// within it is the pair `(a_i, c_i)`).
///
/// **Law**: `R((a_i + size(A_i)·c_i)_i) = A(a) + C(c)`, the `logical_product` map with the modes
/// zipped.
///
/// ```
/// use axe_cute::{blocked_product, Layout};
/// let a: Layout = "(2,5):(5,1)".parse()?;
/// let b: Layout = "(3,4):(1,3)".parse()?;
/// assert_eq!(blocked_product(&a, &b)?.to_string(), "(6,(5,4)):(5,(1,30))");
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn blocked_product(a: &Layout, b: &Layout) -> Result<Layout> {
    zip_product(a, b, true)
}

/// `raked_product(A, B)`: as [`blocked_product`] with each mode `(C_i, A_i)`: `A`'s elements raked
/// across the copies, the copy index fastest.
///
/// **Law**: `R((c_i + size(C_i)·a_i)_i) = A(a) + C(c)` (each mode coalesced, as for
/// [`blocked_product`]).
///
/// ```
/// use axe_cute::{raked_product, Layout};
/// let a: Layout = "(2,5):(5,1)".parse()?;
/// let b: Layout = "(3,4):(1,3)".parse()?;
/// assert_eq!(raked_product(&a, &b)?.to_string(), "((3,2),(4,5)):((10,5),(30,1))");
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn raked_product(a: &Layout, b: &Layout) -> Result<Layout> {
    zip_product(a, b, false)
}
