//! The inner loops of a relayout: block copies, k-way (de)interleaves, small transposes and bit packing.
//!
//! Each kernel has a portable version and, on x86-64, SIMD versions (SSE2, which every x86-64 has, AVX2
//! and AVX-512 where the processor reports them; bit packing also uses AVX-512's byte, VBMI and GFNI
//! extensions where present), chosen once per relayout by [`Isa::detect`]. With `stream`
//! set, whole aligned vectors are written with non-temporal stores, which skip reading the destination's
//! cache lines before overwriting them (as a large `memcpy` does); a worker calls [`fence`] when its
//! writes are done.
//!
//! Every kernel is `unsafe`: the caller guarantees that every address it names lies inside its buffer,
//! and that source and destination do not overlap.

#![allow(unsafe_code)]

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// The instruction set the kernels use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// AVX-512 (512-bit vectors: 16×16 transposes in registers; bit packing through bit-matrix
    /// transposes where the processor also has AVX-512BW, VBMI and GFNI), with AVX2 and SSE2 where a
    /// kernel has no wider form.
    Avx512,
    /// AVX2 (256-bit vectors), with SSE2 where a kernel has no wider form.
    Avx2,
    /// SSE2 (128-bit vectors), part of every x86-64 processor.
    Sse2,
    /// Plain Rust, for every target.
    Portable,
}

impl Isa {
    /// The best set this processor runs.
    pub fn detect() -> Isa {
        Isa::available().first().copied().unwrap_or(Isa::Portable)
    }

    /// The sets this processor runs, best first.
    pub fn available() -> Vec<Isa> {
        [Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Portable]
            .into_iter()
            .filter(|i| i.supported())
            .collect()
    }

    /// Whether this processor runs the set.
    pub fn supported(self) -> bool {
        match self {
            Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Sse2 => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => std::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx2")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The name used in plans.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx512 => "AVX-512",
            Isa::Avx2 => "AVX2",
            Isa::Sse2 => "SSE2",
            Isa::Portable => "portable",
        }
    }

    /// The set named `name` (as in plans, any case: `avx-512`/`avx512`, `avx2`, `sse2`, `portable`).
    pub fn from_name(name: &str) -> Option<Isa> {
        let n = name.to_ascii_lowercase().replace('-', "");
        [Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Portable]
            .into_iter()
            .find(|i| i.name().to_ascii_lowercase().replace('-', "") == n)
    }

    #[cfg(target_arch = "x86_64")]
    fn simd(self) -> bool {
        self != Isa::Portable
    }

    #[cfg(target_arch = "x86_64")]
    fn avx2(self) -> bool {
        matches!(self, Isa::Avx2 | Isa::Avx512)
    }
}

/// Copies one element of `w` bytes.
///
/// # Safety
/// Both addresses must be valid for `w` bytes.
#[inline(always)]
pub unsafe fn copy_element(src: *const u8, dst: *mut u8, w: usize) {
    match w {
        1 => *dst = *src,
        2 => (dst as *mut u16).write_unaligned((src as *const u16).read_unaligned()),
        4 => (dst as *mut u32).write_unaligned((src as *const u32).read_unaligned()),
        8 => (dst as *mut u64).write_unaligned((src as *const u64).read_unaligned()),
        16 => (dst as *mut u128).write_unaligned((src as *const u128).read_unaligned()),
        _ => std::ptr::copy_nonoverlapping(src, dst, w),
    }
}

/// Makes a worker's non-temporal stores visible before it reports its work done.
pub fn fence(isa: Isa, stream: bool) {
    #[cfg(target_arch = "x86_64")]
    if stream && isa.simd() {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_sfence() };
    }
    let _ = (isa, stream);
}

/// Copies `len` bytes: `dst[i] = src[i]`.
///
/// # Safety
/// `src` and `dst` valid for `len` bytes, not overlapping.
#[inline]
pub unsafe fn copy(isa: Isa, stream: bool, src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if stream && len >= 64 {
        // Vectors that straddle the destination's alignment would mix cached and uncached writes to one
        // line, so 32-byte vectors only where the destination is 32-byte aligned.
        match isa {
            Isa::Avx512 if (dst as usize).is_multiple_of(64) => {
                return copy_stream_avx512(src, dst, len)
            }
            i if i.avx2() && (dst as usize).is_multiple_of(32) => {
                return copy_stream_avx(src, dst, len)
            }
            i if i.simd() && (dst as usize).is_multiple_of(16) => {
                return copy_stream_sse2(src, dst, len)
            }
            _ => {}
        }
    }
    let _ = (isa, stream);
    std::ptr::copy_nonoverlapping(src, dst, len);
}

