//! Tiling as pad, reshape and transpose, printed as a runnable numpy program.
//!
//! The tiling doc describes one tile as: pad each tiled dimension up to a multiple of the tile, reshape
//! each into (count, size) — a bitcast — and transpose the sizes after all counts. Repeated tiles repeat
//! this on the expanded shape; `*` is a reshape that merges a dimension into the next; a tile longer than
//! the shape first reshapes it with leading 1s; `L` pads the flat result.

use std::fmt::Write;

use crate::error::Result;
use crate::shape::ArrayShape;
use crate::tiling::{ceil_div, Tiling};

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
    let tiling = Tiling::new(a)?;
    let dims = &tiling.logical;
    let perm: Vec<i64> = tiling.physical.iter().map(|&d| d as i64).collect();
    let mut body = String::new();
    let w = &mut body;
    let _ = writeln!(w, "    assert x.shape == {}, x.shape", tuple(dims));
    if perm.iter().enumerate().all(|(i, &d)| d == i as i64) {
        let _ = writeln!(
            w,
            "    y = x  # physical order, major to minor: the logical one"
        );
    } else {
        let _ = writeln!(
            w,
            "    y = np.transpose(x, {})  # physical order, major to minor",
            tuple(&perm)
        );
    }
    for (n, (step, tile)) in tiling.steps().iter().zip(&a.layout.tiles).enumerate() {
        let _ = writeln!(w, "    # tile {n}: {tile}");
        if step.lead > 0 {
            let _ = writeln!(
                w,
                "    y = y.reshape({})  # leading 1s: the tile is longer than the shape",
                tuple(&step.extended)
            );
        }
        // Combine '*' dimensions into the next one (a reshape: they are adjacent).
        let mut shape: Vec<i64> = step.extended[..step.offset].to_vec();
        shape.extend(
            step.groups
                .iter()
                .map(|g| g.iter().map(|&i| step.extended[i]).product::<i64>()),
        );
        if shape.len() != step.extended.len() {
            let _ = writeln!(
                w,
                "    y = y.reshape({})  # combine '*' dimensions",
                tuple(&shape)
            );
        }
        let offset = step.offset;
        let pads: Vec<String> = (0..shape.len())
            .map(|i| {
                let p = if i < offset {
                    0
                } else {
                    (step.sizes[i - offset] - shape[i] % step.sizes[i - offset])
                        % step.sizes[i - offset]
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
        for (i, &t) in step.sizes.iter().enumerate() {
            split.push(ceil_div(shape[offset + i], t));
            split.push(t);
        }
        let _ = writeln!(
            w,
            "    y = y.reshape({})  # each tiled dimension into (count, size)",
            tuple(&split)
        );
        let g = step.sizes.len();
        let mut order: Vec<i64> = (0..offset as i64).collect();
        order.extend((0..g).map(|i| (offset + 2 * i) as i64));
        order.extend((0..g).map(|i| (offset + 2 * i + 1) as i64));
        let _ = writeln!(
            w,
            "    y = np.transpose(y, {})  # tile sizes after all counts",
            tuple(&order)
        );
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
