//! AMD's `AMDMFMALayout`: the accumulator of the `mfma` instructions (CDNA), 64 lanes per warp.
//!
//! One `M × N` instruction tile (rows M are dim 0, columns N dim 1): each lane holds `height` elements
//! (4, or 1 for 64-bit elements) in registers along M; the lanes walk N first (`N` of them), then M; more
//! registers along M complete the tile (`M·N / (64·height)` of them). A transposed tile swaps the roles:
//! registers along N, lanes along M first. Then, as Triton orders the tiles: `tiles_per_warp[1]` tiles
//! in registers along N, the warps along N, registers along the rest of the tensor's N, `tiles_per_warp[0]`
//! tiles in registers along M, the warps along M, and registers along the rest of M. Bases past a smaller
//! tensor become zero (copies), as Triton fits every accumulator. A rank-3 (batched) layout has the
//! batch as dim 0 (M and N are dims 1 and 2) with its warps last; more batches take registers last.

use super::{fit, unit};
use crate::error::{log2_exact, Result, TritonError};
use crate::linear::LinearLayout;

/// Lanes per warp on AMD's CDNA GPUs.
const LANES: u64 = 64;

/// The parameters of an `AMDMFMALayout`.
pub(crate) struct Mfma<'a> {
    /// `[M, N, K]`.
    pub(crate) instr_shape: &'a [u64],
    /// Registers along N instead of M.
    pub(crate) transposed: bool,
    /// Warps along each dim.
    pub(crate) warps_per_cta: &'a [u64],
    /// 32 or 64.
    pub(crate) element_bitwidth: u64,
    /// Tiles per warp along each dim.
    pub(crate) tiles_per_warp: &'a [u64],
    /// The whole tensor's N extent: Triton counts the registers along N by it even where a CGA split
    /// leaves each CTA a part (the registers past the part then hold copies).
    pub(crate) whole_n: u64,
}

/// `bits` more bases along `d`, doubling `covered[d]` each time.
fn push(level: &mut Vec<Vec<u64>>, covered: &mut [u64], d: usize, count: u64) -> Result<()> {
    let bits = log2_exact(count.max(1), || format!("a factor {count} along dim {d}"))?;
    for _ in 0..bits {
        level.push(unit(covered.len(), d, covered[d]));
        covered[d] = covered[d]
            .checked_mul(2)
            .ok_or_else(|| TritonError::TooLarge(format!("dim {d}")))?;
    }
    Ok(())
}

/// The linear layout of `AMDMFMALayout(...)` (see the module docs) over `shape`.
pub(crate) fn mfma(p: &Mfma<'_>, shape: &[u64]) -> Result<LinearLayout> {
    let (m, n) = match p.instr_shape {
        [m, n, ..] if matches!((m, n), (32, 32) | (16, 16) | (64, 4) | (4, 64)) => (*m, *n),
        _ => {
            return Err(TritonError::Gluon(format!(
                "AMDMFMALayout instr_shape {:?} is not one of mfma's (32×32, 16×16, 64×4, 4×64)",
                p.instr_shape
            )))
        }
    };
    if (m, n) == (64, 4) && !p.transposed {
        return Err(TritonError::Gluon(
            "a 64×4 AMDMFMALayout must be transposed, as Triton requires".into(),
        ));
    }
    let height = match p.element_bitwidth {
        32 => 4,
        64 => 1,
        b => {
            return Err(TritonError::Gluon(format!(
                "AMDMFMALayout element_bitwidth {b} is not 32 or 64"
            )))
        }
    };
    let rank = shape.len();
    if !(2..=3).contains(&rank) || p.warps_per_cta.len() != rank {
        return Err(TritonError::Gluon(format!(
            "an AMDMFMALayout with {} warps_per_cta entries lays out rank {}, not {rank}",
            p.warps_per_cta.len(),
            p.warps_per_cta.len()
        )));
    }
    let (dm, dn) = (rank - 2, rank - 1);
    // The dim of the registers, and the dim the lanes walk first with how many lanes.
    let (reg_dim, first, first_lanes) = if p.transposed {
        (dn, dm, m)
    } else {
        (dm, dn, n)
    };
    let other = if first == dm { dn } else { dm };
    let mut covered = vec![1u64; rank];
    let (mut reg, mut lane, mut warp) = (Vec::new(), Vec::new(), Vec::new());
    push(&mut reg, &mut covered, reg_dim, height)?;
    push(&mut lane, &mut covered, first, first_lanes)?;
    push(&mut lane, &mut covered, other, LANES / first_lanes)?;
    push(&mut reg, &mut covered, reg_dim, (m * n) / (LANES * height))?;
    let tiles = |d: usize| p.tiles_per_warp.get(d).copied().unwrap_or(1);
    let warps = |d: usize| p.warps_per_cta.get(d).copied().unwrap_or(1);
    push(&mut reg, &mut covered, dn, tiles(dn))?;
    push(&mut warp, &mut covered, dn, warps(dn))?;
    let per = n
        .checked_mul(warps(dn))
        .and_then(|x| x.checked_mul(tiles(dn)))
        .ok_or_else(|| TritonError::TooLarge("N".into()))?;
    push(&mut reg, &mut covered, dn, p.whole_n / per)?;
    push(&mut reg, &mut covered, dm, tiles(dm))?;
    push(&mut warp, &mut covered, dm, warps(dm))?;
    if rank == 3 {
        push(&mut warp, &mut covered, 0, warps(0))?;
    }
    let order: Vec<usize> = (0..rank).rev().collect();
    fit(vec![reg, lane, warp], covered, &order, shape, false)
}

