//! Running the `axe` binary as a user does.
#![allow(dead_code, clippy::unwrap_used)]

use assert_cmd::Command;
use serde_json::Value;

/// Runs `axe ARGS`: exit code, stdout, stderr.
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("axe")
        .unwrap()
        .env("RUST_BACKTRACE", "0")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Runs `axe ARGS`, expects success, and parses each stdout line as JSON.
pub fn json_lines(args: &[&str]) -> Vec<Value> {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The largest peak resident set of this process's waited-for children, in bytes (a test that reads it
/// sits alone in its file, so that the children are its own).
#[allow(unsafe_code)]
pub fn children_peak_bytes() -> u64 {
    // SAFETY: getrusage writes one `rusage` into the zeroed value it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(rc, 0);
    usage.ru_maxrss as u64 * 1024 // kilobytes on Linux
}

/// A fresh, empty folder for one test, made by [`folder`]: `axe-NAME-` and a random suffix in the
/// system's temporary folder. It is a path (`dir.join(..)`, `&dir` where a path is wanted), and it is
/// removed, with all it holds, when the value is dropped: when the test ends, and also when it
/// fails, since a panic unwinds through the drop.
pub struct Folder(tempfile::TempDir);

impl std::ops::Deref for Folder {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        self.0.path()
    }
}

impl AsRef<std::path::Path> for Folder {
    fn as_ref(&self) -> &std::path::Path {
        self.0.path()
    }
}

/// A fresh, empty folder for one test, `axe-NAME-` and a random suffix in the system's temporary
/// folder; removed when the returned [`Folder`] is dropped, whether the test passes or panics.
pub fn folder(name: &str) -> Folder {
    Folder(
        tempfile::Builder::new()
            .prefix(&format!("axe-{name}-"))
            .tempdir()
            .unwrap(),
    )
}

/// The names in a folder, sorted.
pub fn names(d: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A version 1.0 `.npy` file written by hand: magic, header padded to 64 bytes, then `data`
/// (`shape` as Python writes it, `(3,)`; C order).
pub fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend_from_slice(&(h.len() as u16).to_le_bytes());
    v.extend_from_slice(h.as_bytes());
    v.extend_from_slice(data);
    v
}

/// A path as a command-line argument.
pub fn arg(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A gemm's inputs of small integers (exact in bf16, and every f32 sum of their products exact): A
/// `[m, k]` and B as `[n, k]`, written as bf16 to `a` and `b`; returned as f32.
pub fn gemm_inputs((m, n, k): (usize, usize, usize), a: &str, b: &str) -> (Vec<f32>, Vec<f32>) {
    let val = |i: usize, seed: usize| ((i * 7 + seed) % 5) as f32 - 2.0;
    let av: Vec<f32> = (0..m * k).map(|i| val(i, 1)).collect();
    let bv: Vec<f32> = (0..n * k).map(|i| val(i, 3)).collect();
    let bf16 = |x: &[f32]| -> Vec<u8> {
        x.iter()
            .flat_map(|v| ((v.to_bits() >> 16) as u16).to_le_bytes())
            .collect()
    };
    std::fs::write(a, bf16(&av)).unwrap();
    std::fs::write(b, bf16(&bv)).unwrap();
    (av, bv)
}

/// Asserts the f32 file `c` holds `A·Bᵀ` (`[m, n]`, B given as `[n, k]`) exactly.
pub fn assert_gemm_exact(c: &str, a: &[f32], b: &[f32], (m, n, k): (usize, usize, usize)) {
    let c: Vec<f32> = std::fs::read(c)
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
