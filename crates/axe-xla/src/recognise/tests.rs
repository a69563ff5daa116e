//! `recognise` against the old exhaustive search and against `to_axe`, on random XLA layouts.
#![allow(clippy::unwrap_used, clippy::panic)]

use axe_layout::Layout as AxeLayout;
use proptest::prelude::*;

use super::{oracle, recognise, Target};
use crate::axe::to_axe;
use crate::primitive::PrimitiveType;
use crate::shape::{ArrayShape, Dim, Layout, Tile, TileDim};

/// `n` cases, or `AXE_RECOGNISE_CASES` for a longer run.
fn cases(n: u32) -> u32 {
    std::env::var("AXE_RECOGNISE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n)
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        max_global_rejects: cases.saturating_mul(4),
        ..ProptestConfig::default()
    }
}

/// A random array of rank `ranks`: dimensions 1–`max_dim`, a random order, 0–2 tiles. The first tile
/// covers the last k ≤ rank + 1 physical dimensions (k = rank + 1: a leading dimension), with sizes 1–4
/// or 8, clipped to the dimension they cover when `clip`; the second covers the first's last one or two
/// dimensions with sizes dividing the first's (sub-tiles like `(2,1)`) or any of 1–4 (most of which pad
/// in the middle of a dimension and have no Axe form). The element type is `f32`, `bf16`
/// or `s4` with `E(4)`: the Axe form counts elements, so neither changes it.
fn xla_strategy(
    ranks: std::ops::RangeInclusive<usize>,
    max_dim: i64,
) -> impl Strategy<Value = ArrayShape> {
    ranks
        .prop_flat_map(move |rank| {
            (
                proptest::collection::vec(1i64..=max_dim, rank),
                Just((0..rank as i64).collect::<Vec<_>>()).prop_shuffle(),
                0usize..=2,
                1usize..=rank + 1,
                proptest::collection::vec(prop_oneof![1i64..=4, Just(8)], rank + 1),
                any::<bool>(),
                (
                    1usize..=2,
                    proptest::collection::vec(any::<u8>(), 2),
                    any::<bool>(),
                ),
                0u8..3,
            )
        })
        .prop_map(
            |(dims, m2m, tiles, k, first, clip, (k2, picks, divide), ty)| {
                let rank = dims.len();
                let mut layout = Layout::with_minor_to_major(m2m.clone());
                if tiles > 0 {
                    let physical: Vec<i64> = std::iter::once(1)
                        .chain(m2m.iter().rev().map(|&d| dims[d as usize]))
                        .collect();
                    let first: Vec<i64> = first[..k]
                        .iter()
                        .zip(&physical[rank + 1 - k..])
                        .map(|(&t, &d)| if clip { t.min(d) } else { t })
                        .collect();
                    layout
                        .tiles
                        .push(Tile(first.iter().map(|&t| TileDim::Size(t)).collect()));
                    if tiles > 1 {
                        let k2 = k2.min(k);
                        let sizes: Vec<i64> = (0..k2)
                            .map(|j| {
                                let t = first[k - k2 + j];
                                let divisors: Vec<i64> = (1..=t).filter(|d| t % d == 0).collect();
                                if divide {
                                    divisors[picks[j] as usize % divisors.len()]
                                } else {
                                    1 + i64::from(picks[j] % 4)
                                }
                            })
                            .collect();
                        layout
                            .tiles
                            .push(Tile(sizes.into_iter().map(TileDim::Size).collect()));
                    }
                }
                let element_type = match ty {
                    0 => PrimitiveType::F32,
                    1 => PrimitiveType::Bf16,
                    _ => {
                        layout.element_size_in_bits = 4;
                        PrimitiveType::S4
                    }
                };
                ArrayShape {
                    element_type,
                    dims: dims.into_iter().map(Dim::Static).collect(),
                    layout,
                }
            },
        )
}

/// The layout's Axe form and padded shape, when it has one.
fn form(a: &ArrayShape) -> Option<(AxeLayout, Vec<u64>)> {
    to_axe(a).ok().map(|f| (f.layout, f.padded_shape))
}

fn matches(l: &AxeLayout, shape: &[u64], found: &Layout) -> bool {
    Target::new(l, shape).unwrap().matches(found)
}

proptest! {
    #![proptest_config(config(cases(400)))]

    /// Every XLA layout with an Axe form (ranks 1–6) is recognised over its padded shape, as a layout
    /// with the same map.
    #[test]
    fn recognises_every_axe_form(a in xla_strategy(1..=6, 6)) {
        let f = form(&a);
        prop_assume!(f.is_some());
        let Some((l, shape)) = f else { return Ok(()) };
        let found = recognise(&l, &shape).unwrap();
        let found = found.unwrap_or_else(|| panic!("{a}: {l} over {shape:?} not recognised"));
        prop_assert!(matches(&l, &shape, &found), "{a}: {found} is not {l}");
    }

    /// Ranks 1–3: wherever the old search finds a layout, so does `recognise` (and its answer is right
    /// wherever it gives one).
    #[test]
    fn agrees_with_the_old_search(a in xla_strategy(1..=3, 5)) {
        let f = form(&a);
        prop_assume!(f.is_some());
        let Some((l, shape)) = f else { return Ok(()) };
        let new = recognise(&l, &shape).unwrap();
        let old = oracle::search(&l, &shape).unwrap();
        if let Some(n) = &new {
            prop_assert!(matches(&l, &shape, n), "{a}: {n} is not {l}");
        }
        if let Some(o) = &old {
            let n = new.as_ref();
            prop_assert!(n.is_some(), "{a}: the old search finds {o} for {l} over {shape:?}, recognise nothing");
            prop_assert!(n.is_some_and(|n| n.tiles.len() <= o.tiles.len()), "{a}: {n:?} has more tiles than {o}");
        }
    }
}

