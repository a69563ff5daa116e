//! Multi-CTA layouts: a layout with `cga_layout=[[...], ...]` spreads the tensor over the CTAs of a
//! cluster (in-dim `block`). Each base of `cga_layout` is the tensor position of one CTA bit in units of
//! the per-CTA tile: a unit vector along one dim (a power of two) or all zeros (the CTAs of that bit hold
//! copies). Along dim `d`, the `k` bases that move it split it into `2^k` parts; each CTA lays the layout
//! over its part (`shape[d] / 2^k`, at least 1), and CTA base `v` along `d` lands at `v · part[d]` (zero
//! where that lies past the tensor).

use super::GluonLayout;
use crate::error::{Result, TritonError};
use crate::linear::LinearLayout;

/// Checks that `cga` is Triton's CGA encoding over `rank` dims: every base has `rank` coordinates, at
/// most one of them nonzero and that one a power of two, and along each dim the nonzero values are
/// `1, 2, 4, ...` in some order (a permutation of CTA bits once the zero bases are removed).
pub(crate) fn check(cga: &[Vec<u64>], rank: usize) -> std::result::Result<(), String> {
    check_permutation(cga, rank, "cga_layout")
}

/// Checks that `bases` (named `what` in the error) are a permutation matrix once the zero bases are
/// removed, as [`check`] states it; Triton requires it of CGA encodings and of an `AMDWMMALayout`'s
/// register and warp bases.
pub(crate) fn check_permutation(
    bases: &[Vec<u64>],
    rank: usize,
    what: &str,
) -> std::result::Result<(), String> {
    let cga = bases;
    let mut along: Vec<Vec<u64>> = vec![Vec::new(); rank];
    for (i, b) in cga.iter().enumerate() {
        if b.len() != rank {
            return Err(format!(
                "{what} base {i} has {} coordinates, the layout {rank} dims",
                b.len()
            ));
        }
        let nonzero: Vec<(usize, u64)> = b
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, v)| *v != 0)
            .collect();
        match nonzero[..] {
            [] => {}
            [(d, v)] if v.is_power_of_two() => along[d].push(v),
            _ => {
                return Err(format!(
                    "{what} base {i} must move one dim by a power of two (or be all zeros)"
                ))
            }
        }
    }
    for (d, vs) in along.iter_mut().enumerate() {
        vs.sort_unstable();
        if vs.iter().enumerate().any(|(k, v)| *v != 1u64 << k) {
            return Err(format!(
                "{what} along dim {d} must be 1, 2, 4, ... in some order (a permutation matrix once \
                 the zero bases are removed)"
            ));
        }
    }
    Ok(())
}

/// The linear layout of `inner` spread over CTAs by `cga` (checked by [`check`]) over `shape`.
pub(crate) fn to_linear(
    inner: &GluonLayout,
    cga: &[Vec<u64>],
    shape: &[u64],
) -> Result<LinearLayout> {
    check(cga, shape.len()).map_err(TritonError::Gluon)?;
    let mut split = vec![1u64; shape.len()];
    for b in cga {
        for (s, v) in split.iter_mut().zip(b) {
            if *v != 0 {
                *s *= 2;
            }
        }
    }
    let part: Vec<u64> = shape
        .iter()
        .zip(&split)
        .map(|(s, k)| (s / k).max(1))
        .collect();
    let per_cta = match inner {
        // Triton counts an MFMA accumulator's registers along N by the whole tensor, then fits the
        // layout to one CTA's part (the registers past it hold copies).
        GluonLayout::AmdMfma {
            instr_shape,
            transposed,
            warps_per_cta,
            element_bitwidth,
            tiles_per_warp,
            ..
        } => {
            inner.check_shape(&part)?;
            super::amd::mfma(
                &super::amd::Mfma {
                    instr_shape,
                    transposed: *transposed,
                    warps_per_cta,
                    element_bitwidth: *element_bitwidth,
                    tiles_per_warp,
                    whole_n: shape.last().copied().unwrap_or(1),
                },
                &part,
            )?
        }
        // So it counts an MFMA dot operand's registers along K.
        GluonLayout::DotOperand {
            operand_index,
            parent,
            k_width,
        } if matches!(**parent, GluonLayout::AmdMfma { .. }) => {
            let GluonLayout::AmdMfma {
                instr_shape,
                warps_per_cta,
                tiles_per_warp,
                ..
            } = &**parent
            else {
                return inner.to_linear(&part);
            };
            inner.check_shape(&part)?;
            let k = if *operand_index == 0 {
                shape.len() - 1
            } else {
                shape.len().saturating_sub(2)
            };
            super::amd_dot::mfma_operand(
                &super::amd_dot::MfmaOperand {
                    operand_index: *operand_index,
                    instr_shape,
                    warps_per_cta,
                    tiles_per_warp,
                    k_width: *k_width,
                    whole_k: shape.get(k).copied().unwrap_or(1),
                },
                &part,
            )?
        }
        _ => inner.to_linear(&part)?,
    };
    let block: Vec<Vec<u64>> = cga
        .iter()
        .map(|b| {
            b.iter()
                .zip(&part)
                .zip(shape)
                .map(|((v, p), s)| v.checked_mul(*p).filter(|x| x < s).unwrap_or(0))
                .collect()
        })
        .collect();
    let mut in_dims: Vec<(String, Vec<Vec<u64>>)> = per_cta
        .in_dims()
        .iter()
        .filter(|d| d.name != "block")
        .map(|d| (d.name.clone(), d.bases.clone()))
        .collect();
    in_dims.push(("block".to_string(), block));
    let out = shape
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("dim{i}"), *s))
        .collect();
    LinearLayout::new(in_dims, out)
}
