//! `axe cute`: shape tilers as CuTe applies them, errors that claim no more than is true, operands each
//! operator takes, and help texts that hold.
#![allow(clippy::unwrap_used)]

mod common;

use assert_cmd::Command;
use common::{json_lines, run};

fn result(args: &[&str]) -> String {
    let mut a = vec!["cute"];
    a.extend_from_slice(args);
    a.push("--json");
    let v = json_lines(&a);
    v[0]["result"].as_str().unwrap_or_default().to_string()
}

fn error(args: &[&str]) -> String {
    let mut a = vec!["cute"];
    a.extend_from_slice(args);
    let (code, _, err) = run(&a);
    assert_eq!(code, 1, "{args:?}: {err}");
    err
}

#[test]
fn a_shape_as_b_is_cutes_tuple_tiler_by_mode_and_recursively() {
    let a = "(8,(4,6)):(1,(8,32))";
    // pycute: composition(Layout((8,(4,6)),(1,(8,32))), (2,(2,3))) and its logical_divide.
    assert_eq!(
        result(&["composition", a, "(2,(2,3))"]),
        "(2,(2,3)):(1,(8,32))"
    );
    assert_eq!(
        result(&["composition", a, "(2,(2,3))"]),
        result(&["composition", a, "<2:1,<2:1,3:1>>"])
    );
    assert_eq!(
        result(&["logical-divide", a, "(2,(2,3))"]),
        "((2,4),((2,2),(3,2))):((1,2),((8,16),(32,96)))"
    );
    assert_eq!(
        result(&["zipped-divide", a, "(2,(2,3))"]),
        "((2,(2,3)),(4,(2,2))):((1,(8,32)),(2,(16,96)))"
    );
    // A shape with a stride is one layout.
    assert_eq!(
        result(&["composition", "24:1", "(2,4):(1,2)"]),
        "(2,4):(1,2)"
    );
}

#[test]
fn blocked_and_raked_products_take_a_layout_b_and_say_so() {
    for (verb, op) in [
        ("blocked-product", "blocked_product"),
        ("raked-product", "raked_product"),
    ] {
        let err = error(&[verb, "(4,8):(8,1)", "<2:1,3:1>"]);
        assert!(
            err.contains(op) && err.contains("takes a layout B"),
            "{err}"
        );
        assert!(!err.contains("expected an integer"), "{err}");
        let (_, help, _) = run(&["cute", verb, "--help"]);
        assert!(help.contains("a layout only"), "{help}");
    }
    assert_eq!(
        result(&["blocked-product", "(2,5):(5,1)", "(3,4)"]),
        "(6,(5,4)):(5,(1,30))"
    );
    let (_, help, _) = run(&["cute", "zipped-divide", "--help"]);
    assert!(help.contains("<2:1,<2:1,3:1>>"), "{help}");
}

#[test]
fn left_inverse_finds_generalised_inverses_and_words_a_miss_as_one() {
    for (l, want) in [
        ("(3,6):(1,1)", "(2,2,2):(1,4,12)"),
        ("(2,4):(2,1)", "(3,2):(2,3)"),
        ("((3,1),(4),3):((1,5),(1),1)", "(2,2,2):(1,4,30)"),
    ] {
        let v = json_lines(&["cute", "left-inverse", l, "--json"]);
        assert_eq!(v[0]["result"], want, "{l}");
        assert_eq!(v[0]["generalised"], true, "{l}");
    }
    let err = error(&["left-inverse", "((2,2,3)):((5,2,7))"]);
    assert!(!err.contains("no layout satisfies"), "{err}");
    assert!(err.contains("no generalised inverse"), "{err}");
    assert!(err.contains("was found"), "{err}");
    assert_eq!(err.matches("not injective").count(), 1, "{err}");
}

#[test]
fn complement_names_the_broken_postcondition_and_the_bound() {
    let err = error(&["complement", "--bound", "24", "(2,2):(1,3)"]);
    assert!(!err.contains("no layout"), "{err}");
    assert!(
        err.contains("CuTe's construction breaks its postcondition size(R)"),
        "{err}"
    );
    let err = error(&["complement", "(2,2):(2,3)"]);
    assert!(!err.contains("no layout"), "{err}");
    assert!(err.contains("every extent is at least 1"), "{err}");
    let err = error(&["complement", "--bound", "0", "4:1"]);
    assert!(
        err.contains("bound M is 0") && !err.contains("invalid layout"),
        "{err}"
    );
}

