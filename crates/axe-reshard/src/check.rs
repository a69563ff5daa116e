//! What a reshard must do beyond moving values (pending reductions to combine, identities to fill), and
//! the checks a plan must pass before any byte moves.

use std::ops::Range;

use axe_shard::{AxisUse, DeviceRegion, Mesh, Plan, ReduceOp, Sharding};

use crate::exec_error::{dims_text, region_text, ExecError, ExecResult};
use crate::placement::Placement;
use crate::reduce::Elem;

/// The partial values a reshard between two shardings deals with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pending {
    /// Mesh axes partial in the source only are reduced: the op, and the contributions each destination
    /// element combines (the product of those axes' sizes).
    pub reduce: Option<(ReduceOp, u64)>,
    /// Mesh axes partial in the destination only, pending `sum` or `product`: the op and the axes. Devices
    /// off coordinate 0 of any of them hold the op's identity (for `avg`, `max` and `min` every device
    /// keeps the values, which needs nothing here).
    pub fill: Option<(ReduceOp, Vec<usize>)>,
}

impl Pending {
    /// The pending work of resharding `src` to `dst` on `mesh`. Axes partial in both must pend the same
    /// op (their contributions move unchanged); reduced axes must share one op, and so must new ones.
    pub(crate) fn of(mesh: &Mesh, src: &Sharding, dst: &Sharding) -> ExecResult<Pending> {
        let mut reduce: Option<(ReduceOp, u64)> = None;
        let mut into: Option<(ReduceOp, Vec<usize>)> = None;
        let differ = |what: &str, a: ReduceOp, b: ReduceOp| {
            ExecError::Input(format!(
                "{what} pend different ops ({} and {})",
                a.name(),
                b.name()
            ))
        };
        for (a, (s, d)) in src.axis_use().iter().zip(dst.axis_use()).enumerate() {
            match (s, d) {
                (AxisUse::Partial(o), AxisUse::Partial(p)) if o != p => {
                    return Err(differ(
                        &format!("mesh axis {a}'s source and destination"),
                        *o,
                        *p,
                    ))
                }
                (AxisUse::Partial(_), AxisUse::Partial(_)) => {}
                (_, AxisUse::Partial(p)) => match &mut into {
                    Some((q, _)) if q != p => {
                        return Err(differ("the destination's new partial axes", *q, *p))
                    }
                    Some((_, axes)) => axes.push(a),
                    None => into = Some((*p, vec![a])),
                },
                (AxisUse::Partial(o), _) => {
                    let size = mesh.sizes().get(a).copied().unwrap_or(1);
                    reduce = match reduce {
                        Some((p, _)) if p != *o => {
                            return Err(differ("the source's reduced partial axes", p, *o))
                        }
                        Some((p, k)) => Some((p, k.saturating_mul(size))),
                        None => Some((*o, size)),
                    };
                }
                _ => {}
            }
        }
        let fill = into.filter(|(op, _)| matches!(op, ReduceOp::Sum | ReduceOp::Product));
        Ok(Pending { reduce, fill })
    }

    /// Whether the device at mesh position `pos` holds the identity of the new partial op.
    pub(crate) fn fills(&self, mesh: &Mesh, pos: usize) -> bool {
        self.fill.as_ref().is_some_and(|(_, axes)| {
            let c = mesh.coords(pos);
            axes.iter().any(|&a| c[a] != 0)
        })
    }
}

/// Elements of a shape (saturating: no buffer that large exists, so it fails a later check).
pub(crate) fn volume(shape: &[u64]) -> u64 {
    shape.iter().fold(1u64, |a, &d| a.saturating_mul(d))
}

/// Elements of a box (saturating, as [`volume`]).
pub(crate) fn volume_of(region: &[Range<u64>]) -> u64 {
    region
        .iter()
        .fold(1u64, |a, r| a.saturating_mul(r.end.saturating_sub(r.start)))
}

