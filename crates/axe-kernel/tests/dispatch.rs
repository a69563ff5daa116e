#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Dispatch: vector widths computed from the layouts, declines with reasons, forcing, errors.

use axe_kernel::copy::widest;
use axe_kernel::{
    lower, DType, KernelBuilder, KernelError, Launch, Op, Scope, Space, Target, Tensor,
};
use axe_layout::{Axis, Coord, Iter, Layout};
use proptest::prelude::*;

fn launch(threads: u32) -> Launch {
    Launch {
        grid: 1,
        cluster: 1,
        threads,
    }
}

/// A kernel copying `src` to `dst` (layouts on `m`, shape `shape`) at CTA scope.
fn copy_kernel(
    dtype: DType,
    shape: &[u64],
    src: Layout,
    dst: Layout,
    force: Option<&str>,
) -> axe_kernel::Result<axe_kernel::Kernel> {
    let mut k = KernelBuilder::new("k", launch(64))?;
    let a = k.buffer("a", Space::Global, dtype, 4096)?;
    let b = k.buffer("b", Space::Global, dtype, 4096)?;
    let s = k.tensor("a", a, shape, src)?;
    let d = k.tensor("b", b, shape, dst)?;
    k.call_forced(Scope::cta(), Op::Copy { dst: d, src: s }, force)?;
    k.build()
}

fn parse(s: &str) -> Layout {
    s.parse().expect("layout")
}

#[test]
fn vector_width_golden() {
    let cases = [
        // (dtype, shape, src, dst, variant)
        (
            DType::F32,
            vec![8, 8],
            "S[(8,8):(8,1)]",
            "S[(8,8):(8,1)]",
            "copy.vec16",
        ),
        (
            DType::F32,
            vec![8, 8],
            "S[(8,8):(8,1)]",
            "S[(8,4,2):(8,2,1)] + 2",
            "copy.vec8",
        ),
        (
            DType::F32,
            vec![8, 8],
            "S[(8,8):(8,1)]",
            "S[(8,8):(1,8)]",
            "copy.staged",
        ),
        (
            DType::BF16,
            vec![8, 8],
            "S[(8,8):(8,1)]",
            "S[(8,4,2):(16,4,1)]",
            "copy.vec4",
        ),
        (
            DType::BF16,
            vec![4, 16],
            "S[(4,16):(16,1)]",
            "S[(4,16):(32,1)] + 8",
            "copy.vec16",
        ),
        (
            DType::U8,
            vec![4, 4],
            "S[(4,4):(4,1)] + 1",
            "S[(4,4):(4,1)]",
            "copy.element",
        ),
    ];
    for (dt, shape, s, d, want) in cases {
        let p = lower(
            &copy_kernel(dt, &shape, parse(s), parse(d), None).unwrap(),
            Target::Sm80,
        )
        .unwrap();
        assert_eq!(
            p.decisions[0].variant, want,
            "{s} -> {d}: {:?}",
            p.decisions[0]
        );
    }
}

#[test]
fn a_declining_variant_says_why() {
    let k = copy_kernel(
        DType::F32,
        &[8, 8],
        parse("S[(8,8):(8,1)]"),
        parse("S[(8,4,2):(16,4,1)]"),
        None,
    )
    .unwrap();
    let p = lower(&k, Target::Sm90a).unwrap();
    assert_eq!(p.decisions[0].variant, "copy.vec8");
    let d = &p.decisions[0];
    assert_eq!(d.declined[0].0, "copy.vec16");
    assert_eq!(
        d.declined[0].1,
        "16-byte vectors need 4 contiguous f32 in both layouts, aligned to 4 elements; the destination's innermost contiguous run is 2 elements"
    );
    let k = copy_kernel(
        DType::F32,
        &[8, 8],
        parse("S[(8,8):(1,8)]"),
        parse("S[(8,8):(8,1)]"),
        None,
    )
    .unwrap();
    let d = &lower(&k, Target::Sm80).unwrap().decisions[0];
    assert!(
        d.declined[0]
            .1
            .ends_with("the source's innermost stride is 8"),
        "{:?}",
        d.declined
    );
    let k = copy_kernel(
        DType::F32,
        &[8, 8],
        parse("S[(8,8):(8,1)] + 1"),
        parse("S[(8,8):(8,1)]"),
        None,
    )
    .unwrap();
    let d = &lower(&k, Target::Sm80).unwrap().decisions[0];
    assert!(
        d.declined[0]
            .1
            .ends_with("the source starts at element 1, not a multiple of 4"),
        "{:?}",
        d.declined
    );
}

