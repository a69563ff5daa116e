#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Brute-force oracles: the induced maps computed straight from the definition, and exhaustive searches
//! over iter lists. Deliberately naive and independent of the library's algorithms.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use axe_layout::{Axis, Coord, Iter, Layout};
use proptest::prelude::*;

/// A coordinate: axis name → value, zeros left out.
pub type Pt = BTreeMap<String, i64>;

pub fn add(a: &Pt, b: &Pt) -> Pt {
    let mut out = a.clone();
    for (k, v) in b {
        *out.entry(k.clone()).or_insert(0) += v;
    }
    out.retain(|_, v| *v != 0);
    out
}

pub fn sub(a: &Pt, b: &Pt) -> Pt {
    add(a, &b.iter().map(|(k, v)| (k.clone(), -v)).collect())
}

pub fn scale(a: &Pt, f: &dyn Fn(&str) -> i64) -> Pt {
    a.iter()
        .map(|(k, v)| (k.clone(), v * f(k)))
        .filter(|(_, v)| *v != 0)
        .collect()
}

pub fn pt(c: &Coord) -> Pt {
    c.components()
        .map(|(a, v)| (a.name().to_string(), v))
        .collect()
}

fn iter_point(iters: &[Iter], digits: &[u64]) -> Pt {
    let mut p = Pt::new();
    for (it, d) in iters.iter().zip(digits) {
        *p.entry(it.axis().name().to_string()).or_insert(0) += *d as i64 * it.stride();
    }
    p.retain(|_, v| *v != 0);
    p
}

/// Digits of x in the mixed radix of the extents (last fastest).
pub fn digits(mut x: u64, extents: &[u64]) -> Vec<u64> {
    let mut d = vec![0; extents.len()];
    for i in (0..extents.len()).rev() {
        d[i] = x % extents[i];
        x /= extents[i];
    }
    d
}

/// D(x) straight from the definition.
pub fn shard_at(l: &Layout, x: u64) -> Pt {
    let ext: Vec<u64> = l.shard().iter().map(|i| i.extent()).collect();
    iter_point(l.shard(), &digits(x, &ext))
}

/// Every point of an iter set (replicas), by full enumeration.
pub fn iter_set(iters: &[Iter]) -> BTreeSet<Pt> {
    let ext: Vec<u64> = iters.iter().map(|i| i.extent()).collect();
    let n: u64 = ext.iter().product();
    (0..n)
        .map(|y| iter_point(iters, &digits(y, &ext)))
        .collect()
}

/// L(x) for every x.
pub fn full_map(l: &Layout) -> Vec<BTreeSet<Pt>> {
    let reps = iter_set(l.replica());
    let off = pt(l.offset());
    (0..l.size())
        .map(|x| {
            let base = add(&shard_at(l, x), &off);
            reps.iter().map(|r| add(&base, r)).collect()
        })
        .collect()
}

/// Row-major flattening.
pub fn flat(idx: &[u64], shape: &[u64]) -> u64 {
    idx.iter().zip(shape).fold(0, |acc, (i, s)| acc * s + i)
}

/// All ordered factorizations of n into factors ≥ 2 (n = 1 → one empty factorization).
pub fn factorizations(n: u64) -> Vec<Vec<u64>> {
    if n == 1 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for f in 2..=n {
        if n.is_multiple_of(f) {
            for mut rest in factorizations(n / f) {
                rest.insert(0, f);
                out.push(rest);
            }
        }
    }
    out
}

/// Exhaustive search: every iter list with extents `ext` has its strides forced by `h` (the stride of
/// iter j is h at the point where digit j is 1 and the others 0); keep those whose map is `h` everywhere.
pub fn iter_list_with_extents(ext: &[u64], h: &dyn Fn(u64) -> Pt) -> Option<Vec<Iter>> {
    let n: u64 = ext.iter().product();
    let mut iters = Vec::new();
    let mut below: u64 = n;
    for &e in ext {
        below /= e;
        let v = h(below);
        if v.len() > 1 {
            return None;
        }
        let (axis, s) = v
            .iter()
            .next()
            .map(|(a, s)| (a.clone(), *s))
            .unwrap_or(("m".to_string(), 0));
        iters.push(Iter::new(e, s, Axis::new(&axis).unwrap()).unwrap());
    }
    (0..n)
        .all(|x| iter_point(&iters, &digits(x, ext)) == h(x))
        .then_some(iters)
}

/// Does any iter list have the map `h` on [0, n)?
pub fn any_iter_list(n: u64, h: &dyn Fn(u64) -> Pt) -> Option<Vec<Iter>> {
    factorizations(n)
        .iter()
        .find_map(|ext| iter_list_with_extents(ext, h))
}

/// A random layout: up to `max_iters` shard iters on the axes {m, a, b}, up to 2 replica iters, an offset.
pub fn layout_strategy(max_iters: usize, max_extent: u64) -> impl Strategy<Value = Layout> {
    let axis = prop_oneof![Just("m"), Just("a"), Just("b")];
    let iter = (1..=max_extent, -6i64..=6, axis.clone());
    let rep = (1..=3u64, -4i64..=4, axis.clone());
    let off = proptest::collection::vec((-5i64..=5, axis), 0..=2);
    (
        proptest::collection::vec(iter, 0..=max_iters),
        proptest::collection::vec(rep, 0..=2),
        off,
    )
        .prop_map(|(s, r, o)| {
            let mk =
                |(e, st, a): (u64, i64, &str)| Iter::new(e, st, Axis::new(a).unwrap()).unwrap();
            let offset = o.iter().fold(Coord::zero(), |c, (v, a)| {
                c.checked_add(&Coord::on(Axis::new(a).unwrap(), *v))
                    .unwrap()
            });
            Layout::new(
                s.into_iter().map(mk).collect(),
                r.into_iter().map(mk).collect(),
                offset,
            )
            .unwrap()
        })
}

/// Same, without replicas or offsets.
pub fn shard_only_strategy(max_iters: usize, max_extent: u64) -> impl Strategy<Value = Layout> {
    layout_strategy(max_iters, max_extent)
        .prop_map(|l| Layout::from_shard(l.shard().to_vec()).unwrap())
}

/// Splits n into `rank` ordered factors, using `bits` to choose where each prime factor goes.
pub fn split_shape(n: u64, rank: usize, mut bits: u64) -> Vec<u64> {
    let mut shape = vec![1u64; rank.max(1)];
    let mut m = n;
    let mut p = 2;
    while m > 1 {
        while m.is_multiple_of(p) {
            let k = (bits % shape.len() as u64) as usize;
            bits = (bits / shape.len() as u64) ^ bits.rotate_left(7);
            shape[k] *= p;
            m /= p;
        }
        p += 1;
    }
    shape
}

/// `{ p + scale⊙q : p ∈ ps, q ∈ qs }`: the set-wise sum the tile and direct-sum laws are stated with.
pub fn minkowski(
    ps: &BTreeSet<Pt>,
    qs: &BTreeSet<Pt>,
    scale_q: &dyn Fn(&str) -> i64,
) -> BTreeSet<Pt> {
    ps.iter()
        .flat_map(|p| qs.iter().map(move |q| add(p, &scale(q, scale_q))))
        .collect()
}
