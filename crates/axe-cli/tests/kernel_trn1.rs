#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `axe kernel` with `--target trn1`: the gemm emitted as NKI-style text, explained, and run on the
//! interpreter (TensorE matmuls by their definition).

mod common;

use common::{json_lines, run};

#[test]
fn emit_gemm_for_trn1_prints_nki() {
    let (code, out, err) = run(&[
        "kernel", "emit", "gemm", "--m", "256", "--n", "1024", "--k", "256", "--target", "trn1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("@nki.jit\ndef gemm_trn1(a, b, c):"), "{out}");
    assert!(out.contains("+= nisa.nc_matmul(a_sbuf[0:128, "), "{out}");
    assert!(
        out.contains("gemm.tensore — instruction M×N×K = 128×512×128"),
        "{out}"
    );
    let v = &json_lines(&[
        "kernel", "explain", "gemm", "--m", "64", "--n", "96", "--k", "200", "--target", "trn1",
        "--json",
    ])[0];
    let gemm = v["calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["variant"] == "gemm.tensore")
        .unwrap();
    // K = 200 = 2 × 100 partitions, M = 64, N = 96.
    assert!(
        gemm["why"].as_str().unwrap().contains("M×N×K = 64×96×100"),
        "{gemm}"
    );
    let v = &json_lines(&["kernel", "list", "--json"])[0];
    assert_eq!(
        v["kernels"][2]["targets"],
        serde_json::json!(["cpu", "sm_80", "sm_90a", "trn1"])
    );
    // compile is NVRTC's: no trn1.
    let (code, _, err) = run(&[
        "kernel", "compile", "gemm", "--m", "8", "--n", "8", "--k", "8", "--target", "trn1",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("compile needs a GPU target"), "{err}");
}

#[test]
fn run_gemm_for_trn1_on_the_interpreter() {
    let dir = tempfile::tempdir().unwrap();
    let path = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (m, n, k) = (64usize, 96usize, 200usize);
    let val = |i: usize, seed: usize| ((i * 7 + seed) % 5) as f32 - 2.0;
    let bf16 = |v: f32| ((v.to_bits() >> 16) as u16).to_le_bytes();
    let a: Vec<f32> = (0..m * k).map(|i| val(i, 1)).collect();
    let b: Vec<f32> = (0..n * k).map(|i| val(i, 3)).collect();
    let write = |name: &str, x: &[f32]| {
        std::fs::write(
            path(name),
            x.iter().flat_map(|&v| bf16(v)).collect::<Vec<u8>>(),
        )
        .unwrap()
    };
    write("a.bin", &a);
    write("b.bin", &b);
    let (code, _, err) = run(&[
        "kernel",
        "run",
        "gemm",
        "--m",
        "64",
        "--n",
        "96",
        "--k",
        "200",
        "--target",
        "trn1",
        &path("a.bin"),
        &path("b.bin"),
        "-o",
        &path("c.bin"),
    ]);
    assert_eq!(code, 0, "{err}");
    let c: Vec<f32> = std::fs::read(path("c.bin"))
        .unwrap()
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for i in 0..m {
        for j in 0..n {
            let want: f32 = (0..k).map(|t| a[i * k + t] * b[j * k + t]).sum();
            assert_eq!(c[i * n + j], want, "C[{i}, {j}]");
        }
    }
}
