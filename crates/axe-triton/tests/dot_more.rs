//! Dot operands of batched NVMMA parents (Ampere and Hopper) and of AMD WMMA parents with register
//! bases, a batch dim or CTAs; rank-3 Hopper accumulators; distributed linear layouts whose bases
//! coincide past the tensor. Each expected answer is Triton 3.9's (`GluonOpBuilder.to_linear_layout`)
//! for a case written here.

#![allow(clippy::unwrap_used, missing_docs)]

use axe_triton::gluon::parse_gluon;

fn linear(text: &str, shape: &[u64]) -> String {
    parse_gluon(text)
        .unwrap()
        .to_linear(shape)
        .unwrap()
        .to_json()
}

fn refused(text: &str, shape: &[u64]) -> bool {
    parse_gluon(text).and_then(|g| g.to_linear(shape)).is_err()
}

const AMPERE3: &str =
    "NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, 2, 2], instr_shape=[1, 16, 8])";

#[test]
fn batched_ampere_operands_put_the_batch_last() {
    // A: the 16 × 16 tile of k_width 2 on dims 1 and 2; the warp along K (the columns) holds copies,
    // then one along M, then one along the batch; more registers: K, then M, then the batch.
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=0, parent={AMPERE3}, k_width=2)"),
            &[8, 64, 64]
        ),
        r#"{"in": {"register": [[0, 0, 1], [0, 8, 0], [0, 0, 8], [0, 0, 16], [0, 0, 32], [0, 32, 0], [2, 0, 0], [4, 0, 0]], "lane": [[0, 0, 2], [0, 0, 4], [0, 1, 0], [0, 2, 0], [0, 4, 0]], "warp": [[0, 0, 0], [0, 16, 0], [1, 0, 0]], "block": []}, "out": {"dim0": 8, "dim1": 64, "dim2": 64}}"#
    );
    // B: K along dim 1; the warp along M (K for B) holds copies.
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=1, parent={AMPERE3}, k_width=2)"),
            &[2, 32, 32]
        ),
        r#"{"in": {"register": [[0, 1, 0], [0, 8, 0], [0, 16, 0], [0, 0, 16]], "lane": [[0, 2, 0], [0, 4, 0], [0, 0, 1], [0, 0, 2], [0, 0, 4]], "warp": [[0, 0, 8], [0, 0, 0], [1, 0, 0]], "block": []}, "out": {"dim0": 2, "dim1": 32, "dim2": 32}}"#
    );
    // One batch of one tile: every warp holds copies.
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=0, parent={AMPERE3}, k_width=2)"),
            &[1, 16, 16]
        ),
        r#"{"in": {"register": [[0, 0, 1], [0, 8, 0], [0, 0, 8]], "lane": [[0, 0, 2], [0, 0, 4], [0, 1, 0], [0, 2, 0], [0, 4, 0]], "warp": [[0, 0, 0], [0, 0, 0], [0, 0, 0]], "block": []}, "out": {"dim0": 1, "dim1": 16, "dim2": 16}}"#
    );
}

#[test]
fn batched_ampere_operands_over_ctas_hold_k_whole() {
    let parent = "NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, 2, 2], instr_shape=[1, 16, 8], cga_layout=[[0, 1, 0], [0, 0, 1], [1, 0, 0]])";
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=0, parent={parent}, k_width=2)"),
            &[4, 64, 64]
        ),
        r#"{"in": {"register": [[0, 0, 1], [0, 8, 0], [0, 0, 8], [0, 0, 16], [0, 0, 32]], "lane": [[0, 0, 2], [0, 0, 4], [0, 1, 0], [0, 2, 0], [0, 4, 0]], "warp": [[0, 0, 0], [0, 16, 0], [1, 0, 0]], "block": [[0, 32, 0], [0, 0, 0], [2, 0, 0]]}, "out": {"dim0": 4, "dim1": 64, "dim2": 64}}"#
    );
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=1, parent={parent}, k_width=2)"),
            &[4, 64, 64]
        ),
        r#"{"in": {"register": [[0, 1, 0], [0, 8, 0], [0, 16, 0], [0, 32, 0], [0, 0, 16]], "lane": [[0, 2, 0], [0, 4, 0], [0, 0, 1], [0, 0, 2], [0, 0, 4]], "warp": [[0, 0, 8], [0, 0, 0], [1, 0, 0]], "block": [[0, 0, 0], [0, 0, 32], [2, 0, 0]]}, "out": {"dim0": 4, "dim1": 64, "dim2": 64}}"#
    );
}

