//! `axe bench kernel`: the shipped kernels on a GPU, each against the device's own reference in the same
//! run (the driver's device-to-device copy for relayout), timed by CUDA events, median of rounds after
//! warm-up; every output checked against the CPU first.

/// What `axe bench kernel` measures.
#[derive(clap::Args)]
pub struct KernelBench {
    /// One JSON object per case.
    #[arg(long)]
    json: bool,
    /// Timed rounds per case (the median is reported), after 3 warm-up runs; 1 to 1000.
    #[arg(long, default_value_t = 20, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub(crate) rounds: usize,
    /// The least size of each relayout case's source, in MiB: the standard cases' leading dimension is
    /// multiplied until the source is at least this large (1 to 16384).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=16384))]
    mib: u64,
    /// Softmax row lengths to measure (f32 and bf16 each, rows filling 256 MiB of f32), comma-separated.
    #[arg(long, default_value = "1024,4096,8192", value_delimiter = ',')]
    softmax_cols: Vec<u64>,
    /// Only the cases whose name (e.g. `relayout f32 transpose {1,0}->{0,1}`, `softmax f32[65536,1024]`)
    /// contains this (one that no case's name contains is an error listing the cases).
    #[arg(long)]
    only: Option<String>,
    /// Index arithmetic in 32 bits where every value fits (unsigned where none is negative) instead of
    /// 64, to see what the narrower arithmetic gains or loses.
    #[arg(long)]
    narrow_indices: bool,
    /// The most CTAs a relayout launches (each loops over the rest); 1 to 1,048,576.
    #[arg(long, default_value_t = axe_kernel::relayout::MAX_CTAS, value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    ctas: u32,
    /// The virtual environment holding nvidia-cuda-nvrtc (default: $AXE_VENV or ./.venv, else a CUDA
    /// toolkit's).
    #[arg(long)]
    venv: Option<String>,
}

/// The gemm shapes (M, N, K): squares, and the MLP products of Llama-3.1-8B and 70B at a batch of 8192.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub const GEMM_SHAPES: &[(u64, u64, u64)] = &[
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (8192, 14336, 4096),
    (8192, 4096, 14336),
    (8192, 28672, 8192),
    (8192, 8192, 28672),
];

#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
/// `shape` with its leading dimension multiplied by the least factor that makes its bytes at least
/// `least`: `f32[8192,8192]{1,0}` at 512 MiB is `f32[16384,8192]{1,0}`.
pub fn scaled(shape: &str, least: u64) -> Result<String, String> {
    let a = axe_xla::parse_shape(shape).map_err(|e| e.to_string())?;
    let a = a.as_array().ok_or("not an array")?;
    let bytes = axe_xla::sizes(a).map_err(|e| e.to_string())?.physical_bytes;
    let bytes = u64::try_from(bytes).map_err(|_| "a negative size")?.max(1);
    let k = least.div_ceil(bytes).max(1);
    let open = shape.find('[').ok_or("no dimensions")? + 1;
    let end = shape[open..]
        .find([',', ']'])
        .map(|e| open + e)
        .ok_or("no dimensions")?;
    let lead: u64 = shape[open..end]
        .parse()
        .map_err(|_| format!("{shape}: the leading dimension is not a number"))?;
    let lead = lead
        .checked_mul(k)
        .ok_or_else(|| format!("{shape} scaled {k} times overflows"))?;
    Ok(format!("{}{lead}{}", &shape[..open], &shape[end..]))
}

/// A number of a case's JSON (NaN when absent).
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
fn f(v: &serde_json::Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(f64::NAN)
}

#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The xorshift64 sequence (shifts 13, 7, 17) from `seed` (made odd, so that it never sticks at zero):
/// the bench's inputs, the same in every run.
#[cfg(feature = "cuda")]
pub fn xorshift(seed: u64) -> impl Iterator<Item = u64> {
    let mut x = seed | 1;
    std::iter::repeat_with(move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    })
}

#[cfg(feature = "cuda")]
mod on_gpu {
    use super::*;
    use axe_kernel::cuda::{geometry, Gpu};
    use serde_json::{json, Value};
    use std::path::Path;

    /// Random bytes (valid elements for `pred`: 0 or 1).
    fn random(n: usize, seed: u64, pred: bool) -> Vec<u8> {
        xorshift(seed)
            .take(n)
            .map(|x| {
                let b = (x >> 24) as u8;
                if pred {
                    b & 1
                } else {
                    b
                }
            })
            .collect()
    }

