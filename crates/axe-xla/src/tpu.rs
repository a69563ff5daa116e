//! The TPU's default tiled layouts.
//!
//! Each rule names its source: the tiling notes in the project's seeds (`xla-shapes-layout-tiling-notes`,
//! §9 "popular XLA tiling formats") and layouts seen in public XLA/TPU HLO dumps.

use crate::error::Result;
use crate::primitive::PrimitiveType;
use crate::shape::{ArrayShape, Layout, Tile, TileDim};
use crate::tiling::static_dims;

fn tile(dims: &[i64]) -> Tile {
    Tile(dims.iter().map(|&d| TileDim::Size(d)).collect())
}

/// The layout XLA/TPU gives `a` by default: `a`'s dimension order (row-major when it has none) with the
/// TPU tiles for its element width and rank.
///
/// ```
/// use axe_xla::{parse_shape, tpu_default_layout};
/// let a = parse_shape("bf16[256,1024]")?;
/// assert_eq!(tpu_default_layout(a.as_array().unwrap())?.to_string(), "{1,0:T(8,128)(2,1)}");
/// let small = parse_shape("f32[7,2,512]")?;
/// assert_eq!(tpu_default_layout(small.as_array().unwrap())?.to_string(), "{2,1,0:T(2,128)}");
/// // Vectors: 128-element rows, narrow types packed as the 2-D formats pack them.
/// for (shape, layout) in [
///     ("bf16[6144]", "{0:T(1024)(128)(2,1)}"),
///     ("s4[4096]", "{0:T(1024)(128)(8,1)E(4)}"),
///     ("u1[4096]", "{0:T(1024)(128)(32,1)E(1)}"),
/// ] {
///     let a = parse_shape(shape)?;
///     assert_eq!(tpu_default_layout(a.as_array().unwrap())?.to_string(), layout);
/// }
/// # Ok::<(), axe_xla::XlaError>(())
/// ```
pub fn tpu_default_layout(a: &ArrayShape) -> Result<Layout> {
    let dims = static_dims(a)?;
    let mut layout = Layout::with_minor_to_major(a.layout.minor_to_major.clone());
    // The order must be a valid permutation (the tiles below index dimensions through it).
    crate::validate::validate_array(&ArrayShape {
        layout: layout.clone(),
        ..a.clone()
    })?;
    // "TPUs currently use 1 byte for one boolean value" (notes §9.6): pred is laid out as an 8-bit type.
    let bits = if a.element_type == PrimitiveType::Pred {
        8
    } else {
        a.element_type.bits()
    };
    if dims.len() <= 1 {
        // Rank 0 and 1: the (128) family. Scalars: `u32[]{:T(128)}`, `s32[]{:T(128)}` in TPU dumps. Vectors:
        // `s32[16]{0:T(128)}`, `s32[2048]{0:T(1024)}`, `bf16[6144]{0:T(1024)(128)(2,1)}` in TPU dumps: a
        // 1024-element tile from 1024 elements on (128 below), cut into 128-element rows that narrow types
        // pack like the 2-D formats.
        let n = dims.first().copied().unwrap_or(1);
        let base = if dims.is_empty() || n < 1024 {
            128
        } else {
            1024
        };
        layout.tiles.push(tile(&[base]));
        if dims.len() == 1 {
            add_packing(&mut layout, bits, true);
        }
        return Ok(layout);
    }
    // Rank ≥ 2: tiles on the two most minor physical dimensions.
    let second_minor = dims[layout.minor_to_major[1] as usize];
    if bits == 1 {
        // "TPU 1 bit tile format ... a tiling by (32,128)(32,1) and use only 1 bit per element" (notes §9.6).
        layout.tiles = [tile(&[32, 128]), tile(&[32, 1])].into();
        layout.element_size_in_bits = 1;
        return Ok(layout);
    }
    if bits >= 32 {
        // "the most common format in XLA/TPU is tiling by 8x128 ... the 32-bit 8x128 vector registers"
        // (notes §9.2); "when the 2nd most minor dimension size is 1 or 2, XLA/TPU instead tiles by 2x128
        // ... when [it] is 3 or 4, XLA/TPU tiles by 4x128" (notes §9.3, compact 2nd minor layout).
        let rows = match second_minor {
            0..=2 => 2,
            3..=4 => 4,
            _ => 8,
        };
        layout.tiles.push(tile(&[rows, 128]));
        return Ok(layout);
    }
    layout.tiles.push(tile(&[8, 128]));
    add_packing(&mut layout, bits, false);
    Ok(layout)
}

/// The sub-tile that packs narrow elements into 32 bits: "(8,128)(2,1)" for 16-bit (notes §9.4),
/// "(8,128)(4,1)" for 8-bit (notes §9.5), and by the same rule (8,1) with `E(4)` for 4-bit and (16,1) with
/// `E(2)` for 2-bit types; (32,1) with `E(1)` for 1-bit ones, the sub-tile of the 2-D 1-bit format (which
/// takes it whole, so this serves vectors only).
fn add_packing(layout: &mut Layout, bits: u32, vector: bool) {
    let factor = match bits {
        16 => 2,
        8 | 6 => 4,
        4 => 8,
        2 => 16,
        1 => 32,
        _ => return,
    };
    if vector {
        layout.tiles.push(tile(&[128]));
    }
    layout.tiles.push(tile(&[factor, 1]));
    if bits < 8 {
        layout.element_size_in_bits = i64::from(bits);
    }
}
