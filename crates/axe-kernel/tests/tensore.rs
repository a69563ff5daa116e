#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Trainium TensorE dispatch (the paper's Appendix H): instruction shapes and loop nests on the
//! paper's layouts, the interpreter's results against an f64 reference, the reasons it declines, the
//! NKI-style emission, and the errors of kernels that do not suit trn1.

mod tensore_util;

use axe_kernel::tensore::{plan, Plan};
use axe_kernel::{
    emit_cuda, emit_nki, lower, DType, KernelBuilder, KernelError, Launch, Scope, Space, Target,
};
use tensore_util::{brute, check_numbers, kernel, l, plan_of, Case};

fn case(m: u64, n: u64, k: u64, a: &str, b: &str, c: &str) -> Case {
    Case {
        m,
        n,
        k,
        a: l(a),
        b: l(b),
        c: l(c),
    }
}

fn shape(p: &Plan) -> (u64, u64, u64) {
    (p.m.tile, p.n.tile, p.k.tile)
}

/// The loops of M, N and K: `(extent, logical weight)` each.
fn loops(p: &Plan) -> [Vec<(u64, u64)>; 3] {
    [p.m.loops.clone(), p.n.loops.clone(), p.k.loops.clone()]
}

/// Figure 2C's SBUF layout — a 256×512 tensor as two 128-partition tiles side by side in F,
/// `S[(2,128,512):(512@F,1@P,1@F)]` — as B[K=256, N=512]: K intersects to 128 partitions, N is one
/// 512-wide run, M fills the array's 128 columns: the largest instruction, 128×512×128, and a loop
/// of 2 over K.
#[test]
fn figure_2c_layout_as_the_moving_operand() {
    let c = case(
        128,
        512,
        256,
        "S[(128,2,128):(1@F,128@F,1@P)]",
        "S[(2,128,512):(512@F,1@P,1@F)]",
        "S[(128,512):(1@P,1@F)]",
    );
    let p = plan_of(&c).unwrap();
    assert_eq!(shape(&p), (128, 512, 128));
    assert_eq!(loops(&p), [vec![], vec![], vec![(2, 128)]]);
    assert_eq!(brute(&c), (128, 512, 128));
    let prog = check_numbers(&c, DType::BF16);
    let d = &prog.decisions[3];
    assert_eq!(d.variant, "gemm.tensore");
    assert!(d.why.contains("M×N×K = 128×512×128"), "{}", d.why);
    assert!(d.why.ends_with("; 1 loops"), "{}", d.why);
}

/// Appendix H's bounds: M ≤ 128 (PSUM partitions), N ≤ 512 (a PSUM bank of f32), K ≤ 128 (SBUF
/// partitions). A 256×1024×256 gemm laid out the same way takes 128×512×128 instructions in a
/// 2×2×2 loop nest.
#[test]
fn instruction_bounds_make_the_loop_nest() {
    let c = case(
        256,
        1024,
        256,
        "S[(256,2,128):(1@F,256@F,1@P)]",
        "S[(2,128,1024):(1024@F,1@P,1@F)]",
        "S[(2,128,1024):(1024@F,1@P,1@F)]",
    );
    let p = plan_of(&c).unwrap();
    assert_eq!(shape(&p), (128, 512, 128));
    assert_eq!(loops(&p), [vec![(2, 128)], vec![(2, 512)], vec![(2, 128)]]);
}

/// The largest legal extent need not be the bound: N = 768 on one free run takes 384 (the largest
/// divisor within 512), K = 96 partitions takes all 96, M = 96 too.
#[test]
fn largest_divisor_within_the_bound() {
    let c = case(
        96,
        768,
        96,
        "S[(96,96):(1@F,1@P)]",
        "S[(96,768):(1@P,1@F)]",
        "S[(96,768):(1@P,1@F)]",
    );
    let p = plan_of(&c).unwrap();
    assert_eq!(shape(&p), (96, 384, 96));
    assert_eq!(loops(&p), [vec![], vec![(2, 384)], vec![]]);
    assert_eq!(brute(&c), (96, 384, 96));
    check_numbers(&c, DType::F32);
}

