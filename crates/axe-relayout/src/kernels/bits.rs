//! Bit packing: `pred` bytes to `E(1)` bit rows and back (SSE2/AVX2, and AVX-512 with VBMI and GFNI).

#![allow(unsafe_code)]

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

#[cfg(target_arch = "x86_64")]
use super::bits_gfni::{bit_matrices, pack_bits_gfni, unpack_bits_gfni};
#[cfg(target_arch = "x86_64")]
use super::bits_portable::{bit_rows, BIT_ROW_SPAN};
use super::bits_portable::{pack_bits_portable, unpack_bits_portable};
use super::*;

/// Packs bytes into bits: `len` groups of `k/8` bytes, where bit t of byte m of group c is the low bit
/// of `row_{8m+t}[c]`, for k byte rows `row` bytes apart. This is pred stored in bytes written as
/// `E(1)` into a sub-tile such as `(32,1)`, which puts 32 rows' bits side by side.
///
/// # Safety
/// The k source rows of `len` bytes and the `len·k/8` destination bytes must lie inside their buffers.
pub unsafe fn pack_bits(
    isa: Isa,
    stream: bool,
    src: *const u8,
    row: usize,
    dst: *mut u8,
    (k, len): (usize, usize),
) {
    let kb = k / 8;
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if isa.simd() && matches!(kb, 1 | 2 | 4) {
        if isa == Isa::Avx512 && bit_matrices() {
            let stream = stream && (dst as usize).is_multiple_of(64);
            done = match kb {
                1 => pack_bits_gfni::<1>(src, row, dst, len, stream),
                2 => pack_bits_gfni::<2>(src, row, dst, len, stream),
                _ => pack_bits_gfni::<4>(src, row, dst, len, stream),
            };
        }
        let (src, dst, len) = (src.add(done), dst.add(done * kb), len - done);
        let stream = stream && (dst as usize).is_multiple_of(16);
        done += match kb {
            1 => pack_bits_sse2::<1>(src, row, dst, len, (stream, isa.avx2())),
            2 => pack_bits_sse2::<2>(src, row, dst, len, (stream, isa.avx2())),
            _ => pack_bits_sse2::<4>(src, row, dst, len, (stream, isa.avx2())),
        };
    }
    let _ = (isa, stream);
    let (src, dst, len) = (src.add(done), dst.add(done * kb), len - done);
    macro_rules! portable {
        ($($kb:literal)*) => {
            match kb {
                $($kb => pack_bits_portable::<$kb>(src, row, dst, len),)*
                _ => {
                    for c in 0..len {
                        for m in 0..kb {
                            let mut byte = 0u8;
                            for t in 0..8 {
                                byte |= (*src.add((8 * m + t) * row + c) & 1) << t;
                            }
                            *dst.add(c * kb + m) = byte;
                        }
                    }
                }
            }
        };
    }
    portable!(1 2 3 4 5 6 7 8);
}

/// Columns the vector unpacking kernels take at a time: each part's packed bytes are split (or its masks
/// made), then its k destination rows written (with non-temporal stores for large destinations). In
/// parts of 1024 columns the writes of one part overlap the reads of the next far better than in parts
/// of 8192: the bench's `pred[8192,8192]` unpacking, a tile's rows laid end to end, went from 0.74×
/// memcpy to 1.01× with AVX2 and from 0.70× to 0.99× with AVX-512 (1 thread, Zen 5; 512 and 256
/// columns were as fast).
/// The portable kernel, whose plain stores lean on the hardware prefetcher, keeps [`BIT_ROW_SPAN`]
/// (0.57× memcpy, against 0.38× in parts of 1024).
#[cfg(target_arch = "x86_64")]
pub(super) const UNPACK_SPAN: usize = 1024;

