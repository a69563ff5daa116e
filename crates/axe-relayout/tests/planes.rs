//! Portable transposes of several planes at a time: where each outer index's transpose (a plane) fits
//! one tile, the portable kernels move several consecutive planes through one buffer and copy each
//! destination row of them out together where the planes follow one another (`f32[256]³` reversed).
//! Checked against the law of a permutation itself: element `e` lies at `Σ e_d·stride_d` on each side.

#![allow(clippy::unwrap_used)]

use axe_relayout::{plan, relayout, Isa, Options, TensorLayout};
use axe_xla::ArrayShape;

mod common;
use common::{check_moved, random_bytes, xla_pair};

/// Element strides of an untiled layout of `dims`.
fn strides(a: &ArrayShape, dims: &[i64]) -> Vec<i64> {
    let mut st = vec![0; dims.len()];
    let mut n = 1;
    for &d in &a.layout.minor_to_major {
        st[d as usize] = n;
        n *= dims[d as usize];
    }
    st
}

/// Relayouts `shape` into `to` with portable kernels on 1 and 2 threads, into a destination that
/// starts `skew` bytes past a 64-byte boundary, and checks every element against the strides and the
/// plan against `planes` (whether it moves several planes at a time).
fn check(shape: &str, to: &str, planes: bool) {
    let (a, b) = xla_pair(shape, to);
    let (ta, tb) = (
        TensorLayout::from_xla(&a).unwrap(),
        TensorLayout::from_xla(&b).unwrap(),
    );
    let w = (ta.bits / 8) as usize;
    let src = random_bytes(ta.bytes() as usize, 0x9e37_79b9_7f4a_7c15);
    let dims: Vec<i64> = ta.dims.iter().map(|&d| d as i64).collect();
    let (sa, sb) = (strides(&a, &dims), strides(&b, &dims));
    for (threads, skew) in [(1, 0), (2, 4)] {
        let opts = Options {
            isa: Some(Isa::Portable),
            threads,
            ..Options::default()
        };
        let explain = plan(&ta, &tb, &opts).unwrap().explain();
        assert_eq!(
            explain.contains("planes through one buffer"),
            planes,
            "{shape} -> {to}: {explain}"
        );
        let mut alloc = vec![0u8; tb.bytes() as usize + 128];
        let at = alloc.as_ptr().align_offset(64) + skew;
        let dst = &mut alloc[at..at + tb.bytes() as usize];
        relayout(&src, &ta, dst, &tb, &opts).unwrap();
        check_moved(
            &format!("{shape} -> {to}, {threads} thread(s)"),
            (&src, dst),
            w,
            &dims,
            ((&sa, 0), (&sb, 0)),
        );
    }
}

/// Planes that follow one another in the destination (whole blocks: joined runs), ragged ones (each
/// plane's edges element by element, runs not joined), groups with a shorter last one, several outer
/// dimensions, every element width with a portable block, and planes too large to go several at once.
#[test]
fn portable_transposes_move_several_planes_at_a_time() {
    let cases = [
        ("f32[32,9,48]{2,1,0}", "{0,1,2}", true),
        ("f32[37,9,100]{2,1,0}", "{0,1,2}", true),
        // 128 KiB planes: 16 at a time, in groups of 16, 16 and 8.
        ("f32[256,40,128]{2,1,0}", "{0,1,2}", true),
        ("f32[3,32,4,48]{3,2,1,0}", "{1,2,3,0}", true),
        ("bf16[48,5,64]{2,1,0}", "{0,1,2}", true),
        ("u8[64,7,80]{2,1,0}", "{0,1,2}", true),
        ("f64[24,6,40]{2,1,0}", "{0,1,2}", true),
        // One outer index: nothing to join.
        ("f32[64,1,48]{2,1,0}", "{0,1,2}", false),
        // A plane past the portable tile (128 destination rows): one at a time.
        ("f32[40,3,300]{2,1,0}", "{0,1,2}", false),
    ];
    for (shape, to, planes) in cases {
        check(shape, to, planes);
    }
}
