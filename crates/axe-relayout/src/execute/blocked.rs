//! Executing [`Mode::Blocked`]: two dimensions in tiles, the kernel its [`Block`] names: interleaves
//! (packing k indices side by side, or unpacking them), transposes (register blocks, staged through a
//! buffer, several planes at once, or carried from tile to tile), or element by element.

#![allow(unsafe_code)]

use super::*;

/// The destination rows one item of a carried transpose takes at most (see
/// `kernels::transpose_carried`): each holds back up to a cache line, so the items' held-back bytes
/// stay within L2 (64 KiB each).
#[cfg(target_arch = "x86_64")]
const CARRIED_ROWS: usize = 1024;

/// Runs a blocked plan over `dst_inner` (`a`, contiguous in the destination) and `src_inner` (`b`).
pub(super) fn run(job: &Job, (a, b): (usize, usize), kernel: &Block) {
    let Job {
        plan,
        s,
        d,
        sp,
        dp,
        s0,
        w,
        isa,
        stream,
        outer_count,
    } = *job;
    let (na, nb) = (s.dims[a] as usize, s.dims[b] as usize);
    let (sa, da, sbt, dbt) = (&s.tables[a], &d.tables[a], &s.tables[b], &d.tables[b]);
    // The slow path: the elements of a rectangle (ys over b, xs over a) one by one, every copy.
    let each = |sbase: i64, dbase: i64, ys: std::ops::Range<usize>, xs: std::ops::Range<usize>| {
        for y in ys {
            for x in xs.clone() {
                let so = (sbase + sbt[y] + s0 + sa[x]) as usize * w;
                for r in &d.replicas {
                    let doff = (dbase + dbt[y] + da[x] + r) as usize * w;
                    // SAFETY: offsets were checked to lie inside both buffers before `execute`
                    // ran; the destination slots of distinct (element, copy) pairs are distinct (see
                    // `Dst`). The other kernel calls below rest on the same checks.
                    unsafe { copy_element((sp + so) as *const u8, dp.ptr().add(doff), w) };
                }
            }
        }
    };
    // Packing: the destination puts k consecutive indices of `a` side by side (bf16's (2,1), s8's
    // (4,1)); unpacking: the source does so along `b`. Either way, the packed dimension is walked
    // in groups of k (a few groups at a time: 8 rows, a tile's worth) and the other in runs where
    // the packed side advances by k and the other by one; each (run, group) is one kernel call.
    if let Block::Interleave { k } | Block::Deinterleave { k } = *kernel {
        let packing = matches!(kernel, Block::Interleave { .. });
        // (source, destination) tables of the packed dimension and of the run dimension.
        let ((sg, dg), (sr, dr), n) = if packing {
            ((sa, da), (sbt, dbt), na)
        } else {
            ((sbt, dbt), (sa, da), nb)
        };
        let groups = n.div_ceil(k);
        let steps: Vec<Option<i64>> = (0..groups)
            .map(|g| {
                let (unit, strided) = if packing { (dg, sg) } else { (sg, dg) };
                group_step(g, k, n, unit, strided, d.replicas.len())
            })
            .collect();
        let runs = if packing {
            runs_where(dr, sr, k as i64, 1)
        } else {
            runs_where(sr, dr, k as i64, 1)
        };
        let per = (8 / k).clamp(1, groups);
        let blocks = groups.div_ceil(per);
        // Each run's (source, destination) offset along the run dimension, in bytes, and each
        // group's along the packed one (with the source's start and the first copy): the kernel
        // calls, a few hundred bytes each, then cost only additions.
        let wb = w as i64;
        let run_at: Vec<(i64, i64)> = runs
            .iter()
            .map(|&(r0, _)| (sr[r0] * wb, dr[r0] * wb))
            .collect();
        let group_at: Vec<(i64, i64)> = (0..groups)
            .map(|g| ((s0 + sg[g * k]) * wb, (dg[g * k] + d.replicas[0]) * wb))
            .collect();
        for_items(plan, outer_count * blocks, 4, |item| {
            let (o, gb) = (item / blocks, item % blocks);
            for_outer(&plan.outer, s, d, o, 1, |sbase, dbase| {
                let (sbase_b, dbase_b) = (sbase * wb, dbase * wb);
                for (&(r0, len), &(rs, rd)) in runs.iter().zip(&run_at) {
                    let first = gb * per;
                    let block = &steps[first..((gb + 1) * per).min(groups)];
                    for (g, &step) in (first..).zip(block) {
                        let g0 = g * k;
                        let Some(row) = step else {
                            let (gs, rs) = (g0..(g0 + k).min(n), r0..r0 + len);
                            if packing {
                                each(sbase, dbase, rs, gs);
                            } else {
                                each(sbase, dbase, gs, rs);
                            }
                            continue;
                        };
                        let (gs, gd) = group_at[g];
                        let so = (sbase_b + gs + rs) as usize;
                        let doff = (dbase_b + gd + rd) as usize;
                        let (from, to) = ((sp + so) as *const u8, dp.ptr().wrapping_add(doff));
                        let row = row as usize * w;
                        // SAFETY: as above; the k rows and the packed run lie inside the
                        // buffers (the group is whole and evenly spaced, see `group_step`).
                        unsafe {
                            if packing {
                                kernels::interleave(isa, stream, from, row, to, (k, len, w))
                            } else {
                                kernels::deinterleave(isa, stream, from, to, row, (k, len, w))
                            }
                        };
                    }
                }
            });
        });
        return;
    }
    // The element offsets (source, destination) of the corner (a0, b0) of the tiles of outer
    // indices `g·span..(g + 1)·span` (fewer in the last group), one after another.
    let group_corners = |g: usize, span: usize, (a0, b0): (usize, usize)| {
        let first = g * span;
        let mut corners = Vec::with_capacity(span);
        for_outer(
            &plan.outer,
            s,
            d,
            first,
            span.min(outer_count - first),
            |sb, db| corners.push((sb + s0 + sa[a0] + sbt[b0], db + da[a0] + dbt[b0])),
        );
        corners
    };
    // A staged transpose (bytes only, see `kernels::staged`): both dimensions affine on both
    // sides, tiles through a buffer.
    if let (
        Block::Transpose {
            tile: (ta, tb),
            staged: Some(span),
            ..
        },
        Some(ssa),
        Some(1),
        Some(1),
        Some(sdb),
    ) = (*kernel, affine(sa), affine(da), affine(sbt), affine(dbt))
    {
        // Items: row blocks outermost, so each worker reads its rows onward through the outer
        // indices.
        let (blocks_a, blocks_b) = (na.div_ceil(ta), nb.div_ceil(tb));
        let groups = outer_count.div_ceil(span);
        let work = blocks_a * groups * blocks_b;
        for_items(plan, work, 1, |item| {
            let (ba, rest) = (item / (groups * blocks_b), item % (groups * blocks_b));
            let (g, bb) = (rest / blocks_b, rest % blocks_b);
            let (a0, b0) = (ba * ta, bb * tb);
            let (a1, b1) = ((a0 + ta).min(na), (b0 + tb).min(nb));
            let corners = group_corners(g, span, (a0, b0));
            for &r in &d.replicas {
                let segments = in_bytes(&corners, r, w);
                // SAFETY: as above; every tile's corners lie inside both buffers and the tables
                // are affine, so every element in between does too.
                unsafe {
                    kernels::transpose_staged(
                        isa,
                        stream,
                        (sp as *const u8, ssa as isize * w as isize),
                        (dp.ptr(), sdb as isize * w as isize),
                        &segments,
                        (a1 - a0, b1 - b0),
                    )
                };
            }
        });
        return;
    }
    // Portable kernels, where each outer index's plane is one tile: several planes at a time
    // through one buffer (see `kernels::transpose_planes_portable`).
    if let (
        Block::Transpose {
            staged: None,
            planes: span,
            ..
        },
        Some(ssa),
        Some(1),
        Some(1),
        Some(sdb),
    ) = (*kernel, affine(sa), affine(da), affine(sbt), affine(dbt))
    {
        if span > 1 {
            let groups = outer_count.div_ceil(span);
            for_items(plan, groups, 1, |g| {
                let corners = group_corners(g, span, (0, 0));
                for &r in &d.replicas {
                    let planes = in_bytes(&corners, r, w);
                    // SAFETY: as above; every plane's corners lie inside both buffers and
                    // the tables are affine, so every element in between does too; distinct
                    // outer indices write distinct slots (see `Dst`).
                    unsafe {
                        kernels::transpose_planes_portable(
                            sp as *const u8,
                            dp.ptr(),
                            [ssa, 1, 1, sdb],
                            &planes,
                            (na, nb, w),
                        )
                    };
                }
            });
            return;
        }
    }
    // Destination rows that are not whole cache lines apart, streamed: items of a group of
    // consecutive outer indices by a part of the destination's rows (at most CARRIED_ROWS, whole
    // tiles), each taking its tiles in order of source rows, every tile holding back the
    // partial line each row ends on for the next (see `kernels::transpose_carried`), on into
    // the next outer index where its rows continue this one's (as in `f32[264,256,264]`
    // reversed, whose rows of one middle index follow those of the one before).
    #[cfg(target_arch = "x86_64")]
    if let (
        Block::Transpose {
            tile: (ta, tb),
            carried: true,
            ..
        },
        Some(ssa),
        Some(1),
        Some(1),
        Some(sdb),
        [r],
    ) = (
        *kernel,
        affine(sa),
        affine(da),
        affine(sbt),
        affine(dbt),
        &d.replicas[..],
    ) {
        let per = (CARRIED_ROWS / tb).max(1);
        let (blocks_a, blocks_b) = (na.div_ceil(ta), nb.div_ceil(tb));
        let parts = blocks_b.div_ceil(per);
        let span = outer_count.div_ceil(outer_count.min(plan.threads * 4).max(1));
        let groups = outer_count.div_ceil(span);
        for_items(plan, groups * parts, 1, |item| {
            let (g, p) = (item / parts, item % parts);
            let (b_first, b_end) = (p * per, ((p + 1) * per).min(blocks_b));
            let rows0 = b_first * tb;
            let mut carry = vec![kernels::Carry::default(); (b_end * tb).min(nb) - rows0];
            // Each outer index's corner (0, 0); a tile's lies `a0` source rows and `b0`
            // columns on (the tables are affine).
            let corners = group_corners(g, span, (0, 0));
            for (i, &(c_src, c_dst)) in corners.iter().enumerate() {
                // Whether the next outer index's rows go on where this one's end.
                let goes_on = corners
                    .get(i + 1)
                    .is_some_and(|&(_, next)| next == c_dst + na as i64);
                for ba in 0..blocks_a {
                    let (a0, a1) = (ba * ta, ((ba + 1) * ta).min(na));
                    for bb in b_first..b_end {
                        let (b0, b1) = (bb * tb, ((bb + 1) * tb).min(nb));
                        let so = c_src + (sa[a0] - sa[0]) + (sbt[b0] - sbt[0]);
                        let doff = c_dst + (da[a0] - da[0]) + (dbt[b0] - dbt[0]) + *r;
                        // SAFETY: as above; the tile's corners lie inside both buffers and the
                        // tables are affine, so every element in between does too, and so do
                        // the bytes held back, which belong to the tile before in each row.
                        unsafe {
                            kernels::transpose_carried(
                                isa,
                                (sp + so as usize * w) as *const u8,
                                dp.ptr().add(doff as usize * w),
                                [ssa, 1, 1, sdb],
                                (a1 - a0, b1 - b0, w),
                                &mut carry[b0 - rows0..b1 - rows0],
                                a1 == na && !goes_on,
                            )
                        };
                    }
                }
            }
        });
        return;
    }
    // A plain transpose: both dimensions affine on both sides. Tiles of register blocks with
    // strided pointers (no table lookups), each source row's next line asked for ahead.
    if let (Block::Transpose { tile: (ta, tb), .. }, Some(ssa), Some(sda), Some(ssb), Some(sdb)) =
        (*kernel, affine(sa), affine(da), affine(sbt), affine(dbt))
    {
        // Items: row blocks outermost, so that each source row's stream goes on through the
        // outer indices (f32[256]³ reversed: 7–12% faster than outer indices outermost).
        let (blocks_a, blocks_b) = (na.div_ceil(ta), nb.div_ceil(tb));
        let work = outer_count * blocks_a * blocks_b;
        for_items(plan, work, 16, |item| {
            let (ba, rest) = (
                item / (outer_count * blocks_b),
                item % (outer_count * blocks_b),
            );
            let (o, bb) = (rest / blocks_b, rest % blocks_b);
            for_outer(&plan.outer, s, d, o, 1, |sbase, dbase| {
                let (a0, b0) = (ba * ta, bb * tb);
                let (a1, b1) = ((a0 + ta).min(na), (b0 + tb).min(nb));
                let so = sbase + s0 + sa[a0] + sbt[b0];
                for r in &d.replicas {
                    let doff = dbase + da[a0] + dbt[b0] + r;
                    // SAFETY: as above; the tile's corners lie inside both buffers and the tables
                    // are affine, so every element in between does too.
                    unsafe {
                        kernels::transpose(
                            isa,
                            (stream, true),
                            (sp + so as usize * w) as *const u8,
                            dp.ptr().add(doff as usize * w),
                            [ssa, ssb, sda, sdb],
                            (a1 - a0, b1 - b0, w),
                        )
                    };
                }
            });
        });
        return;
    }
    let bs = match *kernel {
        Block::Elements { edge } => edge,
        _ => 64,
    };
    let blocks_b = nb.div_ceil(bs);
    let work = outer_count * blocks_b;
    for_items(plan, work, 4, |item| {
        let (o, bb) = (item / blocks_b, item % blocks_b);
        for_outer(&plan.outer, s, d, o, 1, |sbase, dbase| {
            let b_range = bb * bs..((bb + 1) * bs).min(nb);
            for a0 in (0..na).step_by(bs) {
                let a_range = a0..(a0 + bs).min(na);
                for y in b_range.clone() {
                    let (sy, dy) = (sbase + sbt[y] + s0, dbase + dbt[y]);
                    for x in a_range.clone() {
                        let so = (sy + sa[x]) as usize * w;
                        for r in &d.replicas {
                            let doff = (dy + da[x] + r) as usize * w;
                            // SAFETY: as above.
                            unsafe { copy_element((sp + so) as *const u8, dp.ptr().add(doff), w) };
                        }
                    }
                }
            }
        });
    });
}

/// `corners` (element offsets, source and destination) as byte offsets for elements of `w` bytes, the
/// destination's moved by replica offset `r`.
fn in_bytes(corners: &[(i64, i64)], r: i64, w: usize) -> Vec<(isize, isize)> {
    let w = w as isize;
    corners
        .iter()
        .map(|&(so, doff)| (so as isize * w, (doff + r) as isize * w))
        .collect()
}
