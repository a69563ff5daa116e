#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `copy_async` by the copy engine and mbarriers, on the interpreter: a box lands in shared memory in
//! its swizzle and reads back as the source (property test over boxes, strides, swizzles and element
//! sizes); reading before the wait, waiting forever, an arrival past the mbarrier's count and a box
//! leaving its array are reported; the variant declines with reasons.

use axe_kernel::{
    lower, run, DType, Expr, KernelBuilder, LStmt, Launch, Mbar, RunLimits, Scope, Space, Swizzle,
    Target,
};
use axe_layout::Layout;
use proptest::prelude::*;

/// What a test kernel does after the copy is issued.
#[derive(Clone, Copy, PartialEq)]
enum After {
    WaitThenRead,
    ReadWithoutWait,
    /// The mbarrier counts an arrival besides the copy's that never comes.
    CountOneTooMany,
    /// The issuing thread arrives twice more between announcing the copy's bytes and issuing it: the
    /// first meets the count (the phase then waits for the bytes), the second is one too many.
    ArrivalsPastTheCount,
}

/// Inserts `n` arrivals on the same mbarrier after every `MbarExpectTx` in `body`, at any depth.
fn arrive_after_expect_tx(body: &mut Vec<LStmt>, n: usize) {
    let mut i = 0;
    while i < body.len() {
        match &mut body[i] {
            LStmt::MbarExpectTx { bar, .. } => {
                let bar = bar.clone();
                for _ in 0..n {
                    body.insert(i + 1, LStmt::MbarArrive { bar: bar.clone() });
                }
                i += n;
            }
            LStmt::If { body, .. } | LStmt::For { body, .. } => arrive_after_expect_tx(body, n),
            _ => {}
        }
        i += 1;
    }
}

/// A box `[r, c]` of `dt` at row `y`, column `x` of a `[rows, s]` array copied into a shared tile with
/// `sw` by one thread's `copy_async` (by the variant `force` names, or the one dispatch picks), then
/// copied out to a `[r, c]` global array. Returns the output bytes, the box read from the source and
/// the variant.
#[allow(clippy::too_many_arguments)]
fn box_copy(
    dt: DType,
    sw: Option<Swizzle>,
    (r, c): (u64, u64),
    (rows, s): (u64, u64),
    (y, x): (u64, u64),
    after: After,
    force: Option<&'static str>,
) -> Result<(Vec<u8>, Vec<u8>, String), String> {
    let mut k = KernelBuilder::new(
        "box",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 64,
        },
    )
    .unwrap();
    let src = k.buffer("src", Space::Global, dt, rows * s).unwrap();
    let out = k.buffer("out", Space::Global, dt, r * c).unwrap();
    let tile = k.buffer("tile", Space::Shared(sw), dt, r * c).unwrap();
    let bars = k
        .buffer("bars", Space::Shared(None), DType::S64, 1)
        .unwrap();
    let m =
        |e: &[u64], st: &[i64]| Layout::strided(e, st, &[axe_layout::Axis::memory(); 2]).unwrap();
    let ts = k
        .tensor("S", src, &[r, c], m(&[r, c], &[s as i64, 1]))
        .unwrap();
    let tt = k
        .tensor("T", tile, &[r, c], m(&[r, c], &[c as i64, 1]))
        .unwrap();
    let to = k
        .tensor("O", out, &[r, c], m(&[r, c], &[c as i64, 1]))
        .unwrap();
    let bar = Mbar {
        buffer: bars,
        index: 0,
    };
    let first = || Expr::Thread.lt(Expr::Const(1));
    k.if_then(first(), |k| {
        k.mbar_init(
            bar,
            if after == After::CountOneTooMany {
                2
            } else {
                1
            },
        )?;
        k.mbar_fence_init();
        Ok(())
    })
    .unwrap();
    k.barrier();
    // The box's first element, and the largest power of two (up to 16) it is a multiple of.
    let corner = y * s + x;
    let align = if corner == 0 {
        16
    } else {
        (1 << corner.trailing_zeros()).min(16)
    };
    k.window(src, Expr::Const(corner as i64), align, |k| {
        let op = axe_kernel::Op::CopyAsync {
            dst: tt.clone(),
            src: ts.clone(),
            bar,
        };
        k.call_forced(Scope::threads(0..1), op, force).map(|_| ())
    })
    .map_err(|e| e.to_string())?;
    if after != After::ReadWithoutWait {
        k.mbar_wait(bar, Expr::Const(0)).unwrap();
    }
    k.copy(Scope::cta(), &to, &tt).unwrap();
    let mut p = lower(&k.build().unwrap(), Target::Cpu).map_err(|e| e.to_string())?;
    if after == After::ArrivalsPastTheCount {
        arrive_after_expect_tx(&mut p.body, 2);
    }
    let variant = p.decisions[0].variant.to_string();
    if let Some(f) = force {
        assert_eq!(variant, f);
    }
    let eb = dt.bytes() as u64;
    let data: Vec<u8> = (0..rows * s * eb).map(|i| (i * 7 + 3) as u8).collect();
    let outs = run(
        &p,
        vec![data.clone(), vec![0; (r * c * eb) as usize]],
        RunLimits::default(),
    )
    .map_err(|e| e.to_string())?;
    // The box, row by row, from the source.
    let mut want = Vec::new();
    for i in 0..r {
        let at = (((y + i) * s + x) * eb) as usize;
        want.extend_from_slice(&data[at..at + (c * eb) as usize]);
    }
    Ok((outs[1].clone(), want, variant))
}