#[test]
fn a_forced_variant_is_used_or_refused_with_its_reason() {
    let k = copy_kernel(
        DType::F32,
        &[8, 8],
        parse("S[(8,8):(8,1)]"),
        parse("S[(8,8):(8,1)]"),
        Some("copy.vec8"),
    )
    .unwrap();
    assert_eq!(
        lower(&k, Target::Sm80).unwrap().decisions[0].variant,
        "copy.vec8"
    );
    let k = copy_kernel(
        DType::F32,
        &[8, 8],
        parse("S[(8,8):(1,8)]"),
        parse("S[(8,8):(8,1)]"),
        Some("copy.vec16"),
    )
    .unwrap();
    let e = lower(&k, Target::Sm80).unwrap_err();
    assert!(
        matches!(&e, KernelError::Forced { reason, .. } if reason.contains("innermost stride is 8")),
        "{e}"
    );
    let k = copy_kernel(
        DType::F32,
        &[8, 8],
        parse("S[(8,8):(8,1)]"),
        parse("S[(8,8):(8,1)]"),
        Some("copy.tma"),
    )
    .unwrap();
    let e = lower(&k, Target::Sm80).unwrap_err().to_string();
    assert!(
        e.contains("no such variant") && e.contains("copy.vec16, copy.staged, copy.vec8"),
        "{e}"
    );
}

