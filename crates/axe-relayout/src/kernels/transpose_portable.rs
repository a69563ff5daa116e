//! The portable transposes: blocks through fixed-size arrays into a per-thread buffer whose rows are
//! copied out whole, for every target (see [`transpose_portable`] and [`transpose_planes_portable`]).

#![allow(unsafe_code)]

use super::*;

/// The portable [`transpose`]: for 1-, 2-, 4- and 8-byte elements read contiguously along y and
/// written contiguously along x, square blocks through a buffer ([`staged_portable`]), the edges (and
/// everything else) element by element.
pub(super) unsafe fn transpose_portable(
    src: *const u8,
    dst: *mut u8,
    s: [i64; 4],
    (na, nb, w): (usize, usize, usize),
) {
    transpose_planes_portable(src, dst, s, &[(0, 0)], (na, nb, w));
}

/// [`transpose_portable`] of several tiles (planes) at once, alike but for where they lie: plane `p`'s
/// element (x, y) is read at `src + planes[p].0 + (x·s[0] + y·s[1])·w` and written at
/// `dst + planes[p].1 + (x·s[2] + y·s[3])·w`. The planes go through one buffer, each destination row
/// of all of them side by side, so that where the planes' rows follow one another in the destination
/// (plane `p + 1`'s row starting where plane `p`'s ends, as in `f32[256]³` reversed, whose planes of
/// one middle index each have rows of 1 KiB), they are copied out as one run: a longer run is what
/// lets cached stores go at memory speed (see [`portable_tile`]). Likewise each source row is read
/// along every plane in turn.
///
/// # Safety
/// Every addressed element must lie inside its buffer; no two planes' destinations may overlap.
pub unsafe fn transpose_planes_portable(
    src: *const u8,
    dst: *mut u8,
    s: [i64; 4],
    planes: &[(isize, isize)],
    (na, nb, w): (usize, usize, usize),
) {
    let (fa, fb) = if s[1] == 1 && s[2] == 1 {
        let p = planes;
        match w {
            1 => staged_portable::<u8, 16>(src, dst, s, p, (na, nb), block_portable::<u8, 16>),
            2 => staged_portable::<u16, 16>(src, dst, s, p, (na, nb), block_portable::<u16, 16>),
            4 if cfg!(target_endian = "little") => {
                staged_portable::<u32, 16>(src, dst, s, p, (na, nb), block_u32_pairs)
            }
            4 => staged_portable::<u32, 16>(src, dst, s, p, (na, nb), block_portable::<u32, 16>),
            8 => staged_portable::<u64, 8>(src, dst, s, p, (na, nb), block_portable::<u64, 8>),
            _ => (0, 0),
        }
    } else {
        (0, 0)
    };
    // The edges: x past the last whole block (every y), then y past it (x inside the blocks).
    let wi = w as i64;
    for &(so, doff) in planes {
        let (src, dst) = (src.offset(so), dst.offset(doff));
        let edge = |x0: usize, x1: usize, y0: usize, y1: usize| {
            elements_portable(
                src.offset(((x0 as i64 * s[0] + y0 as i64 * s[1]) * wi) as isize),
                dst.offset(((x0 as i64 * s[2] + y0 as i64 * s[3]) * wi) as isize),
                s,
                (x1 - x0, y1 - y0, w),
            )
        };
        edge(fa, na, 0, nb);
        edge(0, fa, fb, nb);
    }
}

/// How many planes of `na`×`nb` elements of `w` bytes [`transpose_planes_portable`] takes at once:
/// enough to fill about 2 MiB of buffer, at most `planes`, at least one. A plane of 256×256 f32
/// (256 KiB) goes 8 at a time, its rows out in runs of 8 KiB. (Measured on a Zen 5, `f32[256]³`
/// reversed, 1 thread, each timed in turn, two sets: one plane at a time 0.38–0.40× memcpy, 4 planes
/// 0.49–0.57×, 6 planes 0.52–0.56×, 8 planes 0.50–0.54×; 12 and 16 planes, whose buffer no longer
/// holds whole planes, so that each source row is read in halves, 0.29–0.34×.)
pub fn portable_planes((na, nb, w): (usize, usize, usize), planes: usize) -> usize {
    let plane = na.saturating_mul(nb).saturating_mul(w).max(1);
    (PORTABLE_PLANES_BYTES / plane).clamp(1, planes.max(1))
}

