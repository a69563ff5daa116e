#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `axe kernel` with `--target trn1`: the gemm emitted as NKI-style text, explained, and run on the
//! interpreter (TensorE matmuls by their definition).

mod common;

use common::{assert_gemm_exact, gemm_inputs, json_lines, run};

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
    let (a, b) = gemm_inputs((m, n, k), &path("a.bin"), &path("b.bin"));
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
    assert_gemm_exact(&path("c.bin"), &a, &b, (m, n, k));
}

#[test]
fn what_trn1_cannot_run_is_named() {
    for (args, says) in [
        (
            &["kernel", "explain", "softmax", "--rows", "4", "--cols", "64", "--target", "trn1"][..],
            "registers and shared memory, which trn1 has not: it is built for cpu, sm_80 and sm_90a, not trn1",
        ),
        // Even one CTA's worth of relayout (which copy.dma could lower) is refused, as `kernel list`
        // says: the kernel is built for the thread model.
        (
            &["kernel", "explain", "relayout", "--src", "f32[8,8]{1,0}", "--dst", "{0,1}", "--target", "trn1"],
            "relayout spreads its elements over a grid of CTAs and threads, which trn1 (one program on one NeuronCore) has not: it is built for cpu, sm_80 and sm_90a, not trn1",
        ),
        (
            &["kernel", "explain", "gemm", "--m", "131", "--n", "8", "--k", "8", "--target", "trn1"],
            "M is split over TensorE's partitions by its largest divisor of at most 128, and 131 has none but 1",
        ),
        (
            &["kernel", "explain", "gemm", "--m", "8", "--n", "8", "--k", "257", "--target", "trn1"],
            "K is split",
        ),
    ] {
        let (code, _, err) = run(args);
        assert_eq!(code, 1, "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // M = 262 = 2·131 splits as 131 × 2.
    let (code, _, err) = run(&[
        "kernel", "explain", "gemm", "--m", "262", "--n", "8", "--k", "8", "--target", "trn1",
    ]);
    assert_eq!(code, 0, "{err}");
}
