//! `axe kernel <verb>`: the shipped kernels of axe-kernel — list, emit CUDA, explain dispatch, compile
//! with NVRTC (in a child process), run on the CPU interpreter.

use std::path::Path;

use axe_kernel::relayout::{relayout_kernel, Relayout};
use axe_kernel::{emit_cuda, lower, nvrtc, run as interpret, Program, Registry, RunLimits, Target};
use axe_xla::{parse_layout, parse_shape, ArrayShape, Shape};
use clap::{Args, Subcommand};
use serde_json::{json, Value};

use crate::report::{emit, Report};

/// Which relayout: the source array and the destination layout.
#[derive(Args)]
pub struct RelayoutShape {
    /// The source array with its layout, e.g. 'bf16[256,512]{1,0}'.
    #[arg(long)]
    src: String,
    /// The destination: a whole shape or just a layout, e.g. '{1,0:T(8,128)(2,1)}'.
    #[arg(long)]
    dst: String,
}

/// A kernel, its parameters and a target.
#[derive(Args)]
pub struct Spec {
    /// The kernel.
    #[arg(value_enum)]
    kernel: KernelName,
    #[command(flatten)]
    shape: RelayoutShape,
    /// cpu, sm_80 or sm_90a.
    #[arg(long, default_value = "sm_90a")]
    target: String,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// Kernel names.
#[derive(clap::ValueEnum, Clone, Copy)]
pub enum KernelName {
    /// `relayout --src SHAPE --dst SHAPE`.
    Relayout,
}

/// Where `axe kernel run` runs.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The CPU interpreter.
    Cpu,
    /// An NVIDIA GPU, through the CUDA driver.
    Cuda,
}

