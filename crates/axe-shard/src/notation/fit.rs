//! HloShardings over device ids, not over a named mesh: reading tile assignments in any device order onto
//! one mesh.
//!
//! An HloSharding's tile assignment names devices in any order. Read onto a mesh (the caller's, or the one
//! another sharding of the same array brings), it is taken, in order of preference:
//!
//! 1. as a sharding over whole mesh axes in the mesh's own device order;
//! 2. the same on the mesh with its axes split into prime factors (a device axis split into whatever
//!    factors the tile assignment needs), the factors then merged back wherever every sharding read uses
//!    them together (`{devices=[2,2]<=[4]}` on `--mesh 4` is a mesh `d0_0=2,d0_1=2`);
//! 3. with a device placement of its own ([`Sharding::with_placement`]): mesh axes (split into prime
//!    factors where no grouping of whole axes makes the tile grid) assigned to the tile-grid dims, and each
//!    mesh position played by the device the tile assignment puts at that tile (`{devices=[4]0,3,1,2}`).
//!
//! The device set is what must agree: a tile assignment naming a device the mesh lacks, or lacking one
//! the mesh has, is an error.

use crate::error::{Result, ShardError};
use crate::mesh::Mesh;
use crate::model::{AxisUse, Sharding};
use crate::notation::any::{parse_any, Notation};
use crate::notation::hlo::{parse_hlo, parse_hlo_on};

/// A mesh whose axes split another's: `parts[a]` are the new axes (major first) of old axis `a`. Mesh
/// positions are the same in both (row-major order is kept by splitting an axis major first).
struct Refinement {
    mesh: Mesh,
    parts: Vec<Vec<usize>>,
}

/// The most attempts the search for an assignment of mesh axes to tile-grid dims makes.
const SEARCH_BUDGET: usize = 100_000;

/// The prime factors of `n`, ascending.
fn primes(mut n: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut p = 2u64;
    while p.saturating_mul(p) <= n {
        while n.is_multiple_of(p) {
            out.push(p);
            n /= p;
        }
        p += 1;
    }
    if n > 1 {
        out.push(n);
    }
    out
}

/// `mesh` with each axis split into its prime factors (axis `x` of 12 becomes `x_0=2,x_1=2,x_2=3`; axes of
/// a prime size or 1 stay).
fn prime_refinement(mesh: &Mesh) -> Result<Refinement> {
    let mut axes: Vec<(String, u64)> = Vec::new();
    let mut split_of = Vec::new();
    let mut parts = Vec::new();
    for (a, (name, &size)) in mesh.names().iter().zip(mesh.sizes()).enumerate() {
        let f = primes(size);
        let whole = mesh.split_of(a).map(str::to_string);
        if f.len() <= 1 {
            parts.push(vec![axes.len()]);
            axes.push((name.clone(), size));
            split_of.push(whole);
        } else {
            parts.push((axes.len()..axes.len() + f.len()).collect());
            axes.extend(
                f.iter()
                    .enumerate()
                    .map(|(k, &p)| (format!("{name}_{k}"), p)),
            );
            split_of.extend(
                f.iter()
                    .map(|_| Some(whole.clone().unwrap_or(name.clone()))),
            );
        }
    }
    Ok(Refinement {
        mesh: Mesh::with_pieces(&axes, mesh.devices().to_vec(), split_of)?,
        parts,
    })
}

/// `s` (on `from`) on the mesh `to`, each axis `a` of `from` becoming the axes `parts[a]` of `to`; the
/// placement, if any, is `placement` (positions are the same in both meshes).
fn restate(
    s: &Sharding,
    to: &Mesh,
    parts: &[Vec<usize>],
    placement: Option<Vec<u64>>,
) -> Result<Sharding> {
    let out = if let Some(d) = s.maximal_device() {
        Sharding::maximal(to, s.dims().to_vec(), d)?
    } else {
        let dim_axes: Vec<Vec<usize>> = s
            .dim_axes()
            .iter()
            .map(|axes| {
                axes.iter()
                    .flat_map(|&a| parts[a].iter().copied())
                    .collect()
            })
            .collect();
        let mut others = Vec::new();
        for (a, u) in s.unsplit_axes() {
            others.extend(parts[a].iter().map(|&b| (b, u)));
        }
        Sharding::new(to, s.dims().to_vec(), dim_axes, &others)?
    };
    let out = out.with_uneven(s.uneven()).hints_of(s);
    match placement {
        Some(p) => out.with_placement(to, p),
        None => Ok(out),
    }
}

