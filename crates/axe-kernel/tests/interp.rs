#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The interpreter: staged copies through shared memory, races, barriers, bounds, pointwise results;
//! and the errors bad descriptions get.

use axe_kernel::{
    emit_cuda, lower, run, BinaryOp, DType, Expr, KernelBuilder, KernelError, LStmt, Launch, Op,
    RunLimits, Scope, Space, Swizzle, Target, UnaryOp, Value,
};
use axe_layout::Layout;

mod common;
use common::{builder, f32s, rm};

fn from_f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Global a (16×32 row-major) → shared tile (swizzled, transposed) → global b (row-major), with or
/// without the barrier between the two copies.
fn staged(barrier: bool, swizzle: Option<Swizzle>) -> axe_kernel::Kernel {
    let mut k = builder("staged", 1, 128);
    let a = k.buffer("a", Space::Global, DType::F32, 512).unwrap();
    let b = k.buffer("b", Space::Global, DType::F32, 512).unwrap();
    let s = k
        .buffer("tile", Space::Shared(swizzle), DType::F32, 512)
        .unwrap();
    let ta = k.tensor("a", a, &[16, 32], rm(&[16, 32])).unwrap();
    let tb = k.tensor("b", b, &[16, 32], rm(&[16, 32])).unwrap();
    let ts = k
        .tensor("tile", s, &[16, 32], "S[(16,32):(1,16)]".parse().unwrap())
        .unwrap();
    k.copy(Scope::cta(), &ts, &ta).unwrap();
    if barrier {
        k.barrier();
    }
    // Warp 2 writes the result back: other threads than those that filled the tile.
    k.copy(Scope::warps(2..3), &tb, &ts).unwrap();
    k.build().unwrap()
}

#[test]
fn a_copy_staged_through_shared_memory_round_trips() {
    for sw in [
        None,
        Some(Swizzle::B32),
        Some(Swizzle::B64),
        Some(Swizzle::B128),
    ] {
        let p = lower(&staged(true, sw), Target::Cpu).unwrap();
        let input: Vec<f32> = (0..512).map(|i| i as f32 * 0.5).collect();
        let out = run(&p, vec![f32s(&input), vec![0; 2048]], RunLimits::default()).unwrap();
        assert_eq!(from_f32s(&out[1]), input, "swizzle {sw:?}");
    }
}

#[test]
fn a_missing_barrier_is_a_race_naming_the_operator() {
    let p = lower(&staged(false, None), Target::Cpu).unwrap();
    let e = run(&p, vec![vec![0; 2048], vec![0; 2048]], RunLimits::default()).unwrap_err();
    let KernelError::Run { op, message } = &e else {
        panic!("{e}")
    };
    assert!(op.starts_with("copy #1"), "{e}");
    assert!(message.contains("race on shared buffer tile"), "{e}");
}

#[test]
fn the_swizzle_is_an_involution_keeping_16_byte_chunks() {
    for sw in [Swizzle::B32, Swizzle::B64, Swizzle::B128] {
        for b in 0..4096i64 {
            assert_eq!(sw.apply(sw.apply(b)), b);
            assert_eq!(sw.apply(b) / 16 * 16 + b % 16, sw.apply(b));
            assert_eq!(
                sw.apply(b) / sw.bytes() as i64,
                b / sw.bytes() as i64,
                "stays in its row"
            );
        }
    }
    assert_eq!(Swizzle::B128.apply(128), 128 + 16);
    assert_eq!(Swizzle::B32.apply(128 + 16), 128);
}

