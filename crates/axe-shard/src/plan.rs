//! Reshard plans: the transfers that turn one sharding of an array into another on the same mesh.
//!
//! A [`Plan`] lists, per destination device, where each part of its destination region comes from: a
//! [`Local`] copy out of what the device already holds, or a [`Transfer`] from another device. What a device
//! already holds is never sent; among the replicas holding a region, the sending is spread. For a source
//! with `Partial` mesh axes and a destination without them, transfers carry the pending [`ReduceOp`]: the
//! receiver combines the piece into what it has instead of storing it.
//!
//! **Partial.** A source mesh axis that is `Partial(op)` and stays partial with the same op in the
//! destination carries its contributions through unchanged (data never crosses it, like a manual axis). One
//! that is partial in the source only is reduced: each destination element receives one piece per
//! contribution (per coordinate of the reduced axes), each with `reduce: Some(op)`, and its value is `op`
//! over them (for `avg`, their mean). An axis becoming partial (replicated or split in the source, partial
//! in the destination): for `sum` and `product` the member at coordinate 0 of those axes keeps the values
//! and the others hold the op's identity (0 or 1; see [`identity_fills`]); `avg`, `max` and `min` are
//! idempotent, so every member keeps the values. Manual axes must be manual in both shardings.
//!
//! **Minimum bytes.** A destination device `q` needs, per contribution `k`, every element `e` of its
//! destination region. If `q` itself holds `(k, e)` in its source shard the plan copies it locally;
//! otherwise any plan must deliver `(k, e)` to `q` in at least one message, so the bytes any plan receives
//! are at least `Σ_q Σ_k |dst(q) \ held(q, k)| × elem_bytes`. This plan sends exactly that: each missing
//! `(q, k, e)` once. (The bound is over plans whose messages carry source values; a two-phase all-reduce
//! forwarding partial sums can move fewer bytes for `Partial → Replicated`.)
//!
//! **Scale.** Per dim, the source shards form an ordered partition of the dim into intervals, so the shards
//! meeting a destination interval are found by binary search; the work is `O(devices × rank)` plus the size
//! of the plan, with no device-by-device intersection.

use std::ops::Range;

use crate::error::{Result, ShardError};
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

impl Local {
    /// The bytes the copy moves within its device, for elements of `elem_bytes` bytes. Law: the region's
    /// element count times `elem_bytes`, as a [`Transfer`]'s `bytes` counts its region (a region lies in
    /// the array, whose bytes the planner checked fit 64 bits; past them, `u64::MAX`).
    pub fn bytes(&self, elem_bytes: u64) -> u64 {
        self.region
            .iter()
            .map(|r| r.end.saturating_sub(r.start))
            .try_fold(elem_bytes, |n, len| n.checked_mul(len))
            .unwrap_or(u64::MAX)
    }
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
    /// One device (a maximal source) sends every receiver the same region.
    Broadcast,
    /// One device (a maximal source) sends each receiver its own region.
    Scatter,
    /// Every transfer goes to one device (a maximal destination, from several senders).
    Gather,
    /// None of the above: transfers between devices that form no named collective, named
    /// `point-to-point`.
    General,
}

