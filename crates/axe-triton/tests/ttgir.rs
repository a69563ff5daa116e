//! TTGIR layout attributes as Triton prints them (`#ttg.blocked<{...}>`, `#ttg.nvidia_mma<{...}>`, ...):
//! each gives exactly the layout of its Gluon constructor twin; aliases defined in the text resolve; the
//! older CTA parameters place CTAs as Triton's CGA layout does (checked against the rule, enumerated);
//! errors point at the offending byte.

#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use axe_triton::gluon::{is_linear_text, parse_gluon, parse_ttgir};
use axe_triton::{parse_linear, TritonError};
use proptest::prelude::*;

/// The layout of `ttgir` equals that of `gluon`, and so do their linear layouts over `shape`.
fn twins(ttgir: &str, gluon: &str, shape: &[u64]) {
    let a = parse_gluon(ttgir).unwrap_or_else(|e| panic!("{ttgir}: {e}"));
    let b = parse_gluon(gluon).unwrap_or_else(|e| panic!("{gluon}: {e}"));
    assert_eq!(a, b, "{ttgir} vs {gluon}");
    assert_eq!(
        a.to_linear(shape).unwrap().to_json(),
        b.to_linear(shape).unwrap().to_json()
    );
}

/// The byte offset and message of a parse error of `src`.
fn error_of(src: &str) -> (usize, String) {
    match parse_gluon(src) {
        Err(TritonError::Parse(p)) => {
            assert_eq!(p.input, src, "the error quotes the whole input");
            (p.offset, p.message)
        }
        other => panic!("{src}: expected a parse error, got {other:?}"),
    }
}

fn list(xs: &[u64]) -> String {
    let s: Vec<String> = xs.iter().map(u64::to_string).collect();
    format!("[{}]", s.join(", "))
}

/// `size_per_thread`, `threads_per_warp`, `warps_per_cta`, `order` and a tensor shape.
type Blocked = (Vec<u64>, Vec<u64>, Vec<u64>, Vec<usize>, Vec<u64>);

