#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `axe shard` within bounds: output, time and memory follow what is printed (a mesh of a million
//! devices is summarised), errors show one location in a bounded window, and pictures are written only
//! in a format their name says.

mod common;

use assert_cmd::Command;
use common::run;

#[test]
fn a_mesh_of_a_million_devices_is_summarised_in_text() {
    let start = std::time::Instant::now();
    let (code, out, err) = run(&[
        "shard",
        "show",
        "P('x')",
        "--mesh",
        "x=1048576",
        "--shape",
        "f32[4]",
    ]);
    assert_eq!(code, 0, "{err}");
    // A debug build; before, this took minutes and gigabytes.
    assert!(start.elapsed().as_secs() < 30, "{:?}", start.elapsed());
    assert!(out.lines().count() < 60, "{out}");
    assert!(
        out.contains("(1048536 more devices; --json lists every one)"),
        "{out}"
    );
    assert!(out.contains("      3  [3:4]   [1]          3\n"), "{out}");
    assert!(
        out.contains("1048575  [4:4]   [0]          1048575"),
        "{out}"
    );
    // Replica groups of a replicated sharding: the first members and the count.
    let (code, out, err) = run(&[
        "shard",
        "show",
        "P()",
        "--mesh",
        "x=1024,y=1024",
        "--shape",
        "f32[4]",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("0,1,2,3,… (1048576 devices)"), "{out}");
    assert!(out.lines().count() < 60, "{out}");
}

#[test]
fn meshes_up_to_64_devices_list_every_device() {
    let (_, out, _) = run(&[
        "shard", "show", "P('x')", "--mesh", "x=64", "--shape", "f32[64]",
    ]);
    assert!(!out.contains("more devices"), "{out}");
    assert!(out.contains("    40  [40:41]"), "{out}");
    let (_, out, _) = run(&[
        "shard", "show", "P('x')", "--mesh", "x=65", "--shape", "f32[65]",
    ]);
    assert!(
        out.contains("(25 more devices; --json lists every one)"),
        "{out}"
    );
    assert!(!out.contains("\n    40  "), "{out}");
    assert!(out.contains("    64  [64:65]"), "{out}");
}

#[test]
fn an_error_has_one_location() {
    let (code, _, err) = run(&["shard", "show", "{unknwn}", "--mesh", "4"]);
    assert_ne!(code, 0);
    assert_eq!(err.matches("at offset").count(), 1, "{err}");
    assert_eq!(err.matches('^').count(), 1, "{err}");
    assert!(err.contains("at offset 1"), "{err}");
    let (code, _, err) = run(&[
        "shard",
        "show",
        "P(('x','x'))",
        "--mesh",
        "x=2,y=2",
        "--shape",
        "f32[8]",
    ]);
    assert_ne!(code, 0);
    assert!(
        err.contains("mesh axis 'x' is named twice at offset 8"),
        "{err}"
    );
    assert!(
        err.contains("\n          ^"),
        "the caret under the second 'x': {err}"
    );
}

#[test]
fn a_long_line_is_shown_in_a_window_once() {
    // 600 kB of sharding text, the error near its end: the echo stays short.
    let text = format!("P({}'q')", "None, ".repeat(100_000));
    let out = Command::cargo_bin("axe")
        .unwrap()
        .args(["shard", "show", "-", "--mesh", "x=2"])
        .write_stdin(format!("{text}\n"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.len() < 2000, "{} bytes of stderr", err.len());
    assert!(err.contains('…'), "{err}");
    assert_eq!(err.matches('^').count(), 1, "{err}");
    // A long line that reads but is no sharding (a tiled sharding of one device): quoted in a window.
    let text = format!("{{devices=[2]{}}}", "0".repeat(100_000));
    let out = Command::cargo_bin("axe")
        .unwrap()
        .args(["shard", "show", "-", "--mesh", "x=2"])
        .write_stdin(format!("{text}\n"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.len() < 2000, "{} bytes of stderr", err.len());
}

#[test]
fn pictures_are_named_as_svg_png_or_txt() {
    let dir = common::folder("shard-svg");
    let p = |n: &str| dir.join(n).to_string_lossy().to_string();
    // `--svg` is the old name of -o: the same rule under either name.
    for flag in ["-o", "--svg"] {
        for bad in ["pic.jpg", "pic.SVGZ", "pic"] {
            let (code, _, err) = run(&[
                "shard",
                "show",
                "P('x')",
                "--mesh",
                "x=2",
                "--shape",
                "f32[8]",
                flag,
                &p(bad),
            ]);
            assert_ne!(code, 0, "{flag} {bad}");
            assert!(err.contains(".svg, .png or .txt"), "{bad}: {err}");
            assert!(!dir.join(bad).exists(), "{bad} was written");
        }
        for (good, start) in [("pic.svg", "<svg"), ("pic.txt", "S[")] {
            let (code, _, err) = run(&[
                "shard",
                "show",
                "P('x')",
                "--mesh",
                "x=2",
                "--shape",
                "f32[8]",
                flag,
                &p(good),
            ]);
            assert_eq!(code, 0, "{good}: {err}");
            let text = std::fs::read_to_string(p(good)).unwrap();
            assert!(text.starts_with(start), "{good}: {text}");
        }
    }
}

#[test]
fn every_notation_reports_one_location() {
    for (text, offset) in [
        ("{unknwn}", 1),
        ("{devices=[2]<=[2] foo}", 18),
        ("S[(2,4):(1@gpu_x,1", 18),
        ("P('x',", 6),
        ("[Shard(q)]", 1),
    ] {
        let (code, _, err) = run(&[
            "shard", "show", text, "--mesh", "x=2", "--shape", "f32[8,8]",
        ]);
        assert_ne!(code, 0, "{text}");
        assert_eq!(err.matches("at offset").count(), 1, "{text}: {err}");
        assert_eq!(err.matches('^').count(), 1, "{text}: {err}");
        assert!(
            err.contains(&format!("at offset {offset}:")),
            "{text}: {err}"
        );
    }
}

/// `axe shard plan ARGS` under a 1 GB address-space limit: (status, stdout's first line, stderr).
fn plan_limited(args: &[&str]) -> (Option<i32>, String, String) {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1000000; exec \"$0\" shard plan \"$@\"")
        .arg(assert_cmd::cargo::cargo_bin("axe"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    (
        out.status.code(),
        text.lines().next().unwrap_or("").to_string(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn plans_take_memory_by_their_pieces_and_refuse_past_the_limit_at_once() {
    // A million transfers of one column each (it took 2.9 GB): within 1 GB.
    let (code, first, err) = plan_limited(&[
        "P('x')",
        "P(None,'x')",
        "--mesh",
        "x=1024",
        "--shape",
        "f32[1024,1024]",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        first.contains("1047552 transfers and 1024 local copies"),
        "{first}"
    );
    // 2^40 pieces: refused before any is built, saying how many.
    let start = std::time::Instant::now();
    let (code, _, err) = plan_limited(&[
        "P('x')",
        "P()",
        "--mesh",
        "x=1048576",
        "--shape",
        "f32[1048576]",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("1099511627776 pieces") && !err.contains("panicked"),
        "{err}"
    );
    assert!(start.elapsed().as_secs() < 30, "{:?}", start.elapsed());
}
