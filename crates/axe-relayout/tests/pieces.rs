#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Long padded dimensions moved in pieces (a body split into factors, whole steps, a tail with the
//! padding after it): every element where XLA's index function puts it, every padding bit zero (or left
//! as it was), under every instruction set, thread count and store kind; tables as small as the factors.
//! Lengths that are tile multiples and not, a tail of one element, large bodies with small tails, 1-D
//! and multi-D, whole bytes and sub-byte elements (pred and s4 packed), both directions and between two
//! tilings.

use axe_layout::Layout;
use axe_relayout::split::{pieces, relayout_pieces, Side, SPLIT_MIN};
use axe_relayout::{relayout, Isa, Options, Straight, TensorLayout, ZeroFill};
use axe_xla::{element_bits, element_offset, ArrayShape, Tiling};
use proptest::prelude::*;

#[allow(dead_code, reason = "the strided check is the other tests'")]
mod common;
use common::{random_bytes, xla_pair};

/// Every multi-index of `dims`, the last dimension fastest, handed to `f`.
fn each_index(dims: &[i64], mut f: impl FnMut(&[i64])) {
    if dims.contains(&0) {
        return;
    }
    let mut e = vec![0i64; dims.len()];
    loop {
        f(&e);
        let mut k = dims.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            e[k] += 1;
            if e[k] < dims[k] {
                break;
            }
            e[k] = 0;
        }
    }
}

fn bit(buf: &[u8], at: i64) -> bool {
    buf[(at / 8) as usize] >> (at % 8) & 1 == 1
}

fn set_bit(buf: &mut [u8], at: i64, v: bool) {
    let (i, m) = ((at / 8) as usize, 1u8 << (at % 8));
    buf[i] = if v { buf[i] | m } else { buf[i] & !m };
}

/// The destination XLA's index function gives for `src` (laid out as `a`) moved into `b`: every
/// element's low bits (as many as the narrower side has) at its bit offset, the rest of its bits zero,
/// everything else `fill`.
fn expected(a: &ArrayShape, b: &ArrayShape, src: &[u8], bytes: usize, fill: u8) -> Vec<u8> {
    let (ta, tb) = (Tiling::new(a).unwrap(), Tiling::new(b).unwrap());
    let (wa, wb) = (element_bits(a), element_bits(b));
    let dims: Vec<i64> = ta.logical.clone();
    let mut out = vec![fill; bytes];
    each_index(&dims, |e| {
        let (from, to) = (ta.linear_index(e).unwrap(), tb.linear_index(e).unwrap());
        for k in 0..wb {
            let v = k < wa && bit(src, from * wa + k);
            set_bit(&mut out, to * wb + k, v);
        }
    });
    // XLA's element_offset agrees with the tiling's linear index (first and last element).
    let last: Vec<i64> = dims.iter().map(|&d| d - 1).collect();
    for e in [vec![0; dims.len()], last] {
        let o = element_offset(b, &e).unwrap();
        assert_eq!(o.bit_offset, tb.linear_index(&e).unwrap() * wb);
    }
    out
}

/// Every slot of the destination that no element takes, as a bit mask over the buffer (1: padding).
fn padding_bits(b: &ArrayShape, bytes: usize) -> Vec<u8> {
    let t = Tiling::new(b).unwrap();
    let w = element_bits(b);
    let mut pad = vec![0xffu8; bytes];
    each_index(&t.logical, |e| {
        let at = t.linear_index(e).unwrap() * w;
        for k in 0..w {
            set_bit(&mut pad, at + k, false);
        }
    });
    pad
}

