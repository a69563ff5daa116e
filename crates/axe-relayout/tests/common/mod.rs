//! What the relayout tests share: random bytes, and the law of a strided move checked element by
//! element.

use axe_xla::ArrayShape;

/// `n` pseudo-random bytes (xorshift64 from `seed`).
pub fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

/// A side of a strided tensor: element `e` lies at `base + Σ e_d·strides_d` (in elements).
pub type Strided<'s> = (&'s [i64], i64);

/// Checks that every element of the `dims` box moved from its strided place in `src` to its strided
/// place in `dst` (elements of `w` bytes); `what` names the case in a failure.
pub fn check_moved(
    what: &str,
    (src, dst): (&[u8], &[u8]),
    w: usize,
    dims: &[i64],
    (from, to): (Strided<'_>, Strided<'_>),
) {
    let count: i64 = dims.iter().product();
    let mut e = vec![0i64; dims.len()];
    for _ in 0..count {
        let at = |(st, base): Strided<'_>| {
            w * (base + e.iter().zip(st).map(|(x, s)| x * s).sum::<i64>()) as usize
        };
        let (so, d) = (at(from), at(to));
        assert_eq!(src[so..so + w], dst[d..d + w], "{what}, element {e:?}");
        // The next multi-index, the last dimension fastest.
        for k in (0..dims.len()).rev() {
            e[k] += 1;
            if e[k] < dims[k] {
                break;
            }
            e[k] = 0;
        }
    }
}

/// An XLA shape string, and the same shape with the layout `to`.
pub fn xla_pair(shape: &str, to: &str) -> (ArrayShape, ArrayShape) {
    let a = axe_xla::parse_shape(shape)
        .unwrap()
        .as_array()
        .unwrap()
        .clone();
    let b = ArrayShape {
        layout: axe_xla::parse_layout(to, a.rank()).unwrap(),
        ..a.clone()
    };
    (a, b)
}
