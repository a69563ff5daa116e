//! AMD's `AMDMFMALayout`: the accumulator of the `mfma` instructions (CDNA), 64 lanes per warp.
//!
//! One `M × N` instruction tile (`M = N`, 16 or 32; rows are dim 0, or dim 1 when `transposed`): registers
//! hold rows 1 and 2; the first `log2 N` lane bits walk the columns, the other lane bits the rows from 4
//! on; further registers the rows up to `M`. Warps follow along the columns first, then the rows; a
//! larger tensor gets more registers (columns first), a smaller one zero bases (copies), as Triton fits
//! every accumulator.

use super::{fit, unit};
use crate::error::{log2_exact, Result, TritonError};
use crate::linear::LinearLayout;

/// Lanes per warp on AMD's CDNA GPUs.
const LANES: usize = 64;

/// The linear layout of `AMDMFMALayout(version, instr_shape, transposed, warps_per_cta)` over `shape`.
pub(crate) fn mfma(
    instr_shape: &[u64],
    transposed: bool,
    warps_per_cta: &[u64],
    shape: &[u64],
) -> Result<LinearLayout> {
    let (m, n) = match instr_shape {
        [m, n, ..] if m == n && (*m == 16 || *m == 32) => (*m, *n),
        _ => {
            return Err(TritonError::Gluon(format!(
                "AMDMFMALayout instr_shape {instr_shape:?} is not supported (16×16 and 32×32 tiles are)"
            )))
        }
    };
    // Rows and columns of the tile as tensor dims.
    let (r, c) = if transposed { (1, 0) } else { (0, 1) };
    let mut reg = vec![unit(2, r, 1), unit(2, r, 2)];
    let mut lane = Vec::new();
    let mut col = 1;
    while col < n {
        lane.push(unit(2, c, col));
        col *= 2;
    }
    let mut row = 4;
    while lane.len() < LANES.trailing_zeros() as usize {
        lane.push(unit(2, r, row));
        row *= 2;
    }
    while row < m {
        reg.push(unit(2, r, row));
        row *= 2;
    }
    let mut covered = vec![0u64; 2];
    covered[r] = m;
    covered[c] = n;
    let mut warp = Vec::new();
    for d in [1usize, 0] {
        let bits = log2_exact(warps_per_cta[d], || format!("warps_per_cta[{d}]"))?;
        for _ in 0..bits {
            warp.push(unit(2, d, covered[d]));
            covered[d] = covered[d]
                .checked_mul(2)
                .ok_or_else(|| TritonError::TooLarge(format!("dim {d}")))?;
        }
    }
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
