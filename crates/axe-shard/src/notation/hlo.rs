//! XLA `HloSharding` text, printed as XLA prints it.
//!
//! Tile grid: one dim per tensor dim (the product of its mesh axes), then a `manual` subgroup dim and a
//! `replicated` subgroup dim where those axes exist. The devices are the mesh's devices transposed to
//! (each dim's axes in order, then the manual axes, then the replicated axes). With the default device
//! order that is an iota, printed canonically: size-1 dims dropped, runs of consecutive axes merged, and
//! `<=[N]` when no transpose remains (so `P('y','x')` on `x=2,y=4` is `{devices=[4,2]<=[2,4]T(1,0)}`).
//! Any device list that is a transposed iota prints in that canonical iota form (so
//! `{devices=[2,4]<=[2,2,2]T(1,2,0)}` reads back as `{devices=[2,4]<=[2,4]T(1,0)}`, as XLA prints it); other
//! lists print explicitly. (XLA keeps an explicit list that happens to be an iota explicit; the two texts
//! are the same sharding.) The devices of each replica group (the last tile-grid dim under
//! `last_tile_dim_replicate`) print in ascending order, as XLA sorts them. All-ones grids print
//! `{replicated}` (or `{manual}`); XLA keeps a one-device iota `{devices=[1,1]<=[1]}` tiled.
//!
//! Refused as XLA refuses them: an explicit tile assignment of one device (`{devices=[1]0}`: a non-maximal
//! sharding needs more than one device) and a transpose of a one-dim iota (`{devices=[4]<=[4]T(0)}`), both
//! by `axe-xla`'s reader (so `axe hlo shards` and HLO modules refuse them alike, at the same offset); and a
//! device id beyond the device count where there is one.

use crate::error::{Result, ShardError};
use crate::mesh::Mesh;
use crate::model::{AxisUse, ReduceOp, Sharding};
use crate::notation::iota::iota_text;