/// A non-temporal copy with vectors of `$width` bytes: the head up to the destination's alignment and the
/// tail with ordinary stores, whole vectors in between.
macro_rules! copy_stream {
    ($name:ident, $feature:literal, $v:ty, $width:literal, $load:ident, $store:ident) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        unsafe fn $name(src: *const u8, dst: *mut u8, len: usize) {
            let head = dst.align_offset($width).min(len);
            // (Guarded: a call to copy nothing costs as much as a vector moved.)
            if head > 0 {
                std::ptr::copy_nonoverlapping(src, dst, head);
            }
            let mut i = head;
            while i + $width <= len {
                $store(dst.add(i) as *mut $v, $load(src.add(i) as *const $v));
                i += $width;
            }
            if i < len {
                std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
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

/// Stores 16 bytes at `p`: non-temporal when `stream` (then `p` must be 16-byte aligned).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn put(p: *mut u8, v: __m128i, stream: bool) {
    if stream {
        _mm_stream_si128(p as *mut __m128i, v);
    } else {
        _mm_storeu_si128(p as *mut __m128i, v);
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn get(p: *const u8) -> __m128i {
    _mm_loadu_si128(p as *const __m128i)
}

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
        done = match (w, k) {
            (2, 2) | (1, 2)
                if isa == Isa::Avx512
                    && std::is_x86_feature_detected!("avx512vbmi")
                    && ((dst as usize).is_multiple_of(64) || !stream) =>
            {
                match w {
                    2 => interleave_two_avx512::<2>(src, row, dst, len, stream),
                    _ => interleave_two_avx512::<1>(src, row, dst, len, stream),
                }
            }
            (2, 2) => interleave_two::<2>(src, row, dst, len, stream),
            (1, 4) => interleave_4x8(src, row, dst, len, stream),
            (1, 2) => interleave_two::<1>(src, row, dst, len, stream),
            _ => 0,
        };
    }
    let _ = (isa, stream);
    rows_portable::<true>(
        src.add(done * w),
        dst.add(done * k * w),
        row,
        (k, len - done, w),
    );
}

/// Two rows of `W`-byte elements (1 or 2) interleaved, a vector of each at a time: `$split` makes the
/// two vectors stored from the rows' `$a` and `$b` (the first half of the pairs, then the second).
/// Returns the elements done.
macro_rules! interleave_pairs {
    ($name:ident, $feature:literal, $v:ty, $load:ident, $put:ident, |$a:ident, $b:ident| $split:expr) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $feature)]
        unsafe fn $name<const W: usize>(
            src: *const u8,
            row: usize,
            dst: *mut u8,
            len: usize,
            stream: bool,
        ) -> usize {
            const V: usize = std::mem::size_of::<$v>();
            let n = len * W / V * V;
            let mut at = 0;
            while at < n {
                let ($a, $b) = (
                    $load(src.add(at) as *const _),
                    $load(src.add(row + at) as *const _),
                );
                let (lo, hi) = $split;
                $put(dst.add(2 * at), lo, stream);
                $put(dst.add(2 * at + V), hi, stream);
                at += V;
            }
            n / W
        }
    };
}
interleave_pairs!(
    interleave_two,
    "sse2",
    __m128i,
    _mm_loadu_si128,
    put,
    |a, b| {
        if W == 2 {
            (_mm_unpacklo_epi16(a, b), _mm_unpackhi_epi16(a, b))
        } else {
            (_mm_unpacklo_epi8(a, b), _mm_unpackhi_epi8(a, b))
        }
    }
);
// Two-source permutes put the pairs in order across the whole vector (bytes need AVX-512VBMI).
interleave_pairs!(
    interleave_two_avx512,
    "avx512f,avx512bw,avx512vbmi",
    __m512i,
    _mm512_loadu_si512,
    put512,
    |a, b| {
        let (pairs, words) = interleave_indices();
        if W == 2 {
            let w = |h: usize| _mm512_permutex2var_epi16(a, words[h], b);
            (w(0), w(1))
        } else {
            let p = |h: usize| _mm512_permutex2var_epi8(a, pairs[h], b);
            (p(0), p(1))
        }
    }
);

/// Four rows of bytes, 16 at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn interleave_4x8(
    src: *const u8,
    row: usize,
    dst: *mut u8,
    len: usize,
    stream: bool,
) -> usize {
    let mut c = 0;
    while c + 16 <= len {
        let (r0, r1) = (get(src.add(c)), get(src.add(row + c)));
        let (r2, r3) = (get(src.add(2 * row + c)), get(src.add(3 * row + c)));
        put4(dst.add(4 * c), [r0, r1, r2, r3], stream);
        c += 16;
    }
    c
}

/// Writes the bytes of four vectors interleaved: `dst[4c + j] = v_j[c]` (64 bytes).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn put4(dst: *mut u8, [r0, r1, r2, r3]: [__m128i; 4], stream: bool) {
    let (p01l, p01h) = (_mm_unpacklo_epi8(r0, r1), _mm_unpackhi_epi8(r0, r1));
    let (p23l, p23h) = (_mm_unpacklo_epi8(r2, r3), _mm_unpackhi_epi8(r2, r3));
    put(dst, _mm_unpacklo_epi16(p01l, p23l), stream);
    put(dst.add(16), _mm_unpackhi_epi16(p01l, p23l), stream);
    put(dst.add(32), _mm_unpacklo_epi16(p01h, p23h), stream);
    put(dst.add(48), _mm_unpackhi_epi16(p01h, p23h), stream);
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
    rows_portable::<false>(
        src.add(done * k * w),
        dst.add(done * w),
        row,
        (k, len - done, w),
    );
}

