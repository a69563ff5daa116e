#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `copy_async(dst, src, bar)` by `cp.async` completing on an mbarrier
//! (`cp.async.mbarrier.arrive.noinc`): the tile lands for every thread that waited for the phase (no
//! CTA barrier), plain and swizzled, copied by the CTA or by one warp; reads before the wait and init
//! counts that do not match the arrivals are reported; the CUDA for sm_80 and sm_90a has the arrive
//! and compiles.

use axe_kernel::{
    emit_cuda, lower, run, DType, Expr, KernelBuilder, LStmt, Launch, Mbar, Program, RunLimits,
    Scope, Space, Swizzle, Target,
};
use axe_layout::{Axis, Layout};

mod sass;

#[derive(Clone, Copy, PartialEq)]
enum Case {
    /// Init with the scope's thread count, wait, read.
    Good,
    /// Read without waiting.
    NoWait,
    /// Init with this many arrivals instead.
    Count(u32),
}

/// Columns 16..48 of a `[64, 64]` f32 array into a `[64, 32]` shared tile by `copy_async` at
/// `scope` (whose threads number `arrivals`), then every thread waits and copies the tile out.
fn program(sw: Option<Swizzle>, scope: Scope, arrivals: u32, case: Case, t: Target) -> Program {
    let mut k = KernelBuilder::new(
        "cpmbar",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 128,
        },
    )
    .unwrap();
    let g = k.buffer("g", Space::Global, DType::F32, 64 * 64).unwrap();
    let o = k.buffer("o", Space::Global, DType::F32, 64 * 32).unwrap();
    let tb = k
        .buffer("t", Space::Shared(sw), DType::F32, 64 * 32)
        .unwrap();
    let bars = k
        .buffer("bars", Space::Shared(None), DType::S64, 1)
        .unwrap();
    let bar = Mbar {
        buffer: bars,
        index: 0,
    };
    let m = |e: &[u64], s: &[i64]| Layout::strided(e, s, &[Axis::memory(); 2]).unwrap();
    let src = k
        .tensor(
            "src",
            g,
            &[64, 32],
            m(&[64, 32], &[64, 1])
                .with_offset(&axe_layout::Coord::on(Axis::memory(), 16))
                .unwrap(),
        )
        .unwrap();
    let tile = k
        .tensor("tile", tb, &[64, 32], m(&[64, 32], &[32, 1]))
        .unwrap();
    let out = k
        .tensor("out", o, &[64, 32], m(&[64, 32], &[32, 1]))
        .unwrap();
    let count = match case {
        Case::Count(c) => c,
        _ => arrivals,
    };
    k.if_then(Expr::Thread.lt(Expr::Const(1)), |k| k.mbar_init(bar, count))
        .unwrap();
    k.barrier();
    k.copy_async(scope, &tile, &src, bar).unwrap();
    if case != Case::NoWait {
        k.mbar_wait(bar, Expr::Const(0)).unwrap();
    }
    k.copy(Scope::cta(), &out, &tile).unwrap();
    lower(&k.build().unwrap(), t).unwrap()
}

fn source() -> Vec<u8> {
    (0..64 * 64 * 4u32).map(|i| (i * 13 + 5) as u8).collect()
}

fn want() -> Vec<u8> {
    let g = source();
    (0..64)
        .flat_map(|r| g[(r * 64 + 16) * 4..(r * 64 + 48) * 4].to_vec())
        .collect()
}

fn go(p: &Program) -> Result<Vec<u8>, String> {
    run(
        p,
        vec![source(), vec![0; 64 * 32 * 4]],
        RunLimits::default(),
    )
    .map(|o| o[1].clone())
    .map_err(|e| e.to_string())
}

#[test]
fn the_tile_lands_for_every_thread_that_waited_for_the_phase() {
    for sw in [None, Some(Swizzle::B128)] {
        for (scope, arrivals) in [(Scope::cta(), 128), (Scope::warps(1..2), 32)] {
            let p = program(sw, scope, arrivals, Case::Good, Target::Cpu);
            let d = &p.decisions[0];
            assert_eq!(d.variant, "copy_async.cp_async");
            assert!(
                d.why.contains("cp.async.mbarrier.arrive.noinc"),
                "{}",
                d.why
            );
            assert!(d.why.contains("16-byte"), "{}", d.why);
            assert_eq!(d.declined[0].0, "copy_async.tma", "{:?}", d.declined);
            assert_eq!(
                go(&p).unwrap(),
                want(),
                "swizzle {sw:?}, {arrivals} arrivals"
            );
        }
    }
}

