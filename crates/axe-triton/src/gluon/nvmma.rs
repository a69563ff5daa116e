//! NVIDIA's MMA accumulators, `NVMMADistributedLayout`: Ampere `mma` (version `[2, 0]`, instruction
//! usually 16×8) and Hopper `wgmma` (version `[3, 0]`, instruction usually 16×n), rank 2, or batched (rank 3,
//! Ampere; a batched Hopper layout has dot operands but, as in Triton 3.9, no accumulator layout).
//!
//! One instruction tile `M × N` (rows are M, columns N; Ampere's `instr_shape` has one entry per tensor
//! dim, the batch's unused, Hopper's is `[M, N, K]`; M and N powers of two of at least 8): registers
//! hold (row, col) (0, 1); lanes (0, 2), (0, 4), (1, 0), (2, 0), (4, 0); more registers down the rows
//! (8, 0), (16, 0), ... up to M, then across the columns (0, 8), (0, 16), ... up to N. The
//! warps go along the columns first for Ampere, along the rows first for Hopper, then (rank 3) along the
//! batch, dim 0, the tile then being on dims 1 and 2. Extra registers for a larger tensor go along the
//! columns first, then the rows, then the batch; bases past a smaller tensor become zero (copies).

use super::{fit, grow};
use crate::error::{log2_exact, Result, TritonError};
use crate::linear::LinearLayout;

/// The linear layout of `NVMMADistributedLayout(version=[version, 0], warps_per_cta, instr_shape)` over
/// `shape` (see the module docs).
pub(crate) fn accumulator(
    version: u64,
    warps_per_cta: &[u64],
    instr_shape: &[u64],
    shape: &[u64],
) -> Result<LinearLayout> {
    let rank = shape.len();
    if rank != warps_per_cta.len() || !(2..=3).contains(&rank) {
        return Err(TritonError::Gluon(format!(
            "an NVMMADistributedLayout with {} warps_per_cta entries does not lay out rank {rank}",
            warps_per_cta.len()
        )));
    }
    if rank == 3 && version != 2 {
        // Triton 3.9 aborts here: its Hopper tile has two dims, the tensor three. (Its dot operands
        // are laid out: see `dot`.)
        return Err(TritonError::Gluon(
            "a batched (rank-3) Hopper NVMMADistributedLayout has no accumulator layout: Triton 3.9's \
             Hopper tile has two dims (its dot operand A has one)"
                .to_string(),
        ));
    }
    let (m, n) = (rank - 2, rank - 1);
    // The tile: Ampere's instr_shape gives it (one entry per dim, the batch's unused), Hopper's
    // first two entries.
    let tile = if version == 3 {
        instr_shape.get(..2)
    } else {
        Some(instr_shape)
            .filter(|t| t.len() == rank)
            .map(|t| &t[m..])
    };
    let (tile_m, tile_n) = match tile {
        Some([tm, tn]) if [tm, tn].iter().all(|x| x.is_power_of_two() && **x >= 8) => (*tm, *tn),
        _ => {
            return Err(TritonError::Gluon(format!(
                "instr_shape {instr_shape:?} gives no accumulator tile of rank {rank}: Triton's tile is \
                 M × N, each a power of two of at least 8 (Ampere: one entry per tensor dim; Hopper: \
                 [M, N, K])"
            )))
        }
    };
    let at = |row: u64, col: u64| {
        let mut b = vec![0u64; rank];
        b[m] = row;
        b[n] = col;
        b
    };
    // Two columns per register group, 4 lanes along the columns, 8 along the rows, register groups
    // down the rest of M, then across the rest of N.
    let mut reg = vec![at(0, 1)];
    let lane = vec![at(0, 2), at(0, 4), at(1, 0), at(2, 0), at(4, 0)];
    let mut covered = vec![1u64; rank];
    covered[m] = 8;
    covered[n] = 8;
    while covered[m] < tile_m {
        reg.push(at(covered[m], 0));
        covered[m] *= 2;
    }
    while covered[n] < tile_n {
        reg.push(at(0, covered[n]));
        covered[n] *= 2;
    }
    let mut warp_order = if version == 3 { vec![m, n] } else { vec![n, m] };
    if rank == 3 {
        warp_order.push(0);
    }
    let mut warp = Vec::new();
    for d in warp_order {
        let bits = log2_exact(warps_per_cta[d], || format!("warps_per_cta[{d}]"))?;
        grow(&mut warp, &mut covered, d, bits)?;
    }
    let order: Vec<usize> = (0..rank).rev().collect();
    fit(vec![reg, lane, warp], covered, &order, shape, false)
}
