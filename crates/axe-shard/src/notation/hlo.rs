//! XLA `HloSharding` text, printed as XLA prints it.
//!
//! Tile grid: one dim per tensor dim (the product of its mesh axes), then a `manual` subgroup dim and a
//! `replicated` subgroup dim where those axes exist. The devices are the mesh's devices transposed to
//! (each dim's axes in order, then the manual axes, then the replicated axes). With the default device
//! order that is an iota, printed canonically: size-1 dims dropped, runs of consecutive axes merged, and
//! `<=[N]` when no transpose remains (so `P('y','x')` on `x=2,y=4` is `{devices=[4,2]<=[2,4]T(1,0)}`).
//! All-ones grids print `{replicated}` (or `{manual}`).

use crate::error::{Result, ShardError};
use crate::mesh::Mesh;
use crate::model::{AxisUse, Sharding};

/// The XLA `HloSharding` text of `s` on `mesh`. `Partial` axes have no HloSharding form.
pub fn to_hlo(mesh: &Mesh, s: &Sharding) -> Result<String> {
    if let Some(d) = s.maximal_device() {
        return Ok(format!("{{maximal device={d}}}"));
    }
    let mut perm: Vec<usize> = Vec::new();
    let mut tiles: Vec<u64> = Vec::new();
    for (d, axes) in s.dim_axes().iter().enumerate() {
        perm.extend(axes);
        tiles.push(s.shards_of(mesh, d));
    }
    let mut manual = Vec::new();
    let mut replicated = Vec::new();
    for (a, u) in s.unsplit_axes() {
        match u {
            AxisUse::Manual => manual.push(a),
            AxisUse::Replicated => replicated.push(a),
            AxisUse::Partial(op) => {
                return Err(ShardError::Inexpressible {
                    notation: "hlo",
                    why: format!(
                        "mesh axis {:?} holds partial values (pending {})",
                        mesh.names()[a],
                        op.name()
                    ),
                })
            }
            AxisUse::Split(_) => {}
        }
    }
    let size = |axes: &[usize]| -> u64 { axes.iter().map(|&a| mesh.sizes()[a]).product() };
    let (m, r) = (size(&manual), size(&replicated));
    if tiles.iter().all(|&t| t == 1) {
        if m > 1 && r == 1 {
            return Ok("{manual}".to_string());
        }
        if m == 1 {
            return Ok("{replicated}".to_string());
        }
    }
    perm.extend(&manual);
    perm.extend(&replicated);
    let mut kinds = Vec::new();
    if m > 1 {
        tiles.push(m);
        kinds.push("manual");
    }
    if r > 1 {
        tiles.push(r);
        kinds.push("replicated");
    }
    let suffix = match kinds.as_slice() {
        [] => String::new(),
        ["replicated"] => " last_tile_dim_replicate".to_string(),
        k => format!(" last_tile_dims={{{}}}", k.join(", ")),
    };
    let grid = join(&tiles);
    let devices = if mesh.is_default_order() {
        iota(mesh.sizes(), &perm)
    } else {
        join(&transposed(mesh, &perm))
    };
    Ok(format!("{{devices=[{grid}]{devices}{suffix}}}"))
}

/// The canonical iota text `<=[dims]T(perm)` of the mesh transposed by `perm` (axes absent from `perm`
/// have size 1 here).
fn iota(sizes: &[u64], perm: &[usize]) -> String {
    // Drop size-1 axes, then merge runs of consecutive axes.
    let kept: Vec<usize> = perm.iter().copied().filter(|&a| sizes[a] > 1).collect();
    let mut runs: Vec<Vec<usize>> = Vec::new();
    for a in kept {
        match runs.last_mut() {
            Some(run) if run.last().is_some_and(|&l| l + 1 == a) => run.push(a),
            _ => runs.push(vec![a]),
        }
    }
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by_key(|&i| runs[i][0]);
    // order[k]: which run comes k-th in mesh order; the transpose lists, per output position, its source.
    let reshape: Vec<u64> = order
        .iter()
        .map(|&i| runs[i].iter().map(|&a| sizes[a]).product())
        .collect();
    let mut t = vec![0usize; runs.len()];
    for (k, &i) in order.iter().enumerate() {
        t[i] = k;
    }
    let n: u64 = reshape.iter().product();
    if t.iter().enumerate().all(|(i, &x)| i == x) {
        format!("<=[{n}]")
    } else {
        let tt: Vec<String> = t.iter().map(|x| x.to_string()).collect();
        format!("<=[{}]T({})", join(&reshape), tt.join(","))
    }
}

/// The mesh's device ids read with the axes in `perm` order (row-major).
fn transposed(mesh: &Mesh, perm: &[usize]) -> Vec<u64> {
    let sizes = mesh.sizes();
    let mut stride = vec![1usize; sizes.len()];
    for i in (0..sizes.len().saturating_sub(1)).rev() {
        stride[i] = stride[i + 1] * sizes[i + 1] as usize;
    }
    let mut out = Vec::with_capacity(mesh.len());
    let mut idx = vec![0u64; perm.len()];
    for _ in 0..mesh.len() {
        let pos: usize = perm
            .iter()
            .zip(&idx)
            .map(|(&a, &i)| i as usize * stride[a])
            .sum();
        out.push(mesh.devices()[pos]);
        for k in (0..idx.len()).rev() {
            idx[k] += 1;
            if idx[k] < sizes[perm[k]] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

fn join(v: &[u64]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}
