//! The inner loops of a relayout: block copies, k-way (de)interleaves, small transposes and bit packing.
//!
//! Each kernel has a portable version and, on x86-64, SIMD versions (SSE2, which every x86-64 has, and
//! AVX2 where the processor reports it), chosen once per relayout by [`Isa::detect`]. With `stream`
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
    /// AVX-512 (512-bit vectors: 16×16 transposes in registers), with AVX2 and SSE2 where a kernel has
    /// no wider form.
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

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn copy_stream_avx(src: *const u8, dst: *mut u8, len: usize) {
    let head = dst.align_offset(32).min(len);
    std::ptr::copy_nonoverlapping(src, dst, head);
    let mut i = head;
    while i + 128 <= len {
        let a = _mm256_loadu_si256(src.add(i) as *const __m256i);
        let b = _mm256_loadu_si256(src.add(i + 32) as *const __m256i);
        let c = _mm256_loadu_si256(src.add(i + 64) as *const __m256i);
        let d = _mm256_loadu_si256(src.add(i + 96) as *const __m256i);
        _mm256_stream_si256(dst.add(i) as *mut __m256i, a);
        _mm256_stream_si256(dst.add(i + 32) as *mut __m256i, b);
        _mm256_stream_si256(dst.add(i + 64) as *mut __m256i, c);
        _mm256_stream_si256(dst.add(i + 96) as *mut __m256i, d);
        i += 128;
    }
    while i + 32 <= len {
        let a = _mm256_loadu_si256(src.add(i) as *const __m256i);
        _mm256_stream_si256(dst.add(i) as *mut __m256i, a);
        i += 32;
    }
    std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn copy_stream_sse2(src: *const u8, dst: *mut u8, len: usize) {
    let head = dst.align_offset(16).min(len);
    std::ptr::copy_nonoverlapping(src, dst, head);
    let mut i = head;
    while i + 64 <= len {
        let a = _mm_loadu_si128(src.add(i) as *const __m128i);
        let b = _mm_loadu_si128(src.add(i + 16) as *const __m128i);
        let c = _mm_loadu_si128(src.add(i + 32) as *const __m128i);
        let d = _mm_loadu_si128(src.add(i + 48) as *const __m128i);
        _mm_stream_si128(dst.add(i) as *mut __m128i, a);
        _mm_stream_si128(dst.add(i + 16) as *mut __m128i, b);
        _mm_stream_si128(dst.add(i + 32) as *mut __m128i, c);
        _mm_stream_si128(dst.add(i + 48) as *mut __m128i, d);
        i += 64;
    }
    while i + 16 <= len {
        let a = _mm_loadu_si128(src.add(i) as *const __m128i);
        _mm_stream_si128(dst.add(i) as *mut __m128i, a);
        i += 16;
    }
    std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i);
}

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
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if isa.simd() {
        let stream = stream && (dst as usize).is_multiple_of(16);
        done = match (w, k) {
            (2, 2) => interleave_2x16(src, row, dst, len, stream),
            (1, 4) => interleave_4x8(src, row, dst, len, stream),
            (1, 2) => interleave_2x8(src, row, dst, len, stream),
            _ => 0,
        };
    }
    let _ = (isa, stream);
    interleave_portable(
        src.add(done * w),
        row,
        dst.add(done * k * w),
        k,
        len - done,
        w,
    );
}

/// The portable [`interleave`].
unsafe fn interleave_portable(
    src: *const u8,
    row: usize,
    dst: *mut u8,
    k: usize,
    len: usize,
    w: usize,
) {
    macro_rules! go {
        ($t:ty, $k:literal) => {{
            let s = src as *const $t;
            let d = dst as *mut $t;
            let row = row / std::mem::size_of::<$t>();
            for c in 0..len {
                for j in 0..$k {
                    d.add(c * $k + j)
                        .write_unaligned(s.add(j * row + c).read_unaligned());
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
                    copy_element(src.add(j * row + c * w), dst.add((c * k + j) * w), w);
                }
            }
        }
    }
}

/// Two rows of 16-bit elements, 8 at a time. Returns the elements done.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn interleave_2x16(
    src: *const u8,
    row: usize,
    dst: *mut u8,
    len: usize,
    stream: bool,
) -> usize {
    let mut c = 0;
    while c + 8 <= len {
        let (a, b) = (get(src.add(2 * c)), get(src.add(row + 2 * c)));
        put(dst.add(4 * c), _mm_unpacklo_epi16(a, b), stream);
        put(dst.add(4 * c + 16), _mm_unpackhi_epi16(a, b), stream);
        c += 8;
    }
    c
}

