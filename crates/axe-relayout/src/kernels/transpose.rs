//! Transposes: choosing between register blocks and staged tiles, row blocks outermost, lines asked for
//! ahead of use, and the portable fallback.

#![allow(unsafe_code)]

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::*;

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
    #[cfg(target_arch = "aarch64")]
    if matches!(w, 1 | 2 | 4 | 8) && s[1] == 1 && s[2] == 1 && isa == Isa::Neon {
        return super::neon::transpose(src, dst, s, (na, nb, w));
    }
    let _ = (isa, stream, fetch);
    transpose_portable(src, dst, s, (na, nb, w));
}

/// The tile a transpose is cut into, for source rows `pitch` bytes apart: indices along the
/// destination's contiguous dimension (source rows read), and along the source's (destination rows
/// written). A tile holds 8192 elements in 32 or 64 rows: 64 while they span at most 2 MiB, else 32.
/// (Measured on the bench's transposes, with [`FETCH_AHEAD`] and row blocks outermost: 64×128 for rows
/// 32 KiB apart, where 64×256 was no faster and 32×256 slower (0.79–0.80× memcpy against 0.90×, AVX2
/// blocks, 1 thread); for rows 256 KiB apart, `f32[256]³` reversed, 32 rows beat 16, 48, 64 and 128
/// with AVX2 blocks (0.82–0.86× memcpy against 0.57–0.60×, 0.66–0.69× and 0.67–0.73× on 1 thread;
/// 0.97–1.01× against 0.88–0.90× for 128 rows on 2 threads), as with the AVX-512 f32 block since
/// removed (0.80× against 0.67× for 64 rows).) Both edges are whole register blocks of every width,
/// so that no tile leaves columns to the element-by-element edge: a rule that gave 48 rows (and 170
/// columns) to rows 32 to 43 KiB apart ran `f32[8208,8208]` to `f32[8320,8320]` transposed at
/// 0.68–0.74× memcpy, against 0.95–1.19× in 64-row tiles (Zen 4, 1 thread). Portable kernels take
/// [`portable_tile`] instead.
pub fn transpose_tile(pitch: usize, isa: Isa) -> (usize, usize) {
    if isa == Isa::Portable {
        return portable_tile(pitch);
    }
    let rows = if pitch.saturating_mul(64) <= 2 << 20 {
        64
    } else {
        32
    };
    (rows, 8192 / rows)
}

/// How far ahead along each source row (bytes) a direct transpose asks for the line it will read next
/// into L2 (`prefetcht1`). A tile reads its 32 or 64 rows a line at a time, more streams than the
/// hardware prefetcher follows, so without it most reads wait for memory (`f32[8192,8192]`: reads alone
/// ran at 15.5 GB/s on one thread, 21 with the hint; into L1, `prefetcht0`, was slower than none).
/// With it, direct tiles also beat staging for rows far apart (`f32[256]³` reversed on two threads:
/// 1.14× memcpy against 0.99×; f64: 0.96× against 0.74×). The staged path reads its rows in long
/// bursts, which the hardware follows, and does without.
///
/// The hints of a block's rows are asked for one a loop turn, each after a load of this distance
/// (through `black_box`), not in the burst the compiler makes of the loop when it knows the distance
/// (eight hints back to back). Measured on a Zen 5, 1 thread, each build in turn: with the burst,
/// `f32[256]³` reversed ran at 20–21 GB/s (0.50–0.52× memcpy) with AVX2 blocks, 26 GB/s with the
/// AVX-512 f32 block (since removed) and 21.5 with SSE2; one a turn, 33–35 GB/s (0.80–0.85×), 35 and
/// 31; the 2-D transpose 0.95 → 1.00× (AVX2), 0.82 → 0.94× (AVX-512), 0.75 → 0.87× (SSE2). With the
/// distance in a register the compiler made the burst again, and it was as slow.
///
/// Where the hints go matters as much. Before a block's loads they are queued ahead of its own reads.
/// The AVX f32 block (under AVX2 and AVX-512) asks for them once its rows are loaded, before its
/// stores, in one go
/// (`fetch_ahead`): `f32[256]³` reversed went 0.80–0.83× → 0.90–0.93× memcpy on one thread, the 2-D
/// transpose 0.93–0.95× → 0.99–1.01× (0.90 → 0.97× and 1.00 → 1.02× on two threads). The other
/// blocks keep the hints before them, spaced as above. After the loads, the AVX-512 f32 block (since
/// removed) ran the 2-D transpose at 0.84× against 0.94×, and the SSE2 one at 0.59× against 0.78×.
/// After the stores, the SSE2 block ran `f32[256]³` at 0.86× against 0.61×, but the 2-D transpose at
/// 0.67× against 0.83×.
/// A C model of the AVX2 kernel gave the same order: 0.86–0.93× with the hints after the loads,
/// 0.65–0.69× after the stores, 0.57× before the loads.
#[cfg(target_arch = "x86_64")]
pub const FETCH_AHEAD: usize = 256;

