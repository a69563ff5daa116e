//! Printing a sharding as a Shardy `#sdy.sharding<...>` attribute (the reader is [`super::sdy`]).
//!
//! Mesh axes that a split of an axis `x` left ([`Mesh::split_of`], where the mesh has no `x` of its own)
//! print as sub-axes of `x`: `{devices=[2,2]<=[4]}` read onto `--mesh x=4` makes axes `x_0=2,x_1=2` and
//! prints `[{"x":(1)2}, {"x":(2)2}]`. Axes a user named `x_0`, `x_1` (`--mesh x_0=2,x_1=2`) are no split
//! and print by their names, `[{"x_0"}, {"x_1"}]`: the name never decides, so the text is never
//! ambiguous.

use crate::error::{Result, ShardError};
use crate::mesh::Mesh;
use crate::model::{AxisUse, DimHint, ReduceOp, Sharding};

/// Per mesh axis: the group (axis of the unsplit mesh) it belongs to, the pre-size at its start (the
/// product of the group's sizes before it) and its size; with the groups' names and sizes.
struct Groups {
    of: Vec<(usize, u64, u64)>,
    names: Vec<String>,
    sizes: Vec<u64>,
}

/// The mesh's axes grouped into the axes they split (see the module doc).
fn groups(mesh: &Mesh) -> Groups {
    let mut g = Groups {
        of: Vec::new(),
        names: Vec::new(),
        sizes: Vec::new(),
    };
    let mut a = 0;
    while a < mesh.rank() {
        let name = &mesh.names()[a];
        // The run of pieces of one split axis, at least two, named by the axis they split.
        let run = mesh
            .split_of(a)
            .filter(|b| mesh.axis(b).is_err())
            .and_then(|b| {
                let members: Vec<usize> = (a..mesh.rank())
                    .take_while(|&j| mesh.split_of(j) == Some(b))
                    .collect();
                (members.len() >= 2).then(|| (b.to_string(), members))
            });
        let (base, members) = run.unwrap_or_else(|| (name.clone(), vec![a]));
        let mut pre = 1;
        for &j in &members {
            g.of.push((g.names.len(), pre, mesh.sizes()[j]));
            pre *= mesh.sizes()[j];
        }
        g.names.push(base);
        g.sizes.push(pre);
        a += members.len();
    }
    g
}

/// `"x"` or `"x":(1)2` per run of `axes` (mesh axes, major first), adjacent pieces of one axis merged.
fn refs(g: &Groups, axes: &[usize]) -> Vec<String> {
    let mut runs: Vec<(usize, u64, u64)> = Vec::new();
    for &j in axes {
        let (grp, pre, size) = g.of[j];
        match runs.last_mut() {
            Some((lg, lp, ls)) if *lg == grp && *lp * *ls == pre => *ls *= size,
            _ => runs.push((grp, pre, size)),
        }
    }
    runs.iter()
        .map(|&(grp, pre, size)| {
            if pre == 1 && size == g.sizes[grp] {
                format!("\"{}\"", g.names[grp])
            } else {
                format!("\"{}\":({pre}){size}", g.names[grp])
            }
        })
        .collect()
}

/// One dim as Shardy prints it: `{"x", "y"}`, `{"x", ?}` where open, `{?}`, then its priority (`p1`),
/// which a closed dim listing no axis has none of (Shardy's verifier refuses `{}p1`; it would do nothing).
fn dim_text(refs: Vec<String>, hint: DimHint) -> String {
    let mut body = refs.join(", ");
    if hint.open {
        body = if body.is_empty() {
            "?".to_string()
        } else {
            format!("{body}, ?")
        };
    }
    let priority = match hint.priority {
        Some(p) if !body.is_empty() => format!("p{p}"),
        _ => String::new(),
    };
    format!("{{{body}}}{priority}")
}

/// `<["x"=2, "y"=4]>`, with `device_ids=[...]` where `ids` are given and not `0..N-1`: the mesh as
/// `sdy.mesh @mesh = ...` defines it, split axes shown whole. Law: [`super::sdy::parse_sdy_mesh`] reads
/// it back as a mesh with the same device at every position.
pub fn sdy_mesh(mesh: &Mesh) -> String {
    mesh_text(mesh, Some(mesh.devices()))
}

fn mesh_text(mesh: &Mesh, ids: Option<&[u64]>) -> String {
    let g = groups(mesh);
    let axes: Vec<String> = g
        .names
        .iter()
        .zip(&g.sizes)
        .map(|(n, s)| format!("\"{n}\"={s}"))
        .collect();
    let ids = ids
        .filter(|ids| !ids.iter().zip(0u64..).all(|(&d, i)| d == i))
        .map(|ids| {
            let v: Vec<String> = ids.iter().map(u64::to_string).collect();
            format!(", device_ids=[{}]", v.join(", "))
        })
        .unwrap_or_default();
    format!("<[{}]{ids}>", axes.join(", "))
}

/// The `#sdy.sharding<@mesh, [...]>` attribute of `s` on `mesh` (`@mesh` naming the caller's mesh, whose
/// [`sdy_mesh`] defines it); a sharding with a device placement of its own names an inline mesh with
/// those `device_ids`, and a maximal one the maximal mesh `mesh<[], device_ids=[N]>`. Partial sums print
/// as `unreduced={...}`; manual axes and other pending ops have no tensor-sharding form. Open dims and
/// priorities ([`crate::DimHint`]) print as Shardy prints them: `{"x", ?}p1`, `{?}`.
///
/// Law: [`super::sdy::parse_sdy`] of the text on `mesh` gives every device the region `s` gives it, and
/// every dim the hint `s` gives it.
pub fn to_sdy(mesh: &Mesh, s: &Sharding) -> Result<String> {
    if let Some(d) = s.maximal_device() {
        return Ok(format!("#sdy.sharding<mesh<[], device_ids=[{d}]>, []>"));
    }
    s.require_rule(mesh, crate::model::Uneven::Xla, "sdy")?;
    let g = groups(mesh);
    let mut unreduced = Vec::new();
    for (a, u) in s.unsplit_axes() {
        match u {
            AxisUse::Replicated | AxisUse::Split(_) => {}
            AxisUse::Partial(ReduceOp::Sum) => unreduced.push(a),
            AxisUse::Manual => {
                return Err(ShardError::Inexpressible {
                    notation: "sdy",
                    why: format!(
                        "mesh axis {:?} is manual (Shardy writes that as sdy.manual_computation, not \
                         in a tensor sharding)",
                        mesh.names()[a]
                    ),
                })
            }
            AxisUse::Partial(op) => {
                return Err(ShardError::Inexpressible {
                    notation: "sdy",
                    why: format!(
                        "mesh axis {:?} holds partial values pending {} (Shardy's unreduced pends a sum)",
                        mesh.names()[a],
                        op.name()
                    ),
                })
            }
        }
    }
    let dims: Vec<String> = s
        .dim_axes()
        .iter()
        .enumerate()
        .map(|(d, axes)| dim_text(refs(&g, axes), s.dim_hint(d)))
        .collect();
    let at = match s.placement() {
        Some(p) => format!("mesh{}", mesh_text(mesh, Some(p))),
        None => "@mesh".to_string(),
    };
    let tail = if unreduced.is_empty() {
        String::new()
    } else {
        format!(", unreduced={{{}}}", refs(&g, &unreduced).join(", "))
    };
    Ok(format!("#sdy.sharding<{at}, [{}]{tail}>", dims.join(", ")))
}
