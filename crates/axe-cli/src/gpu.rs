//! Compiling lowered kernels with NVRTC and running them on a GPU: what `axe kernel compile|run`,
//! `axe relayout --device cuda` and `axe bench kernel` share.

use std::path::{Path, PathBuf};

use axe_kernel::{emit_cuda_with, nvrtc, IndexWidth, Program};

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The virtual environment holding NVRTC: `--venv`, else `$AXE_VENV`, else the active one
/// (`$VIRTUAL_ENV`), else `./.venv`.
pub fn venv(arg: &Option<String>) -> PathBuf {
    arg.clone()
        .or_else(|| std::env::var("AXE_VENV").ok())
        .or_else(|| std::env::var("VIRTUAL_ENV").ok())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(".venv"))
}

/// Why no NVRTC was found under `venv_dir`, and how to give one: the folder as an absolute path (a
/// relative one is the current directory's), whether it exists, and the ways to name another.
fn no_nvrtc(venv_dir: &Path) -> String {
    let shown = std::path::absolute(venv_dir).unwrap_or_else(|_| venv_dir.to_path_buf());
    let shown = shown.display();
    if venv_dir.is_dir() {
        format!(
            "no NVRTC in the virtual environment {shown} or in a CUDA toolkit: install it with \
             `{shown}/bin/python3 -m pip install nvidia-cuda-nvrtc`, or name another environment with \
             --venv DIR or AXE_VENV (or the library itself with AXE_NVRTC)"
        )
    } else {
        format!(
            "no NVRTC: there is no virtual environment {shown} (looked for --venv, AXE_VENV, an \
             activated one, then .venv in the current directory) and no CUDA toolkit; give the one \
             nvidia-cuda-nvrtc is installed in with --venv DIR or AXE_VENV (or the library with \
             AXE_NVRTC), or make one: `python3 -m venv .venv && .venv/bin/python3 -m pip install \
             nvidia-cuda-nvrtc`"
        )
    }
}

/// Compiles lowered program `p` for `arch` with NVRTC (in a child process), reusing `cache`.
pub fn nvrtc_compile(
    p: &Program,
    arch: &str,
    width: IndexWidth,
    venv_dir: &Path,
    cache: Option<&Path>,
) -> Result<(nvrtc::Compiled, PathBuf), String> {
    let source = emit_cuda_with(p, width).map_err(err)?;
    let lib = nvrtc::find_nvrtc(venv_dir).ok_or_else(|| no_nvrtc(venv_dir))?;
    let exe = std::env::current_exe().map_err(|e| format!("locating axe: {e}"))?;
    let args: Vec<String> = ["kernel", "nvrtc-child", "--lib"]
        .iter()
        .map(|s| s.to_string())
        .chain([
            lib.display().to_string(),
            "--name".into(),
            p.name.clone(),
            "--arch".into(),
            arch.to_string(),
        ])
        .collect();
    let c = nvrtc::compile(&exe, &args, &lib, &source, &p.name, arch, cache).map_err(err)?;
    Ok((c, lib))
}

#[cfg(feature = "cuda")]
pub use with_cuda::*;

#[cfg(feature = "cuda")]
mod with_cuda {
    use super::*;
    use axe_kernel::cuda::Gpu;
    use axe_kernel::{Kernel, Target};

    /// The compile cache: `$AXE_KERNEL_CACHE` when set.
    pub fn default_cache() -> Option<PathBuf> {
        std::env::var_os("AXE_KERNEL_CACHE").map(PathBuf::from)
    }

    /// The dispatch target and NVRTC architecture for `gpu`: Hopper (9.0) gets sm_90a's variants, other
    /// GPUs of compute capability 8.0 or newer sm_80's, compiled for their own architecture.
    pub fn target_of(gpu: &Gpu) -> Result<(Target, String), String> {
        match gpu.capability {
            (9, 0) => Ok((Target::Sm90a, gpu.arch())),
            (ma, _) if ma >= 8 => Ok((Target::Sm80, gpu.arch())),
            (ma, mi) => Err(format!(
                "{} has compute capability {ma}.{mi}; axe's kernels need 8.0 (Ampere) or newer",
                gpu.name
            )),
        }
    }

