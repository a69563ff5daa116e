//! Reshard plans: the transfers that turn one sharding of an array into another on the same mesh.
//!
//! A [`Plan`] lists, per destination device, where each part of its destination region comes from: a
//! [`Local`] copy out of what the device already holds, or a [`Transfer`] from another device. What a device
//! already holds is never sent; among the replicas holding a region, the sending is spread. For a source
//! with `Partial` mesh axes and a destination without them, transfers carry the pending [`ReduceOp`]: the
//! receiver combines the piece into what it has instead of storing it.

use std::ops::Range;

use crate::error::Result;
use crate::mesh::Mesh;
use crate::model::{ReduceOp, Sharding};

/// One message: device `from` sends `region` of the global array to device `to` (`from != to`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The sending device id.
    pub from: u64,
    /// The receiving device id.
    pub to: u64,
    /// The index range along each tensor dim (a box of the global array, never empty).
    pub region: Vec<Range<u64>>,
    /// The bytes of the region: its element count times the element size.
    pub bytes: u64,
    /// `Some(op)`: the receiver combines the region into its destination with `op` (a pending `Partial`
    /// reduction); `None`: it stores it.
    pub reduce: Option<ReduceOp>,
}

/// A copy a device makes out of its own source shard into its destination shard; nothing is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Local {
    /// The device id.
    pub device: u64,
    /// The index range along each tensor dim (a box of the global array, never empty).
    pub region: Vec<Range<u64>>,
    /// `Some(op)`: combined into the destination with `op` rather than stored (see [`Transfer::reduce`]).
    pub reduce: Option<ReduceOp>,
}

/// The collective a plan amounts to, where it is one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collective {
    /// Nothing moves and nothing is copied: source and destination shards are the same.
    None,
    /// Nothing moves; devices copy a slice of what they hold.
    LocalSlice,
    /// Every device gathers the shards of its group.
    AllGather,
    /// Every device sends a distinct piece to every device of its group.
    AllToAll,
    /// Each device sends its whole shard to one other device.
    CollectivePermute,
    /// Partial values are reduced and the result left sharded.
    ReduceScatter,
    /// Partial values are reduced and the result left replicated.
    AllReduce,
    /// None of the above.
    General,
}

impl Collective {
    /// The name used in text and JSON (`none`, `local-slice`, `all-gather`, `all-to-all`,
    /// `collective-permute`, `reduce-scatter`, `all-reduce`, `general`).
    pub fn name(self) -> &'static str {
        match self {
            Collective::None => "none",
            Collective::LocalSlice => "local-slice",
            Collective::AllGather => "all-gather",
            Collective::AllToAll => "all-to-all",
            Collective::CollectivePermute => "collective-permute",
            Collective::ReduceScatter => "reduce-scatter",
            Collective::AllReduce => "all-reduce",
            Collective::General => "general",
        }
    }
}

/// The alpha-beta model of a network: a message of `b` bytes costs `alpha_us + b / bytes_per_us`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostModel {
    /// Latency per message, in microseconds.
    pub alpha_us: f64,
    /// Bandwidth per link, in bytes per microsecond.
    pub bytes_per_us: f64,
}

impl Default for CostModel {
    /// 5 µs per message and 25 GB/s per link (an NVLink-class or fast Ethernet-class default).
    fn default() -> CostModel {
        CostModel {
            alpha_us: 5.0,
            bytes_per_us: 25_000.0,
        }
    }
}

/// A reshard plan between two shardings of one array on one mesh.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The messages, grouped by receiving device in mesh-position order.
    pub transfers: Vec<Transfer>,
    /// The copies devices make from their own shards.
    pub locals: Vec<Local>,
    /// The collective this amounts to.
    pub collective: Collective,
    /// The bytes sent over the network: the sum of the transfers' bytes.
    pub bytes: u64,
    /// The alpha-beta estimate of the time, in microseconds.
    pub estimate_us: f64,
}

/// The plan moving an array of `elem_bytes`-byte elements from `src` to `dst`, both on `mesh`.
///
/// Law: for every destination device, its [`Local`] copies and the [`Transfer`]s it receives (without
/// `reduce`) cover its destination region exactly once; with a `Partial` source, each region is covered
/// once per partial contribution, combined with the pending op. Every transfer's region lies in the
/// sender's source region; the bytes sent are the minimum any plan needs.
pub fn plan(
    mesh: &Mesh,
    src: &Sharding,
    dst: &Sharding,
    elem_bytes: u64,
    cost: &CostModel,
) -> Result<Plan> {
    let _ = (mesh, src, dst, elem_bytes, cost);
    Err(crate::error::ShardError::Sharding(
        "reshard planning is not built yet".into(),
    ))
}
