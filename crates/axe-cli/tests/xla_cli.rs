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

#[test]
fn index_all_lists_the_l_tail_as_padding() {
    // The review's repro: `size` counts 10 and 21 slots, and so does the listing.
    for (shape, slots, elements) in [
        ("f32[2,3]{1,0:T(2,2)L(5)}", 10, 6),
        ("f32[3,5]{1,0:L(7)}", 21, 15),
    ] {
        let v = json(&["xla", "index", "--json", shape, "--all"]);
        let mem = v["memory"].as_array().unwrap();
        assert_eq!(mem.len(), slots, "{shape}");
        assert_eq!(mem.iter().filter(|m| !m.is_null()).count(), elements);
        assert_eq!(mem[slots - 1], Value::Null, "{shape}: the tail is padding");
        let (_, out, _) = run(&["xla", "index", shape, "--all"]);
        assert!(
            out.starts_with(&format!("{shape}: memory order ({slots} slots")),
            "{out}"
        );
    }
}

/// Random tiled f32 layouts with `L`: rank 1–3, dims 1–9, a shuffled order, one or two tiles.
fn random_layouts(n: usize) -> Vec<String> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |k: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % k
    };
    (0..n)
        .map(|_| {
            let rank = 1 + next(3) as usize;
            let dims: Vec<String> = (0..rank).map(|_| (1 + next(9)).to_string()).collect();
            let mut order: Vec<usize> = (0..rank).collect();
            for i in (1..rank).rev() {
                order.swap(i, next(i as u64 + 1) as usize);
            }
            let order: Vec<String> = order.iter().map(usize::to_string).collect();
            let first: Vec<String> = (0..rank.min(2))
                .map(|_| (1 + next(5)).to_string())
                .collect();
            let mut tiles = format!("({})", first.join(","));
            if next(2) == 0 {
                tiles.push_str(&format!("({})", 1 + next(5)));
            }
            format!(
                "f32[{}]{{{}:T{tiles}L({})}}",
                dims.join(","),
                order.join(","),
                1 + next(9)
            )
        })
        .collect()
}

#[test]
fn index_all_has_as_many_slots_as_size_counts() {
    // Law: the rows of `index --all` are the physical bytes in f32s, over random tiled layouts with L.
    let shapes = random_layouts(80);
    let mut args = vec!["xla", "index", "--json", "--all"];
    args.extend(shapes.iter().map(String::as_str));
    let listed = common::json_lines(&args);
    let mut args = vec!["xla", "size", "--json"];
    args.extend(shapes.iter().map(String::as_str));
    let sized = common::json_lines(&args);
    assert_eq!((listed.len(), sized.len()), (shapes.len(), shapes.len()));
    for ((shape, l), s) in shapes.iter().zip(&listed).zip(&sized) {
        let l = l.get("result").unwrap_or(l);
        let s = s.get("result").unwrap_or(s);
        let slots = l["memory"].as_array().unwrap().len() as i64;
        assert_eq!(slots * 4, s["physical_bytes"].as_i64().unwrap(), "{shape}");
    }
}

#[test]
fn split_configs_are_sized_split_by_split() {
    let v = json(&["xla", "size", "--json", "f32[16]{0:T(8)SC(0:4)}"]);
    assert_eq!(
        (
            v["logical_bytes"].clone(),
            v["xla_array_size_bytes"].clone(),
            v["physical_bytes"].clone()
        ),
        (json!(64), json!(64), json!(96))
    );
    let (_, out, _) = run(&["xla", "size", "f32[16]{0:T(8)SC(0:4)}"]);
    assert!(
        out.contains("largest split") && out.contains("32 more bytes"),
        "{out}"
    );
    let (_, out, _) = run(&["xla", "index", "--all", "f32[16]{0:T(8)SC(0:4)}"]);
    assert!(out.contains("order of the unsplit array"), "{out}");
}

