//! Golden reshard plans: each collective by name, exact transfer lists, bad input.
#![allow(clippy::single_range_in_vec_init)]

use axe_shard::notation::dtensor::parse_dtensor;
use axe_shard::notation::jax::parse_jax;
use axe_shard::{
    bench_plans, identity_fills, plan, Collective, CostModel, Mesh, ReduceOp, ShardError, Sharding,
    Transfer,
};

fn jax(m: &Mesh, spec: &str, dims: &[u64]) -> Sharding {
    parse_jax(spec, m, dims).expect("spec")
}

fn dt(m: &Mesh, spec: &str, dims: &[u64]) -> Sharding {
    parse_dtensor(spec, m, dims).expect("placements")
}

fn go(m: &Mesh, a: &Sharding, b: &Sharding) -> axe_shard::Plan {
    plan(m, a, b, 4, &CostModel::default()).expect("plan")
}

#[test]
fn each_collective_by_name_with_its_bytes() {
    let m = Mesh::new(&[("x", 4)]).expect("mesh");
    let d = [8u64, 8];
    let p = go(&m, &jax(&m, "P('x')", &d), &jax(&m, "P(None, 'x')", &d));
    assert_eq!(p.collective, Collective::AllToAll);
    assert_eq!(
        (p.transfers.len(), p.bytes, p.locals.len()),
        (12, 12 * 4 * 4, 4)
    );
    let p = go(&m, &jax(&m, "P('x')", &d), &jax(&m, "P()", &d));
    assert_eq!(p.collective, Collective::AllGather);
    assert_eq!(p.bytes, 4 * 3 * 16 * 4);
    let p = go(&m, &dt(&m, "[Partial()]", &d), &dt(&m, "[Shard(0)]", &d));
    assert_eq!(p.collective, Collective::ReduceScatter);
    assert_eq!(p.bytes, 4 * 3 * 16 * 4);
    assert!(p.transfers.iter().all(|t| t.reduce == Some(ReduceOp::Sum)));
    assert!(p.locals.iter().all(|l| l.reduce == Some(ReduceOp::Sum)));
    let p = go(&m, &dt(&m, "[Partial()]", &d), &dt(&m, "[Replicate()]", &d));
    assert_eq!(p.collective, Collective::AllReduce);
    assert_eq!(p.bytes, 4 * 3 * 64 * 4);
    let p = go(&m, &jax(&m, "P('x')", &d), &jax(&m, "P('x')", &d));
    assert_eq!(
        (p.collective, p.bytes, p.locals.len()),
        (Collective::None, 0, 4)
    );
    let p = go(&m, &jax(&m, "P()", &d), &jax(&m, "P('x')", &d));
    assert_eq!((p.collective, p.bytes), (Collective::LocalSlice, 0));
    assert_eq!(p.locals[2].region, vec![4..6, 0..8]);
    let g = Sharding::new(&m, d.to_vec(), vec![vec![], vec![]], &[]).expect("replicated");
    let max = Sharding::maximal(&m, d.to_vec(), 2).expect("maximal");
    let p = go(&m, &max, &g);
    assert_eq!(p.collective, Collective::Broadcast);
    assert!(p.transfers.iter().all(|t| t.from == 2));
    assert_eq!(p.bytes, 3 * 64 * 4);
    // One device to each its own rows: a scatter (device 2 keeps its own).
    let p = go(&m, &max, &jax(&m, "P('x')", &d));
    assert_eq!(p.collective, Collective::Scatter);
    assert!(p.transfers.iter().all(|t| t.from == 2));
    let mut rows: Vec<_> = p.transfers.iter().map(|t| t.region[0].clone()).collect();
    rows.sort_by_key(|r| r.start);
    assert_eq!(rows, vec![0..2, 2..4, 6..8]);
    // Back to one device: each sends it its own rows.
    let p = go(&m, &jax(&m, "P('x')", &d), &max);
    assert_eq!(p.collective, Collective::Gather);
    assert!(p.transfers.iter().all(|t| t.to == 2));
}