/// The bytes of planes [`portable_planes`] groups.
const PORTABLE_PLANES_BYTES: usize = 2 << 20;

/// The tile of a portable transpose for source rows `pitch` bytes apart (see [`transpose_tile`]),
/// which [`staged_portable`] moves through a buffer: 4096 source rows by 128 destination rows (2 MiB of
/// f32), or 512 by 256 for rows 256 KiB apart or more. Portable code has no non-temporal stores, so
/// each destination line is read before it is written, unless it is written in a long enough run:
/// the C library's `memcpy` copies runs of 8 KiB and more as a block (`rep movsb` on x86-64), which
/// fills whole lines without reading them, and hardware that detects streaming writes does the same.
/// Each destination row's 4096 elements (16 KiB of f32) go out in one run, and each source row is
/// read along 128 elements (512 bytes). (Measured on a Zen 5, `--isa portable`, 1 thread: the bench's
/// `f32[8192,8192]` transpose at 0.46–0.50× memcpy against 0.43–0.47× with 512×256 tiles, timed in
/// turn; in a harness running the bench's loops, copying the buffer out alone ran at 1.1–1.3×
/// memcpy's speed with 2 KiB runs, 1.6× with 8 KiB and 2.5× with 16 KiB; 2048×64, 8192×64, 1024×128,
/// 2048×128, 2048×256, 4096×256 and 8192×128 tiles were slower, reading too little of each row, with
/// too short runs, or with a buffer past L2. For rows 256 KiB apart, a plane of `f32[256]³` at a
/// time, 256×128, 128×256 and 64×256 tiles were no faster than the whole plane.)
pub fn portable_tile(pitch: usize) -> (usize, usize) {
    if pitch >= 256 << 10 {
        (512, 256)
    } else {
        (4096, 128)
    }
}

/// The largest buffer (bytes) [`staged_portable`] takes at once: a tile of 2 MiB with the line that
/// pads each of its rows (128 rows of 16 KiB). A tile whose buffer would be larger goes through it in
/// parts of fewer destination rows, as even as whole blocks allow.
pub(super) const PORTABLE_STAGE_MAX: usize = (2 << 20) + (64 << 10);

