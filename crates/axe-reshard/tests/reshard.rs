//! Executing reshards on the threads backend: random shapes, meshes, device orders, shardings (partial,
//! maximal, replicated, uneven), element types and per-device layouts, checked element by element and
//! against a brute-force gather.

#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

mod common;

use axe_reshard::{MemoryLayout, Placement};
use axe_shard::{plan, AxisUse, CostModel, Mesh, ReduceOp, Sharding, Uneven};
use axe_xla::PrimitiveType;
use common::reference_plan;
use common::run::{execute, gather_check};
use proptest::prelude::*;

/// How one mesh axis is used: 0 and 3 split dim `d`, 1 replicates, 2 holds partial values.
type AxisPick = (u8, usize, u8);

fn build_sharding(
    mesh: &Mesh,
    dims: &[u64],
    picks: &[AxisPick],
    maximal: Option<usize>,
    torch: bool,
    op: ReduceOp,
    manual: &[usize],
) -> Sharding {
    if let Some(p) = maximal.filter(|_| manual.is_empty()) {
        return Sharding::maximal(mesh, dims.to_vec(), mesh.devices()[p % mesh.len()]).unwrap();
    }
    let mut dim_axes: Vec<Vec<(u8, usize)>> = vec![Vec::new(); dims.len()];
    let mut others = Vec::new();
    for (a, &(kind, d, order)) in picks.iter().take(mesh.rank()).enumerate() {
        match kind {
            _ if manual.contains(&a) => others.push((a, AxisUse::Manual)),
            0 | 3 if !dims.is_empty() => dim_axes[d % dims.len()].push((order, a)),
            2 => others.push((a, AxisUse::Partial(op))),
            _ => {}
        }
    }
    let dim_axes: Vec<Vec<usize>> = dim_axes
        .into_iter()
        .map(|mut v| {
            v.sort();
            v.into_iter().map(|x| x.1).collect()
        })
        .collect();
    let s = Sharding::new(mesh, dims.to_vec(), dim_axes, &others).unwrap();
    if torch {
        s.with_uneven(Uneven::TorchChunk)
    } else {
        s
    }
}

fn layout(kind: u8, rank: usize) -> MemoryLayout {
    let order = |rev: bool| -> String {
        let v: Vec<String> = if rev {
            (0..rank).rev().map(|i| i.to_string()).collect()
        } else {
            (0..rank).map(|i| i.to_string()).collect()
        };
        v.join(",")
    };
    let tile = match rank {
        0 => "",
        1 => ":T(4)",
        _ => ":T(2,3)",
    };
    let text = match kind {
        0 => "row-major".to_string(),
        1 => format!("{{{}}}", order(false)),
        2 => format!("{{{}{tile}}}", order(true)),
        3 => format!("{{{}{tile}}}", order(false)),
        _ if rank >= 2 => format!("{{{}:T(8,128)}}", order(true)),
        _ => "row-major".to_string(),
    };
    MemoryLayout::parse(&text, rank).unwrap()
}

const TYPES: [PrimitiveType; 11] = [
    PrimitiveType::F32,
    PrimitiveType::Bf16,
    PrimitiveType::F64,
    PrimitiveType::S32,
    PrimitiveType::F16,
    PrimitiveType::U8,
    PrimitiveType::S16,
    PrimitiveType::S64,
    PrimitiveType::Pred,
    PrimitiveType::C64,
    PrimitiveType::C128,
];
const OPS: [ReduceOp; 5] = [
    ReduceOp::Sum,
    ReduceOp::Avg,
    ReduceOp::Max,
    ReduceOp::Min,
    ReduceOp::Product,
];

#[derive(Debug, Clone)]
struct Case {
    mesh: Vec<u64>,
    order: Vec<usize>,
    dims: Vec<u64>,
    src: (Vec<AxisPick>, Option<usize>, bool),
    dst: (Vec<AxisPick>, Option<usize>, bool),
    layouts: (u8, u8),
    dtype: usize,
    op: usize,
    /// Mesh axes manual in both shardings.
    manual: Vec<usize>,
}

fn case() -> impl Strategy<Value = Case> {
    let picks = || prop::collection::vec((0u8..4, 0usize..3, any::<u8>()), 3);
    let side = || {
        (
            picks(),
            prop::option::weighted(0.15, 0usize..8),
            any::<bool>(),
        )
    };
    (
        prop::collection::vec(1u64..=4, 1..=3)
            .prop_filter("at most 8 devices", |m| m.iter().product::<u64>() <= 8),
        prop::collection::vec(0u64..=7, 0..=3),
        side(),
        side(),
        (0u8..5, 0u8..5),
        0usize..TYPES.len(),
        0usize..OPS.len(),
        any::<u64>(),
    )
        .prop_map(|(mesh, dims, src, dst, layouts, dtype, op, seed)| {
            let n = mesh.iter().product::<u64>() as usize;
            // A device order from the seed (a rotation and maybe a reversal).
            let mut order: Vec<usize> = (0..n).collect();
            order.rotate_left(seed as usize % n);
            if seed & 1 << 40 != 0 {
                order.reverse();
            }
            // In a quarter of the cases, some mesh axes are manual in both shardings.
            let manual: Vec<usize> = (0..mesh.len())
                .filter(|a| (seed >> 56) & 3 == 0 && (seed >> (48 + a)) & 1 == 1)
                .collect();
            Case {
                mesh,
                order,
                dims,
                src,
                dst,
                layouts,
                dtype,
                op,
                manual,
            }
        })
}

