//! What the tests share: a tiny deterministic generator of random cases, and who holds what.
#![allow(dead_code, clippy::expect_used)]

use std::collections::BTreeMap;
use std::ops::Range;

use axe_shard::{AxisUse, Mesh, Sharding};

/// A tiny deterministic generator (xorshift; the cases shrink by their seed).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A number below `n` (0 for `n` = 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// `v` in a random order.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
    /// A random ordered factorisation of `n` into `k` factors (some may be 1).
    pub fn factors(&mut self, n: u64, k: usize) -> Vec<u64> {
        let mut out = vec![1u64; k.max(1)];
        let mut rest = n;
        let mut p = 2;
        while rest > 1 {
            while rest.is_multiple_of(p) {
                let i = self.below(out.len() as u64) as usize;
                out[i] *= p;
                rest /= p;
            }
            p += 1;
        }
        out
    }
}

/// Per device id: its region, and how many devices share its partial sum (1: none).
pub fn holdings(m: &Mesh, s: &Sharding) -> BTreeMap<u64, (Vec<Range<u64>>, u64)> {
    let partial: u64 = s
        .axis_use()
        .iter()
        .zip(m.sizes())
        .filter(|(u, _)| matches!(u, AxisUse::Partial(_)))
        .map(|(_, &n)| n)
        .product();
    s.regions(m)
        .expect("regions")
        .into_iter()
        .map(|d| (d.device, (d.region, partial)))
        .collect()
}
