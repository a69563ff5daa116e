#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The lazy region view against the eager regions: device by device the same region, shapes and
//! replica group, on random meshes and shardings; and on a mesh of 2^20 devices one device costs
//! what it returns.

use axe_shard::{AxisUse, Mesh, Sharding, Uneven};
use proptest::prelude::*;

fn sharding() -> impl Strategy<Value = (Mesh, Sharding)> {
    (
        proptest::collection::vec(1u64..4, 1..4),
        proptest::collection::vec(0u64..9, 0..3),
        proptest::collection::vec(0usize..5, 4),
        any::<bool>(),
        proptest::option::of(0u64..40),
        proptest::collection::vec(1u64..100, 0..1),
    )
        .prop_map(|(sizes, dims, uses, torch, maximal, perm)| {
            let names = ["a", "b", "c"];
            let axes: Vec<(&str, u64)> = sizes
                .iter()
                .enumerate()
                .map(|(i, &s)| (names[i], s))
                .collect();
            let n: u64 = sizes.iter().product();
            // Device ids in a scrambled order.
            let step = perm.first().map_or(1, |&p| p * 2 + 1);
            let mut devices: Vec<u64> = (0..n).map(|i| (i * step) % n).collect();
            devices.sort_unstable();
            devices.dedup();
            let devices = if devices.len() as u64 == n {
                (0..n).map(|i| (i * step) % n).collect()
            } else {
                (0..n).collect()
            };
            let mesh = Mesh::with_devices(&axes, devices).unwrap();
            if let Some(m) = maximal {
                let s = Sharding::maximal(&mesh, dims.clone(), m % n).unwrap();
                return (mesh, s);
            }
            // Each mesh axis: split a dim, replicated, partial or manual.
            let mut dim_axes = vec![Vec::new(); dims.len()];
            let mut extra = Vec::new();
            for a in 0..sizes.len() {
                match uses[a] {
                    0 | 1 if !dims.is_empty() => dim_axes[uses[a] % dims.len()].push(a),
                    2 => extra.push((a, AxisUse::Partial(axe_shard::ReduceOp::Sum))),
                    3 => extra.push((a, AxisUse::Manual)),
                    _ => {}
                }
            }
            let s = Sharding::new(&mesh, dims, dim_axes, &extra).unwrap();
            let s = if torch {
                s.with_uneven(Uneven::TorchChunk)
            } else {
                s
            };
            (mesh, s)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn the_view_equals_the_regions((mesh, s) in sharding()) {
        let eager = s.regions(&mesh).unwrap();
        let view = s.region_view(&mesh).unwrap();
        prop_assert_eq!(view.len(), eager.len());
        let mut members = 0;
        for (p, e) in eager.iter().enumerate() {
            let r = view.region(p).unwrap();
            prop_assert_eq!(&r, e);
            let place = view.place(p).unwrap();
            prop_assert_eq!(place.group < view.group_count(), true);
            prop_assert_eq!(view.group_members(place.group).count(), view.group_len());
            members += 1;
        }
        prop_assert_eq!(view.group_count() * view.group_len(), members);
        // Every group once: the groups partition the devices.
        let mut all: Vec<u64> = (0..view.group_count()).flat_map(|g| view.group_members(g)).collect();
        all.sort_unstable();
        let mut ids = mesh.devices().to_vec();
        ids.sort_unstable();
        prop_assert_eq!(all, ids);
        prop_assert!(view.place(eager.len()).is_none());
        prop_assert_eq!(view.group_members(view.group_count()).count(), 0);
    }
}

#[test]
fn a_device_of_a_million_costs_what_it_returns() {
    let mesh = Mesh::new(&[("x", 1 << 20)]).unwrap();
    let s = Sharding::new(&mesh, vec![4], vec![vec![0]], &[]).unwrap();
    let view = s.region_view(&mesh).unwrap();
    let start = std::time::Instant::now();
    let last = view.region((1 << 20) - 1).unwrap();
    assert_eq!(last.local_shape, vec![0]);
    assert_eq!(&*last.replica_group, &[(1 << 20) - 1]);
    assert_eq!(view.place(2).unwrap().region, vec![2..3]);
    // Replicated over all: one group of 2^20, listed lazily; a device's place does not list it.
    let r = Sharding::replicated(&mesh, vec![4]);
    let rv = r.region_view(&mesh).unwrap();
    assert_eq!((rv.group_count(), rv.group_len()), (1, 1 << 20));
    assert_eq!(rv.place(77).unwrap().group, 0);
    assert_eq!(
        rv.group_members(0).take(3).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert!(start.elapsed().as_secs() < 5);
}