/// The XLA `HloSharding` text of `s` on `mesh`: axes partial under a sum are XLA's `unreduced`
/// subgroup (`{unreduced}` alone); partial values pending another op have no HloSharding form.
pub fn to_hlo(mesh: &Mesh, s: &Sharding) -> Result<String> {
    if let Some(d) = s.maximal_device() {
        return Ok(format!("{{maximal device={d}}}"));
    }
    s.require_rule(mesh, crate::model::Uneven::Xla, "hlo")?;
    let mut perm: Vec<usize> = Vec::new();
    let mut tiles: Vec<u64> = Vec::new();
    for (d, axes) in s.dim_axes().iter().enumerate() {
        perm.extend(axes);
        tiles.push(s.shards_of(mesh, d));
    }
    let mut manual = Vec::new();
    let mut unreduced = Vec::new();
    let mut replicated = Vec::new();
    for (a, u) in s.unsplit_axes() {
        match u {
            AxisUse::Manual => manual.push(a),
            AxisUse::Replicated => replicated.push(a),
            AxisUse::Partial(ReduceOp::Sum) => unreduced.push(a),
            AxisUse::Partial(op) => {
                return Err(ShardError::Inexpressible {
                    notation: "hlo",
                    why: format!(
                    "mesh axis {:?} holds partial values pending {} (XLA's unreduced pends a sum)",
                    mesh.names()[a],
                    op.name()
                ),
                })
            }
            AxisUse::Split(_) => {}
        }
    }
    let size = |axes: &[usize]| -> u64 { axes.iter().map(|&a| mesh.sizes()[a]).product() };
    let (m, u, r) = (size(&manual), size(&unreduced), size(&replicated));
    if tiles.iter().all(|&t| t == 1) {
        // (A manual axis of one device is still manual: `{devices=[1,1]<=[1] last_tile_dims={manual}}`
        // is `{manual}` in XLA; so for unreduced.)
        if !manual.is_empty() && u == 1 && r == 1 {
            return Ok("{manual}".to_string());
        }
        if !unreduced.is_empty() && m == 1 && r == 1 {
            return Ok("{unreduced}".to_string());
        }
        if m == 1 && u == 1 {
            return Ok("{replicated}".to_string());
        }
    }
    // XLA orders subgroup dims manual, unreduced, replicated.
    perm.extend(&manual);
    perm.extend(&unreduced);
    perm.extend(&replicated);
    let mut kinds = Vec::new();
    if m > 1 {
        tiles.push(m);
        kinds.push("manual");
    }
    if u > 1 {
        tiles.push(u);
        kinds.push("unreduced");
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
    let mut list = transposed(mesh, s, &perm);
    if r > 1 {
        // XLA sorts the devices of each replica group (the last tile-grid dim).
        for group in list.chunks_mut(r as usize) {
            group.sort_unstable();
        }
    }
    let devices = iota_text(&list).unwrap_or_else(|| join(&list));
    Ok(format!("{{devices=[{grid}]{devices}{suffix}}}"))
}

/// The device ids of `s` read with the mesh axes in `perm` order (row-major): the tile assignment. Each
/// mesh position's device is the one the sharding places there.
fn transposed(mesh: &Mesh, s: &Sharding, perm: &[usize]) -> Vec<u64> {
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
        out.push(s.device_at(mesh, pos));
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

/// Reads HloSharding text for an array of `dims` onto a mesh of its own: one axis per tile-grid dim
/// (`t0`, `t1`, ...) holding the listed devices. `devices` is the device count where the text does not fix
/// it (`{replicated}`, `{manual}`, `{maximal device=N}`; default 1, or N+1 for maximal) and is checked
/// against it otherwise.
pub fn parse_hlo(text: &str, dims: &[u64], devices: Option<u64>) -> Result<(Mesh, Sharding)> {
    use axe_xla::hlo::sharding::Sharding as Hlo;
    let bad = |msg: String| ShardError::Sharding(format!("{msg} in {}", super::quoted(text)));
    let parsed = axe_xla::hlo::sharding::parse_sharding(text).map_err(|e| match e {
        // The reader's own location, shown once.
        axe_xla::XlaError::Parse(p) => ShardError::Parse {
            msg: p.message,
            text: text.to_string(),
            offset: p.offset,
        },
        e => ShardError::Parse {
            msg: e.to_string(),
            text: text.to_string(),
            offset: 0,
        },
    })?;
    let flat = |n: u64, name: &str| Mesh::new(&[(name, n)]);
    match parsed {
        Hlo::Replicated { .. } => {
            let mesh = flat(devices.unwrap_or(1), "r")?;
            let s = Sharding::replicated(&mesh, dims.to_vec());
            Ok((mesh, s))
        }
        Hlo::Manual { .. } => {
            let mesh = flat(devices.unwrap_or(1), "m")?;
            let s = Sharding::new(
                &mesh,
                dims.to_vec(),
                vec![Vec::new(); dims.len()],
                &[(0, AxisUse::Manual)],
            )?;
            Ok((mesh, s))
        }
        // XLA's unreduced: partial values pending a sum (JAX's `P(..., unreduced={...})`).
        Hlo::Unreduced { .. } => {
            let mesh = flat(devices.unwrap_or(1), "u")?;
            let s = Sharding::new(
                &mesh,
                dims.to_vec(),
                vec![Vec::new(); dims.len()],
                &[(0, AxisUse::Partial(ReduceOp::Sum))],
            )?;
            Ok((mesh, s))
        }
        Hlo::Unknown { .. } => Err(bad(
            "{unknown} leaves the sharding to the partitioner, so it names no devices and no parts"
                .into(),
        )),
        Hlo::Maximal { device, .. } => {
            let device =
                u64::try_from(device).map_err(|_| bad(format!("negative device {device}")))?;
            let n = devices.unwrap_or(device.saturating_add(1));
            let mesh = flat(n, "r")?;
            let s = Sharding::maximal(&mesh, dims.to_vec(), device)?;
            Ok((mesh, s))
        }
        Hlo::Tuple(_) => Err(bad(
            "a tuple sharding has one sharding per element; read each".into(),
        )),
        Hlo::Tiled {
            tile_assignment,
            last_tile_dim_replicate,
            last_tile_dims,
            ..
        } => {
            let grid: Vec<u64> = tile_assignment
                .dims()
                .iter()
                .map(|&g| u64::try_from(g).ok().filter(|&g| g >= 1))
                .collect::<Option<_>>()
                .ok_or_else(|| bad("a tile-grid dim below 1".into()))?;
            crate::mesh::count(grid.iter().copied())?;
            let kinds: Vec<&str> = if last_tile_dim_replicate {
                vec!["replicated"]
            } else {
                last_tile_dims.iter().map(String::as_str).collect()
            };
            if grid.len() != dims.len() + kinds.len() {
                return Err(bad(format!(
                    "a tile grid of {} dims for an array of {} dims{}",
                    grid.len(),
                    dims.len(),
                    if kinds.is_empty() {
                        String::new()
                    } else {
                        format!(" and {} subgroup dims", kinds.len())
                    }
                )));
            }
            let ids: Vec<u64> = tile_assignment
                .devices()
                .map_err(|e| bad(e.to_string()))?
                .into_iter()
                .map(|d| u64::try_from(d).map_err(|_| bad(format!("negative device {d}"))))
                .collect::<Result<_>>()?;
            if let Some(n) = devices.filter(|&n| n != ids.len() as u64) {
                return Err(bad(format!("{} devices for a mesh of {n}", ids.len())));
            }
            if let Some((&d, n)) =
                devices.and_then(|n| ids.iter().find(|&&d| d >= n).map(|d| (d, n)))
            {
                return Err(bad(format!(
                    "device id {d} is beyond the {n} devices (ids 0..{})",
                    n.saturating_sub(1)
                )));
            }
            let names: Vec<String> = (0..grid.len()).map(|i| format!("t{i}")).collect();
            let axes: Vec<(&str, u64)> = names
                .iter()
                .map(String::as_str)
                .zip(grid.iter().copied())
                .collect();
            let mesh = Mesh::with_devices(&axes, ids)?;
            let mut others = Vec::new();
            for (k, kind) in kinds.iter().enumerate() {
                let u = match *kind {
                    "replicated" => AxisUse::Replicated,
                    "manual" => AxisUse::Manual,
                    "unreduced" => AxisUse::Partial(ReduceOp::Sum),
                    other => {
                        let msg = format!(
                            "subgroup kind {other:?} is not supported (the kinds are manual, unreduced and replicated)"
                        );
                        // Shown at the kind, in the `last_tile_dims={...}` that names it.
                        let at = text
                            .find("last_tile_dims=")
                            .and_then(|p| text[p..].find(other).map(|q| p + q));
                        return Err(match at {
                            Some(offset) => ShardError::Parse {
                                msg,
                                text: text.to_string(),
                                offset,
                            },
                            None => bad(msg),
                        });
                    }
                };
                others.push((dims.len() + k, u));
            }
            let s = Sharding::new(
                &mesh,
                dims.to_vec(),
                (0..dims.len()).map(|d| vec![d]).collect(),
                &others,
            )?;
            Ok((mesh, s))
        }
    }
}

/// [`parse_hlo`] onto the mesh a reader meets when it gives none: the tile-grid dims of size 1 that split
/// a tensor dim or replicate are left out of the mesh, so that no notation names an axis of one device
/// (`{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}` is `P('t0')` on `t0=4,t2=2`, not
/// `P('t0', 't1')` on `t0=4,t1=1,t2=2`). The axes kept keep their names, `tK` for grid dim `K`; size-1
/// manual and unreduced subgroup dims are kept, as their use is part of the sharding. A grid of ones (one
/// device, `{devices=[1,1]<=[1]}`) reads as `{replicated}` does, on a mesh `r=1`.
///
/// Law: the mesh's device ids, in position order, are [`parse_hlo`]'s, and every device holds the same
/// region, with the same replica group, local and padded shape, as under [`parse_hlo`].
pub fn parse_hlo_own(text: &str, dims: &[u64], devices: Option<u64>) -> Result<(Mesh, Sharding)> {
    let (mesh, s) = parse_hlo(text, dims, devices)?;
    let uses = s.axis_use();
    let keep: Vec<usize> = (0..mesh.rank())
        .filter(|&a| {
            mesh.sizes()[a] > 1 || matches!(uses[a], AxisUse::Manual | AxisUse::Partial(_))
        })
        .collect();
    if keep.len() == mesh.rank() || s.maximal_device().is_some() {
        return Ok((mesh, s));
    }
    if keep.is_empty() {
        let one = Mesh::with_devices(&[("r", 1)], mesh.devices().to_vec())?;
        let t = Sharding::replicated(&one, dims.to_vec());
        return Ok((one, t));
    }
    let new_index = |a: usize| keep.iter().position(|&k| k == a);
    let axes: Vec<(&str, u64)> = keep
        .iter()
        .map(|&a| (mesh.names()[a].as_str(), mesh.sizes()[a]))
        .collect();
    // Axes of size 1 take no place in the row-major order: the ids stay where they were.
    let kept = Mesh::with_devices(&axes, mesh.devices().to_vec())?;
    let dim_axes: Vec<Vec<usize>> = s
        .dim_axes()
        .iter()
        .map(|axes| axes.iter().filter_map(|&a| new_index(a)).collect())
        .collect();
    let others: Vec<(usize, AxisUse)> = keep
        .iter()
        .enumerate()
        .filter(|(_, &a)| !matches!(uses[a], AxisUse::Split(_)))
        .map(|(k, &a)| (k, uses[a]))
        .collect();
    let t = Sharding::new(&kept, dims.to_vec(), dim_axes, &others)?.with_uneven(s.uneven());
    Ok((kept, t))
}

/// The tile assignment `h` (read by [`parse_hlo`] with the sharding `hs`, `data` array dims) with the
/// members of each replica group listed in `mesh`'s position order, where every subgroup dim is
/// replicated: the devices of a group hold the same data whatever order the text lists them in, so
/// `{devices=[2,2]1,2,0,3 last_tile_dim_replicate}` on a mesh `x=2,y=2` of devices `[2,0,1,3]` is
/// `P('y')` there. Otherwise (manual subgroups, whose order is a device's manual coordinate) `h` as it is.
fn replicas_in_mesh_order(h: Mesh, hs: &Sharding, mesh: &Mesh, data: usize) -> Result<Mesh> {
    let trailing = hs.axis_use().get(data..).unwrap_or(&[]);
    if trailing.is_empty() || trailing.iter().any(|u| *u != AxisUse::Replicated) {
        return Ok(h);
    }
    let group: u64 = h.sizes()[data..].iter().product();
    let pos: std::collections::HashMap<u64, usize> = mesh
        .devices()
        .iter()
        .enumerate()
        .map(|(p, &d)| (d, p))
        .collect();
    let mut ids = h.devices().to_vec();
    for members in ids.chunks_mut(usize::try_from(group).unwrap_or(usize::MAX).max(1)) {
        members.sort_by_key(|d| pos.get(d).copied().unwrap_or(usize::MAX));
    }
    let axes: Vec<(&str, u64)> = h
        .names()
        .iter()
        .map(String::as_str)
        .zip(h.sizes().iter().copied())
        .collect();
    Mesh::with_devices(&axes, ids)
}

/// Reads HloSharding text for an array of `dims` onto the caller's `mesh` (`--mesh x=2,y=4` with an HLO
/// sharding): the device ids of the text must be the mesh's, and each tile-grid dim must be a mixed-radix
/// combination of whole mesh axes (the device at every mesh position has, along each grid dim, the tile
/// index `Σ coordinate × weight` of that dim's axes), the device at mesh coordinate 0 holding tile 0.
///
/// This is the strict reading (whole mesh axes, the mesh's device order); [`crate::parse_any`] with a mesh
/// and [`crate::parse_pair`] read any tile assignment over the mesh's devices, splitting mesh axes or
/// giving the sharding a device placement of its own where this one refuses.
///
/// Errors: a device count that is not the mesh's, devices not in the mesh, and a tile assignment no
/// sharding on this mesh gives (a grid dim that splits a mesh axis, or devices out of mesh order), each
/// saying which.
pub fn parse_hlo_on(text: &str, mesh: &Mesh, dims: &[u64]) -> Result<Sharding> {
    let (h, hs) = parse_hlo(text, dims, None)?;
    if let Some(d) = hs.maximal_device() {
        return Sharding::maximal(mesh, dims.to_vec(), d);
    }
    let tiled = hs.dim_axes().iter().any(|a| !a.is_empty()) || h.len() > 1;
    if tiled && h.len() != mesh.len() {
        return Err(ShardError::Sharding(format!(
            "{} devices in {} for a mesh of {}",
            h.len(),
            super::quoted(text),
            mesh.len()
        )));
    }
    // A tile grid that splits no dim and whose every subgroup is manual is XLA's `{manual}`: XLA reads
    // `{devices=[1,2]1,0 last_tile_dims={manual}}` as `{manual}`, its device order saying nothing.
    let subgroups = &hs.axis_use()[dims.len().min(hs.axis_use().len())..];
    let fully_manual = h.sizes()[..dims.len().min(h.rank())]
        .iter()
        .all(|&s| s == 1)
        && !subgroups.is_empty()
        && subgroups.iter().all(|u| *u == AxisUse::Manual);
    if tiled && fully_manual {
        let mut theirs = h.devices().to_vec();
        let mut ours = mesh.devices().to_vec();
        theirs.sort_unstable();
        ours.sort_unstable();
        if theirs != ours {
            return Err(ShardError::Sharding(format!(
                "{} lists devices {} where the mesh has {}",
                super::quoted(text),
                super::ids_text(h.devices()),
                super::ids_text(mesh.devices())
            )));
        }
    }
    if !tiled || fully_manual {
        // {replicated} or {manual}: every mesh axis does what the text's one axis does.
        let u = if fully_manual {
            AxisUse::Manual
        } else {
            hs.axis_use()
                .first()
                .copied()
                .unwrap_or(AxisUse::Replicated)
        };
        let others: Vec<(usize, AxisUse)> = (0..mesh.rank()).map(|a| (a, u)).collect();
        return Sharding::new(mesh, dims.to_vec(), vec![Vec::new(); dims.len()], &others);
    }
    let not_on_mesh = |why: String| {
        ShardError::Sharding(format!(
            "{} is not a sharding on this mesh: {why}",
            super::quoted(text)
        ))
    };
    let h = replicas_in_mesh_order(h, &hs, mesh, dims.len())?;
    let h_pos: std::collections::HashMap<u64, usize> = h
        .devices()
        .iter()
        .enumerate()
        .map(|(p, &d)| (d, p))
        .collect();
    let tile = |p: usize| -> Result<Vec<u64>> {
        let id = mesh.devices()[p];
        h_pos
            .get(&id)
            .map(|&hp| h.coords(hp))
            .ok_or_else(|| not_on_mesh(format!("device {id} of the mesh is not in it")))
    };
    let origin = tile(0)?;
    if origin.iter().any(|&c| c != 0) {
        return Err(not_on_mesh(format!(
            "the mesh's first device holds tile {origin:?}, not the first tile"
        )));
    }
    // Each mesh axis of size > 1 steps exactly one grid dim by its weight.
    let mut stride = vec![1usize; mesh.rank()];
    for a in (0..mesh.rank().saturating_sub(1)).rev() {
        stride[a] = stride[a + 1] * mesh.sizes()[a + 1] as usize;
    }
    let mut of_axis: Vec<Option<(usize, u64)>> = vec![None; mesh.rank()];
    for a in 0..mesh.rank() {
        if mesh.sizes()[a] == 1 {
            continue;
        }
        let t = tile(stride[a])?;
        let moved: Vec<usize> = (0..t.len()).filter(|&i| t[i] != 0).collect();
        match moved.as_slice() {
            [i] => of_axis[a] = Some((*i, t[*i])),
            _ => {
                return Err(not_on_mesh(format!(
                    "a step along mesh axis {:?} moves tile grid dims {moved:?}, not one",
                    mesh.names()[a]
                )))
            }
        }
    }
    // Per grid dim, its axes by weight, major first; the weights must be mixed radix.
    let grid = h.sizes();
    let mut axes_of: Vec<Vec<usize>> = vec![Vec::new(); grid.len()];
    for (a, o) in of_axis.iter().enumerate() {
        if let Some((i, _)) = o {
            axes_of[*i].push(a);
        }
    }
    for (i, axes) in axes_of.iter_mut().enumerate() {
        axes.sort_by_key(|&a| std::cmp::Reverse(of_axis[a].map_or(0, |x| x.1)));
        // A manual subgroup's index is each device's manual coordinate, its axes major first: over
        // whole mesh axes only in the mesh's order (a sharding keeps its axes' uses, not their order).
        let manual = i >= dims.len() && hs.axis_use().get(i) == Some(&AxisUse::Manual);
        if manual && axes.windows(2).any(|w| w[0] > w[1]) {
            return Err(not_on_mesh(format!(
                "manual subgroup dim {i} steps mesh axes {axes:?}, out of the mesh's order"
            )));
        }
        let mut w = 1u64;
        for &a in axes.iter().rev() {
            if of_axis[a].map(|x| x.1) != Some(w) {
                return Err(not_on_mesh(format!(
                    "tile grid dim {i} is not a mixed-radix combination of whole mesh axes"
                )));
            }
            w = w.saturating_mul(mesh.sizes()[a]);
        }
        if w != grid[i] {
            return Err(not_on_mesh(format!(
                "tile grid dim {i} of {} is not a product of whole mesh axes",
                grid[i]
            )));
        }
    }
    for p in 0..mesh.len() {
        let c = mesh.coords(p);
        let t = tile(p)?;
        for (i, axes) in axes_of.iter().enumerate() {
            let want = axes.iter().fold(0u64, |x, &a| x * mesh.sizes()[a] + c[a]);
            if t[i] != want {
                return Err(not_on_mesh(format!(
                    "device {} holds tile {t:?}, not the one its mesh position gives",
                    mesh.devices()[p]
                )));
            }
        }
    }
    let dim_axes: Vec<Vec<usize>> = axes_of[..dims.len()].to_vec();
    let mut others = Vec::new();
    for (i, axes) in axes_of.iter().enumerate().skip(dims.len()) {
        let u = hs.axis_use()[i];
        others.extend(axes.iter().map(|&a| (a, u)));
    }
    Sharding::new(mesh, dims.to_vec(), dim_axes, &others)
}
