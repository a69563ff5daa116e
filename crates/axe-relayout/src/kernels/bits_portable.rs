//! The portable bit packing: `pred` bytes to `E(1)` bit rows and back in plain loops over slices, for
//! the compiler to vectorise (the fallback of [`pack_bits`](super::pack_bits) and
//! [`unpack_bits`](super::unpack_bits) on every target), and the per-thread buffer that it and the
//! SSE2/AVX2 packing share.

#![allow(unsafe_code)]

/// Columns per pass of the bit packing (portable, SSE2 and AVX2; the portable unpacking too): a buffer of `k/8` rows of this many
/// bytes. For a tile's rows laid end to end (8192 one-byte columns each, as in the bench's pred) the
/// rows are then read, or written, one after another in one sequential pass (the portable packing with
/// 512 columns a pass read 32 rows 512 bytes at a time: pred into `E(1)` ran at 0.40–0.44× memcpy,
/// against 0.58–1.30× in turn with this span, on a Zen 5).
pub(super) const BIT_ROW_SPAN: usize = 8192;

/// This thread's buffer of the bit packing: 8 rows of [`BIT_ROW_SPAN`] bytes (64 KiB), 64-byte aligned,
/// kept between calls rather than zeroed on the stack at every call (a call often covers one tile's 128
/// columns; zeroing a buffer of 4096 columns a call cost more than the packing). A kernel holds the only
/// reference into it while it runs: the kernels do not nest, and each writes every byte it reads.
pub(super) fn bit_rows() -> *mut u8 {
    use std::cell::UnsafeCell;
    thread_local! {
        static ROWS: UnsafeCell<Vec<u64>> = UnsafeCell::new(vec![0; BIT_ROW_SPAN + 8]);
    }
    // SAFETY: the vector is never resized; only its elements are written through the pointer.
    ROWS.with(|m| {
        let p = unsafe { (*m.get()).as_mut_ptr() } as *mut u8;
        p.wrapping_add(p.align_offset(64))
    })
}

/// The portable [`pack_bits`](super::pack_bits) for `KB` bytes a group, written for the compiler to vectorise: row by row
/// along up to [`BIT_ROW_SPAN`] columns, each row's low bits shifted into place and or-ed into a buffer (plain
/// loops over slices, one sequential read per row), then the buffer's `KB` rows interleaved into the
/// destination.
pub(super) unsafe fn pack_bits_portable<const KB: usize>(
    src: *const u8,
    row: usize,
    dst: *mut u8,
    len: usize,
) {
    let rows = bit_rows();
    let mut c = 0;
    while c < len {
        let n = BIT_ROW_SPAN.min(len - c);
        for m in 0..KB {
            // SAFETY: buffer row m (KB ≤ 8) is this kernel's alone while it runs.
            let bm = std::slice::from_raw_parts_mut(rows.add(m * BIT_ROW_SPAN), n);
            for t in 0..8 {
                // SAFETY: row 8m + t's columns c..c + n lie inside the source (the caller's promise).
                let r = std::slice::from_raw_parts(src.add((8 * m + t) * row + c), n);
                if t == 0 {
                    bm.iter_mut().zip(r).for_each(|(b, &x)| *b = x & 1);
                } else {
                    bm.iter_mut().zip(r).for_each(|(b, &x)| *b |= (x & 1) << t);
                }
            }
        }
        // SAFETY: groups c..c + n of the destination lie inside it; the buffer rows were written above.
        let out = std::slice::from_raw_parts_mut(dst.add(c * KB), n * KB);
        let buf: [&[u8]; KB] =
            std::array::from_fn(|m| std::slice::from_raw_parts(rows.add(m * BIT_ROW_SPAN), n));
        match KB {
            1 => out.copy_from_slice(&buf[0][..n]),
            // A group as one little-endian integer: byte m from buffer row m.
            4 if cfg!(target_endian = "little") => {
                for (q, group) in out.chunks_exact_mut(4).enumerate() {
                    let g = u32::from(buf[0][q])
                        | u32::from(buf[1 % KB][q]) << 8
                        | u32::from(buf[2 % KB][q]) << 16
                        | u32::from(buf[3 % KB][q]) << 24;
                    group.copy_from_slice(&g.to_le_bytes());
                }
            }
            _ => {
                for (q, group) in out.chunks_exact_mut(KB).enumerate() {
                    for (m, b) in group.iter_mut().enumerate() {
                        *b = buf[m][q];
                    }
                }
            }
        }
        c += n;
    }
}

/// Groups per step of the portable unpacking's split of 4-byte groups.
const SPLIT: usize = 64;

/// The portable [`unpack_bits`](super::unpack_bits) for `KB` bytes a group, the reverse of [`pack_bits_portable`]: the
/// groups of up to [`BIT_ROW_SPAN`] columns split into `KB` buffer rows, then each destination row written
/// in one pass, bit t of its buffer row.
pub(super) unsafe fn unpack_bits_portable<const KB: usize>(
    src: *const u8,
    dst: *mut u8,
    row: usize,
    len: usize,
) {
    let rows = bit_rows();
    let mut c = 0;
    while c < len {
        let n = BIT_ROW_SPAN.min(len - c);
        // SAFETY: groups c..c + n of the source lie inside it; buffer rows 0..KB (KB ≤ 8) are this
        // kernel's alone while it runs.
        let groups = std::slice::from_raw_parts(src.add(c * KB), n * KB);
        let mut buf: [&mut [u8]; KB] =
            std::array::from_fn(|m| std::slice::from_raw_parts_mut(rows.add(m * BIT_ROW_SPAN), n));
        // Four bytes a group (the `(32,1)` sub-tiles): 64 groups at a time as little-endian `u32`,
        // byte m by shifts and narrowings, which the compiler vectorises (one byte at a time ran
        // pred out of `E(1)` at 0.49–0.55× memcpy).
        let mut done = 0;
        if KB == 4 && cfg!(target_endian = "little") {
            for (q, chunk) in groups.chunks_exact(4 * SPLIT).enumerate() {
                let g: [u32; SPLIT] = std::array::from_fn(|i| {
                    u32::from_le_bytes([
                        chunk[4 * i],
                        chunk[4 * i + 1],
                        chunk[4 * i + 2],
                        chunk[4 * i + 3],
                    ])
                });
                for (m, bm) in buf.iter_mut().enumerate() {
                    let r: [u8; SPLIT] = std::array::from_fn(|i| (g[i] >> (8 * m)) as u8);
                    bm[q * SPLIT..(q + 1) * SPLIT].copy_from_slice(&r);
                }
            }
            done = n / SPLIT * SPLIT;
        }
        // Otherwise one buffer row at a time (each written in order): byte m of every group.
        for (m, bm) in buf.iter_mut().enumerate() {
            for (b, group) in bm[done..]
                .iter_mut()
                .zip(groups[done * KB..].chunks_exact(KB))
            {
                *b = group[m];
            }
        }
        for (m, bm) in buf.iter().enumerate() {
            for t in 0..8 {
                // SAFETY: row 8m + t's columns c..c + n lie inside the destination.
                let out = std::slice::from_raw_parts_mut(dst.add((8 * m + t) * row + c), n);
                out.iter_mut()
                    .zip(&bm[..n])
                    .for_each(|(o, &b)| *o = (b >> t) & 1);
            }
        }
        c += n;
    }
}
