#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::single_range_in_vec_init,
    missing_docs
)]
//! Every operator against brute-force enumeration of its law (spec §7), on random layouts with up to three
//! axes, negative and zero strides, replicas, offsets and extents that are not powers of two. Every
//! "no such layout" answer on small cases is confirmed by exhaustive search.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use axe_layout::{Layout, LayoutError};
use common::*;
use proptest::prelude::*;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// span_a = max − min + 1 over the whole footprint on axis a (the bounding box), from the maps.
fn brute_span(l: &Layout) -> BTreeMap<String, i64> {
    let mut lo: BTreeMap<String, i64> = BTreeMap::new();
    let mut hi: BTreeMap<String, i64> = BTreeMap::new();
    let names: Vec<String> = l.axes().iter().map(|a| a.name().to_string()).collect();
    for set in full_map(l) {
        for p in set {
            for a in &names {
                let v = p.get(a).copied().unwrap_or(0);
                lo.entry(a.clone())
                    .and_modify(|x| *x = (*x).min(v))
                    .or_insert(v);
                hi.entry(a.clone())
                    .and_modify(|x| *x = (*x).max(v))
                    .or_insert(v);
            }
        }
    }
    names
        .iter()
        .map(|a| (a.clone(), hi[a] - lo[a] + 1))
        .collect()
}

/// All groupings of D by shape, by exhaustive search over refinements; returns the fewest iter count.
fn brute_group(l: &Layout, shape: &[u64]) -> Option<usize> {
    let d = |x: u64| shard_at(l, x);
    let per_dim: Vec<Vec<Vec<u64>>> = shape.iter().map(|&s| factorizations(s)).collect();
    let mut best: Option<usize> = None;
    let mut idx = vec![0usize; shape.len()];
    loop {
        let ext: Vec<u64> = idx
            .iter()
            .enumerate()
            .flat_map(|(i, &k)| per_dim[i][k].clone())
            .collect();
        if iter_list_with_extents(&ext, &d).is_some() {
            best = Some(best.map_or(ext.len(), |b: usize| b.min(ext.len())));
        }
        let mut i = 0;
        loop {
            if i == idx.len() {
                return best;
            }
            idx[i] += 1;
            if idx[i] < per_dim[i].len() {
                break;
            }
            idx[i] = 0;
            i += 1;
        }
    }
}

fn multi_indices(shape: &[u64]) -> Vec<Vec<u64>> {
    let n: u64 = shape.iter().product();
    (0..n).map(|x| digits(x, shape)).collect()
}

fn shape_and_layout(
    max_iters: usize,
    max_extent: u64,
) -> impl Strategy<Value = (Layout, Vec<u64>)> {
    (
        layout_strategy(max_iters, max_extent),
        1usize..=3,
        any::<u64>(),
    )
        .prop_map(|(l, rank, bits)| {
            let s = split_shape(l.size(), rank, bits);
            (l, s)
        })
}