/// The global box `region` in the local indices of a device holding `held`, which must contain it.
pub(crate) fn localize(region: &[Range<u64>], held: &DeviceRegion) -> ExecResult<Vec<Range<u64>>> {
    if region.len() != held.region.len() {
        return Err(ExecError::Plan(format!(
            "a region of {} dims in an array of {}",
            region.len(),
            held.region.len()
        )));
    }
    region
        .iter()
        .zip(&held.region)
        .map(|(r, h)| {
            if r.start < h.start || r.end > h.end || r.start >= r.end {
                Err(ExecError::Plan(format!(
                    "region {} is empty or not within device {}'s {}",
                    region_text(region),
                    held.device,
                    region_text(&held.region)
                )))
            } else {
                Ok(r.start - h.start..r.end - h.start)
            }
        })
        .collect()
}

/// What a rank of a reshard works from, its inputs checked: each sharding's regions indexed by device
/// id, the pending work and the bytes per element.
pub(crate) struct Checked {
    pub src_regions: Vec<DeviceRegion>,
    pub dst_regions: Vec<DeviceRegion>,
    pub pending: Pending,
    pub elem: u64,
}

/// The checks of a reshard on `n` ranks that are the same on every rank: one rank per device, one
/// array and element type, the pending ops, and (where `whole`) the plan whole with [`check_plan`].
pub(crate) fn checked(
    n: usize,
    mesh: &Mesh,
    plan: &Plan,
    src: &Placement,
    dst: &Placement,
    whole: bool,
) -> ExecResult<Checked> {
    if n != mesh.len() {
        return Err(ExecError::Input(format!(
            "a mesh of {} devices on {n} ranks (one rank per device)",
            mesh.len()
        )));
    }
    if let Some(&d) = mesh.devices().iter().find(|&&d| d >= n as u64) {
        return Err(ExecError::Input(format!(
            "device id {d} has no rank (rank r hosts device r; ids must be below {n})"
        )));
    }
    if src.sharding.dims() != dst.sharding.dims() {
        return Err(ExecError::Input(format!(
            "the source is an array of {}, the destination of {}",
            dims_text(src.sharding.dims()),
            dims_text(dst.sharding.dims())
        )));
    }
    if src.dtype != dst.dtype {
        return Err(ExecError::Input(format!(
            "the source holds {}, the destination {}",
            src.dtype.name(),
            dst.dtype.name()
        )));
    }
    let src_regions = by_device(src.sharding.regions(mesh)?, n)?;
    let dst_regions = by_device(dst.sharding.regions(mesh)?, n)?;
    let elem = src.elem_bytes();
    let pending = Pending::of(mesh, &src.sharding, &dst.sharding)?;
    if pending.reduce.is_some() || pending.fill.is_some() {
        Elem::of(dst.dtype)?;
    }
    let maximal = (src.sharding.maximal_device(), dst.sharding.maximal_device());
    if whole {
        check_plan(
            mesh,
            plan,
            &src_regions,
            &dst_regions,
            elem,
            &pending,
            maximal,
        )?;
    }
    Ok(Checked {
        src_regions,
        dst_regions,
        pending,
        elem,
    })
}

/// The regions indexed by device id (`0..n`, each once).
fn by_device(regions: Vec<DeviceRegion>, n: usize) -> ExecResult<Vec<DeviceRegion>> {
    let mut out: Vec<Option<DeviceRegion>> = vec![None; n];
    for r in regions {
        let d = r.device as usize;
        match out.get_mut(d) {
            Some(slot) => *slot = Some(r),
            None => return Err(ExecError::Input(format!("device id {d} has no rank"))),
        }
    }
    out.into_iter()
        .enumerate()
        .map(|(d, r)| r.ok_or_else(|| ExecError::Input(format!("rank {d} hosts no device"))))
        .collect()
}

