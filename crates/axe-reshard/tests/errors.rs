//! Bad plans, bad inputs and a rank that dies: typed errors on every rank, never a hang.

#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

mod common;

use std::ops::Range;
use std::time::Duration;

use axe_reshard::{
    fill_source, reshard, run_threads, ExecError, MemoryLayout, Placement, ThreadComm,
};
use axe_shard::{AxisUse, Mesh, ReduceOp, Sharding};
use axe_xla::PrimitiveType;
use common::reference_plan;
use common::run::T;

/// A plan that breaks the law is the same `Plan` error on every rank, before any byte moves.
#[test]
fn bad_plans_are_refused_everywhere() {
    let mesh = Mesh::new(&[("x", 2)]).unwrap();
    let s0 = common::row_major(
        Sharding::new(&mesh, vec![4], vec![vec![0]], &[]).unwrap(),
        PrimitiveType::F32,
    );
    let rep = common::row_major(Sharding::replicated(&mesh, vec![4]), PrimitiveType::F32);
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
        // A verified threads run checks the plan once for all its ranks: the same error.
        let v = axe_reshard::verify_threads(&mesh, &plan, &s0, &rep, T);
        assert!(matches!(v, Err(ExecError::Plan(_))), "{name}: {v:?}");
    }
    assert!(axe_reshard::verify_threads(&mesh, &good, &s0, &rep, T).is_ok());
}

#[test]
fn bad_inputs_are_typed_errors() {
    let mesh = Mesh::new(&[("x", 2)]).unwrap();
    let s = Sharding::new(&mesh, vec![4], vec![vec![0]], &[]).unwrap();
    assert!(matches!(
        Placement::new(s.clone(), MemoryLayout::RowMajor, PrimitiveType::Token),
        Err(ExecError::Input(_))
    ));
    // Sub-byte types are held unpacked, one element a byte; packed into E(4) they are refused by name.
    let s4 = Placement::new(s.clone(), MemoryLayout::RowMajor, PrimitiveType::S4).unwrap();
    assert_eq!(s4.elem_bytes(), 1);
    let packed = Placement::new(
        s.clone(),
        MemoryLayout::parse("{0:E(4)}", 1).unwrap(),
        PrimitiveType::S4,
    )
    .unwrap();
    let e = packed.buffer(&mesh, 0).unwrap_err().to_string();
    assert!(
        e.contains("packed sub-byte shards are not resharded") && e.contains("s4 moves unpacked"),
        "{e}"
    );
    assert!(matches!(
        MemoryLayout::parse("{1,0:T(", 2),
        Err(ExecError::Input(_))
    ));
    let src = common::row_major(s.clone(), PrimitiveType::F32);
    let dst = common::row_major(Sharding::replicated(&mesh, vec![4]), PrimitiveType::F32);
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
    let pp = common::row_major(p.clone(), PrimitiveType::F32);
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
    let p = common::row_major(p, PrimitiveType::Pred);
    let plan = reference_plan(&mesh, &p.sharding, &dst.sharding, 1);
    let pd = common::row_major(dst.sharding.clone(), PrimitiveType::Pred);
    let out = run_threads(2, T, |c: ThreadComm| {
        reshard(&c, &mesh, &plan, &p, &pd, &[0u8; 4], &mut [0u8; 4])
    });
    assert!(
        out.iter()
            .all(|r| matches!(r, Err(ExecError::Input(m)) if m.contains("pred"))),
        "{out:?}"
    );
}

