//! Bit packing with AVX-512 (VBMI and GFNI): 64 rows' bits at a time as 8×8 bit matrices, transposed
//! by a bit-matrix product ([`pack_bits_gfni`], [`unpack_bits_gfni`]); [`super::bits`] chooses them.
//! How far ahead the packing asks for its rows' lines depends on the processor family, read from
//! `cpuid` ([`gfni_fetch_ahead`]).

#![allow(unsafe_code)]

use std::arch::x86_64::*;

use super::bits::{ROW_FETCH_AHEAD, UNPACK_SPAN};
use super::*;

/// Whether the processor has what [`pack_bits_gfni`] and [`unpack_bits_gfni`] use beyond AVX-512F:
/// byte masks (AVX-512BW), byte permutes (AVX-512VBMI) and bit-matrix products (GFNI).
pub(super) fn bit_matrices() -> bool {
    std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vbmi")
        && std::is_x86_feature_detected!("gfni")
}

/// Columns that [`pack_bits_gfni`] takes at a time ([`unpack_bits_gfni`] takes [`UNPACK_SPAN`]): their masks (one `u64` per
/// row and 64 columns) fill 32 KiB for 32 rows. A tile's rows laid end to end (8192 one-byte columns
/// each, as in the bench's pred) are then read in one sequential pass.
pub(super) const BIT_SPAN: usize = 8192;

/// This thread's scratch for the masks of [`pack_bits_gfni`] and [`unpack_bits_gfni`]: 32 rows of
/// [`BIT_SPAN`] bits (32 KiB), kept rather than zeroed on the stack at every call (32 KiB of stores
/// for every 256 KiB read, a few per cent of the bench's pred packing). A kernel holds the only
/// reference into it while it runs: the kernels do not nest, and each fills the masks it reads.
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

/// How far ahead [`pack_bits_gfni`] asks for each row's lines: [`ROW_FETCH_AHEAD`] on a Zen 5 (AMD
/// family 1Ah), where it was measured, and 2 KiB on other processors. On a Zen 4 (family 19h) the
/// hints 6 KiB on slowed the packing: 17.6–20.4 GB/s against 21.0–25.7 with 2 KiB (the bench's pred,
/// 1 thread, five rounds each, in turn, three times), and hints 0, 512 bytes, 1 KiB or 2 KiB on ran
/// within the noise of each other, 4 KiB and beyond as slowly as 6 KiB.
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
fn family(eax: u32) -> u32 {
    let base = (eax >> 8) & 0xf;
    if base == 0xf {
        base + ((eax >> 20) & 0xff)
    } else {
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cpuid` leaf 1 signatures as processors report them, and this processor's family as Linux
    /// reads it.
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
}