#[test]
fn negative_indices_are_out_of_bounds() {
    for index in [["--index", "-1"], ["--index", "-1,0"]] {
        let shape = if index[1] == "-1" {
            "f32[5]"
        } else {
            "f32[5,2]"
        };
        let (code, _, err) = run(&["xla", "index", shape, index[0], index[1]]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("is out of bounds for dimensions"), "{err}");
    }
}

#[test]
fn sub_byte_sizes_near_i64_max_and_overflows_name_the_shape() {
    let v = json(&["xla", "size", "--json", "s4[9223372036854775807]{0:E(4)}"]);
    assert_eq!(v["logical_bytes"], json!(1i64 << 62));
    assert_eq!(v["physical_bytes"], json!(1i64 << 62));
    let shape = "f32[9223372036854775807]{0:T(1024)}";
    let (code, _, err) = run(&["xla", "index", shape, "--index", "1"]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("multiplying dimensions of {shape}")),
        "{err}"
    );
}

#[test]
fn from_axe_refuses_token_and_opaque() {
    for ty in ["token", "opaque"] {
        let (code, out, err) = run(&[
            "xla",
            "from-axe",
            "S[(3,5):(5,1)]",
            "--shape",
            "3,5",
            "--type",
            ty,
        ]);
        assert_eq!(code, 1, "{out}");
        assert!(
            err.contains(&format!("--type {ty} is not an array element type")),
            "{err}"
        );
    }
    let v = json(&[
        "xla",
        "from-axe",
        "--json",
        "S[(3,5):(5,1)]",
        "--shape",
        "3,5",
        "--type",
        "bf16",
    ]);
    assert_eq!(v["shape"], "bf16[3,5]{1,0}");
}

/// A tuple's size is XLA's `ByteSizeOf`: its own index table, 8 bytes an element (its elements are buffers
/// of their own); each part is listed with its sizes, nested tuples with their tables.
#[test]
fn tuple_sizes_are_index_tables_and_their_parts() {
    let (code, out, err) = run(&["xla", "size", "(f32[2], s32[])"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("(f32[2]{0}, s32[]): tuple of 2 elements, index table 16 B\n[0] f32[2]{0}: logical 8 B,"),
        "{out}"
    );
    assert!(
        out.contains("\n[1] s32[]: logical 4 B, XLA ArraySize 4 B, physical 4 B\n"),
        "{out}"
    );
    assert!(
        out.contains("\nXLA ByteSizeOf        16 (the tuple's own index table"),
        "{out}"
    );
    let v = json(&[
        "xla",
        "size",
        "--json",
        "(f32[2], (s32[], f32[3]{0:T(2)}), token[], opaque[])",
    ]);
    assert_eq!(v["byte_size_of"], 32);
    assert_eq!(v["index_table_bytes"], 48);
    assert_eq!(
        (v["logical_bytes"].clone(), v["physical_bytes"].clone()),
        (json!(24), json!(28))
    );
    let parts: Vec<(Value, Value, Value)> = v["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["index"].clone(),
                p["kind"].clone(),
                p["byte_size_of"].clone(),
            )
        })
        .collect();
    assert_eq!(
        parts,
        [
            (json!([]), json!("tuple"), json!(32)),
            (json!([0]), json!("array"), json!(8)),
            (json!([1]), json!("tuple"), json!(16)),
            (json!([1, 0]), json!("array"), json!(4)),
            (json!([1, 1]), json!("array"), json!(12)),
            (json!([2]), json!("token"), json!(0)),
            (json!([3]), json!("opaque"), json!(8)),
        ]
    );
    assert_eq!(v["parts"][4]["physical_bytes"], 16);
    // An array with no size inside a tuple is an error, not a panic.
    let (code, _, err) = run(&["xla", "size", "(f32[?])"]);
    assert_eq!(code, 1);
    assert!(err.contains("unbounded dimension"), "{err}");
}
