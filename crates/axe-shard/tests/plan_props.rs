//! Reshard plans against brute force over every element: exact cover, minimum bytes, senders holding
//! what they send.

use std::ops::Range;

use axe_shard::{identity_fills, plan, AxisUse, CostModel, Mesh, ReduceOp, Sharding, Uneven};
use proptest::prelude::*;

/// One mesh axis in a random case: split dim `d` (as the `k`-th axis of it), replicated, partial, manual.
#[derive(Clone, Copy, Debug)]
enum Use {
    Split(usize),
    Rep,
    Partial,
}

#[derive(Clone, Debug)]
struct Side {
    uses: Vec<Use>,
    reverse: bool,
    torch: bool,
    maximal: Option<usize>,
}

fn side(axes: usize, dims: usize) -> impl Strategy<Value = Side> {
    let one = prop_oneof![
        3 => (0..dims.max(1)).prop_map(Use::Split),
        2 => Just(Use::Rep),
        1 => Just(Use::Partial),
    ];
    (
        prop::collection::vec(one, axes),
        any::<bool>(),
        any::<bool>(),
        prop::option::weighted(0.1, 0..64usize),
    )
        .prop_map(|(uses, reverse, torch, maximal)| Side {
            uses,
            reverse,
            torch,
            maximal,
        })
}

#[allow(clippy::type_complexity)]
fn case() -> impl Strategy<Value = (Vec<u64>, Vec<u64>, Side, Side, Vec<bool>, u8, u64)> {
    (
        prop::collection::vec(1u64..4, 1..4),
        prop::collection::vec(0u64..7, 0..4),
    )
        .prop_flat_map(|(mesh, dims)| {
            let (a, d) = (mesh.len(), dims.len());
            (
                Just(mesh),
                Just(dims),
                side(a, d),
                side(a, d),
                prop::collection::vec(prop::bool::weighted(0.15), a),
                0u8..3,
                1u64..5,
            )
        })
}

fn op_of(code: u8) -> ReduceOp {
    [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Product][code as usize % 3]
}

fn build(m: &Mesh, dims: &[u64], s: &Side, manual: &[bool], op: ReduceOp) -> Sharding {
    if let Some(p) = s.maximal {
        if !manual.iter().any(|&x| x) {
            return Sharding::maximal(m, dims.to_vec(), m.devices()[p % m.len()]).expect("maximal");
        }
    }
    let mut dim_axes = vec![Vec::new(); dims.len()];
    let mut others = Vec::new();
    for (a, u) in s.uses.iter().enumerate() {
        if manual[a] {
            others.push((a, AxisUse::Manual));
            continue;
        }
        match u {
            Use::Split(d) if *d < dims.len() => dim_axes[*d].push(a),
            Use::Partial => others.push((a, AxisUse::Partial(op))),
            _ => others.push((a, AxisUse::Replicated)),
        }
    }
    if s.reverse {
        dim_axes.iter_mut().for_each(|v| v.reverse());
    }
    let sh = Sharding::new(m, dims.to_vec(), dim_axes, &others).expect("sharding");
    if s.torch {
        sh.with_uneven(Uneven::TorchChunk)
    } else {
        sh
    }
}

fn contains(r: &[Range<u64>], e: &[u64]) -> bool {
    r.iter().zip(e).all(|(r, i)| r.contains(i))
}

fn within(a: &[Range<u64>], b: &[Range<u64>]) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| y.start <= x.start && x.end <= y.end)
}

