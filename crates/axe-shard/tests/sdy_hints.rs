//! Shardy's open dims (`?`) and priorities (`p0`, ...) against jaxlib 0.10.2's own Shardy
//! (`corpus/sdy_hints.py` writes the corpus): each random `#sdy.sharding<...>` that Shardy's verifier accepts
//! reads to the holdings of the HloSharding XLA exports, keeps its hints, and prints back as Shardy's printer
//! prints it; the ones it refuses are refused; JAX's `P.UNCONSTRAINED` constraints print as JAX lowers them.
//! The other notations print the sharding the hints leave.
#![allow(clippy::panic)]

use axe_shard::notation::sdy::parse_sdy_mesh;
use axe_shard::notation::sdy_print::sdy_mesh;
use axe_shard::{parse_any, parse_pair, print, DimHint, Mesh, Notation, Sharding};

mod common;
use common::holdings;

/// The hints a printed `[{...}p1, {?}, ...]` list gives, read independently of axe's reader: per `{...}`,
/// whether it holds `?`, and the digits after `}p`.
fn hints_in(text: &str) -> Vec<DimHint> {
    let list = &text[text.find(", [").expect("dims list") + 3..];
    let mut out = Vec::new();
    let mut rest = &list[..list.find(']').expect("]")];
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}').expect("}");
        let after = &rest[close + 1..];
        let digits: String = after
            .strip_prefix('p')
            .map(|p| p.chars().take_while(char::is_ascii_digit).collect())
            .unwrap_or_default();
        out.push(DimHint {
            open: rest[open..close].contains('?'),
            priority: digits.parse().ok(),
        });
        rest = after;
    }
    out
}

fn hints_of(s: &Sharding) -> Vec<DimHint> {
    (0..s.dims().len()).map(|d| s.dim_hint(d)).collect()
}

fn line_dims(v: &serde_json::Value) -> Vec<u64> {
    v["shape"]
        .as_array()
        .expect("shape")
        .iter()
        .map(|d| d.as_u64().expect("dim"))
        .collect()
}

#[test]
fn open_dims_and_priorities_print_as_shardy_prints_them() {
    let (mut printed, mut refused, mut inline, mut constraints) = (0, 0, 0, 0);
    for (i, line) in include_str!("corpus/sdy_hints.jsonl").lines().enumerate() {
        let at = i + 1;
        let v: serde_json::Value = serde_json::from_str(line).expect("json line");
        let mesh = parse_sdy_mesh(v["mesh"].as_str().expect("mesh")).expect("mesh");
        let dims = line_dims(&v);
        if let Some(c) = v["constraint"].as_str() {
            // JAX's with_sharding_constraint: P.UNCONSTRAINED is an open dim listing no axis.
            let (m, s) = parse_any(c, None, Some(&mesh), &dims).expect("constraint");
            let want = format!("#sdy.sharding{c}");
            assert_eq!(
                print(Notation::Sdy, &m, &s).expect("sdy"),
                want,
                "line {at}"
            );
            assert_eq!(hints_of(&s), hints_in(&want), "line {at}");
            let spec = v["spec"]
                .as_str()
                .expect("spec")
                .replace("UNCONSTRAINED", "None");
            let (m0, s0) = parse_any(&spec, Some(Notation::Jax), Some(&mesh), &dims).expect("P");
            assert_eq!(s, s0, "line {at}: equal to {spec}");
            assert_eq!(holdings(&m, &s), holdings(&m0, &s0), "line {at}");
            // JAX's PartitionSpec prints the axes listed (its UNCONSTRAINED is for constraints alone).
            assert_eq!(
                print(Notation::Jax, &m, &s).expect("jax"),
                print(Notation::Jax, &m0, &s0).expect("jax"),
                "line {at}"
            );
            constraints += 1;
            continue;
        }
        let sdy = v["sdy"].as_str().expect("sdy");
        let got = parse_any(sdy, None, Some(&mesh), &dims);
        if let Some(e) = v["error"].as_str() {
            assert!(got.is_err(), "line {at}: {sdy} is refused by Shardy: {e}");
            refused += 1;
            continue;
        }
        let want = v["printed"].as_str().expect("printed");
        let (m1, s1) = got.unwrap_or_else(|e| panic!("line {at}: {sdy}: {e}"));
        assert_eq!(hints_of(&s1), hints_in(want), "line {at}: {sdy}");
        let hlo = v["hlo"].as_str().expect("hlo");
        let (m2, s2) = parse_any(hlo, Some(Notation::Hlo), Some(&mesh), &dims).expect("hlo");
        assert_eq!(
            holdings(&m1, &s1),
            holdings(&m2, &s2),
            "line {at}: {sdy} against {hlo}"
        );
        let t = print(Notation::Sdy, &m1, &s1).unwrap_or_else(|e| panic!("line {at}: {e}"));
        if sdy.starts_with("#sdy.sharding<@mesh") {
            assert_eq!(t, want, "line {at}: {sdy}");
            printed += 1;
        } else {
            // An inline mesh: on its own mesh, the same dims list and mesh as Shardy prints.
            let (m3, s3) = parse_any(sdy, None, None, &dims).expect("own mesh");
            let own = print(Notation::Sdy, &m3, &s3).expect("sdy");
            let list = |t: &str| t[t.find(", [").expect("list")..].to_string();
            assert_eq!(list(&own), list(want), "line {at}: {sdy}");
            let mesh_text = &want["#sdy.sharding<mesh".len()..want.find(", [").expect("list")];
            assert_eq!(sdy_mesh(&m3), mesh_text, "line {at}");
            inline += 1;
        }
        // Printed back and read again on the same mesh: the same holdings and hints.
        let (m4, s4) = parse_any(&t, None, Some(&m1), &dims).expect("printed back");
        assert_eq!(holdings(&m1, &s1), holdings(&m4, &s4), "line {at}: {t}");
        assert_eq!(hints_of(&s4), hints_of(&s1), "line {at}: {t}");
    }
    assert!(
        printed >= 60 && refused >= 20 && inline >= 20 && constraints == 10,
        "{printed} printed, {refused} refused, {inline} inline, {constraints} constraints"
    );
}

