//! Gluon's layout constructors, read from the text Triton prints (`BlockedLayout(size_per_thread=[1, 4],
//! threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])`, `SliceLayout(dim=1, parent=...)`), laid
//! over a tensor shape.
//!
//! * [`GluonLayout::to_linear`] computes the linear layout Triton computes (in-dims `register`, `lane`,
//!   `warp`, `block`; out-dims `dim0..`): per level (registers, then lanes, then warps) the identity along
//!   each tensor dim in `order` (most minor first); a tensor larger than the layout gets more registers
//!   (most minor dim first); a tensor smaller than it has the bases that reach past it set to zero
//!   (broadcast). Every size must be a power of two.
//! * [`GluonLayout::to_axe`] gives the Axe layout over `reg`/`lane`/`warp`/`block` for **any** shape whose
//!   every dim is a whole number of layout tiles or divides the tile (e.g. 48×64 under a 16×32 tile),
//!   which Triton cannot lay out at all; for power-of-two shapes it equals the linear layout's
//!   [`LinearLayout::to_axe`].
//!
//! `NVMMADistributedLayout` (Ampere `[2, 0]` and Hopper `[3, 0]` accumulators, rank 2) and
//! `DotOperandLayout` (the operands of Ampere `mma`, the register operand A of Hopper `wgmma`, and the
//! FMA operands of a `BlockedLayout`) have their linear layouts and, through them, their Axe layouts; so
//! have the shared layouts (in-dim `offset`) `SwizzledSharedLayout` and `NVMMASharedLayout`, whose Axe
//! layouts exist only without a swizzle; `PaddedSharedLayout` (also read as a `#ttg.padded_shared`
//! attribute) has a linear component and an Axe layout of its padded placement. Layouts spread over
//! several CTAs (`cga_layout`) get `block` bases; AMD's `AMDMFMALayout` (32×32, 16×16, 64×4 and 4×64
//! tiles, 32- and 64-bit elements, several tiles per warp, rank 2 or 3) and `AMDWMMALayout` (versions 1
//! to 3 with their instruction shapes, extra register bases, rank 2 or 3) accumulators are laid out as
//! Triton 3.9 lays them out, and so are batched Ampere accumulators and the linear Gluon layouts
//! (`DistributedLinearLayout`, `SharedLinearLayout`) and `mfma` and `wmma` dot operands (batched, with
//! register bases and over CTAs), and the operands of batched NVMMA dots. What Triton refuses (a
//! batched Hopper accumulator among it) is refused with [`TritonError::Gluon`].

use crate::error::{log2_exact, Result, TritonError};
use crate::linear::LinearLayout;
use axe_layout::{Axis, Coord, Iter, Layout};

mod amd;
mod amd_dot;
mod cga;
mod dot;
mod linear_gluon;
mod nvmma;
mod padded;
mod parse;
mod parse_amd;
mod parse_padded;
mod shared;
pub(crate) mod ttgir;
pub use padded::{identity_bases, padded_offset, padded_size};
pub use ttgir::{is_linear_text, is_ttgir, parse_gluon, parse_ttgir};

