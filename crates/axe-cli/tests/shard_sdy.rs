//! `axe shard` with Shardy text, as JAX 0.10's lowered modules show it; pictures of partial shardings.
#![allow(clippy::unwrap_used)]

mod common;

use common::{folder, json_lines, run};

#[test]
fn shardy_text_is_read_shown_and_written() {
    // What jax.jit(f, in_shardings=NamedSharding(mesh, P('x', 'y'))).lower(x).as_text() shows.
    let v = json_lines(&[
        "shard",
        "show",
        r#"#sdy.sharding<@mesh, [{"x"}, {"y", ?}]>"#,
        "--mesh",
        r#"<["x"=2, "y"=4]>"#,
        "--shape",
        "f32[8,8]",
        "--json",
    ]);
    assert_eq!(v[0]["hlo"], "{devices=[2,4]<=[8]}");
    assert_eq!(v[0]["jax"], "P('x', 'y')");
    // The open dim stays open in Shardy's text; the other notations say the axes listed, and why.
    assert_eq!(v[0]["sdy"], r#"#sdy.sharding<@mesh, [{"x"}, {"y", ?}]>"#);
    assert!(
        v[0]["note"]
            .as_str()
            .unwrap()
            .contains("open dims (?) only steer Shardy's propagation"),
        "{}",
        v[0]
    );
    // The mesh line pasted before the attribute; a sub-axis, as XLA exports it.
    let text = "sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]>\n\
                #sdy.sharding<@mesh, [{\"y\":(2)2, \"x\"}, {}], replicated={\"y\":(1)2}>";
    let v = json_lines(&[
        "shard", "convert", text, "--to", "hlo", "--shape", "f32[8,8]", "--json",
    ]);
    assert_eq!(
        v[0]["result"],
        "{devices=[4,1,2]<=[4,2]T(1,0) last_tile_dim_replicate}"
    );
    // HLO onto a mesh it splits prints as sub-axes; a device order of its own as an inline mesh.
    for (hlo, want) in [
        (
            "{devices=[2,2]<=[4]}",
            r#"#sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2}]>"#,
        ),
        (
            "{devices=[4,1]0,3,1,2}",
            r#"#sdy.sharding<mesh<["x"=4], device_ids=[0, 3, 1, 2]>, [{"x"}, {}]>"#,
        ),
        (
            "{maximal device=3}",
            "#sdy.sharding<mesh<[], device_ids=[3]>, []>",
        ),
    ] {
        let v = json_lines(&[
            "shard", "convert", hlo, "--to", "sdy", "--mesh", "x=4", "--shape", "f32[4,4]",
            "--json",
        ]);
        assert_eq!(v[0]["result"], want, "{hlo}");
    }
    // A plan between sub-axes and a PartitionSpec.
    let v = json_lines(&[
        "shard",
        "plan",
        r#"#sdy.sharding<@mesh, [{"x":(1)2}, {}]>"#,
        "P('x')",
        "--mesh",
        "x=4",
        "--shape",
        "f32[8,8]",
        "--json",
    ]);
    assert_eq!(v[0]["collective"], "local-slice");
    // Without --shape, the rank is the dims' list.
    let (code, out, err) = run(&[
        "shard",
        "show",
        r#"#sdy.sharding<@mesh, [{}, {"x"}]>"#,
        "--mesh",
        "x=2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("P(None, 'x')"), "{out}");
}

#[test]
fn shardy_errors_point_at_their_place() {
    let (code, _, err) = run(&[
        "shard",
        "show",
        "#sdy.sharding<@mesh, [{\"x\"},\t{\"z\"}]>",
        "--mesh",
        "x=2,y=2",
        "--shape",
        "f32[4,4]",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("unknown mesh axis \"z\"") && err.contains("at offset 30"),
        "{err}"
    );
    // The caret keeps the line's tab, so it lands under the axis however wide the tab is drawn.
    let caret = format!("\n  {}\t ^", " ".repeat(28));
    assert!(err.contains(&caret), "{err:?}");
    let (code, _, err) = run(&[
        "shard",
        "show",
        r#"#sdy.sharding<@m, [{"x"}]>"#,
        "--shape",
        "f32[4]",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("mesh @m is not defined here") && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn partial_holders_are_named_apart_from_replicas() {
    let dir = folder("partial-picture");
    for name in ["p.txt", "p.svg"] {
        let path = dir.join(name);
        let (code, _, err) = run(&[
            "shard",
            "show",
            "[Partial(), Shard(0)]",
            "--mesh",
            "2,2",
            "--shape",
            "f32[4,4]",
            "-o",
            path.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        let body = std::fs::read_to_string(&path).unwrap();
        assert!(
            body.contains("0+2") && body.contains("1+3"),
            "{name}: {body}"
        );
        assert!(
            !body.contains(">0,2<") && !body.contains("  0,2\n"),
            "{name}: {body}"
        );
    }
    // The table agrees: device 0's replica group is itself.
    let v = json_lines(&[
        "shard",
        "show",
        "[Partial(), Shard(0)]",
        "--mesh",
        "2,2",
        "--shape",
        "f32[4,4]",
        "--json",
    ]);
    assert_eq!(v[0]["devices"][0]["replica_group"], serde_json::json!([0]));
}

/// Open dims and priorities go through `convert --to sdy` as they came; converting them to another
/// notation prints the axes listed, with a note on stderr (and in the JSON) that they were dropped.
#[test]
fn open_dims_and_priorities_convert_to_shardy_and_are_noted_elsewhere() {
    let text = r#"#sdy.sharding<@mesh, [{"x", ?}p1, {?}, {"y"}p0]>"#;
    let args = |to: &'static str| {
        vec![
            "shard",
            "convert",
            text,
            "--to",
            to,
            "--mesh",
            "x=2,y=4",
            "--shape",
            "f32[8,8,8]",
        ]
    };
    let (code, out, err) = run(&args("sdy"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim_end(), text);
    assert!(err.is_empty(), "{err}");
    let (code, out, err) = run(&args("jax"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim_end(), "P('x', None, 'y')");
    assert_eq!(
        err.trim_end(),
        "note: the sharding's open dims (?) and priorities (pN) only steer Shardy's propagation: jax \
         has no form for them and prints the axes listed (who holds what is the same)"
    );
    let mut json = args("hlo");
    json.push("--json");
    let v = json_lines(&json);
    assert_eq!(v[0]["result"], "{devices=[2,1,4]<=[8]}");
    assert!(
        v[0]["note"].as_str().unwrap().contains("hlo has no form"),
        "{}",
        v[0]
    );
    // A split of the mesh's axis prints as its sub-axes; axes named like pieces keep their names.
    for (mesh, want) in [
        ("x=4", r#"#sdy.sharding<@mesh, [{"x":(1)2}, {"x":(2)2}]>"#),
        ("x_0=2,x_1=2", r#"#sdy.sharding<@mesh, [{"x_0"}, {"x_1"}]>"#),
    ] {
        let v = json_lines(&[
            "shard",
            "convert",
            "{devices=[2,2]<=[4]}",
            "--to",
            "sdy",
            "--mesh",
            mesh,
            "--shape",
            "f32[4,4]",
            "--json",
        ]);
        assert_eq!(v[0]["result"], want, "{mesh}");
    }
}
