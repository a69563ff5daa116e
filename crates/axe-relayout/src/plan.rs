//! Planning and executing a relayout.
//!
//! The plan picks the dimension whose destination offsets are most contiguous as the innermost loop. When
//! the source is contiguous along the same dimension, each outer index copies maximal runs (where both
//! sides advance by one element) as block copies. When the source is contiguous along another dimension
//! (a transpose, or a sub-tile that interleaves rows such as bf16's `(2,1)`), the two dimensions are walked
//! in cache-sized blocks so reads and writes both stay in cache. The outer loops run in parallel. Sub-byte
//! elements are moved bit by bit.

#![allow(unsafe_code)]

use std::fmt;

use rayon::prelude::*;

use crate::error::{RelayoutError, Result};
use crate::tensor::TensorLayout;

/// Options for [`relayout`].
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Fill the destination's padding slots with zeros (otherwise they are left as they were).
    pub zero_padding: bool,
    /// Worker threads (0: all available).
    pub threads: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            zero_padding: true,
            threads: 0,
        }
    }
}

/// How the copy is organised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Innermost dimension `dim`; each outer index copies these (start, length) runs as blocks.
    Runs {
        /// The innermost dimension.
        dim: usize,
        /// Runs over it where both sides are contiguous.
        runs: Vec<(usize, usize)>,
    },
    /// Dimensions `dst_inner` (contiguous writes) and `src_inner` (contiguous reads) walked in blocks.
    Blocked {
        /// The dimension the destination is contiguous along.
        dst_inner: usize,
        /// The dimension the source is contiguous along.
        src_inner: usize,
        /// Block edge in elements.
        block: usize,
    },
    /// Element by element, bit by bit (sub-byte elements).
    Bits,
    /// Nothing to move (no elements).
    Empty,
    /// One element (a scalar).
    Scalar,
}

/// What [`relayout`] did or will do.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Bytes per element (0 for sub-byte elements).
    pub element_bytes: usize,
    /// Loop organisation.
    pub mode: Mode,
    /// The outer dimensions, outermost first.
    pub outer: Vec<usize>,
    /// Copies written per element (destination replicas).
    pub copies: usize,
    /// Whether padding is zero-filled first.
    pub zero_fill: bool,
    /// Worker threads.
    pub threads: usize,
}

impl Plan {
    /// What the plan does, in plain words.
    pub fn explain(&self) -> String {
        let mut s = String::new();
        if self.zero_fill {
            s.push_str("zero the destination's padding; ");
        }
        match &self.mode {
            Mode::Runs { dim, runs } => {
                let longest = runs.iter().map(|r| r.1).max().unwrap_or(0);
                s.push_str(&format!(
                    "for every index of dimensions {:?}, copy {} contiguous run(s) along dimension {dim} (longest {} elements, {} bytes) as block copies",
                    self.outer,
                    runs.len(),
                    longest,
                    longest * self.element_bytes
                ));
            }
            Mode::Blocked { dst_inner, src_inner, block } => s.push_str(&format!(
                "walk dimensions {dst_inner} (contiguous writes) and {src_inner} (contiguous reads) in {block}×{block} blocks for every index of dimensions {:?}",
                self.outer
            )),
            Mode::Bits => s.push_str("move each element bit by bit (sub-byte elements)"),
            Mode::Empty => s.push_str("nothing to move"),
            Mode::Scalar => s.push_str("copy the one element"),
        }
        if self.copies > 1 {
            s.push_str(&format!(
                "; write each element {} times (destination replicas)",
                self.copies
            ));
        }
        s.push_str(&format!("; {} thread(s)", self.threads));
        s
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.explain())
    }
}

fn stride(t: &[i64]) -> i64 {
    if t.len() < 2 {
        i64::MAX
    } else {
        (t[1] - t[0]).abs()
    }
}

fn max_offset(l: &TensorLayout) -> i64 {
    l.tables
        .iter()
        .map(|t| t.iter().copied().max().unwrap_or(0))
        .sum::<i64>()
        + l.replicas.iter().copied().max().unwrap_or(0)
}

