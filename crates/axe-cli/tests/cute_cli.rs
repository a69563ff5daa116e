//! `axe cute` as a user runs it: show, every operator, Axe conversions, batches and errors.
#![allow(clippy::unwrap_used)]

mod common;

use common::{json_lines, run};
use serde_json::json;

#[test]
fn show_gives_sizes_the_map_and_the_axe_form() {
    let v = json_lines(&["cute", "show", "(4,(2,3)):(1,(4,8))", "--json"]);
    let o = &v[0];
    assert_eq!(o["size"], 24);
    assert_eq!(o["cosize"], 24);
    assert_eq!(o["rank"], 2);
    assert_eq!(o["depth"], 2);
    assert_eq!(o["axe"], "S[(3,2,4):(8,4,1)]");
    // Colexicographic: the leftmost mode fastest.
    assert_eq!(o["map"].as_array().unwrap()[..6], [0, 1, 2, 3, 4, 5]);
    assert_eq!(o["map"][4], 4);
    let v = json_lines(&["cute", "show", "Sw<3,3,3> o 0 o (8,64):(64,1)", "--json"]);
    assert_eq!(v[0]["map"][1], 72);
    assert!(v[0]["axe"].is_null() && v[0]["axe_why"].is_string());
    let v = json_lines(&[
        "cute",
        "show",
        "(1024,1024):(1,1024)",
        "--json",
        "--max-map",
        "10",
    ]);
    assert_eq!(v[0]["map"].as_array().unwrap().len(), 10);
    assert_eq!(v[0]["map_truncated"], true);
}

#[test]
fn operators_answer_in_cutes_printed_form() {
    let cases: [(&[&str], &str); 8] = [
        (&["coalesce", "(2,(1,6)):(1,(6,2))"], "12:1"),
        (
            &["composition", "(6,2):(8,2)", "(4,3):(3,1)"],
            "((2,2),3):((24,2),8)",
        ),
        (&["composition", "(4,4):(0,1)", "2:3"], "2:0"),
        (&["complement", "4:2", "--bound", "24"], "(2,3):(1,8)"),
        (&["right-inverse", "(4,2):(2,1)"], "(2,4):(4,1)"),
        (&["logical-divide", "24:3", "4:1"], "(4,6):(3,12)"),
        (
            &["logical-product", "(2,2):(4,1)", "6:1"],
            "((2,2),(2,3)):((4,1),(2,8))",
        ),
        (&["to-axe", "(4,(2,3)):(1,(4,8))"], "S[(3,2,4):(8,4,1)]"),
    ];
    for (args, want) in cases {
        let mut a = vec!["cute"];
        a.extend_from_slice(args);
        a.push("--json");
        let v = json_lines(&a);
        assert_eq!(v[0]["result"], want, "{args:?}");
    }
}

#[test]
fn where_no_layout_exists_the_error_says_why() {
    // pycute returns a wrong size here; CuTe C++ dies with SIGFPE on the complement, whose
    // construction gives an extent 0.
    for (args, why) in [
        (
            &["cute", "composition", "(4,3):(1,10)", "6:1"][..],
            "no layout",
        ),
        (
            &["cute", "complement", "(5,5):(5,5)", "--bound", "100"][..],
            "an extent of 0",
        ),
    ] {
        let (code, _, err) = run(args);
        assert_eq!(code, 1, "{args:?}");
        assert!(err.contains(why), "{args:?}: {err}");
    }
    // A swizzled layout where a plain one is needed: named as such, not a parse error at offset 0.
    let (code, _, err) = run(&["cute", "to-axe", "Sw<3,3,3> o 0 o 8:1"]);
    assert_eq!(code, 1);
    assert!(err.contains("is swizzled, so not affine"), "{err}");
}

#[test]
fn batches_and_parse_errors() {
    let out = assert_cmd::Command::cargo_bin("axe")
        .unwrap()
        .args(["cute", "coalesce", "-", "--json"])
        .write_stdin("(2,4):(1,2)\n((2,4),8):((1,16),2\n")
        .output()
        .unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0], json!({"input": "(2,4):(1,2)", "result": "8:1"}));
    let e = lines[1]["error"].as_str().unwrap();
    assert!(e.contains("offset 19") && e.contains('^'), "{e}");
    let deep = format!("{}4{}:1\n", "(".repeat(100_000), ")".repeat(100_000));
    let out = assert_cmd::Command::cargo_bin("axe")
        .unwrap()
        .args(["cute", "show", "-"])
        .write_stdin(deep)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        !err.contains("panicked") && err.len() < 1000,
        "{}",
        &err[..200.min(err.len())]
    );
}

#[test]
fn axe_forms_both_ways() {
    let v = json_lines(&[
        "cute",
        "from-axe",
        "S[(3,2,4):(8,4,1)]",
        "--shape",
        "(4,(2,3))",
        "--json",
    ]);
    assert_eq!(v[0]["result"], "(4,(2,3)):(1,(4,8))");
    let tv = json_lines(&["cute", "to-axe", "--tv", "((4,2),2):((2,8),1)", "--json"]);
    let back = json_lines(&[
        "cute",
        "from-axe",
        "--tv",
        tv[0]["result"].as_str().unwrap(),
        "--json",
    ]);
    assert!(back[0]["result"].is_string(), "{back:?}");
}