    /// One relayout case at full size: checked against the CPU relayout, then timed against the
    /// driver's copy of the larger buffer's bytes, rounds interleaved.
    pub fn relayout_case(
        gpu: &Gpu,
        name: &str,
        shape: &str,
        to: &str,
        args: &KernelBench,
        venv: &Path,
    ) -> Result<Value, String> {
        use axe_relayout::{relayout, Options, TensorLayout};
        let shape = scaled(shape, args.mib << 20)?;
        let s = axe_xla::parse_shape(&shape).map_err(|e| e.to_string())?;
        let src = s.as_array().ok_or("not an array")?.clone();
        let dst = axe_xla::ArrayShape {
            layout: axe_xla::parse_layout(to, src.rank()).map_err(|e| e.to_string())?,
            ..src.clone()
        };
        // A layout the kernel does not move (bit-packed elements) is reported, not failed.
        let r = match axe_kernel::relayout::relayout_kernel_with(&src, &dst, args.ctas) {
            Ok(r) => r,
            Err(e) => {
                return Ok(
                    json!({"kernel": "relayout", "case": name, "src": src.to_string(),
                                 "dst": dst.to_string(), "unsupported": e.to_string()}),
                )
            }
        };
        let width = if args.narrow_indices {
            axe_kernel::IndexWidth::Narrow
        } else {
            axe_kernel::IndexWidth::Wide
        };
        let ready = crate::gpu::prepare_with(gpu, &r.kernel, width, venv)?;
        let k = gpu
            .load(&ready.cubin, &ready.program.name)
            .map_err(|e| e.to_string())?;
        let geo = geometry(&ready.program).map_err(|e| e.to_string())?;
        let n_in = usize::try_from(r.src_bytes).map_err(|e| e.to_string())?;
        let input = random(
            n_in,
            0x9e37_79b9 ^ n_in as u64,
            src.element_type.to_string() == "pred",
        );
        // The CPU's answer.
        let (a, b) = (
            TensorLayout::from_xla(&src).map_err(|e| e.to_string())?,
            TensorLayout::from_xla(&dst).map_err(|e| e.to_string())?,
        );
        let mut want = vec![0u8; usize::try_from(b.bytes()).map_err(|e| e.to_string())?];
        relayout(&input, &a, &mut want, &b, &Options::default()).map_err(|e| e.to_string())?;
        let e = |e: axe_kernel::KernelError| e.to_string();
        let sbuf = gpu.upload(&input).map_err(e)?;
        let dbuf = gpu.alloc(r.dst_bytes).map_err(e)?;
        gpu.memset(&dbuf, 0xA5).map_err(e)?;
        gpu.launch(&k, geo, &[&sbuf, &dbuf]).map_err(e)?;
        gpu.sync("kernel relayout").map_err(e)?;
        let got = gpu.read(&dbuf, r.dst_bytes).map_err(e)?;
        let exact = got == want;
        let first_diff = (!exact)
            .then(|| got.iter().zip(&want).position(|(x, y)| x != y))
            .flatten();
        // The reference: the driver's copy of the larger buffer's bytes.
        let n = r.src_bytes.max(r.dst_bytes);
        let c_src = gpu.alloc(n).map_err(e)?;
        let c_dst = gpu.alloc(n).map_err(e)?;
        gpu.write(&c_src, &input).map_err(e)?;
        for _ in 0..3 {
            gpu.launch(&k, geo, &[&sbuf, &dbuf]).map_err(e)?;
            gpu.copy(&c_dst, &c_src, n).map_err(e)?;
        }
        gpu.sync("warm-up").map_err(e)?;
        // Rounds alternate kernel and copy (the device's speed drifts); each timed run follows an
        // untimed run of the same operation, so neither starts with the other's dirty lines in L2 to
        // write back (a copy leaves up to the whole L2 dirty; a kernel with a small output, little).
        let (mut ks, mut cs) = (Vec::new(), Vec::new());
        for _ in 0..args.rounds {
            gpu.launch(&k, geo, &[&sbuf, &dbuf]).map_err(e)?;
            ks.push(f64::from(
                gpu.time(&mut || gpu.launch(&k, geo, &[&sbuf, &dbuf]))
                    .map_err(e)?,
            ));
            gpu.copy(&c_dst, &c_src, n).map_err(e)?;
            cs.push(f64::from(
                gpu.time(&mut || gpu.copy(&c_dst, &c_src, n)).map_err(e)?,
            ));
        }
        let (kms, cms) = (median(ks), median(cs));
        let gbs = (r.src_bytes + r.dst_bytes) as f64 / (kms * 1e-3) / 1e9;
        let copy_gbs = 2.0 * n as f64 / (cms * 1e-3) / 1e9;
        Ok(json!({
            "kernel": "relayout", "case": name, "src": src.to_string(), "dst": dst.to_string(),
            "bytes_in": r.src_bytes, "bytes_out": r.dst_bytes, "exact": exact, "first_difference": first_diff,
            "ms": kms, "gbs": gbs, "copy_bytes": n, "copy_ms": cms, "copy_gbs": copy_gbs,
            "ratio": gbs / copy_gbs, "rounds": args.rounds,
            "grid": geo.grid, "threads": geo.threads, "shared_bytes": geo.shared_bytes,
            "index_type": match (args.narrow_indices, axe_kernel::range::narrow_type(&ready.program)) {
                (true, Some(t)) => t,
                _ => "long long",
            },
            "variants": ready.program.decisions.iter().map(|d| d.variant.clone()).collect::<Vec<_>>(),
        }))
    }
}

