//! AMD's `AMDMFMALayout`: the accumulator of the `mfma` instructions (CDNA), 64 lanes per warp.
//!
//! One `M × N` instruction tile (rows M are dim 0, columns N dim 1): each lane holds `height` elements
//! (4, or 1 for 64-bit elements) in registers along M; the lanes walk N first (`N` of them), then M; more
//! registers along M complete the tile (`M·N / (64·height)` of them). A transposed tile swaps the roles:
//! registers along N, lanes along M first. Then, as Triton orders the tiles: `tiles_per_warp[1]` tiles
//! in registers along N, the warps along N, registers along the rest of the tensor's N, `tiles_per_warp[0]`
//! tiles in registers along M, the warps along M, and registers along the rest of M. Bases past a smaller
//! tensor become zero (copies), as Triton fits every accumulator.

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
}

/// `bits` more bases along `d`, doubling `covered[d]` each time.
fn push(level: &mut Vec<Vec<u64>>, covered: &mut [u64], d: usize, count: u64) -> Result<()> {
    let bits = log2_exact(count.max(1), || format!("a factor {count} along dim {d}"))?;
    for _ in 0..bits {
        level.push(unit(2, d, covered[d]));
        covered[d] = covered[d]
            .checked_mul(2)
            .ok_or_else(|| TritonError::TooLarge(format!("dim {d}")))?;
    }
    Ok(())
}

/// The linear layout of `AMDMFMALayout(...)` (see the module docs) over `shape`.
pub(crate) fn mfma(p: &Mfma<'_>, shape: &[u64]) -> Result<LinearLayout> {
    let (m, n) = match p.instr_shape {
        [m, n, ..] if matches!((m, n), (32, 32) | (16, 16) | (4, 4) | (64, 4) | (4, 64)) => {
            (*m, *n)
        }
        _ => return Err(TritonError::Gluon(format!(
            "AMDMFMALayout instr_shape {:?} is not one of mfma's (32×32, 16×16, 4×4, 64×4, 4×64)",
            p.instr_shape
        ))),
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
    let (dm, dn) = (0usize, 1usize);
    // The dim of the registers, and the dim the lanes walk first with how many lanes.
    let (reg_dim, first, first_lanes) = if p.transposed {
        (dn, dm, m)
    } else {
        (dm, dn, n)
    };
    let other = if first == dm { dn } else { dm };
    let mut covered = vec![1u64; 2];
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
    push(&mut reg, &mut covered, dn, shape[dn] / per)?;
    push(&mut reg, &mut covered, dm, tiles(dm))?;
    push(&mut warp, &mut covered, dm, warps(dm))?;
    fit(vec![reg, lane, warp], covered, &[1, 0], shape, false)
}

/// The linear layout of `AMDWMMALayout(version, transposed, warp_bases)` (versions 1 and 2: RDNA3 and
/// RDNA4, one 16×16 tile per instruction, 32 lanes) over `shape`. In a tile (rows dim 0, or dim 1 when
/// `transposed`) the 16 lanes of a half walk the columns; version 1 puts the last lane bit on row 1 and
/// registers on rows 2, 4, 8, version 2 registers on rows 1, 2, 4 and the last lane bit on row 8. Each warp
/// base moves a whole number of tiles (`[1, 0]`: 16 rows); a larger tensor gets more registers, columns
/// first. `warp_bases` must move one dim each by a power of two, 1, 2, 4, ... along each dim.
pub(crate) fn wmma(
    version: u64,
    transposed: bool,
    warp_bases: &[Vec<u64>],
    shape: &[u64],
) -> Result<LinearLayout> {
    const TILE: u64 = 16;
    let (r, c) = if transposed { (1, 0) } else { (0, 1) };
    let mut lane: Vec<Vec<u64>> = (0..4).map(|k| unit(2, c, 1 << k)).collect();
    let reg: Vec<Vec<u64>> = match version {
        1 => {
            lane.push(unit(2, r, 1));
            vec![unit(2, r, 2), unit(2, r, 4), unit(2, r, 8)]
        }
        2 => {
            lane.push(unit(2, r, 8));
            vec![unit(2, r, 1), unit(2, r, 2), unit(2, r, 4)]
        }
        v => {
            return Err(TritonError::Gluon(format!(
                "AMDWMMALayout version {v} is not supported (1 and 2 are)"
            )))
        }
    };
    super::cga::check(warp_bases, 2).map_err(|why| {
        TritonError::Gluon(format!("warp_bases: {}", why.replace("cga_layout ", "")))
    })?;
    let mut covered = vec![TILE, TILE];
    let mut warp = Vec::new();
    for b in warp_bases {
        let w: Vec<u64> = b.iter().map(|v| v * TILE).collect();
        for (d, v) in b.iter().enumerate() {
            if *v != 0 {
                covered[d] = covered[d]
                    .checked_mul(2)
                    .ok_or_else(|| TritonError::TooLarge(format!("dim {d}")))?;
            }
        }
        warp.push(w);
    }
    fit(vec![reg, lane, warp], covered, &[1, 0], shape, false)
}
