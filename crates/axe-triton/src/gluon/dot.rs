//! `DotOperandLayout`: the register layouts of the operands of a dot, laid out as Triton lays them out.
//!
//! * Under an `NVMMADistributedLayout` (Ampere `mma` for A and B, Hopper `wgmma` for A): one tile of
//!   `16 × 8·k_width` (A) or `8·k_width × 8` (B) holds `k_width` consecutive K elements per register group,
//!   then 4 lanes along K, 8 lanes along the other dim, a second register group along M (A only) and one
//!   along K. Warps follow the accumulator's warp order (columns first on Ampere, rows first on Hopper);
//!   the warps along K hold copies (their bases are zero). A larger tensor gets more registers, K first.
//! * Under a `BlockedLayout` (FMA dots): every thread holds the whole K extent of the tensor, its other
//!   dims as in the parent; lanes and warps along K hold copies.
//!
//! * Under an `AMDMFMALayout` or an `AMDWMMALayout`: see [`super::amd_dot`].
//!
//! Registers past a small tensor become zero (copies), as in Triton.

use super::{fit, grow, GluonLayout};
use crate::error::{log2_exact, Result, TritonError};
use crate::linear::LinearLayout;

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
            ..
        } => {
            if rank != 2 || warps_per_cta.len() != 2 {
                return Err(TritonError::Gluon(
                    "NVMMA dot operands have rank 2".to_string(),
                ));
            }
            if *version == 3 && operand_index == 1 {
                return Err(TritonError::Gluon(
                    "Hopper's wgmma reads operand B from shared memory: only operand 0 has a register layout"
                        .to_string(),
                ));
            }
            let kw_bits = log2_exact(k_width, || "k_width".to_string())?;
            let other = 1 - k;
            let mut covered = vec![1u64; 2];
            let (mut reg, mut lane, mut warp) = (Vec::new(), Vec::new(), Vec::new());
            grow(&mut reg, &mut covered, k, kw_bits)?;
            grow(&mut lane, &mut covered, k, 2)?;
            grow(&mut lane, &mut covered, other, 3)?;
            // A's tile has 16 rows: a second group of 8 in registers; B's has 8 columns.
            if operand_index == 0 {
                grow(&mut reg, &mut covered, other, 1)?;
            }
            // The tile holds 8·k_width along K: twice what one register group and 4 lanes cover.
            grow(&mut reg, &mut covered, k, 1)?;
            let warp_order: [usize; 2] = if *version == 3 { [0, 1] } else { [1, 0] };
            for d in warp_order {
                let bits = log2_exact(warps_per_cta[d], || format!("warps_per_cta[{d}]"))?;
                if d == k {
                    warp.extend((0..bits).map(|_| vec![0u64; 2]));
                } else {
                    grow(&mut warp, &mut covered, d, bits)?;
                }
            }
            fit(vec![reg, lane, warp], covered, &[k, other], shape, false)
        }
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
            ..
        } if reg_bases.is_empty() => super::amd_dot::wmma_operand(
            &super::amd_dot::WmmaOperand {
                operand_index,
                version: *version,
                instr: [instr[0], instr[1], *instr_k],
                transposed: *transposed,
                warp_bases,
                k_width,
            },
            shape,
        ),
        _ => Err(TritonError::Gluon(
            "a DotOperandLayout's parent is an NVMMADistributedLayout, a BlockedLayout, an \
             AMDMFMALayout or an AMDWMMALayout (without reg_bases)"
                .to_string(),
        )),
    }
}
