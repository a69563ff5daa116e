//! k-way interleaves and deinterleaves: gathering `k` rows of elements into one row of `k`-element groups
//! (XLA's sub-tiles such as bf16 `(2,1)` and s8 `(4,1)`) and splitting them back.

#![allow(unsafe_code)]

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::*;

/// Writes `len` groups of `k` elements of `w` bytes: group c holds element c of each of the k source rows
/// (`row` bytes apart, each contiguous), i.e. `dst[c·k + j] = row_j[c]`. This is how a minor sub-tile
/// such as bf16's `(2,1)` or s8's `(4,1)` stores k rows side by side.
///
/// # Safety
/// The k source rows of `len` elements and the `len·k` destination elements must lie inside their
/// buffers, not overlapping.
pub unsafe fn interleave(
    isa: Isa,
    stream: bool,
    src: *const u8,
    row: usize,
    dst: *mut u8,
    (k, len, w): (usize, usize, usize),
) {
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if isa.simd() {
        let stream = stream && (dst as usize).is_multiple_of(16);
        // Pairs take SSE2 unpacks under every instruction set: on a Zen 5 the bf16 interleave ran at
        // 0.74× memcpy with AVX-512 two-source permutes and 64-byte stores, 0.86× with AVX2 unpacks and
        // lane permutes, 0.88× with these (1 thread, six rounds each, in turn).
        done = match (w, k) {
            (2, 2) => interleave_two::<2>(src, row, dst, len, stream),
            (1, 4) if isa.avx2() && ((dst as usize).is_multiple_of(32) || !stream) => {
                let d = interleave_4x8_avx2(src, row, dst, len, stream);
                d + interleave_4x8(src.add(d), row, dst.add(4 * d), len - d, stream)
            }
            (1, 4) => interleave_4x8(src, row, dst, len, stream),
            (1, 2) => interleave_two::<1>(src, row, dst, len, stream),
            _ => 0,
        };
    }
    let _ = (isa, stream);
    if done == len {
        return;
    }
    rows_portable::<true>(
        src.add(done * w),
        dst.add(done * k * w),
        row,
        (k, len - done, w),
    );
}

/// How far ahead along each source row (bytes) the interleaves ask for the line they will read next
/// into L2 (`prefetcht1`), once per line of each row. A call covers a tile's columns (128 or 256
/// bytes of each row), so the hint reaches a few tiles on. Measured on the s8 interleave with AVX2 on
/// one thread (Zen 5, five rounds each, in turn): 0.85–0.88× memcpy without, 0.93 with 512 bytes, 0.92
/// with 1 KiB, 0.91 with 2 KiB.
#[cfg(target_arch = "x86_64")]
const INTERLEAVE_FETCH_AHEAD: usize = 512;

/// The hints of [`INTERLEAVE_FETCH_AHEAD`] for `k` rows `row` bytes apart, at byte `at` of each row
/// when it starts a line. (The distance comes through `black_box`, read once by the caller, which
/// keeps the compiler from making a burst of the hints; see `FETCH_AHEAD`.)
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn fetch_rows(src: *const u8, row: usize, k: usize, at: usize, ahead: usize) {
    if at.is_multiple_of(64) {
        fetch_ahead(src.wrapping_add(at), row as isize, k, ahead);
    }
}

/// Two rows of `W`-byte elements (1 or 2) interleaved, 16 bytes of each at a time: the low halves'
/// pairs, then the high halves'. Returns the elements done.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn interleave_two<const W: usize>(
    src: *const u8,
    row: usize,
    dst: *mut u8,
    len: usize,
    stream: bool,
) -> usize {
    let n = len * W / 16 * 16;
    let ahead = std::hint::black_box(INTERLEAVE_FETCH_AHEAD);
    let mut at = 0;
    while at < n {
        fetch_rows(src, row, 2, at, ahead);
        let (a, b) = (get(src.add(at)), get(src.add(row + at)));
        let (lo, hi) = if W == 2 {
            (_mm_unpacklo_epi16(a, b), _mm_unpackhi_epi16(a, b))
        } else {
            (_mm_unpacklo_epi8(a, b), _mm_unpackhi_epi8(a, b))
        };
        put(dst.add(2 * at), lo, stream);
        put(dst.add(2 * at + 16), hi, stream);
        at += 16;
    }
    n / W
}