fn blocked_params() -> impl Strategy<Value = Blocked> {
    (1usize..4).prop_flat_map(|rank| {
        (
            proptest::collection::vec(0u32..3, rank),
            proptest::collection::vec(0u32..3, rank),
            proptest::collection::vec(0u32..3, rank),
            Just((0..rank).collect::<Vec<usize>>()).prop_shuffle(),
            proptest::collection::vec(0u32..5, rank),
        )
            .prop_map(|(s, t, w, order, shape)| {
                let p = |v: Vec<u32>| v.into_iter().map(|b| 1u64 << b).collect::<Vec<u64>>();
                (p(s), p(t), p(w), order, p(shape))
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The attribute text made from the same parameters as the constructor text reads to the same layout
    /// and the same linear layout, whatever the prefix and whether the default CTA parameters are printed.
    #[test]
    fn blocked_attribute_equals_its_constructor(
        (spt, tpw, wpc, order, shape) in blocked_params(),
        old_prefix in any::<bool>(),
        cta in any::<bool>(),
    ) {
        let rank = order.len();
        let orders: Vec<u64> = order.iter().map(|d| *d as u64).collect();
        let ones = vec![1u64; rank];
        let cta_text = if cta {
            format!(", CTAsPerCGA = {}, CTASplitNum = {}, CTAOrder = {}", list(&ones), list(&ones), list(&orders))
        } else {
            String::new()
        };
        let ttgir = format!(
            "#{}.blocked<{{sizePerThread = {}, threadsPerWarp = {}, warpsPerCTA = {}, order = {}{cta_text}}}>",
            if old_prefix { "triton_gpu" } else { "ttg" },
            list(&spt), list(&tpw), list(&wpc), list(&orders)
        );
        let gluon = format!(
            "BlockedLayout(size_per_thread={}, threads_per_warp={}, warps_per_cta={}, order={})",
            list(&spt), list(&tpw), list(&wpc), list(&orders)
        );
        let a = parse_ttgir(&ttgir).unwrap();
        let b = parse_gluon(&gluon).unwrap();
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(a.to_linear(&shape).unwrap().to_json(), b.to_linear(&shape).unwrap().to_json());
    }

    /// The older CTA parameters place CTA `b` as Triton's CGA layout does: its bits, taken along the dims in
    /// `CTAOrder` (most minor first), count `CTAsPerCGA[d]` CTAs along dim `d`, of which `CTASplitNum[d]`
    /// hold distinct parts (`b_d mod CTASplitNum[d]`) and the rest copies; each part is
    /// `shape[d] / CTASplitNum[d]` long.
    #[test]
    fn older_cta_parameters_place_ctas_as_triton_does(
        split in (0u32..3, 0u32..3),
        copies in (0u32..2, 0u32..2),
        minor_first in any::<bool>(),
    ) {
        let split = [1u64 << split.0, 1u64 << split.1];
        let ctas = [split[0] << copies.0, split[1] << copies.1];
        let order: [usize; 2] = if minor_first { [1, 0] } else { [0, 1] };
        let text = format!(
            "#ttg.blocked<{{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0], \
             CTAsPerCGA = {}, CTASplitNum = {}, CTAOrder = [{}, {}]}}>",
            list(&ctas), list(&split), order[0], order[1]
        );
        let shape = [64u64, 128];
        let ll = parse_ttgir(&text).unwrap().to_linear(&shape).unwrap();
        for b in 0..ctas[0] * ctas[1] {
            let inner = ctas[order[0]];
            let mut at = [0u64; 2];
            let mut pos = [0u64; 2];
            pos[order[0]] = b % inner;
            pos[order[1]] = b / inner;
            for d in 0..2 {
                at[d] = (pos[d] % split[d]) * (shape[d] / split[d]);
            }
            prop_assert_eq!(ll.apply(&[0, 0, 0, b]).unwrap(), at.to_vec(), "{} CTA {}", text, b);
        }
    }
}

#[test]
fn every_attribute_kind_equals_its_constructor() {
    let mma3 = "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], instrShape = [16, 256, 16]}>";
    let mma3_g =
        "NVMMADistributedLayout(version=[3, 0], warps_per_cta=[8, 1], instr_shape=[16, 256, 16])";
    twins(mma3, mma3_g, &[128, 256]);
    let mma2 = "#triton_gpu.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>";
    let mma2_g =
        "NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, 2], instr_shape=[16, 8])";
    twins(mma2, mma2_g, &[64, 64]);
    twins(
        &format!("#ttg.dot_op<{{opIdx = 1, parent = {mma2}, kWidth = 4}}>"),
        &format!("DotOperandLayout(operand_index=1, parent={mma2_g}, k_width=4)"),
        &[64, 64],
    );
    twins(
        &format!("#ttg.dot_op<{{opIdx = 0, parent = {mma3}, kWidth = 2}}>"),
        &format!("DotOperandLayout(operand_index=0, parent={mma3_g}, k_width=2)"),
        &[128, 64],
    );
    let blocked = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>";
    let blocked_g = "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[4, 8], warps_per_cta=[4, 1], order=[1, 0])";
    // Triton leaves out kWidth when it is 0 (a blocked parent).
    twins(
        &format!("#ttg.dot_op<{{opIdx = 0, parent = {blocked}}}>"),
        &format!("DotOperandLayout(operand_index=0, parent={blocked_g}, k_width=0)"),
        &[32, 32],
    );
    twins(
        &format!("#ttg.slice<{{dim = 0, parent = {mma3}}}>"),
        &format!("SliceLayout(dim=0, parent={mma3_g})"),
        &[256],
    );
    twins(
        "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
        "SwizzledSharedLayout(vec=8, per_phase=1, max_phase=8, order=[1, 0])",
        &[64, 64],
    );
    twins(
        "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
        "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, transposed=False)",
        &[64, 64],
    );
    twins(
        "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = true, elementBitWidth = 8, fp4Padded = true}>",
        "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=8, transposed=True, fp4_padded=True)",
        &[128, 64],
    );
    twins(
        "#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16, rank = 3}>",
        "NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=16, rank=3)",
        &[2, 64, 32],
    );
    twins(
        "#ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>",
        "AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=True, warps_per_cta=[2, 2])",
        &[128, 128],
    );
    twins(
        "#ttg.amd_mfma<{version = 4, warpsPerCTA = [4, 1], instrShape = [16, 16, 32], isTransposed = false, tilesPerWarp = [2, 1], elementBitWidth = 64}>",
        "AMDMFMALayout(version=4, instr_shape=[16, 16, 32], transposed=False, warps_per_cta=[4, 1], element_bitwidth=64, tiles_per_warp=[2, 1])",
        &[128, 32],
    );
    // WMMA: the bases of `ctaLayout` are Gluon's `warp_bases` and `reg_bases`; Triton leaves out a false
    // `isTranspose` and the default instruction shape.
    twins(
        "#ttg.amd_wmma<{version = 2, isTranspose = true, ctaLayout = {warp = [[0, 1], [1, 0]]}, instrShape = [16, 16, 32]}>",
        "AMDWMMALayout(version=2, transposed=True, warp_bases=[[0, 1], [1, 0]], instr_shape=[16, 16, 32])",
        &[64, 64],
    );
    twins(
        "#ttg.amd_wmma<{version = 1, ctaLayout = {register = [], warp = []}}>",
        "AMDWMMALayout(version=1, transposed=False, warp_bases=[])",
        &[16, 16],
    );
    twins(
        "#ttg.amd_wmma<{version = 3, isTranspose = false, ctaLayout = {register = [[1, 0]], warp = [[0, 1], [0, 2]], block = []}, instrShape = [16, 16, 32]}>",
        "AMDWMMALayout(version=3, transposed=False, warp_bases=[[0, 1], [0, 2]], reg_bases=[[1, 0]], instr_shape=[16, 16, 32])",
        &[32, 64],
    );
    // Triton prints no rank for WMMA: three coordinates in its bases make it batched.
    twins(
        "#ttg.dot_op<{opIdx = 1, parent = #ttg.amd_wmma<{version = 1, isTranspose = true, ctaLayout = {register = [[0, 0, 0], [0, 1, 0]], warp = [[1, 0, 0]]}, CGALayout = [[0, 1, 0], [0, 0, 0]]}>, kWidth = 8}>",
        "DotOperandLayout(operand_index=1, parent=AMDWMMALayout(version=1, transposed=True, warp_bases=[[1, 0, 0]], reg_bases=[[0, 0, 0], [0, 1, 0]], cga_layout=[[0, 1, 0], [0, 0, 0]], rank=3), k_width=8)",
        &[4, 4, 64],
    );
    twins(
        "#ttg.amd_wmma<{version = 2, isTranspose = false, ctaLayout = {}, CGALayout = [[1, 0, 0]]}>",
        "AMDWMMALayout(version=2, transposed=False, warp_bases=[], cga_layout=[[1, 0, 0]], rank=3)",
        &[2, 16, 16],
    );
    // The older WMMA printing: warps per CTA in whole tiles, along the last dim first.
    twins(
        "#ttg.amd_wmma<{version = 2, isTranspose = true, warpsPerCTA = [2, 4]}>",
        "AMDWMMALayout(version=2, transposed=True, warp_bases=[[0, 1], [0, 2], [1, 0]])",
        &[64, 128],
    );
    twins(
        "#triton_gpu.amd_wmma<{version = 1, warpsPerCTA = [4, 1]}>",
        "AMDWMMALayout(version=1, transposed=False, warp_bases=[[1, 0], [2, 0]])",
        &[64, 16],
    );
    twins(
        "#ttg.amd_wmma<{version = 1, isTranspose = false, warpsPerCTA = [2, 1, 2]}>",
        "AMDWMMALayout(version=1, transposed=False, warp_bases=[[0, 0, 1], [1, 0, 0]], rank=3)",
        &[2, 16, 32],
    );
    twins(
        "#ttg.dot_op<{opIdx = 1, parent = #ttg.amd_wmma<{version = 2, isTranspose = false, warpsPerCTA = [2, 2], CTAsPerCGA = [1, 2], CTASplitNum = [1, 2], CTAOrder = [1, 0]}>, kWidth = 8}>",
        "DotOperandLayout(operand_index=1, parent=AMDWMMALayout(version=2, transposed=False, warp_bases=[[0, 1], [1, 0]], cga_layout=[[0, 1]]), k_width=8)",
        &[64, 64],
    );
    // The older MFMA form: versionMajor/versionMinor and a two-entry instrShape.
    twins(
        "#triton_gpu.amd_mfma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 4], instrShape = [32, 32], isTransposed = false}>",
        "AMDMFMALayout(version=2, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[1, 4])",
        &[64, 128],
    );
}

/// The identity bases over `shape` along `order` (most minor first), as Gluon text.
fn identity_text(shape: &[u64], order: &[usize]) -> String {
    let mut bases = Vec::new();
    for &d in order {
        let mut v = 1;
        while v < shape[d] {
            let b: Vec<u64> = (0..shape.len())
                .map(|j| if j == d { v } else { 0 })
                .collect();
            bases.push(list(&b));
            v *= 2;
        }
    }
    format!("[{}]", bases.join(", "))
}

#[test]
fn padded_shared_attributes_in_both_of_their_forms() {
    // Triton's shorthand: the identity over a shape.
    twins(
        "#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [64, 32]}>",
        &format!(
            "PaddedSharedLayout(interval_padding_pairs=[[32, 4]], offset_bases={}, shape=[64, 32])",
            identity_text(&[64, 32], &[1, 0])
        ),
        &[64, 32],
    );
    twins(
        "#ttg.padded_shared<[512:+16, 64:+4] {order = [0, 1], shape = [16, 256]}>",
        &format!(
            "PaddedSharedLayout(interval_padding_pairs=[[512, 16], [64, 4]], offset_bases={}, shape=[16, 256])",
            identity_text(&[16, 256], &[0, 1])
        ),
        &[16, 256],
    );
    // Bases: the shape is the smallest one holding them.
    twins(
        "#ttg.padded_shared<[64:+4] {offset = [[1], [2], [4], [8], [64], [128], [16], [32]], block = []}>",
        "PaddedSharedLayout(interval_padding_pairs=[[64, 4]], offset_bases=[[1], [2], [4], [8], [64], [128], [16], [32]], shape=[256])",
        &[256],
    );
    twins(
        "#shared = #ttg.padded_shared<[16:+2] {offset = [[0, 1], [0, 2], [1, 0], [2, 0], [0, 4]], block = []}>\n#shared",
        "PaddedSharedLayout(interval_padding_pairs=[[16, 2]], offset_bases=[[0, 1], [0, 2], [1, 0], [2, 0], [0, 4]], shape=[4, 8])",
        &[4, 8],
    );
}

#[test]
fn multi_cta_layouts_in_both_forms() {
    let gluon = "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[4, 8], warps_per_cta=[4, 1], order=[1, 0], cga_layout=[[0, 1], [1, 0]])";
    // Triton 3.9 prints the CGA layout's bases.
    twins(
        "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], CGALayout = [[0, 1], [1, 0]]}>",
        gluon,
        &[64, 128],
    );
    // Older Triton prints CTAsPerCGA, CTASplitNum and CTAOrder: two CTAs along each dim, dim 1 first.
    twins(
        "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], CTAsPerCGA = [2, 2], CTASplitNum = [2, 2], CTAOrder = [1, 0]}>",
        gluon,
        &[64, 128],
    );
    // Copies: four CTAs along dim 0, two of them holding distinct parts.
    twins(
        "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], CTAsPerCGA = [4, 1], CTASplitNum = [2, 1], CTAOrder = [1, 0]}>",
        "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[4, 8], warps_per_cta=[4, 1], order=[1, 0], cga_layout=[[1, 0], [0, 0]])",
        &[64, 128],
    );
    twins(
        "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, CGALayout = [[1, 0]]}>",
        "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, cga_layout=[[1, 0]])",
        &[128, 64],
    );
    // Accumulators over several CTAs, the older CTA parameters turned into a CGA layout.
    twins(
        "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], CTAsPerCGA = [2, 1], CTASplitNum = [2, 1], CTAOrder = [1, 0], instrShape = [16, 8]}>",
        "NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, 2], instr_shape=[16, 8], cga_layout=[[1, 0]])",
        &[64, 32],
    );
}

#[test]
fn aliases_defined_in_the_text_resolve() {
    let header = "#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>\n\
                  #mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [8, 1], instrShape = [16, 256, 16]}>\n\
                  #shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>\n";
    let mma_g =
        "NVMMADistributedLayout(version=[3, 0], warps_per_cta=[8, 1], instr_shape=[16, 256, 16])";
    // An alias named after the definitions.
    twins(&format!("{header}#mma"), mma_g, &[128, 256]);
    twins(
        &format!("{header}  #blocked  \n"),
        "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[4, 8], warps_per_cta=[4, 1], order=[1, 0])",
        &[16, 32],
    );
    // A layout written out whose parent is an alias.
    twins(
        &format!("{header}#ttg.dot_op<{{opIdx = 0, parent = #mma, kWidth = 2}}>"),
        &format!("DotOperandLayout(operand_index=0, parent={mma_g}, k_width=2)"),
        &[128, 64],
    );
    // Aliases of aliases: a slice of a dot operand of #mma.
    twins(
        &format!(
            "{header}#dot = #ttg.dot_op<{{opIdx = 0, parent = #mma, kWidth = 2}}>\n\
             #ttg.slice<{{dim = 1, parent = #dot}}>"
        ),
        &format!("SliceLayout(dim=1, parent=DotOperandLayout(operand_index=0, parent={mma_g}, k_width=2))"),
        &[128],
    );
    // One definition on its own is that layout.
    twins(
        "#shared = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
        "SwizzledSharedLayout(vec=8, per_phase=1, max_phase=8, order=[1, 0])",
        &[64, 64],
    );
    // Several definitions and no layout named: say which aliases there are.
    let (at, msg) = error_of(header);
    assert_eq!(at, header.len());
    assert!(msg.contains("#blocked, #mma, #shared"), "{msg}");
}

#[test]
fn unknown_aliases_are_named_where_used() {
    let text = "#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>\n#ttg.slice<{dim = 0, parent = #mma1}>";
    let (at, msg) = error_of(text);
    assert_eq!(at, text.find("#mma1").unwrap());
    assert!(msg.contains("`#mma1`") && msg.contains("#mma"), "{msg}");
    let (at, msg) = error_of("#blocked");
    assert_eq!(at, 0);
    assert!(msg.contains("unknown alias `#blocked`"), "{msg}");
    // An alias is known only after its definition, so no definition can refer to itself.
    let text = "#s = #ttg.slice<{dim = 0, parent = #s}>\n#s";
    let (at, _) = error_of(text);
    assert_eq!(at, text.find("#s}").unwrap());
}

#[test]
fn errors_point_at_the_offending_byte() {
    let cases: &[(&str, &str, &str)] = &[
        // An unknown parameter: at its name, listing the known ones.
        (
            "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0], vector = 4}>",
            "vector",
            "has no parameter `vector`",
        ),
        // A value the Gluon rules refuse: at the value.
        (
            "#ttg.blocked<{sizePerThread = [1, 0], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>",
            "0]",
            "positive",
        ),
        (
            "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 1]}>",
            "[1, 1]",
            "permutation",
        ),
        // A repeated parameter.
        (
            "#ttg.slice<{dim = 0, dim = 1, parent = #x}>",
            "dim = 1",
            "given twice",
        ),
        // Unbalanced brackets: at the one never closed, or at the wrong closer.
        (
            "#ttg.blocked<{sizePerThread = [1, 4]",
            "{",
            "never closed",
        ),
        (
            "#ttg.blocked<{sizePerThread = [1, 4]>",
            ">",
            "expected `}`",
        ),
        ("#ttg.blocked<{order = [0]}", "<", "never closed"),
        // Not a TTGIR dialect, or a kind axe does not read.
        ("#gpu.blocked<{}>", "gpu", "unknown dialect"),
        ("#ttg.sliced<{dim = 0}>", "sliced", "not a layout axe reads"),
        // Padded shared memory: the pairs' syntax, the linear component's two forms.
        (
            "#ttg.padded_shared<[32:4] {order = [0], shape = [64]}>",
            "4]",
            "`+`",
        ),
        (
            "#ttg.padded_shared<[32:+4] {order = [1, 1], shape = [64, 64]}>",
            "[1, 1]",
            "once",
        ),
        (
            "#ttg.padded_shared<[32:+4] {order = [0]}>",
            "{order",
            "both `order` and `shape`",
        ),
        (
            "#ttg.padded_shared<[32:+4] {offset = [[1], [1]], block = []}>",
            "{offset",
            "once",
        ),
        (
            "#ttg.padded_shared<[24:+4] {order = [0], shape = [64]}>",
            "24",
            "powers of two",
        ),
        // The older WMMA printing (warps per CTA, before `ctaLayout`): powers of two, not both forms.
        (
            "#ttg.amd_wmma<{version = 1, isTranspose = false, warpsPerCTA = [3, 2]}>",
            "[3, 2]",
            "powers of two",
        ),
        (
            "#ttg.amd_wmma<{version = 2, ctaLayout = {warp = [[0, 1]]}, warpsPerCTA = [2, 1]}>",
            "[2, 1]",
            "says again",
        ),
        (
            "#ttg.amd_wmma<{version = 2, warpsPerCTA = [2, 1, 1, 1]}>",
            "[2, 1, 1, 1]",
            "2 entries",
        ),
        (
            "#ttg.amd_wmma<{version = 2, ctaLayout = {warp = [[0, 1]], lanes = []}}>",
            "[]}",
            "ctaLayout has no `lanes`",
        ),
        // Parameters that belong together.
        (
            "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0], CTAsPerCGA = [2]}>",
            "[2]",
            "all three",
        ),
        (
            "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0], CTAsPerCGA = [2], CTASplitNum = [4], CTAOrder = [0]}>",
            "4], CTAO",
            "dividing",
        ),
        // Text after the layout.
        (
            "#ttg.slice<{dim = 0, parent = #x}> extra",
            "extra",
            "after the layout",
        ),
    ];
    for (text, at, want) in cases {
        let (offset, msg) = error_of(text);
        assert_eq!(offset, text.find(at).unwrap(), "{text}: {msg}");
        assert!(msg.contains(want), "{text}: {msg}");
    }
    // A missing parameter: named, at the attribute.
    let (at, msg) = error_of("#ttg.swizzled_shared<{vec = 8, perPhase = 1, order = [1, 0]}>");
    assert_eq!(at, 0);
    assert!(msg.contains("needs `maxPhase`"), "{msg}");
    // The caret line of the message points there too.
    let e = parse_gluon("#ttg.blocked<{sizePerThread = [1], oops = 1}>").unwrap_err();
    let shown = e.to_string();
    assert!(shown.contains("oops"), "{shown}");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!("#ttg.blocked<{{sizePerThread = {}", "[".repeat(100_000));
    let (_, msg) = error_of(&deep);
    assert!(msg.contains("nested deeper"), "{msg}");
    // A chain of parents longer than any real layout.
    let mut text = String::from(
        "#l0 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>\n",
    );
    for i in 1..40 {
        text.push_str(&format!(
            "#l{i} = #ttg.dot_op<{{opIdx = 0, parent = #l{}}}>\n",
            i - 1
        ));
    }
    text.push_str("#l39");
    let (_, msg) = error_of(&text);
    assert!(msg.contains("nested"), "{msg}");
}

#[test]
fn linear_layouts_keep_their_reader_with_aliases_too() {
    let attr = "#ttg.linear<{register = [[0, 1], [0, 2]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [[0, 4]], block = []}>";
    let direct = parse_linear(attr).unwrap();
    assert!(is_linear_text(attr));
    let aliased = format!("#linear = {attr}\n#linear");
    assert!(is_linear_text(&aliased));
    assert_eq!(parse_linear(&aliased).unwrap(), direct);
    let old = attr.replace("#ttg.", "#triton_gpu.");
    assert!(is_linear_text(&old));
    assert_eq!(parse_linear(&old).unwrap(), direct);
    // Gluon text and other TTGIR kinds are not linear text.
    assert!(!is_linear_text("#ttg.slice<{dim = 0, parent = #x}>"));
    assert!(!is_linear_text("BlockedLayout(size_per_thread=[1])"));
    // An error inside an aliased linear layout points into the whole text.
    let bad = "#linear = #ttg.linear<{register = [[0, -1]]}>\n#linear";
    match parse_linear(bad) {
        Err(TritonError::Parse(p)) => assert_eq!(p.offset, bad.find("-1").unwrap()),
        other => panic!("{other:?}"),
    }
    // As a Gluon layout it is refused with the reader to use; as a parent, with a reason.
    let (at, msg) = error_of(&aliased);
    assert_eq!(at, aliased.find("linear<").unwrap());
    assert!(msg.contains("parse_linear"), "{msg}");
    // As a parent it is refused with a reason.
    let (at, msg) = error_of(&format!("#ttg.slice<{{dim = 0, parent = {attr}}}>"));
    assert_eq!(at, "#ttg.slice<{dim = 0, parent = #ttg.".len());
    assert!(msg.contains("linear layout on its own"), "{msg}");
}
