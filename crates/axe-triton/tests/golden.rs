//! Golden cases: Triton's own answers (kept as data from `scripts/triton-differential`), the Gluon
//! `BlockedLayout` of the issue over 32×16, dot operands and NVMMA shared memory, non-power-of-two
//! shapes, and the paper's Appendix G.

use axe_layout::Layout;
use axe_triton::{
    gluon::parse_gluon, parse_json, parse_linear, parse_ttg, LinearLayout, TritonError,
};

const BLOCKED: &str =
    "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])";

fn check_data(data: &str) -> usize {
    check_lines(data, (0, 1))
}

/// [`check_data`] of the lines `k`, `k + parts`, `k + 2·parts`, … of `data` (`(k, parts)`), so that
/// a long file can be checked by several tests side by side.
fn check_lines(data: &str, (k, parts): (usize, usize)) -> usize {
    let mut n = 0;
    let lines = data.lines().filter(|l| !l.trim().is_empty());
    for line in lines.skip(k).step_by(parts) {
        let mut parts = line.split('\t');
        let (text, shape, want) = (
            parts.next().expect("text"),
            parts.next().expect("shape"),
            parts.next().expect("json"),
        );
        let shape: Vec<u64> = shape.split(',').map(|s| s.parse().expect("size")).collect();
        let g = parse_gluon(text).expect("Triton's own text parses");
        let got = g.to_linear(&shape).expect("Triton laid it out");
        assert_eq!(
            got,
            parse_json(want).expect("expected data"),
            "{text} over {shape:?}"
        );
        // Where the Axe layout exists, the direct construction and the linear layout's agree (a padded
        // layout's Axe layout is its placement in padded memory, which its linear component is not).
        // A TTGIR attribute's line repeats its Gluon twin's layout: its linear layout is enough.
        let padded = matches!(g, axe_triton::gluon::GluonLayout::PaddedShared { .. });
        let skip = padded || text.starts_with("#ttg.");
        if skip {
            n += 1;
            continue;
        }
        if let (Ok(direct), Ok(via)) = (g.to_axe(&shape), got.to_axe()) {
            assert!(
                direct.equivalent(&via).expect("comparable"),
                "{text}: {direct} vs {via}"
            );
        }
        n += 1;
    }
    n
}

#[test]
fn gluon_layouts_match_triton_answers() {
    assert_eq!(check_data(include_str!("data/triton_gluon_named.tsv")), 6);
    // Dot operands (both operands, k_width 1 to 8, Ampere, Hopper and blocked parents) and NVMMA shared
    // layouts (swizzles 0, 32, 64, 128, transposed, FP4 padded, rank 3): `--named`.
    assert_eq!(
        check_data(include_str!("data/triton_gluon_mma_named.tsv")),
        24
    );
    // Random cases (`--cases 400 --seed 1 --golden`: every other line here, the rest in
    // `more_gluon_layouts_match_triton_answers`), over 100 of them dot operands; AMD accumulators
    // (multi-CTA and batched among them) and padded shared layouts in both the Gluon form and the
    // `#ttg.padded_shared` attribute Triton printed for it. The counts below are of the whole file.
    let all = GLUON_CASES;
    assert!(check_lines(all, (0, 2)) >= 250);
    let count = |prefix: &str, also: &str| {
        all.lines()
            .filter(|l| l.starts_with(prefix) && l.contains(also))
            .count()
    };
    assert!(count("AMDMFMALayout", "cga_layout=[[") >= 10);
    assert!(count("AMDWMMALayout", "rank=3") >= 10);
    assert!(count("AMDWMMALayout", "cga_layout=[[") >= 5);
    assert!(count("#ttg.padded_shared", "block = [[") >= 10);
    assert!(count("#ttg.padded_shared", "order =") >= 10);
    assert!(count("DotOperandLayout", "cga_layout=[[") >= 10);
    assert!(count("SwizzledSharedLayout", "cga_layout=[[") >= 10);
    assert!(count("NVMMADistributedLayout", "cga_layout=[[") >= 10);
    assert!(count("NVMMADistributedLayout", "instr_shape=[1, 16, 8]") >= 10);
    assert!(count("DistributedLinearLayout", "") >= 20);
    assert!(count("SharedLinearLayout", "") >= 20);
    assert!(count("DotOperandLayout", "parent=AMDMFMALayout") >= 50);
    assert!(count("DotOperandLayout", "parent=AMDWMMALayout") >= 15);
    // Operands of batched NVMMA dots (Ampere, Hopper) and of WMMA parents with register bases, a
    // batch dim or CTAs, with the TTGIR attribute Triton printed for each.
    assert!(count("DotOperandLayout", "instr_shape=[1, 16, 8]") >= 30);
    assert!(
        all.lines()
            .filter(|l| l.starts_with("DotOperandLayout") && l.contains("version=[3, 0]"))
            .filter(|l| l
                .split('\t')
                .nth(1)
                .is_some_and(|s| s.split(',').count() == 3))
            .count()
            >= 15
    );
    assert!(count("#ttg.dot_op", "#ttg.nvidia_mma<{versionMajor = 2") >= 30);
    assert!(count("DotOperandLayout", "reg_bases=[[") >= 15);
    assert!(count("DotOperandLayout", "rank=3), k_width") >= 10);
    assert!(count("#ttg.dot_op", "register = [[") >= 15);
    assert!(count("#ttg.dot_op", "amd_wmma") >= 40);
    assert!(
        count(
            "DotOperandLayout",
            "parent=AMDWMMALayout(version=3, transposed=True"
        ) >= 3
    );
    assert!(
        all.lines()
            .filter(|l| l.starts_with("DotOperandLayout"))
            .count()
            >= 50
    );
    assert!(
        all.lines()
            .filter(|l| l.starts_with("NVMMASharedLayout"))
            .count()
            >= 30
    );
}

