//! Exports `AXE_PY_BUILD_ID`: a hash of this crate's Rust sources (`src/*.rs`), each file as `NAME`
//! NUL `CONTENT` NUL in name order, FNV-1a 64-bit, in hex. Run from the source tree, `axe/__init__.py`
//! computes the same over `src/*.rs` and refuses an extension built from other sources (stale).

use std::path::Path;

fn fnv(dir: &Path, ext: &str) -> u64 {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let content = std::fs::read(e.path()).ok()?;
                    name.ends_with(ext).then_some((name, content))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, content) in &files {
        for &b in name
            .as_bytes()
            .iter()
            .chain([0u8].iter())
            .chain(content)
            .chain([0u8].iter())
        {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rs = root.join("src");
    println!("cargo:rerun-if-changed={}", rs.display());
    println!("cargo:rustc-env=AXE_PY_BUILD_ID={:016x}", fnv(&rs, ".rs"));
}
