//! Reshard plans between two shardings read from `SRC|DST` (any notations) of an `f32[6,12]` on a 2×4
//! mesh: a plan is made or refused, never a panic; where nothing is reduced or filled with an identity,
//! every device receives each element of its destination region exactly once (from its own source
//! shard or in one message) and nothing else, and every sender holds what it sends.
#![no_main]
use axe_shard::{identity_fills, parse_pair, plan, Collective, CostModel, Mesh};
use libfuzzer_sys::fuzz_target;
use std::ops::Range;

fuzz_target!(|text: &str| {
    let Some((a, b)) = text.split_once('|') else {
        return;
    };
    let Ok(mesh) = Mesh::new(&[("x", 2), ("y", 4)]) else {
        return;
    };
    let dims = [6u64, 12];
    let Ok((mesh, src, dst)) = parse_pair(a, b, None, Some(&mesh), &dims) else {
        return;
    };
    let Ok(p) = plan(&mesh, &src, &dst, 4, &CostModel::default()) else {
        return;
    };
    let fills = identity_fills(&mesh, &src, &dst).expect("fills of a sharding pair that plans");
    if !fills.is_empty()
        || p.transfers.iter().any(|t| t.reduce.is_some())
        || p.locals.iter().any(|l| l.reduce.is_some())
    {
        return;
    }
    let held = src.regions(&mesh).expect("source regions");
    let wanted = dst.regions(&mesh).expect("destination regions");
    if p.collective == Collective::None {
        // Nothing moves or is copied: every device already holds its destination region.
        for (h, w) in held.iter().zip(&wanted) {
            assert_eq!(
                (h.device, &h.region),
                (w.device, &w.region),
                "{a} -> {b}: no plan, but regions differ"
            );
        }
        return;
    }
    let region_of = |regions: &[axe_shard::DeviceRegion], device: u64| -> Vec<Range<u64>> {
        regions
            .iter()
            .find(|r| r.device == device)
            .expect("a device of the mesh")
            .region
            .clone()
    };
    let inside = |inner: &[Range<u64>], outer: &[Range<u64>]| {
        inner
            .iter()
            .zip(outer)
            .all(|(i, o)| i.is_empty() || (o.start <= i.start && i.end <= o.end))
    };
    for t in &p.transfers {
        assert!(
            inside(&t.region, &region_of(&held, t.from)),
            "{a} -> {b}: device {} sends {:?} it does not hold",
            t.from,
            t.region
        );
    }
    for l in &p.locals {
        assert!(
            inside(&l.region, &region_of(&held, l.device)),
            "{a} -> {b}: device {} copies {:?} it does not hold",
            l.device,
            l.region
        );
    }
    for w in &wanted {
        let mut count = vec![0u32; (dims[0] * dims[1]) as usize];
        let boxes = p
            .locals
            .iter()
            .filter(|l| l.device == w.device)
            .map(|l| &l.region)
            .chain(
                p.transfers
                    .iter()
                    .filter(|t| t.to == w.device)
                    .map(|t| &t.region),
            );
        for r in boxes {
            for i in r[0].clone() {
                for j in r[1].clone() {
                    count[(i * dims[1] + j) as usize] += 1;
                }
            }
        }
        for i in 0..dims[0] {
            for j in 0..dims[1] {
                let expect = u32::from(w.region[0].contains(&i) && w.region[1].contains(&j));
                assert_eq!(
                    count[(i * dims[1] + j) as usize],
                    expect,
                    "{a} -> {b}: device {} gets element ({i}, {j}) {} times",
                    w.device,
                    count[(i * dims[1] + j) as usize]
                );
            }
        }
    }
});
