//! Shardings as Axe layouts, and Axe layouts back to shardings.
//!
//! A sharded array is one Axe layout over device axes and memory: per tensor dim, the iters of the mesh
//! axes splitting it (major first, extent the axis size, stride 1 on the device axis `gpu_<name>` of mesh
//! axis `<name>`), then the iters of the dim's local extent in the per-device memory layout (row-major on
//! `m` unless one is given); the replicated mesh axes are replica iters `R[n:1@gpu_<name>]`; a maximal
//! sharding is the memory layout offset to its device's mesh coordinates. The paper's 2×2 mesh examples,
//! 64×128 on `x=2,y=2`:
//!
//! - fully sharded `P('x','y')`: `S[(2,32,2,64):(1@gpu_x,64,1@gpu_y,1)]`;
//! - shard + replicate `P('x')`: `S[(2,64,128):(1@gpu_x,128,1)] + R[2:1@gpu_y]`.
//!
//! Back: any axis other than the memory axes is a device axis if its name starts with `gpu` or names a
//! device ([`axe_layout::AxisKind::Device`]). Each device axis's iters (shard and replica) must tile its
//! coordinates `0..N` in mixed radix, each iter then being one mesh axis (so the paper's single-axis form
//! `S[(2,32,2,64):(2@gpuid,64,1@gpuid,1)]` is a 2×2 mesh too); in each dim, the device iters must come
//! before the memory iters. Anything else (a device axis split with gaps or overlaps, a device iter minor
//! to memory within a dim, replication in memory, an offset on a device axis of a sharded layout) has no
//! sharding form and is an error saying why.

use axe_layout::{Axis, AxisKind, Coord, Iter, Layout};

use crate::error::{list_text, names_text, Result, ShardError};
use crate::mesh::Mesh;
use crate::model::{AxisUse, Sharding};

/// The prefix of the device axis of a mesh axis: mesh axis `x` is device axis `gpu_x`.
pub const DEVICE_AXIS_PREFIX: &str = "gpu_";

/// A sharding read from an Axe layout: the mesh, the sharding on it, and the per-device memory layout
/// (of the local shape, on the memory axes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxeSharding {
    /// The mesh (the caller's, or one axis per device iter).
    pub mesh: Mesh,
    /// The sharding.
    pub sharding: Sharding,
    /// Each device's memory layout of its local shape.
    pub local: Layout,
}

fn inexpressible(why: String) -> ShardError {
    ShardError::Inexpressible {
        notation: "axe",
        why,
    }
}

fn layout_err(e: axe_layout::LayoutError) -> ShardError {
    ShardError::Sharding(format!("axe layout: {e}"))
}

/// The device axis of mesh axis `name`.
pub fn device_axis(name: &str) -> Result<Axis> {
    Axis::new(&format!("{DEVICE_AXIS_PREFIX}{name}")).map_err(layout_err)
}

/// Whether `axis` is a device axis (see the module doc).
pub fn is_device_axis(axis: &Axis) -> bool {
    !axis.is_memory() && (axis.name().starts_with("gpu") || axis.kind() == AxisKind::Device)
}

