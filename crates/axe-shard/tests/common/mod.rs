//! What the tests share: a tiny deterministic generator of random cases.
#![allow(dead_code)]

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
