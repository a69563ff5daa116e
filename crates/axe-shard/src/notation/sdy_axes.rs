//! Shardy axis references resolved on a mesh: sub-axes split its axes (see [`super::sdy`]).

use crate::error::{Result, ShardError};
use crate::mesh::Mesh;
use crate::model::{AxisUse, ReduceOp, Sharding};
use crate::notation::sdy::{Attr, AxisRef};

/// The axes of `mesh` that play axis `name`: `[a]` where the mesh has it, else the run of axes a split
/// of it left ([`Mesh::split_of`], as HLO text read onto a mesh splits an axis), else the run of axes
/// named `name_0`, `name_1`, ... (a split mesh given by its names, as `Mesh("x_0=2,x_1=2")`).
pub(crate) fn pieces_of(mesh: &Mesh, name: &str) -> Option<Vec<usize>> {
    if let Ok(a) = mesh.axis(name) {
        return Some(vec![a]);
    }
    if let Some(first) = (0..mesh.rank()).find(|&a| mesh.split_of(a) == Some(name)) {
        let run: Vec<usize> = (first..mesh.rank())
            .take_while(|&a| mesh.split_of(a) == Some(name))
            .collect();
        if run.len() >= 2 {
            return Some(run);
        }
    }
    let first = mesh
        .names()
        .iter()
        .position(|n| *n == format!("{name}_0"))?;
    let run: Vec<usize> = (first..mesh.rank())
        .take_while(|&a| mesh.names()[a] == format!("{name}_{}", a - first))
        .collect();
    (run.len() >= 2).then_some(run)
}

