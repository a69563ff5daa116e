#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Tensors with no elements (a dimension of extent 0): every layout of them relayouts into every other,
//! moving nothing, and the destination is all padding, zeroed; nothing is tabled per index, however long
//! the other dimensions are.

use axe_relayout::split::{pieces, relayout_pieces, Side};
use axe_relayout::{relayout, Options, TensorLayout};
use axe_xla::{parse_shape, ArrayShape};
use proptest::prelude::*;

fn array(text: &str) -> ArrayShape {
    parse_shape(text).unwrap().as_array().unwrap().clone()
}

/// The layouts tried on a rank-2 shape, as XLA layout suffixes.
const LAYOUTS_2D: &[&str] = &[
    "{1,0}",
    "{0,1}",
    "{1,0:T(8,128)}",
    "{0,1:T(8,128)}",
    "{1,0:T(8,128)(2,1)}",
    "{1,0:T(2,2)}",
    "{1,0:T(4,128)L(1024)}",
];

fn relayout_empty(src: &str, dst: &str) -> Vec<u8> {
    let (a, b) = (array(src), array(dst));
    let s = TensorLayout::from_xla(&a).unwrap();
    let d = TensorLayout::from_xla(&b).unwrap();
    assert_eq!(s.count(), 0);
    assert!(
        s.tables.iter().chain(&d.tables).all(Vec::is_empty),
        "an empty tensor tables no index"
    );
    let input = vec![0x11u8; s.bytes() as usize];
    let mut out = vec![0xaau8; d.bytes() as usize];
    relayout(&input, &s, &mut out, &d, &Options::default()).unwrap();
    // The same through the CLI's path (split into pieces).
    let ps = pieces(Side::Xla(&a), Side::Xla(&b)).unwrap();
    let mut out2 = vec![0x55u8; d.bytes() as usize];
    relayout_pieces(&input, &mut out2, &ps, &Options::default()).unwrap();
    assert_eq!(out, out2);
    out
}

#[test]
fn f32_0x5_into_every_layout() {
    for l in LAYOUTS_2D {
        let ty = if l.contains("(2,1)") { "bf16" } else { "f32" };
        for src in ["{1,0}", "{0,1}", "{1,0:T(8,128)}"] {
            let out = relayout_empty(&format!("{ty}[0,5]{src}"), &format!("{ty}[0,5]{l}"));
            assert!(out.iter().all(|&b| b == 0), "{l}: padding is zeroed");
        }
    }
}

#[test]
fn an_empty_tensor_with_an_enormous_dimension_costs_nothing() {
    // 2^40 elements along one dimension, none in all: no table of 2^40 offsets.
    let out = relayout_empty("f32[1099511627776,0]{1,0}", "f32[1099511627776,0]{0,1}");
    assert!(out.is_empty());
    let out = relayout_empty("u8[0]{0}", "u8[0]{0:T(1024)}");
    assert!(out.iter().all(|&b| b == 0));
}

proptest! {
    #[test]
    fn any_empty_shape_relayouts(
        dims in proptest::collection::vec(0u64..40, 1..4),
        zero in 0usize..3,
        perm in 0usize..6,
        tiled in any::<bool>(),
    ) {
        let mut dims = dims;
        let z = zero % dims.len();
        dims[z] = 0;
        let rank = dims.len();
        let text: Vec<String> = dims.iter().map(u64::to_string).collect();
        let row: Vec<String> = (0..rank).rev().map(|i| i.to_string()).collect();
        let mut order: Vec<usize> = (0..rank).rev().collect();
        order.rotate_left(perm % rank);
        let other: Vec<String> = order.iter().map(usize::to_string).collect();
        let tile = if tiled && rank >= 2 { ":T(8,128)" } else { "" };
        let src = format!("f32[{}]{{{}}}", text.join(","), row.join(","));
        let dst = format!("f32[{}]{{{}{tile}}}", text.join(","), other.join(","));
        let out = relayout_empty(&src, &dst);
        prop_assert!(out.iter().all(|&b| b == 0));
    }
}

#[test]
fn a_mismatch_names_the_dims_in_shape_notation() {
    let s = TensorLayout::from_xla(&array("f32[4,4]{1,0}")).unwrap();
    let d = TensorLayout::from_xla(&array("f32[4,8]{1,0}")).unwrap();
    let m = axe_relayout::plan(&s, &d, &Options::default())
        .unwrap_err()
        .to_string();
    assert!(m.contains("dimensions [4,4] vs [4,8]"), "{m}");
}
