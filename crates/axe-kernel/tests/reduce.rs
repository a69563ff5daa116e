#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `reduce` over register tensors: every variant against brute force on random register layouts, with
//! and without replicated sources, the variant dispatch picks, the reasons variants decline, and warp
//! shuffles in the interpreter.

use axe_kernel::{
    emit_cuda, lower, run, Access, Buffer, DType, Expr, KernelBuilder, KernelError, LStmt, Launch,
    Op, Program, ReduceOp, RunLimits, Scope, Space, Target,
};
use axe_layout::Layout;
use proptest::prelude::*;

mod common;
use common::{builder, digits, layouts_replicated, warp_rows, Digit};

/// Loads `[R, C]` (row-major in global `a`) into registers with `src`, reduces `dims` into `dst`,
/// stores it row-major to global `b`; returns b, or the lowering error.
#[allow(clippy::too_many_arguments)]
fn reduce_run(
    shape: &[u64],
    src: Layout,
    dst: Layout,
    dims: &[usize],
    op: ReduceOp,
    warps: u32,
    force: Option<&str>,
    input: &[i32],
) -> Result<(Vec<i32>, Program), KernelError> {
    let mut k = KernelBuilder::new(
        "reduce_test",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32 * warps,
        },
    )?;
    let n: u64 = shape.iter().product();
    let dshape: Vec<u64> = (0..2)
        .map(|j| if dims.contains(&j) { 1 } else { shape[j] })
        .collect();
    let m: u64 = dshape.iter().product();
    let a = k.buffer("a", Space::Global, DType::S32, n)?;
    let b = k.buffer("b", Space::Global, DType::S32, m)?;
    let rs = k.buffer("rs", Space::Registers, DType::S32, n)?;
    let rd = k.buffer("rd", Space::Registers, DType::S32, n)?;
    let ta = k.tensor("a", a, shape, Layout::row_major(shape).unwrap())?;
    let tb = k.tensor("b", b, &dshape, Layout::row_major(&dshape).unwrap())?;
    let ts = k.tensor("x", rs, shape, src)?;
    let td = k.tensor("r", rd, &dshape, dst)?;
    k.copy(Scope::cta(), &ts, &ta)?;
    k.call_forced(
        Scope::cta(),
        Op::Reduce {
            op,
            dst: td.clone(),
            src: ts,
            dims: dims.to_vec(),
        },
        force,
    )?;
    k.copy(Scope::cta(), &tb, &td)?;
    let p = lower(&k.build()?, Target::Cpu)?;
    let bytes: Vec<u8> = input.iter().flat_map(|x| x.to_le_bytes()).collect();
    let out = run(
        &p,
        vec![bytes, vec![0; m as usize * 4]],
        RunLimits::default(),
    )?;
    let got = out[1]
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok((got, p))
}

/// The law by brute force: `b[i] = op over the reduced dims of a[i, j]`.
fn brute(shape: &[u64], dims: &[usize], op: ReduceOp, a: &[i32]) -> Vec<i32> {
    let (r, c) = (shape[0] as usize, shape[1] as usize);
    let (dr, dc) = (
        if dims.contains(&0) { 1 } else { r },
        if dims.contains(&1) { 1 } else { c },
    );
    let mut out: Vec<Option<i32>> = vec![None; dr * dc];
    for i in 0..r {
        for j in 0..c {
            let at = (i % dr) * dc + j % dc;
            let v = a[i * c + j];
            out[at] = Some(match (out[at], op) {
                (None, _) => v,
                (Some(x), ReduceOp::Sum) => x.wrapping_add(v),
                (Some(x), ReduceOp::Max) => x.max(v),
            });
        }
    }
    out.into_iter().map(|v| v.unwrap()).collect()
}

fn needs(digits: &[Digit], dims: &[usize], axis: usize) -> bool {
    digits
        .iter()
        .any(|d| dims.contains(&d.dim) && d.axis == axis && d.extent > 1)
}