/// The placement of `s` on `mesh` as a list (the mesh's order where it has none).
fn placement_of(s: &Sharding, mesh: &Mesh) -> Vec<u64> {
    s.placement().unwrap_or(mesh.devices()).to_vec()
}

/// Merges adjacent axes of the refinement `r` of `base` that split one axis of `base` and that every
/// sharding in `ss` uses together (the same unsplit use, or one right after the other in one dim).
fn coarsen(base: &Mesh, r: &Refinement, ss: &[Sharding]) -> Result<(Mesh, Vec<Sharding>)> {
    let together = |j: usize| {
        ss.iter().all(|s| {
            if s.maximal_device().is_some() {
                return true;
            }
            match (s.axis_use()[j], s.axis_use()[j + 1]) {
                (AxisUse::Split(d), AxisUse::Split(e)) if d == e => s.dim_axes()[d]
                    .windows(2)
                    .any(|w| w[0] == j && w[1] == j + 1),
                (AxisUse::Split(_), _) | (_, AxisUse::Split(_)) => false,
                (u, v) => u == v,
            }
        })
    };
    let mut axes: Vec<(String, u64)> = Vec::new();
    let mut split_of = Vec::new();
    let mut group_of = vec![0usize; r.mesh.rank()];
    for (a, part) in r.parts.iter().enumerate() {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for &j in part {
            match groups.last_mut() {
                Some(g) if g.last().is_some_and(|&l| l + 1 == j && together(l)) => g.push(j),
                _ => groups.push(vec![j]),
            }
        }
        let whole = groups.len() == 1;
        // Pieces of an axis are pieces of the axis it is a piece of, if any.
        let of = base.split_of(a).map(str::to_string);
        for (k, g) in groups.iter().enumerate() {
            let size: u64 = g.iter().map(|&j| r.mesh.sizes()[j]).product();
            let name = if whole {
                split_of.push(of.clone());
                base.names()[a].clone()
            } else {
                split_of.push(Some(of.clone().unwrap_or(base.names()[a].clone())));
                format!("{}_{k}", base.names()[a])
            };
            for &j in g {
                group_of[j] = axes.len();
            }
            axes.push((name, size));
        }
    }
    let mesh = Mesh::with_pieces(&axes, base.devices().to_vec(), split_of)?;
    let mut out = Vec::with_capacity(ss.len());
    for s in ss {
        let placement = s.placement().map(<[u64]>::to_vec);
        let c = if let Some(d) = s.maximal_device() {
            Sharding::maximal(&mesh, s.dims().to_vec(), d)?
        } else {
            let mut dim_axes: Vec<Vec<usize>> = Vec::new();
            for axes in s.dim_axes() {
                let mut v: Vec<usize> = axes.iter().map(|&j| group_of[j]).collect();
                v.dedup();
                dim_axes.push(v);
            }
            let mut others: Vec<(usize, AxisUse)> = s
                .unsplit_axes()
                .into_iter()
                .map(|(j, u)| (group_of[j], u))
                .collect();
            others.dedup();
            Sharding::new(&mesh, s.dims().to_vec(), dim_axes, &others)?
        };
        let c = c.with_uneven(s.uneven()).hints_of(s);
        out.push(match placement {
            Some(p) => c.with_placement(&mesh, p)?,
            None => c,
        });
    }
    Ok((mesh, out))
}

/// Mesh axes (indices, major first) for each tile-grid dim of `grid`, each axis used once, every axis of
/// size > 1 used: a grouping whose products are the grid's dims. `None` when there is none (or the search
/// budget runs out).
fn assign(mesh: &Mesh, grid: &[u64]) -> Option<Vec<Vec<usize>>> {
    if grid.is_empty() {
        return mesh.sizes().iter().all(|&s| s == 1).then(Vec::new);
    }
    let mut search = Search {
        sizes: mesh.sizes(),
        grid,
        used: vec![false; mesh.rank()],
        cur: vec![Vec::new()],
        budget: SEARCH_BUDGET,
    };
    search.go(0, grid[0], 0).then_some(search.cur)
}

/// A depth-first search for [`assign`]: grid dim by grid dim, each dim's axes in ascending order.
struct Search<'a> {
    sizes: &'a [u64],
    grid: &'a [u64],
    used: Vec<bool>,
    cur: Vec<Vec<usize>>,
    budget: usize,
}

