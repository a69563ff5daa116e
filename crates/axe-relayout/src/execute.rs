//! Executing a plan: bounds checked first, padding zero-filled, then the outer loops run in parallel over
//! disjoint parts of the destination, each calling the kernel its [`Mode`] names.

#![allow(unsafe_code)]

use rayon::prelude::*;

use crate::error::{RelayoutError, Result};
use crate::kernels::{self, copy_element, Isa};
use crate::plan::*;
use crate::tensor::TensorLayout;

/// A destination pointer shared by the workers. Every write goes to a slot that only one logical
/// element maps to (the destination is checked injective) and that lies inside the buffer (checked
/// before any byte moves), so concurrent writes never touch the same bytes.
#[derive(Clone, Copy)]
struct Dst(*mut u8);
impl Dst {
    /// The pointer (a method, so closures capture the whole `Dst`, which is `Sync`).
    fn ptr(self) -> *mut u8 {
        self.0
    }
}

unsafe impl Send for Dst {}
unsafe impl Sync for Dst {}

/// Writes `src` (laid out as `src_layout`) into `dst` (laid out as `dst_layout`): every logical element,
/// every destination copy; padding zero-filled unless `opts.zero_padding` is off. Sizes are checked
/// before any byte moves. Returns the plan it followed.
///
/// ```
/// use axe_relayout::{relayout, Options, TensorLayout};
/// let row_major = axe_xla::parse_shape("u8[3,5]{1,0}")?;
/// let tiled = axe_xla::parse_shape("u8[3,5]{1,0:T(2,2)}")?;
/// let (a, b) = (TensorLayout::from_xla(row_major.as_array().unwrap())?, TensorLayout::from_xla(tiled.as_array().unwrap())?);
/// let src: Vec<u8> = (0..15).collect();
/// let mut dst = vec![0xff; b.bytes() as usize];
/// relayout(&src, &a, &mut dst, &b, &Options::default())?;
/// assert_eq!(dst[..8], [0, 1, 5, 6, 2, 3, 7, 8]);
/// assert_eq!(dst[9], 0, "padding is zero-filled");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn relayout(
    src: &[u8],
    src_layout: &TensorLayout,
    dst: &mut [u8],
    dst_layout: &TensorLayout,
    opts: &Options,
) -> Result<Plan> {
    // Sizes and bounds first: nothing is planned or allocated for buffers that cannot hold their layouts.
    if (src.len() as u64) < src_layout.bytes() {
        return Err(RelayoutError::Buffer(format!(
            "the source has {} bytes, its layout needs {}",
            src.len(),
            src_layout.bytes()
        )));
    }
    if (dst.len() as u64) < dst_layout.bytes() {
        return Err(RelayoutError::Buffer(format!(
            "the destination has {} bytes, its layout needs {}",
            dst.len(),
            dst_layout.bytes()
        )));
    }
    for (l, name) in [(src_layout, "source"), (dst_layout, "destination")] {
        match offset_range(l) {
            Some((lo, hi)) if lo >= 0 && (hi as u64) < l.slots => {}
            // No element: nothing is addressed.
            _ if l.count() == 0 => {}
            _ => {
                return Err(RelayoutError::Layout(format!(
                    "the {name} layout addresses outside its {} slots",
                    l.slots
                )))
            }
        }
    }
    let plan = plan(src_layout, dst_layout, opts)?;
    // Sub-byte elements that end inside a byte leave slack bits there, outside every slot: zeroed like
    // padding (the elements sharing the byte are written after).
    if opts.zero_padding && plan.zero_fill == ZeroFill::No && !dst_layout.bits.is_multiple_of(8) {
        if let Some(last) = (dst_layout.bytes() as usize)
            .checked_sub(1)
            .and_then(|i| dst.get_mut(i))
        {
            *last = 0;
        }
    }
    // One thread runs on the caller's; more on a kept pool.
    let mut run = || {
        let (isa, stream) = (plan.isa, plan.streaming);
        match plan.zero_fill {
            ZeroFill::No => {}
            ZeroFill::Padding { .. } => {
                let w = (dst_layout.bits / 8) as usize;
                let parts = plan.threads * 4;
                let dp = Dst(dst.as_mut_ptr());
                for_items(&plan, parts, 1, |part| {
                    dst_layout.padding_runs(part, parts, |at, len| {
                        // SAFETY: the padded tables were checked to stay inside the slots, and the runs
                        // of distinct parts are disjoint.
                        unsafe {
                            kernels::zero(
                                isa,
                                stream,
                                dp.ptr().add(at as usize * w),
                                len as usize * w,
                            )
                        }
                    });
                });
            }
            ZeroFill::Whole => {
                let n = dst_layout.bytes() as usize;
                let dp = Dst(dst.as_mut_ptr());
                let chunk = 1 << 20;
                for_items(&plan, n.div_ceil(chunk), 1, |i| {
                    let len = chunk.min(n - i * chunk);
                    // SAFETY: the chunks are disjoint and inside the buffer's `n` bytes.
                    unsafe { kernels::zero(isa, stream, dp.ptr().add(i * chunk), len) };
                });
            }
        }
        execute(&plan, src, src_layout, dst, dst_layout);
    };
    if plan.threads <= 1 {
        run();
    } else {
        pool(plan.threads)?.install(run);
    }
    Ok(plan)
}