/// Checks `plan` against the shardings' regions (indexed by device id): devices in range, no message to
/// oneself, every region inside the sender's source and the receiver's destination, bytes matching,
/// every piece combined with the reduced op exactly when the reshard reduces, and each device's
/// destination region covered in volume once, once per contribution when it reduces, or not at all
/// where it holds an identity.
pub(crate) fn check_plan(
    mesh: &Mesh,
    plan: &Plan,
    src: &[DeviceRegion],
    dst: &[DeviceRegion],
    elem: u64,
    pending: &Pending,
    maximal: (Option<u64>, Option<u64>),
) -> ExecResult<()> {
    let n = src.len() as u64;
    // A maximal sharding's other devices hold nothing (even where their region, a scalar's `[]`,
    // cannot say so).
    let empty = |m: Option<u64>, d: u64| m.is_some_and(|m| m != d);
    let holds = |from: u64, to: Option<u64>| -> ExecResult<()> {
        if empty(maximal.0, from) {
            return Err(ExecError::Plan(format!(
                "device {from} holds nothing of the maximal source"
            )));
        }
        if let Some(to) = to.filter(|&to| empty(maximal.1, to)) {
            return Err(ExecError::Plan(format!(
                "device {to} holds nothing of the maximal destination"
            )));
        }
        Ok(())
    };
    let reduce = pending.reduce;
    let mut got = vec![0u64; src.len()];
    let mut piece = |to: u64, region: &[Range<u64>], op: Option<ReduceOp>| -> ExecResult<()> {
        if op != reduce.map(|r| r.0) {
            return Err(ExecError::Plan(format!(
                "a piece of {} for device {to} is {} but the reshard {}",
                region_text(region),
                op.map_or("stored".to_string(), |o| format!(
                    "combined by {}",
                    o.name()
                )),
                reduce.map_or("stores every element".to_string(), |r| format!(
                    "combines {} contributions by {}",
                    r.1,
                    r.0.name()
                ))
            )));
        }
        got[to as usize] = got[to as usize].saturating_add(volume_of(region));
        Ok(())
    };
    for t in &plan.transfers {
        if t.from >= n || t.to >= n || t.from == t.to {
            return Err(ExecError::Plan(format!(
                "a transfer from device {} to device {} on {n} devices",
                t.from, t.to
            )));
        }
        // A scalar's regions are `[]` on every device, holding or not, so a planner may send it to a
        // device a maximal destination leaves empty: received and dropped.
        let dropped = t.region.is_empty() && empty(maximal.1, t.to);
        holds(t.from, (!dropped).then_some(t.to))?;
        localize(&t.region, &src[t.from as usize])?;
        localize(&t.region, &dst[t.to as usize])?;
        let bytes = volume_of(&t.region).checked_mul(elem);
        if bytes != Some(t.bytes) {
            return Err(ExecError::Plan(format!(
                "a transfer of {} claims {} bytes; its {}-byte elements make {}",
                region_text(&t.region),
                t.bytes,
                elem,
                bytes.map_or("more than 2^64".to_string(), |b| b.to_string())
            )));
        }
        if !dropped {
            piece(t.to, &t.region, t.reduce)?;
        }
    }
    for l in &plan.locals {
        if l.device >= n {
            return Err(ExecError::Plan(format!(
                "a local copy on device {}",
                l.device
            )));
        }
        if l.region.is_empty() && empty(maximal.1, l.device) {
            continue; // a scalar copied into a device holding nothing: skipped
        }
        holds(l.device, Some(l.device))?;
        localize(&l.region, &src[l.device as usize])?;
        localize(&l.region, &dst[l.device as usize])?;
        piece(l.device, &l.region, l.reduce)?;
    }
    let k = reduce.map_or(1, |r| r.1);
    for (d, region) in dst.iter().enumerate() {
        let want = if pending.fills(mesh, region.position) || empty(maximal.1, d as u64) {
            0
        } else {
            volume(&region.local_shape).saturating_mul(k)
        };
        if got[d] != want {
            return Err(ExecError::Plan(format!(
                "device {d} gets {} elements where its region of {} needs {want}",
                got[d],
                volume(&region.local_shape)
            )));
        }
    }
    Ok(())
}

