#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The interpreter reports races on global memory whichever access it runs first: a read of bytes
//! another thread wrote, or a write over bytes another thread read, with no barrier between (or in
//! another CTA); a thread reading back its own writes, replicated destinations and shared sources
//! are no races.

use axe_kernel::{lower, run, DType, KernelError, RunLimits, Scope, Space, Target};

mod common;
use common::{builder, f32s, rm};

const N: u64 = 512;

fn from_f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// `b = a`, then `c = reverse(b)`, at `scope` on `grid` CTAs of 128 threads, with or without a
/// barrier between.
fn copy_then_reversed(grid: u32, scope: Scope, barrier: bool) -> axe_kernel::Program {
    let mut k = builder("reverse", grid, 128);
    let a = k.buffer("a", Space::Global, DType::F32, N).unwrap();
    let b = k.buffer("b", Space::Global, DType::F32, N).unwrap();
    let c = k.buffer("c", Space::Global, DType::F32, N).unwrap();
    let ta = k.tensor("a", a, &[N], rm(&[N])).unwrap();
    let tb = k.tensor("b", b, &[N], rm(&[N])).unwrap();
    let rev = k
        .tensor(
            "rev_b",
            b,
            &[N],
            format!("S[{N}:-1] + {}", N - 1).parse().unwrap(),
        )
        .unwrap();
    let tc = k.tensor("c", c, &[N], rm(&[N])).unwrap();
    k.copy(scope.clone(), &tb, &ta).unwrap();
    if barrier {
        k.barrier();
    }
    k.copy(scope, &tc, &rev).unwrap();
    lower(&k.build().unwrap(), Target::Cpu).unwrap()
}

fn inputs() -> (Vec<f32>, Vec<Vec<u8>>) {
    let a: Vec<f32> = (0..N).map(|i| i as f32 + 1.0).collect();
    let bytes = vec![f32s(&a), vec![0; 4 * N as usize], vec![0; 4 * N as usize]];
    (a, bytes)
}

#[test]
fn reading_what_another_thread_wrote_with_no_barrier_is_a_race() {
    let p = copy_then_reversed(1, Scope::kernel(), false);
    let e = run(&p, inputs().1, RunLimits::default()).unwrap_err();
    let KernelError::Run { op, message } = &e else {
        panic!("{e}")
    };
    // Thread 0 reads the last elements before thread 127 writes them: the write is reported, naming
    // both calls, the byte and its element.
    assert!(op.starts_with("copy #0"), "{e}");
    assert!(message.contains("race on global buffer b"), "{e}");
    assert!(message.contains("writes byte"), "{e}");
    assert!(message.contains("(element "), "{e}");
    assert!(message.contains("read in copy #1"), "{e}");
    assert!(message.contains("with no barrier between"), "{e}");
}

#[test]
fn reading_what_another_cta_wrote_is_a_race_even_after_a_barrier() {
    // At kernel scope over two CTAs the first copy's 16-byte vectors all go to CTA 0, and CTA 1 reads
    // some of them in the second: a barrier orders one CTA's threads only.
    let p = copy_then_reversed(2, Scope::kernel(), true);
    let e = run(&p, inputs().1, RunLimits::default()).unwrap_err();
    let m = e.to_string();
    assert!(m.contains("race on global buffer b"), "{m}");
    assert!(m.contains("in another CTA"), "{m}");
    assert!(m.contains("thread 0 of CTA 1 reads"), "{m}");
    assert!(m.contains("of CTA 0 wrote in copy #0"), "{m}");
    let p = copy_then_reversed(2, Scope::kernel(), false);
    let e = run(&p, inputs().1, RunLimits::default()).unwrap_err();
    assert!(e.to_string().contains("race on global buffer b"), "{e}");
}

#[test]
fn a_barrier_between_the_write_and_the_reads_orders_them() {
    let p = copy_then_reversed(1, Scope::cta(), true);
    let (a, bytes) = inputs();
    let out = run(&p, bytes, RunLimits::default()).unwrap();
    let c = from_f32s(&out[2]);
    for i in 0..N as usize {
        assert_eq!(c[i], a[N as usize - 1 - i]);
    }
}

