//! Folded pictures hide no owner: a picture larger than its grid leaves out only rows and columns whose
//! owners (warps, devices), cell by cell, repeat those of one it shows, so every owner of a layout with
//! at most [`MAX_ROWS`] owners appears. Checked on the Gluon layout that used to hide warp 2 and on
//! random placements, against the owners listed by enumeration.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;

use axe_layout::Layout;
use axe_render::{axe_picture, hardware_picture, Holders, Picture, MAX_ROWS};
use proptest::prelude::*;

fn hw(dims: &[(&str, u64)]) -> Vec<(String, u64)> {
    dims.iter().map(|(n, s)| (n.to_string(), *s)).collect()
}

/// The distinct colour groups of the cells shown.
fn groups_shown(p: &Picture) -> BTreeSet<usize> {
    p.cells.iter().filter_map(|c| c.group).collect()
}

/// Gluon `BlockedLayout(size_per_thread=[4, 4], threads_per_warp=[4, 8], warps_per_cta=[2, 2],
/// order=[1, 0])` over 64×64: rows 16–31 and 48–63 belong to warps 2 and 3.
#[test]
fn the_blocked_layout_shows_every_warp() {
    let mut h = Holders::new(
        &[64, 64],
        &hw(&[("register", 32), ("lane", 32), ("warp", 4)]),
    )
    .unwrap();
    for r in 0..64u64 {
        for c in 0..64u64 {
            let reg = c % 4 + 4 * (r % 4) + 16 * (r / 32);
            let lane = (c / 4) % 8 + 8 * ((r / 4) % 4);
            let warp = (c / 32) % 2 + 2 * ((r / 16) % 2);
            h.add(&[r, c], &[reg, lane, warp]).unwrap();
        }
    }
    let p = hardware_picture("blocked", h).unwrap();
    let warps: BTreeSet<String> = p
        .cells
        .iter()
        .map(|c| c.label.split(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(warps, ["W0", "W1", "W2", "W3"].map(String::from).into());
    assert!(
        p.row_index.iter().any(|r| (16..32).contains(r)),
        "{:?}",
        p.row_index
    );
    // Every row left out repeats a shown row's warps: rows 32–63 repeat rows 0–31.
    assert!(p
        .notes
        .iter()
        .any(|n| n.starts_with("every row and column left out repeats the warps")));
}

/// A random placement over a `2^a × 2^b` tensor: each tensor bit goes to a distinct bit of `register`,
/// `lane` or `warp` (at most `4` warp bits, so at most 16 warps), or to none (the element is then held
/// by the hardware input with that bit clear only — a narrower layout is fine too).
fn placement() -> impl Strategy<Value = (u32, u32, Vec<u8>)> {
    (0u32..8, 0u32..8).prop_flat_map(|(a, b)| {
        let n = (a + b) as usize;
        (Just(a), Just(b), prop::collection::vec(0u8..3, n))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Every warp holding an element appears in the picture.
    #[test]
    fn every_warp_appears((a, b, dest) in placement()) {
        let mut next = [0u32; 3];
        let mut bit_of = Vec::new();
        for d in &dest {
            let d = if *d == 2 && next[2] >= 4 { 0 } else { *d as usize };
            bit_of.push((d, next[d]));
            next[d] += 1;
        }
        let sizes = next.map(|n| 1u64 << n);
        let dims = hw(&[("register", sizes[0]), ("lane", sizes[1]), ("warp", sizes[2])]);
        let (rows, cols) = (1u64 << a, 1u64 << b);
        let mut h = Holders::new(&[rows, cols], &dims).unwrap();
        let mut warps = BTreeSet::new();
        for r in 0..rows {
            for c in 0..cols {
                // Tensor bits: column bits first (least significant), then row bits.
                let flat = (r << b) | c;
                let mut hold = [0u64; 3];
                for (i, (d, k)) in bit_of.iter().enumerate() {
                    hold[*d] |= (flat >> i & 1) << k;
                }
                warps.insert(hold[2]);
                h.add(&[r, c], &hold).unwrap();
            }
        }
        let p = hardware_picture("random", h).unwrap();
        let shown: BTreeSet<u64> = p.cells.iter().filter_map(|cell| {
            // With one warp the colour is the lane; the label then has no warp.
            cell.label.split(' ').find_map(|w| w.strip_prefix('W')).map(|w| w.parse().unwrap())
        }).collect();
        if warps.len() > 1 {
            prop_assert_eq!(&shown, &warps, "rows {:?} cols {:?}", p.row_index, p.col_index);
        }
        prop_assert!(warps.len() <= MAX_ROWS);
    }

    /// Every device of a sharded 2-D array (at most 16 devices) appears in the picture.
    #[test]
    fn every_device_appears((a, b, dest) in placement()) {
        // Modes outermost first: row bits from the top, then column bits; each either a device bit
        // (at most 4) or a memory bit.
        let n = (a + b) as usize;
        let (mut dev, mut mem) = (0u32, 0u32);
        let mut modes = Vec::new();
        for d in dest.iter().take(n) {
            if *d == 2 && dev < 4 {
                modes.push(format!("{}@gpuid", 1u64 << dev));
                dev += 1;
            } else {
                modes.push(format!("{}@m", 1u64 << mem));
                mem += 1;
            }
        }
        if n == 0 {
            return Ok(());
        }
        let text = format!(
            "S[({}):({})]",
            vec!["2"; n].join(","),
            modes.join(",")
        );
        let layout: Layout = text.parse().unwrap();
        let p = axe_picture(&layout, &[1 << a, 1 << b]).unwrap();
        let shown = groups_shown(&p).len();
        prop_assert_eq!(shown, 1usize << dev, "{} rows {:?} cols {:?}", text, p.row_index, p.col_index);
    }
}