#[test]
fn a_device_permutation_is_a_collective_permute() {
    let m = Mesh::new(&[("x", 2), ("y", 2)]).expect("mesh");
    let d = [8u64, 3];
    let p = go(
        &m,
        &jax(&m, "P(('x', 'y'))", &d),
        &jax(&m, "P(('y', 'x'))", &d),
    );
    assert_eq!(p.collective, Collective::CollectivePermute);
    let want = vec![
        Transfer {
            from: 2,
            to: 1,
            region: vec![4..6, 0..3],
            bytes: 24,
            reduce: None,
        },
        Transfer {
            from: 1,
            to: 2,
            region: vec![2..4, 0..3],
            bytes: 24,
            reduce: None,
        },
    ];
    assert_eq!(p.transfers, want);
    assert_eq!(p.locals.len(), 2);
    // Alpha-beta: one message of 24 bytes per device at most.
    let c = CostModel {
        alpha_us: 2.0,
        bytes_per_us: 8.0,
    };
    let p = plan(
        &m,
        &jax(&m, "P(('x', 'y'))", &d),
        &jax(&m, "P(('y', 'x'))", &d),
        4,
        &c,
    )
    .expect("plan");
    assert!((p.estimate_us - (2.0 + 3.0)).abs() < 1e-9);
}

#[test]
fn replicas_split_the_sending() {
    // P('x') -> P() on 2x2: (0,0) and (0,1) each need rows 4..8, held by (1,0) and (1,1).
    let m = Mesh::new(&[("x", 2), ("y", 2)]).expect("mesh");
    let p = go(&m, &jax(&m, "P('x')", &[8]), &jax(&m, "P()", &[8]));
    let pairs: Vec<(u64, u64)> = p.transfers.iter().map(|t| (t.from, t.to)).collect();
    assert_eq!(pairs, vec![(2, 0), (3, 1), (0, 2), (1, 3)]);
    assert_eq!(p.collective, Collective::AllGather);
}

#[test]
fn uneven_and_empty_shards_send_nothing_they_lack() {
    let m = Mesh::new(&[("x", 4)]).expect("mesh");
    // 5 over 4 is 2,2,1,0: device 3 holds nothing and sends nothing.
    let p = go(&m, &jax(&m, "P('x')", &[5]), &jax(&m, "P()", &[5]));
    assert!(p.transfers.iter().all(|t| t.from != 3));
    assert_eq!(p.bytes, (3 + 3 + 4 + 5) * 4);
    // DTensor's rule on a 2x2 split of 5 (2,1,1,1) to XLA's (2,2,1,0).
    let m2 = Mesh::new(&[("a", 2), ("b", 2)]).expect("mesh");
    let p = go(
        &m2,
        &dt(&m2, "[Shard(0), Shard(0)]", &[5]),
        &jax(&m2, "P(('a', 'b'))", &[5]),
    );
    let got: Vec<(u64, u64, Vec<std::ops::Range<u64>>)> = p
        .transfers
        .iter()
        .map(|t| (t.from, t.to, t.region.clone()))
        .collect();
    assert_eq!(got, vec![(2, 1, vec![3..4]), (3, 2, vec![4..5])]);
    // A zero-size dim moves nothing.
    let p = go(
        &m,
        &jax(&m, "P('x')", &[0, 3]),
        &jax(&m, "P(None, 'x')", &[0, 3]),
    );
    assert_eq!((p.bytes, p.transfers.len(), p.locals.len()), (0, 0, 0));
}

#[test]
fn becoming_partial_keeps_one_member_for_sum_and_all_for_max() {
    let m = Mesh::new(&[("x", 2), ("y", 2)]).expect("mesh");
    let src = jax(&m, "P('x')", &[4]);
    let dst = dt(&m, "[Shard(0), Partial()]", &[4]);
    let p = go(&m, &src, &dst);
    assert_eq!((p.bytes, p.collective), (0, Collective::LocalSlice));
    let devices: Vec<u64> = p.locals.iter().map(|l| l.device).collect();
    assert_eq!(devices, vec![0, 2]);
    let fills = identity_fills(&m, &src, &dst).expect("fills");
    let f: Vec<(u64, ReduceOp)> = fills.iter().map(|f| (f.device, f.op)).collect();
    assert_eq!(f, vec![(1, ReduceOp::Sum), (3, ReduceOp::Sum)]);
    let dst = dt(&m, "[Shard(0), Partial(max)]", &[4]);
    let p = go(&m, &src, &dst);
    assert_eq!(p.locals.len(), 4);
    assert!(identity_fills(&m, &src, &dst).expect("fills").is_empty());
}

