#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `axe relayout` on files, as a user runs it.

mod common;

use common::run;

#[test]
fn npy_to_tiled_bin_and_back() {
    let dir = common::folder("relayout-cli");
    let p = |n: &str| dir.join(n).to_string_lossy().to_string();
    // A 3×5 u8 .npy written by hand: 15 bytes 0..15.
    let npy = common::npy("|u1", "(3, 5)", &(0u8..15).collect::<Vec<u8>>());
    std::fs::write(p("a.npy"), &npy).unwrap();
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        "u8[3,5]",
        "--to",
        "{1,0:T(2,2)}",
        &p("a.npy"),
        &p("t.bin"),
        "--explain",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("plan:"), "{err}");
    let tiled = std::fs::read(p("t.bin")).unwrap();
    assert_eq!(
        tiled,
        vec![0, 1, 5, 6, 2, 3, 7, 8, 4, 0, 9, 0, 10, 11, 0, 0, 12, 13, 0, 0, 14, 0, 0, 0]
    );
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        "u8[3,5]{1,0:T(2,2)}",
        "--to",
        "{1,0}",
        &p("t.bin"),
        &p("b.npy"),
    ]);
    assert_eq!(code, 0, "{err}");
    let back = std::fs::read(p("b.npy")).unwrap();
    assert_eq!(&back[back.len() - 15..], &(0u8..15).collect::<Vec<_>>()[..]);
    assert!(String::from_utf8_lossy(&back).contains("'shape': (3, 5"));
    // Errors: a tiled layout cannot go to .npy; a short input is refused; nothing is left behind.
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        "u8[3,5]",
        "--to",
        "{1,0:T(2,2)}",
        &p("a.npy"),
        &p("x.npy"),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains(".bin"), "{err}");
    assert!(!dir.join("x.npy").exists());
    std::fs::write(p("short.bin"), [1u8, 2, 3]).unwrap();
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        "u8[3,5]",
        "--to",
        "{0,1}",
        &p("short.bin"),
        &p("y.bin"),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("3 bytes"), "{err}");
}