#[test]
fn a_thread_reading_back_its_own_writes_is_no_race() {
    // The same copy twice over one destination and back, element for element: each thread touches
    // only its own elements.
    let mut k = builder("own", 2, 128);
    let a = k.buffer("a", Space::Global, DType::F32, N).unwrap();
    let b = k.buffer("b", Space::Global, DType::F32, N).unwrap();
    let c = k.buffer("c", Space::Global, DType::F32, N).unwrap();
    let ta = k.tensor("a", a, &[N], rm(&[N])).unwrap();
    let tb = k.tensor("b", b, &[N], rm(&[N])).unwrap();
    let tc = k.tensor("c", c, &[N], rm(&[N])).unwrap();
    k.copy(Scope::kernel(), &tb, &ta).unwrap();
    k.copy(Scope::kernel(), &tc, &tb).unwrap();
    k.copy(Scope::kernel(), &tb, &tc).unwrap();
    let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    let (a, bytes) = inputs();
    let out = run(&p, bytes, RunLimits::default()).unwrap();
    assert_eq!(from_f32s(&out[1]), a);
    assert_eq!(from_f32s(&out[2]), a);
}

#[test]
fn replicated_writes_then_reads_are_no_race() {
    // b holds a twice (a destination replica 256 elements on); c reads the second copy, d the first
    // one broadcast to every warp's threads: the thread that wrote an element wrote both copies, and
    // any number of threads may read one byte.
    let half = N / 2;
    let mut k = builder("replicas", 1, 128);
    let a = k.buffer("a", Space::Global, DType::F32, half).unwrap();
    let b = k.buffer("b", Space::Global, DType::F32, N).unwrap();
    let c = k.buffer("c", Space::Global, DType::F32, half).unwrap();
    let d = k.buffer("d", Space::Global, DType::F32, N).unwrap();
    let ta = k.tensor("a", a, &[half], rm(&[half])).unwrap();
    let tb = k
        .tensor(
            "b",
            b,
            &[half],
            format!("S[{half}:1] + R[2:{half}]").parse().unwrap(),
        )
        .unwrap();
    let second = k
        .tensor(
            "second",
            b,
            &[half],
            format!("S[{half}:1] + {half}").parse().unwrap(),
        )
        .unwrap();
    let tc = k.tensor("c", c, &[half], rm(&[half])).unwrap();
    let first_twice = k
        .tensor(
            "first_twice",
            b,
            &[2, half],
            format!("S[(2,{half}):(0,1)]").parse().unwrap(),
        )
        .unwrap();
    let td = k.tensor("d", d, &[2, half], rm(&[2, half])).unwrap();
    k.copy(Scope::cta(), &tb, &ta).unwrap();
    k.copy(Scope::cta(), &tc, &second).unwrap();
    k.barrier();
    k.copy(Scope::cta(), &td, &first_twice).unwrap();
    let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    let av: Vec<f32> = (0..half).map(|i| i as f32 * 0.5).collect();
    let out = run(
        &p,
        vec![
            f32s(&av),
            vec![0; 4 * N as usize],
            vec![0; 4 * half as usize],
            vec![0; 4 * N as usize],
        ],
        RunLimits::default(),
    )
    .unwrap();
    let twice: Vec<f32> = av.iter().chain(&av).copied().collect();
    assert_eq!(from_f32s(&out[1]), twice);
    assert_eq!(from_f32s(&out[2]), av);
    assert_eq!(from_f32s(&out[3]), twice);
}

/// `c = a`, then `a = reverse(b)`, at CTA scope on one CTA of 128 threads, with or without a barrier
/// between: threads overwrite elements of a that other threads read.
fn read_then_overwrite(barrier: bool) -> axe_kernel::Program {
    let mut k = builder("war", 1, 128);
    let a = k.buffer("a", Space::Global, DType::F32, N).unwrap();
    let b = k.buffer("b", Space::Global, DType::F32, N).unwrap();
    let c = k.buffer("c", Space::Global, DType::F32, N).unwrap();
    let ta = k.tensor("a", a, &[N], rm(&[N])).unwrap();
    let rev = k
        .tensor(
            "rev_a",
            a,
            &[N],
            format!("S[{N}:-1] + {}", N - 1).parse().unwrap(),
        )
        .unwrap();
    let tb = k.tensor("b", b, &[N], rm(&[N])).unwrap();
    let tc = k.tensor("c", c, &[N], rm(&[N])).unwrap();
    k.copy(Scope::cta(), &tc, &ta).unwrap();
    if barrier {
        k.barrier();
    }
    k.copy(Scope::cta(), &rev, &tb).unwrap();
    lower(&k.build().unwrap(), Target::Cpu).unwrap()
}

