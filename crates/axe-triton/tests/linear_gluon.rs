//! Gluon's `DistributedLinearLayout` and `SharedLinearLayout`, laid over tensors as Triton 3.9 lays them
//! (its answers, from `GluonOpBuilder.to_linear_layout`).

#![allow(clippy::unwrap_used, missing_docs)]

use axe_triton::gluon::parse_gluon;

const D: &str = "DistributedLinearLayout(reg_bases=[[0, 2], [2, 0]], lane_bases=[[1, 0], [0, 1]], warp_bases=[], block_bases=[[0, 4]], shape=[4, 8])";

fn linear(text: &str, shape: &[u64]) -> String {
    parse_gluon(text)
        .unwrap()
        .to_linear(shape)
        .unwrap()
        .to_json()
}

#[test]
fn distributed_linear_layouts_fit_the_tensor_as_triton_fits_them() {
    assert_eq!(
        linear(D, &[4, 8]),
        r#"{"in": {"register": [[0, 2], [2, 0]], "lane": [[1, 0], [0, 1]], "warp": [], "block": [[0, 4]]}, "out": {"dim0": 4, "dim1": 8}}"#
    );
    // Smaller: the register past it is dropped, the CTA base past it holds a copy.
    assert_eq!(
        linear(D, &[4, 2]),
        r#"{"in": {"register": [[2, 0]], "lane": [[1, 0], [0, 1]], "warp": [], "block": [[0, 0]]}, "out": {"dim0": 4, "dim1": 2}}"#
    );
    // Larger: more registers, dim 1 first (the first register base moves it), then dim 0.
    assert_eq!(
        linear(D, &[8, 16]),
        r#"{"in": {"register": [[0, 2], [2, 0], [0, 8], [4, 0]], "lane": [[1, 0], [0, 1]], "warp": [], "block": [[0, 4]]}, "out": {"dim0": 8, "dim1": 16}}"#
    );
    // Here the first register base that moves anything moves dim 0, so dim 0 grows first.
    assert_eq!(
        linear(
            "DistributedLinearLayout(reg_bases=[[0, 0], [1, 0]], lane_bases=[[0, 1]], warp_bases=[], block_bases=[], shape=[2, 2])",
            &[4, 4]
        ),
        r#"{"in": {"register": [[0, 0], [1, 0], [2, 0], [0, 2]], "lane": [[0, 1]], "warp": [], "block": []}, "out": {"dim0": 4, "dim1": 4}}"#
    );
}

#[test]
fn shared_linear_layouts_keep_their_bases_and_shape() {
    let swizzle = "SharedLinearLayout(offset_bases=[[0, 1], [1, 1]], block_bases=[], alignment=16)";
    assert_eq!(
        linear(swizzle, &[2, 2]),
        r#"{"in": {"offset": [[0, 1], [1, 1]], "block": []}, "out": {"dim0": 2, "dim1": 2}}"#
    );
    // Triton asserts the shape is the layout's own.
    assert!(parse_gluon(swizzle).unwrap().to_linear(&[4, 4]).is_err());
}

#[test]
fn what_triton_refuses_is_refused() {
    for (bad, shape) in [
        // A base moving two dims: not a permutation matrix.
        (
            "DistributedLinearLayout(reg_bases=[[1, 1]], lane_bases=[[1, 0], [0, 1]], warp_bases=[], block_bases=[], shape=[2, 2])",
            [2u64, 2],
        ),
        // The same element twice.
        (
            "DistributedLinearLayout(reg_bases=[[0, 1]], lane_bases=[[0, 1], [1, 0]], warp_bases=[], block_bases=[], shape=[2, 2])",
            [2, 2],
        ),
    ] {
        let g = parse_gluon(bad).unwrap();
        assert!(g.to_linear(&shape).is_err(), "{bad}");
    }
    for bad in [
        // Not reaching the whole shape.
        "DistributedLinearLayout(reg_bases=[], lane_bases=[[0, 1]], warp_bases=[], block_bases=[], shape=[2, 2])",
        // A base past the shape.
        "DistributedLinearLayout(reg_bases=[[0, 2]], lane_bases=[[0, 1]], warp_bases=[], block_bases=[], shape=[1, 2])",
        "SharedLinearLayout(offset_bases=[], block_bases=[])",
        "SharedLinearLayout(offset_bases=[[0, 1]], block_bases=[], alignment=3)",
    ] {
        assert!(parse_gluon(bad).is_err(), "{bad}");
    }
}
