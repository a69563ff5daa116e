//! Planning a relayout (executing the plan is `execute/`).
//!
//! The plan picks the dimension whose destination offsets are most contiguous as the innermost loop. When
//! the source is contiguous along the same dimension, each outer index copies maximal runs (where both
//! sides advance by one element) as block copies ([`Mode::Runs`]). When the source is contiguous along
//! another dimension, the two dimensions are moved together by a kernel ([`Mode::Blocked`]): a k-way
//! interleave for a sub-tile that puts rows side by side such as bf16's `(2,1)`, a tiled register
//! transpose, or element by element. Pred bytes into `E(1)` bits and back have their own kernels; other
//! sub-byte moves go bit by bit. The outer loops run in parallel; the kernels live in `kernels/`, a file per family.

#![allow(unsafe_code)]

use crate::error::{RelayoutError, Result};
use crate::kernels::{self, Isa};
use crate::tensor::TensorLayout;

mod explain;
mod tables;

pub(crate) use tables::{affine, group_step, offset_range, runs_where};
use tables::{pack_factor, period, stride};

/// Options for [`relayout`](crate::relayout).
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Fill the destination's padding slots with zeros (otherwise they are left as they were).
    pub zero_padding: bool,
    /// Worker threads (0: all available, or one for relayouts under [`PARALLEL_MIN_BYTES`]), at most
    /// [`MAX_THREADS`]. One thread runs on the caller's.
    pub threads: usize,
    /// Write with non-temporal stores, which bypass the cache (`None`: when the destination is at
    /// least [`STREAM_MIN_BYTES`], or source and destination together twice that).
    pub streaming: Option<bool>,
    /// The kernels' instruction set (`None`: the best this processor runs; others are for comparing).
    pub isa: Option<Isa>,
    /// The side a run copy walks in order where the layouts let it walk either (`None`: this
    /// processor's, [`Straight::preferred`]).
    pub walk: Option<Straight>,
}

/// The most worker threads [`Options::threads`] may ask for.
pub const MAX_THREADS: usize = 1024;

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
            walk: None,
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
        /// With portable kernels, where a tile holds a whole plane (one outer index's transpose): how
        /// many consecutive outer indices' planes go through the buffer at once, each destination row
        /// of them copied out together (1: one plane at a time).
        planes: usize,
        /// Streamed into destination rows that are not whole cache lines apart: each tile goes
        /// through a buffer and holds back the partial line each destination row ends on for the
        /// next tile along that row, so that lines are written whole.
        carried: bool,
    },
    /// Anything else: square blocks of this edge, element by element.
    Elements {
        /// Block edge.
        edge: usize,
    },
}

/// A side of a relayout that its loops walk in order, from start to end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Straight {
    /// The source: reads go on where the last ones stopped.
    Source,
    /// The destination: writes go on where the last ones stopped.
    Destination,
}