#[test]
fn overwriting_what_another_thread_read_is_a_race() {
    // Run in thread order, a later thread overwrites elements an earlier one read (or reads elements
    // an earlier one overwrote): either way both calls are named.
    let e = run(
        &read_then_overwrite(false),
        inputs().1,
        RunLimits::default(),
    )
    .unwrap_err();
    let KernelError::Run { op, message } = &e else {
        panic!("{e}")
    };
    assert!(message.contains("race on global buffer a"), "{e}");
    let calls = format!("{op} {message}");
    assert!(
        calls.contains("copy #0") && calls.contains("copy #1"),
        "{e}"
    );
    // With a barrier between, it is ordered, and a holds b reversed.
    let (_, mut bytes) = inputs();
    let bv: Vec<f32> = (0..N).map(|i| i as f32 * 2.0).collect();
    bytes[1] = f32s(&bv);
    let out = run(&read_then_overwrite(true), bytes, RunLimits::default()).unwrap();
    let a = from_f32s(&out[0]);
    for i in 0..N as usize {
        assert_eq!(a[i], bv[N as usize - 1 - i]);
    }
}

/// `b = a` by warp 0, then `b = c` by warp 1 with no barrier between (64 f32, one CTA of 64
/// threads), `b` global or shared; `c` holds `a`'s values (`same`) or others.
fn written_twice(shared: bool, same: bool) -> (axe_kernel::Program, Vec<Vec<u8>>) {
    let n = 64;
    let mut k = builder("waw", 1, 64);
    let a = k.buffer("a", Space::Global, DType::F32, n).unwrap();
    let c = k.buffer("c", Space::Global, DType::F32, n).unwrap();
    let space = if shared {
        Space::Shared(None)
    } else {
        Space::Global
    };
    let b = k.buffer("b", space, DType::F32, n).unwrap();
    let ta = k.tensor("a", a, &[n], rm(&[n])).unwrap();
    let tc = k.tensor("c", c, &[n], rm(&[n])).unwrap();
    let tb = k.tensor("b", b, &[n], rm(&[n])).unwrap();
    k.copy(Scope::warps(0..1), &tb, &ta).unwrap();
    k.copy(Scope::warps(1..2), &tb, &tc).unwrap();
    let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    let av: Vec<f32> = (0..n).map(|i| i as f32 + 0.5).collect();
    let cv: Vec<f32> = av.iter().map(|v| if same { *v } else { -v }).collect();
    let mut inputs = vec![f32s(&av), f32s(&cv)];
    if !shared {
        inputs.push(vec![0; 4 * n as usize]);
    }
    (p, inputs)
}

/// Two threads writing one element with no barrier between race in the CUDA memory model whatever
/// the values; the report says which it found: equal values (benign in practice, either order leaves
/// the same bytes) or different ones.
#[test]
fn a_write_after_write_is_a_race_whose_report_says_whether_the_values_are_equal() {
    for shared in [false, true] {
        let buffer = if shared { "shared" } else { "global" };
        for same in [true, false] {
            let (p, inputs) = written_twice(shared, same);
            let e = run(&p, inputs, RunLimits::default()).unwrap_err();
            let KernelError::Run { op, message } = &e else {
                panic!("{e}")
            };
            assert!(op.starts_with("copy #1"), "{e}");
            assert!(
                message.contains(&format!("race on {buffer} buffer b")),
                "{e}"
            );
            let (says, not) = if same {
                ("a write-after-write of equal values", "different values")
            } else {
                ("a write-after-write of different values", "equal values")
            };
            assert!(message.contains(says), "{e}");
            assert!(!message.contains(not), "{e}");
            assert_eq!(
                message.contains("a data race in the CUDA memory model"),
                same,
                "{e}"
            );
        }
    }
}
