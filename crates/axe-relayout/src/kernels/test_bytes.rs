//! Bytes for the kernels' tests: a run of `n` that every seed makes differently, so that a byte put
//! in the wrong place shows.

/// `n` bytes of the xorshift sequence from `seed` (64-bit xorshift with shifts 13, 7 and 17, its low
/// byte each step; an even seed is made odd so that the sequence never sticks at zero).
pub(super) fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}