#[test]
fn batched_hopper_has_an_operand_a_but_no_accumulator() {
    // Triton reads the tile's M from instr_shape[rank - 2]: 32 here, so two register groups along M.
    // The warps go along the rows first (Hopper), then the columns (K: copies), then the batch.
    let parent =
        "NVMMADistributedLayout(version=[3, 0], warps_per_cta=[2, 4, 2], instr_shape=[16, 32, 16])";
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=0, parent={parent}, k_width=2)"),
            &[4, 64, 64]
        ),
        r#"{"in": {"register": [[0, 0, 1], [0, 8, 0], [0, 16, 0], [0, 0, 8], [0, 0, 16], [0, 0, 32], [2, 0, 0]], "lane": [[0, 0, 2], [0, 0, 4], [0, 1, 0], [0, 2, 0], [0, 4, 0]], "warp": [[0, 32, 0], [0, 0, 0], [0, 0, 0], [1, 0, 0]], "block": []}, "out": {"dim0": 4, "dim1": 64, "dim2": 64}}"#
    );
    // Registers past a tensor smaller than the tile hold copies.
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=0, parent={parent}, k_width=2)"),
            &[1, 16, 16]
        ),
        r#"{"in": {"register": [[0, 0, 1], [0, 8, 0], [0, 0, 0], [0, 0, 8]], "lane": [[0, 0, 2], [0, 0, 4], [0, 1, 0], [0, 2, 0], [0, 4, 0]], "warp": [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]], "block": []}, "out": {"dim0": 1, "dim1": 16, "dim2": 16}}"#
    );
    // wgmma reads B from shared memory; Triton 3.9 aborts on the rank-3 Hopper accumulator.
    assert!(refused(
        &format!("DotOperandLayout(operand_index=1, parent={parent}, k_width=2)"),
        &[1, 16, 16]
    ));
    assert!(refused(parent, &[2, 64, 64]));
    // An M of 8 (fp64's m8n8k4) makes the tile 8 × 4·k_width: no second group along M or K.
    assert_eq!(
        linear(
            "DotOperandLayout(operand_index=0, parent=NVMMADistributedLayout(version=[3, 0], warps_per_cta=[1, 4, 1], instr_shape=[16, 8, 16]), k_width=2)",
            &[1, 16, 16]
        ),
        r#"{"in": {"register": [[0, 0, 1], [0, 0, 8]], "lane": [[0, 0, 2], [0, 0, 4], [0, 1, 0], [0, 2, 0], [0, 4, 0]], "warp": [[0, 8, 0], [0, 0, 0]], "block": []}, "out": {"dim0": 1, "dim1": 16, "dim2": 16}}"#
    );
    // An M below 8 is no tile (Triton refuses).
    assert!(refused(
        "DotOperandLayout(operand_index=0, parent=NVMMADistributedLayout(version=[3, 0], warps_per_cta=[1, 4, 1], instr_shape=[16, 4, 16]), k_width=2)",
        &[1, 16, 16]
    ));
}