/// The portable [`interleave`] (`PACK`: `dst[c·k + j] = row_j[c]`) and [`deinterleave`] (the
/// reverse), specialised for the common widths and factors.
unsafe fn rows_portable<const PACK: bool>(
    src: *const u8,
    dst: *mut u8,
    row: usize,
    (k, len, w): (usize, usize, usize),
) {
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
unsafe fn deinterleave_4x8(
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

/// Copies an `na`×`nb` tile where element (x, y) is read at `x·s[0] + y·s[1]` and written at
/// `x·s[2] + y·s[3]` (in elements of `w` bytes). With 1-, 2-, 4- or 8-byte elements read contiguously
/// along y and written contiguously along x (a transpose), blocks are transposed in registers (the
/// widest the instruction set has, see `transpose_blocks`); everything else goes element by element,
/// the inner loop along x.
///
/// # Safety
/// Every addressed element must lie inside its buffer.
pub unsafe fn transpose(
    isa: Isa,
    (stream, fetch): (bool, bool),
    src: *const u8,
    dst: *mut u8,
    s: [i64; 4],
    (na, nb, w): (usize, usize, usize),
) {
    #[cfg(target_arch = "x86_64")]
    if matches!(w, 1 | 2 | 4 | 8) && s[1] == 1 && s[2] == 1 && isa.simd() {
        transpose_blocks(isa, (stream, fetch), src, dst, s, (na, nb, w));
        return;
    }
    let _ = (isa, stream, fetch);
    transpose_portable(src, dst, s, (na, nb, w));
}

/// The tile a transpose is cut into, for source rows `pitch` bytes apart: indices along the
/// destination's contiguous dimension (source rows read), and along the source's (destination rows
/// written). A tile holds 8192 elements in 32 or 64 rows: 64 while they span at most 2 MiB, else 32.
/// (Measured on the bench's transposes, with [`FETCH_AHEAD`]: 64×128 for rows 32 KiB apart; for rows
/// 256 KiB apart, 32 rows beat 16 and 64, whose destination rows get a lone line per tile or whose
/// reads spread too far.)
pub fn transpose_tile(pitch: usize) -> (usize, usize) {
    let rows = ((2 << 20) / pitch.max(1)).clamp(32, 64) / 16 * 16;
    (rows, 8192 / rows)
}

/// How far ahead along each source row (bytes) a direct transpose asks for the line it will read next
/// into L2 (`prefetcht1`). A tile reads its 32 or 64 rows a line at a time, more streams than the
/// hardware prefetcher follows, so without it most reads wait for memory (`f32[8192,8192]`: reads alone
/// ran at 15.5 GB/s on one thread, 21 with the hint; into L1, `prefetcht0`, was slower than none).
/// With it, direct tiles also beat staging for rows far apart (`f32[256]³` reversed on two threads:
/// 1.14× memcpy against 0.99×; f64: 0.96× against 0.74×). The staged path reads its rows in long
/// bursts, which the hardware follows, and does without.
#[cfg(target_arch = "x86_64")]
pub const FETCH_AHEAD: usize = 256;

/// The tile of [`transpose_staged`]: 64 source rows (64 bytes of each destination row, keeping the
/// buffer to 256 KiB) by 4 KiB of each source row, so that each row is read in long bursts.
pub const STAGED_TILE: (usize, usize) = (64, 4096);

/// The source rows [`transpose_staged`] reads together: as many as a register block has.
pub const STAGED_GROUP: usize = 16;

/// Whether a transpose of `w`-byte elements into a destination of `bytes` bytes goes through a buffer
/// ([`transpose_staged`]): bytes, whose register blocks store 16 bytes to a row, where the destination
/// is too large for the caches (measured on `u8[8192,8192]` with SSE2 blocks: 0.1× memcpy directly,
/// 0.3–0.38× staged; within the caches, direct is a little faster).
pub fn staged(w: usize, bytes: u64) -> bool {
    w == 1 && bytes >= crate::STREAM_MIN_BYTES
}

/// Transposes `na` source rows of bytes (`sr` bytes apart, read contiguously) by the `nb` columns of
/// each of `segments`, through a buffer: byte (x, y) of segment `(so, do)` is read at
/// `src + so + x·sr + y` and written at `dst + do + y·dc + x`.
///
/// The rows are read [`STAGED_GROUP`] at a time, each along every segment (long bursts from few
/// streams), into the buffer; then each destination row gets its `na` bytes in one go. Reading all
/// `na` rows together instead would keep too many streams open; writing each block as it is read would
/// leave 16 bytes at a time in a destination row, which memory writes slowly.
///
/// # Safety
/// Every addressed byte must lie inside its buffer.
pub unsafe fn transpose_staged(
    isa: Isa,
    stream: bool,
    (src, sr): (*const u8, isize),
    (dst, dc): (*mut u8, isize),
    segments: &[(isize, isize)],
    (na, nb): (usize, usize),
) {
    with_stage(na * nb * segments.len(), |buf| {
        let s = [sr as i64, 1, 1, na as i64];
        for x0 in (0..na).step_by(STAGED_GROUP) {
            let rows = (na - x0).min(STAGED_GROUP);
            for (g, &(so, _)) in segments.iter().enumerate() {
                let from = src.offset(so + x0 as isize * sr);
                let to = buf.add(g * nb * na + x0);
                transpose(isa, (false, false), from, to, s, (rows, nb, 1));
            }
        }
        for (g, &(_, doff)) in segments.iter().enumerate() {
            let rows = buf.add(g * nb * na);
            copy_rows(isa, stream, (rows, na), (dst.offset(doff), dc), nb);
        }
    });
}

/// Copies `n` rows of `len` bytes, `src.1` bytes apart in the source and `dst.1` in the destination.
///
/// # Safety
/// Every row must lie inside its buffer; source and destination must not overlap.
pub unsafe fn copy_rows(
    isa: Isa,
    stream: bool,
    (src, sp): (*const u8, usize),
    (dst, dp): (*mut u8, isize),
    n: usize,
) {
    #[cfg(target_arch = "x86_64")]
    if stream
        && isa == Isa::Avx512
        && sp.is_multiple_of(64)
        && (dst as usize).is_multiple_of(64)
        && dp % 64 == 0
    {
        // Whole lines, each in one store.
        return copy_rows_avx512(src, sp, dst, dp, n);
    }
    for y in 0..n {
        copy(
            isa,
            stream,
            src.add(y * sp),
            dst.offset(y as isize * dp),
            sp,
        );
    }
}

/// [`copy_rows`] of whole cache lines with AVX-512 non-temporal stores.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn copy_rows_avx512(src: *const u8, sp: usize, dst: *mut u8, dp: isize, n: usize) {
    for y in 0..n {
        let (from, to) = (src.add(y * sp), dst.offset(y as isize * dp));
        for i in (0..sp).step_by(64) {
            let v = _mm512_loadu_si512(from.add(i) as *const __m512i);
            _mm512_stream_si512(to.add(i) as *mut __m512i, v);
        }
    }
}

/// Runs `f` on this thread's staging buffer of at least `len` bytes, 64-byte aligned.
fn with_stage(len: usize, f: impl FnOnce(*mut u8)) {
    use std::cell::RefCell;
    thread_local! {
        static STAGE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    STAGE.with(|stage| {
        let mut stage = stage.borrow_mut();
        if stage.len() < len + 64 {
            stage.resize(len + 64, 0);
        }
        let at = stage.as_ptr().align_offset(64);
        f(stage[at..].as_mut_ptr())
    })
}

/// [`transpose`] of 1-, 2-, 4- or 8-byte elements read contiguously along y and written contiguously
/// along x, in register blocks (`b`×`b`, `b` elements a vector), the edges element by element.
#[cfg(target_arch = "x86_64")]
unsafe fn transpose_blocks(
    isa: Isa,
    (stream, fetch): (bool, bool),
    src: *const u8,
    dst: *mut u8,
    s: [i64; 4],
    (na, nb, w): (usize, usize, usize),
) {
    // Blocks of `ba` source rows by `bb` columns; `v` bytes per vector stored.
    let (ba, bb, v, fast): (usize, usize, usize, Block) = match (w, isa) {
        (4, Isa::Avx512) => (16, 16, 64, transpose_16x16_f32),
        (4, Isa::Avx2) => (8, 8, 32, transpose_8x8_f32),
        (4, _) => (4, 4, 16, transpose_4x4_f32),
        (8, i) if i.avx2() => (4, 4, 32, transpose_4x4_f64),
        (8, _) => (2, 2, 16, transpose_2x2_f64),
        (2, i) if i.avx2() => (32, 16, 32, transpose_32x16_u16),
        (2, _) => (8, 8, 16, transpose_8x8_u16),
        (_, Isa::Avx512) if std::is_x86_feature_detected!("avx512bw") => {
            (16, 64, 16, transpose_16x64_u8)
        }
        _ => (16, 16, 16, transpose_16x16_u8),
    };
    let wi = w as i64;
    let aligned = (dst as usize).is_multiple_of(v) && (s[3] * wi) % v as i64 == 0;
    let stream = stream && aligned;
    let (fa, fb) = (na / ba * ba, nb / bb * bb);
    for y in (0..fb).step_by(bb) {
        // Once per cache line of each row: the line FETCH_AHEAD bytes on, into L2.
        let fetch = fetch && (y * w).is_multiple_of(64);
        for x in (0..fa).step_by(ba) {
            let from = src.offset(((x as i64 * s[0] + y as i64) * wi) as isize);
            if fetch {
                for i in 0..ba {
                    let at = from.wrapping_offset(i as isize * s[0] as isize * wi as isize);
                    _mm_prefetch::<_MM_HINT_T1>(at.wrapping_add(FETCH_AHEAD) as *const i8);
                }
            }
            fast(
                from,
                dst.offset(((x as i64 + y as i64 * s[3]) * wi) as isize),
                (s[0] * wi) as isize,
                (s[3] * wi) as isize,
                stream,
            );
        }
    }
    // The edges: x past the last whole block (every y), then y past it (x inside the blocks).
    let edge = |x0: usize, x1: usize, y0: usize, y1: usize| {
        transpose_portable(
            src.offset(((x0 as i64 * s[0] + y0 as i64) * wi) as isize),
            dst.offset(((x0 as i64 + y0 as i64 * s[3]) * wi) as isize),
            s,
            (x1 - x0, y1 - y0, w),
        )
    };
    edge(fa, na, 0, nb);
    edge(0, fa, fb, nb);
}

/// Stores 16-byte rows `(i, v)` at `dst + i·dr`, non-temporal when `stream`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn put_rows_128(
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
unsafe fn transpose_8x8_u16(src: *const u8, dst: *mut u8, sr: isize, dr: isize, stream: bool) {
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
unsafe fn transpose_32x16_u16(src: *const u8, dst: *mut u8, sr: isize, dr: isize, stream: bool) {
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
unsafe fn transpose_16x16_u8(src: *const u8, dst: *mut u8, sr: isize, dr: isize, stream: bool) {
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
unsafe fn transpose_16x64_u8(src: *const u8, dst: *mut u8, sr: isize, dr: isize, stream: bool) {
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

/// A 4×4 block of 8-byte elements with AVX: pairs of rows interleaved, then 128-bit halves joined.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose_4x4_f64(src: *const u8, dst: *mut u8, sr: isize, dr: isize, stream: bool) {
    let r: [__m256d; 4] =
        std::array::from_fn(|i| _mm256_loadu_pd(src.offset(i as isize * sr) as *const f64));
    let (t0, t1) = (
        _mm256_unpacklo_pd(r[0], r[1]),
        _mm256_unpackhi_pd(r[0], r[1]),
    );
    let (t2, t3) = (
        _mm256_unpacklo_pd(r[2], r[3]),
        _mm256_unpackhi_pd(r[2], r[3]),
    );
    let cols = [
        _mm256_permute2f128_pd(t0, t2, 0x20),
        _mm256_permute2f128_pd(t1, t3, 0x20),
        _mm256_permute2f128_pd(t0, t2, 0x31),
        _mm256_permute2f128_pd(t1, t3, 0x31),
    ];
    for (i, c) in cols.into_iter().enumerate() {
        let p = dst.offset(i as isize * dr) as *mut f64;
        if stream {
            _mm256_stream_pd(p, c);
        } else {
            _mm256_storeu_pd(p, c);
        }
    }
}

/// A 2×2 block of 8-byte elements with SSE2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn transpose_2x2_f64(src: *const u8, dst: *mut u8, sr: isize, dr: isize, stream: bool) {
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

/// A register transpose of a square block: source, destination, their row pitches in bytes, streaming.
#[cfg(target_arch = "x86_64")]
type Block = unsafe fn(*const u8, *mut u8, isize, isize, bool);

/// The portable [`transpose`].
unsafe fn transpose_portable(
    src: *const u8,
    dst: *mut u8,
    s: [i64; 4],
    (na, nb, w): (usize, usize, usize),
) {
    macro_rules! go {
        ($t:ty) => {{
            let (src, dst) = (src as *const $t, dst as *mut $t);
            for y in 0..nb as isize {
                let (sr, dr) = (src.offset(y * s[1] as isize), dst.offset(y * s[3] as isize));
                for x in 0..na as isize {
                    dr.offset(x * s[2] as isize)
                        .write_unaligned(sr.offset(x * s[0] as isize).read_unaligned());
                }
            }
        }};
    }
    match w {
        1 => go!(u8),
        2 => go!(u16),
        4 => go!(u32),
        8 => go!(u64),
        16 => go!(u128),
        _ => {
            for y in 0..nb as i64 {
                for x in 0..na as i64 {
                    let so = ((x * s[0] + y * s[1]) * w as i64) as isize;
                    let doff = ((x * s[2] + y * s[3]) * w as i64) as isize;
                    copy_element(src.offset(so), dst.offset(doff), w);
                }
            }
        }
    }
}

/// Stores `(row, vector)` pairs at `$dst + row·$pitch` bytes: non-temporal (`$nt`) when `$stream`, else
/// ordinary (`$st`).
#[cfg(target_arch = "x86_64")]
macro_rules! put_rows {
    ($rows:expr, $dst:expr, $pitch:expr, $stream:expr, $nt:ident, $st:ident) => {
        for (i, c) in $rows {
            let p = $dst.offset(i as isize * $pitch) as *mut f32;
            if $stream {
                $nt(p, c);
            } else {
                $st(p, c);
            }
        }
    };
}

/// Loads `$n` rows (`$sr` bytes apart) and, for each group of four, interleaves them in pairs and then
/// in pairs of pairs: in the result, 128-bit lane k of vector 4g + j holds column 4k + j of rows
/// 4g..4g+4.
#[cfg(target_arch = "x86_64")]
macro_rules! columns_in_lanes {
    ($src:expr, $sr:expr, $n:literal, $load:ident, $zero:ident, $lo:ident, $hi:ident, $shuffle:ident) => {{
        let r: [_; $n] =
            std::array::from_fn(|i| $load($src.offset(i as isize * $sr) as *const f32));
        let mut u = [$zero(); $n];
        for g in 0..$n / 4 {
            let (a, b, c, d) = (r[4 * g], r[4 * g + 1], r[4 * g + 2], r[4 * g + 3]);
            let (t0, t1) = ($lo(a, b), $hi(a, b));
            let (t2, t3) = ($lo(c, d), $hi(c, d));
            u[4 * g] = $shuffle(t0, t2, 0x44);
            u[4 * g + 1] = $shuffle(t0, t2, 0xee);
            u[4 * g + 2] = $shuffle(t1, t3, 0x44);
            u[4 * g + 3] = $shuffle(t1, t3, 0xee);
        }
        u
    }};
}

/// An 8×8 block of 4-byte elements: source rows `sr` bytes apart, destination rows `dr` bytes apart.
/// Each four-row group's columns sit in 128-bit lanes (`columns_in_lanes!`); the two groups' lanes joined.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose_8x8_f32(src: *const u8, dst: *mut u8, sr: isize, dr: isize, stream: bool) {
    let u = columns_in_lanes!(
        src,
        sr,
        8,
        _mm256_loadu_ps,
        _mm256_setzero_ps,
        _mm256_unpacklo_ps,
        _mm256_unpackhi_ps,
        _mm256_shuffle_ps
    );
    let cols = (0..4).flat_map(|j| {
        [
            (j, _mm256_permute2f128_ps(u[j], u[4 + j], 0x20)),
            (4 + j, _mm256_permute2f128_ps(u[j], u[4 + j], 0x31)),
        ]
    });
    put_rows!(cols, dst, dr, stream, _mm256_stream_ps, _mm256_storeu_ps);
}

/// A 16×16 block of 4-byte elements, as [`transpose_8x8_f32`]: whole cache lines in, whole lines out.
/// Pairs of rows interleaved, then pairs of pairs (each 128-bit lane now holds one column of four
/// rows), then lanes gathered across four-row groups in two steps.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn transpose_16x16_f32(src: *const u8, dst: *mut u8, sr: isize, dr: isize, stream: bool) {
    let u = columns_in_lanes!(
        src,
        sr,
        16,
        _mm512_loadu_ps,
        _mm512_setzero_ps,
        _mm512_unpacklo_ps,
        _mm512_unpackhi_ps,
        _mm512_shuffle_ps
    );
    // u[4g + j], lane k: column 4k + j of rows 4g..4g+4.
    let mut v = [_mm512_setzero_ps(); 16];
    for j in 0..4 {
        for h in 0..2 {
            let (a, b) = (u[8 * h + j], u[8 * h + 4 + j]);
            v[8 * h + j] = _mm512_shuffle_f32x4(a, b, 0x88);
            v[8 * h + 4 + j] = _mm512_shuffle_f32x4(a, b, 0xdd);
        }
    }
    for j in 0..4 {
        let cols = [
            (j, _mm512_shuffle_f32x4(v[j], v[8 + j], 0x88)),
            (8 + j, _mm512_shuffle_f32x4(v[j], v[8 + j], 0xdd)),
            (4 + j, _mm512_shuffle_f32x4(v[4 + j], v[12 + j], 0x88)),
            (12 + j, _mm512_shuffle_f32x4(v[4 + j], v[12 + j], 0xdd)),
        ];
        put_rows!(cols, dst, dr, stream, _mm512_stream_ps, _mm512_storeu_ps);
    }
}

/// A 4×4 block of 4-byte elements, as [`transpose_8x8_f32`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn transpose_4x4_f32(src: *const u8, dst: *mut u8, sr: isize, dr: isize, stream: bool) {
    let r = |i: isize| _mm_loadu_ps(src.offset(i * sr) as *const f32);
    let (r0, r1, r2, r3) = (r(0), r(1), r(2), r(3));
    let (t0, t1) = (_mm_unpacklo_ps(r0, r1), _mm_unpacklo_ps(r2, r3));
    let (t2, t3) = (_mm_unpackhi_ps(r0, r1), _mm_unpackhi_ps(r2, r3));
    let cols = [
        _mm_movelh_ps(t0, t1),
        _mm_movehl_ps(t1, t0),
        _mm_movelh_ps(t2, t3),
        _mm_movehl_ps(t3, t2),
    ];
    put_rows!(
        cols.into_iter().enumerate(),
        dst,
        dr,
        stream,
        _mm_stream_ps,
        _mm_storeu_ps
    );
}

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
    for c in done..len {
        for m in 0..kb {
            let mut byte = 0u8;
            for t in 0..8 {
                byte |= (*src.add((8 * m + t) * row + c) & 1) << t;
            }
            *dst.add(c * kb + m) = byte;
        }
    }
}

/// Whether the processor has what [`pack_bits_gfni`] and [`unpack_bits_gfni`] use beyond AVX-512F:
/// byte masks (AVX-512BW), byte permutes (AVX-512VBMI) and bit-matrix products (GFNI).
#[cfg(target_arch = "x86_64")]
fn bit_matrices() -> bool {
    std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vbmi")
        && std::is_x86_feature_detected!("gfni")
}

/// Columns that [`pack_bits_gfni`] and [`unpack_bits_gfni`] take at a time: their masks (one `u64` per
/// row and 64 columns) fill 32 KiB for 32 rows. A tile's rows laid end to end (8192 one-byte columns
/// each, as in the bench's pred) are then read in one sequential pass.
#[cfg(target_arch = "x86_64")]
const BIT_SPAN: usize = 8192;

/// How far ahead (bytes) [`pack_bits_gfni`] asks for the source's lines into L2 (`prefetcht1`) as it
/// reads its rows, on top of what the hardware prefetcher fetches (pred into `E(1)`: 0.88–0.93× →
/// 1.01–1.08× memcpy on one thread, about 3% more on two; 512 bytes and 8 KiB were no better than
/// none).
#[cfg(target_arch = "x86_64")]
const BIT_FETCH_AHEAD: usize = 2048;

/// This thread's scratch for the masks of [`pack_bits_gfni`] and [`unpack_bits_gfni`]: 32 rows of
/// [`BIT_SPAN`] bits (32 KiB), kept rather than zeroed on the stack at every call (32 KiB of stores
/// for every 256 KiB read, a few per cent of the bench's pred packing). A kernel holds the only
/// reference into it while it runs: the kernels do not nest, and each fills the masks it reads.
#[cfg(target_arch = "x86_64")]
fn bit_masks() -> *mut u64 {
    use std::cell::UnsafeCell;
    thread_local! {
        static MASKS: UnsafeCell<Vec<u64>> = UnsafeCell::new(vec![0; BIT_SPAN / 2]);
    }
    // SAFETY: the vector is never resized; only its elements are written through the pointer.
    MASKS.with(|m| unsafe { (*m.get()).as_mut_ptr() })
}

/// The bytes of the 8 `u64` lanes of a vector regrouped by position: byte `8b + s` of the result is
/// byte `b` of lane `7 - s` (`reverse`) or of lane `s`. With rows' bit masks in the lanes, lane `b` of
/// the result is the 8×8 bit matrix of their columns `8b..8b + 8`, which [`transpose_bits`] turns.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vbmi")]
unsafe fn regroup_bytes(v: __m512i, reverse: bool) -> __m512i {
    let idx: [u8; 64] = std::array::from_fn(|i| {
        let (b, s) = (i / 8, i % 8);
        (8 * if reverse { 7 - s } else { s } + b) as u8
    });
    _mm512_permutexvar_epi8(_mm512_loadu_si512(idx.as_ptr() as *const __m512i), v)
}

/// [`regroup_bytes`] (reversed) of eight chunks at once: `rows[t]` holds row t's masks of eight chunks
/// (lane q: chunk q); result q is `regroup_bytes(x_q, true)` for `x_q` the vector of the rows' masks of
/// chunk q. A transpose of the 8×8 `u64` lanes (unpacks, then two-source lane permutes) whose last
/// step is folded into the byte regroup, a two-source byte permute.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vbmi")]
unsafe fn regroup_chunks(rows: [__m512i; 8]) -> [__m512i; 8] {
    // t[p][e], lane 2k + j: row 2p + j's chunk 2k + e.
    let t: [[__m512i; 2]; 4] = std::array::from_fn(|p| {
        let (a, b) = (rows[2 * p], rows[2 * p + 1]);
        [_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b)]
    });
    // u[h][e][s], lane 4H + j: row 4h + j's chunk e + 2s + 4H.
    let pick = [
        _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13),
        _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15),
    ];
    let u: [[[__m512i; 2]; 2]; 2] = std::array::from_fn(|h| {
        std::array::from_fn(|e| {
            std::array::from_fn(|s| {
                _mm512_permutex2var_epi64(t[2 * h][e], pick[s], t[2 * h + 1][e])
            })
        })
    });
    // Byte 8b + l of chunk q's result: byte b of row 7 - l's mask, from the half H = q / 4 of u[0]
    // (rows 0..4) or u[1] (rows 4..8).
    let regroup: [__m512i; 2] = std::array::from_fn(|half| {
        let idx: [u8; 64] = std::array::from_fn(|i| {
            let (b, row) = (i / 8, 7 - i % 8);
            (64 * (row / 4) + 32 * half + 8 * (row % 4) + b) as u8
        });
        _mm512_loadu_si512(idx.as_ptr() as *const __m512i)
    });
    std::array::from_fn(|q| {
        let (e, s, half) = (q % 2, q / 2 % 2, q / 4);
        _mm512_permutex2var_epi8(u[0][e][s], regroup[half], u[1][e][s])
    })
}