/// Four rows of bytes, 16 at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
pub(super) unsafe fn interleave_4x8(
    src: *const u8,
    row: usize,
    dst: *mut u8,
    len: usize,
    stream: bool,
) -> usize {
    let ahead = std::hint::black_box(INTERLEAVE_FETCH_AHEAD);
    let mut c = 0;
    while c + 16 <= len {
        fetch_rows(src, row, 4, c, ahead);
        let (r0, r1) = (get(src.add(c)), get(src.add(row + c)));
        let (r2, r3) = (get(src.add(2 * row + c)), get(src.add(3 * row + c)));
        put4(dst.add(4 * c), [r0, r1, r2, r3], stream);
        c += 16;
    }
    c
}

/// Four rows of bytes, 32 at a time: the SSE2 unpacks of [`put4`] in both 128-bit lanes, whose
/// halves are then put in order by lane permutes, so each store is 32 bytes (`dst` 32-byte aligned when
/// `stream`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn interleave_4x8_avx2(
    src: *const u8,
    row: usize,
    dst: *mut u8,
    len: usize,
    stream: bool,
) -> usize {
    let load = |p: *const u8| _mm256_loadu_si256(p as *const __m256i);
    let store = |p: *mut u8, v: __m256i| {
        if stream {
            _mm256_stream_si256(p as *mut __m256i, v)
        } else {
            _mm256_storeu_si256(p as *mut __m256i, v)
        }
    };
    let ahead = std::hint::black_box(INTERLEAVE_FETCH_AHEAD);
    let mut c = 0;
    while c + 32 <= len {
        fetch_rows(src, row, 4, c, ahead);
        let (r0, r1) = (load(src.add(c)), load(src.add(row + c)));
        let (r2, r3) = (load(src.add(2 * row + c)), load(src.add(3 * row + c)));
        // Per 128-bit lane h (columns 16h..16h + 16): p01l the pairs of columns 0..8 of the lane, p01h
        // of 8..16; then q[i] the quads of columns 4i..4i + 4 of each lane.
        let (p01l, p01h) = (_mm256_unpacklo_epi8(r0, r1), _mm256_unpackhi_epi8(r0, r1));
        let (p23l, p23h) = (_mm256_unpacklo_epi8(r2, r3), _mm256_unpackhi_epi8(r2, r3));
        let q = [
            _mm256_unpacklo_epi16(p01l, p23l),
            _mm256_unpackhi_epi16(p01l, p23l),
            _mm256_unpacklo_epi16(p01h, p23h),
            _mm256_unpackhi_epi16(p01h, p23h),
        ];
        let out = dst.add(4 * c);
        store(out, _mm256_permute2x128_si256::<0x20>(q[0], q[1]));
        store(out.add(32), _mm256_permute2x128_si256::<0x20>(q[2], q[3]));
        store(out.add(64), _mm256_permute2x128_si256::<0x31>(q[0], q[1]));
        store(out.add(96), _mm256_permute2x128_si256::<0x31>(q[2], q[3]));
        c += 32;
    }
    c
}

/// The inverse of [`interleave`]: `row_j[c] = src[c·k + j]` for k destination rows `row` bytes apart.
///
/// # Safety
/// As for [`interleave`].
pub unsafe fn deinterleave(
    isa: Isa,
    stream: bool,
    src: *const u8,
    dst: *mut u8,
    row: usize,
    (k, len, w): (usize, usize, usize),
) {
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if isa.simd() {
        let stream = stream && (dst as usize).is_multiple_of(16) && row.is_multiple_of(16);
        let wide = |v: usize| (dst as usize).is_multiple_of(v) && row.is_multiple_of(v);
        done = match (w, k) {
            (2, 2)
                if isa == Isa::Avx512
                    && std::is_x86_feature_detected!("avx512bw")
                    && (wide(64) || !stream) =>
            {
                deinterleave_2x16_avx512(src, dst, row, len, stream)
            }
            (2, 2) if isa.avx2() && (wide(32) || !stream) => {
                deinterleave_2x16_avx2(src, dst, row, len, stream)
            }
            (2, 2) => deinterleave_2x16(src, dst, row, len, stream),
            (1, 4) => deinterleave_4x8(src, dst, row, len, stream),
            _ => 0,
        };
    }
    let _ = (isa, stream);
    if done == len {
        return;
    }
    rows_portable::<false>(
        src.add(done * k * w),
        dst.add(done * w),
        row,
        (k, len - done, w),
    );
}

