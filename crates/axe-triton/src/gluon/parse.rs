//! Reading Gluon layouts from the constructor text Triton prints (`repr` of the Python objects):
//! keyword or positional arguments, `cga_layout=[]`/`None` CTA fields, nested `SliceLayout` parents.

use super::GluonLayout;
use crate::error::Result;
use crate::syntax::{error_at, parse_value, Spanned, Value};

pub(super) fn ints(src: &str, v: &Spanned, what: &str) -> Result<Vec<u64>> {
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

pub(super) fn from_value(src: &str, v: &Spanned, depth: usize) -> Result<GluonLayout> {
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
        "DotOperandLayout" => &["operand_index", "parent", "k_width"],
        "AMDWMMALayout" => &[
            "version",
            "transposed",
            "warp_bases",
            "reg_bases",
            "instr_shape",
            "cga_layout",
            "rank",
        ],
        "AMDMFMALayout" => &[
            "version",
            "instr_shape",
            "transposed",
            "warps_per_cta",
            "element_bitwidth",
            "tiles_per_warp",
            "cga_layout",
        ],
        "PaddedSharedLayout" => &["interval_padding_pairs", "offset_bases", "cga_layout", "shape"],
        "DistributedLinearLayout" => &[
            "reg_bases",
            "lane_bases",
            "warp_bases",
            "block_bases",
            "shape",
        ],
        "SharedLinearLayout" => &["offset_bases", "block_bases", "alignment"],
        "NVMMASharedLayout" => &[
            "swizzle_byte_width",
            "element_bitwidth",
            "rank",
            "transposed",
            "fp4_padded",
            "cga_layout",
        ],
        other => {
            return Err(error_at(
                src,
                v.at,
                format!("`{other}` is not supported (BlockedLayout, SliceLayout, NVMMADistributedLayout, DotOperandLayout, SwizzledSharedLayout, NVMMASharedLayout, PaddedSharedLayout, AMDMFMALayout, AMDWMMALayout, DistributedLinearLayout and SharedLinearLayout are)"),
            ))
        }
    };
    let mut found: Vec<Option<&Spanned>> = vec![None; keys.len()];
    for (i, (key, arg)) in args.iter().enumerate() {
        let k = match key {
            Some(k) => keys.iter().position(|x| x == k).ok_or_else(|| {
                error_at(
                    src,
                    arg.at,
                    format!(
                        "`{short}` has no argument `{k}` (it has {})",
                        keys.join(", ")
                    ),
                )
            })?,
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
        "DotOperandLayout" => dot_operand(src, v, &found, depth),
        "NVMMASharedLayout" => nvmma_shared(src, v, &found),
        "PaddedSharedLayout" => super::parse_padded::padded_shared(src, v, &found),
        "AMDMFMALayout" => super::parse_amd::amd_mfma(src, v, &found),
        "DistributedLinearLayout" => super::linear_gluon::parse_distributed(src, v, &found),
        "SharedLinearLayout" => super::linear_gluon::parse_shared(src, v, &found),
        "AMDWMMALayout" => super::parse_amd::amd_wmma(src, v, &found),
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
                        Value::List(_) if k == 7 => {}
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
            let cga = cga_bases(src, found[7], rank)?;
            Ok(with_cga(
                GluonLayout::Blocked {
                    size_per_thread,
                    threads_per_warp,
                    warps_per_cta,
                    order,
                },
                cga,
            ))
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
            let cga = cga_bases(src, found[4], order.len())?;
            Ok(with_cga(
                GluonLayout::SwizzledShared {
                    vec: three[0],
                    per_phase: three[1],
                    max_phase: three[2],
                    order,
                },
                cga,
            ))
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
            let cga = cga_bases(src, found[3], warps_per_cta.len())?;
            // Any instruction shape of two or three entries is read: the accumulator and the operands
            // check the entries they use, as Triton does ([16, 8], [1, 16, 8] batched, and Hopper's
            // [16, n, k] are the usual).
            let ok = matches!(version.first(), Some(2 | 3))
                && (2..=3).contains(&instr_shape.len())
                && instr_shape.iter().all(|x| (1..=1 << 16).contains(x));
            if !ok || !(2..=3).contains(&warps_per_cta.len()) {
                return Err(error_at(
                    src,
                    v.at,
                    "expected version [2, 0] or [3, 0], an instr_shape of two or three entries (usually [16, 8], \
                     [1, 16, 8] batched, or Hopper's [16, n, k]) and two or three warps_per_cta",
                ));
            }
            Ok(with_cga(
                GluonLayout::Nvmma {
                    version: version[0],
                    warps_per_cta,
                    instr_shape,
                },
                cga,
            ))
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

pub(super) fn int(src: &str, v: &Spanned, what: &str) -> Result<u64> {
    match v.value {
        Value::Int(x) if x >= 0 => Ok(x as u64),
        _ => Err(error_at(
            src,
            v.at,
            format!("{what} must be a non-negative integer"),
        )),
    }
}

pub(super) fn boolean(src: &str, v: &Spanned, what: &str) -> Result<bool> {
    match &v.value {
        Value::Word(w) if w == "True" || w == "true" => Ok(true),
        Value::Word(w) if w == "False" || w == "false" => Ok(false),
        Value::Int(x) if *x == 0 || *x == 1 => Ok(*x == 1),
        _ => Err(error_at(src, v.at, format!("{what} must be True or False"))),
    }
}

/// The bases of a `cga_layout` argument (none for `None` or `[]`), checked as Triton's CGA encoding over
/// `rank` dims.
pub(super) fn cga_bases(src: &str, a: Option<&Spanned>, rank: usize) -> Result<Vec<Vec<u64>>> {
    let Some(a) = a else { return Ok(Vec::new()) };
    let items = match &a.value {
        Value::Word(w) if w == "None" => return Ok(Vec::new()),
        Value::List(items) => items,
        _ => return Err(error_at(src, a.at, "cga_layout must be a list of bases")),
    };
    let mut bases = Vec::new();
    for b in items {
        let Value::List(cs) = &b.value else {
            return Err(error_at(
                src,
                b.at,
                "a cga_layout base must be a list of coordinates",
            ));
        };
        let mut base = Vec::new();
        for c in cs {
            match c.value {
                Value::Int(x) if x >= 0 => base.push(x as u64),
                _ => {
                    return Err(error_at(
                        src,
                        c.at,
                        "cga_layout coordinates must be integers ≥ 0",
                    ))
                }
            }
        }
        bases.push(base);
    }
    super::cga::check(&bases, rank).map_err(|why| error_at(src, a.at, why))?;
    Ok(bases)
}

/// `layout` spread over CTAs by `cga` (itself when `cga` is empty).
pub(super) fn with_cga(layout: GluonLayout, cga: Vec<Vec<u64>>) -> GluonLayout {
    if cga.is_empty() {
        layout
    } else {
        GluonLayout::MultiCta {
            layout: Box::new(layout),
            cga_layout: cga,
        }
    }
}

/// `DotOperandLayout(operand_index, parent, k_width)` with an `NVMMADistributedLayout`, `BlockedLayout`,
/// `AMDMFMALayout` or `AMDWMMALayout` parent (multi-CTA ones too).
fn dot_operand(
    src: &str,
    v: &Spanned,
    found: &[Option<&Spanned>],
    depth: usize,
) -> Result<GluonLayout> {
    let need = |k: usize, key: &str| {
        found[k].ok_or_else(|| error_at(src, v.at, format!("`DotOperandLayout` needs `{key}`")))
    };
    let op_v = need(0, "operand_index")?;
    let operand_index = int(src, op_v, "operand_index")?;
    if operand_index > 1 {
        return Err(error_at(src, op_v.at, "operand_index must be 0 or 1"));
    }
    let parent_v = need(1, "parent")?;
    if depth > 16 {
        return Err(error_at(src, v.at, "layouts nested too deep"));
    }
    // A multi-CTA parent: the operand is split over CTAs as the parent is, except along K, which every
    // CTA holds whole (Triton's CGA layout of a dot operand: the parent's, with K unsplit).
    let (parent, cga) = match from_value(src, parent_v, depth + 1)? {
        GluonLayout::MultiCta { layout, cga_layout } => (*layout, cga_layout),
        p => (p, Vec::new()),
    };
    let kw_v = need(2, "k_width")?;
    let k_width = int(src, kw_v, "k_width")?;
    match &parent {
        GluonLayout::Nvmma { version, .. } => {
            if *version == 3 && operand_index == 1 {
                return Err(error_at(
                    src,
                    op_v.at,
                    "operand_index must be 0 under a Hopper (version [3, 0]) parent: wgmma reads B from shared memory",
                ));
            }
            if !k_width.is_power_of_two() || k_width > 1 << 16 {
                return Err(error_at(
                    src,
                    kw_v.at,
                    "k_width must be a power of two (at most 65536) under an NVMMADistributedLayout",
                ));
            }
        }
        GluonLayout::Blocked { order, .. } => {
            if k_width != 0 {
                return Err(error_at(
                    src,
                    kw_v.at,
                    "k_width must be 0 under a BlockedLayout",
                ));
            }
            if order.len() < 2 {
                return Err(error_at(
                    src,
                    parent_v.at,
                    "a dot operand's parent has rank at least 2",
                ));
            }
        }
        GluonLayout::AmdMfma { .. } | GluonLayout::AmdWmma { .. } => {
            if !k_width.is_power_of_two() || k_width > 1 << 16 {
                return Err(error_at(
                    src,
                    kw_v.at,
                    "k_width must be a power of two (at most 65536) under an AMD parent",
                ));
            }
        }
        _ => return Err(error_at(
            src,
            parent_v.at,
            "a DotOperandLayout's parent must be an NVMMADistributedLayout, a BlockedLayout, an \
                 AMDMFMALayout or an AMDWMMALayout",
        )),
    }
    let rank = parent.rank();
    let k_dim = if operand_index == 0 {
        rank - 1
    } else {
        rank - 2
    };
    // (Triton splits an MFMA operand over CTAs as its parent, K too.)
    let amd = matches!(parent, GluonLayout::AmdMfma { .. });
    let cga = cga
        .into_iter()
        .map(|mut b| {
            if !amd {
                b[k_dim] = 0;
            }
            b
        })
        .collect();
    Ok(with_cga(
        GluonLayout::DotOperand {
            operand_index,
            parent: Box::new(parent),
            k_width,
        },
        cga,
    ))
}

/// `NVMMASharedLayout(swizzle_byte_width, element_bitwidth, rank=2, transposed=False, fp4_padded=False)`.
fn nvmma_shared(src: &str, v: &Spanned, found: &[Option<&Spanned>]) -> Result<GluonLayout> {
    let need = |k: usize, key: &str| {
        found[k].ok_or_else(|| error_at(src, v.at, format!("`NVMMASharedLayout` needs `{key}`")))
    };
    let sw_v = need(0, "swizzle_byte_width")?;
    let swizzle_byte_width = int(src, sw_v, "swizzle_byte_width")?;
    if !matches!(swizzle_byte_width, 0 | 32 | 64 | 128) {
        return Err(error_at(
            src,
            sw_v.at,
            "swizzle_byte_width must be 0, 32, 64 or 128",
        ));
    }
    let bw_v = need(1, "element_bitwidth")?;
    let element_bitwidth = int(src, bw_v, "element_bitwidth")?;
    if !matches!(element_bitwidth, 8 | 16 | 32 | 64) {
        return Err(error_at(
            src,
            bw_v.at,
            "element_bitwidth must be 8, 16, 32 or 64",
        ));
    }
    let rank = match found[2] {
        None => 2,
        Some(r) => match int(src, r, "rank")? {
            x @ 1..=16 => x as usize,
            _ => return Err(error_at(src, r.at, "rank must be between 1 and 16")),
        },
    };
    if rank < 2 && swizzle_byte_width != 0 {
        return Err(error_at(
            src,
            v.at,
            "a swizzled NVMMASharedLayout has rank at least 2",
        ));
    }
    let transposed = found[3].map_or(Ok(false), |t| boolean(src, t, "transposed"))?;
    let fp4_padded = found[4].map_or(Ok(false), |t| boolean(src, t, "fp4_padded"))?;
    if fp4_padded && (swizzle_byte_width != 128 || element_bitwidth != 8) {
        return Err(error_at(
            src,
            found[4].map_or(v.at, |f| f.at),
            "fp4_padded needs swizzle_byte_width=128 and element_bitwidth=8",
        ));
    }
    let cga = cga_bases(src, found[5], rank)?;
    Ok(with_cga(
        GluonLayout::NvmmaShared {
            swizzle_byte_width,
            element_bitwidth,
            rank,
            transposed,
            fp4_padded,
        },
        cga,
    ))
}

/// Reads a Gluon layout from its constructor text (`BlockedLayout(...)`, as Triton prints it), or a
/// `#ttg.padded_shared<...>` attribute of TTGIR.
pub fn parse_gluon(src: &str) -> Result<GluonLayout> {
    if src.trim_start().starts_with("#ttg.padded_shared") {
        let lead = src.len() - src.trim_start().len();
        return super::parse_padded::padded_shared_attr(src.trim_start()).map_err(|e| match e {
            crate::error::TritonError::Parse(mut p) => {
                p.offset += lead;
                p.input = src.to_string();
                crate::error::TritonError::Parse(p)
            }
            other => other,
        });
    }
    from_value(src, &parse_value(src)?, 0)
}
