//! Golden examples and bad input.

use axe_shard::notation::hlo::to_hlo;
use axe_shard::notation::jax::{parse_jax, to_jax};
use axe_shard::{Mesh, ShardError, Sharding, Uneven};

#[test]
fn jax_p_y_x_lowers_like_jax() {
    let mesh = Mesh::new(&[("x", 2), ("y", 4)]).unwrap();
    let s = parse_jax("P('y', 'x')", &mesh, &[8, 8]).unwrap();
    assert_eq!(to_hlo(&mesh, &s).unwrap(), "{devices=[4,2]<=[2,4]T(1,0)}");
    let s = parse_jax("P('x', 'y')", &mesh, &[8, 8]).unwrap();
    assert_eq!(to_hlo(&mesh, &s).unwrap(), "{devices=[2,4]<=[8]}");
    let s = parse_jax("P('y')", &mesh, &[8, 8]).unwrap();
    assert_eq!(
        to_hlo(&mesh, &s).unwrap(),
        "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
    );
    let s = parse_jax("P()", &mesh, &[8, 8]).unwrap();
    assert_eq!(to_hlo(&mesh, &s).unwrap(), "{replicated}");
    assert_eq!(to_jax(&mesh, &s).unwrap(), "P()");
    let s = parse_jax("P(None, ('x', 'y'))", &mesh, &[8, 8]).unwrap();
    assert_eq!(to_jax(&mesh, &s).unwrap(), "P(None, ('x', 'y'))");
    assert_eq!(to_hlo(&mesh, &s).unwrap(), "{devices=[1,8]<=[8]}");
}

#[test]
fn five_over_four_is_2_2_1_0_and_six_is_2_2_2_0() {
    let mesh = Mesh::new(&[("x", 4)]).unwrap();
    for (d, want) in [(5u64, [2u64, 2, 1, 0]), (6, [2, 2, 2, 0])] {
        let s = parse_jax("P('x')", &mesh, &[d]).unwrap();
        let got: Vec<u64> = s
            .regions(&mesh)
            .unwrap()
            .iter()
            .map(|r| r.local_shape[0])
            .collect();
        assert_eq!(got, want);
        assert!(s
            .regions(&mesh)
            .unwrap()
            .iter()
            .all(|r| r.padded_shape == vec![2]));
    }
}

#[test]
fn torch_chunk_nests_per_axis() {
    let mesh = Mesh::new(&[("a", 2), ("b", 2)]).unwrap();
    let s = Sharding::new(&mesh, vec![5], vec![vec![0, 1]], &[]).unwrap();
    let xla: Vec<u64> = s
        .regions(&mesh)
        .unwrap()
        .iter()
        .map(|r| r.local_shape[0])
        .collect();
    assert_eq!(xla, [2, 2, 1, 0]);
    let t = s.with_uneven(Uneven::TorchChunk);
    let torch: Vec<u64> = t
        .regions(&mesh)
        .unwrap()
        .iter()
        .map(|r| r.local_shape[0])
        .collect();
    assert_eq!(torch, [2, 1, 1, 1]);
}

#[test]
fn paper_2x2_fully_sharded_and_shard_replicate() {
    let mesh = Mesh::new(&[("x", 2), ("y", 2)]).unwrap();
    let s = parse_jax("P('x', 'y')", &mesh, &[64, 128]).unwrap();
    let r = s.regions(&mesh).unwrap();
    assert_eq!(r[3].region, vec![32..64, 64..128]);
    assert_eq!(*r[3].replica_group, [3]);
    let s = parse_jax("P('x')", &mesh, &[64, 128]).unwrap();
    let r = s.regions(&mesh).unwrap();
    assert_eq!(r[1].region, vec![0..32, 0..128]);
    assert_eq!(*r[1].replica_group, [0, 1]);
    assert_eq!(
        to_hlo(&mesh, &s).unwrap(),
        "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"
    );
}

#[test]
fn bad_input_is_an_error() {
    let mesh = Mesh::new(&[("x", 2), ("y", 4)]).unwrap();
    let e = parse_jax("P('z')", &mesh, &[8]).unwrap_err();
    assert!(matches!(e, ShardError::Parse { offset: 3, .. }), "{e}");
    let e = parse_jax("P('x', 'x')", &mesh, &[8, 8]).unwrap_err();
    assert!(e.to_string().contains("shards dims 0 and 1"), "{e}");
    assert!(parse_jax("P('x', 'y', None)", &mesh, &[8, 8]).is_err());
    assert!(parse_jax("P('x'", &mesh, &[8]).is_err());
    assert!(Mesh::with_devices(&[("x", 2)], vec![0, 1, 2]).is_err());
    assert!(Mesh::with_devices(&[("x", 2)], vec![1, 1]).is_err());
    assert!(Mesh::new(&[("x", u64::MAX), ("y", 2)]).is_err());
    assert!(Mesh::new(&[("x", 0)]).is_err());
}