/// The Axe layout of `s` on `mesh`, each device storing its local shape in `local` (a layout of the local
/// shape on memory axes; row-major on `m` when `None`).
///
/// Law: for every element `e` of the array, the device coordinates of `L(e)` are exactly the mesh
/// coordinates of the devices whose region ([`Sharding::regions`]) holds `e`, and the memory part is
/// `local` at `e`'s index within the device's region.
///
/// Inexpressible: a sharding with a device placement of its own ([`Sharding::with_placement`]: its device
/// axes would not be strided), `Partial` or `Manual` mesh axes, dims that do not divide evenly into their shards (the
/// Axe form has no padding), zero-size dims.
///
/// ```
/// use axe_shard::{axe::to_axe, notation::jax::parse_jax, Mesh};
/// let mesh = Mesh::new(&[("x", 2), ("y", 2)])?;
/// let s = parse_jax("P('x')", &mesh, &[64, 128])?;
/// assert_eq!(
///     to_axe(&mesh, &s, None)?.to_string(),
///     "S[(2,32,128):(1@gpu_x,128,1)] + R[2:1@gpu_y]"
/// );
/// # Ok::<(), axe_shard::ShardError>(())
/// ```
pub fn to_axe(mesh: &Mesh, s: &Sharding, local: Option<&Layout>) -> Result<Layout> {
    s.require_mesh_order("axe")?;
    let mut local_shape = Vec::with_capacity(s.dims().len());
    for (d, &len) in s.dims().iter().enumerate() {
        let n = if s.maximal_device().is_some() {
            1
        } else {
            s.shards_of(mesh, d)
        };
        if len == 0 {
            return Err(inexpressible(format!("dim {d} has size 0")));
        }
        if len % n != 0 {
            return Err(inexpressible(format!(
                "dim {d} of {len} does not split evenly into {n} shards (the Axe form has no padding)"
            )));
        }
        local_shape.push(len / n);
    }
    let row_major;
    let local = match local {
        Some(l) => l,
        None => {
            row_major = Layout::row_major(&local_shape).map_err(layout_err)?;
            &row_major
        }
    };
    if let Some(a) = local.axes().iter().find(|a| is_device_axis(a)) {
        return Err(ShardError::Sharding(format!(
            "the per-device layout uses device axis {a}"
        )));
    }
    let g = local.group(&local_shape).map_err(|e| {
        ShardError::Sharding(format!(
            "the per-device layout does not fit the local shape {}: {e}",
            list_text(&local_shape)
        ))
    })?;
    let mut shard = Vec::new();
    let mut replica: Vec<Iter> = g.layout.replica().to_vec();
    let mut offset = g.layout.offset().clone();
    if let Some(dev) = s.maximal_device() {
        let pos = mesh
            .devices()
            .iter()
            .position(|&d| d == dev)
            .ok_or_else(|| ShardError::Sharding(format!("device {dev} is not in the mesh")))?;
        for (a, &c) in mesh.coords(pos).iter().enumerate() {
            if c > 0 {
                let v = i64::try_from(c).map_err(|_| ShardError::Mesh("coordinate".into()))?;
                offset = offset
                    .checked_add(&Coord::on(device_axis(&mesh.names()[a])?, v))
                    .map_err(layout_err)?;
            }
        }
        shard.extend(g.layout.shard().iter().cloned());
    } else {
        for d in 0..s.dims().len() {
            for &a in &s.dim_axes()[d] {
                if mesh.sizes()[a] > 1 {
                    shard.push(device_iter(mesh, a)?);
                }
            }
            shard.extend(g.block(d).iter().cloned());
        }
        for (a, u) in s.unsplit_axes() {
            match u {
                AxisUse::Replicated if mesh.sizes()[a] > 1 => replica.push(device_iter(mesh, a)?),
                AxisUse::Replicated | AxisUse::Split(_) => {}
                AxisUse::Manual | AxisUse::Partial(_) => {
                    return Err(inexpressible(format!(
                        "mesh axis {:?} is manual or partial",
                        mesh.names()[a]
                    )))
                }
            }
        }
    }
    Layout::new(shard, replica, offset).map_err(layout_err)
}

fn device_iter(mesh: &Mesh, a: usize) -> Result<Iter> {
    Iter::new(mesh.sizes()[a], 1, device_axis(&mesh.names()[a])?).map_err(layout_err)
}

/// One mesh axis found in a layout: the device axis, and the iter's extent and stride on it.
#[derive(Clone, Debug)]
struct Sub {
    axis: Axis,
    extent: u64,
    stride: i64,
}

