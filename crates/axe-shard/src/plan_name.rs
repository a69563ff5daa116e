//! Naming the collective a plan amounts to, and its alpha-beta estimate.

use std::collections::HashMap;
use std::ops::Range;

use crate::mesh::Mesh;
use crate::plan::{Collective, CostModel, Transfer};
use crate::planner::Built;

fn volume(r: &[Range<u64>]) -> u64 {
    r.iter().map(|x| x.end.saturating_sub(x.start)).product()
}

fn is_empty(r: &[Range<u64>]) -> bool {
    r.iter().any(|x| x.is_empty())
}

/// Whether box `a` lies in box `b` (an empty box lies in every box).
fn within(a: &[Range<u64>], b: &[Range<u64>]) -> bool {
    is_empty(a)
        || a.iter()
            .zip(b)
            .all(|(x, y)| y.start <= x.start && x.end <= y.end)
}

/// The collective, by the structure of the plan (each device's source region `S`, destination region `D`):
///
/// - no transfers: `none` when no device reduces or fills and `D = S` wherever `D` is nonempty, else
///   `local-slice`;
/// - reducing partial values: `all-reduce` when `D = S` on every device, `reduce-scatter` when `D ⊆ S`;
/// - `collective-permute` when each transfer carries the sender's whole `S`, which is the receiver's whole
///   `D`, and each device sends and receives at most one message;
/// - `broadcast` when the source is maximal, every transfer comes from its device, and every receiver
///   receives the same region; `scatter` when it is maximal and every transfer comes from its device
///   otherwise; `gather` when every transfer goes to one device, from more than one;
/// - `all-gather` when `S ⊆ D` on every device and the source is not maximal;
/// - `all-to-all` when `|D| = |S|` on every device;
/// - `point-to-point` ([`Collective::General`]) otherwise: transfers that form none of these.
pub(crate) fn name(mesh: &Mesh, b: &Built) -> Collective {
    let n = mesh.len();
    let (src, dst) = (&b.src_regions, &b.dst_regions);
    let same = |p: usize| is_empty(&dst[p]) || dst[p] == src[p];
    if b.transfers.is_empty() {
        return if !b.reduces && b.fills.is_empty() && (0..n).all(same) {
            Collective::None
        } else {
            Collective::LocalSlice
        };
    }
    if b.reduces {
        if b.fills.is_empty() && (0..n).all(|p| dst[p] == src[p]) {
            return Collective::AllReduce;
        }
        if (0..n).all(|p| within(&dst[p], &src[p])) {
            return Collective::ReduceScatter;
        }
        return Collective::General;
    }
    if !b.fills.is_empty() {
        return Collective::General;
    }
    let index = positions(mesh);
    let pos = |id: u64| index.get(&id).copied();
    let mut sends = vec![0usize; n];
    let mut recvs = vec![0usize; n];
    let mut whole = true;
    for t in &b.transfers {
        match (pos(t.from), pos(t.to)) {
            (Some(f), Some(to)) => {
                sends[f] += 1;
                recvs[to] += 1;
                whole &= t.region == src[f] && t.region == dst[to];
            }
            _ => return Collective::General,
        }
    }
    if whole && sends.iter().chain(&recvs).all(|&c| c <= 1) {
        return Collective::CollectivePermute;
    }
    if b.src_maximal {
        let from = b.transfers[0].from;
        if b.transfers.iter().all(|t| t.from == from) {
            let first = &b.transfers[0].region;
            return if b.transfers.iter().all(|t| &t.region == first) {
                Collective::Broadcast
            } else {
                Collective::Scatter
            };
        }
    }
    let (to, from) = (b.transfers[0].to, b.transfers[0].from);
    if b.transfers.iter().all(|t| t.to == to) && b.transfers.iter().any(|t| t.from != from) {
        return Collective::Gather;
    }
    if !b.src_maximal && (0..n).all(|p| within(&src[p], &dst[p])) {
        return Collective::AllGather;
    }
    if (0..n).all(|p| volume(&dst[p]) == volume(&src[p])) {
        return Collective::AllToAll;
    }
    Collective::General
}

/// The alpha-beta time: every device sends its messages one after another and receives its messages one
/// after another, both at once; a device's time is the larger of `messages × alpha + bytes / bandwidth` for
/// what it sends and for what it receives, and the plan's time is the largest device's.
pub(crate) fn estimate(mesh: &Mesh, transfers: &[Transfer], cost: &CostModel) -> f64 {
    let n = mesh.len();
    let mut sent = vec![(0u64, 0u64); n];
    let mut recv = vec![(0u64, 0u64); n];
    let index = positions(mesh);
    for t in transfers {
        if let (Some(&f), Some(&to)) = (index.get(&t.from), index.get(&t.to)) {
            sent[f].0 += 1;
            sent[f].1 = sent[f].1.saturating_add(t.bytes);
            recv[to].0 += 1;
            recv[to].1 = recv[to].1.saturating_add(t.bytes);
        }
    }
    let time = |(m, b): (u64, u64)| m as f64 * cost.alpha_us + b as f64 / cost.bytes_per_us;
    (0..n)
        .map(|p| time(sent[p]).max(time(recv[p])))
        .fold(0.0, f64::max)
}

/// The mesh position of each device id.
fn positions(mesh: &Mesh) -> HashMap<u64, usize> {
    mesh.devices()
        .iter()
        .enumerate()
        .map(|(p, &d)| (d, p))
        .collect()
}
