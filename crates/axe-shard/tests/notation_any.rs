//! One entry point: notations recognised from their syntax, HLO read onto the caller's mesh, printing in
//! every notation, and round trips through each.

use axe_shard::notation::hlo::parse_hlo_on;
use axe_shard::notation::jax::parse_jax;
use axe_shard::{parse_any, print, AxisUse, Mesh, Notation, ShardError, Sharding, Uneven};
use proptest::prelude::*;

#[test]
fn notations_are_recognised_from_their_syntax() {
    for (text, n) in [
        ("{devices=[2,2]<=[4]}", Notation::Hlo),
        ("{replicated}", Notation::Hlo),
        ("P('x', None)", Notation::Jax),
        ("jax.sharding.PartitionSpec('x')", Notation::Jax),
        ("P()", Notation::Jax),
        ("[Shard(0), Replicate()]", Notation::Dtensor),
        ("S0R", Notation::Alpa),
        ("RR", Notation::Alpa),
        ("S01", Notation::Alpa),
        ("S[(2,32):(1@gpu_x,1)]", Notation::Axe),
        ("R[2:1@gpu_x]", Notation::Axe),
    ] {
        assert_eq!(Notation::detect(text).expect(text), n, "{text}");
        assert_eq!(Notation::from_name(n.name()), Some(n));
    }
    assert!(Notation::detect("hello").is_err());
    assert!(Notation::detect("").is_err());
}

#[test]
fn hlo_reads_onto_the_callers_mesh() {
    let mesh = Mesh::new(&[("x", 2), ("y", 4)]).expect("mesh");
    let dims = [8u64, 8];
    let (m, s) = parse_any("{devices=[4,2]<=[2,4]T(1,0)}", None, Some(&mesh), &dims).expect("hlo");
    assert_eq!(m, mesh);
    assert_eq!(s, parse_jax("P('y', 'x')", &mesh, &dims).expect("jax"));
    let s = parse_hlo_on(
        "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
        &mesh,
        &dims,
    )
    .expect("hlo");
    assert_eq!(s, parse_jax("P('x')", &mesh, &dims).expect("jax"));
    let s = parse_hlo_on("{replicated}", &mesh, &dims).expect("replicated");
    assert_eq!(s, Sharding::replicated(&mesh, dims.to_vec()));
    let s = parse_hlo_on("{maximal device=5}", &mesh, &dims).expect("maximal");
    assert_eq!(s.maximal_device(), Some(5));
    let s = parse_hlo_on("{manual}", &mesh, &dims).expect("manual");
    assert!(s.axis_use().iter().all(|u| *u == AxisUse::Manual));
    // Non-default device order: the listed devices follow the mesh's.
    let odd = Mesh::with_devices(&[("x", 2), ("y", 2)], vec![3, 1, 0, 2]).expect("mesh");
    let s = parse_hlo_on("{devices=[2,2]3,0,1,2}", &odd, &[4, 4]).expect("explicit");
    assert_eq!(s, parse_jax("P('y', 'x')", &odd, &[4, 4]).expect("jax"));
    // Bad: a device count that is not the mesh's; a grid cutting a mesh axis; out-of-order devices.
    let e = parse_hlo_on("{devices=[2,2]<=[4]}", &mesh, &dims).unwrap_err();
    assert!(
        e.to_string().contains("4 devices") && e.to_string().contains("mesh of 8"),
        "{e}"
    );
    let flat = Mesh::new(&[("z", 8)]).expect("mesh");
    let e = parse_hlo_on("{devices=[2,4]<=[8]}", &flat, &dims).unwrap_err();
    assert!(e.to_string().contains("not a sharding on this mesh"), "{e}");
    let e = parse_hlo_on(
        "{devices=[2,2]1,0,2,3}",
        &Mesh::new(&[("x", 2), ("y", 2)]).expect("m"),
        &[4, 4],
    )
    .unwrap_err();
    assert!(e.to_string().contains("first tile"), "{e}");
    let e = parse_hlo_on("{maximal device=9}", &mesh, &dims).unwrap_err();
    assert!(e.to_string().contains("not in the mesh"), "{e}");
}