/// Plans the copy of `src` into `dst` (checks that they describe the same tensor).
pub fn plan(src: &TensorLayout, dst: &TensorLayout, opts: &Options) -> Result<Plan> {
    if src.dims != dst.dims {
        return Err(RelayoutError::Mismatch(format!(
            "dimensions {:?} vs {:?}",
            src.dims, dst.dims
        )));
    }
    if src.bits != dst.bits {
        return Err(RelayoutError::Mismatch(format!(
            "{}-bit vs {}-bit elements",
            src.bits, dst.bits
        )));
    }
    if !dst.injective {
        return Err(RelayoutError::Layout(
            "the destination layout puts several elements in one slot (or could not be checked)"
                .into(),
        ));
    }
    let threads = if opts.threads == 0 {
        rayon::current_num_threads()
    } else {
        opts.threads
    };
    let zero_fill = opts.zero_padding && !dst.dense;
    let rank = src.dims.len();
    let mk = |mode, outer, element_bytes| Plan {
        element_bytes,
        mode,
        outer,
        copies: dst.replicas.len(),
        zero_fill,
        threads,
    };
    if src.count() == 0 {
        return Ok(mk(Mode::Empty, vec![], 0));
    }
    if src.bits % 8 != 0 {
        return Ok(mk(Mode::Bits, (0..rank).collect(), 0));
    }
    let w = (src.bits / 8) as usize;
    if rank == 0 {
        return Ok(mk(Mode::Scalar, vec![], w));
    }
    let big: Vec<usize> = (0..rank).filter(|&i| src.dims[i] > 1).collect();
    if big.is_empty() {
        return Ok(mk(
            Mode::Runs {
                dim: 0,
                runs: vec![(0, 1)],
            },
            vec![],
            w,
        )
        .with_rank(rank));
    }
    let dst_inner = *big
        .iter()
        .min_by_key(|&&i| stride(&dst.tables[i]))
        .unwrap_or(&big[0]);
    let src_inner = *big
        .iter()
        .min_by_key(|&&i| stride(&src.tables[i]))
        .unwrap_or(&big[0]);
    // Outer dimensions: by destination stride, largest first.
    let mut outer: Vec<usize> = (0..rank)
        .filter(|&i| i != dst_inner && i != src_inner)
        .collect();
    outer.sort_by_key(|&i| std::cmp::Reverse(stride(&dst.tables[i]).min(i64::MAX - 1)));
    let runs_of = |d: usize| {
        let (s, t) = (&src.tables[d], &dst.tables[d]);
        let mut runs = Vec::new();
        let mut start = 0;
        for x in 1..=s.len() {
            if x == s.len() || s[x] != s[x - 1] + 1 || t[x] != t[x - 1] + 1 {
                runs.push((start, x - start));
                start = x;
            }
        }
        runs
    };
    let src_contig = stride(&src.tables[src_inner]) == 1;
    if dst_inner == src_inner || !src_contig {
        let mut outer = outer;
        if src_inner != dst_inner {
            outer.push(src_inner);
            outer.sort_by_key(|&i| std::cmp::Reverse(stride(&dst.tables[i]).min(i64::MAX - 1)));
        }
        return Ok(mk(
            Mode::Runs {
                dim: dst_inner,
                runs: runs_of(dst_inner),
            },
            outer,
            w,
        ));
    }
    // Runs as long as a cache line on both sides already? Then block copies beat blocking.
    let runs = runs_of(dst_inner);
    let avg = src.dims[dst_inner] as usize / runs.len().max(1);
    if avg * w >= 256 {
        let mut outer = outer;
        outer.push(src_inner);
        outer.sort_by_key(|&i| std::cmp::Reverse(stride(&dst.tables[i]).min(i64::MAX - 1)));
        return Ok(mk(
            Mode::Runs {
                dim: dst_inner,
                runs,
            },
            outer,
            w,
        ));
    }
    let block = (4096 / w).clamp(8, 64);
    Ok(mk(
        Mode::Blocked {
            dst_inner,
            src_inner,
            block,
        },
        outer,
        w,
    ))
}

impl Plan {
    fn with_rank(mut self, rank: usize) -> Plan {
        self.outer = (1..rank).collect();
        self
    }
}

