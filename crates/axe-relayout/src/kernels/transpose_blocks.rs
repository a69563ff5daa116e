//! Register-block transposes, one per element width and instruction set (8×8 and 32×16 u16, 16×16 and
//! 16×64 u8, 8×8 and 2×2 f64, 16×16 f32).

#![allow(unsafe_code)]

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::*;

/// Stores 16-byte rows `(i, v)` at `dst + i·dr`, non-temporal when `stream`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn put_rows_128(
    rows: impl IntoIterator<Item = (usize, __m128i)>,
    dst: *mut u8,
    dr: isize,
    stream: bool,
) {
    for (i, v) in rows {
        put(dst.offset(i as isize * dr), v, stream);
    }
}

/// Eight rows of 2-byte elements interleaved in pairs by 16 bits, then by 32, then by 64: in the result,
/// each 128-bit lane of vector j holds column j (of that lane's eight columns) of the eight rows.
#[cfg(target_arch = "x86_64")]
macro_rules! columns_u16 {
    ($r:expr, $lo16:ident, $hi16:ident, $lo32:ident, $hi32:ident, $lo64:ident, $hi64:ident) => {{
        let r = $r;
        let a: [_; 8] = std::array::from_fn(|i| {
            let (p, q) = (r[i / 2 * 2], r[i / 2 * 2 + 1]);
            if i % 2 == 0 {
                $lo16(p, q)
            } else {
                $hi16(p, q)
            }
        });
        // a[2g + h]: columns 4h..4h+4 of rows 2g, 2g+1.
        let b: [_; 8] = std::array::from_fn(|i| {
            let (g, h, l) = (i / 4, i / 2 % 2, i % 2);
            let (p, q) = (a[4 * g + h], a[4 * g + 2 + h]);
            if l == 0 {
                $lo32(p, q)
            } else {
                $hi32(p, q)
            }
        });
        // b[4g + 2h + l]: columns 4h + 2l, 4h + 2l + 1 of rows 4g..4g+4.
        let c: [_; 8] = std::array::from_fn(|j| {
            if j % 2 == 0 {
                $lo64(b[j / 2], b[4 + j / 2])
            } else {
                $hi64(b[j / 2], b[4 + j / 2])
            }
        });
        c
    }};
}

/// An 8×8 block of 2-byte elements (bf16) with SSE2 (`columns_u16!`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
pub(super) unsafe fn transpose_8x8_u16(
    src: *const u8,
    dst: *mut u8,
    sr: isize,
    dr: isize,
    stream: bool,
    _ahead: usize,
) {
    let r: [__m128i; 8] = std::array::from_fn(|i| get(src.offset(i as isize * sr)));
    let c = columns_u16!(
        r,
        _mm_unpacklo_epi16,
        _mm_unpackhi_epi16,
        _mm_unpacklo_epi32,
        _mm_unpackhi_epi32,
        _mm_unpacklo_epi64,
        _mm_unpackhi_epi64
    );
    put_rows_128(c.into_iter().enumerate(), dst, dr, stream);
}

/// A block of 32 source rows by 16 columns of 2-byte elements (bf16) with AVX2: each 16×16 half as two
/// sets of eight rows in lanes (`columns_u16!`) with the lanes joined (columns j and 8 + j); then each
/// destination row's 64 bytes, a whole line, stored at once.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn transpose_32x16_u16(
    src: *const u8,
    dst: *mut u8,
    sr: isize,
    dr: isize,
    stream: bool,
    _ahead: usize,
) {
    let eight = |first: usize| -> [__m256i; 8] {
        let rows: [__m256i; 8] = std::array::from_fn(|i| {
            _mm256_loadu_si256(src.offset((first + i) as isize * sr) as *const __m256i)
        });
        columns_u16!(
            rows,
            _mm256_unpacklo_epi16,
            _mm256_unpackhi_epi16,
            _mm256_unpacklo_epi32,
            _mm256_unpackhi_epi32,
            _mm256_unpacklo_epi64,
            _mm256_unpackhi_epi64
        )
    };
    // Column c (0..16) of source rows 16h..16h+16.
    let half = |h: usize| -> [__m256i; 16] {
        let (a, b) = (eight(16 * h), eight(16 * h + 8));
        std::array::from_fn(|c| {
            let j = c % 8;
            if c < 8 {
                _mm256_permute2x128_si256(a[j], b[j], 0x20)
            } else {
                _mm256_permute2x128_si256(a[j], b[j], 0x31)
            }
        })
    };
    let (lo, hi) = (half(0), half(1));
    for c in 0..16 {
        let p = dst.offset(c as isize * dr) as *mut __m256i;
        if stream {
            _mm256_stream_si256(p, lo[c]);
            _mm256_stream_si256(p.add(1), hi[c]);
        } else {
            _mm256_storeu_si256(p, lo[c]);
            _mm256_storeu_si256(p.add(1), hi[c]);
        }
    }
}

