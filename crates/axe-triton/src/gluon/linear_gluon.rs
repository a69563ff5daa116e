//! Gluon's linear layouts, `DistributedLinearLayout(reg_bases, lane_bases, warp_bases, block_bases,
//! shape)` and `SharedLinearLayout(offset_bases, block_bases, alignment)`: the bases themselves, as
//! Triton 3.9 lays them over a tensor.
//!
//! A distributed one over its own shape is its bases. Over a smaller tensor the register bases that
//! reach past it are dropped and the other bases' coordinates past it become zero (copies); over a larger
//! one more registers double the dims, in the order the register bases first move them, then the rest
//! from the last dim to the first. Each base moves one dim by a power of two (or nothing) and, as
//! Triton requires of the linear encoding it returns, the nonzero bases of the layout so fitted are a
//! permutation matrix (none twice): bases that coincide are fine where the tensor is too small for
//! them to count. A shared one (any bases reaching every element, XOR swizzles among them) is laid out over
//! the shape its bases reach only (Triton does not broadcast shared layouts).

use super::cga::check_permutation;
use super::parse::ints;
use super::parse_padded::bases;
use super::{grow, GluonLayout};
use crate::error::{Result, TritonError};
use crate::linear::LinearLayout;
use crate::syntax::{error_at, Spanned, Value};

/// The in-dims of a distributed linear layout, in Triton's order.
pub(crate) const DISTRIBUTED: [&str; 4] = ["register", "lane", "warp", "block"];

/// The linear layout of a linear Gluon layout with `bases` (in-dim name → bases) and its own `own` shape
/// over `shape` (see the module docs).
pub(crate) fn to_linear(
    bases: &[(String, Vec<Vec<u64>>)],
    own: &[u64],
    shape: &[u64],
) -> Result<LinearLayout> {
    let rank = shape.len();
    let shared = bases.first().is_some_and(|(n, _)| n == "offset");
    if shared && own != shape {
        return Err(TritonError::Gluon(format!(
            "a SharedLinearLayout is for shape {own:?} (what its bases reach), not {shape:?}"
        )));
    }
    let all: Vec<Vec<u64>> = bases.iter().flat_map(|(_, b)| b.iter().cloned()).collect();
    if shared {
        return LinearLayout::new(
            bases.to_vec(),
            shape
                .iter()
                .enumerate()
                .map(|(i, s)| (format!("dim{i}"), *s))
                .collect(),
        );
    }
    // Each base moves one dim by a power of two (or nothing); the permutation is checked once the
    // layout is fitted to the tensor (bases past a smaller one no longer count).
    for (i, b) in all.iter().enumerate() {
        let nonzero: Vec<&u64> = b.iter().filter(|c| **c != 0).collect();
        if b.len() != rank || nonzero.len() > 1 || nonzero.iter().any(|c| !c.is_power_of_two()) {
            return Err(TritonError::Gluon(format!(
                "base {i} of the linear layout must have {rank} coordinates and move one dim by a power \
                 of two (or be all zeros), as Triton requires"
            )));
        }
    }
    let mut levels: Vec<(String, Vec<Vec<u64>>)> = bases.to_vec();
    // Smaller: registers past the tensor are dropped, other coordinates past it become zero.
    for (name, level) in &mut levels {
        if name == "register" {
            level.retain(|b| b.iter().zip(shape).all(|(c, s)| c < s));
        }
        for b in level.iter_mut() {
            for (c, s) in b.iter_mut().zip(shape) {
                if *c >= *s {
                    *c = 0;
                }
            }
        }
    }
    // Larger: more registers, dims in the order the register bases first move them, then the rest
    // from the last.
    let mut order: Vec<usize> = Vec::new();
    let registers = bases.iter().filter(|(n, _)| n == "register");
    for b in registers.flat_map(|(_, b)| b) {
        if let Some(d) = b.iter().position(|c| *c != 0) {
            if !order.contains(&d) {
                order.push(d);
            }
        }
    }
    for d in (0..rank).rev() {
        if !order.contains(&d) {
            order.push(d);
        }
    }
    let mut covered: Vec<u64> = own.iter().zip(shape).map(|(o, s)| *o.min(s)).collect();
    if let Some((_, reg)) = levels.iter_mut().find(|(n, _)| n == "register") {
        for &d in &order {
            while covered[d] < shape[d] {
                grow(reg, &mut covered, d, 1)?;
            }
        }
    }
    let out = shape
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("dim{i}"), *s))
        .collect();
    let fitted = LinearLayout::new(levels, out)?;
    let fitted_bases: Vec<Vec<u64>> = fitted
        .in_dims()
        .iter()
        .flat_map(|d| d.bases.iter().cloned())
        .collect();
    check_permutation(&fitted_bases, rank, "the fitted linear layout's")
        .map_err(|why| TritonError::Gluon(format!("{why}, as Triton requires")))?;
    Ok(fitted)
}

