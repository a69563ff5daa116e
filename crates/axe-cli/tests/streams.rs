#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The CLI's streams: batches answered line by line, bad stdin reported, stdout failures handled, answers
//! labelled with their input, and arguments that would make unbounded work refused.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use common::run;

fn axe() -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("axe"));
    c.env("RUST_BACKTRACE", "0");
    c
}

/// Each verb that reads `-` answers a line before stdin closes.
#[test]
fn batches_are_answered_line_by_line() {
    let cases: [(&[&str], &str); 4] = [
        (&["layout", "show", "--json", "-"], "S[4:1]\n"),
        (
            &["layout", "equiv", "--json", "-", "-"],
            "S[4:1] ; S[(2,2)]\n",
        ),
        (&["xla", "size", "--json", "-"], "f32[3,5]{1,0:T(2,2)}\n"),
        (&["explain", "--json", "-"], "f32[3,5]\n"),
    ];
    for (args, line) in cases {
        let mut child = axe()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        for _ in 0..3 {
            stdin.write_all(line.as_bytes()).unwrap();
            stdin.flush().unwrap();
            let mut answer = String::new();
            out.read_line(&mut answer).unwrap(); // blocks until answered: stdin is still open
            let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
            assert!(v.get("error").is_none(), "{args:?}: {answer}");
        }
        drop(stdin);
        assert!(child.wait().unwrap().success(), "{args:?}");
    }
}

#[test]
fn bad_stdin_is_an_error() {
    let out = axe()
        .args(["layout", "show", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin
                .take()
                .unwrap()
                .write_all(b"S[4:1]\n\xff\xfe\nS[2:1]\n")?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("S[4:1]") && stdout.contains("S[2:1]"),
        "{stdout}"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("line 2 is not UTF-8"), "{stderr}");

    let dir = std::fs::File::open("/").unwrap();
    let out = axe()
        .args(["layout", "show", "-"])
        .stdin(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reading stdin"));
}

#[test]
fn stdout_failures_are_handled() {
    // A full device: an error and status 1, not a panic.
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    if let Ok(full) = full {
        let out = axe()
            .args(["hlo", "synth", "--instructions", "200"])
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("writing to stdout"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // A closed pipe: quiet.
    let mut child = axe()
        .args(["xla", "index", "f32[200,200]", "--all"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.is_empty(), "{err}");
    assert_ne!(out.status.code(), Some(101));
}

#[test]
fn several_inputs_are_labelled() {
    let (code, out, _) = run(&["layout", "show", "S[4:1]", "S[(2,2)]"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("==> S[4:1] <==\n"), "{out}");
    assert!(out.contains("\n==> S[(2,2)] <==\n"), "{out}");
    let (_, out, _) = run(&["layout", "show", "S[4:1]"]);
    assert!(!out.contains("==>"), "{out}");
    // An answer that repeats its input (already canonical) is labelled too, so answers never run
    // together.
    let (code, out, _) = run(&["cute", "coalesce", "(2,(1,6)):(1,(6,2))", "(4,3):(3,1)"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "==> (2,(1,6)):(1,(6,2)) <==\n12:1\n\n==> (4,3):(3,1) <==\n(4,3):(3,1)\n"
    );
    let (code, _, err) = run(&["xla", "size", "f32[2]", "f33[2]"]);
    assert_eq!(code, 1);
    assert!(err.starts_with("error: f33[2]: "), "{err}");
    let (_, out, _) = run(&["xla", "size", "--json", "f32[2]", "f32[3]"]);
    let v: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v[1]["input"], "f32[3]");
    // explain takes several inputs too.
    let (code, out, _) = run(&["explain", "--color", "never", "f32[2,2]", "S[4:1]"]);
    assert_eq!(code, 0);
    // Each explanation opens with its input, so it needs no other label.
    assert!(out.starts_with("f32[2,2]"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("S[4:1]")), "{out}");
}

#[test]
fn xla_parse_prints_every_field() {
    let (code, out, _) = run(&["xla", "parse", "bf16[8,128]{1,0:T(8,128)(2,1)S(1)}"]);
    assert_eq!(code, 0);
    for field in [
        "element_type",
        "layout.minor_to_major",
        "layout.tiles",
        "layout.memory_space",
    ] {
        assert!(out.contains(field), "{field}: {out}");
    }
    assert!(out.contains("[[8,128],[2,1]]"), "{out}");
}

#[test]
fn unbounded_arguments_are_refused() {
    for args in [
        &["hlo", "synth", "--instructions", "99999999999"][..],
        &["bench", "relayout", "--threads", "100000"],
        &[
            "render",
            "S[4:1]",
            "-o",
            "/tmp/axe-never.png",
            "--scale",
            "50",
        ],
        &[
            "render",
            "S[4:1]",
            "-o",
            "/tmp/axe-never.png",
            "--scale",
            "NaN",
        ],
        &[
            "render",
            "S[4:1]",
            "-o",
            "/tmp/axe-never.png",
            "--scale",
            "0.0001",
        ],
    ] {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("invalid value"), "{args:?}: {err}");
    }
    let (code, _, err) = run(&[
        "layout",
        "slice",
        "S[4:1]",
        "--shape",
        "4",
        "--region",
        "18446744073709551615",
    ]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn picture_formats_follow_the_extension_in_any_case() {
    let dir = common::folder("formats");
    let png = dir.join("x.PNG");
    let (code, _, err) = run(&[
        "render",
        "f32[3,5]{1,0:T(2,2)}",
        "-o",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");
    let jpg = dir.join("x.jpg");
    let (code, _, err) = run(&["render", "f32[3,5]", "-o", jpg.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("not .jpg"), "{err}");
    assert!(!jpg.exists());
}

#[test]
fn hlo_stats_says_what_each_total_means() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let file = format!("{dir}/../axe-xla/tests/modules/xla_printed.hlo");
    let (code, out, _) = run(&["hlo", "stats", &file]);
    assert_eq!(code, 0);
    assert!(
        out.contains("2 computations") && out.contains("top 1 tensor by"),
        "{out}"
    );
    assert!(out.contains("not a footprint"), "{out}");
    let (_, out, _) = run(&["hlo", "stats", "--json", &file]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(v["materialized"]["physical_bytes"].as_i64().unwrap() > 0);
    assert!(v["meaning"]["total"].is_string());
}
