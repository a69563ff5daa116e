//! HloSharding text read with no mesh brings a mesh of its own without the tile grid's size-1 dims
//! (`parse_hlo_own`, what `parse_any` reads with no mesh): no notation names an axis of one device, and
//! every device holds what it held on the mesh of one axis per grid dim (`parse_hlo`).
//!
//! Random HloShardings with size-1 tile dims (tensor dims and subgroups: replicated, manual, unreduced;
//! iotas with transposes and explicit device lists; uneven dims), each read both ways: the same device ids
//! in the same positions, the same region, replica group, local and padded shape on every device, the same
//! manual and partial axes, no axis of size 1 but manual or partial ones, and text that reads back to the
//! same regions. A case that no longer drops anything, or drops a dim the grid needs, fails.
#![allow(clippy::unwrap_used, clippy::panic)]

use axe_shard::notation::hlo::{parse_hlo, parse_hlo_own, to_hlo};
use axe_shard::{parse_any, print, AxisUse, Mesh, Notation, Sharding};

mod common;
use common::Rng;

fn join<T: ToString>(v: &[T]) -> String {
    v.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

/// A random tiled HloSharding of `rank` dims over `n` devices, and its grid.
fn random_hlo(rng: &mut Rng, n: u64, rank: usize) -> (String, Vec<u64>) {
    // Subgroups in XLA's order: manual, unreduced, replicated.
    let kinds: Vec<&str> = ["manual", "unreduced", "replicated"]
        .into_iter()
        .filter(|_| rng.below(3) == 0)
        .collect();
    let grid = rng.factors(n, rank + kinds.len());
    let grid = if grid.len() > rank + kinds.len() {
        // (`factors` gives one dim at least: a rank-0 array with no subgroup.)
        grid[..rank + kinds.len()].to_vec()
    } else {
        grid
    };
    let devices = if n == 1 || rng.below(2) == 0 {
        let k = 1 + rng.below(3) as usize;
        let reshape = rng.factors(n, k);
        let mut perm: Vec<usize> = (0..k).collect();
        rng.shuffle(&mut perm);
        if k == 1 {
            format!("<=[{n}]")
        } else {
            format!("<=[{}]T({})", join(&reshape), join(&perm))
        }
    } else {
        let mut list: Vec<u64> = (0..n).collect();
        rng.shuffle(&mut list);
        join(&list)
    };
    let suffix = match kinds.as_slice() {
        [] => String::new(),
        ["replicated"] if rng.below(2) == 0 => " last_tile_dim_replicate".into(),
        k => format!(" last_tile_dims={{{}}}", k.join(", ")),
    };
    (
        format!("{{devices=[{}]{devices}{suffix}}}", join(&grid)),
        grid,
    )
}

/// The manual axes' count and the partial axes' ops of `s`, sorted.
fn uses(s: &Sharding) -> (usize, Vec<&'static str>) {
    let manual = s
        .axis_use()
        .iter()
        .filter(|u| **u == AxisUse::Manual)
        .count();
    let mut ops: Vec<&str> = s.partial_axes().iter().map(|(_, op)| op.name()).collect();
    ops.sort_unstable();
    (manual, ops)
}

/// One case: `parse_hlo_own` against `parse_hlo`, and `parse_any` with no mesh equal to `parse_hlo_own`.
/// Returns whether the grid had a size-1 dim that the reading left out.
fn check(text: &str, grid: &[u64], dims: &[u64]) -> bool {
    let (m0, s0) = parse_hlo(text, dims, None).unwrap_or_else(|e| panic!("{text}: {e}"));
    let (m1, s1) = parse_hlo_own(text, dims, None).unwrap_or_else(|e| panic!("{text}: {e}"));
    let any = parse_any(text, None, None, dims).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(
        any,
        (m1.clone(), s1.clone()),
        "{text}: parse_any with no mesh"
    );
    assert_eq!(m1.devices(), m0.devices(), "{text}: device ids by position");
    let (r0, r1) = (s0.regions(&m0).unwrap(), s1.regions(&m1).unwrap());
    assert_eq!(r0, r1, "{text} over {dims:?}: regions on {m0:?} and {m1:?}");
    assert_eq!(uses(&s0), uses(&s1), "{text}: manual and partial axes");
    let one_device = m0.len() == 1;
    for (a, (&size, u)) in m1.sizes().iter().zip(s1.axis_use()).enumerate() {
        let kept = size > 1 || matches!(u, AxisUse::Manual | AxisUse::Partial(_)) || one_device;
        assert!(
            kept,
            "{text}: axis {} of size 1 kept ({m1:?})",
            m1.names()[a]
        );
    }
    // Each notation that can write it names only the axes kept; its text reads back to the same regions.
    let back = to_hlo(&m1, &s1).unwrap_or_else(|e| panic!("{text}: {e}"));
    let (mb, sb) = parse_any(&back, None, Some(&m1), dims).unwrap();
    assert_eq!(sb.regions(&mb).unwrap(), r1, "{text} printed {back}");
    // (Who holds what: DTensor's reading cuts by `torch.chunk`, which pads nothing.)
    let held = |r: &[axe_shard::DeviceRegion]| -> Vec<_> {
        r.iter()
            .map(|d| (d.device, d.region.clone(), d.replica_group.clone()))
            .collect()
    };
    for n in [
        Notation::Jax,
        Notation::Alpa,
        Notation::Dtensor,
        Notation::Sdy,
    ] {
        if let Ok(t) = print(n, &m1, &s1) {
            let (mt, st) = parse_any(&t, Some(n), Some(&m1), dims)
                .unwrap_or_else(|e| panic!("{text} as {t}: {e}"));
            assert_eq!(held(&st.regions(&mt).unwrap()), held(&r1), "{text} as {t}");
        }
    }
    m1.rank() < grid.len()
}

#[test]
fn size_one_tile_dims_leave_the_mesh_and_every_region_stays() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut dropped = 0;
    for _ in 0..3000 {
        let n = 1 + rng.below(16);
        let rank = rng.below(4) as usize;
        let dims: Vec<u64> = (0..rank).map(|_| rng.below(10)).collect();
        let (text, grid) = random_hlo(&mut rng, n, rank);
        if n == 1 && !text.contains("<=") {
            continue; // XLA refuses an explicit list of one device.
        }
        if grid.is_empty() {
            continue;
        }
        if check(&text, &grid, &dims) {
            dropped += 1;
        }
    }
    // Most cases have a size-1 dim to leave out.
    assert!(dropped > 1000, "only {dropped} cases dropped a size-1 dim");
}

