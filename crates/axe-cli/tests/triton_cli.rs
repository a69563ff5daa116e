//! `axe triton` as a user runs it: show (bases, `#ttg.linear`, Gluon), the operators, from-axe, errors.
#![allow(clippy::unwrap_used)]

mod common;

use common::{json_lines, run};
use serde_json::{json, Value};

const BASES: &str = r#"{"in": {"register": [[0, 1], [0, 2]], "lane": [[1, 0], [2, 0]], "warp": [], "block": []}, "out": {"dim0": 4, "dim1": 4}}"#;
const BLOCKED: &str =
    "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])";

#[test]
fn show_bases_and_their_ttg_attribute_agree() {
    let v = json_lines(&["triton", "show", BASES, "--json"]);
    let o = &v[0];
    assert_eq!(
        o["in_dims"],
        json!({"register": 4, "lane": 4, "warp": 1, "block": 1})
    );
    assert_eq!(o["out_dims"], json!({"dim0": 4, "dim1": 4}));
    // Register fastest: registers walk dim1, lanes walk dim0.
    assert_eq!(o["map"][1], json!([0, 1]));
    assert_eq!(o["map"][4], json!([1, 0]));
    assert_eq!(o["injective"], true);
    assert_eq!(o["surjective"], true);
    assert_eq!(o["axe"], "S[(4,4):(1@lane,1@reg)]");
    let ttg = o["ttg"].as_str().unwrap();
    let again = json_lines(&["triton", "show", ttg, "--json"]);
    assert_eq!(again[0]["map"], o["map"]);
}

#[test]
fn gluon_layouts_over_a_shape_including_ones_triton_cannot_lay_out() {
    let v = json_lines(&["triton", "show", BLOCKED, "--shape", "32,16", "--json"]);
    assert_eq!(v[0]["axe"], "S[(4,32,4):(1@warp,1@lane,1@reg)]");
    assert_eq!(v[0]["map"].as_array().unwrap().len(), 512);
    // 48×64 under a 16×32 tile: no linear layout, but an Axe layout and the full map.
    let g = "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[2, 2], order=[1, 0])";
    let v = json_lines(&["triton", "show", g, "--shape", "48,64", "--json"]);
    let o = &v[0];
    assert!(o["linear"].is_null());
    assert!(o["linear_why"].as_str().unwrap().contains("48"));
    assert_eq!(
        o["in_dims"],
        json!({"register": 24, "lane": 32, "warp": 4, "block": 1})
    );
    assert_eq!(o["map"].as_array().unwrap().len(), 48 * 64);
    assert_eq!(o["injective"], true);
    // A Gluon layout needs the shape.
    let (code, _, err) = run(&["triton", "show", BLOCKED]);
    assert_eq!(code, 1);
    assert!(err.contains("--shape"), "{err}");
}

#[test]
fn operators_follow_tritons_semantics() {
    let inv = json_lines(&["triton", "invert", BASES, "--json"]);
    // The inverse maps tensor coordinates (dim0 fastest) back to (register, lane, warp, block).
    assert_eq!(inv[0]["in_dims"], json!({"dim0": 4, "dim1": 4}));
    assert_eq!(inv[0]["map"][1], json!([0, 1, 0, 0]));
    assert_eq!(inv[0]["map"][4], json!([1, 0, 0, 0]));
    // The identity on (register, lane): flat input k is register k % 4, lane k / 4.
    let identity = |v: &Value| {
        let map = v["map"].as_array().unwrap();
        assert_eq!(map.len(), 16);
        for (k, m) in map.iter().enumerate() {
            assert_eq!(m, &json!([k % 4, k / 4, 0, 0]), "input {k}");
        }
    };
    // invert-and-compose(A, A): C with A(x) = A(C(x)).
    identity(&json_lines(&["triton", "invert-and-compose", BASES, BASES, "--json"])[0]);
    // compose: B after A, so A⁻¹ after A.
    let inverse = inv[0]["linear"].as_str().unwrap();
    identity(&json_lines(&["triton", "compose", BASES, inverse, "--json"])[0]);
    let p = json_lines(&["triton", "pseudoinvert", BASES, "--json"]);
    assert_eq!(p[0]["map"], inv[0]["map"]);
}

#[test]
fn from_axe_and_errors() {
    let v = json_lines(&[
        "triton",
        "from-axe",
        "S[(4,4):(1@lane,1@reg)]",
        "--shape",
        "4,4",
        "--json",
    ]);
    assert_eq!(v[0]["linear"], BASES);
    // Not a power of two: an error message, never an abort.
    let (code, _, err) = run(&[
        "triton",
        "from-axe",
        "S[(3,4):(1@lane,1@reg)]",
        "--shape",
        "3,4",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("power of two"), "{err}");
    let (code, _, err) = run(&[
        "triton",
        "show",
        r#"{"in": {"register": [[0, 3]]}, "out": {"dim0": 4"#,
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("offset") && err.contains('^'), "{err}");
    // A batch with one bad line answers every line.
    let out = assert_cmd::Command::cargo_bin("axe")
        .unwrap()
        .args(["triton", "invert", "-", "--json"])
        .write_stdin(format!("{BASES}\nnot a layout\n"))
        .output()
        .unwrap();
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0]["map"].is_array() && lines[1]["error"].is_string());
    assert_eq!(out.status.code(), Some(1));
}