/// `DistributedLinearLayout(reg_bases, lane_bases, warp_bases, block_bases, shape)`.
pub(super) fn parse_distributed(
    src: &str,
    v: &Spanned,
    found: &[Option<&Spanned>],
) -> Result<GluonLayout> {
    let need = |k: usize, key: &str| {
        found[k].ok_or_else(|| {
            error_at(
                src,
                v.at,
                format!("`DistributedLinearLayout` needs `{key}`"),
            )
        })
    };
    let shape_v = need(4, "shape")?;
    let shape = ints(src, shape_v, "shape")?;
    if let Some(s) = shape.iter().find(|s| !s.is_power_of_two()) {
        return Err(error_at(
            src,
            shape_v.at,
            format!("shape sizes must be powers of two, not {s}"),
        ));
    }
    let mut levels = Vec::new();
    for (k, (key, name)) in ["reg_bases", "lane_bases", "warp_bases", "block_bases"]
        .iter()
        .zip(DISTRIBUTED)
        .enumerate()
    {
        let b = match found[k] {
            Some(a) => {
                let b = bases(src, a, key)?;
                check_bases(src, a, &b, &shape, key)?;
                b
            }
            None if k == 3 => Vec::new(),
            None => need(k, key).map(|_| Vec::new())?,
        };
        levels.push((name.to_string(), b));
    }
    surjective(src, v, &levels, &shape)?;
    Ok(GluonLayout::Linear {
        bases: levels,
        shape,
    })
}

/// `SharedLinearLayout(offset_bases, block_bases=[], alignment=16)`: its shape is what its bases reach.
pub(super) fn parse_shared(
    src: &str,
    v: &Spanned,
    found: &[Option<&Spanned>],
) -> Result<GluonLayout> {
    let off_v =
        found[0].ok_or_else(|| error_at(src, v.at, "`SharedLinearLayout` needs `offset_bases`"))?;
    let offset = bases(src, off_v, "offset_bases")?;
    let block = match found[1] {
        Some(a) => bases(src, a, "block_bases")?,
        None => Vec::new(),
    };
    if let Some(a) = found[2] {
        match a.value {
            Value::Int(x) if x > 0 && (x as u64).is_power_of_two() => {}
            _ => {
                return Err(error_at(
                    src,
                    a.at,
                    "alignment must be a positive power of two",
                ))
            }
        }
    }
    let Some(rank) = offset.first().map(Vec::len) else {
        return Err(error_at(src, off_v.at, "offset_bases must not be empty"));
    };
    let mut shape = vec![1u64; rank];
    for b in offset.iter().chain(&block) {
        if b.len() != rank {
            return Err(error_at(
                src,
                off_v.at,
                format!("every base has {rank} coordinates, as the first offset base"),
            ));
        }
        for (s, c) in shape.iter_mut().zip(b) {
            let reach = c
                .checked_add(1)
                .and_then(u64::checked_next_power_of_two)
                .ok_or_else(|| error_at(src, off_v.at, "a base coordinate is too large"))?;
            *s = (*s).max(reach);
        }
    }
    let levels = vec![("offset".to_string(), offset), ("block".to_string(), block)];
    surjective(src, v, &levels, &shape)?;
    Ok(GluonLayout::Linear {
        bases: levels,
        shape,
    })
}

/// Every base of `b` has one coordinate per dim of `shape`, each within it.
fn check_bases(src: &str, a: &Spanned, b: &[Vec<u64>], shape: &[u64], key: &str) -> Result<()> {
    for base in b {
        if base.len() != shape.len() || base.iter().zip(shape).any(|(c, s)| c >= s) {
            return Err(error_at(
                src,
                a.at,
                format!(
                    "{key} base {base:?} must have {} coordinates within the shape {shape:?}",
                    shape.len()
                ),
            ));
        }
    }
    Ok(())
}

/// The bases reach every element of `shape`, as Triton requires of a layout.
fn surjective(
    src: &str,
    v: &Spanned,
    levels: &[(String, Vec<Vec<u64>>)],
    shape: &[u64],
) -> Result<()> {
    let out = shape
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("dim{i}"), *s))
        .collect();
    let ll =
        LinearLayout::new(levels.to_vec(), out).map_err(|e| error_at(src, v.at, e.to_string()))?;
    if ll.is_surjective() {
        Ok(())
    } else {
        Err(error_at(
            src,
            v.at,
            format!("the bases must reach every element of {shape:?}, as Triton requires"),
        ))
    }
}