#[test]
fn reading_before_the_wait_is_reported() {
    let p = program(None, Scope::cta(), 128, Case::NoWait, Target::Cpu);
    let e = go(&p).unwrap_err();
    assert!(e.contains("without waiting for the mbarrier phase"), "{e}");
}

#[test]
fn an_init_count_off_the_arrivals_is_reported() {
    // More expected arrivals than threads arrive: the phase never completes.
    let p = program(None, Scope::cta(), 128, Case::Count(129), Target::Cpu);
    let e = go(&p).unwrap_err();
    assert!(e.contains("deadlock"), "{e}");
    // Fewer: the extra arrivals run into the next phase, whose parity-0 wait then never returns.
    let p = program(None, Scope::cta(), 128, Case::Count(64), Target::Cpu);
    assert!(go(&p).is_err());
}

#[test]
fn the_cuda_arrives_on_the_mbarrier_and_compiles_for_sm_80_and_sm_90a() {
    for t in [Target::Sm80, Target::Sm90a] {
        let p = program(None, Scope::cta(), 128, Case::Good, t);
        assert_eq!(p.decisions[0].variant, "copy_async.cp_async");
        let cu = emit_cuda(&p).unwrap();
        assert_eq!(
            cu.matches("cp.async.mbarrier.arrive.noinc.shared.b64")
                .count(),
            1,
            "{cu}"
        );
        assert!(cu.contains("cp.async.cg.shared.global"), "{cu}");
        let wait = if t == Target::Sm80 {
            "mbarrier.test_wait.parity"
        } else {
            "mbarrier.try_wait.parity"
        };
        assert!(cu.contains(wait), "{cu}");
        assert!(!cu.contains("fence.mbarrier_init") || t == Target::Sm90a);
        let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv");
        let Some(lib) = axe_kernel::nvrtc::find_nvrtc(&venv) else {
            eprintln!("skipped compiling: no NVRTC under {}", venv.display());
            continue;
        };
        let c = axe_kernel::nvrtc::compile_here(&lib, &cu, "cpmbar", t.arch().unwrap())
            .unwrap_or_else(|e| panic!("{e}\n{cu}"));
        assert!(
            c.ptx.contains("cp.async.mbarrier.arrive.noinc"),
            "{}",
            c.ptx
        );
        assert!(c.cubin.starts_with(b"\x7fELF"));
        // LDGSTS for the cp.asyncs, and the arrive that tracks them.
        if let Some(sass) = sass::sass(&c.cubin, &format!("cpmbar_{t}")) {
            assert!(sass.contains("LDGSTS.E.BYPASS.128"), "{sass}");
            assert!(sass.contains("ARRIVES.LDGSTSBAR.64"), "{sass}");
        }
    }
}

/// Two tiles through one shared buffer and one mbarrier: the first completes phase 0, the second
/// phase 1 (waited by parity); each lands whole for every thread, one warp copying.
#[test]
fn a_second_phase_carries_a_second_tile() {
    let mut k = KernelBuilder::new(
        "phases",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 128,
        },
    )
    .unwrap();
    let g = k.buffer("g", Space::Global, DType::F32, 2 * 1024).unwrap();
    let o = k.buffer("o", Space::Global, DType::F32, 2 * 1024).unwrap();
    let tb = k
        .buffer("t", Space::Shared(None), DType::F32, 1024)
        .unwrap();
    let bars = k
        .buffer("bars", Space::Shared(None), DType::S64, 1)
        .unwrap();
    let bar = Mbar {
        buffer: bars,
        index: 0,
    };
    let l = Layout::row_major(&[32, 32]).unwrap();
    let half = |k: &mut KernelBuilder, b, i: u64| {
        k.tensor(
            &format!("h{i}"),
            b,
            &[32, 32],
            l.clone()
                .with_offset(&axe_layout::Coord::on(Axis::memory(), (i * 1024) as i64))
                .unwrap(),
        )
        .unwrap()
    };
    let (g0, g1) = (half(&mut k, g, 0), half(&mut k, g, 1));
    let (o0, o1) = (half(&mut k, o, 0), half(&mut k, o, 1));
    let tile = k.tensor("tile", tb, &[32, 32], l.clone()).unwrap();
    k.if_then(Expr::Thread.lt(Expr::Const(1)), |k| k.mbar_init(bar, 32))
        .unwrap();
    k.barrier();
    for (phase, (gi, oi)) in [(&g0, &o0), (&g1, &o1)].into_iter().enumerate() {
        k.copy_async(Scope::warps(2..3), &tile, gi, bar).unwrap();
        k.mbar_wait(bar, Expr::Const(phase as i64)).unwrap();
        k.copy(Scope::cta(), oi, &tile).unwrap();
        k.barrier();
    }
    let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    let data: Vec<u8> = (0..2 * 1024 * 4u32).map(|i| (i * 31 + 7) as u8).collect();
    let out = run(
        &p,
        vec![data.clone(), vec![0; 2 * 1024 * 4]],
        RunLimits::default(),
    )
    .unwrap();
    assert_eq!(out[1], data);
}