#[test]
fn writes_of_several_ctas_or_warps_to_one_place_are_races() {
    // Every warp copies the whole tensor to the same destination.
    let mut k = builder("k", 1, 64);
    let a = k.buffer("a", Space::Global, DType::F32, 64).unwrap();
    let b = k.buffer("b", Space::Global, DType::F32, 64).unwrap();
    let (ta, tb) = (
        k.tensor("a", a, &[64], rm(&[64])).unwrap(),
        k.tensor("b", b, &[64], rm(&[64])).unwrap(),
    );
    k.copy(Scope::warp(), &tb, &ta).unwrap();
    let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    let e = run(&p, vec![vec![0; 256], vec![0; 256]], RunLimits::default()).unwrap_err();
    assert!(e.to_string().contains("race on global buffer b"), "{e}");
    // Every CTA copies it.
    let mut k = builder("k", 2, 32);
    let a = k.buffer("a", Space::Global, DType::F32, 64).unwrap();
    let b = k.buffer("b", Space::Global, DType::F32, 64).unwrap();
    let (ta, tb) = (
        k.tensor("a", a, &[64], rm(&[64])).unwrap(),
        k.tensor("b", b, &[64], rm(&[64])).unwrap(),
    );
    k.copy(Scope::cta(), &tb, &ta).unwrap();
    let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    let e = run(&p, vec![vec![0; 256], vec![0; 256]], RunLimits::default()).unwrap_err();
    assert!(
        e.to_string().contains("CTA 1") && e.to_string().contains("CTA 0"),
        "{e}"
    );
}

#[test]
fn a_barrier_some_threads_skip_is_an_error() {
    let mut k = builder("k", 1, 64);
    k.if_then(Expr::Thread.lt(Expr::Const(32)), |k| {
        k.barrier();
        Ok(())
    })
    .unwrap();
    let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    let e = run(&p, vec![], RunLimits::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("thread 0 waits at the barrier") && e.contains("thread 32 reached the end"),
        "{e}"
    );
}

#[test]
fn an_out_of_bounds_access_names_the_operator() {
    let mut k = builder("k", 1, 32);
    let a = k.buffer("a", Space::Global, DType::F32, 64).unwrap();
    let b = k.buffer("b", Space::Global, DType::F32, 64).unwrap();
    let (ta, tb) = (
        k.tensor("a", a, &[64], rm(&[64])).unwrap(),
        k.tensor("b", b, &[64], rm(&[64])).unwrap(),
    );
    k.copy(Scope::cta(), &tb, &ta).unwrap();
    let mut p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    // Corrupt the lowered program: shift every destination address by 64 bytes.
    fn shift(body: &mut [LStmt]) {
        for s in body {
            match s {
                LStmt::For { body, .. } | LStmt::If { body, .. } => shift(body),
                LStmt::Move { dst, .. } => dst.byte = dst.byte.clone().plus(Expr::Const(64)),
                _ => {}
            }
        }
    }
    shift(&mut p.body);
    let e = run(&p, vec![vec![0; 256], vec![0; 256]], RunLimits::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("copy #0 (copy.vec16)") && e.contains("out of bounds"),
        "{e}"
    );
}

#[test]
fn pointwise_and_cast_compute_elementwise() {
    let mut k = builder("pw", 1, 32);
    let a = k.buffer("a", Space::Global, DType::F32, 40).unwrap();
    let b = k.buffer("b", Space::Global, DType::F32, 40).unwrap();
    let c = k.buffer("c", Space::Global, DType::F32, 40).unwrap();
    let h = k.buffer("h", Space::Global, DType::BF16, 40).unwrap();
    let t = |k: &KernelBuilder, n: &str, buf, l: Layout| k.tensor(n, buf, &[5, 8], l).unwrap();
    let (ta, tb, tc) = (
        t(&k, "a", a, rm(&[5, 8])),
        t(&k, "b", b, "S[(5,8):(1,5)]".parse().unwrap()),
        t(&k, "c", c, rm(&[5, 8])),
    );
    let th = t(&k, "h", h, rm(&[5, 8]));
    k.call(
        Scope::cta(),
        Op::Binary {
            op: BinaryOp::Mul,
            dst: tc.clone(),
            a: ta.clone(),
            b: tb.clone(),
        },
    )
    .unwrap();
    k.barrier();
    k.call(
        Scope::cta(),
        Op::Unary {
            op: UnaryOp::Exp,
            dst: tc.clone(),
            src: tc.clone(),
        },
    )
    .unwrap();
    k.barrier();
    k.call(
        Scope::cta(),
        Op::Cast {
            dst: th,
            src: tc.clone(),
        },
    )
    .unwrap();
    let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    let av: Vec<f32> = (0..40).map(|i| i as f32 / 40.0).collect();
    let bv: Vec<f32> = (0..40).map(|i| 1.0 - i as f32 / 80.0).collect();
    let out = run(
        &p,
        vec![f32s(&av), f32s(&bv), vec![0; 160], vec![0; 80]],
        RunLimits::default(),
    )
    .unwrap();
    let c = from_f32s(&out[2]);
    for i in 0..5usize {
        for j in 0..8usize {
            // exp on f32 is exp_sub (both backends), within an ulp of the correctly rounded one.
            let x = av[i * 8 + j] * bv[j * 5 + i];
            let want = axe_kernel::pointwise::exp_sub(x, 0.0);
            assert!((want - x.exp()).abs() <= f32::EPSILON * want);
            assert_eq!(c[i * 8 + j], want);
            let hb =
                half::bf16::from_le_bytes([out[3][2 * (i * 8 + j)], out[3][2 * (i * 8 + j) + 1]]);
            assert_eq!(hb, half::bf16::from_f32(want));
        }
    }
}