/// Two rows of bytes, 16 at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn interleave_2x8(
    src: *const u8,
    row: usize,
    dst: *mut u8,
    len: usize,
    stream: bool,
) -> usize {
    let mut c = 0;
    while c + 16 <= len {
        let (a, b) = (get(src.add(c)), get(src.add(row + c)));
        put(dst.add(2 * c), _mm_unpacklo_epi8(a, b), stream);
        put(dst.add(2 * c + 16), _mm_unpackhi_epi8(a, b), stream);
        c += 16;
    }
    c
}

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
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if isa.simd() {
        let stream = stream && (dst as usize).is_multiple_of(16) && row.is_multiple_of(16);
        let wide = (dst as usize).is_multiple_of(32) && row.is_multiple_of(32);
        done = match (w, k) {
            (2, 2) if isa.avx2() && (wide || !stream) => {
                deinterleave_2x16_avx2(src, dst, row, len, stream)
            }
            (2, 2) => deinterleave_2x16(src, dst, row, len, stream),
            (1, 4) => deinterleave_4x8(src, dst, row, len, stream),
            _ => 0,
        };
    }
    let _ = (isa, stream);
    deinterleave_portable(
        src.add(done * k * w),
        dst.add(done * w),
        row,
        k,
        len - done,
        w,
    );
}

/// The portable [`deinterleave`].
unsafe fn deinterleave_portable(
    src: *const u8,
    dst: *mut u8,
    row: usize,
    k: usize,
    len: usize,
    w: usize,
) {
    macro_rules! go {
        ($t:ty, $k:literal) => {{
            let s = src as *const $t;
            let d = dst as *mut $t;
            let row = row / std::mem::size_of::<$t>();
            for c in 0..len {
                for j in 0..$k {
                    d.add(j * row + c)
                        .write_unaligned(s.add(c * $k + j).read_unaligned());
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
                    copy_element(src.add((c * k + j) * w), dst.add(j * row + c * w), w);
                }
            }
        }
    }
}

/// Pairs of 16-bit elements into two rows, 8 pairs at a time: the low halves of the 32-bit pairs,
/// sign-extended so that signed saturation packs them back unchanged, and the high halves.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn deinterleave_2x16(
    src: *const u8,
    dst: *mut u8,
    row: usize,
    len: usize,
    stream: bool,
) -> usize {
    // One row at a time, so that each row's stores fill whole lines in order.
    let n = len / 8 * 8;
    let mut c = 0;
    while c < n {
        let (x0, x1) = (get(src.add(4 * c)), get(src.add(4 * c + 16)));
        let lo = |x| _mm_srai_epi32(_mm_slli_epi32(x, 16), 16);
        put(dst.add(2 * c), _mm_packs_epi32(lo(x0), lo(x1)), stream);
        c += 8;
    }
    c = 0;
    while c < n {
        let (x0, x1) = (get(src.add(4 * c)), get(src.add(4 * c + 16)));
        put(
            dst.add(row + 2 * c),
            _mm_packs_epi32(_mm_srai_epi32(x0, 16), _mm_srai_epi32(x1, 16)),
            stream,
        );
        c += 8;
    }
    n
}

/// [`deinterleave_2x16`] 16 pairs at a time (the in-lane pack's quarters put back in order).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn deinterleave_2x16_avx2(
    src: *const u8,
    dst: *mut u8,
    row: usize,
    len: usize,
    stream: bool,
) -> usize {
    let n = len / 16 * 16;
    for half in 0..2 {
        let out = dst.add(half * row);
        let mut c = 0;
        while c < n {
            let x0 = _mm256_loadu_si256(src.add(4 * c) as *const __m256i);
            let x1 = _mm256_loadu_si256(src.add(4 * c + 32) as *const __m256i);
            let (y0, y1) = if half == 0 {
                (
                    _mm256_srai_epi32(_mm256_slli_epi32(x0, 16), 16),
                    _mm256_srai_epi32(_mm256_slli_epi32(x1, 16), 16),
                )
            } else {
                (_mm256_srai_epi32(x0, 16), _mm256_srai_epi32(x1, 16))
            };
            let v = _mm256_permute4x64_epi64(_mm256_packs_epi32(y0, y1), 0xd8);
            let p = out.add(2 * c) as *mut __m256i;
            if stream {
                _mm256_stream_si256(p, v);
            } else {
                _mm256_storeu_si256(p, v);
            }
            c += 16;
        }
    }
    n
}

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
/// `x·s[2] + y·s[3]` (in elements of `w` bytes). With 4-byte elements read contiguously along y and
/// written contiguously along x (a transpose), 8×8 (AVX) or 4×4 (SSE2) blocks are transposed in
/// registers; everything else goes element by element, the inner loop along x.
///
/// # Safety
/// Every addressed element must lie inside its buffer.
pub unsafe fn transpose(
    isa: Isa,
    stream: bool,
    src: *const u8,
    dst: *mut u8,
    s: [i64; 4],
    (na, nb, w): (usize, usize, usize),
) {
    #[cfg(target_arch = "x86_64")]
    if w == 4 && s[1] == 1 && s[2] == 1 && isa.simd() {
        transpose_blocks(isa, stream, src, dst, s, (na, nb));
        return;
    }
    let _ = (isa, stream);
    transpose_portable(src, dst, s, (na, nb, w));
}