#[test]
fn bad_pairs_are_refused() {
    let m = Mesh::new(&[("x", 2), ("y", 2)]).expect("mesh");
    let c = CostModel::default();
    let a = jax(&m, "P('x')", &[4]);
    let e = plan(&m, &a, &jax(&m, "P('x')", &[6]), 4, &c).unwrap_err();
    assert!(e.to_string().contains("differ"), "{e}");
    let e = plan(
        &m,
        &dt(&m, "[Partial(), Replicate()]", &[4]),
        &dt(&m, "[Partial(max), Replicate()]", &[4]),
        4,
        &c,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("partial (sum) in the source and partial (max)"),
        "{e}"
    );
    let other = Mesh::new(&[("x", 4)]).expect("mesh");
    assert!(matches!(
        plan(&other, &a, &a, 4, &c),
        Err(ShardError::Sharding(_))
    ));
    let manual = Sharding::new(
        &m,
        vec![4],
        vec![vec![0]],
        &[(1, axe_shard::AxisUse::Manual)],
    )
    .expect("manual");
    let e = plan(&m, &manual, &a, 4, &c).unwrap_err();
    assert!(e.to_string().contains("manual"), "{e}");
    let big = jax(&m, "P('x')", &[u64::MAX / 2]);
    assert!(plan(&m, &big, &big, 4, &c).is_err());
}

#[test]
fn bench_plans_are_named_as_their_collectives() {
    let cases = bench_plans().expect("cases");
    assert_eq!(cases.len(), 20);
    for (name, mesh, src, dst) in cases.iter().filter(|c| c.1.len() <= 512) {
        let p = plan(mesh, src, dst, 4, &CostModel::default()).expect("plan");
        let want = match name.split(' ').nth(1).expect("kind") {
            "all-to-all" => Collective::AllToAll,
            "all-gather" => Collective::AllGather,
            "reduce-scatter" => Collective::ReduceScatter,
            "permute" => Collective::CollectivePermute,
            // Square meshes move whole shards; others cut them.
            "transpose" if mesh.sizes()[0] == mesh.sizes()[1] => Collective::CollectivePermute,
            "transpose" => Collective::AllToAll,
            other => panic!("unknown case {other}"),
        };
        assert_eq!(p.collective, want, "{name}");
    }
}

/// A plan is bounded whatever the mesh: past `MAX_PIECES` pieces it is an error, not unbounded memory
/// (an all-gather of 8 elements onto 2^20 devices would list 8 million transfers).
#[test]
fn plans_past_the_piece_limit_are_refused() {
    let mesh = axe_shard::Mesh::new(&[("x", 1 << 20)]).unwrap();
    let src = axe_shard::notation::jax::parse_jax("P('x')", &mesh, &[8]).unwrap();
    let dst = axe_shard::notation::jax::parse_jax("P()", &mesh, &[8]).unwrap();
    let err = axe_shard::plan(&mesh, &src, &dst, 4, &axe_shard::CostModel::default()).unwrap_err();
    assert!(
        err.to_string().contains(&axe_shard::MAX_PIECES.to_string()),
        "{err}"
    );
    // Counted before any piece is built: 2^20 devices each gathering 2^20 one-element shards would be
    // 2^40 pieces; the error says how many, at once.
    let dims = [1u64 << 20];
    let src = axe_shard::notation::jax::parse_jax("P('x')", &mesh, &dims).unwrap();
    let dst = axe_shard::notation::jax::parse_jax("P()", &mesh, &dims).unwrap();
    assert_eq!(axe_shard::plan_size(&mesh, &src, &dst).unwrap(), 1 << 40);
    let start = std::time::Instant::now();
    let err = axe_shard::plan(&mesh, &src, &dst, 4, &axe_shard::CostModel::default()).unwrap_err();
    assert!(err.to_string().contains("1099511627776 pieces"), "{err}");
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
    // Just past the limit: 2,049 devices each receiving 2,049 pieces (4,198,401 > 2^22).
    let mesh = axe_shard::Mesh::new(&[("x", 2049)]).unwrap();
    let src = axe_shard::notation::jax::parse_jax("P('x')", &mesh, &[2049, 2049]).unwrap();
    let dst = axe_shard::notation::jax::parse_jax("P(None, 'x')", &mesh, &[2049, 2049]).unwrap();
    assert_eq!(
        axe_shard::plan_size(&mesh, &src, &dst).unwrap(),
        2049 * 2049
    );
    assert!(axe_shard::plan(&mesh, &src, &dst, 4, &axe_shard::CostModel::default()).is_err());
}
