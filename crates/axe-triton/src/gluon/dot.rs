//! `DotOperandLayout`: the register layouts of the operands of a dot, laid out as Triton lays them out.
//!
//! * Under an `NVMMADistributedLayout` (Ampere `mma` for A and B, Hopper `wgmma` for A; rank 2 or
//!   batched, rank 3 with the batch as dim 0): one tile of `M × 8·k_width` (A) or `8·k_width × 8` (B),
//!   `M` being the parent's `instr_shape[rank - 2]` (16 for the usual shapes; with `M = 8` the tile's K
//!   is `4·k_width`), holds `k_width` consecutive K elements per register group, then 4 lanes along K,
//!   8 lanes along the other dim, register groups for the rest of `M` (A only) and one more along K.
//!   Warps follow the accumulator's warp order (columns first on Ampere, rows first on Hopper, the
//!   batch last); the warps along K hold copies (their bases are zero). A larger tensor gets more
//!   registers: K, the other dim, the batch.
//! * Under a `BlockedLayout` (FMA dots): every thread holds the whole K extent of the tensor, its other
//!   dims as in the parent; lanes and warps along K hold copies.
//!
//! * Under an `AMDMFMALayout` or an `AMDWMMALayout` (register bases, rank 3 and CTAs too): see
//!   [`super::amd_dot`].
//!
//! Registers past a small tensor become zero (copies), as in Triton.

use super::{fit, grow, GluonLayout};
use crate::error::{log2_exact, Result, TritonError};
use crate::linear::LinearLayout;

/// The linear layout of an operand of an NVIDIA `mma` (Ampere, rank 2 or batched) or `wgmma` (Hopper,
/// operand A) dot over `shape`: the tile is `M × K` for A and `K × 8` for B, where `M` is the parent's
/// `instr_shape[rank - 2]` (for A a power of two of at least 8, as Triton asserts) and `K` is
/// `k_width · 8`, or `k_width · 4` where `M` is 8 (the fp64 `m8n8k4` instruction). In it: `k_width`
/// registers along K, 4 lanes along K, 8 lanes along the other dim, registers for the rest of `M`
/// (A only), registers for the rest of K. The warps go along the columns, the rows, then the batch
/// (Ampere) or the rows, the columns, then the batch (Hopper), zero (copies) along K. A larger tensor
/// gets more registers: K, the other dim, the batch.
fn nvmma_operand(
    operand_index: u64,
    version: u64,
    warps_per_cta: &[u64],
    instr_shape: &[u64],
    k_width: u64,
    shape: &[u64],
) -> Result<LinearLayout> {
    let rank = shape.len();
    if warps_per_cta.len() != rank || !(2..=3).contains(&rank) {
        return Err(TritonError::Gluon(format!(
            "the NVMMADistributedLayout parent has rank {}, the tensor {rank} (2 or 3)",
            warps_per_cta.len()
        )));
    }
    if version == 3 && operand_index == 1 {
        return Err(TritonError::Gluon(
            "Hopper's wgmma reads operand B from shared memory: only operand 0 has a register layout"
                .to_string(),
        ));
    }
    let (k, other) = if operand_index == 0 {
        (rank - 1, rank - 2)
    } else {
        (rank - 2, rank - 1)
    };
    // Only A's tile has M rows; B's has 8 columns whatever M is (M then only sets the tile's K).
    let instr_m = instr_shape
        .get(rank - 2)
        .copied()
        .filter(|m| operand_index == 1 || (m.is_power_of_two() && *m >= 8))
        .ok_or_else(|| {
            TritonError::Gluon(format!(
                "the parent's instr_shape {instr_shape:?} has no M (entry {}){}, as Triton requires of \
                 a dot operand's tile",
                rank - 2,
                if operand_index == 0 {
                    " that is a power of two of at least 8"
                } else {
                    ""
                }
            ))
        })?;
    let kw_bits = log2_exact(k_width, || "k_width".to_string())?;
    let mut covered = vec![1u64; rank];
    let (mut reg, mut lane, mut warp) = (Vec::new(), Vec::new(), Vec::new());
    grow(&mut reg, &mut covered, k, kw_bits)?;
    grow(&mut lane, &mut covered, k, 2)?;
    grow(&mut lane, &mut covered, other, 3)?;
    // A's tile has M rows: the groups of 8 past the lanes' in registers; B's has 8 columns.
    if operand_index == 0 {
        grow(&mut reg, &mut covered, other, instr_m.trailing_zeros() - 3)?;
    }
    // The tile holds 8·k_width along K (4·k_width for an 8-row instruction): twice what one register
    // group and 4 lanes cover, or once.
    if instr_m != 8 {
        grow(&mut reg, &mut covered, k, 1)?;
    }
    let (m, n) = (rank - 2, rank - 1);
    let mut warp_order = if version == 3 { vec![m, n] } else { vec![n, m] };
    if rank == 3 {
        warp_order.push(0);
    }
    for d in warp_order {
        let bits = log2_exact(warps_per_cta[d], || format!("warps_per_cta[{d}]"))?;
        if d == k {
            warp.extend((0..bits).map(|_| vec![0u64; rank]));
        } else {
            grow(&mut warp, &mut covered, d, bits)?;
        }
    }
    let mut order = vec![k, other];
    if rank == 3 {
        order.push(0);
    }
    fit(vec![reg, lane, warp], covered, &order, shape, false)
}