/// The destination rows one item of a carried transpose takes at most (see
/// `kernels::transpose_carried`): each holds back up to a cache line, so the items' held-back bytes
/// stay within L2 (64 KiB each).
#[cfg(target_arch = "x86_64")]
const CARRIED_ROWS: usize = 1024;

/// Calls `f` for every item in `0..n`: on the calling thread with one thread, else shared among the
/// current pool's workers in chunks of at least `min_len`. Each share ends with a [`kernels::fence`]
/// (one per share, not per item: a fence waits for every store in flight).
fn for_items(plan: &Plan, n: usize, min_len: usize, f: impl Fn(usize) + Sync + Send) {
    /// Fences the non-temporal stores of the share it belongs to when dropped, at the share's end.
    struct Fence(Isa, bool);
    impl Drop for Fence {
        fn drop(&mut self) {
            kernels::fence(self.0, self.1);
        }
    }
    let fence = || Fence(plan.isa, plan.streaming);
    if plan.threads <= 1 {
        let _fence = fence();
        (0..n).for_each(f);
    } else {
        (0..n)
            .into_par_iter()
            .with_min_len(min_len)
            .for_each_init(fence, |_, item| f(item));
    }
}

/// A pool of `threads` workers, started once per size and kept: starting threads costs more than a
/// small relayout.
fn pool(threads: usize) -> Result<std::sync::Arc<rayon::ThreadPool>> {
    use std::sync::{Arc, Mutex, OnceLock};
    static POOLS: OnceLock<Mutex<Vec<Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.iter().find(|p| p.current_num_threads() == threads) {
        return Ok(p.clone());
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| RelayoutError::Layout(format!("starting {threads} threads: {e}")))?;
    let p = Arc::new(p);
    pools.push(p.clone());
    Ok(p)
}

/// Moves the low min(source, destination) bits of one element from slot `from.0` of `from.1`-bit slots
/// to slot `to.0` of `to.1`-bit slots, clearing the destination's other bits.
fn move_bits(src: &[u8], dst: &mut [u8], (from, sbits): (i64, u32), (to, dbits): (i64, u32)) {
    let (sbits, dbits) = (i64::from(sbits), i64::from(dbits));
    for b in 0..dbits {
        let bit = if b < sbits {
            let at = from * sbits + b;
            (src[(at / 8) as usize] >> (at % 8)) & 1
        } else {
            0
        };
        let at = to * dbits + b;
        let byte = &mut dst[(at / 8) as usize];
        *byte = (*byte & !(1 << (at % 8))) | (bit << (at % 8));
    }
}

