#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `copy_async_group` by `cp.async`: tiles land in shared memory (plain and swizzled) and read back as
//! the source; a read before the wait, or by another thread before a barrier, is reported; the variant
//! declines with reasons; the CUDA has `cp.async` and its groups.

use axe_kernel::{
    emit_cuda, lower, run, DType, KernelBuilder, Launch, RunLimits, Scope, Space, Swizzle, Target,
};
use axe_layout::{Axis, Layout};

#[derive(Clone, Copy, PartialEq)]
enum Read {
    /// Wait, barrier, every thread reads.
    Synced,
    /// No wait.
    NoWait,
    /// Wait but no barrier; warp 0 reads every thread's bytes.
    NoBarrier,
}

fn tile_copy(sw: Option<Swizzle>, read: Read) -> (Result<Vec<u8>, String>, Vec<u8>, String) {
    let mut k = KernelBuilder::new(
        "cp",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 128,
        },
    )
    .unwrap();
    let g = k.buffer("g", Space::Global, DType::F32, 64 * 64).unwrap();
    let o = k.buffer("o", Space::Global, DType::F32, 64 * 32).unwrap();
    let t = k
        .buffer("t", Space::Shared(sw), DType::F32, 64 * 32)
        .unwrap();
    let m = |e: &[u64], s: &[i64]| Layout::strided(e, s, &[Axis::memory(); 2]).unwrap();
    // Columns 16..48 of a [64, 64] array.
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
        .tensor("tile", t, &[64, 32], m(&[64, 32], &[32, 1]))
        .unwrap();
    let out = k
        .tensor("out", o, &[64, 32], m(&[64, 32], &[32, 1]))
        .unwrap();
    k.copy_async_group(Scope::cta(), &tile, &src).unwrap();
    k.async_commit();
    if read != Read::NoWait {
        k.async_wait(0);
    }
    let reader = if read == Read::Synced {
        k.barrier();
        Scope::cta()
    } else {
        Scope::warps(0..1)
    };
    k.copy(reader, &out, &tile).unwrap();
    let kernel = k.build().unwrap();
    let p = lower(&kernel, Target::Cpu).unwrap();
    assert_eq!(p.decisions[0].variant, "copy_async.cp_async");
    assert!(
        p.decisions[0].why.contains("16-byte vectors"),
        "{}",
        p.decisions[0].why
    );
    let input: Vec<u8> = (0..64 * 64 * 4u32).map(|i| (i * 37 + 5) as u8).collect();
    let mut want = Vec::new();
    for r in 0..64 {
        want.extend_from_slice(&input[(r * 64 + 16) * 4..(r * 64 + 48) * 4]);
    }
    let got = run(&p, vec![input, vec![0; 64 * 32 * 4]], RunLimits::default())
        .map(|o| o[1].clone())
        .map_err(|e| e.to_string());
    let cuda = emit_cuda(&lower(&kernel, Target::Sm80).unwrap()).unwrap();
    (got, want, cuda)
}

#[test]
fn tiles_land_as_the_source_plain_and_swizzled() {
    for sw in [None, Some(Swizzle::B128), Some(Swizzle::B64)] {
        let (got, want, cuda) = tile_copy(sw, Read::Synced);
        assert_eq!(got.unwrap(), want);
        assert!(cuda.contains("cp.async.cg.shared.global"), "{cuda}");
        assert!(cuda.contains("cp.async.commit_group;") && cuda.contains("cp.async.wait_group 0;"));
    }
}

#[test]
fn a_read_before_the_wait_is_reported() {
    let (got, _, _) = tile_copy(None, Read::NoWait);
    let e = got.unwrap_err();
    assert!(e.contains("without waiting"), "{e}");
}

#[test]
fn another_threads_read_before_a_barrier_is_reported() {
    // Depending on which thread the interpreter runs first, the read comes before the other thread's
    // copy (a race with no barrier between) or after it (bytes read without waiting): both are errors.
    let (got, _, _) = tile_copy(None, Read::NoBarrier);
    let e = got.unwrap_err();
    assert!(
        e.contains("without waiting") || e.contains("race on shared buffer t"),
        "{e}"
    );
}

#[test]
fn the_variants_decline_with_reasons() {
    let mut k = KernelBuilder::new(
        "bad",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )
    .unwrap();
    let a = k.buffer("a", Space::Shared(None), DType::F32, 64).unwrap();
    let b = k.buffer("b", Space::Shared(None), DType::F32, 64).unwrap();
    let l = Layout::row_major(&[64]).unwrap();
    let (ta, tb) = (
        k.tensor("a", a, &[64], l.clone()).unwrap(),
        k.tensor("b", b, &[64], l).unwrap(),
    );
    k.copy_async_group(Scope::cta(), &ta, &tb).unwrap();
    let e = lower(&k.build().unwrap(), Target::Sm80)
        .unwrap_err()
        .to_string();
    assert!(e.contains("cp.async copies global to shared memory"), "{e}");
}