/// The tile a transpose is cut into, for source rows `pitch` bytes apart: indices along the
/// destination's contiguous dimension (source rows read), and along the source's (destination rows
/// written). A tile holds 8192 elements; its source rows span at most about 2 MiB (rows far apart
/// compete for the same memory banks), and there are 16 to 64 of them. (Measured on the bench's
/// transposes: 64×128 for rows 32 KiB apart, 16×512 for rows 256 KiB apart.)
pub fn transpose_tile(pitch: usize) -> (usize, usize) {
    let rows = ((2 << 20) / pitch.max(1)).clamp(16, 64) / 16 * 16;
    (rows, 8192 / rows)
}

/// [`transpose`] of 4-byte elements read contiguously along y and written contiguously along x, in
/// register blocks, the edges element by element.
#[cfg(target_arch = "x86_64")]
unsafe fn transpose_blocks(
    isa: Isa,
    stream: bool,
    src: *const u8,
    dst: *mut u8,
    s: [i64; 4],
    (na, nb): (usize, usize),
) {
    let (b, fast): (usize, Block) = match isa {
        Isa::Avx512 => (16, transpose_16x16_f32),
        Isa::Avx2 => (8, transpose_8x8_f32),
        _ => (4, transpose_4x4_f32),
    };
    let aligned = (dst as usize).is_multiple_of(4 * b) && (s[3] * 4) % (4 * b as i64) == 0;
    let stream = stream && aligned;
    let (fa, fb) = (na / b * b, nb / b * b);
    for y in (0..fb).step_by(b) {
        for x in (0..fa).step_by(b) {
            fast(
                src.offset((x as i64 * s[0] + y as i64) as isize * 4),
                dst.offset((x as i64 + y as i64 * s[3]) as isize * 4),
                s[0] as isize * 4,
                s[3] as isize * 4,
                stream,
            );
        }
    }
    // The edges: x past the last whole block (every y), then y past it (x inside the blocks).
    let edge = |x0: usize, x1: usize, y0: usize, y1: usize| {
        transpose_portable(
            src.offset((x0 as i64 * s[0] + y0 as i64) as isize * 4),
            dst.offset((x0 as i64 + y0 as i64 * s[3]) as isize * 4),
            s,
            (x1 - x0, y1 - y0, 4),
        )
    };
    edge(fa, na, 0, nb);
    edge(0, fa, fb, nb);
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

/// An 8×8 block of 4-byte elements: source rows `sr` bytes apart, destination rows `dr` bytes apart.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose_8x8_f32(src: *const u8, dst: *mut u8, sr: isize, dr: isize, stream: bool) {
    // (A macro, not a closure: closures do not inherit the function's target features.)
    macro_rules! r {
        ($i:literal) => {
            _mm256_loadu_ps(src.offset($i * sr) as *const f32)
        };
    }
    let (r0, r1, r2, r3) = (r!(0), r!(1), r!(2), r!(3));
    let (r4, r5, r6, r7) = (r!(4), r!(5), r!(6), r!(7));
    let (t0, t1) = (_mm256_unpacklo_ps(r0, r1), _mm256_unpackhi_ps(r0, r1));
    let (t2, t3) = (_mm256_unpacklo_ps(r2, r3), _mm256_unpackhi_ps(r2, r3));
    let (t4, t5) = (_mm256_unpacklo_ps(r4, r5), _mm256_unpackhi_ps(r4, r5));
    let (t6, t7) = (_mm256_unpacklo_ps(r6, r7), _mm256_unpackhi_ps(r6, r7));
    let (u0, u1) = (
        _mm256_shuffle_ps(t0, t2, 0x44),
        _mm256_shuffle_ps(t0, t2, 0xee),
    );
    let (u2, u3) = (
        _mm256_shuffle_ps(t1, t3, 0x44),
        _mm256_shuffle_ps(t1, t3, 0xee),
    );
    let (u4, u5) = (
        _mm256_shuffle_ps(t4, t6, 0x44),
        _mm256_shuffle_ps(t4, t6, 0xee),
    );
    let (u6, u7) = (
        _mm256_shuffle_ps(t5, t7, 0x44),
        _mm256_shuffle_ps(t5, t7, 0xee),
    );
    let cols = [
        _mm256_permute2f128_ps(u0, u4, 0x20),
        _mm256_permute2f128_ps(u1, u5, 0x20),
        _mm256_permute2f128_ps(u2, u6, 0x20),
        _mm256_permute2f128_ps(u3, u7, 0x20),
        _mm256_permute2f128_ps(u0, u4, 0x31),
        _mm256_permute2f128_ps(u1, u5, 0x31),
        _mm256_permute2f128_ps(u2, u6, 0x31),
        _mm256_permute2f128_ps(u3, u7, 0x31),
    ];
    for (i, c) in cols.into_iter().enumerate() {
        let p = dst.offset(i as isize * dr) as *mut f32;
        if stream {
            _mm256_stream_ps(p, c);
        } else {
            _mm256_storeu_ps(p, c);
        }
    }
}

