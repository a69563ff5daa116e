#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Register tensors: vectorised copies against brute-force widths, windows, pointwise operands.

use axe_kernel::{
    lower, run, DType, Expr, KernelBuilder, KernelError, Launch, Op, Program, RunLimits, Scope,
    Space, Target,
};
use axe_layout::{Axis, Layout};
use proptest::prelude::*;

mod common;
use common::{digits, layouts};

/// The widest vector (4 or 2 s32) by brute force over elements: every element in a register `r ≡ 0
/// (mod w)` is at a flat index (= its row-major memory offset) `≡ 0 (mod w)`, and the next `w - 1`
/// elements sit in the same thread's next `w - 1` registers.
fn brute_width(l: &Layout, n: u64) -> Option<u64> {
    let (lane, warp, reg) = (
        Axis::new("lane").unwrap(),
        Axis::new("warp").unwrap(),
        Axis::new("reg").unwrap(),
    );
    let place = |x: u64| {
        let c = l.base_at(x).unwrap();
        (c.get(&warp) * 32 + c.get(&lane), c.get(&reg))
    };
    let regs: u64 = l
        .shard()
        .iter()
        .filter(|it| it.axis() == &reg)
        .map(|it| it.extent())
        .product();
    [4u64, 2].into_iter().find(|&w| {
        regs.is_multiple_of(w)
            && (0..n).all(|x| {
                let (t, r) = place(x);
                r % w as i64 != 0
                    || (x % w == 0
                        && (1..w).all(|i| x + i < n && place(x + i) == (t, r + i as i64)))
            })
    })
}

/// Global `a` → registers (`load` forced or not) → global `b` (`store` forced or not), all at CTA scope.
fn round_trip(
    shape: &[u64],
    l: Layout,
    warps: u32,
    load: Option<&str>,
    store: Option<&str>,
) -> Result<(Vec<i32>, Program), KernelError> {
    let mut k = KernelBuilder::new(
        "round_trip",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32 * warps,
        },
    )?;
    let n: u64 = shape.iter().product();
    let a = k.buffer("a", Space::Global, DType::S32, n)?;
    let b = k.buffer("b", Space::Global, DType::S32, n)?;
    let r = k.buffer("r", Space::Registers, DType::S32, n)?;
    let ta = k.tensor("a", a, shape, Layout::row_major(shape).unwrap())?;
    let tb = k.tensor("b", b, shape, Layout::row_major(shape).unwrap())?;
    let tr = k.tensor("r", r, shape, l)?;
    k.call_forced(
        Scope::cta(),
        Op::Copy {
            dst: tr.clone(),
            src: ta,
        },
        load,
    )?;
    k.call_forced(Scope::cta(), Op::Copy { dst: tb, src: tr }, store)?;
    let p = lower(&k.build()?, Target::Cpu)?;
    let input: Vec<u8> = (0..n as i32).flat_map(|i| i.to_le_bytes()).collect();
    let out = run(
        &p,
        vec![input, vec![0; n as usize * 4]],
        RunLimits::default(),
    )?;
    let got = out[1]
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Ok((got, p))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Vectorised register copies move every element to its place, in vectors exactly when a thread's
    /// innermost registers are consecutive columns (the register digit of stride 1 is innermost in the
    /// row and its extent gives the width).
    #[test]
    fn vector_register_copies_round_trip((ds, order, warps) in digits()) {
        let (shape, src, _) = layouts(&ds, &order, &[1]);
        let n: i32 = shape.iter().product::<u64>() as i32;
        let want: Vec<i32> = (0..n).collect();
        let (got, p) = round_trip(&shape, src.clone(), warps, None, None).unwrap();
        prop_assert_eq!(&got, &want, "{}", src);
        let width = brute_width(&src, shape.iter().product());
        for (i, dec) in p.decisions.iter().enumerate() {
            match width {
                Some(w) => {
                    prop_assert_eq!(&dec.variant, "copy.registers.vector", "{}: {:?}", src, dec);
                    // "1 vector of 16 bytes", "2 vectors of 16 bytes".
                    let bytes = format!(" of {} bytes per thread", w * 4);
                    prop_assert!(dec.why.contains(&bytes) && dec.why.contains(" vector"), "{}: {:?}", src, dec);
                }
                None => prop_assert_eq!(&dec.variant, "copy.registers", "{} copy {}: {:?}", src, i, dec),
            }
        }
    }
}