/// The whole `B`×`B` blocks of a transpose of `planes` through a buffer (source rows `s[0]` elements
/// apart, destination rows `s[3]`; see [`transpose_planes_portable`] for the planes): first the source
/// rows are read `B` at a time, each along the part of the tile in hand in every plane, their blocks
/// transposed into the buffer, which holds that part's destination rows one after another (each the
/// planes' rows side by side); then each destination row is copied out, in one run wherever planes
/// follow one another in the destination. The part is the whole tile, or as many destination rows
/// (whole blocks of them) as keep the buffer within [`PORTABLE_STAGE_MAX`]. The buffer's rows are one
/// cache line longer than the planes' rows together, so that a block's `B` rows, written together, do
/// not all fall into the same cache sets when a run is a multiple of 4 KiB. Returns the extents
/// covered in each plane, `(na, nb)` rounded down to whole blocks.
unsafe fn staged_portable<T: Copy, const B: usize>(
    src: *const u8,
    dst: *mut u8,
    s: [i64; 4],
    planes: &[(isize, isize)],
    (na, nb): (usize, usize),
    block: unsafe fn(*const T, isize, *mut T, usize),
) -> (usize, usize) {
    use std::cell::RefCell;
    thread_local! {
        static STAGE: RefCell<Stage> = const { RefCell::new(Stage::new()) };
    }
    let (fa, fb) = (na / B * B, nb / B * B);
    let size = std::mem::size_of::<T>();
    let n = planes.len();
    // Buffer rows `pitch` elements apart, and as many of them (whole blocks) as fit.
    let pitch = n * fa + 64 / size;
    let most = (PORTABLE_STAGE_MAX / (pitch * size)) / B * B;
    let each_plane = || {
        for &(so, doff) in planes {
            blocks_portable::<T, B>(src.offset(so), dst.offset(doff), s, (na, nb));
        }
        (fa, fb)
    };
    if fa == 0 || fb == 0 || most == 0 {
        return each_plane();
    }
    // (A thin last part would read too little of each source row.)
    let part = fb.div_ceil(fb.div_ceil(most)).next_multiple_of(B);
    let bytes = pitch * part * size;
    // Runs of the copy-out: planes `p..q` whose destination rows follow one another.
    let run = (fa * size) as isize;
    let mut runs: Vec<(usize, usize)> = Vec::with_capacity(n);
    for p in 0..n {
        match runs.last_mut() {
            Some((_, q)) if planes[p].1 == planes[*q - 1].1 + run => *q += 1,
            _ => runs.push((p, p + 1)),
        }
    }
    STAGE.with(|stage| {
        // (This kernel calls nothing that comes back here, so the buffer is never lent twice.)
        let Ok(mut stage) = stage.try_borrow_mut() else {
            return each_plane();
        };
        let stage = stage.get(bytes) as *mut T;
        let (sr, dr) = (s[0] as isize, s[3] as isize);
        for y0 in (0..fb).step_by(part) {
            let rows = part.min(fb - y0);
            for x in (0..fa).step_by(B) {
                for (p, &(so, _)) in planes.iter().enumerate() {
                    let from = (src.offset(so) as *const T).offset(x as isize * sr).add(y0);
                    let to = stage.add(p * fa + x);
                    for y in (0..rows).step_by(B) {
                        block(from.add(y), sr, to.add(y * pitch), pitch);
                    }
                }
            }
            // (As bytes: the destination need not be aligned to `T`.)
            for y in 0..rows {
                let row = (y0 + y) as isize * dr * size as isize;
                for &(p, q) in &runs {
                    std::ptr::copy_nonoverlapping(
                        stage.add(y * pitch + p * fa) as *const u8,
                        dst.offset(planes[p].1 + row),
                        (q - p) * fa * size,
                    );
                }
            }
        }
        (fa, fb)
    })
}

/// One `B`×`B` block of `T` transposed: row i of the source (`sr` elements apart from `from`) becomes
/// column i at `to` (rows `dr` apart), each row read whole into an array, each column written whole.
unsafe fn block_portable<T: Copy, const B: usize>(
    from: *const T,
    sr: isize,
    to: *mut T,
    dr: usize,
) {
    let rows: [[T; B]; B] =
        std::array::from_fn(|i| (from.offset(i as isize * sr) as *const [T; B]).read_unaligned());
    #[allow(clippy::needless_range_loop)] // j indexes the inner arrays: a column.
    for j in 0..B {
        let column: [T; B] = std::array::from_fn(|i| rows[i][j]);
        (to.add(j * dr) as *mut [T; B]).write_unaligned(column);
    }
}

/// [`block_portable`] for 16×16 `u32` on little-endian targets, a pair of elements as one `u64`:
/// rows 2i and 2i + 1 read as eight `u64` each, and the 2×2 blocks they make transposed with masks,
/// shifts and ors, so that each destination row is built from eight `u64` (elements of source rows 2i
/// and 2i + 1 side by side) rather than sixteen single elements: half the loads and stores of
/// [`block_portable`]. (At x86-64's baseline the compiler keeps this scalar, 64-bit loads, shifts,
/// masks and stores; no formulation of a block tried there was vectorised, see `docs/relayout.md`.)
unsafe fn block_u32_pairs(from: *const u32, sr: isize, to: *mut u32, dr: usize) {
    const LOW: u64 = 0xffff_ffff;
    let rows: [[u64; 8]; 16] =
        std::array::from_fn(|i| (from.offset(i as isize * sr) as *const [u64; 8]).read_unaligned());
    #[allow(clippy::needless_range_loop)] // k indexes the inner arrays: a column of pairs.
    for k in 0..8 {
        // Little-endian: element 2k of a row is the low half of its u64 k, element 2k + 1 the high.
        let even: [u64; 8] =
            std::array::from_fn(|i| rows[2 * i][k] & LOW | rows[2 * i + 1][k] << 32);
        let odd: [u64; 8] =
            std::array::from_fn(|i| rows[2 * i][k] >> 32 | rows[2 * i + 1][k] & !LOW);
        (to.add(2 * k * dr) as *mut [u64; 8]).write_unaligned(even);
        (to.add((2 * k + 1) * dr) as *mut [u64; 8]).write_unaligned(odd);
    }
}

