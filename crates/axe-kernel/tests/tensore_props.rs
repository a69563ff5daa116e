#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Property tests of `gemm.tensore` on random SBUF/PSUM layouts: the instruction shape dispatch
//! picks is the largest legal one (brute force over every tile and step of each dimension), a
//! refusal names a dimension where only single-element tiles are legal, and the interpreter's result
//! equals the f64 reference.

mod tensore_util;

use axe_kernel::DType;
use axe_layout::{Axis, Iter, Layout};
use proptest::prelude::*;
use tensore_util::{brute, check_numbers, plan_of, Case};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random factorization of `n` into 1–3 factors, outer to inner.
fn factors(n: u64, rng: &mut Rng) -> Vec<u64> {
    let mut out = Vec::new();
    let mut left = n;
    for _ in 0..rng.below(3) {
        let divs: Vec<u64> = (2..left).filter(|d| left.is_multiple_of(*d)).collect();
        if divs.is_empty() {
            break;
        }
        let d = divs[rng.below(divs.len() as u64) as usize];
        out.push(d);
        left /= d;
    }
    out.push(left);
    let mut order: Vec<u64> = out;
    // Shuffle: any order of factors is a factorization.
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

/// A random layout of `shape` on `P` (at most 128 partitions) and `F`: each dimension factored,
/// each factor on `P` or `F` (mostly the axis `on_p` says TensorE wants for that dimension), the
/// factors of an axis in a random physical order, packed or with gaps.
fn layout(shape: [u64; 2], on_p: [bool; 2], rng: &mut Rng) -> Layout {
    let mut fs: Vec<(u64, bool)> = Vec::new(); // (extent, on P), in logical order
    for (d, want) in shape.into_iter().zip(on_p) {
        for f in factors(d, rng) {
            fs.push((f, if rng.below(8) == 0 { !want } else { want }));
        }
    }
    // At most 128 partitions: move factors to F until the partitions fit.
    loop {
        let p: u64 = fs.iter().filter(|(_, p)| *p).map(|(e, _)| e).product();
        if p <= 128 {
            break;
        }
        if let Some(x) = fs.iter_mut().find(|(e, p)| *p && *e > 1) {
            x.1 = false;
        }
    }
    let mut strides = vec![0i64; fs.len()];
    for on_p in [true, false] {
        let mut idx: Vec<usize> = (0..fs.len()).filter(|&i| fs[i].1 == on_p).collect();
        for i in (1..idx.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            idx.swap(i, j);
        }
        let mut s: i64 = 1;
        let total: u64 = idx.iter().map(|&i| fs[i].0).product();
        let mut room = 128 / total.max(1);
        for &i in idx.iter().rev() {
            // A gap now and then (on P only while the partitions still fit).
            if rng.below(if on_p { 10 } else { 4 }) == 0 && (!on_p || room >= 2) {
                s *= 2;
                room /= 2;
            }
            strides[i] = s;
            s *= fs[i].0 as i64;
        }
    }
    let iters: Vec<Iter> = fs
        .iter()
        .zip(&strides)
        .map(|(&(e, p), &s)| {
            Iter::new(e, s, Axis::new(if p { "P" } else { "F" }).unwrap()).unwrap()
        })
        .collect();
    Layout::from_shard(iters).unwrap()
}

fn random_case(sizes: [u64; 3], seed: u64) -> Case {
    let [m, n, k] = sizes;
    let mut rng = Rng(seed | 1);
    Case {
        m,
        n,
        k,
        a: layout([m, k], [false, true], &mut rng),
        b: layout([k, n], [true, false], &mut rng),
        c: layout([m, n], [true, false], &mut rng),
    }
}

const MK: [u64; 14] = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 96, 128, 256];
const N: [u64; 12] = [1, 2, 3, 4, 8, 12, 16, 64, 96, 512, 768, 1024];

fn check_largest(case: &Case) {
    let (tm, tn, tk) = brute(case);
    match plan_of(case) {
        Ok(p) => {
            assert_eq!(
                (p.m.tile, p.n.tile, p.k.tile),
                (tm, tn, tk),
                "dispatch's (M, N, K) against brute force for {case:?}"
            );
            for d in [&p.m, &p.n, &p.k] {
                let looped: u64 = d.loops.iter().map(|(e, _)| e).product();
                assert_eq!(d.tile * looped, d.size, "{d:?}");
            }
        }
        Err(why) => {
            let t = match why.chars().next() {
                Some('M') => tm,
                Some('N') => tn,
                Some('K') => tk,
                _ => panic!("a reason that names no dimension: {why}"),
            };
            assert_eq!(
                t, 1,
                "declined ({why}) but brute force finds tiles of {t}: {case:?}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_instruction_is_the_largest_legal_one(
        m in prop::sample::select(MK.to_vec()),
        n in prop::sample::select(N.to_vec()),
        k in prop::sample::select(MK.to_vec()),
        seed in any::<u64>(),
    ) {
        check_largest(&random_case([m, n, k], seed));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_interpreter_matches_the_reference(
        m in prop::sample::select(vec![1u64, 2, 3, 4, 6, 8, 12, 16, 32]),
        n in prop::sample::select(vec![1u64, 2, 3, 4, 8, 12, 16, 48]),
        k in prop::sample::select(vec![1u64, 2, 3, 4, 6, 8, 16, 24, 64]),
        seed in any::<u64>(),
    ) {
        // The first of the next 400 seeds whose layouts dispatch.
        let case = (0..400u64)
            .map(|i| random_case([m, n, k], seed.wrapping_add(i)))
            .find(|c| plan_of(c).is_ok());
        prop_assert!(case.is_some(), "no dispatchable layouts in 400 seeds for {}×{}×{}", m, n, k);
        let case = case.unwrap();
        let p = check_numbers(&case, DType::F32);
        prop_assert_eq!(&p.decisions[3].variant, "gemm.tensore");
    }
}

/// Enough random cases are dispatched (not refused) for the properties above to mean something.
#[test]
fn most_random_cases_dispatch() {
    let mut ok = 0;
    for seed in 1..200u64 {
        let case = random_case([32, 64, 16], seed * 7919);
        check_largest(&case);
        ok += usize::from(plan_of(&case).is_ok());
    }
    assert!(ok >= 25, "only {ok} of 199 random cases dispatch");
}
