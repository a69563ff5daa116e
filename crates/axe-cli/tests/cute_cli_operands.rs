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