proptest! {
    #![proptest_config(config(400))]

    #[test]
    fn notation_round_trips(l in layout_strategy(5, 7)) {
        let printed = l.to_string();
        let back: Layout = printed.parse().unwrap();
        prop_assert_eq!(&back, &l);
        prop_assert_eq!(back.to_string(), printed);
        prop_assert_eq!(&l.to_tvm().parse::<Layout>().unwrap(), &l);
    }

    #[test]
    fn apply_matches_definition(l in layout_strategy(4, 6)) {
        let brute = full_map(&l);
        for (x, set) in brute.iter().enumerate() {
            let list = l.apply(x as u64).unwrap();
            // Sorted and without repeats, as documented.
            prop_assert!(list.windows(2).all(|w| w[0] < w[1]), "{:?}", list);
            let got: BTreeSet<Pt> = list.iter().map(pt).collect();
            prop_assert_eq!(&got, set);
        }
        let oob = matches!(l.apply(l.size()), Err(LayoutError::IndexOutOfRange { .. }));
        prop_assert!(oob);
        let spans: BTreeMap<String, i64> = l.spans().unwrap().into_iter().map(|(a, s)| (a.name().to_string(), s as i64)).collect();
        prop_assert_eq!(spans, brute_span(&l));
    }

    #[test]
    fn canonicalize_preserves_the_map(l in layout_strategy(5, 6)) {
        let c = l.canonicalize().unwrap();
        prop_assert_eq!(full_map(&c), full_map(&l));
        prop_assert_eq!(&c.canonicalize().unwrap(), &c, "idempotent");
        prop_assert!(c.shard().iter().all(|it| it.extent() > 1));
        prop_assert!(c.replica().iter().all(|it| it.extent() > 1 && it.stride() > 0));
        prop_assert!(l.equivalent(&c).unwrap());
    }

    #[test]
    fn equivalent_is_exact_on_a_dense_space(
        a in layout_strategy(3, 2).prop_filter("size", |l| l.size() <= 8),
        b in layout_strategy(3, 2),
    ) {
        let same = a.size() == b.size() && full_map(&a) == full_map(&b);
        prop_assert_eq!(a.equivalent(&b).unwrap(), same, "{} vs {}", a, b);
    }

    #[test]
    fn equivalent_sees_through_rewrites(l in layout_strategy(4, 6), seed in any::<u64>()) {
        let r = rewrite(&l, seed);
        prop_assert_eq!(full_map(&r), full_map(&l), "rewrite changed the map: {} -> {}", l, r);
        prop_assert!(l.equivalent(&r).unwrap(), "{} vs {}", l, r);
        prop_assert!(r.equivalent(&l).unwrap());
    }

    #[test]
    fn group_law_and_failures((l, shape) in shape_and_layout(4, 6)) {
        match l.group(&shape) {
            Ok(g) => {
                prop_assert_eq!(full_map(&g.layout), full_map(&l));
                prop_assert_eq!(g.shape(), shape.clone());
                let fewest = brute_group(&l, &shape);
                prop_assert_eq!(Some(g.layout.shard().len()), fewest, "not the fewest iters");
            }
            Err(LayoutError::NoGrouping { .. }) => {
                prop_assert_eq!(brute_group(&l, &shape), None, "{} does group by {:?}", l, shape);
            }
            Err(e) => prop_assert!(false, "unexpected error {}", e),
        }
    }

    #[test]
    fn tile_law(
        (a, sa) in shape_and_layout(3, 4),
        b in layout_strategy(3, 4),
        bits in any::<u64>(),
    ) {
        let sb = split_shape(b.size(), sa.len(), bits);
        let (t, st) = match a.tile(&b, &sa, &sb) {
            Ok(x) => x,
            Err(LayoutError::NoGrouping { .. }) => return Ok(()),
            Err(e) => return Err(TestCaseError::fail(e.to_string())),
        };
        prop_assert_eq!(st.clone(), sa.iter().zip(&sb).map(|(x, y)| x * y).collect::<Vec<_>>());
        let sigma = brute_span(&a);
        let f = |k: &str| sigma.get(k).copied().unwrap_or(1);
        let bad = kron_law_violation(&full_map(&t), &st, &full_map(&a), &sa, &full_map(&b), &sb, &f);
        prop_assert_eq!(bad, None, "tile law fails at this multi-index");
    }

    #[test]
    fn tile_of_recovers_both_factors(
        (a, sa) in shape_and_layout(3, 4),
        b in layout_strategy(3, 4),
        bits in any::<u64>(),
    ) {
        let sb = split_shape(b.size(), sa.len(), bits);
        let Ok((t, st)) = a.tile(&b, &sa, &sb) else { return Ok(()) };
        let (b2, sb2) = t.tile_of(&a, &st, &sa).map_err(|e| TestCaseError::fail(format!("tile_of({t}, {a}): {e}")))?;
        prop_assert_eq!(&sb2, &sb);
        let (t2, _) = a.tile(&b2, &sa, &sb2).unwrap();
        prop_assert_eq!(full_map(&t2), full_map(&t));
        match t.tile_of_outer(&b, &st, &sb) {
            Ok((a2, sa2)) => {
                prop_assert_eq!(&sa2, &sa);
                let (t3, _) = a2.tile(&b, &sa2, &sb).unwrap();
                prop_assert_eq!(full_map(&t3), full_map(&t));
            }
            // With replicas the inner layout is searched among T's replica iters; without, it must be found.
            Err(e) => prop_assert!(!a.replica().is_empty() || !b.replica().is_empty(), "tile_of_outer({}, {}): {}", t, b, e),
        }
    }

    #[test]
    fn slice_law_and_failures((l, shape) in shape_and_layout(4, 6), bits in proptest::collection::vec(any::<(u64, u64)>(), 3)) {
        let region: Vec<std::ops::Range<u64>> = shape.iter().zip(&bits).map(|(&s, &(p, q))| {
            let (x, y) = (p % s, q % s);
            x.min(y)..x.max(y) + 1
        }).collect();
        let lens: Vec<u64> = region.iter().map(|r| r.end - r.start).collect();
        let begin: Vec<u64> = region.iter().map(|r| r.start).collect();
        let at = |x: u64| -> u64 {
            let local = digits(x, &lens);
            let global: Vec<u64> = local.iter().zip(&begin).map(|(a, b)| a + b).collect();
            flat(&global, &shape)
        };
        match l.slice(&shape, &region) {
            Ok(s) => {
                prop_assert_eq!(s.size(), lens.iter().product::<u64>());
                let (ms, ml) = (full_map(&s), full_map(&l));
                for x in 0..s.size() {
                    prop_assert_eq!(&ms[x as usize], &ml[at(x) as usize], "slice {} of {} at {}", s, l, x);
                }
            }
            Err(LayoutError::NoSlice(_)) => {
                let n: u64 = lens.iter().product();
                let b = shard_at(&l, at(0));
                let h = |x: u64| sub(&shard_at(&l, at(x)), &b);
                prop_assert!(any_iter_list(n, &h).is_none(), "a slice of {} on {:?} exists", l, region);
            }
            Err(e) => prop_assert!(false, "unexpected error {}", e),
        }
    }

    #[test]
    fn direct_sum_law(
        (a, sa) in shape_and_layout(3, 4),
        b in layout_strategy(3, 4),
        bits in any::<u64>(),
    ) {
        let sb = split_shape(b.size(), sa.len(), bits);
        let Ok((s, ss)) = a.direct_sum(&b, &sa, &sb) else { return Ok(()) };
        // (A⊕B)(x) = A(x div S_B) + B(x mod S_B): the tile law with B inner, A outer and no scaling.
        let bad = kron_law_violation(&full_map(&s), &ss, &full_map(&b), &sb, &full_map(&a), &sa, &|_| 1);
        prop_assert_eq!(bad, None, "direct-sum law fails at this multi-index");
    }
}