#[test]
fn when_nothing_applies_every_variant_is_listed() {
    let mut k = KernelBuilder::new(
        "k",
        Launch {
            grid: 2,
            cluster: 2,
            threads: 64,
        },
    )
    .unwrap();
    let a = k.buffer("a", Space::Global, DType::F32, 64).unwrap();
    let t = k
        .tensor("a", a, &[64], Layout::row_major(&[64]).unwrap())
        .unwrap();
    let u = k
        .tensor("b", a, &[64], Layout::row_major(&[64]).unwrap())
        .unwrap();
    k.call(
        Scope {
            level: axe_kernel::Level::Cluster,
            units: None,
        },
        Op::Copy { dst: t, src: u },
    )
    .unwrap();
    let e = lower(&k.build().unwrap(), Target::Sm90a).unwrap_err();
    let KernelError::NoVariant { declined, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(declined.len(), 10);
    let text = e.to_string();
    for v in [
        "copy.ldmatrix",
        "copy.stmatrix",
        "copy.registers.vector",
        "copy.vec16",
        "copy.vec8",
        "copy.vec4",
        "copy.vec2",
        "copy.element",
        "copy.registers",
        "copy.staged",
    ] {
        assert!(text.contains(v), "{text}");
    }
    assert!(
        text.contains("cluster scope needs distributed shared memory"),
        "{text}"
    );
}

/// The largest width (elements) a brute force over element addresses allows: every chunk of `w` is
/// `w` consecutive addresses starting at a multiple of `w`, in the source's base copy and in every copy
/// of the destination.
fn brute_widest(src: &Layout, dst: &Layout, size: u64, eb: u32) -> u32 {
    let m = Axis::memory();
    let addrs = |l: &Layout, all: bool| -> Vec<Vec<i64>> {
        (0..size)
            .map(|x| {
                let cs = l.apply(x).expect("apply");
                let v: Vec<i64> = cs.iter().map(|c| c.get(&m)).collect();
                if all {
                    v
                } else {
                    vec![l.shard_at(x).expect("shard").get(&m) + l.offset().get(&m)]
                }
            })
            .collect()
    };
    let (a, b) = (addrs(src, false), addrs(dst, true));
    let ok = |w: u64| -> bool {
        if !size.is_multiple_of(w) {
            return false;
        }
        [&a, &b].iter().all(|t| {
            (0..size / w).all(|k| {
                let base = &t[(k * w) as usize];
                (0..base.len()).all(|r| {
                    base[r].rem_euclid(w as i64) == 0
                        && (0..w).all(|i| t[(k * w + i) as usize][r] == base[r] + i as i64)
                })
            })
        })
    };
    for bytes in [16u32, 8, 4, 2] {
        if bytes >= eb && ok(u64::from(bytes / eb)) {
            return bytes;
        }
    }
    eb
}

fn arb_layout(extents: Vec<u64>) -> impl Strategy<Value = Layout> {
    let n = extents.len();
    (
        Just(extents).prop_shuffle(),
        prop::collection::vec(
            prop::sample::select(vec![1i64, 1, 2, 3, 4, 8, 16, 32, -4]),
            n,
        ),
        0i64..9,
        prop::option::of((2u64..3, prop::sample::select(vec![64i64, 96, 130]))),
    )
        .prop_map(|(ext, strides, off, rep)| {
            // Mostly contiguous: stride i is the product of the faster extents times a small factor.
            let mut iters = Vec::new();
            let mut run = 1i64;
            for (e, f) in ext.iter().zip(strides).rev() {
                let s = if f == 1 { run } else { f };
                iters.push(Iter::mem(*e, s).expect("iter"));
                run = s * *e as i64;
            }
            iters.reverse();
            let l = Layout::from_shard(iters).expect("layout");
            let l = match rep {
                Some((e, s)) => l
                    .with_replica([Iter::mem(e, s).expect("iter")])
                    .expect("replica"),
                None => l,
            };
            l.with_offset(&Coord::on(Axis::memory(), off + 64))
                .expect("offset")
        })
}

fn arb_pair() -> impl Strategy<Value = (Layout, Layout, u64, DType)> {
    prop::collection::vec(prop::sample::select(vec![1u64, 2, 3, 4, 8]), 1..4).prop_flat_map(|ext| {
        let size: u64 = ext.iter().product();
        (
            arb_layout(ext.clone()),
            arb_layout(ext),
            Just(size),
            prop::sample::select(vec![DType::F32, DType::BF16, DType::U8, DType::F64]),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]
    #[test]
    fn the_chosen_width_is_the_largest_correct_one((src, dst, size, dt) in arb_pair()) {
        let t = |l: &Layout, name: &str| Tensor {
            name: name.into(), buffer: axe_kernel::BufferId(0), space: Space::Global, dtype: dt,
            shape: vec![size], layout: l.clone(),
        };
        let (s, d) = (t(&src, "s"), t(&dst, "d"));
        let got = widest(&[(&d, "the destination", true), (&s, "the source", false)], dt).unwrap();
        prop_assert_eq!(got, brute_widest(&src, &dst, size, dt.bytes()), "{} -> {}", src, dst);
    }
}

/// Law: CUDA is emitted exactly for the CUDA targets (sm_80, sm_90a); a program lowered for the
/// interpreter (`cpu`) or Trainium (`trn1`) is refused with a message naming the CUDA targets.
#[test]
fn cuda_is_emitted_only_for_the_cuda_targets() {
    let l = Layout::row_major(&[64]).unwrap();
    let k = copy_kernel(DType::F32, &[64], l.clone(), l, None).unwrap();
    for t in Target::THREADED {
        let p = lower(&k, t).unwrap();
        let got = axe_kernel::emit_cuda(&p);
        assert_eq!(got.is_ok(), t.arch().is_some(), "{t}: {got:?}");
        assert_eq!(t.check_cuda().is_ok(), Target::CUDA.contains(&t), "{t}");
    }
    let e = axe_kernel::emit_cuda(&lower(&k, Target::Cpu).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("CUDA is emitted for the GPU targets sm_80 and sm_90a, not cpu"),
        "{e}"
    );
    assert!(e.contains("interpreter"), "{e}");
    let e = Target::Trn1.check_cuda().unwrap_err().to_string();
    assert!(e.contains("not trn1") && e.contains("NKI"), "{e}");
}
