//! AMD accumulators spread over CTAs (`cga_layout`) and batched (rank 3), and mfma dot operands, each as
//! Triton 3.9 answers it (`GluonOpBuilder.to_linear_layout`, asked by `scripts/triton-differential` on
//! cases drawn there).

#![allow(clippy::unwrap_used, missing_docs)]

use axe_triton::gluon::parse_gluon;

fn linear(text: &str, shape: &[u64]) -> String {
    parse_gluon(text)
        .unwrap()
        .to_linear(shape)
        .unwrap()
        .to_json()
}

#[test]
fn mfma_over_ctas_counts_its_n_registers_by_the_whole_tensor() {
    // Each CTA holds 64×128 of 64×256; Triton counts N registers for 256 columns (two, at 64 and 128)
    // and the one at 128 lies past the CTA's part, so it holds a copy.
    assert_eq!(
        linear(
            "AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[2, 2], cga_layout=[[0, 1]])",
            &[64, 256]
        ),
        r#"{"in": {"register": [[1, 0], [2, 0], [8, 0], [16, 0], [0, 64], [0, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], "warp": [[0, 32], [32, 0]], "block": [[0, 128]]}, "out": {"dim0": 64, "dim1": 256}}"#
    );
    // Split along M, the part holds every register.
    assert_eq!(
        linear(
            "AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[2, 2], cga_layout=[[1, 0]])",
            &[128, 64]
        ),
        r#"{"in": {"register": [[1, 0], [2, 0], [8, 0], [16, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], "warp": [[0, 32], [32, 0]], "block": [[64, 0]]}, "out": {"dim0": 128, "dim1": 64}}"#
    );
}

#[test]
fn batched_mfma_puts_the_batch_first_with_its_warps_last() {
    assert_eq!(
        linear(
            "AMDMFMALayout(version=4, instr_shape=[16, 16, 32], transposed=True, warps_per_cta=[2, 1, 2], tiles_per_warp=[1, 1, 2])",
            &[4, 32, 64]
        ),
        r#"{"in": {"register": [[0, 0, 1], [0, 0, 2], [0, 0, 16], [0, 16, 0], [2, 0, 0]], "lane": [[0, 1, 0], [0, 2, 0], [0, 4, 0], [0, 8, 0], [0, 0, 4], [0, 0, 8]], "warp": [[0, 0, 32], [1, 0, 0]], "block": []}, "out": {"dim0": 4, "dim1": 32, "dim2": 64}}"#
    );
    // More batches than warps take registers last.
    assert_eq!(
        linear(
            "AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[1, 1, 1])",
            &[4, 32, 32]
        ),
        r#"{"in": {"register": [[0, 1, 0], [0, 2, 0], [0, 8, 0], [0, 16, 0], [1, 0, 0], [2, 0, 0]], "lane": [[0, 0, 1], [0, 0, 2], [0, 0, 4], [0, 0, 8], [0, 0, 16], [0, 4, 0]], "warp": [], "block": []}, "out": {"dim0": 4, "dim1": 32, "dim2": 32}}"#
    );
}

#[test]
fn wmma_over_ctas_and_batched() {
    assert_eq!(
        linear(
            "AMDWMMALayout(version=2, transposed=False, warp_bases=[[1, 0]], cga_layout=[[0, 1]])",
            &[64, 64]
        ),
        r#"{"in": {"register": [[1, 0], [2, 0], [4, 0], [0, 16], [32, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]], "warp": [[16, 0]], "block": [[0, 32]]}, "out": {"dim0": 64, "dim1": 64}}"#
    );
    assert_eq!(
        linear(
            "AMDWMMALayout(version=2, transposed=False, warp_bases=[[0, 1, 0]], rank=3)",
            &[2, 32, 32]
        ),
        r#"{"in": {"register": [[0, 1, 0], [0, 2, 0], [0, 4, 0], [0, 0, 16], [1, 0, 0]], "lane": [[0, 0, 1], [0, 0, 2], [0, 0, 4], [0, 0, 8], [0, 8, 0]], "warp": [[0, 16, 0]], "block": []}, "out": {"dim0": 2, "dim1": 32, "dim2": 32}}"#
    );
    assert_eq!(
        linear(
            "AMDWMMALayout(version=2, transposed=True, warp_bases=[[1, 0, 0], [0, 1, 0]], reg_bases=[[0, 0, 1]], instr_shape=[16, 16, 32], cga_layout=[[0, 1, 0]], rank=3)",
            &[4, 64, 32]
        ),
        r#"{"in": {"register": [[0, 0, 1], [0, 0, 2], [0, 0, 4], [0, 0, 16], [2, 0, 0]], "lane": [[0, 1, 0], [0, 2, 0], [0, 4, 0], [0, 8, 0], [0, 0, 8]], "warp": [[1, 0, 0], [0, 16, 0]], "block": [[0, 32, 0]]}, "out": {"dim0": 4, "dim1": 64, "dim2": 32}}"#
    );
}

