//! The GPU cases of `axe bench kernel` beyond relayout: softmax against its f64 reference, gemm against
//! sampled f64 dot products; each timed by CUDA events, median of rounds after warm-up.

use std::path::Path;

use axe_kernel::cuda::{geometry, Gpu};
use axe_kernel::shipped::gemm_for;
use axe_kernel::softmax::{softmax_kernel, softmax_reference};
use axe_kernel::DType;
use serde_json::{json, Value};

use crate::bench_kernel::{median, xorshift, KernelBench};

/// Uniform values in [-10, 10) from a xorshift generator.
fn softmax_inputs(n: usize, seed: u64) -> Vec<f32> {
    xorshift(seed)
        .take(n)
        .map(|x| ((x >> 40) as f32 / (1u64 << 24) as f32) * 20.0 - 10.0)
        .collect()
}

/// One softmax case: `rows × cols` of `dtype`, checked against the f64 reference, then timed.
pub fn softmax_case(
    gpu: &Gpu,
    dtype: DType,
    rows: u64,
    cols: u64,
    args: &KernelBench,
    venv: &Path,
) -> Result<Value, String> {
    let e = |e: axe_kernel::KernelError| e.to_string();
    let s = softmax_kernel(rows, cols, dtype).map_err(e)?;
    let ready = crate::gpu::prepare(gpu, &s.kernel, venv)?;
    let k = gpu.load(&ready.cubin, &ready.program.name).map_err(e)?;
    let geo = geometry(&ready.program).map_err(e)?;
    let n = usize::try_from(rows * cols).map_err(|e| e.to_string())?;
    let x = softmax_inputs(n, 0x5eed ^ cols);
    // The input as the kernel reads it, and its values as the reference sees them.
    let (bytes, seen): (Vec<u8>, Vec<f64>) = match dtype {
        DType::BF16 => {
            let h: Vec<u16> = x.iter().map(|v| (v.to_bits() >> 16) as u16).collect();
            (
                h.iter().flat_map(|v| v.to_le_bytes()).collect(),
                h.iter()
                    .map(|v| f64::from(f32::from_bits(u32::from(*v) << 16)))
                    .collect(),
            )
        }
        _ => (
            x.iter().flat_map(|v| v.to_le_bytes()).collect(),
            x.iter().map(|v| f64::from(*v)).collect(),
        ),
    };
    let want = softmax_reference(rows, cols, &seen).map_err(e)?;
    let xb = gpu.upload(&bytes).map_err(e)?;
    let yb = gpu.alloc(s.bytes).map_err(e)?;
    gpu.memset(&yb, 0xA5).map_err(e)?;
    gpu.launch(&k, geo, &[&xb, &yb]).map_err(e)?;
    gpu.sync("kernel softmax").map_err(e)?;
    let got = gpu.read(&yb, s.bytes).map_err(e)?;
    let value = |i: usize| -> f64 {
        match dtype {
            DType::BF16 => {
                let b = u16::from_le_bytes([got[2 * i], got[2 * i + 1]]);
                f64::from(f32::from_bits(u32::from(b) << 16))
            }
            _ => f64::from(f32::from_le_bytes([
                got[4 * i],
                got[4 * i + 1],
                got[4 * i + 2],
                got[4 * i + 3],
            ])),
        }
    };
    let mut worst = 0f64;
    for (i, w) in want.iter().enumerate() {
        let rel = (value(i) - w).abs() / w.abs().max(f64::MIN_POSITIVE);
        // NaN (an unwritten or poisoned element) is the worst error of all.
        worst = if rel.is_nan() {
            f64::INFINITY
        } else {
            worst.max(rel)
        };
    }
    // f32 within 1e-5 of the reference; bf16 within its own rounding (2^-8) and 1e-5.
    let bound = if dtype == DType::BF16 {
        1.0 / 256.0 + 1e-5
    } else {
        1e-5
    };
    for _ in 0..3 {
        gpu.launch(&k, geo, &[&xb, &yb]).map_err(e)?;
    }
    gpu.sync("warm-up").map_err(e)?;
    let mut ts = Vec::new();
    for _ in 0..args.rounds {
        ts.push(f64::from(
            gpu.time(&mut || gpu.launch(&k, geo, &[&xb, &yb]))
                .map_err(e)?,
        ));
    }
    let ms = median(ts);
    let name = if dtype == DType::BF16 { "bf16" } else { "f32" };
    Ok(json!({
        "kernel": "softmax", "case": format!("softmax {name}[{rows},{cols}]"), "dtype": name,
        "shape": [rows, cols], "bytes": s.bytes, "ms": ms, "gbs": 2.0 * s.bytes as f64 / (ms * 1e-3) / 1e9,
        "max_relative_error": worst, "bound": bound, "exact": worst <= bound,
        "grid": geo.grid, "threads": geo.threads, "rounds": args.rounds,
        "variants": ready.program.decisions.iter().map(|d| d.variant.clone()).collect::<Vec<_>>(),
    }))
}

