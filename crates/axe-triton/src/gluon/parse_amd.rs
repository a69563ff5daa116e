//! Reading AMD's Gluon layouts: `AMDMFMALayout(...)` and `AMDWMMALayout(...)`, as Triton prints them.

use super::parse::{boolean, cga_bases, int, ints};
use super::GluonLayout;
use crate::error::Result;
use crate::syntax::{error_at, Spanned, Value};

/// `AMDMFMALayout(version, instr_shape, transposed, warps_per_cta, element_bitwidth=None,
/// tiles_per_warp=None, cga_layout=[])`: 32- or 64-bit elements (`None`: 32), any power-of-two tiles per
/// warp (`None`: ones), one CTA only.
pub(super) fn amd_mfma(src: &str, v: &Spanned, found: &[Option<&Spanned>]) -> Result<GluonLayout> {
    let need = |k: usize, key: &str| {
        found[k].ok_or_else(|| error_at(src, v.at, format!("`AMDMFMALayout` needs `{key}`")))
    };
    let version_v = need(0, "version")?;
    let version = int(src, version_v, "version")?;
    if !(1..=4).contains(&version) {
        return Err(error_at(src, version_v.at, "version must be 1, 2, 3 or 4"));
    }
    let instr_shape = ints(src, need(1, "instr_shape")?, "instr_shape")?;
    let transposed = boolean(src, need(2, "transposed")?, "transposed")?;
    let wv = need(3, "warps_per_cta")?;
    let warps_per_cta = ints(src, wv, "warps_per_cta")?;
    if warps_per_cta.len() != 2 {
        return Err(error_at(src, wv.at, "warps_per_cta must have two entries"));
    }
    let element_bitwidth = match found[4] {
        None => 32,
        Some(a) if matches!(&a.value, Value::Word(w) if w == "None") => 32,
        Some(a) => match int(src, a, "element_bitwidth")? {
            b @ (32 | 64) => b,
            _ => return Err(error_at(src, a.at, "element_bitwidth must be 32 or 64")),
        },
    };
    let tiles_per_warp = match found[5] {
        None => vec![1, 1],
        Some(a) if matches!(&a.value, Value::Word(w) if w == "None") => vec![1, 1],
        Some(a) => {
            let t = ints(src, a, "tiles_per_warp")?;
            if t.len() != 2 || t.iter().any(|x| !x.is_power_of_two()) {
                return Err(error_at(
                    src,
                    a.at,
                    "tiles_per_warp must have two entries, each a power of two",
                ));
            }
            t
        }
    };
    let instr_v = found[1].map_or(v.at, |a| a.at);
    let ok_shape = matches!(
        instr_shape.get(..2),
        Some([32, 32] | [16, 16] | [4, 4] | [64, 4] | [4, 64])
    );
    if !ok_shape {
        return Err(error_at(
            src,
            instr_v,
            "instr_shape must be [32, 32, k], [16, 16, k], [4, 4, k], [64, 4, k] or [4, 64, k]",
        ));
    }
    if instr_shape.get(..2) == Some(&[64, 4]) && !transposed {
        return Err(error_at(
            src,
            instr_v,
            "a 64×4 AMDMFMALayout must be transposed, as Triton requires",
        ));
    }
    if !cga_bases(src, found[6], 2)?.is_empty() {
        return Err(error_at(
            src,
            found[6].map_or(v.at, |a| a.at),
            "a multi-CTA AMDMFMALayout is not supported",
        ));
    }
    Ok(GluonLayout::AmdMfma {
        version,
        instr_shape,
        transposed,
        warps_per_cta,
        element_bitwidth,
        tiles_per_warp,
    })
}

/// A list of bases (`[[1, 0], [0, 1]]`), each of two non-negative coordinates.
fn bases2(src: &str, a: &Spanned, what: &str) -> Result<Vec<Vec<u64>>> {
    let Value::List(items) = &a.value else {
        return Err(error_at(
            src,
            a.at,
            format!("{what} must be a list of bases"),
        ));
    };
    let mut out = Vec::new();
    for b in items {
        let Value::List(cs) = &b.value else {
            return Err(error_at(
                src,
                b.at,
                format!("each of {what} is a list of coordinates"),
            ));
        };
        let base = cs
            .iter()
            .map(|c| int(src, c, "a base coordinate"))
            .collect::<Result<Vec<u64>>>()?;
        if base.len() != 2 {
            return Err(error_at(
                src,
                b.at,
                format!("each of {what} has two coordinates (rank 2)"),
            ));
        }
        out.push(base);
    }
    Ok(out)
}

/// `AMDWMMALayout(version, transposed, warp_bases, reg_bases=None, instr_shape=None, cga_layout=[],
/// rank=None)`: versions 1 to 3, rank 2, `[16, 16, k]` tiles (and `[32, 16, k]` from version 2), extra
/// register bases, one CTA.
pub(super) fn amd_wmma(src: &str, v: &Spanned, found: &[Option<&Spanned>]) -> Result<GluonLayout> {
    let need = |k: usize, key: &str| {
        found[k].ok_or_else(|| error_at(src, v.at, format!("`AMDWMMALayout` needs `{key}`")))
    };
    let version_v = need(0, "version")?;
    let version = int(src, version_v, "version")?;
    if !(1..=3).contains(&version) {
        return Err(error_at(
            src,
            version_v.at,
            "only versions 1, 2 and 3 are supported",
        ));
    }
    let transposed = boolean(src, need(1, "transposed")?, "transposed")?;
    let warp_bases = bases2(src, need(2, "warp_bases")?, "warp_bases")?;
    let none = |a: &Spanned| matches!(&a.value, Value::Word(w) if w == "None");
    let reg_bases = match found[3] {
        Some(a) if !none(a) => bases2(src, a, "reg_bases")?,
        _ => Vec::new(),
    };
    let instr = match found[4] {
        Some(a) if !none(a) && !matches!(&a.value, Value::List(items) if items.is_empty()) => {
            let shape = ints(src, a, "instr_shape")?;
            match shape[..] {
                [16, 16, _] => [16, 16],
                [32, 16, _] if version >= 2 => [32, 16],
                _ => {
                    return Err(error_at(
                        src,
                        a.at,
                        "instr_shape must be [16, 16, k], or [32, 16, k] from version 2",
                    ))
                }
            }
        }
        _ => [16, 16],
    };
    if !cga_bases(src, found[5], 2)?.is_empty() {
        return Err(error_at(
            src,
            found[5].map_or(v.at, |a| a.at),
            "a multi-CTA AMDWMMALayout is not supported",
        ));
    }
    if let Some(a) = found[6] {
        if !matches!(&a.value, Value::Int(2)) && !none(a) {
            return Err(error_at(src, a.at, "only rank=2 is supported"));
        }
    }
    Ok(GluonLayout::AmdWmma {
        version,
        transposed,
        warp_bases,
        reg_bases,
        instr,
    })
}
