//! Building a reshard plan from the interval structure of the shards.
//!
//! Every mesh axis has one role in a reshard:
//!
//! - **split**: the source splits a tensor dim over it; a piece's source shard index fixes the coordinate;
//! - **free**: the source replicates over it; any coordinate holds the piece (the sender is chosen there);
//! - **channel**: manual in both shardings, or partial with the same op in both; data never crosses it, so
//!   sender and receiver share the coordinate;
//! - **reduce**: partial in the source and not in the destination; each coordinate holds one contribution,
//!   and a destination element needs one of each.
//!
//! Per dim, the source shards are an ordered partition of `0..len` into intervals (both uneven rules cut
//! contiguously in mixed-radix order), so the shards meeting a destination interval are found by binary
//! search: the work is the size of the plan, plus `O(devices × rank)`, never a device-by-device product.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

/// The most pieces (transfers and local copies) a plan lists: bounds the memory and time of planning
/// whatever the mesh (a 4,096-device all-to-all lists about 260,000).
pub const MAX_PIECES: usize = 1 << 22;

use crate::error::{list_text, Result, ShardError};
use crate::mesh::Mesh;
use crate::model::{AxisUse, ReduceOp, Sharding, Uneven};
use crate::plan::{Fill, Local, Transfer};
use crate::regions::split_range;

/// Which part a mesh axis plays in a reshard (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Split,
    Free,
    Channel,
    Reduce,
}

/// What the planner found: transfers and local copies by receiving device, and identity fills.
pub(crate) struct Built {
    pub transfers: Vec<Transfer>,
    pub locals: Vec<Local>,
    pub fills: Vec<Fill>,
    /// Per mesh position, its source region and destination region (empty ranges: nothing).
    pub src_regions: Vec<Vec<Range<u64>>>,
    pub dst_regions: Vec<Vec<Range<u64>>>,
    /// Whether the plan reduces pending partial values.
    pub reduces: bool,
    /// Whether the source is maximal (one device holds everything).
    pub src_maximal: bool,
}

/// The ordered intervals of dim `len` cut over mesh axes of `sizes` (major first) under `rule`.
pub(crate) fn dim_intervals(len: u64, sizes: &[u64], rule: Uneven) -> Vec<Range<u64>> {
    match rule {
        Uneven::Xla => {
            let n: u64 = sizes.iter().product();
            (0..n).map(|i| split_range(len, n, i)).collect()
        }
        Uneven::TorchChunk => {
            let mut cur: Vec<Range<u64>> = std::iter::once(0..len).collect();
            for &s in sizes {
                cur = cur
                    .iter()
                    .flat_map(|r| {
                        (0..s).map(move |i| {
                            let sub = split_range(r.end - r.start, s, i);
                            r.start + sub.start..r.start + sub.end
                        })
                    })
                    .collect();
            }
            cur
        }
    }
}

/// Per dim, the shard intervals of `s` (one interval `0..len` for a maximal sharding).
fn intervals(mesh: &Mesh, s: &Sharding) -> Vec<Vec<Range<u64>>> {
    s.dims()
        .iter()
        .enumerate()
        .map(|(d, &len)| {
            if s.maximal_device().is_some() {
                return std::iter::once(0..len).collect();
            }
            let sizes: Vec<u64> = s.dim_axes()[d].iter().map(|&a| mesh.sizes()[a]).collect();
            dim_intervals(len, &sizes, s.uneven())
        })
        .collect()
}

/// The shard index of dim `d` at mesh coordinates `c` (mixed radix over the dim's axes).
fn shard_index(mesh: &Mesh, s: &Sharding, d: usize, c: &[u64]) -> usize {
    s.dim_axes()[d]
        .iter()
        .fold(0usize, |i, &a| i * mesh.sizes()[a] as usize + c[a] as usize)
}

/// The region mesh position `p` (coordinates `c`) holds under `s`, given its dim intervals.
fn region_at(
    mesh: &Mesh,
    s: &Sharding,
    iv: &[Vec<Range<u64>>],
    p: usize,
    c: &[u64],
) -> Vec<Range<u64>> {
    if let Some(m) = s.maximal_device() {
        return s
            .dims()
            .iter()
            .map(|&len| if mesh.devices()[p] == m { 0..len } else { 0..0 })
            .collect();
    }
    (0..s.dims().len())
        .map(|d| iv[d][shard_index(mesh, s, d, c)].clone())
        .collect()
}