/// [`pack_bits`] for 8, 16 or 32 rows, along up to [`BIT_ROW_SPAN`] columns at a time: each row's low
/// bits shifted into place and or-ed into its byte of the buffer, one row after another (32 bytes at a
/// time through [`gather_row_avx2`] when `wide`, which the caller sets only where the processor has
/// AVX2), then the k/8 bytes of each column interleaved into the destination, 16 columns at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
pub(super) unsafe fn pack_bits_sse2<const KB: usize>(
    src: *const u8,
    row: usize,
    dst: *mut u8,
    len: usize,
    (stream, wide): (bool, bool),
) -> usize {
    let one = _mm_set1_epi8(1);
    let out = |at: usize, v: [__m128i; 4]| match KB {
        1 => put(dst.add(at), v[0], stream),
        2 => {
            put(dst.add(2 * at), _mm_unpacklo_epi8(v[0], v[1]), stream);
            put(dst.add(2 * at + 16), _mm_unpackhi_epi8(v[0], v[1]), stream);
        }
        _ => put4(dst.add(4 * at), v, stream),
    };
    // Row by row, each row's low bits added into the buffer as bit t of its group's byte: the rows are
    // read one after another along up to BIT_ROW_SPAN columns, which for a tile's rows laid end to end
    // is one sequential read. Then the buffer is interleaved into the destination.
    let buf = bit_rows();
    let mut c = 0;
    while c + 16 <= len {
        let n = BIT_ROW_SPAN.min((len - c) / 16 * 16);
        for m in 0..KB {
            let bm = buf.add(m * BIT_ROW_SPAN);
            for t in 0..8 {
                let p = src.add((8 * m + t) * row + c);
                let done = if wide {
                    gather_row_avx2(p, bm, n, t)
                } else {
                    0
                };
                let shift = _mm_cvtsi32_si128(t as i32);
                let ahead = std::hint::black_box(ROW_FETCH_AHEAD);
                for q in (done / 16..n / 16).map(|q| 16 * q) {
                    let x = get(p.add(q));
                    if q.is_multiple_of(64) {
                        _mm_prefetch::<_MM_HINT_T1>(p.wrapping_add(q + ahead) as *const i8);
                    }
                    let bit = _mm_sll_epi16(_mm_and_si128(x, one), shift);
                    let v = if t == 0 {
                        bit
                    } else {
                        _mm_or_si128(get(bm.add(q)), bit)
                    };
                    _mm_storeu_si128(bm.add(q) as *mut __m128i, v);
                }
            }
        }
        let row_at = |m: usize, q: usize| get(buf.add(m.min(KB - 1) * BIT_ROW_SPAN + q)); // m < KB
        for q in (0..n / 16).map(|q| 16 * q) {
            out(c + q, [0, 1, 2, 3].map(|m| row_at(m, q)));
        }
        c += n;
    }
    c
}

/// How far ahead (bytes) the packings ([`pack_bits_gfni`], [`pack_bits_sse2`] and [`gather_row_avx2`])
/// ask for the source's lines into L2 (`prefetcht1`) as they read each row, on top of what the
/// hardware prefetcher fetches: once per line, after the line's load (the distance read through
/// `black_box`, see [`FETCH_AHEAD`](super::transpose::FETCH_AHEAD)). With AVX-512 and GFNI on a Zen 5:
/// 0.99× memcpy against 0.87× with 2 KiB before each load (which had taken it from 0.88–0.93× to
/// 1.01–1.08× in an earlier hour, where 512 bytes and 8 KiB before the load were no better than
/// none); other processors take 2 KiB there (see `bits_gfni::gfni_fetch_ahead`). Packing pred into `E(1)`
/// with AVX2 on one thread (Zen 5, four to six rounds each, in turn): 0.82–0.84× memcpy without, 0.88–0.89
/// with 4 KiB, 0.91–0.94 with 6 KiB, 0.87–0.93 with 8 KiB, 0.89 with 16 KiB; 2 KiB 0.87, 512 bytes 0.71;
/// with SSE2, 0.57 → 0.80. Before the load, 2 KiB was no better than none (0.81 against 0.80).
#[cfg(target_arch = "x86_64")]
pub(super) const ROW_FETCH_AHEAD: usize = 6144;

