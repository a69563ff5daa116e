#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Elementwise operators in memory read every source element before writing: a source sharing the
//! destination's memory must be exactly in place; one overlapping it otherwise is refused when the
//! call is written (threads side by side would overwrite what others still read).

use axe_kernel::{
    lower, run, BinaryOp, DType, KernelBuilder, Op, RunLimits, Scope, Space, Target, UnaryOp,
};
use axe_layout::Layout;

mod common;
use common::f32s;

/// A kernel builder for one CTA of a warp.
fn builder() -> KernelBuilder {
    common::builder("k", 1, 32)
}

#[test]
fn a_copy_onto_its_own_source_shifted_is_refused() {
    // a[1..64] = a[0..63]: thread 1 read a[1] after thread 0 had written it, so the interpreter
    // gave a[2] = a[0] (the law: the old a[1]); on a GPU the order is anyone's.
    for space in [Space::Global, Space::Shared(None)] {
        let mut k = builder();
        let a = k.buffer("a", space, DType::F32, 64).unwrap();
        let src = k
            .tensor("src", a, &[63], Layout::row_major(&[63]).unwrap())
            .unwrap();
        let dst = k
            .tensor("dst", a, &[63], "S[63:1] + 1".parse().unwrap())
            .unwrap();
        let e = k.copy(Scope::kernel(), &dst, &src).unwrap_err().to_string();
        assert!(
            e.contains("copy #0: the destination dst and the source src overlap in one buffer (m 1..=63 and 0..=62)"),
            "{e}"
        );
        // Reversed in place, and a destination whose replica lands on the source, likewise.
        let rev = k
            .tensor("rev", a, &[64], "S[64:-1] + 63".parse().unwrap())
            .unwrap();
        let all = k
            .tensor("all", a, &[64], Layout::row_major(&[64]).unwrap())
            .unwrap();
        let op = Op::Unary {
            op: UnaryOp::Neg,
            dst: rev,
            src: all.clone(),
        };
        assert!(k.call(Scope::kernel(), op).is_err());
        let half = k
            .tensor("half", a, &[32], Layout::row_major(&[32]).unwrap())
            .unwrap();
        let twice = k
            .tensor("twice", a, &[32], "S[32:1] + R[2:32]".parse().unwrap())
            .unwrap();
        assert!(k.copy(Scope::kernel(), &twice, &half).is_err());
    }
}

#[test]
fn exactly_in_place_and_apart_in_one_buffer_are_computed() {
    // x = x + y in place (one layout written two ways), and z, apart in the same buffer, = -x.
    let mut k = builder();
    let a = k.buffer("a", Space::Global, DType::F32, 96).unwrap();
    let x = k
        .tensor("x", a, &[4, 8], Layout::row_major(&[4, 8]).unwrap())
        .unwrap();
    let x2 = k
        .tensor(
            "x2",
            a,
            &[4, 8],
            "S[(2,2,8):(16,8,1)]".parse::<Layout>().unwrap(),
        )
        .unwrap();
    let y = k
        .tensor("y", a, &[4, 8], "S[(4,8):(8,1)] + 32".parse().unwrap())
        .unwrap();
    let z = k
        .tensor("z", a, &[4, 8], "S[(4,8):(8,1)] + 64".parse().unwrap())
        .unwrap();
    let add = Op::Binary {
        op: BinaryOp::Add,
        dst: x.clone(),
        a: x2,
        b: y,
    };
    k.call(Scope::kernel(), add).unwrap();
    k.barrier();
    let neg = Op::Unary {
        op: UnaryOp::Neg,
        dst: z,
        src: x,
    };
    k.call(Scope::kernel(), neg).unwrap();
    let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
    let input: Vec<f32> = (0..96).map(|i| i as f32).collect();
    let out = run(&p, vec![f32s(&input)], RunLimits::default()).unwrap();
    let mut want = input.clone();
    for i in 0..32 {
        want[i] = input[i] + input[32 + i];
        want[64 + i] = -want[i];
    }
    assert_eq!(out[0], f32s(&want));
}
