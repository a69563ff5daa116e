//! Planning and executing a relayout.
//!
//! The plan picks the dimension whose destination offsets are most contiguous as the innermost loop. When
//! the source is contiguous along the same dimension, each outer index copies maximal runs (where both
//! sides advance by one element) as block copies ([`Mode::Runs`]). When the source is contiguous along
//! another dimension, the two dimensions are moved together by a kernel ([`Mode::Blocked`]): a k-way
//! interleave for a sub-tile that puts rows side by side such as bf16's `(2,1)`, a tiled register
//! transpose, or element by element. Pred bytes into `E(1)` bits and back have their own kernels; other
//! sub-byte moves go bit by bit. The outer loops run in parallel; the kernels live in `kernels/`, a file per family.

#![allow(unsafe_code)]

use std::fmt;

use rayon::prelude::*;

use crate::error::{RelayoutError, Result};
use crate::kernels::{self, copy_element, Isa};
use crate::tensor::TensorLayout;

/// Options for [`relayout`].
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Fill the destination's padding slots with zeros (otherwise they are left as they were).
    pub zero_padding: bool,
    /// Worker threads (0: all available, or one for relayouts under [`PARALLEL_MIN_BYTES`]). One
    /// thread runs on the caller's.
    pub threads: usize,
    /// Write with non-temporal stores, which bypass the cache (`None`: when the destination is at
    /// least [`STREAM_MIN_BYTES`], or source and destination together twice that).
    pub streaming: Option<bool>,
    /// The kernels' instruction set (`None`: the best this processor runs; others are for comparing).
    pub isa: Option<Isa>,
}

/// Below this many bytes (source and destination together) a relayout with the default thread count
/// runs on the calling thread alone: handing work to other threads costs more than it saves.
pub const PARALLEL_MIN_BYTES: u64 = 1 << 20;

/// The destination size from which writes bypass the cache by default: larger than the caches they
/// would otherwise evict, so the result would not be read from there anyway. A smaller destination is
/// streamed too when the source is large enough that, read through the caches after it, it evicts the
/// destination anyway (source and destination together at least twice this): then caching the writes
/// only adds the reads of the destination's lines before they are overwritten (pred packed into `E(1)`
/// bits, 64 MiB into 8 MiB: about 5% faster streamed).
pub const STREAM_MIN_BYTES: u64 = 16 << 20;

impl Default for Options {
    fn default() -> Self {
        Options {
            zero_padding: true,
            threads: 0,
            streaming: None,
            isa: None,
        }
    }
}

/// How the destination's padding gets its zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZeroFill {
    /// Not at all: the destination has no padding, or the caller keeps it.
    No,
    /// Only the padding slots, found from the layout's structure.
    Padding {
        /// How many slots are padding.
        slots: u64,
    },
    /// The whole destination, before the elements are written (padding without structure to follow).
    Whole,
}

/// How [`Mode::Blocked`] moves its two dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    /// The destination puts `k` consecutive indices of `dst_inner` side by side (bf16's `(2,1)`, s8's
    /// `(4,1)`): `k` source rows interleaved into one stream.
    Interleave {
        /// Rows side by side.
        k: usize,
    },
    /// The source puts `k` consecutive indices of `src_inner` side by side: one stream split into `k`
    /// destination rows.
    Deinterleave {
        /// Rows side by side.
        k: usize,
    },
    /// Both dimensions evenly spaced on both sides: tiles of `tile.0` source rows by `tile.1`
    /// destination rows, transposed in register blocks.
    Transpose {
        /// Tile edges (along `dst_inner`, along `src_inner`).
        tile: (usize, usize),
        /// For source rows far apart: tiles go through a buffer, and each covers this many consecutive
        /// indices of the outer dimensions (so each source row is read in one long burst).
        staged: Option<usize>,
    },
    /// Anything else: square blocks of this edge, element by element.
    Elements {
        /// Block edge.
        edge: usize,
    },
}

