//! Carried transposes of 4-byte elements into destination rows that start on a cache line or half a
//! line past one (rows an odd multiple of 32 bytes apart, as `f32[8200,8200]` transposed has), with no
//! buffer: each 32-byte half a register block stores is aligned, so a row's line is streamed whole
//! from the last block's second half, held in a [`Carry`], and the next block's first.

#![allow(unsafe_code)]

use std::arch::x86_64::*;

use super::transpose::FETCH_AHEAD;
use super::transpose_blocks::columns_8x8_f32;
use super::transpose_carried::{transpose_buffered, Carry};
use super::*;

/// Whether [`transpose_carried`](super::transpose_carried) of `w`-byte elements into rows starting at
/// `dst`, `row` elements apart, goes through [`transpose_halves`]: 4-byte elements with the AVX
/// block (AVX2 and AVX-512), the first row on a 32-byte boundary and the rows a multiple of 32 bytes
/// apart.
pub fn halves(isa: Isa, w: usize, dst: *const u8, row: i64) -> bool {
    w == 4 && isa.avx2() && (dst as usize).is_multiple_of(32) && (row * 4) % 32 == 0
}

/// [`transpose_carried`](super::transpose_carried) of an `na`×`nb` tile of 4-byte elements (element
/// (x, y) read at `x·s[0] + y`, written at `x + y·s[3]`) into rows that start on a line or 32 bytes
/// past one, without a buffer. The law is the same: row `y` gets the bytes `carry[y]` held back, then
/// the tile's part; bytes past the last line boundary go back into `carry[y]` unless `last`.
///
/// The whole 16×16 blocks go straight to the destination. A row on a line takes each block's 64 bytes
/// as one streamed line. A row half a line past one streams the line that the block before ends and
/// this block starts (the held half, then this block's first 32 bytes) and holds this block's second
/// half for the next; the row's first half-line, whose line starts before the row, takes an ordinary
/// store. Held bytes that do not make such a half go out first with ordinary stores; rows past the
/// last whole group of 16 and columns past the last whole block go through the buffer
/// ([`transpose_buffered`]), which carries on from what the blocks held.
///
/// # Safety
/// As [`transpose_carried`](super::transpose_carried); `halves` holds for `dst` and `s[3]`.
pub unsafe fn transpose_halves(
    isa: Isa,
    src: *const u8,
    dst: *mut u8,
    s: [i64; 4],
    (na, nb): (usize, usize),
    carry: &mut [Carry],
    last: bool,
) {
    let (sr, dr) = (s[0] as isize * 4, s[3] as isize * 4);
    let (fa, fb) = (na / 16 * 16, nb / 16 * 16);
    if fa == 0 {
        return transpose_buffered(isa, src, dst, s, (na, nb, 4), carry, last);
    }
    for y0 in (0..fb).step_by(16) {
        let held = &mut carry[y0..y0 + 16];
        let rows = dst.offset(y0 as isize * dr);
        for (r, h) in held.iter_mut().enumerate() {
            let row = rows.offset(r as isize * dr);
            if h.len != 0 && !(h.len == 32 && (row as usize) % 64 == 32) {
                put_held(h, row);
            }
        }
        let from = src.add(y0 * 4);
        // Once per line of each source row: the line FETCH_AHEAD bytes on (see FETCH_AHEAD).
        let ahead = std::hint::black_box(FETCH_AHEAD);
        for x in (0..fa).step_by(16) {
            block_halves(
                from.offset(x as isize * sr),
                rows.add(x * 4),
                (sr, dr),
                ahead,
                held,
            );
        }
        if fa < na {
            let (from, to) = (from.offset(fa as isize * sr), rows.add(fa * 4));
            transpose_buffered(isa, from, to, s, (na - fa, 16, 4), held, last);
        } else if last {
            for (r, h) in held.iter_mut().enumerate() {
                put_held(h, rows.offset(r as isize * dr).add(fa * 4));
            }
        }
    }
    if fb < nb {
        let (from, to) = (src.add(fb * 4), dst.offset(fb as isize * dr));
        transpose_buffered(isa, from, to, s, (na, nb - fb, 4), &mut carry[fb..], last);
    }
}

/// Writes the bytes `h` holds just before `at` (where they belong) with ordinary stores.
unsafe fn put_held(h: &mut Carry, at: *mut u8) {
    let c = h.len as usize;
    std::ptr::copy_nonoverlapping(h.bytes.as_ptr().add(64 - c), at.sub(c), c);
    h.len = 0;
}

