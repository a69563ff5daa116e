//! Sizes in bytes: logical, XLA's padded `ArraySize`, and the exact physical size.

use crate::error::{overflow, Result, XlaError};
use crate::shape::{ArrayShape, Dim};
use crate::tiling::{static_dims, Tiling};

/// The three sizes of an array, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// XLA's `ByteSizeOf`: the elements alone, ignoring tiles and `L` (`ceil(n·E/8)` when `E` is set).
    pub logical_bytes: i64,
    /// XLA's `ArraySize`. Without tiles it is [`Sizes::logical_bytes`]: `L` is not applied. With tiles,
    /// each dimension is padded with the **first tile only** (dimensions the tile lacks count as 1),
    /// the element count is rounded up to a multiple of `L`, then `E` applied. A dimension with a split
    /// config counts as its largest split (the size is that of one split). It can under-count nested tiles.
    pub xla_array_size_bytes: i64,
    /// Every tile expanded, then `L`, then `E`: the bytes the layout really occupies.
    pub physical_bytes: i64,
}

impl Sizes {
    /// `physical_bytes − logical_bytes`.
    pub fn padding_bytes(&self) -> i64 {
        self.physical_bytes - self.logical_bytes
    }
}

/// Bits one element occupies: `E` when set, otherwise the type's byte width times 8.
pub fn element_bits(a: &ArrayShape) -> i64 {
    if a.layout.element_size_in_bits > 0 {
        a.layout.element_size_in_bits
    } else {
        i64::from(a.element_type.byte_width()) * 8
    }
}

fn bytes_of(elements: i64, bits: i64) -> Result<i64> {
    if bits % 8 == 0 {
        // Whole bytes per element, as XLA counts them: no overflow from counting bits first.
        return elements
            .checked_mul(bits / 8)
            .ok_or_else(|| overflow("computing a byte size"));
    }
    let total = elements
        .checked_mul(bits)
        .ok_or_else(|| overflow("computing a byte size"))?;
    Ok(total / 8 + i64::from(total % 8 != 0))
}

fn round_up(n: i64, multiple: i64) -> Result<i64> {
    let r = n % multiple;
    if r == 0 {
        Ok(n)
    } else {
        n.checked_add(multiple - r)
            .ok_or_else(|| overflow("rounding up to L"))
    }
}

/// The logical, XLA-padded and exact physical sizes of an array.
///
/// Laws: `logical_bytes = ceil(n·bits/8)` for the `n` elements; `physical_bytes = ceil(round_up(slots, L)·bits/8)`
/// for the slots of every tile expanded; `xla_array_size_bytes` follows XLA's `ShapeUtil::ArraySize`:
/// `logical_bytes` for an untiled layout (even with `L`), and for a tiled one
/// `ceil(round_up(Π round_up(d_j, t_j) · Π d_rest, L)·bits/8)` over the first tile, each `d` the largest
/// split of its dimension when a split config names it. Without split configs,
/// `logical_bytes ≤ xla_array_size_bytes ≤ physical_bytes`.
///
/// ```
/// use axe_xla::{parse_shape, sizes};
/// let s = parse_shape("f32[3,5]{1,0:T(8,128)(3,1)}")?;
/// let z = sizes(s.as_array().unwrap())?;
/// assert_eq!((z.logical_bytes, z.xla_array_size_bytes, z.physical_bytes), (60, 4096, 4608));
/// let s = parse_shape("f32[3,5]{1,0:L(7)}")?;
/// let z = sizes(s.as_array().unwrap())?;
/// assert_eq!((z.logical_bytes, z.xla_array_size_bytes, z.physical_bytes), (60, 60, 84));
/// # Ok::<(), axe_xla::XlaError>(())
/// ```
pub fn sizes(a: &ArrayShape) -> Result<Sizes> {
    // An overflow names the shape it happened in.
    sizes_of(a).map_err(|e| match e {
        XlaError::Overflow(what) => XlaError::Overflow(format!("{what} of {a}")),
        e => e,
    })
}