/// Reduces `dims` of the register layout the digits make (those `replica` marks made replicas of the
/// source) with every variant: each that applies computes the law; dispatch picks the least-reaching
/// one that can, and the variants that reach less decline, saying what they would combine.
fn check_variants(
    (ds, order, warps): (&[Digit], &[usize], u32),
    dims: &[usize],
    op: ReduceOp,
    seed: u64,
    replica: &[bool],
) -> Result<(), TestCaseError> {
    let (shape, src, dst) = layouts_replicated(ds, order, dims, replica);
    let n: u64 = shape.iter().product();
    let input: Vec<i32> = (0..n)
        .map(|i| ((i.wrapping_mul(2654435761).wrapping_add(seed)) % 2001) as i32 - 1000)
        .collect();
    let want = brute(&shape, dims, op, &input);
    // The digits that index the source decide how far the reduction reaches.
    let indexing: Vec<Digit> = ds
        .iter()
        .enumerate()
        .filter(|(i, _)| replica.get(*i) != Some(&true))
        .map(|(_, d)| *d)
        .collect();
    let expect = if needs(&indexing, dims, 2) {
        "reduce.smem"
    } else if needs(&indexing, dims, 1) {
        "reduce.shfl"
    } else {
        "reduce.thread"
    };
    let run = |force: Option<&str>| {
        reduce_run(
            &shape,
            src.clone(),
            dst.clone(),
            dims,
            op,
            warps,
            force,
            &input,
        )
    };
    let (got, p) = run(None).unwrap_or_else(|e| panic!("{e}\nsrc {src}\ndst {dst}"));
    prop_assert_eq!(&got, &want, "src {} dst {}", src, dst);
    prop_assert_eq!(&p.decisions[1].variant, expect, "src {} dst {}", src, dst);
    let rank = |v: &str| {
        ["reduce.thread", "reduce.shfl", "reduce.smem"]
            .iter()
            .position(|x| *x == v)
            .unwrap()
    };
    for v in ["reduce.thread", "reduce.shfl", "reduce.smem"] {
        match run(Some(v)) {
            Ok((got, _)) => {
                prop_assert!(
                    rank(v) >= rank(expect),
                    "{v} applied where {expect} was needed"
                );
                prop_assert_eq!(&got, &want, "forced {}", v);
            }
            Err(KernelError::Forced { reason, .. }) => {
                prop_assert!(rank(v) < rank(expect), "{v} declined: {reason}");
                prop_assert!(reason.contains("would combine"), "{}", reason);
            }
            Err(e) => panic!("{v}: {e}"),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every variant against brute force on random register layouts.
    #[test]
    fn reduce_variants_equal_brute_force(
        (ds, order, warps) in digits(),
        which in 0usize..3,
        max in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let dims = [vec![0], vec![1], vec![0, 1]][which].clone();
        let op = if max { ReduceOp::Max } else { ReduceOp::Sum };
        check_variants((&ds, &order, warps), &dims, op, seed, &[])?;
    }

    /// Sources replicated over some of their lanes and warps (as the result of an earlier reduce
    /// is): each element is combined once, the butterflies skipping the bits the copies repeat on.
    #[test]
    fn replicated_sources_combine_each_element_once(
        (ds, order, warps) in digits(),
        which in 0usize..3,
        max in any::<bool>(),
        seed in any::<u64>(),
        mask in any::<u32>(),
    ) {
        let replica: Vec<bool> =
            ds.iter().enumerate().map(|(i, d)| d.axis != 0 && mask >> i & 1 == 1).collect();
        prop_assume!(replica.contains(&true));
        let dims = [vec![0], vec![1], vec![0, 1]][which].clone();
        let op = if max { ReduceOp::Max } else { ReduceOp::Sum };
        check_variants((&ds, &order, warps), &dims, op, seed, &replica)?;
    }
}

fn rows_on_warps() -> (Layout, Layout) {
    let src: Layout = "S[(4,32,2):(1@warp,1@lane,1@reg)]".parse().unwrap();
    let dst: Layout = "S[(4,1):(1@warp,1@reg)] + R[32:1@lane]".parse().unwrap();
    (src, dst)
}

#[test]
fn a_warp_per_row_sum_uses_butterfly_shuffles_in_the_emitted_cuda() {
    let (src, dst) = rows_on_warps();
    let input: Vec<i32> = (0..256).collect();
    let (got, p) = reduce_run(&[4, 64], src, dst, &[1], ReduceOp::Sum, 4, None, &input).unwrap();
    let want: Vec<i32> = (0..4).map(|r| (0..64).map(|c| r * 64 + c).sum()).collect();
    assert_eq!(got, want);
    assert_eq!(p.decisions[1].variant, "reduce.shfl");
    assert!(
        p.decisions[1].why.contains("[1, 2, 4, 8, 16]"),
        "{}",
        p.decisions[1].why
    );
    let d = &p.decisions[1].declined;
    assert_eq!(d[0].0, "reduce.thread");
    assert!(d[0].1.contains("would combine 2 of the 64"), "{}", d[0].1);
    for t in [Target::Sm80, Target::Sm90a] {
        let prog = lower(&kernel_of(&p), t).unwrap();
        let cu = emit_cuda(&prog).unwrap();
        assert_eq!(cu.matches("__shfl_xor_sync(0xffffffffu").count(), 5, "{cu}");
    }
}

/// Rebuilds the warp-per-row kernel (the description, for lowering on GPU targets).
fn kernel_of(_: &Program) -> axe_kernel::Kernel {
    let (src, dst) = rows_on_warps();
    let mut k = KernelBuilder::new(
        "rows",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 128,
        },
    )
    .unwrap();
    let rs = k.buffer("rs", Space::Registers, DType::F32, 2).unwrap();
    let rd = k.buffer("rd", Space::Registers, DType::F32, 1).unwrap();
    let ts = k.tensor("x", rs, &[4, 64], src).unwrap();
    let td = k.tensor("m", rd, &[4, 1], dst).unwrap();
    k.reduce(Scope::cta(), &td, &ts, &[1], ReduceOp::Max)
        .unwrap();
    k.build().unwrap()
}

#[test]
fn a_cta_wide_max_goes_through_shared_memory_with_barriers() {
    // [1, 256] over 4 warps × 32 lanes × 2 registers; the max is replicated over lanes and warps.
    let src: Layout = "S[(1,4,32,2):(1@reg,1@warp,1@lane,1@reg)]".parse().unwrap();
    let dst: Layout = "S[(1,1):(1@reg,1@reg)] + R[(4,32):(1@warp,1@lane)]"
        .parse()
        .unwrap();
    let input: Vec<i32> = (0..256).map(|i| (i * 37) % 251 - 100).collect();
    let (got, p) = reduce_run(&[1, 256], src, dst, &[1], ReduceOp::Max, 4, None, &input).unwrap();
    assert_eq!(got, vec![*input.iter().max().unwrap()]);
    assert_eq!(p.decisions[1].variant, "reduce.smem");
    let declined: Vec<&str> = p.decisions[1]
        .declined
        .iter()
        .map(|(v, _)| v.as_str())
        .collect();
    assert_eq!(declined, ["reduce.thread", "reduce.shfl"]);
    let barriers = |b: &[LStmt]| b.iter().filter(|s| matches!(s, LStmt::Barrier)).count();
    assert_eq!(barriers(&p.body), 2);
}

#[test]
fn bad_reductions_are_errors_saying_why() {
    let mut k = builder("bad", 1, 32);
    let g = k.buffer("g", Space::Global, DType::F32, 64).unwrap();
    let rs = k.buffer("rs", Space::Registers, DType::F32, 2).unwrap();
    let rd = k.buffer("rd", Space::Registers, DType::F32, 2).unwrap();
    let rh = k.buffer("rh", Space::Registers, DType::F16, 2).unwrap();
    let (x, m) = warp_rows(&mut k, ("x", rs), ("m", rd));
    let h = k
        .tensor(
            "h",
            rh,
            &[2, 1],
            "S[(2,1):(1@reg,1@reg)] + R[32:1@lane]".parse().unwrap(),
        )
        .unwrap();
    let gt = k
        .tensor("g", g, &[2, 32], Layout::row_major(&[2, 32]).unwrap())
        .unwrap();
    let err = |r: Result<usize, KernelError>| r.unwrap_err().to_string();
    let e = err(k.reduce(Scope::cta(), &x, &x, &[1], ReduceOp::Sum));
    assert!(e.contains("keeps them as extent 1: [2, 1]"), "{e}");
    let e = err(k.reduce(Scope::cta(), &m, &x, &[2], ReduceOp::Sum));
    assert!(e.contains("dim 2 is not a dim"), "{e}");
    let e = err(k.reduce(Scope::cta(), &m, &x, &[], ReduceOp::Sum));
    assert!(e.contains("non-empty"), "{e}");
    let e = err(k.reduce(Scope::cta(), &h, &x, &[1], ReduceOp::Sum));
    assert!(e.contains("is f32, the destination h is f16"), "{e}");
    // A global source: every variant declines, the error lists each reason.
    let gm = k
        .tensor("gm", g, &[2, 1], "S[(2,1):(32,1)]".parse().unwrap())
        .unwrap();
    k.reduce(Scope::cta(), &gm, &gt, &[1], ReduceOp::Max)
        .unwrap();
    let e = lower(&k.build().unwrap(), Target::Cpu).unwrap_err();
    let KernelError::NoVariant { declined, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(declined.len(), 3, "{e}");
    assert!(
        declined
            .iter()
            .all(|(_, r)| r.contains("lives in global memory")),
        "{e}"
    );
}

#[test]
fn a_shuffle_some_lanes_skip_is_a_divergence_error() {
    let regs = Buffer {
        name: "r".into(),
        space: Space::Registers,
        dtype: DType::F32,
        elems: 2,
    };
    let shfl = LStmt::Shuffle {
        call: 0,
        dst: Access {
            buf: 0,
            byte: Expr::Const(4),
        },
        src: Access {
            buf: 0,
            byte: Expr::Const(0),
        },
        lane_xor: 1,
        bytes: 4,
    };
    let prog = |body: Vec<LStmt>| Program {
        name: "k".into(),
        target: "cpu".into(),
        launch: Launch {
            grid: 1,
            cluster: 1,
            threads: 64,
        },
        buffers: vec![regs.clone()],
        shared_offsets: vec![0],
        shared_bytes: 0,
        vars: 0,
        body,
        decisions: vec![],
        min_ctas_per_sm: 0,
        tensor_maps: Vec::new(),
    };
    // Whole warps: fine.
    run(&prog(vec![shfl.clone()]), vec![], RunLimits::default()).unwrap();
    let p = prog(vec![LStmt::If {
        cond: Expr::Thread.modulo(Expr::Const(32)).lt(Expr::Const(16)),
        body: vec![shfl],
    }]);
    let e = run(&p, vec![], RunLimits::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("warp 0 of CTA 0 diverges") && e.contains("lane 16 is at the end"),
        "{e}"
    );
}

#[test]
fn shuffles_exchange_every_lanes_value() {
    // Each lane stores its lane index, then swaps it with lane ^ 5 and writes it to global b.
    let mut k = KernelBuilder::new(
        "swap",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )
    .unwrap();
    let b = k.buffer("b", Space::Global, DType::S32, 32).unwrap();
    let r = k.buffer("r", Space::Registers, DType::S32, 2).unwrap();
    let tb = k
        .tensor("b", b, &[32], Layout::row_major(&[32]).unwrap())
        .unwrap();
    let tr = k
        .tensor("r", r, &[32], "S[32:1@lane] + 1@reg".parse().unwrap())
        .unwrap();
    k.copy(Scope::cta(), &tr, &tb).unwrap();
    let mut p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    // Register 0 <- lane (the program's first statement writes register 1 from b; prepend the rest).
    let reg = |byte| Access {
        buf: 1,
        byte: Expr::Const(byte),
    };
    let copy_back = p.body.clone();
    p.body = vec![LStmt::Shuffle {
        call: 0,
        dst: reg(4),
        src: reg(4),
        lane_xor: 5,
        bytes: 4,
    }];
    // Load (lane value from b into reg 1), shuffle, then store reg 1 back through the same addresses.
    let mut store = copy_back.clone();
    fn swap(body: &mut [LStmt]) {
        for s in body {
            match s {
                LStmt::For { body, .. } | LStmt::If { body, .. } => swap(body),
                LStmt::Move { dst, src, .. } => std::mem::swap(dst, src),
                _ => {}
            }
        }
    }
    swap(&mut store);
    let mut body = copy_back;
    body.append(&mut p.body);
    body.extend(store);
    p.body = body;
    let input: Vec<u8> = (0..32i32).flat_map(|i| i.to_le_bytes()).collect();
    let out = run(&p, vec![input], RunLimits::default()).unwrap();
    let got: Vec<i32> = out[0]
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let want: Vec<i32> = (0..32).map(|l| l ^ 5).collect();
    assert_eq!(got, want);
}

/// A thread's f32 registers are summed pairwise: `[2^24, 1, 1, …]` keeps the ones that a running
/// sum would round away one by one (2^24 + 1 rounds to 2^24).
#[test]
fn a_threads_f32_registers_are_summed_pairwise() {
    for (n, want) in [(4u64, 16_777_218f32), (8, 16_777_222.0), (3, 16_777_216.0)] {
        let mut k = KernelBuilder::new(
            "pairwise",
            Launch {
                grid: 1,
                cluster: 1,
                threads: 32,
            },
        )
        .unwrap();
        let a = k.buffer("a", Space::Global, DType::F32, 32 * n).unwrap();
        let b = k.buffer("b", Space::Global, DType::F32, 32).unwrap();
        let rs = k.buffer("rs", Space::Registers, DType::F32, n).unwrap();
        let rd = k.buffer("rd", Space::Registers, DType::F32, 1).unwrap();
        let ta = k
            .tensor("a", a, &[32, n], Layout::row_major(&[32, n]).unwrap())
            .unwrap();
        let tb = k
            .tensor("b", b, &[32, 1], Layout::row_major(&[32, 1]).unwrap())
            .unwrap();
        let src: Layout = format!("S[(32,{n}):(1@lane,1@reg)]").parse().unwrap();
        let dst: Layout = "S[(32,1):(1@lane,1@reg)]".parse().unwrap();
        let ts = k.tensor("x", rs, &[32, n], src).unwrap();
        let td = k.tensor("r", rd, &[32, 1], dst).unwrap();
        k.copy(Scope::warp(), &ts, &ta).unwrap();
        k.reduce(Scope::warp(), &td, &ts, &[1], ReduceOp::Sum)
            .unwrap();
        k.copy(Scope::warp(), &tb, &td).unwrap();
        let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
        assert_eq!(p.decisions[1].variant, "reduce.thread");
        let row: Vec<f32> = (0..n)
            .map(|j| if j == 0 { 16_777_216.0 } else { 1.0 })
            .collect();
        let bytes: Vec<u8> = (0..32)
            .flat_map(|_| row.iter().flat_map(|x| x.to_le_bytes()))
            .collect();
        let out = run(&p, vec![bytes, vec![0; 128]], RunLimits::default()).unwrap();
        for c in out[1].chunks(4) {
            assert_eq!(
                f32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                want,
                "{n} registers"
            );
        }
    }
}

#[test]
fn a_reduce_of_a_reduced_result_folds_one_copy_per_thread() {
    // The row sums of an earlier reduce, replicated over the warp's 32 lanes, summed again: each
    // thread folds its own copies; no shuffle, which would add each lane's copy 32 times.
    let input = [5, -7];
    let (got, p) = reduce_run(
        &[2, 1],
        "S[(2,1):(1@reg,1@reg)] + R[32:1@lane]".parse().unwrap(),
        "S[(1,1):(1@reg,1@reg)] + R[32:1@lane]".parse().unwrap(),
        &[0],
        ReduceOp::Sum,
        1,
        None,
        &input,
    )
    .unwrap();
    assert_eq!(got, [-2]);
    assert_eq!(p.decisions[1].variant, "reduce.thread");
    // A row over the lanes of each of two warps, the same in both: lanes combine, warps do not.
    let input: Vec<i32> = (0..32).map(|i| i * i - 100).collect();
    let row_on_two_warps = |dst: &str| {
        reduce_run(
            &[1, 32],
            "S[(1,32):(1@reg,1@lane)] + R[2:1@warp]".parse().unwrap(),
            dst.parse().unwrap(),
            &[1],
            ReduceOp::Sum,
            2,
            None,
            &input,
        )
    };
    let (got, p) = row_on_two_warps("S[(1,1):(1@reg,1@reg)] + R[(32,2):(1@lane,1@warp)]").unwrap();
    assert_eq!(got, [input.iter().sum::<i32>()]);
    assert_eq!(p.decisions[1].variant, "reduce.shfl");
    // The same source into a destination on the lanes only: warp 1's copies have nowhere to go.
    let e = row_on_two_warps("S[(1,1):(1@reg,1@reg)] + R[32:1@lane]")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("has no copy in thread 32 (lane 0, warp 1)")
            && e.contains("over those the source's copies occupy"),
        "{e}"
    );
    assert!(
        p.decisions[1].why.contains("xor shuffles [1, 2, 4, 8, 16]"),
        "{}",
        p.decisions[1].why
    );
}
