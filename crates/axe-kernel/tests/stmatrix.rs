#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `copy.stmatrix`: fragments stored to shared memory by stmatrix land where the layouts say (a
//! brute-force placement over every element), ldmatrix after stmatrix is the identity, layouts that
//! are not stmatrix matrices (or the wrong dtype or target) are declined with reasons, and the emitted
//! CUDA compiles for sm_90a.

mod sass;

use axe_kernel::gemm::{atom, Operand};
use axe_kernel::nvrtc::{compile_here, find_nvrtc};
use axe_kernel::{
    emit_cuda, lower, run, DType, KernelBuilder, Launch, Op, Program, RunLimits, Scope, Space,
    Swizzle, Target, Value,
};
use axe_layout::{Axis, Layout};
use proptest::prelude::*;
use std::path::Path;

fn ax(n: &str) -> Axis {
    Axis::new(n).unwrap()
}

/// The tile: `shape`, shared rows `stride` elements apart (column-major when `col_major`), swizzled.
#[derive(Clone, Copy)]
struct Tile<'a> {
    shape: [u64; 2],
    stride: i64,
    col_major: bool,
    swizzle: Option<Swizzle>,
    frag: &'a Layout,
    dtype: DType,
}

impl Tile<'_> {
    fn shared_elems(&self) -> u64 {
        let [r, c] = self.shape;
        let (inner, outer) = if self.col_major { (r, c) } else { (c, r) };
        let _ = inner;
        outer * self.stride as u64
    }
    /// The shared element of logical `(i, j)` (before the swizzle).
    fn at(&self, i: u64, j: u64) -> u64 {
        if self.col_major {
            j * self.stride as u64 + i
        } else {
            i * self.stride as u64 + j
        }
    }
}

/// One warp: global `g` (row-major) → registers (`frag`, element by element) → shared by the copy
/// under test (`store`, forced or not) → barrier; then, with `reload`, shared → registers (by
/// ldmatrix) → global `o` (row-major); else the whole shared buffer, as it lies, → global `o`.
fn kernel(t: Tile<'_>, store: Option<&str>, reload: bool) -> axe_kernel::Kernel {
    let [r, c] = t.shape;
    let n = r * c;
    let mut k = KernelBuilder::new(
        "st",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )
    .unwrap();
    let se = t.shared_elems();
    let g = k.buffer("g", Space::Global, t.dtype, n).unwrap();
    let o = k
        .buffer("o", Space::Global, t.dtype, if reload { n } else { se })
        .unwrap();
    let s = k
        .buffer("s", Space::Shared(t.swizzle), t.dtype, se)
        .unwrap();
    let regs = (axe_kernel::extent_on(t.frag, &ax("reg")).unwrap().1 + 1) as u64;
    let f = k.buffer("f", Space::Registers, t.dtype, regs).unwrap();
    let f2 = k.buffer("f2", Space::Registers, t.dtype, regs).unwrap();
    let rm = Layout::row_major(&[r, c]).unwrap();
    let strides = if t.col_major {
        [1, t.stride]
    } else {
        [t.stride, 1]
    };
    let sl = Layout::strided(&[r, c], &strides, &[Axis::memory(), Axis::memory()]).unwrap();
    let flat = Layout::row_major(&[se]).unwrap();
    let tg = k.tensor("g", g, &[r, c], rm.clone()).unwrap();
    let ts = k.tensor("s", s, &[r, c], sl).unwrap();
    let ts_all = k.tensor("s_all", s, &[se], flat.clone()).unwrap();
    let tf = k.tensor("frag", f, &[r, c], t.frag.clone()).unwrap();
    k.fill(Scope::warp(), &ts_all, Value::Int(0)).unwrap();
    k.copy(Scope::warp(), &tf, &tg).unwrap();
    k.barrier();
    k.call_forced(
        Scope::warp(),
        Op::Copy {
            dst: ts.clone(),
            src: tf,
        },
        store,
    )
    .unwrap();
    k.barrier();
    if reload {
        let to = k.tensor("o", o, &[r, c], rm).unwrap();
        let tf2 = k.tensor("frag2", f2, &[r, c], t.frag.clone()).unwrap();
        k.call_forced(
            Scope::warp(),
            Op::Copy {
                dst: tf2.clone(),
                src: ts,
            },
            Some("copy.ldmatrix"),
        )
        .unwrap();
        k.copy(Scope::warp(), &to, &tf2).unwrap();
    } else {
        let to = k.tensor("o", o, &[se], flat).unwrap();
        k.copy(Scope::warp(), &to, &ts_all).unwrap();
    }
    k.build().unwrap()
}

fn run_it(p: &Program, input: &[u8], out: usize) -> Vec<u8> {
    run(p, vec![input.to_vec(), vec![0; out]], RunLimits::default())
        .unwrap()
        .remove(1)
}