/// A destination pointer shared by the workers. Every write goes to a slot that only one logical
/// element maps to (the destination is checked injective) and that lies inside the buffer (checked
/// before any byte moves), so concurrent writes never touch the same bytes.
#[derive(Clone, Copy)]
struct Dst(*mut u8);
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
    let plan = plan(src_layout, dst_layout, opts)?;
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
        if max_offset(l) >= l.slots as i64 {
            return Err(RelayoutError::Layout(format!(
                "the {name} layout addresses past its {} slots",
                l.slots
            )));
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(plan.threads)
        .build()
        .map_err(|e| RelayoutError::Layout(format!("starting {} threads: {e}", plan.threads)))?;
    pool.install(|| {
        if plan.zero_fill {
            let n = dst_layout.bytes() as usize;
            dst[..n].par_chunks_mut(1 << 20).for_each(|c| c.fill(0));
        }
        execute(&plan, src, src_layout, dst, dst_layout);
    });
    Ok(plan)
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

#[inline(always)]
unsafe fn copy_element(src: *const u8, dst: *mut u8, w: usize) {
    match w {
        1 => *dst = *src,
        2 => (dst as *mut u16).write_unaligned((src as *const u16).read_unaligned()),
        4 => (dst as *mut u32).write_unaligned((src as *const u32).read_unaligned()),
        8 => (dst as *mut u64).write_unaligned((src as *const u64).read_unaligned()),
        16 => (dst as *mut u128).write_unaligned((src as *const u128).read_unaligned()),
        _ => std::ptr::copy_nonoverlapping(src, dst, w),
    }
}

fn execute(plan: &Plan, src: &[u8], s: &TensorLayout, dst: &mut [u8], d: &TensorLayout) {
    let sp = src.as_ptr() as usize;
    let dp = Dst(dst.as_mut_ptr());
    let s0 = s.replicas[0];
    let w = plan.element_bytes;
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
            let bits = s.bits as i64;
            let all: Vec<usize> = (0..s.dims.len()).collect();
            let count = s.count() as usize;
            for_outer(&all, s, d, 0, count, |so, doff| {
                for r in &d.replicas {
                    for b in 0..bits {
                        let from = (so + s0) * bits + b;
                        let to = (doff + r) * bits + b;
                        let bit = (src[(from / 8) as usize] >> (from % 8)) & 1;
                        let byte = &mut dst[(to / 8) as usize];
                        *byte = (*byte & !(1 << (to % 8))) | (bit << (to % 8));
                    }
                }
            });
        }
        Mode::Runs { dim, runs } => {
            let (st, dt) = (&s.tables[*dim], &d.tables[*dim]);
            let chunk = (outer_count / (plan.threads * 8).max(1)).max(1);
            (0..outer_count.div_ceil(chunk))
                .into_par_iter()
                .for_each(|c| {
                    let dp = dp;
                    let start = c * chunk;
                    let n = chunk.min(outer_count - start);
                    for_outer(&plan.outer, s, d, start, n, |sb, db| {
                        for &(x, len) in runs {
                            let so = (sb + st[x] + s0) as usize * w;
                            for r in &d.replicas {
                                let doff = (db + dt[x] + r) as usize * w;
                                // SAFETY: offsets were checked to lie inside both buffers; the destination
                                // slots of distinct (element, copy) pairs are distinct (see `Dst`).
                                unsafe {
                                    std::ptr::copy_nonoverlapping(
                                        (sp + so) as *const u8,
                                        dp.0.add(doff),
                                        len * w,
                                    )
                                };
                            }
                        }
                    });
                });
        }
        Mode::Blocked {
            dst_inner,
            src_inner,
            block,
        } => {
            let (a, b, bs) = (*dst_inner, *src_inner, *block);
            let (na, nb) = (s.dims[a] as usize, s.dims[b] as usize);
            let (sa, da, sbt, dbt) = (&s.tables[a], &d.tables[a], &s.tables[b], &d.tables[b]);
            let blocks_b = nb.div_ceil(bs);
            let work = outer_count * blocks_b;
            (0..work).into_par_iter().with_min_len(4).for_each(|item| {
                let dp = dp;
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
                                        copy_element((sp + so) as *const u8, dp.0.add(doff), w)
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
