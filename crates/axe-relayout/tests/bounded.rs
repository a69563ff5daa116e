#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Plans cost memory bounded by the square root of a long dimension, not its length: an unpadded long
//! dimension with no usable factors (a prime length) moves in pieces like a padded one, and the moves
//! put every element where the whole layouts say. Memory is counted as table entries, never timed.

use axe_layout::Layout;
use axe_relayout::split::{pieces, relayout_pieces, Side};
use axe_relayout::{relayout, Options, TensorLayout};
use proptest::prelude::*;

#[allow(dead_code, reason = "the strided check is the other tests'")]
mod common;
use common::{random_bytes, xla_pair};

/// The table entries of every piece, both sides.
fn entries(p: &[(TensorLayout, TensorLayout)]) -> u64 {
    p.iter()
        .map(|(s, d)| s.table_entries() + d.table_entries())
        .sum()
}

/// The pieces of `src → to` keep at most `k·√n + 2^18` table entries for a tensor of `n` elements.
fn bounded(src: &str, to: &str, k: u64) -> Vec<(TensorLayout, TensorLayout)> {
    let (a, b) = xla_pair(src, to);
    let p = pieces(Side::Xla(&a), Side::Xla(&b)).unwrap();
    let n: u64 = p[0].0.dims.iter().product::<u64>().max(1);
    let count: u64 = p.iter().map(|(s, _)| s.count()).sum();
    let whole = axe_xla::sizes(&a).unwrap().logical_bytes as u64;
    assert!(count > 0 && whole > 0);
    let e = entries(&p);
    let root = (count.isqrt() + 1).max(n.isqrt());
    assert!(
        e <= k * root + (1 << 18),
        "{src} -> {to}: {e} table entries for {count} elements ({} pieces)",
        p.len()
    );
    p
}

/// `src → to` in pieces writes what the whole layouts' relayout writes.
fn same_as_whole(src: &str, to: &str) {
    let (a, b) = xla_pair(src, to);
    let p = pieces(Side::Xla(&a), Side::Xla(&b)).unwrap();
    let (s, d) = (
        TensorLayout::from_xla(&a).unwrap(),
        TensorLayout::from_xla(&b).unwrap(),
    );
    let input = random_bytes(s.bytes() as usize, s.bytes());
    let (mut x, mut y) = (
        vec![0xa5; d.bytes() as usize],
        vec![0x5a; d.bytes() as usize],
    );
    relayout_pieces(&input, &mut x, &p, &Options::default()).unwrap();
    relayout(&input, &s, &mut y, &d, &Options::default()).unwrap();
    assert!(x == y, "{src} -> {to}: pieces and whole differ");
}

#[test]
fn prime_lengths_keep_small_tables() {
    // 100,000,007 is prime: a plain copy once built tables of 8 bytes per element per side.
    let p = bounded("u8[100000007]{0}", "{0}", 16);
    assert!(p.len() > 1, "moved in pieces");
    bounded("f32[20000003]{0}", "{0}", 16);
    bounded("u8[3,50000017]{1,0}", "{0,1}", 16);
    bounded("u8[100000007]{0}", "{0:T(1024)}", 16);
    bounded("bf16[50000017]{0:T(512)(2,1)}", "{0}", 64);
}

#[test]
fn prime_lengths_move_like_the_whole_layouts() {
    for (src, to) in [
        ("u8[1000003]{0}", "{0}"),
        ("f32[1000003]{0}", "{0:T(1024)}"),
        ("u8[3,300007]{1,0}", "{0,1}"),
        ("u8[300007,3]{1,0}", "{0,1}"),
        ("bf16[300007]{0}", "{0:T(256)(2,1)}"),
        ("s4[300007]{0:E(4)}", "{0}"),
        ("pred[300007]{0}", "{0:T(1024)E(1)}"),
    ] {
        bounded(src, to, 16);
        same_as_whole(src, to);
    }
}

