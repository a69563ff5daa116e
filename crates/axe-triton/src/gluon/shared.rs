//! `NVMMASharedLayout`: the shared memory TMA writes and `wgmma`/`tcgen05` read, laid out as Triton lays
//! it out (in-dim `offset`).
//!
//! The tensor is stored in TMA blocks: at most 256 elements per dim, and with a swizzle exactly one
//! swizzle row (`8 · swizzle_byte_width / element_bitwidth` elements) along the contiguous dim (the last,
//! or dim 0 when `transposed`). With a swizzle, a block is seen as a matrix of (outer dims collapsed) rows
//! by contiguous columns (swapped when transposed), made of 8-row core matrices whose row `r` has its
//! 16-byte chunks XORed with `(r / per_phase) mod max_phase` (`per_phase = 128 / swizzle`,
//! `max_phase = swizzle / 16`); further rows follow, then the matrix is reshaped row-major back to the
//! block's dims. Further blocks follow, dim by dim. FP4 padding stores 8 real bytes and 8 padding bytes
//! per 16: the padding offsets map onto the same elements as the real ones.

use super::unit;
use crate::error::{Result, TritonError};
use crate::linear::LinearLayout;

/// The layout of a shared buffer: in-dim `offset` with these bases (and an empty `block`) onto the dims of
/// `shape`.
pub(super) fn offset_layout(bases: Vec<Vec<u64>>, shape: &[u64]) -> Result<LinearLayout> {
    let out = shape
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("dim{i}"), *s))
        .collect();
    LinearLayout::new(
        vec![
            ("offset".to_string(), bases),
            ("block".to_string(), Vec::new()),
        ],
        out,
    )
}

/// More offset bits along each dim of `dims` (in that order) until `covered` reaches `want`.
fn extend(bases: &mut Vec<Vec<u64>>, covered: &mut [u64], want: &[u64], dims: &[usize]) {
    for &d in dims {
        while covered[d] < want[d] {
            bases.push(unit(covered.len(), d, covered[d]));
            covered[d] *= 2;
        }
    }
}

/// The linear layout of `NVMMASharedLayout(swizzle_byte_width, element_bitwidth, rank, transposed,
/// fp4_padded)` over `shape` (every size a power of two).
pub(super) fn nvmma_shared(
    swizzle: u64,
    bitwidth: u64,
    transposed: bool,
    fp4: bool,
    shape: &[u64],
) -> Result<LinearLayout> {
    let rank = shape.len();
    if rank == 0 {
        return Err(TritonError::Gluon(
            "an NVMMASharedLayout has rank at least 1".to_string(),
        ));
    }
    if shape.iter().any(|s| *s > 1 << 30) {
        return Err(TritonError::TooLarge(format!("shape {shape:?}")));
    }
    if !matches!(bitwidth, 8 | 16 | 32 | 64) || !matches!(swizzle, 0 | 32 | 64 | 128) {
        return Err(TritonError::Gluon(format!(
            "element_bitwidth {bitwidth} / swizzle_byte_width {swizzle} is not one Triton defines"
        )));
    }
    // The TMA block.
    let contig = if transposed { 0 } else { rank - 1 };
    let mut tma = shape.to_vec();
    if fp4 {
        tma[contig] *= 2;
    }
    for s in tma.iter_mut() {
        *s = (*s).min(256);
    }
    if swizzle != 0 {
        let row = 8 * swizzle / bitwidth;
        if tma[contig] < row {
            return Err(TritonError::Gluon(format!(
                "dim {contig} holds {} elements, fewer than one {swizzle}-byte swizzle row of {row}",
                tma[contig]
            )));
        }
        tma[contig] = row;
    }
    if fp4 {
        tma[contig] /= 2;
    }
    // Triton builds the block over the pre-transposed dims (the contiguous dim last), then moves the
    // coordinates back: a swizzled block's last dim becomes dim 0 again. Without a swizzle Triton 3.9
    // moves them the other way (dim k+1 → dim k, dim 0 → the last): for rank 2 the same swap, for higher
    // ranks a block that no longer matches the tensor, whose coordinates past it become zero, as below.
    let mut dims = tma.clone();
    if transposed {
        dims.rotate_left(1);
    }
    let (mut bases, grow_order): (Vec<Vec<u64>>, Vec<usize>) = if swizzle == 0 {
        // Row-major, last dim first; further blocks last dim first too.
        let order: Vec<usize> = (0..rank).rev().collect();
        let mut bases = Vec::new();
        let mut covered = vec![1u64; rank];
        extend(&mut bases, &mut covered, &dims, &order);
        if transposed {
            for b in bases.iter_mut() {
                b.rotate_left(1);
            }
            dims.rotate_left(1);
        }
        (bases, order)
    } else {
        let mut bases = swizzled_block(swizzle, bitwidth, fp4, &tma, &dims, transposed)?;
        if transposed {
            for b in bases.iter_mut() {
                b.rotate_right(1);
            }
            dims.rotate_right(1);
        }
        (bases, (0..rank).collect())
    };
    extend(&mut bases, &mut dims, shape, &grow_order);
    for b in bases.iter_mut() {
        for (c, s) in b.iter_mut().zip(shape) {
            if *c >= *s {
                *c = 0;
            }
        }
    }
    offset_layout(bases, shape)
}

/// The bases of one swizzled TMA block `tma`, over the pre-transposed `dims`.
fn swizzled_block(
    swizzle: u64,
    bitwidth: u64,
    fp4: bool,
    tma: &[u64],
    dims: &[u64],
    transposed: bool,
) -> Result<Vec<Vec<u64>>> {
    let rank = tma.len();
    if rank < 2 {
        return Err(TritonError::Gluon(
            "a swizzled NVMMASharedLayout has rank at least 2".to_string(),
        ));
    }
    // The block as a matrix: outer dims collapsed into rows, the contiguous dim as columns.
    let outer: u64 = tma[..rank - 1].iter().product();
    let mut matrix = [outer, tma[rank - 1]];
    if transposed {
        matrix.swap(0, 1);
    }
    let vec = 128 / bitwidth;
    let per_phase = 128 / swizzle;
    let max_phase = swizzle / 16;
    let tile_cols = 8 * swizzle / bitwidth;
    let pack = |c: u64| if fp4 { c / 16 * 8 + c % 8 } else { c };
    let mut tile = Vec::new();
    let mut col = 1;
    while col < tile_cols {
        tile.push(vec![0, pack(col)]);
        col *= 2;
    }
    for row in [1u64, 2, 4] {
        tile.push(vec![row, pack(vec * ((row / per_phase) % max_phase))]);
    }
    let packing = if fp4 { 2 } else { 1 };
    if matrix[1] * packing < tile_cols || matrix[0] < 8 {
        return Err(TritonError::Gluon(format!(
            "a {}×{} block is smaller than one 8×{} core matrix",
            matrix[0],
            matrix[1],
            tile_cols / packing
        )));
    }
    let mut covered = [8, tile_cols / packing];
    extend(&mut tile, &mut covered, &matrix, &[0, 1]);
    // Reshape the matrix row-major to `dims`.
    let col_bits = matrix[1].trailing_zeros();
    Ok(tile
        .into_iter()
        .map(|b| {
            let mut flat = (b[0] << col_bits) | b[1];
            let mut nd = vec![0u64; rank];
            for d in (0..rank).rev() {
                nd[d] = flat & (dims[d] - 1);
                flat >>= dims[d].trailing_zeros();
            }
            nd
        })
        .collect())
}