/// Reads an Axe layout of an array of `dims` as a sharding. With `mesh`, the layout's mesh axes are matched
/// to it by name (device axis `gpu_<name>` is mesh axis `<name>`; mesh axes the layout does not use must
/// have size 1), else, when none of the layout's device axes names a mesh axis, by position when the
/// sizes agree (a layout naming some mesh axes and not others is refused: a misspelt axis); without,
/// the mesh has one axis per device iter, device axes in name order, each axis's iters major (largest
/// stride) first.
///
/// Law: [`to_axe`] of the result (with the returned local layout) has the same map as `layout`, and the
/// devices holding each element are those of `L(e)`'s device coordinates.
pub fn from_axe(layout: &Layout, dims: &[u64], mesh: Option<&Mesh>) -> Result<AxeSharding> {
    let g = layout.group(dims).map_err(|e| {
        ShardError::Sharding(format!(
            "the layout does not fit the array {}: {e}",
            list_text(dims)
        ))
    })?;
    let mut subs: Vec<Sub> = Vec::new();
    // Per dim, the indices into `subs` of its device iters, major first.
    let mut dim_subs: Vec<Vec<usize>> = vec![Vec::new(); dims.len()];
    let mut mem_shard: Vec<Iter> = Vec::new();
    for (d, ds) in dim_subs.iter_mut().enumerate() {
        let mut seen_memory = false;
        for it in g.block(d) {
            if is_device_axis(it.axis()) {
                if seen_memory {
                    return Err(inexpressible(format!(
                        "in dim {d}, device iter {it} is minor to memory iters: a cyclic distribution no \
                         sharding notation has"
                    )));
                }
                ds.push(subs.len());
                subs.push(Sub {
                    axis: *it.axis(),
                    extent: it.extent(),
                    stride: it.stride(),
                });
            } else {
                seen_memory = true;
                mem_shard.push(*it);
            }
        }
    }
    let mut replicated: Vec<usize> = Vec::new();
    for it in layout.replica() {
        if it.extent() == 1 || it.stride() == 0 {
            continue;
        }
        if !is_device_axis(it.axis()) {
            return Err(inexpressible(format!(
                "replica iter {it} replicates within memory, not across devices"
            )));
        }
        replicated.push(subs.len());
        subs.push(Sub {
            axis: *it.axis(),
            extent: it.extent(),
            stride: it.stride(),
        });
    }
    let mut dev_offset: Vec<(Axis, i64)> = Vec::new();
    let mut mem_offset = Coord::zero();
    for (a, v) in layout.offset().components() {
        if is_device_axis(a) {
            if v != 0 {
                dev_offset.push((*a, v));
            }
        } else {
            mem_offset = mem_offset
                .checked_add(&Coord::on(*a, v))
                .map_err(layout_err)?;
        }
    }
    let local = Layout::new(mem_shard, Vec::new(), mem_offset).map_err(layout_err)?;
    if subs.is_empty() {
        return maximal(dims, &dev_offset, mesh, local);
    }
    if let Some((a, v)) = dev_offset.first() {
        return Err(inexpressible(format!(
            "offset {v}@{a} shifts the devices of a sharded layout"
        )));
    }
    // Per device axis, its iters must tile 0..N in mixed radix; each becomes a mesh axis.
    let mut axes: Vec<Axis> = subs.iter().map(|s| s.axis).collect();
    axes.sort();
    axes.dedup();
    let mut order: Vec<usize> = Vec::new(); // mesh axis k is subs[order[k]]
    let mut names: Vec<String> = Vec::new();
    // Per mesh axis, the device axis it is a piece of where that axis has several iters.
    let mut split_of: Vec<Option<String>> = Vec::new();
    for ax in &axes {
        let mut mine: Vec<usize> = (0..subs.len()).filter(|&i| subs[i].axis == *ax).collect();
        mine.sort_by_key(|&i| std::cmp::Reverse(subs[i].stride));
        let mut expect: i64 = 1;
        for &i in mine.iter().rev() {
            if subs[i].stride != expect {
                let got: Vec<String> = mine
                    .iter()
                    .map(|&i| format!("{}:{}", subs[i].extent, subs[i].stride))
                    .collect();
                return Err(inexpressible(format!(
                    "device axis {ax} is split oddly: its iters ({}) do not tile its devices 0..N once \
                     each (expected stride {expect})",
                    got.join(", ")
                )));
            }
            expect = i64::try_from(subs[i].extent)
                .ok()
                .and_then(|e| expect.checked_mul(e))
                .ok_or_else(|| ShardError::Mesh(format!("device axis {ax} overflows")))?;
        }
        let base = ax
            .name()
            .strip_prefix(DEVICE_AXIS_PREFIX)
            .filter(|b| !b.is_empty())
            .unwrap_or(ax.name());
        for (k, &i) in mine.iter().enumerate() {
            order.push(i);
            split_of.push((mine.len() > 1).then(|| base.to_string()));
            names.push(if mine.len() == 1 {
                base.to_string()
            } else {
                format!("{base}_{k}")
            });
        }
    }
    let sizes: Vec<u64> = order.iter().map(|&i| subs[i].extent).collect();
    let own_axes: Vec<(&str, u64)> = names
        .iter()
        .map(String::as_str)
        .zip(sizes.iter().copied())
        .collect();
    // mesh_of[k]: the index of derived mesh axis k in the result's mesh.
    let (mesh, mesh_of): (Mesh, Vec<usize>) = match mesh {
        None => (
            Mesh::new(&own_axes)?.with_split_of(split_of),
            (0..names.len()).collect(),
        ),
        Some(m) => (m.clone(), match_mesh(m, &names, &sizes)?),
    };
    let sub_to_mesh = |i: usize| -> usize {
        let k = order.iter().position(|&o| o == i).unwrap_or(0);
        mesh_of[k]
    };
    let dim_axes: Vec<Vec<usize>> = dim_subs
        .iter()
        .map(|v| v.iter().map(|&i| sub_to_mesh(i)).collect())
        .collect();
    let sharding = Sharding::new(&mesh, dims.to_vec(), dim_axes, &[])?;
    Ok(AxeSharding {
        mesh,
        sharding,
        local,
    })
}