/// `src → dst` in pieces under every instruction set (threads 1 and 2, streamed and cached stores,
/// padding zeroed and kept): the bytes XLA's index function gives. Returns the pieces.
fn check(src: &str, to: &str) -> Vec<(TensorLayout, TensorLayout)> {
    let (a, b) = xla_pair(src, to);
    let p = pieces(Side::Xla(&a), Side::Xla(&b)).unwrap();
    let (sb, db) = (p[0].0.bytes() as usize, p[0].1.bytes() as usize);
    for (s, d) in &p {
        assert_eq!((s.bytes() as usize, d.bytes() as usize), (sb, db));
    }
    let input = random_bytes(sb, sb as u64);
    let zeroed = expected(&a, &b, &input, db, 0);
    let kept = expected(&a, &b, &input, db, 0xa5);
    let pad = padding_bits(&b, db);
    assert!(zeroed.iter().zip(&pad).all(|(&v, &p)| v & p == 0));
    for isa in Isa::available() {
        for (threads, streaming, zero, walk) in [
            (1, None, true, None),
            (2, Some(true), true, Some(Straight::Source)),
            (1, Some(false), false, Some(Straight::Destination)),
        ] {
            let opts = Options {
                zero_padding: zero,
                threads,
                streaming,
                isa: Some(isa),
                walk,
            };
            let mut out = vec![0xa5u8; db];
            relayout_pieces(&input, &mut out, &p, &opts).unwrap();
            let want = if zero { &zeroed } else { &kept };
            if &out != want {
                let at = out.iter().zip(want).position(|(x, y)| x != y).unwrap();
                panic!(
                    "{src} -> {to}, {} threads {threads} streaming {streaming:?} zero {zero}: byte {at} \
                     is {:#x}, XLA's index function says {:#x} ({} pieces)",
                    isa.name(),
                    out[at],
                    want[at],
                    p.len()
                );
            }
        }
    }
    // The tables cost the factors, not the long dimension.
    let longest = Tiling::new(&a)
        .unwrap()
        .logical
        .into_iter()
        .max()
        .unwrap_or(0) as usize;
    if p.len() > 1 {
        let entries: usize = p
            .iter()
            .flat_map(|(s, d)| [s, d])
            .map(|t| {
                t.tables.iter().map(Vec::len).sum::<usize>()
                    + t.padded
                        .as_ref()
                        .map_or(0, |q| q.iter().map(Vec::len).sum())
            })
            .sum();
        // (Dimensions under SPLIT_MIN keep whole tables: a body just under it too.)
        assert!(
            entries < longest / 4 || entries <= 8 * SPLIT_MIN as usize,
            "{src} -> {to}: {entries} table entries for a dimension of {longest}"
        );
    }
    p
}

/// The pieces' destination plans zero the padding slots alone (whole-byte elements) or the first
/// zeroes the destination whole (sub-byte ones).
fn zero_fills(p: &[(TensorLayout, TensorLayout)]) -> Vec<ZeroFill> {
    p.iter()
        .map(|(s, d)| {
            axe_relayout::plan(s, d, &Options::default())
                .unwrap()
                .zero_fill
        })
        .collect()
}

#[test]
fn one_dimensional_padded_arrays() {
    let n = 65536 * 3 + 1; // a tail of one element
    let p = check(&format!("f32[{n}]{{0}}"), "{0:T(1024)}");
    assert!(p.len() > 1, "{} pieces", p.len());
    assert!(
        p[0].0.dims.len() > 1,
        "the body is split: {:?}",
        p[0].0.dims
    );
    assert!(zero_fills(&p).iter().all(|z| !matches!(z, ZeroFill::Whole)));
    check(&format!("f32[{n}]{{0:T(1024)}}"), "{0}");
    check(&format!("u8[{n}]{{0:T(512)}}"), "{0:T(1024)}");
    // A large body and a small tail (1,000,003 is prime).
    check("u8[1000003]{0}", "{0:T(1024)}");
    check("bf16[300007]{0:T(1024)}", "{0}");
    // A tile multiple: no padding, no tail.
    check("f32[262144]{0}", "{0:T(1024)}");
    check("f32[262144]{0:T(256)}", "{0:T(1024)}");
}

#[test]
fn multi_dimensional_padded_arrays() {
    // The long dimension minor and tiled by 128, the other padded 3 -> 8.
    let p = check("f32[3,70001]{1,0}", "{1,0:T(8,128)}");
    assert!(p.len() > 1);
    check("f32[3,70001]{1,0:T(8,128)}", "{1,0}");
    check("f32[3,70001]{1,0:T(8,128)}", "{1,0:T(4,256)}");
    // A transpose into tiles, and the long dimension major (padded to a multiple of 8).
    check("f32[70001,3]{1,0}", "{0,1:T(8,128)}");
    check("f32[65539,2]{1,0}", "{1,0:T(8,2)}");
    check("f32[65539,2]{1,0:T(8,2)}", "{0,1}");
    // Sub-tiles that interleave rows.
    check("bf16[4,70001]{1,0}", "{1,0:T(8,128)(2,1)}");
    check("s8[4,70001]{1,0:T(8,128)(4,1)}", "{1,0}");
    // A tile multiple along the long dimension, padding along the other only.
    check("f32[3,65536]{1,0}", "{1,0:T(8,128)}");
}

