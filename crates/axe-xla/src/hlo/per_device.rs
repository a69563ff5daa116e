//! Bytes per device of a module whose instructions carry `sharding=`: each value's shard on each
//! device, added up over the values the module holds in memory.
//!
//! A tiled value holds `ceil(D / n)` of each dim on every device of its tile assignment (XLA allocates
//! the padded shard everywhere, the short and empty tails included), in the value's layout; a replicated,
//! manual or unannotated value is whole on every device; a maximal one is whole on its device and absent
//! elsewhere. Tuple shardings give one sharding per leaf.
//!
//! That is the *global* reading of a module's shapes. In the *per-device* reading (a module the SPMD
//! partitioner has run over, see [`super::partitioned`]), every shape is already what each device holds:
//! every value counts whole on every device. Both readings are kept; the report says which one applies.

use foldhash::HashMap;

use super::partitioned::ShapeReading;
use super::sharding::{parse_sharding, Sharding};
use crate::error::{overflow, Result};
use crate::shape::{ArrayShape, Dim, Shape};

/// What the devices of a sharded module hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerDevice {
    /// The devices (`num_partitions` of the header, else one past the largest device id named).
    pub devices: usize,
    /// The bytes of the device holding the most: every value it holds, summed with no liveness (an
    /// upper bound on what it holds at once, not XLA's peak).
    pub largest_bytes: i64,
    /// That device (the first, if several).
    pub largest_device: usize,
    /// The bytes of the device holding the least.
    pub smallest_bytes: i64,
    /// Materialized values with a `sharding=` attribute.
    pub sharded_values: usize,
    /// Materialized values without one (counted whole on every device).
    pub unannotated_values: usize,
    /// The reading of the shapes these figures follow.
    pub reading: ShapeReading,
    /// The entry computation's parameters: the bytes of the device holding the most of them.
    pub argument_bytes: i64,
    /// The entry computation's result: the bytes of the device holding the most of it.
    pub output_bytes: i64,
    /// Where the sharding [`PerDevice::output_bytes`] follows comes from: written on the result,
    /// inferred by axe (XLA may choose another), or neither (the result counted whole).
    pub output_sharding: OutputSharding,
    /// The entry's result whole on one device (its tuple index tables included): what a device holds
    /// of it if XLA replicates it, the most it can hold. Where the sharding is inferred, XLA's figure
    /// may lie anywhere up to this.
    pub output_whole_bytes: i64,
}

/// Where the sharding of the entry's result comes from, for [`PerDevice::output_bytes`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputSharding {
    /// The result carries `sharding=`.
    Given,
    /// The result carries none: axe inferred one as XLA's propagation does in the simple cases
    /// (see `hlo::propagate`). XLA, left to choose, may choose another (JAX without `out_shardings`).
    Inferred,
    /// The result carries none and none was inferred: counted whole on every device.
    #[default]
    Whole,
}

impl OutputSharding {
    /// `given`, `inferred` or `whole`, as reports print it.
    pub fn name(self) -> &'static str {
        match self {
            OutputSharding::Given => "given",
            OutputSharding::Inferred => "inferred",
            OutputSharding::Whole => "whole",
        }
    }
}

/// One figure of [`PerDevice`] as reports give it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// A count, a device or bytes.
    Number(i64),
    /// A name: a reading (`global`, `per-device`) or where the output's sharding comes from.
    Name(&'static str),
}