#[test]
fn ampere_tiles_follow_the_instruction_shape() {
    let acc = |instr: &str, warps: &str| {
        format!(
            "NVMMADistributedLayout(version=[2, 0], warps_per_cta={warps}, instr_shape={instr})"
        )
    };
    // An 8 × 8 tile (fp64's m8n8k4): no second register group.
    assert_eq!(
        linear(&acc("[8, 8]", "[2, 2]"), &[32, 32]),
        r#"{"in": {"register": [[0, 1], [0, 16], [16, 0]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp": [[0, 8], [8, 0]], "block": []}, "out": {"dim0": 32, "dim1": 32}}"#
    );
    assert_eq!(
        linear(
            &format!(
                "DotOperandLayout(operand_index=0, parent={}, k_width=2)",
                acc("[8, 8]", "[2, 2]")
            ),
            &[32, 32]
        ),
        r#"{"in": {"register": [[0, 1], [0, 8], [0, 16], [16, 0]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp": [[0, 0], [8, 0]], "block": []}, "out": {"dim0": 32, "dim1": 32}}"#
    );
    // A 32 × 16 tile: register groups down M, then across N.
    assert_eq!(
        linear(&acc("[32, 16]", "[2, 2]"), &[64, 64]),
        r#"{"in": {"register": [[0, 1], [8, 0], [16, 0], [0, 8], [0, 32]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp": [[0, 16], [32, 0]], "block": []}, "out": {"dim0": 64, "dim1": 64}}"#
    );
    // Triton ignores a batched instruction's batch entry.
    assert_eq!(
        linear(&acc("[2, 16, 8]", "[2, 2, 2]"), &[4, 64, 64]),
        r#"{"in": {"register": [[0, 0, 1], [0, 8, 0], [0, 0, 16], [0, 0, 32], [0, 32, 0], [2, 0, 0]], "lane": [[0, 0, 2], [0, 0, 4], [0, 1, 0], [0, 2, 0], [0, 4, 0]], "warp": [[0, 0, 8], [0, 16, 0], [1, 0, 0]], "block": []}, "out": {"dim0": 4, "dim1": 64, "dim2": 64}}"#
    );
    // No tile: N below 8, an entry short of the tensor's dims.
    assert!(refused(&acc("[16, 4]", "[2, 2]"), &[64, 64]));
    assert!(refused(&acc("[16, 8, 8]", "[2, 2]"), &[64, 64]));
    // Operand A needs an M of at least 8; B's tile has 8 columns whatever M is.
    let small = acc("[4, 8]", "[2, 4]");
    assert!(refused(
        &format!("DotOperandLayout(operand_index=0, parent={small}, k_width=1)"),
        &[4, 8]
    ));
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=1, parent={small}, k_width=1)"),
            &[4, 8]
        ),
        r#"{"in": {"register": [[0, 0]], "lane": [[1, 0], [2, 0], [0, 1], [0, 2], [0, 4]], "warp": [[0, 0], [0, 0], [0, 0]], "block": []}, "out": {"dim0": 4, "dim1": 8}}"#
    );
    // The operand's M is entry rank - 2 however many entries there are: [16, 8, 8] over rank 2 has 16.
    assert_eq!(
        linear(
            &format!(
                "DotOperandLayout(operand_index=0, parent={}, k_width=2)",
                acc("[16, 8, 8]", "[2, 2]")
            ),
            &[64, 64]
        ),
        r#"{"in": {"register": [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [32, 0]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp": [[0, 0], [16, 0]], "block": []}, "out": {"dim0": 64, "dim1": 64}}"#
    );
}

#[test]
fn hopper_tiles_follow_the_instruction_shape() {
    let acc = |instr: &str| {
        format!("NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape={instr})")
    };
    // A 32-row instruction: two register groups down M; the operand A alike.
    let want = r#"{"in": {"register": [[0, 1], [8, 0], [16, 0], [0, 8], [0, 16], [0, 32], [0, 64]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp": [[32, 0], [64, 0]], "block": []}, "out": {"dim0": 128, "dim1": 128}}"#;
    assert_eq!(linear(&acc("[32, 64, 16]"), &[128, 128]), want);
    assert_eq!(
        linear(
            &format!(
                "DotOperandLayout(operand_index=0, parent={}, k_width=2)",
                acc("[32, 64, 16]")
            ),
            &[128, 128]
        ),
        want
    );
    // Two entries are enough; an N of 12 is no accumulator tile, but the operand does not use N.
    let want = r#"{"in": {"register": [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64], [64, 0]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp": [[16, 0], [32, 0]], "block": []}, "out": {"dim0": 128, "dim1": 128}}"#;
    assert_eq!(linear(&acc("[16, 64]"), &[128, 128]), want);
    assert!(refused(&acc("[16, 12, 16]"), &[128, 128]));
    assert_eq!(
        linear(
            &format!(
                "DotOperandLayout(operand_index=0, parent={}, k_width=2)",
                acc("[16, 12, 16]")
            ),
            &[128, 128]
        ),
        want
    );
}

