//! NEON register transposes for aarch64, one block per element width: rows interleaved by `trn1`/`trn2`
//! at the element's width, then at twice it, up to 64 bits, so that each vector ends up holding a
//! column. Each block reads whole 64-byte lines of its source rows (four vectors a row, a quarter of
//! each at a time where the block's rows would not fit the registers at once) and stores 16 bytes to
//! each destination row (the next block along x fills the rest of those rows' lines). Every
//! other kernel on aarch64 is the portable one, which the compiler vectorises with NEON (part of every
//! aarch64 processor).

#![allow(unsafe_code)]

use std::arch::aarch64::*;

use super::transpose_portable::transpose_portable;

/// The columns of a 4×4 block of 32-bit elements held as four row vectors: pairs of rows interleaved
/// by 32-bit lanes, then the pairs by 64-bit lanes.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn columns_4x4_u32(r: [uint32x4_t; 4]) -> [uint32x4_t; 4] {
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

/// The columns of an 8×8 block of 16-bit elements held as eight row vectors: rows interleaved in
/// pairs by 16-bit lanes, then by 32-bit lanes, then by 64-bit lanes.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn columns_8x8_u16(r: [uint16x8_t; 8]) -> [uint16x8_t; 8] {
    // t[2i] holds the even columns of rows 2i, 2i + 1 side by side, t[2i + 1] the odd ones.
    let t: [uint32x4_t; 8] = std::array::from_fn(|k| {
        let (a, b) = (r[k / 2 * 2], r[k / 2 * 2 + 1]);
        vreinterpretq_u32_u16(if k % 2 == 0 {
            vtrn1q_u16(a, b)
        } else {
            vtrn2q_u16(a, b)
        })
    });
    // u[4g + c]: columns c and c + 4 of rows 4g..4g + 4.
    let u: [uint64x2_t; 8] = std::array::from_fn(|k| {
        let (g, c) = (k / 4, k % 4);
        // Columns c, c + 4 come from t of parity c % 2, the pairs 0/1 (c < 2) or 2/3 of a 32-bit step.
        let (a, b) = (t[4 * g + c % 2], t[4 * g + 2 + c % 2]);
        vreinterpretq_u64_u32(if c < 2 {
            vtrn1q_u32(a, b)
        } else {
            vtrn2q_u32(a, b)
        })
    });
    std::array::from_fn(|j| {
        let (c, high) = (j % 4, j >= 4);
        let (a, b) = (u[c], u[4 + c]);
        vreinterpretq_u16_u64(if high {
            vtrn2q_u64(a, b)
        } else {
            vtrn1q_u64(a, b)
        })
    })
}

/// The columns of a 16×16 block of bytes held as sixteen row vectors: rows interleaved in pairs by 8-,
/// then 16-, 32- and 64-bit lanes.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn columns_16x16_u8(r: [uint8x16_t; 16]) -> [uint8x16_t; 16] {
    // Round b pairs the vectors whose indices differ in bit b (rows 2^b apart, lower first): `trn1`
    // keeps the even lanes of the round's width (8·2^b bits), `trn2` the odd ones, so that bit b of a
    // vector's index becomes bit b of the column it holds.
    let t: [uint16x8_t; 16] = std::array::from_fn(|k| {
        let (a, b) = (r[k & !1], r[k | 1]);
        vreinterpretq_u16_u8(if k & 1 == 0 {
            vtrn1q_u8(a, b)
        } else {
            vtrn2q_u8(a, b)
        })
    });
    let t: [uint32x4_t; 16] = std::array::from_fn(|k| {
        let (a, b) = (t[k & !2], t[k | 2]);
        vreinterpretq_u32_u16(if k & 2 == 0 {
            vtrn1q_u16(a, b)
        } else {
            vtrn2q_u16(a, b)
        })
    });
    let t: [uint64x2_t; 16] = std::array::from_fn(|k| {
        let (a, b) = (t[k & !4], t[k | 4]);
        vreinterpretq_u64_u32(if k & 4 == 0 {
            vtrn1q_u32(a, b)
        } else {
            vtrn2q_u32(a, b)
        })
    });
    let t: [uint8x16_t; 16] = std::array::from_fn(|k| {
        let (a, b) = (t[k & !8], t[k | 8]);
        vreinterpretq_u8_u64(if k & 8 == 0 {
            vtrn1q_u64(a, b)
        } else {
            vtrn2q_u64(a, b)
        })
    });
    // Each round's parity chose one bit of the column, low first, and put the rows' halves in order:
    // vector k holds column k, rows 0..16.
    t
}

/// A block of 4 source rows by 16 columns of 4-byte elements: four 4×4 transposes.
#[target_feature(enable = "neon")]
unsafe fn block_u32(src: *const u8, dst: *mut u8, sr: isize, dr: isize) {
    let rows: [uint32x4x4_t; 4] =
        std::array::from_fn(|i| vld1q_u32_x4(src.offset(i as isize * sr) as *const u32));
    for q in 0..4 {
        let cols = columns_4x4_u32(std::array::from_fn(|i| quarter_u32(rows[i], q)));
        for (j, c) in cols.into_iter().enumerate() {
            vst1q_u32(dst.offset((4 * q + j) as isize * dr) as *mut u32, c);
        }
    }
}

