//! Reading the layout attributes of TTGIR as Triton prints them in its IR dumps:
//! `#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>`,
//! `#ttg.nvidia_mma<{...}>`, `#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>`,
//! `#ttg.slice<{dim = 0, parent = #mma}>`, `#ttg.swizzled_shared<{...}>`, `#ttg.nvmma_shared<{...}>`,
//! `#ttg.padded_shared<[...] {...}>`, `#ttg.amd_mfma<{...}>` and `#ttg.amd_wmma<{...}>` (also with the
//! older `#triton_gpu.` prefix), their CTA parameters in both the older form (`CTAsPerCGA`,
//! `CTASplitNum`, `CTAOrder`) and the newer one (`CGALayout = [[...]]`).
//!
//! The text may start with the alias definitions of a TTGIR module (`#mma = #ttg.nvidia_mma<{...}>`, one
//! per line) and then name one of them (`#mma`) or write a layout that uses them (`parent = #mma`).
//!
//! Each attribute is read as the Gluon constructor it stands for (`#ttg.blocked<{...}>` as
//! `BlockedLayout(...)`), so both forms of a layout give the same [`GluonLayout`] and are checked by the
//! same rules; every error points at the offending byte of the text.

mod params;
mod scan;

use super::GluonLayout;
use crate::error::{Result, TritonError};
use crate::linear::LinearLayout;
use crate::syntax::{error_at, Spanned, Value};
use params::{cta_bases, cta_layout, wmma_rank, wmma_warps};
use scan::{Attr, Input, Param, Scan, Target};

/// Deepest chain of parents (a slice of a dot operand of ...) followed.
const MAX_PARENTS: usize = 16;

/// How one TTGIR parameter is read.
#[derive(Clone, Copy, PartialEq)]
enum Read {
    /// As the Gluon argument of this name.
    Arg(&'static str),
    /// One of the older CTA parameters: 0 `CTAsPerCGA`, 1 `CTASplitNum`, 2 `CTAOrder`.
    Cta(usize),
    /// `versionMajor` of an NVIDIA MMA layout (with `versionMinor`, Gluon's `version` list).
    Major,
    /// `versionMinor`.
    Minor,
    /// `ctaLayout = {register = [...], warp = [...]}` of an AMD WMMA layout (Gluon's `reg_bases` and
    /// `warp_bases`).
    CtaLayout,
    /// `warpsPerCTA` of the older AMD WMMA printing (before `ctaLayout`): warps along the last dim
    /// first, then the one before, in tiles (Gluon's `warp_bases` that say the same).
    WmmaWarps,
    /// `tilesPerWarp` of the older AMD WMMA printing: read where every entry is 1 (the registers it
    /// adds otherwise follow the tensor's shape, which no `reg_bases` say).
    WmmaTiles,
}

/// A kind of attribute: its Gluon constructor and its parameters `(name, how read, required)`.
struct Kind {
    gluon: &'static str,
    params: &'static [(&'static str, Read, bool)],
}

const CTA: [(&str, Read, bool); 4] = [
    ("CGALayout", Read::Arg("cga_layout"), false),
    ("CTAsPerCGA", Read::Cta(0), false),
    ("CTASplitNum", Read::Cta(1), false),
    ("CTAOrder", Read::Cta(2), false),
];

const BLOCKED: &[(&str, Read, bool)] = &[
    ("sizePerThread", Read::Arg("size_per_thread"), true),
    ("threadsPerWarp", Read::Arg("threads_per_warp"), true),
    ("warpsPerCTA", Read::Arg("warps_per_cta"), true),
    ("order", Read::Arg("order"), true),
    CTA[0],
    CTA[1],
    CTA[2],
    CTA[3],
];

const NVIDIA_MMA: &[(&str, Read, bool)] = &[
    ("versionMajor", Read::Major, true),
    ("versionMinor", Read::Minor, false),
    ("warpsPerCTA", Read::Arg("warps_per_cta"), true),
    ("instrShape", Read::Arg("instr_shape"), true),
    CTA[0],
    CTA[1],
    CTA[2],
    CTA[3],
];

const DOT_OP: &[(&str, Read, bool)] = &[
    ("opIdx", Read::Arg("operand_index"), true),
    ("parent", Read::Arg("parent"), true),
    ("kWidth", Read::Arg("k_width"), false),
];

const SLICE: &[(&str, Read, bool)] = &[
    ("dim", Read::Arg("dim"), true),
    ("parent", Read::Arg("parent"), true),
];

const SWIZZLED_SHARED: &[(&str, Read, bool)] = &[
    ("vec", Read::Arg("vec"), true),
    ("perPhase", Read::Arg("per_phase"), true),
    ("maxPhase", Read::Arg("max_phase"), true),
    ("order", Read::Arg("order"), true),
    CTA[0],
    CTA[1],
    CTA[2],
    CTA[3],
];