#[test]
fn bench_relayout_runs_one_case() {
    let (code, out, err) = run(&[
        "bench", "relayout", "--json", "--only", "256", "--runs", "1", "--rounds", "3",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert!(
        v["gb_per_second"].as_f64().unwrap() > 0.0
            && v["memcpy_gb_per_second"].as_f64().unwrap() > 0.0
    );
    // Three rounds, reported by their median ratio.
    let mut ratios: Vec<f64> = v["ratios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_f64().unwrap())
        .collect();
    ratios.sort_by(f64::total_cmp);
    assert_eq!(ratios.len(), 3, "{v}");
    assert_eq!(v["ratio"].as_f64().unwrap(), ratios[1], "{v}");
    assert!(v["plan"].as_str().unwrap().contains("kernels"), "{v}");
    let (code, _, err) = run(&["bench", "relayout", "--isa", "mmx", "--only", "256"]);
    assert_ne!(code, 0);
    assert!(err.contains("unknown instruction set"), "{err}");
}

/// A long padded dimension is measured in the pieces `axe relayout` moves it in: its padding alone
/// zeroed (no pass over the whole destination), the plan saying so.
#[test]
fn bench_relayout_moves_long_padded_dimensions_in_pieces() {
    let case = "u8[200003]{0}->{0:T(1024)}";
    let (code, out, err) = run(&["bench", "relayout", "--json", "--runs", "1", "--case", case]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let plan = v["plan"].as_str().unwrap();
    assert!(plan.contains("pieces"), "{plan}");
    assert!(!plan.contains("zero the whole destination"), "{plan}");
}

/// `--case` measures the user's own relayout instead of the standard cases; a malformed case or
/// shape is refused with what was wrong.
#[test]
fn bench_relayout_measures_a_given_case() {
    let case = "f32[64,48]{1,0}->{0,1}";
    let (code, out, err) = run(&["bench", "relayout", "--json", "--runs", "1", "--case", case]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(v["case"], case, "{v}");
    assert_eq!(v["source"], "f32[64,48]{1,0}", "{v}");
    assert_eq!(v["to"], "{0,1}", "{v}");
    assert!(v["plan"].as_str().unwrap().contains("transpose"), "{v}");
    let (code, _, err) = run(&["bench", "relayout", "--case", "f32[64,48]{1,0}"]);
    assert_ne!(code, 0);
    assert!(err.contains("expected SHAPE->LAYOUT"), "{err}");
    let (code, _, err) = run(&["bench", "relayout", "--case", "f33[64]->{0}"]);
    assert_ne!(code, 0);
    assert!(err.contains("f33[64]"), "{err}");
    // No elements: nothing to time.
    let (code, out, err) = run(&["bench", "relayout", "--case", "f32[0,5]{1,0}->{0,1}"]);
    assert_ne!(code, 0);
    assert!(err.contains("no elements"), "{err}");
    // A mistyped case is said before any case is timed.
    let (code, out2, err) = run(&[
        "bench",
        "relayout",
        "--case",
        case,
        "--case",
        "f32[4]{0}->{0,1}",
    ]);
    assert_ne!(code, 0);
    assert!(
        err.contains("f32[4]{0}->{0,1}") && err.contains("rank 1"),
        "{err}"
    );
    assert!(out.is_empty() && out2.is_empty(), "{out}{out2}");
    // More than any machine's memory: refused before anything is allocated.
    let (code, _, err) = run(&[
        "bench",
        "relayout",
        "--case",
        "f32[1000000,1000000,1000]{2,1,0}->{0,1,2}",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("are more than"), "{err}");
}

#[test]
fn threads_are_capped_with_a_clear_error() {
    for n in ["100000", "1025", "lots"] {
        let (code, _, err) = run(&[
            "relayout",
            "--shape",
            "u8[4]",
            "--to",
            "{0}",
            "--threads",
            n,
            "in.bin",
            "out.bin",
        ]);
        assert_eq!(code, 2, "{n}: {err}");
        assert!(err.contains("--threads"), "{n}: {err}");
    }
    let (_, _, err) = run(&[
        "relayout",
        "--shape",
        "u8[4]",
        "--to",
        "{0}",
        "--threads",
        "100000",
        "a",
        "b",
    ]);
    assert!(err.contains("1024"), "{err}");
}

#[test]
fn an_empty_tensor_relayouts_to_an_empty_output() {
    let dir = common::folder("relayout-empty");
    let p = |n: &str| dir.join(n).to_string_lossy().to_string();
    std::fs::write(p("z.bin"), b"").unwrap();
    for to in ["{0,1}", "{1,0:T(8,128)}", "f32[0,5]{1,0}"] {
        let (code, _, err) = run(&[
            "relayout",
            "--shape",
            "f32[0,5]",
            "--to",
            to,
            &p("z.bin"),
            &p("o.bin"),
        ]);
        assert_eq!(code, 0, "{to}: {err}");
        assert_eq!(std::fs::read(p("o.bin")).unwrap(), b"", "{to}: no bytes");
    }
    // A .npy output holds the header and no data.
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        "f32[0,5]",
        "--to",
        "{1,0}",
        &p("z.bin"),
        &p("o.npy"),
    ]);
    assert_eq!(code, 0, "{err}");
    let npy = std::fs::read(p("o.npy")).unwrap();
    let text = String::from_utf8_lossy(&npy);
    assert!(text.contains("'shape': (0, 5, )"), "{text}");
    assert!(npy.ends_with(b"\n"), "nothing after the header");
}

/// Errors say what is wrong, and a tiny relayout's rate reads as MB/s rather than 0.00 GB/s.
#[test]
fn errors_say_why_and_small_rates_read() {
    let dir = common::folder("relayout-why");
    let p = |n: &str| dir.join(n).to_string_lossy().to_string();
    std::fs::write(p("in.bin"), [7u8; 24]).unwrap();
    let relayout = |to: &str, out: &str| {
        run(&[
            "relayout",
            "--shape",
            "f32[2,3]",
            "--to",
            to,
            &p("in.bin"),
            out,
        ])
    };
    let (code, _, err) = relayout("f32[3,2]{1,0}", &p("o.bin"));
    assert_ne!(code, 0);
    assert!(err.contains("its dimensions are [3,2], not [2,3]"), "{err}");
    let (code, _, err) = relayout("bf16[2,3]{1,0}", &p("o.bin"));
    assert_ne!(code, 0);
    assert!(err.contains("its element type is bf16, not f32"), "{err}");
    let (code, _, err) = relayout("{0,1}", "");
    assert_ne!(code, 0);
    assert!(err.contains("\"\" names no file to write"), "{err}");
    let (code, _, err) = relayout("{0,1}", &p("o.bin"));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(" MB/s") || err.contains(" GB/s"), "{err}");
    assert!(!err.contains(" 0.00 GB/s"), "{err}");
}

/// Output streamed into a pipe whose reader has gone (`-o /dev/stdout | head -c 1`) ends quietly with
/// status 141, as a closed stdout does, not with an error.
#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let dir = common::folder("relayout-pipe");
    let input = dir.join("a.npy");
    // 4 MiB out: more than a pipe holds, so the writer meets the closed end.
    let data: Vec<u8> = (0..1u32 << 20).flat_map(|i| i.to_le_bytes()).collect();
    std::fs::write(&input, common::npy("<u4", "(1024, 1024)", &data)).unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("axe"))
        .args(["relayout", "--shape", "u32[1024,1024]", "--to", "{0,1}"])
        .arg(&input)
        .arg("/dev/stdout")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 1];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{err}");
    assert!(!err.contains("error"), "{err}");
}
