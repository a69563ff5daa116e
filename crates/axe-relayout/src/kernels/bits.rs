//! Bit packing: `pred` bytes to `E(1)` bit rows and back (SSE2/AVX2, and AVX-512 with VBMI and GFNI).

#![allow(unsafe_code)]

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

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
const UNPACK_SPAN: usize = 1024;

/// Whether the processor has what [`pack_bits_gfni`] and [`unpack_bits_gfni`] use beyond AVX-512F:
/// byte masks (AVX-512BW), byte permutes (AVX-512VBMI) and bit-matrix products (GFNI).
#[cfg(target_arch = "x86_64")]
pub(super) fn bit_matrices() -> bool {
    std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vbmi")
        && std::is_x86_feature_detected!("gfni")
}

/// Columns that [`pack_bits_gfni`] takes at a time ([`unpack_bits_gfni`] takes [`UNPACK_SPAN`]): their masks (one `u64` per
/// row and 64 columns) fill 32 KiB for 32 rows. A tile's rows laid end to end (8192 one-byte columns
/// each, as in the bench's pred) are then read in one sequential pass.
#[cfg(target_arch = "x86_64")]
pub(super) const BIT_SPAN: usize = 8192;

/// This thread's scratch for the masks of [`pack_bits_gfni`] and [`unpack_bits_gfni`]: 32 rows of
/// [`BIT_SPAN`] bits (32 KiB), kept rather than zeroed on the stack at every call (32 KiB of stores
/// for every 256 KiB read, a few per cent of the bench's pred packing). A kernel holds the only
/// reference into it while it runs: the kernels do not nest, and each fills the masks it reads.
#[cfg(target_arch = "x86_64")]
pub(super) fn bit_masks() -> *mut u64 {
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
pub(super) unsafe fn regroup_bytes(v: __m512i, reverse: bool) -> __m512i {
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
pub(super) unsafe fn regroup_chunks(rows: [__m512i; 8]) -> [__m512i; 8] {
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
pub(super) unsafe fn transpose_bits(v: __m512i) -> __m512i {
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
pub(super) unsafe fn pack_bits_gfni<const KB: usize>(
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
            let ahead = std::hint::black_box(gfni_fetch_ahead());
            for (q, m) in m.iter_mut().enumerate().take(n / 64) {
                let v = _mm512_loadu_si512(p.add(64 * q) as *const __m512i);
                _mm_prefetch::<_MM_HINT_T1>(p.wrapping_add(64 * q + ahead) as *const i8);
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
/// rows' masks; then each row is written along up to [`UNPACK_SPAN`] columns, a mask expanded to 64
/// bytes at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
pub(super) unsafe fn unpack_bits_gfni<const KB: usize>(
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
        let n = UNPACK_SPAN.min((len - c) / 64 * 64);
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
/// none); other processors take 2 KiB there (see [`gfni_fetch_ahead`]). Packing pred into `E(1)`
/// with AVX2 on one thread (Zen 5, four to six rounds each, in turn): 0.82–0.84× memcpy without, 0.88–0.89
/// with 4 KiB, 0.91–0.94 with 6 KiB, 0.87–0.93 with 8 KiB, 0.89 with 16 KiB; 2 KiB 0.87, 512 bytes 0.71;
/// with SSE2, 0.57 → 0.80. Before the load, 2 KiB was no better than none (0.81 against 0.80).
#[cfg(target_arch = "x86_64")]
const ROW_FETCH_AHEAD: usize = 6144;

/// How far ahead [`pack_bits_gfni`] asks for each row's lines: [`ROW_FETCH_AHEAD`] on a Zen 5 (AMD
/// family 1Ah), where it was measured, and 2 KiB on other processors. On a Zen 4 (family 19h) the
/// hints 6 KiB on slowed the packing: 17.6–20.4 GB/s against 21.0–25.7 with 2 KiB (the bench's pred,
/// 1 thread, five rounds each, in turn, three times), and hints 0, 512 bytes, 1 KiB or 2 KiB on ran
/// within the noise of each other, 4 KiB and beyond as slowly as 6 KiB.
#[cfg(target_arch = "x86_64")]
fn gfni_fetch_ahead() -> usize {
    static AHEAD: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *AHEAD.get_or_init(|| {
        let vendor = __cpuid(0);
        let amd = [vendor.ebx, vendor.edx, vendor.ecx]
            .map(u32::to_le_bytes)
            .concat()
            == b"AuthenticAMD";
        if amd && family(__cpuid(1).eax) == 0x1a {
            ROW_FETCH_AHEAD
        } else {
            2048
        }
    })
}

/// The processor family in `cpuid` leaf 1's `eax`: the base family, plus the extended family where
/// the base is 0xF (AMD's 19h for Zen 3 and Zen 4, 1Ah for Zen 5; Intel's 6).
#[cfg(target_arch = "x86_64")]
fn family(eax: u32) -> u32 {
    let base = (eax >> 8) & 0xf;
    if base == 0xf {
        base + ((eax >> 20) & 0xff)
    } else {
        base
    }
}

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

    /// `cpuid` leaf 1 signatures as processors report them, and this processor's family as Linux
    /// reads it.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn families_are_read_from_cpuid_signatures() {
        assert_eq!(family(0x00A2_0F10), 0x19); // Zen 3
        assert_eq!(family(0x00A1_0F11), 0x19); // Zen 4 (Genoa)
        assert_eq!(family(0x00B0_0F20), 0x1a); // Zen 5 (Turin)
        assert_eq!(family(0x0008_06F8), 6); // Intel Sapphire Rapids
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        if let Some(line) = info.lines().find(|l| l.starts_with("cpu family")) {
            let linux: u32 = line.rsplit(':').next().unwrap().trim().parse().unwrap();
            assert_eq!(family(__cpuid(1).eax), linux);
        }
    }

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