/// The tile of [`transpose_staged`]: 64 source rows (64 bytes of each destination row, keeping the
/// buffer to 256 KiB) by 4 KiB of each source row, so that each row is read in long bursts.
pub const STAGED_TILE: (usize, usize) = (64, 4096);

/// The tile of a carried transpose ([`transpose_carried`](super::transpose_carried)) of `w`-byte
/// elements: source rows (2 KiB of each destination row, 512 bytes for bytes) by 64 destination rows. (Measured on a Zen 4, 1 thread, on transposes of
/// `f32[8200,8200]`, `bf16[8190,8190]`, `s8[8190,8190]` and `f64[4100,4100]`: 64 destination rows beat
/// 128 and 32; for f32 512 source rows beat 256 and 1024, for f64 256 beat 128 and 512; bytes ran
/// best at 512 and bf16 at 1024.)
pub fn carried_tile(w: usize) -> (usize, usize) {
    let rows = if w == 1 { 512 } else { 2048 / w.max(1) };
    (rows, 64)
}

/// The shortest destination rows (bytes) a transpose carries
/// ([`transpose_carried`](super::transpose_carried)): shorter rows, such as those of `u8[70,3,400000]` reversed (70 bytes), go as they did, the bytes
/// through [`transpose_staged`] (0.18–0.19× memcpy, 1 thread, Zen 4, against 0.13–0.14× carried;
/// `u8[300,70,4000]` reversed, rows of 300 bytes: 0.16–0.19× staged, 0.23–0.26× carried).
pub const CARRIED_MIN_ROW: usize = 256;

/// Whether transposes under `isa` into rows that are not whole cache lines apart are better carried
/// ([`transpose_carried`](super::transpose_carried)): where streaming has non-temporal stores
/// (x86-64's SIMD kernels).
pub fn carries(isa: Isa) -> bool {
    #[cfg(target_arch = "x86_64")]
    return isa.simd();
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = isa;
        false
    }
}

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
pub(super) unsafe fn copy_rows_avx512(
    src: *const u8,
    sp: usize,
    dst: *mut u8,
    dp: isize,
    n: usize,
) {
    for y in 0..n {
        let (from, to) = (src.add(y * sp), dst.offset(y as isize * dp));
        for i in (0..sp).step_by(64) {
            let v = _mm512_loadu_si512(from.add(i) as *const __m512i);
            _mm512_stream_si512(to.add(i) as *mut __m512i, v);
        }
    }
}

/// Runs `f` on this thread's staging buffer of at least `len` bytes (a [`Stage`]). The portable
/// transposes keep a buffer of their own: [`transpose_staged`] transposes into this one with the block
/// kernels, which under portable kernels go through theirs while this one is lent.
pub(super) fn with_stage(len: usize, f: impl FnOnce(*mut u8)) {
    use std::cell::RefCell;
    thread_local! {
        static STAGE: RefCell<Stage> = const { RefCell::new(Stage::new()) };
    }
    STAGE.with(|stage| f(stage.borrow_mut().get(len)))
}

/// The register block for `w`-byte elements under `isa`: `ba` source rows by `bb` columns, `v` bytes
/// per vector stored, the kernel, and whether it asks for the lines ahead itself (see
/// [`transpose_blocks`]).
#[cfg(target_arch = "x86_64")]
pub(super) fn block_kernel(w: usize, isa: Isa) -> (usize, usize, usize, Block, bool) {
    match (w, isa) {
        (4, i) if i.avx2() => (16, 16, 32, transpose_16x16_f32_avx, true),
        (4, _) => (16, 16, 16, transpose_16x16_f32_sse2, false),
        (8, i) if i.avx2() => (8, 8, 32, transpose_8x8_f64, false),
        (8, _) => (2, 2, 16, transpose_2x2_f64, false),
        (2, i) if i.avx2() => (32, 16, 32, transpose_32x16_u16, false),
        (2, _) => (8, 8, 16, transpose_8x8_u16, false),
        (_, Isa::Avx512) if std::is_x86_feature_detected!("avx512bw") => {
            (16, 64, 16, transpose_16x64_u8, false)
        }
        _ => (16, 16, 16, transpose_16x16_u8, false),
    }
}

