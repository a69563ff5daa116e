//! The portable bit packing: `pred` bytes to `E(1)` bit rows and back in plain loops over slices, for
//! the compiler to vectorise (the fallback of [`pack_bits`](super::pack_bits) and
//! [`unpack_bits`](super::unpack_bits) on every target).

#![allow(unsafe_code)]

/// Columns per pass of the portable bit packing: a buffer of `k/8` rows of this many bytes, zeroed at
/// every call (a call often covers one tile's 128 columns: with 4096, zeroing the buffer cost more than
/// the packing, 0.29× memcpy against 0.44×).
const PORTABLE_SPAN: usize = 512;

/// The portable [`pack_bits`](super::pack_bits) for `KB` bytes a group, written for the compiler to vectorise: row by row
/// along up to [`PORTABLE_SPAN`] columns, each row's low bits shifted into place and or-ed into a buffer (plain
/// loops over slices, one sequential read per row), then the buffer's `KB` rows interleaved into the
/// destination.
pub(super) unsafe fn pack_bits_portable<const KB: usize>(
    src: *const u8,
    row: usize,
    dst: *mut u8,
    len: usize,
) {
    let mut buf = [[0u8; PORTABLE_SPAN]; KB];
    let mut c = 0;
    while c < len {
        let n = PORTABLE_SPAN.min(len - c);
        for (m, bm) in buf.iter_mut().enumerate() {
            let bm = &mut bm[..n];
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
        // SAFETY: groups c..c + n of the destination lie inside it.
        let out = std::slice::from_raw_parts_mut(dst.add(c * KB), n * KB);
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

/// The portable [`unpack_bits`](super::unpack_bits) for `KB` bytes a group, the reverse of [`pack_bits_portable`]: the
/// groups of up to [`PORTABLE_SPAN`] columns split into `KB` buffer rows, then each destination row written
/// in one pass, bit t of its buffer row.
pub(super) unsafe fn unpack_bits_portable<const KB: usize>(
    src: *const u8,
    dst: *mut u8,
    row: usize,
    len: usize,
) {
    let mut buf = [[0u8; PORTABLE_SPAN]; KB];
    let mut c = 0;
    while c < len {
        let n = PORTABLE_SPAN.min(len - c);
        // SAFETY: groups c..c + n of the source lie inside it.
        let groups = std::slice::from_raw_parts(src.add(c * KB), n * KB);
        for (q, group) in groups.chunks_exact(KB).enumerate() {
            for (m, &b) in group.iter().enumerate() {
                buf[m][q] = b;
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