/// The portable [`interleave`] (`PACK`: `dst[c·k + j] = row_j[c]`) and [`deinterleave`] (the
/// reverse), specialised for the common widths and factors.
pub(super) unsafe fn rows_portable<const PACK: bool>(
    src: *const u8,
    dst: *mut u8,
    row: usize,
    (k, len, w): (usize, usize, usize),
) {
    // Whole chunks of columns first, a group as one integer (on little-endian targets).
    let done = match (w, k) {
        _ if cfg!(target_endian = "big") => 0,
        (1, 2) => groups_u8x2::<PACK>(src, dst, row, len),
        (1, 4) if PACK => quads_u8(src, dst, row, len),
        (1, 4) => groups_u8x4::<PACK>(src, dst, row, len),
        (1, 8) => groups_u8x8::<PACK>(src, dst, row, len),
        // (The element loop below interleaves pairs of 16-bit rows faster: 0.70× memcpy against 0.45×.)
        (2, 2) if !PACK => groups_u16x2::<PACK>(src, dst, row, len),
        (2, 4) => groups_u16x4::<PACK>(src, dst, row, len),
        (4, 2) => groups_u32x2::<PACK>(src, dst, row, len),
        _ => 0,
    };
    let (packed_done, row_done) = (done * k * w, done * w);
    let (src, dst, len) = if PACK {
        (src.add(row_done), dst.add(packed_done), len - done)
    } else {
        (src.add(packed_done), dst.add(row_done), len - done)
    };
    // (packed index, row index) of element c of row j, in elements.
    let at = |c: usize, j: usize, k: usize, row: usize| (c * k + j, j * row + c);
    macro_rules! go {
        ($t:ty, $k:literal) => {{
            let (s, d) = (src as *const $t, dst as *mut $t);
            let row = row / std::mem::size_of::<$t>();
            for c in 0..len {
                for j in 0..$k {
                    let (packed, unpacked) = at(c, j, $k, row);
                    let (from, to) = if PACK {
                        (unpacked, packed)
                    } else {
                        (packed, unpacked)
                    };
                    d.add(to).write_unaligned(s.add(from).read_unaligned());
                }
            }
        }};
    }
    match (w, k) {
        (1, 2) => go!(u8, 2),
        (1, 4) => go!(u8, 4),
        (1, 8) => go!(u8, 8),
        (2, 2) => go!(u16, 2),
        (2, 4) => go!(u16, 4),
        (4, 2) => go!(u32, 2),
        _ => {
            for c in 0..len {
                for j in 0..k {
                    let (packed, unpacked) = at(c, j, k, row / w.max(1));
                    let (from, to) = if PACK {
                        (unpacked, packed)
                    } else {
                        (packed, unpacked)
                    };
                    copy_element(src.add(from * w), dst.add(to * w), w);
                }
            }
        }
    }
}

/// [`rows_portable`] for `$k` rows of `$t`, [`CHUNK`] columns at a time: a group of `$k` elements is
/// one `$g` integer (little-endian: row j's element in bits `j·bits($t)..`), built from the rows with
/// widenings, shifts and ors, or split back with shifts and narrowings, in loops of a fixed length over
/// arrays that the compiler turns into vector code. Returns the columns done.
macro_rules! groups_portable {
    ($name:ident, $t:ty, $k:literal, $g:ty) => {
        unsafe fn $name<const PACK: bool>(
            src: *const u8,
            dst: *mut u8,
            row: usize,
            len: usize,
        ) -> usize {
            const BITS: u32 = <$t>::BITS;
            let row = row / std::mem::size_of::<$t>();
            let mut c = 0;
            while c + CHUNK <= len {
                if PACK {
                    let s = src as *const $t;
                    let rows: [[$t; CHUNK]; $k] = std::array::from_fn(|j| {
                        (s.add(j * row + c) as *const [$t; CHUNK]).read_unaligned()
                    });
                    let mut groups = [0 as $g; CHUNK];
                    for (j, r) in rows.iter().enumerate() {
                        for (g, &x) in groups.iter_mut().zip(r) {
                            *g |= <$g>::from(x) << (BITS * j as u32);
                        }
                    }
                    ((dst as *mut $g).add(c) as *mut [$g; CHUNK]).write_unaligned(groups);
                } else {
                    let groups = ((src as *const $g).add(c) as *const [$g; CHUNK]).read_unaligned();
                    let d = dst as *mut $t;
                    for j in 0..$k {
                        let mut r = [0 as $t; CHUNK];
                        for (x, &g) in r.iter_mut().zip(&groups) {
                            *x = (g >> (BITS * j as u32)) as $t;
                        }
                        (d.add(j * row + c) as *mut [$t; CHUNK]).write_unaligned(r);
                    }
                }
                c += CHUNK;
            }
            c
        }
    };
}
groups_portable!(groups_u8x2, u8, 2, u16);
groups_portable!(groups_u8x4, u8, 4, u32);
groups_portable!(groups_u8x8, u8, 8, u64);
groups_portable!(groups_u16x2, u16, 2, u32);
groups_portable!(groups_u16x4, u16, 4, u64);
groups_portable!(groups_u32x2, u32, 2, u64);

