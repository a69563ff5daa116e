//! The bench runs every case on the threads backend and agrees on its figures across ranks.

#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::time::Duration;

use axe_reshard::{bench_reshard, bench_threads, default_planner, run_threads, ThreadComm};

#[test]
fn bench_measures_every_case_on_two_and_four_ranks() {
    for (n, perm) in [
        (2, "maximal 0->1 permutation"),
        (4, "S(ab)->S(ba) permutation"),
    ] {
        let out = run_threads(n, Duration::from_secs(60), |c: ThreadComm| {
            bench_reshard(&c, &default_planner, 4096, 3)
        });
        let first = out[0].clone().unwrap();
        let names: Vec<&str> = first.iter().map(|c| c.case.as_str()).collect();
        assert_eq!(
            names,
            [
                "S0->S1 all-to-all",
                "S0->S1 T(8,128)->row-major all-to-all",
                "S0->R all-gather",
                "P->S0 reduce-scatter",
                perm
            ]
        );
        for c in &first {
            assert!(c.bytes > 0 && c.reshard_s > 0.0 && c.raw_s > 0.0, "{c:?}");
            assert!((c.ratio - c.raw_s / c.reshard_s).abs() < 1e-12);
        }
        // Every rank reports the slowest rank's medians: the same figures.
        for r in &out {
            assert_eq!(r.as_ref().unwrap(), &first);
        }
    }
}

/// One rank and an odd count of ranks run every case they can.
#[test]
fn bench_runs_on_one_and_three_ranks() {
    for n in [1usize, 3] {
        let out = bench_threads(n, &default_planner, 1024, 1, Duration::from_secs(60)).unwrap();
        let names: Vec<&str> = out.iter().map(|c| c.case.as_str()).collect();
        assert_eq!(names.len(), if n == 1 { 4 } else { 5 }, "{names:?}");
        assert!(
            out.iter().all(|c| c.reshard_s > 0.0 && c.ratio > 0.0),
            "{out:?}"
        );
    }
}

/// The figures at a realistic size (run by hand: `cargo test --release -p axe-reshard --test bench --
/// --ignored --nocapture`); timings are printed, never asserted.
#[test]
#[ignore]
fn bench_figures_on_threads() {
    for n in [2, 4] {
        let out = bench_threads(n, &default_planner, 16 << 20, 7, Duration::from_secs(120));
        for c in out.as_ref().unwrap() {
            println!(
                "{n} ranks  {:28} {:>10} B  reshard {:8.3} ms  raw {:8.3} ms  ratio {:.2}",
                c.case,
                c.bytes,
                c.reshard_s * 1e3,
                c.raw_s * 1e3,
                c.ratio
            );
        }
    }
}
