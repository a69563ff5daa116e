//! NVMMA accumulators, swizzled shared layouts and dot operands spread over CTAs (`cga_layout`), and
//! batched (rank-3) NVMMA accumulators, each as Triton 3.9 answers it (`GluonOpBuilder.to_linear_layout`).

#![allow(clippy::unwrap_used, missing_docs)]

use axe_triton::gluon::parse_gluon;

const AMPERE: &str = "NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, 2], instr_shape=[16, 8], cga_layout=[[0, 1], [1, 0]])";

fn linear(text: &str, shape: &[u64]) -> String {
    parse_gluon(text)
        .unwrap()
        .to_linear(shape)
        .unwrap()
        .to_json()
}

#[test]
fn nvmma_accumulator_over_four_ctas() {
    // Each CTA holds a 32×16 quarter: CTA bit 0 moves 16 columns, bit 1 32 rows.
    assert_eq!(
        linear(AMPERE, &[64, 32]),
        r#"{"in": {"register": [[0, 1], [8, 0]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp": [[0, 8], [16, 0]], "block": [[0, 16], [32, 0]]}, "out": {"dim0": 64, "dim1": 32}}"#
    );
}

#[test]
fn swizzled_shared_over_two_ctas() {
    assert_eq!(
        linear(
            "SwizzledSharedLayout(vec=2, per_phase=1, max_phase=4, order=[1, 0], cga_layout=[[1, 0]])",
            &[16, 8]
        ),
        r#"{"in": {"offset": [[0, 1], [0, 2], [0, 4], [1, 2], [2, 4], [4, 0]], "block": [[8, 0]]}, "out": {"dim0": 16, "dim1": 8}}"#
    );
}

#[test]
fn dot_operands_of_a_multi_cta_parent_hold_k_whole() {
    // Operand A: the parent's column split (N) is K here, so those CTAs hold copies.
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=0, parent={AMPERE}, k_width=2)"),
            &[64, 32]
        ),
        r#"{"in": {"register": [[0, 1], [8, 0], [0, 8], [0, 16]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp": [[0, 0], [16, 0]], "block": [[0, 0], [32, 0]]}, "out": {"dim0": 64, "dim1": 32}}"#
    );
    // Operand B: the row split (K) holds copies.
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=1, parent={AMPERE}, k_width=2)"),
            &[32, 64]
        ),
        r#"{"in": {"register": [[1, 0], [8, 0], [16, 0], [0, 16]], "lane": [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]], "warp": [[0, 8], [0, 0]], "block": [[0, 32], [0, 0]]}, "out": {"dim0": 32, "dim1": 64}}"#
    );
}

#[test]
fn batched_ampere_accumulators_put_warps_on_the_batch_last() {
    assert_eq!(
        linear(
            "NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, 1, 2], instr_shape=[1, 16, 8], cga_layout=[])",
            &[4, 32, 32]
        ),
        r#"{"in": {"register": [[0, 0, 1], [0, 8, 0], [0, 0, 16], [0, 16, 0], [2, 0, 0]], "lane": [[0, 0, 2], [0, 0, 4], [0, 1, 0], [0, 2, 0], [0, 4, 0]], "warp": [[0, 0, 8], [1, 0, 0]], "block": []}, "out": {"dim0": 4, "dim1": 32, "dim2": 32}}"#
    );
    // More warps along the batch than batches: the extra one holds a copy.
    assert_eq!(
        linear(
            "NVMMADistributedLayout(version=[2, 0], warps_per_cta=[4, 1, 1], instr_shape=[1, 16, 8])",
            &[2, 16, 8]
        ),
        r#"{"in": {"register": [[0, 0, 1], [0, 8, 0]], "lane": [[0, 0, 2], [0, 0, 4], [0, 1, 0], [0, 2, 0], [0, 4, 0]], "warp": [[1, 0, 0], [0, 0, 0]], "block": []}, "out": {"dim0": 2, "dim1": 16, "dim2": 8}}"#
    );
    // An instr_shape with fewer entries than the tensor's dims gives no accumulator tile (Triton
    // aborts), though the layout is read: its dot operands have one.
    let short =
        "NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, 1, 2], instr_shape=[16, 8])";
    assert!(parse_gluon(short).unwrap().to_linear(&[2, 32, 32]).is_err());
    // A batched Hopper layout is read (its dot operand A has a layout) but, as in Triton 3.9, has no
    // accumulator layout.
    let hopper =
        "NVMMADistributedLayout(version=[3, 0], warps_per_cta=[1, 4, 1], instr_shape=[16, 64, 16])";
    let e = parse_gluon(hopper)
        .unwrap()
        .to_linear(&[2, 64, 64])
        .unwrap_err()
        .to_string();
    assert!(e.contains("Hopper"), "{e}");
}

#[test]
fn bad_cga_layouts_are_refused_at_their_argument() {
    for bad in [
        "NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, 2], instr_shape=[16, 8], cga_layout=[[1, 1]])",
        "SwizzledSharedLayout(vec=2, per_phase=1, max_phase=4, order=[1, 0], cga_layout=[[2, 0]])",
        "SwizzledSharedLayout(vec=2, per_phase=1, max_phase=4, order=[1, 0], cga_layout=[[1]])",
    ] {
        let e = parse_gluon(bad).unwrap_err().to_string();
        assert!(e.contains("cga_layout"), "{bad}: {e}");
    }
}
