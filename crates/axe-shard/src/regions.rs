//! Who holds what: per device, its region of the global array, its replica group and its local shape.

use std::collections::HashMap;
use std::ops::Range;

use crate::error::{Result, ShardError};
use crate::mesh::Mesh;
use crate::model::{AxisUse, Sharding, Uneven};

/// One device's part of the array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceRegion {
    /// The device id.
    pub device: u64,
    /// Its mesh position (row-major index).
    pub position: usize,
    /// The index range held along each tensor dim (empty ranges: the device holds nothing).
    pub region: Vec<Range<u64>>,
    /// The devices holding the same data (this one included), ascending by mesh position.
    /// (Shared among the group's members: a mesh of `N` replicas holds one list, not `N`.)
    pub replica_group: std::sync::Arc<[u64]>,
    /// The extents of `region`.
    pub local_shape: Vec<u64>,
    /// The shape the device allocates: under [`Uneven::Xla`] every shard is `ceil(D/n)` long, the
    /// difference from `local_shape` being padding; under [`Uneven::TorchChunk`] equal to `local_shape`.
    pub padded_shape: Vec<u64>,
}

/// Shard `i` of `n` of `0..len` under XLA's rule: `ceil(len/n)` each, trailing shards short or empty.
pub fn split_range(len: u64, n: u64, i: u64) -> Range<u64> {
    let chunk = len.div_ceil(n.max(1));
    let start = i.saturating_mul(chunk).min(len);
    let end = i.saturating_add(1).saturating_mul(chunk).min(len);
    start..end
}

impl Sharding {
    /// Per device of `mesh` (in mesh-position order), what it holds: the region of the mesh position it
    /// plays (its own, or the one the sharding's device placement gives it).
    pub fn regions(&self, mesh: &Mesh) -> Result<Vec<DeviceRegion>> {
        if self.axis_use().len() != mesh.rank() {
            return Err(ShardError::Sharding(format!(
                "the sharding is for a mesh of {} axes, not {}",
                self.axis_use().len(),
                mesh.rank()
            )));
        }
        let full: Vec<Range<u64>> = self.dims().iter().map(|&d| 0..d).collect();
        if let Some(dev) = self.maximal_device() {
            return Ok((0..mesh.len())
                .map(|p| {
                    let device = mesh.devices()[p];
                    let region = if device == dev {
                        full.clone()
                    } else {
                        self.dims().iter().map(|_| 0..0).collect()
                    };
                    let local_shape: Vec<u64> = region.iter().map(|r| r.end - r.start).collect();
                    DeviceRegion {
                        device,
                        position: p,
                        region,
                        replica_group: std::sync::Arc::from([device]),
                        padded_shape: local_shape.clone(),
                        local_shape,
                    }
                })
                .collect());
        }
        // Each device's coordinates are those of the position it plays (its placement, if any).
        let played = self.played_positions(mesh);
        // Replica groups: devices that differ only along replicated axes.
        let mut groups: HashMap<Vec<u64>, Vec<u64>> = HashMap::new();
        let keys: Vec<Vec<u64>> = (0..mesh.len())
            .map(|p| {
                let c = mesh.coords(played[p]);
                c.iter()
                    .zip(self.axis_use())
                    .map(|(&x, u)| if *u == AxisUse::Replicated { 0 } else { x })
                    .collect()
            })
            .collect();
        for (p, k) in keys.iter().enumerate() {
            groups.entry(k.clone()).or_default().push(mesh.devices()[p]);
        }
        let groups: HashMap<Vec<u64>, std::sync::Arc<[u64]>> = groups
            .into_iter()
            .map(|(k, v)| (k, std::sync::Arc::from(v)))
            .collect();
        Ok((0..mesh.len())
            .map(|p| {
                let c = mesh.coords(played[p]);
                let mut region = Vec::with_capacity(self.dims().len());
                let mut padded = Vec::with_capacity(self.dims().len());
                for (d, &len) in self.dims().iter().enumerate() {
                    let axes = &self.dim_axes()[d];
                    match self.uneven() {
                        Uneven::Xla => {
                            let mut i = 0u64;
                            let mut n = 1u64;
                            for &a in axes {
                                i = i * mesh.sizes()[a] + c[a];
                                n *= mesh.sizes()[a];
                            }
                            region.push(split_range(len, n, i));
                            padded.push(len.div_ceil(n));
                        }
                        Uneven::TorchChunk => {
                            let mut r = 0..len;
                            for &a in axes {
                                let sub = split_range(r.end - r.start, mesh.sizes()[a], c[a]);
                                r = r.start + sub.start..r.start + sub.end;
                            }
                            padded.push(r.end - r.start);
                            region.push(r);
                        }
                    }
                }
                DeviceRegion {
                    device: mesh.devices()[p],
                    position: p,
                    local_shape: region.iter().map(|r| r.end - r.start).collect(),
                    region,
                    replica_group: groups
                        .get(&keys[p])
                        .cloned()
                        .unwrap_or_else(|| std::sync::Arc::from([])),
                    padded_shape: padded,
                }
            })
            .collect())
    }
}