/// Where every element goes, computed element by element: shared element `at(i, j)` holds `g[i, j]`,
/// the rest stays 0.
fn placed(t: &Tile<'_>, input: &[u8]) -> Vec<u8> {
    let [r, c] = t.shape;
    let mut want = vec![0u8; (t.shared_elems() * 2) as usize];
    for i in 0..r {
        for j in 0..c {
            let m = t.at(i, j) as usize;
            let x = (i * c + j) as usize;
            want[2 * m..2 * m + 2].copy_from_slice(&input[2 * x..2 * x + 2]);
        }
    }
    want
}

fn tiled(op: Operand, tiles: u64) -> ([u64; 2], Layout) {
    let [r, c] = op.shape();
    let f = atom(op).unwrap();
    let o = Layout::strided(&[1, tiles], &[tiles as i64, 1], &[ax("reg"), ax("reg")]).unwrap();
    ([r, c * tiles], f.tile(&o, &[r, c], &[1, tiles]).unwrap().0)
}

#[test]
fn fragments_store_by_stmatrix_where_the_layouts_say() {
    let a = atom(Operand::A).unwrap();
    let t = Tile {
        shape: [16, 16],
        stride: 24,
        col_major: false,
        swizzle: None,
        frag: &a,
        dtype: DType::BF16,
    };
    let p = lower(&kernel(t, None, false), Target::Sm90a).unwrap();
    let d = &p.decisions[2];
    assert_eq!(d.variant, "copy.stmatrix", "{d:?}");
    assert!(
        d.why.contains("4 32-bit words per thread")
            && d.why.contains("(0 transposed): 1 stmatrix per warp"),
        "{}",
        d.why
    );
    let input: Vec<u8> = (0..512u32).map(|i| (i * 7 + i / 3) as u8).collect();
    let out = run_it(&p, &input, (t.shared_elems() * 2) as usize);
    assert_eq!(out, placed(&t, &input));
    // The CPU target takes it too (the interpreter runs it); sm_80 has no stmatrix.
    assert_eq!(
        lower(&kernel(t, None, false), Target::Cpu)
            .unwrap()
            .decisions[2]
            .variant,
        "copy.stmatrix"
    );
    let p80 = lower(&kernel(t, None, false), Target::Sm80).unwrap();
    assert_ne!(p80.decisions[2].variant, "copy.stmatrix");
    assert!(p80.decisions[2]
        .declined
        .iter()
        .any(|(v, r)| v == "copy.stmatrix" && r.contains("sm_80 has none")));
    // B (16×8) into a tile with n contiguous: two transposed matrices, one x2 .trans.
    let b = atom(Operand::B).unwrap();
    let t = Tile {
        shape: [16, 8],
        stride: 8,
        col_major: false,
        swizzle: None,
        frag: &b,
        dtype: DType::F16,
    };
    let p = lower(&kernel(t, None, false), Target::Sm90a).unwrap();
    assert!(
        p.decisions[2]
            .why
            .contains("(2 transposed): 1 stmatrix per warp"),
        "{}",
        p.decisions[2].why
    );
    let src = emit_cuda(&p).unwrap();
    assert!(
        src.contains("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};"),
        "{src}"
    );
    let input: Vec<u8> = (0..256u32).map(|i| (i * 13 + 5) as u8).collect();
    assert_eq!(
        run_it(&p, &input, (t.shared_elems() * 2) as usize),
        placed(&t, &input)
    );
}

#[test]
fn layouts_that_are_not_stmatrix_matrices_are_declined() {
    let a = atom(Operand::A).unwrap();
    let bad = |t: Tile<'_>, target| {
        lower(&kernel(t, Some("copy.stmatrix"), false), target)
            .unwrap_err()
            .to_string()
    };
    let t = Tile {
        shape: [16, 16],
        stride: 16,
        col_major: false,
        swizzle: None,
        frag: &a,
        dtype: DType::BF16,
    };
    // Rows 20 elements apart: row 1 starts at element 20, not on a 16-byte boundary.
    let e = bad(Tile { stride: 20, ..t }, Target::Sm90a);
    assert!(e.contains("frag is not stmatrix fragments"), "{e}");
    assert!(e.contains("not a multiple of 8"), "{e}");
    // sm_80.
    let e = bad(t, Target::Sm80);
    assert!(e.contains("stmatrix needs sm_90 or later"), "{e}");
    // 32-bit elements.
    let c = atom(Operand::C).unwrap();
    let e = bad(
        Tile {
            shape: [16, 8],
            stride: 8,
            frag: &c,
            dtype: DType::F32,
            ..t
        },
        Target::Sm90a,
    );
    assert!(
        e.contains("stmatrix moves 16-bit elements; frag is f32"),
        "{e}"
    );
    // A lane order stmatrix does not take: the A fragment with its lane digits swapped.
    let it = |e, s, a: &str| axe_layout::Iter::new(e, s, ax(a)).unwrap();
    let swapped = Layout::from_shard(vec![
        it(2, 2, "reg"),
        it(8, 1, "lane"),
        it(2, 4, "reg"),
        it(4, 8, "lane"),
        it(2, 1, "reg"),
    ])
    .unwrap();
    let e = bad(
        Tile {
            frag: &swapped,
            ..t
        },
        Target::Sm90a,
    );
    assert!(e.contains("is not stmatrix fragments: word 0"), "{e}");
}