impl PerDevice {
    /// Every figure by the name `axe hlo stats --json` and Python's `axe.hlo.read(...).per_device` give
    /// it, in that order (one list that both read, so that they say the same): `shapes` (the reading),
    /// `devices`, `argument_bytes`, `output_bytes`, `largest_bytes`, `largest_device`,
    /// `smallest_bytes`, `sharded_values`, `unannotated_values`, `output_sharding`,
    /// `output_whole_bytes`.
    ///
    /// Law: each field of [`PerDevice`] once, under its own name (`reading` as `shapes`), numbers as
    /// they are (a count past `i64::MAX`, which no module reaches, as `i64::MAX`) and names as
    /// [`ShapeReading::name`] and [`OutputSharding::name`] give them.
    pub fn figures(&self) -> [(&'static str, Figure); 11] {
        let count = |n: usize| Figure::Number(i64::try_from(n).unwrap_or(i64::MAX));
        [
            ("shapes", Figure::Name(self.reading.name())),
            ("devices", count(self.devices)),
            ("argument_bytes", Figure::Number(self.argument_bytes)),
            ("output_bytes", Figure::Number(self.output_bytes)),
            ("largest_bytes", Figure::Number(self.largest_bytes)),
            ("largest_device", count(self.largest_device)),
            ("smallest_bytes", Figure::Number(self.smallest_bytes)),
            ("sharded_values", count(self.sharded_values)),
            ("unannotated_values", count(self.unannotated_values)),
            ("output_sharding", Figure::Name(self.output_sharding.name())),
            (
                "output_whole_bytes",
                Figure::Number(self.output_whole_bytes),
            ),
        ]
    }
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
    /// Every value whole (the per-device reading).
    whole: i64,
    /// Per (shape text, sharding text): its leaves and their whole bytes.
    cache: HashMap<(&'a str, &'a str), (Vec<Leaf>, i64)>,
}

fn add(a: i64, b: i64) -> Result<i64> {
    a.checked_add(b)
        .ok_or_else(|| overflow("adding up bytes per device"))
}

/// The physical bytes of `a`; 0 for an unbounded dynamic array (`?`), which has no size and which the
/// report skips (and counts as skipped).
fn physical(a: &ArrayShape) -> Result<i64> {
    if a.dims.iter().any(|d| d.bound().is_none()) {
        return Ok(0);
    }
    Ok(crate::size::sizes(a)?.physical_bytes)
}

/// The bytes `a` takes as a `grid`-tiled shard (`ceil(D/n)` per dim) in its layout.
fn shard_bytes(a: &ArrayShape, grid: &[i64]) -> Result<i64> {
    let mut local = a.clone();
    for (d, n) in local.dims.iter_mut().zip(grid) {
        if let Dim::Static(len) | Dim::Bounded(len) = d {
            *len = (*len + n - 1) / n.max(&1);
        }
    }
    physical(&local)
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
        let whole = physical(a)?;
        out.push(match s {
            Sharding::Replicated { .. }
            | Sharding::Manual { .. }
            | Sharding::Unreduced { .. }
            | Sharding::Unknown { .. }
            | Sharding::Tuple(_) => (None, whole),
            Sharding::Maximal { device, .. } => (
                Some(vec![
                    usize::try_from(*device).map_err(|_| overflow("a device id"))?
                ]),
                whole,
            ),
            Sharding::Tiled {
                tile_assignment, ..
            } => {
                // Checked as `axe hlo shards` checks it (`Sharding::shards`): the grid fits the
                // array's rank, as many devices as tiles, each once.
                let rank = a.dims.len();
                let grid = tile_assignment.dims();
                let ids = s
                    .tile_devices(rank)?
                    .into_iter()
                    .map(|d| usize::try_from(d).map_err(|_| overflow("a device id")))
                    .collect::<Result<Vec<usize>>>()?;
                (Some(ids), shard_bytes(a, &grid[..rank])?)
            }
        });
    }
    Ok(out)
}

/// The bytes of the index tables of a tuple-shaped value: one 8-byte pointer per element, nested
/// tuples included (XLA's `ShapeUtil::ByteSizeOf` of a tuple on CPU and GPU).
pub(crate) fn tuple_table_bytes(shape: &Shape) -> Result<i64> {
    match shape {
        Shape::Tuple(elements) => {
            let mut bytes = i64::try_from(elements.len())
                .ok()
                .and_then(|n| n.checked_mul(8))
                .ok_or_else(|| overflow("a tuple's index table"))?;
            for e in elements {
                bytes = add(bytes, tuple_table_bytes(e)?)?;
            }
            Ok(bytes)
        }
        _ => Ok(0),
    }
}

/// The bytes a value of `shape` holds on every device without a sharding: every array whole.
pub(crate) fn whole_bytes(shape: &Shape) -> Result<i64> {
    let mut bytes = 0i64;
    for (_, a) in shape.arrays() {
        bytes = bytes
            .checked_add(physical(a)?)
            .ok_or_else(|| overflow("adding up bytes per device"))?;
    }
    Ok(bytes)
}

impl<'a> Tally<'a> {
    /// Adds a materialized value without a sharding, of `bytes` (see [`whole_bytes`]).
    pub(crate) fn add_unannotated(&mut self, bytes: i64) -> Result<()> {
        self.unannotated += 1;
        self.common = add(self.common, bytes)?;
        self.whole = add(self.whole, bytes)?;
        Ok(())
    }

    /// Adds a value of `shape` with the sharding `s` (parsed by the caller, not cached).
    pub(crate) fn add_parsed(&mut self, shape: &Shape, s: &Sharding) -> Result<()> {
        self.sharded += 1;
        self.any_sharding = true;
        self.whole = add(self.whole, whole_bytes(shape)?)?;
        for (devices, bytes) in leaves(shape, s)? {
            self.add_on(devices.as_deref(), bytes)?;
        }
        Ok(())
    }