/// Sixteen rows of bytes, each a vector of `$load`-ed bytes from `$src + row·$sr`, transposed within each
/// 128-bit lane by the unpack instructions of one width (`$v` the vector type): lane `l` of result `j`
/// holds byte `j` of lane `l` of every row, rows 0..16 in order.
///
/// Slot i holds row bit-reverse(i): each round pairs vectors i/2 and i/2 + 8 (low halves interleaved into
/// 2·(i/2), high halves into the next), and after four rounds of 8-, 16-, 32- and 64-bit interleaves that
/// order of rows comes out as rows 0..16 in every column.
#[cfg(target_arch = "x86_64")]
macro_rules! byte_columns {
    ($src:expr, $sr:expr, $v:ty, $load:expr, [$lo8:ident, $hi8:ident, $lo16:ident, $hi16:ident,
     $lo32:ident, $hi32:ident, $lo64:ident, $hi64:ident]) => {{
        let rev = |i: usize| ((i & 1) << 3 | (i & 2) << 1 | (i & 4) >> 1 | (i & 8) >> 3) as isize;
        let mut v: [$v; 16] = std::array::from_fn(|i| $load($src.offset(rev(i) * $sr)));
        for round in 0..4 {
            let next: [$v; 16] = std::array::from_fn(|i| {
                let (p, q) = (v[i / 2], v[i / 2 + 8]);
                match (round, i % 2) {
                    (0, 0) => $lo8(p, q),
                    (0, _) => $hi8(p, q),
                    (1, 0) => $lo16(p, q),
                    (1, _) => $hi16(p, q),
                    (2, 0) => $lo32(p, q),
                    (2, _) => $hi32(p, q),
                    (_, 0) => $lo64(p, q),
                    _ => $hi64(p, q),
                }
            });
            v = next;
        }
        v
    }};
}

/// A 16×16 block of bytes: rows interleaved by 8, 16, 32 and 64 bits in turn ([`byte_columns!`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
pub(super) unsafe fn transpose_16x16_u8(
    src: *const u8,
    dst: *mut u8,
    sr: isize,
    dr: isize,
    stream: bool,
    _ahead: usize,
) {
    let v = byte_columns!(
        src,
        sr,
        __m128i,
        |p: *const u8| get(p),
        [
            _mm_unpacklo_epi8,
            _mm_unpackhi_epi8,
            _mm_unpacklo_epi16,
            _mm_unpackhi_epi16,
            _mm_unpacklo_epi32,
            _mm_unpackhi_epi32,
            _mm_unpacklo_epi64,
            _mm_unpackhi_epi64
        ]
    );
    put_rows_128(v.into_iter().enumerate(), dst, dr, stream);
}

/// A 16×64 block of bytes with AVX-512BW: [`transpose_16x16_u8`] in each 128-bit lane at once, lane `l`
/// of result vector `j` holding column `16l + j`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
pub(super) unsafe fn transpose_16x64_u8(
    src: *const u8,
    dst: *mut u8,
    sr: isize,
    dr: isize,
    stream: bool,
    _ahead: usize,
) {
    let v = byte_columns!(
        src,
        sr,
        __m512i,
        |p: *const u8| _mm512_loadu_si512(p as *const __m512i),
        [
            _mm512_unpacklo_epi8,
            _mm512_unpackhi_epi8,
            _mm512_unpacklo_epi16,
            _mm512_unpackhi_epi16,
            _mm512_unpacklo_epi32,
            _mm512_unpackhi_epi32,
            _mm512_unpacklo_epi64,
            _mm512_unpackhi_epi64
        ]
    );
    for (j, &c) in v.iter().enumerate() {
        let lanes = [
            _mm512_castsi512_si128(c),
            _mm512_extracti32x4_epi32::<1>(c),
            _mm512_extracti32x4_epi32::<2>(c),
            _mm512_extracti32x4_epi32::<3>(c),
        ];
        put_rows_128(
            lanes.into_iter().enumerate().map(|(l, x)| (16 * l + j, x)),
            dst,
            dr,
            stream,
        );
    }
}

