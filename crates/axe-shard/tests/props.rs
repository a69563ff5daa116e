//! Properties over random meshes, dims and shardings.

use axe_shard::notation::jax::{parse_jax, to_jax};
use axe_shard::{AxisUse, Mesh, Sharding, Uneven};
use proptest::prelude::*;

fn case() -> impl Strategy<Value = (Vec<u64>, Vec<u64>, Vec<usize>)> {
    (
        prop::collection::vec(1u64..4, 1..4),
        prop::collection::vec(0u64..9, 1..4),
    )
        .prop_flat_map(|(mesh, dims)| {
            let n = mesh.len();
            let k = dims.len();
            (Just(mesh), Just(dims), prop::collection::vec(0..=k, n))
        })
}

fn build(mesh: &[u64], dims: &[u64], assign: &[usize]) -> (Mesh, Sharding) {
    let m = Mesh::from_sizes(mesh).expect("mesh");
    let mut dim_axes = vec![Vec::new(); dims.len()];
    for (a, &d) in assign.iter().enumerate() {
        if d < dims.len() {
            dim_axes[d].push(a);
        }
    }
    let s = Sharding::new(&m, dims.to_vec(), dim_axes, &[]).expect("sharding");
    (m, s)
}

proptest! {
    #[test]
    fn jax_round_trips((mesh, dims, assign) in case()) {
        let (m, s) = build(&mesh, &dims, &assign);
        let text = to_jax(&m, &s).unwrap();
        prop_assert_eq!(parse_jax(&text, &m, &dims).unwrap(), s);
    }

    #[test]
    fn dtensor_and_alpa_round_trip((mesh, dims, assign) in case()) {
        use axe_shard::notation::alpa::{parse_alpa, to_alpa};
        use axe_shard::notation::dtensor::{parse_dtensor, to_dtensor};
        let (m, s) = build(&mesh, &dims, &assign);
        let text = to_alpa(&m, &s).unwrap();
        prop_assert_eq!(parse_alpa(&text, &m, &dims).unwrap(), s.clone());
        match to_dtensor(&m, &s) {
            Ok(text) => {
                prop_assert!(s.rules_differ(&m).is_none());
                prop_assert_eq!(parse_dtensor(&text, &m, &dims).unwrap(), s.with_uneven(Uneven::TorchChunk));
            }
            Err(e) => {
                // Only XLA's cut of an uneven dim over several mesh axes is beyond DTensor.
                prop_assert!(s.rules_differ(&m).is_some(), "{}", e);
                let inexpressible = matches!(e, axe_shard::ShardError::Inexpressible { notation: "dtensor", .. });
                prop_assert!(inexpressible);
            }
        }
    }

    #[test]
    fn every_element_is_held_by_exactly_its_replicas((mesh, dims, assign) in case(), torch in any::<bool>()) {
        let (m, s) = build(&mesh, &dims, &assign);
        let s = if torch { s.with_uneven(Uneven::TorchChunk) } else { s };
        let replicas: u64 = s.axis_use().iter().zip(m.sizes())
            .filter(|(u, _)| **u == AxisUse::Replicated).map(|(_, &z)| z).product();
        let regions = s.regions(&m).unwrap();
        let total: u64 = dims.iter().product();
        for e in 0..total {
            let mut idx = vec![0u64; dims.len()];
            let mut r = e;
            for d in (0..dims.len()).rev() { idx[d] = r % dims[d]; r /= dims[d]; }
            let holders: Vec<&axe_shard::DeviceRegion> = regions.iter()
                .filter(|g| g.region.iter().zip(&idx).all(|(rg, i)| rg.contains(i))).collect();
            prop_assert_eq!(holders.len() as u64, replicas);
            let group: Vec<u64> = holders.iter().map(|h| h.device).collect();
            prop_assert_eq!(&holders[0].replica_group.to_vec(), &group);
        }
    }
}

proptest! {
    #[test]
    fn any_text_is_read_or_refused_without_panicking(text in "\\PC{0,24}", pre in prop::sample::select(vec!["P(", "[", "S", "{devices=["])) {
        use axe_shard::notation::{alpa::parse_alpa, dtensor::parse_dtensor, hlo::parse_hlo};
        let m = Mesh::new(&[("x", 2), ("y", 2)]).expect("mesh");
        let t = format!("{pre}{text}");
        let _ = parse_jax(&t, &m, &[4, 4]);
        let _ = parse_jax(&format!("P({text})"), &m, &[4, 4]);
        let _ = parse_dtensor(&t, &m, &[4, 4]);
        let _ = parse_alpa(&t, &m, &[4, 4]);
        let _ = parse_hlo(&t, &[4, 4], None);
    }
}
