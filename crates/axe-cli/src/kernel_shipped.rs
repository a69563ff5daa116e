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
    /// its transpose, an `[N,K]` array in either order (`np.save('bt.npy', B.T)`), products and sums in f32.
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
            "--src SHAPE --dst LAYOUT",
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
    /// gemm_reduce_scatter: devices (one thread each on --backend cpu, at most 256; under mpirun,
    /// the rank count; explained and emitted up to 16384).
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
    let i = any_target(kernel, p, target)?;
    i.built_for.check(target).map_err(err)?;
    Ok(i)
}

/// The kernel `kernel` for parameters `p`, built for `target` where it is built per target.
fn any_target(
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
/// swapped). A `.npy` file may keep the array in either order: a Fortran-order one is moved into the
/// kernel's layout on the CPU (`axe_relayout`), so the kernel gets the same logical array.
pub fn read_input(path: &str, src: &ArrayShape, need: u64) -> Result<Vec<u8>, String> {
    let mut shape = src.clone();
    let input = crate::tensor_file::open_input(path, &mut shape, need)?;
    let mut data = buffer(need, 0)?;
    crate::tensor_file::read_into(input, &mut data, path)?;
    if shape.layout == src.layout {
        return Ok(data);
    }
    let layout = |a: &ArrayShape| {
        axe_relayout::TensorLayout::from_xla(a).map_err(|e| format!("{path}: {e}"))
    };
    let (from, to) = (layout(&shape)?, layout(src)?);
    let mut out = buffer(need, 0)?;
    axe_relayout::relayout(
        &data,
        &from,
        &mut out,
        &to,
        &axe_relayout::Options::default(),
    )
    .map_err(|e| format!("{path}: moving its {shape} into {src}: {e}"))?;
    Ok(out)
}

/// `read_input` for gemm's B, which the kernels take as its transpose: a file of shape `[K,N]` (B
/// itself) is refused saying so, since only its shape tells B from Bᵀ.
pub fn read_gemm_b(path: &str, src: &ArrayShape, need: u64) -> Result<Vec<u8>, String> {
    read_input(path, src, need).map_err(|e| {
        if e.starts_with(&format!("{path} has shape")) {
            format!(
                "{e}: gemm takes B as its transpose, an [N,K] array (save B.T, in either order: \
                 np.save('b.npy', B.T))"
            )
        } else {
            e
        }
    })
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

/// Refuses `bytes` of the kernel's buffers where they pass the memory this process may use.
pub fn fits_in_memory(bytes: u64) -> Result<(), String> {
    buffers_fit_in_memory("the kernel's buffers", bytes)
}

/// Refuses `bytes` of buffers (`what`, as in "the kernel's buffers") where they pass the memory this
/// process may use.
pub fn buffers_fit_in_memory(what: &str, bytes: u64) -> Result<(), String> {
    match usable_memory().filter(|&(t, _)| bytes > t) {
        Some((total, whose)) => Err(format!(
            "{what} of {bytes} bytes are more than {whose} ({total} bytes)"
        )),
        None => Ok(()),
    }
}

/// The memory this process may use, in bytes, and whose limit it is, where the system says: the
/// machine's (`MemTotal` in Linux's `/proc/meminfo`), or the control group's where that is lower (a
/// container's `memory.max`, or cgroup v1's `memory.limit_in_bytes`, the lowest along the group's
/// path).
fn usable_memory() -> Option<(u64, &'static str)> {
    let machine = physical_memory().map(|m| (m, "this machine's memory"));
    let group =
        cgroup_memory_limit().map(|m| (m, "the memory this process's control group allows"));
    match (machine, group) {
        (Some(m), Some(g)) => Some(if g.0 < m.0 { g } else { m }),
        (m, g) => m.or(g),
    }
}

/// The machine's memory in bytes, where the system says (`MemTotal` in Linux's `/proc/meminfo`).
fn physical_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The lowest memory limit on this process's control group and the groups above it (Linux), if any.
fn cgroup_memory_limit() -> Option<u64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let root = std::path::Path::new("/sys/fs/cgroup");
    groups
        .lines()
        .filter_map(|line| {
            // "0::/path" (v2) or "4:memory:/path" (v1).
            let mut fields = line.splitn(3, ':');
            let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            let (base, file) = match controllers {
                "" => (root.to_path_buf(), "memory.max"),
                c if c.split(',').any(|c| c == "memory") => {
                    (root.join("memory"), "memory.limit_in_bytes")
                }
                _ => return None,
            };
            cgroup_path_limit(&base, path.trim_start_matches('/'), file)
        })
        .min()
}

/// The lowest limit in `file` of the group at `path` under `base` and the groups above it.
fn cgroup_path_limit(base: &std::path::Path, path: &str, file: &str) -> Option<u64> {
    let mut dir = base.join(path);
    let mut lowest: Option<u64> = None;
    loop {
        // "max" (v2) or a number near 2^63 (v1) means no limit.
        let limit = std::fs::read_to_string(dir.join(file))
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .filter(|&l| l < 1 << 62);
        lowest = match (lowest, limit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if dir == base || !dir.pop() || !dir.starts_with(base) {
            return lowest;
        }
    }
}

/// Writes the output: raw bytes, or a `.npy` file where its layout is row-major or column-major
/// (atomically either way).
pub fn write_output(path: &str, dst: &ArrayShape, data: &[u8]) -> Result<(), String> {
    match crate::tensor_file::npy_header(path, Some(dst))? {
        None => crate::output::write_atomically(path, data),
        Some(header) => {
            let mut file = header.bytes.clone();
            file.extend_from_slice(data);
            header.finish(&mut file[header.bytes.len()..]);
            crate::output::write_atomically(path, &file)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The limit of a group is the lowest along its path up to the hierarchy's root; "max" and v1's
    /// near-2^63 mean none; a group with no file says nothing.
    #[test]
    fn a_groups_limit_is_the_lowest_above_it() {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().join("memory");
        let leaf = base.join("a/b/c");
        std::fs::create_dir_all(&leaf).unwrap();
        let put = |dir: &str, text: &str| {
            std::fs::write(base.join(dir).join("memory.max"), text).unwrap()
        };
        assert_eq!(cgroup_path_limit(&base, "a/b/c", "memory.max"), None);
        put("a/b/c", "max\n");
        put("a", "9223372036854771712\n");
        assert_eq!(cgroup_path_limit(&base, "a/b/c", "memory.max"), None);
        put("a/b", "1073741824\n");
        assert_eq!(
            cgroup_path_limit(&base, "a/b/c", "memory.max"),
            Some(1 << 30)
        );
        put("a/b/c", "2147483648\n");
        put("a", "536870912\n");
        assert_eq!(
            cgroup_path_limit(&base, "a/b/c", "memory.max"),
            Some(512 << 20)
        );
        // Nothing above the hierarchy's root is read.
        std::fs::write(root.path().join("memory.max"), "1").unwrap();
        assert_eq!(cgroup_path_limit(&base, "", "memory.max"), None);
    }
}
