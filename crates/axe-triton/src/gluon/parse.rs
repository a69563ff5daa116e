//! Reading Gluon layouts from the constructor text Triton prints (`repr` of the Python objects):
//! keyword or positional arguments, `cga_layout=[]`/`None` CTA fields, nested `SliceLayout` parents.

use super::GluonLayout;
use crate::error::Result;
use crate::syntax::{error_at, parse_value, Spanned, Value};

fn ints(src: &str, v: &Spanned, what: &str) -> Result<Vec<u64>> {
    match &v.value {
        Value::List(items) => items
            .iter()
            .map(|i| match i.value {
                Value::Int(x) if x >= 1 => Ok(x as u64),
                _ => Err(error_at(
                    src,
                    i.at,
                    format!("{what} entries must be positive integers"),
                )),
            })
            .collect(),
        _ => Err(error_at(src, v.at, format!("{what} must be a list"))),
    }
}

fn from_value(src: &str, v: &Spanned, depth: usize) -> Result<GluonLayout> {
    let Value::Call(name, args) = &v.value else {
        return Err(error_at(
            src,
            v.at,
            "expected a layout constructor such as `BlockedLayout(...)`",
        ));
    };
    let short = name.rsplit('.').next().unwrap_or(name);
    let keys: &[&str] = match short {
        "BlockedLayout" => &[
            "size_per_thread",
            "threads_per_warp",
            "warps_per_cta",
            "order",
            "ctas_per_cga",
            "cta_split_num",
            "cta_order",
            "cga_layout",
        ],
        "SliceLayout" => &["dim", "parent"],
        "NVMMADistributedLayout" => &["version", "warps_per_cta", "instr_shape", "cga_layout"],
        "SwizzledSharedLayout" => &["vec", "per_phase", "max_phase", "order", "cga_layout"],
        other => {
            return Err(error_at(
                src,
                v.at,
                format!("`{other}` is not supported (BlockedLayout, SliceLayout, NVMMADistributedLayout and SwizzledSharedLayout are)"),
            ))
        }
    };
    let mut found: Vec<Option<&Spanned>> = vec![None; keys.len()];
    for (i, (key, arg)) in args.iter().enumerate() {
        let k = match key {
            Some(k) => keys
                .iter()
                .position(|x| x == k)
                .ok_or_else(|| error_at(src, arg.at, format!("`{short}` has no argument `{k}`")))?,
            None if i < keys.len() => i,
            None => return Err(error_at(src, arg.at, "too many arguments")),
        };
        if found[k].is_some() {
            return Err(error_at(
                src,
                arg.at,
                format!("argument `{}` given twice", keys[k]),
            ));
        }
        found[k] = Some(arg);
    }
    let need = |k: usize| {
        found[k].ok_or_else(|| error_at(src, v.at, format!("`{short}` needs `{}`", keys[k])))
    };
    match short {
        "BlockedLayout" => {
            let size_per_thread = ints(src, need(0)?, "size_per_thread")?;
            let threads_per_warp = ints(src, need(1)?, "threads_per_warp")?;
            let warps_per_cta = ints(src, need(2)?, "warps_per_cta")?;
            let order_v = need(3)?;
            let order = match &order_v.value {
                Value::List(items) => items
                    .iter()
                    .map(|i| match i.value {
                        Value::Int(x) if x >= 0 => Ok(x as usize),
                        _ => Err(error_at(src, i.at, "order entries must be dims")),
                    })
                    .collect::<Result<Vec<_>>>()?,
                _ => return Err(error_at(src, order_v.at, "order must be a list")),
            };
            let rank = order.len();
            for (w, l) in [
                ("size_per_thread", &size_per_thread),
                ("threads_per_warp", &threads_per_warp),
                ("warps_per_cta", &warps_per_cta),
            ] {
                if l.len() != rank {
                    return Err(error_at(
                        src,
                        v.at,
                        format!("{w} has {} entries, order {rank}", l.len()),
                    ));
                }
            }
            let mut sorted = order.clone();
            sorted.sort_unstable();
            if sorted != (0..rank).collect::<Vec<_>>() {
                return Err(error_at(
                    src,
                    order_v.at,
                    "order must be a permutation of the dims",
                ));
            }
            for (k, a) in found.iter().enumerate().skip(4) {
                if let Some(a) = a {
                    match &a.value {
                        Value::Word(w) if w == "None" => {}
                        Value::List(items)
                            if k < 6 && items.iter().all(|i| i.value == Value::Int(1)) => {}
                        Value::List(_) if k == 6 => {}
                        Value::List(items) if k == 7 && items.is_empty() => {}
                        _ => {
                            return Err(error_at(
                                src,
                                a.at,
                                "only single-CTA layouts are supported",
                            ))
                        }
                    }
                }
            }
            Ok(GluonLayout::Blocked {
                size_per_thread,
                threads_per_warp,
                warps_per_cta,
                order,
            })
        }
        "SwizzledSharedLayout" => {
            let mut three = Vec::new();
            for (k, key) in keys.iter().enumerate().take(3) {
                let a = need(k)?;
                match a.value {
                    Value::Int(x) if x >= 1 => three.push(x as u64),
                    _ => {
                        return Err(error_at(
                            src,
                            a.at,
                            format!("{key} must be a positive integer"),
                        ))
                    }
                }
            }
            let order_v = need(3)?;
            let order = match &order_v.value {
                Value::List(items) => items
                    .iter()
                    .map(|i| match i.value {
                        Value::Int(x) if x >= 0 => Ok(x as usize),
                        _ => Err(error_at(src, i.at, "order entries must be dims")),
                    })
                    .collect::<Result<Vec<_>>>()?,
                _ => return Err(error_at(src, order_v.at, "order must be a list")),
            };
            let mut sorted = order.clone();
            sorted.sort_unstable();
            if order.is_empty() || sorted != (0..order.len()).collect::<Vec<_>>() {
                return Err(error_at(
                    src,
                    order_v.at,
                    "order must be a permutation of the dims",
                ));
            }
            if let Some(a) = found[4] {
                if !matches!(&a.value, Value::List(items) if items.is_empty()) {
                    return Err(error_at(src, a.at, "only single-CTA layouts are supported"));
                }
            }
            Ok(GluonLayout::SwizzledShared {
                vec: three[0],
                per_phase: three[1],
                max_phase: three[2],
                order,
            })
        }
        "NVMMADistributedLayout" => {
            let vv = need(0)?;
            let version: Vec<u64> = match &vv.value {
                Value::List(items) => items
                    .iter()
                    .map(|i| match i.value {
                        Value::Int(x) if x >= 0 => Ok(x as u64),
                        _ => Err(error_at(
                            src,
                            i.at,
                            "version entries must be non-negative integers",
                        )),
                    })
                    .collect::<Result<_>>()?,
                _ => return Err(error_at(src, vv.at, "version must be a list")),
            };
            let warps_per_cta = ints(src, need(1)?, "warps_per_cta")?;
            let instr_shape = ints(src, need(2)?, "instr_shape")?;
            if let Some(a) = found[3] {
                if !matches!(&a.value, Value::List(items) if items.is_empty()) {
                    return Err(error_at(src, a.at, "only single-CTA layouts are supported"));
                }
            }
            let ok = match version.first() {
                Some(2) => instr_shape == [16, 8],
                Some(3) => {
                    instr_shape.len() == 3
                        && instr_shape[0] == 16
                        && instr_shape[1] >= 8
                        && instr_shape[1] <= 256
                        && instr_shape[1].is_multiple_of(8)
                }
                _ => false,
            };
            if !ok || warps_per_cta.len() != 2 {
                return Err(error_at(
                    src,
                    v.at,
                    "expected version [2, 0] with instr_shape [16, 8] or [3, 0] with [16, n, k], and two warps_per_cta",
                ));
            }
            Ok(GluonLayout::Nvmma {
                version: version[0],
                warps_per_cta,
                instr_shape,
            })
        }
        _ => {
            let d = need(0)?;
            let dim = match d.value {
                Value::Int(x) if x >= 0 => x as usize,
                _ => return Err(error_at(src, d.at, "dim must be a non-negative integer")),
            };
            if depth > 16 {
                return Err(error_at(src, v.at, "slices nested too deep"));
            }
            let parent = from_value(src, need(1)?, depth + 1)?;
            if dim >= parent.rank() {
                return Err(error_at(
                    src,
                    d.at,
                    format!("dim {dim} is beyond the parent's rank {}", parent.rank()),
                ));
            }
            Ok(GluonLayout::Slice {
                dim,
                parent: Box::new(parent),
            })
        }
    }
}

/// Reads a Gluon layout from its constructor text.
pub fn parse_gluon(src: &str) -> Result<GluonLayout> {
    from_value(src, &parse_value(src)?, 0)
}
