//! Golden reshards: the paper's 2×2 mesh examples, bf16 partial sums, uneven shards, identities.

#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

mod common;

use axe_reshard::{
    reshard, run_threads, verify_run, ExecError, MemoryLayout, Moved, Placement, ThreadComm,
};
use axe_shard::{AxisUse, Mesh, ReduceOp, Sharding};
use axe_xla::PrimitiveType;
use common::reference_plan;
use common::run::{execute, gather_check, T};

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

/// `axe shard run --backend threads` in one call: the planner's plan, verified on every device.
#[test]
fn verify_threads_checks_a_planned_reshard() {
    let mesh = Mesh::with_devices(&[("x", 2), ("y", 3)], vec![5, 4, 3, 2, 1, 0]).unwrap();
    let src = Sharding::new(&mesh, vec![7, 130], vec![vec![0], vec![1]], &[]).unwrap();
    let dst = Sharding::new(&mesh, vec![7, 130], vec![vec![1, 0], vec![]], &[]).unwrap();
    let src = Placement::new(
        src,
        MemoryLayout::parse("{1,0:T(8,128)(2,1)}", 2).unwrap(),
        PrimitiveType::Bf16,
    )
    .unwrap();
    let dst = Placement::new(dst, MemoryLayout::RowMajor, PrimitiveType::Bf16).unwrap();
    let plan = axe_shard::plan(
        &mesh,
        &src.sharding,
        &dst.sharding,
        2,
        &axe_shard::CostModel::default(),
    )
    .unwrap();
    let v = axe_reshard::verify_threads(&mesh, &plan, &src, &dst, T).unwrap();
    assert_eq!(v.bytes, plan.bytes);
    assert!(v.bytes > 0 && v.seconds >= 0.0);
}

/// DTensor's `[Partial(max), Partial(sum)]` is `sum` over `y` of `max` over `x`: the staged run reduces
/// in that order and every destination element checks, for floats, bf16 and integers, replicated or
/// sharded after; and the pattern tells the orders apart (reduced the other way, it is another array).
#[test]
fn mixed_partial_ops_reduce_in_mesh_order() {
    let mesh = Mesh::new(&[("x", 2), ("y", 3)]).unwrap();
    let dims = vec![7u64, 3];
    let src_s = Sharding::new(
        &mesh,
        dims.clone(),
        vec![vec![], vec![]],
        &[
            (0, AxisUse::Partial(ReduceOp::Max)),
            (1, AxisUse::Partial(ReduceOp::Sum)),
        ],
    )
    .unwrap();
    let cost = axe_shard::CostModel::default();
    for (dst_s, t) in [
        (
            Sharding::replicated(&mesh, dims.clone()),
            PrimitiveType::F32,
        ),
        (Sharding::replicated(&mesh, dims.clone()), PrimitiveType::S8),
        (
            Sharding::new(&mesh, dims.clone(), vec![vec![1], vec![0]], &[]).unwrap(),
            PrimitiveType::Bf16,
        ),
    ] {
        let src = common::row_major(src_s.clone(), t);
        let dst = common::row_major(dst_s.clone(), t);
        let stages =
            axe_shard::plan_stages(&mesh, &src_s, &dst_s, src.elem_bytes(), &cost).unwrap();
        assert_eq!(stages.len(), 2);
        let stages = axe_reshard::run_stages_of(&src, &dst, stages).unwrap();
        let v = axe_reshard::verify_staged_threads(&mesh, &stages, T).unwrap();
        assert_eq!(v.bytes, stages.iter().map(|s| s.plan.bytes).sum::<u64>());
    }
    // The parts as f32, per mesh position.
    let src = common::row_major(src_s.clone(), PrimitiveType::F32);
    let parts: Vec<Vec<f32>> = (0..6)
        .map(|d| {
            let b = axe_reshard::fill_source(&mesh, &src, d).unwrap();
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect()
        })
        .collect();
    let whole = common::row_major(
        Sharding::replicated(&mesh, dims.clone()),
        PrimitiveType::F32,
    );
    let want: Vec<f32> = axe_reshard::fill_source(&mesh, &whole, 0)
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let at = |x: usize, y: usize, e: usize| parts[x * 3 + y][e];
    let mut orders_differ = false;
    for (e, &w) in want.iter().enumerate() {
        let max_then_sum: f32 = (0..3).map(|y| at(0, y, e).max(at(1, y, e))).sum();
        let sum_then_max = (0..2)
            .map(|x| (0..3).map(|y| at(x, y, e)).sum::<f32>())
            .fold(f32::MIN, f32::max);
        assert_eq!(max_then_sum, w, "element {e}");
        orders_differ |= sum_then_max != w;
    }
    assert!(orders_differ);
}

/// Sub-byte elements move unpacked, one element a byte (XLA's default layout), bits low and the rest
/// zero; verified element by element, in any layout that does not pack them.
#[test]
fn sub_byte_types_move_unpacked() {
    let mesh = mesh2x2();
    let src_s = Sharding::new(&mesh, vec![8, 5], vec![vec![0], vec![]], &[]).unwrap();
    let dst_s = Sharding::new(&mesh, vec![8, 5], vec![vec![1], vec![0]], &[]).unwrap();
    let cost = axe_shard::CostModel::default();
    for (t, layout) in [
        (PrimitiveType::S4, "row-major"),
        (PrimitiveType::U4, "{0,1}"),
        (PrimitiveType::U2, "{1,0:T(2,4)}"),
        (PrimitiveType::Pred, "row-major"),
    ] {
        let src =
            Placement::new(src_s.clone(), MemoryLayout::parse(layout, 2).unwrap(), t).unwrap();
        let dst = common::row_major(dst_s.clone(), t);
        let plan = axe_shard::plan(&mesh, &src_s, &dst_s, 1, &cost).unwrap();
        axe_reshard::verify_threads(&mesh, &plan, &src, &dst, T).unwrap();
        let b = axe_reshard::fill_source(&mesh, &src, 0).unwrap();
        let limit = 1u16 << axe_relayout::value_bits(t).unwrap();
        assert!(b.iter().all(|&x| u16::from(x) < limit), "{}", t.name());
    }
}