proptest! {
    #![proptest_config(config(300))]

    /// tile_of on arbitrary (mostly non-tiled) layouts: an answer satisfies the law; a refusal is confirmed
    /// by the exhaustive argument that B's shard is forced pointwise and must be an iter list.
    #[test]
    fn tile_of_refusals_are_true(
        t in shard_only_strategy(4, 4),
        a in shard_only_strategy(2, 4),
        rank in 1usize..=2,
        bits in any::<(u64, u64)>(),
    ) {
        let sa = split_shape(a.size(), rank, bits.0);
        if t.size() % a.size() != 0 { return Ok(()) }
        let sb = split_shape(t.size() / a.size(), rank, bits.1);
        let st: Vec<u64> = sa.iter().zip(&sb).map(|(x, y)| x * y).collect();
        match t.tile_of(&a, &st, &sa) {
            Ok((b, _)) => {
                let (t2, _) = a.tile(&b, &sa, &sb).unwrap();
                prop_assert_eq!(full_map(&t2), full_map(&t));
            }
            Err(LayoutError::NoTile(_)) | Err(LayoutError::NoGrouping { .. }) => {
                prop_assert!(!brute_tile_of_exists(&t, &a, &st, &sa, &sb), "tile_of({}, {}) exists", t, a);
            }
            Err(e) => prop_assert!(false, "unexpected error {}", e),
        }
    }
}