#[test]
fn non_default_device_order_prints_explicit_devices() {
    let mesh = Mesh::with_devices(&[("x", 2), ("y", 2)], vec![3, 1, 0, 2]).unwrap();
    let s = parse_jax("P('y', 'x')", &mesh, &[4, 4]).unwrap();
    assert_eq!(to_hlo(&mesh, &s).unwrap(), "{devices=[2,2]3,0,1,2}");
}

#[test]
fn alpa_s0s1_on_2x3() {
    use axe_shard::notation::alpa::{parse_alpa, to_alpa};
    let mesh = Mesh::new(&[("a", 2), ("b", 3)]).unwrap();
    let s = parse_alpa("S0S1", &mesh, &[4, 6]).unwrap();
    assert_eq!(to_hlo(&mesh, &s).unwrap(), "{devices=[2,3]<=[6]}");
    let r = s.regions(&mesh).unwrap();
    assert_eq!(r[5].region, vec![2..4, 4..6]);
    assert_eq!(to_alpa(&mesh, &s).unwrap(), "S0S1");
    let s = parse_alpa("S01R", &mesh, &[12, 6]).unwrap();
    assert_eq!(to_jax(&mesh, &s).unwrap(), "P(('a', 'b'))");
    let s = parse_alpa("RS0", &mesh, &[4, 6]).unwrap();
    assert_eq!(
        to_hlo(&mesh, &s).unwrap(),
        "{devices=[1,2,3]<=[6] last_tile_dim_replicate}"
    );
    assert_eq!(
        to_alpa(&mesh, &parse_alpa("RR", &mesh, &[4, 6]).unwrap()).unwrap(),
        "RR"
    );
    assert!(parse_alpa("S2R", &mesh, &[4, 6]).is_err());
    assert!(parse_alpa("S0S0", &mesh, &[4, 6]).is_err());
    assert!(parse_alpa("SR", &mesh, &[4, 6]).is_err());
}

#[test]
fn dtensor_shard0_shard0_nests_left_to_right() {
    use axe_shard::notation::dtensor::{parse_dtensor, to_dtensor};
    use axe_shard::{AxisUse, ReduceOp};
    let mesh = Mesh::new(&[("a", 2), ("b", 2)]).unwrap();
    let s = parse_dtensor("[Shard(0), Shard(0)]", &mesh, &[5, 3]).unwrap();
    assert_eq!(s.dim_axes()[0], vec![0, 1]);
    let r: Vec<_> = s
        .regions(&mesh)
        .unwrap()
        .iter()
        .map(|r| r.region[0].clone())
        .collect();
    assert_eq!(r, vec![0..2, 2..3, 3..4, 4..5]);
    assert_eq!(to_dtensor(&mesh, &s).unwrap(), "[Shard(0), Shard(0)]");
    let s = parse_dtensor("[Shard(1), Replicate()]", &mesh, &[4, 4]).unwrap();
    assert_eq!(to_jax(&mesh, &s).unwrap(), "P(None, 'a')");
    let s = parse_dtensor("[Partial(), Shard(0)]", &mesh, &[4]).unwrap();
    assert_eq!(s.axis_use()[0], AxisUse::Partial(ReduceOp::Sum));
    // A pending sum is XLA's unreduced subgroup (as JAX lowers P('b', unreduced={'a'})).
    assert_eq!(
        to_hlo(&mesh, &s).unwrap(),
        "{devices=[2,2]<=[2,2]T(1,0) last_tile_dims={unreduced}}"
    );
    assert_eq!(to_dtensor(&mesh, &s).unwrap(), "[Partial(), Shard(0)]");
    let s = parse_dtensor("[Partial(max), Replicate()]", &mesh, &[4]).unwrap();
    assert_eq!(
        to_dtensor(&mesh, &s).unwrap(),
        "[Partial(max), Replicate()]"
    );
    assert!(parse_dtensor("[Shard(0)]", &mesh, &[4]).is_err());
    assert!(parse_dtensor("[Shard(2), Replicate()]", &mesh, &[4]).is_err());
    assert!(parse_dtensor("[Partial(xor), Replicate()]", &mesh, &[4]).is_err());
    assert!(parse_dtensor("[Foo(), Replicate()]", &mesh, &[4]).is_err());
}

#[test]
fn dtensor_negative_dims_count_from_the_last_as_torch_does() {
    use axe_shard::notation::dtensor::parse_dtensor;
    let mesh = Mesh::new(&[("a", 2), ("b", 2)]).unwrap();
    for (neg, pos) in [
        ("[Shard(-1), Replicate()]", "[Shard(2), Replicate()]"),
        ("[Shard(dim=-3), Shard(-1)]", "[Shard(0), Shard(2)]"),
        ("[Shard(-2), Shard(1)]", "[Shard(1), Shard(1)]"),
    ] {
        assert_eq!(
            parse_dtensor(neg, &mesh, &[4, 6, 8]).unwrap(),
            parse_dtensor(pos, &mesh, &[4, 6, 8]).unwrap(),
            "{neg}"
        );
    }
    // Out of range either way: an error at the placement, naming the dims there are.
    for (text, offset) in [
        ("[Replicate(), Shard(-4)]", 14),
        ("[Shard(3), Replicate()]", 1),
    ] {
        let e = parse_dtensor(text, &mesh, &[4, 6, 8]).unwrap_err();
        assert!(
            matches!(e, ShardError::Parse { offset: o, .. } if o == offset),
            "{text}: {e:?}"
        );
        assert!(e.to_string().contains("dims -3..2"), "{e}");
    }
    assert!(parse_dtensor("[Shard(-1), Replicate()]", &mesh, &[]).is_err());
}

