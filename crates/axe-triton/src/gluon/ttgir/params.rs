//! TTGIR parameters that stand for other Gluon arguments: the older CTA parameters (`CTAsPerCGA`,
//! `CTASplitNum`, `CTAOrder`) for `cga_layout`, an AMD WMMA layout's `ctaLayout` for its `reg_bases`
//! and `warp_bases`, the older WMMA printing's `warpsPerCTA` for its `warp_bases`, and the rank a
//! WMMA layout's bases say.

use crate::error::Result;
use crate::syntax::{error_at, Spanned, Value};

/// Adds `rank=3` to a WMMA layout's arguments where Triton's text says it only through its bases (or
/// the CTA parameters' `rank`): three coordinates make it batched. Without any base it stays rank 2.
pub(super) fn wmma_rank(args: &mut Vec<(Option<String>, Spanned)>, rank: Option<(usize, usize)>) {
    if args.iter().any(|(n, _)| n.as_deref() == Some("rank")) {
        return;
    }
    let from_bases = args
        .iter()
        .find_map(|(n, v)| match (n.as_deref(), &v.value) {
            (Some("warp_bases" | "reg_bases" | "cga_layout"), Value::List(b)) => {
                match b.first().map(|b| &b.value) {
                    Some(Value::List(cs)) => Some((cs.len(), v.at)),
                    _ => None,
                }
            }
            _ => None,
        });
    if let Some((3, at)) = rank.or(from_bases) {
        args.push((
            Some("rank".into()),
            Spanned {
                at,
                value: Value::Int(3),
            },
        ));
    }
}

/// `warpsPerCTA = [...]` of the older `#ttg.amd_wmma` printing as Gluon's `warp_bases` (and `rank` for
/// three entries): Triton laid those warps out in whole tiles along the dims from the last to the first,
/// so each power-of-two count `w` of dim `d` gives the bases `1, 2, ..., w / 2` along `d`.
pub(super) fn wmma_warps(
    src: &str,
    value: &Spanned,
    args: &mut Vec<(Option<String>, Spanned)>,
) -> Result<()> {
    let counts = super::super::parse::ints(src, value, "warpsPerCTA")?;
    if !(2..=3).contains(&counts.len()) {
        return Err(error_at(
            src,
            value.at,
            "warpsPerCTA has 2 entries (or 3, batched)",
        ));
    }
    if let Some(w) = counts.iter().find(|w| !w.is_power_of_two()) {
        return Err(error_at(
            src,
            value.at,
            format!("warpsPerCTA entries are powers of two, not {w}"),
        ));
    }
    if args
        .iter()
        .any(|(n, _)| matches!(n.as_deref(), Some("warp_bases" | "rank")))
    {
        return Err(error_at(
            src,
            value.at,
            "`warpsPerCTA` says again what `ctaLayout` said (the older printing has one, the newer the other)",
        ));
    }
    let rank = counts.len();
    let at = value.at;
    let int = |x: u64| Spanned {
        at,
        value: Value::Int(i64::try_from(x).unwrap_or(i64::MAX)),
    };
    let mut bases = Vec::new();
    for d in (0..rank).rev() {
        let mut v = 1;
        while v < counts[d] {
            let base = (0..rank).map(|j| int(if j == d { v } else { 0 })).collect();
            bases.push(Spanned {
                at,
                value: Value::List(base),
            });
            v *= 2;
        }
    }
    args.push((
        Some("warp_bases".into()),
        Spanned {
            at,
            value: Value::List(bases),
        },
    ));
    if rank == 3 {
        args.push((Some("rank".into()), int(3)));
    }
    Ok(())
}

