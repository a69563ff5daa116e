//! The operands of AMD's `mfma` and `wmma` dots: `DotOperandLayout(operand_index,
//! parent=AMDMFMALayout(...) or AMDWMMALayout(...), k_width)`, as Triton 3.9 lays them out. For
//! `mfma`:
//!
//! Along K (the last dim of A, the second to last of B) each lane holds `k_width` consecutive elements
//! in registers; the lanes walk the other dim (`M` of A's or `N` of B's instruction, `non_k` of them),
//! then K (`64 / non_k` lanes); a 64×4 A or 4×64 B operand repeats that 16 times along K in registers;
//! registers then cover the rest of the tensor's K, and `tiles_per_warp` of the other dim. The warps
//! follow the accumulator's warps (dim by dim from the last, a batch last), so those along K lie past
//! the tensor and hold copies; a larger tensor gets more registers, K first, then the other dim, then
//! the batch.
//!
//! For `wmma` (see [`wmma_operand`]) the instruction tile is built likewise; the parent's register and
//! warp bases (in tiles) follow with their moves along K dropped, so a batched parent, one with
//! register bases and one over CTAs (whose CTA bits along K then hold copies) each have operands.

use super::{fit, grow};
use crate::error::{log2_exact, Result, TritonError};
use crate::linear::LinearLayout;

/// Lanes per warp on AMD's CDNA GPUs.
const LANES: u64 = 64;

/// The parameters of an `mfma` dot operand.
pub(crate) struct MfmaOperand<'a> {
    /// 0 (A) or 1 (B).
    pub(crate) operand_index: u64,
    /// The parent's `[M, N, K]`.
    pub(crate) instr_shape: &'a [u64],
    /// The parent's warps per dim.
    pub(crate) warps_per_cta: &'a [u64],
    /// The parent's tiles per warp per dim.
    pub(crate) tiles_per_warp: &'a [u64],
    /// Consecutive K elements per lane.
    pub(crate) k_width: u64,
    /// The whole tensor's K extent: Triton counts the registers along K by it even where a CGA split
    /// leaves each CTA a part (the registers past the part then hold copies).
    pub(crate) whole_k: u64,
}

/// The linear layout of an `mfma` dot operand over `shape` (see the module docs).
pub(crate) fn mfma_operand(p: &MfmaOperand<'_>, shape: &[u64]) -> Result<LinearLayout> {
    let MfmaOperand {
        operand_index,
        instr_shape,
        warps_per_cta,
        tiles_per_warp,
        k_width,
        whole_k,
    } = *p;
    let rank = shape.len();
    if rank != warps_per_cta.len() || !(2..=3).contains(&rank) {
        return Err(TritonError::Gluon(format!(
            "the AMDMFMALayout parent has rank {}, the tensor {rank}",
            warps_per_cta.len()
        )));
    }
    let (m, n) = match instr_shape {
        [m, n, ..] => (*m, *n),
        _ => return Err(TritonError::Gluon("instr_shape needs [M, N, K]".into())),
    };
    let (k, other) = if operand_index == 0 {
        (rank - 1, rank - 2)
    } else {
        (rank - 2, rank - 1)
    };
    let non_k = if operand_index == 0 { m } else { n };
    let bits = |x: u64, what: &str| log2_exact(x, || what.to_string());
    let mut covered = vec![1u64; rank];
    let (mut reg, mut lane, mut warp) = (Vec::new(), Vec::new(), Vec::new());
    grow(&mut reg, &mut covered, k, bits(k_width, "k_width")?)?;
    grow(
        &mut lane,
        &mut covered,
        other,
        bits(non_k, "the instruction's non-K size")?,
    )?;
    grow(
        &mut lane,
        &mut covered,
        k,
        bits(LANES / non_k, "lanes along K")?,
    )?;
    if (m, n, operand_index) == (64, 4, 0) || (m, n, operand_index) == (4, 64, 1) {
        grow(&mut reg, &mut covered, k, 4)?;
    }
    if whole_k > covered[k] {
        let more = bits(whole_k / covered[k], "K over the tile")?;
        grow(&mut reg, &mut covered, k, more)?;
    }
    let tiles = tiles_per_warp.get(other).copied().unwrap_or(1);
    grow(
        &mut reg,
        &mut covered,
        other,
        bits(tiles, "tiles_per_warp")?,
    )?;
    for d in (0..rank).rev() {
        grow(
            &mut warp,
            &mut covered,
            d,
            bits(warps_per_cta[d], "warps_per_cta")?,
        )?;
    }
    let mut order = vec![k, other];
    if rank == 3 {
        order.push(0);
    }
    fit(vec![reg, lane, warp], covered, &order, shape, false)
}

/// The parameters of a `wmma` dot operand.
pub(crate) struct WmmaOperand<'a> {
    /// 0 (A) or 1 (B).
    pub(crate) operand_index: u64,
    /// The parent's version (1 to 3).
    pub(crate) version: u64,
    /// The parent's `[M, N]` and the instruction's K.
    pub(crate) instr: [u64; 3],
    /// Whether the parent is transposed (its tile then `N × M`).
    pub(crate) transposed: bool,
    /// The parent's warp bases, in tiles.
    pub(crate) warp_bases: &'a [Vec<u64>],
    /// The parent's extra register bases, in tiles.
    pub(crate) reg_bases: &'a [Vec<u64>],
    /// The parent's rank: 2, or 3 with a batch dim first.
    pub(crate) rank: usize,
    /// Consecutive K elements per lane.
    pub(crate) k_width: u64,
}

