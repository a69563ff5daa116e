#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The index-range analysis contains every value an expression takes, by brute force over all
//! assignments of small variable ranges; and a relayout too large for 32-bit offsets keeps 64-bit ones.

use std::collections::HashMap;

use axe_kernel::range::{range_of, Interval};
use axe_kernel::relayout::relayout_kernel;
use axe_kernel::{emit_cuda, emit_cuda_with, lower, BinOp, Expr, IndexWidth, Target, Var};
use proptest::prelude::*;

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        (-40i64..40).prop_map(Expr::Const),
        (0u32..2).prop_map(|v| Expr::Var(Var(v))),
        Just(Expr::Thread),
        Just(Expr::Cta),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        let op = prop_oneof![
            Just(BinOp::Add),
            Just(BinOp::Sub),
            Just(BinOp::Mul),
            Just(BinOp::Div),
            Just(BinOp::Rem),
            Just(BinOp::Lt),
            Just(BinOp::And),
        ];
        (op, inner.clone(), inner).prop_map(|(o, a, b)| Expr::Bin(o, Box::new(a), Box::new(b)))
    })
}

/// C's value of `e` (truncating division), `None` on division by zero.
fn eval(e: &Expr, v: [i64; 2], tid: i64, cta: i64) -> Option<i128> {
    Some(match e {
        Expr::Const(c) => i128::from(*c),
        Expr::Var(x) => i128::from(v[x.0 as usize]),
        Expr::Thread => i128::from(tid),
        Expr::Cta => i128::from(cta),
        Expr::Bin(op, a, b) => {
            let (a, b) = (eval(a, v, tid, cta)?, eval(b, v, tid, cta)?);
            match op {
                BinOp::Add => a + b,
                BinOp::Sub => a - b,
                BinOp::Mul => a * b,
                BinOp::Div => a.checked_div(b)?,
                BinOp::Rem => a.checked_rem(b)?,
                BinOp::Lt => i128::from(a < b),
                BinOp::And => i128::from(a != 0 && b != 0),
            }
        }
    })
}

fn subexprs<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    out.push(e);
    if let Expr::Bin(_, a, b) = e {
        subexprs(a, out);
        subexprs(b, out);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn every_value_lies_in_its_range(
        e in expr(),
        r0 in (-6i64..6, 0i64..6),
        r1 in (-6i64..6, 0i64..6),
        threads in 1i64..5,
        grid in 1i64..4,
    ) {
        let ranges: [Interval; 2] = [
            (i128::from(r0.0), i128::from(r0.0 + r0.1)),
            (i128::from(r1.0), i128::from(r1.0 + r1.1)),
        ];
        let vars: HashMap<Var, Interval> = [(Var(0), ranges[0]), (Var(1), ranges[1])].into();
        let (t, c) = ((0, i128::from(threads - 1)), (0, i128::from(grid - 1)));
        let mut all = Vec::new();
        subexprs(&e, &mut all);
        for s in all {
            let (lo, hi) = range_of(s, &vars, t, c);
            for a in r0.0..=r0.0 + r0.1 {
                for b in r1.0..=r1.0 + r1.1 {
                    for tid in 0..threads {
                        for cta in 0..grid {
                            if let Some(x) = eval(s, [a, b], tid, cta) {
                                prop_assert!(lo <= x && x <= hi, "{s} = {x} at v0={a} v1={b} tid={tid} cta={cta}, outside {lo}..={hi}");
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn offsets_past_two_gib_keep_64_bit_indices() {
    let shape = |s: &str| axe_xla::parse_shape(s).unwrap().as_array().unwrap().clone();
    let small =
        relayout_kernel(&shape("f32[8192,8192]{1,0}"), &shape("f32[8192,8192]{0,1}")).unwrap();
    let big = relayout_kernel(
        &shape("f32[32768,32768]{1,0}"),
        &shape("f32[32768,32768]{0,1}"),
    )
    .unwrap();
    let src = |k: &axe_kernel::Kernel| {
        emit_cuda_with(&lower(k, Target::Sm90a).unwrap(), IndexWidth::Narrow).unwrap()
    };
    assert!(src(&small.kernel).contains("const unsigned tid"));
    // 4 GiB buffers: byte offsets need 64 bits.
    let b = src(&big.kernel);
    assert!(b.contains("const long long tid"), "{b}");
    // The default is 64-bit.
    let d = emit_cuda(&lower(&small.kernel, Target::Sm90a).unwrap()).unwrap();
    assert!(d.contains("const long long tid"));
}