impl Search<'_> {
    /// Completes grid dim `i`, which still needs a product of `rest`, with axes from `from` on.
    fn go(&mut self, i: usize, rest: u64, from: usize) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        if rest == 1 {
            if i + 1 == self.grid.len() {
                return (0..self.sizes.len()).all(|a| self.used[a] || self.sizes[a] == 1);
            }
            self.cur.push(Vec::new());
            if self.go(i + 1, self.grid[i + 1], 0) {
                return true;
            }
            self.cur.pop();
            return false;
        }
        for a in from..self.sizes.len() {
            let size = self.sizes[a];
            if self.used[a] || size == 1 || !rest.is_multiple_of(size) {
                continue;
            }
            self.used[a] = true;
            if let Some(last) = self.cur.last_mut() {
                last.push(a);
            }
            if self.go(i, rest / size, a + 1) {
                return true;
            }
            if let Some(last) = self.cur.last_mut() {
                last.pop();
            }
            self.used[a] = false;
        }
        false
    }
}

/// Reads HloSharding `text` onto `mesh`: over whole mesh axes in the mesh's order, or (with `place`) with a
/// device placement of its own. Errors where the device sets differ, and (without `place`, or where no
/// grouping of mesh axes makes the tile grid) where it does not fit.
fn fit(text: &str, mesh: &Mesh, dims: &[u64], place: bool) -> Result<Sharding> {
    let exact = parse_hlo_on(text, mesh, dims);
    if exact.is_ok() || !place {
        return exact;
    }
    let (h, hs) = parse_hlo(text, dims, None)?;
    if hs.maximal_device().is_some() || h.len() != mesh.len() {
        return exact;
    }
    let mut theirs = h.devices().to_vec();
    let mut ours = mesh.devices().to_vec();
    theirs.sort_unstable();
    ours.sort_unstable();
    if let Some(d) = theirs.iter().find(|d| ours.binary_search(d).is_err()) {
        return Err(ShardError::Sharding(format!(
            "device {d} of {} is not one of the mesh's devices {}",
            super::quoted(text),
            super::ids_text(mesh.devices())
        )));
    }
    let grid = h.sizes();
    let Some(axes_of) = assign(mesh, grid) else {
        return exact;
    };
    // Mesh position v plays the device at the tile its coordinates give.
    let placement: Vec<u64> = (0..mesh.len())
        .map(|v| {
            let c = mesh.coords(v);
            let flat = axes_of.iter().zip(grid).fold(0u64, |f, (axes, &g)| {
                let t = axes.iter().fold(0u64, |x, &a| x * mesh.sizes()[a] + c[a]);
                f * g + t
            });
            h.devices()[flat as usize]
        })
        .collect();
    let dim_axes: Vec<Vec<usize>> = axes_of[..dims.len()].to_vec();
    let mut others = Vec::new();
    for (i, axes) in axes_of.iter().enumerate().skip(dims.len()) {
        let u = hs.axis_use()[i];
        others.extend(axes.iter().map(|&a| (a, u)));
    }
    let plain = Sharding::new(mesh, dims.to_vec(), dim_axes, &others)?;
    let placed = plain.clone().with_placement(mesh, placement)?;
    // A placement that moves devices only within their replica groups changes nothing: drop it. (Not
    // where there are manual axes: a device's manual coordinate is more than its region.)
    let manual = plain.axis_use().contains(&AxisUse::Manual);
    if !manual && placed.regions(mesh)? == plain.regions(mesh)? {
        return Ok(plain);
    }
    Ok(placed)
}