#[test]
fn wmma_operands_take_the_parents_register_bases_less_k() {
    // The parent's register base moves 2 tiles along N: for A (K along dim 1) it moves nothing and is
    // removed; for B it moves 2 · 16 columns, past the 64-column tensor, so it holds a copy (and the
    // register for K = 64 comes after it).
    let parent = "AMDWMMALayout(version=3, transposed=True, warp_bases=[[0, 1], [1, 0]], reg_bases=[[0, 2]], instr_shape=[32, 16, 64])";
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=0, parent={parent}, k_width=8)"),
            &[64, 128]
        ),
        r#"{"in": {"register": [[0, 1], [0, 2], [0, 4], [0, 16], [0, 32], [0, 64], [32, 0]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 8]], "warp": [[0, 0], [16, 0]], "block": []}, "out": {"dim0": 64, "dim1": 128}}"#
    );
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=1, parent={parent}, k_width=8)"),
            &[128, 64]
        ),
        r#"{"in": {"register": [[1, 0], [2, 0], [4, 0], [16, 0], [32, 0], [0, 16], [0, 0], [64, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]], "warp": [[0, 32], [0, 0]], "block": []}, "out": {"dim0": 128, "dim1": 64}}"#
    );
    // RDNA3: the copies in the lanes, K registers for the half of K the lanes do not cover.
    let parent = "AMDWMMALayout(version=1, transposed=False, warp_bases=[[0, 1], [1, 0]], reg_bases=[[0, 2]], instr_shape=[16, 16, 16])";
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=1, parent={parent}, k_width=8)"),
            &[128, 64]
        ),
        r#"{"in": {"register": [[1, 0], [2, 0], [4, 0], [0, 32], [8, 0], [16, 0], [32, 0], [64, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 0]], "warp": [[0, 16], [0, 0]], "block": []}, "out": {"dim0": 128, "dim1": 64}}"#
    );
}

#[test]
fn batched_wmma_operands() {
    let parent = "AMDWMMALayout(version=2, transposed=False, warp_bases=[[1, 0, 0], [0, 1, 0]], reg_bases=[[0, 0, 1]], instr_shape=[16, 16, 16], rank=3)";
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=0, parent={parent}, k_width=4)"),
            &[4, 32, 64]
        ),
        r#"{"in": {"register": [[0, 0, 1], [0, 0, 2], [0, 0, 8], [0, 0, 16], [0, 0, 32], [2, 0, 0]], "lane": [[0, 1, 0], [0, 2, 0], [0, 4, 0], [0, 8, 0], [0, 0, 4]], "warp": [[1, 0, 0], [0, 16, 0]], "block": []}, "out": {"dim0": 4, "dim1": 32, "dim2": 64}}"#
    );
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=1, parent={parent}, k_width=4)"),
            &[4, 64, 32]
        ),
        r#"{"in": {"register": [[0, 1, 0], [0, 2, 0], [0, 8, 0], [0, 0, 16], [0, 16, 0], [0, 32, 0], [2, 0, 0]], "lane": [[0, 0, 1], [0, 0, 2], [0, 0, 4], [0, 0, 8], [0, 4, 0]], "warp": [[1, 0, 0], [0, 0, 0]], "block": []}, "out": {"dim0": 4, "dim1": 64, "dim2": 32}}"#
    );
}