/// Inside a window, dispatch picks the widest vectors the window's base keeps aligned: a base that is
/// a multiple of 4 f32 takes 16-byte vectors, of 2 f32 8-byte ones, of 1 one f32 at a time; forcing a wider
/// variant is an error that says why.
#[test]
fn a_window_narrows_vectors_to_its_alignment() {
    let mut k = KernelBuilder::new("win", k_launch()).unwrap();
    let a = k.buffer("a", Space::Global, DType::F32, 256).unwrap();
    let b = k.buffer("b", Space::Global, DType::F32, 256).unwrap();
    let ta = k
        .tensor("a", a, &[128], Layout::row_major(&[128]).unwrap())
        .unwrap();
    let tb = k
        .tensor("b", b, &[128], Layout::row_major(&[128]).unwrap())
        .unwrap();
    let windowed = |align: u64, force: Option<&str>| {
        let mut k2 = KernelBuilder::new("win", k_launch()).unwrap();
        let a2 = k2.buffer("a", Space::Global, DType::F32, 256).unwrap();
        let _ = k2.buffer("b", Space::Global, DType::F32, 256).unwrap();
        k2.window(a2, Expr::Const(align as i64 * 8), align, |k| {
            let call = Op::Copy {
                dst: tb.clone(),
                src: ta.clone(),
            };
            k.call_forced(Scope::cta(), call, force).map(|_| ())
        })
        .unwrap();
        lower(&k2.build().unwrap(), Target::Cpu)
    };
    for (align, variant) in [(4, "copy.vec16"), (2, "copy.vec8"), (1, "copy.vec4")] {
        let p = windowed(align, None).unwrap();
        assert_eq!(p.decisions[0].variant, variant, "align {align}");
        // The base moved the source by 8 · align elements: b[i] = a[8 · align + i].
        let input: Vec<u8> = (0..256i32).flat_map(|i| i.to_le_bytes()).collect();
        let out = run(&p, vec![input, vec![0; 1024]], RunLimits::default()).unwrap();
        let got: Vec<i32> = out[1][..512]
            .chunks(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let from = 8 * align as i32;
        assert_eq!(
            got,
            (from..from + 128).collect::<Vec<i32>>(),
            "align {align}"
        );
    }
    let e = windowed(2, Some("copy.vec16")).unwrap_err().to_string();
    assert!(
        e.contains(
            "16-byte vectors through the window over a, whose base is a multiple of only 8 bytes"
        ),
        "{e}"
    );
    assert!(k.window(a, Expr::Const(0), 0, |_| Ok(())).is_err());
    let r = k.buffer("r", Space::Registers, DType::F32, 1).unwrap();
    assert!(k.window(r, Expr::Const(0), 1, |_| Ok(())).is_err());
}

fn k_launch() -> Launch {
    Launch {
        grid: 1,
        cluster: 1,
        threads: 32,
    }
}

#[test]
fn register_pointwise_operands_must_sit_in_the_computing_thread() {
    let mut k = KernelBuilder::new("pw", k_launch()).unwrap();
    let r = k.buffer("r", Space::Registers, DType::F32, 2).unwrap();
    let q = k.buffer("q", Space::Registers, DType::F32, 2).unwrap();
    let x = k
        .tensor("x", r, &[64], "S[(32,2):(1@lane,1@reg)]".parse().unwrap())
        .unwrap();
    // The same elements, lanes reversed in pairs: element i is in lane (i/2) ^ 1.
    let y = k
        .tensor(
            "y",
            q,
            &[64],
            "S[(16,2,2):(2@lane,1@reg,1@lane)]".parse().unwrap(),
        )
        .unwrap();
    k.call(
        Scope::warp(),
        Op::Binary {
            op: axe_kernel::BinaryOp::Add,
            dst: x.clone(),
            a: x.clone(),
            b: y,
        },
    )
    .unwrap();
    let e = lower(&k.build().unwrap(), Target::Cpu)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("binary.registers: element 1 of y has no copy in thread 0"),
        "{e}"
    );
}

