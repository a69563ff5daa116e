//! NEON register transposes for aarch64: 4×4 blocks of 4-byte elements (`trn1`/`trn2` on 32-bit then on
//! 64-bit lanes), four side by side so that each source row's 64 bytes, a whole line, are read at once.
//! Every other kernel on aarch64 is the portable one, which the compiler vectorises with NEON (part of
//! every aarch64 processor).

#![allow(unsafe_code)]

use std::arch::aarch64::*;

use super::transpose_portable::transpose_portable;

/// The transpose of one 4×4 block of 32-bit elements held as four row vectors: pairs of rows
/// interleaved by 32-bit lanes (`trn1`/`trn2`), then the pairs by 64-bit lanes, giving the columns.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn columns_4x4(r: [uint32x4_t; 4]) -> [uint32x4_t; 4] {
    // t0 = r0[0] r1[0] r0[2] r1[2]; t1 = r0[1] r1[1] r0[3] r1[3]; t2, t3 the same of rows 2, 3.
    let (t0, t1) = (vtrn1q_u32(r[0], r[1]), vtrn2q_u32(r[0], r[1]));
    let (t2, t3) = (vtrn1q_u32(r[2], r[3]), vtrn2q_u32(r[2], r[3]));
    let wide = |v: uint32x4_t| vreinterpretq_u64_u32(v);
    let narrow = |v: uint64x2_t| vreinterpretq_u32_u64(v);
    [
        narrow(vtrn1q_u64(wide(t0), wide(t2))),
        narrow(vtrn1q_u64(wide(t1), wide(t3))),
        narrow(vtrn2q_u64(wide(t0), wide(t2))),
        narrow(vtrn2q_u64(wide(t1), wide(t3))),
    ]
}

/// A block of 4 source rows by 16 columns of 4-byte elements: each row's 64 bytes loaded at once, four
/// 4×4 transposes ([`columns_4x4`]), 16 bytes stored to each of 16 destination rows (the next block along
/// x fills the rest of those rows' lines).
#[target_feature(enable = "neon")]
unsafe fn transpose_4x16_u32(src: *const u8, dst: *mut u8, sr: isize, dr: isize) {
    let rows: [uint32x4x4_t; 4] =
        std::array::from_fn(|i| vld1q_u32_x4(src.offset(i as isize * sr) as *const u32));
    let quarter = |q: usize| -> [uint32x4_t; 4] {
        std::array::from_fn(|i| match q {
            0 => rows[i].0,
            1 => rows[i].1,
            2 => rows[i].2,
            _ => rows[i].3,
        })
    };
    for q in 0..4 {
        let cols = columns_4x4(quarter(q));
        for (j, c) in cols.into_iter().enumerate() {
            vst1q_u32(dst.offset((4 * q + j) as isize * dr) as *mut u32, c);
        }
    }
}

/// [`transpose`](super::transpose) of 4-byte elements read contiguously along y and written
/// contiguously along x with NEON: whole 4×16 blocks ([`transpose_4x16_u32`]), x innermost, the edges
/// portable.
///
/// # Safety
/// Every addressed element must lie inside its buffer.
#[target_feature(enable = "neon")]
pub(super) unsafe fn transpose_u32(
    src: *const u8,
    dst: *mut u8,
    s: [i64; 4],
    (na, nb): (usize, usize),
) {
    let (sr, dr) = (s[0] as isize * 4, s[3] as isize * 4);
    let (fa, fb) = (na / 4 * 4, nb / 16 * 16);
    for y in (0..fb).step_by(16) {
        for x in (0..fa).step_by(4) {
            transpose_4x16_u32(
                src.offset(x as isize * sr + y as isize * 4),
                dst.offset(x as isize * 4 + y as isize * dr),
                sr,
                dr,
            );
        }
    }
    // The edges: x past the last whole block (every y), then y past it (x inside the blocks).
    let edge = |x0: usize, x1: usize, y0: usize, y1: usize| {
        transpose_portable(
            src.offset(x0 as isize * sr + y0 as isize * 4),
            dst.offset(x0 as isize * 4 + y0 as isize * dr),
            s,
            (x1 - x0, y1 - y0, 4),
        )
    };
    edge(fa, na, 0, nb);
    edge(0, fa, fb, nb);
}
