//! The verifying pattern for sources partial with different ops on different mesh axes.
//!
//! Such a source holds `opk over ak ( … op1 over a1 (parts))` for its partial axes `a1 < … < ak` in mesh
//! order (see `axe_shard::plan_stages`). The pattern is split from the outside in: the base value of
//! element `i` is split into `ak`'s parts under `opk`, each of those into `a(k-1)`'s parts, and so on, so
//! that reducing the axes in mesh order gives the base back. A destination keeping some partial axes
//! (partial in both) holds, per element, the reduction of the others with its own coordinates on those.

use axe_shard::{AxisUse, Mesh, ReduceOp, Sharding};
use axe_xla::PrimitiveType;

use crate::exec_error::{ExecError, ExecResult};
use crate::placement::{filled, Placement};
use crate::verify::{
    base, check_shard, combine, each_element, is_float, is_int, manual_shift, slots, split, Value,
};

/// The partial mesh axes of `s` in mesh order, with their ops.
fn partial(s: &Sharding) -> Vec<(usize, ReduceOp)> {
    s.partial_axes()
}

/// Whether `s` has partial axes pending more than one op.
pub(crate) fn mixed(s: &Sharding) -> bool {
    let p = partial(s);
    p.iter().any(|&(_, op)| op != p[0].1)
}

/// The value a device at `coords` holds of element `i` (pattern index): the parts along the axes
/// `axes` split out of `v` (the value above them), those where `keep` taking the device's own
/// coordinate, the others reduced with their op. Part `j` of an axis is the split's part
/// `(j + salt) % n`, `salt` being the sum of the coordinates chosen on the axes above, so the member
/// holding the largest part of a `max` differs from one outer part to the next (reducing in another order
/// then gives another value). Law: with no axis kept it is `v`; with every axis kept it is the device's
/// part, and reducing those parts in mesh order gives `v`.
fn held(
    t: PrimitiveType,
    i: u64,
    v: Value,
    axes: &[(usize, ReduceOp, u64, bool)],
    coords: &[u64],
    salt: u64,
) -> Value {
    let Some((&(a, op, n, keep), inner)) = axes.split_last() else {
        return v;
    };
    let part = |j: u64| {
        let p = split(t, v, i, (j + salt) % n, n, Some(op));
        held(t, i, p, inner, coords, salt + j)
    };
    if keep {
        return part(coords[a]);
    }
    combine((0..n).map(part), op)
}

/// The partial axes of `src` with their op, size, and whether `keep(axis)`.
fn axes_of(
    mesh: &Mesh,
    src: &Sharding,
    keep: impl Fn(usize) -> bool,
) -> Vec<(usize, ReduceOp, u64, bool)> {
    partial(src)
        .into_iter()
        .map(|(a, op)| (a, op, mesh.sizes()[a], keep(a)))
        .collect()
}

fn numeric(t: PrimitiveType) -> ExecResult<()> {
    if is_float(t) || is_int(t) {
        Ok(())
    } else {
        Err(ExecError::Input(format!(
            "partial values of {} cannot be reduced",
            t.name()
        )))
    }
}

/// [`crate::fill_source`] for a source with mixed ops: device `device` holds its part of every element,
/// split from the pattern axis by axis from the last partial axis in (module doc). Padding is zero.
pub(crate) fn fill_nested(mesh: &Mesh, src: &Placement, device: u64) -> ExecResult<Vec<u8>> {
    let b = src.buffer(mesh, device)?;
    let t = src.dtype;
    numeric(t)?;
    let w = src.elem_bytes() as usize;
    let coords = mesh.coords(b.region.position);
    let axes = axes_of(mesh, &src.sharding, |_| true);
    let shift = manual_shift(mesh, &src.sharding, &coords);
    let mut buf = filled(b.bytes()?, 0)?;
    if !b.holds {
        return Ok(buf);
    }
    let dims = src.sharding.dims().to_vec();
    each_element(&dims, Some(&b.region), |i, _, local| {
        let i = i.wrapping_add(shift);
        let v = held(t, i, base(t, i), &axes, &coords, 0).bytes(t, w);
        for s in slots(&b, local, w) {
            buf[s..s + w].copy_from_slice(v.as_slice());
        }
        Ok(())
    })?;
    Ok(buf)
}

/// [`crate::check_destination`] for a source with mixed ops: every element of device `device`'s region
/// equals the source's partial axes not partial in the destination reduced in mesh order, the others at
/// the device's coordinates (or, off coordinate 0 of an axis newly pending sum or product, that op's
/// identity), in every copy; every other byte is zero.
pub(crate) fn check_nested(
    mesh: &Mesh,
    src: &Placement,
    dst: &Placement,
    device: u64,
    buf: &[u8],
) -> ExecResult<()> {
    let b = dst.buffer(mesh, device)?;
    let t = dst.dtype;
    numeric(t)?;
    let w = dst.elem_bytes() as usize;
    let coords = mesh.coords(b.region.position);
    let d_use = dst.sharding.axis_use();
    let kept = |a: usize| matches!(d_use.get(a), Some(AxisUse::Partial(_)));
    let axes = axes_of(mesh, &src.sharding, kept);
    let s_use = src.sharding.axis_use();
    let identity = (0..d_use.len()).find_map(|a| match (s_use.get(a), d_use[a]) {
        (Some(AxisUse::Partial(_)), _) => None,
        (_, AxisUse::Partial(o @ (ReduceOp::Sum | ReduceOp::Product))) if coords[a] != 0 => {
            Some(Value::Int(i64::from(o == ReduceOp::Product)).to(t))
        }
        _ => None,
    });
    let shift = manual_shift(mesh, &dst.sharding, &coords);
    check_shard(buf, &b, &dst.sharding, w, device, |i| {
        let i = i.wrapping_add(shift);
        identity
            .unwrap_or_else(|| held(t, i, base(t, i), &axes, &coords, 0))
            .bytes(t, w)
    })
}