/// Checks that the pieces `plan` gives device `device` (whose destination shard is `db`) cover its
/// region exactly: each element once, or, when the reshard reduces `k` contributions, each distinct
/// piece `k` times and the distinct pieces each element once. Work and memory: one bit per element.
pub(crate) fn check_cover(
    plan: &Plan,
    device: u64,
    db: &crate::placement::DeviceBuffer,
    pending: &Pending,
) -> ExecResult<()> {
    if !db.holds {
        return Ok(());
    }
    let shape = &db.region.local_shape;
    let elements = usize::try_from(volume(shape))
        .map_err(|_| ExecError::Input("a shard does not fit in memory".into()))?;
    let mut seen = vec![0u64; elements.div_ceil(64)];
    let mut times: std::collections::HashMap<&[Range<u64>], u64> = Default::default();
    let pieces = plan
        .transfers
        .iter()
        .filter(|t| t.to == device)
        .map(|t| t.region.as_slice())
        .chain(
            plan.locals
                .iter()
                .filter(|l| l.device == device)
                .map(|l| l.region.as_slice()),
        );
    let mut twice = None;
    for region in pieces {
        let n = times.entry(region).or_insert(0);
        *n += 1;
        if *n > 1 && pending.reduce.is_some() {
            continue; // another contribution to a piece already placed
        }
        let local = localize(region, &db.region)?;
        crate::exec::for_rows(shape, &local, |at, _, len| {
            if let Some(e) = mark(&mut seen, at, len) {
                twice.get_or_insert(e);
            }
        });
        if let Some(e) = twice {
            return Err(ExecError::Plan(format!(
                "device {device}'s element {e} (row-major in its shard) is covered twice"
            )));
        }
    }
    let k = pending.reduce.map_or(1, |r| r.1);
    if let Some((region, n)) = times.iter().find(|(_, &n)| n != k) {
        return Err(ExecError::Plan(format!(
            "device {device} gets the piece {} {n} times where the reshard combines {k}",
            region_text(region)
        )));
    }
    Ok(())
}

/// Sets bits `start..start + len` of `bits`, a word at a time; returns the first that was already set.
fn mark(bits: &mut [u64], start: usize, len: usize) -> Option<usize> {
    let end = start + len;
    let mut first = None;
    let mut e = start;
    while e < end {
        let word = e / 64;
        let lo = e % 64;
        let hi = (end - word * 64).min(64);
        let mask = if hi - lo == 64 {
            u64::MAX
        } else {
            ((1u64 << (hi - lo)) - 1) << lo
        };
        let clash = bits[word] & mask;
        if clash != 0 && first.is_none() {
            first = Some(word * 64 + clash.trailing_zeros() as usize);
        }
        bits[word] |= mask;
        e = word * 64 + hi;
    }
    first
}

#[cfg(test)]
mod tests {
    use super::mark;

    #[test]
    fn marks_ranges_word_by_word() {
        let mut bits = vec![0u64; 3];
        assert_eq!(mark(&mut bits, 3, 130), None);
        // Brute force: bits 3..133 set, nothing else.
        for e in 0..192 {
            assert_eq!(
                bits[e / 64] >> (e % 64) & 1 == 1,
                (3..133).contains(&e),
                "bit {e}"
            );
        }
        assert_eq!(mark(&mut bits, 133, 10), None);
        assert_eq!(mark(&mut bits, 140, 20), Some(140));
        assert_eq!(mark(&mut bits, 0, 3), None);
        assert_eq!(mark(&mut bits, 0, 1), Some(0));
        assert_eq!(mark(&mut bits, 64, 64), Some(64));
    }
}
