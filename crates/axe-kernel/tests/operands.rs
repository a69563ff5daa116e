#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! What a call takes as operands: tensors of its own kernel within their buffers, fill values that are
//! values of the dtype, and views of any size (counted without overflow).

use axe_kernel::{lower, run, DType, KernelError, Op, RunLimits, Scope, Space, Target, Value};

mod common;
use common::{builder, rm};

#[test]
fn a_broadcast_of_near_i64_max_elements_lowers_without_overflow() {
    // A stride-0 view of i64::MAX elements over a 4-element buffer: counting the rounds of its
    // elements over the scope's threads must not overflow (it did: `chunks + threads - 1`).
    for (shape, lay) in [
        (i64::MAX as u64, "S[9223372036854775807:0]"),
        (i64::MAX as u64 - 1, "S[9223372036854775806:0]"),
    ] {
        let mut k = builder("broadcast", 1, 32);
        let a = k.buffer("a", Space::Global, DType::F32, 4).unwrap();
        let c = k.buffer("c", Space::Global, DType::F32, 4).unwrap();
        let ta = k.tensor("a", a, &[shape], lay.parse().unwrap()).unwrap();
        let tc = k.tensor("c", c, &[shape], lay.parse().unwrap()).unwrap();
        k.copy(Scope::kernel(), &tc, &ta).unwrap();
        k.fill(Scope::warp(), &tc, Value::Float(1.0)).unwrap();
        let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
        // Running it is bounded by the step limit.
        let e = run(&p, vec![vec![0; 16], vec![0; 16]], RunLimits::default()).unwrap_err();
        assert!(matches!(e, KernelError::TooLarge(_)), "{e}");
    }
}

#[test]
fn a_tensor_of_another_kernel_or_edited_out_of_its_buffer_is_refused_at_the_call() {
    // Kernel `a`'s tensors name its buffers by index; in kernel `b` index 0 is a smaller f16 buffer,
    // which the emitted CUDA would have read out of bounds.
    let mut ka = builder("a", 1, 32);
    let ga = ka.buffer("g", Space::Global, DType::F32, 64).unwrap();
    let ha = ka.buffer("h", Space::Global, DType::F32, 64).unwrap();
    let tg = ka.tensor("g", ga, &[64], rm(&[64])).unwrap();
    let th = ka.tensor("h", ha, &[64], rm(&[64])).unwrap();
    let mut kb = builder("b", 1, 32);
    kb.buffer("x", Space::Global, DType::F16, 16).unwrap();
    kb.buffer("y", Space::Global, DType::F32, 16).unwrap();
    // The destination h (buffer #1) fits y's dtype but not its size; the source g (#0) is f32 where x
    // is f16.
    let e = kb.copy(Scope::cta(), &th, &tg).unwrap_err().to_string();
    assert!(
        e.contains("copy #0: tensor h: its layout S[64:1] reaches m elements 0..=63, outside buffer y of 16 elements"),
        "{e}"
    );
    let e = kb.copy(Scope::cta(), &tg, &tg).unwrap_err().to_string();
    assert!(
        e.contains("copy #0: tensor g: it is f32 in global memory, but buffer #0 of kernel b is x (f16 in global memory)"),
        "{e}"
    );
    let mut kc = builder("c", 1, 32);
    let e = kc.fill(Scope::cta(), &tg, Value::Float(0.0)).unwrap_err();
    assert!(e.to_string().contains("kernel c has no buffer #0"), "{e}");
    // A tensor whose public layout was edited to leave its buffer.
    let g = kc.buffer("g", Space::Global, DType::F32, 16).unwrap();
    let mut t = kc.tensor("g", g, &[16], rm(&[16])).unwrap();
    t.layout = "S[16:4]".parse().unwrap();
    let e = kc.fill(Scope::cta(), &t, Value::Float(0.0)).unwrap_err();
    assert!(
        e.to_string().contains("outside buffer g of 16 elements"),
        "{e}"
    );
    // An mbarrier given through `call` is checked as `copy_async` checks it.
    let s = kc.buffer("s", Space::Shared(None), DType::F32, 16).unwrap();
    let ts = kc.tensor("s", s, &[16], rm(&[16])).unwrap();
    let tg = kc.tensor("g", g, &[16], rm(&[16])).unwrap();
    let bar = axe_kernel::Mbar {
        buffer: g,
        index: 0,
    };
    let op = Op::CopyAsync {
        dst: ts,
        src: tg,
        bar,
    };
    let e = kc.call(Scope::threads(0..1), op).unwrap_err();
    assert!(
        e.to_string().contains("unswizzled shared s64 buffer"),
        "{e}"
    );
}