/// [`transpose`] of 1-, 2-, 4- or 8-byte elements read contiguously along y and written contiguously
/// along x, in register blocks (`b`×`b`, `b` elements a vector), the edges through padded blocks.
#[cfg(target_arch = "x86_64")]
pub(super) unsafe fn transpose_blocks(
    isa: Isa,
    (stream, fetch): (bool, bool),
    src: *const u8,
    dst: *mut u8,
    s: [i64; 4],
    (na, nb, w): (usize, usize, usize),
) {
    // Blocks of `ba` source rows by `bb` columns; `v` bytes per vector stored; `own`: the block asks
    // for the lines ahead itself, once its rows are loaded (the AVX f32 block), where for the others
    // the hints go just before the block (see FETCH_AHEAD). f32 takes the AVX block under AVX-512
    // too: an AVX-512 16×16 block, its hints before it, ran the 2-D transpose at 0.93–0.98× memcpy
    // and `f32[256]³` reversed at 0.81–0.83× on one thread (Zen 5), against 1.05–1.06× and 0.92–0.95×
    // with the AVX block in turn (on two threads 0.94 → 1.00× and 0.85 → 0.92×).
    let (ba, bb, v, fast, own) = block_kernel(w, isa);
    let wi = w as i64;
    let aligned = (dst as usize).is_multiple_of(v) && (s[3] * wi) % v as i64 == 0;
    let stream = stream && aligned;
    let (fa, fb) = (na / ba * ba, nb / bb * bb);
    for y in (0..fb).step_by(bb) {
        // Once per cache line of each row: the line FETCH_AHEAD bytes on, into L2.
        let fetch = fetch && (y * w).is_multiple_of(64);
        let ahead = if fetch && own {
            std::hint::black_box(FETCH_AHEAD)
        } else {
            0
        };
        for x in (0..fa).step_by(ba) {
            let from = src.offset(((x as i64 * s[0] + y as i64) * wi) as isize);
            if fetch && !own {
                for i in 0..ba {
                    let at = from.wrapping_offset(i as isize * s[0] as isize * wi as isize);
                    // One hint a turn, after a load of the distance: see FETCH_AHEAD.
                    let ahead = std::hint::black_box(FETCH_AHEAD);
                    _mm_prefetch::<_MM_HINT_T1>(at.wrapping_add(ahead) as *const i8);
                }
            }
            fast(
                from,
                dst.offset(((x as i64 + y as i64 * s[3]) * wi) as isize),
                (s[0] * wi) as isize,
                (s[3] * wi) as isize,
                stream,
                ahead,
            );
        }
    }
    // The edges: x past the last whole block (every y), then y past it (every x), each a block at a
    // time through a padded one (see `edge_block`).
    let edge = |x0: usize, x1: usize, y0: usize, y1: usize| {
        edge_block(
            (ba, bb, w, fast),
            src.offset(((x0 as i64 * s[0] + y0 as i64) * wi) as isize),
            (s[0] * wi) as isize,
            dst.offset(((x0 as i64 + y0 as i64 * s[3]) * wi) as isize),
            (s[3] * wi) as isize,
            (x1 - x0, y1 - y0),
        )
    };
    if fa < na {
        for y in (0..nb).step_by(bb) {
            edge(fa, na, y, (y + bb).min(nb));
        }
    }
    if fb < nb {
        for x in (0..fa).step_by(ba) {
            edge(x, x + ba, fb, nb);
        }
    }
}