/// A Gluon layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GluonLayout {
    /// `BlockedLayout(size_per_thread, threads_per_warp, warps_per_cta, order)`.
    Blocked {
        /// Elements per thread along each dim.
        size_per_thread: Vec<u64>,
        /// Threads per warp along each dim.
        threads_per_warp: Vec<u64>,
        /// Warps per CTA along each dim.
        warps_per_cta: Vec<u64>,
        /// Dims from most minor to most major.
        order: Vec<usize>,
    },
    /// `NVMMADistributedLayout(version=[2, 0] | [3, 0], warps_per_cta, instr_shape)`: the accumulator of
    /// Ampere `mma` (instr_shape usually `[16, 8]`, or `[1, 16, 8]` batched) or Hopper `wgmma`
    /// (usually `[16, n, k]`; batched only as the parent of a dot operand, as in Triton 3.9). Any
    /// instruction shape of two or three entries is read; the layouts check the entries they use.
    Nvmma {
        /// Major version: 2 (Ampere) or 3 (Hopper).
        version: u64,
        /// Warps per CTA along each dim.
        warps_per_cta: Vec<u64>,
        /// The instruction's shape.
        instr_shape: Vec<u64>,
    },
    /// `SwizzledSharedLayout(vec, per_phase, max_phase, order)`: shared memory, in-dim `offset`. Along the
    /// two most minor dims (`order[0]` the columns, `order[1]` the rows), row `r` starts its columns XORed
    /// with `vec · ((r / per_phase) mod max_phase)`; further dims follow in `order`.
    SwizzledShared {
        /// Elements swizzled together.
        vec: u64,
        /// Rows sharing one phase.
        per_phase: u64,
        /// Number of phases.
        max_phase: u64,
        /// Dims from most minor to most major.
        order: Vec<usize>,
    },
    /// `DotOperandLayout(operand_index, parent, k_width)`: operand A (`0`, K along dim 1) or B (`1`, K
    /// along dim 0) of a dot whose accumulator is `parent`, an `NVMMADistributedLayout` (`k_width` a power
    /// of two: consecutive K elements per register group; Hopper only for A) or a `BlockedLayout` (FMA,
    /// `k_width = 0`: every thread holds the whole K extent).
    DotOperand {
        /// 0 for the left operand A, 1 for the right operand B.
        operand_index: u64,
        /// The accumulator's layout.
        parent: Box<GluonLayout>,
        /// Elements along K per register group (0 for a blocked parent).
        k_width: u64,
    },
    /// `NVMMASharedLayout(swizzle_byte_width, element_bitwidth, rank, transposed, fp4_padded)`: the shared
    /// memory that TMA and `wgmma`/`tcgen05` read, in-dim `offset`. Rows of `swizzle_byte_width` bytes along
    /// the contiguous dim (the last, or dim 0 when `transposed`) in 8-row core matrices, 16-byte chunks of
    /// row `r` XORed with `(r / (128 / swizzle)) mod (swizzle / 16)`; then further rows, then further
    /// contiguous chunks. Without a swizzle (`0`) it is a plain row-major buffer in TMA blocks of at most
    /// 256 per dim.
    NvmmaShared {
        /// 0, 32, 64 or 128 bytes.
        swizzle_byte_width: u64,
        /// 8, 16, 32 or 64.
        element_bitwidth: u64,
        /// Tensor rank.
        rank: usize,
        /// Contiguous along dim 0 instead of the last dim.
        transposed: bool,
        /// FP4 data padded to bytes (8 real and 8 padding bytes per 16).
        fp4_padded: bool,
    },
    /// `AMDMFMALayout(version, instr_shape, transposed, warps_per_cta, element_bitwidth, tiles_per_warp)`:
    /// the accumulator of AMD's `mfma` (32×32, 16×16, 64×4 (transposed) and 4×64 tiles, 64 lanes;
    /// 32- or 64-bit elements; rank 2, or 3 with a batch dim first; with a `cga_layout` it is the
    /// `layout` of a [`GluonLayout::MultiCta`]).
    AmdMfma {
        /// The CDNA generation (1 to 4).
        version: u64,
        /// The instruction's shape `[M, N, K]`.
        instr_shape: Vec<u64>,
        /// Registers along dim 1 (N) instead of dim 0 (M).
        transposed: bool,
        /// Warps per CTA along each dim.
        warps_per_cta: Vec<u64>,
        /// 32 or 64.
        element_bitwidth: u64,
        /// Instruction tiles each warp computes along each dim.
        tiles_per_warp: Vec<u64>,
    },
    /// `AMDWMMALayout(version, transposed, warp_bases, reg_bases, instr_shape, rank)`: the accumulator of
    /// AMD's `wmma` (RDNA3, RDNA4 and gfx1250: versions 1, 2 and 3; 16×16 tiles, or 32×16 in version 3;
    /// 32 lanes; rank 2, or 3 with a batch dim first; with a `cga_layout` it is the `layout` of a
    /// [`GluonLayout::MultiCta`]).
    AmdWmma {
        /// 1 (RDNA3), 2 (RDNA4) or 3 (gfx1250).
        version: u64,
        /// Rows along dim 1 instead of dim 0.
        transposed: bool,
        /// Each warp bit's move, in tiles.
        warp_bases: Vec<Vec<u64>>,
        /// Each extra register bit's move, in tiles.
        reg_bases: Vec<Vec<u64>>,
        /// The instruction's `[M, N]`.
        instr: [u64; 2],
        /// The instruction's K.
        instr_k: u64,
        /// 2, or 3 with a batch dim first.
        rank: usize,
    },
    /// `DistributedLinearLayout(reg_bases, lane_bases, warp_bases, block_bases, shape)` or
    /// `SharedLinearLayout(offset_bases, block_bases, alignment)`: the bases given outright.
    Linear {
        /// In-dim name → bases: `register`, `lane`, `warp`, `block`, or `offset`, `block`.
        bases: Vec<(String, Vec<Vec<u64>>)>,
        /// The shape the layout is written for (a shared one's: what its bases reach).
        shape: Vec<u64>,
    },
    /// `PaddedSharedLayout(interval_padding_pairs, offset_bases, cga_layout, shape)`: shared memory whose
    /// linear component (in-dims `offset` and `block` onto `shape`, a bijection whose bases each move one
    /// dim by a power of two) places logical offsets, and whose padding stores logical offset `o` at
    /// `o + Σ (o / interval) · padding` (see [`padded_offset`]).
    PaddedShared {
        /// `(interval, padding)` pairs: after every `interval` elements, `padding` more.
        interval_padding_pairs: Vec<(u64, u64)>,
        /// The offset bases of one CTA's part.
        offset_bases: Vec<Vec<u64>>,
        /// The CTA bases, in units of one CTA's part.
        cga_layout: Vec<Vec<u64>>,
        /// The tensor shape the layout is for.
        shape: Vec<u64>,
    },
    /// A `BlockedLayout` or `NVMMASharedLayout` with `cga_layout=[[...], ...]`: spread over the CTAs of a
    /// cluster (in-dim `block`), each CTA laying `layout` over its part of the tensor (see the `cga`
    /// module's rules).
    MultiCta {
        /// The layout each CTA lays over its part.
        layout: Box<GluonLayout>,
        /// The tensor position of each CTA bit, in units of the per-CTA part.
        cga_layout: Vec<Vec<u64>>,
    },
    /// `SliceLayout(dim, parent)`: the parent with tensor dim `dim` removed.
    Slice {
        /// The removed dim.
        dim: usize,
        /// The parent layout.
        parent: Box<GluonLayout>,
    },
}

