//! Reading `PaddedSharedLayout(interval_padding_pairs, offset_bases, cga_layout, shape)` as Triton prints
//! it, and the `#ttg.padded_shared<...>` attribute of TTGIR, checked as Triton's verifier checks them,
//! each error at its argument.

use super::padded::{check_pairs, identity_bases, linear_component};
use super::parse::ints;
use super::GluonLayout;
use crate::error::Result;
use crate::syntax::{error_at, Reader, Spanned, Value};

/// A list of lists of non-negative integers (`[[0, 1], [1, 0]]`).
pub(super) fn bases(src: &str, v: &Spanned, what: &str) -> Result<Vec<Vec<u64>>> {
    let Value::List(items) = &v.value else {
        return Err(error_at(
            src,
            v.at,
            format!("{what} must be a list of lists"),
        ));
    };
    items
        .iter()
        .map(|b| match &b.value {
            Value::List(cs) => cs
                .iter()
                .map(|c| match c.value {
                    Value::Int(x) if x >= 0 => Ok(x as u64),
                    _ => Err(error_at(
                        src,
                        c.at,
                        format!("{what} entries must be integers ≥ 0"),
                    )),
                })
                .collect(),
            _ => Err(error_at(
                src,
                b.at,
                format!("{what} must be a list of lists"),
            )),
        })
        .collect()
}

/// `PaddedSharedLayout(interval_padding_pairs=[[i, p], ...], offset_bases=[[...], ...],
/// cga_layout=[[...], ...], shape=[...])`.
pub(super) fn padded_shared(
    src: &str,
    v: &Spanned,
    found: &[Option<&Spanned>],
) -> Result<GluonLayout> {
    let need = |k: usize, key: &str| {
        found[k].ok_or_else(|| error_at(src, v.at, format!("`PaddedSharedLayout` needs `{key}`")))
    };
    let pairs_v = need(0, "interval_padding_pairs")?;
    let mut pairs = Vec::new();
    for pair in bases(src, pairs_v, "interval_padding_pairs")? {
        match pair[..] {
            [i, p] => pairs.push((i, p)),
            _ => {
                return Err(error_at(
                    src,
                    pairs_v.at,
                    "each interval_padding_pairs entry is [interval, padding]",
                ))
            }
        }
    }
    check_pairs(&pairs).map_err(|why| error_at(src, pairs_v.at, why))?;
    let offset_v = need(1, "offset_bases")?;
    let offset_bases = bases(src, offset_v, "offset_bases")?;
    let cga_layout = match found[2] {
        None => Vec::new(),
        Some(a) if matches!(&a.value, Value::Word(w) if w == "None") => Vec::new(),
        Some(a) => bases(src, a, "cga_layout")?,
    };
    let shape_v = need(3, "shape")?;
    let shape = ints(src, shape_v, "shape")?;
    if let Err(why) = linear_component(&offset_bases, &cga_layout, &shape) {
        let at = if why.starts_with("cga_layout") {
            found[2].map_or(v.at, |a| a.at)
        } else if why.starts_with("shape") || why.contains("rank") {
            shape_v.at
        } else {
            offset_v.at
        };
        return Err(error_at(src, at, why));
    }
    Ok(GluonLayout::PaddedShared {
        interval_padding_pairs: pairs,
        offset_bases,
        cga_layout,
        shape,
    })
}

