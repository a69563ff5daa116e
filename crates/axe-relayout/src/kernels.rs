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
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
            Isa::Sse2
        }
        #[cfg(not(target_arch = "x86_64"))]
        Isa::Portable
    }

    /// The name used in plans.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx2 => "AVX2",
            Isa::Sse2 => "SSE2",
            Isa::Portable => "portable",
        }
    }

    #[cfg(target_arch = "x86_64")]
    fn simd(self) -> bool {
        self != Isa::Portable
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
            Isa::Avx2 if (dst as usize) % 32 == 0 => return copy_stream_avx(src, dst, len),
            Isa::Avx2 | Isa::Sse2 if (dst as usize) % 16 == 0 => {
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