fn unit(rank: usize, d: usize, v: u64) -> Vec<u64> {
    (0..rank).map(|j| if j == d { v } else { 0 }).collect()
}

/// Doubles `covered[d]`, pushing the base of the new bit onto `level`, `times` times.
fn grow(level: &mut Vec<Vec<u64>>, covered: &mut [u64], d: usize, times: u32) -> Result<()> {
    for _ in 0..times {
        level.push(unit(covered.len(), d, covered[d]));
        covered[d] = covered[d]
            .checked_mul(2)
            .ok_or_else(|| TritonError::TooLarge(format!("dim {d}")))?;
    }
    Ok(())
}

/// Triton's fitting of a layout to a tensor shape: a tensor larger than the layout gets more registers
/// (dims in `order`, most minor first); for a smaller one, lane and warp bases past it become zero
/// (broadcast), and so do registers past it, except that a `BlockedLayout` drops them
/// (`drop_registers`).
fn fit(
    mut levels: Vec<Vec<Vec<u64>>>,
    mut covered: Vec<u64>,
    order: &[usize],
    shape: &[u64],
    drop_registers: bool,
) -> Result<LinearLayout> {
    let rank = shape.len();
    for &d in order {
        while covered[d] < shape[d] {
            levels[0].push(unit(rank, d, covered[d]));
            covered[d] = covered[d]
                .checked_mul(2)
                .ok_or_else(|| TritonError::TooLarge(format!("dim {d}")))?;
        }
    }
    if drop_registers {
        levels[0].retain(|b| b.iter().zip(shape).all(|(c, s)| c < s));
    }
    for level in &mut levels {
        for base in level.iter_mut() {
            for (c, s) in base.iter_mut().zip(shape) {
                if *c >= *s {
                    *c = 0;
                }
            }
        }
    }
    let mut it = levels.into_iter();
    let mut in_dims: Vec<(String, Vec<Vec<u64>>)> = ["register", "lane", "warp"]
        .iter()
        .map(|n| (n.to_string(), it.next().unwrap_or_default()))
        .collect();
    in_dims.push(("block".to_string(), Vec::new()));
    let out = shape
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("dim{i}"), *s))
        .collect();
    LinearLayout::new(in_dims, out)
}