/// An Axe destination reversed (negative stride) over a prime length: pieces with small tables that
/// write what the whole layout writes.
#[test]
fn prime_lengths_into_axe_layouts() {
    let n = 1_000_003u64;
    let (a, _) = xla_pair(&format!("u8[{n}]{{0}}"), "{0}");
    let l: Layout = format!("S[({n}):(-1)] + {}@m", n - 1).parse().unwrap();
    let dst = Side::Axe {
        layout: &l,
        dims: &[n],
        bits: 8,
    };
    let p = pieces(Side::Xla(&a), dst).unwrap();
    assert!(
        p.len() > 1 && entries(&p) < 16 * 1001,
        "{} entries",
        entries(&p)
    );
    let whole = (
        TensorLayout::from_xla(&a).unwrap(),
        TensorLayout::from_axe(&l, &[n], 8).unwrap(),
    );
    let input = random_bytes(n as usize, 3);
    let (mut x, mut y) = (vec![1u8; n as usize], vec![2u8; n as usize]);
    relayout_pieces(&input, &mut x, &p, &Options::default()).unwrap();
    relayout(&input, &whole.0, &mut y, &whole.1, &Options::default()).unwrap();
    assert!(x == y);
    assert!(x.iter().rev().eq(input.iter()));
}

/// An Axe destination over `u8[3,1000003]` with rows `pitch` apart, from row-major bytes, in pieces.
fn rows_into_axe(pitch: u64) -> Result<Vec<u8>, String> {
    let n = 1_000_003u64;
    let (a, _) = xla_pair(&format!("u8[3,{n}]{{1,0}}"), "{1,0}");
    let l: Layout = format!("S[(3,{n}):({pitch},1)]").parse().unwrap();
    let dims = [3, n];
    let dst = Side::Axe {
        layout: &l,
        dims: &dims,
        bits: 8,
    };
    let p = pieces(Side::Xla(&a), dst).map_err(|e| e.to_string())?;
    assert!(
        p.len() > 1 && entries(&p) < 1 << 16,
        "{} entries",
        entries(&p)
    );
    let input = random_bytes(3 * n as usize, 5);
    let mut out = vec![0u8; p[0].1.bytes() as usize];
    relayout_pieces(&input, &mut out, &p, &Options::default()).map_err(|e| e.to_string())?;
    Ok(out)
}

/// Pieces of an Axe destination whose slot ranges overlap are checked injective together: rows one
/// element apart share slots only across the body and the tail, and are refused as the whole layout
/// is; rows apart by more move like the whole layout.
#[test]
fn axe_pieces_are_checked_together() {
    let n = 1_000_003u64;
    let e = rows_into_axe(n - 1).unwrap_err();
    assert!(e.contains("several elements in one slot"), "{e}");
    let out = rows_into_axe(n + 5).unwrap();
    let input = random_bytes(3 * n as usize, 5);
    for r in 0..3usize {
        let at = r * (n as usize + 5);
        assert!(out[at..at + n as usize] == input[r * n as usize..(r + 1) * n as usize]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random prime and near-prime lengths past the split threshold, 1-D and 2-D, into and out of
    /// tilings and transposes: pieces write what the whole layouts write, in small tables.
    #[test]
    fn unsplittable_lengths_move_in_pieces(
        n in prop::sample::select(vec![65537u64, 65539, 131071, 131101, 262147, 2 * 65537]),
        rows in prop::sample::select(vec![1u64, 2, 3]),
        ty in prop::sample::select(vec!["u8", "bf16", "f32"]),
        to in prop::sample::select(vec!["row", "col", "tiled"]),
    ) {
        let (src, dst) = if rows == 1 {
            (format!("{ty}[{n}]{{0}}"), if to == "tiled" { "{0:T(128)}" } else { "{0}" }.to_string())
        } else {
            let to = match to { "row" => "{1,0}", "col" => "{0,1}", _ => "{1,0:T(8,128)}" };
            (format!("{ty}[{rows},{n}]{{1,0}}"), to.to_string())
        };
        bounded(&src, &dst, 16);
        same_as_whole(&src, &dst);
    }
}