/// A rank that dies mid-reshard ends it on the others with an error, promptly.
#[test]
fn a_rank_dying_mid_reshard_fails_the_others() {
    let mesh = Mesh::new(&[("x", 4)]).unwrap();
    let src = common::row_major(
        Sharding::new(&mesh, vec![64, 64], vec![vec![0], vec![]], &[]).unwrap(),
        PrimitiveType::F32,
    );
    let dst = common::row_major(
        Sharding::new(&mesh, vec![64, 64], vec![vec![], vec![0]], &[]).unwrap(),
        PrimitiveType::F32,
    );
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

/// A failing verified run reports the root error, not the peers' view of it.
#[test]
fn verify_threads_reports_the_root_error() {
    let mesh = Mesh::new(&[("x", 3)]).unwrap();
    let src = common::row_major(
        Sharding::new(&mesh, vec![6], vec![vec![0]], &[]).unwrap(),
        PrimitiveType::S32,
    );
    let dst = common::row_major(Sharding::replicated(&mesh, vec![6]), PrimitiveType::S32);
    let mut plan = reference_plan(&mesh, &src.sharding, &dst.sharding, 4);
    plan.transfers.pop();
    let e = axe_reshard::verify_threads(&mesh, &plan, &src, &dst, T).unwrap_err();
    assert!(
        matches!(&e, ExecError::Plan(m) if m.contains("gets 4 elements")),
        "{e}"
    );
}

/// Sizes past what one device can hold are typed errors on every rank, never an abort.
#[test]
fn overflowing_sizes_are_errors() {
    let mesh = Mesh::new(&[("x", 2)]).unwrap();
    for dims in [vec![1u64 << 62, 4], vec![u64::MAX, u64::MAX]] {
        let s = Sharding::new(&mesh, dims.clone(), vec![vec![0], vec![]], &[]).unwrap();
        let p = common::row_major(s, PrimitiveType::F64);
        assert!(
            matches!(p.buffer(&mesh, 0), Err(ExecError::Input(m)) if m.contains("too large")),
            "{dims:?}"
        );
        let plan = reference_plan(&mesh, &p.sharding, &p.sharding, 8);
        let out = run_threads(2, T, |c: ThreadComm| {
            reshard(&c, &mesh, &plan, &p, &p, &[], &mut [])
        });
        assert!(
            out.iter().all(|r| matches!(r, Err(ExecError::Input(_)))),
            "{out:?}"
        );
    }
}

/// An empty shard holds no bytes and costs nothing, however long its other dimensions: its reshard
/// moves nothing, on every layout.
#[test]
fn empty_shards_of_enormous_extents_move_nothing() {
    let mesh = Mesh::new(&[("x", 2)]).unwrap();
    let s = Sharding::new(&mesh, vec![1 << 41, 0], vec![vec![0], vec![]], &[]).unwrap();
    for layout in ["row-major", "{0,1}", "{1,0:T(8,128)}"] {
        let p = axe_reshard::Placement::new(
            s.clone(),
            axe_reshard::MemoryLayout::parse(layout, 2).unwrap(),
            PrimitiveType::F64,
        )
        .unwrap();
        assert_eq!(p.buffer(&mesh, 1).unwrap().bytes().unwrap(), 0, "{layout}");
        let plan = reference_plan(&mesh, &p.sharding, &p.sharding, 8);
        let out = run_threads(2, T, |c: ThreadComm| {
            reshard(&c, &mesh, &plan, &p, &p, &[], &mut [])
        });
        assert!(out.iter().all(|r| r.is_ok()), "{layout}: {out:?}");
    }
}

/// Layouts a shard cannot be moved through are refused by name.
#[test]
fn unusable_layouts_are_errors() {
    let mesh = Mesh::new(&[("x", 2)]).unwrap();
    let s = Sharding::new(&mesh, vec![8, 8], vec![vec![0], vec![]], &[]).unwrap();
    let packed = Placement::new(
        s.clone(),
        MemoryLayout::parse("{1,0:E(4)}", 2).unwrap(),
        PrimitiveType::S8,
    )
    .unwrap();
    assert!(
        matches!(packed.buffer(&mesh, 0), Err(ExecError::Input(m)) if m.contains("E(n)")),
        "{:?}",
        packed.buffer(&mesh, 0)
    );
    // An Axe layout whose shape is not the shard's, and one that puts two elements in one slot.
    for text in ["S[(3,8):(8,1)]", "S[(4,8):(1,1)]"] {
        let p = Placement::new(
            s.clone(),
            MemoryLayout::parse(text, 2).unwrap(),
            PrimitiveType::F32,
        )
        .unwrap();
        let e = p.buffer(&mesh, 0).unwrap_err().to_string();
        // One prefix, the device and the layout named.
        assert!(
            e.starts_with("bad input: device 0's layout: ") && e.matches("bad input").count() == 1,
            "{text}: {e}"
        );
    }
}

/// Pieces that overlap, leaving a hole of the same size, are caught on the device they wrong.
#[test]
fn overlapping_pieces_are_refused() {
    let mesh = Mesh::new(&[("x", 2)]).unwrap();
    let rep = common::row_major(Sharding::replicated(&mesh, vec![4]), PrimitiveType::F32);
    let mut plan = reference_plan(&mesh, &rep.sharding, &rep.sharding, 4);
    assert_eq!(plan.locals.len(), 2);
    plan.locals[0].region[0] = 0..2;
    plan.locals.insert(1, plan.locals[0].clone());
    let out = run_threads(2, T, |c: ThreadComm| {
        let me = axe_reshard::Communicator::rank(&c) as u64;
        let s = fill_source(&mesh, &rep, me)?;
        let mut d = vec![0u8; 16];
        reshard(&c, &mesh, &plan, &rep, &rep, &s, &mut d)
    });
    assert!(
        matches!(&out[0], Err(ExecError::Plan(m)) if m.contains("covered twice")),
        "{:?}",
        out[0]
    );
    assert!(out[1].is_ok(), "{:?}", out[1]);
}

#[test]
fn messages_write_shapes_and_indices_as_the_notation_does() {
    use axe_reshard::{reshard, ExecError, MemoryLayout, Placement, ThreadComm};
    let e = ExecError::Mismatch {
        device: 1,
        index: vec![2, 3],
        got: "00".into(),
        expected: "01".into(),
    };
    assert_eq!(e.to_string(), "device 1: element [2,3] is 00, expected 01");
    let e = ExecError::Mismatch {
        device: 1,
        index: vec![],
        got: "5a (byte 3)".into(),
        expected: "00".into(),
    };
    assert_eq!(
        e.to_string(),
        "device 1: a padding byte is 5a (byte 3), expected 00"
    );
    // Arrays of different shapes: their dims as the shape notation writes them.
    let mesh = axe_shard::Mesh::new(&[("x", 1)]).unwrap();
    let place = |dims: &[u64]| {
        let s = axe_shard::notation::jax::parse_jax("P()", &mesh, dims).unwrap();
        Placement::new(s, MemoryLayout::RowMajor, axe_xla::PrimitiveType::F32).unwrap()
    };
    let (a, b) = (place(&[4, 4]), place(&[4, 8]));
    let p = axe_shard::plan(
        &mesh,
        &a.sharding,
        &a.sharding,
        4,
        &axe_shard::CostModel::default(),
    )
    .unwrap();
    let comm = ThreadComm::group(1, std::time::Duration::from_secs(5))
        .unwrap()
        .pop()
        .unwrap();
    let mut out = vec![0u8; 128];
    let e = reshard(&comm, &mesh, &p, &a, &b, &[0u8; 64], &mut out).unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("an array of [4,4], the destination of [4,8]"),
        "{m}"
    );
    assert!(!m.contains(", 4]"), "{m}");
    let m = mesh.axis("q").unwrap_err().to_string();
    assert!(m.contains("(the mesh has \"x\")"), "{m}");
}

