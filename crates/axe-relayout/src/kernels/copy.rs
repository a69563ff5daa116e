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

/// The stride of the four streams a long streamed run is copied in: its bytes `[0, 4·PAGE)` as four
/// pages side by side, two lines of each in turn, then the next four pages (as glibc's `memcpy` does
/// past its non-temporal threshold). Measured on an Intel Xeon (Emerald Rapids), 400 MB with AVX-512
/// non-temporal stores, one thread: 1.09–1.13× glibc's `memcpy` of the same bytes, against 0.88–0.91×
/// for one stream, with or without prefetches.
#[cfg(any(target_arch = "x86_64", test))]
const PAGE: usize = 4096;

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
                    // Long runs four pages at a time, two lines of each in turn (`PAGE`).
                    while i + 4 * PAGE <= len {
                        for j in (0..PAGE).step_by(128) {
                            for p in 0..4 {
                                let at = i + p * PAGE + j;
                                for k in (0..128).step_by($width) {
                                    $store(
                                        dst.add(at + k) as *mut $v,
                                        $load(src.add(at + k) as *const $v),
                                    );
                                }
                            }
                        }
                        i += 4 * PAGE;
                    }
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

#[cfg(test)]
mod tests {
    use super::super::test_bytes::noise;
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 32, failure_persistence: None, ..ProptestConfig::default() })]

        /// A grid of runs, under every instruction set, cached and non-temporal, against its law:
        /// `dst[d + e + i] = src[s + f + i]` for every run `(s, d, len)`, every row `(f, e)` and
        /// `i < len`, and nothing else written. Runs from empty to past three blocks of four pages
        /// (the long-run path, `PAGE`), at any offset from a cache line on either side.
        #[test]
        fn grids_of_runs_match_the_law_under_every_isa(
            len in prop_oneof![0usize..200, 4 * PAGE - 70..4 * PAGE + 200, 12 * PAGE..13 * PAGE],
            (skew_src, skew_dst) in (0usize..64, 0usize..64),
            (n_runs, n_rows) in (1usize..3, 1usize..3),
            seed in any::<u64>(),
        ) {
            // Runs `len + 3` bytes apart on the source, `len + 5` on the destination; rows after all
            // the runs, as many bytes apart again.
            let (sp, dp) = (len + 3, len + 5);
            let runs: Vec<(isize, isize, usize)> = (0..n_runs)
                .map(|r| ((skew_src + r * sp) as isize, (skew_dst + r * dp) as isize, len))
                .collect();
            let rows: Vec<(isize, isize)> = (0..n_rows)
                .map(|w| ((w * n_runs * sp) as isize, (w * n_runs * dp) as isize))
                .collect();
            let src = noise(skew_src + n_runs * n_rows * sp, seed);
            let mut want = vec![0x5au8; skew_dst + n_runs * n_rows * dp];
            for &(s, d, len) in &runs {
                for &(f, e) in &rows {
                    let (s, d) = ((s + f) as usize, (d + e) as usize);
                    want[d..d + len].copy_from_slice(&src[s..s + len]);
                }
            }
            for isa in Isa::available() {
                for stream in [false, true] {
                    let mut dst = vec![0x5au8; want.len()];
                    // SAFETY: every run and row lies inside both buffers, which do not overlap.
                    unsafe {
                        copy_grid(isa, stream, src.as_ptr(), dst.as_mut_ptr(), &runs, &rows);
                    }
                    super::super::fence(isa, stream);
                    prop_assert!(dst == want, "{} stream={stream}", isa.name());
                }
            }
        }
    }
}