impl GluonLayout {
    /// The number of tensor dims it lays out.
    pub fn rank(&self) -> usize {
        match self {
            GluonLayout::Blocked { order, .. } => order.len(),
            GluonLayout::Nvmma { warps_per_cta, .. } => warps_per_cta.len(),
            GluonLayout::SwizzledShared { order, .. } => order.len(),
            GluonLayout::DotOperand { parent, .. } => parent.rank(),
            GluonLayout::NvmmaShared { rank, .. } => *rank,
            GluonLayout::Slice { parent, .. } => parent.rank().saturating_sub(1),
            GluonLayout::MultiCta { layout, .. } => layout.rank(),
            GluonLayout::PaddedShared { shape, .. } => shape.len(),
            GluonLayout::Linear { shape, .. } => shape.len(),
            GluonLayout::AmdMfma { warps_per_cta, .. } => warps_per_cta.len(),
            GluonLayout::AmdWmma { rank, .. } => *rank,
        }
    }

    fn check_shape(&self, shape: &[u64]) -> Result<()> {
        if shape.len() != self.rank() || shape.contains(&0) {
            return Err(TritonError::Gluon(format!(
                "shape {shape:?} does not fit a layout of rank {} (one positive size per dim)",
                self.rank()
            )));
        }
        Ok(())
    }

