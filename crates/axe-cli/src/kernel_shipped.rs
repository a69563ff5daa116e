//! The shipped kernels as the command line names them: their parameters, their global buffers, and the
//! files those are read from and written to.

use axe_kernel::DType;
use axe_xla::{parse_layout, parse_shape, ArrayShape, Shape};
use clap::Args;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Kernel names.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum KernelName {
    /// `relayout --src SHAPE --dst LAYOUT`: one array between two XLA layouts.
    Relayout,
    /// `softmax --rows R --cols C [--dtype f32|f16|bf16]`: softmax over each row of a row-major array.
    Softmax,
    /// `gemm --m M --n N --k K [--dtype bf16|f16]`: C[M,N] (f32) = A[M,K] · B, A row-major, B given as
    /// its transpose `[N,K]` row-major (B column-major), products and sums in f32.
    Gemm,
    /// `gemm_reduce_scatter --m M --n N --k K [--dtype bf16|f16] [--devices P]`: the gemm across P
    /// devices, each multiplying a K-slice, the partial sums reduce-scattered along M (emit and compile:
    /// the per-device gemm, `M×N×K/P`).
    #[value(name = "gemm_reduce_scatter")]
    GemmReduceScatter,
}

impl KernelName {
    /// Every shipped kernel: name, parameters, usage.
    pub const ALL: [(
        KernelName,
        &'static str,
        &'static [&'static str],
        &'static str,
    ); 4] = [
        (
            KernelName::Relayout,
            "relayout",
            &["src", "dst"],
            "--src SHAPE --dst SHAPE",
        ),
        (
            KernelName::Softmax,
            "softmax",
            &["rows", "cols", "dtype"],
            "--rows R --cols C [--dtype f32|f16|bf16]",
        ),
        (
            KernelName::Gemm,
            "gemm",
            &["m", "n", "k", "dtype"],
            "--m M --n N --k K [--dtype bf16|f16]",
        ),
        (
            KernelName::GemmReduceScatter,
            "gemm_reduce_scatter",
            &["m", "n", "k", "dtype", "devices"],
            "--m M --n N --k K [--dtype bf16|f16] [--devices P]",
        ),
    ];

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            KernelName::Relayout => "relayout",
            KernelName::Softmax => "softmax",
            KernelName::Gemm => "gemm",
            KernelName::GemmReduceScatter => "gemm_reduce_scatter",
        }
    }
}

/// A shipped kernel's parameters (each kernel takes its own).
#[derive(Args)]
pub struct Params {
    /// relayout: the source array with its layout, e.g. 'bf16[256,512]{1,0}'.
    #[arg(long)]
    src: Option<String>,
    /// relayout: the destination, a whole shape or just a layout, e.g. '{1,0:T(8,128)(2,1)}'.
    #[arg(long)]
    dst: Option<String>,
    /// softmax: rows of the row-major array.
    #[arg(long)]
    rows: Option<u64>,
    /// softmax: columns (each row's length, at most 16384).
    #[arg(long)]
    cols: Option<u64>,
    /// gemm: rows of A and C (a multiple of 128; on trn1 any size with a divisor of 2 to 128, or up to 128).
    #[arg(long)]
    m: Option<u64>,
    /// gemm: columns of B and C (a multiple of 128; any on trn1).
    #[arg(long)]
    n: Option<u64>,
    /// gemm: the length of the sum (a multiple of 32; on trn1 any size with a divisor of 2 to 128, or up to 128).
    #[arg(long)]
    k: Option<u64>,
    /// softmax: f32 (default), f16 or bf16; gemm: the element type of A and B, bf16 (default) or f16 (C
    /// is f32).
    #[arg(long)]
    dtype: Option<String>,
    /// gemm_reduce_scatter: devices (one thread each on --backend cpu; under mpirun, the rank count).
    #[arg(long)]
    pub devices: Option<u64>,
}

pub use axe_kernel::shipped::Shipped as Instance;

fn array(text: &str) -> Result<ArrayShape, String> {
    match parse_shape(text).map_err(err)? {
        Shape::Array(a) => Ok(a),
        other => Err(format!("{other} is not an array shape")),
    }
}

