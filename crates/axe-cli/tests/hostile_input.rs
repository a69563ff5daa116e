#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Every input path of the `axe` binary fed hostile input — deep nesting, huge numbers, non-UTF-8 bytes,
//! oversized lines, huge counts — inside a 2 GB address-space limit (`ulimit -v`): each run ends with
//! status 0 or 1 and a message, never a panic (101), a signal (stack overflow, abort) or an allocation
//! failure.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

/// Address-space limit for each run, in KiB.
const LIMIT_KB: u64 = 2_000_000;

/// Runs `axe ARGS` under the limit with `stdin` as its standard input; returns (status, stderr).
fn run_limited(args: &[&str], stdin: &[u8]) -> (Option<i32>, String) {
    let axe = assert_cmd::cargo::cargo_bin("axe");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {LIMIT_KB}; exec \"$0\" \"$@\""))
        .arg(axe)
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data); // the process may stop reading early
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn check(args: &[&str], stdin: &[u8]) {
    let (code, err) = run_limited(args, stdin);
    let shown: String = err.chars().take(300).collect();
    let args: Vec<String> = args.iter().map(|a| a.chars().take(60).collect()).collect();
    assert!(
        matches!(code, Some(0 | 1)),
        "{args:?}: status {code:?}: {shown}"
    );
    assert!(!err.contains("panicked"), "{args:?}: {shown}");
    assert!(
        err.len() < 100_000,
        "{args:?}: {} bytes of error",
        err.len()
    );
}

fn deep(open: &str, leaf: &str, close: &str, n: usize) -> String {
    format!("{}{leaf}{}", open.repeat(n), close.repeat(n))
}

#[test]
fn hostile_lines_on_every_stdin_verb() {
    let lines: Vec<Vec<u8>> = vec![
        deep("(", "f32[2]", ")", 200_000).into_bytes(),
        deep("f32[1]{0:P(", "f32[1]", ")}", 200_000).into_bytes(),
        format!("S[{}]", deep("(", "4", ")", 200_000)).into_bytes(),
        format!("f32[{}]", "9".repeat(10_000)).into_bytes(),
        "f32[9223372036854775807,9223372036854775807]{1,0:T(8,128)}".into(),
        "S[(4294967296,4294967296):(1,1)]".into(),
        "S[2:1] + R[1000000000:1@dev]".into(),
        b"S[4:1] \xff\xfe\xfd".to_vec(),
        format!("S[4:1] {}", "x".repeat(20_000_000)).into_bytes(),
    ];
    let mut batch = Vec::new();
    for l in &lines {
        batch.extend_from_slice(l);
        batch.push(b'\n');
    }
    for args in [
        &["layout", "show", "-"][..],
        &["layout", "canon", "--json", "-"],
        &["layout", "map", "-", "--index", "1"],
        &["layout", "equiv", "-", "S[4:1]"],
        &["layout", "group", "-", "--shape", "2,2"],
        &["xla", "parse", "-"],
        &["xla", "size", "--json", "-"],
        &["xla", "index", "-", "--all"],
        &["xla", "to-axe", "-"],
        &["xla", "numpy", "-"],
        &["xla", "tpu-layout", "-"],
        &["explain", "-"],
    ] {
        check(args, &batch);
    }
}

#[test]
fn hostile_arguments() {
    // One argument may hold at most 128 KiB on Linux.
    let nested = deep("(", "f32[2]", ")", 20_000);
    let braces = deep("{", "replicated", "}", 20_000);
    let offsets = format!("S[4:1] + {}", deep("(", "5@w", ")", 20_000));
    for args in [
        &["explain", nested.as_str()][..],
        &["explain", "S[2:1] + R[15000:1@dev]", "--shape", "2"],
        &["layout", "show", offsets.as_str()],
        &["render", "S[2:1] + R[1000000:1@dev]", "--format", "txt"],
        &[
            "render",
            "f32[100000,100000]{1,0:T(8,128)}",
            "--format",
            "svg",
        ],
        &["hlo", "shards", braces.as_str(), "--shape", "f32[8]"],
        &[
            "hlo",
            "shards",
            "{devices=[1000000000]<=[1000000000]}",
            "--shape",
            "f32[8]",
        ],
        &["hlo", "shards", "{devices=[4]0,0,0,0}", "--shape", "f32[8]"],
        &[
            "layout",
            "slice",
            "S[(1000000000,1000000000)]",
            "--shape",
            "1000000000,1000000000",
            "--region",
            "0:999999999,3:999999999",
        ],
    ] {
        check(args, b"");
    }
}

#[test]
fn hostile_module_files() {
    let dir = common::folder("hostile");
    let module = |body: &str| format!("HloModule m\n\nENTRY %e {{\n  {body}\n}}\n");
    let files = [
        module(&format!(
            "ROOT %p = {} parameter(0)",
            deep("(", "f32[2]", ")", 200_000)
        )),
        module(&format!(
            "ROOT %p = f32[2]{{0}} parameter(0), metadata={}",
            deep("{", "", "}", 200_000)
        )),
        module(&format!(
            "ROOT %p = f32[2]{{0}} parameter(0), foo={}",
            "(".repeat(200_000)
        )),
        module(&format!(
            "ROOT %p = f32[2]{{0}} parameter(0), metadata={{op_name=\"{}\"}}, x=(",
            "y".repeat(20_000_000)
        )),
        module("ROOT %p = f32[2305843009213693951,4]{1,0} parameter(0)"),
        deep("{", "", "}", 200_000),
    ];
    for (i, text) in files.iter().enumerate() {
        let path = dir.join(format!("m{i}.hlo"));
        std::fs::write(&path, text).unwrap();
        let p = path.to_str().unwrap();
        check(&["hlo", "stats", p], b"");
        check(&["hlo", "fmt", p], b"");
    }
    let bad = dir.join("bad.hlo");
    std::fs::write(&bad, b"HloModule m\xff\n").unwrap();
    check(&["hlo", "stats", bad.to_str().unwrap()], b"");
}
