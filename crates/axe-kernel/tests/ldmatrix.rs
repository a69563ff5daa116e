#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `copy.ldmatrix`: fragments loaded from shared memory by ldmatrix equal the element-by-element copy
//! (`copy.registers`, forced) on the interpreter, plain and transposed, through swizzles; layouts that
//! are not ldmatrix matrices are declined with reasons.

use axe_kernel::gemm::{atom, Operand};
use axe_kernel::{
    lower, run, DType, KernelBuilder, Launch, Op, Program, RunLimits, Scope, Space, Swizzle, Target,
};
use axe_layout::{Axis, Layout};
use proptest::prelude::*;

fn ax(n: &str) -> Axis {
    Axis::new(n).unwrap()
}

/// One warp: global `[r, c]` (row-major) → shared (rows `stride` apart) → registers (`frag`) → global.
fn kernel(
    shape: [u64; 2],
    stride: i64,
    col_major: bool,
    swizzle: Option<Swizzle>,
    frag: &Layout,
    dtype: DType,
    force: Option<&str>,
) -> axe_kernel::Kernel {
    let [r, c] = shape;
    let n = r * c;
    let mut k = KernelBuilder::new(
        "ld",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )
    .unwrap();
    let inner = if col_major { r } else { c };
    let outer = n / inner;
    let g = k.buffer("g", Space::Global, dtype, n).unwrap();
    let o = k.buffer("o", Space::Global, dtype, n).unwrap();
    let s = k
        .buffer("s", Space::Shared(swizzle), dtype, outer * stride as u64)
        .unwrap();
    let regs = (axe_kernel::extent_on(frag, &ax("reg")).unwrap().1 + 1) as u64;
    let f = k.buffer("f", Space::Registers, dtype, regs).unwrap();
    let rm = Layout::row_major(&[r, c]).unwrap();
    let strides = if col_major { [1, stride] } else { [stride, 1] };
    let sl = Layout::strided(&[r, c], &strides, &[Axis::memory(), Axis::memory()]).unwrap();
    let tg = k.tensor("g", g, &[r, c], rm.clone()).unwrap();
    let to = k.tensor("o", o, &[r, c], rm).unwrap();
    let ts = k.tensor("s", s, &[r, c], sl).unwrap();
    let tf = k.tensor("frag", f, &[r, c], frag.clone()).unwrap();
    k.copy(Scope::warp(), &ts, &tg).unwrap();
    k.barrier();
    k.call_forced(
        Scope::warp(),
        Op::Copy {
            dst: tf.clone(),
            src: ts,
        },
        force,
    )
    .unwrap();
    k.copy(Scope::warp(), &to, &tf).unwrap();
    k.build().unwrap()
}

fn run_it(p: &Program, n: u64) -> Vec<u8> {
    let input: Vec<u8> = (0..n * 2).map(|i| (i * 7 + i / 3) as u8).collect();
    run(
        p,
        vec![input, vec![0; (n * 2) as usize]],
        RunLimits::default(),
    )
    .unwrap()
    .remove(1)
}

#[test]
fn fragments_load_by_ldmatrix_plain_and_transposed() {
    // A (16×16) from a row-major tile: 4 plain matrices, one x4.
    let a = atom(Operand::A).unwrap();
    let p = lower(
        &kernel([16, 16], 24, false, None, &a, DType::BF16, None),
        Target::Sm80,
    )
    .unwrap();
    let d = &p.decisions[1];
    assert_eq!(d.variant, "copy.ldmatrix");
    assert!(
        d.why.contains("4 32-bit words per thread")
            && d.why.contains("(0 transposed): 1 ldmatrix per warp"),
        "{}",
        d.why
    );
    let forced = lower(
        &kernel(
            [16, 16],
            24,
            false,
            None,
            &a,
            DType::BF16,
            Some("copy.registers"),
        ),
        Target::Sm80,
    )
    .unwrap();
    assert_eq!(run_it(&p, 256), run_it(&forced, 256));
    // B (16×8, k × n) from a tile with n contiguous: two transposed matrices, one x2.
    let b = atom(Operand::B).unwrap();
    let p = lower(
        &kernel([16, 8], 8, false, None, &b, DType::F16, None),
        Target::Sm90a,
    )
    .unwrap();
    let d = &p.decisions[1];
    assert_eq!(d.variant, "copy.ldmatrix");
    assert!(
        d.why.contains("(2 transposed): 1 ldmatrix per warp"),
        "{}",
        d.why
    );
    let src = axe_kernel::emit_cuda(&p).unwrap();
    assert!(
        src.contains("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"),
        "{src}"
    );
    let forced = lower(
        &kernel(
            [16, 8],
            8,
            false,
            None,
            &b,
            DType::F16,
            Some("copy.registers"),
        ),
        Target::Sm90a,
    )
    .unwrap();
    assert_eq!(run_it(&p, 128), run_it(&forced, 128));
    // The same B from a k-contiguous tile: plain.
    let p = lower(
        &kernel([16, 8], 16, true, None, &b, DType::F16, None),
        Target::Sm80,
    )
    .unwrap();
    assert!(p.decisions[1].why.contains("(0 transposed)"));
}