/// The copy engine's variant, forced.
const TMA: Option<&str> = Some("copy_async.tma");

fn swizzle_of(i: usize) -> Option<Swizzle> {
    [
        None,
        Some(Swizzle::B32),
        Some(Swizzle::B64),
        Some(Swizzle::B128),
    ][i]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn a_box_lands_as_the_source_in_every_swizzle(
        d in 0usize..3,
        swi in 0usize..4,
        r in 1u64..12,
        chunks in 1u64..5,
        extra in 0u64..40,
        rows_extra in 0u64..6,
        xs in 0u64..1000,
    ) {
        let dt = [DType::U8, DType::BF16, DType::F32][d];
        let eb = dt.bytes() as u64;
        let sw = swizzle_of(swi);
        // Rows of a swizzle's span exactly, or of any multiple of 16 bytes without one.
        let c = sw.map_or(16 * chunks / eb, |s| s.bytes() / eb);
        // Rows of the array a multiple of 16 bytes, at least the box's.
        let s = c + (extra * 16 / eb);
        let rows = r + rows_extra;
        let (y, x) = (xs % (rows_extra + 1), xs % (s - c + 1));
        let (got, want, _) = box_copy(dt, sw, (r, c), (rows, s), (y, x), After::WaitThenRead, TMA).unwrap();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn reading_before_the_wait_is_reported() {
    let e = box_copy(
        DType::F32,
        Some(Swizzle::B128),
        (8, 32),
        (8, 32),
        (0, 0),
        After::ReadWithoutWait,
        TMA,
    )
    .unwrap_err();
    assert!(e.contains("without waiting for the mbarrier phase"), "{e}");
}

/// The error of a whole `[4, 8]` f32 array copied by the copy engine, doing `after` after the copy.
fn small_copy_error(after: After) -> String {
    box_copy(DType::F32, None, (4, 8), (4, 8), (0, 0), after, TMA).unwrap_err()
}

#[test]
fn a_wait_for_an_arrival_that_never_comes_is_a_deadlock() {
    let e = small_copy_error(After::CountOneTooMany);
    assert!(e.contains("deadlock"), "{e}");
}

#[test]
fn an_arrival_on_a_phase_that_expects_none_is_reported() {
    let e = small_copy_error(After::ArrivalsPastTheCount);
    assert!(
        e.contains("mbarrier.arrive on the mbarrier at shared byte")
            && e.contains("expects no more arrivals"),
        "{e}"
    );
}

#[test]
fn a_box_past_the_end_of_a_row_is_reported() {
    // The array's rows are 48 elements; the box of 32 starts at column 24.
    let e = box_copy(
        DType::F32,
        None,
        (2, 32),
        (4, 48),
        (0, 24),
        After::WaitThenRead,
        TMA,
    )
    .unwrap_err();
    assert!(e.contains("leaves the [4, 48] array"), "{e}");
}

#[test]
fn the_variant_declines_with_reasons() {
    let mut k = KernelBuilder::new(
        "bad",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )
    .unwrap();
    let src = k.buffer("src", Space::Global, DType::F32, 64 * 64).unwrap();
    let tile = k
        .buffer(
            "tile",
            Space::Shared(Some(Swizzle::B128)),
            DType::F32,
            64 * 32,
        )
        .unwrap();
    let bars = k
        .buffer("bars", Space::Shared(None), DType::S64, 1)
        .unwrap();
    let m =
        |e: &[u64], st: &[i64]| Layout::strided(e, st, &[axe_layout::Axis::memory(); 2]).unwrap();
    let ts = k.tensor("S", src, &[8, 64], m(&[8, 64], &[64, 1])).unwrap();
    let tt = k
        .tensor("T", tile, &[8, 64], m(&[8, 64], &[64, 1]))
        .unwrap();
    let bar = Mbar {
        buffer: bars,
        index: 0,
    };
    // Rows of 256 bytes in a 128-byte swizzle, and a warp-scope call.
    k.copy_async(Scope::threads(0..1), &tt, &ts, bar).unwrap();
    k.copy_async(Scope::warp(), &tt, &ts, bar).unwrap();
    // The copy engine declines both, saying why; cp.async on the mbarrier takes them.
    let p = lower(&k.build().unwrap(), Target::Sm90a).unwrap();
    for (d, why) in p.decisions.iter().zip([
        "a 128-byte swizzle takes rows of exactly 128 bytes",
        "the copy engine is driven by one thread",
    ]) {
        assert_eq!(d.variant, "copy_async.cp_async");
        assert_eq!(d.declined[0].0, "copy_async.tma");
        assert!(d.declined[0].1.contains(why), "{:?}", d.declined);
    }
    // An mbarrier must be an s64 element of unswizzled shared memory.
    let mut k = KernelBuilder::new(
        "bad2",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )
    .unwrap();
    let g = k.buffer("g", Space::Global, DType::S64, 1).unwrap();
    let e = k
        .mbar_init(
            Mbar {
                buffer: g,
                index: 0,
            },
            1,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("unswizzled shared s64"), "{e}");
}

/// One kernel, whichever variant copies: `copy_async` on one thread completing on an mbarrier
/// initialised for that one thread's arrival, then a wait, reads the box back under the copy engine
/// (`copy_async.tma`) and under `cp.async` (`copy_async.cp_async`), forced in turn and chosen by
/// dispatch where the copy engine declines (2-byte rows).
#[test]
fn the_same_kernel_completes_under_either_variant() {
    for (dt, (r, c), force) in [
        (DType::F32, (4, 8), Some("copy_async.tma")),
        (DType::F32, (4, 8), Some("copy_async.cp_async")),
        (DType::F16, (2, 1), None),
    ] {
        let want = force.unwrap_or("copy_async.cp_async");
        let (got, data, variant) =
            box_copy(dt, None, (r, c), (r, c), (0, 0), After::WaitThenRead, force)
                .unwrap_or_else(|e| panic!("{want}: {e}"));
        assert_eq!(variant, want);
        assert_eq!(got, data, "{want}");
    }
}
