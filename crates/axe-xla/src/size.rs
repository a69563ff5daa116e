//! Sizes in bytes: logical, XLA's padded `ArraySize`, and the exact physical size.

use crate::error::{overflow, Result, XlaError};
use crate::shape::ArrayShape;
use crate::tiling::{static_dims, Tiling};

/// The three sizes of an array, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// XLA's `ByteSizeOf`: the elements alone, ignoring tiles and `L` (`ceil(n·E/8)` when `E` is set).
    pub logical_bytes: i64,
    /// XLA's `ArraySize`: padded with the **first tile only** (missing dimensions count as 1), rounded up to
    /// a multiple of `L` elements, then `E` applied. It can under-count nested tiles.
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
/// ```
/// use axe_xla::{parse_shape, sizes};
/// let s = parse_shape("f32[3,5]{1,0:T(8,128)(3,1)}")?;
/// let z = sizes(s.as_array().unwrap())?;
/// assert_eq!((z.logical_bytes, z.xla_array_size_bytes, z.physical_bytes), (60, 4096, 4608));
/// # Ok::<(), axe_xla::XlaError>(())
/// ```
pub fn sizes(a: &ArrayShape) -> Result<Sizes> {
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
    let mut first = a.clone();
    first.layout.tiles.truncate(1);
    let xla_elements = round_up(Tiling::new(&first)?.expanded_elements()?, l)?;
    let physical_elements = round_up(Tiling::new(a)?.expanded_elements()?, l)?;
    Ok(Sizes {
        logical_bytes,
        xla_array_size_bytes: bytes_of(xla_elements, bits)?,
        physical_bytes: bytes_of(physical_elements, bits)?,
    })
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