#[test]
fn sub_byte_padded_arrays() {
    let p = check("pred[4,70001]{1,0}", "{1,0:T(32,128)(32,1)E(1)}");
    assert!(p.len() > 1);
    assert_eq!(zero_fills(&p)[0], ZeroFill::Whole);
    check("pred[4,70001]{1,0:T(32,128)(32,1)E(1)}", "{1,0}");
    check("pred[200003]{0}", "{0:T(1024)E(1)}");
    check("s4[200003]{0:E(4)}", "{0:T(1024)E(4)}");
    check("s4[200003]{0:T(2048)E(4)}", "{0:E(4)}");
}

/// An Axe destination (no padding of its own) from a padded XLA source, in pieces.
#[test]
fn padded_sources_into_axe_layouts() {
    let n = 70001u64;
    let (a, _) = xla_pair(&format!("f32[{n}]{{0:T(1024)}}"), "{0}");
    let l: Layout = format!("S[{n}:1]").parse().unwrap();
    let dst = Side::Axe {
        layout: &l,
        dims: &[n],
        bits: 32,
    };
    let p = pieces(Side::Xla(&a), dst).unwrap();
    assert!(p.len() > 1);
    let whole = (
        TensorLayout::from_xla(&a).unwrap(),
        TensorLayout::from_axe(&l, &[n], 32).unwrap(),
    );
    let input = random_bytes(whole.0.bytes() as usize, 7);
    for isa in Isa::available() {
        let opts = Options {
            isa: Some(isa),
            ..Options::default()
        };
        let mut x = vec![0xa5; whole.1.bytes() as usize];
        let mut y = x.clone();
        relayout_pieces(&input, &mut x, &p, &opts).unwrap();
        relayout(&input, &whole.0, &mut y, &whole.1, &opts).unwrap();
        assert!(x == y, "{}", isa.name());
    }
}

/// Padded tables that reach past the buffer are refused before any byte moves.
#[test]
fn padded_tables_outside_the_buffer_are_refused() {
    let (a, b) = xla_pair("u8[3,5]{1,0}", "{1,0:T(2,2)}");
    let (s, mut d) = (
        TensorLayout::from_xla(&a).unwrap(),
        TensorLayout::from_xla(&b).unwrap(),
    );
    let mut out = vec![0x11u8; d.bytes() as usize];
    let input = [1u8; 15];
    if let Some(p) = d.padded.as_mut() {
        p[0][1] = 1 << 40;
    }
    assert!(relayout(&input, &s, &mut out, &d, &Options::default()).is_err());
    if let Some(p) = d.padded.as_mut() {
        p[0].truncate(1);
    }
    assert!(relayout(&input, &s, &mut out, &d, &Options::default()).is_err());
    assert!(out.iter().all(|&v| v == 0x11), "nothing was written");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random long padded dimensions, 1-D and 2-D, tails of 0 to a tile less one, into a tiling,
    /// out of one, or between two: the bytes XLA's index function gives.
    #[test]
    fn pieces_put_every_element_where_xla_says(
        rows in prop::sample::select(vec![1u64, 3]),
        steps in 64u64..80,
        tail in prop_oneof![Just(0u64), Just(1), 2u64..128],
        t1 in prop::sample::select(vec![0u64, 128, 256, 1024]),
        t2 in prop::sample::select(vec![0u64, 128, 512]),
        ty in prop::sample::select(vec!["u8", "bf16", "f32"]),
        flat in any::<bool>(),
    ) {
        let n = steps * 1024 + tail;
        let tile = |t: u64, rank: usize| match (t, rank) {
            (0, 1) => "{0}".to_string(),
            (0, _) => "{1,0}".to_string(),
            (t, 1) => format!("{{0:T({t})}}"),
            (t, _) => format!("{{1,0:T(8,{t})}}"),
        };
        if flat {
            check(&format!("{ty}[{n}]{}", tile(t1, 1)), &tile(t2, 1));
        } else {
            check(&format!("{ty}[{rows},{n}]{}", tile(t1, 2)), &tile(t2, 2));
        }
    }
}
