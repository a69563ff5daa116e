#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The `axe` binary as a user runs it: outputs, JSON, stdin, errors and exit codes.

mod common;

use assert_cmd::Command;
use common::{json_lines as json, run as axe};
use serde_json::Value;

#[test]
fn show_reports_size_span_and_canonical_form() {
    let v = json(&[
        "layout",
        "show",
        "--json",
        "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp",
    ]);
    assert_eq!(v[0]["size"], 128);
    assert_eq!(v[0]["span"]["lane"], 32);
    assert_eq!(v[0]["span"]["warp"], 6);
    assert_eq!(
        v[0]["canonical"],
        "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp"
    );
    let (code, out, _) = axe(&[
        "layout",
        "show",
        "T.TileLayout(T.S[(8, 2):(4 @ Axis.laneid, 1)] + 5 @ Axis.warpid)",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("layout     S[(8,2):(4@laneid,1)] + 5@warpid"),
        "{out}"
    );
}

#[test]
fn map_lists_every_coordinate_with_every_axis() {
    let v = json(&[
        "layout",
        "map",
        "--json",
        "S[(2,2):(1@a,2)] + R[2:1@a]",
        "--shape",
        "2,2",
    ]);
    assert_eq!(v[0]["shape"], serde_json::json!([2, 2]));
    assert_eq!(
        v[0]["map"][2],
        serde_json::json!([{"a": 1, "m": 0}, {"a": 2, "m": 0}])
    );
    assert_eq!(v[0]["map"].as_array().unwrap().len(), 4);
    let v = json(&[
        "layout",
        "map",
        "--json",
        "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp",
        "--shape",
        "8,16",
        "--index",
        "1,3",
    ]);
    assert_eq!(
        v[0]["coords"],
        serde_json::json!([{"lane": 5, "m": 1, "warp": 5}, {"lane": 5, "m": 1, "warp": 9}])
    );
}

#[test]
fn every_operator_verb() {
    assert_eq!(
        json(&["layout", "canon", "--json", "S[(3,1,5,7):(35,9,7,1)]"])[0],
        serde_json::json!({"canonical": "S[105:1]", "gap_condition": true})
    );
    assert_eq!(
        json(&["layout", "equiv", "--json", "S[16:1]", "S[(4,4):(4,1)]"])[0]["equivalent"],
        true
    );
    let (code, out, _) = axe(&["layout", "equiv", "--json", "S[16:1]", "S[(4,4):(1,4)]"]);
    assert_eq!(code, 1, "not equivalent: exit status 1, as cmp");
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["equivalent"],
        false
    );
    assert_eq!(
        json(&[
            "layout",
            "group",
            "--json",
            "S[(3,5,7):(35,7,1)]",
            "--shape",
            "5,21"
        ])[0],
        serde_json::json!({"grouped": "S[(5,21):(21,1)]", "blocks": [[0, 1], [1, 2]]})
    );
    let t = json(&[
        "layout",
        "tile",
        "--json",
        "S[(2,2):(2,1)]",
        "S[(2,3):(3,1)]",
        "--inner-shape",
        "2,2",
        "--outer-shape",
        "2,3",
    ]);
    assert_eq!(
        t[0],
        serde_json::json!({"layout": "S[(2,2,3,2):(12,2,4,1)]", "shape": [4, 6]})
    );
    let b = json(&[
        "layout",
        "tile-of",
        "--json",
        "S[(2,2,3,2):(12,2,4,1)]",
        "S[(2,2):(2,1)]",
        "--tiled-shape",
        "4,6",
        "--inner-shape",
        "2,2",
    ]);
    assert_eq!(
        b[0],
        serde_json::json!({"outer": "S[(2,3):(3,1)]", "shape": [2, 3]})
    );
    let a = json(&[
        "layout",
        "tile-of",
        "--json",
        "S[(2,2,3,2):(12,2,4,1)]",
        "S[(2,3):(3,1)]",
        "--tiled-shape",
        "4,6",
        "--outer",
        "--outer-shape",
        "2,3",
    ]);
    assert_eq!(
        a[0],
        serde_json::json!({"inner": "S[(2,2):(2,1)]", "shape": [2, 2]})
    );
    let s = json(&[
        "layout",
        "slice",
        "--json",
        "S[(8,8):(8,1)]",
        "--shape",
        "8,8",
        "--region",
        "2:6,0:8",
    ]);
    assert_eq!(
        s[0],
        serde_json::json!({"layout": "S[(4,8):(8,1)] + 16", "shape": [4, 8]})
    );
    let d = json(&[
        "layout",
        "sum",
        "--json",
        "S[(2,2):(8,2)]",
        "S[(2,2):(4,1)]",
        "--a-shape",
        "2,2",
        "--b-shape",
        "2,2",
    ]);
    assert_eq!(d[0]["shape"], serde_json::json!([4, 4]));
    assert_eq!(
        json(&[
            "layout",
            "canon",
            "--json",
            d[0]["layout"].as_str().unwrap()
        ])[0]["canonical"],
        "S[16:1]"
    );
}

#[test]
fn stdin_inputs_and_errors() {
    let out = Command::cargo_bin("axe")
        .unwrap()
        .args(["layout", "show", "--json", "-"])
        .write_stdin("S[4:1]\n\nS[(2,2):(1,2\nS[(2,3)]\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "one input failed");
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["size"], 4);
    assert!(lines[1]["error"].as_str().unwrap().contains("offset 12"));
    assert_eq!(lines[2]["size"], 6);
    let out = Command::cargo_bin("axe")
        .unwrap()
        .args(["layout", "equiv", "--json", "-", "-"])
        .write_stdin("S[16:1] ; S[(4,4):(4,1)]\nS[4:1] ; S[4:2]\n")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        "{\"equivalent\":true,\"input\":\"S[16:1] ; S[(4,4):(4,1)]\"}\n\
         {\"equivalent\":false,\"input\":\"S[4:1] ; S[4:2]\"}\n"
    );
}

#[test]
fn errors_say_what_and_where() {
    let (code, out, err) = axe(&["layout", "show", "S[(8,2):(4@lane,1] "]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(
        err.contains("offset 17") && err.contains("                 ^"),
        "{err}"
    );
    let (code, _, err) = axe(&[
        "layout",
        "slice",
        "S[(4,2):(1,4)]",
        "--shape",
        "8",
        "--region",
        "1:4",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("no slice"), "{err}");
    let (code, _, err) = axe(&["layout", "group", "S[4:1]", "--shape", "x"]);
    assert_eq!(code, 2, "bad usage");
    assert!(err.contains("not a non-negative integer"), "{err}");
    let (code, out, _) = axe(&["layout", "map", "--json", "S[100000000:1]"]);
    assert_eq!(code, 1);
    assert!(out.contains("use --index"), "{out}");
}

#[test]
fn bench_layout_reports_ratios() {
    let v = json(&["bench", "layout", "--json", "--millis", "10"]);
    let names: Vec<&str> = v.iter().map(|o| o["operator"].as_str().unwrap()).collect();
    for op in [
        "parse",
        "canonicalize",
        "group",
        "tile",
        "slice",
        "equivalent",
    ] {
        assert!(names.contains(&op), "{op} missing from {names:?}");
    }
    assert!(v
        .iter()
        .all(|o| o["ns_per_op"].as_f64().unwrap() > 0.0 && o["ratio"].is_number()));
}
