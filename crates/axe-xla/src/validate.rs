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
#[inline]
pub fn validate(shape: &Shape) -> Result<()> {
    match shape {
        Shape::Array(a) => validate_array(a),
        other => validate_composite(other),
    }
}

/// [`validate`] for tuples, buffers, tokens and opaques (kept apart so that an array's check stays
/// small enough to inline).
#[inline(never)]
fn validate_composite(shape: &Shape) -> Result<()> {
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
#[inline]
pub fn validate_array(a: &ArrayShape) -> Result<()> {
    if follows_rules(a) {
        Ok(())
    } else {
        first_broken_rule(a)
    }
}

/// Whether `a` breaks none of the rules: every check of [`first_broken_rule`] in a few branches (the
/// common case; the error, when there is one, comes from [`first_broken_rule`]).
#[inline]
fn follows_rules(a: &ArrayShape) -> bool {
    let l = &a.layout;
    let rank = a.dims.len();
    let m2m: &[i64] = &l.minor_to_major;
    if m2m.len() != rank || rank > 64 {
        return false;
    }
    let mut seen = 0u64;
    for &d in m2m {
        // A negative entry becomes a huge u64 and fails the bound.
        let d = d as u64;
        if d >= rank as u64 {
            return false;
        }
        seen |= 1 << d;
    }
    if seen.count_ones() as usize != rank {
        return false;
    }
    for tile in l.tiles.iter() {
        let dims: &[TileDim] = &tile.0;
        if dims.is_empty()
            || dims
                .iter()
                .any(|d| matches!(d, TileDim::Size(s) if *s <= 0))
        {
            return false;
        }
    }
    l.tail_padding_alignment_in_elements > 0
        && l.element_size_in_bits >= 0
        && l.index_primitive_type.is_none()
        && l.pointer_primitive_type.is_none()
        && l.physical_shape.is_none()
        && l.split_configs
            .iter()
            .all(|c| c.dimension >= 0 && (c.dimension as u64) < rank.max(1) as u64)
}

/// The first rule `a` breaks, in the order [`validate`] lists them, as an error.
#[cold]
fn first_broken_rule(a: &ArrayShape) -> Result<()> {
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
