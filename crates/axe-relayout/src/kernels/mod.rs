//! The inner loops of a relayout: block copies, k-way (de)interleaves, small transposes and bit packing.
//!
//! Each kernel has a portable version (plain loops over fixed-size arrays, written for the compiler to
//! vectorise) and, on x86-64, SIMD versions (SSE2, which every x86-64 has, AVX2 and AVX-512 where the
//! processor reports them; bit packing also uses AVX-512's byte, VBMI and GFNI extensions where
//! present); on aarch64, transposes (of 1-, 2-, 4- and 8-byte elements) have NEON versions. The set is chosen once per
//! relayout by [`Isa::detect`]. With `stream`
//! set, whole aligned vectors are written with non-temporal stores, which skip reading the destination's
//! cache lines before overwriting them (as a large `memcpy` does); a worker calls [`fence`] when its
//! writes are done.
//!
//! One module per family: [`copy`](self::copy) (block copies, zero fills), `interleave` (k-way (de)interleaves),
//! `transpose` (choosing blocks or staged tiles) with `transpose_blocks` (register blocks per width and
//! instruction set), `transpose_carried` (tiles through a buffer for destination rows that are not whole
//! cache lines apart), `transpose_portable` (blocks through a buffer, one or several planes at once) and
//! `stage` (the per-thread buffers they go through), and `bits` (bit packing, with `bits_gfni` for
//! AVX-512 and `bits_portable`); the shared pieces (the instruction set, single elements, vector loads
//! and stores) live here.
//!
//! Every kernel is `unsafe`: the caller guarantees that every address it names lies inside its buffer,
//! and that source and destination do not overlap.

#![allow(unsafe_code)]

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

mod bits;
#[cfg(target_arch = "x86_64")]
mod bits_gfni;
mod bits_portable;
mod copy;
mod interleave;
#[cfg(target_arch = "aarch64")]
mod neon;
mod stage;
#[cfg(test)]
mod test_bytes;
mod transpose;
#[cfg(target_arch = "x86_64")]
mod transpose_blocks;
#[cfg(target_arch = "x86_64")]
mod transpose_carried;
mod transpose_portable;

pub use bits::{pack_bits, unpack_bits};
pub use copy::{copy, copy_grid, zero};
pub use interleave::{deinterleave, interleave};
use stage::Stage;
pub use transpose::{
    carried_tile, carries, staged, transpose, transpose_staged, transpose_tile, CARRIED_MIN_ROW,
    STAGED_GROUP, STAGED_TILE,
};
#[cfg(target_arch = "x86_64")]
use transpose_blocks::*;
#[cfg(target_arch = "x86_64")]
pub use transpose_carried::{transpose_carried, Carry};
use transpose_portable::*;
pub use transpose_portable::{portable_planes, transpose_planes_portable};

/// The instruction set the kernels use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    /// AVX-512 (512-bit vectors: row copies, and with AVX-512BW byte transposes and pair
    /// deinterleaves; bit packing through bit-matrix transposes where the processor also has
    /// AVX-512BW, VBMI and GFNI), with AVX2 and SSE2 where a kernel has no wider form or the narrower
    /// one measured faster (f32 transposes, pair interleaves).
    Avx512,
    /// AVX2 (256-bit vectors), with SSE2 where a kernel has no wider form.
    Avx2,
    /// SSE2 (128-bit vectors), part of every x86-64 processor.
    Sse2,
    /// NEON (128-bit vectors), part of every aarch64 processor: register transposes of 1-, 2-, 4- and
    /// 8-byte elements; the other kernels are the portable ones, which the compiler vectorises with
    /// NEON.
    Neon,
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
        [Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Neon, Isa::Portable]
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
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            _ => false,
        }
    }

    /// The name used in plans.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx512 => "AVX-512",
            Isa::Avx2 => "AVX2",
            Isa::Sse2 => "SSE2",
            Isa::Neon => "NEON",
            Isa::Portable => "portable",
        }
    }

    /// The set named `name` (as in plans, any case: `avx-512`/`avx512`, `avx2`, `sse2`, `neon`,
    /// `portable`).
    pub fn from_name(name: &str) -> Option<Isa> {
        let n = name.to_ascii_lowercase().replace('-', "");
        [Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Neon, Isa::Portable]
            .into_iter()
            .find(|i| i.name().to_ascii_lowercase().replace('-', "") == n)
    }

    #[cfg(target_arch = "x86_64")]
    fn simd(self) -> bool {
        matches!(self, Isa::Sse2 | Isa::Avx2 | Isa::Avx512)
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

/// Asks for the line `ahead` bytes past `src` on each of `rows` rows `pitch` bytes apart, into L2
/// (`prefetcht1`). Hints never fault, so the lines may lie past the buffers. Interleaves and transpose
/// blocks call it as they read their rows (see `FETCH_AHEAD` for where the hints go and why).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn fetch_ahead(src: *const u8, pitch: isize, rows: usize, ahead: usize) {
    for i in 0..rows {
        let row = src.wrapping_offset(i as isize * pitch);
        _mm_prefetch::<_MM_HINT_T1>(row.wrapping_add(ahead) as *const i8);
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn get(p: *const u8) -> __m128i {
    _mm_loadu_si128(p as *const __m128i)
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
