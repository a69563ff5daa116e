//! Bytes per device of a module whose instructions carry `sharding=`: each value's shard on each
//! device, added up over the values the module holds in memory.
//!
//! A tiled value holds `ceil(D / n)` of each dim on every device of its tile assignment (XLA allocates
//! the padded shard everywhere, the short and empty tails included), in the value's layout; a replicated,
//! manual or unannotated value is whole on every device; a maximal one is whole on its device and absent
//! elsewhere. Tuple shardings give one sharding per leaf.

use foldhash::HashMap;

use super::sharding::{parse_sharding, Sharding};
use crate::error::{overflow, Result};
use crate::shape::{ArrayShape, Dim, Shape};

/// What the devices of a sharded module hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerDevice {
    /// The devices (`num_partitions` of the header, else one past the largest device id named).
    pub devices: usize,
    /// The bytes of the device holding the most.
    pub largest_bytes: i64,
    /// That device (the first, if several).
    pub largest_device: usize,
    /// The bytes of the device holding the least.
    pub smallest_bytes: i64,
    /// Materialized values with a `sharding=` attribute.
    pub sharded_values: usize,
    /// Materialized values without one (counted whole on every device).
    pub unannotated_values: usize,
}

/// One array leaf's holders (`None`: every device) and the bytes each holds.
type Leaf = (Option<Vec<usize>>, i64);

/// Running sums: bytes every device holds, and bytes of particular devices.
#[derive(Default)]
pub(crate) struct Tally<'a> {
    common: i64,
    by_device: HashMap<usize, i64>,
    most_device: usize,
    sharded: usize,
    unannotated: usize,
    any_sharding: bool,
    /// Per (shape text, sharding text): its leaves.
    cache: HashMap<(&'a str, &'a str), Vec<Leaf>>,
}

/// The bytes `a` takes as a `grid`-tiled shard (`ceil(D/n)` per dim) in its layout.
fn shard_bytes(a: &ArrayShape, grid: &[i64]) -> Result<i64> {
    let mut local = a.clone();
    for (d, n) in local.dims.iter_mut().zip(grid) {
        if let Dim::Static(len) | Dim::Bounded(len) = d {
            *len = (*len + n - 1) / n.max(&1);
        }
    }
    Ok(crate::size::sizes(&local)?.physical_bytes)
}

/// Per array leaf of `shape` under `sharding`: the devices holding it (`None`: every device) and the bytes
/// each of them holds.
fn leaves(shape: &Shape, sharding: &Sharding) -> Result<Vec<Leaf>> {
    let arrays = shape.arrays();
    let per_leaf: Vec<&Sharding> = match sharding {
        Sharding::Tuple(list) if list.len() == arrays.len() => list.iter().collect(),
        Sharding::Tuple(list) => {
            return Err(crate::XlaError::InvalidSharding(format!(
                "a tuple sharding of {} elements for a shape of {} arrays",
                list.len(),
                arrays.len()
            )))
        }
        s => vec![s; arrays.len()],
    };
    let mut out = Vec::with_capacity(arrays.len());
    for ((_, a), s) in arrays.iter().zip(per_leaf) {
        let whole = crate::size::sizes(a)?.physical_bytes;
        out.push(match s {
            Sharding::Replicated { .. } | Sharding::Manual { .. } | Sharding::Tuple(_) => {
                (None, whole)
            }
            Sharding::Maximal { device, .. } => (
                Some(vec![
                    usize::try_from(*device).map_err(|_| overflow("a device id"))?
                ]),
                whole,
            ),
            Sharding::Tiled {
                tile_assignment, ..
            } => {
                let grid = tile_assignment.dims();
                let rank = a.dims.len();
                if grid.len() < rank {
                    return Err(crate::XlaError::InvalidSharding(format!(
                        "a tile grid of {} dims for a rank-{rank} array",
                        grid.len()
                    )));
                }
                let ids = tile_assignment
                    .devices()?
                    .into_iter()
                    .map(|d| usize::try_from(d).map_err(|_| overflow("a device id")))
                    .collect::<Result<Vec<usize>>>()?;
                (Some(ids), shard_bytes(a, &grid[..rank])?)
            }
        });
    }
    Ok(out)
}

/// The bytes a value of `shape` holds on every device without a sharding: every array whole.
pub(crate) fn whole_bytes(shape: &Shape) -> Result<i64> {
    let mut bytes = 0i64;
    for (_, a) in shape.arrays() {
        bytes = bytes
            .checked_add(crate::size::sizes(a)?.physical_bytes)
            .ok_or_else(|| overflow("adding up bytes per device"))?;
    }
    Ok(bytes)
}

impl<'a> Tally<'a> {
    /// Adds a materialized value without a sharding, of `bytes` (see [`whole_bytes`]).
    pub(crate) fn add_unannotated(&mut self, bytes: i64) -> Result<()> {
        self.unannotated += 1;
        self.common = self
            .common
            .checked_add(bytes)
            .ok_or_else(|| overflow("adding up bytes per device"))?;
        Ok(())
    }

    /// Adds a materialized value of `shape_text` / `shape` with the sharding `text`.
    pub(crate) fn add_sharded(
        &mut self,
        shape_text: &'a str,
        shape: &Shape,
        text: &'a str,
    ) -> Result<()> {
        self.sharded += 1;
        self.any_sharding = true;
        let parts = match self.cache.entry((shape_text, text)) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let s = parse_sharding(text)?;
                e.insert(leaves(shape, &s)?)
            }
        };
        for (devices, bytes) in parts.iter() {
            match devices {
                None => {
                    self.common = self
                        .common
                        .checked_add(*bytes)
                        .ok_or_else(|| overflow("adding up bytes per device"))?;
                }
                Some(ids) => {
                    for &d in ids {
                        let e = self.by_device.entry(d).or_default();
                        *e = e
                            .checked_add(*bytes)
                            .ok_or_else(|| overflow("adding up bytes per device"))?;
                        self.most_device = self.most_device.max(d);
                    }
                }
            }
        }
        Ok(())
    }

    /// The figures, when any value was sharded; `partitions` is the header's `num_partitions`.
    pub(crate) fn finish(self, partitions: Option<usize>) -> Option<PerDevice> {
        if !self.any_sharding {
            return None;
        }
        let devices = partitions
            .unwrap_or(0)
            .max(self.most_device.saturating_add(1))
            .max(1);
        let bytes = |d: usize| {
            self.common
                .saturating_add(self.by_device.get(&d).copied().unwrap_or(0))
        };
        let (mut largest, mut largest_device, mut smallest) = (i64::MIN, 0, i64::MAX);
        // Devices no value names individually all hold `common`: one of them stands for the rest.
        let mut ids: Vec<usize> = self
            .by_device
            .keys()
            .copied()
            .filter(|&d| d < devices)
            .collect();
        ids.sort_unstable();
        if ids.len() < devices {
            let unnamed = (0..devices)
                .find(|d| !self.by_device.contains_key(d))
                .unwrap_or(0);
            ids.push(unnamed);
            ids.sort_unstable();
        }
        for d in ids {
            let b = bytes(d);
            if b > largest {
                largest = b;
                largest_device = d;
            }
            smallest = smallest.min(b);
        }
        Some(PerDevice {
            devices,
            largest_bytes: largest,
            largest_device,
            smallest_bytes: smallest,
            sharded_values: self.sharded,
            unannotated_values: self.unannotated,
        })
    }
}