impl Straight {
    /// The side this processor's run copies walk in order where they may walk either: the destination
    /// on Intel processors, the source on others. Measured on the bench's copies of 512-byte runs (one
    /// thread, non-temporal stores): on an Intel Xeon (Emerald Rapids) writing in order is 1.2× as fast
    /// as reading in order (into `T(8,128)`: 1.05× memcpy against 0.85×; out of it: 1.03× against
    /// 0.84×), while on an AMD Zen 4 reading in order was 1.2–1.4× as fast.
    ///
    /// The processor is asked once (CPUID traps to the hypervisor in a virtual machine, costing
    /// microseconds), then the answer is kept.
    pub fn preferred() -> Straight {
        static PREFERRED: std::sync::OnceLock<Straight> = std::sync::OnceLock::new();
        *PREFERRED.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            {
                // SAFETY: CPUID leaf 0 exists on every x86-64 processor.
                #[allow(unused_unsafe)]
                let id = unsafe { std::arch::x86_64::__cpuid(0) };
                let vendor = [id.ebx, id.edx, id.ecx].map(u32::to_le_bytes);
                if vendor.concat() == b"GenuineIntel" {
                    return Straight::Destination;
                }
            }
            Straight::Source
        })
    }
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
    /// With `straight`, the loops walk one side whole, in order, instead (it is row-major up to a
    /// permutation of its dimensions), and the runs land on the other side wherever that takes them.
    Runs {
        /// The innermost dimension.
        dim: usize,
        /// Runs over it where both sides are contiguous.
        runs: Vec<(usize, usize)>,
        /// The dimension walked in groups of rows, and the group size.
        rows: Option<(usize, usize)>,
        /// The dimension walked between the outer dimensions and the runs.
        across: Option<usize>,
        /// The side the loops walk straight through, from start to end, if any.
        straight: Option<Straight>,
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

/// What [`relayout`](crate::relayout) did or will do.
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

/// Plans the copy of `src` into `dst` (checks that they describe the same tensor).
pub fn plan(src: &TensorLayout, dst: &TensorLayout, opts: &Options) -> Result<Plan> {
    if src.dims != dst.dims {
        return Err(RelayoutError::Mismatch(format!(
            "dimensions [{}] vs [{}]",
            join(&src.dims),
            join(&dst.dims)
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
    if opts.threads > MAX_THREADS {
        return Err(RelayoutError::Layout(format!(
            "{} worker threads asked for; a relayout takes at most {MAX_THREADS}",
            opts.threads
        )));
    }
    let threads = match opts.threads {
        0 if src.bytes().saturating_add(dst.bytes()) < PARALLEL_MIN_BYTES => 1,
        0 => rayon::current_num_threads(),
        n => n,
    };
    let zero_fill = if !opts.zero_padding || dst.dense {
        ZeroFill::No
    } else if dst.zeroes_padding_alone() {
        ZeroFill::Padding {
            slots: dst.padding_slots(),
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
        let walk = opts.walk.unwrap_or_else(Straight::preferred);
        let (mode, outer) = runs_mode(src, dst, dim, runs, outer, w, walk);
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
    } else if let (Some(step), Some(dstep), Some(sstep), Some(dpitch)) = transpose {
        let pitch = step.unsigned_abs() as usize * w;
        let (na, nb) = (src.dims[dst_inner] as usize, src.dims[src_inner] as usize);
        // Streamed into destination rows that are not whole cache lines apart, and long enough to
        // gain: tiles that carry each row's partial last line on to the next (see
        // `kernels::transpose_carried`).
        let carried = streaming
            && kernels::carries(isa)
            && dst.replicas.len() == 1
            && (dstep, sstep) == (1, 1)
            && !(dpitch.unsigned_abs() as usize * w).is_multiple_of(64)
            && na * w >= kernels::CARRIED_MIN_ROW;
        if carried {
            let (ta, tb) = kernels::carried_tile(w);
            Block::Transpose {
                tile: (ta.min(na.max(1)), tb),
                staged: None,
                planes: 1,
                carried: true,
            }
        } else if kernels::staged(w, dst.bytes()) && dstep == 1 {
            // Tiles across consecutive outer indices where one index's columns are fewer than a tile's.
            let (rows, cols) = kernels::STAGED_TILE;
            let outer_count: usize = outer.iter().map(|&i| src.dims[i] as usize).product();
            let span = (cols / nb).clamp(1, outer_count.max(1));
            Block::Transpose {
                tile: (rows, cols.min(nb)),
                staged: Some(span),
                planes: 1,
                carried: false,
            }
        } else {
            let tile = kernels::transpose_tile(pitch, isa);
            let outer_count: usize = outer.iter().map(|&i| src.dims[i] as usize).product();
            let planes = if isa == Isa::Portable && na <= tile.0 && nb <= tile.1 {
                kernels::portable_planes((na, nb, w), outer_count)
            } else {
                1
            };
            Block::Transpose {
                tile,
                staged: None,
                planes,
                carried: false,
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

/// The loops of a run copy along `dim`: the side `walk` names walked straight through where its layout
/// allows; otherwise the outer dimensions by destination stride, largest first, the innermost of them
/// walked in groups of rows, and the source's next dimension out walked just outside the runs when that
/// keeps reads going forward.
fn runs_mode(
    s: &TensorLayout,
    d: &TensorLayout,
    dim: usize,
    runs: Vec<(usize, usize)>,
    mut outer: Vec<usize>,
    w: usize,
    walk: Straight,
) -> (Mode, Vec<usize>) {
    let key = |t: &[i64]| stride(t).min(i64::MAX - 1);
    // A side that these loops can walk straight through, in order (row-major up to a permutation, the
    // runs in order along its unit-stride dimension): walk it so, whole runs landing wherever they go on
    // the other side. Which side, where both could be, is the processor's (`Straight::preferred`).
    // The destination is walked so only where the reads of consecutive writes lie within a page (the
    // runs of one row of a tile): from rows further apart (`f32[64,512,32,128]` into `{3,1,2,0}`,
    // 16 KiB), each read starts a page cold and the groups below measured 1.3× as fast. Where it is not,
    // the groups still write the destination in order, tile by tile.
    let mut by_source = outer.clone();
    by_source.sort_by_key(|&i| std::cmp::Reverse(key(&s.tables[i])));
    outer.sort_by_key(|&i| std::cmp::Reverse(key(&d.tables[i])));
    let straight = match walk {
        Straight::Source if walks_straight_through(s, dim, &runs, &by_source) => {
            Some((Straight::Source, by_source))
        }
        Straight::Destination
            if walks_straight_through(d, dim, &runs, &outer)
                && outer
                    .last()
                    .is_none_or(|&a| (key(&s.tables[a]) as usize).saturating_mul(w) <= 4096) =>
        {
            Some((Straight::Destination, outer.clone()))
        }
        _ => None,
    };
    if let Some((side, mut order)) = straight {
        let across = order.pop();
        return (
            Mode::Runs {
                dim,
                runs,
                rows: None,
                across,
                straight: Some(side),
            },
            order,
        );
    }
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
            straight: None,
        },
        outer,
    )
}

/// Whether copying `runs` along `dim`, inside loops over `order` (outermost first), walks the side laid
/// out as `s` from its start to its end in order: every table evenly spaced, `dim` contiguous with its
/// runs in order and covering it, and each dimension's spacing the extent of everything inside it.
fn walks_straight_through(
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

/// `4,4`: numbers joined as the shape notation writes dims.
fn join<T: ToString>(v: &[T]) -> String {
    v.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}
