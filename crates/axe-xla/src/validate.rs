//! XLA's rules for a layout on a shape (`ValidateLayoutForShape`), as a separate step after parsing.

use crate::error::{Result, XlaError};
use crate::shape::{ArrayShape, Shape, TileDim};

/// Checks a shape's layouts against XLA's rules: `minor_to_major` is a permutation of the dimensions;
/// tiles are non-empty with no zero (or negative) sizes; `L > 0`; `E ≥ 0`; the sparse-only attributes
/// `#`, `*` and `P` are absent; split configs name an existing dimension. Tuples and buffers are checked
/// element by element.
///
/// ```
/// use axe_xla::{parse_shape, validate};
/// assert!(validate(&parse_shape("f32[3,5]{1,0:T(2,2)}")?).is_ok());
/// let e = validate(&parse_shape("f32[4,4]{0,0}")?).unwrap_err();
/// assert!(e.to_string().contains("permutation"), "{e}");
/// # Ok::<(), axe_xla::XlaError>(())
/// ```
pub fn validate(shape: &Shape) -> Result<()> {
    match shape {
        Shape::Array(a) => validate_array(a),
        Shape::Tuple(elems) => elems.iter().enumerate().try_for_each(|(i, e)| {
            validate(e).map_err(|err| match err {
                XlaError::Invalid(m) => XlaError::Invalid(format!("tuple element {i}: {m}")),
                other => other,
            })
        }),
        Shape::Buffer(inner) => validate(inner),
        Shape::Token | Shape::Opaque => Ok(()),
    }
}

/// Whether `m2m` holds each of `0..m2m.len()` once (a bit set up to rank 128, a table past that).
fn is_permutation(m2m: &[i64]) -> bool {
    let rank = m2m.len();
    let index = |d: i64| usize::try_from(d).ok().filter(|&d| d < rank);
    if rank <= 128 {
        let mut seen: u128 = 0;
        for &d in m2m {
            match index(d) {
                Some(d) if seen & (1 << d) == 0 => seen |= 1 << d,
                _ => return false,
            }
        }
        true
    } else {
        let mut seen = vec![false; rank];
        for &d in m2m {
            match index(d) {
                Some(d) if !seen[d] => seen[d] = true,
                _ => return false,
            }
        }
        true
    }
}

#[cold]
fn invalid<T>(msg: String) -> Result<T> {
    Err(XlaError::Invalid(msg))
}

/// The rules for one array (see [`validate`]).
pub fn validate_array(a: &ArrayShape) -> Result<()> {
    let l = &a.layout;
    let rank = a.rank();
    if l.minor_to_major.len() != rank {
        return invalid(format!(
            "minor_to_major has {} entries for a rank-{rank} shape",
            l.minor_to_major.len()
        ));
    }
    if !is_permutation(&l.minor_to_major) {
        return invalid(format!(
            "minor_to_major {:?} is not a permutation of 0..{rank}",
            l.minor_to_major
        ));
    }
    for (n, tile) in l.tiles.iter().enumerate() {
        if tile.0.is_empty() {
            return invalid(format!("tile {n} is empty"));
        }
        if let Some(bad) = tile
            .0
            .iter()
            .find(|d| matches!(d, TileDim::Size(s) if *s <= 0))
        {
            return invalid(format!("tile {n} has a non-positive size {bad}"));
        }
    }
    if l.tail_padding_alignment_in_elements <= 0 {
        return invalid(format!(
            "L must be positive, got {}",
            l.tail_padding_alignment_in_elements
        ));
    }
    if l.element_size_in_bits < 0 {
        return invalid(format!(
            "E must not be negative, got {}",
            l.element_size_in_bits
        ));
    }
    if l.index_primitive_type.is_some() || l.pointer_primitive_type.is_some() {
        return invalid("index and pointer types (#, *) are only for sparse arrays".to_string());
    }
    if l.physical_shape.is_some() {
        return invalid("a physical shape (P) is only for sparse arrays".to_string());
    }
    for c in &l.split_configs {
        if c.dimension < 0 || c.dimension as usize >= rank.max(1) {
            return invalid(format!(
                "split config names dimension {} of a rank-{rank} shape",
                c.dimension
            ));
        }
    }
    Ok(())
}