/// One CTA of 32 threads: thread 0 inits mbarrier 0 for `count` arrivals, a barrier, then (written
/// into the lowered program by hand, as a program of one's own or a variant of one's own may) thread 0
/// announces `bytes` transaction bytes `times` times. Nobody waits.
fn announcing(count: u32, bytes: u32, times: usize, t: Target) -> Program {
    let mut k = KernelBuilder::new(
        "tx",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )
    .unwrap();
    let bars = k
        .buffer("bars", Space::Shared(None), DType::S64, 1)
        .unwrap();
    let bar = Mbar {
        buffer: bars,
        index: 0,
    };
    k.if_then(Expr::Thread.lt(Expr::Const(1)), |k| k.mbar_init(bar, 1))
        .unwrap();
    k.barrier();
    let mut p = lower(&k.build().unwrap(), t).unwrap();
    let at = axe_kernel::Access {
        buf: bars.0,
        byte: Expr::Const(0),
    };
    let LStmt::If { body, .. } = &mut p.body[0] else {
        panic!("{:?}", p.body[0])
    };
    let LStmt::MbarInit { count: c, .. } = &mut body[0] else {
        panic!("{body:?}")
    };
    *c = count;
    let tx = (0..times)
        .map(|_| LStmt::MbarExpectTx {
            bar: at.clone(),
            bytes,
        })
        .collect();
    p.body.push(LStmt::If {
        cond: Expr::Thread.lt(Expr::Const(1)),
        body: tx,
    });
    p
}

/// Law: a transaction count is a `u32` (never negative) and one `expect_tx` announces at most
/// 2^20 - 1 bytes, an init counts 1 to 2^20 - 1 arrivals (PTX's ranges): a program outside them is
/// refused by the interpreter and by the CUDA emission before either runs it.
#[test]
fn mbarrier_counts_outside_ptx_ranges_are_refused_before_either_backend() {
    let max = (1 << 20) - 1;
    assert!(run(
        &announcing(1, max, 1, Target::Cpu),
        vec![],
        RunLimits::default()
    )
    .is_ok());
    assert!(emit_cuda(&announcing(1, max, 1, Target::Sm90a)).is_ok());
    for (count, bytes, says) in [
        (1, max + 1, "mbarrier.expect_tx of 1048576 bytes"),
        (1, u32::MAX, "mbarrier.expect_tx of 4294967295 bytes"),
        (0, 0, "mbarrier.init with 0 arrivals"),
        (max + 1, 0, "mbarrier.init with 1048576 arrivals"),
    ] {
        let e = run(
            &announcing(count, bytes, 1, Target::Cpu),
            vec![],
            RunLimits::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains(says), "{e}");
        let e = emit_cuda(&announcing(count, bytes, 1, Target::Sm90a))
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{e}");
    }
}

/// Law: the interpreter's pending transaction count is checked arithmetic within ±(2^20 - 1): two
/// announcements of 2^20 - 1 bytes on one phase are an error, never a count the hardware cannot hold.
#[test]
fn pending_transaction_bytes_past_the_mbarrier_range_are_an_error() {
    let max = (1 << 20) - 1;
    let e = run(
        &announcing(1, max, 2, Target::Cpu),
        vec![],
        RunLimits::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("mbarrier.expect_tx of 1048575 bytes takes the transaction count"),
        "{e}"
    );
    assert!(e.contains("from 1048575 past ±1048575"), "{e}");
}