#[test]
fn layouts_that_are_not_ldmatrix_matrices_are_declined() {
    let a = atom(Operand::A).unwrap();
    // Rows 20 elements apart: row 1 starts at 20, not on a 16-byte boundary.
    let e = lower(
        &kernel(
            [16, 16],
            20,
            false,
            None,
            &a,
            DType::BF16,
            Some("copy.ldmatrix"),
        ),
        Target::Sm80,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("A_frag") || e.contains("frag is not ldmatrix fragments"),
        "{e}"
    );
    assert!(e.contains("not a multiple of 8"), "{e}");
    // 32-bit elements.
    let c = atom(Operand::C).unwrap();
    let e = lower(
        &kernel(
            [16, 8],
            8,
            false,
            None,
            &c,
            DType::F32,
            Some("copy.ldmatrix"),
        ),
        Target::Sm80,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("ldmatrix moves 16-bit elements; frag is f32"),
        "{e}"
    );
    // A lane order ldmatrix does not deliver: the A fragment with its lane digits swapped.
    let it = |e, s, a: &str| axe_layout::Iter::new(e, s, ax(a)).unwrap();
    let swapped = Layout::from_shard(vec![
        it(2, 2, "reg"),
        it(8, 1, "lane"),
        it(2, 4, "reg"),
        it(4, 8, "lane"),
        it(2, 1, "reg"),
    ])
    .unwrap();
    let e = lower(
        &kernel(
            [16, 16],
            16,
            false,
            None,
            &swapped,
            DType::BF16,
            Some("copy.ldmatrix"),
        ),
        Target::Sm80,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("is not ldmatrix fragments: word 0"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Tiled A and B fragments from padded or swizzled shared tiles (either major order): whatever
    /// dispatch picks moves the same bytes as the element-by-element copy.
    #[test]
    fn ldmatrix_equals_the_element_copy(
        b_op in any::<bool>(), tiles in 1u64..3, col_major in any::<bool>(), pad in 0i64..2, sw in 0usize..3
    ) {
        let op = if b_op { Operand::B } else { Operand::A };
        let [r, c] = op.shape();
        let shape = [r, c * tiles];
        let f = atom(op).unwrap();
        let o = Layout::strided(&[1, tiles], &[tiles as i64, 1], &[ax("reg"), ax("reg")]).unwrap();
        let (frag, _) = f.tile(&o, &[r, c], &[1, tiles]).unwrap();
        let inner = if col_major { shape[0] } else { shape[1] } as i64;
        let stride = inner + 8 * pad;
        let swizzle = [None, Some(Swizzle::B64), Some(Swizzle::B128)][sw];
        let n = shape[0] * shape[1];
        let p = lower(&kernel(shape, stride, col_major, swizzle, &frag, DType::BF16, None), Target::Sm80).unwrap();
        let forced = lower(
            &kernel(shape, stride, col_major, swizzle, &frag, DType::BF16, Some("copy.registers")),
            Target::Sm80,
        ).unwrap();
        prop_assert_eq!(run_it(&p, n), run_it(&forced, n));
        // Shared rows of 16 bytes at 16-byte boundaries: ldmatrix applies.
        prop_assert_eq!(&p.decisions[1].variant, "copy.ldmatrix");
    }
}
