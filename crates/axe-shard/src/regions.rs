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