/// In every `u64` lane, as an 8×8 bit matrix with rows in bytes, bit i of result byte j is bit j of
/// byte `7 - i` (a transpose up to the order of the rows), one GF(2) affine product per lane.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,gfni")]
unsafe fn transpose_bits(v: __m512i) -> __m512i {
    // Byte j of each lane is the unit vector 1 << j: the product picks column j of the lane's matrix.
    let units = _mm512_set1_epi64(0x8040_2010_0804_0201u64 as i64);
    _mm512_gf2p8affine_epi64_epi8(units, v, 0)
}

/// [`pack_bits`] for 8, 16 or 32 rows, 64 columns at a time, over the whole 64-column chunks of `len`
/// (returns the columns done). Each row is read along up to [`BIT_SPAN`] columns into one `u64` mask per
/// 64 columns; then for each chunk, every eight rows' masks are regrouped and their 8×8 bit blocks
/// transposed (one GF(2) affine product), giving each column's byte; the `KB` bytes of a column are
/// interleaved by byte permutes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
unsafe fn pack_bits_gfni<const KB: usize>(
    src: *const u8,
    row: usize,
    dst: *mut u8,
    len: usize,
    stream: bool,
) -> usize {
    let one = _mm512_set1_epi8(1);
    let store = |p: *mut u8, v: __m512i| put512(p, v, stream);
    let (pairs, words) = interleave_indices();
    // masks[r][chunk]: bit i is row r's column 64·chunk + i.
    let masks = &mut *bit_masks().cast::<[[u64; BIT_SPAN / 64]; 32]>();
    let mut c = 0;
    while c + 64 <= len {
        let n = BIT_SPAN.min((len - c) / 64 * 64);
        for (r, m) in masks.iter_mut().enumerate().take(8 * KB) {
            let p = src.add(r * row + c);
            for (q, m) in m.iter_mut().enumerate().take(n / 64) {
                _mm_prefetch::<_MM_HINT_T1>(p.wrapping_add(64 * q + BIT_FETCH_AHEAD) as *const i8);
                let v = _mm512_loadu_si512(p.add(64 * q) as *const __m512i);
                *m = _cvtmask64_u64(_mm512_test_epi8_mask(v, one));
            }
        }
        // A column chunk's bytes from its groups' transposed blocks z[g] (byte j: column 64·q + j's
        // bits of rows 8g..8g + 8), the KB bytes of a column interleaved.
        let emit = |q: usize, z: &[__m512i; 4]| {
            let out = dst.add((c + 64 * q) * KB);
            match KB {
                1 => store(out, z[0]),
                2 => {
                    store(out, _mm512_permutex2var_epi8(z[0], pairs[0], z[1]));
                    store(out.add(64), _mm512_permutex2var_epi8(z[0], pairs[1], z[1]));
                }
                _ => {
                    let p = [0, 1].map(|h| _mm512_permutex2var_epi8(z[0], pairs[h], z[1]));
                    let r = [0, 1].map(|h| _mm512_permutex2var_epi8(z[2], pairs[h], z[3]));
                    for o in 0..4 {
                        let (a, b) = (p[o / 2], r[o / 2]);
                        store(
                            out.add(64 * o),
                            _mm512_permutex2var_epi16(a, words[o % 2], b),
                        );
                    }
                }
            }
        };
        let chunks = n / 64;
        for q0 in (0..chunks / 8).map(|b| 8 * b) {
            let mut z = [[_mm512_setzero_si512(); 4]; 8];
            for g in 0..KB {
                let rows: [__m512i; 8] = std::array::from_fn(|t| {
                    _mm512_loadu_si512(masks[8 * g + t].as_ptr().add(q0) as *const __m512i)
                });
                for (z, x) in z.iter_mut().zip(regroup_chunks(rows)) {
                    z[g] = transpose_bits(x);
                }
            }
            for (i, z) in z.iter().enumerate() {
                emit(q0 + i, z);
            }
        }
        #[allow(clippy::needless_range_loop)] // q indexes the inner arrays: a transposed read.
        for q in chunks / 8 * 8..chunks {
            let z: [__m512i; 4] = std::array::from_fn(|g| {
                if g < KB {
                    let m = |t: usize| masks[8 * g + t][q] as i64;
                    let x = _mm512_set_epi64(m(7), m(6), m(5), m(4), m(3), m(2), m(1), m(0));
                    transpose_bits(regroup_bytes(x, true))
                } else {
                    _mm512_setzero_si512()
                }
            });
            emit(q, &z);
        }
        c += n;
    }
    c
}

