#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `axe kernel run|explain|list gemm_reduce_scatter`: the kernel across devices, one thread per device,
//! against the exact product (small integers in bf16), its decisions, and its clear errors.

mod common;

use common::{assert_gemm_exact, folder, gemm_inputs, json_lines, run};

#[test]
fn gemm_reduce_scatter_runs_one_thread_per_device() {
    let dir = folder("kernel-xdev");
    let path = |f: &str| dir.join(f).to_str().unwrap().to_string();
    for (k, devices) in [(64usize, "2"), (96, "3"), (128, "4")] {
        let (m, n) = (128usize, 128usize);
        let (a, b) = gemm_inputs((m, n, k), &path("a.bin"), &path("b.bin"));
        let v = &json_lines(&[
            "kernel",
            "run",
            "gemm_reduce_scatter",
            "--m",
            "128",
            "--n",
            "128",
            "--k",
            &k.to_string(),
            "--devices",
            devices,
            &path("a.bin"),
            &path("b.bin"),
            "-o",
            &path("c.bin"),
            "--json",
        ])[0];
        assert_gemm_exact(&path("c.bin"), &a, &b, (m, n, k));
        assert_eq!(v["devices"].to_string(), devices);
        assert_eq!(v["backend"], "threads");
        let collectives: Vec<&str> = v["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["collective"].as_str().unwrap())
            .collect();
        assert_eq!(collectives[2], "reduce-scatter", "{v}");
    }
}

#[test]
fn explain_shows_the_cross_device_decisions() {
    let v = &json_lines(&[
        "kernel",
        "explain",
        "gemm_reduce_scatter",
        "--m",
        "128",
        "--n",
        "128",
        "--k",
        "64",
        "--devices",
        "2",
        "--target",
        "sm_80",
        "--json",
    ])[0];
    assert_eq!(v["devices"], 2);
    let calls = v["calls"].as_array().unwrap();
    let variant = |op: &str| {
        calls
            .iter()
            .find(|c| c["op"] == op)
            .map(|c| c["variant"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(variant("copy #0"), "copy.reshard");
    assert_eq!(variant("kernel #2"), "kernel.each_device");
    assert_eq!(variant("reduce #3"), "reduce.reduce_scatter");
    assert_eq!(variant("copy #4"), "copy.reshard");
    assert!(calls.iter().any(|c| c["variant"] == "gemm.mma_sync"));
    let tensors: Vec<&str> = v["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["describe"].as_str().unwrap())
        .collect();
    assert!(
        tensors.contains(&"c_part f32[128,128] [Partial()]"),
        "{tensors:?}"
    );
    assert!(
        tensors.contains(&"c_m f32[128,128] S[(2,64,128):(1@gpu_x,128,1)]"),
        "{tensors:?}"
    );
    let (code, text, err) = run(&[
        "kernel",
        "explain",
        "gemm_reduce_scatter",
        "--m",
        "128",
        "--n",
        "128",
        "--k",
        "64",
        "--devices",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains("reduce #3 at devices(x=2) scope → reduce.reduce_scatter")
            && text.contains("not copy.local: 8192 bytes must cross devices"),
        "{text}"
    );
    // emit gives the per-device gemm (M×N×K/P).
    let (code, src, err) = run(&[
        "kernel",
        "emit",
        "gemm_reduce_scatter",
        "--m",
        "128",
        "--n",
        "128",
        "--k",
        "64",
        "--devices",
        "2",
        "--target",
        "sm_80",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(src.contains("mma.sync"), "{src}");
}

#[test]
fn list_names_the_kernel_and_the_cross_device_variants() {
    let v = &json_lines(&["kernel", "list", "--json"])[0];
    let kernel = v["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "gemm_reduce_scatter")
        .unwrap();
    assert_eq!(
        kernel["params"],
        serde_json::json!(["m", "n", "k", "dtype", "devices"])
    );
    let across: Vec<&str> = v["variants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["targets"] == serde_json::json!(["devices"]))
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        across,
        [
            "copy.local",
            "reduce.reduce_scatter",
            "copy.reshard",
            "reduce.all_reduce",
            "reduce.reshard"
        ]
    );
}

#[test]
fn clear_errors() {
    let dir = folder("kernel-xdev-err");
    let path = |f: &str| dir.join(f).to_str().unwrap().to_string();
    gemm_inputs((128, 128, 64), &path("a.bin"), &path("b.bin"));
    let base = [
        "kernel",
        "run",
        "gemm_reduce_scatter",
        "--m",
        "128",
        "--n",
        "128",
    ];
    for (extra, says) in [
        (
            vec!["--k", "64", "--devices", "3"],
            "K must split evenly into 3 slices",
        ),
        (
            vec!["--k", "64", "--devices", "4"],
            "the per-device gemm: gemm 128×128×16",
        ),
        (vec!["--k", "64", "--devices", "0"], "at least one device"),
        (vec!["--k", "64", "--rows", "2"], "not --rows"),
        (vec!["--k", "128", "--devices", "2"], "has 16384 bytes"),
        // One thread a device on --backend cpu, said before A and B are read.
        (vec!["--k", "64", "--devices", "2048"], "at most 256"),
    ] {
        let mut args: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend([path("a.bin"), path("b.bin"), "-o".into(), path("c.bin")]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, err) = run(&args);
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let (code, _, err) = run(&[
        "kernel",
        "run",
        "gemm",
        "--m",
        "128",
        "--n",
        "128",
        "--k",
        "64",
        "--devices",
        "2",
        &path("a.bin"),
        &path("b.bin"),
        "-o",
        &path("c.bin"),
    ]);
    assert_ne!(code, 0);
    assert!(
        err.contains("gemm takes --m and --n and --k and --dtype, not --devices"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "kernel",
        "run",
        "gemm",
        "--m",
        "128",
        "--n",
        "128",
        "--k",
        "64",
        "--backend",
        "mpi",
        &path("a.bin"),
        &path("b.bin"),
        "-o",
        &path("c.bin"),
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("other kernels run on cpu or cuda"), "{err}");
    let (code, _, err) = run(&[
        "kernel",
        "run",
        "gemm_reduce_scatter",
        "--m",
        "128",
        "--n",
        "128",
        "--k",
        "64",
        "--devices",
        "2",
        &path("a.bin"),
        "-o",
        &path("c.bin"),
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("takes 2 input files (a, b); 1 given"), "{err}");
}
