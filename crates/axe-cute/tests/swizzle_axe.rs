//! Swizzles (evaluation, composition, errors confirmed exhaustively), CuTe ⇄ Axe and TV ⇄ Axe, by
//! enumeration on random inputs.

mod common;

use std::collections::BTreeSet;

use axe_cute::{tv_from_axe, tv_to_axe, IntTuple, Layout, Swizzle};
use axe_layout::{Axis, Coord, Layout as AxeLayout};
use common::*;
use proptest::collection::vec;
use proptest::prelude::*;

/// `x ^ ((x & yyy) >> S)` from CuTe's definition, on small offsets.
fn swizzle_ref(b: u32, m: u32, s: i32, x: u64) -> u64 {
    let ones = (1u64 << b) - 1;
    let yyy = ones << (m + s.max(0) as u32);
    let y = x & yyy;
    x ^ if s >= 0 { y >> s } else { y << (-s) }
}

fn small_swizzle() -> impl Strategy<Value = Swizzle> {
    (0u32..=3, 0u32..=4, -5i32..=5)
        .prop_filter("valid", |&(b, _, s)| s.unsigned_abs() >= b)
        .prop_map(|(b, m, s)| Swizzle::new(b, m, s).expect("valid"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The masks are the bits read and the bits written, found by applying the swizzle to each bit;
    /// a swizzle that moves bits spans up to its highest one.
    #[test]
    fn masks_and_size_are_the_bits_it_moves(sw in small_swizzle()) {
        let (mut read, mut written) = (0u64, 0u64);
        for i in 0..20 {
            let moved = sw.apply(1i64 << i).expect("apply") as u64 ^ (1u64 << i);
            if moved != 0 {
                read |= 1u64 << i;
                written |= moved;
            }
        }
        prop_assert_eq!(sw.masks(), (read, written));
        let (b, m, s) = sw.params();
        prop_assert_eq!(sw.size(), 1u64 << (b + m + s.unsigned_abs()));
        if b > 0 {
            prop_assert_eq!(sw.size(), 1u64 << (64 - (read | written).leading_zeros()));
        }
    }

    #[test]
    fn swizzle_is_the_definition_and_an_involution(sw in small_swizzle(), x in 0i64..4096) {
        let (b, m, s) = sw.params();
        let y = sw.apply(x).expect("apply");
        prop_assert_eq!(y as u64, swizzle_ref(b, m, s, x as u64));
        prop_assert_eq!(sw.apply(y).expect("apply"), x);
        prop_assert_eq!(sw.to_string().parse::<Swizzle>().expect("reparse"), sw);
    }

    #[test]
    fn swizzle_composition_or_no_swizzle_exists(s1 in small_swizzle(), s2 in small_swizzle()) {
        let want: Vec<i64> = (0..4096)
            .map(|x| s1.apply(s2.apply(x).expect("s2")).expect("s1"))
            .collect();
        match s1.compose(&s2) {
            Ok(r) => {
                for (x, w) in want.iter().enumerate() {
                    prop_assert_eq!(r.apply(x as i64).expect("r"), *w);
                }
            }
            Err(_) => {
                // Every swizzle that moves bits below 12 (all the candidates) differs somewhere.
                for b in 0u32..=6 { for m in 0u32..=11 { for s in -11i32..=11 {
                    let Ok(c) = Swizzle::new(b, m, s) else { continue };
                    let same = want.iter().enumerate().all(|(x, w)| c.apply(x as i64).ok() == Some(*w));
                    prop_assert!(!same, "{} o {} errs, yet {} is their composition", s1, s2, c);
                }}}
            }
        }
    }

    #[test]
    fn cute_to_axe_and_back_is_the_identity(l in layout(5, -3..=9)) {
        let axe = l.to_axe().expect("to axe");
        let lv = brute(&l);
        for (x, v) in lv.iter().enumerate() {
            let at = axe.apply(x as u64).expect("apply");
            prop_assert_eq!(at, vec![Coord::on(Axis::memory(), *v)]);
        }
        let back = Layout::from_axe(&axe, Some(l.shape())).expect("back");
        prop_assert_eq!(brute(&back), lv.clone());
        prop_assert_eq!(back.shape(), l.shape());
        // Exactly, extent-1 leaves' strides included (a CuTe layout evaluated past its size uses them).
        prop_assert_eq!(&back, &l);
        // Also from the canonical Axe form (iters merged, extent-1 iters dropped): split again.
        let canon = axe.canonicalize().expect("canonical");
        let back = Layout::from_axe(&canon, Some(l.shape())).expect("from canonical");
        prop_assert_eq!(brute(&back), lv);
    }

    #[test]
    fn tv_layouts_invert_onto_tid_and_val(
        extents in vec(2i64..=4, 1..=4),
        order in vec(0usize..100, 4),
        sides in vec(any::<bool>(), 4),
        replicas in vec(2i64..=3, 0..=2),
    ) {
        // A compact tile radix, its digits dealt to threads and values in a random order.
        let n = extents.len();
        let mut strides = vec![0i64; n];
        let mut acc = 1;
        for (k, e) in extents.iter().enumerate() { strides[k] = acc; acc *= e; }
        let mut idx: Vec<usize> = (0..n).collect();
        idx.sort_by_key(|&k| order[k]);
        let (mut th, mut va) = (Vec::new(), Vec::new());
        for (j, &k) in idx.iter().enumerate() {
            if sides[j] { th.push((extents[k], strides[k])); } else { va.push((extents[k], strides[k])); }
        }
        for r in &replicas { th.insert(0, (*r, 0)); }
        let mode = |v: &Vec<(i64, i64)>| Layout::from_modes(v).expect("mode");
        let tv = Layout::concat(&[mode(&th), mode(&va)]).expect("tv");
        let axe = tv_to_axe(&tv).expect("compact tile converts");
        check_tv_law(&tv, &axe)?;
        let back = tv_from_axe(&axe).expect("back");
        prop_assert_eq!(&back, &tv);
    }

    #[test]
    fn tv_conversion_fails_only_when_the_tile_is_not_covered_once(
        th in layout(3, 0..=8), va in layout(3, 0..=8),
    ) {
        let tv = Layout::concat(&[th, va]).expect("tv");
        match tv_to_axe(&tv) {
            Ok(axe) => check_tv_law(&tv, &axe)?,
            Err(_) => {
                // The non-replicated leaves do not enumerate [0, N) exactly once.
                let dense: Vec<(i64, i64)> =
                    tv.modes_flat().into_iter().filter(|m| m.0 > 1 && m.1 != 0).collect();
                let mut v = brute(&Layout::from_modes(&dense).expect("dense"));
                v.sort();
                prop_assert_ne!(v.clone(), (0..v.len() as i64).collect::<Vec<_>>());
            }
        }
    }
}

fn check_tv_law(tv: &Layout, axe: &AxeLayout) -> Result<(), TestCaseError> {
    let (t, v) = (tv.mode(0).expect("t").size(), tv.mode(1).expect("v").size());
    let tid = Axis::new("tid").expect("tid");
    let val = Axis::new("val").expect("val");
    let n = axe.size() as i64;
    for x in 0..n {
        let want: BTreeSet<(i64, i64)> = (0..t)
            .flat_map(|a| (0..v).map(move |b| (a, b)))
            .filter(|&(a, b)| {
                tv.eval_coord(&IntTuple::Tuple(vec![IntTuple::Int(a), IntTuple::Int(b)]))
                    .expect("eval")
                    == x
            })
            .collect();
        let got: BTreeSet<(i64, i64)> = axe
            .apply(x as u64)
            .expect("apply")
            .iter()
            .map(|c| (c.get(&tid), c.get(&val)))
            .collect();
        prop_assert_eq!(got, want, "tile index {} of {} / {}", x, tv, axe);
    }
    // Every (thread, value) lands in the tile.
    prop_assert_eq!(n * (axe.replica_count() as i64), t * v);
    Ok(())
}
