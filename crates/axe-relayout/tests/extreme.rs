#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Layouts at the edges of 64-bit arithmetic: strides and offsets near `i64::MAX` and `i64::MIN`, and
//! buffers that do not fit their layouts. Building, planning and relayout return an error or a right
//! answer (checked element by element on the small cases), never a panic, a wrap or a stray write.

use axe_layout::{Axis, Layout};
use axe_relayout::{relayout, Isa, Options, TensorLayout};
use proptest::prelude::*;

const EDGES: [i64; 10] = [
    i64::MAX,
    i64::MIN,
    i64::MIN + 1,
    1 << 62,
    -(1 << 62),
    (1 << 62) - 1,
    1 << 32,
    3,
    -1,
    1,
];

/// `row-major src → dst` on a small tensor, checked against dst's own index function.
fn check(dst: &Layout, dims: &[u64]) {
    let Ok(d) = TensorLayout::from_axe(dst, dims, 8) else {
        return;
    };
    let s = TensorLayout::from_axe(&Layout::row_major(dims).unwrap(), dims, 8).unwrap();
    let src: Vec<u8> = (0..s.bytes()).map(|i| (i * 7 + 1) as u8).collect();
    if d.bytes() > 1 << 20 {
        // Too large to run here: a buffer short of the layout is an error, not a write.
        let mut small = vec![0u8; 64];
        assert!(relayout(&src, &s, &mut small, &d, &Options::default()).is_err());
        return;
    }
    for isa in Isa::available() {
        let opts = Options {
            isa: Some(isa),
            ..Options::default()
        };
        check_with(dst, dims, (&s, &d), &src, &opts);
    }
}

/// [`check`] with one set of options.
fn check_with(
    dst: &Layout,
    dims: &[u64],
    (s, d): (&TensorLayout, &TensorLayout),
    src: &[u8],
    opts: &Options,
) {
    let mut out = vec![0u8; d.bytes() as usize];
    match relayout(src, s, &mut out, d, opts) {
        Err(_) => assert!(!d.injective, "{dst}: an injective destination relayouts"),
        Ok(_) => {
            let count: u64 = dims.iter().product();
            for x in 0..count {
                for c in dst.apply(x).unwrap() {
                    assert_eq!(
                        out[c.get(&Axis::memory()) as usize],
                        src[x as usize],
                        "{dst} element {x} ({})",
                        opts.isa.map_or("default", Isa::name)
                    );
                }
            }
        }
    }
}

#[test]
fn the_offsets_that_once_wrapped() {
    for text in [
        "S[(2,2):(4611686018427387904,4611686018427387904)]",
        "S[(2,2):(9223372036854775807,1)] + 1",
        "S[(2,2):(-9223372036854775807,1)] + 9223372036854775807",
        "S[4:1] + R[2:9223372036854775807] + 1",
    ] {
        let l: Layout = text.parse().unwrap();
        if let Ok(t) = TensorLayout::from_axe(&l, &[4], 8) {
            let mut small = vec![0u8; 16];
            let s = TensorLayout::from_axe(&Layout::row_major(&[4]).unwrap(), &[4], 8).unwrap();
            assert!(relayout(&[0u8; 4], &s, &mut small, &t, &Options::default()).is_err());
        }
        check(&l, &[l.size()]);
    }
}

#[test]
fn hand_built_tables_outside_their_slots_are_refused() {
    let s = TensorLayout::from_axe(&Layout::row_major(&[2, 2]).unwrap(), &[2, 2], 8).unwrap();
    let mut bad = s.clone();
    bad.tables[0] = vec![0, -2];
    let mut out = [0u8; 4];
    assert!(relayout(&[1, 2, 3, 4], &s, &mut out, &bad, &Options::default()).is_err());
    bad.tables[0] = vec![0, i64::MAX];
    assert!(relayout(&[1, 2, 3, 4], &s, &mut out, &bad, &Options::default()).is_err());
    assert_eq!(out, [0; 4], "nothing was written");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn edges_of_i64(e in prop::collection::vec(1u64..4, 1..3),
                    strides in prop::collection::vec(prop::sample::select(EDGES.to_vec()), 3),
                    offset in prop::sample::select(EDGES.to_vec()),
                    replica in prop::option::of((2u64..3, prop::sample::select(EDGES.to_vec())))) {
        let ext: Vec<String> = e.iter().map(u64::to_string).collect();
        let st: Vec<String> = strides[..e.len()].iter().map(i64::to_string).collect();
        let mut text = format!("S[({}):({})]", ext.join(","), st.join(","));
        if let Some((n, s)) = replica {
            text.push_str(&format!(" + R[{n}:{s}]"));
        }
        text.push_str(&format!(" + {offset}"));
        if let Ok(l) = text.parse::<Layout>() {
            let size = l.size();
            check(&l, &[size]);
        }
    }
}

/// A tile far larger than its array's dims: the layout is built without listing the padded offsets
/// (1.6·10^11 of them in the first case, which once aborted on allocation), and a relayout into a
/// smaller such tile puts every element where XLA's index function says and zeroes the rest.
#[test]
fn tiles_far_larger_than_their_dims() {
    let huge = axe_xla::parse_shape("f32[3,5]{0,1:T(8,166666666228)}").unwrap();
    let huge = TensorLayout::from_xla(huge.as_array().unwrap()).unwrap();
    assert_eq!(huge.bytes(), 8 * 166_666_666_228 * 4);
    let src_shape = axe_xla::parse_shape("f32[3,5]{1,0}").unwrap();
    let dst_shape = axe_xla::parse_shape("f32[3,5]{0,1:T(8,70000)}").unwrap();
    let (a, b) = (src_shape.as_array().unwrap(), dst_shape.as_array().unwrap());
    let (s, d) = (
        TensorLayout::from_xla(a).unwrap(),
        TensorLayout::from_xla(b).unwrap(),
    );
    let src: Vec<u8> = (0..s.bytes()).map(|i| (i * 7 + 1) as u8).collect();
    for isa in Isa::available() {
        let mut dst = vec![0xab; d.bytes() as usize];
        let opts = Options {
            isa: Some(isa),
            ..Options::default()
        };
        relayout(&src, &s, &mut dst, &d, &opts).unwrap();
        let mut held = vec![false; dst.len()];
        for i in 0..3i64 {
            for j in 0..5i64 {
                let from = axe_xla::element_offset(a, &[i, j]).unwrap().byte_offset as usize;
                let to = axe_xla::element_offset(b, &[i, j]).unwrap().byte_offset as usize;
                assert_eq!(
                    dst[to..to + 4],
                    src[from..from + 4],
                    "({i}, {j}) with {isa:?}"
                );
                held[to..to + 4].fill(true);
            }
        }
        assert!(
            dst.iter().zip(&held).all(|(&v, &h)| h || v == 0),
            "padding zeroed with {isa:?}"
        );
    }
}