#[test]
fn help_texts_say_what_holds() {
    let (_, help, _) = run(&["cute", "right-inverse", "--help"]);
    assert!(!help.contains("as long as possible"), "{help}");
    assert!(help.contains("(3,2):(1,5)"), "{help}");
    assert_eq!(result(&["right-inverse", "(4,2):(1,2)"]), "4:1");
    let (_, help, _) = run(&["cute", "complement", "--help"]);
    assert!(help.contains("1:0"), "{help}");
    assert_eq!(result(&["complement", "(4,6):(1,6)"]), "1:0");
    let (_, help, _) = run(&["cute", "from-axe", "--help"]);
    assert!(help.contains("Axe layouts"), "{help}");
    assert!(!help.contains("as CuTe prints them"), "{help}");
}

#[test]
fn parse_and_overflow_errors_say_what() {
    let out = Command::cargo_bin("axe")
        .unwrap()
        .args(["cute", "show", "-"])
        .write_stdin("(4,2)\u{0}:(1,4)\n")
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(r"found '\0'"), "{err}");
    let err = error(&["show", "4:9223372036854775807"]);
    assert!(
        err.contains("overflow while evaluating 4:9223372036854775807 at index 2"),
        "{err}"
    );
    let err = error(&["show", "(4294967296,4294967296):(1,4294967296)"]);
    assert!(
        err.contains("overflow while computing the size of the shape"),
        "{err}"
    );
}

/// CuTe's `x ^ ((x & yyy) >> S)` (`S < 0`: shifted up).
fn swizzle(b: u32, m: u32, s: i32, x: i64) -> i64 {
    let yyy = ((1i64 << b) - 1) << (m + s.max(0) as u32);
    let y = x & yyy;
    x ^ if s >= 0 { y >> s } else { y << -s }
}

#[test]
fn a_bare_swizzle_is_shown_and_composes_on_the_left() {
    for (text, (b, m, s), yyy, zzz) in [
        ("Sw<3,3,3>", (3u32, 3u32, 3i32), 0x1c0, 0x38),
        ("Swizzle<2,0,-3>", (2, 0, -3), 0x3, 0x18),
        ("Sw<0,4,3>", (0, 4, 3), 0, 0),
    ] {
        let v = &json_lines(&["cute", "show", text, "--json"])[0];
        let size = 1i64 << (b + m + s.unsigned_abs());
        assert_eq!(v["size"], size, "{text}");
        assert_eq!(
            (v["yyy_mask"].clone(), v["zzz_mask"].clone()),
            (yyy.into(), zzz.into())
        );
        let map: Vec<i64> = (0..size).map(|x| swizzle(b, m, s, x)).collect();
        assert_eq!(v["map"], serde_json::json!(map), "{text}");
    }
    let (code, out, err) = run(&["cute", "show", "Sw<3,3,3>"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("XORs bits 6–8 (mask 0x1c0) into bits 3–5 (mask 0x38)"),
        "{out}"
    );

    // Sw ∘ Sw is one swizzle where one exists (as `Swizzle::compose`, checked exhaustively there).
    assert_eq!(
        result(&["composition", "Sw<1,0,2>", "Sw<1,1,2>"]),
        "Sw<2,0,2>"
    );
    assert!(error(&["composition", "Sw<1,0,2>", "Sw<1,1,3>"]).contains("is no swizzle"));
    // Sw ∘ L is CuTe's composed layout, and Sw1 ∘ (Sw2 o off o L) folds the swizzles; each is checked
    // against the swizzle applied to the layout's offsets.
    let l = "(8,64):(64,1)";
    let composed = result(&["composition", "Sw<3,3,3>", l]);
    assert_eq!(composed, "Sw<3,3,3> o 0 o (8,64):(64,1)");
    let offsets = |t: &str| -> Vec<i64> {
        let v = &json_lines(&["cute", "show", t, "--json", "--max-map", "100000"])[0];
        serde_json::from_value(v["map"].clone()).unwrap()
    };
    let plain = offsets(l);
    let want: Vec<i64> = plain.iter().map(|&x| swizzle(3, 3, 3, x)).collect();
    assert_eq!(offsets(&composed), want);
    let folded = result(&["composition", "Sw<1,5,3>", "Sw<2,3,3> o 4 o (8,64):(64,1)"]);
    assert_eq!(folded, "Sw<3,3,3> o 4 o (8,64):(64,1)");
    let want: Vec<i64> = plain
        .iter()
        .map(|&x| swizzle(1, 5, 3, swizzle(2, 3, 3, 4 + x)))
        .collect();
    assert_eq!(offsets(&folded), want);
    // A swizzle on the right, or a tiler after one, is refused for what it is.
    assert!(error(&["composition", l, "Sw<3,3,3>"]).contains("composes on the left only"));
    assert!(
        error(&["composition", "Sw<3,3,3>", "<2:1,4:1>"]).contains("takes a swizzle or a layout B")
    );
}
