//! The documentation's examples, run as written: every ```` ```console ```` block of README.md and
//! docs/*.md. Each `$ ` line (with `\` continuations) is a command, run by `sh` in a fresh folder with this
//! build's `axe` first on PATH; the lines under it, up to the next command, are what it prints (stdout,
//! then stderr). Timings and throughputs are masked on both sides (`0.035817 s` reads `# s`).
//!
//! Commands that start other programs' runs (`mpirun ...`, `cargo ...`, `scripts/...`) are left to
//! `scripts/try-readme`, which runs the README's set-up and MPI example on a fresh clone; `python3`
//! commands run where numpy is importable (always in CI, where `AXE_REQUIRE_NUMPY` is set).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// One command of a console block and the output the documentation shows for it.
struct Example {
    file: String,
    line: usize,
    command: String,
    expected: String,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The documents whose console blocks are examples: README.md and every docs/*.md.
fn documents() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The examples of one document, in order; each block's examples share one folder.
fn examples(name: &str, text: &str) -> Vec<Vec<Example>> {
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((_, line)) = lines.next() {
        if line.trim_end() != "```console" {
            continue;
        }
        let mut block: Vec<Example> = Vec::new();
        while let Some((n, line)) = lines.next() {
            if line.starts_with("```") {
                break;
            }
            if let Some(cmd) = line.strip_prefix("$ ") {
                let mut command = cmd.to_string();
                while command.ends_with('\\') {
                    command.pop();
                    let Some((_, next)) = lines.next() else { break };
                    command.push_str(next.trim_start());
                }
                block.push(Example {
                    file: name.to_string(),
                    line: n + 1,
                    command,
                    expected: String::new(),
                });
            } else if let Some(last) = block.last_mut() {
                last.expected.push_str(line);
                last.expected.push('\n');
            } else {
                panic!(
                    "{name}:{}: a console block's first line is not a `$ ` command",
                    n + 1
                );
            }
        }
        blocks.push(block);
    }
    blocks
}

/// Whether this example is run here (see the module's comment for the ones that are not).
fn runs_here(command: &str, have_numpy: bool) -> bool {
    let program = command.split_whitespace().next().unwrap_or("");
    match program {
        "axe" => true,
        "python3" => have_numpy,
        _ => false,
    }
}

/// A line with each timing or throughput replaced by `#`: a number followed by a unit of time or of speed.
fn mask(text: &str) -> String {
    const UNITS: [&str; 8] = [" s", " ms", " µs", " ns", " GB/s", " MB/s", " GiB/s", "×"];
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let c = bytes[i];
        let starts_number = c.is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
        if starts_number {
            let mut j = i;
            while j < text.len() && (bytes[j].is_ascii_digit() || bytes[j] == b'.') {
                j += 1;
            }
            let unit_follows = UNITS.iter().any(|u| {
                text[j..].starts_with(u)
                    && !text[j + u.len()..]
                        .chars()
                        .next()
                        .is_some_and(char::is_alphanumeric)
            });
            if unit_follows {
                out.push('#');
                i = j;
                continue;
            }
            out.push_str(&text[i..j]);
            i = j;
            continue;
        }
        let ch = text[i..].chars().next().unwrap();
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// Output as compared: timings masked, trailing blanks of each line and of the whole left out.
fn normalise(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    mask(lines.join("\n").trim_end())
}

fn python_has_numpy() -> bool {
    Command::new("python3")
        .args(["-c", "import numpy"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn every_console_example_prints_what_the_docs_show() {
    let axe = PathBuf::from(env!("CARGO_BIN_EXE_axe"));
    let bin_dir = axe.parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let have_numpy = python_has_numpy();
    if !have_numpy && std::env::var_os("AXE_REQUIRE_NUMPY").is_some() {
        panic!("AXE_REQUIRE_NUMPY is set but python3 cannot import numpy");
    }
    let root = repo_root();
    let mut failures = Vec::new();
    let mut ran = 0;
    for doc in documents() {
        let name = doc
            .strip_prefix(&root)
            .unwrap_or(&doc)
            .display()
            .to_string();
        let text = std::fs::read_to_string(&doc).unwrap();
        for block in examples(&name, &text) {
            // A block whose Python steps cannot run here is left out whole: its later commands need them.
            let python = block.iter().any(|ex| ex.command.starts_with("python3 "));
            if python && !have_numpy {
                continue;
            }
            let dir = tempfile::tempdir().unwrap();
            for ex in block {
                if !runs_here(&ex.command, have_numpy) {
                    continue;
                }
                let out = Command::new("sh")
                    .args(["-c", &ex.command])
                    .current_dir(dir.path())
                    .env("PATH", &path)
                    .env("RUST_BACKTRACE", "0")
                    .env("NO_COLOR", "1")
                    .output()
                    .unwrap();
                ran += 1;
                let got = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                let (got, want) = (normalise(&got), normalise(&ex.expected));
                if got != want {
                    failures.push(format!(
                        "{}:{}: $ {}\n--- the docs show\n{want}\n--- axe printed\n{got}\n",
                        ex.file, ex.line, ex.command
                    ));
                }
            }
        }
    }
    assert!(
        ran > 10,
        "only {ran} examples found: is the block syntax still ```console?"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn masking_hides_timings_only() {
    assert_eq!(
        mask("50331648 bytes moved in 0.035817 s: 1.41 GB/s"),
        "50331648 bytes moved in # s: # GB/s"
    );
    assert_eq!(
        mask("f32[3,5] 4096 bytes 12 ms"),
        "f32[3,5] 4096 bytes # ms"
    );
    assert_eq!(mask("S[4:2] offset 17 sizes"), "S[4:2] offset 17 sizes");
}

#[test]
fn blocks_split_into_commands_and_their_output() {
    let text = "x\n```console\n$ axe a \\\n    --b\nout 1\nout 2\n\n$ axe c\n```\n";
    let blocks = examples("t.md", text);
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0][0].command, "axe a --b");
    assert_eq!(blocks[0][0].expected, "out 1\nout 2\n\n");
    assert_eq!(blocks[0][1].command, "axe c");
    assert_eq!(blocks[0][1].line, 8);
}

#[test]
fn every_crate_is_in_the_readme_and_the_architecture() {
    let root = repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let arch = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        assert!(
            readme.contains(&format!("| `crates/{name}` |")),
            "README.md's repository table leaves out crates/{name}"
        );
        assert!(
            arch.contains(&format!("crates/{name}/")),
            "docs/architecture.md leaves out crates/{name}"
        );
    }
}