/// One 16×16 block of 4-byte elements (source rows `sr` bytes apart, destination rows `dr`) as
/// [`transpose_16x16_f32_avx`](super::transpose_blocks), each destination row's 64 bytes streamed as
/// described in [`transpose_halves`] through its entry of `held`.
#[target_feature(enable = "avx")]
unsafe fn block_halves(
    src: *const u8,
    dst: *mut u8,
    (sr, dr): (isize, isize),
    ahead: usize,
    held: &mut [Carry],
) {
    let mut rows = [[_mm256_setzero_ps(); 16]; 2];
    #[allow(clippy::needless_range_loop)]
    for i in 0..16 {
        let p = src.offset(i as isize * sr) as *const f32;
        rows[0][i] = _mm256_loadu_ps(p);
        rows[1][i] = _mm256_loadu_ps(p.add(8));
    }
    fetch_ahead(src, sr, 16, ahead);
    #[allow(clippy::needless_range_loop)]
    for h in 0..2 {
        let half = |g: usize| std::array::from_fn(|i| rows[h][8 * g + i]);
        let (top, bottom) = (columns_8x8_f32(half(0)), columns_8x8_f32(half(1)));
        for c in 0..8 {
            let p = dst.offset((8 * h + c) as isize * dr) as *mut f32;
            let kept = &mut held[8 * h + c];
            if (p as usize).is_multiple_of(64) {
                _mm256_stream_ps(p, top[c]);
                _mm256_stream_ps(p.add(8), bottom[c]);
                continue;
            }
            let slot = kept.bytes.as_mut_ptr().add(32) as *mut f32;
            if kept.len == 32 {
                _mm256_stream_ps(p.sub(8), _mm256_loadu_ps(slot));
                _mm256_stream_ps(p, top[c]);
            } else {
                _mm256_storeu_ps(p, top[c]);
            }
            _mm256_storeu_ps(slot, bottom[c]);
            kept.len = 32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::transpose_carried;
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

        /// Tiles of 4-byte elements carried along destination rows that start on a line or half a line
        /// past one, against the law element by element: element (x, y), read at `x·sr + y`, is written
        /// at `x + y·dr` (in elements) past a line boundary or 32 bytes past one, the bytes each row
        /// held at the start go just before it, and nothing else is written, whatever the tiles' cut (a multiple of 16, which keeps every tile on the
        /// bufferless path, or not, which mixes it with the buffer) and the tile's extent (whole
        /// blocks, whose last tile ends on a held half-line, or not).
        #[test]
        fn half_line_rows_match_the_law(
            na in prop_oneof![(1usize..19).prop_map(|k| 16 * k), 1usize..300],
            nb in prop_oneof![(1usize..5).prop_map(|k| 16 * k), 1usize..70],
            cut in prop_oneof![(1usize..12).prop_map(|k| 16 * k), 1usize..200],
            (eighths, skew) in (0usize..6, prop::sample::select(vec![64usize, 96])),
            held in 0usize..64,
            seed in any::<u64>(),
        ) {
            let w = 4;
            // Rows a multiple of 8 elements (32 bytes) apart, at least `na`.
            let dr = na.next_multiple_of(8) + 8 * eighths;
            let sr = nb + 3;
            let src = super::super::test_bytes::noise(na * sr * w, seed);
            let size = skew + nb * dr * w + 64;
            let mut want = vec![0x5au8; size];
            // Every row starts with bytes held back before it (its first line's, or any), which
            // belong just before its first element, in the gap after the row before.
            let held = held.min((dr - na) * w);
            let mut carry = vec![Carry::default(); nb];
            for (y, c) in carry.iter_mut().enumerate() {
                c.len = held as u8;
                c.bytes = std::array::from_fn(|i| (i * 7 + y) as u8);
                let to = skew + y * dr * w;
                want[to - held..to].copy_from_slice(&c.bytes[64 - held..]);
            }
            for x in 0..na {
                for y in 0..nb {
                    let (from, to) = ((x * sr + y) * w, skew + (x + y * dr) * w);
                    want[to..to + w].copy_from_slice(&src[from..from + w]);
                }
            }
            for isa in Isa::available().into_iter().filter(|&i| i.avx2()) {
                // The destination on a line boundary (the vector's own start need not be).
                let mut space = vec![0x5au8; size + 64];
                let at = space.as_ptr().align_offset(64);
                let dst = &mut space[at..at + size];
                prop_assert!(halves(isa, w, dst.as_ptr().wrapping_add(skew), dr as i64));
                let mut carry = carry.clone();
                for x0 in (0..na).step_by(cut) {
                    let x1 = (x0 + cut).min(na);
                    // SAFETY: the tile's rows lie inside the source, its columns inside the
                    // destination's rows, and the bytes held back belong to the tiles before it.
                    unsafe {
                        transpose_carried(
                            isa,
                            src.as_ptr().add(x0 * sr * w),
                            dst.as_mut_ptr().add(skew + x0 * w),
                            [sr as i64, 1, 1, dr as i64],
                            (x1 - x0, nb, w),
                            &mut carry,
                            x1 == na,
                        )
                    };
                }
                fence(isa, true);
                let wrong = dst.iter().zip(&want).position(|(a, b)| a != b);
                prop_assert!(
                    wrong.is_none(),
                    "{}: {}×{} in tiles of {} rows, rows {} apart, {} bytes in: byte {:?} differs",
                    isa.name(), na, nb, cut, dr, skew, wrong
                );
            }
        }
    }

    /// Only 4-byte elements under AVX, into rows on 32-byte boundaries, take the bufferless path.
    #[test]
    fn halves_needs_avx_f32_and_32_byte_rows() {
        let line = 4096usize as *const u8;
        for isa in Isa::available() {
            assert_eq!(halves(isa, 4, line, 8200), isa.avx2(), "{}", isa.name());
            assert!(!halves(isa, 2, line, 8200));
            assert!(!halves(isa, 4, line, 8196));
            assert!(!halves(isa, 4, line.wrapping_add(16), 8200));
        }
    }
}
