//! Shardings (`sharding={...}`) as data: parsed, printed back identically, and cut into per-device regions.
//!
//! `{replicated}`, `{maximal device=N}`, `{manual}`, tiled `{devices=[2,2]0,1,2,3}` with an explicit device
//! list or an iota `{devices=[4,2]<=[2,4]T(1,0)}` (the devices are `arange(Π R).reshape(R).transpose(P)
//! .reshape(D)`), optionally ` last_tile_dim_replicate` or ` last_tile_dims={manual, replicated}`, an
//! optional ` metadata={...}` kept verbatim, and tuples `{{...}, {...}}`.
//!
//! Refused as XLA's parser refuses them, at their offset: an explicit tile assignment of one device
//! (`{devices=[1]0}`; XLA's non-maximal shardings need more than one device) and a transpose after a
//! one-dim iota (`{devices=[4]<=[4]T(0)}`).

use std::fmt;
use std::ops::Range;

use crate::error::{Result, XlaError};

mod text;
pub use text::parse_sharding;

/// The most devices an iota tile assignment may name (an explicit list is bounded by its text).
pub const MAX_DEVICES: i64 = 1 << 20;

/// How devices are arranged over the tile grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TileAssignment {
    /// `devices=[dims]d0,d1,...`
    Explicit {
        /// The tile grid.
        dims: Vec<i64>,
        /// Device ids in row-major order over the grid.
        devices: Vec<i64>,
    },
    /// `devices=[dims]<=[reshape]T(perm)`
    Iota {
        /// The tile grid.
        dims: Vec<i64>,
        /// The shape `arange` is reshaped to before the transpose.
        reshape: Vec<i64>,
        /// The transpose, if any.
        transpose: Option<Vec<i64>>,
    },
}

impl TileAssignment {
    /// The tile grid dimensions.
    pub fn dims(&self) -> &[i64] {
        match self {
            TileAssignment::Explicit { dims, .. } | TileAssignment::Iota { dims, .. } => dims,
        }
    }

    /// Device ids in row-major order over the grid: distinct and non-negative, at most [`MAX_DEVICES`].
    pub fn devices(&self) -> Result<Vec<i64>> {
        let devices = self.device_list()?;
        let mut sorted = devices.clone();
        sorted.sort_unstable();
        if let Some(&d) = sorted.first().filter(|&&d| d < 0) {
            return Err(XlaError::InvalidSharding(format!(
                "device id {d} is negative"
            )));
        }
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(XlaError::InvalidSharding(format!(
                "device {} appears more than once in the tile assignment",
                w[0]
            )));
        }
        Ok(devices)
    }

    fn device_list(&self) -> Result<Vec<i64>> {
        match self {
            TileAssignment::Explicit { devices, .. } => Ok(devices.clone()),
            TileAssignment::Iota {
                dims,
                reshape,
                transpose,
            } => {
                if let Some(r) = reshape.iter().find(|&&r| r < 1) {
                    return Err(XlaError::InvalidSharding(format!(
                        "iota reshape {reshape:?} has a dimension {r} below 1"
                    )));
                }
                let n = product(reshape)?;
                if n > MAX_DEVICES {
                    return Err(XlaError::InvalidSharding(format!(
                        "an iota tile assignment of {n} devices; at most {MAX_DEVICES} are supported"
                    )));
                }
                if n != product(dims)? {
                    return Err(XlaError::InvalidSharding(format!(
                        "iota reshape {reshape:?} does not match tiles {dims:?}"
                    )));
                }
                let perm: Vec<usize> = match transpose {
                    Some(p) => p.iter().map(|&x| x as usize).collect(),
                    None => (0..reshape.len()).collect(),
                };
                let mut sorted = perm.clone();
                sorted.sort_unstable();
                if sorted != (0..reshape.len()).collect::<Vec<_>>() {
                    return Err(XlaError::InvalidSharding(format!(
                        "T{transpose:?} is not a permutation of the iota dims"
                    )));
                }
                let transposed: Vec<i64> = perm.iter().map(|&p| reshape[p]).collect();
                // Strides of the reshaped arange, read in transposed order.
                let mut stride = vec![1i64; reshape.len()];
                for i in (0..reshape.len().saturating_sub(1)).rev() {
                    stride[i] = stride[i + 1] * reshape[i + 1];
                }
                let mut out = Vec::with_capacity(n as usize);
                let mut idx = vec![0i64; transposed.len()];
                for _ in 0..n {
                    out.push(
                        idx.iter()
                            .enumerate()
                            .map(|(k, &v)| v * stride[perm[k]])
                            .sum(),
                    );
                    for k in (0..idx.len()).rev() {
                        idx[k] += 1;
                        if idx[k] < transposed[k] {
                            break;
                        }
                        idx[k] = 0;
                    }
                }
                Ok(out)
            }
        }
    }
}