/// The sharding `attr` gives on `mesh` (its axes named by the attribute), splitting mesh axes that
/// sub-axes cut.
pub(crate) fn on_mesh(
    text: &str,
    attr: &Attr,
    mesh: &Mesh,
    dims: &[u64],
) -> Result<(Mesh, Sharding)> {
    let err = |msg: String, offset: usize| ShardError::Parse {
        msg,
        text: text.to_string(),
        offset,
    };
    if attr.dims.len() != dims.len() {
        return Err(err(
            format!(
                "{} dims' axes for an array of {} dims (Shardy lists every dim)",
                attr.dims.len(),
                dims.len()
            ),
            attr.dims_at,
        ));
    }
    let all = attr
        .dims
        .iter()
        .flatten()
        .chain(&attr.replicated)
        .chain(&attr.unreduced);
    // Per mesh axis, the cut points (pre-sizes, as products from the major end) its sub-axes need.
    let mut cuts: Vec<Vec<u64>> = vec![Vec::new(); mesh.rank()];
    let mut whole_of: Vec<(usize, Vec<usize>)> = Vec::new();
    for r in all.clone() {
        let pieces = pieces_of(mesh, &r.name).ok_or_else(|| {
            err(
                format!(
                    "unknown mesh axis {:?} (the mesh has {})",
                    r.name,
                    crate::error::names_text(mesh.names())
                ),
                r.at,
            )
        })?;
        let total: u64 = pieces.iter().map(|&a| mesh.sizes()[a]).product();
        if let Some((pre, size)) = r.sub {
            if size < 2 || pre == 0 || !total.is_multiple_of(pre.saturating_mul(size)) {
                return Err(err(
                    format!(
                        "sub-axis \"{}\":({pre}){size} does not fit axis {:?} of size {total} \
                         (its pre-size times its size must divide {total}, its size at least 2)",
                        r.name, r.name
                    ),
                    r.at,
                ));
            }
            // Cuts are kept per first piece; pre-sizes are from the major end of the whole axis.
            cuts[pieces[0]].extend([pre, pre * size]);
        }
        whole_of.push((pieces[0], pieces));
    }
    // The refined mesh: each axis group cut at its pieces' bounds and the sub-axes' cuts.
    let mut axes: Vec<(String, u64)> = Vec::new();
    // Per refined axis, the axis it is a piece of (see `Mesh::split_of`).
    let mut split_of: Vec<Option<String>> = Vec::new();
    // Per refined axis: (group's first mesh axis, pre-size at its start, size).
    let mut span: Vec<(usize, u64, u64)> = Vec::new();
    let mut a = 0;
    while a < mesh.rank() {
        let group = whole_of
            .iter()
            .find(|(f, _)| *f == a)
            .map_or_else(|| vec![a], |(_, p)| p.clone());
        let total: u64 = group.iter().map(|&g| mesh.sizes()[g]).product();
        let mut bounds: Vec<u64> = vec![1, total];
        let mut pre = 1;
        for &g in &group {
            pre *= mesh.sizes()[g];
            bounds.push(pre);
        }
        bounds.extend(&cuts[a]);
        bounds.sort_unstable();
        bounds.dedup();
        if let Some(w) = bounds.windows(2).find(|w| !w[1].is_multiple_of(w[0])) {
            let at = attr
                .dims
                .iter()
                .flatten()
                .chain(&attr.replicated)
                .chain(&attr.unreduced)
                .find(|r| r.sub.is_some() && pieces_of(mesh, &r.name).is_some_and(|p| p[0] == a))
                .map_or(0, |r| r.at);
            return Err(err(
                format!(
                    "sub-axes of mesh axis {:?} overlap (cuts at pre-sizes {} and {})",
                    base_name(mesh, &group),
                    w[0],
                    w[1]
                ),
                at,
            ));
        }
        let base = base_name(mesh, &group);
        if bounds.len() == 1 {
            // A group of size 1: its axes stay as they are.
            for &g in &group {
                axes.push((mesh.names()[g].clone(), 1));
                split_of.push(mesh.split_of(g).map(str::to_string));
                span.push((a, 1, 1));
            }
            a += group.len();
            continue;
        }
        let n = bounds.len() - 1;
        // The axis the group's pieces are pieces of: the one they already were pieces of, else `base`.
        let of = mesh
            .split_of(a)
            .map_or_else(|| base.clone(), str::to_string);
        for (k, w) in bounds.windows(2).enumerate() {
            let name = if n == 1 {
                split_of.push(mesh.split_of(a).map(str::to_string));
                mesh.names()[a].clone()
            } else {
                split_of.push(Some(of.clone()));
                format!("{base}_{k}")
            };
            axes.push((name, w[1] / w[0]));
            span.push((a, w[0], w[1] / w[0]));
        }
        a += group.len();
    }
    let refined = Mesh::with_pieces(&axes, mesh.devices().to_vec(), split_of)?;
    // The refined axes an axis reference covers, major first.
    let cover = |r: &AxisRef| -> Vec<usize> {
        let first = pieces_of(mesh, &r.name).map_or(0, |p| p[0]);
        let total: u64 = pieces_of(mesh, &r.name)
            .unwrap_or_default()
            .iter()
            .map(|&g| mesh.sizes()[g])
            .product();
        let (lo, hi) = r.sub.map_or((1, total), |(p, s)| (p, p * s));
        span.iter()
            .enumerate()
            .filter(|(_, (g, pre, _))| *g == first && *pre >= lo && (*pre < hi || lo == hi))
            .map(|(j, _)| j)
            .collect()
    };
    let mut used: Vec<bool> = vec![false; refined.rank()];
    let mut take = |r: &AxisRef| -> Result<Vec<usize>> {
        let js = cover(r);
        if js.iter().any(|&j| used[j]) {
            return Err(err(
                format!("mesh axis {:?} (or a part of it) is used twice", r.name),
                r.at,
            ));
        }
        js.iter().for_each(|&j| used[j] = true);
        Ok(js)
    };
    let mut dim_axes = Vec::new();
    for d in &attr.dims {
        let mut v = Vec::new();
        for r in d {
            v.extend(take(r)?);
        }
        dim_axes.push(v);
    }
    let mut others = Vec::new();
    for r in &attr.replicated {
        others.extend(take(r)?.into_iter().map(|j| (j, AxisUse::Replicated)));
    }
    for r in &attr.unreduced {
        others.extend(
            take(r)?
                .into_iter()
                .map(|j| (j, AxisUse::Partial(ReduceOp::Sum))),
        );
    }
    let s = Sharding::new(&refined, dims.to_vec(), dim_axes, &others)?
        .with_hints(attr.hints.clone())
        .map_err(|e| err(e.to_string(), attr.dims_at))?;
    Ok((refined, s))
}

/// The name of the axis a group of mesh axes plays: the axis's own where the group is one axis, else the
/// axis its pieces split ([`Mesh::split_of`]), or `name` for pieces named `name_0`, `name_1`, ...
fn base_name(mesh: &Mesh, group: &[usize]) -> String {
    let first = &mesh.names()[group[0]];
    if group.len() == 1 {
        first.clone()
    } else if let Some(of) = mesh.split_of(group[0]) {
        of.to_string()
    } else {
        first.strip_suffix("_0").unwrap_or(first).to_string()
    }
}