impl Sharding {
    /// The first tensor dim whose shards differ between the two uneven rules ([`Uneven::Xla`] and
    /// [`Uneven::TorchChunk`]) on `mesh`, if any: a notation bound to one rule cannot express this
    /// sharding under the other.
    pub fn rules_differ(&self, mesh: &Mesh) -> Option<usize> {
        if self.maximal_device().is_some() {
            return None;
        }
        (0..self.dims().len()).find(|&d| {
            let sizes: Vec<u64> = self.dim_axes()[d]
                .iter()
                .map(|&a| mesh.sizes().get(a).copied().unwrap_or(1))
                .collect();
            sizes.len() > 1
                && crate::planner::dim_intervals(self.dims()[d], &sizes, Uneven::Xla)
                    != crate::planner::dim_intervals(self.dims()[d], &sizes, Uneven::TorchChunk)
        })
    }

    /// [`ShardError::Inexpressible`] for `notation` when the sharding's uneven rule is not `rule` and the
    /// rules give different shards.
    pub(crate) fn require_rule(
        &self,
        mesh: &Mesh,
        rule: Uneven,
        notation: &'static str,
    ) -> Result<()> {
        if self.uneven() == rule {
            return Ok(());
        }
        match self.rules_differ(mesh) {
            Some(d) => Err(ShardError::Inexpressible {
                notation,
                why: format!(
                    "dim {d} of {} is cut by {}, which {notation} does not use",
                    self.dims()[d],
                    match self.uneven() {
                        Uneven::Xla => "XLA's rule (ceil(D/n) per shard)",
                        Uneven::TorchChunk => "DTensor's torch.chunk per mesh axis",
                    }
                ),
            }),
            None => Ok(()),
        }
    }
}

/// One device's part of the array without its replica group's members: the group is named by its
/// index ([`RegionView::group_members`] lists it). O(dims + mesh axes) to build, whatever the mesh size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevicePlace {
    /// The device id.
    pub device: u64,
    /// Its mesh position (row-major index).
    pub position: usize,
    /// The index range held along each tensor dim (as [`DeviceRegion::region`]).
    pub region: Vec<Range<u64>>,
    /// The extents of `region`.
    pub local_shape: Vec<u64>,
    /// The shape the device allocates (as [`DeviceRegion::padded_shape`]).
    pub padded_shape: Vec<u64>,
    /// The index of its replica group, in `0..RegionView::group_count()`.
    pub group: usize,
}

/// Who holds what, device by device on demand: [`Sharding::regions`] without building every device's
/// region and replica group at once. Each query costs what it returns, so a caller can page, fold or
/// summarise the devices of a mesh of millions (and [`Sharding::regions`] equals, device by device,
/// [`RegionView::region`]).
#[derive(Clone, Debug)]
pub struct RegionView<'a> {
    sharding: &'a Sharding,
    mesh: &'a Mesh,
}

impl Sharding {
    /// A lazy view of [`Sharding::regions`] on `mesh` (checked to fit it); nothing is computed yet.
    pub fn region_view<'a>(&'a self, mesh: &'a Mesh) -> Result<RegionView<'a>> {
        if self.axis_use().len() != mesh.rank() {
            return Err(ShardError::Sharding(format!(
                "the sharding is for a mesh of {} axes, not {}",
                self.axis_use().len(),
                mesh.rank()
            )));
        }
        Ok(RegionView {
            sharding: self,
            mesh,
        })
    }
}