/// The parameters of an `AMDWMMALayout`.
pub(crate) struct Wmma<'a> {
    /// 1 (RDNA3), 2 (RDNA4) or 3 (gfx1250).
    pub(crate) version: u64,
    /// Lanes along dim 0 and registers along dim 1 instead of the other way round.
    pub(crate) transposed: bool,
    /// Each warp bit's move, in tiles.
    pub(crate) warp_bases: &'a [Vec<u64>],
    /// Each extra register bit's move, in tiles.
    pub(crate) reg_bases: &'a [Vec<u64>],
    /// `[M, N]` of the instruction: 16×16, or 32×16 (version 3).
    pub(crate) instr: [u64; 2],
}

/// The smallest power of two above every coordinate `v` (1 for none): the size a linear layout's
/// out-dim takes from its bases.
pub(crate) fn reach(bases: &[&Vec<u64>], d: usize) -> Result<u64> {
    let top = bases
        .iter()
        .filter_map(|b| b.get(d))
        .copied()
        .max()
        .unwrap_or(0);
    top.checked_add(1)
        .and_then(u64::checked_next_power_of_two)
        .ok_or_else(|| TritonError::TooLarge(format!("bases along dim {d}")))
}

/// The linear layout of `AMDWMMALayout(version, transposed, warp_bases, reg_bases, instr_shape)` over
/// `shape`, as Triton 3.9 builds it: one instruction tile (32 lanes), in which, along the lane dim (dim
/// 1, or dim 0 when `transposed`), the 16 lanes of a half walk 16 elements, and along the other dim,
/// the register dim, version 1 puts the last lane bit on 1 and registers on 2, 4, 8, versions 2 and 3
/// registers on 1, 2, 4 and the last lane bit on 8 (a 32×16 tile: one more register on 16); then the
/// `reg_bases` and `warp_bases`, each moving whole tiles; then registers for a larger tensor, the lane
/// dim first, and zero bases past a smaller one. A rank-3 layout has the batch as dim 0 (the tile on
/// dims 1 and 2; a base's batch coordinate moves whole batches); more batches take registers last.
pub(crate) fn wmma(p: &Wmma<'_>, shape: &[u64]) -> Result<LinearLayout> {
    const TILE: u64 = 16;
    let rank = shape.len();
    if !(2..=3).contains(&rank) {
        return Err(TritonError::Gluon(format!(
            "an AMDWMMALayout lays out rank 2 or 3, not {rank}"
        )));
    }
    let b = rank - 2;
    let (r, c) = if p.transposed { (b + 1, b) } else { (b, b + 1) };
    let mut lane: Vec<Vec<u64>> = (0..4).map(|k| unit(rank, c, 1 << k)).collect();
    let mut reg: Vec<Vec<u64>> = match p.version {
        1 => {
            lane.push(unit(rank, r, 1));
            vec![unit(rank, r, 2), unit(rank, r, 4), unit(rank, r, 8)]
        }
        2 | 3 => {
            lane.push(unit(rank, r, 8));
            vec![unit(rank, r, 1), unit(rank, r, 2), unit(rank, r, 4)]
        }
        v => {
            return Err(TritonError::Gluon(format!(
                "AMDWMMALayout version {v} is not supported (1, 2 and 3 are)"
            )))
        }
    };
    let mut tile = vec![1; rank];
    tile[b] = TILE;
    tile[b + 1] = TILE;
    match (p.version, p.instr) {
        (_, [16, 16]) => {}
        (3, [32, 16]) => {
            reg.push(unit(rank, r, 16));
            tile[r] = 32;
        }
        (v, [m, n]) => {
            return Err(TritonError::Gluon(format!(
            "AMDWMMALayout version {v} has no {m}×{n} instruction (16×16, and 32×16 in version 3)"
        )))
        }
    }
    let scaled = |bases: &[Vec<u64>], what: &str| -> Result<Vec<Vec<u64>>> {
        bases
            .iter()
            .map(|b| {
                if b.len() != rank {
                    return Err(TritonError::Gluon(format!(
                        "each of {what} has {rank} coordinates"
                    )));
                }
                b.iter()
                    .zip(&tile)
                    .map(|(v, t)| {
                        v.checked_mul(*t)
                            .ok_or_else(|| TritonError::TooLarge(what.to_string()))
                    })
                    .collect()
            })
            .collect()
    };
    reg.extend(scaled(p.reg_bases, "reg_bases")?);
    let warp = scaled(p.warp_bases, "warp_bases")?;
    let all: Vec<&Vec<u64>> = p.reg_bases.iter().chain(p.warp_bases).collect();
    let mut covered = vec![0u64; rank];
    for (d, c) in covered.iter_mut().enumerate() {
        *c = tile[d]
            .checked_mul(reach(&all, d)?)
            .ok_or_else(|| TritonError::TooLarge(format!("dim {d}")))?;
    }
    check_tiles(p.reg_bases, p.warp_bases, rank)?;
    let order: Vec<usize> = (0..rank).rev().collect();
    let fitted = fit(vec![reg, lane, warp], covered, &order, shape, false)?;
    check_fitted(fitted, "AMDWMMALayout")
}