#[test]
fn fill_writes_its_value_in_the_dtype() {
    let mut k = builder("f", 1, 32);
    let a = k.buffer("a", Space::Global, DType::F16, 20).unwrap();
    let t = k
        .tensor("a", a, &[4, 4], "S[(4,4):(5,1)] + 1".parse().unwrap())
        .unwrap();
    k.fill(Scope::cta(), &t, Value::Float(1.5)).unwrap();
    let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    assert_eq!(p.decisions[0].variant, "fill.vec2");
    let out = run(&p, vec![vec![0; 40]], RunLimits::default()).unwrap();
    let one5 = half::f16::from_f32(1.5).to_le_bytes();
    for e in 0..20 {
        let want = if e >= 1 && (e - 1) % 5 < 4 {
            one5
        } else {
            [0, 0]
        };
        assert_eq!(out[0][2 * e..2 * e + 2], want, "element {e}");
    }
}

#[test]
fn bad_descriptions_get_clear_errors() {
    let mut k = builder("k", 1, 32);
    let a = k.buffer("a", Space::Global, DType::F32, 64).unwrap();
    let h = k.buffer("h", Space::Global, DType::F16, 64).unwrap();
    let r = k.buffer("r", Space::Registers, DType::F32, 2).unwrap();
    let ta = k.tensor("a", a, &[8, 8], rm(&[8, 8])).unwrap();
    let e = k
        .tensor("x", a, &[8, 9], rm(&[8, 8]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("tensor x") && e.contains("not admitted"), "{e}");
    let e = k
        .tensor("x", a, &[8, 8], "S[(8,8):(9,1)]".parse().unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("outside buffer a of 64 elements"), "{e}");
    let e = k
        .tensor("x", a, &[64], "S[64:1@lane]".parse().unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("uses axis lane") && e.contains("has only m"),
        "{e}"
    );
    let th = k.tensor("h", h, &[8, 8], rm(&[8, 8])).unwrap();
    let e = k.copy(Scope::cta(), &th, &ta).unwrap_err().to_string();
    assert!(
        e.contains("source a is f32, the destination h is f16"),
        "{e}"
    );
    let t4 = k.tensor("a4", a, &[4, 4], rm(&[4, 4])).unwrap();
    let e = k.copy(Scope::cta(), &t4, &ta).unwrap_err().to_string();
    assert!(e.contains("shape [8, 8]") && e.contains("[4, 4]"), "{e}");
    let e = k
        .copy(Scope::warps(1..2), &ta, &ta)
        .unwrap_err()
        .to_string();
    assert!(e.contains("the launch has 1 warps"), "{e}");
    // A register tensor whose layout needs more registers than the buffer has.
    let e = k
        .tensor(
            "frag",
            r,
            &[64],
            "S[(2,32):(1@reg,1@lane)] + 1@reg".parse().unwrap(),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("outside buffer r of 2 elements"), "{e}");
    let ta64 = k.tensor("a64", a, &[64], rm(&[64])).unwrap();
    // Lanes with gaps, and more lanes than a warp has: the register variant declines, nothing else applies.
    let gappy = k
        .tensor(
            "gappy",
            r,
            &[64],
            "S[(2,32):(1@reg,2@lane)]".parse().unwrap(),
        )
        .unwrap();
    k.copy(Scope::warp(), &gappy, &ta64).unwrap();
    let e = lower(&k.build().unwrap(), Target::Sm80)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("copy.registers: the register layout's lane iters (32:2) do not split lanes"),
        "{e}"
    );
    assert!(
        e.contains("copy.vec16: the destination lives in registers"),
        "{e}"
    );
    let mut k = builder("k", 1, 32);
    let a = k.buffer("a", Space::Global, DType::F32, 64).unwrap();
    let r = k.buffer("r", Space::Registers, DType::F32, 2).unwrap();
    let wide = k
        .tensor("wide", r, &[64], "S[64:1@lane]".parse().unwrap())
        .unwrap();
    let ta64 = k.tensor("a64", a, &[64], rm(&[64])).unwrap();
    k.copy(Scope::warp(), &wide, &ta64).unwrap();
    let e = lower(&k.build().unwrap(), Target::Sm80)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("needs 64 lanes; a warp has 32, so it does not cover the tile"),
        "{e}"
    );
    assert!(KernelBuilder::new(
        "k",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 48
        }
    )
    .is_err());
    assert!(KernelBuilder::new(
        "1k",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32
        }
    )
    .is_err());
}