/// K interleaved: `k = 2·p + t` (the partition is k's high part), in both A and B. The intersection
/// keeps the 64-partition iter; the tile takes every other k (step 2) and a loop of 2 covers the
/// rest. M is A's free axis with step 2 (a strided access pattern).
#[test]
fn interleaved_k_and_strided_m() {
    let c = case(
        32,
        16,
        128,
        "S[(32,64,2):(2@F,1@P,64@F)]",
        "S[(64,2,16):(1@P,16@F,1@F)]",
        "S[(32,16):(1@P,1@F)]",
    );
    let p = plan_of(&c).unwrap();
    assert_eq!(shape(&p), (32, 16, 64));
    assert_eq!(loops(&p), [vec![], vec![], vec![(2, 1)]]);
    assert_eq!(p.m.steps(), (2, 1));
    assert_eq!(brute(&c), (32, 16, 64));
    let prog = check_numbers(&c, DType::F16);
    let nki = emit_nki(&prog).unwrap();
    assert!(nki.contains("K: 2 tiles, 1 apart in K"), "{nki}");
    assert!(nki.contains(":2]"), "a strided free access: {nki}");
}

/// K permuted on the partitions — `k = 4a + b` on partition `a + 4b` in both A and B: the
/// intersection keeps both iters on `P` (the paper appends every iter both have on `P`), and as
/// they chain by stride (1, then 4) the instruction takes all 16 partitions, no K loop.
#[test]
fn permuted_partitions_chain_into_one_tile() {
    let c = case(
        8,
        8,
        16,
        "S[(8,4,4):(1@F,1@P,4@P)]",
        "S[(4,4,8):(1@P,4@P,1@F)]",
        "S[(8,8):(1@P,1@F)]",
    );
    let p = plan_of(&c).unwrap();
    assert_eq!(shape(&p), (8, 8, 16));
    assert_eq!(loops(&p), [vec![], vec![], vec![]]);
    assert_eq!(brute(&c), (8, 8, 16));
    check_numbers(&c, DType::BF16);
}

/// M split between C's partitions and its free axis: C `[M=256, N]` as two 128-row tiles in PSUM;
/// A's M is one free run of 256, so the intersection splits it at 128.
#[test]
fn m_split_by_the_psum_tiles() {
    let c = case(
        256,
        64,
        32,
        "S[(256,32):(1@F,1@P)]",
        "S[(32,64):(1@P,1@F)]",
        "S[(2,128,64):(64@F,1@P,1@F)]",
    );
    let p = plan_of(&c).unwrap();
    assert_eq!(shape(&p), (128, 64, 32));
    assert_eq!(loops(&p), [vec![(2, 128)], vec![], vec![]]);
    assert_eq!(brute(&c), (128, 64, 32));
    check_numbers(&c, DType::BF16);
}

fn declined(c: &Case) -> String {
    let err = plan_of(c).unwrap_err();
    let k = kernel(c, DType::BF16).unwrap();
    match lower(&k, Target::Trn1) {
        Err(KernelError::NoVariant { declined, .. }) => {
            assert_eq!(declined.len(), 1, "{declined:?}");
            assert_eq!(declined[0].0, "gemm.tensore");
            assert_eq!(declined[0].1, err);
        }
        other => panic!("expected no variant, got {other:?}"),
    }
    err
}

#[test]
fn declines_when_k_is_not_on_the_partitions_of_both() {
    let why = declined(&case(
        16,
        16,
        16,
        "S[(16,16):(1@F,1@P)]",
        "S[(16,16):(16@F,1@P)]",
        "S[(16,16):(1@P,1@F)]",
    ));
    assert!(
        why.starts_with("K is not on the partition axis (stride 1) of both A and B"),
        "{why}"
    );
    assert!(why.contains("B's is (16:16@F)"), "{why}");
}

#[test]
fn declines_k_on_every_other_partition() {
    let why = declined(&case(
        8,
        8,
        8,
        "S[(8,8):(1@F,2@P)]",
        "S[(8,8):(2@P,1@F)]",
        "S[(8,8):(1@P,1@F)]",
    ));
    assert!(
        why.starts_with("K is not on the partition axis (stride 1)"),
        "{why}"
    );
}

#[test]
fn declines_a_transposed_result() {
    // C with N on the partitions and M on the free axis: the array writes M to the partitions.
    let why = declined(&case(
        8,
        8,
        8,
        "S[(8,8):(1@F,1@P)]",
        "S[(8,8):(1@P,1@F)]",
        "S[(8,8):(1@F,1@P)]",
    ));
    assert!(
        why.starts_with(
            "M is not on the free axis of A (a positive stride) and the partition axis (stride 1) of C"
        ),
        "{why}"
    );
}

