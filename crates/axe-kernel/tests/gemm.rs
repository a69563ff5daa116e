#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `gemm`: gemm.fma and gemm.mma_sync on the interpreter against brute force, the m16n8k16 fragment
//! layouts against the PTX tables, and the predicates that accept exactly the fragments.

mod numbers;
use axe_kernel::gemm::{atom, fragment, Operand};
use axe_kernel::mma::fragment_tiles;
use axe_kernel::{
    extent_on, lower, run, DType, KernelBuilder, KernelError, Launch, Program, RunLimits, Scope,
    Space, Target,
};
use axe_layout::{Axis, Coord, Iter, Layout};
use numbers::{decode_f32, encode, values};
use proptest::prelude::*;

fn ax(n: &str) -> Axis {
    Axis::new(n).unwrap()
}

fn it(e: u64, s: i64, a: &str) -> Iter {
    Iter::new(e, s, ax(a)).unwrap()
}

/// Checks `got` against `c0 + a·b` computed in f64: within the f32 accumulation bound
/// `(K + 1)·2⁻²⁴·(|c0| + Σ|a||b|)` per element.
fn check(got: &[f32], c0: &[f32], a: &[f32], b: &[f32], (m, n, k): (usize, usize, usize)) {
    for i in 0..m {
        for j in 0..n {
            let (mut s, mut mag) = (f64::from(c0[i * n + j]), f64::from(c0[i * n + j]).abs());
            for kk in 0..k {
                let p = f64::from(a[i * k + kk]) * f64::from(b[kk * n + j]);
                s += p;
                mag += p.abs();
            }
            let tol = (k as f64 + 1.0) * 2f64.powi(-24) * mag + 1e-30;
            let g = f64::from(got[i * n + j]);
            assert!(
                (g - s).abs() <= tol,
                "C[{i}, {j}] = {g}, the reference is {s} (tolerance {tol})"
            );
        }
    }
}

fn reg_elems(l: &Layout) -> u64 {
    (extent_on(l, &ax("reg")).unwrap().1 + 1) as u64
}

/// A kernel of one CTA of `threads` threads: loads C, A, B into registers with the given layouts, runs
/// `gemm` at `scope`, stores C.
fn gemm_kernel(
    (m, n, k): (u64, u64, u64),
    d: DType,
    (la, lb, lc): (&Layout, &Layout, &Layout),
    scope: Scope,
    threads: u32,
) -> axe_kernel::Kernel {
    let mut kb = KernelBuilder::new(
        "g",
        Launch {
            grid: 1,
            cluster: 1,
            threads,
        },
    )
    .unwrap();
    let ga = kb.buffer("ga", Space::Global, d, m * k).unwrap();
    let gb = kb.buffer("gb", Space::Global, d, k * n).unwrap();
    let gc = kb.buffer("gc", Space::Global, DType::F32, m * n).unwrap();
    let ra = kb.buffer("ra", Space::Registers, d, reg_elems(la)).unwrap();
    let rb = kb.buffer("rb", Space::Registers, d, reg_elems(lb)).unwrap();
    let rc = kb
        .buffer("rc", Space::Registers, DType::F32, reg_elems(lc))
        .unwrap();
    let t = |kb: &KernelBuilder, name, buf, sh: [u64; 2], l: &Layout| {
        kb.tensor(name, buf, &sh, l.clone()).unwrap()
    };
    let (tga, tgb, tgc) = (
        t(&kb, "A_g", ga, [m, k], &Layout::row_major(&[m, k]).unwrap()),
        t(&kb, "B_g", gb, [k, n], &Layout::row_major(&[k, n]).unwrap()),
        t(&kb, "C_g", gc, [m, n], &Layout::row_major(&[m, n]).unwrap()),
    );
    let (tra, trb, trc) = (
        t(&kb, "A", ra, [m, k], la),
        t(&kb, "B", rb, [k, n], lb),
        t(&kb, "C", rc, [m, n], lc),
    );
    let copy_scope = if scope.level == axe_kernel::Level::Thread {
        Scope::warp()
    } else {
        scope.clone()
    };
    kb.copy(copy_scope.clone(), &tra, &tga).unwrap();
    kb.copy(copy_scope.clone(), &trb, &tgb).unwrap();
    kb.copy(copy_scope.clone(), &trc, &tgc).unwrap();
    kb.gemm(scope, &trc, &tra, &trb).unwrap();
    // C's replicas load C while its first replica stores the product: without the barrier a replica
    // may load the stored product instead (a race the interpreter reports).
    kb.barrier();
    kb.copy(copy_scope, &tgc, &trc).unwrap();
    kb.build().unwrap()
}