/// A block of 8 source rows by 32 columns of 2-byte elements: four 8×8 transposes.
#[target_feature(enable = "neon")]
unsafe fn block_u16(src: *const u8, dst: *mut u8, sr: isize, dr: isize) {
    // A quarter of each row's line at a time (8 vectors), so that the block's 32 never all wait in
    // the 32 registers.
    for q in 0..4 {
        let rows: [uint16x8_t; 8] = std::array::from_fn(|i| {
            vld1q_u16(src.offset(i as isize * sr).add(16 * q) as *const u16)
        });
        let cols = columns_8x8_u16(rows);
        for (j, c) in cols.into_iter().enumerate() {
            vst1q_u16(dst.offset((8 * q + j) as isize * dr) as *mut u16, c);
        }
    }
}

/// A block of 16 source rows by 64 columns of bytes: four 16×16 transposes.
#[target_feature(enable = "neon")]
unsafe fn block_u8(src: *const u8, dst: *mut u8, sr: isize, dr: isize) {
    // A quarter of each row's line at a time (16 vectors): the block's 64 would not fit the 32
    // registers.
    for q in 0..4 {
        let rows: [uint8x16_t; 16] =
            std::array::from_fn(|i| vld1q_u8(src.offset(i as isize * sr).add(16 * q)));
        let cols = columns_16x16_u8(rows);
        for (j, c) in cols.into_iter().enumerate() {
            vst1q_u8(dst.offset((16 * q + j) as isize * dr), c);
        }
    }
}

/// A block of 2 source rows by 8 columns of 8-byte elements: four 2×2 transposes.
#[target_feature(enable = "neon")]
unsafe fn block_u64(src: *const u8, dst: *mut u8, sr: isize, dr: isize) {
    let rows: [uint64x2x4_t; 2] =
        std::array::from_fn(|i| vld1q_u64_x4(src.offset(i as isize * sr) as *const u64));
    for q in 0..4 {
        let (a, b) = (quarter_u64(rows[0], q), quarter_u64(rows[1], q));
        vst1q_u64(
            dst.offset((2 * q) as isize * dr) as *mut u64,
            vtrn1q_u64(a, b),
        );
        vst1q_u64(
            dst.offset((2 * q + 1) as isize * dr) as *mut u64,
            vtrn2q_u64(a, b),
        );
    }
}

/// A register block: source, destination, their row pitches in bytes.
type Block = unsafe fn(*const u8, *mut u8, isize, isize);

macro_rules! quarter {
    ($name:ident, $x4:ty, $v:ty) => {
        /// Vector `q` of a row's four.
        #[inline(always)]
        fn $name(r: $x4, q: usize) -> $v {
            match q {
                0 => r.0,
                1 => r.1,
                2 => r.2,
                _ => r.3,
            }
        }
    };
}
quarter!(quarter_u32, uint32x4x4_t, uint32x4_t);
quarter!(quarter_u64, uint64x2x4_t, uint64x2_t);

/// [`transpose`](super::transpose) of 1-, 2-, 4- or 8-byte elements read contiguously along y and
/// written contiguously along x with NEON: whole blocks of 64 bytes of each source row (16 × 4 rows of
/// 4-byte elements, 32 × 8 of 2-byte ones, 64 × 16 of bytes, 8 × 2 of 8-byte ones), x innermost, the
/// edges portable.
///
/// # Safety
/// Every addressed element must lie inside its buffer; `w` is 1, 2, 4 or 8.
#[target_feature(enable = "neon")]
pub(super) unsafe fn transpose(
    src: *const u8,
    dst: *mut u8,
    s: [i64; 4],
    (na, nb, w): (usize, usize, usize),
) {
    let (ba, block): (usize, Block) = match w {
        1 => (16, block_u8),
        2 => (8, block_u16),
        4 => (4, block_u32),
        _ => (2, block_u64),
    };
    let bb = 64 / w;
    let (sr, dr) = (s[0] as isize * w as isize, s[3] as isize * w as isize);
    let (fa, fb) = (na / ba * ba, nb / bb * bb);
    for y in (0..fb).step_by(bb) {
        for x in (0..fa).step_by(ba) {
            block(
                src.offset(x as isize * sr + (y * w) as isize),
                dst.offset((x * w) as isize + y as isize * dr),
                sr,
                dr,
            );
        }
    }
    // The edges: x past the last whole block (every y), then y past it (x inside the blocks).
    let edge = |x0: usize, x1: usize, y0: usize, y1: usize| {
        transpose_portable(
            src.offset(x0 as isize * sr + (y0 * w) as isize),
            dst.offset((x0 * w) as isize + y0 as isize * dr),
            s,
            (x1 - x0, y1 - y0, w),
        )
    };
    edge(fa, na, 0, nb);
    edge(0, fa, fb, nb);
}
