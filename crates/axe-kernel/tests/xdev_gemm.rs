#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The shipped `gemm_reduce_scatter`, one thread per device: device 0's gathered C and every device's
//! rows of C against the f64 reference within the f32 accumulation bound; its decisions; the shapes it
//! refuses.

mod numbers;
use std::time::Duration;

use axe_kernel::gemm_rs::gemm_reduce_scatter;
use axe_kernel::{run_devices_threads, xdev_lower, DType, RunLimits, Target};
use numbers::{decode_f32, encode, values};

fn check(m: u64, n: u64, k: u64, d: DType, devices: u64) -> Vec<String> {
    let g = gemm_reduce_scatter(m, n, k, d, devices, Target::Cpu).unwrap();
    let p = xdev_lower(&g.kernel, Target::Cpu).unwrap();
    let a = values((m * k) as usize, 11, d);
    let b = values((n * k) as usize, 12, d);
    let out = run_devices_threads(
        &p,
        vec![vec![(g.a, encode(&a, d)), (g.b, encode(&b, d))]],
        RunLimits::default(),
        Duration::from_secs(120),
    )
    .unwrap();
    let c = decode_f32(&out[0][g.c]);
    numbers::assert_gemm_close(&c, &a, &b, m, n, k);
    // Each device's rows of the scattered C are its rows of the gathered one, bit for bit.
    let rows = m.div_ceil(devices) as usize;
    for (dev, bufs) in out.iter().enumerate() {
        let mine = decode_f32(&bufs[g.c_m]);
        let start = (dev * rows).min(m as usize) * n as usize;
        let end = ((dev + 1) * rows).min(m as usize) * n as usize;
        assert_eq!(&mine[..end - start], &c[start..end], "device {dev}'s rows");
        if dev > 0 {
            assert!(bufs[g.c].is_empty(), "only device 0 holds the gathered C");
        }
    }
    p.decisions.iter().map(|d| d.variant.clone()).collect()
}

#[test]
fn gemm_reduce_scatter_on_two_devices_matches_the_reference() {
    let v = check(128, 128, 64, DType::BF16, 2);
    assert_eq!(
        v[..3],
        ["copy.reshard", "copy.reshard", "kernel.each_device"]
    );
    assert!(v.contains(&"gemm.mma_sync".to_string()), "{v:?}");
    let n = v.len();
    assert_eq!(v[n - 2..], ["reduce.reduce_scatter", "copy.reshard"]);
}

#[test]
fn gemm_reduce_scatter_on_three_devices_scatters_uneven_rows() {
    // 128 rows over 3 devices: 43, 43, 42 (XLA's rule; the last shard padded).
    check(128, 128, 96, DType::F16, 3);
}

#[test]
fn gemm_reduce_scatter_on_one_and_four_devices() {
    check(128, 128, 32, DType::BF16, 1);
    check(128, 128, 128, DType::BF16, 4);
}

#[test]
fn the_decisions_say_what_moves() {
    let g = gemm_reduce_scatter(128, 128, 64, DType::BF16, 2, Target::Sm80).unwrap();
    let p = xdev_lower(&g.kernel, Target::Sm80).unwrap();
    let d = &p.decisions;
    assert_eq!(d[2].op, "kernel #2");
    assert!(
        d[2].why.contains("each of the 2 devices runs gemm")
            && d[2].why.contains("a_k, b_k, c_part"),
        "{}",
        d[2].why
    );
    assert!(d[3].op.starts_with("gemm"), "{}", d[3].op);
    let rs = d.iter().find(|d| d.op == "reduce #3").unwrap();
    assert_eq!(rs.variant, "reduce.reduce_scatter");
    assert!(
        rs.why.contains("sum over device axis x") && rs.why.contains("65536 bytes across devices"),
        "{}",
        rs.why
    );
}

#[test]
fn shapes_it_refuses() {
    let e = |m, n, k, p| {
        gemm_reduce_scatter(m, n, k, DType::BF16, p, Target::Cpu)
            .unwrap_err()
            .to_string()
    };
    assert!(e(128, 128, 64, 0).contains("at least one device"));
    assert!(e(128, 128, 32 << 20, 1 << 20).contains("at most 16384 devices"));
    assert!(
        e(128, 128, 96, 2).contains("the per-device gemm"),
        "{}",
        e(128, 128, 96, 2)
    );
    assert!(e(128, 128, 100, 3).contains("K must split evenly into 3 slices"));
    assert!(e(100, 128, 64, 2).contains("multiples of 128"));
}