/// Iterates the multi-indices of `dims` (in the given order, last fastest) from flat position `start`
/// for `count` steps, calling `f(src_base, dst_base)` with the summed table offsets.
fn for_outer(
    order: &[usize],
    s: &TensorLayout,
    d: &TensorLayout,
    start: usize,
    count: usize,
    mut f: impl FnMut(i64, i64),
) {
    if count == 1 {
        // One index (the common case, once per work item): no index vector to keep.
        let (mut sb, mut db, mut rest) = (0, 0, start);
        for &i in order.iter().rev() {
            let n = s.dims[i] as usize;
            sb += s.tables[i][rest % n];
            db += d.tables[i][rest % n];
            rest /= n;
        }
        return f(sb, db);
    }
    let dims: Vec<usize> = order.iter().map(|&i| s.dims[i] as usize).collect();
    let mut idx = vec![0usize; order.len()];
    let mut rest = start;
    for k in (0..order.len()).rev() {
        idx[k] = rest % dims[k];
        rest /= dims[k];
    }
    for _ in 0..count {
        let sb: i64 = order.iter().zip(&idx).map(|(&i, &x)| s.tables[i][x]).sum();
        let db: i64 = order.iter().zip(&idx).map(|(&i, &x)| d.tables[i][x]).sum();
        f(sb, db);
        for k in (0..order.len()).rev() {
            idx[k] += 1;
            if idx[k] < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

fn execute(plan: &Plan, src: &[u8], s: &TensorLayout, dst: &mut [u8], d: &TensorLayout) {
    let sp = src.as_ptr() as usize;
    let dp = Dst(dst.as_mut_ptr());
    let s0 = s.replicas[0];
    let w = plan.element_bytes;
    let (isa, stream) = (plan.isa, plan.streaming);
    let outer_count: usize = plan.outer.iter().map(|&i| s.dims[i] as usize).product();
    match &plan.mode {
        Mode::Empty => {}
        Mode::Scalar => {
            let so = s0 as usize * w;
            for r in &d.replicas {
                let doff = *r as usize * w;
                dst[doff..doff + w].copy_from_slice(&src[so..so + w]);
            }
        }
        Mode::Bits => {
            // Sequential: neighbouring elements share bytes.
            let all: Vec<usize> = (0..s.dims.len()).collect();
            for_outer(&all, s, d, 0, s.count() as usize, |so, doff| {
                for r in &d.replicas {
                    move_bits(src, dst, (so + s0, s.bits), (doff + r, d.bits));
                }
            });
        }
        Mode::PackBits {
            dst_inner,
            src_inner,
            k,
        }
        | Mode::UnpackBits {
            dst_inner,
            src_inner,
            k,
        } => {
            let packing = matches!(plan.mode, Mode::PackBits { .. });
            let k = *k;
            // The dimension with k indices side by side in bits (g), the other one (r).
            let (gd, rd) = if packing {
                (*dst_inner, *src_inner)
            } else {
                (*src_inner, *dst_inner)
            };
            let n = s.dims[gd] as usize;
            let (sg, dg, sr, dr) = (&s.tables[gd], &d.tables[gd], &s.tables[rd], &d.tables[rd]);
            let groups = n.div_ceil(k);
            // A group of k rows goes through the kernel when it is whole, evenly spaced on the byte side,
            // side by side on the bit side, and starts on a byte: then it owns the bytes it touches.
            let (steps, runs): (Vec<Option<i64>>, _) = if packing {
                let steps = (0..groups).map(|g| group_step(g, k, n, dg, sg, d.replicas.len()));
                (steps.collect(), runs_where(dr, sr, k as i64, 1))
            } else {
                let steps = (0..groups).map(|g| group_step(g, k, n, sg, dg, d.replicas.len()));
                (steps.collect(), runs_where(sr, dr, k as i64, 1))
            };
            // (source slot, destination slot) of a group's first element in a run.
            let at = |sbase: i64, dbase: i64, g: usize, r0: usize| {
                (
                    sbase + s0 + sg[g * k] + sr[r0],
                    dbase + d.replicas[0] + dg[g * k] + dr[r0],
                )
            };
            let bit_side = |(so, doff): (i64, i64)| if packing { doff } else { so };
            for_items(plan, outer_count * groups, 4, |item| {
                let (o, g) = (item / groups, item % groups);
                let Some(row) = steps[g] else { return };
                for_outer(&plan.outer, s, d, o, 1, |sbase, dbase| {
                    for &(r0, len) in &runs {
                        let (so, doff) = at(sbase, dbase, g, r0);
                        if bit_side((so, doff)) % 8 != 0 {
                            continue;
                        }
                        // SAFETY: as above; the group's bytes are its own (see `group_step`).
                        unsafe {
                            if packing {
                                kernels::pack_bits(
                                    isa,
                                    stream,
                                    (sp + so as usize) as *const u8,
                                    row as usize,
                                    dp.ptr().add(doff as usize / 8),
                                    (k, len),
                                )
                            } else {
                                kernels::unpack_bits(
                                    isa,
                                    stream,
                                    (sp + so as usize / 8) as *const u8,
                                    dp.ptr().add(doff as usize),
                                    row as usize,
                                    (k, len),
                                )
                            }
                        };
                    }
                });
            });
            // Then, one at a time, the elements the kernel left: ragged groups and unaligned runs.
            for item in 0..outer_count * groups {
                let (o, g) = (item / groups, item % groups);
                let xs = g * k..((g + 1) * k).min(n);
                for_outer(&plan.outer, s, d, o, 1, |sbase, dbase| {
                    for &(r0, len) in &runs {
                        if steps[g].is_some() && bit_side(at(sbase, dbase, g, r0)) % 8 == 0 {
                            continue;
                        }
                        for y in r0..r0 + len {
                            for x in xs.clone() {
                                let so = sbase + sr[y] + sg[x] + s0;
                                for r in &d.replicas {
                                    let to = dbase + dr[y] + dg[x] + r;
                                    move_bits(src, dst, (so, s.bits), (to, d.bits));
                                }
                            }
                        }
                    }
                });
            }
        }
        Mode::Runs {
            dim,
            runs,
            rows,
            across,
            ..
        } => {
            let (st, dt) = (&s.tables[*dim], &d.tables[*dim]);
            let (od, k) = rows.unwrap_or((*dim, 1));
            let n_od = if rows.is_some() {
                s.dims[od] as usize
            } else {
                1
            };
            let groups = n_od.div_ceil(k);
            let n_across = across.map_or(1, |a| s.dims[a] as usize);
            // Split `across` into chunks when the other loops leave too few work items to share.
            let items = outer_count * groups;
            let chunks = (plan.threads * 16)
                .div_ceil(items.max(1))
                .clamp(1, n_across);
            let per_chunk = n_across.div_ceil(chunks);
            let work = items * chunks;
            let min_len = (work / (plan.threads * 16)).clamp(1, 64);
            for_items(plan, work, min_len, |item| {
                let (o, g, c) = (
                    item / (groups * chunks),
                    item / chunks % groups,
                    item % chunks,
                );
                for_outer(&plan.outer, s, d, o, 1, |sb, db| {
                    let ys = c * per_chunk..((c + 1) * per_chunk).min(n_across);
                    for y in ys {
                        let (sy, dy) = match across {
                            Some(a) => (sb + s.tables[*a][y], db + d.tables[*a][y]),
                            None => (sb, db),
                        };
                        for &(x, len) in runs {
                            for row in g * k..((g + 1) * k).min(n_od) {
                                let (so_row, do_row) = match rows {
                                    Some(_) => (s.tables[od][row], d.tables[od][row]),
                                    None => (0, 0),
                                };
                                let so = (sy + so_row + st[x] + s0) as usize * w;
                                for r in &d.replicas {
                                    let doff = (dy + do_row + dt[x] + r) as usize * w;
                                    // SAFETY: offsets were checked to lie inside both buffers; the
                                    // destination slots of distinct (element, copy) pairs are distinct
                                    // (see `Dst`).
                                    unsafe {
                                        kernels::copy(
                                            isa,
                                            stream,
                                            (sp + so) as *const u8,
                                            dp.ptr().add(doff),
                                            len * w,
                                        )
                                    };
                                }
                            }
                        }
                    }
                });
            });
        }
        Mode::Blocked {
            dst_inner,
            src_inner,
            kernel,
        } => {
            let (a, b) = (*dst_inner, *src_inner);
            let (na, nb) = (s.dims[a] as usize, s.dims[b] as usize);
            let (sa, da, sbt, dbt) = (&s.tables[a], &d.tables[a], &s.tables[b], &d.tables[b]);
            // The slow path: the elements of a rectangle (ys over b, xs over a) one by one, every copy.
            let each = |sbase: i64,
                        dbase: i64,
                        ys: std::ops::Range<usize>,
                        xs: std::ops::Range<usize>| {
                for y in ys {
                    for x in xs.clone() {
                        let so = (sbase + sbt[y] + s0 + sa[x]) as usize * w;
                        for r in &d.replicas {
                            let doff = (dbase + dbt[y] + da[x] + r) as usize * w;
                            // SAFETY: as above.
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
                                let (from, to) =
                                    ((sp + so) as *const u8, dp.ptr().wrapping_add(doff));
                                let row = row as usize * w;
                                // SAFETY: as above; the k rows and the packed run lie inside the
                                // buffers (the group is whole and evenly spaced, see `group_step`).
                                unsafe {
                                    if packing {
                                        kernels::interleave(isa, stream, from, row, to, (k, len, w))
                                    } else {
                                        kernels::deinterleave(
                                            isa,
                                            stream,
                                            from,
                                            to,
                                            row,
                                            (k, len, w),
                                        )
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
            if let (
                Block::Transpose { tile: (ta, tb), .. },
                Some(ssa),
                Some(sda),
                Some(ssb),
                Some(sdb),
            ) = (*kernel, affine(sa), affine(da), affine(sbt), affine(dbt))
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
                                    unsafe {
                                        copy_element((sp + so) as *const u8, dp.ptr().add(doff), w)
                                    };
                                }
                            }
                        }
                    }
                });
            });
        }
    }
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