fn elements(region: &[Range<u64>]) -> Vec<Vec<u64>> {
    let mut out = vec![Vec::new()];
    for r in region {
        out = out
            .into_iter()
            .flat_map(|p| {
                r.clone().map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn plans_cover_exactly_once_with_the_fewest_bytes(
        (mesh, dims, s, d, manual, opc, eb) in case(), reorder in any::<bool>()
    ) {
        let m = Mesh::from_sizes(&mesh).expect("mesh");
        // Device ids need not be positions: reversed and offset by 10.
        let m = if reorder {
            let names: Vec<String> = m.names().to_vec();
            let axes: Vec<(&str, u64)> = names.iter().map(String::as_str).zip(mesh.iter().copied()).collect();
            Mesh::with_devices(&axes, (0..m.len() as u64).rev().map(|d| d + 10).collect()).expect("mesh")
        } else {
            m
        };
        let op = op_of(opc);
        let src = build(&m, &dims, &s, &manual, op);
        let dst = build(&m, &dims, &d, &manual, op);
        let p = plan(&m, &src, &dst, eb, &CostModel::default()).expect("plan");
        let fills = identity_fills(&m, &src, &dst).expect("fills");
        // The size counted before planning is the plan's.
        prop_assert_eq!(
            axe_shard::plan_size(&m, &src, &dst).expect("size"),
            (p.transfers.len() + p.locals.len()) as u64
        );
        let sr = src.regions(&m).expect("src regions");
        let dr = dst.regions(&m).expect("dst regions");
        let pos = |id: u64| m.devices().iter().position(|&x| x == id).expect("device");
        let is_partial = |u: AxisUse| matches!(u, AxisUse::Partial(_));
        let reduce_axes: Vec<usize> = (0..m.rank())
            .filter(|&a| is_partial(src.axis_use()[a]) && !is_partial(dst.axis_use()[a])).collect();
        let channel: Vec<usize> = (0..m.rank())
            .filter(|&a| manual[a] || (is_partial(src.axis_use()[a]) && is_partial(dst.axis_use()[a])))
            .collect();
        let into: Vec<usize> = (0..m.rank())
            .filter(|&a| !is_partial(src.axis_use()[a]) && is_partial(dst.axis_use()[a])).collect();
        let k_of = |p: usize| -> Vec<u64> { let c = m.coords(p); reduce_axes.iter().map(|&a| c[a]).collect() };
        let want_reduce = if reduce_axes.is_empty() { None } else { Some(op) };
        // Senders hold what they send, across no channel; reductions are marked.
        for t in &p.transfers {
            let (f, to) = (pos(t.from), pos(t.to));
            prop_assert_ne!(f, to);
            prop_assert!(within(&t.region, &sr[f].region), "{:?} not in sender {:?}", t, sr[f].region);
            prop_assert!(t.region.iter().all(|r| !r.is_empty()));
            let (cf, ct) = (m.coords(f), m.coords(to));
            prop_assert!(channel.iter().all(|&a| cf[a] == ct[a]));
            prop_assert_eq!(t.reduce, want_reduce);
            let vol: u64 = t.region.iter().map(|r| r.end - r.start).product();
            prop_assert_eq!(t.bytes, vol * eb);
        }
        for l in &p.locals {
            prop_assert!(within(&l.region, &sr[pos(l.device)].region));
            prop_assert_eq!(l.reduce, want_reduce);
        }
        prop_assert_eq!(p.bytes, p.transfers.iter().map(|t| t.bytes).sum::<u64>());
        let k_count: u64 = reduce_axes.iter().map(|&a| m.sizes()[a]).product();
        let mut minimum = 0u64;
        for (q, dq) in dr.iter().enumerate() {
            let cq = m.coords(q);
            let filled = fills.iter().any(|f| f.device == dq.device);
            let should_fill = !elements(&dq.region).is_empty()
                && dst.maximal_device().is_none()
                && into.iter().any(|&a| cq[a] != 0 && matches!(dst.axis_use()[a], AxisUse::Partial(ReduceOp::Sum | ReduceOp::Product)));
            prop_assert_eq!(filled, should_fill);
            let pieces: Vec<(Vec<u64>, &Vec<Range<u64>>)> = p.locals.iter()
                .filter(|l| l.device == dq.device).map(|l| (k_of(q), &l.region))
                .chain(p.transfers.iter().filter(|t| t.to == dq.device).map(|t| (k_of(pos(t.from)), &t.region)))
                .collect();
            if filled {
                prop_assert!(pieces.is_empty());
                continue;
            }
            for (_, r) in &pieces {
                prop_assert!(within(r, &dq.region));
            }
            // A device a maximal destination leaves out holds nothing, a scalar included.
            let holds = dst.maximal_device().is_none_or(|d| d == dq.device);
            for e in elements(&dq.region).into_iter().filter(|_| holds) {
                let mut ks: Vec<Vec<u64>> = pieces.iter().filter(|(_, r)| contains(r, &e)).map(|(k, _)| k.clone()).collect();
                ks.sort();
                let n = ks.len() as u64;
                ks.dedup();
                prop_assert_eq!(n, k_count, "element {:?} of device {} covered {} times", e, dq.device, n);
                prop_assert_eq!(ks.len() as u64, k_count);
                // (A scalar's region is the empty box, so a maximal source's other devices are told apart
                // by id.)
                let held_locally = contains(&sr[q].region, &e)
                    && src.maximal_device().is_none_or(|d| d == dq.device);
                minimum += eb * (k_count - u64::from(held_locally));
            }
        }
        prop_assert_eq!(p.bytes, minimum);
    }

    #[test]
    fn replicas_share_the_sending(x in 1u64..5, y in 2u64..5, len in 1u64..40) {
        // P('x') -> P(): each device needs the other x-rows, held by y replicas each.
        let m = Mesh::new(&[("x", x), ("y", y)]).expect("mesh");
        let src = Sharding::new(&m, vec![len], vec![vec![0]], &[]).expect("src");
        let dst = Sharding::replicated(&m, vec![len]);
        let p = plan(&m, &src, &dst, 1, &CostModel::default()).expect("plan");
        let mut sent = vec![0u64; m.len()];
        for t in &p.transfers { sent[t.from as usize] += t.bytes; }
        // Within a replica group (same x), the senders' loads differ by at most one piece.
        for row in sent.chunks(y as usize) {
            let (lo, hi) = (row.iter().min().copied().unwrap_or(0), row.iter().max().copied().unwrap_or(0));
            prop_assert!(hi - lo <= len.div_ceil(x), "{:?}", sent);
        }
    }
}