#[test]
fn amd_layouts_of_the_wrong_rank_are_refused_with_where() {
    for bad in [
        "AMDWMMALayout(version=2, transposed=False, warp_bases=[[1, 0]], rank=3)",
        "AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[1, 1, 1], tiles_per_warp=[1, 1])",
        "AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[1, 1], cga_layout=[[1, 0, 0]])",
    ] {
        let e = parse_gluon(bad).unwrap_err().to_string();
        assert!(e.contains("offset"), "{bad}: {e}");
    }
}

#[test]
fn mfma_dot_operands_follow_triton() {
    let parent =
        "AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=True, warps_per_cta=[2, 2])";
    // A: 4 K elements per lane, 32 lanes down M, 2 along K; the warps along K (N of the accumulator)
    // lie past K and hold copies.
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=0, parent={parent}, k_width=4)"),
            &[64, 32]
        ),
        r#"{"in": {"register": [[0, 1], [0, 2], [0, 8], [0, 16]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], "warp": [[0, 0], [32, 0]], "block": []}, "out": {"dim0": 64, "dim1": 32}}"#
    );
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=1, parent={parent}, k_width=4)"),
            &[32, 64]
        ),
        r#"{"in": {"register": [[1, 0], [2, 0], [8, 0], [16, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], "warp": [[0, 32], [0, 0]], "block": []}, "out": {"dim0": 32, "dim1": 64}}"#
    );
    // Over CTAs split along K, the K registers are counted by the whole K: the last holds a copy.
    assert_eq!(
        linear(
            "DotOperandLayout(operand_index=0, parent=AMDMFMALayout(version=3, instr_shape=[16, 16, 16], transposed=True, warps_per_cta=[2, 1], cga_layout=[[0, 1]]), k_width=4)",
            &[32, 128]
        ),
        r#"{"in": {"register": [[0, 1], [0, 2], [0, 16], [0, 32], [0, 0]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 4], [0, 8]], "warp": [[16, 0]], "block": [[0, 64]]}, "out": {"dim0": 32, "dim1": 128}}"#
    );
    assert!(parse_gluon(&format!(
        "DotOperandLayout(operand_index=0, parent={parent}, k_width=3)"
    ))
    .is_err());
}

#[test]
fn wmma_dot_operands_follow_triton() {
    // A 32-row A operand of gfx1250: 4 K elements per lane, 16 lanes down M and 2 along K, registers up
    // to K = 64, a second group of 16 rows; the warp along M moves 32 rows, the one along N is a copy.
    assert_eq!(
        linear(
            "DotOperandLayout(operand_index=0, parent=AMDWMMALayout(version=3, transposed=False, warp_bases=[[1, 0], [0, 1]], instr_shape=[32, 16, 64]), k_width=4)",
            &[64, 64]
        ),
        r#"{"in": {"register": [[0, 1], [0, 2], [0, 8], [0, 16], [0, 32], [16, 0]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 4]], "warp": [[32, 0], [0, 0]], "block": []}, "out": {"dim0": 64, "dim1": 64}}"#
    );
    // RDNA3 (version 1): the second half of the lanes holds copies.
    assert_eq!(
        linear(
            "DotOperandLayout(operand_index=1, parent=AMDWMMALayout(version=1, transposed=False, warp_bases=[[1, 0], [0, 1]]), k_width=8)",
            &[32, 32]
        ),
        r#"{"in": {"register": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 0]], "warp": [[0, 0], [0, 16]], "block": []}, "out": {"dim0": 32, "dim1": 32}}"#
    );
    // A transposed parent's tile is N × M: the 32 is along N, so B gets the second group of 16 columns
    // and its warp along N moves 32 columns.
    assert_eq!(
        linear(
            "DotOperandLayout(operand_index=1, parent=AMDWMMALayout(version=3, transposed=True, warp_bases=[[1, 0], [0, 1]], instr_shape=[32, 16, 64]), k_width=4)",
            &[64, 64]
        ),
        r#"{"in": {"register": [[1, 0], [2, 0], [8, 0], [16, 0], [32, 0], [0, 16]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [4, 0]], "warp": [[0, 0], [0, 32]], "block": []}, "out": {"dim0": 64, "dim1": 64}}"#
    );
    // The k_width Triton refuses for each version.
    for (version, k_width) in [(1, 4), (2, 2), (2, 32)] {
        let text = format!(
            "DotOperandLayout(operand_index=0, parent=AMDWMMALayout(version={version}, transposed=False, warp_bases=[]), k_width={k_width})"
        );
        assert!(
            parse_gluon(&text).unwrap().to_linear(&[16, 16]).is_err(),
            "{text}"
        );
    }
}