/// How the copy is organised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Innermost dimension `dim`; each outer index copies these (start, length) runs as blocks.
    ///
    /// Inside one index of the outer dimensions, the loops are: every index of `across` (if any), every
    /// run, then `rows.1` consecutive indices of dimension `rows.0` (if any). The rows are the
    /// destination's next dimension out (a tile's rows, so each group fills whole tiles in order);
    /// `across` is the source's next dimension out, so that reads go on where the last ones stopped.
    /// With `straight`, the loops read the whole source in order instead (it is row-major up to a
    /// permutation of its dimensions), and the runs are written wherever that takes them.
    Runs {
        /// The innermost dimension.
        dim: usize,
        /// Runs over it where both sides are contiguous.
        runs: Vec<(usize, usize)>,
        /// The dimension walked in groups of rows, and the group size.
        rows: Option<(usize, usize)>,
        /// The dimension walked between the outer dimensions and the runs.
        across: Option<usize>,
        /// Whether the loops read the source straight through, from start to end.
        straight: bool,
    },
    /// Dimensions `dst_inner` (contiguous writes) and `src_inner` (contiguous reads) walked together,
    /// by `kernel`.
    Blocked {
        /// The dimension the destination is contiguous along.
        dst_inner: usize,
        /// The dimension the source is contiguous along.
        src_inner: usize,
        /// How.
        kernel: Block,
    },
    /// Element by element, bit by bit (sub-byte elements).
    Bits,
    /// Bytes (pred) into bits (`E(1)`), where the destination puts `k` consecutive indices of `dst_inner`
    /// side by side and the source is contiguous along `src_inner`: eight bytes make one byte.
    PackBits {
        /// The dimension packed into bits.
        dst_inner: usize,
        /// The dimension the source is contiguous along.
        src_inner: usize,
        /// Bits side by side (a multiple of 8).
        k: usize,
    },
    /// Bits (`E(1)`) into bytes (pred), the reverse of [`Mode::PackBits`]: the source puts `k`
    /// consecutive indices of `src_inner` side by side, the destination is contiguous along `dst_inner`.
    UnpackBits {
        /// The dimension the destination is contiguous along.
        dst_inner: usize,
        /// The dimension packed into bits in the source.
        src_inner: usize,
        /// Bits side by side (a multiple of 8).
        k: usize,
    },
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
    /// How the destination's padding is zero-filled.
    pub zero_fill: ZeroFill,
    /// Worker threads.
    pub threads: usize,
    /// The instruction set of the kernels.
    pub isa: Isa,
    /// Whether writes bypass the cache (non-temporal stores).
    pub streaming: bool,
}