/// Random Gluon cases and Triton's answers for them (`--cases 400 --seed 1 --golden`).
const GLUON_CASES: &str = include_str!("data/triton_gluon.tsv");

/// The other half of [`GLUON_CASES`]'s lines, beside `gluon_layouts_match_triton_answers`.
#[test]
fn more_gluon_layouts_match_triton_answers() {
    assert!(check_lines(GLUON_CASES, (1, 2)) >= 250);
}

#[test]
fn blocked_32x16_as_linear_and_axe_layouts() {
    let g = parse_gluon(BLOCKED).expect("parses");
    let ll = g.to_linear(&[32, 16]).expect("powers of two");
    assert_eq!(
        ll.to_json(),
        "{\"in\": {\"register\": [[0, 1], [0, 2]], \"lane\": [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]], \
         \"warp\": [[8, 0], [16, 0]], \"block\": []}, \"out\": {\"dim0\": 32, \"dim1\": 16}}"
    );
    assert_eq!(
        ll.to_ttg(),
        "#ttg.linear<{register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]], \
         warp = [[8, 0], [16, 0]], block = []}>"
    );
    assert!(ll.is_injective() && ll.is_surjective());
    let axe = ll.to_axe().expect("affine");
    // Row = (warp, lane / 4), column = (lane % 4, register): the lane digits merge into one iter.
    assert_eq!(axe.to_string(), "S[(4,32,4):(1@warp,1@lane,1@reg)]");
    assert_eq!(
        g.to_axe(&[32, 16]).expect("whole tiles").to_string(),
        axe.to_string()
    );
    // Element (9, 6): row 9 = warp 1, lane row 1; column 6 = lane column 1, register 2.
    let at = axe.apply_multi(&[9, 6], &[32, 16]).expect("in range");
    assert_eq!(
        at.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
        ["{lane: 5, reg: 2, warp: 1}"]
    );
    assert_eq!(ll.apply(&[2, 5, 1, 0]).expect("in range"), [9, 6]);
    // Back from the Axe layout: the same linear layout.
    let back = LinearLayout::from_axe(&axe, &[32, 16], &["register", "lane", "warp", "block"])
        .expect("powers");
    assert_eq!(back, ll);
}

#[test]
fn broadcast_and_slice() {
    let g = parse_gluon(BLOCKED).expect("parses");
    // 8 rows under a 32-row layout: warps hold copies.
    let axe = g
        .to_linear(&[8, 64])
        .expect("powers")
        .to_axe()
        .expect("affine");
    assert_eq!(
        axe.to_string(),
        "S[(8,4,4,4):(4@lane,4@reg,1@lane,1@reg)] + R[4:1@warp]"
    );
    let s = parse_gluon(&format!("SliceLayout(dim=1, parent={BLOCKED})")).expect("parses");
    let axe = s.to_axe(&[32]).expect("affine");
    assert_eq!(axe.to_string(), "S[(4,8):(1@warp,4@lane)] + R[4:1@lane]");
}

#[test]
fn non_power_of_two_shapes_triton_cannot_lay_out() {
    // 48×64 under a 16×32 tile: 3×2 tiles, the repeats in registers.
    let g = parse_gluon(
        "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[2, 2], order=[1, 0])",
    )
    .expect("parses");
    assert!(matches!(
        g.to_linear(&[48, 64]),
        Err(TritonError::NotPowerOfTwo { size: 48, .. })
    ));
    let axe = g.to_axe(&[48, 64]).expect("whole tiles");
    // Rows: 3 repeats (registers 8..), 2 warps, 8 lanes; columns: 2 repeats (registers 4..), 2 warps,
    // 4 lanes, 4 registers.
    assert_eq!(
        axe.to_string(),
        "S[(3,2,8,2,2,4,4):(8@reg,2@warp,4@lane,4@reg,1@warp,1@lane,1@reg)]"
    );
    // Every element has exactly one home, and 48·64 = 4 warps · 32 lanes · 24 registers.
    let mut homes = std::collections::BTreeSet::new();
    for x in 0..axe.size() {
        let c = axe.apply(x).expect("in range");
        assert_eq!(c.len(), 1);
        assert!(homes.insert(c[0].to_string()));
    }
    assert_eq!(homes.len(), 48 * 64);
    // A 48-row tensor under the 32-row layout is neither whole tiles nor a divisor of one.
    let g = parse_gluon(BLOCKED).expect("parses");
    assert!(matches!(g.to_axe(&[48, 64]), Err(TritonError::Gluon(_))));
}