const NVMMA_SHARED: &[(&str, Read, bool)] = &[
    ("swizzlingByteWidth", Read::Arg("swizzle_byte_width"), true),
    ("transposed", Read::Arg("transposed"), false),
    ("elementBitWidth", Read::Arg("element_bitwidth"), true),
    ("fp4Padded", Read::Arg("fp4_padded"), false),
    ("rank", Read::Arg("rank"), false),
    CTA[0],
    CTA[1],
    CTA[2],
    CTA[3],
];

const AMD_MFMA: &[(&str, Read, bool)] = &[
    ("version", Read::Arg("version"), false),
    ("versionMajor", Read::Arg("version"), false),
    ("versionMinor", Read::Minor, false),
    ("warpsPerCTA", Read::Arg("warps_per_cta"), true),
    ("instrShape", Read::Arg("instr_shape"), true),
    ("isTransposed", Read::Arg("transposed"), true),
    ("tilesPerWarp", Read::Arg("tiles_per_warp"), false),
    ("elementBitWidth", Read::Arg("element_bitwidth"), false),
    CTA[0],
    CTA[1],
    CTA[2],
    CTA[3],
];

const AMD_WMMA: &[(&str, Read, bool)] = &[
    ("version", Read::Arg("version"), true),
    ("isTranspose", Read::Arg("transposed"), false),
    ("ctaLayout", Read::CtaLayout, false),
    ("instrShape", Read::Arg("instr_shape"), false),
    ("warpsPerCTA", Read::WmmaWarps, false),
    ("tilesPerWarp", Read::WmmaTiles, false),
    CTA[0],
    CTA[1],
    CTA[2],
    CTA[3],
];

/// The kind named `kind` (`None` for kinds this reader does not take).
fn kind(kind: &str) -> Option<Kind> {
    let (gluon, params) = match kind {
        "blocked" => ("BlockedLayout", BLOCKED),
        "nvidia_mma" | "mma" => ("NVMMADistributedLayout", NVIDIA_MMA),
        "dot_op" => ("DotOperandLayout", DOT_OP),
        "slice" => ("SliceLayout", SLICE),
        "swizzled_shared" => ("SwizzledSharedLayout", SWIZZLED_SHARED),
        "nvmma_shared" => ("NVMMASharedLayout", NVMMA_SHARED),
        "amd_mfma" => ("AMDMFMALayout", AMD_MFMA),
        "amd_wmma" => ("AMDWMMALayout", AMD_WMMA),
        _ => return None,
    };
    Some(Kind { gluon, params })
}

/// Whether `src` is TTGIR attribute text (it starts with `#`).
pub fn is_ttgir(src: &str) -> bool {
    src.trim_start().starts_with('#')
}

/// Whether `src` is a linear layout as [`crate::parse_linear`] reads it: JSON bases, a bare
/// `{register = ...}` body, or TTGIR text whose layout is a `#ttg.linear<...>` attribute.
pub fn is_linear_text(src: &str) -> bool {
    let t = src.trim_start();
    if t.starts_with('{') {
        return true;
    }
    if !t.starts_with('#') {
        return false;
    }
    let mut scan = Scan::new(src);
    match scan.input() {
        Ok(input) => matches!(resolve(src, &input, input.target), Ok(a) if a.kind == "linear"),
        Err(_) => false,
    }
}

/// The attribute `target` stands for: itself, or the definition of the alias it names.
fn resolve<'a>(src: &str, input: &Input<'a>, target: Target<'a>) -> Result<Attr<'a>> {
    match target {
        Target::Attr(a) => Ok(a),
        Target::Alias(name, at) => input
            .defs
            .iter()
            // Known only after its definition ends, so no definition refers to itself.
            .find(|(n, _, def)| *n == name && def.close < at)
            .map(|(_, _, a)| *a)
            .ok_or_else(|| {
                let known: Vec<String> = input.defs.iter().map(|(n, _, _)| format!("#{n}")).collect();
                error_at(
                    src,
                    at,
                    if known.is_empty() {
                        format!("unknown alias `#{name}`: define it first (`#{name} = #ttg.blocked<{{...}}>` on a line before)")
                    } else {
                        format!(
                            "unknown alias `#{name}` (defined before it: {})",
                            known.join(", ")
                        )
                    },
                )
            }),
    }
}