/// Runs `p` on random A, B, C; checks C against brute force.
fn run_and_check(p: &Program, (m, n, k): (u64, u64, u64), d: DType, seed: u64) {
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let a = values(m * k, seed, d);
    let b = values(k * n, seed + 1, d);
    let c0 = values(m * n, seed + 2, DType::F32);
    let out = run(
        p,
        vec![encode(&a, d), encode(&b, d), encode(&c0, DType::F32)],
        RunLimits::default(),
    )
    .unwrap();
    check(&decode_f32(&out[2]), &c0, &a, &b, (m, n, k));
}

/// The `op` fragment tiled `[outer]` times over `reg` (tiles row-major, or column-major when `cols`).
fn tiled(op: Operand, outer: [u64; 2], cols: bool) -> Layout {
    let f = atom(op).unwrap();
    let r = op.regs();
    let strides = if cols {
        [1, outer[0] as i64]
    } else {
        [outer[1] as i64, 1]
    };
    let o = Layout::strided(&outer, &strides, &[ax("reg"), ax("reg")]).unwrap();
    let (t, _) = f.tile(&o, &op.shape(), &outer).unwrap();
    let _ = r;
    t
}

#[test]
fn the_fragment_layouts_are_the_ptx_tables() {
    // PTX ISA, mma.m16n8k16 with .f16/.bf16: groupID = lane / 4, threadID_in_group = lane % 4.
    let row_col = |op: Operand, lane: i64, i: i64| -> (i64, i64) {
        let (g, t) = (lane / 4, lane % 4);
        match op {
            Operand::A => (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)),
            Operand::B => (2 * t + (i & 1) + 8 * (i >> 1), g),
            Operand::C => (g + 8 * (i >> 1), 2 * t + (i & 1)),
        }
    };
    for op in [Operand::A, Operand::B, Operand::C] {
        let f = fragment(op).unwrap();
        let cols = op.shape()[1] as i64;
        assert_eq!(f.len() as i64, 32 * op.regs());
        let mut seen = std::collections::HashSet::new();
        for (x, reg, lane) in f {
            let (r, c) = row_col(op, lane, reg);
            assert_eq!(
                (x as i64 / cols, x as i64 % cols),
                (r, c),
                "{op:?} lane {lane} reg {reg}"
            );
            assert!(seen.insert((lane, reg)));
        }
    }
    // Lane 4 holds row 1 of A (its element 0), column 0.
    let a = atom(Operand::A).unwrap();
    let p = a.apply_multi(&[1, 0], &[16, 16]).unwrap();
    assert_eq!((p[0].get(&ax("lane")), p[0].get(&ax("reg"))), (4, 0));
}

fn dispatch_err(e: KernelError) -> String {
    e.to_string()
}