proptest! {
    #![proptest_config(config(cases(200)))]

    /// Random plain memory layouts (most of them no XLA layout): wherever the old search finds a layout,
    /// so does `recognise`, and its answer is right (it also finds some the old search missed, such as
    /// a leading tile dimension wider than any stride ratio the search tried).
    #[test]
    fn agrees_on_random_layouts(
        iters in proptest::collection::vec((1u64..=4, 1i64..=24), 1..=4),
        cut in 0usize..4,
    ) {
        let shard: Vec<axe_layout::Iter> = iters
            .iter()
            .map(|&(e, s)| axe_layout::Iter::mem(e, s).unwrap())
            .collect();
        let l = AxeLayout::from_shard(shard).unwrap();
        let (a, b) = iters.split_at(cut.min(iters.len()));
        let shape: Vec<u64> = [a, b]
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| p.iter().map(|&(e, _)| e).product())
            .collect();
        let new = recognise(&l, &shape).unwrap();
        let old = oracle::search(&l, &shape).unwrap();
        if let Some(n) = &new {
            prop_assert!(matches(&l, &shape, n), "{n} is not {l}");
        }
        if let Some(o) = &old {
            let n = new.as_ref();
            prop_assert!(n.is_some(), "{l} over {shape:?}: the old search finds {o}, recognise nothing");
            prop_assert!(n.is_some_and(|n| n.tiles.len() <= o.tiles.len()), "{n:?} has more tiles than {o}");
        }
    }
}

fn recognised(l: &str, shape: &[u64]) -> Option<String> {
    let l: AxeLayout = l.parse().unwrap();
    recognise(&l, shape).unwrap().map(|x| x.to_string())
}

#[test]
fn layouts_that_are_no_xla_layout() {
    // Overlapping digits; a dimension whose major digit is its faster one; two dimensions alternating
    // four times (two tiles make three alternations at most); strides that do not divide; a negative
    // stride.
    for (l, shape) in [
        ("S[(4,4):(1,2)]", &[4u64, 4][..]),
        ("S[(2,2,2,2):(1,4,2,8)]", &[4, 4]),
        ("S[(2,2,2,2,2,2,2,2):(64,16,4,1,128,32,8,2)]", &[16, 16]),
        ("S[(3,2):(3,2)]", &[3, 2]),
        ("S[(3,5):(-5,1)]", &[3, 5]),
    ] {
        assert_eq!(recognised(l, shape), None, "{l} over {shape:?}");
        let parsed: AxeLayout = l.parse().unwrap();
        assert_eq!(oracle::search(&parsed, shape).unwrap(), None, "old: {l}");
    }
}

#[test]
fn the_slow_examples() {
    for text in [
        "s8[1,3,9,1]{2,1,3,0:T(128,4,8)(128)E(4)}",
        "s8[1,3,9,1,2]{2,1,3,4,0:T(128,4,8)(128)E(4)}",
        "f32[3,5,7,2]{3,2,1,0:T(2,4,8)(2,1)}",
        "bf16[3,5,7,2,9,4]{0,3,2,1,5,4:T(2,4,8)(2,1)}",
        "s4[2,3,5,7,3,2]{5,4,3,2,1,0:T(8,128)(8,1)E(4)}",
        "bf16[8,128]{1,0:T(8,128)(2,1)}",
        // The sub-tile leaves dimension 3 whole, so dimension 0 (more minor in the first tile) has its
        // piece between the tiles' ends above dimension 3's.
        "f32[3,2,3,3]{0,3,2,1:T(2,1,2,2,2)(2,1)}",
        // The sub-tile holds dimension 1 (2 padded to 8) whole but for padding: the padding above
        // dimension 0's piece between the tiles' ends is dimension 1's.
        "bf16[3,2,5,1,3]{0,1,4,3,2:T(3,4,4,2,8,2)(4,1)}",
        // A sub-tile wider than the tile's 2 for dimension 2: its padding is the sub-tile's.
        "bf16[2,2,3,4]{0,2,1,3:T(2,3,8,2,8)(4,1)}",
        // The sub-tile pads dimension 1, which the tile leaves outside (size 1), by 4.
        "bf16[2,2,3,5]{1,2,0,3:T(8,1,8,2,1)(4,4)}",
        "f32[3,5]{1,0:T(2,2)}",
    ] {
        let a = crate::text::parse_shape(text).unwrap();
        let a = a.as_array().unwrap();
        let (l, shape) = form(a).unwrap();
        let found = recognise(&l, &shape).unwrap().unwrap();
        assert!(matches(&l, &shape, &found), "{text}: {found}");
    }
}

#[test]
fn a_tile_wider_than_its_dimension_over_the_logical_shape() {
    // d1 = 3 in a tile of 4: the form over [2, 3] is the slice of the padded one.
    assert_eq!(
        recognised("S[(2,3):(4,1)]", &[2, 3]).as_deref(),
        Some("{1,0:T(4)}")
    );
    assert_eq!(
        recognised("S[(3,5):(7,1)]", &[3, 5]).as_deref(),
        Some("{1,0:T(7)}")
    );
}