/// The columns of a 4×4 block of 8-byte elements given as its four rows (AVX): pairs of rows
/// interleaved, then 128-bit halves joined.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn columns_4x4_f64(r: [__m256d; 4]) -> [__m256d; 4] {
    let (t0, t1) = (
        _mm256_unpacklo_pd(r[0], r[1]),
        _mm256_unpackhi_pd(r[0], r[1]),
    );
    let (t2, t3) = (
        _mm256_unpacklo_pd(r[2], r[3]),
        _mm256_unpackhi_pd(r[2], r[3]),
    );
    [
        _mm256_permute2f128_pd(t0, t2, 0x20),
        _mm256_permute2f128_pd(t1, t3, 0x20),
        _mm256_permute2f128_pd(t0, t2, 0x31),
        _mm256_permute2f128_pd(t1, t3, 0x31),
    ]
}

/// An 8×8 block of 8-byte elements with AVX, as [`transpose_16x16_f32_avx`]: each source row's 64
/// bytes loaded at once (two vectors) and each destination row's 64 bytes stored at once, as four 4×4
/// blocks ([`columns_4x4_f64`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
pub(super) unsafe fn transpose_8x8_f64(
    src: *const u8,
    dst: *mut u8,
    sr: isize,
    dr: isize,
    stream: bool,
    _ahead: usize,
) {
    // rows[h][i]: columns 4h..4h + 4 of row i, both halves of a row loaded together.
    let mut rows = [[_mm256_setzero_pd(); 8]; 2];
    #[allow(clippy::needless_range_loop)]
    for i in 0..8 {
        let p = src.offset(i as isize * sr) as *const f64;
        rows[0][i] = _mm256_loadu_pd(p);
        rows[1][i] = _mm256_loadu_pd(p.add(4));
    }
    for (h, half) in rows.iter().enumerate() {
        let top = columns_4x4_f64([half[0], half[1], half[2], half[3]]);
        let bottom = columns_4x4_f64([half[4], half[5], half[6], half[7]]);
        for c in 0..4 {
            let p = dst.offset((4 * h + c) as isize * dr) as *mut f64;
            if stream {
                _mm256_stream_pd(p, top[c]);
                _mm256_stream_pd(p.add(4), bottom[c]);
            } else {
                _mm256_storeu_pd(p, top[c]);
                _mm256_storeu_pd(p.add(4), bottom[c]);
            }
        }
    }
}

/// A 2×2 block of 8-byte elements with SSE2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
pub(super) unsafe fn transpose_2x2_f64(
    src: *const u8,
    dst: *mut u8,
    sr: isize,
    dr: isize,
    stream: bool,
    _ahead: usize,
) {
    let (r0, r1) = (get(src), get(src.offset(sr)));
    put_rows_128(
        [
            (0, _mm_unpacklo_epi64(r0, r1)),
            (1, _mm_unpackhi_epi64(r0, r1)),
        ],
        dst,
        dr,
        stream,
    );
}

/// A register transpose of a square block: source, destination, their row pitches in bytes, streaming,
/// and, for a block that asks for the lines ahead itself ([`transpose_16x16_f32_avx`]), how far ahead
/// along each source row (0: none; see [`FETCH_AHEAD`](super::transpose::FETCH_AHEAD)).
#[cfg(target_arch = "x86_64")]
pub(super) type Block = unsafe fn(*const u8, *mut u8, isize, isize, bool, usize);

/// The eight columns of an 8×8 block of 4-byte elements given as its eight rows, each as a vector.
/// Within each four-row group, rows are interleaved in pairs and then in pairs of pairs, so that
/// 128-bit lane k of `u[4g + j]` holds column 4k + j of rows 4g..4g+4; then the two groups' lanes
/// are joined.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn columns_8x8_f32(r: [__m256; 8]) -> [__m256; 8] {
    let mut u = [_mm256_setzero_ps(); 8];
    for g in 0..2 {
        let (a, b, c, d) = (r[4 * g], r[4 * g + 1], r[4 * g + 2], r[4 * g + 3]);
        let (t0, t1) = (_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b));
        let (t2, t3) = (_mm256_unpacklo_ps(c, d), _mm256_unpackhi_ps(c, d));
        u[4 * g] = _mm256_shuffle_ps(t0, t2, 0x44);
        u[4 * g + 1] = _mm256_shuffle_ps(t0, t2, 0xee);
        u[4 * g + 2] = _mm256_shuffle_ps(t1, t3, 0x44);
        u[4 * g + 3] = _mm256_shuffle_ps(t1, t3, 0xee);
    }
    std::array::from_fn(|c| {
        let j = c % 4;
        if c < 4 {
            _mm256_permute2f128_ps(u[j], u[4 + j], 0x20)
        } else {
            _mm256_permute2f128_ps(u[j], u[4 + j], 0x31)
        }
    })
}