/// [`unpack_bits`] for 8, 16 or 32 rows, 64 columns at a time, over the whole 64-column chunks of `len`
/// (returns the columns done): [`pack_bits_gfni`] backwards. For each chunk, the `KB` bytes of each
/// column are split apart by byte permutes, and each group's 8×8 bit blocks transposed back into the
/// rows' masks; then each row is written along up to [`BIT_SPAN`] columns, a mask expanded to 64
/// bytes at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
unsafe fn unpack_bits_gfni<const KB: usize>(
    src: *const u8,
    dst: *mut u8,
    row: usize,
    len: usize,
    stream: bool,
) -> usize {
    let one = _mm512_set1_epi8(1);
    let even = |step: usize| -> [__m512i; 2] {
        [0, 1].map(|odd| match step {
            1 => {
                let idx: [u8; 64] = std::array::from_fn(|i| (2 * i + odd) as u8);
                _mm512_loadu_si512(idx.as_ptr() as *const __m512i)
            }
            _ => {
                let idx: [u16; 32] = std::array::from_fn(|i| (2 * i + odd) as u16);
                _mm512_loadu_si512(idx.as_ptr() as *const __m512i)
            }
        })
    };
    let (bytes, words) = (even(1), even(2));
    // Each u64 lane's bytes in reverse order.
    let rev: [u8; 64] = std::array::from_fn(|i| (i / 8 * 8 + 7 - i % 8) as u8);
    let rev = _mm512_loadu_si512(rev.as_ptr() as *const __m512i);
    // masks[chunk][r]: bit i is row r's column 64·chunk + i.
    let masks = &mut *bit_masks().cast::<[[u64; 32]; BIT_SPAN / 64]>();
    let mut c = 0;
    while c + 64 <= len {
        let n = BIT_SPAN.min((len - c) / 64 * 64);
        for (q, m) in masks.iter_mut().enumerate().take(n / 64) {
            let p = src.add((c + 64 * q) * KB);
            let v: [__m512i; 4] = std::array::from_fn(|i| {
                if i < KB {
                    _mm512_loadu_si512(p.add(64 * i) as *const __m512i)
                } else {
                    _mm512_setzero_si512()
                }
            });
            // z[g]: byte j is column 64·q + j's bits of rows 8g..8g + 8.
            let z: [__m512i; 4] = match KB {
                1 => v,
                2 => [
                    _mm512_permutex2var_epi8(v[0], bytes[0], v[1]),
                    _mm512_permutex2var_epi8(v[0], bytes[1], v[1]),
                    v[2],
                    v[3],
                ],
                _ => {
                    let pairs = [0, 1].map(|h| {
                        let (a, b) = (v[2 * h], v[2 * h + 1]);
                        [0, 1].map(|o| _mm512_permutex2var_epi16(a, words[o], b))
                    });
                    std::array::from_fn(|g| {
                        let (o, b) = (g / 2, g % 2);
                        _mm512_permutex2var_epi8(pairs[0][o], bytes[b], pairs[1][o])
                    })
                }
            };
            for (g, &z) in z.iter().enumerate().take(KB) {
                let rows = regroup_bytes(transpose_bits(_mm512_shuffle_epi8(z, rev)), false);
                _mm512_storeu_si512(m.as_mut_ptr().add(8 * g) as *mut __m512i, rows);
            }
        }
        for r in 0..8 * KB {
            let p = dst.add(r * row + c);
            for (q, m) in masks.iter().enumerate().take(n / 64) {
                put512(
                    p.add(64 * q),
                    _mm512_maskz_mov_epi8(_cvtu64_mask64(m[r]), one),
                    stream,
                );
            }
        }
        c += n;
    }
    c
}