#[test]
fn appendix_g_column_major_3x2_is_not_bit_linear() {
    // f(i, j) = i + 3j on a 3×2 tensor: f(1,0) ⊕ f(0,1) = 1 ⊕ 3 = 2, but f(1,1) = 4.
    let axe = Layout::column_major(&[3, 2]).expect("layout");
    let f = |i: u64, j: u64| {
        axe.apply_multi(&[i, j], &[3, 2]).expect("in range")[0].get(&axe_layout::Axis::memory())
    };
    assert_eq!((f(1, 0), f(0, 1), f(1, 1)), (1, 3, 4));
    assert_ne!(f(1, 0) ^ f(0, 1), f(1, 1));
    assert!(matches!(
        LinearLayout::from_axe(&axe, &[3, 2], &[]),
        Err(TritonError::NotPowerOfTwo { size: 3, .. })
    ));
    // With power-of-two sizes the column-major layout is linear: m = i + 4j on 4×2.
    let axe = Layout::column_major(&[4, 2]).expect("layout");
    let ll = LinearLayout::from_axe(&axe, &[4, 2], &[]).expect("linear");
    assert_eq!(
        ll.to_json(),
        "{\"in\": {\"m\": [[1, 0], [2, 0], [0, 1]]}, \"out\": {\"dim0\": 4, \"dim1\": 2}}"
    );
}

#[test]
fn xor_swizzle_is_not_affine() {
    // A shared-memory swizzle: offset bit 2 moves row 1 and column 1 at once.
    let ll = parse_ttg("#ttg.linear<{offset = [[0, 1], [0, 2], [1, 1], [2, 2]]}>").expect("parses");
    assert_eq!(
        ll.out_dims(),
        [("dim0".to_string(), 4), ("dim1".to_string(), 4)]
    );
    assert!(ll.is_injective() && ll.is_surjective());
    match ll.to_axe() {
        Err(TritonError::NotAffine(dims)) => assert_eq!(dims, ["offset"]),
        other => panic!("expected NotAffine, got {other:?}"),
    }
}

