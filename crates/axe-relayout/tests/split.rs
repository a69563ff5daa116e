#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Large dimensions split into shared factors: the relayout is byte for byte the one over the whole
//! dimensions, and the offset tables cost the sum of the factors, not the dimensions.

use axe_layout::Layout;
use axe_relayout::split::{pair, pieces, relayout_pieces, Side, FACTOR_MAX};
use axe_relayout::{relayout, Isa, Options, TensorLayout};
use axe_xla::{parse_shape, ArrayShape};
use proptest::prelude::*;

fn array(text: &str) -> ArrayShape {
    parse_shape(text).unwrap().as_array().unwrap().clone()
}

fn table_entries(t: &TensorLayout) -> usize {
    t.tables.iter().map(Vec::len).sum::<usize>()
        + t.padded
            .as_ref()
            .map_or(0, |p| p.iter().map(Vec::len).sum())
}

/// `src → dst` through `pair` and through whole tables: the same bytes.
fn same_bytes(
    src: Side<'_>,
    dst: Side<'_>,
    whole: (TensorLayout, TensorLayout),
) -> (TensorLayout, TensorLayout) {
    let (s, d) = pair(src, dst).unwrap();
    assert_eq!(s.bytes(), whole.0.bytes());
    assert_eq!(d.bytes(), whole.1.bytes());
    let input: Vec<u8> = (0..s.bytes()).map(|i| (i * 131 + 7) as u8).collect();
    // Every instruction set's kernels, split or whole: the same bytes.
    let mut first: Option<Vec<u8>> = None;
    for isa in Isa::available() {
        let opts = Options {
            isa: Some(isa),
            ..Options::default()
        };
        let mut a = vec![0xaa; d.bytes() as usize];
        let mut b = vec![0x55; d.bytes() as usize];
        relayout(&input, &s, &mut a, &d, &opts).unwrap();
        relayout(&input, &whole.0, &mut b, &whole.1, &opts).unwrap();
        assert!(a == b, "{}: split and whole relayouts differ", isa.name());
        assert!(
            first.get_or_insert_with(|| a.clone()) == &a,
            "{}: not the bytes of {}",
            isa.name(),
            Isa::available()[0].name()
        );
    }
    (s, d)
}

fn xla_pair(src: &str, dst: &str) -> (TensorLayout, TensorLayout) {
    let (a, b) = (array(src), array(dst));
    let whole = (
        TensorLayout::from_xla(&a).unwrap(),
        TensorLayout::from_xla(&b).unwrap(),
    );
    same_bytes(Side::Xla(&a), Side::Xla(&b), whole)
}

#[test]
fn a_long_dimension_costs_the_sum_of_its_factors() {
    let n = 1 << 22;
    let (s, d) = xla_pair(&format!("u8[{n}]{{0}}"), &format!("u8[{n}]{{0:T(1024)}}"));
    assert!(s.dims.len() > 1, "{:?}", s.dims);
    assert!(table_entries(&s) + table_entries(&d) < 4 * FACTOR_MAX as usize);
    // Tiles that cut the dimension differently (128 and 1024 divide one another).
    let (s, _) = xla_pair(
        &format!("f32[{n}]{{0:T(128)}}"),
        &format!("f32[{n}]{{0:T(1024)}}"),
    );
    assert!(s.dims.len() > 1);
    // Padding on one side: left whole, still right.
    let (s, _) = xla_pair("f32[100003]{0}", "f32[100003]{0:T(1024)}");
    assert_eq!(s.dims, [100003]);
}

