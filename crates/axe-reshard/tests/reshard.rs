//! Executing reshards on the threads backend: random shapes, meshes, shardings, element types and
//! per-device layouts, checked against a brute-force gather; golden cases; bad plans and dead ranks.

#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

mod common;

use std::ops::Range;
use std::time::Duration;

use axe_reshard::{
    check_destination, fill_source, reshard, run_threads, verify_run, ExecError, MemoryLayout,
    Moved, Placement, ThreadComm,
};
use axe_shard::{AxisUse, DeviceRegion, Mesh, Plan, ReduceOp, Sharding, Uneven};
use axe_xla::PrimitiveType;
use common::reference_plan;
use proptest::prelude::*;

const T: Duration = Duration::from_secs(30);

/// Runs `plan` on every device with the pattern as source; returns each rank's source and destination
/// buffers (after checking the destination against the pattern) and what it moved.
fn execute(
    mesh: &Mesh,
    plan: &Plan,
    src: &Placement,
    dst: &Placement,
) -> Vec<(Vec<u8>, Vec<u8>, Moved)> {
    run_threads(mesh.len(), T, |c: ThreadComm| -> Result<_, ExecError> {
        let me = axe_reshard::Communicator::rank(&c) as u64;
        let s = fill_source(mesh, src, me)?;
        let mut d = vec![0xa5u8; dst.buffer(mesh, me)?.bytes()?];
        let moved = reshard(&c, mesh, plan, src, dst, &s, &mut d)?;
        check_destination(mesh, src, dst, me, &d)?;
        Ok((s, d, moved))
    })
    .into_iter()
    .enumerate()
    .map(|(r, x)| x.unwrap_or_else(|e| panic!("rank {r}: {e}")))
    .collect()
}

/// Each element of a device's region: (row-major global linear index, local index).
fn elements(dims: &[u64], r: &DeviceRegion) -> Vec<(u64, Vec<u64>)> {
    let mut out = Vec::new();
    let n: u64 = r.local_shape.iter().product();
    for k in 0..n {
        let mut rest = k;
        let mut local = vec![0u64; r.local_shape.len()];
        for d in (0..local.len()).rev() {
            local[d] = rest % r.local_shape[d];
            rest /= r.local_shape[d];
        }
        let lin = local
            .iter()
            .zip(&r.region)
            .zip(dims)
            .fold(0, |acc, ((l, g), d)| acc * d + g.start + l);
        out.push((lin, local));
    }
    out
}

/// The brute-force gather: the global array read out of the source buffers (every holder agreeing),
/// then each destination device's expected buffer written from it: elements at every copy's slot,
/// zero elsewhere.
fn gather_check(mesh: &Mesh, src: &Placement, dst: &Placement, bufs: &[(Vec<u8>, Vec<u8>, Moved)]) {
    let w = src.elem_bytes() as usize;
    let dims = src.sharding.dims();
    let total: u64 = dims.iter().product();
    let mut global: Vec<Option<Vec<u8>>> = vec![None; total as usize];
    for b in src.buffers(mesh).unwrap() {
        let buf = &bufs[b.region.device as usize].0;
        for (lin, local) in elements(dims, &b.region) {
            for r in &b.layout.replicas {
                let o = (b.layout.offset(&local) - b.layout.replicas[0] + r) as usize * w;
                let v = buf[o..o + w].to_vec();
                match &global[lin as usize] {
                    Some(g) => assert_eq!(g, &v, "holders of element {lin} disagree"),
                    None => global[lin as usize] = Some(v),
                }
            }
        }
    }
    for b in dst.buffers(mesh).unwrap() {
        let mut want = vec![0u8; b.bytes().unwrap()];
        for (lin, local) in elements(dims, &b.region) {
            let v = global[lin as usize]
                .as_ref()
                .expect("every element is held");
            for r in &b.layout.replicas {
                let o = (b.layout.offset(&local) - b.layout.replicas[0] + r) as usize * w;
                want[o..o + w].copy_from_slice(v);
            }
        }
        assert_eq!(
            bufs[b.region.device as usize].1, want,
            "device {}",
            b.region.device
        );
    }
}

