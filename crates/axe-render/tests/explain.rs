#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Snapshots of `explain` for the seed's layouts (plain text, as when piped).

use axe_render::explain::{explain_axe, explain_xla, to_text_report};

fn xla(shape: &str) -> String {
    let s = axe_xla::parse_shape(shape).unwrap();
    to_text_report(&explain_xla(s.as_array().unwrap()).unwrap(), false)
}

fn axe(layout: &str, shape: &[u64]) -> String {
    to_text_report(
        &explain_axe(&layout.parse().unwrap(), shape).unwrap(),
        false,
    )
}

#[test]
fn figure_1() {
    insta::assert_snapshot!(xla("f32[3,5]{1,0:T(2,2)}"));
}

#[test]
fn figure_2() {
    insta::assert_snapshot!(xla("f32[4,8]{1,0:T(2,4)(2,1)}"));
}

#[test]
fn blog_add_936() {
    insta::assert_snapshot!(xla("bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}"));
}

#[test]
fn nested_padding_and_memory_space() {
    insta::assert_snapshot!(xla("f32[3,5]{1,0:T(8,128)(3,1)S(1)}"));
}

#[test]
fn tensor_core_tile() {
    insta::assert_snapshot!(axe(
        "S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp",
        &[8, 16]
    ));
}

#[test]
fn gpu_mesh_shard_and_replicate() {
    insta::assert_snapshot!(axe("S[(2,4,16):(2@gpuid,16,1)] + R[2:1@gpuid]", &[8, 16]));
}

/// Every fact's JSON key is fixed: a fact about something varying is under one of `LISTED_KEYS`, any
/// other is keyed by its label; no key carries a number, a tile or an axis of the input.
#[test]
fn field_keys_are_fixed() {
    use axe_render::explain::LISTED_KEYS;
    let mut all = Vec::new();
    for shape in [
        "f32[3,5]{1,0:T(2,2)}",
        "f32[4,8]{1,0:T(2,4)(2,1)}",
        "bf16[16,256]{1,0:T(8,128)(2,1)L(4)E(16)S(1)M(8)}",
        "pred[5]",
    ] {
        let s = axe_xla::parse_shape(shape).unwrap();
        all.extend(explain_xla(s.as_array().unwrap()).unwrap().fields);
    }
    let l = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp";
    all.extend(explain_axe(&l.parse().unwrap(), &[8, 16]).unwrap().fields);
    for f in &all {
        match &f.of {
            Some(of) => {
                assert!(LISTED_KEYS.contains(&f.key), "{f:?}");
                assert!(f.label.contains(of.as_str()), "{f:?}");
            }
            None => assert_eq!(f.label, f.key, "{f:?}"),
        }
        assert!(
            !f.key.contains(|c: char| c.is_ascii_digit() || c == '('),
            "{f:?}"
        );
    }
    for key in [
        "tiles",
        "axes",
        "memory space",
        "tail padding alignment",
        "element size in bits",
    ] {
        assert!(all.iter().any(|f| f.key == key), "{key}");
    }
}
