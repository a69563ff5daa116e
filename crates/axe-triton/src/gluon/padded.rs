//! `PaddedSharedLayout`: shared memory with padding (Triton's `#ttg.padded_shared`), in-dims `offset` and
//! `block`.
//!
//! The layout has two parts. Its **linear component** maps a logical offset (and a CTA, in-dim `block`)
//! to a tensor element of the layout's own `shape`: `cga_layout` splits the tensor into one part per CTA
//! (a CGA encoding, in units of the part, as for every multi-CTA layout; a zero base gives CTAs holding
//! copies), `offset_bases` lay out one part, each base moving one dim by a power of two, together (less
//! the zero CTA bases) a bijection (no broadcast within a CTA, no per-element swizzle: a permutation of
//! the tensor's bits). Its **padding** moves logical offsets apart in memory:
//! after every `interval` elements, `padding` unused elements follow, summed over the pairs, so logical
//! offset `o` is stored at
//!
//! ```text
//! pad(o) = o + Σ (o / interval_i) · padding_i
//! ```
//!
//! and the buffer holds `pad(n - 1) + 1` elements for `n` tensor elements (no padding after the last).
//! `pad` adds over disjoint bits (`pad(a | b) = pad(a) + pad(b)` when `a & b = 0`, since every interval is
//! a power of two), so the placement of the tensor in padded memory is an Axe layout whose strides are
//! `pad(2^k)` of the logical offset bits: [`to_axe`].

use super::{cga, unit};
use crate::error::{Result, TritonError};
use crate::linear::LinearLayout;
use axe_layout::{Coord, Iter, Layout};

/// The most tensor elements a padded layout may hold (2^30), so that every padded offset fits.
const MAX_ELEMENTS: u64 = 1 << 30;

/// Where logical offset `offset` is stored: `offset + Σ (offset / interval) · padding` over `pairs`
/// (`(interval, padding)`, both powers of two).
pub fn padded_offset(pairs: &[(u64, u64)], offset: u64) -> Result<u64> {
    pairs.iter().try_fold(offset, |acc, (interval, padding)| {
        let Some(step) = (offset >> interval.trailing_zeros()).checked_mul(*padding) else {
            return Err(TritonError::TooLarge(format!("padded offset of {offset}")));
        };
        acc.checked_add(step)
            .ok_or_else(|| TritonError::TooLarge(format!("padded offset of {offset}")))
    })
}

/// The elements a buffer of `elements` tensor elements takes with the padding `pairs`:
/// `pad(elements - 1) + 1` (no padding after the last element; 0 for no elements).
pub fn padded_size(pairs: &[(u64, u64)], elements: u64) -> Result<u64> {
    match elements.checked_sub(1) {
        None => Ok(0),
        Some(last) => padded_offset(pairs, last)?
            .checked_add(1)
            .ok_or_else(|| TritonError::TooLarge(format!("padded size of {elements}"))),
    }
}

/// Checks the interval/padding pairs as Triton does: at least one, every value a power of two, no
/// interval twice.
pub(crate) fn check_pairs(pairs: &[(u64, u64)]) -> std::result::Result<(), String> {
    if pairs.is_empty() {
        return Err("a PaddedSharedLayout needs at least one interval-padding pair".into());
    }
    for (k, (i, p)) in pairs.iter().enumerate() {
        if !i.is_power_of_two() || !p.is_power_of_two() {
            return Err(format!(
                "pair {k} is [{i}, {p}]: intervals and paddings must be powers of two"
            ));
        }
        if pairs[..k].iter().any(|(j, _)| j == i) {
            return Err(format!("interval {i} is given twice"));
        }
    }
    Ok(())
}

/// The linear component (in-dims `offset` and `block` onto `dim0..` of `shape`), checked as Triton's
/// verifier checks it: every base moves one dim by a power of two within the shape, and the whole is a
/// bijection once the zero CTA bases (CTAs holding copies) are removed (no broadcast within a CTA).
pub(crate) fn linear_component(
    offset_bases: &[Vec<u64>],
    cga_layout: &[Vec<u64>],
    shape: &[u64],
) -> std::result::Result<LinearLayout, String> {
    let rank = shape.len();
    if rank == 0 {
        return Err("a PaddedSharedLayout has rank at least 1".into());
    }
    let mut elements = 1u64;
    for (d, s) in shape.iter().enumerate() {
        if !s.is_power_of_two() {
            return Err(format!("shape[{d}] is {s}, not a power of two"));
        }
        elements = elements.saturating_mul(*s);
    }
    if elements > MAX_ELEMENTS {
        return Err(format!(
            "shape {shape:?} holds more than 2^30 elements, too large"
        ));
    }
    cga::check(cga_layout, rank)?;
    // Each CTA holds its part of the tensor: dim d split in two by each cga base that moves it.
    let mut part = shape.to_vec();
    for b in cga_layout {
        for (p, v) in part.iter_mut().zip(b) {
            if *v != 0 {
                if *p < 2 {
                    return Err(format!(
                        "cga_layout splits a dim of {shape:?} into more parts than it has elements"
                    ));
                }
                *p /= 2;
            }
        }
    }
    for (i, b) in offset_bases.iter().enumerate() {
        if b.len() != rank {
            return Err(format!(
                "offset_bases base {i} has {} coordinates, the shape {rank}",
                b.len()
            ));
        }
        let moved: Vec<(usize, u64)> = b
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, v)| *v != 0)
            .collect();
        match moved[..] {
            [(d, v)] if v.is_power_of_two() && v < part[d] => {}
            [] => {
                return Err(format!(
                    "offset_bases base {i} is all zeros: a padded layout does not broadcast"
                ))
            }
            _ => {
                return Err(format!(
                    "offset_bases base {i} must move one dim by a power of two within one CTA's part {part:?}"
                ))
            }
        }
    }
    // A CTA base is in units of the part, as in every CGA encoding.
    let block: Vec<Vec<u64>> = cga_layout
        .iter()
        .map(|b| {
            b.iter()
                .zip(&part)
                .map(|(v, p)| v.saturating_mul(*p))
                .collect()
        })
        .collect();
    let out: Vec<(String, u64)> = shape
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("dim{i}"), *s))
        .collect();
    // Less the zero CTA bases (CTAs holding copies, each in its own shared memory, as Triton accepts),
    // the component is a bijection.
    let copies_removed = LinearLayout::new(
        vec![
            ("offset".to_string(), offset_bases.to_vec()),
            (
                "block".to_string(),
                block
                    .iter()
                    .filter(|b| b.iter().any(|v| *v != 0))
                    .cloned()
                    .collect(),
            ),
        ],
        out.clone(),
    )
    .map_err(|e| e.to_string())?;
    if !(copies_removed.is_injective() && copies_removed.is_surjective()) {
        return Err(format!(
            "the offset and cga_layout bases must reach every element of {shape:?} once (Triton's \
             linear component is invertible, but for CTAs holding copies)"
        ));
    }
    let ll = LinearLayout::new(
        vec![
            ("offset".to_string(), offset_bases.to_vec()),
            ("block".to_string(), block),
        ],
        out,
    )
    .map_err(|e| e.to_string())?;
    Ok(ll)
}