/// The portable interleave of four rows of bytes, [`CHUNK`] columns at a time, in two steps of pairs:
/// rows 0 and 1 (and 2 and 3) side by side as `u16`, then those pairs as `u32`. The compiler turns each
/// step into byte and word unpacks (95 instructions a chunk on x86-64 against 312 for four widenings,
/// shifts and ors at once). Returns the columns done.
unsafe fn quads_u8(src: *const u8, dst: *mut u8, row: usize, len: usize) -> usize {
    let mut c = 0;
    while c + CHUNK <= len {
        let r: [[u8; CHUNK]; 4] =
            std::array::from_fn(|j| (src.add(j * row + c) as *const [u8; CHUNK]).read_unaligned());
        let pair = |a: &[u8; CHUNK], b: &[u8; CHUNK]| -> [u16; CHUNK] {
            std::array::from_fn(|i| u16::from(a[i]) | u16::from(b[i]) << 8)
        };
        let (lo, hi) = (pair(&r[0], &r[1]), pair(&r[2], &r[3]));
        let quads: [u32; CHUNK] =
            std::array::from_fn(|i| u32::from(lo[i]) | u32::from(hi[i]) << 16);
        // Little-endian (the caller's condition): byte j of quad i is row j's column i.
        ((dst as *mut u32).add(c) as *mut [u32; CHUNK]).write_unaligned(quads);
        c += CHUNK;
    }
    c
}

/// Columns per step of the portable (de)interleaves.
const CHUNK: usize = 64;

/// Pairs of 16-bit elements into two rows, one row at a time (so each row's stores fill whole lines in
/// order), a vector of pairs at a time: the low halves of the 32-bit pairs sign-extended so that
/// signed saturation packs them back unchanged, then the high halves. `$order` puts the pack's quarters
/// back in order where it works within 128-bit lanes. Returns the pairs done.
macro_rules! deinterleave_pairs {
    ($name:ident, $feature:literal, $v:ty, $pairs:literal, $load:ident, $store:ident, $stream:ident,
     $slli:ident, $srai:ident, $packs:ident, $order:expr) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        unsafe fn $name(
            src: *const u8,
            dst: *mut u8,
            row: usize,
            len: usize,
            stream: bool,
        ) -> usize {
            let n = len / $pairs * $pairs;
            for half in 0..2 {
                let out = dst.add(half * row);
                let mut c = 0;
                while c < n {
                    let x0 = $load(src.add(4 * c) as *const $v);
                    let x1 = $load(src.add(4 * c + 4 * $pairs / 2) as *const $v);
                    let (y0, y1) = if half == 0 {
                        ($srai($slli(x0, 16), 16), $srai($slli(x1, 16), 16))
                    } else {
                        ($srai(x0, 16), $srai(x1, 16))
                    };
                    let v = $order($packs(y0, y1));
                    let p = out.add(2 * c) as *mut $v;
                    if stream {
                        $stream(p, v);
                    } else {
                        $store(p, v);
                    }
                    c += $pairs;
                }
            }
            n
        }
    };
}
deinterleave_pairs!(
    deinterleave_2x16,
    "sse2",
    __m128i,
    8,
    _mm_loadu_si128,
    _mm_storeu_si128,
    _mm_stream_si128,
    _mm_slli_epi32,
    _mm_srai_epi32,
    _mm_packs_epi32,
    |v| v
);
deinterleave_pairs!(
    deinterleave_2x16_avx2,
    "avx2",
    __m256i,
    16,
    _mm256_loadu_si256,
    _mm256_storeu_si256,
    _mm256_stream_si256,
    _mm256_slli_epi32,
    _mm256_srai_epi32,
    _mm256_packs_epi32,
    |v| _mm256_permute4x64_epi64(v, 0xd8)
);
deinterleave_pairs!(
    deinterleave_2x16_avx512,
    "avx512f,avx512bw",
    __m512i,
    32,
    _mm512_loadu_si512,
    _mm512_storeu_si512,
    _mm512_stream_si512,
    _mm512_slli_epi32,
    _mm512_srai_epi32,
    _mm512_packs_epi32,
    |v| _mm512_permutexvar_epi64(_mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0), v)
);

