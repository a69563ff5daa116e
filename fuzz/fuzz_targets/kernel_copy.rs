//! Kernels that copy one global array into another, directly at any scope or through shared memory
//! (optionally swizzled; by `copy`, by `cp.async` or by the copy engine on an mbarrier) or registers
//! at CTA scope, between layouts built from the input's bytes
//! (1 to 3 dims of 1 to 12, every element type, dims in any order, padded strides, offsets, a
//! broadcast source dim, a replicated destination). Law: a kernel the builder accepts and a target
//! lowers, the interpreter runs; afterwards every element of the destination (each replica) holds the
//! source element of the same index, computed here from the strides (not by `axe-layout`), and every
//! other byte of the destination is untouched. Programs lowered for a GPU emit CUDA C, and for
//! Trainium NKI text.
#![no_main]
use axe_kernel::{DType, Expr, KernelBuilder, Mbar, Scope, Space, Swizzle, Target};
use libfuzzer_sys::fuzz_target;

#[path = "kernel_common.rs"]
mod common;
use common::{builder, check, finish, indices, registers, Bytes, Memory, TYPES};

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let dt = TYPES[b.next() as usize % TYPES.len()];
    let rank = 1 + b.next() as usize % 3;
    let dims: Vec<u64> = (0..rank).map(|_| 1 + (b.next() % 12) as u64).collect();
    // 0: one copy at the scope read next; 1: through shared memory, by `copy` (2), `copy_async_group`
    // (3: cp.async) or `copy_async` on an mbarrier (4: the copy engine); 2: through registers.
    let hop = b.next() % 5;
    let (scope, grid, threads) = match (hop, b.next() % 4) {
        (0, 0) => (Scope::kernel(), 1 + (b.next() % 2) as u32, 64),
        (0, 1) => (Scope::warp(), 1, 32),
        (0, 2) => (Scope::threads(0..1), 1, 32),
        (_, k) => (Scope::cta(), 1, 32 * (1 + k as u32)),
    };
    let src = Memory::read(&mut b, &dims, true, false);
    let dst = Memory::read(&mut b, &dims, false, true);
    let w = dt.bytes() as usize;
    let mut k = builder(grid, threads);
    let mut what = format!(
        "{dt} {dims:?}: {} -> {}",
        src.layout(&dims),
        dst.layout(&dims)
    );
    let sb = k.buffer("src", Space::Global, dt, src.elems).expect("src");
    let db = k.buffer("dst", Space::Global, dt, dst.elems).expect("dst");
    let ts = k
        .tensor("S", sb, &dims, src.layout(&dims))
        .unwrap_or_else(|e| panic!("{what}: the source: {e}"));
    let td = k
        .tensor("D", db, &dims, dst.layout(&dims))
        .unwrap_or_else(|e| panic!("{what}: the destination: {e}"));
    let built = match hop {
        0 => k.copy(scope, &td, &ts).map(|_| ()),
        1 | 3 | 4 => {
            let mid = Memory::read(&mut b, &dims, false, false);
            let swizzle = [
                None,
                Some(Swizzle::B32),
                Some(Swizzle::B64),
                Some(Swizzle::B128),
            ][b.next() as usize % 4];
            let Ok(mb) = k.buffer("mid", Space::Shared(swizzle), dt, mid.elems) else {
                return;
            };
            let Ok(tm) = k.tensor("M", mb, &dims, mid.layout(&dims)) else {
                return;
            };
            what += &format!(" through shared {} ({swizzle:?}, hop {hop})", tm.layout);
            let into = match hop {
                1 => k.copy(Scope::cta(), &tm, &ts).map(|_| ()),
                3 => k.copy_async_group(Scope::cta(), &tm, &ts).map(|_| {
                    k.async_commit();
                    k.async_wait(0);
                }),
                _ => by_copy_engine(&mut k, &tm, &ts),
            };
            into.and_then(|_| {
                k.barrier();
                k.copy(Scope::cta(), &td, &tm)
            })
            .map(|_| ())
        }
        _ => {
            let (layout, regs) = registers(&mut b, &dims, u64::from(threads / 32));
            let Ok(mb) = k.buffer("mid", Space::Registers, dt, regs) else {
                return;
            };
            let Ok(tm) = k.tensor("M", mb, &dims, layout) else {
                return;
            };
            what += &format!(" through registers {} ({threads} threads)", tm.layout);
            k.copy(Scope::cta(), &tm, &ts)
                .and_then(|_| k.copy(Scope::cta(), &td, &tm))
                .map(|_| ())
        }
    };
    let Some(kernel) = finish(k, built, &what) else {
        return;
    };
    let input: Vec<u8> = (0..src.elems as usize * w)
        .map(|i| (i * 131 % 251) as u8)
        .collect();
    let blank = vec![0xabu8; dst.elems as usize * w];
    let mut want = blank.clone();
    for index in indices(&dims) {
        let s = src.places(&index)[0] * w;
        for d in dst.places(&index) {
            want[d * w..(d + 1) * w].copy_from_slice(&input[s..s + w]);
        }
    }
    check(&kernel, &Target::ALL, &[input, blank], (1, &want, w), &what);
});

/// `dst = src` by `copy_async` on thread 0 (the copy engine where it takes the tensors, else
/// `cp.async`), completing on an mbarrier thread 0 sets up for that one arrival, every thread waiting
/// for it.
fn by_copy_engine(
    k: &mut KernelBuilder,
    dst: &axe_kernel::Tensor,
    src: &axe_kernel::Tensor,
) -> axe_kernel::Result<()> {
    let bars = k.buffer("bars", Space::Shared(None), DType::S64, 1)?;
    let bar = Mbar {
        buffer: bars,
        index: 0,
    };
    let first = || Expr::Thread.lt(Expr::Const(1));
    k.if_then(first(), |k| {
        k.mbar_init(bar, 1)?;
        k.mbar_fence_init();
        Ok(())
    })?;
    k.barrier();
    k.copy_async(Scope::threads(0..1), dst, src, bar)?;
    k.mbar_wait(bar, Expr::Const(0))
}