/// A block of the edge of a transpose, `rows` source rows (`sr` bytes apart) by `cols` columns, at
/// most `ba` by `bb`, through the register block `fast` of `w`-byte elements: each source row's part
/// copied into a block padded to the whole size, transposed there, and each destination row's part
/// (`dr` bytes apart) copied out, with ordinary stores. Each row's part is read once, in one go, where
/// element by element the edge of a tile whose rows share cache sets read a line again for each
/// column (one thread, Zen 4, builds in turn: `f32[256,256,264]` reversed, 8 edge columns a plane,
/// 14.7 → 15.3 GB/s; `u8[300,70,4000]` reversed 9.2–9.5 → 10.5–10.6).
#[cfg(target_arch = "x86_64")]
unsafe fn edge_block(
    (ba, bb, w, fast): (usize, usize, usize, Block),
    src: *const u8,
    sr: isize,
    dst: *mut u8,
    dr: isize,
    (rows, cols): (usize, usize),
) {
    /// A register block's bytes, on one line boundary (the largest block: 1 KiB).
    #[repr(align(64))]
    struct Padded([u8; 1024]);
    let (mut a, mut b) = (Padded([0; 1024]), Padded([0; 1024]));
    let (ap, bp) = (bb * w, ba * w);
    debug_assert!(ba * ap <= 1024 && rows <= ba && cols <= bb);
    for i in 0..rows {
        std::ptr::copy_nonoverlapping(
            src.offset(i as isize * sr),
            a.0.as_mut_ptr().add(i * ap),
            cols * w,
        );
    }
    fast(
        a.0.as_ptr(),
        b.0.as_mut_ptr(),
        ap as isize,
        bp as isize,
        false,
        0,
    );
    for j in 0..cols {
        std::ptr::copy_nonoverlapping(
            b.0.as_ptr().add(j * bp),
            dst.offset(j as isize * dr),
            rows * w,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Transposes `na`×`nb` elements of `w` bytes (source rows `nb + pad_s` apart, destination rows
    /// `na + pad_d` apart, `skew` bytes into the destination) under every instruction set, cached and
    /// non-temporal, and checks the result against the law element by element: element (x, y) read at
    /// `x·sr + y`, written at `x + y·dr`, and nothing else written.
    fn check_transpose(
        w: usize,
        (na, nb): (usize, usize),
        (pad_s, pad_d, skew): (usize, usize, usize),
        seed: u64,
    ) -> Result<(), String> {
        let (sr, dr) = (nb + pad_s, na + pad_d);
        let src = super::super::test_bytes::noise(na * sr * w, seed);
        let mut want = vec![0x5au8; nb * dr * w + skew];
        for a in 0..na {
            for b in 0..nb {
                let (from, to) = ((a * sr + b) * w, skew + (a + b * dr) * w);
                want[to..to + w].copy_from_slice(&src[from..from + w]);
            }
        }
        let s = [sr as i64, 1, 1, dr as i64];
        for isa in Isa::available() {
            for stream in [false, true] {
                let mut dst = vec![0x5au8; nb * dr * w + skew];
                // SAFETY: na rows of `sr` elements in the source, nb rows of `dr` past `skew` in
                // the destination.
                unsafe {
                    transpose(
                        isa,
                        (stream, true),
                        src.as_ptr(),
                        dst.as_mut_ptr().add(skew),
                        s,
                        (na, nb, w),
                    )
                };
                fence(isa, stream);
                if dst != want {
                    return Err(format!(
                        "{} (stream {}): {}×{} of {} bytes",
                        isa.name(),
                        stream,
                        na,
                        nb,
                        w
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every row pitch gets tiles of whole register blocks of every width (16 or 32 rows by 8, 16 or
    /// 64 columns), so that only a transpose's own edges go element by element.
    #[test]
    fn tiles_are_whole_blocks() {
        for pitch in (0..(1usize << 20)).step_by(4).chain([usize::MAX]) {
            for isa in Isa::available().into_iter().filter(|&i| i != Isa::Portable) {
                let (rows, cols) = transpose_tile(pitch, isa);
                assert!(
                    matches!(rows, 32 | 64) && cols.is_multiple_of(64),
                    "{pitch}: {rows}×{cols}"
                );
            }
        }
    }

    /// Tiles whose portable buffer would pass [`PORTABLE_STAGE_MAX`] go through it in parts of fewer
    /// destination rows (the last part shorter), against the law: 8-, 4- and 2-byte elements.
    #[test]
    fn portable_transposes_in_parts_match_the_law() {
        for (w, na, nb) in [(8usize, 600usize, 600usize), (4, 1000, 600), (2, 4100, 300)] {
            let size = w * na.next_multiple_of(16) * nb;
            assert!(
                size > PORTABLE_STAGE_MAX,
                "{w}: {na}×{nb} fits the buffer at once"
            );
            check_transpose(w, (na, nb), (3, 5, 1), 7).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    /// A portable tile whose buffer passes [`HUGE_STAGE`](super::super::stage::HUGE_STAGE) (4096
    /// source rows of f32 by 128 columns and a few past them: 128 buffer rows of 16 KiB and a line),
    /// the buffer the bench's transposes take, against the law.
    #[test]
    fn transposes_through_a_huge_stage_match_the_law() {
        let (na, nb) = (4096, 130);
        let stage = 4 * (na + 16) * (nb / 16 * 16);
        assert!(stage >= super::super::stage::HUGE_STAGE, "{stage} bytes");
        check_transpose(4, (na, nb), (3, 5, 1), 9).unwrap_or_else(|e| panic!("{e}"));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

        /// A transposed tile, under every instruction set, cached and non-temporal, against the law
        /// element by element ([`check_transpose`]) for 1- to 8-byte elements, rows padded past the
        /// tile, into a destination that need not be aligned. Tiles range from thinner than a block to
        /// larger than the portable buffer takes at once (`u64` 600×600, which goes in parts).
        #[test]
        fn transposes_match_the_law_under_every_isa(
            w in prop::sample::select(vec![1usize, 2, 4, 8]),
            (na, nb) in (0usize..600, 0usize..600),
            (pad_s, pad_d, skew) in (0usize..20, 0usize..20, 0usize..8),
            seed in any::<u64>(),
        ) {
            let checked = check_transpose(w, (na, nb), (pad_s, pad_d, skew), seed);
            prop_assert!(checked.is_ok(), "{}", checked.err().unwrap_or_default());
        }
    }
}