/// The linear layout of a `wmma` dot operand over `shape` (`k_width` 8 or 16 in version 1, 4, 8 or 16 in
/// version 2, any power of two in version 3, as Triton 3.9 requires): `k_width` K elements per lane, 16 lanes
/// along the other dim, then `32 / 16` lanes along K (copies in version 1), registers up to the
/// instruction's K, a second register group along the other dim where the accumulator's tile is 32 long
/// there (M of a 32×16 tile, or N when the parent is transposed). Then the parent's register and warp
/// bases, in tiles of this operand (the other dim's tile, one batch), their moves along K dropped: a
/// register base left moving nothing is removed, a warp base left so holds copies. A larger tensor gets
/// more registers, K first, then the other dim, then the batch. As for the accumulator, the parent's bases
/// must reach every tile of their extent, and the result less its zero bases must be a permutation matrix
/// (Triton's linear encoding); a rank-3 operand has the batch as dim 0.
pub(crate) fn wmma_operand(p: &WmmaOperand<'_>, shape: &[u64]) -> Result<LinearLayout> {
    const HALF: u64 = 16;
    let rank = shape.len();
    if rank != p.rank || !(2..=3).contains(&rank) {
        return Err(TritonError::Gluon(format!(
            "the AMDWMMALayout parent has rank {}, the tensor {rank}",
            p.rank
        )));
    }
    // Triton 3.9's verifier: the k_width each version takes.
    let ok = match p.version {
        1 => matches!(p.k_width, 8 | 16),
        2 => matches!(p.k_width, 4 | 8 | 16),
        _ => p.k_width.is_power_of_two(),
    };
    if !ok {
        return Err(TritonError::Gluon(format!(
            "k_width {} does not go with a version {} WMMA parent (version 1: 8 or 16; 2: 4, 8 or 16; \
             3: a power of two), as Triton requires",
            p.k_width, p.version
        )));
    }
    for (what, bases) in [("reg_bases", p.reg_bases), ("warp_bases", p.warp_bases)] {
        if bases.iter().any(|b| b.len() != rank) {
            return Err(TritonError::Gluon(format!(
                "each of the parent's {what} has {rank} coordinates"
            )));
        }
    }
    super::amd::check_tiles(p.reg_bases, p.warp_bases, rank)?;
    let b = rank - 2;
    let (k, other) = if p.operand_index == 0 {
        (b + 1, b)
    } else {
        (b, b + 1)
    };
    let bits = |x: u64, what: &str| log2_exact(x, || what.to_string());
    let mut covered = vec![1u64; rank];
    let (mut reg, mut lane, mut warp) = (Vec::new(), Vec::new(), Vec::new());
    grow(&mut reg, &mut covered, k, bits(p.k_width, "k_width")?)?;
    grow(&mut lane, &mut covered, other, bits(HALF, "lanes")?)?;
    if p.version == 1 {
        lane.push(vec![0; rank]);
    } else {
        grow(&mut lane, &mut covered, k, 1)?;
    }
    let depth = if p.version == 1 { 2 } else { 1 };
    let reach = covered[k].saturating_mul(depth);
    if p.instr[2] > reach {
        let more = bits(p.instr[2] / reach, "K over the tile")?;
        grow(&mut reg, &mut covered, k, more)?;
    }
    // The accumulator's tile along the operand's other dim: `M × N`, or `N × M` when transposed.
    let tile = if p.transposed {
        [p.instr[1], p.instr[0]]
    } else {
        [p.instr[0], p.instr[1]]
    };
    let rows = tile[other - b];
    if rows > covered[other] {
        let more = bits(rows / covered[other], "the tile")?;
        grow(&mut reg, &mut covered, other, more)?;
    }
    // The parent's bases in tiles of this operand: K dropped, the other dim's tile, one batch.
    let mut unit = vec![1u64; rank];
    unit[other] = covered[other];
    let scale = |base: &Vec<u64>| -> Result<Vec<u64>> {
        (0..rank)
            .map(|d| {
                if d == k {
                    return Ok(0);
                }
                base[d]
                    .checked_mul(unit[d])
                    .ok_or_else(|| TritonError::TooLarge("the parent's bases".into()))
            })
            .collect()
    };
    for base in p.reg_bases {
        let s = scale(base)?;
        if s.iter().any(|v| *v != 0) {
            reg.push(s);
        }
    }
    for base in p.warp_bases {
        warp.push(scale(base)?);
    }
    let all: Vec<&Vec<u64>> = p.reg_bases.iter().chain(p.warp_bases).collect();
    for d in (0..rank).filter(|d| *d != k) {
        covered[d] = unit[d]
            .checked_mul(super::amd::reach(&all, d)?)
            .ok_or_else(|| TritonError::TooLarge(format!("dim {d}")))?;
    }
    let mut order = vec![k, other];
    if rank == 3 {
        order.push(0);
    }
    let fitted = fit(vec![reg, lane, warp], covered, &order, shape, false)?;
    super::amd::check_fitted(fitted, "WMMA dot operand")
}