fn placements(c: &Case) -> (Mesh, Placement, Placement) {
    let names = ["x", "y", "z"];
    let axes: Vec<(&str, u64)> = c
        .mesh
        .iter()
        .enumerate()
        .map(|(i, &s)| (names[i], s))
        .collect();
    let mesh = Mesh::with_devices(&axes, c.order.iter().map(|&d| d as u64).collect()).unwrap();
    let op = OPS[c.op];
    let m = &c.manual;
    let src = build_sharding(&mesh, &c.dims, &c.src.0, c.src.1, c.src.2, op, m);
    let src_partial: Vec<usize> = common::partial(&src).iter().map(|p| p.0).collect();
    let dst = build_sharding(&mesh, &c.dims, &c.dst.0, c.dst.1, c.dst.2, op, m);
    let mut dtype = TYPES[c.dtype];
    if (!src_partial.is_empty() || !common::partial(&dst).is_empty()) && c.dtype >= 8 {
        dtype = PrimitiveType::F32; // reductions need numbers
    }
    let rank = c.dims.len();
    let src = Placement::new(src, layout(c.layouts.0, rank), dtype).unwrap();
    let dst = Placement::new(dst, layout(c.layouts.1, rank), dtype).unwrap();
    (mesh, src, dst)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Executing a plan yields exactly the destination shards, in their layouts, padding zero: the
    /// planner's plan (minimum bytes, spread senders) and the reference plan alike.
    #[test]
    fn reshard_yields_the_destination_shards(c in case()) {
        let (mesh, src, dst) = placements(&c);
        let reference = reference_plan(&mesh, &src.sharding, &dst.sharding, src.elem_bytes());
        let planned = plan(&mesh, &src.sharding, &dst.sharding, src.elem_bytes(), &CostModel::default())
            .expect("the planner plans every generated case");
        // The planner's bytes are the minimum.
        prop_assert!(planned.bytes <= reference.bytes);
        for p in [&planned, &reference] {
            let bufs = execute(&mesh, p, &src, &dst);
            if common::partial(&src.sharding).is_empty()
            && common::partial(&dst.sharding).is_empty()
            && c.manual.is_empty()
        {
                gather_check(&mesh, &src, &dst, &bufs);
            }
            let sent: u64 = bufs.iter().map(|b| b.2.sent).sum();
            let received: u64 = bufs.iter().map(|b| b.2.received).sum();
            prop_assert_eq!(sent, p.bytes);
            prop_assert_eq!(received, p.bytes);
        }
    }
}

/// The random cases reach every kind this file means to test.
#[test]
fn the_generator_reaches_every_kind_of_case() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = case();
    let (mut partial, mut maximal, mut torch, mut tiled, mut empty, mut reordered, mut uneven) =
        (0, 0, 0, 0, 0, 0, 0);
    let (mut manual, mut kept_partial) = (0, 0);
    for _ in 0..400 {
        let c = strategy.new_tree(&mut runner).unwrap().current();
        let (mesh, src, dst) = placements(&c);
        partial += usize::from(!common::partial(&src.sharding).is_empty());
        maximal += usize::from(
            src.sharding.maximal_device().is_some() || dst.sharding.maximal_device().is_some(),
        );
        torch += usize::from(src.sharding.uneven() == Uneven::TorchChunk && mesh.len() > 1);
        tiled += usize::from(matches!(&dst.layout, MemoryLayout::Xla(l) if !l.tiles.is_empty()));
        empty += usize::from(c.dims.contains(&0));
        reordered += usize::from(!mesh.is_default_order());
        manual += usize::from(
            src.sharding
                .axis_use()
                .iter()
                .zip(mesh.sizes())
                .any(|(u, &z)| *u == AxisUse::Manual && z > 1),
        );
        kept_partial += usize::from(
            src.sharding
                .axis_use()
                .iter()
                .zip(dst.sharding.axis_use())
                .any(|(a, b)| matches!((a, b), (AxisUse::Partial(_), AxisUse::Partial(_)))),
        );
        uneven += usize::from(
            src.buffers(&mesh)
                .unwrap()
                .iter()
                .any(|b| b.region.local_shape != b.region.padded_shape),
        );
    }
    for (name, k) in [
        ("partial", partial),
        ("maximal", maximal),
        ("torch", torch),
        ("tiled", tiled),
        ("empty", empty),
        ("reordered", reordered),
        ("uneven", uneven),
        ("manual", manual),
        ("kept partial", kept_partial),
    ] {
        assert!(k >= 20, "{name}: {k} of 400");
    }
}