fn sizes_of(a: &ArrayShape) -> Result<Sizes> {
    if !a.element_type.is_array_type() {
        return Err(XlaError::Unsupported(format!(
            "{} has no size",
            a.element_type
        )));
    }
    let bits = element_bits(a);
    let n = static_dims(a)?
        .iter()
        .try_fold(1i64, |p, &d| p.checked_mul(d))
        .ok_or_else(|| overflow("counting elements"))?;
    let logical_bytes = bytes_of(n, bits)?;
    let l = a.layout.tail_padding_alignment_in_elements.max(1);
    let physical_elements = round_up(Tiling::new(a)?.expanded_elements()?, l)?;
    let xla_array_size_bytes = if a.layout.tiles.is_empty() {
        logical_bytes
    } else {
        let mut first = a.clone();
        first.layout.tiles.truncate(1);
        first.layout.split_configs.clear();
        let rank = a.rank();
        let configs = &a.layout.split_configs;
        for (k, c) in configs.iter().enumerate() {
            if configs[..k]
                .iter()
                .any(|seen| seen.dimension == c.dimension)
            {
                continue; // XLA uses the first config naming a dimension
            }
            // A split config names a physical dimension, counted from the most major.
            let logical = usize::try_from(c.dimension)
                .ok()
                .and_then(|p| rank.checked_sub(p.checked_add(1)?))
                .and_then(|i| a.layout.minor_to_major.get(i))
                .and_then(|&d| usize::try_from(d).ok());
            if let Some(size) = logical.and_then(|d| first.dims.get_mut(d)) {
                let extent = size.bound().unwrap_or(0);
                *size = Dim::Static(max_split_size(extent, &c.split_indices)?);
            }
        }
        let xla_elements = round_up(Tiling::new(&first)?.expanded_elements()?, l)?;
        bytes_of(xla_elements, bits)?
    };
    Ok(Sizes {
        logical_bytes,
        xla_array_size_bytes,
        physical_bytes: bytes_of(physical_elements, bits)?,
    })
}

/// The largest piece a split config cuts a dimension of `extent` into (XLA's `MaxSplitSize`): the
/// differences of consecutive split points from 0, and `extent` minus the last one, at least 0.
fn max_split_size(extent: i64, split_indices: &[i64]) -> Result<i64> {
    let mut largest = 0i64;
    let mut last = 0i64;
    for &i in split_indices {
        largest = largest.max(
            i.checked_sub(last)
                .ok_or_else(|| overflow("measuring a split"))?,
        );
        last = i;
    }
    Ok(largest.max(
        extent
            .checked_sub(last)
            .ok_or_else(|| overflow("measuring a split"))?,
    ))
}

/// Where an element lives: its linear index (in elements), and its bit and byte offsets with packing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementOffset {
    /// Position in memory order, in elements.
    pub linear: i64,
    /// `linear × element bits`.
    pub bit_offset: i64,
    /// `bit_offset / 8`.
    pub byte_offset: i64,
}

/// The offsets of element `index` of `a` (all tiles applied, sub-byte packing per `E`).
pub fn element_offset(a: &ArrayShape, index: &[i64]) -> Result<ElementOffset> {
    let linear = Tiling::new(a)?.linear_index(index)?;
    let bit_offset = linear
        .checked_mul(element_bits(a))
        .ok_or_else(|| overflow("computing a bit offset"))?;
    Ok(ElementOffset {
        linear,
        bit_offset,
        byte_offset: bit_offset / 8,
    })
}

/// Why XLA's `ShapeUtil::ArraySize` can differ from the bytes `layout` occupies, one phrase per reason
/// (empty when it counts exactly what the layout occupies): it pads with the first tile only, leaves out
/// `L` when there are no tiles, and counts a split dimension by its largest split.
pub fn array_size_reasons(layout: &crate::shape::Layout) -> Vec<&'static str> {
    let mut reasons = Vec::new();
    if layout.tiles.len() > 1 {
        reasons.push("pads with the first tile only");
    }
    if layout.tiles.is_empty() && layout.tail_padding_alignment_in_elements > 1 {
        reasons.push("leaves out L when the layout has no tiles");
    }
    if !layout.tiles.is_empty() && !layout.split_configs.is_empty() {
        reasons.push("counts a split dimension by its largest split");
    }
    reasons
}
