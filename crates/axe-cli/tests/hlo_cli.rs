#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `axe hlo` as a user runs it.

mod common;

use common::run;
use serde_json::Value;

fn module_path() -> String {
    format!(
        "{}/../axe-xla/tests/modules/xla_printed.hlo",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn fmt_reprints_an_xla_module_byte_for_byte() {
    let (code, out, err) = run(&["hlo", "fmt", &module_path()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, std::fs::read_to_string(module_path()).unwrap());
}

#[test]
fn stats_report() {
    let (code, out, err) = run(&["hlo", "stats", "--json", &module_path()]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["module"], "jit_f");
    assert_eq!(v["instructions"], 12);
    // f32[3,5]{1,0:T(2,2)} pads 15 elements to 24: 36 bytes of padding, the only padded tensor.
    assert_eq!(v["top_padding"][0]["padding_bytes"], 36);
    assert_eq!(v["top_padding"][0]["instruction"], "%Arg_0.1");
    let relayouts: Vec<&str> = v["relayouts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["instruction"].as_str().unwrap())
        .collect();
    assert_eq!(relayouts, vec!["%fusion", "%copy"]);
    assert_eq!(v["relayouts"][1]["from"], "f32[3,5]{1,0}");
    assert_eq!(v["relayouts"][1]["to"], "f32[3,5]{0,1}");
    assert!(v["memory_spaces"]["0"]["physical_bytes"].as_i64().unwrap() > 0);
    let (code, out, _) = run(&["hlo", "stats", &module_path()]);
    assert_eq!(code, 0);
    assert!(
        out.contains("relayouts") && out.contains("per computation"),
        "{out}"
    );
}

#[test]
fn synth_then_stats_and_errors() {
    let dir = common::folder("hlo-cli");
    let path = dir.join("s.hlo").to_string_lossy().to_string();
    let (code, _, err) = run(&["hlo", "synth", "--instructions", "500", "--output", &path]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = run(&["hlo", "stats", "--json", &path]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["instructions"].as_u64().unwrap() >= 500);
    assert!(
        v["memory_spaces"].get("1").is_some(),
        "synthetic modules use S(1)"
    );
    let bad = dir.join("bad.hlo").to_string_lossy().to_string();
    std::fs::write(
        &bad,
        "HloModule m\n\nENTRY %e {\n  %p = f32[2]{0} parameter(0) junk\n}\n",
    )
    .unwrap();
    let (code, _, err) = run(&["hlo", "stats", &bad]);
    assert_eq!(code, 1);
    assert!(err.contains("bad.hlo:5:1:") && err.contains('^'), "{err}");
}

#[test]
fn shards_per_device() {
    let (code, out, _) = run(&[
        "hlo",
        "shards",
        "--json",
        "{devices=[4]<=[4]}",
        "--shape",
        "f32[5]",
    ]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    let regions: Vec<Value> = v["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["region"][0].clone())
        .collect();
    assert_eq!(
        regions,
        vec![
            serde_json::json!([0, 2]),
            serde_json::json!([2, 4]),
            serde_json::json!([4, 5]),
            serde_json::json!([5, 5])
        ]
    );
}

#[test]
fn bench_hlo_reports_speed_and_memory() {
    let (code, out, err) = run(&[
        "bench",
        "hlo",
        "--json",
        "--instructions",
        "2000",
        "--runs",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["mb_per_second"].as_f64().unwrap() > 0.0);
    assert!(v["memcpy_mb_per_second"].as_f64().unwrap() > 0.0);
    // The commands as a user runs them: three processes each (the fewest rounds), with their peak memory.
    assert_eq!(v["end_to_end_rounds"], 3);
    for command in ["stats", "fmt"] {
        let secs = v[format!("{command}_end_to_end_seconds")].as_f64().unwrap();
        assert!(secs > 0.0, "{command}: {secs}");
    }
    let peak = v["stats_peak_bytes"].as_u64().unwrap();
    assert!(
        peak >= v["bytes"].as_u64().unwrap(),
        "a process holds at least the file: {peak}"
    );
    assert!(v["stats_and_fmt_peak_bytes"].as_u64().unwrap() >= peak);
}

/// A JAX program after XLA's SPMD partitioner: its shapes are per device already, and are not divided
/// again; `--shapes` overrides the decision and the report says which reading it used.
#[test]
fn stats_per_device_bytes_of_a_partitioned_module() {
    let path = format!(
        "{}/../axe-xla/tests/hlo_memory/tuple_out.after.hlo",
        env!("CARGO_MANIFEST_DIR")
    );
    let (code, out, err) = run(&["hlo", "stats", "--json", &path]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let p = &v["per_device"];
    // XLA's memory_analysis(): 1024 bytes of arguments, 2588 of outputs (3 arrays and the tuple's table).
    assert_eq!(p["shapes"], "per-device");
    assert_eq!(
        (p["argument_bytes"].as_i64(), p["output_bytes"].as_i64()),
        (Some(1024), Some(2588))
    );
    assert!(p["shapes_reason"]
        .as_str()
        .unwrap()
        .contains("is_scheduled"));
    assert_eq!(p["readings"]["per-device"]["argument_bytes"], 1024);
    assert_eq!(p["readings"]["global"]["argument_bytes"], 128);
    let (code, out, _) = run(&["hlo", "stats", "--json", "--shapes", "global", &path]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["per_device"]["shapes"], "global");
    assert_eq!(v["per_device"]["shapes_reason"], "given");
    assert_eq!(v["per_device"]["argument_bytes"], 128);
    let (code, out, _) = run(&["hlo", "stats", &path]);
    assert_eq!(code, 0);
    assert!(out.contains("shapes read per-device"), "{out}");
    assert!(out.contains("arguments 1.0 KiB"), "{out}");
    let (code, _, err) = run(&["hlo", "stats", "--shapes", "local", &path]);
    assert_ne!(code, 0);
    assert!(err.contains("per-device"), "{err}");
}

/// `--one-computation`: a synthetic module whose entry is one computation of all the instructions.
#[test]
fn bench_hlo_one_computation() {
    let (code, out, err) = run(&[
        "bench",
        "hlo",
        "--json",
        "--one-computation",
        "--instructions",
        "3000",
        "--runs",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["instructions"], 3000);
    assert!(v["stats_end_to_end_mb_per_second"].as_f64().unwrap() > 0.0);
    // About 150 bytes a line, as a large model's entry after fusion.
    let bytes = v["bytes"].as_u64().unwrap();
    assert!((3000 * 120..3000 * 200).contains(&bytes), "{bytes}");
}

/// `axe hlo stats` on a module whose entry is one computation of 2 MB (read in pieces cut inside it when
/// two threads run): the same report as one thread gives, and for a fault late in it, the same error.
#[test]
fn one_large_computation_reads_alike_on_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let good = axe_xla::hlo::synth::synth_one_computation(12_000, 5);
    assert!(good.len() > 1 << 21, "{}", good.len());
    // A late operand that names no instruction.
    let at = good.len() - 3000 + good[good.len() - 3000..].find("(%").unwrap();
    let bad = format!("{}(%nowhere{}", &good[..at], &good[at + 1..]);
    for (name, text, ok) in [("good.hlo", &good, true), ("bad.hlo", &bad, false)] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let runs: Vec<_> = ["1", "2"]
            .iter()
            .map(|threads| {
                let out = std::process::Command::new(env!("CARGO_BIN_EXE_axe"))
                    .args(["hlo", "stats", "--json", path.to_str().unwrap()])
                    .env("RAYON_NUM_THREADS", threads)
                    .output()
                    .unwrap();
                (out.status.success(), out.stdout, out.stderr)
            })
            .collect();
        assert_eq!(runs[0].0, ok, "{}", String::from_utf8_lossy(&runs[0].2));
        assert_eq!(runs[0], runs[1], "{name}");
        if !ok {
            let err = format!(
                "{}{}",
                String::from_utf8_lossy(&runs[0].1),
                String::from_utf8_lossy(&runs[0].2)
            );
            assert!(err.contains("nowhere"), "{err}");
        }
    }
}

/// `hlo synth --one-computation` writes the module `bench hlo --one-computation` reads: one entry
/// computation holding every instruction, as the library writes it.
#[test]
fn synth_writes_one_computation_on_request() {
    let (code, out, err) = run(&[
        "hlo",
        "synth",
        "--one-computation",
        "--instructions",
        "300",
        "--seed",
        "4",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, axe_xla::hlo::synth::synth_one_computation(300, 4));
    let (code, many, _) = run(&["hlo", "synth", "--instructions", "300", "--seed", "4"]);
    assert_eq!(code, 0);
    assert_ne!(many, out);
}

/// A module that is not UTF-8 is refused before it is read, saying where the first bad byte is, as
/// `line:column` (in characters) with the line and a caret (the text is checked with SIMD instructions
/// and, when that fails, again for the place).
#[test]
fn a_module_that_is_not_utf8_says_where() {
    let dir = tempfile::tempdir().unwrap();
    for (bytes, at) in [
        (&b"HloModule m\n\xff\n"[..], ":2:1: not UTF-8 text (byte 0xff starts no valid character)\n  \u{fffd}\n  ^"),
        (
            &b"HloModule m\n// caf\xc3\xa9 \xe2\x82\n"[..],
            ":2:9: not UTF-8 text (byte 0xe2 starts no valid character)\n  // caf\u{e9} \u{fffd}\n          ^",
        ),
        (&b"HloModule m\n\x80"[..], "byte 0x80 follows no character's first byte"),
    ] {
        let path = dir.path().join("bad.hlo");
        std::fs::write(&path, bytes).unwrap();
        for verb in ["stats", "fmt"] {
            let (code, out, err) = run(&["hlo", verb, path.to_str().unwrap()]);
            assert_eq!(code, 1, "{verb}: {err}");
            assert!(out.is_empty(), "{verb}: {out}");
            assert!(
                err.contains("not UTF-8 text") && err.contains(at),
                "{verb}: {err}"
            );
        }
    }
}

#[test]
fn the_caret_copies_tabs_and_stats_skip_unbounded_arrays() {
    let dir = common::folder("hlo-review");
    // A tab-indented line: the caret line keeps the tab, so it lands under `negat` when expanded.
    let tab = dir.join("tab.hlo");
    std::fs::write(
        &tab,
        "HloModule m\nENTRY e {\n\tp = f32[4]{0} parameter(0)\n\tROOT r = f32[4]{0} negat(p)\n}\n",
    )
    .unwrap();
    let (code, _, err) = run(&["hlo", "fmt", tab.to_str().unwrap()]);
    assert_eq!(code, 1);
    let lines: Vec<String> = err.lines().map(|l| l.replace('\t', "        ")).collect();
    let col = lines[2].find('^').unwrap();
    assert_eq!(&lines[1][col..col + 5], "negat", "{err}");
    // An unbounded dynamic array has no size: the report skips it and counts the rest.
    let dyn_hlo = dir.join("dyn.hlo");
    std::fs::write(
        &dyn_hlo,
        "HloModule m\nENTRY e {\n  p = f32[?,3]{1,0} parameter(0)\n  q = f32[<=8,3]{1,0:T(8,128)} parameter(1)\n  ROOT t = (f32[?,3]{1,0}, f32[<=8,3]{1,0:T(8,128)}) tuple(p, q)\n}\n",
    )
    .unwrap();
    let (code, out, err) = run(&["hlo", "stats", dyn_hlo.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("q = f32[<=8,3]{1,0:T(8,128)}"), "{out}");
    // ... and says how many it skipped: `p` once (the tuple only forwards it).
    assert!(
        out.contains(
            "\n  skipped: 1 array held in memory with an unbounded dynamic dimension (`?`)"
        ),
        "{out}"
    );
    let (code, out, err) = run(&["hlo", "stats", "--json", dyn_hlo.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["unbounded_skipped"], 1, "{out}");
    assert_eq!(v["materialized"]["arrays"], 1, "{out}");
    // None skipped: no line, and 0 in JSON.
    let (_, out, _) = run(&["hlo", "stats", &module_path()]);
    assert!(!out.contains("skipped"), "{out}");
    let (_, out, _) = run(&["hlo", "stats", "--json", &module_path()]);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["unbounded_skipped"],
        0
    );
}
