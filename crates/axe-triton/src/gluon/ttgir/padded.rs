//! `#ttg.padded_shared<[interval:+padding, ...] {...}>` as Gluon's `PaddedSharedLayout`: the padding
//! pairs, then the linear component either as the identity over a shape (`{order = [1, 0], shape = [64,
//! 64]}`, Triton's shorthand) or as bases (`{offset = [[0, 1], ...], block = []}`, the tensor shape the
//! smallest powers of two holding every base).

use super::scan::{Attr, Param, Scan};
use crate::error::Result;
use crate::gluon::identity_bases;
use crate::syntax::{error_at, Spanned, Value};

/// Non-negative integers of a list parameter (`what` names it in errors).
fn uints(src: &str, v: &Spanned, what: &str) -> Result<Vec<u64>> {
    let Value::List(items) = &v.value else {
        return Err(error_at(src, v.at, format!("{what} must be a list")));
    };
    items
        .iter()
        .map(|i| match i.value {
            Value::Int(x) if x >= 0 => Ok(x as u64),
            _ => Err(error_at(
                src,
                i.at,
                format!("{what} entries must be integers ≥ 0"),
            )),
        })
        .collect()
}

/// A list of lists of integers, each at `at`.
fn synth(rows: &[Vec<u64>], at: usize) -> Spanned {
    let int = |x: u64| Spanned {
        at,
        value: Value::Int(i64::try_from(x).unwrap_or(i64::MAX)),
    };
    Spanned {
        at,
        value: Value::List(
            rows.iter()
                .map(|r| Spanned {
                    at,
                    value: Value::List(r.iter().map(|x| int(*x)).collect()),
                })
                .collect(),
        ),
    }
}

/// The `PaddedSharedLayout(...)` call that a `#ttg.padded_shared` attribute stands for.
pub(super) fn padded<'a>(scan: &mut Scan<'a>, attr: &Attr<'a>) -> Result<Spanned> {
    let src = scan.src;
    let pairs = scan.padded_pairs(attr)?;
    let from = scan.pos();
    let entries = scan.dict(attr, from)?;
    let mut found: [Option<&Spanned>; 4] = [None; 4];
    const KEYS: [&str; 4] = ["order", "shape", "offset", "block"];
    for (key, key_at, param) in &entries {
        let Some(k) = KEYS.iter().position(|n| n == key) else {
            return Err(error_at(
                src,
                *key_at,
                format!("`#ttg.padded_shared` has no parameter `{key}` (it has order and shape, or offset and block)"),
            ));
        };
        let Param::Plain(v) = param else {
            return Err(error_at(src, *key_at, format!("`{key}` is not a layout")));
        };
        found[k] = Some(v);
    }
    let (offset_bases, shape) = match found {
        [Some(order), Some(shape), None, None] => {
            let dims = uints(src, shape, "shape")?;
            let order_v = uints(src, order, "order")?;
            let mut sorted = order_v.clone();
            sorted.sort_unstable();
            if order_v.len() != dims.len() || sorted.iter().enumerate().any(|(i, d)| *d != i as u64)
            {
                return Err(error_at(
                    src,
                    order.at,
                    "order must be a permutation of the dims of shape",
                ));
            }
            let order_d: Vec<usize> = order_v.iter().map(|d| *d as usize).collect();
            (
                synth(&identity_bases(&dims, &order_d), order.at),
                shape.clone(),
            )
        }
        [None, None, Some(offset), block] => {
            if let Some(b) = block {
                if !matches!(&b.value, Value::List(items) if items.is_empty()) {
                    return Err(error_at(
                        src,
                        b.at,
                        "a multi-CTA `#ttg.padded_shared` is not read in this form yet; write PaddedSharedLayout(...) with cga_layout",
                    ));
                }
            }
            let Value::List(bases) = &offset.value else {
                return Err(error_at(src, offset.at, "offset must be a list of bases"));
            };
            let rows = bases
                .iter()
                .map(|b| uints(src, b, "an offset base"))
                .collect::<Result<Vec<_>>>()?;
            let rank = rows.first().map_or(0, Vec::len);
            if rank == 0 || rows.iter().any(|r| r.len() != rank) {
                return Err(error_at(
                    src,
                    offset.at,
                    "offset needs bases, each with one coordinate per dim",
                ));
            }
            let mut dims = Vec::with_capacity(rank);
            for j in 0..rank {
                let max = rows.iter().map(|r| r[j]).max().unwrap_or(0);
                let size = max
                    .checked_add(1)
                    .and_then(u64::checked_next_power_of_two)
                    .ok_or_else(|| error_at(src, offset.at, "an offset coordinate is too large"))?;
                dims.push(size);
            }
            let shape = Spanned {
                at: offset.at,
                value: Value::List(
                    dims.iter()
                        .map(|d| Spanned {
                            at: offset.at,
                            value: Value::Int(i64::try_from(*d).unwrap_or(i64::MAX)),
                        })
                        .collect(),
                ),
            };
            (offset.clone(), shape)
        }
        _ => {
            return Err(error_at(
                src,
                attr.at,
                "`#ttg.padded_shared` needs either `order` and `shape`, or `offset` (and `block`)",
            ))
        }
    };
    Ok(Spanned {
        at: attr.at,
        value: Value::Call(
            "PaddedSharedLayout".into(),
            vec![
                (Some("interval_padding_pairs".into()), pairs),
                (Some("offset_bases".into()), offset_bases),
                (Some("shape".into()), shape),
            ],
        ),
    })
}