#[test]
fn axe_destinations_split_too() {
    let n = 1u64 << 20;
    let a = array(&format!("u8[{n}]{{0}}"));
    let l: Layout = "S[(1024,1024):(1,1024)]".parse().unwrap();
    let whole = (
        TensorLayout::from_xla(&a).unwrap(),
        TensorLayout::from_axe(&l, &[n], 8).unwrap(),
    );
    let (s, _) = same_bytes(
        Side::Xla(&a),
        Side::Axe {
            layout: &l,
            dims: &[n],
            bits: 8,
        },
        whole,
    );
    assert_eq!(s.dims, [1024, 1024]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random long 1-D and 2-D tensors, tiled by random powers of two (and other sizes): split or not,
    /// the bytes are those of the relayout over whole dimensions.
    #[test]
    fn split_relayouts_match_whole_ones(
        rows in prop::sample::select(vec![1u64, 3]),
        cols in prop::sample::select(vec![65536u64, 98304, 131072, 120000]),
        t1 in prop::sample::select(vec![1u64, 2, 8, 128, 1000, 1024]),
        t2 in prop::sample::select(vec![1u64, 4, 128, 256, 2048]),
        ty in prop::sample::select(vec!["u8", "bf16", "f32"]),
    ) {
        let src = format!("{ty}[{rows},{cols}]{{1,0:T(1,{t1})}}");
        let dst = format!("{ty}[{rows},{cols}]{{1,0:T(1,{t2})}}");
        xla_pair(&src, &dst);
        let flat_src = format!("{ty}[{}]{{0:T({t1})}}", rows * cols);
        let flat_dst = format!("{ty}[{}]{{0:T({t2})}}", rows * cols);
        xla_pair(&flat_src, &flat_dst);
    }
}

/// `src → dst` in pieces and through whole tables: the same bytes, padding zeroed (or left) alike.
fn same_bytes_in_pieces(src: &str, dst: &str, zero: bool) -> usize {
    let (a, b) = (array(src), array(dst));
    let whole = (
        TensorLayout::from_xla(&a).unwrap(),
        TensorLayout::from_xla(&b).unwrap(),
    );
    let p = pieces(Side::Xla(&a), Side::Xla(&b)).unwrap();
    for (s, d) in &p {
        assert_eq!(s.bytes(), whole.0.bytes());
        assert_eq!(d.bytes(), whole.1.bytes());
    }
    let input: Vec<u8> = (0..whole.0.bytes()).map(|i| (i * 131 + 7) as u8).collect();
    let mut first: Option<Vec<u8>> = None;
    for isa in Isa::available() {
        let opts = Options {
            zero_padding: zero,
            isa: Some(isa),
            ..Options::default()
        };
        let mut x = vec![0xaa; whole.1.bytes() as usize];
        let mut y = vec![0xaa; whole.1.bytes() as usize];
        relayout_pieces(&input, &mut x, &p, &opts).unwrap();
        relayout(&input, &whole.0, &mut y, &whole.1, &opts).unwrap();
        let isa = isa.name();
        assert!(
            x == y,
            "{isa}: {src} -> {dst}: pieces and whole relayouts differ"
        );
        assert!(
            first.get_or_insert_with(|| x.clone()) == &x,
            "{isa}: {src} -> {dst}: not the first set's bytes"
        );
    }
    let entries: usize = p
        .iter()
        .map(|(s, d)| table_entries(s) + table_entries(d))
        .sum();
    assert!(
        entries < 8 * FACTOR_MAX as usize + 64 * 1024,
        "{entries} table entries"
    );
    p.len()
}

#[test]
fn long_padded_dimensions_move_as_body_and_tail() {
    let n = 1_000_003; // prime: no tile divides it
    assert!(
        same_bytes_in_pieces(
            &format!("f32[{n}]{{0}}"),
            &format!("f32[{n}]{{0:T(1024)}}"),
            true
        ) >= 1
    );
    assert!(
        same_bytes_in_pieces(
            &format!("f32[{n}]{{0:T(1024)}}"),
            &format!("f32[{n}]{{0}}"),
            true
        ) >= 1
    );
    // A tail: the padded dimension's inner iters (128) do not divide it.
    assert_eq!(
        same_bytes_in_pieces("f32[8,100003]{1,0:T(8,128)}", "f32[8,100003]{1,0}", true),
        3
    );
    same_bytes_in_pieces(
        "bf16[8,100003]{1,0}",
        "bf16[8,100003]{1,0:T(8,128)(2,1)}",
        true,
    );
    same_bytes_in_pieces("u8[100003,4]{1,0}", "u8[100003,4]{0,1:T(8,128)}", true);
    // Dimensions below SPLIT_MIN keep whole tables and the plans they always had.
    assert_eq!(
        same_bytes_in_pieces("f32[8000,8000]{1,0}", "f32[8000,8000]{1,0:T(8,128)}", true),
        1
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random long dimensions with padding on one side or both: pieces move exactly what whole tables do.
    #[test]
    fn pieces_match_whole_relayouts(
        rows in prop::sample::select(vec![1u64, 2]),
        cols in prop::sample::select(vec![65539u64, 70000, 100003]),
        t1 in prop::sample::select(vec![1u64, 128, 1000, 1024]),
        t2 in prop::sample::select(vec![1u64, 256, 2048]),
        ty in prop::sample::select(vec!["u8", "f32"]),
        zero in any::<bool>(),
    ) {
        let src = format!("{ty}[{rows},{cols}]{{1,0:T(1,{t1})}}");
        let dst = format!("{ty}[{rows},{cols}]{{1,0:T(1,{t2})}}");
        same_bytes_in_pieces(&src, &dst, zero);
        same_bytes_in_pieces(&dst, &src, zero);
    }
}