impl Collective {
    /// The name used in text and JSON (`none`, `local-slice`, `all-gather`, `all-to-all`,
    /// `collective-permute`, `reduce-scatter`, `all-reduce`, `broadcast`, `scatter`, `gather`, and
    /// `point-to-point` for [`Collective::General`]: transfers that are none of the others).
    pub fn name(self) -> &'static str {
        match self {
            Collective::None => "none",
            Collective::LocalSlice => "local-slice",
            Collective::AllGather => "all-gather",
            Collective::AllToAll => "all-to-all",
            Collective::CollectivePermute => "collective-permute",
            Collective::ReduceScatter => "reduce-scatter",
            Collective::AllReduce => "all-reduce",
            Collective::Broadcast => "broadcast",
            Collective::Scatter => "scatter",
            Collective::Gather => "gather",
            Collective::General => "point-to-point",
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

/// A region a device sets to the identity of `op` (0 for sum, 1 for product) rather than filling it from
/// any source: the members off coordinate 0 of mesh axes becoming `Partial(sum)` or `Partial(product)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fill {
    /// The device id.
    pub device: u64,
    /// Its whole destination region.
    pub region: Vec<Range<u64>>,
    /// The op whose identity it holds.
    pub op: ReduceOp,
}

/// The plan moving an array of `elem_bytes`-byte elements from `src` to `dst`, both on `mesh`. A sharding
/// with a device placement of its own ([`Sharding::with_placement`]) gives each device the region of the
/// position it plays; senders are chosen among the devices holding a piece under the source's placement.
///
/// Law: for every destination device except those in [`identity_fills`], its [`Local`] copies and the
/// [`Transfer`]s it receives cover its destination region exactly once; with a `Partial` source axis being
/// reduced, each element is covered once per partial contribution (per coordinate of the reduced axes),
/// every piece with `reduce: Some(op)`. Every transfer's region lies in the sender's source region, sender
/// and receiver agree on the coordinates of manual axes and of axes partial in both, and the bytes sent are
/// the minimum any plan needs (see the module doc for the proof). Among the replicas holding a piece, the
/// least-loaded sender (in bytes so far) sends it. Per-device memory layouts do not enter: regions are
/// boxes of the global index space.
///
/// Errors: shardings for another mesh or another array, manual axes that differ (or a device at another
/// coordinate of a manual or still-partial axis in the two shardings), a partial axis whose op
/// changes, reduced (or new) partial axes with different ops (reduce them in stages with
/// [`crate::plan_stages`]), an axis reduced while an earlier one with another op stays partial (no
/// meaning: see [`crate::plan_stages`]), sizes overflowing 64 bits.
///
/// ```
/// use axe_shard::{notation::jax::parse_jax, plan, Collective, CostModel, Mesh};
/// let mesh = Mesh::new(&[("x", 4)])?;
/// let src = parse_jax("P('x')", &mesh, &[8, 8])?;
/// let dst = parse_jax("P(None, 'x')", &mesh, &[8, 8])?;
/// let p = plan(&mesh, &src, &dst, 4, &CostModel::default())?;
/// assert_eq!(p.collective, Collective::AllToAll);
/// // Each device keeps its 2×2 diagonal block and receives three 2×2 blocks of f32.
/// assert_eq!((p.locals.len(), p.transfers.len(), p.bytes), (4, 12, 12 * 16));
/// # Ok::<(), axe_shard::ShardError>(())
/// ```
pub fn plan(
    mesh: &Mesh,
    src: &Sharding,
    dst: &Sharding,
    elem_bytes: u64,
    cost: &CostModel,
) -> Result<Plan> {
    let built = crate::planner::build(mesh, src, dst, elem_bytes)?;
    let bytes = built
        .transfers
        .iter()
        .try_fold(0u64, |t, x| t.checked_add(x.bytes))
        .ok_or_else(|| ShardError::Sharding("the plan's bytes overflow 64 bits".into()))?;
    let collective = crate::plan_name::name(mesh, &built);
    let estimate_us = crate::plan_name::estimate(mesh, &built.transfers, cost);
    Ok(Plan {
        transfers: built.transfers,
        locals: built.locals,
        collective,
        bytes,
        estimate_us,
    })
}

/// The number of pieces (transfers and local copies) [`plan`] lists for the same arguments, counted
/// without building any: `O(devices × rank × log shards)` time and `O(devices + shards)` memory, whatever
/// the plan's size. [`plan`] refuses a plan of more than [`crate::MAX_PIECES`] pieces by this count, before
/// building one.
pub fn plan_size(mesh: &Mesh, src: &Sharding, dst: &Sharding) -> Result<u64> {
    crate::planner::count(mesh, src, dst)
}

/// The destination regions set to an identity rather than filled from the source (see [`Fill`]): for
/// each device at a nonzero coordinate of a mesh axis that is `Partial(sum)` or `Partial(product)` in `dst`
/// and not partial in `src`, its whole (nonempty) destination region.
pub fn identity_fills(mesh: &Mesh, src: &Sharding, dst: &Sharding) -> Result<Vec<Fill>> {
    Ok(crate::planner::build(mesh, src, dst, 1)?.fills)
}