/// Runs the bench; false when a case failed or an output was wrong.
pub fn run(args: KernelBench) -> bool {
    #[cfg(feature = "cuda")]
    {
        let gpu = match crate::gpu::open() {
            Ok(g) => g,
            Err(e) => {
                eprintln!("error: {e}");
                return false;
            }
        };
        let venv = crate::gpu::venv(&args.venv);
        let mut ok = true;
        // Every case: its name (matched by --only), how to run it, and its one-line summary.
        type Run<'a> = Box<dyn Fn() -> Result<serde_json::Value, String> + 'a>;
        type Case<'a> = (String, Run<'a>, fn(&serde_json::Value) -> String);
        let mut cases: Vec<Case> = Vec::new();
        for (name, shape, to) in crate::bench_relayout::RELAYOUT_CASES {
            let (g, a, v) = (&gpu, &args, &venv);
            cases.push((
                format!("relayout {name}"),
                Box::new(move || on_gpu::relayout_case(g, name, shape, to, a, v)),
                |v| {
                    format!(
                        "{:>8.1} GB/s  copy {:>8.1} GB/s  ratio {:.2}  {}",
                        f(v, "gbs"),
                        f(v, "copy_gbs"),
                        f(v, "ratio"),
                        if v["exact"] == true {
                            "exact"
                        } else {
                            "WRONG BYTES"
                        }
                    )
                },
            ));
        }
        for cols in args.softmax_cols.clone() {
            for dtype in [axe_kernel::DType::F32, axe_kernel::DType::BF16] {
                let rows = ((256u64 << 20) / 4 / cols.max(1)).max(1);
                let (g, a, v) = (&gpu, &args, &venv);
                cases.push((
                    format!("softmax {dtype}[{rows},{cols}]"),
                    Box::new(move || {
                        crate::bench_kernel_gpu::softmax_case(g, dtype, rows, cols, a, v)
                    }),
                    |v| {
                        format!(
                            "{:>8.1} GB/s  max relative error {:.1e} (bound {:.1e})",
                            f(v, "gbs"),
                            f(v, "max_relative_error"),
                            f(v, "bound")
                        )
                    },
                ));
            }
        }
        for dtype in [axe_kernel::DType::BF16, axe_kernel::DType::F16] {
            for &(m, n, k) in GEMM_SHAPES {
                let (g, a, v) = (&gpu, &args, &venv);
                cases.push((
                    format!("gemm {dtype} {m}x{n}x{k}"),
                    Box::new(move || crate::bench_kernel_gpu::gemm_case(g, dtype, (m, n, k), a, v)),
                    |v| {
                        format!(
                            "{:>8.1} TFLOP/s  error/magnitude {:.1e} (bound {:.1e})",
                            f(v, "tflops"),
                            f(v, "max_error_over_magnitude"),
                            f(v, "bound")
                        )
                    },
                ));
            }
        }
        let cases = match crate::only::select(cases, |c| c.0.as_str(), args.only.as_deref()) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return false;
            }
        };
        if !args.json {
            println!(
                "{} (compute capability {}.{}, {} SMs, driver {}): {} rounds, median; ratio = GB/s (read + written) / the driver's device copy of the same bytes",
                gpu.name,
                gpu.capability.0,
                gpu.capability.1,
                gpu.multiprocessors,
                gpu.driver_version,
                args.rounds
            );
        }
        for (name, run, line) in &cases {
            let v = run().unwrap_or_else(|e| serde_json::json!({"case": name, "error": e}));
            if v.get("error").is_some() || v["exact"] == false {
                ok = false;
            }
            if args.json {
                println!("{v}");
            } else if let Some(e) = v.get("error") {
                println!("{name:<49} error: {}", e.as_str().unwrap_or(""));
            } else if let Some(e) = v.get("unsupported") {
                println!("{name:<49} not supported: {}", e.as_str().unwrap_or(""));
            } else {
                println!("{name:<49} {}", line(&v));
            }
        }
        ok
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (
            args.json,
            args.rounds,
            args.mib,
            &args.only,
            &args.venv,
            args.narrow_indices,
            args.ctas,
            &args.softmax_cols,
        );
        eprintln!("error: {}", crate::gpu::no_cuda());
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_multiplies_the_leading_dimension_up_to_the_size() {
        assert_eq!(
            scaled("f32[8192,8192]{1,0}", 256 << 20).as_deref(),
            Ok("f32[8192,8192]{1,0}")
        );
        assert_eq!(
            scaled("f32[8192,8192]{1,0}", 257 << 20).as_deref(),
            Ok("f32[16384,8192]{1,0}")
        );
        assert_eq!(
            scaled("s8[8192,8192]{1,0:T(8,128)(4,1)}", 256 << 20).as_deref(),
            Ok("s8[32768,8192]{1,0:T(8,128)(4,1)}")
        );
        assert_eq!(
            scaled("f32[256,256,256]{2,1,0}", 256 << 20).as_deref(),
            Ok("f32[1024,256,256]{2,1,0}")
        );
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
    }
}