/// Stores 64 bytes at `p`: non-temporal when `stream` (then `p` must be 64-byte aligned).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn put512(p: *mut u8, v: __m512i, stream: bool) {
    if stream {
        _mm512_stream_si512(p as *mut __m512i, v)
    } else {
        _mm512_storeu_si512(p as *mut __m512i, v)
    }
}

/// Indices for two-vector permutes that interleave: `pairs[h]` takes bytes `32h..32h + 32` of two
/// vectors alternately (byte j of the first, then of the second); `words[h]` does the same with 16-bit
/// words `16h..16h + 16`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn interleave_indices() -> ([__m512i; 2], [__m512i; 2]) {
    // Tables built at compile time: the kernels that use them may be called for a few hundred bytes.
    // Lane j of half h of an `N`-lane table: lane `N/2·h + j/2` of the first vector (j even) or of the
    // second (j odd, lanes N.. of the pair).
    const fn interleaving<const N: usize>() -> [[u16; N]; 2] {
        let mut t = [[0u16; N]; 2];
        let mut i = 0;
        while i < 2 * N {
            let (h, j) = (i / N, i % N);
            t[h][j] = (N / 2 * h + j / 2 + N * (j % 2)) as u16;
            i += 1;
        }
        t
    }
    const WORDS: [[u16; 32]; 2] = interleaving::<32>();
    const PAIRS: [[u8; 64]; 2] = {
        let (wide, mut t) = (interleaving::<64>(), [[0u8; 64]; 2]);
        let mut i = 0;
        while i < 128 {
            t[i / 64][i % 64] = wide[i / 64][i % 64] as u8;
            i += 1;
        }
        t
    };
    let load = |p: *const u8| _mm512_loadu_si512(p as *const __m512i);
    (
        [load(PAIRS[0].as_ptr()), load(PAIRS[1].as_ptr())],
        [
            load(WORDS[0].as_ptr().cast()),
            load(WORDS[1].as_ptr().cast()),
        ],
    )
}