/// One row's low bits, shifted to bit `t`, into the bytes at `buf` (or-ed in, or written for `t == 0`):
/// [`pack_bits_sse2`]'s inner loop 32 bytes at a time, over the whole 32-byte chunks of `n`. Returns the
/// bytes done.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn gather_row_avx2(p: *const u8, buf: *mut u8, n: usize, t: usize) -> usize {
    let one = _mm256_set1_epi8(1);
    let shift = _mm_cvtsi32_si128(t as i32);
    let mut q = 0;
    let ahead = std::hint::black_box(ROW_FETCH_AHEAD);
    while q + 32 <= n {
        let x = _mm256_loadu_si256(p.add(q) as *const __m256i);
        if q.is_multiple_of(64) {
            _mm_prefetch::<_MM_HINT_T1>(p.wrapping_add(q + ahead) as *const i8);
        }
        let bit = _mm256_sll_epi16(_mm256_and_si256(x, one), shift);
        let at = buf.add(q) as *mut __m256i;
        let v = if t == 0 {
            bit
        } else {
            _mm256_or_si256(_mm256_loadu_si256(at), bit)
        };
        _mm256_storeu_si256(at, v);
        q += 32;
    }
    q
}

/// Bit `t` of each byte at `buf` written to `out` as a byte, 0 or 1: [`unpack_bits_sse2`]'s inner loop
/// 32 bytes at a time, over the whole 32-byte chunks of `n` (`out` 32-byte aligned when `stream`, or
/// none are done). Returns the bytes done.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn scatter_row_avx2(
    buf: *const u8,
    out: *mut u8,
    n: usize,
    t: usize,
    stream: bool,
) -> usize {
    if stream && !(out as usize).is_multiple_of(32) {
        return 0;
    }
    let one = _mm256_set1_epi8(1);
    let shift = _mm_cvtsi32_si128(t as i32);
    let mut q = 0;
    while q + 32 <= n {
        let bits = _mm256_loadu_si256(buf.add(q) as *const __m256i);
        let v = _mm256_and_si256(_mm256_srl_epi16(bits, shift), one);
        let at = out.add(q) as *mut __m256i;
        if stream {
            _mm256_stream_si256(at, v);
        } else {
            _mm256_storeu_si256(at, v);
        }
        q += 32;
    }
    q
}

/// The inverse of [`pack_bits`]: `row_{8m+t}[c]` (a byte, 0 or 1) is bit t of byte m of group c, for
/// `len` groups of `k/8` bytes and k destination rows `row` bytes apart (`E(1)` pred with a sub-tile
/// such as `(32,1)` read back into bytes).
///
/// # Safety
/// The `len·k/8` source bytes and the k destination rows of `len` bytes must lie inside their buffers.
pub unsafe fn unpack_bits(
    isa: Isa,
    stream: bool,
    src: *const u8,
    dst: *mut u8,
    row: usize,
    (k, len): (usize, usize),
) {
    let kb = k / 8;
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if isa.simd() && matches!(kb, 1 | 2 | 4) {
        if isa == Isa::Avx512 && bit_matrices() {
            let stream = stream && (dst as usize).is_multiple_of(64) && row.is_multiple_of(64);
            done = match kb {
                1 => unpack_bits_gfni::<1>(src, dst, row, len, stream),
                2 => unpack_bits_gfni::<2>(src, dst, row, len, stream),
                _ => unpack_bits_gfni::<4>(src, dst, row, len, stream),
            };
        }
        let (src, dst, len) = (src.add(done * kb), dst.add(done), len - done);
        let stream = stream && (dst as usize).is_multiple_of(16) && row.is_multiple_of(16);
        done += match kb {
            1 => unpack_bits_sse2::<1>(src, dst, row, len, (stream, isa.avx2())),
            2 => unpack_bits_sse2::<2>(src, dst, row, len, (stream, isa.avx2())),
            _ => unpack_bits_sse2::<4>(src, dst, row, len, (stream, isa.avx2())),
        };
    }
    let _ = (isa, stream);
    let (src, dst, len) = (src.add(done * kb), dst.add(done), len - done);
    macro_rules! portable {
        ($($kb:literal)*) => {
            match kb {
                $($kb => unpack_bits_portable::<$kb>(src, dst, row, len),)*
                _ => {
                    for c in 0..len {
                        for m in 0..kb {
                            let byte = *src.add(c * kb + m);
                            for t in 0..8 {
                                *dst.add((8 * m + t) * row + c) = (byte >> t) & 1;
                            }
                        }
                    }
                }
            }
        };
    }
    portable!(1 2 3 4 5 6 7 8);
}

