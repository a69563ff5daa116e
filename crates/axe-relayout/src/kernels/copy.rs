//! Block copies and zero fills: `memcpy`-like runs, with non-temporal stores when streaming.

#![allow(unsafe_code)]

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::*;

/// Copies `len` bytes: `dst[i] = src[i]`.
///
/// # Safety
/// `src` and `dst` valid for `len` bytes, not overlapping.
#[inline]
pub unsafe fn copy(isa: Isa, stream: bool, src: *const u8, dst: *mut u8, len: usize) {
    copy_grid(isa, stream, src, dst, &[(0, 0, len)], &[(0, 0)]);
}

/// Copies a grid of runs: `dst[d + e + i] = src[s + f + i]` for `i < len`, for every run
/// `(s, d, len)` in `runs` and, inside it, every `(f, e)` in `rows`, in that order. One call moves many
/// short runs (a row's pieces, each row of a tile) with no call and no table lookups between them:
/// they cost more than the copy of a 512-byte run on some processors.
///
/// # Safety
/// For every run and row, `src + s + f` and `dst + d + e` valid for `len` bytes (the bases themselves
/// may lie outside their buffers); no destination run overlaps a source run.
#[inline]
pub unsafe fn copy_grid(
    isa: Isa,
    stream: bool,
    src: *const u8,
    dst: *mut u8,
    runs: &[(isize, isize, usize)],
    rows: &[(isize, isize)],
) {
    #[cfg(target_arch = "x86_64")]
    if stream {
        // Whole cache lines non-temporal, the partial ones at either end with ordinary stores, so that
        // each line is written one way whatever the destination's alignment: rows that are not whole
        // lines apart then share only their end lines, both written through the cache.
        match isa {
            Isa::Avx512 => return copy_stream_avx512(src, dst, runs, rows),
            i if i.avx2() => return copy_stream_avx(src, dst, runs, rows),
            i if i.simd() => return copy_stream_sse2(src, dst, runs, rows),
            _ => {}
        }
    }
    let _ = (isa, stream);
    for &(s, d, len) in runs {
        for &(f, e) in rows {
            let (s, d) = (s.wrapping_add(f), d.wrapping_add(e));
            std::ptr::copy_nonoverlapping(src.wrapping_offset(s), dst.wrapping_offset(d), len);
        }
    }
}

/// Non-temporal copies of runs with vectors of `$width` bytes: in each, the head up to the
/// destination's next cache line and the tail past its last whole line with ordinary stores, whole
/// lines in between (a run shorter than a line entirely with ordinary stores).
macro_rules! copy_stream {
    ($name:ident, $feature:literal, $v:ty, $width:literal, $load:ident, $store:ident) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        unsafe fn $name(
            src: *const u8,
            dst: *mut u8,
            runs: &[(isize, isize, usize)],
            rows: &[(isize, isize)],
        ) {
            for &(s, d, len) in runs {
                for &(f, e) in rows {
                    let (s, d) = (s.wrapping_add(f), d.wrapping_add(e));
                    let (src, dst) = (src.wrapping_offset(s), dst.wrapping_offset(d));
                    if len < 64 {
                        std::ptr::copy_nonoverlapping(src, dst, len);
                        continue;
                    }
                    let head = dst.align_offset(64).min(len);
                    // (Guarded: a call to copy nothing costs as much as a vector moved.)
                    if head > 0 {
                        std::ptr::copy_nonoverlapping(src, dst, head);
                    }
                    let mut i = head;
                    while i + 64 <= len {
                        for k in (0..64).step_by($width) {
                            $store(
                                dst.add(i + k) as *mut $v,
                                $load(src.add(i + k) as *const $v),
                            );
                        }
                        i += 64;
                    }
                    if i < len {
                        std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
                    }
                }
            }
        }
    };
}
copy_stream!(
    copy_stream_avx512,
    "avx512f",
    __m512i,
    64,
    _mm512_loadu_si512,
    _mm512_stream_si512
);
copy_stream!(
    copy_stream_avx,
    "avx",
    __m256i,
    32,
    _mm256_loadu_si256,
    _mm256_stream_si256
);
copy_stream!(
    copy_stream_sse2,
    "sse2",
    __m128i,
    16,
    _mm_loadu_si128,
    _mm_stream_si128
);

/// Fills `len` bytes with zeros.
///
/// # Safety
/// `dst` valid for `len` bytes.
pub unsafe fn zero(isa: Isa, stream: bool, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if stream && isa.simd() && len >= 64 {
        let head = dst.align_offset(16).min(len);
        std::ptr::write_bytes(dst, 0, head);
        let mut i = head;
        let z = _mm_setzero_si128();
        while i + 16 <= len {
            _mm_stream_si128(dst.add(i) as *mut __m128i, z);
            i += 16;
        }
        std::ptr::write_bytes(dst.add(i), 0, len - i);
        return;
    }
    let _ = (isa, stream);
    std::ptr::write_bytes(dst, 0, len);
}
