//! `axe bench cute` without pycute: axe's figures alone, a note on how to get the comparison, never a
//! failure. (No timing is asserted.)
#![allow(clippy::unwrap_used)]

mod common;

use common::run;
use serde_json::Value;

const NO_PYTHON: &str = "/nonexistent/axe-test/python";

#[test]
fn without_pycute_every_case_has_axes_figure() {
    let (code, out, err) = run(&[
        "bench", "cute", "--json", "--rounds", "1", "--pycute", NO_PYTHON,
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1, "one JSON object: {out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rounds"], 1);
    assert_eq!(v["pycute"]["available"], false);
    assert_eq!(v["pycute"]["python"], NO_PYTHON);
    let note = v["pycute"]["note"].as_str().unwrap();
    assert!(note.contains("nvidia-cutlass"), "{note}");
    assert!(err.contains("pycute not available"), "{err}");
    assert!(v["geomean_ratio"].is_null());
    assert!(v["goal_met"].is_null());
    assert_eq!(v["disagreements"], 0);
    let cases = v["cases"].as_array().unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c["case"].as_str().unwrap()).collect();
    for want in [
        "parse",
        "print",
        "coalesce",
        "composition",
        "complement",
        "right_inverse",
        "left_inverse",
        "logical_divide",
        "zipped_divide",
        "logical_product",
        "blocked_product",
        "raked_product",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    for c in cases {
        let ns = c["axe_ns"].as_f64().unwrap();
        assert!(ns > 0.0 && ns.is_finite(), "{c}");
        assert_eq!(c["axe_ns_rounds"].as_array().unwrap().len(), 1, "{c}");
        assert!(!c["axe_result"].as_str().unwrap().is_empty(), "{c}");
        assert!(!c["input"].as_str().unwrap().is_empty(), "{c}");
        assert!(c["pycute_ns"].is_null() && c["ratio"].is_null(), "{c}");
        assert_eq!(c["agree"], "pycute_absent", "{c}");
    }
    let composition = cases.iter().find(|c| c["case"] == "composition").unwrap();
    assert_eq!(composition["axe_result"], "((2,2),3):((24,2),8)");
}

#[test]
fn a_peer_that_answers_nonsense_is_a_note_not_a_failure() {
    // `true` ignores the script and answers nothing.
    let (code, out, err) = run(&[
        "bench",
        "cute",
        "--rounds",
        "2",
        "--only",
        "composition",
        "--pycute",
        "true",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("pycute not available"), "{out}");
    assert!(out.contains("--pycute PYTHON"), "{out}");
    assert!(out.contains("composition"), "{out}");
    assert!(!err.contains("panicked"), "{err}");
}
