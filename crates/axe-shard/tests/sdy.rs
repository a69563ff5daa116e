//! Shardy shardings: what JAX 0.10's dumps show, read and printed; refusals at their offset; the reader
//! never panics; printing and reading back keeps every device's holding.
#![allow(clippy::panic)]

use axe_shard::notation::sdy::parse_sdy_mesh;
use axe_shard::{
    parse_any, parse_pair, print, AxisUse, Mesh, Notation, ReduceOp, ShardError, Sharding,
};
use proptest::prelude::*;

fn mesh(axes: &[(&str, u64)]) -> Mesh {
    Mesh::new(axes).expect("mesh")
}

fn read(text: &str, m: Option<&Mesh>, dims: &[u64]) -> (Mesh, Sharding) {
    parse_any(text, None, m, dims).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn offset(text: &str, m: Option<&Mesh>, dims: &[u64]) -> (String, usize) {
    match parse_any(text, None, m, dims) {
        Err(ShardError::Parse { msg, offset, .. }) => (msg, offset),
        other => panic!("{text}: expected a parse error, got {other:?}"),
    }
}

#[test]
fn jax_dumps_read_as_their_partition_specs() {
    let m = mesh(&[("x", 2), ("y", 4)]);
    for (sdy, spec) in [
        (r#"#sdy.sharding<@mesh, [{"x"}, {"y"}]>"#, "P('x', 'y')"),
        (r#"#sdy.sharding<@mesh, [{"x", "y"}, {}]>"#, "P(('x', 'y'))"),
        (r#"<@mesh, [{?}, {"y"}]>"#, "P(None, 'y')"),
        (
            r#"#sdy.sharding<@mesh, [{"x"}, {"y", ?}p1], replicated={}>"#,
            "P('x', 'y')",
        ),
        (
            r#"#sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>"#,
            "P('x', unreduced={'y'})",
        ),
        (r#"#sdy.sharding<@mesh, [{}, {}], replicated={"y"}>"#, "P()"),
    ] {
        assert_eq!(Notation::detect(sdy).expect(sdy), Notation::Sdy);
        let (_, s) = read(sdy, Some(&m), &[8, 8]);
        let (_, want) = read(spec, Some(&m), &[8, 8]);
        assert_eq!(s, want, "{sdy}");
    }
}

#[test]
fn the_text_may_bring_its_mesh() {
    let dims = [8u64, 8];
    // A definition as JAX's module prints it, trailing dictionary and all.
    let text = "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]> {stablehlo.mesh = {axes = [{name = \"x\", size = 2 : i64}]}}\n\
                #sdy.sharding<@mesh, [{\"y\"}, {}]>";
    let (m, s) = read(text, None, &dims);
    assert_eq!(m, mesh(&[("x", 2), ("y", 4)]));
    assert_eq!(s.dim_axes(), &[vec![1], vec![]]);
    // Inline, with device ids: over ids, so on the caller's mesh a placement (HLO text says the same).
    let text = r#"#sdy.sharding<mesh<["x"=4], device_ids=[0, 3, 1, 2]>, [{"x"}, {}]>"#;
    let on = mesh(&[("x", 4)]);
    let (m, s) = read(text, Some(&on), &dims);
    let (m2, h) = read("{devices=[4,1]0,3,1,2}", Some(&on), &dims);
    assert_eq!((&m, &s), (&m2, &h));
    assert_eq!(print(Notation::Sdy, &m, &s).expect("sdy"), text);
    // A maximal mesh names its device.
    let (m, s) = read(
        "#sdy.sharding<mesh<[], device_ids=[3]>, []>",
        Some(&on),
        &dims,
    );
    assert_eq!(s.maximal_device(), Some(3));
    assert_eq!(
        print(Notation::Hlo, &m, &s).expect("hlo"),
        "{maximal device=3}"
    );
    // The --mesh may be a Shardy mesh.
    let m = Mesh::from_spec("<[\"a\"=2, \"b\"=2], device_ids=[3, 2, 1, 0]>", None).expect("mesh");
    assert_eq!(m.names(), &["a", "b"]);
    assert_eq!(m.devices(), &[3, 2, 1, 0]);
    assert_eq!(parse_sdy_mesh("sdy.mesh @m = <[]>").expect("mesh").len(), 1);
    assert_eq!(
        axe_shard::notation::sdy_print::sdy_mesh(&m),
        "<[\"a\"=2, \"b\"=2], device_ids=[3, 2, 1, 0]>"
    );
}

#[test]
fn sub_axes_split_the_mesh_axis() {
    let m = mesh(&[("x", 2), ("y", 4)]);
    // XLA exports this as {devices=[4,1,2]<=[4,2]T(1,0) last_tile_dim_replicate}.
    let text = r#"#sdy.sharding<@mesh, [{"y":(2)2, "x"}, {}], replicated={"y":(1)2}>"#;
    let (r, s) = read(text, Some(&m), &[8, 8]);
    assert_eq!(r.names(), &["x", "y_0", "y_1"]);
    assert_eq!(
        print(Notation::Hlo, &r, &s).expect("hlo"),
        "{devices=[4,1,2]<=[4,2]T(1,0) last_tile_dim_replicate}"
    );
    assert_eq!(
        print(Notation::Sdy, &r, &s).expect("sdy"),
        r#"#sdy.sharding<@mesh, [{"y":(2)2, "x"}, {}]>"#
    );
    // HLO read onto an unsplit mesh prints as sub-axes of it.
    let (r, s) = read("{devices=[2,2]<=[4]}", Some(&mesh(&[("x", 4)])), &[4, 4]);
    assert_eq!(
        print(Notation::Sdy, &r, &s).expect("sdy"),
        r#"#sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2}]>"#
    );
    // Plans between sub-axes cut differently.
    let (pm, a, b) = parse_pair(
        r#"#sdy.sharding<@mesh, [{"x":(1)2}, {}]>"#,
        r#"#sdy.sharding<@mesh, [{}, {"x":(2)2}]>"#,
        None,
        Some(&mesh(&[("x", 4)])),
        &[8, 8],
    )
    .expect("pair");
    assert_eq!(pm.sizes(), &[2, 2]);
    assert_eq!(
        (a.dim_axes(), b.dim_axes()),
        (&[vec![0], vec![]][..], &[vec![], vec![1]][..])
    );
}

#[test]
fn what_cannot_be_read_is_refused_at_its_offset() {
    let m = mesh(&[("x", 2), ("y", 4)]);
    let d = [8u64, 8];
    for (text, at, says) in [
        (
            r#"#sdy.sharding<@mesh, [{"z"}, {}]>"#,
            23,
            "unknown mesh axis",
        ),
        (
            r#"#sdy.sharding<@mesh, [{"y":(3)2}, {}]>"#,
            23,
            "does not fit",
        ),
        (
            r#"#sdy.sharding<@mesh, [{"y":(1)2, "y":(2)2}, {}]>"#,
            33,
            "make one",
        ),
        (r#"#sdy.sharding<@mesh, [{}p1, {}]>"#, 24, "no priority"),
        (
            r#"#sdy.sharding<@mesh, [{"x"}]>"#,
            21,
            "1 dims' axes for an array of 2",
        ),
        (r#"#sdy.sharding<@mesh, [{"x"}, {"x"}]>"#, 30, "used twice"),
        (
            r#"#sdy.sharding<@mesh, [{"x"}, {}], reduced={"y"}>"#,
            34,
            "reduced",
        ),
        (
            r#"#sdy.sharding<@mesh, [{"x"}, {}]> tail"#,
            34,
            "after the sharding",
        ),
        (r#"#sdy.sharding<@mesh, [{'x'}, {}]>"#, 23, "double quotes"),
        (
            r#"#sdy.sharding<mesh<[], device_ids=[3]>, [{}, {}]>"#,
            40,
            "maximal",
        ),
        (
            r#"#sdy.sharding<@mesh, [{"x":(1)99999999999999999999}, {}]>"#,
            30,
            "2^63",
        ),
    ] {
        let (msg, off) = offset(text, Some(&m), &d);
        assert!(msg.contains(says) && off == at, "{text}: {msg} at {off}");
    }
    // No mesh to name.
    let (msg, off) = offset(r#"#sdy.sharding<@mesh, [{"x"}, {}]>"#, None, &d);
    assert!(msg.contains("not defined") && off == 14, "{msg}");
    // Manual axes and other ops have no tensor-sharding form.
    let s = Sharding::new(
        &m,
        d.to_vec(),
        vec![vec![0], vec![]],
        &[(1, AxisUse::Manual)],
    )
    .expect("s");
    assert!(matches!(
        print(Notation::Sdy, &m, &s),
        Err(ShardError::Inexpressible { .. })
    ));
    let s = Sharding::new(
        &m,
        d.to_vec(),
        vec![vec![0], vec![]],
        &[(1, AxisUse::Partial(ReduceOp::Max))],
    )
    .expect("s");
    assert!(matches!(
        print(Notation::Sdy, &m, &s),
        Err(ShardError::Inexpressible { .. })
    ));
}

/// A valid text with one character changed, inserted or removed at a random place.
fn mutated() -> impl Strategy<Value = String> {
    let seeds = [
        r#"sdy.mesh @mesh = <["x"=2, "y"=4]> {a = {b}}; #sdy.sharding<@mesh, [{"y":(2)2, "x", ?}p1, {}], replicated={"y":(1)2}, unreduced={}>"#,
        r#"#sdy.sharding<mesh<["x"=4], device_ids=[0, 3, 1, 2]>, [{"x"}, {}]>"#,
        r#"#sdy.sharding<mesh<[], device_ids=[3]>, []>"#,
    ];
    (
        0..seeds.len(),
        any::<prop::sample::Index>(),
        0..3u8,
        prop::sample::select(&b"\"{}[]<>@,:()?=;#p0123456789xy \n\t\xc3"[..]),
    )
        .prop_map(move |(k, at, how, c)| {
            let mut b = seeds[k].as_bytes().to_vec();
            let i = at.index(b.len() + 1);
            match how {
                0 if i < b.len() => b[i] = c,
                1 => b.insert(i, c),
                _ if i < b.len() => {
                    b.remove(i);
                }
                _ => {}
            }
            String::from_utf8_lossy(&b).into_owned()
        })
}

/// A sharding of a rank-0..3 array on a mesh of up to three axes: each axis splits a dim, replicates or
/// holds partial sums.
fn sharding() -> impl Strategy<Value = (Mesh, Sharding)> {
    (
        prop::collection::vec(1u64..=4, 1..=3),
        0usize..=3,
        prop::collection::vec(0usize..6, 3),
        any::<bool>(),
    )
        .prop_map(|(sizes, rank, uses, reorder)| {
            let names = ["x", "y", "z"];
            let axes: Vec<(&str, u64)> = names.iter().copied().zip(sizes.iter().copied()).collect();
            let n: u64 = sizes.iter().product();
            let mut ids: Vec<u64> = (0..n).collect();
            if reorder {
                ids.reverse();
            }
            let m = Mesh::with_devices(&axes, ids).expect("mesh");
            let mut dim_axes = vec![Vec::new(); rank];
            let mut others = Vec::new();
            for (a, &u) in uses.iter().enumerate().take(sizes.len()) {
                match u {
                    0..=2 if rank > 0 => dim_axes[u % rank].push(a),
                    3 => others.push((a, AxisUse::Partial(ReduceOp::Sum))),
                    _ => {}
                }
            }
            let dims = vec![12u64; rank];
            let s = Sharding::new(&m, dims, dim_axes, &others).expect("sharding");
            (m, s)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any text near a valid one reads or is refused with an offset inside it; it never panics.
    #[test]
    fn the_reader_never_panics(text in mutated()) {
        let m = mesh(&[("x", 2), ("y", 4)]);
        for dims in [&[8u64, 8][..], &[8][..], &[][..]] {
            if let Err(ShardError::Parse { offset, .. }) =
                parse_any(&text, Some(Notation::Sdy), Some(&m), dims)
            {
                prop_assert!(offset <= text.len());
            }
            let _ = parse_any(&text, None, None, dims);
        }
        let _ = Mesh::from_spec(&text, None);
    }

    /// Printed and read back on the same mesh, a sharding is the same one, and prints the same.
    #[test]
    fn print_then_read_is_the_identity((m, s) in sharding()) {
        let t = print(Notation::Sdy, &m, &s).expect("sdy");
        let (m2, s2) = parse_any(&t, None, Some(&m), s.dims()).expect("read back");
        prop_assert_eq!(&m2, &m);
        prop_assert_eq!(&s2, &s);
        prop_assert_eq!(print(Notation::Sdy, &m2, &s2).expect("sdy"), t);
    }
}