fn op_of(u: AxisUse) -> Option<ReduceOp> {
    match u {
        AxisUse::Partial(op) => Some(op),
        _ => None,
    }
}

/// Checks that `src` and `dst` describe one array on `mesh` and gives each mesh axis its role, with the
/// pending reduction (if any) and the op of the axes becoming partial (if any).
#[allow(clippy::type_complexity)]
fn roles(
    mesh: &Mesh,
    src: &Sharding,
    dst: &Sharding,
) -> Result<(Vec<Role>, Option<ReduceOp>, Option<ReduceOp>)> {
    for (name, s) in [("source", src), ("destination", dst)] {
        if s.axis_use().len() != mesh.rank() {
            return Err(ShardError::Sharding(format!(
                "the {name} sharding is for a mesh of {} axes, not {}",
                s.axis_use().len(),
                mesh.rank()
            )));
        }
        if let Some(m) = s.maximal_device() {
            if !mesh.devices().contains(&m) {
                return Err(ShardError::Sharding(format!(
                    "the {name} sharding's device {m} is not in the mesh"
                )));
            }
        }
    }
    if src.dims() != dst.dims() {
        return Err(ShardError::Sharding(format!(
            "source dims {} and destination dims {} differ: a reshard keeps the array",
            list_text(src.dims()),
            list_text(dst.dims())
        )));
    }
    let mut reduce_op: Option<ReduceOp> = None;
    let mut into_op: Option<ReduceOp> = None;
    let mut out = Vec::with_capacity(mesh.rank());
    for a in 0..mesh.rank() {
        let (su, du) = (src.axis_use()[a], dst.axis_use()[a]);
        let name = &mesh.names()[a];
        let role = match (su, du) {
            (AxisUse::Manual, AxisUse::Manual) => Role::Channel,
            (AxisUse::Manual, _) | (_, AxisUse::Manual) => {
                return Err(ShardError::Sharding(format!(
                    "mesh axis {name:?} is manual in one sharding only: manual axes must match"
                )))
            }
            (AxisUse::Partial(x), AxisUse::Partial(y)) if x == y => Role::Channel,
            (AxisUse::Partial(x), AxisUse::Partial(y)) => {
                return Err(ShardError::Sharding(format!(
                    "mesh axis {name:?} is partial ({}) in the source and partial ({}) in the destination",
                    x.name(),
                    y.name()
                )))
            }
            (AxisUse::Partial(op), _) => {
                if reduce_op.is_some_and(|r| r != op) {
                    return Err(ShardError::Sharding(
                        "the source's partial axes being reduced have different ops: one plan \
                         reduces one op (plan_stages reduces them in mesh order, one op a stage)"
                            .into(),
                    ));
                }
                reduce_op = Some(op);
                Role::Reduce
            }
            (AxisUse::Split(_), _) => Role::Split,
            (AxisUse::Replicated, _) => Role::Free,
        };
        if let (Some(op), None) = (op_of(du), op_of(su)) {
            if into_op.is_some_and(|r| r != op) {
                return Err(ShardError::Sharding(
                    "the destination's new partial axes have different ops".into(),
                ));
            }
            into_op = Some(op);
        }
        out.push(role);
    }
    nested_order(mesh, src, &out)?;
    Ok((out, reduce_op, into_op))
}

/// Checks that reducing the axes of role `Reduce` has a meaning: a partial value reduces its mesh axes
/// in mesh order (see `crate::stages`), so an axis reduced now must not follow an axis that stays partial
/// with another op (`op_r` over `r` of `op_k` over `k` is not `op_k` over `k` of `op_r` over `r`).
fn nested_order(mesh: &Mesh, src: &Sharding, role: &[Role]) -> Result<()> {
    let partial = crate::stages::partial_axes(src);
    for &(r, op_r) in partial.iter().filter(|&&(a, _)| role[a] == Role::Reduce) {
        if let Some(&(k, op_k)) = partial
            .iter()
            .find(|&&(k, op_k)| k < r && role[k] == Role::Channel && op_k != op_r)
        {
            let (nk, nr) = (&mesh.names()[k], &mesh.names()[r]);
            return Err(ShardError::Sharding(format!(
                "mesh axis {nr:?} ({}) cannot be reduced while mesh axis {nk:?} ({}) stays partial: \
                 the value is {} over {nr:?} of {} over {nk:?}, which reduces {nk:?} first, and the two \
                 ops do not commute; reduce {nk:?} too",
                op_r.name(),
                op_k.name(),
                op_r.name(),
                op_k.name()
            )));
        }
    }
    Ok(())
}

