//! Random layouts and brute-force references shared by the property tests.
#![allow(dead_code)]

use std::collections::HashSet;
use std::ops::RangeInclusive;

use axe_cute::{IntTuple, Layout};
use proptest::collection::vec;
use proptest::prelude::*;

/// A random layout of depth ≤ 2 and rank ≤ 3, extents 1..=`max_extent`, strides in `strides`, size ≤ 96.
pub fn layout(max_extent: i64, strides: RangeInclusive<i64>) -> impl Strategy<Value = Layout> {
    let leaf = (1..=max_extent, strides);
    let mode = prop_oneof![
        leaf.clone()
            .prop_map(|(s, d)| (IntTuple::Int(s), IntTuple::Int(d))),
        vec(leaf, 1..=3).prop_map(|v| (
            IntTuple::Tuple(v.iter().map(|m| IntTuple::Int(m.0)).collect()),
            IntTuple::Tuple(v.iter().map(|m| IntTuple::Int(m.1)).collect()),
        )),
    ];
    prop_oneof![
        mode.clone(),
        vec(mode, 1..=3).prop_map(|v| {
            let (s, d): (Vec<_>, Vec<_>) = v.into_iter().unzip();
            (IntTuple::Tuple(s), IntTuple::Tuple(d))
        }),
    ]
    .prop_map(|(s, d)| Layout::new(s, d).expect("valid layout"))
    .prop_filter("small", |l| l.size() <= 96)
}

/// The value of every flat index, computed from the definition (colexicographic digits).
pub fn brute(l: &Layout) -> Vec<i64> {
    let shape = l.shape().leaves();
    let stride = l.stride().leaves();
    (0..l.size())
        .map(|i| {
            let mut rest = i;
            let mut v = 0;
            for (s, d) in shape.iter().zip(&stride) {
                v += (rest % s) * d;
                rest /= s;
            }
            v
        })
        .collect()
}

/// `A(x)` for any `x ≥ 0` as CuTe evaluates it (the definition, written out): `x`'s colexicographic
/// digits over the flat leaves, the last leaf taking whatever is left (its extent, even 1, ignored).
pub fn extended(a: &Layout, x: i64) -> i64 {
    let shape = a.shape().leaves();
    let stride = a.stride().leaves();
    let mut rest = x;
    let mut v = 0;
    for (k, (s, d)) in shape.iter().zip(&stride).enumerate() {
        if k + 1 == shape.len() {
            v += rest * d;
        } else {
            v += (rest % s) * d;
            rest /= s;
        }
    }
    v
}

/// Whether some layout (any shape) takes exactly `values`: every ordered factorization of `n` into
/// factors ≥ 2 is tried, its strides being forced (`d_k = values[n_1·…·n_{k−1}]`).
pub fn some_layout_fits(values: &[i64]) -> bool {
    let n = values.len();
    let mut all = Vec::new();
    facts(n, &mut all, &mut Vec::new());
    all.into_iter().any(|fs| {
        let mut strides = Vec::new();
        let mut p = 1;
        for &f in &fs {
            strides.push(values[p % n.max(1)]);
            p *= f;
        }
        (0..n).all(|x| {
            let mut rest = x;
            let mut v = 0i64;
            for (f, d) in fs.iter().zip(&strides) {
                v += (rest % f) as i64 * d;
                rest /= f;
            }
            v == values[x]
        })
    })
}

/// Whether the values are pairwise distinct.
pub fn injective(values: &[i64]) -> bool {
    values.iter().collect::<HashSet<_>>().len() == values.len()
}

/// The flat index of `(c_0, c_1, ...)` within modes of the given sizes (colexicographic).
pub fn flat_of(coords: &[i64], sizes: &[i64]) -> i64 {
    let mut x = 0;
    let mut w = 1;
    for (c, s) in coords.iter().zip(sizes) {
        x += c * w;
        w *= s;
    }
    x
}

/// The sizes of the top-level modes.
pub fn mode_sizes(l: &Layout) -> Vec<i64> {
    l.modes().expect("modes").iter().map(Layout::size).collect()
}