#[test]
fn hlo_text_reads_to_the_same_regions() {
    use axe_shard::notation::hlo::parse_hlo;
    let mesh = Mesh::new(&[("x", 2), ("y", 4)]).unwrap();
    let s = parse_jax("P('y')", &mesh, &[7, 3]).unwrap();
    let text = to_hlo(&mesh, &s).unwrap();
    let (m2, s2) = parse_hlo(&text, &[7, 3], None).unwrap();
    let key = |r: &axe_shard::DeviceRegion| {
        let reg: Vec<(u64, u64)> = r.region.iter().map(|x| (x.start, x.end)).collect();
        (r.device, reg, r.replica_group.to_vec())
    };
    let mut a: Vec<_> = s.regions(&mesh).unwrap().iter().map(key).collect();
    let mut b: Vec<_> = s2.regions(&m2).unwrap().iter().map(key).collect();
    a.sort();
    b.sort();
    for (x, y) in a.iter_mut().zip(b.iter_mut()) {
        x.2.sort();
        y.2.sort();
    }
    assert_eq!(a, b);
    let (m, s) = parse_hlo("{replicated}", &[4], Some(4)).unwrap();
    assert_eq!(s.regions(&m).unwrap().len(), 4);
    let (m, s) = parse_hlo("{maximal device=2}", &[4], None).unwrap();
    assert_eq!(s.regions(&m).unwrap()[2].region, vec![0..4]);
    assert_eq!(to_hlo(&m, &s).unwrap(), "{maximal device=2}");
    assert!(parse_hlo("{devices=[2,2]0,1,2,3}", &[4], None).is_err());
    assert!(parse_hlo("{devices=[2]0,1}", &[4], Some(4)).is_err());
    assert!(parse_hlo("{devices=[2]0,0}", &[4], None).is_err());
    assert!(parse_hlo(
        "{devices=[1048576,1048576]<=[1099511627776]}",
        &[4, 4],
        None
    )
    .is_err());
}

#[test]
fn iota_transpose_lists_the_source_of_each_grid_dim() {
    let mesh = Mesh::new(&[("a", 2), ("b", 3), ("c", 4), ("d", 5)]).unwrap();
    let s = parse_jax("P('b', 'd', 'a', 'c')", &mesh, &[6, 10, 2, 4]).unwrap();
    assert_eq!(
        to_hlo(&mesh, &s).unwrap(),
        "{devices=[3,5,2,4]<=[2,3,4,5]T(1,3,0,2)}"
    );
    let s = parse_jax("P(('c', 'd'), ('a', 'b'))", &mesh, &[20, 6]).unwrap();
    assert_eq!(to_hlo(&mesh, &s).unwrap(), "{devices=[20,6]<=[6,20]T(1,0)}");
}

/// Messages write dims, sizes and device lists as the shape notation does, axis names quoted: no Rust
/// `Debug` text.
#[test]
fn messages_write_lists_as_the_notation_does() {
    let mesh = Mesh::new(&[("x", 2), ("y", 3)]).unwrap();
    let l: axe_layout::Layout = "S[(2,3):(1@gpu_x,1)]".parse().unwrap();
    let e = axe_shard::axe::from_axe(&l, &[5, 5], Some(&mesh)).unwrap_err();
    assert!(e.to_string().contains("the array [5,5]:"), "{e}");
    let l: axe_layout::Layout = "S[(5,3):(1@gpu_q,1)]".parse().unwrap();
    let e = axe_shard::axe::from_axe(&l, &[5, 3], Some(&mesh)).unwrap_err();
    assert!(
        e.to_string()
            .contains("device axes 'q' of sizes [5] are not the mesh's 'x', 'y' of sizes [2,3]"),
        "{e}"
    );
    let s = parse_jax("P('x')", &mesh, &[4, 4]).unwrap();
    let e = s
        .clone()
        .with_placement(&mesh, vec![0, 1, 2, 3, 4, 9])
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("devices [0,1,2,3,4,9] is not an order of the mesh's devices [0,1,2,3,4,5]"),
        "{e}"
    );
    let d = parse_jax("P('x')", &mesh, &[4, 6]).unwrap();
    let e = axe_shard::plan(&mesh, &s, &d, 4, &Default::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("source dims [4,4] and destination dims [4,6] differ"),
        "{e}"
    );
}
