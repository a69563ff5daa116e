//! Ranks agree on their inputs before any data moves: every rank fails, naming what differs, when
//! some rank was given different inputs or could not set up; every rank goes on when all agree.

#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::time::Duration;

use axe_reshard::{
    agree, run_inputs, run_threads, verify_run, Communicator, ExecError, InputHash, MemoryLayout,
    Placement, ThreadComm, MAX_INPUTS,
};
use axe_shard::{notation::jax::parse_jax, plan, CostModel, Mesh};
use axe_xla::PrimitiveType;
use proptest::prelude::*;

const T: Duration = Duration::from_secs(20);
const NAMES: [&str; 3] = ["the mesh", "the shape", "the plan"];

/// Runs `agree` on `n` ranks, rank `r` passing `inputs(r)`.
fn run(n: usize, inputs: impl Fn(usize) -> Option<Vec<u64>> + Sync) -> Vec<Result<(), ExecError>> {
    run_threads(n, T, |c: ThreadComm| {
        let mine = inputs(c.rank()).map(|h| {
            h.iter()
                .enumerate()
                .map(|(i, &v)| (NAMES[i % 3], v))
                .collect::<Vec<_>>()
        });
        agree(&c, mine.as_deref())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Law: every rank succeeds exactly when every rank passed the same hashes; otherwise every rank
    /// fails with the same message, which names each differing rank (up to four) and input.
    #[test]
    fn every_rank_reaches_the_same_verdict(
        n in 1usize..7,
        base in proptest::collection::vec(any::<u64>(), 3),
        changes in proptest::collection::vec((0usize..7, 0usize..3, any::<u64>()), 0..3),
    ) {
        let inputs = |r: usize| {
            let mut h = base.clone();
            for &(who, which, v) in &changes {
                if who == r {
                    h[which] = v;
                }
            }
            Some(h)
        };
        let expect_ok = (0..n).all(|r| inputs(r) == inputs(0));
        let out = run(n, inputs);
        prop_assert_eq!(out.len(), n);
        if expect_ok {
            prop_assert!(out.iter().all(Result::is_ok), "{:?}", out);
        } else {
            let msgs: Vec<String> = out.iter().map(|r| r.as_ref().unwrap_err().to_string()).collect();
            prop_assert!(msgs.iter().all(|m| m == &msgs[0]), "{:?}", msgs);
            prop_assert!(msgs[0].contains("different arguments"), "{}", msgs[0]);
            for r in 1..n {
                let a = inputs(r).unwrap();
                let b = inputs(0).unwrap();
                for i in 0..3 {
                    let said = format!("rank {r} differs from rank 0 in");
                    if a[i] != b[i] && r <= 4 {
                        prop_assert!(msgs[0].contains(&said), "{}", msgs[0]);
                        prop_assert!(msgs[0].contains(NAMES[i]), "{}", msgs[0]);
                    }
                    if a == b {
                        prop_assert!(!msgs[0].contains(&said), "{}", msgs[0]);
                    }
                }
            }
        }
    }
}

#[test]
fn a_rank_that_could_not_set_up_fails_every_rank() {
    let out = run(4, |r| (r != 2).then(|| vec![1, 2, 3]));
    for r in out {
        let m = r.unwrap_err().to_string();
        assert!(m.contains("rank 2 could not set up"), "{m}");
    }
    let out = run(5, |r| (r % 2 == 0).then(|| vec![1, 2, 3]));
    let m = out[0].as_ref().unwrap_err().to_string();
    assert!(m.contains("ranks 1 and 3 could not set up"), "{m}");
}

#[test]
fn more_inputs_than_slots_still_count() {
    // Inputs past the last slot are folded into it: a difference there is still seen.
    let out = run_threads(2, T, |c: ThreadComm| {
        let mut v: Vec<(&str, u64)> = (0..MAX_INPUTS + 3).map(|i| ("x", i as u64)).collect();
        if c.rank() == 1 {
            v[MAX_INPUTS + 2].1 = 99;
        }
        agree(&c, Some(&v))
    });
    assert!(out.iter().all(Result::is_err), "{out:?}");
}

#[test]
fn a_different_number_or_kind_of_inputs_disagrees() {
    let out = run_threads(2, T, |c: ThreadComm| {
        let v: Vec<(&str, u64)> = if c.rank() == 0 {
            vec![("the mesh", 1)]
        } else {
            vec![("the mesh", 1), ("the shape", 2)]
        };
        agree(&c, Some(&v))
    });
    let m = out[1].as_ref().unwrap_err().to_string();
    assert!(m.contains("kind of run"), "{m}");
}

#[test]
fn the_hash_is_stable() {
    // FNV-1a of "a": the same on every rank and every build.
    let mut h = InputHash::default();
    h.bytes(b"a");
    assert_eq!(h.value(), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(
        InputHash::of_debug("a"),
        InputHash::of_debug(&"a".to_string())
    );
}

#[test]
fn verify_run_refuses_ranks_with_different_shapes_before_moving_bytes() {
    let mesh = Mesh::new(&[("x", 2)]).unwrap();
    let placement = |dims: &[u64], spec: &str| {
        let s = parse_jax(spec, &mesh, dims).unwrap();
        Placement::new(s, MemoryLayout::RowMajor, PrimitiveType::F32).unwrap()
    };
    let out = run_threads(2, T, |c: ThreadComm| {
        let dims: &[u64] = if c.rank() == 0 { &[64, 64] } else { &[64, 128] };
        let (src, dst) = (placement(dims, "P('x')"), placement(dims, "P()"));
        let p = plan(
            &mesh,
            &src.sharding,
            &dst.sharding,
            4,
            &CostModel::default(),
        )
        .unwrap();
        assert!(!run_inputs(&mesh, &p, &src, &dst).is_empty());
        verify_run(&c, &mesh, &p, &src, &dst)
    });
    for r in out {
        let m = r.unwrap_err().to_string();
        assert!(m.contains("rank 1 differs from rank 0 in the shape"), "{m}");
        assert!(m.contains("no data was moved"), "{m}");
    }
}
