//! Kernels that load a global array into registers, `reduce` (sum or max) some of its dims at warp
//! or CTA scope, and store the result (the reduced dims kept with extent 1) to a global array, between
//! layouts built from the input's bytes (see `kernel_common.rs`): the source's register layout puts
//! each dim (a power of two) on `reg`, `lane` or `warp`, the result's holds replicas on the threads
//! of reduced dims.
//! Values are small integers, so sums are exact in every order. Law: a kernel the builder accepts and
//! a target lowers, the interpreter runs; afterwards every element of the destination (each replica)
//! holds the sum or max, over the reduced dims, of the source's elements, computed here, and every
//! other byte of the destination is untouched.
#![no_main]
use axe_kernel::reduce::ReduceOp;
use axe_kernel::{DType, Scope, Space, Target};
use libfuzzer_sys::fuzz_target;

#[path = "kernel_common.rs"]
mod common;
use common::{builder, check, finish, indices, Bytes, Memory, Registers};

/// `x` (a small integer) in `dt`'s little-endian bytes.
fn encode(dt: DType, x: i64) -> Vec<u8> {
    match dt {
        DType::F64 => (x as f64).to_le_bytes().to_vec(),
        DType::F32 => (x as f32).to_le_bytes().to_vec(),
        _ => (x as i32).to_le_bytes().to_vec(),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let dt = [DType::F32, DType::F64, DType::S32][b.next() as usize % 3];
    let op = [ReduceOp::Sum, ReduceOp::Max][b.next() as usize % 2];
    let rank = 1 + b.next() as usize % 3;
    // Powers of two up to 32, so that register layouts can fill a warp's lanes and a CTA's warps
    // with their dims alone (a replicated source is not reduced).
    let dims: Vec<u64> = (0..rank).map(|_| 1 << (b.next() % 6)).collect();
    if dims.iter().product::<u64>() > 4096 {
        return;
    }
    let mask = match b.next() & ((1 << rank) - 1) {
        0 => 1 << (rank - 1),
        m => m,
    };
    let reduced: Vec<bool> = (0..rank).map(|d| mask >> d & 1 == 1).collect();
    let along: Vec<usize> = (0..rank).filter(|&d| reduced[d]).collect();
    let kept: Vec<u64> = (0..rank)
        .map(|d| if reduced[d] { 1 } else { dims[d] })
        .collect();
    let (scope, threads) = match b.next() % 4 {
        0 => (Scope::warp(), 32),
        k => (Scope::cta(), 32 * k as u32),
    };
    let src = Memory::read(&mut b, &dims, true, false);
    let dst = Memory::read(&mut b, &kept, false, true);
    let regs = Registers::read(&mut b, &dims, u64::from(threads / 32));
    if regs.regs > 255 {
        // More registers than a CUDA thread has (and slow to plan in a fuzzing build).
        return;
    }
    let (ls, ld) = (regs.layout(&dims, &[]), regs.layout(&dims, &reduced));
    let what = format!(
        "{op:?} {dt} {dims:?} over {along:?}: {} -> {ls} -> {ld} -> {} ({threads} threads, {scope:?})",
        src.layout(&dims),
        dst.layout(&kept)
    );
    let mut k = builder(1, threads);
    let sb = k.buffer("a", Space::Global, dt, src.elems).expect("a");
    let db = k.buffer("d", Space::Global, dt, dst.elems).expect("d");
    let ts = k
        .tensor("A", sb, &dims, src.layout(&dims))
        .unwrap_or_else(|e| panic!("{what}: the source: {e}"));
    let td = k
        .tensor("D", db, &kept, dst.layout(&kept))
        .unwrap_or_else(|e| panic!("{what}: the destination: {e}"));
    let (Ok(ra), Ok(rd)) = (
        k.buffer("ra", Space::Registers, dt, regs.regs),
        k.buffer("rd", Space::Registers, dt, regs.regs),
    ) else {
        return;
    };
    let (Ok(tra), Ok(trd)) = (k.tensor("RA", ra, &dims, ls), k.tensor("RD", rd, &kept, ld)) else {
        return;
    };
    let built = k
        .copy(scope.clone(), &tra, &ts)
        .and_then(|_| k.reduce(scope.clone(), &trd, &tra, &along, op))
        .and_then(|_| k.copy(scope.clone(), &td, &trd));
    let Some(kernel) = finish(k, built, &what) else {
        return;
    };
    let w = dt.bytes() as usize;
    let value = |p: usize| ((p * 7 + 3) % 13) as i64 - 6;
    let input: Vec<u8> = (0..src.elems as usize)
        .flat_map(|p| encode(dt, value(p)))
        .collect();
    let blank = vec![0xabu8; dst.elems as usize * w];
    let mut want = blank.clone();
    let mut acc = std::collections::HashMap::new();
    for index in indices(&dims) {
        let v = value(src.places(&index)[0]);
        let at: Vec<u64> = (0..rank)
            .map(|d| if reduced[d] { 0 } else { index[d] })
            .collect();
        let e = acc.entry(at).or_insert(match op {
            ReduceOp::Sum => 0,
            ReduceOp::Max => i64::MIN,
        });
        *e = match op {
            ReduceOp::Sum => *e + v,
            ReduceOp::Max => (*e).max(v),
        };
    }
    for (at, v) in &acc {
        for d in dst.places(at) {
            want[d * w..(d + 1) * w].copy_from_slice(&encode(dt, *v));
        }
    }
    check(
        &kernel,
        &[Target::Cpu, Target::Sm80, Target::Sm90a],
        &[input, blank],
        (1, &want, w),
        &what,
    );
});