    /// Adds `bytes` on `devices` (`None`: every device) in the global reading and to the whole in the
    /// per-device one.
    pub(crate) fn add_everywhere(&mut self, bytes: i64) -> Result<()> {
        self.common = add(self.common, bytes)?;
        self.whole = add(self.whole, bytes)?;
        Ok(())
    }

    fn add_on(&mut self, devices: Option<&[usize]>, bytes: i64) -> Result<()> {
        match devices {
            None => self.common = add(self.common, bytes)?,
            Some(ids) => {
                for &d in ids {
                    let e = self.by_device.entry(d).or_default();
                    *e = add(*e, bytes)?;
                    self.most_device = self.most_device.max(d);
                }
            }
        }
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
                e.insert((leaves(shape, &s)?, whole_bytes(shape)?))
            }
        };
        self.whole = add(self.whole, parts.1)?;
        for (devices, bytes) in parts.0.iter() {
            match devices {
                None => self.common = add(self.common, *bytes)?,
                Some(ids) => {
                    for &d in ids {
                        let e = self.by_device.entry(d).or_default();
                        *e = add(*e, *bytes)?;
                        self.most_device = self.most_device.max(d);
                    }
                }
            }
        }
        Ok(())
    }

    /// Adds the arrays of a materialized value of `shape` with the sharding `text` that `keep` takes
    /// (by position among [`Shape::arrays`]): a value only some of whose arrays are its own (the
    /// others forwarded from values counted where they are defined). Law: with `keep` always true, the
    /// sums [`Tally::add_sharded`] gives.
    pub(crate) fn add_sharded_where(
        &mut self,
        shape: &Shape,
        text: &str,
        keep: impl Fn(usize) -> bool,
    ) -> Result<()> {
        self.sharded += 1;
        self.any_sharding = true;
        let s = parse_sharding(text)?;
        let arrays = shape.arrays();
        for (k, (devices, bytes)) in leaves(shape, &s)?.into_iter().enumerate() {
            if keep(k) {
                self.whole = add(self.whole, physical(arrays[k].1)?)?;
                self.add_on(devices.as_deref(), bytes)?;
            }
        }
        Ok(())
    }

    /// Adds the sums of `other` (values added to another tally): the sums of one tally that both
    /// tallies' values were added to.
    pub(crate) fn merge(&mut self, other: Tally<'_>) -> Result<()> {
        self.common = add(self.common, other.common)?;
        self.whole = add(self.whole, other.whole)?;
        for (d, bytes) in other.by_device {
            let e = self.by_device.entry(d).or_default();
            *e = add(*e, bytes)?;
        }
        self.most_device = self.most_device.max(other.most_device);
        self.sharded += other.sharded;
        self.unannotated += other.unannotated;
        self.any_sharding |= other.any_sharding;
        Ok(())
    }

    /// The devices of a module of `partitions` (`num_partitions`): at least one past the largest id named.
    fn devices(&self, partitions: Option<usize>) -> usize {
        partitions
            .unwrap_or(0)
            .max(self.most_device.saturating_add(1))
            .max(1)
    }

    /// Over `devices` devices in the global reading: the largest bytes, its device, the smallest bytes.
    fn spread(&self, devices: usize) -> (i64, usize, i64) {
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
        (largest, largest_device, smallest)
    }

    /// The figures in both readings (global first), when any value was sharded or `partitions` (the
    /// header's `num_partitions`) is above one; `arguments` and `outputs` hold the entry's parameters and
    /// its result.
    pub(crate) fn finish(
        self,
        partitions: Option<usize>,
        arguments: &Tally<'_>,
        outputs: &Tally<'_>,
    ) -> Option<[PerDevice; 2]> {
        if !self.any_sharding && partitions.unwrap_or(1) <= 1 {
            return None;
        }
        let devices = self
            .devices(partitions)
            .max(arguments.devices(partitions))
            .max(outputs.devices(partitions));
        let (largest, largest_device, smallest) = self.spread(devices);
        let global = PerDevice {
            devices,
            largest_bytes: largest,
            largest_device,
            smallest_bytes: smallest,
            sharded_values: self.sharded,
            unannotated_values: self.unannotated,
            reading: ShapeReading::Global,
            argument_bytes: arguments.spread(devices).0,
            output_bytes: outputs.spread(devices).0,
            output_sharding: OutputSharding::default(),
            output_whole_bytes: 0,
        };
        let local = PerDevice {
            largest_bytes: self.whole,
            largest_device: 0,
            smallest_bytes: self.whole,
            reading: ShapeReading::PerDevice,
            argument_bytes: arguments.whole,
            output_bytes: outputs.whole,
            ..global.clone()
        };
        Some([global, local])
    }
}