/// Refuses parameters the kernel does not take.
fn only(kernel: KernelName, p: &Params, takes: &[&str]) -> Result<(), String> {
    for (name, given) in [
        ("src", p.src.is_some()),
        ("dst", p.dst.is_some()),
        ("rows", p.rows.is_some()),
        ("cols", p.cols.is_some()),
        ("m", p.m.is_some()),
        ("n", p.n.is_some()),
        ("k", p.k.is_some()),
        ("dtype", p.dtype.is_some()),
        ("devices", p.devices.is_some()),
    ] {
        if given && !takes.contains(&name) {
            return Err(format!(
                "{} takes {}, not --{name}",
                kernel.name(),
                takes
                    .iter()
                    .map(|t| format!("--{t}"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ));
        }
    }
    Ok(())
}

/// The kernel `kernel` for parameters `p` as shipped for `target`.
pub fn instance(
    kernel: KernelName,
    p: &Params,
    target: axe_kernel::Target,
) -> Result<Instance, String> {
    match kernel {
        KernelName::Relayout => {
            only(kernel, p, &["src", "dst"])?;
            let (Some(src), Some(dst)) = (&p.src, &p.dst) else {
                return Err("relayout needs --src SHAPE and --dst LAYOUT".into());
            };
            let src = array(src)?;
            let t = dst.trim();
            let dst = if t.starts_with('{') {
                ArrayShape {
                    layout: parse_layout(t, src.rank()).map_err(err)?,
                    ..src.clone()
                }
            } else {
                array(t)?
            };
            Instance::relayout(&src, &dst).map_err(err)
        }
        KernelName::Softmax => {
            only(kernel, p, &["rows", "cols", "dtype"])?;
            let (Some(rows), Some(cols)) = (p.rows, p.cols) else {
                return Err("softmax needs --rows R --cols C".into());
            };
            let dtype: DType = p.dtype.as_deref().unwrap_or("f32").parse().map_err(err)?;
            if target == axe_kernel::Target::Trn1 {
                return Err("softmax keeps its rows in registers and shared memory, which trn1 has not: it is shipped for cpu, sm_80 and sm_90a".into());
            }
            Instance::softmax(rows, cols, dtype).map_err(err)
        }
        KernelName::Gemm => {
            only(kernel, p, &["m", "n", "k", "dtype"])?;
            let (Some(m), Some(n), Some(k)) = (p.m, p.n, p.k) else {
                return Err("gemm needs --m M --n N --k K".into());
            };
            let dtype: DType = p.dtype.as_deref().unwrap_or("bf16").parse().map_err(err)?;
            Instance::gemm_for(m, n, k, dtype, target).map_err(err)
        }
        KernelName::GemmReduceScatter => {
            // The per-device gemm (what each device emits, compiles and runs).
            let (m, n, k, dtype, devices) = gemm_rs_params(p)?;
            let g = axe_kernel::shipped::gemm_reduce_scatter((m, n, k), dtype, devices, target)
                .map_err(err)?;
            Instance::gemm_for(g.mnk.0, g.mnk.1, g.mnk.2 / devices, dtype, target).map_err(err)
        }
    }
}

/// gemm_reduce_scatter's `(M, N, K, dtype, devices)` (devices default 1).
pub fn gemm_rs_params(p: &Params) -> Result<(u64, u64, u64, DType, u64), String> {
    only(
        KernelName::GemmReduceScatter,
        p,
        &["m", "n", "k", "dtype", "devices"],
    )?;
    let (Some(m), Some(n), Some(k)) = (p.m, p.n, p.k) else {
        return Err("gemm_reduce_scatter needs --m M --n N --k K".into());
    };
    let dtype: DType = p.dtype.as_deref().unwrap_or("bf16").parse().map_err(err)?;
    Ok((m, n, k, dtype, p.devices.unwrap_or(1)))
}

/// The data bytes of the input: raw, or a `.npy` file's payload, checked against the source's
/// dimensions, element type and size before anything of its size is allocated (big-endian data is
/// swapped; a Fortran-order array is read where the source is column-major).
pub fn read_input(path: &str, src: &ArrayShape, need: u64) -> Result<Vec<u8>, String> {
    let mut shape = src.clone();
    let input = crate::tensor_file::open_input(path, &mut shape, need)?;
    if shape.layout != src.layout {
        return Err(format!(
            "{path} holds a column-major (Fortran-order) array, but the kernel reads {src}: save it in C order (numpy.ascontiguousarray)"
        ));
    }
    let mut data = buffer(need, 0)?;
    crate::tensor_file::read_into(input, &mut data, path)?;
    Ok(data)
}

/// `bytes` bytes of `fill`, or an error where memory cannot hold them (never an abort): more than
/// the machine's memory is refused before anything is allocated.
pub fn buffer(bytes: u64, fill: u8) -> Result<Vec<u8>, String> {
    fits_in_memory(bytes)?;
    let n = usize::try_from(bytes).map_err(|_| format!("{bytes} bytes do not fit in memory"))?;
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| format!("cannot allocate {bytes} bytes for the kernel's buffers"))?;
    v.resize(n, fill);
    Ok(v)
}

/// Refuses `bytes` of the kernel's buffers where they pass the machine's memory.
pub fn fits_in_memory(bytes: u64) -> Result<(), String> {
    match physical_memory().filter(|&t| bytes > t) {
        Some(total) => Err(format!(
            "the kernel's buffers of {bytes} bytes are more than this machine's memory ({total} bytes)"
        )),
        None => Ok(()),
    }
}

/// The machine's memory in bytes, where the system says (`MemTotal` in Linux's `/proc/meminfo`).
fn physical_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Writes the output: raw bytes, or a `.npy` file where its layout is row-major or column-major
/// (atomically either way).
pub fn write_output(path: &str, dst: &ArrayShape, data: &[u8]) -> Result<(), String> {
    match crate::tensor_file::npy_header(path, Some(dst))? {
        None => crate::output::write_atomically(path, data),
        Some(mut header) => {
            header.extend_from_slice(data);
            crate::output::write_atomically(path, &header)
        }
    }
}