#[derive(Subcommand)]
pub enum Verb {
    /// The shipped kernels, their parameters and targets, and every registered variant.
    List {
        /// One JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// The CUDA C++ source (comments name each operator and the variant dispatch chose).
    Emit {
        #[command(flatten)]
        spec: Spec,
        /// Write the source here instead of stdout.
        #[arg(short, long)]
        output: Option<String>,
    },
    /// Every dispatch decision: the variant chosen, why, and the reasons of those that declined.
    Explain {
        #[command(flatten)]
        spec: Spec,
    },
    /// Compile with NVRTC (from the pip wheel in .venv) in a child process: log, PTX and cubin sizes.
    Compile {
        #[command(flatten)]
        spec: Spec,
        /// The virtual environment holding nvidia-cuda-nvrtc (default: $AXE_VENV or ./.venv).
        #[arg(long)]
        venv: Option<String>,
        /// Reuse and store compiles in this folder.
        #[arg(long)]
        cache: Option<String>,
        /// Write the PTX here.
        #[arg(long)]
        ptx: Option<String>,
        /// Write the cubin here.
        #[arg(long)]
        cubin: Option<String>,
    },
    /// Run on a backend: `run relayout --src S --dst S --backend cpu IN -o OUT` (.npy or raw bytes).
    Run {
        /// The kernel.
        #[arg(value_enum)]
        kernel: KernelName,
        #[command(flatten)]
        shape: RelayoutShape,
        /// cpu (the interpreter: every thread simulated, races and out-of-bounds accesses reported) or
        /// cuda (the first NVIDIA GPU; compiled with NVRTC).
        #[arg(long, value_enum, default_value_t = Backend::Cpu)]
        backend: Backend,
        /// The virtual environment holding nvidia-cuda-nvrtc, for --backend cuda (default: $AXE_VENV or
        /// ./.venv, else a CUDA toolkit's).
        #[arg(long)]
        venv: Option<String>,
        /// Input: raw bytes in --src's layout, or .npy when --src is row-major.
        input: String,
        /// Output: raw bytes in --dst's layout, or .npy when --dst is row-major.
        #[arg(short, long)]
        output: String,
        /// One JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// (internal) The NVRTC child process: source on stdin, framed result on stdout.
    #[command(hide = true)]
    NvrtcChild {
        #[arg(long)]
        lib: String,
        #[arg(long)]
        name: String,
        #[arg(long)]
        arch: String,
    },
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn array(text: &str) -> Result<ArrayShape, String> {
    match parse_shape(text).map_err(err)? {
        Shape::Array(a) => Ok(a),
        other => Err(format!("{other} is not an array shape")),
    }
}

fn shapes(s: &RelayoutShape) -> Result<(ArrayShape, ArrayShape), String> {
    let src = array(&s.src)?;
    let t = s.dst.trim();
    let dst = if t.starts_with('{') {
        ArrayShape {
            layout: parse_layout(t, src.rank()).map_err(err)?,
            ..src.clone()
        }
    } else {
        array(t)?
    };
    Ok((src, dst))
}

fn build(spec: &Spec) -> Result<(Relayout, Program), String> {
    let target: Target = spec.target.parse().map_err(err)?;
    let (src, dst) = shapes(&spec.shape)?;
    let r = relayout_kernel(&src, &dst).map_err(err)?;
    let p = lower(&r.kernel, target).map_err(err)?;
    Ok((r, p))
}

fn list() -> Report {
    let targets: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
    let variants: Vec<Value> = Registry::standard()
        .all()
        .iter()
        .map(|v| {
            json!({"name": v.name(), "op": v.op(), "priority": v.priority(),
                   "targets": v.targets().iter().map(|t| t.name()).collect::<Vec<_>>()})
        })
        .collect();
    let json = json!({
        "kernels": [{"name": "relayout", "params": ["src", "dst"], "targets": targets}],
        "variants": variants,
    });
    let mut text = format!(
        "kernels\n  relayout --src SHAPE --dst SHAPE   targets: {}\nvariants\n",
        targets.join(", ")
    );
    for v in Registry::standard().all() {
        let t: Vec<&str> = v.targets().iter().map(|t| t.name()).collect();
        text.push_str(&format!(
            "  {:<16} {:<7} priority {:>2}  {}\n",
            v.name(),
            v.op(),
            v.priority(),
            t.join(", ")
        ));
    }
    Report { json, text }
}

fn explain(p: &Program) -> Report {
    let calls: Vec<Value> = p
        .decisions
        .iter()
        .map(|d| {
            let declined: Vec<Value> = d.declined.iter().map(|(v, r)| json!({"variant": v, "reason": r})).collect();
            json!({"op": d.op, "scope": d.scope, "variant": d.variant, "why": d.why, "declined": declined})
        })
        .collect();
    let mut text = format!("{} for {}: {} calls\n", p.name, p.target, p.decisions.len());
    for d in &p.decisions {
        text.push_str(&format!(
            "{} at {} scope → {}\n  because {}\n",
            d.op, d.scope, d.variant, d.why
        ));
        for (v, r) in &d.declined {
            text.push_str(&format!("  not {v}: {r}\n"));
        }
    }
    Report {
        json: json!({"kernel": p.name, "target": p.target, "calls": calls}),
        text,
    }
}

fn compile(
    spec: &Spec,
    venv_dir: &Path,
    cache: Option<&str>,
    ptx: Option<&str>,
    cubin: Option<&str>,
) -> Result<Report, String> {
    let (_, p) = build(spec)?;
    let arch = Target::from_str_checked(&spec.target)?;
    let (c, lib) = crate::gpu::nvrtc_compile(
        &p,
        arch,
        axe_kernel::IndexWidth::Auto,
        venv_dir,
        cache.map(Path::new),
    )?;
    if let Some(path) = ptx {
        crate::output::write_atomically(path, c.ptx.as_bytes())?;
    }
    if let Some(path) = cubin {
        crate::output::write_atomically(path, &c.cubin)?;
    }
    let json = json!({
        "kernel": p.name, "target": arch, "nvrtc": lib.display().to_string(), "log": c.log,
        "ptx_bytes": c.ptx.len(), "cubin_bytes": c.cubin.len(),
        "threads_per_cta": p.launch.threads, "shared_bytes_per_cta": p.shared_bytes,
        "registers_per_thread": nvrtc::cubin_registers(&c.cubin),
    });
    let text = format!(
        "{} for {arch}: PTX {} bytes, cubin {} bytes; {} registers per thread; {} threads and {} bytes of shared memory per CTA\nnvrtc log: {}",
        p.name,
        c.ptx.len(),
        c.cubin.len(),
        nvrtc::cubin_registers(&c.cubin).map_or("?".to_string(), |r| r.to_string()),
        p.launch.threads,
        p.shared_bytes,
        if c.log.trim().is_empty() { "(empty)" } else { c.log.trim() }
    );
    Ok(Report { json, text })
}

trait ArchName {
    fn from_str_checked(s: &str) -> Result<&'static str, String>;
}

impl ArchName for Target {
    fn from_str_checked(s: &str) -> Result<&'static str, String> {
        let t: Target = s.parse().map_err(err)?;
        t.arch()
            .ok_or_else(|| "compile needs a GPU target: sm_80 or sm_90a".to_string())
    }
}

fn is_row_major(a: &ArrayShape) -> bool {
    a.layout == axe_xla::Layout::default_for_rank(a.rank())
}

/// The data bytes of the input: raw, or a `.npy` file's payload (row-major, little-endian, the
/// source's dimensions and element size).
fn read_input(path: &str, src: &ArrayShape, need: u64) -> Result<Vec<u8>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let data = if path.ends_with(".npy") {
        if !is_row_major(src) {
            return Err(format!(
                "{path}: a .npy file is row-major, but --src is {src}; give raw bytes"
            ));
        }
        let npy = npyz::NpyFile::new(&bytes[..]).map_err(|e| format!("{path}: {e}"))?;
        let dims: Vec<u64> = src
            .dims
            .iter()
            .map(|d| d.bound().unwrap_or(0) as u64)
            .collect();
        if npy.shape() != dims.as_slice() || npy.order() != npyz::Order::C {
            return Err(format!(
                "{path}: a C-order array of shape {:?} is needed, it holds {:?}",
                dims,
                npy.shape()
            ));
        }
        let unit = crate::npy::byte_swap_unit(&npy.header().dtype(), src.element_type)?;
        if unit > 1 {
            return Err(format!(
                "{path}: big-endian data; convert it to little-endian first"
            ));
        }
        let skip = bytes.len().saturating_sub(need as usize);
        bytes[skip..].to_vec()
    } else {
        bytes
    };
    if data.len() as u64 != need {
        return Err(format!(
            "{path}: {} bytes of data, --src {src} needs {need}",
            data.len()
        ));
    }
    Ok(data)
}

fn write_output(path: &str, dst: &ArrayShape, data: &[u8]) -> Result<(), String> {
    if !path.ends_with(".npy") {
        return crate::output::write_atomically(path, data);
    }
    if !is_row_major(dst) {
        return Err(format!(
            "{path}: a .npy file holds a row-major array; write {dst} as raw bytes (.bin)"
        ));
    }
    let descr = crate::npy::descr(dst.element_type)
        .ok_or_else(|| format!("{} has no .npy form", dst.element_type))?;
    use npyz::WriterBuilder;
    let dims: Vec<u64> = dst
        .dims
        .iter()
        .map(|d| d.bound().unwrap_or(0) as u64)
        .collect();
    let dtype = npyz::DType::Plain(descr.parse().map_err(|e| format!("{descr}: {e}"))?);
    let mut header = Vec::new();
    npyz::WriteOptions::new_header_only()
        .dtype(dtype)
        .shape(&dims)
        .writer(&mut header)
        .write_header_only()
        .map_err(|e| format!("{path}: {e}"))?;
    header.extend_from_slice(data);
    crate::output::write_atomically(path, &header)
}

fn run_relayout(
    shape: &RelayoutShape,
    backend: Backend,
    venv: &Option<String>,
    input: &str,
    output: &str,
) -> Result<Report, String> {
    let (src, dst) = shapes(shape)?;
    let r = relayout_kernel(&src, &dst).map_err(err)?;
    let data = read_input(input, &src, r.src_bytes)?;
    let dst_len = usize::try_from(r.dst_bytes).map_err(err)?;
    let (out, calls, on) = match backend {
        Backend::Cpu => {
            let p = lower(&r.kernel, Target::Cpu).map_err(err)?;
            let out =
                interpret(&p, vec![data, vec![0; dst_len]], RunLimits::default()).map_err(err)?;
            (out, p.decisions.len(), "the cpu interpreter".to_string())
        }
        Backend::Cuda => run_on_gpu(&r.kernel, data, dst_len, venv)?,
    };
    let bytes = out.get(1).ok_or("the kernel returned no destination")?;
    write_output(output, &dst, bytes)?;
    let name = match backend {
        Backend::Cpu => "cpu",
        Backend::Cuda => "cuda",
    };
    Ok(Report {
        json: json!({"kernel": "relayout", "backend": name, "device": on, "src": src.to_string(), "dst": dst.to_string(),
                     "bytes_in": r.src_bytes, "bytes_out": r.dst_bytes, "calls": calls}),
        text: format!(
            "relayout {src} -> {dst} on {on}: {} bytes in, {} bytes out, {calls} calls",
            r.src_bytes, r.dst_bytes,
        ),
    })
}

/// Runs a two-buffer kernel on the GPU; the destination starts poisoned (0xA5), so a byte the kernel
/// fails to write shows.
#[cfg(feature = "cuda")]
fn run_on_gpu(
    k: &axe_kernel::Kernel,
    data: Vec<u8>,
    dst_len: usize,
    venv: &Option<String>,
) -> Result<(Vec<Vec<u8>>, usize, String), String> {
    let (out, p, name) =
        crate::gpu::run_kernel(k, vec![data, vec![0xA5; dst_len]], &crate::gpu::venv(venv))?;
    Ok((out, p.decisions.len(), name))
}

#[cfg(not(feature = "cuda"))]
fn run_on_gpu(
    _: &axe_kernel::Kernel,
    _: Vec<u8>,
    _: usize,
    _: &Option<String>,
) -> Result<(Vec<Vec<u8>>, usize, String), String> {
    Err(crate::gpu::no_cuda())
}

pub fn run(verb: Verb) -> bool {
    match verb {
        Verb::List { json } => emit([Ok(list())], json),
        Verb::Emit { spec, output } => {
            let r = build(&spec).and_then(|(_, p)| emit_cuda(&p).map_err(err));
            match (r, output) {
                (Ok(src), Some(path)) => {
                    let r =
                        crate::output::write_atomically(&path, src.as_bytes()).map(|()| Report {
                            json: json!({"output": path, "bytes": src.len()}),
                            text: format!("wrote {} bytes to {path}", src.len()),
                        });
                    emit([r], spec.json)
                }
                (Ok(src), None) if spec.json => emit(
                    [Ok(Report {
                        json: json!({"source": src}),
                        text: String::new(),
                    })],
                    true,
                ),
                (Ok(src), None) => {
                    crate::report::write_stdout(&src);
                    true
                }
                (Err(e), _) => emit([Err::<Report, String>(e)], spec.json),
            }
        }
        Verb::Explain { spec } => emit([build(&spec).map(|(_, p)| explain(&p))], spec.json),
        Verb::Compile {
            spec,
            venv: v,
            cache,
            ptx,
            cubin,
        } => {
            let dir = crate::gpu::venv(&v);
            emit(
                [compile(
                    &spec,
                    &dir,
                    cache.as_deref(),
                    ptx.as_deref(),
                    cubin.as_deref(),
                )],
                spec.json,
            )
        }
        Verb::Run {
            kernel: KernelName::Relayout,
            shape,
            backend,
            venv: v,
            input,
            output,
            json,
        } => emit([run_relayout(&shape, backend, &v, &input, &output)], json),
        Verb::NvrtcChild { lib, name, arch } => {
            let code = nvrtc::child_main(
                Path::new(&lib),
                &name,
                &arch,
                &mut std::io::stdin().lock(),
                &mut std::io::stdout().lock(),
            );
            code == 0
        }
    }
}