/// The identity offset bases over `shape` along the dims in `order` (most minor first): Triton's
/// `PaddedSharedLayout.with_identity_for`.
pub fn identity_bases(shape: &[u64], order: &[usize]) -> Vec<Vec<u64>> {
    let mut bases = Vec::new();
    for &d in order {
        let mut v = 1u64;
        while v < shape.get(d).copied().unwrap_or(1) {
            bases.push(unit(shape.len(), d, v));
            v = v.saturating_mul(2);
        }
    }
    bases
}

/// The placement of the tensor in padded memory: tensor index (row-major over `ll`'s out-dims) → the
/// padded `offset` and the `block`, from the linear component `ll` (a bijection whose `offset` strides
/// are powers of two) and the padding `pairs`. Each logical offset bit `2^k` becomes stride `pad(2^k)`.
pub(crate) fn to_axe(ll: &LinearLayout, pairs: &[(u64, u64)]) -> Result<Layout> {
    let logical = ll.to_axe()?;
    let (shard, replica, _) = logical.into_parts();
    let mut out = Vec::new();
    for it in shard {
        if it.axis().name() != "offset" {
            out.push(it);
            continue;
        }
        let stride = u64::try_from(it.stride())
            .map_err(|_| TritonError::Invalid("a negative offset stride".into()))?;
        // The iter's bits, most significant first (shard iters run slowest first).
        for k in (0..it.extent().trailing_zeros()).rev() {
            let bit = stride
                .checked_shl(k)
                .ok_or_else(|| TritonError::TooLarge("offset stride".into()))?;
            let padded = i64::try_from(padded_offset(pairs, bit)?)
                .map_err(|_| TritonError::TooLarge("padded stride".into()))?;
            out.push(Iter::new(2, padded, *it.axis())?);
        }
    }
    Ok(Layout::new(out, replica, Coord::zero())?.canonicalize()?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn offsets_and_size() {
        // Every 4 elements one padding element, every 8 two more.
        let pairs = [(4, 1), (8, 2)];
        let got: Vec<u64> = (0..16).map(|o| padded_offset(&pairs, o).unwrap()).collect();
        assert_eq!(
            got,
            [0, 1, 2, 3, 5, 6, 7, 8, 12, 13, 14, 15, 17, 18, 19, 20]
        );
        assert_eq!(padded_size(&pairs, 16).unwrap(), 21);
        assert_eq!(padded_size(&pairs, 0).unwrap(), 0);
        assert!(padded_offset(&[(1, 1 << 63)], 4).is_err());
    }

    #[test]
    fn pairs_and_components_are_checked() {
        assert!(check_pairs(&[]).is_err());
        assert!(check_pairs(&[(3, 1)])
            .unwrap_err()
            .contains("powers of two"));
        assert!(check_pairs(&[(4, 1), (4, 2)])
            .unwrap_err()
            .contains("twice"));
        let e = linear_component(&[vec![0, 1], vec![0, 1]], &[], &[1, 4]).unwrap_err();
        assert!(e.contains("once"), "{e}");
        let e = linear_component(&[vec![1, 1]], &[], &[2, 2]).unwrap_err();
        assert!(e.contains("one dim"), "{e}");
        let e = linear_component(&[vec![0, 0]], &[], &[1, 2]).unwrap_err();
        assert!(e.contains("broadcast"), "{e}");
        assert!(linear_component(&[vec![0, 1]], &[vec![1, 0]], &[2, 2]).is_ok());
        // Two CTAs holding copies of the buffer, as Triton 3.9 accepts.
        let ll = linear_component(&[vec![0, 1], vec![1, 0]], &[vec![0, 0]], &[2, 2]).unwrap();
        assert!(ll.is_surjective() && !ll.is_injective());
        let e = linear_component(&[vec![0, 1]], &[vec![0, 0]], &[2, 2]).unwrap_err();
        assert!(e.contains("once"), "{e}");
    }
}