#[test]
fn a_fill_value_outside_the_integer_dtype_is_refused() {
    // 2^63 as a float passed `f <= i64::MAX as f64` (which rounds to 2^63) and was written as
    // i64::MAX; values the dtype has are written exactly.
    let fill = |d: DType, v: Value| {
        let mut k = builder("f", 1, 32);
        let a = k.buffer("a", Space::Global, d, 4).unwrap();
        let t = k.tensor("a", a, &[4], rm(&[4])).unwrap();
        k.fill(Scope::cta(), &t, v).unwrap();
        let p = lower(&k.build()?, Target::Cpu)?;
        let out = run(
            &p,
            vec![vec![0; 4 * d.bytes() as usize]],
            RunLimits::default(),
        )?;
        Ok::<_, KernelError>(out[0][..d.bytes() as usize].to_vec())
    };
    let e = fill(DType::S64, Value::Float(2f64.powi(63)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("is not a s64 value"), "{e}");
    let e = fill(DType::S32, Value::Float(2147483648.0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("is not a s32 value"), "{e}");
    let got = fill(DType::S64, Value::Float(-(2f64.powi(63)))).unwrap();
    assert_eq!(got, i64::MIN.to_le_bytes());
    let got = fill(DType::S64, Value::Float(2f64.powi(63) - 1024.0)).unwrap();
    assert_eq!(got, 9_223_372_036_854_774_784i64.to_le_bytes());
}

#[test]
fn a_shared_tensor_at_kernel_scope_is_refused_on_a_grid_of_several_ctas() {
    // A kernel-scope copy into shared memory spread its elements over both CTAs, so CTA 0's tile
    // held only the half its own threads copied (the other half stayed 0), silently.
    let copy_in = |grid: u32| {
        let mut k = builder("k", grid, 32);
        let g = k.buffer("g", Space::Global, DType::F32, 256).unwrap();
        let o = k.buffer("o", Space::Global, DType::F32, 256).unwrap();
        let s = k.buffer("s", Space::Shared(None), DType::F32, 256).unwrap();
        let tg = k.tensor("g", g, &[256], rm(&[256])).unwrap();
        let to = k.tensor("o", o, &[256], rm(&[256])).unwrap();
        let ts = k.tensor("s", s, &[256], rm(&[256])).unwrap();
        k.copy(Scope::kernel(), &ts, &tg)?;
        k.barrier();
        let cta0 = Scope {
            level: axe_kernel::Level::Cta,
            units: Some(0..1),
        };
        k.copy(cta0, &to, &ts)?;
        let p = lower(&k.build()?, Target::Cpu)?;
        let input: Vec<u8> = (0..256).flat_map(|i| (i as f32).to_le_bytes()).collect();
        let out = run(&p, vec![input.clone(), vec![0; 1024]], RunLimits::default())?;
        Ok::<_, KernelError>(out[1] == input)
    };
    let e = copy_in(2).unwrap_err().to_string();
    assert!(
        e.contains("copy #0: at kernel scope the work is spread over the 2 CTAs of the grid, but shared tensor s is each CTA's own"),
        "{e}"
    );
    // One CTA: the kernel is that CTA.
    assert!(copy_in(1).unwrap());
}