#[test]
fn wmma_operands_over_ctas_hold_k_whole() {
    let parent = "AMDWMMALayout(version=2, transposed=False, warp_bases=[[0, 1], [1, 0]], reg_bases=[], instr_shape=[16, 16, 16], cga_layout=[[1, 0], [0, 1]])";
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=0, parent={parent}, k_width=8)"),
            &[64, 64]
        ),
        r#"{"in": {"register": [[0, 1], [0, 2], [0, 4], [0, 16], [0, 32]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 8]], "warp": [[0, 0], [16, 0]], "block": [[32, 0], [0, 0]]}, "out": {"dim0": 64, "dim1": 64}}"#
    );
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=1, parent={parent}, k_width=8)"),
            &[64, 64]
        ),
        r#"{"in": {"register": [[1, 0], [2, 0], [4, 0], [16, 0], [32, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]], "warp": [[0, 16], [0, 0]], "block": [[0, 0], [0, 32]]}, "out": {"dim0": 64, "dim1": 64}}"#
    );
}

#[test]
fn wmma_operands_are_checked_once_k_is_dropped() {
    // The warp base [1, 1] moves both dims: the accumulator is no linear encoding, and neither is A
    // (both warps then move 16 rows); B keeps [0, 16] and a copy, which is one.
    let parent = "AMDWMMALayout(version=2, transposed=False, warp_bases=[[1, 1], [1, 0]], reg_bases=[], instr_shape=[16, 16, 16])";
    assert!(refused(parent, &[64, 64]));
    assert!(refused(
        &format!("DotOperandLayout(operand_index=0, parent={parent}, k_width=8)"),
        &[64, 64]
    ));
    assert_eq!(
        linear(
            &format!("DotOperandLayout(operand_index=1, parent={parent}, k_width=8)"),
            &[64, 64]
        ),
        r#"{"in": {"register": [[1, 0], [2, 0], [4, 0], [16, 0], [32, 0], [0, 32]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]], "warp": [[0, 16], [0, 0]], "block": []}, "out": {"dim0": 64, "dim1": 64}}"#
    );
    // Bases that do not reach every tile of their extent are refused, as Triton's verifier does.
    assert!(refused(
        "DotOperandLayout(operand_index=1, parent=AMDWMMALayout(version=2, transposed=False, warp_bases=[[0, 2]], reg_bases=[], instr_shape=[16, 16, 16]), k_width=8)",
        &[64, 64]
    ));
}

#[test]
fn distributed_linear_bases_may_coincide_past_the_tensor() {
    // Two registers on element 1: over one element both are dropped and the CTA base becomes a copy;
    // over two or more, two registers hold one element, which is no linear encoding.
    let text = "DistributedLinearLayout(reg_bases=[[1], [1]], lane_bases=[], warp_bases=[], block_bases=[[2]], shape=[4])";
    assert_eq!(
        linear(text, &[1]),
        r#"{"in": {"register": [], "lane": [], "warp": [], "block": [[0]]}, "out": {"dim0": 1}}"#
    );
    assert!(refused(text, &[2]));
    assert!(refused(text, &[8]));
    let text = "DistributedLinearLayout(reg_bases=[[2], [1]], lane_bases=[[2]], warp_bases=[], block_bases=[], shape=[4])";
    assert_eq!(
        linear(text, &[2]),
        r#"{"in": {"register": [[1]], "lane": [[0]], "warp": [], "block": []}, "out": {"dim0": 2}}"#
    );
    assert!(refused(text, &[4]));
    // A base moving a dim by 3 is refused whatever the tensor.
    let text = "DistributedLinearLayout(reg_bases=[[1], [3]], lane_bases=[], warp_bases=[], block_bases=[], shape=[4])";
    assert!(refused(text, &[1]));
    assert!(refused(text, &[4]));
}

mod laws {
    use axe_triton::gluon::parse_gluon;
    use axe_triton::LinearLayout;
    use proptest::prelude::*;

    /// The bases of `l` with tensor dim 0 dropped, in-dim by in-dim.
    fn without_dim0(l: &LinearLayout) -> Vec<(String, Vec<Vec<u64>>)> {
        l.in_dims()
            .iter()
            .map(|d| {
                let bases = d.bases.iter().map(|b| b[1..].to_vec()).collect();
                (d.name.clone(), bases)
            })
            .collect()
    }

    fn bases(l: &LinearLayout) -> Vec<(String, Vec<Vec<u64>>)> {
        l.in_dims()
            .iter()
            .map(|d| (d.name.clone(), d.bases.clone()))
            .collect()
    }