#[test]
fn exact_fragments_are_matched_and_others_declined_with_reasons() {
    let (la, lb, lc) = (
        atom(Operand::A).unwrap(),
        atom(Operand::B).unwrap(),
        atom(Operand::C).unwrap(),
    );
    for t in [Target::Cpu, Target::Sm80, Target::Sm90a] {
        let k = gemm_kernel((16, 8, 16), DType::F16, (&la, &lb, &lc), Scope::warp(), 32);
        let p = lower(&k, t).unwrap();
        assert_eq!(p.decisions[3].variant, "gemm.mma_sync", "{t}");
        assert!(p.decisions[3].why.contains("1 mma.sync per warp"));
    }
    // A with its two lane digits swapped: lane 4 holds row 0, column 2, not row 1.
    let swapped = Layout::from_shard(vec![
        it(2, 2, "reg"),
        it(8, 1, "lane"),
        it(2, 4, "reg"),
        it(4, 8, "lane"),
        it(2, 1, "reg"),
    ])
    .unwrap();
    let k = gemm_kernel(
        (16, 8, 16),
        DType::F16,
        (&swapped, &lb, &lc),
        Scope::warp(),
        32,
    );
    let e = dispatch_err(lower(&k, Target::Sm80).unwrap_err());
    assert!(e.contains("gemm.mma_sync"), "{e}");
    assert!(
        e.contains("not the m16n8k16 A fragment: element (0, 2) sits on lane 8"),
        "{e}"
    );
    assert!(e.contains("gemm.fma"), "{e}");
    // C shifted by one lane.
    let shifted = lc.clone().with_offset(&Coord::on(ax("lane"), 1)).unwrap();
    let mut kb = KernelBuilder::new(
        "g",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )
    .unwrap();
    let rc = kb.buffer("rc", Space::Registers, DType::F32, 4).unwrap();
    let t = kb.tensor("C", rc, &[16, 8], shifted).unwrap();
    let e = fragment_tiles(&t, Operand::C, 1).unwrap().unwrap_err();
    assert!(
        e.contains("not the m16n8k16 C fragment: element (0, 0) sits on lane 1 at register +0, the fragment puts it on lane 0"),
        "{e}"
    );
    let t = kb.tensor("C", rc, &[16, 8], lc.clone()).unwrap();
    assert_eq!(
        fragment_tiles(&t, Operand::C, 1).unwrap().unwrap(),
        vec![vec![(0, 0)]]
    );
    // B's registers in the other order (b2, b3 first).
    let swapped_b = Layout::from_shard(vec![
        it(2, 1, "reg"),
        it(4, 1, "lane"),
        it(2, 2, "reg"),
        it(8, 4, "lane"),
    ])
    .unwrap();
    let k = gemm_kernel(
        (16, 8, 16),
        DType::BF16,
        (&la, &swapped_b, &lc),
        Scope::warp(),
        32,
    );
    let e = dispatch_err(lower(&k, Target::Sm80).unwrap_err());
    assert!(
        e.contains("element (1, 0) sits on lane 0 at register +2, the fragment puts it on lane 0 at register +1"),
        "{e}"
    );
    // f32 operands: mma.sync declines, gemm.fma has no products in one thread.
    let k = gemm_kernel((16, 8, 16), DType::F32, (&la, &lb, &lc), Scope::warp(), 32);
    let e = dispatch_err(lower(&k, Target::Sm80).unwrap_err());
    assert!(e.contains("multiplies f16 or bf16; A A is f32"), "{e}");
}

#[test]
fn gemm_checks_its_operands() {
    let mut kb = KernelBuilder::new(
        "g",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )
    .unwrap();
    let h = kb.buffer("h", Space::Registers, DType::F16, 64).unwrap();
    let f = kb.buffer("f", Space::Registers, DType::F32, 64).unwrap();
    let rm = |s: &[u64]| {
        let n: u64 = s.iter().product();
        Layout::strided(&[n], &[1], &[ax("reg")]).unwrap()
    };
    let t = |kb: &KernelBuilder, b, s: &[u64]| kb.tensor("t", b, s, rm(s)).unwrap();
    let (a, b, c) = (t(&kb, h, &[4, 8]), t(&kb, h, &[8, 2]), t(&kb, f, &[4, 2]));
    let bad_k = t(&kb, h, &[4, 2]);
    let e = kb
        .gemm(Scope::warp(), &c, &bad_k, &b)
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs A [4, K] and B [K, 2] with one K"), "{e}");
    let flat = kb.tensor("v", f, &[8], rm(&[8])).unwrap();
    let e = kb
        .gemm(Scope::warp(), &flat, &a, &b)
        .unwrap_err()
        .to_string();
    assert!(e.contains("gemm takes matrices (rank 2)"), "{e}");
    let cf16 = t(&kb, h, &[4, 2]);
    let e = kb
        .gemm(Scope::warp(), &cf16, &a, &b)
        .unwrap_err()
        .to_string();
    assert!(e.contains("gemm accumulates in f32"), "{e}");
    let af32 = t(&kb, f, &[4, 8]);
    let e = kb
        .gemm(Scope::warp(), &c, &af32, &b)
        .unwrap_err()
        .to_string();
    assert!(e.contains("must be one of f16, bf16, f32"), "{e}");
    assert!(kb.gemm(Scope::warp(), &c, &a, &b).is_ok());
}