impl Plan {
    /// What the plan does, in plain words.
    pub fn explain(&self) -> String {
        let mut s = String::new();
        match self.zero_fill {
            ZeroFill::No => {}
            ZeroFill::Padding { slots } => {
                s.push_str(&format!("zero the destination's {slots} padding slot(s); "))
            }
            ZeroFill::Whole => s.push_str("zero the whole destination, then "),
        }
        // "for every index of dimensions [..] (and then of dimension a), " or nothing.
        let every = |then: Option<usize>| {
            let mut e = String::new();
            if !self.outer.is_empty() {
                e.push_str(&format!("for every index of dimensions {:?}", self.outer));
            }
            if let Some(a) = then {
                e.push_str(&if e.is_empty() {
                    format!("for every index of dimension {a}")
                } else {
                    format!(" and then of dimension {a}")
                });
            }
            if !e.is_empty() {
                e.push_str(", ");
            }
            e
        };
        match &self.mode {
            Mode::Runs {
                dim,
                runs,
                rows,
                across,
                straight,
            } => {
                let longest = runs.iter().map(|r| r.1).max().unwrap_or(0);
                s.push_str(&every(*across));
                s.push_str(&format!(
                    "copy {} contiguous run(s) along dimension {dim} (longest {} elements, {} bytes) as block copies",
                    runs.len(),
                    longest,
                    longest * self.element_bytes
                ));
                if let Some((r, k)) = rows {
                    s.push_str(&format!(", each for {k} indices of dimension {r} in turn"));
                }
                if *straight {
                    s.push_str(", reading the source straight through");
                }
            }
            Mode::Blocked { dst_inner, src_inner, kernel } => {
                s.push_str(&every(None));
                s.push_str(&match kernel {
                    Block::Interleave { k } => format!(
                        "interleave {k} rows along dimension {src_inner} into one (consecutive indices of dimension {dst_inner} side by side)"
                    ),
                    Block::Deinterleave { k } => format!(
                        "split rows that hold {k} consecutive indices of dimension {src_inner} side by side into {k} rows along dimension {dst_inner}"
                    ),
                    Block::Transpose { tile: (ta, tb), staged: None } => format!(
                        "transpose dimensions {dst_inner} (contiguous writes) and {src_inner} (contiguous reads) in {ta}×{tb} tiles of register blocks"
                    ),
                    Block::Transpose { tile: (ta, tb), staged: Some(span) } => format!(
                        "transpose dimensions {dst_inner} (contiguous writes) and {src_inner} (contiguous reads) in {ta}×{tb} tiles{}, staged through a buffer: register blocks of {} rows at a time in, whole {ta}-element rows out",
                        if *span > 1 { format!(" across {span} consecutive outer indices") } else { String::new() },
                        kernels::STAGED_GROUP
                    ),
                    Block::Elements { edge } => format!(
                        "walk dimensions {dst_inner} (contiguous writes) and {src_inner} (contiguous reads) in {edge}×{edge} blocks, element by element"
                    ),
                });
            }
            Mode::Bits => s.push_str("move each element bit by bit (sub-byte elements or a change of packing)"),
            Mode::PackBits { dst_inner, src_inner, k } => s.push_str(&format!(
                "{}pack {k} bytes along dimension {dst_inner} into {k} bits, all along dimension {src_inner} (ragged edges bit by bit)",
                every(None)
            )),
            Mode::UnpackBits { dst_inner, src_inner, k } => s.push_str(&format!(
                "{}unpack {k} bits along dimension {src_inner} into {k} bytes, all along dimension {dst_inner} (ragged edges bit by bit)",
                every(None)
            )),
            Mode::Empty => s.push_str("nothing to move"),
            Mode::Scalar => s.push_str("copy the one element"),
        }
        if self.copies > 1 {
            s.push_str(&format!(
                "; write each element {} times (destination replicas)",
                self.copies
            ));
        }
        s.push_str(&format!(
            "; {} kernels{}; {} thread(s)",
            self.isa.name(),
            if self.streaming {
                ", non-temporal stores"
            } else {
                ""
            },
            self.threads
        ));
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

/// `k` when `packed` (a dimension's destination table) advances by 1 for groups of `k` (2 ≤ k ≤ 64), and
/// the other dimension advances by `k` in `step_k` and by 1 in `step_1` (so k elements interleave).
fn pack_factor(packed: &[i64], step_k: &[i64], step_1: &[i64]) -> Option<usize> {
    let k = period(packed);
    (stride(packed) == 1
        && (2..=64).contains(&k)
        && step_k.len() >= 2
        && step_k[1] - step_k[0] == k as i64
        && step_1[1] - step_1[0] == 1)
        .then_some(k)
}

/// For the `g`-th group of `k` indices (of `n`) that a kernel moves as k side-by-side rows: the rows'
/// spacing in `strided` when the group is whole, `unit` advances by one within it, `strided` by that
/// constant (non-negative) spacing, and there is one destination copy.
fn group_step(
    g: usize,
    k: usize,
    n: usize,
    unit: &[i64],
    strided: &[i64],
    copies: usize,
) -> Option<i64> {
    let x0 = g * k;
    if x0 + k > n || copies != 1 {
        return None;
    }
    let row = if k > 1 {
        strided[x0 + 1] - strided[x0]
    } else {
        0
    };
    (row >= 0
        && (x0..x0 + k).all(|x| {
            unit[x] - unit[x0] == (x - x0) as i64
                && strided[x] - strided[x0] == (x - x0) as i64 * row
        }))
    .then_some(row)
}

/// Maximal runs where `a` advances by `sa` and `b` by `sb` per index.
fn runs_where(a: &[i64], b: &[i64], sa: i64, sb: i64) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start = 0;
    for x in 1..=a.len() {
        if x == a.len() || a[x] - a[x - 1] != sa || b[x] - b[x - 1] != sb {
            runs.push((start, x - start));
            start = x;
        }
    }
    runs
}

/// The constant step of a table, if it has one.
fn affine(t: &[i64]) -> Option<i64> {
    let step = if t.len() < 2 { 0 } else { t[1] - t[0] };
    t.windows(2).all(|p| p[1] - p[0] == step).then_some(step)
}

/// How many leading entries of a table advance by the same step (the size of a contiguous group).
fn period(t: &[i64]) -> usize {
    if t.len() < 2 {
        return 1;
    }
    let step = t[1] - t[0];
    (1..t.len())
        .find(|&i| t[i] - t[i - 1] != step)
        .unwrap_or(t.len())
        .min(1 << 12)
}

/// The lowest and highest slot any element's copy lands in, as checked sums (`None` past 64 bits).
fn offset_range(l: &TensorLayout) -> Option<(i64, i64)> {
    let sum = |pick: fn(&[i64]) -> i64| {
        l.tables
            .iter()
            .map(|t| pick(t))
            .chain([pick(&l.replicas)])
            .try_fold(0i64, |acc, v| acc.checked_add(v))
    };
    Some((
        sum(|t| t.iter().copied().min().unwrap_or(0))?,
        sum(|t| t.iter().copied().max().unwrap_or(0))?,
    ))
}

/// Plans the copy of `src` into `dst` (checks that they describe the same tensor).
pub fn plan(src: &TensorLayout, dst: &TensorLayout, opts: &Options) -> Result<Plan> {
    if src.dims != dst.dims {
        return Err(RelayoutError::Mismatch(format!(
            "dimensions {:?} vs {:?}",
            src.dims, dst.dims
        )));
    }
    // Element widths may differ only by packing (a sub-byte width on one side, at most a byte on both).
    if src.bits != dst.bits && (src.bits > 8 || dst.bits > 8) {
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
    let threads = match opts.threads {
        0 if src.bytes().saturating_add(dst.bytes()) < PARALLEL_MIN_BYTES => 1,
        0 => rayon::current_num_threads(),
        n => n,
    };
    let zero_fill = if !opts.zero_padding || dst.dense {
        ZeroFill::No
    } else if dst.padded.is_some() && dst.bits.is_multiple_of(8) {
        ZeroFill::Padding {
            slots: dst.slots - dst.count(),
        }
    } else {
        ZeroFill::Whole
    };
    let isa = match opts.isa {
        None => Isa::detect(),
        Some(isa) if isa.supported() => isa,
        Some(isa) => {
            return Err(RelayoutError::Layout(format!(
                "this processor does not run {} instructions",
                isa.name()
            )))
        }
    };
    let streaming = opts.streaming.unwrap_or(
        dst.bytes() >= STREAM_MIN_BYTES
            || src.bytes().saturating_add(dst.bytes()) >= 2 * STREAM_MIN_BYTES,
    );
    let rank = src.dims.len();
    let mk = |mode, outer, element_bytes| Plan {
        element_bytes,
        mode,
        outer,
        copies: dst.replicas.len(),
        zero_fill,
        threads,
        isa,
        streaming,
    };
    if src.count() == 0 {
        return Ok(mk(Mode::Empty, vec![], 0));
    }
    if !src.bits.is_multiple_of(8) || src.bits != dst.bits {
        // Bytes into bits where k consecutive indices sit side by side (pred into `(32,1)` with E(1)).
        let by = |t: &[Vec<i64>]| {
            (0..rank)
                .filter(|&i| src.dims[i] > 1)
                .min_by_key(|&i| stride(&t[i]))
        };
        if let (Some(a), Some(b)) = (by(&dst.tables), by(&src.tables)) {
            let outer = (0..rank).filter(|&i| i != a && i != b).collect();
            let (st, dt) = (&src.tables, &dst.tables);
            // Bytes into bits, or (1, 8) back: the bit side puts k consecutive indices side by side.
            let found = match (src.bits, dst.bits) {
                (8, 1) => pack_factor(&dt[a], &dt[b], &st[b]).map(|k| (true, k)),
                (1, 8) => pack_factor(&st[b], &st[a], &dt[a]).map(|k| (false, k)),
                _ => None,
            };
            if let Some((packing, k)) = found.filter(|&(_, k)| a != b && k.is_multiple_of(8)) {
                let (dst_inner, src_inner) = (a, b);
                let mode = if packing {
                    Mode::PackBits {
                        dst_inner,
                        src_inner,
                        k,
                    }
                } else {
                    Mode::UnpackBits {
                        dst_inner,
                        src_inner,
                        k,
                    }
                };
                return Ok(mk(mode, outer, 0));
            }
        }
        // Sub-byte elements, or packing changes (s4 in bytes to E(4), pred in bytes to E(1)).
        return Ok(mk(Mode::Bits, (0..rank).collect(), 0));
    }
    let w = (src.bits / 8) as usize;
    if rank == 0 {
        return Ok(mk(Mode::Scalar, vec![], w));
    }
    let big: Vec<usize> = (0..rank).filter(|&i| src.dims[i] > 1).collect();
    // Run-copy loops over dimension `dim`, the others outside it (any order: sorted here).
    let runs_plan = |dim: usize, runs: Vec<(usize, usize)>, outer: Vec<usize>| {
        let (mode, outer) = runs_mode(src, dst, dim, runs, outer, w);
        mk(mode, outer, w)
    };
    if big.is_empty() {
        return Ok(runs_plan(0, vec![(0, 1)], (1..rank).collect()));
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
        }
        return Ok(runs_plan(dst_inner, runs_of(dst_inner), outer));
    }
    // Runs as long as a cache line on both sides already? Then block copies beat blocking.
    let runs = runs_of(dst_inner);
    let avg = src.dims[dst_inner] as usize / runs.len().max(1);
    if avg * w >= 256 {
        let mut outer = outer;
        outer.push(src_inner);
        return Ok(runs_plan(dst_inner, runs, outer));
    }
    let (sa, da) = (&src.tables[dst_inner], &dst.tables[dst_inner]);
    let (sb, db) = (&src.tables[src_inner], &dst.tables[src_inner]);
    // A few rows side by side (a sub-tile such as (2,1)) interleave; many, on evenly spaced tables, are
    // a plain transpose, which register blocks do better.
    let transpose = (affine(sa), affine(da), affine(sb), affine(db));
    let few = |k: &usize| *k <= 8 || !matches!(transpose, (Some(_), Some(_), Some(_), Some(_)));
    let kernel = if let Some(k) = pack_factor(da, db, sb).filter(few) {
        Block::Interleave { k }
    } else if let Some(k) = pack_factor(sb, sa, da).filter(few) {
        Block::Deinterleave { k }
    } else if let (Some(step), Some(dstep), Some(_), Some(_)) = transpose {
        let pitch = step.unsigned_abs() as usize * w;
        if kernels::staged(w, dst.bytes()) && dstep == 1 {
            // Tiles across consecutive outer indices where one index's columns are fewer than a tile's.
            let (rows, cols) = kernels::STAGED_TILE;
            let nb = src.dims[src_inner] as usize;
            let outer_count: usize = outer.iter().map(|&i| src.dims[i] as usize).product();
            let span = (cols / nb).clamp(1, outer_count.max(1));
            Block::Transpose {
                tile: (rows, cols.min(nb)),
                staged: Some(span),
            }
        } else {
            Block::Transpose {
                tile: kernels::transpose_tile(pitch),
                staged: None,
            }
        }
    } else {
        Block::Elements {
            edge: (4096 / w).clamp(8, 64),
        }
    };
    Ok(mk(
        Mode::Blocked {
            dst_inner,
            src_inner,
            kernel,
        },
        outer,
        w,
    ))
}

/// The loops of a run copy along `dim`: the outer dimensions by destination stride, largest first; the
/// innermost of them walked in groups of rows, and the source's next dimension out walked just outside
/// the runs when that keeps reads going forward.
fn runs_mode(
    s: &TensorLayout,
    d: &TensorLayout,
    dim: usize,
    runs: Vec<(usize, usize)>,
    mut outer: Vec<usize>,
    w: usize,
) -> (Mode, Vec<usize>) {
    let key = |t: &[i64]| stride(t).min(i64::MAX - 1);
    // A source that these loops can read straight through, in order (row-major up to a permutation, the
    // runs in order along its unit-stride dimension): read it so, whole runs written wherever they go.
    // Measured on the bench's copies from plain sources (into T(8,128), padded, {3,1,2,0}): 1.2–1.4×
    // faster on one thread than ordering for contiguous writes.
    let mut by_source = outer.clone();
    by_source.sort_by_key(|&i| std::cmp::Reverse(key(&s.tables[i])));
    if reads_straight_through(s, dim, &runs, &by_source) {
        let across = by_source.pop();
        return (
            Mode::Runs {
                dim,
                runs,
                rows: None,
                across,
                straight: true,
            },
            by_source,
        );
    }
    outer.sort_by_key(|&i| std::cmp::Reverse(key(&d.tables[i])));
    let rows = outer.pop().map(|od| {
        // A group: where the source holds its rows together (a tile's rows, up to 8), all of them, so
        // each tile is read whole; otherwise at most 4 rows, so there are few read streams, but whole
        // tile rows of the destination where it has tiles (measured on the bench's T(8,128) cases and
        // {3,2,1,0}->{3,1,2,0}).
        let (ps, pd) = (period(&s.tables[od]), period(&d.tables[od]));
        let k = if ps <= 8 { ps.min(pd) } else { pd.min(4) };
        (od, k)
    });
    let across = rows.and_then(|(od, _)| {
        let (at, &sd) = outer
            .iter()
            .enumerate()
            .min_by_key(|(_, &i)| key(&s.tables[i]))?;
        let useful = key(&s.tables[sd]) < key(&s.tables[od])
            && s.dims[sd] > 1
            && key(&s.tables[sd]) as usize * w <= 1 << 16;
        useful.then(|| outer.remove(at))
    });
    (
        Mode::Runs {
            dim,
            runs,
            rows,
            across,
            straight: false,
        },
        outer,
    )
}

/// Whether copying `runs` along `dim`, inside loops over `order` (outermost first), reads the source
/// from its start to its end in order: every table evenly spaced, `dim` contiguous with its runs in
/// order and covering it, and each dimension's spacing the extent of everything inside it.
fn reads_straight_through(
    s: &TensorLayout,
    dim: usize,
    runs: &[(usize, usize)],
    order: &[usize],
) -> bool {
    let whole = runs.windows(2).all(|r| r[0].0 + r[0].1 == r[1].0)
        && runs.first().is_some_and(|r| r.0 == 0)
        && runs
            .last()
            .is_some_and(|r| r.0 + r.1 == s.dims[dim] as usize);
    let mut extent = 1i64;
    whole
        && std::iter::once(&dim).chain(order.iter().rev()).all(|&i| {
            let ok = s.dims[i] == 1 || affine(&s.tables[i]) == Some(extent);
            extent = extent.saturating_mul(s.dims[i] as i64);
            ok
        })
}

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
            _ => {
                return Err(RelayoutError::Layout(format!(
                    "the {name} layout addresses outside its {} slots",
                    l.slots
                )))
            }
        }
    }
    let plan = plan(src_layout, dst_layout, opts)?;
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
            // A staged transpose (bytes only, see `kernels::staged`): both dimensions affine on both
            // sides, tiles through a buffer.
            if let (
                Block::Transpose {
                    tile: (ta, tb),
                    staged: Some(span),
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
                    let first = g * span;
                    let mut bases = Vec::with_capacity(span);
                    for_outer(
                        &plan.outer,
                        s,
                        d,
                        first,
                        span.min(outer_count - first),
                        |sb, db| bases.push((sb, db)),
                    );
                    for r in &d.replicas {
                        let segments: Vec<(isize, isize)> = bases
                            .iter()
                            .map(|&(sb, db)| {
                                let so = (sb + s0 + sa[a0] + sbt[b0]) as isize * w as isize;
                                let doff = (db + da[a0] + dbt[b0] + r) as isize * w as isize;
                                (so, doff)
                            })
                            .collect();
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