/// The linear layout of `DotOperandLayout(operand_index, parent, k_width)` over `shape`.
pub(super) fn dot_operand(
    operand_index: u64,
    parent: &GluonLayout,
    k_width: u64,
    shape: &[u64],
) -> Result<LinearLayout> {
    let rank = shape.len();
    if operand_index > 1 || rank < 2 {
        return Err(TritonError::Gluon(format!(
            "a dot operand is operand 0 or 1 of rank at least 2, not operand {operand_index} of rank {rank}"
        )));
    }
    // K is the last dim of A and the second to last of B.
    let k = if operand_index == 0 {
        rank - 1
    } else {
        rank - 2
    };
    match parent {
        GluonLayout::Nvmma {
            version,
            warps_per_cta,
            instr_shape,
        } => nvmma_operand(
            operand_index,
            *version,
            warps_per_cta,
            instr_shape,
            k_width,
            shape,
        ),
        GluonLayout::Blocked {
            size_per_thread,
            threads_per_warp,
            warps_per_cta,
            order,
        } => {
            if order.len() != rank {
                return Err(TritonError::Gluon(format!(
                    "the parent has rank {}, the tensor {rank}",
                    order.len()
                )));
            }
            if k_width != 0 {
                return Err(TritonError::Gluon(
                    "k_width must be 0 under a BlockedLayout".to_string(),
                ));
            }
            let mut covered = vec![1u64; rank];
            let mut levels = Vec::new();
            for (name, per_dim) in [
                ("size_per_thread", size_per_thread),
                ("threads_per_warp", threads_per_warp),
                ("warps_per_cta", warps_per_cta),
            ] {
                let mut bases = Vec::new();
                for &d in order {
                    if name == "size_per_thread" && d == k {
                        // Every thread holds the whole K extent.
                        let bits = log2_exact(shape[d], || format!("tensor dim {d}"))?;
                        grow(&mut bases, &mut covered, d, bits)?;
                        continue;
                    }
                    let bits = log2_exact(per_dim[d], || format!("{name}[{d}]"))?;
                    if d == k {
                        bases.extend((0..bits).map(|_| vec![0u64; rank]));
                    } else {
                        grow(&mut bases, &mut covered, d, bits)?;
                    }
                }
                levels.push(bases);
            }
            fit(levels, covered, order, shape, false)
        }
        GluonLayout::AmdMfma {
            instr_shape,
            warps_per_cta,
            tiles_per_warp,
            ..
        } => super::amd_dot::mfma_operand(
            &super::amd_dot::MfmaOperand {
                operand_index,
                instr_shape,
                warps_per_cta,
                tiles_per_warp,
                k_width,
                whole_k: shape[k],
            },
            shape,
        ),
        GluonLayout::AmdWmma {
            version,
            warp_bases,
            reg_bases,
            instr,
            instr_k,
            transposed,
            rank: parent_rank,
        } => super::amd_dot::wmma_operand(
            &super::amd_dot::WmmaOperand {
                operand_index,
                version: *version,
                instr: [instr[0], instr[1], *instr_k],
                transposed: *transposed,
                warp_bases,
                reg_bases,
                rank: *parent_rank,
                k_width,
            },
            shape,
        ),
        _ => Err(TritonError::Gluon(
            "a DotOperandLayout's parent is an NVMMADistributedLayout, a BlockedLayout, an \
             AMDMFMALayout or an AMDWMMALayout"
                .to_string(),
        )),
    }
}
