//! Executing a plan: bounds checked first, padding zero-filled, then the outer loops run in parallel over
//! disjoint parts of the destination, each calling the kernel its [`Mode`] names (two dimensions in tiles:
//! `blocked`).

#![allow(unsafe_code)]

use rayon::prelude::*;

use crate::error::{RelayoutError, Result};
use crate::kernels::{self, copy_element, Isa};
use crate::plan::*;
use crate::tensor::TensorLayout;

mod blocked;

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
    // The padding is found from the destination's padded tables: they must stay inside it too.
    if !dst_layout.padded_in_bounds() {
        return Err(RelayoutError::Layout(format!(
            "the destination's padded tables address outside its {} slots",
            dst_layout.slots
        )));
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
                        // SAFETY: the padded tables were checked to stay inside the slots
                        // (`padded_in_bounds`, above), and the runs of distinct parts are disjoint.
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
/// small relayout. The last [`POOLS_KEPT`] sizes asked for are kept; an older one's threads end
/// once no relayout uses it.
fn pool(threads: usize) -> Result<std::sync::Arc<rayon::ThreadPool>> {
    use std::sync::{Arc, Mutex, OnceLock};
    static POOLS: OnceLock<Mutex<Vec<Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(i) = pools
        .iter()
        .position(|p| p.current_num_threads() == threads)
    {
        let p = pools.remove(i);
        pools.push(p.clone());
        return Ok(p);
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| RelayoutError::Layout(format!("starting {threads} threads: {e}")))?;
    let p = Arc::new(p);
    pools.push(p.clone());
    if pools.len() > POOLS_KEPT {
        pools.remove(0);
    }
    Ok(p)
}

/// How many pools (of different sizes) [`pool`] keeps.
const POOLS_KEPT: usize = 4;

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

/// What the parts of one execution share: the plan, both layouts, where the buffers start.
#[derive(Clone, Copy)]
struct Job<'a> {
    plan: &'a Plan,
    s: &'a TensorLayout,
    d: &'a TensorLayout,
    /// The source's address (as an integer, so that closures sharing it are `Sync`).
    sp: usize,
    dp: Dst,
    /// The source's first replica offset (elements).
    s0: i64,
    /// Bytes an element.
    w: usize,
    isa: Isa,
    stream: bool,
    /// How many indices the outer loops take.
    outer_count: usize,
}

fn execute(plan: &Plan, src: &[u8], s: &TensorLayout, dst: &mut [u8], d: &TensorLayout) {
    let job = Job {
        plan,
        s,
        d,
        sp: src.as_ptr() as usize,
        dp: Dst(dst.as_mut_ptr()),
        s0: s.replicas[0],
        w: plan.element_bytes,
        isa: plan.isa,
        stream: plan.streaming,
        outer_count: plan.outer.iter().map(|&i| s.dims[i] as usize).product(),
    };
    let Job {
        sp,
        dp,
        s0,
        w,
        isa,
        stream,
        outer_count,
        ..
    } = job;
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
                // The item's runs and rows (each row of the group at each destination copy) as
                // offsets from the outer indices' bases, found once; then one call per outer index
                // copies them all (`copy_grid`): a call and the table lookups per run cost more than
                // the copy of a short run.
                let iw = w as isize;
                let at: Vec<_> = runs
                    .iter()
                    .map(|&(x, len)| ((st[x] + s0) as isize * iw, dt[x] as isize * iw, len * w))
                    .collect();
                let mut lines = Vec::with_capacity(k * d.replicas.len());
                for row in g * k..((g + 1) * k).min(n_od) {
                    let (so_row, do_row) = match rows {
                        Some(_) => (s.tables[od][row], d.tables[od][row]),
                        None => (0, 0),
                    };
                    for r in &d.replicas {
                        lines.push((so_row as isize * iw, (do_row + r) as isize * iw));
                    }
                }
                for_outer(&plan.outer, s, d, o, 1, |sb, db| {
                    let ys = c * per_chunk..((c + 1) * per_chunk).min(n_across);
                    for y in ys {
                        let (sy, dy) = match across {
                            Some(a) => (sb + s.tables[*a][y], db + d.tables[*a][y]),
                            None => (sb, db),
                        };
                        let (sy, dy) = (sy as isize * w as isize, dy as isize * w as isize);
                        // SAFETY: every offset (base plus run) was checked to lie inside its buffer;
                        // the destination slots of distinct (element, copy) pairs are distinct (see
                        // `Dst`).
                        unsafe {
                            kernels::copy_grid(
                                isa,
                                stream,
                                (sp as *const u8).wrapping_offset(sy),
                                dp.ptr().wrapping_offset(dy),
                                &at,
                                &lines,
                            )
                        };
                    }
                });
            });
        }
        Mode::Blocked {
            dst_inner,
            src_inner,
            kernel,
        } => blocked::run(&job, (*dst_inner, *src_inner), kernel),
    }
}
