//! The block picture of a sharding, from the sharding itself: one block per device region
//! ([`crate::sharding_blocks`]), the regions from `axe-shard`.

use std::collections::BTreeMap;

use axe_shard::{AxisUse, Mesh, RegionView, Sharding};

use crate::error::{RenderError, Result};

/// The block picture (SVG) of sharding `s` of an array of `dims` on `mesh`, titled `title`: one block
/// per piece, named by the devices holding it (as JAX draws shardings); devices holding partial values
/// are named by their replica groups joined by the pending op (`0+2`: each holds a partial sum, the
/// value is theirs added; `max(0, 2)`), consistently with the replica groups `axe shard show` lists.
/// `None` for arrays of rank 3 or
/// more, which are drawn element by element ([`crate::axe_picture`] of the sharding's Axe layout).
pub fn sharding_svg(
    mesh: &Mesh,
    s: &Sharding,
    dims: &[u64],
    title: &str,
) -> Result<Option<String>> {
    if dims.len() > 2 {
        return Ok(None);
    }
    let view = s
        .region_view(mesh)
        .map_err(|e| RenderError::Input(e.to_string()))?;
    let pieces: Vec<crate::Piece> = (0..view.len())
        .filter_map(|i| view.place(i))
        .map(|p| crate::Piece {
            device: p.device,
            region: p.region,
        })
        .collect();
    let label = partial_label(s, &view);
    crate::sharding_blocks_labelled(title, dims, &pieces, &|h| label.as_ref().and_then(|f| f(h)))
        .map(Some)
}

/// How the devices `holders` of one block are named where `s` has partial axes: their replica groups
/// (devices holding the same values) joined by the pending reduction, `0+2` (a sum: each of devices 0
/// and 2 holds a partial sum, the value is theirs added), `(0,1)+(2,3)` (replicas of each partial sum
/// grouped), `max(0, 2)` (another op), `reduce(0, 2)` (several). `None` where `s` has no partial axis,
/// and for holders that are one replica group (as the table's replica group column says).
fn partial_label<'a>(
    s: &Sharding,
    view: &'a RegionView<'a>,
) -> Option<impl Fn(&[u64]) -> Option<String> + 'a> {
    let mut ops: Vec<&'static str> = s
        .axis_use()
        .iter()
        .filter_map(|u| match u {
            AxisUse::Partial(op) => Some(op.name()),
            _ => None,
        })
        .collect();
    ops.dedup();
    let op = match ops.as_slice() {
        [] => return None,
        [one] => *one,
        _ => "reduce",
    };
    let group_of: std::collections::HashMap<u64, usize> = (0..view.len())
        .filter_map(|i| view.place(i))
        .map(|p| (p.device, p.group))
        .collect();
    Some(move |holders: &[u64]| -> Option<String> {
        let mut groups: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
        for &d in holders {
            groups.entry(*group_of.get(&d)?).or_default().push(d);
        }
        if groups.len() < 2 {
            return None;
        }
        let mut parts: Vec<Vec<u64>> = groups.into_values().collect();
        parts.sort_unstable();
        let texts: Vec<String> = parts
            .iter()
            .map(|g| match g.as_slice() {
                [one] => one.to_string(),
                many => format!("({})", crate::id_list(many)),
            })
            .collect();
        Some(if op == "sum" {
            texts.join("+")
        } else {
            format!("{op}({})", texts.join(", "))
        })
    })
}

/// The pieces of sharding `s` of an array of `dims` on `mesh` as text, titled `title`: one line per
/// distinct piece, its region (`[0:3, 0:8]`, half-open ranges per dimension) then the devices holding it
/// (replicas listed once, [`crate::id_list`]; devices holding partial values named as [`sharding_svg`]
/// names them, `0+2`), pieces in order of their regions. Any rank and any cut,
/// even or not: the text form of [`sharding_svg`] for shardings that have no Axe form.
pub fn sharding_text(mesh: &Mesh, s: &Sharding, dims: &[u64], title: &str) -> Result<String> {
    let view = s
        .region_view(mesh)
        .map_err(|e| RenderError::Input(e.to_string()))?;
    let mut pieces: BTreeMap<Vec<(u64, u64)>, Vec<u64>> = BTreeMap::new();
    for p in (0..view.len()).filter_map(|i| view.place(i)) {
        let region = p.region.iter().map(|r| (r.start, r.end)).collect();
        pieces.entry(region).or_default().push(p.device);
    }
    let shape: Vec<String> = dims.iter().map(u64::to_string).collect();
    let label = partial_label(s, &view);
    let note = if label.is_some() {
        " (0+2: devices holding partial values still to be reduced, each a replica group)"
    } else {
        ""
    };
    let mut out = format!(
        "{}\n{} pieces of [{}]: the region each holds, then its devices{note}\n",
        title.replace('\n', " "),
        pieces.len(),
        shape.join(", ")
    );
    for (region, mut ids) in pieces {
        ids.sort_unstable();
        ids.dedup();
        let r: Vec<String> = region.iter().map(|(a, b)| format!("{a}:{b}")).collect();
        let who = label
            .as_ref()
            .and_then(|f| f(&ids))
            .unwrap_or_else(|| crate::id_list(&ids));
        out.push_str(&format!("  [{}]  {who}\n", r.join(", ")));
    }
    Ok(out)
}