#[test]
fn every_notation_prints_or_says_why_not() {
    let mesh = Mesh::new(&[("x", 2), ("y", 3)]).expect("mesh");
    let s = parse_jax("P('x', 'y')", &mesh, &[4, 6]).expect("spec");
    let want = [
        (Notation::Hlo, "{devices=[2,3]<=[6]}"),
        (Notation::Jax, "P('x', 'y')"),
        (Notation::Dtensor, "[Shard(0), Shard(1)]"),
        (Notation::Alpa, "S0S1"),
        (Notation::Axe, "S[(2,2,3,2):(1@gpu_x,2,1@gpu_y,1)]"),
    ];
    for (n, text) in want {
        assert_eq!(
            print(n, &mesh, &s).expect("printable"),
            text,
            "{}",
            n.name()
        );
        let (m, back) = parse_any(text, None, Some(&mesh), &[4, 6]).expect(text);
        assert_eq!(
            back.regions(&m).expect("regions"),
            s.regions(&mesh).expect("regions")
        );
    }
    let p = Sharding::new(
        &mesh,
        vec![4],
        vec![vec![0]],
        &[(1, AxisUse::Partial(axe_shard::ReduceOp::Sum))],
    )
    .expect("partial");
    // A pending sum is XLA's unreduced (and JAX's); Alpa and Axe layouts have no partial values.
    assert_eq!(
        print(Notation::Hlo, &mesh, &p).expect("hlo"),
        "{devices=[2,3]<=[6] last_tile_dims={unreduced}}"
    );
    assert_eq!(
        print(Notation::Jax, &mesh, &p).expect("jax"),
        format!(
            "P('{}', unreduced={{'{}'}})",
            mesh.names()[0],
            mesh.names()[1]
        )
    );
    for n in [Notation::Alpa, Notation::Axe] {
        let e = print(n, &mesh, &p).unwrap_err();
        assert!(matches!(e, ShardError::Inexpressible { .. }), "{e}");
    }
    assert_eq!(
        print(Notation::Dtensor, &mesh, &p).expect("dtensor"),
        "[Shard(0), Partial()]"
    );
    // XLA's cut of 5 over 2x2 (2,2,1,0) is not DTensor's (2,1,1,1), and the other way round.
    let m2 = Mesh::new(&[("a", 2), ("b", 2)]).expect("mesh");
    let x = Sharding::new(&m2, vec![5], vec![vec![0, 1]], &[]).expect("xla");
    let e = print(Notation::Dtensor, &m2, &x).unwrap_err();
    assert!(e.to_string().contains("XLA's rule"), "{e}");
    let t = x.with_uneven(Uneven::TorchChunk);
    let e = print(Notation::Hlo, &m2, &t).unwrap_err();
    assert!(e.to_string().contains("torch.chunk"), "{e}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let mesh = Mesh::new(&[("x", 2), ("y", 4)]).expect("mesh");
    let e = parse_any("P('z')", None, Some(&mesh), &[8]).unwrap_err();
    assert!(e.to_string().contains("unknown mesh axis \"z\""), "{e}");
    let e = parse_any("P('x', 'x')", None, Some(&mesh), &[8, 8]).unwrap_err();
    assert!(e.to_string().contains("shards dims 0 and 1"), "{e}");
    let e = parse_any("P('x')", None, None, &[8]).unwrap_err();
    assert!(e.to_string().contains("--mesh"), "{e}");
    let e = parse_any("{devices=[2,2]<=[4]}", None, Some(&mesh), &[8, 8]).unwrap_err();
    assert!(e.to_string().contains("mesh of 8"), "{e}");
    assert!(Mesh::new(&[("x", 1 << 32), ("y", 1 << 32)]).is_err());
    let e = parse_any(
        "S[(2,8):(1@gpu_x,1)]",
        Some(Notation::Axe),
        Some(&mesh),
        &[16],
    )
    .unwrap_err();
    assert!(e.to_string().contains("\"y\""), "{e}");
    assert!(parse_any("S[(2,8):(1@gpu_x,1)", None, None, &[16]).is_err());
}

fn case() -> impl Strategy<Value = (Vec<u64>, Vec<u64>, Vec<usize>, bool, bool)> {
    (
        prop::collection::vec(1u64..4, 1..4),
        prop::collection::vec(0u64..9, 1..4),
    )
        .prop_flat_map(|(mesh, dims)| {
            let (n, k) = (mesh.len(), dims.len());
            (
                Just(mesh),
                Just(dims),
                prop::collection::vec(0..=k, n),
                any::<bool>(),
                any::<bool>(),
            )
        })
}

proptest! {
    #[test]
    fn each_notation_round_trips_where_it_can((mesh, dims, assign, rev, torch) in case()) {
        let names: Vec<String> = (0..mesh.len()).map(|i| format!("ax{i}")).collect();
        let axes: Vec<(&str, u64)> = names.iter().map(String::as_str).zip(mesh.iter().copied()).collect();
        let m = Mesh::new(&axes).expect("mesh");
        let mut dim_axes = vec![Vec::new(); dims.len()];
        for (a, &d) in assign.iter().enumerate() {
            if d < dims.len() { dim_axes[d].push(a); }
        }
        if rev { dim_axes.iter_mut().for_each(|v| v.reverse()); }
        let s = Sharding::new(&m, dims.clone(), dim_axes, &[]).expect("sharding");
        let s = if torch { s.with_uneven(Uneven::TorchChunk) } else { s };
        // Who holds what (the padded shape is the rule's, so it is left out).
        let held = |s: &Sharding| -> Vec<(u64, Vec<std::ops::Range<u64>>, Vec<u64>)> {
            s.regions(&m).expect("regions").into_iter().map(|r| (r.device, r.region, r.replica_group.to_vec())).collect()
        };
        let regions = held(&s);
        for n in Notation::ALL {
            match print(n, &m, &s) {
                Ok(text) => {
                    prop_assert_eq!(Notation::detect(&text).expect("detect"), n);
                    let (m2, back) = parse_any(&text, None, Some(&m), &dims).expect("read back");
                    prop_assert_eq!(&m2, &m);
                    prop_assert_eq!(held(&back), regions.clone(), "{}", text);
                }
                Err(ShardError::Inexpressible { .. }) => {
                    // Only for a reason: a rule difference, a dtensor axis order, or the Axe form's padding.
                    let ok = s.rules_differ(&m).is_some()
                        || (n == Notation::Dtensor && s.dim_axes().iter().any(|v| v.windows(2).any(|w| w[0] > w[1])))
                        || (n == Notation::Axe && dims.iter().enumerate().any(|(d, &l)| l == 0 || l % s.shards_of(&m, d) != 0));
                    prop_assert!(ok, "{} refused {:?}", n.name(), s);
                }
                Err(e) => prop_assert!(false, "{}: {}", n.name(), e),
            }
        }
    }
}

/// Each device id's region, sorted by id.
fn by_id(m: &Mesh, s: &Sharding) -> Vec<(u64, Vec<std::ops::Range<u64>>)> {
    let mut v: Vec<_> = s
        .regions(m)
        .expect("regions")
        .into_iter()
        .map(|r| (r.device, r.region))
        .collect();
    v.sort_by_key(|x| x.0);
    v
}

proptest! {
    /// HLO text read onto the caller's mesh, in whatever device order the mesh has, stays on that mesh:
    /// every device id holds what the text gives it (as read without a mesh), and a notation that places
    /// devices by the mesh's order either prints a sharding that reads back to the same regions on the
    /// same mesh, or says it cannot.
    #[test]
    fn hlo_on_a_mesh_keeps_the_meshs_device_order(
        order in Just((0u64..4).collect::<Vec<_>>()).prop_shuffle(),
        tiles in Just((0u64..4).collect::<Vec<_>>()).prop_shuffle(),
        grid in prop::sample::select(vec![(4u64, 1u64), (2, 2), (1, 4)]),
    ) {
        let mesh = Mesh::with_devices(&[("x", 2), ("y", 2)], order.clone()).expect("mesh");
        let dims = [8u64, 8];
        let list: Vec<String> = tiles.iter().map(u64::to_string).collect();
        let text = format!("{{devices=[{},{}]{}}}", grid.0, grid.1, list.join(","));
        let (m, s) = parse_any(&text, None, Some(&mesh), &dims).expect("on the mesh");
        prop_assert_eq!(&m, &mesh);
        let (own, alone) = parse_any(&text, None, None, &dims).expect("alone");
        prop_assert_eq!(by_id(&m, &s), by_id(&own, &alone), "{}", text);
        for n in Notation::ALL {
            match print(n, &m, &s) {
                Ok(t) => {
                    let (m2, back) = parse_any(&t, None, Some(&mesh), &dims).expect("read back");
                    prop_assert_eq!(&m2, &mesh);
                    prop_assert_eq!(by_id(&m2, &back), by_id(&m, &s), "{} -> {}", text, t);
                }
                Err(ShardError::Inexpressible { .. }) => prop_assert!(n != Notation::Hlo),
                Err(e) => prop_assert!(false, "{}: {}", n.name(), e),
            }
        }
    }
}

#[test]
fn a_reader_never_trades_the_callers_device_order_for_the_texts() {
    // The reviewer's case: P('x','y') on devices 3,2,1,0 is not {devices=[2,2]<=[4]}.
    let mesh = Mesh::with_devices(&[("x", 2), ("y", 2)], vec![3, 2, 1, 0]).expect("mesh");
    let (m, s) = parse_any("{devices=[2,2]<=[4]}", None, Some(&mesh), &[4, 4]).expect("hlo");
    assert_eq!(m.devices(), &[3, 2, 1, 0]);
    assert!(matches!(
        print(Notation::Jax, &m, &s),
        Err(ShardError::Inexpressible { .. })
    ));
    assert_eq!(
        print(Notation::Hlo, &m, &s).expect("hlo"),
        "{devices=[2,2]<=[4]}"
    );
    // A manual subgroup over mesh axes out of their order keeps that order (it is each device's manual
    // coordinate): read onto a device count, it prints as XLA wrote it.
    let eight = Mesh::new(&[("d", 8)]).expect("mesh");
    let t = "{devices=[2,4]<=[2,2,2]T(0,2,1) last_tile_dims={manual}}";
    let (m, s) = parse_any(t, None, Some(&eight), &[4]).expect("manual");
    assert_eq!(print(Notation::Hlo, &m, &s).expect("hlo"), t);
    // A tile grid that splits nothing and is manual throughout is XLA's {manual}, whatever its order.
    let two = Mesh::new(&[("d", 2)]).expect("mesh");
    let (m, s) = parse_any(
        "{devices=[1,2]1,0 last_tile_dims={manual}}",
        None,
        Some(&two),
        &[4],
    )
    .expect("manual");
    let (_, plain) = parse_any("{manual}", None, Some(&two), &[4]).expect("manual");
    assert_eq!((m, s), (two, plain));
}

#[test]
fn device_ids_are_xlas_int64() {
    // Past i64 an id could be printed in an HloSharding but never read back.
    let e = Mesh::with_devices(&[("x", 2)], vec![0, 1 << 63]).unwrap_err();
    assert!(e.to_string().contains("signed 64-bit"), "{e}");
    let top = Mesh::with_devices(&[("x", 2)], vec![0, i64::MAX as u64]).expect("mesh");
    let s = parse_jax("P('x')", &top, &[4]).expect("jax");
    let text = print(Notation::Hlo, &top, &s).expect("hlo");
    let (m, back) = parse_any(&text, None, Some(&top), &[4]).expect("read back");
    assert_eq!(by_id(&m, &back), by_id(&top, &s));
}

#[test]
fn dtensor_placements_read_as_torch_prints_them() {
    // `print(dt.placements)` is a tuple, `(Shard(dim=0), Replicate())`; a trailing comma is Python.
    let mesh = Mesh::new(&[("x", 2), ("y", 2)]).expect("mesh");
    let dims = [4u64, 4];
    let (_, want) = parse_any("[Shard(0), Replicate()]", None, Some(&mesh), &dims).expect("list");
    for text in [
        "(Shard(dim=0), Replicate())",
        "( Shard(0), Replicate(), )",
        "[Shard(0), Replicate(),]",
    ] {
        assert_eq!(
            Notation::detect(text).expect(text),
            Notation::Dtensor,
            "{text}"
        );
        let (_, s) = parse_any(text, None, Some(&mesh), &dims).expect(text);
        assert_eq!(s, want, "{text}");
    }
    let one = Mesh::new(&[("x", 2)]).expect("mesh");
    let (_, s) = parse_any("(Shard(0),)", None, Some(&one), &[4]).expect("one");
    assert_eq!(
        s,
        parse_any("[Shard(0)]", None, Some(&one), &[4])
            .expect("list")
            .1
    );
    // Only one trailing comma, and only after a placement.
    assert!(parse_any("(Shard(0),,)", None, Some(&one), &[4]).is_err());
    assert!(parse_any("(,)", None, Some(&one), &[4]).is_err());
    assert!(Notation::detect("(4,2)").is_err());
}

#[test]
fn unreduced_is_a_pending_sum_in_jax_and_xla() {
    // Each pair as JAX 0.10 lowers it (NamedSharding(mesh, spec)._to_xla_hlo_sharding(2) on an
    // Explicit 2×2 mesh); both read to the same sharding, [..., Partial()] in DTensor.
    let mesh = Mesh::new(&[("x", 2), ("y", 2)]).expect("mesh");
    let dims = [4u64, 4];
    for (jax, hlo, dtensor) in [
        (
            "P('x', unreduced={'y'})",
            "{devices=[2,1,2]<=[4] last_tile_dims={unreduced}}",
            "[Shard(0), Partial()]",
        ),
        (
            "P(unreduced={'x', 'y'})",
            "{unreduced}",
            "[Partial(), Partial()]",
        ),
        (
            "P(None, 'y', unreduced={'x'})",
            "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dims={unreduced}}",
            "[Partial(), Shard(1)]",
        ),
    ] {
        let (_, a) = parse_any(jax, None, Some(&mesh), &dims).expect(jax);
        assert!(a
            .axis_use()
            .contains(&AxisUse::Partial(axe_shard::ReduceOp::Sum)));
        assert_eq!(print(Notation::Hlo, &mesh, &a).expect("hlo"), hlo);
        assert_eq!(print(Notation::Jax, &mesh, &a).expect("jax"), jax);
        let (_, b) = parse_any(hlo, None, Some(&mesh), &dims).expect(hlo);
        assert_eq!(by_id(&mesh, &b), by_id(&mesh, &a), "{hlo}");
        assert_eq!(print(Notation::Jax, &mesh, &b).expect("jax"), jax);
        let (_, c) = parse_any(dtensor, None, Some(&mesh), &dims).expect(dtensor);
        assert_eq!(print(Notation::Hlo, &mesh, &c).expect("hlo"), hlo);
    }
    // Only a sum is XLA's unreduced; {unknown} names nothing to read.
    let (_, m) = parse_any("[Partial(max), Replicate()]", None, Some(&mesh), &dims).expect("max");
    assert!(matches!(
        print(Notation::Hlo, &mesh, &m),
        Err(ShardError::Inexpressible { .. })
    ));
    assert!(parse_any("{unknown}", None, Some(&mesh), &dims).is_err());
    for bad in [
        "P('x', unreduced={'x'})",
        "P(unreduced={'y'}, 'x')",
        "P('x', reduced={'y'})",
    ] {
        assert!(parse_any(bad, None, Some(&mesh), &dims).is_err(), "{bad}");
    }
}
