//! The hardware → tensor map of an Axe layout over hardware axes, for any sizes.
//!
//! A linear layout lists, for every hardware input, the tensor coordinates it holds. The same listing
//! exists for an Axe layout over `reg`/`lane`/`warp`/`block` whose sizes are not powers of two (a 48×64
//! tensor under a `BlockedLayout`), where no linear layout does: invert the Axe layout by enumeration.

use crate::axe::axis_of;
use crate::error::{Result, TritonError};
use crate::linear::MAX_MAP;
use axe_layout::Layout;

/// Every hardware input of an Axe layout and the tensor coordinates it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HardwareMap {
    /// The in-dims in order (first fastest) with their sizes: one more than the largest coordinate the
    /// layout uses on each (1 for an in-dim it does not use).
    pub in_dims: Vec<(String, u64)>,
    /// `map[k]`: the tensor coordinates (row-major over the shape) held by flat input `k`, first in-dim
    /// fastest.
    pub map: Vec<Vec<u64>>,
}

/// The map `k ↦ t` with `h(k) ∈ A(t)`, where `A` is `layout` over `shape` and `h(k)` unpacks `k` over the
/// in-dims (first fastest). Law: `map[k] = t` exactly when the layout places tensor element `t` at
/// hardware input `k`. Errors when an input holds no element or two (then it is not a map), when the layout
/// uses an axis that is not one of `in_dims` or has an offset, or when there are more than [`MAX_MAP`]
/// inputs or elements to list.
pub fn hardware_map(layout: &Layout, shape: &[u64], in_dims: &[&str]) -> Result<HardwareMap> {
    let size = layout.size();
    let shape_size = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    if shape_size != Some(size) {
        return Err(TritonError::Mismatch(format!(
            "the layout has {size} elements, the shape {shape:?} {}",
            shape_size.map_or("more than 2^64".to_string(), |s| s.to_string())
        )));
    }
    if size > MAX_MAP {
        return Err(TritonError::TooLarge(format!(
            "{size} elements to list (at most {MAX_MAP})"
        )));
    }
    let axes = in_dims
        .iter()
        .map(|d| axis_of(d))
        .collect::<Result<Vec<_>>>()?;
    if let Some(a) = layout.axes().into_iter().find(|a| !axes.contains(a)) {
        return Err(TritonError::NotExpressible(format!(
            "axis {a} is not one of the in-dims {}",
            in_dims.join(", ")
        )));
    }
    // Homes of every element, and the extent of each in-dim.
    let mut homes = Vec::with_capacity(size as usize);
    let mut extent = vec![1u64; axes.len()];
    for x in 0..size {
        let mut hs = Vec::new();
        for c in layout.apply(x)? {
            let mut h = Vec::with_capacity(axes.len());
            for (i, a) in axes.iter().enumerate() {
                let v = u64::try_from(c.get(a)).map_err(|_| {
                    TritonError::NotExpressible(format!(
                        "element {x} sits at a negative {a} coordinate"
                    ))
                })?;
                extent[i] = extent[i].max(v + 1);
                h.push(v);
            }
            hs.push(h);
        }
        homes.push(hs);
    }
    let inputs = extent
        .iter()
        .try_fold(1u64, |a, &e| a.checked_mul(e))
        .filter(|&n| n <= MAX_MAP);
    let inputs = inputs.ok_or_else(|| {
        TritonError::TooLarge(format!(
            "hardware extents {extent:?}: more than {MAX_MAP} inputs"
        ))
    })?;
    let mut map: Vec<Option<Vec<u64>>> = vec![None; inputs as usize];
    for (x, hs) in homes.into_iter().enumerate() {
        let t = unflatten(x as u64, shape);
        for h in hs {
            let k = h
                .iter()
                .zip(&extent)
                .rev()
                .fold(0u64, |k, (&v, &e)| k * e + v) as usize;
            if map[k].is_some() {
                return Err(TritonError::NotInjective(format!(
                    "hardware input {k} holds two elements; a map gives each input one"
                )));
            }
            map[k] = Some(t.clone());
        }
    }
    let map = map
        .into_iter()
        .enumerate()
        .map(|(k, t)| {
            t.ok_or_else(|| {
                TritonError::NotExpressible(format!(
                    "hardware input {k} holds no element (the extents {extent:?} are not filled)"
                ))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let in_dims = in_dims.iter().map(|d| d.to_string()).zip(extent).collect();
    Ok(HardwareMap { in_dims, map })
}

/// Row-major coordinates of flat index `x` over `shape` (the last dim fastest).
fn unflatten(mut x: u64, shape: &[u64]) -> Vec<u64> {
    let mut t = vec![0; shape.len()];
    for (i, &d) in shape.iter().enumerate().rev() {
        t[i] = x % d;
        x /= d;
    }
    t
}