/// `c = A` (in registers), then `gemm(c, a, b)` at warp scope with every lane holding the whole
/// 2×2 matrices in one f32 register buffer: A at registers `a_at..a_at+4`, C at `0..4`, B at `8..12`.
/// Returns the lowering error, or C.
fn gemm_sharing_registers(a_at: i64) -> Result<Vec<f32>, KernelError> {
    let mut kb = KernelBuilder::new(
        "g",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )?;
    let g = kb.buffer("g", Space::Global, DType::F32, 8)?;
    let o = kb.buffer("o", Space::Global, DType::F32, 4)?;
    let r = kb.buffer("r", Space::Registers, DType::F32, 12)?;
    let at = |off: i64| -> Layout {
        format!("S[(2,2):(2@reg,1@reg)] + {off}@reg + R[32:1@lane]")
            .parse()
            .unwrap()
    };
    let ga = kb.tensor("ga", g, &[2, 2], Layout::row_major(&[2, 2]).unwrap())?;
    let gb = kb.tensor("gb", g, &[2, 2], "S[(2,2):(2,1)] + 4".parse().unwrap())?;
    let to = kb.tensor("o", o, &[2, 2], Layout::row_major(&[2, 2]).unwrap())?;
    let (c, a, b) = (
        kb.tensor("c", r, &[2, 2], at(0))?,
        kb.tensor("a", r, &[2, 2], at(a_at))?,
        kb.tensor("b", r, &[2, 2], at(8))?,
    );
    kb.copy(Scope::warp(), &a, &ga)?;
    kb.copy(Scope::warp(), &b, &gb)?;
    kb.copy(Scope::warp(), &c, &ga)?;
    kb.gemm(Scope::warp(), &c, &a, &b)?;
    kb.copy(Scope::warp(), &to, &c)?;
    let p = lower(&kb.build()?, Target::Cpu)?;
    let input: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let out = run(&p, vec![input, vec![0; 16]], RunLimits::default())?;
    Ok(out[1]
        .chunks(4)
        .map(|q| f32::from_le_bytes([q[0], q[1], q[2], q[3]]))
        .collect())
}