/// The whole `B`×`B` blocks of a transpose of `T` (source rows `s[0]` elements apart, destination rows
/// `s[3]`): each block's rows read whole into an array (a line each for 64-byte rows, so no line is
/// read twice when rows a power of two apart share cache sets), its columns written whole. Returns the
/// extents covered, `(na, nb)` rounded down to whole blocks.
unsafe fn blocks_portable<T: Copy, const B: usize>(
    src: *const u8,
    dst: *mut u8,
    s: [i64; 4],
    (na, nb): (usize, usize),
) -> (usize, usize) {
    let (src, dst) = (src as *const T, dst as *mut T);
    let (sr, dr) = (s[0] as isize, s[3] as isize);
    let (fa, fb) = (na / B * B, nb / B * B);
    for y in (0..fb).step_by(B) {
        for x in (0..fa).step_by(B) {
            let from = src.offset(x as isize * sr + y as isize);
            let rows: [[T; B]; B] = std::array::from_fn(|i| {
                (from.offset(i as isize * sr) as *const [T; B]).read_unaligned()
            });
            let to = dst.offset(x as isize + y as isize * dr);
            #[allow(clippy::needless_range_loop)] // j indexes the inner arrays: a column.
            for j in 0..B {
                let column: [T; B] = std::array::from_fn(|i| rows[i][j]);
                (to.offset(j as isize * dr) as *mut [T; B]).write_unaligned(column);
            }
        }
    }
    (fa, fb)
}

/// [`transpose`] element by element, the inner loop along x.
unsafe fn elements_portable(
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 32, failure_persistence: None, ..ProptestConfig::default() })]

        /// Planes transposed together, against the law element by element: plane p's element (x, y),
        /// read at `src + p·plane_s + (x·sr + y)·w`, is written at `dst + p·plane_d + (x + y·dr)·w`, and
        /// nothing else is written. Planes follow one another in the destination (`plane_d` a
        /// destination row's run: the copy-out joins them) or lie apart; tiles from thinner than a
        /// block to larger than the buffer takes at once.
        #[test]
        fn planes_match_the_law(
            w in prop::sample::select(vec![1usize, 2, 4, 8]),
            (na, nb) in (0usize..80, 0usize..1200),
            planes in 1usize..6,
            (gap, pad_s) in (prop::sample::select(vec![0usize, 3]), 0usize..5),
            seed in any::<u64>(),
        ) {
            // Source: plane p's rows `sr` apart after `p·plane_s`; destination: rows `dr` apart, plane p
            // starting `p·na` elements into each row (joined), or `p·(na + gap)` with a gap.
            let sr = nb + pad_s;
            let plane_s = na * sr + 7;
            let dr = planes * (na + gap) + 2;
            let src = super::super::test_bytes::noise(planes * plane_s * w + 64, seed);
            let mut want = vec![0xa5u8; nb * dr * w];
            let mut at = Vec::new();
            for p in 0..planes {
                at.push(((p * plane_s * w) as isize, (p * (na + gap) * w) as isize));
                for x in 0..na {
                    for y in 0..nb {
                        let from = (p * plane_s + x * sr + y) * w;
                        let to = (p * (na + gap) + x + y * dr) * w;
                        want[to..to + w].copy_from_slice(&src[from..from + w]);
                    }
                }
            }
            let mut dst = vec![0xa5u8; nb * dr * w];
            // SAFETY: every plane's rows lie inside both buffers, as laid out above.
            unsafe {
                transpose_planes_portable(
                    src.as_ptr(),
                    dst.as_mut_ptr(),
                    [sr as i64, 1, 1, dr as i64],
                    &at,
                    (na, nb, w),
                )
            };
            prop_assert!(dst == want, "{} planes of {}×{} of {} bytes, gap {}", planes, na, nb, w, gap);
        }
    }
}