/// Exhaustive decision for shard-only T and A: B(y) is forced to (T(y·S_A) − O)/σ at every y; B exists iff
/// that is an integer iter-list map that groups by S_B and the tile law then holds at every point.
fn brute_tile_of_exists(t: &Layout, a: &Layout, st: &[u64], sa: &[u64], sb: &[u64]) -> bool {
    if brute_group(a, sa).is_none() {
        return false;
    }
    let sigma = brute_span(a);
    let f = |k: &str| sigma.get(k).copied().unwrap_or(1);
    let nb: u64 = sb.iter().product();
    let forced = |y: u64| -> Option<Pt> {
        let yi = digits(y, sb);
        let x: Vec<u64> = yi.iter().zip(sa).map(|(y, s)| y * s).collect();
        let v = shard_at(t, flat(&x, st));
        v.iter()
            .map(|(k, v)| (v % f(k) == 0).then(|| (k.clone(), v / f(k))))
            .collect()
    };
    if (0..nb).any(|y| forced(y).is_none()) {
        return false;
    }
    let h = |y: u64| forced(y).unwrap_or_default();
    let Some(iters) = any_iter_list(nb, &h) else {
        return false;
    };
    let b = Layout::from_shard(iters).unwrap();
    if brute_group(&b, sb).is_none() {
        return false; // tile needs B grouped by S_B
    }
    kron_law_violation(&full_map(t), st, &full_map(a), sa, &full_map(&b), sb, &f).is_none()
}

/// Checks `T(x) = { p + scale⊙q : p ∈ Inner(x mod S_in), q ∈ Outer(x div S_in) }` at every multi-index `x`
/// over `S_T`, from the full maps; returns the first multi-index where it fails.
fn kron_law_violation(
    mt: &[BTreeSet<Pt>],
    st: &[u64],
    inner: &[BTreeSet<Pt>],
    s_in: &[u64],
    outer: &[BTreeSet<Pt>],
    s_out: &[u64],
    scale_outer: &dyn Fn(&str) -> i64,
) -> Option<Vec<u64>> {
    multi_indices(st).into_iter().find(|x| {
        let y: Vec<u64> = x.iter().zip(s_in).map(|(x, s)| x / s).collect();
        let z: Vec<u64> = x.iter().zip(s_in).map(|(x, s)| x % s).collect();
        let want = minkowski(
            &inner[flat(&z, s_in) as usize],
            &outer[flat(&y, s_out) as usize],
            scale_outer,
        );
        mt[flat(x, st) as usize] != want
    })
}