/// The row-major strides of the mesh positions.
fn strides(mesh: &Mesh) -> Vec<usize> {
    let mut st = vec![1usize; mesh.rank()];
    for a in (0..mesh.rank().saturating_sub(1)).rev() {
        st[a] = st[a + 1] * mesh.sizes()[a + 1] as usize;
    }
    st
}

/// Whether the devices at nonzero coordinates of the axes becoming partial hold the identity: true for
/// sum and product (one member keeps the values); avg, max and min are idempotent, so every member keeps
/// them.
pub(crate) fn fills_identity(op: ReduceOp) -> bool {
    matches!(op, ReduceOp::Sum | ReduceOp::Product)
}

/// Plans the reshard; see [`crate::plan::plan`] for the law.
pub(crate) fn build(mesh: &Mesh, src: &Sharding, dst: &Sharding, elem_bytes: u64) -> Result<Built> {
    match build_or_count(mesh, src, dst, elem_bytes, false)? {
        Planned::Built(b) => Ok(b),
        Planned::Counted(_) => Err(ShardError::Sharding("the plan was only counted".into())),
    }
}

/// The number of pieces (transfers and local copies) the plan lists, counted without building any.
pub(crate) fn count(mesh: &Mesh, src: &Sharding, dst: &Sharding) -> Result<u64> {
    match build_or_count(mesh, src, dst, 1, true)? {
        Planned::Counted(n) => Ok(n),
        Planned::Built(b) => Ok((b.transfers.len() + b.locals.len()) as u64),
    }
}

enum Planned {
    Built(Built),
    Counted(u64),
}