#[test]
fn shared_memory_over_capacity_is_refused_per_target() {
    let mut k = builder("k", 1, 32);
    k.buffer("s", Space::Shared(None), DType::F32, 200 * 256)
        .unwrap();
    let kernel = k.build().unwrap();
    let e = lower(&kernel, Target::Sm80).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the kernel needs 204800 bytes of shared memory per CTA; sm_80 has 166912"
    );
    assert!(lower(&kernel, Target::Sm90a).is_ok());
}

#[test]
fn emitted_cuda_names_each_operator_and_variant() {
    let p = lower(&staged(true, Some(Swizzle::B128)), Target::Sm90a).unwrap();
    let src = emit_cuda(&p).unwrap();
    assert!(src.contains("extern \"C\" __global__ void __launch_bounds__(128) staged(unsigned char* __restrict__ a, unsigned char* __restrict__ b)"), "{src}");
    assert!(src.contains("// copy #0 at cta scope: copy.vec4"), "{src}");
    assert!(
        src.contains("// copy #1 at warp[2..3] scope: copy.vec4"),
        "{src}"
    );
    assert!(src.contains("__syncthreads();"));
    // A 128-byte swizzle's tiles start on 1024-byte atoms: the shared memory is aligned up to one.
    assert!(
        src.contains("unsigned char* smem = (unsigned char*)((((unsigned long long)smem_raw) + 1023ull) & ~1023ull);"),
        "{src}"
    );
    assert!(
        src.contains(">> 7) & 7LL) << 4"),
        "the 128-byte swizzle is applied: {src}"
    );
}

/// a (8×8 row-major) → registers of an mma-like fragment → b (column-major), at `scope`, lowered for
/// target `t`.
fn through_registers(warps: u32, frag: &str, scope: Scope, t: Target) -> axe_kernel::Program {
    let mut k = KernelBuilder::new(
        "frag",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32 * warps,
        },
    )
    .unwrap();
    let a = k.buffer("a", Space::Global, DType::F32, 64).unwrap();
    let b = k.buffer("b", Space::Global, DType::F32, 64).unwrap();
    let r = k.buffer("r", Space::Registers, DType::F32, 2).unwrap();
    let ta = k.tensor("a", a, &[8, 8], rm(&[8, 8])).unwrap();
    let tb = k
        .tensor("b", b, &[8, 8], "S[(8,8):(1,8)]".parse().unwrap())
        .unwrap();
    let tr = k.tensor("frag", r, &[8, 8], frag.parse().unwrap()).unwrap();
    k.copy(scope.clone(), &tr, &ta).unwrap();
    k.copy(scope, &tb, &tr).unwrap();
    lower(&k.build().unwrap(), t).unwrap()
}