#[test]
fn c_sharing_registers_with_a_is_refused_and_apart_in_one_buffer_is_computed() {
    // C = A + A·B with A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]].
    let want = [1.0 + 19.0, 2.0 + 22.0, 3.0 + 43.0, 4.0 + 50.0];
    assert_eq!(gemm_sharing_registers(4).unwrap(), want);
    // A in C's own registers: gemm.fma overwrote A's elements before reading them (C came out
    // [20, 1098, 46, 2520]); now the call is refused.
    let e = gemm_sharing_registers(0).unwrap_err().to_string();
    assert!(
        e.contains("C c and A a overlap in one buffer (reg 0..=3 and 0..=3): gemm writes C while it still reads A"),
        "{e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// gemm.fma at thread scope on each thread's own registers (every lane holds everything), and at
    /// warp scope with C's rows on lanes (each thread its own rows, A's rows with them, B everywhere).
    #[test]
    fn fma_matches_brute_force(
        m in 1u64..5, n in 1u64..5, k in 1u64..6, d in 0usize..3, seed in 0u64..1000, rows_on_lanes in any::<bool>()
    ) {
        let d = [DType::F32, DType::F16, DType::BF16][d];
        let all = |r: u64, c: u64| {
            Layout::new(vec![it(r * c, 1, "reg")], vec![it(32, 1, "lane")], Coord::zero()).unwrap()
        };
        let own = |r: u64, c: u64| Layout::strided(&[r * c], &[1], &[ax("reg")]).unwrap();
        let (la, lb, lc, scope) = if rows_on_lanes {
            // Row i of A and C on lane i (m dividing 32), replicated on lanes i + m, i + 2m, ...; B on
            // every lane: each thread computes its own row.
            let m2 = [1u64, 2, 4, 4][(m - 1) as usize];
            let rows = |c: u64| Layout::new(
                vec![it(m2, 1, "lane"), it(c, 1, "reg")],
                vec![it(32 / m2, m2 as i64, "lane")],
                Coord::zero(),
            ).unwrap();
            let (la, lc) = (rows(k), rows(n));
            let k2 = gemm_kernel((m2, n, k), d, (&la, &all(k, n), &lc), Scope::warp(), 32);
            let p = lower(&k2, Target::Sm80).unwrap();
            prop_assert_eq!(&p.decisions[3].variant, "gemm.fma");
            run_and_check(&p, (m2, n, k), d, seed);
            return Ok(());
        } else {
            // One thread's own registers (lane 0 loads and stores them).
            (own(m, k), own(k, n), own(m, n), Scope::threads(0..1))
        };
        let kern = gemm_kernel((m, n, k), d, (&la, &lb, &lc), scope, 32);
        let p = lower(&kern, Target::Cpu).unwrap();
        prop_assert_eq!(&p.decisions[3].variant, "gemm.fma");
        run_and_check(&p, (m, n, k), d, seed);
    }

    /// gemm.mma_sync at warp scope on the fragments tiled over reg, tiles in either order.
    #[test]
    fn mma_sync_matches_brute_force(
        mt in 1u64..3, nt in 1u64..4, kt in 1u64..3, bf in any::<bool>(), cols in any::<bool>(), seed in 0u64..1000
    ) {
        let d = if bf { DType::BF16 } else { DType::F16 };
        let la = tiled(Operand::A, [mt, kt], cols);
        let lb = tiled(Operand::B, [kt, nt], !cols);
        let lc = tiled(Operand::C, [mt, nt], cols);
        let shape = (16 * mt, 8 * nt, 16 * kt);
        let kern = gemm_kernel(shape, d, (&la, &lb, &lc), Scope::warp(), 32);
        let p = lower(&kern, Target::Sm80).unwrap();
        prop_assert_eq!(&p.decisions[3].variant, "gemm.mma_sync");
        let want = format!("{} mma.sync per warp", mt * nt * kt);
        prop_assert!(p.decisions[3].why.contains(&want), "{}", p.decisions[3].why);
        run_and_check(&p, shape, d, seed);
    }
}

/// Two warps at CTA scope computing C [16, 16]: C's tile j on warp j, A replicated over both; B's tile
/// j on warp j, or (`b_on_regs`) both B tiles in every warp's registers 0..4 and 4..8.
fn two_warp_layouts(b_on_regs: bool) -> (Layout, Layout, Layout) {
    let rep = |l: Layout| {
        let (s, mut r, o) = l.into_parts();
        r.push(it(2, 1, "warp"));
        Layout::new(s, r, o).unwrap()
    };
    let on_warps = Layout::strided(&[1, 2], &[0, 1], &[ax("reg"), ax("warp")]).unwrap();
    let on_regs = Layout::strided(&[1, 2], &[0, 1], &[ax("reg"), ax("reg")]).unwrap();
    let tile = |op, outer: &Layout| {
        atom(op)
            .unwrap()
            .tile(outer, &op.shape(), &[1, 2])
            .unwrap()
            .0
    };
    let b = if b_on_regs {
        rep(tile(Operand::B, &on_regs))
    } else {
        tile(Operand::B, &on_warps)
    };
    (
        rep(atom(Operand::A).unwrap()),
        b,
        tile(Operand::C, &on_warps),
    )
}

#[test]
fn mma_sync_at_cta_scope_runs_each_warp_on_its_tiles() {
    let (la, lb, lc) = two_warp_layouts(false);
    let k = gemm_kernel((16, 16, 16), DType::BF16, (&la, &lb, &lc), Scope::cta(), 64);
    let p = lower(&k, Target::Sm80).unwrap();
    // B in registers 0..4 and 4..8 of every warp: warp 1 would read other registers than warp 0.
    let (_, lb2, _) = two_warp_layouts(true);
    let k2 = gemm_kernel(
        (16, 16, 16),
        DType::BF16,
        (&la, &lb2, &lc),
        Scope::cta(),
        64,
    );
    let e = lower(&k2, Target::Sm80).unwrap_err().to_string();
    assert!(
        e.contains(
            "warp 1's tiles sit in other registers than warp 0's; every warp runs the same code"
        ),
        "{e}"
    );
    assert_eq!(p.decisions[3].variant, "gemm.mma_sync");
    assert!(
        p.decisions[3]
            .why
            .contains("over 2 warp(s)): 1 mma.sync per warp"),
        "{}",
        p.decisions[3].why
    );
    run_and_check(&p, (16, 16, 16), DType::BF16, 3);
    // The same tiles at warp scope: the layouts name warp 1, which a warp scope does not have.
    let k = gemm_kernel(
        (16, 16, 16),
        DType::BF16,
        (&la, &lb, &lc),
        Scope::warp(),
        64,
    );
    let e = lower(&k, Target::Sm80).unwrap_err().to_string();
    assert!(
        e.contains("the scope has 1 warps") || e.contains("1 warps"),
        "{e}"
    );
}

#[test]
fn a_c_held_twice_or_a_missing_a_copy_is_declined() {
    let (la, lb, _) = two_warp_layouts(true);
    // C replicated on both warps (tiles in registers 0..4 and 4..8 of each).
    let c_rep = {
        let on_regs = Layout::strided(&[1, 2], &[0, 1], &[ax("reg"), ax("reg")]).unwrap();
        let (s, mut r, o) = atom(Operand::C)
            .unwrap()
            .tile(&on_regs, &[16, 8], &[1, 2])
            .unwrap()
            .0
            .into_parts();
        r.push(it(2, 1, "warp"));
        Layout::new(s, r, o).unwrap()
    };
    let k = gemm_kernel(
        (16, 16, 16),
        DType::F16,
        (&la, &lb, &c_rep),
        Scope::cta(),
        64,
    );
    let e = lower(&k, Target::Sm80).unwrap_err().to_string();
    assert!(
        e.contains("has 2 copies; each C tile must be held by one warp"),
        "{e}"
    );
    // A only on warp 0 while warp 1 holds a C tile.
    let (_, _, lc) = two_warp_layouts(false);
    let a0 = atom(Operand::A).unwrap();
    let k = gemm_kernel((16, 16, 16), DType::F16, (&a0, &lb, &lc), Scope::cta(), 64);
    let e = lower(&k, Target::Sm80).unwrap_err().to_string();
    assert!(
        e.contains("warp 1 holds C tile (0, 1) but no copy of A tile (0, 0)"),
        "{e}"
    );
}

#[test]
fn fma_and_mma_kernels_compile_with_nvrtc() {
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv");
    let Some(lib) = axe_kernel::nvrtc::find_nvrtc(&venv) else {
        eprintln!("skipped: no NVRTC under {}", venv.display());
        return;
    };
    let own = |r: u64, c: u64| Layout::strided(&[r * c], &[1], &[ax("reg")]).unwrap();
    let fma = gemm_kernel(
        (2, 3, 4),
        DType::F16,
        (&own(2, 4), &own(4, 3), &own(2, 3)),
        Scope::threads(0..1),
        32,
    );
    let (la, lb, lc) = (
        tiled(Operand::A, [2, 2], false),
        tiled(Operand::B, [2, 2], true),
        tiled(Operand::C, [2, 2], false),
    );
    let mma = gemm_kernel(
        (32, 16, 32),
        DType::BF16,
        (&la, &lb, &lc),
        Scope::warp(),
        32,
    );
    for (k, want) in [
        (fma, "fma.rn.f32"),
        (mma, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
    ] {
        for t in [Target::Sm80, Target::Sm90a] {
            let src = axe_kernel::emit_cuda(&lower(&k, t).unwrap()).unwrap();
            let c = axe_kernel::nvrtc::compile_here(&lib, &src, "g", t.arch().unwrap())
                .unwrap_or_else(|e| panic!("{e}\n{src}"));
            assert!(c.ptx.contains(want), "{want} not in\n{}", c.ptx);
            assert!(!c.ptx.contains(".local"), "{}", c.ptx);
        }
    }
}