/// The new-user review's example: `P('t0')` and `S0R` on `t0=4,t2=2`, not `P('t0', 't1')` on `t0=4,t1=1,t2=2`.
#[test]
fn the_reviews_example_reads_without_the_axis_of_one() {
    let text = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}";
    let (mesh, s) = parse_any(text, None, None, &[8, 8]).unwrap();
    let want = Mesh::with_devices(&[("t0", 4), ("t2", 2)], vec![0, 4, 1, 5, 2, 6, 3, 7]).unwrap();
    assert_eq!(mesh, want);
    assert_eq!(print(Notation::Jax, &mesh, &s).unwrap(), "P('t0')");
    assert_eq!(print(Notation::Alpa, &mesh, &s).unwrap(), "S0R");
    assert_eq!(
        print(Notation::Dtensor, &mesh, &s).unwrap(),
        "[Shard(0), Replicate()]"
    );
    assert_eq!(print(Notation::Hlo, &mesh, &s).unwrap(), text);
    // One device: read as `{replicated}` is, on `r=1`.
    let (mesh, s) = parse_any("{devices=[1,1]<=[1]}", None, None, &[8, 8]).unwrap();
    assert_eq!(mesh, Mesh::new(&[("r", 1)]).unwrap());
    assert_eq!(print(Notation::Jax, &mesh, &s).unwrap(), "P()");
    // Size-1 manual and unreduced subgroups keep their axes: their use is part of the sharding.
    let (mesh, s) = parse_any(
        "{devices=[2,1,1]<=[2] last_tile_dims={manual, unreduced}}",
        None,
        None,
        &[4],
    )
    .unwrap();
    assert_eq!(mesh.sizes(), &[2, 1, 1]);
    assert_eq!(uses(&s), (1, vec!["sum"]));
}