/// A 16×16 block of 4-byte elements, as [`transpose_8x8_f32`]: whole cache lines in, whole lines out.
/// Pairs of rows interleaved, then pairs of pairs (each 128-bit lane now holds one column of four
/// rows), then lanes gathered across four-row groups in two steps.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn transpose_16x16_f32(src: *const u8, dst: *mut u8, sr: isize, dr: isize, stream: bool) {
    let r: [__m512; 16] =
        std::array::from_fn(|i| _mm512_loadu_ps(src.offset(i as isize * sr) as *const f32));
    let mut u = [_mm512_setzero_ps(); 16];
    for g in 0..4 {
        let (a, b, c, d) = (r[4 * g], r[4 * g + 1], r[4 * g + 2], r[4 * g + 3]);
        let (t0, t1) = (_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
        let (t2, t3) = (_mm512_unpacklo_ps(c, d), _mm512_unpackhi_ps(c, d));
        u[4 * g] = _mm512_shuffle_ps(t0, t2, 0x44);
        u[4 * g + 1] = _mm512_shuffle_ps(t0, t2, 0xee);
        u[4 * g + 2] = _mm512_shuffle_ps(t1, t3, 0x44);
        u[4 * g + 3] = _mm512_shuffle_ps(t1, t3, 0xee);
    }
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
        for (c, x) in cols {
            let p = dst.offset(c as isize * dr) as *mut f32;
            if stream {
                _mm512_stream_ps(p, x);
            } else {
                _mm512_storeu_ps(p, x);
            }
        }
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
    for (i, c) in cols.into_iter().enumerate() {
        let p = dst.offset(i as isize * dr) as *mut f32;
        if stream {
            _mm_stream_ps(p, c);
        } else {
            _mm_storeu_ps(p, c);
        }
    }
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
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if isa.simd() && matches!(kb, 1 | 2 | 4) {
        let stream = stream && (dst as usize).is_multiple_of(16);
        done = match kb {
            1 => pack_bits_sse2::<1>(src, row, dst, len, stream),
            2 => pack_bits_sse2::<2>(src, row, dst, len, stream),
            _ => pack_bits_sse2::<4>(src, row, dst, len, stream),
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

/// [`pack_bits`] for 8, 16 or 32 rows, 16 columns at a time: eight rows' low bits gathered into one
/// byte per column (Horner: double and add), then the k/8 bytes of a column interleaved.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn pack_bits_sse2<const KB: usize>(
    src: *const u8,
    row: usize,
    dst: *mut u8,
    len: usize,
    stream: bool,
) -> usize {
    let one = _mm_set1_epi8(1);
    // Eight low bits gathered into one byte per column (Horner: double and add).
    let byte = |p: *const u8| {
        let rows: [__m128i; 8] = std::array::from_fn(|t| _mm_and_si128(get(p.add(t * row)), one));
        let mut acc = rows[7];
        for t in (0..7).rev() {
            acc = _mm_add_epi8(_mm_add_epi8(acc, acc), rows[t]);
        }
        acc
    };
    let out = |at: usize, v: [__m128i; 4]| match KB {
        1 => put(dst.add(at), v[0], stream),
        2 => {
            put(dst.add(2 * at), _mm_unpacklo_epi8(v[0], v[1]), stream);
            put(dst.add(2 * at + 16), _mm_unpackhi_epi8(v[0], v[1]), stream);
        }
        _ => put4(dst.add(4 * at), v, stream),
    };
    // Eight rows at a time along up to SPAN columns into a buffer, then the buffer interleaved into
    // the destination: eight read streams at a time, each long and sequential, rather than 8·KB short
    // ones (rows a power of two apart also share cache sets, and 32 of them evict each other).
    const SPAN: usize = 4096;
    let mut buf = [[_mm_setzero_si128(); SPAN / 16]; 4];
    let mut c = 0;
    while c + 16 <= len {
        let n = SPAN.min((len - c) / 16 * 16);
        for (m, bm) in buf.iter_mut().enumerate().take(KB) {
            for (q, bq) in bm.iter_mut().enumerate().take(n / 16) {
                *bq = byte(src.add(8 * m * row + c + 16 * q));
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
