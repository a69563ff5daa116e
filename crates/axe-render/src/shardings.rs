//! The block picture of a sharding, from the sharding itself: one block per device region
//! ([`crate::sharding_blocks`]), the regions from `axe-shard`.

use std::collections::BTreeMap;

use axe_shard::{Mesh, Sharding};

use crate::error::{RenderError, Result};

/// The block picture (SVG) of sharding `s` of an array of `dims` on `mesh`, titled `title`: one block
/// per piece, named by the devices holding it (as JAX draws shardings). `None` for arrays of rank 3 or
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
    crate::sharding_blocks(title, dims, &pieces).map(Some)
}

/// The pieces of sharding `s` of an array of `dims` on `mesh` as text, titled `title`: one line per
/// distinct piece, its region (`[0:3, 0:8]`, half-open ranges per dimension) then the devices holding it
/// (replicas listed once, [`crate::id_list`]), pieces in order of their regions. Any rank and any cut,
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
    let mut out = format!(
        "{}\n{} pieces of [{}]: the region each holds, then its devices\n",
        title.replace('\n', " "),
        pieces.len(),
        shape.join(", ")
    );
    for (region, mut ids) in pieces {
        ids.sort_unstable();
        ids.dedup();
        let r: Vec<String> = region.iter().map(|(a, b)| format!("{a}:{b}")).collect();
        out.push_str(&format!("  [{}]  {}\n", r.join(", "), crate::id_list(&ids)));
    }
    Ok(out)
}

/// The text picture of sharding `s` of an array of `dims` on `mesh`: its Axe form drawn element by
/// element ([`crate::axe_picture`], as `axe render --format txt` draws it), or, where that cannot be
/// drawn (a sharding cut unevenly has no Axe form), its pieces listed ([`sharding_text`]).
pub fn sharding_txt(mesh: &Mesh, s: &Sharding, dims: &[u64], title: &str) -> Result<String> {
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
}