/// The text picture of sharding `s` of an array of `dims` on `mesh`: its Axe form drawn element by
/// element ([`crate::axe_picture`], as `axe render --format txt` draws it), or, where that cannot be
/// drawn (a sharding cut unevenly has no Axe form), or where devices hold partial values (which the
/// elements would show as replicas), its pieces listed ([`sharding_text`]).
pub fn sharding_txt(mesh: &Mesh, s: &Sharding, dims: &[u64], title: &str) -> Result<String> {
    // Partial holders are named apart from replicas only in the pieces' list.
    if s.axis_use()
        .iter()
        .any(|u| matches!(u, AxisUse::Partial(_)))
    {
        return sharding_text(mesh, s, dims, title);
    }
    let elements = axe_shard::axe::to_axe(mesh, s, None)
        .map_err(|e| RenderError::Input(e.to_string()))
        .and_then(|layout| crate::axe_picture(&layout, dims));
    match elements {
        Ok(p) => Ok(crate::to_text(&p, false)),
        Err(_) => sharding_text(mesh, s, dims, title),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every device appears once, under the region the sharding gives it, uneven cuts included.
    #[test]
    fn uneven_pieces_are_listed_by_region() {
        let mesh = Mesh::new(&[("x", 2), ("y", 2)]).unwrap();
        let (mesh, s) = axe_shard::parse_any("P('x')", None, Some(&mesh), &[5, 4]).unwrap();
        let t = sharding_text(&mesh, &s, &[5, 4], "P('x') over f32[5,4]").unwrap();
        assert_eq!(
            t,
            "P('x') over f32[5,4]\n2 pieces of [5, 4]: the region each holds, then its devices\n  [0:3, 0:4]  0,1\n  [3:5, 0:4]  2,3\n"
        );
    }

    /// Devices holding partial sums are named apart from replicas, in text and SVG, and each replica
    /// group of them once.
    #[test]
    fn partial_holders_are_not_replicas() {
        let mesh = Mesh::from_sizes(&[2, 2]).unwrap();
        let (m, s) =
            axe_shard::parse_any("[Partial(), Shard(0)]", None, Some(&mesh), &[4, 4]).unwrap();
        let t = sharding_txt(&m, &s, &[4, 4], "t").unwrap();
        assert!(t.contains("  [0:2, 0:4]  0+2\n  [2:4, 0:4]  1+3\n"), "{t}");
        let svg = sharding_svg(&m, &s, &[4, 4], "t").unwrap().unwrap();
        assert!(
            svg.contains(">0+2<") && svg.contains(">1+3<") && !svg.contains(">0,2<"),
            "{svg}"
        );
        let mesh = Mesh::from_sizes(&[2, 2, 2]).unwrap();
        let (m, s) = axe_shard::parse_any(
            "[Partial(max), Replicate(), Shard(0)]",
            None,
            Some(&mesh),
            &[4],
        )
        .unwrap();
        let t = sharding_text(&m, &s, &[4], "t").unwrap();
        assert!(t.contains("  [0:2]  max((0,2), (4,6))\n"), "{t}");
        // No partial axis: ids as before.
        let (m, s) = axe_shard::parse_any(
            "[Replicate(), Shard(0)]",
            None,
            Some(&Mesh::from_sizes(&[2, 2]).unwrap()),
            &[4],
        )
        .unwrap();
        assert!(sharding_text(&m, &s, &[4], "t")
            .unwrap()
            .contains("  [0:2]  0,2\n"));
    }
}
