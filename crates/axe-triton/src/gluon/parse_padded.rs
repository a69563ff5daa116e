//! Reading `PaddedSharedLayout(interval_padding_pairs, offset_bases, cga_layout, shape)` as Triton prints
//! it, checked as Triton's verifier checks it, each error at its argument.

use super::padded::{check_pairs, linear_component};
use super::parse::ints;
use super::GluonLayout;
use crate::error::Result;
use crate::syntax::{error_at, Spanned, Value};

/// A list of lists of non-negative integers (`[[0, 1], [1, 0]]`).
fn bases(src: &str, v: &Spanned, what: &str) -> Result<Vec<Vec<u64>>> {
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
