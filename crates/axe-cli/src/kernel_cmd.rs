//! `axe kernel <verb>`: the shipped kernels of axe-kernel — list, emit CUDA, explain dispatch, compile
//! with NVRTC (in a child process), run on the CPU interpreter.

use std::path::Path;

use axe_kernel::{
    emit_cuda, emit_nki, lower, nvrtc, run as interpret, Program, Registry, RunLimits, Target,
};
use clap::{Args, Subcommand};
use serde_json::{json, Value};

use crate::kernel_shipped::{instance, read_input, write_output, Instance, KernelName, Params};
use crate::report::{emit, Report};

/// A kernel, its parameters and a target.
#[derive(Args)]
pub struct Spec {
    /// The kernel.
    #[arg(value_enum)]
    kernel: KernelName,
    #[command(flatten)]
    params: Params,
    /// cpu, sm_80, sm_90a or trn1 (gemm and gemm_reduce_scatter; emitted as NKI-style text); emit
    /// takes sm_80, sm_90a or trn1, compile sm_80 or sm_90a (cpu is the interpreter's: explain it).
    #[arg(long, default_value = "sm_90a")]
    target: String,
    /// One JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// Where `axe kernel run` runs.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The CPU interpreter.
    Cpu,
    /// An NVIDIA GPU, through the CUDA driver.
    Cuda,
    /// One MPI rank per device (gemm_reduce_scatter under `mpirun -n P`; needs an axe built with
    /// `--features mpi`).
    Mpi,
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
    /// Run on a backend: `run relayout --src S --dst L [--backend cpu|cuda] IN -o OUT`, `run softmax
    /// --rows R --cols C [--dtype f32|f16|bf16] IN -o OUT`, `run gemm --m M --n N --k K A B -o C`
    /// (.npy or raw bytes); `run gemm_reduce_scatter --m M --n N --k K --devices P A B -o C` (one
    /// thread per device), or under `mpirun -n P` with `--backend mpi` (rank 0 writes C).
    Run {
        /// The kernel.
        #[arg(value_enum)]
        kernel: KernelName,
        #[command(flatten)]
        params: Params,
        /// cpu (the interpreter: every thread simulated, races and out-of-bounds accesses reported) or
        /// cuda (the first NVIDIA GPU; compiled with NVRTC).
        #[arg(long, value_enum, default_value_t = Backend::Cpu)]
        backend: Backend,
        /// The program to run: the kernel as shipped for this target (cpu, sm_80 or sm_90a; trn1 for
        /// gemm and gemm_reduce_scatter), lowered for it. The interpreter runs any target's program (default cpu); cuda runs the GPU's own.
        #[arg(long)]
        target: Option<String>,
        /// The virtual environment holding nvidia-cuda-nvrtc, for --backend cuda (default: $AXE_VENV or
        /// ./.venv, else a CUDA toolkit's).
        #[arg(long)]
        venv: Option<String>,
        /// The inputs (relayout, softmax: one; gemm, gemm_reduce_scatter: A and B): raw bytes in the
        /// input's layout, or .npy when it is row-major.
        #[arg(required = true)]
        inputs: Vec<String>,
        /// Output: raw bytes in the output's layout, or .npy when it is row-major.
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

/// `emit`'s target: a CUDA target (CUDA C++) or trn1 (NKI-style text); cpu, the interpreter's, has
/// no source to emit, and is refused naming the targets that do.
fn emit_target(target: &str) -> Result<(), String> {
    match target.parse::<Target>().map_err(err)? {
        Target::Cpu => Err(
            "emit writes CUDA C++ for sm_80 or sm_90a, or NKI-style text for trn1, not cpu: cpu is \
             the interpreter's target (`axe kernel run --target cpu` runs its program, `axe kernel \
             explain --target cpu` shows its decisions)"
                .to_string(),
        ),
        _ => Ok(()),
    }
}

fn build(spec: &Spec) -> Result<(Instance, Program), String> {
    let target: Target = spec.target.parse().map_err(err)?;
    let i = instance(spec.kernel, &spec.params, target)?;
    let p = lower(&i.kernel, target).map_err(err)?;
    Ok((i, p))
}

fn list() -> Report {
    let targets_of = |name: &str| -> Vec<&str> {
        axe_kernel::shipped::targets_of(name)
            .iter()
            .map(|t| t.name())
            .collect()
    };
    let mut variants: Vec<Value> = Registry::standard()
        .all()
        .iter()
        .map(|v| {
            json!({"name": v.name(), "op": v.op(), "priority": v.priority(),
                   "targets": v.targets().iter().map(|t| t.name()).collect::<Vec<_>>()})
        })
        .collect();
    let across = axe_kernel::xdev_dispatch::device_variants();
    variants.extend(across.iter().map(|v| {
        json!({"name": v.name(), "op": v.op(), "priority": v.priority(), "targets": ["devices"]})
    }));
    let kernels: Vec<Value> = KernelName::ALL
        .iter()
        .map(|(_, name, params, _)| {
            json!({"name": name, "params": params, "targets": targets_of(name)})
        })
        .collect();
    let json = json!({"kernels": kernels, "variants": variants});
    let mut text = "kernels\n".to_string();
    for (_, name, _, usage) in KernelName::ALL {
        text.push_str(&format!(
            "  {name} {usage}   targets: {}\n",
            targets_of(name).join(", ")
        ));
    }
    text.push_str("variants\n");
    let mut rows: Vec<(&str, &str, i32, String)> = Registry::standard()
        .all()
        .iter()
        .map(|v| {
            let t: Vec<&str> = v.targets().iter().map(|t| t.name()).collect();
            (v.name(), v.op(), v.priority(), t.join(", "))
        })
        .collect();
    rows.extend(
        across
            .iter()
            .map(|v| (v.name(), v.op(), v.priority(), "devices".to_string())),
    );
    let name_w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let op_w = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    for (name, op, priority, targets) in rows {
        text.push_str(&format!(
            "  {name:<name_w$}  {op:<op_w$}  priority {priority:>2}  {targets}\n"
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
    let n = p.decisions.len();
    let noun = if n == 1 { "call" } else { "calls" };
    let mut text = format!("{} for {}: {n} {noun}\n", p.name, p.target);
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
    // A cache folder asked for must be one (made if missing): not a cache silently skipped.
    if let Some(dir) = cache {
        std::fs::create_dir_all(dir).map_err(|e| format!("--cache {dir}: {e}"))?;
    }
    let (c, lib) = crate::gpu::nvrtc_compile(
        &p,
        arch,
        axe_kernel::IndexWidth::Wide,
        venv_dir,
        cache.map(Path::new),
    )?;
    if let Some(path) = ptx {
        crate::output::write_atomically(path, c.ptx.as_bytes())?;
    }
    if let Some(path) = cubin {
        crate::output::write_atomically(path, &c.cubin)?;
    }
    let r = nvrtc::resources(&c.log);
    let json = json!({
        "kernel": p.name, "target": arch, "nvrtc": lib.display().to_string(), "log": c.log,
        "ptx_bytes": c.ptx.len(), "cubin_bytes": c.cubin.len(),
        "threads_per_cta": p.launch.threads, "shared_bytes_per_cta": p.shared_bytes,
        "registers_per_thread": nvrtc::cubin_registers(&c.cubin),
        "spill_store_bytes": r.spill_stores, "spill_load_bytes": r.spill_loads, "stack_bytes": r.stack,
    });
    let n = |v: Option<u32>| v.map_or("?".to_string(), |v| v.to_string());
    // The log's warnings (its other lines are ptxas's resource report, given above).
    let warnings: Vec<&str> = c
        .log
        .lines()
        .filter(|l| l.to_ascii_lowercase().contains("warning"))
        .collect();
    let text = format!(
        "{} for {arch}: PTX {} bytes, cubin {} bytes; {} registers per thread, {} bytes spilled (stores) and {} reloaded, {} bytes of stack; {} threads and {} bytes of shared memory per CTA\nnvrtc warnings: {}",
        p.name,
        c.ptx.len(),
        c.cubin.len(),
        nvrtc::cubin_registers(&c.cubin).map_or("?".to_string(), |r| r.to_string()),
        n(r.spill_stores),
        n(r.spill_loads),
        n(r.stack),
        p.launch.threads,
        p.shared_bytes,
        if warnings.is_empty() { "none".to_string() } else { warnings.join("\n") }
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

fn run_kernel(
    kernel: KernelName,
    params: &Params,
    (backend, target): (Backend, Option<&str>),
    venv: &Option<String>,
    inputs: &[String],
    output: &str,
) -> Result<Report, String> {
    let asked: Option<Target> = target.map(str::parse).transpose().map_err(err)?;
    if kernel == KernelName::GemmReduceScatter && backend == Backend::Cpu {
        let t = asked.unwrap_or(Target::Cpu);
        return crate::kernel_xdev::run_threads(params, t, inputs, output);
    }
    if kernel == KernelName::GemmReduceScatter || backend == Backend::Mpi {
        return Err(
            "across devices, gemm_reduce_scatter runs on --backend cpu (one thread per device) or \
             --backend mpi (one rank per device, under mpirun); other kernels run on cpu or cuda"
                .into(),
        );
    }
    let target = match backend {
        Backend::Cpu | Backend::Mpi => asked.unwrap_or(Target::Cpu),
        Backend::Cuda => {
            let own = gpu_target()?;
            if asked.is_some_and(|a| a != own) {
                return Err(format!(
                    "--target {}: the GPU runs its own target's program ({own})",
                    asked.map_or("", |a| a.name())
                ));
            }
            own
        }
    };
    let inst = instance(kernel, params, target)?;
    let ins: Vec<_> = inst.inputs().collect();
    if ins.len() != inputs.len() {
        return Err(format!(
            "{} takes {} input file(s) ({}); {} given",
            kernel.name(),
            ins.len(),
            ins.iter().map(|b| b.name).collect::<Vec<_>>().join(", "),
            inputs.len()
        ));
    }
    // Lowered, and its memory checked, before any buffer is read or made.
    let lowered = match backend {
        Backend::Cpu | Backend::Mpi => {
            let p = lower(&inst.kernel, target).map_err(err)?;
            RunLimits::default().admit(&p).map_err(err)?;
            Some(p)
        }
        Backend::Cuda => None,
    };
    let total = inst
        .params
        .iter()
        .try_fold(0u64, |a, b| a.checked_add(b.bytes))
        .ok_or("the kernel's buffers overflow 64 bits")?;
    crate::kernel_shipped::fits_in_memory(total)?;
    let mut files = inputs.iter();
    let mut globals = Vec::new();
    for b in &inst.params {
        let data = match (b.input, files.next()) {
            (true, Some(path)) if kernel == KernelName::Gemm && b.name == "b" => {
                crate::kernel_shipped::read_gemm_b(path, &b.array, b.bytes)?
            }
            (true, Some(path)) => read_input(path, &b.array, b.bytes)?,
            _ => {
                // On the GPU, outputs the kernel overwrites start poisoned, so a byte it misses shows.
                let fill = if backend == Backend::Cuda && !b.accumulates {
                    0xA5
                } else {
                    0
                };
                crate::kernel_shipped::buffer(b.bytes, fill)?
            }
        };
        globals.push(data);
    }
    let (out, calls, on) = match lowered {
        Some(p) => {
            let out = interpret(&p, globals, RunLimits::default()).map_err(err)?;
            (out, p.decisions.len(), "the cpu interpreter".to_string())
        }
        None => run_on_gpu(&inst.kernel, globals, venv)?,
    };
    let (i, result) = inst
        .params
        .iter()
        .enumerate()
        .find(|(_, b)| !b.input)
        .ok_or("the kernel has no output")?;
    let bytes = out.get(i).ok_or("the kernel returned no output")?;
    write_output(output, &result.array, bytes)?;
    let name = match backend {
        Backend::Cpu | Backend::Mpi => "cpu",
        Backend::Cuda => "cuda",
    };
    let (bytes_in, bytes_out): (u64, u64) = (
        inst.inputs().map(|b| b.bytes).sum(),
        inst.params
            .iter()
            .filter(|b| !b.input)
            .map(|b| b.bytes)
            .sum(),
    );
    Ok(Report {
        json: json!({"kernel": kernel.name(), "backend": name, "device": on, "what": inst.describe,
                     "bytes_in": bytes_in, "bytes_out": bytes_out, "calls": calls}),
        text: format!(
            "{} on {on}: {bytes_in} bytes in, {bytes_out} bytes out, {calls} call{}",
            inst.describe,
            if calls == 1 { "" } else { "s" }
        ),
    })
}

/// Runs a kernel once on the GPU with its global buffers.
#[cfg(feature = "cuda")]
fn run_on_gpu(
    k: &axe_kernel::Kernel,
    globals: Vec<Vec<u8>>,
    venv: &Option<String>,
) -> Result<(Vec<Vec<u8>>, usize, String), String> {
    let (out, p, name) = crate::gpu::run_kernel(k, globals, &crate::gpu::venv(venv))?;
    Ok((out, p.decisions.len(), name))
}

#[cfg(feature = "cuda")]
fn gpu_target() -> Result<Target, String> {
    let gpu = crate::gpu::open()?;
    Ok(crate::gpu::target_of(&gpu)?.0)
}

#[cfg(not(feature = "cuda"))]
fn gpu_target() -> Result<Target, String> {
    Err(crate::gpu::no_cuda())
}

#[cfg(not(feature = "cuda"))]
fn run_on_gpu(
    _: &axe_kernel::Kernel,
    _: Vec<Vec<u8>>,
    _: &Option<String>,
) -> Result<(Vec<Vec<u8>>, usize, String), String> {
    Err(crate::gpu::no_cuda())
}

pub fn run(verb: Verb) -> bool {
    match verb {
        Verb::List { json } => emit([Ok(list())], json),
        Verb::Emit { spec, output } => {
            let r = emit_target(&spec.target)
                .and_then(|()| build(&spec))
                .and_then(|(_, p)| {
                    if p.target == Target::Trn1.name() {
                        emit_nki(&p).map_err(err)
                    } else {
                        emit_cuda(&p).map_err(err)
                    }
                });
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
        Verb::Explain { spec } if spec.kernel == KernelName::GemmReduceScatter => {
            let r = spec
                .target
                .parse()
                .map_err(err)
                .and_then(|t| crate::kernel_xdev::explain(&spec.params, t));
            emit([r], spec.json)
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
            kernel: KernelName::GemmReduceScatter,
            params,
            backend: Backend::Mpi,
            target,
            inputs,
            output,
            json,
            ..
        } => match target.as_deref().map(str::parse).transpose() {
            Ok(t) => crate::kernel_xdev::run_mpi(
                &params,
                t.unwrap_or(Target::Cpu),
                &inputs,
                &output,
                json,
            ),
            Err(e) => emit([Err::<Report, String>(err(e))], json),
        },
        Verb::Run {
            kernel,
            params,
            backend,
            target,
            venv: v,
            inputs,
            output,
            json,
        } => emit(
            [run_kernel(
                kernel,
                &params,
                (backend, target.as_deref()),
                &v,
                &inputs,
                &output,
            )],
            json,
        ),
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