#[test]
fn division_is_floating_point_only() {
    for (d, ok) in [(DType::F32, true), (DType::S32, false)] {
        let mut k = KernelBuilder::new("div", k_launch()).unwrap();
        let a = k.buffer("a", Space::Global, d, 32).unwrap();
        let b = k.buffer("b", Space::Global, d, 32).unwrap();
        let t = |k: &KernelBuilder, n: &str, buf| {
            k.tensor(n, buf, &[32], Layout::row_major(&[32]).unwrap())
                .unwrap()
        };
        let (ta, tb) = (t(&k, "a", a), t(&k, "b", b));
        k.call(
            Scope::cta(),
            Op::Binary {
                op: axe_kernel::BinaryOp::Div,
                dst: ta.clone(),
                a: ta,
                b: tb,
            },
        )
        .unwrap();
        match lower(&k.build().unwrap(), Target::Cpu) {
            Ok(p) => {
                assert!(ok);
                let xs: Vec<f32> = (1..=32).map(|i| i as f32).collect();
                let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
                let out = run(
                    &p,
                    vec![bytes(&xs), bytes(&[3.0; 32])],
                    RunLimits::default(),
                )
                .unwrap();
                for (i, c) in out[0].chunks(4).enumerate() {
                    assert_eq!(f32::from_le_bytes([c[0], c[1], c[2], c[3]]), xs[i] / 3.0);
                }
            }
            Err(e) => {
                assert!(!ok);
                assert!(
                    e.to_string()
                        .contains("division needs a floating-point dtype"),
                    "{e}"
                );
            }
        }
    }
}

/// A store from registers into a replicated destination writes every copy, whichever register layout
/// holds the elements (a broadcast source too); each copy holds the source's elements. Before, only
/// the first copy was written and the second kept what was there.
#[test]
fn stores_from_registers_write_every_copy_of_a_replicated_destination() {
    let m = |t: &str| -> Layout { t.parse().unwrap() };
    for (src, regs, held) in [
        ("S[(8,4):(0,1)]", "S[(8,4):(1@lane,1@reg)]", 4),
        ("S[(8,4):(4,1)]", "S[(8,4):(1@lane,1@reg)]", 4),
        ("S[(8,4):(4,1)]", "S[(8,4):(4@reg,1@reg)]", 32),
        ("S[(8,4):(4,1)]", "S[(8,4):(1@lane,8@lane)]", 1),
        ("S[(8,4):(4,1)]", "S[(8,4):(1@warp,1@lane)]", 1),
    ] {
        let mut k = KernelBuilder::new(
            "replicas",
            Launch {
                grid: 1,
                cluster: 1,
                threads: 256,
            },
        )
        .unwrap();
        let sb = k.buffer("src", Space::Global, DType::F32, 32).unwrap();
        let db = k.buffer("dst", Space::Global, DType::F32, 64 + 8).unwrap();
        let rb = k.buffer("r", Space::Registers, DType::F32, held).unwrap();
        let ts = k.tensor("S", sb, &[8, 4], m(src)).unwrap();
        let tr = k.tensor("R", rb, &[8, 4], m(regs)).unwrap();
        let td = k
            .tensor("D", db, &[8, 4], m("S[(8,4):(4,1)] + 3 + R[2:36]"))
            .unwrap();
        k.copy(Scope::cta(), &tr, &ts).unwrap();
        k.copy(Scope::cta(), &td, &tr).unwrap();
        let p = lower(&k.build().unwrap(), Target::Cpu).unwrap();
        assert_eq!(p.decisions[1].variant, "copy.registers", "{regs}");
        let input: Vec<u8> = (0..32u32).flat_map(|i| (i as f32).to_le_bytes()).collect();
        let out = run(&p, vec![input, vec![0xab; 72 * 4]], RunLimits::default()).unwrap();
        let got: Vec<[u8; 4]> = out[1].chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
        let broadcast = src.contains(":(0,");
        for (at, v) in got.iter().enumerate() {
            let want = match at {
                3..=34 | 39..=70 => {
                    let i = (at - 3) % 36;
                    let x = if broadcast { i % 4 } else { i };
                    (x as f32).to_le_bytes()
                }
                _ => [0xab; 4],
            };
            assert_eq!(*v, want, "{src} via {regs}: element {at}");
        }
    }
}