    /// The linear layout Triton computes for this layout over `shape` (every size a power of two).
    pub fn to_linear(&self, shape: &[u64]) -> Result<LinearLayout> {
        self.check_shape(shape)?;
        let blocked = matches!(self, GluonLayout::Blocked { .. });
        for (i, s) in shape.iter().enumerate() {
            log2_exact(*s, || {
                if blocked {
                    format!("tensor dim {i} (a BlockedLayout's Axe layout covers any size: `axe triton to-axe`)")
                } else {
                    format!("tensor dim {i} (of the Gluon layouts, only a BlockedLayout has an Axe layout at other sizes)")
                }
            })?;
        }
        match self {
            GluonLayout::Blocked {
                size_per_thread,
                threads_per_warp,
                warps_per_cta,
                order,
            } => {
                let rank = shape.len();
                let mut covered = vec![1u64; rank];
                let mut levels: Vec<Vec<Vec<u64>>> = Vec::new();
                for (name, per_dim) in [
                    ("size_per_thread", size_per_thread),
                    ("threads_per_warp", threads_per_warp),
                    ("warps_per_cta", warps_per_cta),
                ] {
                    let mut bases = Vec::new();
                    for &d in order {
                        let bits = log2_exact(per_dim[d], || format!("{name}[{d}]"))?;
                        for _ in 0..bits {
                            bases.push(unit(rank, d, covered[d]));
                            covered[d] = covered[d]
                                .checked_mul(2)
                                .ok_or_else(|| TritonError::TooLarge(format!("dim {d}")))?;
                        }
                    }
                    levels.push(bases);
                }
                fit(levels, covered, order, shape, true)
            }
            GluonLayout::Nvmma {
                version,
                warps_per_cta,
                instr_shape,
            } => nvmma::accumulator(*version, warps_per_cta, instr_shape, shape),
            GluonLayout::SwizzledShared {
                vec,
                per_phase,
                max_phase,
                order,
            } => {
                let rank = shape.len();
                let mut bases = Vec::new();
                let cols = shape[order[0]];
                for k in 0..cols.trailing_zeros() {
                    bases.push(unit(rank, order[0], 1u64 << k));
                }
                if rank >= 2 {
                    let row_dim = order[1];
                    for k in 0..shape[row_dim].trailing_zeros() {
                        let row = 1u64 << k;
                        let col = vec
                            .checked_mul((row / per_phase) % max_phase)
                            .ok_or_else(|| TritonError::TooLarge("swizzle".into()))?
                            % cols;
                        let mut b = unit(rank, row_dim, row);
                        b[order[0]] = col;
                        bases.push(b);
                    }
                }
                for &d in order.iter().skip(2) {
                    for k in 0..shape[d].trailing_zeros() {
                        bases.push(unit(rank, d, 1u64 << k));
                    }
                }
                shared::offset_layout(bases, shape)
            }
            GluonLayout::DotOperand {
                operand_index,
                parent,
                k_width,
            } => dot::dot_operand(*operand_index, parent, *k_width, shape),
            GluonLayout::NvmmaShared {
                swizzle_byte_width,
                element_bitwidth,
                transposed,
                fp4_padded,
                ..
            } => shared::nvmma_shared(
                *swizzle_byte_width,
                *element_bitwidth,
                *transposed,
                *fp4_padded,
                shape,
            ),
            GluonLayout::MultiCta { layout, cga_layout } => {
                cga::to_linear(layout, cga_layout, shape)
            }
            GluonLayout::Linear { bases, shape: own } => linear_gluon::to_linear(bases, own, shape),
            GluonLayout::PaddedShared {
                offset_bases,
                cga_layout,
                shape: own,
                ..
            } => {
                if own.as_slice() != shape {
                    return Err(TritonError::Gluon(format!(
                        "this PaddedSharedLayout is for shape {own:?}, not {shape:?}"
                    )));
                }
                padded::linear_component(offset_bases, cga_layout, shape)
                    .map_err(TritonError::Gluon)
            }
            GluonLayout::AmdMfma {
                instr_shape,
                transposed,
                warps_per_cta,
                element_bitwidth,
                tiles_per_warp,
                ..
            } => amd::mfma(
                &amd::Mfma {
                    instr_shape,
                    transposed: *transposed,
                    warps_per_cta,
                    element_bitwidth: *element_bitwidth,
                    tiles_per_warp,
                    whole_n: shape.last().copied().unwrap_or(1),
                },
                shape,
            ),
            GluonLayout::AmdWmma {
                version,
                transposed,
                warp_bases,
                reg_bases,
                instr,
                ..
            } => amd::wmma(
                &amd::Wmma {
                    version: *version,
                    transposed: *transposed,
                    warp_bases,
                    reg_bases,
                    instr: *instr,
                },
                shape,
            ),
            GluonLayout::Slice { dim, parent } => {
                let mut pshape = shape.to_vec();
                pshape.insert(*dim, 1);
                let p = parent.to_linear(&pshape)?;
                let mut in_dims = Vec::new();
                for d in p.in_dims() {
                    let mut bases: Vec<Vec<u64>> = d
                        .bases
                        .iter()
                        .map(|b| {
                            b.iter()
                                .enumerate()
                                .filter(|(j, _)| j != dim)
                                .map(|(_, v)| *v)
                                .collect()
                        })
                        .collect();
                    if d.name == "register" {
                        bases.retain(|b: &Vec<u64>| b.iter().any(|v| *v != 0));
                    }
                    in_dims.push((d.name.clone(), bases));
                }
                let out = shape
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (format!("dim{i}"), *s))
                    .collect();
                LinearLayout::new(in_dims, out)
            }
        }
    }

    /// The Axe layout of this layout over `shape`: tensor index (row-major) → `reg`/`lane`/`warp`
    /// coordinates, broadcast copies as replicas. For a `PaddedSharedLayout` it is the padded placement:
    /// tensor index → the `offset` in padded memory (and the `block`), which no linear layout describes. Sizes need not be powers of two: each tensor dim must be
    /// a whole number of layout tiles (the extra tiles go to more registers) or divide the tile (the
    /// unused high digits become replicas).
    pub fn to_axe(&self, shape: &[u64]) -> Result<Layout> {
        self.check_shape(shape)?;
        match self {
            GluonLayout::Blocked {
                size_per_thread,
                threads_per_warp,
                warps_per_cta,
                order,
            } => {
                let rank = shape.len();
                let reg = Axis::new("reg")?;
                let lane = Axis::new("lane")?;
                let warp = Axis::new("warp")?;
                // Stride of each dim's digit on each hardware axis, most minor dim first.
                // Registers past a small tensor are dropped, as in Triton: the per-thread block shrinks.
                let mut size_per_thread = size_per_thread.clone();
                for d in 0..rank {
                    if shape[d] < size_per_thread[d] {
                        if !size_per_thread[d].is_multiple_of(shape[d]) {
                            return Err(TritonError::Gluon(format!(
                                "tensor dim {d} of {} elements does not divide size_per_thread {}",
                                shape[d], size_per_thread[d]
                            )));
                        }
                        size_per_thread[d] = shape[d];
                    }
                }
                let mut s_reg = vec![0i64; rank];
                let mut s_lane = vec![0i64; rank];
                let mut s_warp = vec![0i64; rank];
                let (mut r, mut l, mut w) = (1i64, 1i64, 1i64);
                let big =
                    |x: u64| i64::try_from(x).map_err(|_| TritonError::TooLarge(format!("{x}")));
                for &d in order {
                    s_reg[d] = r;
                    s_lane[d] = l;
                    s_warp[d] = w;
                    r = r
                        .checked_mul(big(size_per_thread[d])?)
                        .ok_or_else(|| TritonError::TooLarge("registers".into()))?;
                    l = l
                        .checked_mul(big(threads_per_warp[d])?)
                        .ok_or_else(|| TritonError::TooLarge("lanes".into()))?;
                    w = w
                        .checked_mul(big(warps_per_cta[d])?)
                        .ok_or_else(|| TritonError::TooLarge("warps".into()))?;
                }
                let mut repeat = vec![1u64; rank];
                let mut s_rep = vec![0i64; rank];
                for &d in order {
                    let tile = size_per_thread[d]
                        .checked_mul(threads_per_warp[d])
                        .and_then(|x| x.checked_mul(warps_per_cta[d]))
                        .ok_or_else(|| TritonError::TooLarge(format!("tile of dim {d}")))?;
                    if shape[d] > tile {
                        if !shape[d].is_multiple_of(tile) {
                            return Err(TritonError::Gluon(format!(
                                "tensor dim {d} has {} elements, not a whole number of {tile}-element tiles",
                                shape[d]
                            )));
                        }
                        repeat[d] = shape[d] / tile;
                        s_rep[d] = r;
                        r = r
                            .checked_mul(big(repeat[d])?)
                            .ok_or_else(|| TritonError::TooLarge("registers".into()))?;
                    }
                }
                let mut shard = Vec::new();
                let mut replica = Vec::new();
                for d in 0..rank {
                    // Digits of dim d, most minor first: (extent, stride, axis).
                    let digits = [
                        (size_per_thread[d], s_reg[d], &reg),
                        (threads_per_warp[d], s_lane[d], &lane),
                        (warps_per_cta[d], s_warp[d], &warp),
                        (repeat[d], s_rep[d], &reg),
                    ];
                    let mut left = shape[d];
                    let mut taken = Vec::new();
                    for (e, s, a) in digits {
                        if e == 1 {
                            continue;
                        }
                        if left >= e {
                            if !left.is_multiple_of(e) {
                                return Err(TritonError::Gluon(format!(
                                    "tensor dim {d} of {} elements does not split over the layout's factor {e}",
                                    shape[d]
                                )));
                            }
                            taken.push(Iter::new(e, s, *a)?);
                            left /= e;
                        } else {
                            if !e.is_multiple_of(left) {
                                return Err(TritonError::Gluon(format!(
                                    "tensor dim {d} of {} elements does not split over the layout's factor {e}",
                                    shape[d]
                                )));
                            }
                            if left > 1 {
                                taken.push(Iter::new(left, s, *a)?);
                            }
                            let rs = s
                                .checked_mul(big(left)?)
                                .ok_or_else(|| TritonError::TooLarge("stride".into()))?;
                            replica.push(Iter::new(e / left, rs, *a)?);
                            left = 1;
                        }
                    }
                    if left != 1 {
                        return Err(TritonError::Gluon(format!("tensor dim {d} is not covered")));
                    }
                    taken.reverse();
                    shard.extend(taken);
                }
                Ok(Layout::new(shard, replica, Coord::zero())?.canonicalize()?)
            }
            GluonLayout::PaddedShared {
                interval_padding_pairs,
                ..
            } => padded::to_axe(&self.to_linear(shape)?, interval_padding_pairs),
            GluonLayout::Slice { .. }
            | GluonLayout::Nvmma { .. }
            | GluonLayout::DotOperand { .. }
            | GluonLayout::NvmmaShared { .. }
            | GluonLayout::MultiCta { .. }
            | GluonLayout::AmdMfma { .. }
            | GluonLayout::AmdWmma { .. }
            | GluonLayout::Linear { .. }
            | GluonLayout::SwizzledShared { .. } => self.to_linear(shape)?.to_axe(),
        }
    }
}
