//! Reading AMD's Gluon layouts: `AMDMFMALayout(...)` and `AMDWMMALayout(...)`, as Triton prints them.

use super::parse::{boolean, cga_bases, int, ints, with_cga};
use super::GluonLayout;
use crate::error::Result;
use crate::syntax::{error_at, Spanned, Value};

/// `AMDMFMALayout(version, instr_shape, transposed, warps_per_cta, element_bitwidth=None,
/// tiles_per_warp=None, cga_layout=[])`: 32- or 64-bit elements (`None`: 32), any power-of-two tiles per
/// warp (`None`: ones), rank 2 or 3 (the length of `warps_per_cta`), a CGA encoding over that rank.
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
    let rank = warps_per_cta.len();
    if !(2..=3).contains(&rank) {
        return Err(error_at(
            src,
            wv.at,
            "warps_per_cta must have two entries (three with a batch dim)",
        ));
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
        None => vec![1; rank],
        Some(a) if matches!(&a.value, Value::Word(w) if w == "None") => vec![1; rank],
        Some(a) => {
            let t = ints(src, a, "tiles_per_warp")?;
            if t.len() != rank || t.iter().any(|x| !x.is_power_of_two()) {
                return Err(error_at(
                    src,
                    a.at,
                    "tiles_per_warp must have one entry per warps_per_cta entry, each a power of two",
                ));
            }
            t
        }
    };
    let instr_v = found[1].map_or(v.at, |a| a.at);
    // Triton 3.9's verifier has no 4×4 tile (its layout code still does).
    let ok_shape = matches!(
        instr_shape.get(..2),
        Some([32, 32] | [16, 16] | [64, 4] | [4, 64])
    ) && instr_shape.len() == 3;
    if !ok_shape {
        return Err(error_at(
            src,
            instr_v,
            "instr_shape must be [32, 32, k], [16, 16, k], [64, 4, k] or [4, 64, k] (Triton 3.9 has no 4×4)",
        ));
    }
    if instr_shape.get(..2) == Some(&[64, 4]) && !transposed {
        return Err(error_at(
            src,
            instr_v,
            "a 64×4 AMDMFMALayout must be transposed, as Triton requires",
        ));
    }
    let cga = cga_bases(src, found[6], rank)?;
    Ok(with_cga(
        GluonLayout::AmdMfma {
            version,
            instr_shape,
            transposed,
            warps_per_cta,
            element_bitwidth,
            tiles_per_warp,
        },
        cga,
    ))
}

/// A list of bases (`[[1, 0], [0, 1]]`), each of `rank` non-negative coordinates.
fn bases_of_rank(src: &str, a: &Spanned, what: &str, rank: usize) -> Result<Vec<Vec<u64>>> {
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
        if base.len() != rank {
            return Err(error_at(
                src,
                b.at,
                format!("each of {what} has {rank} coordinates (the layout's rank)"),
            ));
        }
        out.push(base);
    }
    Ok(out)
}

/// `AMDWMMALayout(version, transposed, warp_bases, reg_bases=None, instr_shape=None, cga_layout=[],
/// rank=None)`: versions 1 to 3 with the instruction shapes Triton 3.9's verifier takes, extra register
/// bases, rank 2 (`None`) or 3, a CGA encoding over that rank.
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
    let none = |a: &Spanned| matches!(&a.value, Value::Word(w) if w == "None");
    let rank = match found[6] {
        Some(a) if !none(a) => match a.value {
            Value::Int(r @ (2 | 3)) => r as usize,
            _ => return Err(error_at(src, a.at, "rank must be 2 or 3")),
        },
        _ => 2,
    };
    let warp_bases = bases_of_rank(src, need(2, "warp_bases")?, "warp_bases", rank)?;
    let reg_bases = match found[3] {
        Some(a) if !none(a) => bases_of_rank(src, a, "reg_bases", rank)?,
        _ => Vec::new(),
    };
    // Triton 3.9's verifier: the instruction shapes each version has (`None` is `[16, 16, 16]`).
    let (instr_shape, instr_at) = match found[4] {
        Some(a) if !none(a) && !matches!(&a.value, Value::List(items) if items.is_empty()) => {
            (ints(src, a, "instr_shape")?, a.at)
        }
        _ => (vec![16, 16, 16], found[4].map_or(v.at, |a| a.at)),
    };
    let instr = match (version, &instr_shape[..]) {
        (1, [16, 16, 16]) | (2, [16, 16, 16 | 32]) | (3, [16, 16, 4 | 32 | 64 | 128]) => [16, 16],
        (3, [32, 16, 64 | 128]) => [32, 16],
        _ => {
            return Err(error_at(
                src,
                instr_at,
                format!(
                    "instr_shape {instr_shape:?} is not a version {version} WMMA instruction (version 1: \
                     [16, 16, 16]; 2: [16, 16, 16 or 32]; 3: [16, 16, 4, 32, 64 or 128], [32, 16, 64 or 128])"
                ),
            ))
        }
    };
    let cga = cga_bases(src, found[5], rank)?;
    Ok(with_cga(
        GluonLayout::AmdWmma {
            version,
            transposed,
            warp_bases,
            reg_bases,
            instr,
            instr_k: instr_shape.get(2).copied().unwrap_or(16),
            rank,
        },
        cga,
    ))
}