/// The shardings `scripts/shard-sdy-corpus` exported through XLA keep their hints, read and printed.
#[test]
fn the_exported_corpus_keeps_its_hints() {
    let mut with = 0;
    for (i, line) in include_str!("corpus/sdy.jsonl").lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json line");
        if v.get("hlo").is_none() || v.get("spec").is_some() {
            continue;
        }
        let mesh = parse_sdy_mesh(v["mesh"].as_str().expect("mesh")).expect("mesh");
        let sdy = v["sdy"].as_str().expect("sdy");
        let (m, s) = parse_any(sdy, None, Some(&mesh), &line_dims(&v)).expect("read");
        if s.maximal_device().is_some() {
            continue;
        }
        let want = hints_in(sdy);
        assert_eq!(hints_of(&s), want, "line {}: {sdy}", i + 1);
        let t = print(Notation::Sdy, &m, &s).expect("sdy");
        assert_eq!(hints_in(&t), want, "line {}: {t}", i + 1);
        with += usize::from(s.has_hints());
    }
    assert!(with >= 40, "{with} lines with hints");
}

#[test]
fn hints_survive_the_meshes_a_reading_makes() {
    let x4 = Mesh::new(&[("x", 4), ("y", 2)]).expect("mesh");
    // Sub-axes split the mesh (x_0, x_1): hints stay on their dims.
    let text = r#"#sdy.sharding<@mesh, [{"x":(2)2, ?}p3, {?}, {"y"}p0]>"#;
    let (m, s) = parse_any(text, None, Some(&x4), &[8, 8, 8]).expect("read");
    assert_eq!(m.names(), ["x_0", "x_1", "y"]);
    assert_eq!(print(Notation::Sdy, &m, &s).expect("sdy"), text);
    // A plan's pair, each text cutting the mesh its own way: both keep theirs.
    let (pm, a, b) = parse_pair(
        r#"#sdy.sharding<@mesh, [{"x":(1)2, ?}, {}]>"#,
        r#"#sdy.sharding<@mesh, [{}, {"y"}p2]>"#,
        None,
        Some(&x4),
        &[8, 8],
    )
    .expect("pair");
    assert_eq!(
        print(Notation::Sdy, &pm, &a).expect("sdy"),
        r#"#sdy.sharding<@mesh, [{"x":(1)2, ?}, {}]>"#
    );
    assert_eq!(
        print(Notation::Sdy, &pm, &b).expect("sdy"),
        r#"#sdy.sharding<@mesh, [{}, {"y"}p2]>"#
    );
    // An inline mesh over device ids, read onto the caller's mesh (through its HloSharding).
    let text = r#"#sdy.sharding<mesh<["x"=4, "y"=2], device_ids=[1, 0, 3, 2, 5, 4, 7, 6]>, [{"x", ?}p1, {}]>"#;
    let (m, s) = parse_any(text, None, Some(&x4), &[8, 8]).expect("read");
    assert_eq!(hints_of(&s), hints_in(text));
    let back = print(Notation::Sdy, &m, &s).expect("sdy");
    assert!(back.ends_with(r#"[{"x", ?}p1, {}]>"#), "{back}");
}

#[test]
fn equality_and_the_other_notations_leave_hints_out() {
    let m = Mesh::new(&[("x", 2), ("y", 4)]).expect("mesh");
    let (_, open) =
        parse_any(r#"<@mesh, [{"x", ?}p1, {?}]>"#, None, Some(&m), &[8, 8]).expect("open");
    let (_, closed) = parse_any("P('x')", None, Some(&m), &[8, 8]).expect("closed");
    assert!(open.has_hints() && !closed.has_hints());
    assert_eq!(open, closed);
    for n in Notation::ALL {
        let p = print(n, &m, &open).expect("print");
        if n == Notation::Sdy {
            assert_eq!(p, r#"#sdy.sharding<@mesh, [{"x", ?}p1, {?}]>"#);
        } else {
            assert_eq!(p, print(n, &m, &closed).expect("print"), "{}", n.name());
        }
    }
    // A priority on a closed dim listing no axis is refused (as Shardy's verifier refuses `{}p1`).
    let e = closed
        .clone()
        .with_hints(vec![
            DimHint::default(),
            DimHint {
                open: false,
                priority: Some(1),
            },
        ])
        .expect_err("refused")
        .to_string();
    assert!(e.contains("dim 1 is closed and lists no mesh axis"), "{e}");
    let e = closed
        .with_hints(vec![DimHint {
            open: true,
            priority: None,
        }])
        .expect_err("refused")
        .to_string();
    assert!(e.contains("1 dims' hints for an array of 2 dims"), "{e}");
}