#[test]
fn cutes_complement_and_the_products_on_it() {
    let cases: [(&[&str], &str); 6] = [
        (&["complement", "(4,6):(1,6)"], "1:0"),
        (&["complement", "(4,10):(1,10)"], "2:4"),
        (
            &["logical-product", "(4,6):(1,6)", "2:1"],
            "((4,6),2):((1,6),36)",
        ),
        (&["composition", "(1):(1)", "(4):(1)"], "(4):(1)"),
        (
            &["composition", "(4,3,1):(3,1,0)", "24:1"],
            "(4,3,2):(3,1,0)",
        ),
        (&["filter", "(2,(3,4)):(1,(0,2))"], "8:1"),
    ];
    for (args, want) in cases {
        let mut a = vec!["cute"];
        a.extend_from_slice(args);
        a.push("--json");
        let v = json_lines(&a);
        assert_eq!(v[0]["result"], want, "{args:?}");
    }
    // CuTe's answer 4:6 breaks its own size postcondition: refused, naming it.
    let (code, _, err) = run(&["cute", "complement", "(2,2):(1,3)", "--bound", "24"]);
    assert_eq!(code, 1);
    assert!(err.contains("postcondition size(R)"), "{err}");
}

#[test]
fn left_inverse_is_generalised_unless_strict() {
    let v = json_lines(&["cute", "left-inverse", "(2,2):(0,1)", "--json"]);
    assert_eq!(v[0]["result"], "2:2");
    assert_eq!(v[0]["generalised"], true);
    assert!(v[0]["note"]
        .as_str()
        .unwrap()
        .contains("not a true inverse"));
    let (code, out, _) = run(&["cute", "left-inverse", "(2,2):(0,1)"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("2:2") && out.contains("note: not a true inverse"),
        "{out}"
    );
    let (code, _, err) = run(&["cute", "left-inverse", "(2,2):(0,1)", "--strict"]);
    assert_eq!(code, 1);
    assert!(err.contains("not injective"), "{err}");
    // A true inverse carries no note.
    let v = json_lines(&["cute", "left-inverse", "(4,2):(2,1)", "--json"]);
    assert_eq!(v[0]["result"], "(2,4):(4,1)");
    assert!(v[0].get("note").is_none());
}

#[test]
fn swizzled_layouts_compose_divide_and_coalesce_with_the_swizzle_outermost() {
    let sw = "Sw<3,3,3> o 0 o (8,64):(64,1)";
    let cases: [(&[&str], &str); 3] = [
        (
            &["composition", sw, "(4,8):(1,8)"],
            "Sw<3,3,3> o 0 o (4,8):(64,1)",
        ),
        (
            &["logical-divide", sw, "<2:1,16:1>"],
            "Sw<3,3,3> o 0 o ((2,4),(16,4)):((64,128),(1,16))",
        ),
        (
            &["coalesce", "Sw<2,0,3> o 4 o (2,4):(1,2)"],
            "Sw<2,0,3> o 4 o 8:1",
        ),
    ];
    for (args, want) in cases {
        let mut a = vec!["cute"];
        a.extend_from_slice(args);
        a.push("--json");
        let v = json_lines(&a);
        assert_eq!(v[0]["result"], want, "{args:?}");
    }
}

/// `complement A M`, CuTe's `complement(A, M)` typed positionally, would read M as a second layout and
/// answer another question: refused, naming `--bound`.
#[test]
fn a_bare_bound_after_complement_is_refused_naming_bound() {
    let (code, out, err) = run(&["cute", "complement", "(2,2):(1,6)", "24"]);
    assert_eq!(code, 1);
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("--bound 24") && err.contains("reads as a second layout"),
        "{err}"
    );
    let (code, out, _) = run(&["cute", "complement", "(2,2):(1,6)", "--bound", "24"]);
    assert_eq!((code, out.trim()), (0, "(3,2):(2,12)"));
    // Layouts given one by one are still each complemented.
    let (code, out, _) = run(&["cute", "complement", "4:2", "(4,6):(1,6)"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("==> 4:2 <==\n2:1") && out.contains("==> (4,6):(1,6) <==\n1:0"),
        "{out}"
    );
}

/// A CuTe layout given to `axe layout` says where CuTe layouts are read.
#[test]
fn a_cute_layout_given_to_layout_says_where_it_is_read() {
    let (code, _, err) = run(&["layout", "show", "(8,2):(4,1)"]);
    assert_eq!(code, 1);
    assert!(err.contains("is a CuTe layout: `axe cute show`"), "{err}");
    let (code, _, err) = run(&["layout", "show", "S(8,2):(4,1)"]);
    assert_eq!(code, 1);
    assert!(err.contains("expected '[' after S"), "{err}");
}
