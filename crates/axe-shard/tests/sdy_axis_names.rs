//! Shardy text never mistakes a user's axis names for the pieces of a split axis: mesh axes named `x_0`,
//! `x_1` print by their names, while the pieces a split of `x` leaves print as sub-axes of `x`; either
//! text reads back to the same holdings, and its mesh names each axis once.
#![allow(clippy::panic)]

use axe_shard::notation::sdy::parse_sdy_mesh;
use axe_shard::notation::sdy_print::sdy_mesh;
use axe_shard::{parse_any, print, Mesh, Notation, Sharding};

fn read(text: &str, m: &Mesh, dims: &[u64]) -> (Mesh, Sharding) {
    parse_any(text, None, Some(m), dims).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn sdy(m: &Mesh, s: &Sharding) -> String {
    print(Notation::Sdy, m, s).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn axes_named_like_pieces_print_by_their_names() {
    let m = Mesh::from_spec("x_0=2,x_1=2", None).expect("mesh");
    assert_eq!((m.split_of(0), m.split_of(1)), (None, None));
    for (spec, want) in [
        ("P('x_0')", r#"#sdy.sharding<@mesh, [{"x_0"}, {}]>"#),
        (
            "P(('x_0', 'x_1'))",
            r#"#sdy.sharding<@mesh, [{"x_0", "x_1"}, {}]>"#,
        ),
        (
            "P('x_1', 'x_0')",
            r#"#sdy.sharding<@mesh, [{"x_1"}, {"x_0"}]>"#,
        ),
    ] {
        let (rm, s) = read(spec, &m, &[4, 4]);
        assert_eq!(sdy(&rm, &s), want, "{spec}");
    }
    assert_eq!(sdy_mesh(&m), r#"<["x_0"=2, "x_1"=2]>"#);
    // JAX's own export names them so too: `{"x_0"}` over `sdy.mesh @mesh = <["x_0"=2, "x_1"=2]>`.
    let (_, s) = read(r#"#sdy.sharding<@mesh, [{"x_0"}, {"x_1"}]>"#, &m, &[4, 4]);
    assert_eq!(s.dim_axes(), &[vec![0], vec![1]]);
}

#[test]
fn the_pieces_of_a_split_axis_print_as_its_sub_axes() {
    let x4 = Mesh::new(&[("x", 4)]).expect("mesh");
    // HLO read onto x=4 splits it: the pieces are named x_0, x_1 and know they split x.
    let (m, s) = read("{devices=[2,2]<=[4]}", &x4, &[4, 4]);
    assert_eq!(m.names(), ["x_0", "x_1"]);
    assert_eq!((m.split_of(0), m.split_of(1)), (Some("x"), Some("x")));
    assert_eq!(m, Mesh::from_spec("x_0=2,x_1=2", None).expect("mesh"));
    let t = sdy(&m, &s);
    assert_eq!(t, r#"#sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2}]>"#);
    assert_eq!(sdy_mesh(&m), r#"<["x"=4]>"#);
    // The same holdings, read back on the unsplit mesh.
    let (m2, s2) = read(&t, &x4, &[4, 4]);
    assert_eq!(
        s2.regions(&m2).expect("regions"),
        s.regions(&m).expect("regions")
    );
    // A piece split again stays a piece of x: x_0_0, x_0_1, x_1 print as sub-axes of x.
    let m8 = Mesh::new(&[("x", 8)]).expect("mesh");
    let (m, s) = read("{devices=[2,4]<=[8]}", &m8, &[8, 8]);
    let (m3, s3) = read(
        r#"#sdy.sharding<@mesh, [{"x_0"}, {"x_1":(1)2}]>"#,
        &m,
        &[8, 8],
    );
    assert_eq!(m.names(), ["x_0", "x_1"]);
    assert!(
        (0..m3.rank()).all(|a| m3.split_of(a) == Some("x")),
        "{:?}",
        m3.names()
    );
    assert_eq!(
        sdy(&m, &s),
        r#"#sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)4}]>"#
    );
    assert_eq!(
        sdy(&m3, &s3),
        r#"#sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2}]>"#
    );
}

#[test]
fn a_split_beside_an_axis_named_like_its_pieces_is_never_ambiguous() {
    // `x_0` is the user's axis; splitting `y` leaves y_0, y_1, pieces of y; none of them prints as `x`.
    let m = Mesh::from_spec("x_0=2,y=4", None).expect("mesh");
    let (rm, s) = read("{devices=[2,2,2]<=[8]}", &m, &[4, 4, 4]);
    assert_eq!(rm.names(), ["x_0", "y_0", "y_1"]);
    let t = sdy(&rm, &s);
    assert_eq!(
        t,
        r#"#sdy.sharding<@mesh, [{"x_0"}, {"y":(1)2}, {"y":(2)2}]>"#
    );
    assert_eq!(sdy_mesh(&rm), r#"<["x_0"=2, "y"=4]>"#);
    // A split whose pieces would take another axis's name is refused, naming the clash.
    let clash = Mesh::from_spec("x=4,x_0=2", None).expect("mesh");
    let e = parse_any("{devices=[2,2,2]<=[8]}", None, Some(&clash), &[4, 4, 4])
        .expect_err("clash")
        .to_string();
    assert!(
        e.contains("splitting mesh axis \"x\" makes a piece named \"x_0\", the name of another"),
        "{e}"
    );
    // Every printed mesh names each axis once and reads back to the same holdings.
    for spec in [
        "x_0=2,x_1=2,x=2",
        "x_0=2,x_1=4",
        "a_0=2,a_1=2,b=2",
        "x=2,x_0=2,x_1=2",
    ] {
        let mesh = Mesh::from_spec(spec, None).expect("mesh");
        for hlo in [
            "{devices=[2,4]<=[8]}",
            "{devices=[4,2]<=[8]}",
            "{devices=[8,1]<=[8]}",
        ] {
            let Ok((rm, s)) = parse_any(hlo, None, Some(&mesh), &[8, 8]) else {
                continue;
            };
            let def = sdy_mesh(&rm);
            let own = parse_sdy_mesh(&def).expect("printed mesh");
            let mut names = own.names().to_vec();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), own.rank(), "{spec} {hlo}: {def}");
            let t = format!("sdy.mesh @mesh = {def}\n{}", sdy(&rm, &s));
            let (m2, s2) =
                parse_any(&t, None, None, &[8, 8]).unwrap_or_else(|e| panic!("{t}: {e}"));
            assert_eq!(
                s2.regions(&m2).expect("regions"),
                s.regions(&rm).expect("regions"),
                "{spec} {hlo}: {t}"
            );
        }
    }
}