#[test]
fn algebra_examples() {
    let a = parse_linear(r#"{"in": {"register": [[0, 1], [0, 2]], "lane": [[1, 0]]}, "out": {"dim0": 2, "dim1": 4}}"#)
        .expect("parses");
    let inv = a.invert().expect("bijective");
    assert_eq!(inv.to_json(), "{\"in\": {\"dim0\": [[0, 1]], \"dim1\": [[1, 0], [2, 0]]}, \"out\": {\"register\": 4, \"lane\": 2}}");
    assert_eq!(
        a.compose(&inv).expect("fits").map().expect("small"),
        (0..8).map(|x| vec![x % 4, x / 4]).collect::<Vec<_>>()
    );
    // Broadcast lanes: not injective, so no inverse; the pseudoinverse picks lane 0.
    let b = parse_linear("#ttg.linear<{register = [[1]], lane = [[0], [2]]}>").expect("parses");
    assert!(matches!(b.invert(), Err(TritonError::NotInjective(_))));
    assert_eq!(
        b.pseudoinvert().expect("surjective").to_json(),
        "{\"in\": {\"dim0\": [[1, 0], [0, 2]]}, \"out\": {\"register\": 2, \"lane\": 4}}"
    );
    // Triton's broadcasting rule: warps both layouts broadcast the same way map to themselves.
    let r = parse_linear("#ttg.linear<{register = [[1], [2]], warp = [[0]]}>").expect("parses");
    let s = parse_linear("#ttg.linear<{offset = [[2], [1]], warp = [[0]]}>").expect("parses");
    assert_eq!(r.invert_and_compose(&s).expect("surjective").to_json(), "{\"in\": {\"register\": [[2, 0], [1, 0]], \"warp\": [[0, 1]]}, \"out\": {\"offset\": 4, \"warp\": 2}}");
}

#[test]
fn malformed_input_is_a_typed_error_with_an_offset() {
    let e = parse_json(r#"{"in": {"register": [[0, 1], [0, 9]]}, "out": {"dim0": 2, "dim1": 4}}"#)
        .expect_err("9 ≥ 4");
    assert!(
        e.to_string()
            .contains("base 1 of in-dim `register` does not fit")
            && e.to_string().contains("offset 29")
            && e.to_string().contains("the out-dims {dim0: 2, dim1: 4}"),
        "{e}"
    );
    let e = parse_json(r#"{"in": {"register": [[0, 1]]}, "out": {"dim0": 3, "dim1": 4}}"#)
        .expect_err("3");
    assert!(
        e.to_string().contains("not a power of two") && e.to_string().contains("offset 47"),
        "{e}"
    );
    let e = parse_ttg("#ttg.linear<{register = [[0, 1], [0]]}>").expect_err("ragged");
    assert!(e.to_string().contains("at offset"), "{e}");
    let e = parse_json(r#"{"in": {"register": [[0, -1]]}, "out": {"dim0": 2, "dim1": 4}}"#)
        .expect_err("negative");
    assert!(e.to_string().contains("offset 25"), "{e}");
    let e = parse_gluon("BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 1])")
        .expect_err("not a permutation");
    assert!(e.to_string().contains("permutation"), "{e}");
    let e =
        parse_gluon("PaddedSharedLayout(interval_padding_pairs=[[32, 4]], offset_bases=[[0, 1]])")
            .expect_err("no shape");
    assert!(e.to_string().contains("needs `shape`"), "{e}");
}

const AMPERE: &str =
    "NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, 2], instr_shape=[16, 8], cga_layout=[])";

#[test]
fn dot_operands_of_ampere_mma() {
    // Triton 3.9: operand A, k_width 2, over 64×32. K (dim 1) holds k_width registers, 4 lanes, one more
    // register; rows 8 lanes, a register, the warps along M; the warps along K hold copies.
    let a = parse_gluon(&format!(
        "DotOperandLayout(operand_index=0, parent={AMPERE}, k_width=2)"
    ))
    .expect("parses");
    let ll = a.to_linear(&[64, 32]).expect("powers of two");
    assert_eq!(
        ll.to_ttg(),
        "#ttg.linear<{register = [[0, 1], [8, 0], [0, 8], [0, 16], [32, 0]], lane = [[0, 2], [0, 4], [1, 0], \
         [2, 0], [4, 0]], warp = [[0, 0], [16, 0]], block = []}>"
    );
    assert_eq!(
        a.to_axe(&[64, 32]).expect("affine").to_string(),
        "S[(2,2,2,8,4,4,2):(16@reg,2@warp,2@reg,4@lane,4@reg,1@lane,1@reg)] + R[2:1@warp]"
    );
    // Operand B: K is dim 0, the warps along N (dim 1) split it and those along K hold copies.
    let b = parse_gluon(&format!("DotOperandLayout(1, {AMPERE}, 2)")).expect("positional");
    assert_eq!(
        b.to_linear(&[32, 64]).expect("powers of two").to_ttg(),
        "#ttg.linear<{register = [[1, 0], [8, 0], [16, 0], [0, 16], [0, 32]], lane = [[2, 0], [4, 0], [0, 1], \
         [0, 2], [0, 4]], warp = [[0, 8], [0, 0]], block = []}>"
    );
    // k_width 8 for A: 8 consecutive K elements per register group, lanes 8 apart.
    let a8 = parse_gluon(&format!("DotOperandLayout(0, {AMPERE}, 8)")).expect("parses");
    assert_eq!(
        a8.to_linear(&[16, 64]).expect("powers of two").to_ttg(),
        "#ttg.linear<{register = [[0, 1], [0, 2], [0, 4], [8, 0], [0, 32]], lane = [[0, 8], [0, 16], [1, 0], \
         [2, 0], [4, 0]], warp = [[0, 0], [0, 0]], block = []}>"
    );
    // A tensor smaller than B's 32×8 tile (k_width 4): the register past it becomes a copy (zero base),
    // as Triton keeps it.
    let b4 = parse_gluon(&format!("DotOperandLayout(1, {AMPERE}, 4)")).expect("parses");
    let ll = b4.to_linear(&[16, 8]).expect("powers of two");
    assert_eq!(ll.in_dims()[0].bases, [vec![1, 0], vec![2, 0], vec![0, 0]]);
    assert_eq!(
        b4.to_axe(&[16, 8]).expect("affine").to_string(),
        "S[(4,4,8):(1@lane,1@reg,4@lane)] + R[(2,4):(4@reg,1@warp)]"
    );
    // Hopper's wgmma has only A in registers; Triton refuses B, and so does the parser, at the index.
    let e = parse_gluon(
        "DotOperandLayout(1, NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16]), 2)",
    )
    .expect_err("Hopper B");
    assert!(e.to_string().contains("offset 17"), "{e}");
}

#[test]
fn nvmma_shared_layouts() {
    // Triton 3.9: 128-byte swizzle of 16-bit elements over 64×128: 64-element rows (one swizzle row) in
    // 8-row core matrices, row r's 8-element chunks XORed with r mod 8, then rows, then the second
    // 64 columns.
    let g = parse_gluon("NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, transposed=False, fp4_padded=False, cga_layout=[])")
        .expect("parses");
    let ll = g.to_linear(&[64, 128]).expect("powers of two");
    assert_eq!(
        ll.to_ttg(),
        "#ttg.linear<{offset = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 8], [2, 16], [4, 32], \
         [8, 0], [16, 0], [32, 0], [0, 64]], block = []}>"
    );
    assert!(ll.is_injective() && ll.is_surjective());
    match g.to_axe(&[64, 128]) {
        Err(TritonError::NotAffine(dims)) => assert_eq!(dims, ["offset"]),
        other => panic!("expected NotAffine, got {other:?}"),
    }
    // Transposed: dim 0 is contiguous. 64-byte swizzle of 16-bit elements: 32-element rows, chunks
    // XORed with (r / 2) mod 4.
    let t = parse_gluon("NVMMASharedLayout(64, 16, transposed=True)").expect("parses");
    assert_eq!(
        t.to_linear(&[64, 64]).expect("powers of two").to_ttg(),
        "#ttg.linear<{offset = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 1], [8, 2], [16, 4], [0, 8], \
         [0, 16], [0, 32], [32, 0]], block = []}>"
    );
    // Without a swizzle: a plain buffer, contiguous dim first, so an Axe layout.
    let p = parse_gluon("NVMMASharedLayout(0, 16, transposed=True)").expect("parses");
    assert_eq!(
        p.to_axe(&[4, 8]).expect("affine").to_string(),
        "S[(4,8):(1@offset,4@offset)]"
    );
    // FP4 padding: the 8 padding bytes of each 16 map onto the real ones (offset bit 3 is zero).
    let f = parse_gluon("NVMMASharedLayout(128, 8, fp4_padded=True)").expect("parses");
    let ll = f.to_linear(&[8, 64]).expect("powers of two");
    assert_eq!(ll.in_dims()[0].bases[3], [0, 0]);
    assert!(!ll.is_injective() && ll.is_surjective());
    // Shapes Triton aborts on are typed errors here.
    for shape in [[8u64, 32], [4, 64]] {
        assert!(matches!(g.to_linear(&shape), Err(TritonError::Gluon(_))));
    }
    // Malformed text: typed errors pointing at the argument.
    for (text, at) in [
        (
            "NVMMASharedLayout(swizzle_byte_width=48, element_bitwidth=16)",
            37,
        ),
        ("NVMMASharedLayout(128, 16, transposed=Maybe)", 38),
        ("NVMMASharedLayout(64, 16, 2, False, True)", 36),
        ("NVMMASharedLayout(128, 12)", 23),
        ("NVMMASharedLayout(128, 16, rank=1)", 0),
    ] {
        let e = parse_gluon(text).expect_err(text);
        assert!(
            e.to_string().contains(&format!("offset {at}")),
            "{text}: {e}"
        );
    }
}

#[test]
fn nvmma_ampere_accumulator() {
    // Triton 3.9 answer for this layout over 64×32 (see scripts/triton-differential).
    let g = parse_gluon("NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, 2], instr_shape=[16, 8], cga_layout=[])")
        .expect("parses");
    let ll = g.to_linear(&[64, 32]).expect("powers of two");
    assert_eq!(
        ll.to_json(),
        "{\"in\": {\"register\": [[0, 1], [8, 0], [0, 16], [32, 0]], \"lane\": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], \
         \"warp\": [[0, 8], [16, 0]], \"block\": []}, \"out\": {\"dim0\": 64, \"dim1\": 32}}"
    );
    let axe = g.to_axe(&[64, 32]).expect("affine");
    // Rows: register bit 3, warp bit 1, register bit 1, lane bits 2..4; columns: register bit 2, warp bit
    // 0, lane bits 0..1, register bit 0.
    assert_eq!(
        axe.to_string(),
        "S[(2,2,2,8,2,2,4,2):(8@reg,2@warp,2@reg,4@lane,4@reg,1@warp,1@lane,1@reg)]"
    );
}

#[test]
fn swizzled_shared_layouts() {
    // Triton 3.9: offset bases [[0,1],[0,2],[0,4],[0,8],[1,0],[2,2],[4,4],[8,0]].
    let g = parse_gluon(
        "SwizzledSharedLayout(vec=2, per_phase=2, max_phase=4, order=[1, 0], cga_layout=[])",
    )
    .expect("parses");
    let ll = g.to_linear(&[16, 16]).expect("powers of two");
    assert_eq!(
        ll.to_ttg(),
        "#ttg.linear<{offset = [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 2], [4, 4], [8, 0]], block = []}>"
    );
    // Row 2 starts its columns XORed with 2: (2, 2) sits at offset 32, (2, 0) at offset 34.
    let inv = ll.invert().expect("bijective");
    assert_eq!(inv.apply(&[2, 2]).expect("in range"), [32, 0]);
    assert_eq!(inv.apply(&[2, 0]).expect("in range"), [34, 0]);
    match g.to_axe(&[16, 16]) {
        Err(TritonError::NotAffine(dims)) => assert_eq!(dims, ["offset"]),
        other => panic!("expected NotAffine, got {other:?}"),
    }
    // Without a swizzle it is a plain column-major buffer.
    let g = parse_gluon("SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[0, 1])")
        .expect("parses");
    assert_eq!(
        g.to_axe(&[4, 8]).expect("affine").to_string(),
        "S[(4,8):(1@offset,4@offset)]"
    );
}

#[test]
fn hardware_map_of_an_axe_layout_is_tritons_map_where_triton_has_one() {
    let dims = ["register", "lane", "warp", "block"];
    let mut compared = 0;
    for (gluon, shape) in [
        (BLOCKED, [32u64, 16]),
        (BLOCKED, [8, 8]),
        (
            "BlockedLayout(size_per_thread=[2, 1], threads_per_warp=[4, 8], warps_per_cta=[1, 4], order=[0, 1])",
            [64, 64],
        ),
    ] {
        let g = parse_gluon(gluon).expect("parses");
        let ll = g.to_linear(&shape).expect("powers of two");
        let Ok(axe) = g.to_axe(&shape) else { continue };
        let hw = axe_triton::hardware_map(&axe, &shape, &dims).expect("a map");
        assert_eq!(hw.map, ll.map().expect("small"), "{gluon} over {shape:?}");
        compared += 1;
    }
    assert!(compared >= 2, "only {compared} layouts compared");
    // 48×64, which Triton cannot lay out: every one of the 4·32·24 inputs holds one distinct element.
    let g = parse_gluon(
        "BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[2, 2], order=[1, 0])",
    )
    .expect("parses");
    let axe = g.to_axe(&[48, 64]).expect("whole tiles");
    let hw = axe_triton::hardware_map(&axe, &[48, 64], &dims).expect("a map");
    let sizes: Vec<u64> = hw.in_dims.iter().map(|d| d.1).collect();
    assert_eq!(sizes, [24, 32, 4, 1]);
    let distinct: std::collections::BTreeSet<_> = hw.map.iter().collect();
    assert_eq!(distinct.len(), 48 * 64);
    // Input 0 (register 0, lane 0, warp 0) holds (0, 0); register 1 holds the next column.
    assert_eq!(hw.map[0], [0, 0]);
    assert_eq!(hw.map[1], [0, 1]);
    // An axis outside the in-dims is refused, with its name.
    let odd: axe_layout::Layout = "S[4:1@tid]".parse().expect("layout");
    let e = axe_triton::hardware_map(&odd, &[4], &dims).unwrap_err();
    assert!(e.to_string().contains("tid"), "{e}");
}

/// Multi-CTA layouts, against the bases Triton 3.9's `GluonOpBuilder.to_linear_layout` gives for them.
#[test]
fn multi_cta_layouts_follow_triton() {
    let blocked = |cga: &str| {
        axe_triton::gluon::parse_gluon(&format!(
            "BlockedLayout(size_per_thread=[1, 1], threads_per_warp=[4, 8], warps_per_cta=[2, 2], order=[1, 0], cga_layout={cga})"
        ))
    };
    let lanes = "[[0, 1], [0, 2], [0, 4], [1, 0], [2, 0]]";
    for (cga, shape, want) in [
        ("[[1, 0]]", [16u64, 16], format!(r#"{{"in": {{"register": [], "lane": {lanes}, "warp": [[0, 8], [4, 0]], "block": [[8, 0]]}}, "out": {{"dim0": 16, "dim1": 16}}}}"#)),
        ("[[1, 0]]", [64, 16], format!(r#"{{"in": {{"register": [[8, 0], [16, 0]], "lane": {lanes}, "warp": [[0, 8], [4, 0]], "block": [[32, 0]]}}, "out": {{"dim0": 64, "dim1": 16}}}}"#)),
        ("[[0, 1], [1, 0]]", [64, 64], format!(r#"{{"in": {{"register": [[0, 16], [8, 0], [16, 0]], "lane": {lanes}, "warp": [[0, 8], [4, 0]], "block": [[0, 32], [32, 0]]}}, "out": {{"dim0": 64, "dim1": 64}}}}"#)),
        ("[[0, 0]]", [8, 16], format!(r#"{{"in": {{"register": [], "lane": {lanes}, "warp": [[0, 8], [4, 0]], "block": [[0, 0]]}}, "out": {{"dim0": 8, "dim1": 16}}}}"#)),
        ("[[1, 0]]", [4, 16], r#"{"in": {"register": [], "lane": [[0, 1], [0, 2], [0, 4], [1, 0], [0, 0]], "warp": [[0, 8], [0, 0]], "block": [[2, 0]]}, "out": {"dim0": 4, "dim1": 16}}"#.to_string()),
        ("[[2, 0], [1, 0]]", [64, 64], format!(r#"{{"in": {{"register": [[0, 16], [0, 32], [8, 0]], "lane": {lanes}, "warp": [[0, 8], [4, 0]], "block": [[32, 0], [16, 0]]}}, "out": {{"dim0": 64, "dim1": 64}}}}"#)),
    ] {
        let ll = blocked(cga).expect("valid").to_linear(&shape).expect("powers of two");
        assert_eq!(ll.to_json(), want, "cga_layout={cga} over {shape:?}");
    }
    // Not a permutation of CTA bits: Triton rejects it, and so does axe.
    let e = blocked("[[1, 0], [1, 0]]")
        .expect_err("two CTA bits on one position")
        .to_string();
    assert!(e.contains("cga_layout along dim 0"), "{e}");
    assert!(blocked("[[1, 1]]").is_err());
    assert!(blocked("[[3, 0]]").is_err());
    assert!(blocked("[[1]]").is_err());
    let shared = axe_triton::gluon::parse_gluon(
        "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, transposed=False, fp4_padded=False, cga_layout=[[0, 1]])",
    )
    .expect("valid");
    assert_eq!(
        shared.to_linear(&[64, 128]).expect("fits").to_json(),
        r#"{"in": {"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 8], [2, 16], [4, 32], [8, 0], [16, 0], [32, 0]], "block": [[0, 64]]}, "out": {"dim0": 64, "dim1": 128}}"#
    );
    // Two CTAs along the rows: an Axe layout over reg/lane/warp/block.
    let ll = blocked("[[1, 0]]")
        .expect("valid")
        .to_linear(&[16, 16])
        .expect("fits");
    assert_eq!(
        ll.to_axe().expect("affine").to_string(),
        "S[(2,2,4,2,8):(1@block,2@warp,8@lane,1@warp,1@lane)]"
    );
}

/// AMD MFMA accumulators, against the bases Triton 3.9 gives for them.
#[test]
fn amd_mfma_follows_triton() {
    let mfma = |args: &str| {
        axe_triton::gluon::parse_gluon(&format!(
            "AMDMFMALayout({args}, element_bitwidth=32, tiles_per_warp=[1, 1], cga_layout=[])"
        ))
        .expect("valid")
    };
    for (args, shape, want) in [
        (
            "version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[1, 1]",
            [32u64, 32],
            r#"{"in": {"register": [[1, 0], [2, 0], [8, 0], [16, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], "warp": [], "block": []}, "out": {"dim0": 32, "dim1": 32}}"#,
        ),
        (
            "version=3, instr_shape=[32, 32, 8], transposed=True, warps_per_cta=[1, 1]",
            [32, 32],
            r#"{"in": {"register": [[0, 1], [0, 2], [0, 8], [0, 16]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], "warp": [], "block": []}, "out": {"dim0": 32, "dim1": 32}}"#,
        ),
        (
            "version=3, instr_shape=[16, 16, 16], transposed=False, warps_per_cta=[2, 2]",
            [64, 64],
            r#"{"in": {"register": [[1, 0], [2, 0], [0, 32], [32, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [4, 0], [8, 0]], "warp": [[0, 16], [16, 0]], "block": []}, "out": {"dim0": 64, "dim1": 64}}"#,
        ),
        (
            "version=4, instr_shape=[32, 32, 16], transposed=False, warps_per_cta=[2, 1]",
            [64, 32],
            r#"{"in": {"register": [[1, 0], [2, 0], [8, 0], [16, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], "warp": [[32, 0]], "block": []}, "out": {"dim0": 64, "dim1": 32}}"#,
        ),
        (
            "version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[1, 1]",
            [8, 8],
            r#"{"in": {"register": [[1, 0], [2, 0], [0, 0], [0, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 0], [0, 0], [4, 0]], "warp": [], "block": []}, "out": {"dim0": 8, "dim1": 8}}"#,
        ),
    ] {
        let got = mfma(args)
            .to_linear(&shape)
            .expect("powers of two")
            .to_json();
        assert_eq!(got, want, "{args} over {shape:?}");
    }
    // 64-bit elements, several tiles per warp, 64×4 and 4×64 tiles, read off Triton 3.9's
    // construction: `height` registers along M (1 for 64-bit), lanes N then M, registers completing the
    // tile, then tiles and warps along N, the rest of N, tiles and warps along M.
    let any = |text: &str, shape: &[u64]| {
        axe_triton::gluon::parse_gluon(text)
            .expect("valid")
            .to_linear(shape)
            .expect("powers of two")
            .to_json()
    };
    for (text, shape, want) in [
        (
            "AMDMFMALayout(version=3, instr_shape=[16, 16, 4], transposed=False, warps_per_cta=[1, 1], element_bitwidth=64)",
            [16u64, 16],
            r#"{"in": {"register": [[4, 0], [8, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0]], "warp": [], "block": []}, "out": {"dim0": 16, "dim1": 16}}"#,
        ),
        (
            "AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[1, 2], tiles_per_warp=[2, 2])",
            [64, 128],
            r#"{"in": {"register": [[1, 0], [2, 0], [8, 0], [16, 0], [0, 32], [32, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], "warp": [[0, 64]], "block": []}, "out": {"dim0": 64, "dim1": 128}}"#,
        ),
        (
            "AMDMFMALayout(version=3, instr_shape=[64, 4, 4], transposed=True, warps_per_cta=[1, 1])",
            [64, 4],
            r#"{"in": {"register": [[0, 1], [0, 2]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [32, 0]], "warp": [], "block": []}, "out": {"dim0": 64, "dim1": 4}}"#,
        ),
    ] {
        assert_eq!(any(text, &shape), want, "{text} over {shape:?}");
    }
    // What is not covered is refused, not guessed.
    for bad in [
        "AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[1, 1], element_bitwidth=16)",
        "AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[1, 1], tiles_per_warp=[3, 1])",
        "AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[1, 1], cga_layout=[[1, 1]])",
        // Triton 3.9's verifier has no 4×4 tile: "invalid (mDim, nDim) combination".
        "AMDMFMALayout(version=3, instr_shape=[4, 4, 4], transposed=False, warps_per_cta=[1, 1])",
        "AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[1, 1, 1, 1])",
        "AMDMFMALayout(version=5, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[1, 1])",
        "AMDMFMALayout(version=3, instr_shape=[64, 4, 4], transposed=False, warps_per_cta=[1, 1])",
        "AMDMFMALayout(version=3, instr_shape=[8, 8, 4], transposed=False, warps_per_cta=[1, 1])",
    ] {
        assert!(axe_triton::gluon::parse_gluon(bad).is_err(), "{bad}");
    }
}

/// AMD WMMA accumulators, against the bases Triton 3.9 gives for them.
#[test]
fn amd_wmma_follows_triton() {
    let wmma = |args: &str| {
        axe_triton::gluon::parse_gluon(&format!(
            "AMDWMMALayout({args}, reg_bases=[], instr_shape=[16, 16, 16], cga_layout=[], rank=2)"
        ))
        .expect("valid")
    };
    for (args, shape, want) in [
        (
            "version=1, transposed=False, warp_bases=[[1, 0]]",
            [32u64, 16],
            r#"{"in": {"register": [[2, 0], [4, 0], [8, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]], "warp": [[16, 0]], "block": []}, "out": {"dim0": 32, "dim1": 16}}"#,
        ),
        (
            "version=2, transposed=True, warp_bases=[[1, 0]]",
            [32, 16],
            r#"{"in": {"register": [[0, 1], [0, 2], [0, 4]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 8]], "warp": [[16, 0]], "block": []}, "out": {"dim0": 32, "dim1": 16}}"#,
        ),
        (
            "version=2, transposed=False, warp_bases=[[0, 1], [1, 0]]",
            [64, 64],
            r#"{"in": {"register": [[1, 0], [2, 0], [4, 0], [0, 32], [32, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]], "warp": [[0, 16], [16, 0]], "block": []}, "out": {"dim0": 64, "dim1": 64}}"#,
        ),
        (
            "version=1, transposed=True, warp_bases=[[0, 1]]",
            [16, 64],
            r#"{"in": {"register": [[0, 2], [0, 4], [0, 8], [0, 32]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]], "warp": [[0, 16]], "block": []}, "out": {"dim0": 16, "dim1": 64}}"#,
        ),
        (
            "version=2, transposed=False, warp_bases=[]",
            [8, 8],
            r#"{"in": {"register": [[1, 0], [2, 0], [4, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 0], [0, 0]], "warp": [], "block": []}, "out": {"dim0": 8, "dim1": 8}}"#,
        ),
    ] {
        let got = wmma(args)
            .to_linear(&shape)
            .expect("powers of two")
            .to_json();
        assert_eq!(got, want, "{args} over {shape:?}");
    }
    // Version 3, 32×16 tiles and extra register bases, as Triton 3.9 answers them: the tile, then the
    // register and warp bases in tiles, then the fitting.
    let any = |text: &str, shape: &[u64]| {
        axe_triton::gluon::parse_gluon(text)
            .expect("valid")
            .to_linear(shape)
            .expect("powers of two")
            .to_json()
    };
    for (text, shape, want) in [
        (
            "AMDWMMALayout(version=3, transposed=False, warp_bases=[], reg_bases=[], instr_shape=[16, 16, 32])",
            [16u64, 16],
            r#"{"in": {"register": [[1, 0], [2, 0], [4, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]], "warp": [], "block": []}, "out": {"dim0": 16, "dim1": 16}}"#,
        ),
        (
            "AMDWMMALayout(version=3, transposed=False, warp_bases=[[0, 1]], reg_bases=[[1, 0]], instr_shape=[32, 16, 64])",
            [64, 32],
            r#"{"in": {"register": [[1, 0], [2, 0], [4, 0], [16, 0], [32, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]], "warp": [[0, 16]], "block": []}, "out": {"dim0": 64, "dim1": 32}}"#,
        ),
        (
            "AMDWMMALayout(version=3, transposed=True, warp_bases=[[0, 1], [1, 0]], reg_bases=[[2, 0]], instr_shape=[16, 16, 32])",
            [64, 32],
            r#"{"in": {"register": [[0, 1], [0, 2], [0, 4], [32, 0]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 8]], "warp": [[0, 16], [16, 0]], "block": []}, "out": {"dim0": 64, "dim1": 32}}"#,
        ),
    ] {
        assert_eq!(any(text, &shape), want, "{text} over {shape:?}");
    }
    // The last one holds each element of 64×32 once.
    let ll = axe_triton::gluon::parse_gluon(
        "AMDWMMALayout(version=3, transposed=True, warp_bases=[[0, 1], [1, 0]], reg_bases=[[2, 0]], instr_shape=[16, 16, 32])",
    )
    .expect("valid")
    .to_linear(&[64, 32])
    .expect("fits");
    assert!(ll.is_injective() && ll.is_surjective());
    // Triton 3.9 refuses register and warp bases that do not reach every tile of their extent ((2, 1)
    // alone reaches 2 of 4×2 tiles) and, once fitted to the tensor, are not a permutation matrix (a base
    // moving two dims, the same tile twice); over a tensor small enough that the repeat falls outside it,
    // the repeat is a copy and Triton answers.
    let refused = |text: &str, shape: &[u64]| {
        let g = axe_triton::gluon::parse_gluon(text).expect("valid");
        assert!(g.to_linear(shape).is_err(), "{text} over {shape:?}");
    };
    refused(
        "AMDWMMALayout(version=3, transposed=False, warp_bases=[[2, 1]], instr_shape=[16, 16, 32])",
        &[64, 64],
    );
    refused(
        "AMDWMMALayout(version=3, transposed=True, warp_bases=[[2, 1], [1, 0]], reg_bases=[[2, 0]], instr_shape=[16, 16, 32])",
        &[64, 32],
    );
    refused(
        "AMDWMMALayout(version=3, transposed=False, warp_bases=[[0, 1]], reg_bases=[[1, 0], [0, 1]], instr_shape=[16, 16, 32])",
        &[64, 64],
    );
    assert_eq!(
        any(
            "AMDWMMALayout(version=1, transposed=True, warp_bases=[[1, 0], [0, 1]], reg_bases=[[1, 0]])",
            &[2, 16]
        ),
        r#"{"in": {"register": [[0, 2], [0, 4], [0, 8], [0, 0]], "lane": [[1, 0], [0, 0], [0, 0], [0, 0], [0, 1]], "warp": [[0, 0], [0, 0]], "block": []}, "out": {"dim0": 2, "dim1": 16}}"#
    );
    for bad in [
        "AMDWMMALayout(version=4, transposed=False, warp_bases=[[1, 0]])",
        "AMDWMMALayout(version=1, transposed=False, warp_bases=[[1, 0]], instr_shape=[32, 16, 16])",
        "AMDWMMALayout(version=2, transposed=False, warp_bases=[[1, 0]], instr_shape=[16, 32, 16])",
        "AMDWMMALayout(version=2, transposed=False, warp_bases=[[1, 0, 0]])",
        "AMDWMMALayout(version=2, transposed=False, warp_bases=[[1, 0]], rank=3)",
        "AMDWMMALayout(version=2, transposed=False, warp_bases=[[1, 0]], instr_shape=[32, 16, 16])",
        "AMDWMMALayout(version=3, transposed=False, warp_bases=[[1, 0]], instr_shape=[16, 16, 16])",
        "AMDWMMALayout(version=1, transposed=False, warp_bases=[[1, 0]], instr_shape=[16, 16, 32])",
        "AMDWMMALayout(version=2, transposed=False, warp_bases=[[1, 0]], cga_layout=[[1, 1]])",
        "AMDWMMALayout(version=2, transposed=False, warp_bases=[[1, 0]], rank=4)",
    ] {
        assert!(axe_triton::gluon::parse_gluon(bad).is_err(), "{bad}");
    }
}