    /// A kernel lowered and compiled for `gpu`.
    pub struct Ready {
        /// The lowered program.
        pub program: Program,
        /// Its cubin.
        pub cubin: Vec<u8>,
    }

    /// Lowers `k` for `gpu`'s target and compiles it.
    pub fn prepare(gpu: &Gpu, k: &Kernel, venv_dir: &Path) -> Result<Ready, String> {
        prepare_with(gpu, k, IndexWidth::Wide, venv_dir)
    }

    /// [`prepare`] with the index arithmetic's width chosen.
    pub fn prepare_with(
        gpu: &Gpu,
        k: &Kernel,
        width: IndexWidth,
        venv_dir: &Path,
    ) -> Result<Ready, String> {
        let (target, arch) = target_of(gpu)?;
        let program = axe_kernel::lower(k, target).map_err(err)?;
        let (c, _) = nvrtc_compile(&program, &arch, width, venv_dir, default_cache().as_deref())?;
        Ok(Ready {
            program,
            cubin: c.cubin,
        })
    }

    /// Runs kernel `k` once on the first GPU with global buffers `globals` (in parameter order) and
    /// returns them afterwards, with the lowered program and the GPU's name.
    pub fn run_kernel(
        k: &Kernel,
        globals: Vec<Vec<u8>>,
        venv_dir: &Path,
    ) -> Result<(Vec<Vec<u8>>, Program, String), String> {
        let gpu = open()?;
        let ready = prepare(&gpu, k, venv_dir)?;
        let out = gpu
            .run(&ready.program, &ready.cubin, globals)
            .map_err(err)?;
        Ok((out, ready.program, gpu.name.clone()))
    }

    /// Moves `data` (array `src`) into layout `dst` on the first GPU with the shipped relayout kernel:
    /// the destination's bytes, the kernel's time in seconds (a warm launch, timed by events), and the
    /// GPU's name.
    pub fn relayout(
        src: &axe_xla::ArrayShape,
        dst: &axe_xla::ArrayShape,
        data: &[u8],
        venv_dir: &Path,
    ) -> Result<(Vec<u8>, f64, String), String> {
        let r = axe_kernel::relayout::relayout_kernel(src, dst).map_err(err)?;
        if data.len() as u64 != r.src_bytes {
            return Err(format!(
                "{src} holds {} bytes; {} were given",
                r.src_bytes,
                data.len()
            ));
        }
        let gpu = open()?;
        let ready = prepare(&gpu, &r.kernel, venv_dir)?;
        let k = gpu.load(&ready.cubin, &ready.program.name).map_err(err)?;
        let geo = axe_kernel::cuda::geometry(&ready.program).map_err(err)?;
        let s = gpu.upload(data).map_err(err)?;
        let d = gpu.alloc(r.dst_bytes).map_err(err)?;
        gpu.launch(&k, geo, &[&s, &d]).map_err(err)?;
        gpu.sync("kernel relayout").map_err(err)?;
        let ms = gpu
            .time(&mut || gpu.launch(&k, geo, &[&s, &d]))
            .map_err(err)?;
        let out = gpu.read(&d, r.dst_bytes).map_err(err)?;
        Ok((out, f64::from(ms) / 1e3, gpu.name.clone()))
    }

    /// Opens the first GPU.
    pub fn open() -> Result<Gpu, String> {
        Gpu::open(0).map_err(err)
    }
}

/// Without the `cuda` feature: the error every GPU path gives.
#[cfg(not(feature = "cuda"))]
pub fn no_cuda() -> String {
    "this axe was built without GPU support: build it with `--features cuda` (the default)".into()
}