fn build_or_count(
    mesh: &Mesh,
    src: &Sharding,
    dst: &Sharding,
    elem_bytes: u64,
    count_only: bool,
) -> Result<Planned> {
    let (role, reduce, into_op) = roles(mesh, src, dst)?;
    let overflow = || ShardError::Sharding("the array's size in bytes overflows 64 bits".into());
    src.dims()
        .iter()
        .try_fold(elem_bytes, |n, &d| n.checked_mul(d))
        .ok_or_else(overflow)?;
    let st = strides(mesh);
    let n = mesh.len();
    let rank = src.dims().len();
    let (siv, div) = (intervals(mesh, src), intervals(mesh, dst));
    let coords: Vec<Vec<u64>> = (0..n).map(|p| mesh.coords(p)).collect();
    // Per mesh position, the position its device plays in each sharding (they differ where a sharding has
    // a device placement of its own). Senders are chosen among the source's played positions.
    let (src_at, dst_at) = (src.played_positions(mesh), dst.played_positions(mesh));
    let axes_of = |r: Role| -> Vec<usize> { (0..mesh.rank()).filter(|&a| role[a] == r).collect() };
    let (free, reduce_axes) = (axes_of(Role::Free), axes_of(Role::Reduce));
    let into_axes: Vec<usize> = (0..mesh.rank())
        .filter(|&a| op_of(dst.axis_use()[a]).is_some() && op_of(src.axis_use()[a]).is_none())
        .collect();
    let k_count: usize = reduce_axes
        .iter()
        .map(|&a| mesh.sizes()[a] as usize)
        .product();
    let dst_max = dst.maximal_device();
    let fill_op = into_op.filter(|&op| fills_identity(op));
    // What destination position q (region `region`, destination coordinates `cq`) does: nothing (a
    // device a maximal destination leaves out, or an empty region; for a scalar the empty box cannot say
    // so), `Some(true)` an identity fill, `Some(false)` receive its region.
    let does = |q: usize, region: &[Range<u64>], cq: &[u64]| -> Option<bool> {
        if region.iter().any(|r| r.is_empty()) || dst_max.is_some_and(|m| m != mesh.devices()[q]) {
            return None;
        }
        Some(fill_op.is_some() && into_axes.iter().any(|&a| cq[a] != 0))
    };
    // The plan's size, counted before anything per device is kept: per receiving device, one piece per
    // contribution and per combination of the nonempty source shards meeting its region in each dim
    // (found by binary search and counted by prefix sums: O(devices × rank × log shards)).
    let nonempty: Vec<Vec<usize>> = siv
        .iter()
        .map(|ivs| {
            std::iter::once(0)
                .chain(ivs.iter().scan(0usize, |c, s| {
                    *c += usize::from(!s.is_empty());
                    Some(*c)
                }))
                .collect()
        })
        .collect();
    let meeting = |d: usize, t: &Range<u64>| -> (usize, usize) {
        let ivs = &siv[d];
        let first = ivs.partition_point(|s| s.end <= t.start);
        let end = first + ivs[first..].partition_point(|s| s.start < t.end);
        (first, end)
    };
    let mut pieces_total: u64 = 0;
    for (q, &at) in dst_at.iter().enumerate() {
        let cq = mesh.coords(at);
        let region = region_at(mesh, dst, &div, q, &cq);
        if does(q, &region, &cq) != Some(false) {
            continue;
        }
        let per: u64 = (0..rank).fold(k_count as u64, |v, d| {
            let (first, end) = meeting(d, &region[d]);
            v.saturating_mul((nonempty[d][end] - nonempty[d][first]) as u64)
        });
        pieces_total = pieces_total.saturating_add(per);
    }
    if count_only {
        return Ok(Planned::Counted(pieces_total));
    }
    if pieces_total > MAX_PIECES as u64 {
        return Err(ShardError::Sharding(format!(
            "the plan would list {pieces_total} pieces (transfers and local copies), more than \
             {MAX_PIECES}; plan on fewer devices or shards"
        )));
    }
    for a in (0..mesh.rank()).filter(|&a| role[a] == Role::Channel) {
        if let Some(p) = (0..n).find(|&p| coords[src_at[p]][a] != coords[dst_at[p]][a]) {
            return Err(ShardError::Sharding(format!(
                "device {} is at coordinate {} of mesh axis {:?} in the source and {} in the destination: \
                 manual (or still partial) axes must hold each device at one coordinate",
                mesh.devices()[p],
                coords[src_at[p]][a],
                mesh.names()[a],
                coords[dst_at[p]][a]
            )));
        }
    }
    let src_regions: Vec<Vec<Range<u64>>> = (0..n)
        .map(|p| region_at(mesh, src, &siv, p, &coords[src_at[p]]))
        .collect();
    let dst_regions: Vec<Vec<Range<u64>>> = (0..n)
        .map(|p| region_at(mesh, dst, &div, p, &coords[dst_at[p]]))
        .collect();
    let src_max_pos = src
        .maximal_device()
        .and_then(|m| mesh.devices().iter().position(|&d| d == m));
    // The source's split axes per dim, to place a shard index on the mesh.
    let split_of = src.dim_axes();
    // The senders of each group (keyed by the base position, free coordinates zero): (bytes sent, order,
    // position), least loaded first.
    let mut groups: HashMap<usize, BTreeSet<(u64, usize, usize)>> = HashMap::new();
    let mut out = Built {
        transfers: Vec::new(),
        locals: Vec::new(),
        fills: Vec::new(),
        src_regions: Vec::new(),
        dst_regions: Vec::new(),
        reduces: reduce.is_some(),
        src_maximal: src_max_pos.is_some(),
    };
    // At most one local copy per device and contribution: one combination of source shards is its own.
    let total = pieces_total as usize;
    out.transfers.reserve(total);
    out.locals.reserve(total.min(n.saturating_mul(k_count)));
    for q in 0..n {
        let region = &dst_regions[q];
        let Some(fills) = does(q, region, &coords[dst_at[q]]) else {
            continue;
        };
        // q's coordinates as the source places it (for what it holds and the groups it shares).
        let cs = &coords[src_at[q]];
        if let (true, Some(op)) = (fills, fill_op) {
            out.fills.push(Fill {
                device: mesh.devices()[q],
                region: region.clone(),
                op,
            });
            continue;
        }
        // q's position with its free coordinates zeroed: the group q itself belongs to.
        let q_base: usize = (0..mesh.rank())
            .filter(|&a| role[a] != Role::Free)
            .map(|a| cs[a] as usize * st[a])
            .sum();
        let chan_base: usize = (0..mesh.rank())
            .filter(|&a| role[a] == Role::Channel)
            .map(|a| cs[a] as usize * st[a])
            .sum();
        // Per dim, the source shards meeting the destination interval and the part they hold.
        let pieces: Vec<Vec<(usize, Range<u64>)>> = (0..rank)
            .map(|d| {
                let t = &region[d];
                let (first, end) = meeting(d, t);
                siv[d][first..end]
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| !s.is_empty())
                    .map(|(j, s)| (first + j, s.start.max(t.start)..s.end.min(t.end)))
                    .collect()
            })
            .collect();
        if pieces.iter().any(Vec::is_empty) {
            // Only a zero-size array reaches here with a nonempty region; nothing to move.
            continue;
        }
        for k in 0..k_count {
            // The coordinates of contribution k along the reduce axes (mixed radix, last axis fastest).
            let mut k_base = 0usize;
            let mut rest = k;
            for &a in reduce_axes.iter().rev() {
                let s = mesh.sizes()[a] as usize;
                k_base += (rest % s) * st[a];
                rest /= s;
            }
            let mut pick = vec![0usize; rank];
            loop {
                let mut base = chan_base + k_base;
                let mut part = Vec::with_capacity(rank);
                let mut volume: u64 = 1;
                for d in 0..rank {
                    let (i, r) = &pieces[d][pick[d]];
                    // Decompose shard index i over the dim's source axes, minor axis last.
                    let mut rest = *i;
                    for &a in split_of[d].iter().rev() {
                        let s = mesh.sizes()[a] as usize;
                        base += (rest % s) * st[a];
                        rest /= s;
                    }
                    volume *= r.end - r.start;
                    part.push(r.clone());
                }
                let base = src_max_pos.unwrap_or(base);
                let held = match src_max_pos {
                    Some(m) => m == q,
                    None => base == q_base,
                };
                if held {
                    out.locals.push(Local {
                        device: mesh.devices()[q],
                        region: part,
                        reduce,
                    });
                } else {
                    let bytes = volume.checked_mul(elem_bytes).ok_or_else(overflow)?;
                    let p = if src_max_pos.is_some() || free.is_empty() {
                        // A group of one: its only member sends (no load to track).
                        base
                    } else {
                        let set = groups.entry(base).or_insert_with(|| {
                            members(mesh, &st, base, &free)
                                .into_iter()
                                .enumerate()
                                .map(|(o, p)| (0u64, o, p))
                                .collect()
                        });
                        let Some((sent, o, p)) = set.pop_first() else {
                            return Err(ShardError::Sharding(
                                "no source device holds a piece of the destination".into(),
                            ));
                        };
                        set.insert((sent.saturating_add(bytes), o, p));
                        p
                    };
                    out.transfers.push(Transfer {
                        from: if src_max_pos.is_some() {
                            mesh.devices()[p]
                        } else {
                            src.device_at(mesh, p)
                        },
                        to: mesh.devices()[q],
                        region: part,
                        bytes,
                        reduce,
                    });
                }
                // Next piece: odometer over the dims, last dim fastest.
                let mut d = rank;
                let done = loop {
                    if d == 0 {
                        break true;
                    }
                    d -= 1;
                    pick[d] += 1;
                    if pick[d] < pieces[d].len() {
                        break false;
                    }
                    pick[d] = 0;
                };
                if done {
                    break;
                }
            }
        }
    }
    out.src_regions = src_regions;
    out.dst_regions = dst_regions;
    Ok(Planned::Built(out))
}

/// The positions of the group at `base` (free coordinates zero): every combination of the free axes.
fn members(mesh: &Mesh, st: &[usize], base: usize, free: &[usize]) -> Vec<usize> {
    let mut out = vec![base];
    for &a in free {
        let s = mesh.sizes()[a] as usize;
        out = out
            .iter()
            .flat_map(|&p| (0..s).map(move |x| p + x * st[a]))
            .collect();
    }
    out
}