/// Where the layout's mesh axes (`names`, `sizes`) sit in the caller's `mesh`.
fn match_mesh(mesh: &Mesh, names: &[String], sizes: &[u64]) -> Result<Vec<usize>> {
    let found: Vec<Option<usize>> = names.iter().map(|n| mesh.axis(n).ok()).collect();
    let unknown: Vec<&String> = names
        .iter()
        .zip(&found)
        .filter_map(|(n, f)| f.is_none().then_some(n))
        .collect();
    // Some names are the mesh's and some not: a misspelt axis, which matching by position would
    // silently give another axis's devices.
    if !unknown.is_empty() && unknown.len() < names.len() {
        return Err(ShardError::Sharding(format!(
            "no mesh axis is named {} (the mesh's axes are {}), though the layout's other device \
             axes ({}) name mesh axes: name each device axis gpu_<mesh axis>, or none of them (to \
             match by position)",
            names_text(&unknown),
            names_text(mesh.names()),
            names_text(
                &names
                    .iter()
                    .filter(|n| !unknown.contains(n))
                    .collect::<Vec<_>>()
            )
        )));
    }
    let by_name: Option<Vec<usize>> = found.into_iter().collect();
    let pos = match by_name {
        Some(p) => p,
        None if mesh
            .sizes()
            .iter()
            .copied()
            .filter(|&s| s > 1)
            .eq(sizes.iter().copied()) =>
        {
            (0..mesh.rank()).filter(|&a| mesh.sizes()[a] > 1).collect()
        }
        None => {
            return Err(ShardError::Sharding(format!(
                "the layout's device axes {} of sizes {} are not the mesh's {} of sizes {}",
                names_text(names),
                list_text(sizes),
                names_text(mesh.names()),
                list_text(mesh.sizes())
            )))
        }
    };
    for (k, &a) in pos.iter().enumerate() {
        if mesh.sizes()[a] != sizes[k] {
            return Err(ShardError::Sharding(format!(
                "the layout gives mesh axis {:?} {} devices, the mesh {}",
                mesh.names()[a],
                sizes[k],
                mesh.sizes()[a]
            )));
        }
    }
    if let Some(a) = (0..mesh.rank()).find(|&a| mesh.sizes()[a] > 1 && !pos.contains(&a)) {
        return Err(ShardError::Sharding(format!(
            "mesh axis {:?} ({} devices) is not in the layout: its devices off coordinate 0 would hold nothing",
            mesh.names()[a],
            mesh.sizes()[a]
        )));
    }
    Ok(pos)
}

/// A layout without device iters: one device, at the offset's device coordinates, holds everything.
fn maximal(
    dims: &[u64],
    offset: &[(Axis, i64)],
    mesh: Option<&Mesh>,
    local: Layout,
) -> Result<AxeSharding> {
    let name_of = |a: &Axis| -> String {
        a.name()
            .strip_prefix(DEVICE_AXIS_PREFIX)
            .filter(|b| !b.is_empty())
            .unwrap_or(a.name())
            .to_string()
    };
    let coord = |v: i64, a: &Axis| {
        u64::try_from(v).map_err(|_| inexpressible(format!("negative device offset {v}@{a}")))
    };
    let mesh = match mesh {
        Some(m) if m.len() == 1 && offset.is_empty() => {
            let sharding = Sharding::replicated(m, dims.to_vec());
            return Ok(AxeSharding {
                mesh: m.clone(),
                sharding,
                local,
            });
        }
        Some(m) => m.clone(),
        None if offset.is_empty() => {
            let m = Mesh::new(&[("gpu", 1)])?;
            let sharding = Sharding::replicated(&m, dims.to_vec());
            return Ok(AxeSharding {
                mesh: m,
                sharding,
                local,
            });
        }
        None => {
            let names: Vec<String> = offset.iter().map(|(a, _)| name_of(a)).collect();
            let sizes: Vec<u64> = offset
                .iter()
                .map(|(a, v)| coord(*v, a).map(|c| c.saturating_add(1)))
                .collect::<Result<_>>()?;
            let axes: Vec<(&str, u64)> = names.iter().map(String::as_str).zip(sizes).collect();
            Mesh::new(&axes)?
        }
    };
    let mut pos: u64 = 0;
    let mut c = vec![0u64; mesh.rank()];
    for (a, v) in offset {
        let k = mesh.axis(&name_of(a))?;
        c[k] = coord(*v, a)?;
        if c[k] >= mesh.sizes()[k] {
            return Err(ShardError::Sharding(format!(
                "device offset {v}@{a} is outside the mesh"
            )));
        }
    }
    for (k, &x) in c.iter().enumerate() {
        pos = pos * mesh.sizes()[k] + x;
    }
    let device = mesh.devices()[pos as usize];
    let sharding = Sharding::maximal(&mesh, dims.to_vec(), device)?;
    Ok(AxeSharding {
        mesh,
        sharding,
        local,
    })
}