/// Triton's check of an `AMDWMMALayout`'s bases (in tiles, over `rank` dims): together they reach
/// every tile of their extent (the smallest power of two above each coordinate).
pub(crate) fn check_tiles(
    reg_bases: &[Vec<u64>],
    warp_bases: &[Vec<u64>],
    rank: usize,
) -> Result<()> {
    let all: Vec<&Vec<u64>> = reg_bases.iter().chain(warp_bases).collect();
    let tiles = LinearLayout::new(
        vec![
            ("register".to_string(), reg_bases.to_vec()),
            ("warp".to_string(), warp_bases.to_vec()),
        ],
        (0..rank)
            .map(|d| Ok((format!("dim{d}"), reach(&all, d)?)))
            .collect::<Result<Vec<_>>>()?,
    )?;
    if !tiles.is_surjective() {
        return Err(TritonError::Gluon(
            "an AMDWMMALayout's reg_bases and warp_bases must reach every tile of their extent, as \
             Triton requires"
                .into(),
        ));
    }
    Ok(())
}

/// `fitted`, if its bases less the zero ones are a permutation matrix (each moving one dim by a power
/// of two, no two alike), as Triton requires of the linear encoding it returns; else the error says
/// `what` broke it.
pub(crate) fn check_fitted(fitted: LinearLayout, what: &str) -> Result<LinearLayout> {
    let bases: Vec<Vec<u64>> = fitted
        .in_dims()
        .iter()
        .flat_map(|d| d.bases.iter().cloned())
        .collect();
    let rank = fitted.out_dims().len();
    super::cga::check_permutation(&bases, rank, &format!("the fitted {what}'s"))
        .map_err(|why| TritonError::Gluon(format!("{why}, as Triton requires")))?;
    Ok(fitted)
}