/// A sharding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sharding {
    /// Every device holds everything.
    Replicated {
        /// ` metadata={...}` (and a shard group), verbatim.
        metadata: Option<String>,
    },
    /// One device holds everything.
    Maximal {
        /// The device.
        device: i64,
        /// ` metadata={...}` (and a shard group), verbatim.
        metadata: Option<String>,
    },
    /// Manually partitioned.
    Manual {
        /// ` metadata={...}` (and a shard group), verbatim.
        metadata: Option<String>,
    },
    /// `{unreduced}`: every device holds the whole array's partial values, pending a sum.
    Unreduced {
        /// ` metadata={...}` (and a shard group), verbatim.
        metadata: Option<String>,
    },
    /// `{unknown}`: not yet decided (the partitioner chooses); counted as no annotation.
    Unknown {
        /// ` metadata={...}` (and a shard group), verbatim.
        metadata: Option<String>,
    },
    /// Tiled over a device grid.
    Tiled {
        /// The grid and its devices.
        tile_assignment: TileAssignment,
        /// ` last_tile_dim_replicate`: the last grid dimension replicates.
        last_tile_dim_replicate: bool,
        /// ` last_tile_dims={...}`: the kinds of the trailing grid dimensions (`manual`, `unreduced`,
        /// `replicated`).
        last_tile_dims: Vec<String>,
        /// ` metadata={...}` (and a shard group), verbatim.
        metadata: Option<String>,
    },
    /// One sharding per tuple element.
    Tuple(Vec<Sharding>),
}

/// One device's part of an array under a sharding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceShard {
    /// The device id (`None`: every device, for replicated and manual shardings).
    pub device: Option<i64>,
    /// Per dimension, the index range the device holds (possibly empty for uneven tails).
    pub region: Vec<Range<i64>>,
}

fn product(v: &[i64]) -> Result<i64> {
    v.iter()
        .try_fold(1i64, |p, &x| p.checked_mul(x))
        .ok_or_else(|| crate::error::overflow("multiplying tile dimensions"))
}

impl Sharding {
    /// The devices of a tiled sharding of an array of rank `rank`, in row-major order over its tile
    /// grid, once the sharding is checked to fit the array as XLA's verifier checks it: a grid of
    /// `rank` dims plus one per trailing `last_tile_dim_replicate` / `last_tile_dims` entry, every dim
    /// positive, as many devices as the grid has tiles, each once. Every other sharding names no tile
    /// grid: an empty list.
    ///
    /// Law: for a tiled sharding, [`Sharding::shards`] of an array of rank `rank` succeeds iff this
    /// does, with this error when it fails; so `axe hlo shards` and the cost report (`axe hlo stats`) accept and refuse the
    /// same shardings with the same message.
    pub fn tile_devices(&self, rank: usize) -> Result<Vec<i64>> {
        let Sharding::Tiled {
            tile_assignment,
            last_tile_dim_replicate,
            last_tile_dims,
            ..
        } = self
        else {
            return Ok(Vec::new());
        };
        let grid = tile_assignment.dims();
        let extra = usize::from(*last_tile_dim_replicate) + last_tile_dims.len();
        if grid.len() != rank + extra {
            return Err(XlaError::InvalidSharding(format!(
                "tile grid {grid:?} does not fit a rank-{rank} array (+{extra} trailing grid dims)"
            )));
        }
        if grid.iter().any(|&t| t <= 0) {
            return Err(XlaError::InvalidSharding(format!(
                "tile grid {grid:?} has a non-positive dimension"
            )));
        }
        let devices = tile_assignment.devices()?;
        if devices.len() as i64 != product(grid)? {
            return Err(XlaError::InvalidSharding(format!(
                "{} devices for a tile grid {grid:?}",
                devices.len()
            )));
        }
        Ok(devices)
    }

    /// Per device, the region of an array with dimensions `dims` it holds. Dimension `i` is cut into
    /// `T_i` tiles of `⌈D_i / T_i⌉` elements, the last short or empty (`f32[5]` over 4 devices: 2, 2, 1, 0).
    ///
    /// ```
    /// use axe_xla::hlo::sharding::parse_sharding;
    /// let s = parse_sharding("{devices=[4]<=[4]}")?;
    /// let sizes: Vec<i64> = s.shards(&[5])?.iter().map(|d| d.region[0].end - d.region[0].start).collect();
    /// assert_eq!(sizes, vec![2, 2, 1, 0]);
    /// # Ok::<(), axe_xla::XlaError>(())
    /// ```
    pub fn shards(&self, dims: &[i64]) -> Result<Vec<DeviceShard>> {
        let full: Vec<Range<i64>> = dims.iter().map(|&d| 0..d).collect();
        match self {
            Sharding::Replicated { .. }
            | Sharding::Manual { .. }
            | Sharding::Unreduced { .. }
            | Sharding::Unknown { .. } => Ok(vec![DeviceShard {
                device: None,
                region: full,
            }]),
            Sharding::Maximal { device, .. } => Ok(vec![DeviceShard {
                device: Some(*device),
                region: full,
            }]),
            Sharding::Tuple(_) => Err(XlaError::Unsupported(
                "a tuple sharding has one sharding per element".into(),
            )),
            Sharding::Tiled {
                tile_assignment, ..
            } => {
                let grid = tile_assignment.dims();
                let devices = self.tile_devices(dims.len())?;
                let mut out = Vec::with_capacity(devices.len());
                let mut pos = vec![0i64; grid.len()];
                for &device in &devices {
                    let region = dims
                        .iter()
                        .zip(grid)
                        .zip(&pos)
                        .map(|((&d, &t), &p)| {
                            let size = d / t + i64::from(d % t != 0);
                            let start = p.saturating_mul(size).min(d);
                            start..start.saturating_add(size).min(d)
                        })
                        .collect();
                    out.push(DeviceShard {
                        device: Some(device),
                        region,
                    });
                    for k in (0..pos.len()).rev() {
                        pos[k] += 1;
                        if pos[k] < grid[k] {
                            break;
                        }
                        pos[k] = 0;
                    }
                }
                Ok(out)
            }
        }
    }
}