#[test]
fn declines_k_without_a_common_factorization() {
    // A: k = 2a + b (b on P); B: k = 3a + b (b on P): the partition runs of 2 and 3 never align.
    let why = declined(&case(
        4,
        4,
        6,
        "S[(4,3,2):(1@F,4@F,1@P)]",
        "S[(2,3,4):(4@F,1@P,1@F)]",
        "S[(4,4):(1@P,1@F)]",
    ));
    assert!(why.starts_with("K is not on the partition axis"), "{why}");
    assert!(why.ends_with("(they share no digit of its index)"), "{why}");
}

#[test]
fn declines_operands_outside_sbuf_and_psum() {
    let mut kb = KernelBuilder::new(
        "g",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )
    .unwrap();
    let ga = kb.buffer("a", Space::Global, DType::BF16, 64).unwrap();
    let sb = kb.buffer("b", Space::Sbuf, DType::BF16, 128 * 8).unwrap();
    let pc = kb.buffer("c", Space::Psum, DType::F32, 128 * 8).unwrap();
    let a = kb.tensor("a", ga, &[8, 8], l("S[(8,8):(8,1)]")).unwrap();
    let b = kb
        .tensor("b", sb, &[8, 8], l("S[(8,8):(1@P,1@F)]"))
        .unwrap();
    let c = kb
        .tensor("c", pc, &[8, 8], l("S[(8,8):(1@P,1@F)]"))
        .unwrap();
    let why = plan(&c, &a, &b).unwrap().unwrap_err();
    assert!(
        why.contains("A a is in global memory; TensorE reads A and B from SBUF"),
        "{why}"
    );
    let why = plan(&b, &a, &c).unwrap().unwrap_err();
    assert!(why.contains("global memory"), "{why}");
}

#[test]
fn shipped_trn1_gemm_matches_the_reference() {
    use axe_kernel::gemm_kernel::gemm_reference;
    for (m, n, k, d) in [
        (128u64, 512u64, 256u64, DType::BF16),
        (192, 640, 320, DType::F16),
        (5, 7, 3, DType::F32),
    ] {
        let g = axe_kernel::shipped::gemm_for(m, n, k, d, Target::Trn1).unwrap();
        let p = lower(&g.kernel, Target::Trn1).unwrap();
        let gemm = p
            .decisions
            .iter()
            .find(|x| x.op.starts_with("gemm"))
            .unwrap();
        assert_eq!(gemm.variant, "gemm.tensore");
        let mp = (1..=128).rev().find(|x| m % x == 0).unwrap();
        let kp = (1..=128).rev().find(|x| k % x == 0).unwrap();
        let np = (1..=512).rev().find(|x| n % x == 0).unwrap();
        assert!(
            gemm.why.contains(&format!("M×N×K = {mp}×{np}×{kp}")),
            "{}",
            gemm.why
        );
        let val = |i: u64, s: u64| ((i * 37 + s * 11) % 17) as f32 / 8.0 - 1.0;
        let a: Vec<f32> = (0..m * k).map(|i| val(i, 1)).collect();
        let b: Vec<f32> = (0..n * k).map(|i| val(i, 2)).collect(); // [N, K] row-major
        let enc = |x: &[f32]| -> Vec<u8> {
            x.iter()
                .flat_map(|&v| match d {
                    DType::F32 => v.to_le_bytes().to_vec(),
                    DType::F16 => half::f16::from_f32(v).to_le_bytes().to_vec(),
                    _ => half::bf16::from_f32(v).to_le_bytes().to_vec(),
                })
                .collect()
        };
        let out = axe_kernel::run(
            &p,
            vec![enc(&a), enc(&b), vec![0; (m * n * 4) as usize]],
            axe_kernel::RunLimits::default(),
        )
        .unwrap();
        let a64: Vec<f64> = a.iter().map(|&v| f64::from(v)).collect();
        let b64: Vec<f64> = b.iter().map(|&v| f64::from(v)).collect();
        let want = gemm_reference(m, n, k, &a64, &b64).unwrap();
        for (x, w) in want.iter().enumerate() {
            let g = f32::from_le_bytes(out[2][x * 4..x * 4 + 4].try_into().unwrap());
            // Values are multiples of 1/8 below 1 in magnitude: every partial sum is exact in f32.
            assert_eq!(f64::from(g), *w, "C[{x}] for {m}×{n}×{k}");
        }
    }
}

