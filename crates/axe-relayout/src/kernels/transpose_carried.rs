//! Transposes into destination rows that are not whole cache lines apart, streamed: each tile through a
//! buffer, its rows written up to their last line boundary, the rest held back for the next tile.

#![allow(unsafe_code)]

use super::transpose::{block_kernel, with_stage};
use super::*;

/// The bytes of one destination row that a tile of [`transpose_carried`] held back for the next: fewer
/// than a cache line's, those past the last line boundary its part of the row reached, kept at the end
/// of `bytes`. They belong just before the next tile's first element in that row.
#[derive(Clone, Copy)]
pub struct Carry {
    len: u8,
    bytes: [u8; 64],
}

impl Default for Carry {
    fn default() -> Self {
        Carry {
            len: 0,
            bytes: [0; 64],
        }
    }
}

/// [`transpose`] of an `na`×`nb` tile (element (x, y) read at `x·s[0] + y`, written at `x + y·s[3]`, in
/// elements of `w` bytes) for destination rows that are not whole cache lines apart, streamed. Row `y`
/// of the destination gets the bytes `carry[y]` held back from the tile before it in that row (the
/// source rows just before this tile's) and then this tile's part, but only up to the last line
/// boundary they reach, so that every line is written whole with non-temporal stores but for the first
/// and last of each row, which take ordinary stores; the bytes past the boundary go back into
/// `carry[y]`, or are written too when `last` (no tile follows in the row).
///
/// Writing each tile's part straight to the destination instead would leave a partly written line at
/// both ends of every part, read from memory and written back twice, or with non-temporal stores
/// flushed half full.
///
/// # Safety
/// Every addressed element must lie inside its buffer, and so must the `carry[y].len` bytes before
/// row `y`'s first; `carry` has `nb` entries.
pub unsafe fn transpose_carried(
    isa: Isa,
    src: *const u8,
    dst: *mut u8,
    s: [i64; 4],
    (na, nb, w): (usize, usize, usize),
    carry: &mut [Carry],
    last: bool,
) {
    // Buffer rows: a line for the carried bytes, the part, then padding to a whole line and one more,
    // so that rows written together do not all fall into the same cache sets.
    let part = na * w;
    let bp = 64 + part.next_multiple_of(64) + 64;
    // A row block at a time, its rows copied out at once, so that their writes go on while the next
    // block's rows are read.
    let (_, bb, ..) = block_kernel(w, isa);
    with_stage(bp * nb, |buf| {
        for y0 in (0..nb).step_by(bb) {
            let y1 = (y0 + bb).min(nb);
            transpose(
                isa,
                (false, true),
                src.add(y0 * w),
                buf.add(y0 * bp + 64),
                [s[0], 1, 1, (bp / w) as i64],
                (na, y1 - y0, w),
            );
            for (y, held) in carry.iter_mut().enumerate().take(y1).skip(y0) {
                let c = held.len as usize;
                let row = buf.add(y * bp + 64);
                let from = row.sub(c);
                // (A whole line each way, a fixed size the compiler moves in registers: the buffer
                // row has a line before its part and one past it.)
                std::ptr::copy_nonoverlapping(held.bytes.as_ptr(), row.sub(64), 64);
                let to = dst
                    .wrapping_offset((y as i64 * s[3] * w as i64) as isize)
                    .wrapping_sub(c);
                let len = c + part;
                let keep = if last {
                    0
                } else {
                    let end = to as usize + len;
                    let boundary = end & !63;
                    if boundary > to as usize {
                        end - boundary
                    } else {
                        len
                    }
                };
                copy(isa, true, from, to, len - keep);
                std::ptr::copy_nonoverlapping(from.add(len).sub(64), held.bytes.as_mut_ptr(), 64);
                held.len = keep as u8;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

        /// Tiles of source rows carried one to the next along every destination row, against the law
        /// element by element: element (x, y), read at `x·sr + y`, is written at `skew + x + y·dr`
        /// (in elements), and nothing else is written, whatever the tiles' cut, the rows' padding
        /// (rows not whole lines apart) or the destination's offset from a line.
        #[test]
        fn carried_tiles_match_the_law(
            w in prop::sample::select(vec![1usize, 2, 4, 8]),
            (na, nb) in (1usize..300, 1usize..70),
            (cut, pad_d, skew) in (1usize..200, 0usize..70, 0usize..64),
            seed in any::<u64>(),
        ) {
            let (sr, dr) = (nb + 3, na + pad_d);
            let src = super::super::test_bytes::noise(na * sr * w, seed);
            let size = skew + nb * dr * w + 64;
            let mut want = vec![0x5au8; size];
            for x in 0..na {
                for y in 0..nb {
                    let (from, to) = ((x * sr + y) * w, skew + (x + y * dr) * w);
                    want[to..to + w].copy_from_slice(&src[from..from + w]);
                }
            }
            for isa in Isa::available().into_iter().filter(|&i| carries(i)) {
                let mut dst = vec![0x5au8; size];
                let mut carry = vec![Carry::default(); nb];
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
                prop_assert!(
                    dst == want,
                    "{}: {}×{} of {} bytes in tiles of {} rows, rows {} apart, {} bytes in",
                    isa.name(), na, nb, w, cut, dr, skew
                );
            }
        }
    }
}
