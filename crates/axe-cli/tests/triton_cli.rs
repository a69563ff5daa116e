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
    // On `offset`, a shared layout: its in-dims are offset and block (and no `#ttg.linear`).
    let v = json_lines(&[
        "triton",
        "from-axe",
        "S[(4,4):(1@offset,4@offset)]",
        "--shape",
        "4,4",
        "--json",
    ]);
    assert_eq!(v[0]["in_dims"], json!({"offset": 16, "block": 1}));
    assert!(v[0]["ttg"].is_null());
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

#[test]
fn show_text_lists_dims_and_the_map() {
    let (code, out, err) = run(&["triton", "show", BASES]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("in dims     register=4 lane=4 warp=1 block=1"),
        "{out}"
    );
    assert!(out.contains("out dims    dim0=4 dim1=4"), "{out}");
    assert!(
        out.contains(
            "map         flat input (register, lane, warp, block, first fastest) -> (dim0, dim1)"
        ),
        "{out}"
    );
    // Every flat input's coordinates, eight per line: the text map is the JSON map.
    let json = json_lines(&["triton", "show", BASES, "--json"]);
    let want: Vec<String> = json[0]["map"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("({}, {})", c[0], c[1]))
        .collect();
    let got: Vec<String> = out
        .lines()
        .skip_while(|l| !l.starts_with("map"))
        .skip(1)
        .flat_map(|l| {
            let (_, cells) = l.split_once(": ").unwrap();
            cells
                .split(") ")
                .map(|c| format!("{})", c.trim_end_matches(')')))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(got, want);
    assert!(!out.contains("use to_axe"));
    // A Gluon layout beyond Triton's powers of two lists its dims and map too.
    let g = "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[2, 2], order=[1, 0])";
    let (code, out, _) = run(&["triton", "show", g, "--shape", "48,64", "--all"]);
    assert_eq!(code, 0);
    assert!(out.contains("out dims    dim0=48 dim1=64"), "{out}");
    assert!(out.contains("in dims     register=24 lane=32 warp=4 block=1"));
    assert_eq!(
        out.lines().filter(|l| l.starts_with("  ")).count(),
        48 * 64 / 8
    );
    // Without --all the text lists the first 512 inputs and says how many there are.
    let (code, short, _) = run(&["triton", "show", g, "--shape", "48,64"]);
    assert_eq!(code, 0);
    assert_eq!(
        short
            .lines()
            .filter(|l| l.starts_with("  ") && l.contains(": ("))
            .count(),
        512 / 8
    );
    assert!(
        short.contains("... 3072 inputs in all: --all lists every one"),
        "{short}"
    );
    assert!(out.contains("axe triton to-axe"), "{out}");
}

#[test]
fn to_axe_gives_the_axe_layout_or_says_why_not() {
    let (code, out, _) = run(&["triton", "to-axe", BASES]);
    assert_eq!((code, out.trim()), (0, "S[(4,4):(1@lane,1@reg)]"));
    let g = "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[2, 2], order=[1, 0])";
    let v = json_lines(&["triton", "to-axe", g, "--shape", "48,64", "--json"]);
    assert_eq!(
        v[0]["axe"],
        "S[(3,2,8,2,2,4,4):(8@reg,2@warp,4@lane,4@reg,1@warp,1@lane,1@reg)]"
    );
    let (code, _, err) = run(&[
        "triton",
        "to-axe",
        "#ttg.linear<{offset = [[0, 1], [0, 2], [1, 1], [2, 2]]}>",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("XOR"), "{err}");
}

#[test]
fn ttg_is_printed_only_where_it_reads_back_as_the_same_layout() {
    // Out-dims in another order: the attribute would move dim0 with the registers.
    let swapped = r#"{"in": {"register": [[0, 1], [0, 2]], "lane": [[1, 0], [2, 0]]}, "out": {"dim1": 4, "dim0": 4}}"#;
    let v = json_lines(&["triton", "show", swapped, "--json"]);
    assert!(v[0]["ttg"].is_null());
    assert!(v[0]["ttg_why"].as_str().unwrap().contains("dim1, dim0"));
    let (_, out, _) = run(&["triton", "show", swapped]);
    assert!(out.contains("ttg         - (not expressible"), "{out}");
    // Wherever it is printed, it reads back as the same map and dims.
    for l in [
        BASES,
        swapped,
        r#"{"in": {"register": [[1]]}, "out": {"dim0": 4}}"#,
    ] {
        let v = json_lines(&["triton", "show", l, "--json"]);
        if let Some(ttg) = v[0]["ttg"].as_str() {
            let again = json_lines(&["triton", "show", ttg, "--json"]);
            assert_eq!(again[0]["map"], v[0]["map"]);
            assert_eq!(again[0]["out_dims"], v[0]["out_dims"]);
        } else {
            assert!(v[0]["ttg_why"].is_string());
        }
    }
}

#[test]
fn invert_of_an_xor_swizzle_over_shared_names() {
    let l =
        r#"{"in": {"dim0": [[1,1],[2,2]], "dim1": [[0,1],[0,2]]}, "out": {"dim0": 4, "dim1": 4}}"#;
    let v = json_lines(&["triton", "invert", l, "--json"]);
    // Self-inverse: (a, b) -> (a, a xor b) undoes itself.
    assert_eq!(
        v[0]["linear"],
        r#"{"in": {"dim0": [[1, 1], [2, 2]], "dim1": [[0, 1], [0, 2]]}, "out": {"dim0": 4, "dim1": 4}}"#
    );
}

#[test]
fn multi_cta_and_amd_layouts_on_the_command_line() {
    let g = "BlockedLayout(size_per_thread=[1, 1], threads_per_warp=[4, 8], warps_per_cta=[2, 2], order=[1, 0], cga_layout=[[1, 0]])";
    let v = json_lines(&["triton", "show", g, "--shape", "16,16", "--json"]);
    assert_eq!(
        v[0]["in_dims"],
        json!({"register": 1, "lane": 32, "warp": 4, "block": 2})
    );
    assert_eq!(
        v[0]["axe"],
        "S[(2,2,4,2,8):(1@block,2@warp,8@lane,1@warp,1@lane)]"
    );
    // Not a permutation of CTA bits: refused at the argument, as Triton refuses it.
    let bad = g.replace("[[1, 0]]", "[[1, 1]]");
    let (code, _, err) = run(&["triton", "show", &bad, "--shape", "16,16"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("cga_layout base 0") && err.contains('^'),
        "{err}"
    );
    let mfma = "AMDMFMALayout(version=3, instr_shape=[16, 16, 16], transposed=False, warps_per_cta=[2, 2], element_bitwidth=32, tiles_per_warp=[1, 1], cga_layout=[])";
    let v = json_lines(&["triton", "show", mfma, "--shape", "64,64", "--json"]);
    assert_eq!(
        v[0]["in_dims"],
        json!({"register": 16, "lane": 64, "warp": 4, "block": 1})
    );
    // Every element held once.
    assert_eq!(v[0]["injective"], true);
    assert_eq!(v[0]["surjective"], true);
}

#[test]
fn padded_shared_layouts_show_their_padding() {
    let padded = "PaddedSharedLayout(interval_padding_pairs=[[4, 1], [8, 2]], offset_bases=[[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]], cga_layout=[], shape=[8, 4])";
    // The layout carries its shape: no --shape needed.
    let v = json_lines(&["triton", "show", padded, "--json"]);
    let o = &v[0];
    assert_eq!(o["in_dims"], json!({"offset": 32, "block": 1}));
    assert_eq!(
        o["axe"],
        "S[(2,2,2,4):(12@offset,5@offset,24@offset,1@offset)]"
    );
    assert_eq!(o["logical_axe"], "S[(4,2,4):(4@offset,16@offset,1@offset)]");
    assert_eq!(o["padding"]["padded_size"], 45);
    assert_eq!(
        o["padding"]["interval_padding_pairs"],
        json!([[4, 1], [8, 2]])
    );
    assert_eq!(o["padding"]["offsets"][16], 24);
    // Logical offset 4 is row 2: after one row of 4, one padding element.
    assert_eq!(o["map"][4], json!([2, 0]));
    assert_eq!(o["padding"]["offsets"][4], 5);
    let (code, text, _) = run(&["triton", "show", padded]);
    assert_eq!(code, 0);
    assert!(
        text.contains("padding     [4:+1, 8:+2]: 32 offsets per CTA stored in 45"),
        "{text}"
    );
    assert!(
        text.contains("axe         S[(2,2,2,4):(12@offset"),
        "{text}"
    );
    let (_, axe, _) = run(&["triton", "to-axe", padded]);
    assert_eq!(
        axe.trim(),
        "S[(2,2,2,4):(12@offset,5@offset,24@offset,1@offset)]"
    );
}

#[test]
fn ttgir_attributes_read_as_their_gluon_twins_in_every_command() {
    let attr = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>";
    let twin = json_lines(&["triton", "show", BLOCKED, "--shape", "16,32", "--json"]);
    let v = json_lines(&["triton", "show", attr, "--shape", "16,32", "--json"]);
    assert_eq!(v[0]["map"], twin[0]["map"]);
    assert_eq!(v[0]["axe"], twin[0]["axe"]);
    // The header lines of a TTGIR module, then one alias.
    let module = format!(
        "#mma = #ttg.nvidia_mma<{{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}}>\n#blocked = {attr}\n#blocked"
    );
    let (code, out, err) = run(&["triton", "to-axe", &module, "--shape", "16,32"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), twin[0]["axe"].as_str().unwrap());
    let (code, out, err) = run(&["explain", attr, "--shape", "16,32"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Triton layout"), "{out}");
    let (code, _, err) = run(&["render", attr, "--shape", "16,32", "--format", "txt"]);
    assert_eq!(code, 0, "{err}");
    // An unknown parameter: named, with a caret under it.
    let bad = "#ttg.blocked<{sizePerThread = [1], vector = 4}>";
    let (code, _, err) = run(&["triton", "show", bad, "--shape", "16"]);
    assert_eq!(code, 1);
    assert!(err.contains("`vector`") && err.contains('^'), "{err}");
}

/// In a batch on stdin, `# note` lines are comments, and TTGIR attributes (`#ttg.linear<...>`) are
/// layouts answered like any other line, not skipped as comments.
#[test]
fn ttgir_lines_on_stdin_are_layouts_not_comments() {
    let out = assert_cmd::Command::cargo_bin("axe")
        .unwrap()
        .args(["triton", "show", "-", "--json"])
        .write_stdin(
            "# a comment\n#\n#ttg.linear<{register = [[0, 1]], lane = [[1, 0]], warp = [], block = []}>\n#not a layout\n",
        )
        .output()
        .unwrap();
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].get("error").is_none(), "{}", lines[0]);
    assert!(lines[1]["error"].is_string(), "{}", lines[1]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn padded_shared_attributes_read_as_their_gluon_layouts() {
    // The attribute Triton prints for the layout above reads as it: the same padding and placement.
    let attr = "#ttg.padded_shared<[4:+1, 8:+2] {offset = [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]], block = []}>";
    let v = json_lines(&["triton", "show", attr, "--json"]);
    assert_eq!(
        v[0]["axe"],
        "S[(2,2,2,4):(12@offset,5@offset,24@offset,1@offset)]"
    );
    assert_eq!(v[0]["padding"]["padded_size"], 45);
    let (code, _, err) = run(&[
        "triton",
        "show",
        "#ttg.padded_shared<[4:+3] {order = [0], shape = [4]}>",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("powers of two"), "{err}");
}