/// How one mesh axis is used: 0 and 3 split dim `d`, 1 replicates, 2 holds partial values.
type AxisPick = (u8, usize, u8);

fn build_sharding(
    mesh: &Mesh,
    dims: &[u64],
    picks: &[AxisPick],
    maximal: Option<usize>,
    torch: bool,
    op: ReduceOp,
    partial_ok: &dyn Fn(usize) -> bool,
) -> Sharding {
    if let Some(p) = maximal {
        return Sharding::maximal(mesh, dims.to_vec(), mesh.devices()[p % mesh.len()]).unwrap();
    }
    let mut dim_axes: Vec<Vec<(u8, usize)>> = vec![Vec::new(); dims.len()];
    let mut others = Vec::new();
    for (a, &(kind, d, order)) in picks.iter().take(mesh.rank()).enumerate() {
        match kind {
            0 | 3 if !dims.is_empty() => dim_axes[d % dims.len()].push((order, a)),
            2 if partial_ok(a) => others.push((a, AxisUse::Partial(op))),
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
            Case {
                mesh,
                order,
                dims,
                src,
                dst,
                layouts,
                dtype,
                op,
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
    let src = build_sharding(&mesh, &c.dims, &c.src.0, c.src.1, c.src.2, op, &|_| true);
    let src_partial: Vec<usize> = common::partial(&src).iter().map(|p| p.0).collect();
    let dst = build_sharding(&mesh, &c.dims, &c.dst.0, c.dst.1, c.dst.2, op, &|_| true);
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

    /// Executing a plan yields exactly the destination shards, in their layouts, padding zero.
    #[test]
    fn reshard_yields_the_destination_shards(c in case()) {
        let (mesh, src, dst) = placements(&c);
        let plan = reference_plan(&mesh, &src.sharding, &dst.sharding, src.elem_bytes());
        let bufs = execute(&mesh, &plan, &src, &dst);
        if common::partial(&src.sharding).is_empty() && common::partial(&dst.sharding).is_empty() {
            gather_check(&mesh, &src, &dst, &bufs);
        }
        let sent: u64 = bufs.iter().map(|b| b.2.sent).sum();
        let received: u64 = bufs.iter().map(|b| b.2.received).sum();
        prop_assert_eq!(sent, plan.bytes);
        prop_assert_eq!(received, plan.bytes);
    }
}

fn mesh2x2() -> Mesh {
    Mesh::new(&[("x", 2), ("y", 2)]).unwrap()
}

/// The paper's fully sharded 64×128 on a 2×2 mesh, tiled `T(8,128)` on each device, gathered to every
/// device row-major in one step.
#[test]
fn paper_fully_sharded_to_replicated_changing_the_layout() {
    let mesh = mesh2x2();
    let s = Sharding::new(&mesh, vec![64, 128], vec![vec![0], vec![1]], &[]).unwrap();
    let src = Placement::new(
        s,
        MemoryLayout::parse("{1,0:T(8,128)}", 2).unwrap(),
        PrimitiveType::F32,
    )
    .unwrap();
    // Each 32×64 shard is tiled into 8×128 tiles: half of every tile is padding.
    assert_eq!(src.buffer(&mesh, 0).unwrap().bytes().unwrap(), 32 * 128 * 4);
    let dst = Placement::new(
        Sharding::replicated(&mesh, vec![64, 128]),
        MemoryLayout::RowMajor,
        PrimitiveType::F32,
    )
    .unwrap();
    let plan = reference_plan(&mesh, &src.sharding, &dst.sharding, 4);
    assert_eq!(plan.bytes, 4 * 3 * 32 * 64 * 4);
    let bufs = execute(&mesh, &plan, &src, &dst);
    gather_check(&mesh, &src, &dst, &bufs);
    for b in &bufs {
        assert_eq!(
            b.2,
            Moved {
                sent: 3 * 32 * 64 * 4,
                received: 3 * 32 * 64 * 4,
                copied: 32 * 64 * 4
            }
        );
        // Golden: the global element [i, j] of a row-major 64×128 pattern of f32 is (128i + j) % 199 - 99.
        let at = |i: usize, j: usize| {
            f32::from_le_bytes(b.1[(i * 128 + j) * 4..][..4].try_into().unwrap())
        };
        assert_eq!(at(0, 0), -99.0);
        assert_eq!(at(1, 5), 133.0 - 99.0);
        assert_eq!(at(63, 127), ((63 * 128 + 127) % 199) as f32 - 99.0);
    }
}

/// Shard + replicate (`S0R` on 2×2) to `RS1`, on devices in another order, into an Axe layout with
/// padding and two copies of every element.
#[test]
fn paper_shard_replicate_into_an_axe_layout_with_copies() {
    let mesh = Mesh::with_devices(&[("x", 2), ("y", 2)], vec![3, 1, 0, 2]).unwrap();
    let src = Sharding::new(&mesh, vec![64, 128], vec![vec![0], vec![]], &[]).unwrap();
    let dst = Sharding::new(&mesh, vec![64, 128], vec![vec![], vec![1]], &[]).unwrap();
    let src = Placement::new(
        src,
        MemoryLayout::parse("{0,1}", 2).unwrap(),
        PrimitiveType::Bf16,
    )
    .unwrap();
    // Column-major 64×64 with columns 70 apart, and a second copy of everything 5000 elements on.
    let axe = MemoryLayout::parse("S[(64,64):(1,70)] + R[2:5000]", 2).unwrap();
    let dst = Placement::new(dst, axe, PrimitiveType::Bf16).unwrap();
    let plan = reference_plan(&mesh, &src.sharding, &dst.sharding, 2);
    let bufs = execute(&mesh, &plan, &src, &dst);
    gather_check(&mesh, &src, &dst, &bufs);
}

/// Partial sums of bf16 on 4 devices, reduce-scattered: summed in f32, rounded once to nearest-even.
#[test]
fn partial_bf16_sums_round_once() {
    let mesh = Mesh::new(&[("x", 4)]).unwrap();
    let p = Sharding::new(
        &mesh,
        vec![8],
        vec![vec![]],
        &[(0, AxisUse::Partial(ReduceOp::Sum))],
    )
    .unwrap();
    let s0 = Sharding::new(&mesh, vec![8], vec![vec![0]], &[]).unwrap();
    let src = Placement::new(p, MemoryLayout::RowMajor, PrimitiveType::Bf16).unwrap();
    let dst = Placement::new(s0, MemoryLayout::RowMajor, PrimitiveType::Bf16).unwrap();
    let plan = reference_plan(&mesh, &src.sharding, &dst.sharding, 2);
    let parts = [256.0f32, 0.5, 0.5, 1.0];
    let out = run_threads(4, T, |c: ThreadComm| -> Result<Vec<u8>, ExecError> {
        let me = axe_reshard::Communicator::rank(&c);
        let s: Vec<u8> = (0..8)
            .flat_map(|_| axe_reshard::f32_to_bf16(parts[me]).to_le_bytes())
            .collect();
        let mut d = vec![0u8; 4];
        reshard(&c, &mesh, &plan, &src, &dst, &s, &mut d)?;
        Ok(d)
    });
    for d in out {
        let d = d.unwrap();
        for e in d.chunks(2) {
            // 256 + 0.5 + 0.5 + 1 = 258 in f32; stepwise in bf16 it would stay 256.
            assert_eq!(
                axe_reshard::bf16_to_f32(u16::from_le_bytes([e[0], e[1]])),
                258.0
            );
        }
    }
}

/// 5 elements over 4 devices (2,2,1,0, the last all padding) gathered onto every device, and back.
#[test]
fn uneven_five_over_four() {
    let mesh = Mesh::new(&[("x", 4)]).unwrap();
    let s0 = Sharding::new(&mesh, vec![5], vec![vec![0]], &[]).unwrap();
    let sizes: Vec<u64> = s0
        .regions(&mesh)
        .unwrap()
        .iter()
        .map(|r| r.local_shape[0])
        .collect();
    assert_eq!(sizes, vec![2, 2, 1, 0]);
    let sh = Placement::new(s0, MemoryLayout::RowMajor, PrimitiveType::S32).unwrap();
    let rep = Placement::new(
        Sharding::replicated(&mesh, vec![5]),
        MemoryLayout::RowMajor,
        PrimitiveType::S32,
    )
    .unwrap();
    for (a, b) in [(&sh, &rep), (&rep, &sh)] {
        let plan = reference_plan(&mesh, &a.sharding, &b.sharding, 4);
        let bufs = execute(&mesh, &plan, a, b);
        gather_check(&mesh, a, b, &bufs);
    }
    // Device 3's destination shard is two elements of padding, zeroed.
    let plan = reference_plan(&mesh, &rep.sharding, &sh.sharding, 4);
    assert_eq!(execute(&mesh, &plan, &rep, &sh)[3].1, vec![0u8; 8]);
}

#[test]
fn verify_run_agrees_on_every_rank() {
    let mesh = mesh2x2();
    let src = Sharding::new(
        &mesh,
        vec![6, 10],
        vec![vec![0], vec![]],
        &[(1, AxisUse::Partial(ReduceOp::Max))],
    )
    .unwrap();
    let dst = Sharding::new(&mesh, vec![6, 10], vec![vec![1], vec![0]], &[]).unwrap();
    let src = Placement::new(src, MemoryLayout::RowMajor, PrimitiveType::S32).unwrap();
    let dst = Placement::new(
        dst,
        MemoryLayout::parse("{0,1:T(2,3)}", 2).unwrap(),
        PrimitiveType::S32,
    )
    .unwrap();
    let plan = reference_plan(&mesh, &src.sharding, &dst.sharding, 4);
    let out = run_threads(4, T, |c: ThreadComm| {
        verify_run(&c, &mesh, &plan, &src, &dst)
    });
    for v in out {
        let v = v.unwrap();
        assert_eq!(v.bytes, plan.bytes);
        assert!(v.seconds >= 0.0);
    }
}

/// A plan that breaks the law is the same `Plan` error on every rank, before any byte moves.
#[test]
fn bad_plans_are_refused_everywhere() {
    let mesh = Mesh::new(&[("x", 2)]).unwrap();
    let s0 = Placement::new(
        Sharding::new(&mesh, vec![4], vec![vec![0]], &[]).unwrap(),
        MemoryLayout::RowMajor,
        PrimitiveType::F32,
    )
    .unwrap();
    let rep = Placement::new(
        Sharding::replicated(&mesh, vec![4]),
        MemoryLayout::RowMajor,
        PrimitiveType::F32,
    )
    .unwrap();
    let good = reference_plan(&mesh, &s0.sharding, &rep.sharding, 4);
    let region = |r: Range<u64>| vec![r];
    let mut to_self = good.clone();
    to_self.transfers[0].to = to_self.transfers[0].from;
    let mut not_held = good.clone();
    not_held.transfers[0].region = region(0..4);
    not_held.transfers[0].bytes = 16;
    let mut wrong_bytes = good.clone();
    wrong_bytes.transfers[0].bytes += 1;
    let mut missing = good.clone();
    missing.transfers.pop();
    let mut twice = good.clone();
    twice.locals.push(twice.locals[0].clone());
    for (name, plan) in [
        ("to self", to_self),
        ("not held", not_held),
        ("bytes", wrong_bytes),
        ("missing", missing),
        ("twice", twice),
    ] {
        let out = run_threads(2, T, |c: ThreadComm| {
            let me = axe_reshard::Communicator::rank(&c) as u64;
            let s = fill_source(&mesh, &s0, me)?;
            let mut d = vec![0u8; 16];
            reshard(&c, &mesh, &plan, &s0, &rep, &s, &mut d)
        });
        for r in out {
            assert!(matches!(r, Err(ExecError::Plan(_))), "{name}: {r:?}");
        }
    }
}

#[test]
fn bad_inputs_are_typed_errors() {
    let mesh = Mesh::new(&[("x", 2)]).unwrap();
    let s = Sharding::new(&mesh, vec![4], vec![vec![0]], &[]).unwrap();
    assert!(matches!(
        Placement::new(s.clone(), MemoryLayout::RowMajor, PrimitiveType::S4),
        Err(ExecError::Input(_))
    ));
    assert!(matches!(
        MemoryLayout::parse("{1,0:T(", 2),
        Err(ExecError::Input(_))
    ));
    let src = Placement::new(s.clone(), MemoryLayout::RowMajor, PrimitiveType::F32).unwrap();
    let dst = Placement::new(
        Sharding::replicated(&mesh, vec![4]),
        MemoryLayout::RowMajor,
        PrimitiveType::F32,
    )
    .unwrap();
    let plan = reference_plan(&mesh, &src.sharding, &dst.sharding, 4);
    // A destination buffer too small, on rank 1 only: rank 1 refuses, rank 0 sees it gone.
    let out = run_threads(2, T, |c: ThreadComm| {
        let me = axe_reshard::Communicator::rank(&c);
        let s = fill_source(&mesh, &src, me as u64)?;
        let mut d = vec![0u8; if me == 1 { 15 } else { 16 }];
        reshard(&c, &mesh, &plan, &src, &dst, &s, &mut d)
    });
    assert!(
        matches!(&out[1], Err(ExecError::Input(m)) if m.contains("needs 16")),
        "{:?}",
        out[1]
    );
    assert!(matches!(&out[0], Err(ExecError::Comm(_))), "{:?}", out[0]);
    // A mesh of more devices than ranks.
    let big = Mesh::new(&[("x", 4)]).unwrap();
    let out = run_threads(2, T, |c: ThreadComm| {
        reshard(&c, &big, &plan, &src, &dst, &[], &mut [])
    });
    assert!(out.iter().all(|r| matches!(r, Err(ExecError::Input(_)))));
    // Replicated to Partial(sum): device 1 holds zeros, so a plan that sends it values is refused.
    let p = Sharding::new(
        &mesh,
        vec![4],
        vec![vec![]],
        &[(0, AxisUse::Partial(ReduceOp::Sum))],
    )
    .unwrap();
    let pp = Placement::new(p.clone(), MemoryLayout::RowMajor, PrimitiveType::F32).unwrap();
    let out = run_threads(2, T, |c: ThreadComm| {
        reshard(&c, &mesh, &plan, &dst, &pp, &[0u8; 16], &mut [0u8; 16])
    });
    assert!(
        out.iter().all(
            |r| matches!(r, Err(ExecError::Plan(m)) if m.contains("device 1 gets 4 elements where its region of 4 needs 0"))
        ),
        "{out:?}"
    );
    // A reducing reshard given a plan that stores: refused as a plan error.
    let out = run_threads(2, T, |c: ThreadComm| {
        reshard(&c, &mesh, &plan, &pp, &dst, &[0u8; 16], &mut [0u8; 16])
    });
    assert!(
        out.iter()
            .all(|r| matches!(r, Err(ExecError::Plan(m)) if m.contains("stored"))),
        "{out:?}"
    );
    // Partial values of a type without arithmetic.
    let p = Sharding::new(
        &mesh,
        vec![4],
        vec![vec![]],
        &[(0, AxisUse::Partial(ReduceOp::Sum))],
    )
    .unwrap();
    let p = Placement::new(p, MemoryLayout::RowMajor, PrimitiveType::Pred).unwrap();
    let plan = reference_plan(&mesh, &p.sharding, &dst.sharding, 1);
    let pd = Placement::new(
        dst.sharding.clone(),
        MemoryLayout::RowMajor,
        PrimitiveType::Pred,
    )
    .unwrap();
    let out = run_threads(2, T, |c: ThreadComm| {
        reshard(&c, &mesh, &plan, &p, &pd, &[0u8; 4], &mut [0u8; 4])
    });
    assert!(
        out.iter()
            .all(|r| matches!(r, Err(ExecError::Input(m)) if m.contains("pred"))),
        "{out:?}"
    );
}

/// Replicated to partial: for `sum` and `product` the devices off coordinate 0 hold the identity; for
/// `max` every device keeps the values.
#[test]
fn replicated_to_partial_fills_identities() {
    let mesh = Mesh::new(&[("x", 2), ("y", 2)]).unwrap();
    let rep = Placement::new(
        Sharding::replicated(&mesh, vec![3, 5]),
        MemoryLayout::RowMajor,
        PrimitiveType::F32,
    )
    .unwrap();
    for (op, identity) in [
        (ReduceOp::Sum, Some(0.0f32)),
        (ReduceOp::Product, Some(1.0)),
        (ReduceOp::Max, None),
    ] {
        let p = Sharding::new(
            &mesh,
            vec![3, 5],
            vec![vec![0], vec![]],
            &[(1, AxisUse::Partial(op))],
        )
        .unwrap();
        let dst = Placement::new(
            p,
            MemoryLayout::parse("{0,1:T(2,2)}", 2).unwrap(),
            PrimitiveType::F32,
        )
        .unwrap();
        let plan = reference_plan(&mesh, &rep.sharding, &dst.sharding, 4);
        // `execute` checks every element: the pattern, or the identity where one is due.
        let bufs = execute(&mesh, &plan, &rep, &dst);
        // Device 3 (x = 1, y = 1) holds row 2 of the array: element [2, 0] sits first in its buffer.
        let first = f32::from_le_bytes(bufs[3].1[..4].try_into().unwrap());
        assert_eq!(first, identity.unwrap_or(10.0 - 99.0), "{op:?}");
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
    ] {
        assert!(k >= 20, "{name}: {k} of 400");
    }
}

/// A rank that dies mid-reshard ends it on the others with an error, promptly.
#[test]
fn a_rank_dying_mid_reshard_fails_the_others() {
    let mesh = Mesh::new(&[("x", 4)]).unwrap();
    let src = Placement::new(
        Sharding::new(&mesh, vec![64, 64], vec![vec![0], vec![]], &[]).unwrap(),
        MemoryLayout::RowMajor,
        PrimitiveType::F32,
    )
    .unwrap();
    let dst = Placement::new(
        Sharding::new(&mesh, vec![64, 64], vec![vec![], vec![0]], &[]).unwrap(),
        MemoryLayout::RowMajor,
        PrimitiveType::F32,
    )
    .unwrap();
    let plan = reference_plan(&mesh, &src.sharding, &dst.sharding, 4);
    let start = std::time::Instant::now();
    let out = run_threads(4, Duration::from_secs(60), |c: ThreadComm| {
        let me = axe_reshard::Communicator::rank(&c);
        let s = fill_source(&mesh, &src, me as u64)?;
        if me == 1 {
            panic!("rank 1 dies with its shard");
        }
        let mut d = vec![0u8; 64 * 16 * 4];
        reshard(&c, &mesh, &plan, &src, &dst, &s, &mut d)
    });
    assert!(start.elapsed() < Duration::from_secs(30));
    for r in [0, 2, 3] {
        assert!(
            matches!(
                &out[r],
                Err(ExecError::Comm(axe_reshard::CommError::PeerGone {
                    rank: 1,
                    ..
                }))
            ),
            "rank {r}: {:?}",
            out[r]
        );
    }
}
