//! A small reference planner, obviously correct rather than minimal: for each destination device, the
//! distinct source regions (which partition the array) intersected with its region, each from the
//! device itself where it holds it, else from the first holder in mesh order.

#![allow(dead_code)]

pub mod run;

use std::ops::Range;

use axe_shard::{AxisUse, Collective, Local, Mesh, Plan, ReduceOp, Sharding, Transfer};

/// `s` held row-major on every device, as `t` elements.
pub fn row_major(s: Sharding, t: axe_xla::PrimitiveType) -> axe_reshard::Placement {
    axe_reshard::Placement::new(s, axe_reshard::MemoryLayout::RowMajor, t)
        .expect("a whole-byte type")
}

/// The partial mesh axes of a sharding, with their op.
pub fn partial(s: &Sharding) -> Vec<(usize, ReduceOp)> {
    s.partial_axes()
}

fn intersect(a: &[Range<u64>], b: &[Range<u64>]) -> Option<Vec<Range<u64>>> {
    let r: Vec<Range<u64>> = a
        .iter()
        .zip(b)
        .map(|(x, y)| x.start.max(y.start)..x.end.min(y.end))
        .collect();
    r.iter().all(|x| x.start < x.end).then_some(r)
}

/// The reference plan. Axes partial in both shardings must pend the same op; contributions along the
/// source's other partial axes are combined.
pub fn reference_plan(mesh: &Mesh, src: &Sharding, dst: &Sharding, elem: u64) -> Plan {
    let sr = src.regions(mesh).expect("source regions");
    let dr = dst.regions(mesh).expect("destination regions");
    let sp = partial(src);
    let dp = partial(dst);
    // Axes partial in both keep their contributions apart; axes partial in the source only are reduced;
    // off coordinate 0 of axes newly pending sum or product, a device holds the identity (no pieces).
    // Manual axes (manual in both) and axes partial in both: senders share the receiver's coordinates.
    let kept: Vec<usize> = dp
        .iter()
        .map(|p| p.0)
        .filter(|a| sp.iter().any(|p| p.0 == *a))
        .chain((0..mesh.rank()).filter(|&a| src.axis_use()[a] == AxisUse::Manual))
        .collect();
    let new: Vec<(usize, ReduceOp)> = dp
        .iter()
        .copied()
        .filter(|p| !kept.contains(&p.0))
        .collect();
    let op = sp.iter().find(|p| !kept.contains(&p.0)).map(|p| p.1);
    let fills = |pos: usize| {
        let c = mesh.coords(pos);
        new.iter()
            .any(|&(a, o)| matches!(o, ReduceOp::Sum | ReduceOp::Product) && c[a] != 0)
    };
    let sp_axes: Vec<usize> = sp.iter().map(|p| p.0).collect();
    let key = |pos: usize, axes: &[usize]| -> Vec<u64> {
        let c = mesh.coords(pos);
        axes.iter().map(|&a| c[a]).collect()
    };
    let mut transfers = Vec::new();
    let mut locals = Vec::new();
    for d in &dr {
        let gone = |s: &Sharding, dev: u64| s.maximal_device().is_some_and(|m| m != dev);
        if d.local_shape.contains(&0) || fills(d.position) || gone(dst, d.device) {
            continue;
        }
        // Groups of source devices by their coordinates on the source's partial axes, keeping those that
        // agree with this device on the destination's partial axes.
        let mut groups: Vec<Vec<u64>> = Vec::new();
        for s in &sr {
            if key(s.position, &kept) != key(d.position, &kept) {
                continue;
            }
            let k = key(s.position, &sp_axes);
            if !groups.contains(&k) {
                groups.push(k);
            }
        }
        for g in &groups {
            let members: Vec<_> = sr
                .iter()
                .filter(|s| &key(s.position, &sp_axes) == g)
                .filter(|s| key(s.position, &kept) == key(d.position, &kept))
                .filter(|s| !s.local_shape.contains(&0) && !gone(src, s.device))
                .collect();
            let mut seen: Vec<Vec<Range<u64>>> = Vec::new();
            for s in &members {
                if seen.contains(&s.region) {
                    continue;
                }
                seen.push(s.region.clone());
                let Some(piece) = intersect(&s.region, &d.region) else {
                    continue;
                };
                let holder = if members
                    .iter()
                    .any(|m| m.device == d.device && m.region == s.region)
                {
                    d.device
                } else {
                    s.device
                };
                if holder == d.device {
                    locals.push(Local {
                        device: d.device,
                        region: piece,
                        reduce: op,
                    });
                } else {
                    let bytes = piece.iter().map(|r| r.end - r.start).product::<u64>() * elem;
                    transfers.push(Transfer {
                        from: holder,
                        to: d.device,
                        region: piece,
                        bytes,
                        reduce: op,
                    });
                }
            }
        }
    }
    let bytes = transfers.iter().map(|t| t.bytes).sum();
    Plan {
        transfers,
        locals,
        collective: Collective::General,
        bytes,
        estimate_us: 0.0,
    }
}