#[test]
fn a_replicated_fragment_is_declined() {
    // The A fragment on both warps of a 64-thread CTA: each element would be stored twice.
    let frag = atom(Operand::A)
        .unwrap()
        .with_replica([axe_layout::Iter::new(2, 1, ax("warp")).unwrap()])
        .unwrap();
    let mut k = KernelBuilder::new(
        "st2",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 64,
        },
    )
    .unwrap();
    let s = k
        .buffer("s", Space::Shared(None), DType::BF16, 256)
        .unwrap();
    let f = k.buffer("f", Space::Registers, DType::BF16, 8).unwrap();
    let ts = k
        .tensor("s", s, &[16, 16], Layout::row_major(&[16, 16]).unwrap())
        .unwrap();
    let tf = k.tensor("frag", f, &[16, 16], frag).unwrap();
    k.call_forced(
        Scope::cta(),
        Op::Copy { dst: ts, src: tf },
        Some("copy.stmatrix"),
    )
    .unwrap();
    let e = lower(&k.build().unwrap(), Target::Sm90a)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("frag holds element 0 in 2 places; stmatrix would store it more than once"),
        "{e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Tiled A and B fragments into padded or swizzled shared tiles (either major order), random
    /// contents: stmatrix puts every element where the brute-force placement does, and ldmatrix
    /// reading it back returns the tile unchanged.
    #[test]
    fn stmatrix_places_and_ldmatrix_undoes_it(
        b_op in any::<bool>(), tiles in 1u64..3, col_major in any::<bool>(), pad in 0i64..2,
        sw in 0usize..3, seed in any::<u64>()
    ) {
        let op = if b_op { Operand::B } else { Operand::A };
        let (shape, frag) = tiled(op, tiles);
        let inner = if col_major { shape[0] } else { shape[1] } as i64;
        let t = Tile {
            shape,
            stride: inner + 8 * pad,
            col_major,
            swizzle: [None, Some(Swizzle::B64), Some(Swizzle::B128)][sw],
            frag: &frag,
            dtype: DType::BF16,
        };
        let n = (shape[0] * shape[1]) as usize;
        let mut x = seed | 1;
        let input: Vec<u8> = (0..2 * n).map(|_| { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x as u8 }).collect();
        let p = lower(&kernel(t, None, false), Target::Sm90a).unwrap();
        prop_assert_eq!(&p.decisions[2].variant, "copy.stmatrix");
        prop_assert_eq!(run_it(&p, &input, (t.shared_elems() * 2) as usize), placed(&t, &input));
        let p = lower(&kernel(t, None, true), Target::Sm90a).unwrap();
        prop_assert_eq!(&p.decisions[2].variant, "copy.stmatrix");
        prop_assert_eq!(&p.decisions[3].variant, "copy.ldmatrix");
        prop_assert_eq!(run_it(&p, &input, 2 * n), input);
    }
}

#[test]
fn stmatrix_compiles_for_sm90a() {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv");
    let Some(lib) = find_nvrtc(&venv) else {
        eprintln!("skipped: no NVRTC (set AXE_NVRTC or install it in .venv)");
        return;
    };
    let (shape, frag) = tiled(Operand::A, 2);
    let t = Tile {
        shape,
        stride: shape[1] as i64 + 8,
        col_major: false,
        swizzle: None,
        frag: &frag,
        dtype: DType::BF16,
    };
    let kernel = kernel(t, None, false);
    let p = lower(&kernel, Target::Sm90a).unwrap();
    let src = emit_cuda(&p).unwrap();
    assert!(
        src.contains("stmatrix.sync.aligned.m8n8.x4.shared.b16"),
        "{src}"
    );
    let c =
        compile_here(&lib, &src, &kernel.name, "sm_90a").unwrap_or_else(|e| panic!("{e}\n{src}"));
    assert!(
        c.ptx.contains("stmatrix.sync.aligned.m8n8.x4.shared.b16"),
        "{}",
        c.ptx
    );
    if let Some(sass) = sass::sass(&c.cubin, "stmatrix") {
        assert!(sass.contains("STSM"), "{sass}");
    }
}
