//! The SASS of a cubin, by `nvdisasm` from NVIDIA's pip wheel (`AXE_NVDISASM`, else under the
//! project's `.venv`), when there is one.

use std::path::{Path, PathBuf};

/// `nvdisasm`: `$AXE_NVDISASM`, else `nvidia/*/bin/nvdisasm` under `.venv`'s site-packages.
pub fn nvdisasm() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("AXE_NVDISASM") {
        return Some(PathBuf::from(p));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/lib");
    for py in std::fs::read_dir(venv).ok()?.flatten() {
        for sub in ["cu13", "cu12", "cuda_nvdisasm"] {
            let p = py
                .path()
                .join("site-packages/nvidia")
                .join(sub)
                .join("bin/nvdisasm");
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// The disassembly of `cubin`, or `None` without `nvdisasm`.
pub fn sass(cubin: &[u8], name: &str) -> Option<String> {
    let tool = nvdisasm()?;
    // Removed when dropped, on every way out of this function.
    let file = tempfile::Builder::new()
        .prefix(&format!("axe_{name}_"))
        .suffix(".cubin")
        .tempfile()
        .ok()?;
    std::fs::write(file.path(), cubin).ok()?;
    let out = std::process::Command::new(tool)
        .arg(file.path())
        .output()
        .ok()?;
    drop(file);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}