/// [`pack_bits`] for 8, 16 or 32 rows, 16 columns at a time: eight rows' low bits gathered into one
/// byte per column (Horner: double and add), then the k/8 bytes of a column interleaved.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn pack_bits_sse2<const KB: usize>(
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
    // read one after another along up to SPAN columns, which for a tile's rows laid end to end is one
    // sequential read. Then the buffer is interleaved into the destination.
    const SPAN: usize = 8192;
    let mut buf = [[_mm_setzero_si128(); SPAN / 16]; 4];
    let mut c = 0;
    while c + 16 <= len {
        let n = SPAN.min((len - c) / 16 * 16);
        for (m, bm) in buf.iter_mut().enumerate().take(KB) {
            for t in 0..8 {
                let p = src.add((8 * m + t) * row + c);
                let done = if wide {
                    gather_row_avx2(p, bm.as_mut_ptr() as *mut u8, n, t)
                } else {
                    0
                };
                let shift = _mm_cvtsi32_si128(t as i32);
                for (q, bq) in bm.iter_mut().enumerate().take(n / 16).skip(done / 16) {
                    let bit = _mm_sll_epi16(_mm_and_si128(get(p.add(16 * q)), one), shift);
                    *bq = if t == 0 { bit } else { _mm_or_si128(*bq, bit) };
                }
            }
        }
        #[allow(clippy::needless_range_loop)] // q indexes the inner arrays: a transposed read.
        for q in 0..n / 16 {
            out(c + 16 * q, [buf[0][q], buf[1][q], buf[2][q], buf[3][q]]);
        }
        c += n;
    }
    c
}