fn join(v: &[i64]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The text after a sharding's body: ` shard_as N` / ` shard_like N` and ` metadata={...}`, as read.
fn write_metadata(f: &mut fmt::Formatter<'_>, m: &Option<String>) -> fmt::Result {
    match m {
        Some(m) => write!(f, " {m}"),
        None => Ok(()),
    }
}

impl fmt::Display for Sharding {
    /// As XLA prints it (with the braces).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sharding::Replicated { metadata } => {
                f.write_str("{replicated")?;
                write_metadata(f, metadata)?;
                f.write_str("}")
            }
            Sharding::Maximal { device, metadata } => {
                write!(f, "{{maximal device={device}")?;
                write_metadata(f, metadata)?;
                f.write_str("}")
            }
            Sharding::Manual { metadata } => {
                f.write_str("{manual")?;
                write_metadata(f, metadata)?;
                f.write_str("}")
            }
            Sharding::Unreduced { metadata } => {
                f.write_str("{unreduced")?;
                write_metadata(f, metadata)?;
                f.write_str("}")
            }
            Sharding::Unknown { metadata } => {
                f.write_str("{unknown")?;
                write_metadata(f, metadata)?;
                f.write_str("}")
            }
            Sharding::Tiled {
                tile_assignment,
                last_tile_dim_replicate,
                last_tile_dims,
                metadata,
            } => {
                match tile_assignment {
                    TileAssignment::Explicit { dims, devices } => {
                        write!(f, "{{devices=[{}]{}", join(dims), join(devices))?
                    }
                    TileAssignment::Iota {
                        dims,
                        reshape,
                        transpose,
                    } => {
                        write!(f, "{{devices=[{}]<=[{}]", join(dims), join(reshape))?;
                        if let Some(t) = transpose {
                            write!(f, "T({})", join(t))?;
                        }
                    }
                }
                if *last_tile_dim_replicate {
                    f.write_str(" last_tile_dim_replicate")?;
                }
                if !last_tile_dims.is_empty() {
                    write!(f, " last_tile_dims={{{}}}", last_tile_dims.join(", "))?;
                }
                write_metadata(f, metadata)?;
                f.write_str("}")
            }
            Sharding::Tuple(elems) => {
                f.write_str("{")?;
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str("}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_devices() {
        for s in [
            "{replicated}",
            "{maximal device=3}",
            "{manual}",
            "{devices=[2,2]0,1,2,3}",
            "{devices=[4,2]<=[2,4]T(1,0)}",
            "{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
            "{devices=[2,1,2]0,2,1,3 last_tile_dims={manual}}",
            "{{replicated}, {devices=[2,1]0,1}}",
            "{replicated metadata={op_name=\"x\"}}",
            "{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}",
            "{devices=[2,2]<=[2,2]T(1,0) metadata={op_name=\"y\"}}",
        ] {
            assert_eq!(parse_sharding(s).unwrap().to_string(), s);
        }
        let t = parse_sharding("{devices=[4,2]<=[2,4]T(1,0)}").unwrap();
        let Sharding::Tiled {
            tile_assignment, ..
        } = t
        else {
            panic!()
        };
        // arange(8).reshape(2,4).transpose(1,0) = [[0,4],[1,5],[2,6],[3,7]]
        assert_eq!(
            tile_assignment.devices().unwrap(),
            vec![0, 4, 1, 5, 2, 6, 3, 7]
        );
        assert!(parse_sharding("{devices=[2]0,1").is_err());
        assert!(parse_sharding("{bogus}").is_err());
    }

    #[test]
    fn uneven_shards() {
        let s = parse_sharding("{devices=[2,2]<=[4]}").unwrap();
        let shards = s.shards(&[5, 3]).unwrap();
        assert_eq!(
            shards[3],
            DeviceShard {
                device: Some(3),
                region: vec![3..5, 2..3]
            }
        );
        let r = parse_sharding("{devices=[2,1,2]<=[4] last_tile_dim_replicate}").unwrap();
        let shards = r.shards(&[8, 8]).unwrap();
        assert_eq!(shards.len(), 4);
        assert_eq!(
            shards[1].region, shards[0].region,
            "replicas along the last grid dim"
        );
        assert!(s.shards(&[5]).is_err());
    }
}