/// Reads a Gluon layout from TTGIR attribute text: one attribute (`#ttg.blocked<{...}>`), or alias
/// definitions followed by one alias or attribute. The result equals what [`super::parse_gluon`] gives for
/// the matching constructor text (`BlockedLayout(...)`), with the same checks.
pub fn parse_ttgir(src: &str) -> Result<GluonLayout> {
    let mut scan = Scan::new(src);
    let input = scan.input()?;
    let attr = resolve(src, &input, input.target)?;
    if attr.kind == "padded_shared" {
        // Its own grammar (`[interval:+pad, ...] {...}`), read as Triton prints it.
        let text = &src[attr.at..=attr.close];
        return super::parse_padded::padded_shared_attr(text).map_err(|e| match e {
            crate::error::TritonError::Parse(mut p) => {
                p.offset += attr.at;
                p.input = src.to_string();
                crate::error::TritonError::Parse(p)
            }
            other => other,
        });
    }
    let call = build(&mut scan, &input, input.target, 0)?;
    super::parse::from_value(src, &call, 0)
}

/// Reads a Gluon layout from its constructor text (`BlockedLayout(...)`, see the `parse` rules) or from
/// TTGIR attribute text (`#ttg.blocked<{...}>`, see [`parse_ttgir`]).
pub fn parse_gluon(src: &str) -> Result<GluonLayout> {
    if is_ttgir(src) {
        parse_ttgir(src)
    } else {
        super::parse::parse_gluon(src)
    }
}

/// The linear layout of TTGIR text whose layout is a `#ttg.linear<{...}>` attribute (written out or
/// named by alias), as [`crate::parse_ttg`] reads it, errors pointing into `src`.
pub(crate) fn parse_linear_ttgir(src: &str) -> Result<LinearLayout> {
    let mut scan = Scan::new(src);
    let input = scan.input()?;
    let attr = resolve(src, &input, input.target)?;
    if attr.kind != "linear" {
        return Err(error_at(
            src,
            attr.kind_at,
            format!(
                "`{}` is not a linear layout: read it as a Gluon layout over a shape",
                attr.kind
            ),
        ));
    }
    let body = &src[attr.open + 1..attr.close];
    crate::text::parse_ttg(body).map_err(|e| match e {
        TritonError::Parse(mut p) => {
            p.offset += attr.open + 1;
            p.input = src.to_string();
            TritonError::Parse(p)
        }
        other => other,
    })
}

