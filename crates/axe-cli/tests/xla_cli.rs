#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `axe xla` as a user runs it.

mod common;

use common::run;
use serde_json::{json, Value};

fn json(args: &[&str]) -> Value {
    common::json_lines(args).remove(0)
}

#[test]
fn parse_prints_validates_and_lists_fields() {
    let v = json(&[
        "xla",
        "parse",
        "--json",
        "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}",
    ]);
    assert_eq!(v["printed"], "bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}");
    assert_eq!(v["valid"], true);
    assert_eq!(v["fields"]["layout"]["tiles"], json!([[8, 128], [2, 1]]));
    assert_eq!(v["fields"]["layout"]["memory_space"], 1);
    let (code, out, _) = run(&["xla", "parse", "--json", "f32[4,4]{0,0}"]);
    assert_eq!(
        code, 1,
        "an invalid shape fails the command, its report printed"
    );
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["valid"], false);
    assert!(v["validation_error"]
        .as_str()
        .unwrap()
        .contains("permutation"));
    let v = json(&["xla", "parse", "--json", "(f32[2], token[])"]);
    assert_eq!(v["printed"], "(f32[2]{0}, token[])");
    assert_eq!(v["fields"]["elements"][1]["kind"], "token");
    let (code, out, _) = run(&["xla", "parse", "--json", "f32[4]{0:L(0)}"]);
    assert_eq!(code, 1);
    assert!(
        out.contains("\"error\"") && out.contains("offset 11"),
        "{out}"
    );
}

#[test]
fn index_and_memory_order() {
    let v = json(&[
        "xla",
        "index",
        "--json",
        "f32[3,5]{1,0:T(2,2)}",
        "--index",
        "2,3",
    ]);
    assert_eq!(
        (v["logical_linear"].clone(), v["tiled_linear"].clone()),
        (json!(13), json!(17))
    );
    assert_eq!(
        (v["byte_offset"].clone(), v["bit_offset"].clone()),
        (json!(68), json!(544))
    );
    let v = json(&[
        "xla",
        "index",
        "--json",
        "s4[16]{0:T(8)E(4)}",
        "--index",
        "3",
    ]);
    assert_eq!(
        (v["byte_offset"].clone(), v["bit_offset"].clone()),
        (json!(1), json!(12))
    );
    let v = json(&["xla", "index", "--json", "f32[3,5]{1,0:T(2,2)}", "--all"]);
    let mem = v["memory"].as_array().unwrap();
    assert_eq!(mem.len(), 24);
    assert_eq!(mem[4], json!([0, 2]));
    assert_eq!(mem[9], Value::Null);
}

#[test]
fn sizes_show_both_padded_sizes() {
    let v = json(&["xla", "size", "--json", "f32[3,5]{1,0:T(8,128)(3,1)}"]);
    assert_eq!(v["logical_bytes"], 60);
    assert_eq!(v["xla_array_size_bytes"], 4096);
    assert_eq!(v["physical_bytes"], 4608);
    assert_eq!(v["padding_bytes"], 4548);
    assert_eq!(v["array_size_differs"], true);
    let (_, out, _) = run(&["xla", "size", "f32[3,5]{1,0:T(8,128)(3,1)}"]);
    assert!(out.contains("first tile only"), "{out}");
}

#[test]
fn xla_array_size_leaves_out_l_without_tiles() {
    let v = json(&["xla", "size", "--json", "f32[3,5]{1,0:L(7)}"]);
    assert_eq!(v["logical_bytes"], 60);
    assert_eq!(v["xla_array_size_bytes"], 60);
    assert_eq!(v["physical_bytes"], 84);
    let (_, out, _) = run(&["xla", "size", "f32[3,5]{1,0:L(7)}"]);
    assert!(
        out.contains("leaves out L when the layout has no tiles"),
        "{out}"
    );
    assert!(out.contains("occupies 24 more bytes"), "{out}");
}

#[test]
fn parse_lists_dim_level_types_and_prints_as_xla() {
    let v = json(&["xla", "parse", "--json", "f32[3,5]{1,0:D(C+,D~)T(2,2)}"]);
    assert_eq!(v["printed"], "f32[3,5]{1,0:T(2,2)}");
    assert_eq!(
        v["fields"]["layout"]["dim_level_types"],
        json!(["C+", "D~"])
    );
    let (code, _, err) = run(&["xla", "parse", "f32[3,5]{1,0:D(U)}"]);
    assert_ne!(code, 0);
    assert!(err.contains("unknown dimension level type \"U\""), "{err}");
}

#[test]
fn axe_form_both_ways() {
    let v = json(&["xla", "to-axe", "--json", "f32[3,5]{1,0:T(2,2)}"]);
    assert_eq!(v["layout"], "S[(2,2,3,2):(12,2,4,1)]");
    assert_eq!(v["padded_shape"], json!([4, 6]));
    assert_eq!(v["region"], json!([[0, 3], [0, 5]]));
    let v = json(&[
        "xla",
        "from-axe",
        "--json",
        "S[(2,2,3,2):(12,2,4,1)]",
        "--shape",
        "4,6",
    ]);
    assert_eq!(v["layout"], "{1,0:T(2,2)}");
    let (code, _, err) = run(&["xla", "from-axe", "S[(2,3):(3,-1)]", "--shape", "2,3"]);
    assert_eq!(code, 1);
    assert!(err.contains("not an XLA layout"), "{err}");
    // The logical shape of a padded layout: the error points at the padded shape to give instead.
    let (code, _, err) = run(&[
        "xla",
        "from-axe",
        "S[(2,2,3,2):(12,2,4,1)]",
        "--shape",
        "3,5",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("covers the padded shape"), "{err}");
}

#[test]
fn tpu_layouts_and_numpy() {
    let (code, out, _) = run(&[
        "xla",
        "tpu-layout",
        "bf16[256,1024]",
        "f32[7,2,512]",
        "s8[64,256]",
        "s4[128,128]",
        "u32[]",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "bf16[256,1024]{1,0:T(8,128)(2,1)}\nf32[7,2,512]{2,1,0:T(2,128)}\ns8[64,256]{1,0:T(8,128)(4,1)}\n\
         s4[128,128]{1,0:T(8,128)(8,1)E(4)}\nu32[]{:T(128)}\n"
    );
    let (code, out, _) = run(&["xla", "numpy", "f32[3,5]{1,0:T(2,2)}"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("def to_memory(x, fill=0):") && out.contains("y = y.reshape((2, 2, 3, 2))"),
        "{out}"
    );
}

#[test]
fn bench_xla_reports_shapes_per_second() {
    let (code, out, _) = run(&["bench", "xla", "--json", "--shapes", "200"]);
    assert_eq!(code, 0);
    let rows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let operations: Vec<&str> = rows
        .iter()
        .map(|r| r["operation"].as_str().unwrap())
        .collect();
    assert_eq!(
        operations,
        ["parse", "parse + validate", "print", "memcpy (reference)"]
    );
    assert!(rows
        .iter()
        .all(|r| r["shapes_per_second"].as_f64().unwrap() > 0.0));
}
