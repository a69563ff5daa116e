//! Tiling as pad, reshape and transpose, printed as a runnable numpy program.
//!
//! The tiling doc describes one tile as: pad each tiled dimension up to a multiple of the tile, reshape
//! each into (count, size) — a bitcast — and transpose the sizes after all counts. Repeated tiles repeat
//! this on the expanded shape; `*` is a reshape that merges a dimension into the next; a tile longer than
//! the shape first reshapes it with leading 1s; `L` pads the flat result.

use std::fmt::Write;

use crate::error::{Result, XlaError};
use crate::shape::{ArrayShape, TileDim};
use crate::tiling::static_dims;

fn tuple(v: &[i64]) -> String {
    match v {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A Python function `to_memory(x, fill=0)` that lays out the logical numpy array `x` in memory order
/// (a flat array, padding slots set to `fill`) with numpy's pad, reshape and transpose.
pub fn numpy_program(a: &ArrayShape) -> Result<String> {
    // Builds every intermediate shape with checked arithmetic (and validates), so the sizes below fit.
    crate::tiling::Tiling::new(a)?;
    let dims = static_dims(a)?;
    let physical: Vec<usize> = a
        .layout
        .minor_to_major
        .iter()
        .rev()
        .map(|&d| d as usize)
        .collect();
    let mut shape: Vec<i64> = physical.iter().map(|&d| dims[d]).collect();
    let mut body = String::new();
    let perm: Vec<i64> = physical.iter().map(|&d| d as i64).collect();
    let w = &mut body;
    let _ = writeln!(w, "    assert x.shape == {}, x.shape", tuple(&dims));
    let _ = writeln!(
        w,
        "    y = np.transpose(x, {})  # physical order, major to minor",
        tuple(&perm)
    );
    for (n, tile) in a.layout.tiles.iter().enumerate() {
        let k = tile.0.len();
        let _ = writeln!(w, "    # tile {n}: {tile}");
        if k > shape.len() {
            let mut ext = vec![1i64; k - shape.len()];
            ext.extend(&shape);
            shape = ext;
            let _ = writeln!(
                w,
                "    y = y.reshape({})  # leading 1s: the tile is longer than the shape",
                tuple(&shape)
            );
        }
        let offset = shape.len() - k;
        // Combine '*' dimensions into the next one (a reshape: they are adjacent).
        let mut merged: Vec<i64> = shape[..offset].to_vec();
        let mut sizes = Vec::new();
        let mut acc: Option<i64> = None;
        for (j, td) in tile.0.iter().enumerate() {
            let d = shape[offset + j]
                .checked_mul(acc.take().unwrap_or(1))
                .ok_or_else(|| crate::error::overflow("combining dimensions"))?;
            match td {
                TileDim::Combined if n > 0 || j + 1 == k => {
                    return Err(XlaError::Undefined(format!(
                        "'*' in {tile} has no defined meaning here"
                    )))
                }
                TileDim::Combined => acc = Some(d),
                TileDim::Size(t) => {
                    merged.push(d);
                    sizes.push(*t);
                }
            }
        }
        if merged != shape {
            let _ = writeln!(
                w,
                "    y = y.reshape({})  # combine '*' dimensions",
                tuple(&merged)
            );
        }
        shape = merged;
        let offset = shape.len() - sizes.len();
        let pads: Vec<String> = (0..shape.len())
            .map(|i| {
                let p = if i < offset {
                    0
                } else {
                    (sizes[i - offset] - shape[i] % sizes[i - offset]) % sizes[i - offset]
                };
                format!("(0, {p})")
            })
            .collect();
        if pads.iter().any(|p| p != "(0, 0)") {
            let _ = writeln!(
                w,
                "    y = np.pad(y, [{}], constant_values=fill)  # pad to whole tiles",
                pads.join(", ")
            );
        }
        let mut split: Vec<i64> = shape[..offset].to_vec();
        for (i, &t) in sizes.iter().enumerate() {
            split.push(crate::tiling::ceil_div(shape[offset + i], t));
            split.push(t);
        }
        let _ = writeln!(
            w,
            "    y = y.reshape({})  # each tiled dimension into (count, size)",
            tuple(&split)
        );
        let mut order: Vec<i64> = (0..offset as i64).collect();
        order.extend((0..sizes.len()).map(|i| (offset + 2 * i) as i64));
        order.extend((0..sizes.len()).map(|i| (offset + 2 * i + 1) as i64));
        let _ = writeln!(
            w,
            "    y = np.transpose(y, {})  # tile sizes after all counts",
            tuple(&order)
        );
        shape = shape[..offset].to_vec();
        shape.extend((0..sizes.len()).map(|i| split[offset + 2 * i]));
        shape.extend(&sizes);
    }
    let _ = writeln!(w, "    flat = y.reshape(-1)");
    let l = a.layout.tail_padding_alignment_in_elements;
    if l > 1 {
        let _ = writeln!(
            w,
            "    flat = np.pad(flat, (0, (-flat.size) % {l}), constant_values=fill)  # L({l})"
        );
    }
    let _ = writeln!(w, "    return flat");
    Ok(format!(
        "import numpy as np\n\n\ndef to_memory(x, fill=0):\n    \"\"\"{a}: logical array -> memory order (flat; padding = fill).\"\"\"\n{body}"
    ))
}