/// `ctaLayout = {register = [...], warp = [...]}` as Gluon's `reg_bases` and `warp_bases` arguments.
pub(super) fn cta_layout(
    src: &str,
    value: &Spanned,
    args: &mut Vec<(Option<String>, Spanned)>,
) -> Result<()> {
    let Value::Map(entries) = &value.value else {
        return Err(error_at(
            src,
            value.at,
            "ctaLayout must be `{register = [...], warp = [...]}`",
        ));
    };
    for (key, v) in entries {
        let name = match key.as_str() {
            "register" => "reg_bases",
            "warp" => "warp_bases",
            "block" if matches!(&v.value, Value::List(b) if b.is_empty()) => continue,
            "block" => {
                return Err(error_at(
                    src,
                    v.at,
                    "a multi-CTA AMDWMMALayout is not supported",
                ))
            }
            other => {
                return Err(error_at(
                    src,
                    v.at,
                    format!("ctaLayout has no `{other}` (it has register, warp and block)"),
                ))
            }
        };
        if args.iter().any(|(n, _)| n.as_deref() == Some(name)) {
            return Err(error_at(src, v.at, format!("`{key}` given twice")));
        }
        args.push((Some(name.into()), v.clone()));
    }
    Ok(())
}

/// The `cga_layout` bases that the older CTA parameters stand for (`None` when none is given): along
/// each dim in `CTAOrder` (most minor first), first the bits that split the dim over CTAs
/// (`CTASplitNum`, values 1, 2, 4, ...), then the bits whose CTAs hold copies (`CTAsPerCGA /
/// CTASplitNum`, zero bases); and the rank. The bases carry the offset of `CTAsPerCGA`.
pub(super) fn cta_bases(src: &str, cta: [Option<&Spanned>; 3]) -> Result<Option<(Spanned, usize)>> {
    const NAMES: [&str; 3] = ["CTAsPerCGA", "CTASplitNum", "CTAOrder"];
    let [Some(per_cga), Some(split), Some(order)] = cta else {
        if let Some(given) = cta.iter().flatten().next() {
            return Err(error_at(
                src,
                given.at,
                "CTAsPerCGA, CTASplitNum and CTAOrder go together: give all three or none",
            ));
        }
        return Ok(None);
    };
    let list = |v: &Spanned, i: usize| -> Result<Vec<(u64, usize)>> {
        let Value::List(items) = &v.value else {
            return Err(error_at(src, v.at, format!("{} must be a list", NAMES[i])));
        };
        items
            .iter()
            .map(|x| match x.value {
                Value::Int(n) if n >= 0 => Ok((n as u64, x.at)),
                _ => Err(error_at(
                    src,
                    x.at,
                    format!("{} entries must be integers ≥ 0", NAMES[i]),
                )),
            })
            .collect()
    };
    let per_cga_v = list(per_cga, 0)?;
    let split_v = list(split, 1)?;
    let order_v = list(order, 2)?;
    let rank = order_v.len();
    for (v, l) in [(per_cga, &per_cga_v), (split, &split_v)] {
        if l.len() != rank {
            return Err(error_at(
                src,
                v.at,
                format!("{} entries here, {rank} in CTAOrder", l.len()),
            ));
        }
    }
    let mut seen = vec![false; rank];
    for &(d, at) in &order_v {
        match usize::try_from(d).ok().and_then(|d| seen.get_mut(d)) {
            Some(s) if !*s => *s = true,
            _ => {
                return Err(error_at(
                    src,
                    at,
                    "CTAOrder must be a permutation of the dims",
                ))
            }
        }
    }
    let mut bases = Vec::new();
    for &(d, _) in &order_v {
        let d = d as usize;
        let (ctas, ctas_at) = per_cga_v[d];
        let (parts, parts_at) = split_v[d];
        if !ctas.is_power_of_two() {
            return Err(error_at(
                src,
                ctas_at,
                "CTAsPerCGA entries must be powers of two",
            ));
        }
        if !parts.is_power_of_two() || parts > ctas {
            return Err(error_at(
                src,
                parts_at,
                "CTASplitNum entries must be powers of two dividing CTAsPerCGA",
            ));
        }
        let base = |v: u64| Spanned {
            at: per_cga.at,
            value: Value::List(
                (0..rank)
                    .map(|j| Spanned {
                        at: per_cga.at,
                        value: Value::Int(if j == d { v as i64 } else { 0 }),
                    })
                    .collect(),
            ),
        };
        let mut v = 1;
        while v < parts {
            bases.push(base(v));
            v *= 2;
        }
        let mut copies = 1;
        while copies < ctas / parts {
            bases.push(base(0));
            copies *= 2;
        }
    }
    Ok(Some((
        Spanned {
            at: per_cga.at,
            value: Value::List(bases),
        },
        rank,
    )))
}