    fn list(b: &[Vec<u64>]) -> String {
        let items: Vec<String> = b.iter().map(|v| format!("{v:?}")).collect();
        format!("[{}]", items.join(", "))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// A batched Ampere operand over one batch is the rank-2 operand, with a batch coordinate of
        /// zero everywhere: the batch adds nothing to one batch's layout.
        #[test]
        fn one_batch_of_a_batched_ampere_operand_is_the_plain_operand(
            wm in 0u32..3, wn in 0u32..3, op in 0u64..2, kw in 0u32..4, m in 3u32..8, k in 3u32..8,
        ) {
            let (wm, wn, kw) = (1u64 << wm, 1u64 << wn, 1u64 << kw);
            let (m, k) = (1u64 << m, 1u64 << k);
            let two = format!(
                "DotOperandLayout(operand_index={op}, parent=NVMMADistributedLayout(version=[2, 0], \
                 warps_per_cta=[{wm}, {wn}], instr_shape=[16, 8]), k_width={kw})"
            );
            let three = format!(
                "DotOperandLayout(operand_index={op}, parent=NVMMADistributedLayout(version=[2, 0], \
                 warps_per_cta=[1, {wm}, {wn}], instr_shape=[1, 16, 8]), k_width={kw})"
            );
            let a = parse_gluon(&two).unwrap().to_linear(&[m, k]).unwrap();
            let b = parse_gluon(&three).unwrap().to_linear(&[1, m, k]).unwrap();
            prop_assert!(b.in_dims().iter().all(|d| d.bases.iter().all(|v| v[0] == 0)));
            prop_assert_eq!(without_dim0(&b), bases(&a));
        }

        /// Likewise for WMMA: a rank-3 parent whose bases never move the batch, over one batch, gives
        /// the rank-2 parent's operand.
        #[test]
        fn one_batch_of_a_batched_wmma_operand_is_the_plain_operand(
            version in 1u64..4, transposed in any::<bool>(), op in 0u64..2,
            moves in proptest::collection::vec(0usize..3, 0..4), regs in 0usize..3,
            m in 4u32..8, n in 4u32..8,
        ) {
            // Unit moves in tiles: along dim 0, dim 1 (each the next power of two) or none.
            let mut next = [1u64, 1u64];
            let mut two_d: Vec<Vec<u64>> = Vec::new();
            for d in moves {
                let mut b = vec![0u64, 0];
                if d < 2 {
                    b[d] = next[d];
                    next[d] *= 2;
                }
                two_d.push(b);
            }
            let regs = regs.min(two_d.len());
            let (reg2, warp2) = two_d.split_at(regs);
            let lift = |bs: &[Vec<u64>]| -> Vec<Vec<u64>> {
                bs.iter().map(|b| vec![0, b[0], b[1]]).collect()
            };
            let kw = if version == 1 { 8 } else { 4 };
            let t = if transposed { "True" } else { "False" };
            let instr = if version == 3 { "[16, 16, 32]" } else { "[16, 16, 16]" };
            let two = format!(
                "DotOperandLayout(operand_index={op}, parent=AMDWMMALayout(version={version}, transposed={t}, \
                 warp_bases={}, reg_bases={}, instr_shape={instr}), k_width={kw})",
                list(warp2), list(reg2)
            );
            let three = format!(
                "DotOperandLayout(operand_index={op}, parent=AMDWMMALayout(version={version}, transposed={t}, \
                 warp_bases={}, reg_bases={}, instr_shape={instr}, rank=3), k_width={kw})",
                list(&lift(warp2)), list(&lift(reg2))
            );
            let (m, n) = (1u64 << m, 1u64 << n);
            let a = parse_gluon(&two).unwrap().to_linear(&[m, n]);
            let b = parse_gluon(&three).unwrap().to_linear(&[1, m, n]);
            match (a, b) {
                (Ok(a), Ok(b)) => prop_assert_eq!(without_dim0(&b), bases(&a)),
                (Err(_), Err(_)) => {}
                (a, b) => prop_assert!(false, "{two}: {a:?} vs {three}: {b:?}"),
            }
        }
    }
}