/// The Gluon constructor call that `target` stands for, its values at their offsets in the text.
fn build<'a>(
    scan: &mut Scan<'a>,
    input: &Input<'a>,
    target: Target<'a>,
    depth: usize,
) -> Result<Spanned> {
    let src = scan.src;
    let attr = resolve(src, input, target)?;
    if depth > MAX_PARENTS {
        return Err(error_at(
            src,
            attr.at,
            format!("layouts nested more than {MAX_PARENTS} parents deep"),
        ));
    }
    if attr.kind == "padded_shared" {
        return Err(error_at(
            src,
            attr.kind_at,
            "a padded shared layout is not the parent of another layout",
        ));
    }
    let Some(k) = kind(attr.kind) else {
        let why = match attr.kind {
            "linear" if depth == 0 => "`#ttg.linear<...>` is a linear layout, not a Gluon layout: read it as one (`parse_linear`, `axe triton show`)".to_string(),
            "linear" => "`#ttg.linear<...>` is read as a linear layout on its own, not inside another layout".to_string(),
            other => format!(
                "`{other}` is not a layout axe reads (blocked, nvidia_mma, dot_op, slice, swizzled_shared, \
                 nvmma_shared, padded_shared, amd_mfma, amd_wmma and, on its own, linear are)"
            ),
        };
        return Err(error_at(src, attr.kind_at, why));
    };
    let entries = scan.dict(&attr, attr.open + 1)?;
    let mut args: Vec<(Option<String>, Spanned)> = Vec::new();
    let mut cta: [Option<&Spanned>; 3] = [None; 3];
    let mut version: Vec<Spanned> = Vec::new();
    for (key, key_at, param) in &entries {
        let Some((_, read, _)) = k.params.iter().find(|(n, _, _)| n == key) else {
            let names: Vec<&str> = k.params.iter().map(|(n, _, _)| *n).collect();
            return Err(error_at(
                src,
                *key_at,
                format!(
                    "`#ttg.{}` has no parameter `{key}` (it has {})",
                    attr.kind,
                    names.join(", ")
                ),
            ));
        };
        let value = match param {
            Param::Plain(v) => v.clone(),
            Param::Layout(t) => {
                if *read != Read::Arg("parent") {
                    return Err(error_at(src, *key_at, format!("`{key}` is not a layout")));
                }
                build(scan, input, *t, depth + 1)?
            }
        };
        // Triton before 3.4 printed an MFMA's instrShape as [M, N]; the K of its instruction (8 for
        // 32×32, 16 for 16×16, 4 otherwise, as those versions' f16 instructions) does not move the
        // accumulator's elements, and Gluon's form takes [M, N, K].
        let value = match (attr.kind, *read, &value.value) {
            ("amd_mfma", Read::Arg("instr_shape"), Value::List(mn)) if mn.len() == 2 => {
                let k = match (&mn[0].value, &mn[1].value) {
                    (Value::Int(32), Value::Int(32)) => 8,
                    (Value::Int(16), Value::Int(16)) => 16,
                    _ => 4,
                };
                let mut mnk = mn.clone();
                mnk.push(Spanned {
                    at: value.at,
                    value: Value::Int(k),
                });
                Spanned {
                    at: value.at,
                    value: Value::List(mnk),
                }
            }
            _ => value,
        };
        match *read {
            Read::Arg(name) => {
                if args.iter().any(|(n, _)| n.as_deref() == Some(name)) {
                    return Err(error_at(
                        src,
                        *key_at,
                        format!("`{key}` says again what another parameter said"),
                    ));
                }
                args.push((Some(name.to_string()), value));
            }
            Read::Cta(i) => {
                if let Param::Plain(v) = param {
                    cta[i] = Some(v);
                }
            }
            Read::Major => version.insert(0, value),
            Read::Minor => version.push(value),
            Read::CtaLayout => cta_layout(src, &value, &mut args)?,
            Read::WmmaWarps => wmma_warps(src, &value, &mut args)?,
            Read::WmmaTiles => {
                if super::parse::ints(src, &value, "tilesPerWarp")?
                    .iter()
                    .any(|t| *t != 1)
                {
                    return Err(error_at(
                        src,
                        value.at,
                        "tilesPerWarp other than 1 (the older WMMA printing) is not read: the registers \
                         it adds depend on the tensor's shape, which no `reg_bases` say",
                    ));
                }
            }
        }
    }
    for (name, _, required) in k.params {
        if *required && !entries.iter().any(|(k, _, _)| k == name) {
            return Err(error_at(
                src,
                attr.at,
                format!("`#ttg.{}` needs `{name}`", attr.kind),
            ));
        }
    }
    if k.gluon == "NVMMADistributedLayout" {
        if version.len() == 1 {
            version.push(Spanned {
                at: version[0].at,
                value: Value::Int(0),
            });
        }
        let at = version.first().map_or(attr.at, |v| v.at);
        args.push((
            Some("version".into()),
            Spanned {
                at,
                value: Value::List(version),
            },
        ));
    }
    if k.gluon == "DotOperandLayout" && !args.iter().any(|(n, _)| n.as_deref() == Some("k_width")) {
        args.push((
            Some("k_width".into()),
            Spanned {
                at: attr.at,
                value: Value::Int(0),
            },
        ));
    }
    if k.gluon == "AMDWMMALayout" {
        // Triton leaves out a false `isTranspose` and an empty `ctaLayout`.
        for (name, default) in [
            ("transposed", Value::Word("false".into())),
            ("warp_bases", Value::List(Vec::new())),
        ] {
            if !args.iter().any(|(n, _)| n.as_deref() == Some(name)) {
                args.push((
                    Some(name.into()),
                    Spanned {
                        at: attr.at,
                        value: default,
                    },
                ));
            }
        }
    }
    if k.gluon == "AMDMFMALayout" && !args.iter().any(|(n, _)| n.as_deref() == Some("version")) {
        return Err(error_at(src, attr.at, "`#ttg.amd_mfma` needs `version`"));
    }
    let mut rank = None;
    if let Some((bases, r)) = cta_bases(src, cta)? {
        if args.iter().any(|(n, _)| n.as_deref() == Some("cga_layout")) {
            return Err(error_at(
                src,
                bases.at,
                "give either CGALayout or CTAsPerCGA/CTASplitNum/CTAOrder, not both",
            ));
        }
        rank = Some((r, bases.at));
        if !matches!(&bases.value, Value::List(b) if b.is_empty()) {
            args.push((Some("cga_layout".into()), bases));
        }
    }
    if k.gluon == "AMDWMMALayout" {
        wmma_rank(&mut args, rank);
    }
    if k.gluon == "NVMMASharedLayout" && !args.iter().any(|(n, _)| n.as_deref() == Some("rank")) {
        // Triton prints the rank only where the CTA parameters do not say it.
        let from_cga = args
            .iter()
            .find_map(|(n, v)| match (n.as_deref(), &v.value) {
                (Some("cga_layout"), Value::List(b)) => match b.first().map(|b| &b.value) {
                    Some(Value::List(cs)) => Some((cs.len(), v.at)),
                    _ => None,
                },
                _ => None,
            });
        if let Some((r, at)) = rank.or(from_cga) {
            args.push((
                Some("rank".into()),
                Spanned {
                    at,
                    value: Value::Int(i64::try_from(r).unwrap_or(i64::MAX)),
                },
            ));
        }
    }
    Ok(Spanned {
        at: attr.at,
        value: Value::Call(k.gluon.to_string(), args),
    })
}