/// Every ordered factorization of `n` into factors of 2 or more, appended to `out` after `cur`.
fn facts(n: usize, out: &mut Vec<Vec<usize>>, cur: &mut Vec<usize>) {
    if n == 1 {
        out.push(cur.clone());
        return;
    }
    for f in 2..=n {
        if n.is_multiple_of(f) {
            cur.push(f);
            facts(n / f, out, cur);
            cur.pop();
        }
    }
}

/// Whether some layout `R` of size `N ∈ [cosize, 2·cosize]` with strides in `[−size, size]` has
/// `R(v[i]) = i` for every `i` (every factorization of every `N`, every stride choice; the strides at a
/// place value that `L` takes are forced).
pub fn some_left_inverse_within(v: &[i64], cosize: i64) -> bool {
    let size = v.len() as i64;
    let pre: std::collections::HashMap<i64, i64> =
        v.iter().enumerate().map(|(i, x)| (*x, i as i64)).collect();
    let range: Vec<i64> = (-size..=size).collect();
    for n in cosize..=(2 * cosize) {
        let mut fs = Vec::new();
        facts(n as usize, &mut fs, &mut Vec::new());
        for f in fs {
            let mut p = 1i64;
            let mut places = vec![];
            for &e in &f {
                places.push(p);
                p *= e as i64;
            }
            let forced: Vec<Option<i64>> = places.iter().map(|pl| pre.get(pl).copied()).collect();
            let free: Vec<usize> = (0..f.len()).filter(|&k| forced[k].is_none()).collect();
            let total = (range.len() as u64).pow(free.len() as u32);
            for mut code in 0..total {
                let mut d: Vec<i64> = forced.iter().map(|x| x.unwrap_or(0)).collect();
                for &k in &free {
                    d[k] = range[(code % range.len() as u64) as usize];
                    code /= range.len() as u64;
                }
                let ok = v.iter().enumerate().all(|(i, &x)| {
                    let mut rest = x as usize;
                    let mut val = 0;
                    for (e, dd) in f.iter().zip(&d) {
                        val += (rest % e) as i64 * dd;
                        rest /= e;
                    }
                    x < n && val == i as i64
                });
                if ok {
                    return true;
                }
            }
        }
    }
    false
}

/// Whether some `R` of size `N ∈ [cosize, 2·cosize]` with strides in `(−size, size)` is a generalised
/// inverse of the values `v` of a layout (`v[R(x)] = x` for every value `x`), by exhaustive search.
pub fn some_generalised_inverse_within(v: &[i64], cosize: i64) -> bool {
    let size = v.len() as i64;
    let range: Vec<i64> = (1 - size..size).collect();
    for n in cosize..=(2 * cosize) {
        let mut fs = Vec::new();
        facts(n as usize, &mut fs, &mut Vec::new());
        for f in fs {
            // Each stride: a preimage of the value P_k where there is one, else any in the range.
            let mut p = 1i64;
            let mut choices: Vec<Vec<i64>> = Vec::new();
            for &e in &f {
                let pre: Vec<i64> = (0..size).filter(|&j| v[j as usize] == p).collect();
                choices.push(if pre.is_empty() { range.clone() } else { pre });
                p *= e as i64;
            }
            let total: u64 = choices.iter().map(|c| c.len() as u64).product();
            for mut code in 0..total {
                let d: Vec<i64> = choices
                    .iter()
                    .map(|c| {
                        let x = c[(code % c.len() as u64) as usize];
                        code /= c.len() as u64;
                        x
                    })
                    .collect();
                let ok = v.iter().all(|&x| {
                    let mut rest = x as usize;
                    let mut j = 0;
                    for (e, dd) in f.iter().zip(&d) {
                        j += (rest % e) as i64 * dd;
                        rest /= e;
                    }
                    x < n && (0..size).contains(&j) && v[j as usize] == x
                });
                if ok {
                    return true;
                }
            }
        }
    }
    false
}