/// A random semantics-preserving rewrite: split iters, insert unit iters, flip replica signs, split replicas.
fn rewrite(l: &Layout, mut seed: u64) -> Layout {
    use axe_layout::{Coord, Iter};
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n.max(1)
    };
    let mut shard: Vec<Iter> = Vec::new();
    for it in l.shard() {
        let e = it.extent();
        let divisors: Vec<u64> = (2..e).filter(|f| e % f == 0).collect();
        if !divisors.is_empty() && next(2) == 0 {
            let f = divisors[next(divisors.len() as u64) as usize];
            shard.push(Iter::new(e / f, it.stride() * f as i64, *it.axis()).unwrap());
            shard.push(Iter::new(f, it.stride(), *it.axis()).unwrap());
        } else {
            shard.push(*it);
        }
        if next(4) == 0 {
            shard.push(Iter::new(1, next(9) as i64 - 4, *it.axis()).unwrap());
        }
    }
    let mut offset = l.offset().clone();
    let mut replica: Vec<Iter> = Vec::new();
    for it in l.replica() {
        if next(2) == 0 && it.stride() != 0 {
            // (e, s) ≡ (e, −s) shifted by (e−1)·s
            offset = offset
                .checked_add(&Coord::on(
                    *it.axis(),
                    (it.extent() as i64 - 1) * it.stride(),
                ))
                .unwrap();
            replica.push(Iter::new(it.extent(), -it.stride(), *it.axis()).unwrap());
        } else if it.extent() == 4 && next(2) == 0 {
            replica.push(Iter::new(2, it.stride(), *it.axis()).unwrap());
            replica.push(Iter::new(2, 2 * it.stride(), *it.axis()).unwrap());
        } else {
            replica.push(*it);
        }
    }
    if next(3) == 0 {
        replica.push(
            Iter::new(
                1 + next(2),
                0,
                l.axes()
                    .first()
                    .cloned()
                    .unwrap_or(axe_layout::Axis::memory()),
            )
            .unwrap(),
        );
    }
    let n = replica.len() as u64;
    if n > 1 {
        let k = next(n) as usize;
        replica.swap(0, k);
    }
    Layout::new(shard, replica, offset).unwrap()
}

/// Every layout of a tiny space, classified by its map: `equivalent` must agree with map equality on every
/// pair of classes (sound and complete).
#[test]
fn equivalent_is_exact_on_an_exhaustive_space() {
    use axe_layout::{Axis, Coord, Iter};
    let axes = [Axis::memory(), Axis::new("a").unwrap()];
    let mut shards: Vec<Vec<Iter>> = Vec::new();
    for ext in [vec![4], vec![2, 2]] {
        let choices: Vec<Iter> = Vec::new();
        let mut lists = vec![choices];
        for &e in &ext {
            let mut grown = Vec::new();
            for l in &lists {
                for s in -2i64..=2 {
                    for a in &axes {
                        let mut l2 = l.clone();
                        l2.push(Iter::new(e, s, *a).unwrap());
                        grown.push(l2);
                    }
                }
            }
            lists = grown;
        }
        shards.extend(lists);
    }
    let mut replicas: Vec<Vec<Iter>> = vec![vec![]];
    for s in [-1i64, 1, 2] {
        replicas.push(vec![Iter::new(2, s, axes[1]).unwrap()]);
    }
    replicas.push(vec![
        Iter::new(2, 1, axes[1]).unwrap(),
        Iter::new(2, 1, axes[1]).unwrap(),
    ]);
    replicas.push(vec![Iter::new(3, 1, axes[1]).unwrap()]);
    let offsets = [Coord::zero(), Coord::on(axes[1], -1), Coord::on(axes[1], 1)];
    let mut layouts = Vec::new();
    for s in &shards {
        for r in &replicas {
            for o in &offsets {
                layouts.push(Layout::new(s.clone(), r.clone(), o.clone()).unwrap());
            }
        }
    }
    let mut classes: BTreeMap<Vec<BTreeSet<Pt>>, Vec<Layout>> = BTreeMap::new();
    for l in layouts {
        classes.entry(full_map(&l)).or_default().push(l);
    }
    let reps: Vec<&Layout> = classes.values().map(|v| &v[0]).collect();
    for members in classes.values() {
        for m in members {
            assert!(m.equivalent(&members[0]).unwrap(), "{m} ≡ {}", members[0]);
            let hits = reps.iter().filter(|r| m.equivalent(r).unwrap()).count();
            assert_eq!(hits, 1, "{m} is equivalent to {hits} classes");
        }
    }
    assert!(
        classes.len() > 100,
        "the space should be rich: {} classes",
        classes.len()
    );
}