/// The checker of a run catches a wrong element and a nonzero padding byte, naming each.
#[test]
fn a_wrong_element_or_a_dirty_padding_byte_is_caught() {
    use axe_reshard::check_destination;
    let mesh = Mesh::new(&[("x", 1)]).unwrap();
    let s = Sharding::replicated(&mesh, vec![5, 3]);
    let rm = common::row_major(s.clone(), PrimitiveType::F32);
    let tiled = Placement::new(
        s,
        MemoryLayout::parse("{1,0:T(8,128)}", 2).unwrap(),
        PrimitiveType::F32,
    )
    .unwrap();
    let p = reference_plan(&mesh, &rm.sharding, &tiled.sharding, 4);
    let bufs = common::run::execute(&mesh, &p, &rm, &tiled);
    let good = &bufs[0].1;
    assert!(check_destination(&mesh, &rm, &tiled, 0, good).is_ok());
    // Element [1,2] lies at slot 128 + 2 of the tile; slot 3 of row 0 is padding.
    let mut bad = good.clone();
    bad[(128 + 2) * 4] ^= 1;
    let e = check_destination(&mesh, &rm, &tiled, 0, &bad).unwrap_err();
    assert!(e.to_string().contains("element [1,2]"), "{e}");
    let mut dirty = good.clone();
    dirty[3 * 4 + 1] = 0x5a;
    let e = check_destination(&mesh, &rm, &tiled, 0, &dirty).unwrap_err();
    assert!(
        e.to_string().contains("padding byte is 5a (byte 13)"),
        "{e}"
    );
}