/// [`unpack_bits`] for 8, 16 or 32 rows, along up to [`UNPACK_SPAN`] columns at a time: each column's k/8 bytes
/// split into k/8 vectors (byte m of 16 columns), then the rows written one after another, row 8m + t
/// being bit t of vector m (32 bytes a store through [`scatter_row_avx2`] when `wide`, which the
/// caller sets only where the processor has AVX2).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
pub(super) unsafe fn unpack_bits_sse2<const KB: usize>(
    src: *const u8,
    dst: *mut u8,
    row: usize,
    len: usize,
    (stream, wide): (bool, bool),
) -> usize {
    let one = _mm_set1_epi8(1);
    let ff = _mm_set1_epi32(0xff);
    // Byte j of each KB-byte group in 16 columns starting at column `at`.
    let split = |at: usize| -> [__m128i; 4] {
        let p = src.add(at * KB);
        match KB {
            1 => [get(p), one, one, one],
            2 => {
                let (x0, x1) = (get(p), get(p.add(16)));
                let m = _mm_set1_epi16(0xff);
                let lo = _mm_packus_epi16(_mm_and_si128(x0, m), _mm_and_si128(x1, m));
                let hi = _mm_packus_epi16(_mm_srli_epi16(x0, 8), _mm_srli_epi16(x1, 8));
                [lo, hi, one, one]
            }
            _ => {
                let x = [get(p), get(p.add(16)), get(p.add(32)), get(p.add(48))];
                let b = |v: __m128i, j: i32| {
                    _mm_and_si128(_mm_srl_epi32(v, _mm_cvtsi32_si128(8 * j)), ff)
                };
                std::array::from_fn(|j| {
                    let lo = _mm_packs_epi32(b(x[0], j as i32), b(x[1], j as i32));
                    let hi = _mm_packs_epi32(b(x[2], j as i32), b(x[3], j as i32));
                    _mm_packus_epi16(lo, hi)
                })
            }
        }
    };
    let buf = bit_rows();
    let mut c = 0;
    while c + 16 <= len {
        let n = UNPACK_SPAN.min((len - c) / 16 * 16);
        for q in (0..n / 16).map(|q| 16 * q) {
            let v = split(c + q);
            for (m, &vm) in v.iter().enumerate().take(KB) {
                _mm_storeu_si128(buf.add(m * BIT_ROW_SPAN + q) as *mut __m128i, vm);
            }
        }
        for m in 0..KB {
            let bm = buf.add(m * BIT_ROW_SPAN);
            for t in 0..8 {
                let out = dst.add((8 * m + t) * row + c);
                let done = if wide {
                    scatter_row_avx2(bm, out, n, t, stream)
                } else {
                    0
                };
                let shift = _mm_cvtsi32_si128(t as i32);
                for q in (done / 16..n / 16).map(|q| 16 * q) {
                    let v = _mm_and_si128(_mm_srl_epi16(get(bm.add(q)), shift), one);
                    put(out.add(q), v, stream);
                }
            }
        }
        c += n;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::super::test_bytes::noise;
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;

    /// Packs `k = 8·kb` rows of noise, `len` bytes each and `row` bytes apart, starting `skew` bytes
    /// past a 64-byte boundary, then unpacks them into rows placed the same way, under every
    /// instruction set, with and without streaming, and checks both against the law bit by bit (and
    /// that the padding past each row's `len` bytes is left alone).
    fn round_trip(
        kb: usize,
        len: usize,
        row: usize,
        skew: usize,
        seed: u64,
    ) -> Result<(), TestCaseError> {
        let k = 8 * kb;
        // `k` rows starting `skew` bytes past a 64-byte boundary of a buffer filled with `fill`.
        let rows = |fill: &[u8]| {
            let mut v = vec![0u8; k * row + 64 + skew];
            let at = v.as_ptr().align_offset(64) + skew;
            v[at..at + k * row].copy_from_slice(fill);
            (v, at)
        };
        let (src, s0) = rows(&noise(k * row, seed));
        let src = &src[s0..s0 + k * row];
        let want: Vec<u8> = (0..len * kb)
            .map(|i| {
                let (c, m) = (i / kb, i % kb);
                (0..8).fold(0u8, |b, t| b | (src[(8 * m + t) * row + c] & 1) << t)
            })
            .collect();
        for isa in Isa::available() {
            for stream in [false, true] {
                let mut packed = vec![0x5au8; len * kb];
                // SAFETY: k rows of `row` ≥ len bytes, and len·k/8 destination bytes.
                unsafe {
                    pack_bits(
                        isa,
                        stream,
                        src.as_ptr(),
                        row,
                        packed.as_mut_ptr(),
                        (k, len),
                    )
                };
                fence(isa, stream);
                prop_assert_eq!(&packed, &want, "{} packing", isa.name());
                let (mut back, b0) = rows(&vec![0xa5u8; k * row]);
                let back = &mut back[b0..b0 + k * row];
                // SAFETY: as above, the other way.
                unsafe {
                    unpack_bits(
                        isa,
                        stream,
                        packed.as_ptr(),
                        back.as_mut_ptr(),
                        row,
                        (k, len),
                    )
                };
                fence(isa, stream);
                for r in 0..k {
                    for c in 0..row {
                        let want = if c < len { src[r * row + c] & 1 } else { 0xa5 };
                        prop_assert_eq!(
                            back[r * row + c],
                            want,
                            "{} unpacking (stream {}): row {}, column {}",
                            isa.name(),
                            stream,
                            r,
                            c
                        );
                    }
                }
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

        /// Packing and unpacking, under every instruction set, against the law: for every group width
        /// (1–8 bytes), runs longer than the vector unpackings' parts of 1024 columns (and the vector
        /// kernels' steps of 16, 32 and 64), rows padded past their length and starting anywhere
        /// within a line.
        #[test]
        fn packing_matches_the_law_under_every_isa(
            kb in 1usize..=8,
            len in 0usize..2200,
            pad in 0usize..40,
            skew in 0usize..64,
            seed in any::<u64>(),
        ) {
            round_trip(kb, len, len + pad, skew, seed)?;
        }
    }

    /// The streaming paths, each time: rows on 64-byte boundaries, 16 bytes off a 32-byte one (the
    /// AVX2 rows fall back to 16-byte stores) and 32 off a 64-byte one (AVX-512 falls back), for runs
    /// of several unpacking parts with ragged ends, and past the packings' 8192-column passes.
    #[test]
    fn packing_streams_whatever_the_rows_alignment() {
        for kb in [1, 2, 4] {
            for len in [2100, 3072] {
                for (row, skew) in [(3072, 0), (3088, 0), (3072, 16), (3104, 32)] {
                    round_trip(kb, len, row, skew, 7 + len as u64).unwrap();
                }
            }
        }
        round_trip(4, 8300, 8320, 0, 11).unwrap();
    }
}