/// A value of `dtype` (bf16 or f16) from `x`, as its bits, and the value it holds.
fn half(dtype: DType, x: f32) -> (u16, f64) {
    match dtype {
        DType::F16 => {
            let h = half::f16::from_f32(x);
            (h.to_bits(), f64::from(h.to_f32()))
        }
        _ => {
            let b = (x.to_bits() >> 16) as u16;
            (b, f64::from(f32::from_bits(u32::from(b) << 16)))
        }
    }
}

/// One gemm case: `C[M,N] = A[M,K]·B` (B as `[N,K]`) in `dtype`, 512 sampled entries checked against
/// f64 dot products within f32 accumulation error, then timed.
pub fn gemm_case(
    gpu: &Gpu,
    dtype: DType,
    (m, n, k): (u64, u64, u64),
    args: &KernelBench,
    venv: &Path,
) -> Result<Value, String> {
    let e = |e: axe_kernel::KernelError| e.to_string();
    let (target, _) = crate::gpu::target_of(gpu)?;
    let g = gemm_for(m, n, k, dtype, target).map_err(e)?;
    let ready = crate::gpu::prepare(gpu, &g.kernel, venv)?;
    let kern = gpu.load(&ready.cubin, &ready.program.name).map_err(e)?;
    let geo = geometry(&ready.program).map_err(e)?;
    let fill = |count: u64, seed: u64| -> Result<(Vec<u8>, Vec<f64>), String> {
        let n = usize::try_from(count).map_err(|e| e.to_string())?;
        let vals = softmax_inputs(n, seed);
        let mut bytes = Vec::with_capacity(2 * n);
        let mut seen = Vec::with_capacity(n);
        for v in vals {
            let (bits, x) = half(dtype, v / 10.0);
            bytes.extend_from_slice(&bits.to_le_bytes());
            seen.push(x);
        }
        Ok((bytes, seen))
    };
    let (ab, av) = fill(m * k, 0xa11ce ^ m ^ k)?;
    let (bb, bv) = fill(n * k, 0xb0b ^ n ^ k)?;
    let abuf = gpu.upload(&ab).map_err(e)?;
    let bbuf = gpu.upload(&bb).map_err(e)?;
    let cbuf = gpu.alloc(g.c_bytes).map_err(e)?;
    gpu.memset(&cbuf, 0).map_err(e)?;
    let maps = gpu
        .tensor_maps(&ready.program, &[&abuf, &bbuf, &cbuf])
        .map_err(e)?;
    let launch = || gpu.launch_mapped(&kern, geo, &[&abuf, &bbuf, &cbuf], &maps);
    launch().map_err(e)?;
    gpu.sync("kernel gemm").map_err(e)?;
    let c = gpu.read(&cbuf, g.c_bytes).map_err(e)?;
    // Sampled entries: |c − ref| within K·2^-23 of Σ|a·b| (f32 accumulation), every sample finite.
    let (ku, nu) = (k as usize, n as usize);
    let mut worst = 0f64;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..512 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let (i, j) = ((x % m) as usize, ((x >> 32) % n) as usize);
        let (mut dot, mut mag) = (0f64, 0f64);
        for t in 0..ku {
            let p = av[i * ku + t] * bv[j * ku + t];
            dot += p;
            mag += p.abs();
        }
        let at = 4 * (i * nu + j);
        let got = f64::from(f32::from_le_bytes([c[at], c[at + 1], c[at + 2], c[at + 3]]));
        let rel = (got - dot).abs() / mag.max(f64::MIN_POSITIVE);
        worst = if rel.is_finite() {
            worst.max(rel)
        } else {
            f64::INFINITY
        };
    }
    let bound = k as f64 * f64::from(f32::EPSILON);
    for _ in 0..3 {
        launch().map_err(e)?;
    }
    gpu.sync("warm-up").map_err(e)?;
    let mut ts = Vec::new();
    for _ in 0..args.rounds {
        ts.push(f64::from(gpu.time(&mut || launch()).map_err(e)?));
    }
    let ms = median(ts);
    let name = dtype.to_string();
    Ok(json!({
        "kernel": "gemm", "program": ready.program.name.clone(), "case": format!("gemm {name} {m}x{n}x{k}"), "dtype": name, "mnk": [m, n, k],
        "ms": ms, "tflops": 2.0 * (m * n * k) as f64 / (ms * 1e-3) / 1e12,
        "max_error_over_magnitude": worst, "bound": bound, "exact": worst <= bound,
        "grid": geo.grid, "threads": geo.threads, "shared_bytes": geo.shared_bytes, "rounds": args.rounds,
        "registers": axe_kernel::nvrtc::cubin_registers(&ready.cubin),
        "variants": ready.program.decisions.iter().map(|d| d.variant.clone()).collect::<Vec<_>>(),
    }))
}