/// `#ttg.padded_shared<[interval:+padding, ...] {offset = [[...]], block = [[...]]}>`, the attribute
/// Triton prints, or its short form `{order = [...], shape = [...]}` (the identity along `order`, one
/// CTA). The long form's shape is what its bases reach (the linear component is a bijection), and its
/// `block` bases are tensor positions: each must be a multiple of one CTA's part, as the Gluon form's
/// `cga_layout` (in units of the part) writes them.
pub(super) fn padded_shared_attr(src: &str) -> Result<GluonLayout> {
    let mut r = Reader::new(src);
    r.expect("#ttg.padded_shared")?;
    r.expect("<")?;
    r.expect("[")?;
    let pairs_at = r.pos();
    let mut pairs = Vec::new();
    loop {
        let interval = attr_int(src, &mut r, "an interval")?;
        r.expect(":")?;
        r.expect("+")?;
        let padding = attr_int(src, &mut r, "a padding")?;
        pairs.push((interval, padding));
        if r.eat("]") {
            break;
        }
        r.expect(",")?;
    }
    check_pairs(&pairs).map_err(|why| error_at(src, pairs_at, why))?;
    let dict = r.value(0)?;
    r.expect(">")?;
    if !r.at_end() {
        return Err(error_at(
            src,
            r.pos(),
            "unexpected text after the attribute",
        ));
    }
    let Value::Map(entries) = &dict.value else {
        return Err(error_at(
            src,
            dict.at,
            "expected `{offset = [...], block = [...]}` or `{order = [...], shape = [...]}`",
        ));
    };
    let get = |key: &str| entries.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    if let Some((k, v)) = entries
        .iter()
        .find(|(k, _)| !["offset", "block", "order", "shape"].contains(&k.as_str()))
    {
        return Err(error_at(
            src,
            v.at,
            format!("unexpected key `{k}` (the keys are offset, block, order and shape)"),
        ));
    }
    let (offset_bases, cga_layout, shape) = match (get("offset"), get("order"), get("shape")) {
        (Some(off), None, None) => {
            let offset_bases = bases(src, off, "offset")?;
            let block = match get("block") {
                Some(b) => bases(src, b, "block")?,
                None => Vec::new(),
            };
            let (cga, shape) = cga_of_block(&offset_bases, &block)
                .map_err(|why| error_at(src, get("block").map_or(off.at, |b| b.at), why))?;
            (offset_bases, cga, shape)
        }
        (None, Some(order_v), Some(shape_v)) if get("block").is_none() => {
            let shape = ints(src, shape_v, "shape")?;
            let order: Vec<usize> = ints_from_zero(src, order_v, "order")?;
            let mut seen = order.clone();
            seen.sort_unstable();
            if seen != (0..shape.len()).collect::<Vec<_>>() {
                return Err(error_at(
                    src,
                    order_v.at,
                    format!(
                        "order must list each of the shape's {} dims once",
                        shape.len()
                    ),
                ));
            }
            (identity_bases(&shape, &order), Vec::new(), shape)
        }
        _ => {
            return Err(error_at(
                src,
                dict.at,
                "expected either `offset` (and `block`) or both `order` and `shape`",
            ))
        }
    };
    if let Err(why) = linear_component(&offset_bases, &cga_layout, &shape) {
        return Err(error_at(src, dict.at, why));
    }
    Ok(GluonLayout::PaddedShared {
        interval_padding_pairs: pairs,
        offset_bases,
        cga_layout,
        shape,
    })
}

/// A non-negative integer read by `r`.
fn attr_int(src: &str, r: &mut Reader<'_>, what: &str) -> Result<u64> {
    let v = r.value(0)?;
    match v.value {
        Value::Int(x) if x >= 0 => Ok(x as u64),
        _ => Err(error_at(
            src,
            v.at,
            format!("expected {what}, an integer ≥ 0"),
        )),
    }
}

/// A list of integers ≥ 0 (an `order`).
fn ints_from_zero(src: &str, v: &Spanned, what: &str) -> Result<Vec<usize>> {
    let Value::List(items) = &v.value else {
        return Err(error_at(src, v.at, format!("{what} must be a list")));
    };
    items
        .iter()
        .map(|i| match i.value {
            Value::Int(x) if x >= 0 => usize::try_from(x)
                .map_err(|_| error_at(src, i.at, format!("{what} entry too large"))),
            _ => Err(error_at(
                src,
                i.at,
                format!("{what} entries must be integers ≥ 0"),
            )),
        })
        .collect()
}

/// The shape the bases reach (per dim, the smallest power of two above every coordinate) and the
/// `block` bases as a CGA encoding in units of one CTA's part (shape over 2 per block base moving the dim).
fn cga_of_block(
    offset: &[Vec<u64>],
    block: &[Vec<u64>],
) -> std::result::Result<(Vec<Vec<u64>>, Vec<u64>), String> {
    let rank = match offset.first().or_else(|| block.first()) {
        Some(b) => b.len(),
        None => return Err("a padded_shared attribute needs at least one base".into()),
    };
    if let Some(b) = offset.iter().chain(block).find(|b| b.len() != rank) {
        return Err(format!(
            "base {b:?} has {} coordinates, others {rank}",
            b.len()
        ));
    }
    let mut shape = vec![1u64; rank];
    for (d, s) in shape.iter_mut().enumerate() {
        let top = offset.iter().chain(block).map(|b| b[d]).max().unwrap_or(0);
        *s = top
            .checked_add(1)
            .and_then(u64::checked_next_power_of_two)
            .ok_or_else(|| format!("coordinate {top} of dim{d} is too large"))?;
    }
    let mut part = shape.clone();
    for b in block {
        for (p, v) in part.iter_mut().zip(b) {
            if *v != 0 {
                *p = (*p / 2).max(1);
            }
        }
    }
    let cga = block
        .iter()
        .map(|b| {
            b.iter()
                .zip(&part)
                .map(|(v, p)| {
                    if v % p == 0 {
                        Ok(v / p)
                    } else {
                        Err(format!(
                            "block base {b:?} does not move whole CTA parts of {part:?} (the \
                             Gluon form's cga_layout cannot state it)"
                        ))
                    }
                })
                .collect()
        })
        .collect::<std::result::Result<Vec<Vec<u64>>, String>>()?;
    Ok((cga, shape))
}