/// A 16×16 block of 4-byte elements with AVX: each source row's 64 bytes (a whole line) loaded at
/// once, and each destination row's 64 bytes stored at once, as four 8×8 blocks
/// ([`columns_8x8_f32`]). Blocks narrower than a line would read each source line in two blocks; with
/// rows a power of two apart the line is evicted in between (the rows share cache sets) and read
/// again: 16×8 blocks ran the 2-D transpose at 0.60× memcpy.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
pub(super) unsafe fn transpose_16x16_f32_avx(
    src: *const u8,
    dst: *mut u8,
    sr: isize,
    dr: isize,
    stream: bool,
    ahead: usize,
) {
    // rows[h][i]: columns 8h..8h + 8 of row i, both halves of a row loaded together.
    let mut rows = [[_mm256_setzero_ps(); 16]; 2];
    #[allow(clippy::needless_range_loop)]
    for i in 0..16 {
        let p = src.offset(i as isize * sr) as *const f32;
        rows[0][i] = _mm256_loadu_ps(p);
        rows[1][i] = _mm256_loadu_ps(p.add(8));
    }
    // The lines ahead once the rows are loaded, before the stores (see FETCH_AHEAD).
    if ahead != 0 {
        fetch_ahead(src, sr, 16, ahead);
    }
    #[allow(clippy::needless_range_loop)]
    for h in 0..2 {
        let half = |g: usize| std::array::from_fn(|i| rows[h][8 * g + i]);
        let (top, bottom) = (columns_8x8_f32(half(0)), columns_8x8_f32(half(1)));
        for c in 0..8 {
            let p = dst.offset((8 * h + c) as isize * dr) as *mut f32;
            if stream {
                _mm256_stream_ps(p, top[c]);
                _mm256_stream_ps(p.add(8), bottom[c]);
            } else {
                _mm256_storeu_ps(p, top[c]);
                _mm256_storeu_ps(p.add(8), bottom[c]);
            }
        }
    }
}

/// The columns of a 4×4 block of 4-byte elements given as its four rows (SSE2 unpacks and moves).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
unsafe fn columns_4x4_f32([r0, r1, r2, r3]: [__m128; 4]) -> [__m128; 4] {
    let (t0, t1) = (_mm_unpacklo_ps(r0, r1), _mm_unpacklo_ps(r2, r3));
    let (t2, t3) = (_mm_unpackhi_ps(r0, r1), _mm_unpackhi_ps(r2, r3));
    [
        _mm_movelh_ps(t0, t1),
        _mm_movehl_ps(t1, t0),
        _mm_movelh_ps(t2, t3),
        _mm_movehl_ps(t3, t2),
    ]
}

/// A 16×16 block of 4-byte elements with SSE2, as [`transpose_16x16_f32_avx`]: each source row's 64
/// bytes loaded at once (four vectors) and each destination row's 64 bytes stored at once, as sixteen
/// 4×4 blocks ([`columns_4x4_f32`]). (4×4 blocks, a quarter line a row, ran the 2-D transpose at 0.40×
/// memcpy.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
pub(super) unsafe fn transpose_16x16_f32_sse2(
    src: *const u8,
    dst: *mut u8,
    sr: isize,
    dr: isize,
    stream: bool,
    _ahead: usize,
) {
    // rows[q][i]: columns 4q..4q + 4 of row i, a row's four vectors loaded together.
    let mut rows = [[_mm_setzero_ps(); 16]; 4];
    #[allow(clippy::needless_range_loop)]
    for i in 0..16 {
        let p = src.offset(i as isize * sr) as *const f32;
        for (q, r) in rows.iter_mut().enumerate() {
            r[i] = _mm_loadu_ps(p.add(4 * q));
        }
    }
    for (q, quarter) in rows.iter().enumerate() {
        // cols[g][c]: column 4q + c of rows 4g..4g + 4.
        let cols: [[__m128; 4]; 4] =
            std::array::from_fn(|g| columns_4x4_f32(std::array::from_fn(|i| quarter[4 * g + i])));
        for c in 0..4 {
            let p = dst.offset((4 * q + c) as isize * dr) as *mut f32;
            for (g, col) in cols.iter().enumerate() {
                if stream {
                    _mm_stream_ps(p.add(4 * g), col[c]);
                } else {
                    _mm_storeu_ps(p.add(4 * g), col[c]);
                }
            }
        }
    }
}