impl RegionView<'_> {
    /// The number of devices (mesh positions).
    pub fn len(&self) -> usize {
        self.mesh.len()
    }

    /// Whether the mesh has no devices.
    pub fn is_empty(&self) -> bool {
        self.mesh.is_empty()
    }

    /// The mesh axes whose coordinate does not tell the members of a replica group apart.
    fn replicated(&self, a: usize) -> bool {
        self.sharding.maximal_device().is_none()
            && self.sharding.axis_use()[a] == AxisUse::Replicated
    }

    /// The number of replica groups: one per device for a maximal sharding, else the product of the
    /// sizes of the axes that are not replicated.
    pub fn group_count(&self) -> usize {
        (0..self.mesh.rank())
            .filter(|&a| !self.replicated(a))
            .map(|a| self.mesh.sizes()[a] as usize)
            .product()
    }

    /// The number of devices in every replica group.
    pub fn group_len(&self) -> usize {
        (0..self.mesh.rank())
            .filter(|&a| self.replicated(a))
            .map(|a| self.mesh.sizes()[a] as usize)
            .product()
    }

    /// The members of replica group `group` (device ids, ascending by mesh position), lazily; none for a
    /// group index out of range.
    pub fn group_members(&self, group: usize) -> impl Iterator<Item = u64> + '_ {
        let rank = self.mesh.rank();
        let sizes = self.mesh.sizes();
        // The group's coordinates on the axes that are not replicated (row-major over them).
        let mut fixed = vec![0u64; rank];
        let mut rest = group;
        for a in (0..rank).rev().filter(|&a| !self.replicated(a)) {
            fixed[a] = rest as u64 % sizes[a];
            rest /= sizes[a] as usize;
        }
        let n = if group < self.group_count() {
            self.group_len()
        } else {
            0
        };
        (0..n).map(move |k| {
            // Member k: row-major over the replicated axes.
            let mut c = fixed.clone();
            let mut rest = k as u64;
            for a in (0..rank).rev().filter(|&a| self.replicated(a)) {
                c[a] = rest % sizes[a];
                rest /= sizes[a];
            }
            let p = c.iter().zip(sizes).fold(0u64, |acc, (&x, &s)| acc * s + x);
            self.mesh.devices()[p as usize]
        })
    }

    /// Device `position`'s place: region, shapes and replica group index. `None` past the mesh.
    pub fn place(&self, position: usize) -> Option<DevicePlace> {
        let s = self.sharding;
        let device = *self.mesh.devices().get(position)?;
        let c = self.mesh.coords(position);
        let sizes = self.mesh.sizes();
        let group = (0..self.mesh.rank())
            .filter(|&a| !self.replicated(a))
            .fold(0usize, |acc, a| acc * sizes[a] as usize + c[a] as usize);
        let (region, padded) = match s.maximal_device() {
            Some(dev) => {
                let r: Vec<Range<u64>> = s
                    .dims()
                    .iter()
                    .map(|&d| if device == dev { 0..d } else { 0..0 })
                    .collect();
                let p = r.iter().map(|r| r.end - r.start).collect();
                (r, p)
            }
            None => {
                let mut region = Vec::with_capacity(s.dims().len());
                let mut padded = Vec::with_capacity(s.dims().len());
                for (d, &len) in s.dims().iter().enumerate() {
                    let axes = &s.dim_axes()[d];
                    match s.uneven() {
                        Uneven::Xla => {
                            let (mut i, mut n) = (0u64, 1u64);
                            for &a in axes {
                                i = i * sizes[a] + c[a];
                                n *= sizes[a];
                            }
                            region.push(split_range(len, n, i));
                            padded.push(len.div_ceil(n));
                        }
                        Uneven::TorchChunk => {
                            let mut r = 0..len;
                            for &a in axes {
                                let sub = split_range(r.end - r.start, sizes[a], c[a]);
                                r = r.start + sub.start..r.start + sub.end;
                            }
                            padded.push(r.end - r.start);
                            region.push(r);
                        }
                    }
                }
                (region, padded)
            }
        };
        Some(DevicePlace {
            device,
            position,
            local_shape: region.iter().map(|r| r.end - r.start).collect(),
            region,
            padded_shape: padded,
            group,
        })
    }

    /// Device `position`'s [`DeviceRegion`], its replica group listed (costs the group's size).
    pub fn region(&self, position: usize) -> Option<DeviceRegion> {
        let p = self.place(position)?;
        Some(DeviceRegion {
            device: p.device,
            position: p.position,
            region: p.region,
            replica_group: self.group_members(p.group).collect(),
            local_shape: p.local_shape,
            padded_shape: p.padded_shape,
        })
    }

    /// Every device's place in mesh-position order, lazily.
    pub fn places(&self) -> impl Iterator<Item = DevicePlace> + '_ {
        (0..self.len()).filter_map(|p| self.place(p))
    }
}
