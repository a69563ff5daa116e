//! The block picture of a sharding, from the sharding itself: one block per device region
//! ([`crate::sharding_blocks`]), the regions from `axe-shard`.

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