/// Quads of bytes into four rows, 16 quads at a time: byte j of each 32-bit quad, masked, then packed
/// down to 16 and 8 bits (the values fit, so saturation never changes them).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
pub(super) unsafe fn deinterleave_4x8(
    src: *const u8,
    dst: *mut u8,
    row: usize,
    len: usize,
    stream: bool,
) -> usize {
    let n = len / 16 * 16;
    let m = _mm_set1_epi32(0xff);
    macro_rules! lane {
        ($j:literal) => {{
            // One row at a time, so that each row's stores fill whole lines in order.
            let mut c = 0;
            while c < n {
                let b =
                    |at: usize| _mm_and_si128(_mm_srli_epi32(get(src.add(4 * c + at)), 8 * $j), m);
                let lo = _mm_packs_epi32(b(0), b(16));
                let hi = _mm_packs_epi32(b(32), b(48));
                put(dst.add($j * row + c), _mm_packus_epi16(lo, hi), stream);
                c += 16;
            }
        }};
    }
    lane!(0);
    lane!(1);
    lane!(2);
    lane!(3);
    n
}

#[cfg(test)]
mod tests {
    use super::super::test_bytes::noise;
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

        /// Interleaving and deinterleaving, under every instruction set, cached and non-temporal,
        /// against the law element by element: `dst[c·k + j] = row_j[c]` and back, for the widths and
        /// factors the kernels specialise (and one they do not), runs longer than every kernel's step
        /// (16, 32 and 64 columns), rows padded past their length, a destination at any offset from
        /// alignment, and nothing outside the run written.
        #[test]
        fn interleaves_match_the_law_under_every_isa(
            (w, k) in prop::sample::select(vec![(1usize, 2usize), (1, 4), (1, 8), (2, 2), (2, 4), (4, 2), (1, 3)]),
            len in 0usize..300,
            (pad, skew) in (0usize..40, 0usize..40),
            seed in any::<u64>(),
        ) {
            let row = (len + pad) * w;
            let src = noise(k * row, seed);
            let mut want = vec![0x5au8; skew + len * k * w];
            for c in 0..len {
                for j in 0..k {
                    let (from, to) = (j * row + c * w, skew + (c * k + j) * w);
                    want[to..to + w].copy_from_slice(&src[from..from + w]);
                }
            }
            for isa in Isa::available() {
                for stream in [false, true] {
                    let mut packed = vec![0x5au8; skew + len * k * w];
                    // SAFETY: k rows of `row` ≥ len·w bytes; len·k elements past `skew`.
                    unsafe {
                        interleave(isa, stream, src.as_ptr(), row, packed.as_mut_ptr().add(skew), (k, len, w))
                    };
                    fence(isa, stream);
                    prop_assert!(packed == want, "{} (stream {}) interleaving", isa.name(), stream);
                    let mut back = vec![0xa5u8; k * row];
                    // SAFETY: as above, the other way.
                    unsafe {
                        deinterleave(isa, stream, packed.as_ptr().add(skew), back.as_mut_ptr(), row, (k, len, w))
                    };
                    fence(isa, stream);
                    for j in 0..k {
                        for b in 0..row {
                            let want = if b < len * w { src[j * row + b] } else { 0xa5 };
                            prop_assert_eq!(back[j * row + b], want, "{} (stream {}) deinterleaving: row {}, byte {}", isa.name(), stream, j, b);
                        }
                    }
                }
            }
        }
    }
}