#[test]
fn registers_are_loaded_and_stored_by_their_layout() {
    let input: Vec<f32> = (0..64).map(|i| i as f32).collect();
    for (warps, frag, scope) in [
        (1, "S[(8,4,2):(4@lane,1@lane,1@reg)]", Scope::warp()),
        // Replicated over two warps: both load, only warp 0 stores (no race).
        (
            2,
            "S[(8,4,2):(4@lane,1@lane,1@reg)] + R[2:1@warp]",
            Scope::cta(),
        ),
        // Rows over two warps, lanes 0..16 only.
        (2, "S[(2,4,4,2):(1@warp,4@lane,1@lane,1@reg)]", Scope::cta()),
    ] {
        let p = through_registers(warps, frag, scope.clone(), Target::Cpu);
        // Loads of 2 consecutive f32 may take 8-byte vectors (copy.registers.vector).
        assert!(
            p.decisions[0].variant.starts_with("copy.registers"),
            "{:?}",
            p.decisions[0]
        );
        let out = run(&p, vec![f32s(&input), vec![0; 256]], RunLimits::default()).unwrap();
        let b = from_f32s(&out[1]);
        for i in 0..8 {
            for j in 0..8 {
                assert_eq!(b[i + 8 * j], input[8 * i + j], "{frag}: element ({i}, {j})");
            }
        }
        // CUDA is the GPU targets' (a cpu program is refused).
        let src = emit_cuda(&through_registers(warps, frag, scope, Target::Sm80)).unwrap();
        assert!(src.contains("__align__(16) unsigned char r[8];"), "{src}");
    }
}

#[test]
fn an_undeclared_variable_is_an_error_not_a_panic() {
    let mut k = builder("k", 1, 32);
    k.if_then(Expr::Var(axe_kernel::Var(7)).lt(Expr::Const(1)), |_| Ok(()))
        .unwrap();
    let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    let e = run(&p, vec![], RunLimits::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("variable v7 is used"), "{e}");
}

#[test]
fn deep_descriptions_and_large_runs_are_refused_before_they_are_walked() {
    // Blocks nested past the limit: refused by build (not a stack overflow when lowered or run).
    let mut k = builder("deep", 1, 32);
    fn nest(k: &mut KernelBuilder, n: usize) -> Result<(), KernelError> {
        if n == 0 {
            return Ok(());
        }
        k.if_then(Expr::Thread.lt(Expr::Const(64)), |k| nest(k, n - 1))
    }
    nest(&mut k, axe_kernel::MAX_NESTING).unwrap();
    assert!(
        k.build().is_ok(),
        "{} blocks deep is allowed",
        axe_kernel::MAX_NESTING
    );
    let mut k = builder("deeper", 1, 32);
    nest(&mut k, axe_kernel::MAX_NESTING + 1).unwrap();
    let e = k.build().unwrap_err();
    assert!(
        matches!(e, KernelError::TooLarge(_)) && e.to_string().contains("nested"),
        "{e}"
    );
    // An expression grown term by term: its depth is counted without recursion, and refused.
    let mut e = Expr::Thread;
    for i in 0..500 {
        e = e
            .plus(Expr::Var(axe_kernel::Var(0)))
            .times(Expr::Const(2 + i % 3));
    }
    assert_eq!(e.depth(), 1001);
    let mut k = builder("lengthy", 1, 32);
    k.let_(e);
    let err = k.build().unwrap_err();
    assert!(
        err.to_string().contains("an expression nested 1001 deep"),
        "{err}"
    );
    // A run whose buffers the interpreter cannot hold: refused before anything of their size.
    let mut k = builder("big", 1, 32);
    k.buffer("x", Space::Registers, DType::F32, 1 << 30)
        .unwrap();
    let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    assert_eq!(axe_kernel::footprint(&p).unwrap(), 32 << 32);
    let err = run(&p, vec![], RunLimits::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("the interpreter would hold 137438953472 bytes"),
        "{err}"
    );
}