/// Reads each of `texts` (with its notation) as a sharding of an array of `dims` onto `base` or a
/// refinement of it (see the module doc), every sharding on the one mesh returned. Non-HLO texts are read
/// onto `base` as their notation reads them.
pub(crate) fn onto(
    texts: &[(&str, Notation)],
    base: &Mesh,
    dims: &[u64],
) -> Result<(Mesh, Vec<Sharding>)> {
    if let Some(r) = sdy_refinement(texts, base, dims)? {
        let ss = texts
            .iter()
            .map(|&(t, n)| match n {
                Notation::Hlo => fit(t, &r.mesh, dims, true),
                Notation::Sdy => same_mesh(
                    crate::notation::sdy::parse_sdy(t, Some(&r.mesh), dims)?,
                    &r.mesh,
                ),
                _ => {
                    let s = parse_any(t, Some(n), Some(base), dims)?.1;
                    let p = s.placement().map(<[u64]>::to_vec);
                    restate(&s, &r.mesh, &r.parts, p)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        return coarsen(base, &r, &ss);
    }
    let read_on = |m: &Mesh, refine: Option<&Refinement>, place: bool| -> Result<Vec<Sharding>> {
        texts
            .iter()
            .map(|&(t, n)| match (n, refine) {
                (Notation::Hlo, _) => fit(t, m, dims, place),
                // Read on the mesh itself (its axes split into `x_0`, `x_1`, ... still answer to `x`);
                // a read that splits it further does not serve.
                (Notation::Sdy, _) => {
                    same_mesh(crate::notation::sdy::parse_sdy(t, Some(m), dims)?, m)
                }
                (_, None) => Ok(parse_any(t, Some(n), Some(m), dims)?.1),
                (_, Some(r)) => {
                    let s = parse_any(t, Some(n), Some(base), dims)?.1;
                    let p = s.placement().map(<[u64]>::to_vec);
                    restate(&s, &r.mesh, &r.parts, p)
                }
            })
            .collect()
    };
    if let Ok(ss) = read_on(base, None, false) {
        return Ok((base.clone(), ss));
    }
    let r = prime_refinement(base)?;
    if let Ok(ss) = read_on(&r.mesh, Some(&r), false) {
        return coarsen(base, &r, &ss);
    }
    if let Ok(ss) = read_on(base, None, true) {
        return Ok((base.clone(), ss));
    }
    let ss = read_on(&r.mesh, Some(&r), true)?;
    coarsen(base, &r, &ss)
}

/// `s` where it is on `mesh`, else an error: a read that split mesh axes does not serve.
fn same_mesh((m, s): (Mesh, Sharding), mesh: &Mesh) -> Result<Sharding> {
    if m == *mesh {
        Ok(s)
    } else {
        Err(ShardError::Sharding(format!(
            "the sharding splits the mesh's axes into {}",
            m.names().join(",")
        )))
    }
}

/// The mesh that Shardy sub-axes among `texts` split `base` into (each text's sub-axes cutting the
/// mesh the previous left), with the parts of each base axis; `None` where no text splits an axis.
fn sdy_refinement(
    texts: &[(&str, Notation)],
    base: &Mesh,
    dims: &[u64],
) -> Result<Option<Refinement>> {
    let mut m = base.clone();
    for &(t, n) in texts {
        if n != Notation::Sdy {
            continue;
        }
        // A text with its own mesh is over device ids (read as HLO text is): not cut here.
        if let Ok((m2, _)) = crate::notation::sdy::parse_sdy(t, Some(&m), dims) {
            if m2.len() == m.len() && m2.devices() == m.devices() && m2.rank() > m.rank() {
                m = m2;
            }
        }
    }
    if m == *base {
        return Ok(None);
    }
    // Each base axis is the run of refined axes whose sizes multiply to it (splits are major first).
    let mut parts = Vec::new();
    let mut j = 0;
    for &size in base.sizes() {
        let mut p = Vec::new();
        let mut prod = 1u64;
        while prod < size && j < m.rank() {
            prod *= m.sizes()[j];
            p.push(j);
            j += 1;
        }
        while p.is_empty() && j < m.rank() && m.sizes()[j] == 1 {
            p.push(j);
            j += 1;
        }
        parts.push(p);
    }
    Ok(Some(Refinement { mesh: m, parts }))
}

/// Puts the first sharding's placement (if any) into the mesh's device order, so that it has none; the
/// others keep theirs (the mesh's old order where they had none). Not where a sharding has partial axes:
/// those keep the mesh's order.
pub(crate) fn rebase(mesh: Mesh, ss: Vec<Sharding>) -> Result<(Mesh, Vec<Sharding>)> {
    let Some(first) = ss.first().and_then(|s| s.placement()).map(<[u64]>::to_vec) else {
        return Ok((mesh, ss));
    };
    // Partial axes stay in the mesh's order (a placement would move their contributions).
    let partial = |s: &Sharding| {
        s.axis_use()
            .iter()
            .any(|u| matches!(u, AxisUse::Partial(_)))
    };
    if ss.iter().any(partial) {
        return Ok((mesh, ss));
    }
    let axes: Vec<(&str, u64)> = mesh
        .names()
        .iter()
        .map(String::as_str)
        .zip(mesh.sizes().iter().copied())
        .collect();
    let to = Mesh::with_devices(&axes, first)?.with_split_of(mesh.split_list());
    let parts: Vec<Vec<usize>> = (0..mesh.rank()).map(|a| vec![a]).collect();
    let out = ss
        .iter()
        .map(|s| restate(s, &to, &parts, Some(placement_of(s, &mesh))))
        .collect::<Result<_>>()?;
    Ok((to, out))
}