#[test]
fn nki_text_names_the_instruction_and_the_loop_nest() {
    let g = axe_kernel::shipped::gemm_for(256, 1024, 256, DType::BF16, Target::Trn1).unwrap();
    let p = lower(&g.kernel, Target::Trn1).unwrap();
    let nki = emit_nki(&p).unwrap();
    for want in [
        "@nki.jit\ndef gemm_trn1(a, b, c):",
        "a_sbuf = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)",
        "c_psum = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.psum)",
        "gemm #3 at kernel scope: gemm.tensore — instruction M×N×K = 128×512×128",
        "# M: 2 tiles, 128 apart in M",
        "# N: 2 tiles, 512 apart in N",
        "# K: 2 tiles, 128 apart in K",
        "+= nisa.nc_matmul(a_sbuf[0:128, ",
        "# 128x512x128 (MxNxK)",
        "copy #0 at kernel scope: copy.dma",
        "nisa.dma_copy(dst=a_sbuf[",
    ] {
        assert!(nki.contains(want), "missing {want:?} in\n{nki}");
    }
    // One instruction inside three loops.
    assert_eq!(nki.matches("nc_matmul").count(), 1);
    let e = emit_cuda(&p).unwrap_err().to_string();
    assert!(e.contains("trn1 program"), "{e}");
}

#[test]
fn trn1_kernels_must_suit_the_target() {
    // SBUF on a GPU target.
    let g = axe_kernel::shipped::gemm_for(8, 8, 8, DType::BF16, Target::Trn1).unwrap();
    let e = lower(&g.kernel, Target::Sm80).unwrap_err().to_string();
    assert!(
        e.contains("buffer a_sbuf is in SBUF memory, which sm_80 does not have"),
        "{e}"
    );
    // A GPU kernel on trn1: shared memory and registers do not exist there.
    let g = axe_kernel::shipped::gemm_for(128, 128, 64, DType::BF16, Target::Sm80).unwrap();
    let e = lower(&g.kernel, Target::Trn1).unwrap_err().to_string();
    assert!(e.contains("which trn1 does not have"), "{e}");
    // And emit_nki refuses GPU programs.
    let p = lower(&g.kernel, Target::Sm80).unwrap();
    assert!(emit_nki(&p)
        .unwrap_err()
        .to_string()
        .contains("for trn1 programs"));
    // PSUM holds 16 KiB a partition: C of 128×8192 f32 does not fit.
    let e = lower(
        &axe_kernel::shipped::gemm_for(128, 8192, 8, DType::BF16, Target::Trn1)
            .unwrap()
            .kernel,
        Target::Trn1,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("needs 32768 bytes in each PSUM partition; trn1 has 16384"),
        "{e}"
    );
}

#[test]
fn partitioned_buffers_and_tensors_are_checked() {
    let mut kb = KernelBuilder::new(
        "g",
        Launch {
            grid: 2,
            cluster: 1,
            threads: 32,
        },
    )
    .unwrap();
    let e = kb.buffer("x", Space::Sbuf, DType::F32, 100).unwrap_err();
    assert!(e.to_string().contains("a multiple of 128 is needed"), "{e}");
    let s = kb.buffer("s", Space::Sbuf, DType::F32, 128 * 4).unwrap();
    let e = kb
        .tensor("t", s, &[256], l("S[256:1@P]"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("reaches P 0..=255"), "{e}");
    let e = kb
        .tensor("t", s, &[8], l("S[8:1@F]"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("reaches F 0..=7"), "{e}");
    let e = kb
        .tensor("t", s, &[8], l("S[8:1]"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("has only P, F"), "{e}");
    let t = kb
        .tensor("t", s, &[128, 4], l("S[(128,4):(1@P,1@F)]"))
        .unwrap();
    let g = kb.buffer("g", Space::Global, DType::F32, 512).unwrap();
    let gt = kb
        .tensor("gt", g, &[128, 4], l("S[(128,4):(4,1)]"))
        .unwrap();
    kb.copy(Scope::kernel(), &t, &gt).unwrap();
    let e = lower(&kb.build().unwrap(), Target::Trn1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("one program on one NeuronCore"), "{e}");
}

#[test]
fn trn1_is_a_target_with_only_its_own_variants() {
    assert_eq!("trn1".parse::<Target>().unwrap(), Target::Trn1);
    let r = axe_kernel::Registry::standard();
    let gemm: Vec<&str> = r
        .for_op("gemm", Target::Trn1)
        .iter()
        .map(|v| v.name())
        .collect();
    assert_eq!(gemm, ["gemm.tensore"]);
    let copy: Vec<&str> = r
        .for_op("copy", Target::Trn1)
        .iter()
        .map(|v| v.name())
        .collect();
    assert_eq!(copy, ["copy.dma"]);
    assert!(r
        .for_op("gemm", Target::Sm80)
        .iter()
        .all(|v| v.name() != "gemm.tensore"));
}