/// One row's low bits, shifted to bit `t`, into the bytes at `buf` (or-ed in, or written for `t == 0`):
/// [`pack_bits_sse2`]'s inner loop 32 bytes at a time, over the whole 32-byte chunks of `n`. Returns the
/// bytes done.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gather_row_avx2(p: *const u8, buf: *mut u8, n: usize, t: usize) -> usize {
    let one = _mm256_set1_epi8(1);
    let shift = _mm_cvtsi32_si128(t as i32);
    let mut q = 0;
    while q + 32 <= n {
        let bit = _mm256_sll_epi16(
            _mm256_and_si256(_mm256_loadu_si256(p.add(q) as *const __m256i), one),
            shift,
        );
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
            1 => unpack_bits_sse2::<1>(src, dst, row, len, stream),
            2 => unpack_bits_sse2::<2>(src, dst, row, len, stream),
            _ => unpack_bits_sse2::<4>(src, dst, row, len, stream),
        };
    }
    let _ = (isa, stream);
    for c in done..len {
        for m in 0..kb {
            let byte = *src.add(c * kb + m);
            for t in 0..8 {
                *dst.add((8 * m + t) * row + c) = (byte >> t) & 1;
            }
        }
    }
}

/// [`unpack_bits`] for 8, 16 or 32 rows, along up to 8192 columns at a time: each column's k/8 bytes
/// split into k/8 vectors (byte m of 16 columns), then the rows written one after another, row 8m + t
/// being bit t of vector m.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn unpack_bits_sse2<const KB: usize>(
    src: *const u8,
    dst: *mut u8,
    row: usize,
    len: usize,
    stream: bool,
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
    const SPAN: usize = 8192;
    let mut buf = [[_mm_setzero_si128(); SPAN / 16]; 4];
    let mut c = 0;
    while c + 16 <= len {
        let n = SPAN.min((len - c) / 16 * 16);
        #[allow(clippy::needless_range_loop)] // q indexes the inner arrays: a transposed write.
        for q in 0..n / 16 {
            let v = split(c + 16 * q);
            for (bm, vm) in buf.iter_mut().zip(v).take(KB) {
                bm[q] = vm;
            }
        }
        for (m, bm) in buf.iter().enumerate().take(KB) {
            for t in 0..8 {
                let out = dst.add((8 * m + t) * row + c);
                let shift = _mm_cvtsi32_si128(t as i32);
                for (q, &v) in bm.iter().enumerate().take(n / 16) {
                    put(
                        out.add(16 * q),
                        _mm_and_si128(_mm_srl_epi16(v, shift), one),
                        stream,
                    );
                }
            }
        }
        c += n;
    }
    c
}
