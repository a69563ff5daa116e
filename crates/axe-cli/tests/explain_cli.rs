#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `axe explain` and `axe render` as a user runs them.

mod common;

use common::run;
use serde_json::Value;

#[test]
fn explain_defaults_to_figure_1_plain_when_piped() {
    let (code, out, err) = run(&["explain"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("f32[3,5]{1,0:T(2,2)}\n"), "{out}");
    assert!(
        out.contains("36 B of padding")
            && out.contains("S[(2,2,3,2):(12,2,4,1)]")
            && out.contains("np.pad"),
        "{out}"
    );
    assert!(!out.contains('\x1b'), "no colour when piped");
    let (_, coloured, _) = run(&["explain", "--color", "always"]);
    assert!(coloured.contains("\x1b[48;5;"), "colour on request");
}

#[test]
fn explain_json_and_axe_layouts() {
    let (code, out, _) = run(&["explain", "--json", "f32[3,5]{1,0:T(2,2)}"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["sizes"]["padding_bytes"], 36);
    assert_eq!(v["axe"]["padded_shape"], serde_json::json!([4, 6]));
    assert_eq!(v["grid"][2][3]["label"], "17");
    assert_eq!(v["grid"][3][0]["padding"], true);
    let (code, out, _) = run(&[
        "explain",
        "S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp",
        "--shape",
        "8,16",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("W5 L5 r1") && out.contains("again at warp +4"),
        "{out}"
    );
    let (code, _, err) = run(&["explain", "f32[3,5]{1,0:T(2,"]);
    assert_eq!(code, 1);
    assert!(err.contains('^'), "{err}");
}

#[test]
fn explain_a_huge_shape_shows_a_corner() {
    let (code, out, _) = run(&["explain", "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}"]);
    assert_eq!(code, 0);
    assert!(
        out.lines().count() < 80,
        "readable: {} lines",
        out.lines().count()
    );
    assert!(out.contains("showing the first 16 of 1280 rows"));
}

#[test]
fn render_svg_png_and_text() {
    let dir = common::folder("render-cli");
    let svg = dir.join("f.svg").to_string_lossy().to_string();
    let png = dir.join("f.png").to_string_lossy().to_string();
    assert_eq!(
        run(&["render", "f32[4,8]{1,0:T(2,4)(2,1)}", "-o", &svg]).0,
        0
    );
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    assert_eq!(
        run(&[
            "render",
            "S[(2,4,2,8):(2@gpuid,8,1@gpuid,1)]",
            "--shape",
            "8,16",
            "-o",
            &png
        ])
        .0,
        0
    );
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
    let (code, out, _) = run(&["render", "f32[3,5]{1,0:T(2,2)}", "--format", "txt"]);
    assert_eq!(code, 0);
    assert!(out.contains("12 13 16 17 20"), "{out}");
    let (code, _, err) = run(&["render", "f32[3,5]", "--format", "png"]);
    assert_eq!(code, 1);
    assert!(err.contains("output file"), "{err}");
}

/// `explain --json`'s field keys are fixed: what varies with the input (a tile, an axis, a number) is a
/// value under a fixed key, never part of a key.
#[test]
fn explain_json_keys_do_not_change_with_the_input() {
    let keys = |args: &[&str]| -> (Vec<String>, Value) {
        let mut all = vec!["explain", "--json"];
        all.extend_from_slice(args);
        let (code, out, err) = run(&all);
        assert_eq!(code, 0, "{args:?}: {err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let fields = v["fields"].as_object().unwrap();
        (fields.keys().cloned().collect(), v["fields"].clone())
    };
    let (a, fa) = keys(&["f32[3,5]{1,0:T(2,2)}"]);
    let (b, fb) = keys(&["f32[4,8]{1,0:T(2,4)}"]);
    assert_eq!(a, b, "the same keys for another tile");
    assert!(a.contains(&"tiles".to_string()), "{a:?}");
    assert_eq!(fa["tiles"][0]["of"], "(2,2)", "the tile is a value: {fa}");
    assert!(fb["tiles"][0]["text"]
        .as_str()
        .unwrap()
        .contains("2×4 tiles"));
    let (c, fc) = keys(&["bf16[16,256]{1,0:T(8,128)(2,1)L(4)S(1)}"]);
    assert_eq!(fc["tiles"][1]["of"], "(2,1)");
    assert_eq!(fc["memory space"][0]["of"], "1");
    assert_eq!(fc["tail padding alignment"][0]["of"], "4");
    let (d, fd) = keys(&[
        "S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp",
        "--shape",
        "8,16",
    ]);
    let axes: Vec<&str> = fd["axes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["of"].as_str().unwrap())
        .collect();
    assert_eq!(axes, ["lane", "reg", "warp"]);
    for k in a.iter().chain(&c).chain(&d) {
        assert!(
            !k.contains(|ch: char| ch.is_ascii_digit() || ch == '(' || ch == '@'),
            "a key names the input: {k}"
        );
    }
}
