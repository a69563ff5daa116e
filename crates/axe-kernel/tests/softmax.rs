#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The shipped softmax kernel: the interpreter's output against the f64 reference, the schedule and
//! dispatch it gets, and the shapes it refuses.

use axe_kernel::softmax::{softmax_kernel, softmax_kernel_grid, softmax_reference, Softmax};
use axe_kernel::{emit_cuda, lower, run, DType, RunLimits, Target};

/// Inputs in [-10, 10] from a fixed linear congruential sequence.
fn input(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f64 / (1u64 << 24) as f64 * 20.0 - 10.0) as f32
        })
        .collect()
}

fn encode(x: &[f32], d: DType) -> Vec<u8> {
    x.iter()
        .flat_map(|&v| match d {
            DType::F32 => v.to_le_bytes().to_vec(),
            DType::F16 => half::f16::from_f32(v).to_le_bytes().to_vec(),
            _ => half::bf16::from_f32(v).to_le_bytes().to_vec(),
        })
        .collect()
}

fn decode(b: &[u8], d: DType) -> Vec<f64> {
    match d {
        DType::F32 => b
            .chunks(4)
            .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        DType::F16 => b
            .chunks(2)
            .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64())
            .collect(),
        _ => b
            .chunks(2)
            .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f64())
            .collect(),
    }
}

/// Runs `s` in the interpreter on `x`; the worst relative error against the reference (relative to
/// the dtype's least normal value where the reference is smaller).
fn worst_error(s: &Softmax, rows: u64, cols: u64, d: DType, seed: u64) -> f64 {
    worst_error_of(s, rows, cols, d, &input((rows * cols) as usize, seed))
}

fn worst_error_of(s: &Softmax, rows: u64, cols: u64, d: DType, x: &[f32]) -> f64 {
    let tiny = match d {
        DType::F16 => 2f64.powi(-14),
        _ => f64::from(f32::MIN_POSITIVE),
    };
    let x = x.to_vec();
    // The reference sees the values the kernel sees (rounded to the dtype).
    let seen = decode(&encode(&x, d), d);
    let want = softmax_reference(rows, cols, &seen).unwrap();
    let p = lower(&s.kernel, Target::Cpu).unwrap();
    let out = run(
        &p,
        vec![encode(&x, d), vec![0; s.bytes as usize]],
        RunLimits::default(),
    )
    .unwrap();
    let got = decode(&out[1], d);
    got.iter()
        .zip(&want)
        .map(|(g, w)| ((g - w) / w.abs().max(tiny)).abs())
        .fold(0.0, f64::max)
}

#[test]
fn the_interpreter_matches_the_f64_reference_within_1e_6() {
    // (rows, cols, max grid): warp rows, CTA rows, a row loop whose last block is partial.
    for (rows, cols, grid) in [
        (5, 32, 1056),
        (9, 96, 1),
        (3, 1024, 1056),
        (19, 64, 2),
        (2, 4096, 1056),
        (3, 2048, 2),
        (1, 1280, 1056),
        // Rows that are not whole chunks: padded in registers with -inf.
        (5, 100, 1056),
        (3, 33, 1),
        (2, 1000, 1056),
        (2, 1100, 1056),
        (2, 1, 1056),
    ] {
        let s = softmax_kernel_grid(rows, cols, DType::F32, grid).unwrap();
        let e = worst_error(&s, rows, cols, DType::F32, rows * cols);
        assert!(
            e <= 1e-6,
            "[{rows}, {cols}] grid {grid}: relative error {e}"
        );
    }
}

#[test]
fn half_precision_rows_compute_in_f32_and_round_once() {
    for d in [DType::F16, DType::BF16] {
        // Values in ±10, and in ±60 (the shift by the max reaches 120, past where f32 underflows).
        for scale in [1.0f32, 6.0] {
            for (rows, cols, seed) in [(4, 256, 7), (16, 1024, 8), (3, 4096, 9), (5, 100, 10)] {
                let s = softmax_kernel(rows, cols, d).unwrap();
                let x: Vec<f32> = input((rows * cols) as usize, seed)
                    .iter()
                    .map(|v| v * scale)
                    .collect();
                let e = worst_error_of(&s, rows, cols, d, &x);
                // One rounding to the 16-bit type, 2^-11 (f16) or 2^-8 (bf16) relative at most, of an
                // f32 value within about 7e-6 of the exact softmax (the shift's rounding,
                // |x - max|·2^-24 ≤ 5.2e-6 where the result is a normal f32, and a few f32 roundings).
                let half_ulp = if d == DType::F16 {
                    2f64.powi(-11)
                } else {
                    2f64.powi(-8)
                };
                assert!(
                    e <= half_ulp + 7e-6,
                    "{d} [{rows}, {cols}] ×{scale}: relative error {e}"
                );
            }
        }
        assert_eq!(
            softmax_kernel(4, 256, d).unwrap().schedule.vector,
            8,
            "16-byte chunks of 8 halves"
        );
    }
}

#[test]
fn the_schedule_is_a_warp_per_short_row_and_a_cta_per_long_row() {
    let s = softmax_kernel(10_000, 1024, DType::F32).unwrap().schedule;
    assert_eq!(
        (
            s.threads,
            s.row_threads,
            s.rows_per_cta,
            s.per_thread,
            s.vector
        ),
        (256, 32, 8, 32, 4)
    );
    assert_eq!((s.grid, s.iterations, s.padded), (1250, 1, 1024));
    let s = softmax_kernel(100, 16384, DType::F32).unwrap().schedule;
    assert_eq!(
        (
            s.threads,
            s.row_threads,
            s.rows_per_cta,
            s.per_thread,
            s.vector,
            s.grid
        ),
        (256, 256, 1, 64, 4, 100)
    );
    let s = softmax_kernel(3, 32, DType::F32).unwrap().schedule;
    assert_eq!((s.per_thread, s.vector, s.grid), (1, 1, 1));
    // 100 columns: chunks of 4, padded to 128 (4 per lane); 1100: chunks of 4 over 256 threads, 2048.
    let s = softmax_kernel(3, 100, DType::F32).unwrap().schedule;
    assert_eq!((s.vector, s.padded, s.per_thread), (4, 128, 4));
    let s = softmax_kernel(3, 1100, DType::F32).unwrap().schedule;
    assert_eq!(
        (s.row_threads, s.vector, s.padded, s.per_thread),
        (256, 4, 2048, 8)
    );
}

#[test]
fn dispatch_reduces_by_shuffles_in_a_warp_and_through_shared_memory_in_a_cta() {
    let variants = |rows, cols| {
        let p = lower(
            &softmax_kernel(rows, cols, DType::F32).unwrap().kernel,
            Target::Sm90a,
        )
        .unwrap();
        let v: Vec<String> = p.decisions.iter().map(|d| d.variant.clone()).collect();
        (v, emit_cuda(&p).unwrap())
    };
    let (v, cu) = variants(64, 512);
    assert_eq!(
        v,
        [
            "copy.registers.vector",
            "reduce.shfl",
            "binary.registers",
            "reduce.shfl",
            "fill.registers",
            "binary.registers",
            "binary.registers",
            "copy.registers.vector"
        ]
    );
    // One division a row (the sum's reciprocal), then products.
    assert_eq!(
        cu.matches(") / *reinterpret_cast<const float").count(),
        1,
        "{cu}"
    );
    assert_eq!(cu.matches("__shfl_xor_sync").count(), 10, "{cu}");
    assert!(!cu.contains("__syncthreads"), "{cu}");
    // The shift and exponential are one axe_exp_sub (the interpreter's exp_sub), not a rounded
    // difference then expf.
    assert!(cu.contains("= axe_exp_sub("), "{cu}");
    assert_eq!(
        cu.matches("expf(").count(),
        1,
        "only inside axe_exp_sub: {cu}"
    );
    // 16-bit rows: the shift rounded, then expf; no correction, one division a row.
    for d in [DType::BF16, DType::F16] {
        let p = lower(&softmax_kernel(64, 512, d).unwrap().kernel, Target::Sm90a).unwrap();
        let cu = emit_cuda(&p).unwrap();
        assert!(!cu.contains("= axe_exp_sub("), "{cu}");
        assert_eq!(cu.matches(") = expf(").count(), 16, "{d}: {cu}");
        assert_eq!(
            cu.matches(") / *reinterpret_cast<const float").count(),
            1,
            "{d}: {cu}"
        );
    }
    let (v, cu) = variants(4, 8192);
    assert_eq!(v[1], "reduce.smem");
    assert_eq!(v[3], "reduce.smem");
    assert_eq!(cu.matches("__syncthreads").count(), 4, "{cu}");
    // 1000 columns: a -inf fill, 7 whole chunks in vectors, the last chunk's 26 lanes one by one.
    let (v, _) = variants(4, 1000);
    assert_eq!(
        v[..4],
        [
            "fill.registers",
            "copy.registers.vector",
            "copy.registers",
            "reduce.shfl"
        ]
    );
}

#[test]
fn shapes_it_cannot_do_are_errors_saying_why() {
    let e = |r, c, d| softmax_kernel(r, c, d).unwrap_err().to_string();
    assert!(
        e(4, 32768, DType::F32).contains("at most 64 fit"),
        "{}",
        e(4, 32768, DType::F32)
    );
    assert!(e(4, 16416, DType::F32).contains("at most 64 fit"));
    softmax_kernel(4, 16384, DType::F32).unwrap();
    assert!(e(0, 32, DType::F32).contains("at least 1"));
    assert!(e(4, 32, DType::S32).contains("f32, f16 or bf16"));
    assert!(softmax_reference(2, 3, &[0.0; 5]).is_err());
}

#[test]
fn softmax_compiles_with_nvrtc_for_both_gpu_targets() {
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv");
    let Some(lib) = axe_kernel::nvrtc::find_nvrtc(&venv) else {
        eprintln!("skipped: no NVRTC under {}", venv.display());
        return;
    };
    for (rows, cols, d) in [
        (4096, 1024, DType::F32),
        (100, 32, DType::F32),
        (64, 16384, DType::F32),
        (64, 4096, DType::BF16),
        (64, 100, DType::F16),
        (64, 1000, DType::F32),
        (64, 1100, DType::F32),
    ] {
        let s = softmax_kernel(rows, cols, d).unwrap();
        for t in [Target::Sm80, Target::Sm90a] {
            let src = emit_cuda(&lower(&s.kernel, t).unwrap()).unwrap();
            let c = axe_kernel::nvrtc::compile_here(&lib, &src, "softmax", t.arch().unwrap())
                .unwrap_or_else(|e| panic!("{e}\n{src}"));
            assert!(c.ptx.contains(".entry softmax"), "{}", c.ptx);
            assert!(c.cubin.starts_with(b"\x7fELF"));
            let regs = axe_kernel::nvrtc::cubin_registers(&c.cubin).expect("registers");
            assert!((1..=255).contains(&regs), "{regs} registers");
            // Rows move in 16-byte vectors where a thread's chunk is 16 bytes; registers stay registers.
            if s.schedule.vector * u64::from(d.bytes()) == 16 {
                assert!(c.ptx.contains("ld.global.nc.v4"), "{}", c.ptx);
                assert!(c.ptx.contains("st.global.v4"), "{}", c.ptx);
            }
            assert!(!c.ptx.contains(".local"), "{}", c.ptx);
            // f32 math stays f32 on the GPU: the exponential is axe_exp_sub's f32 operations.
            if d == DType::F32 {
                assert!(!c.ptx.contains(".f64"), "{}", c.ptx);
            }
            if std::env::var_os("AXE_DUMP_PTX").is_some() {
                std::fs::write(format!("/tmp/sm/softmax_{rows}_{cols}_{d}_{t}.ptx"), &c.ptx)
                    .unwrap();
                std::fs::write(format!("/tmp/sm/softmax_{rows}_{cols}_{d}_{t}.cu"), &src).unwrap();
                eprintln!("{rows}x{cols} {d} {t}: {regs} registers");
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Random row lengths (warp rows, CTA rows, padded rows) and values spread over random widths
    /// (up to ±60, so the shift by the max reaches 120): every output within 1e-6 relative of f64.
    #[test]
    fn softmax_is_within_1e_6_of_f64_on_random_rows(
        rows in 1u64..4,
        cols in proptest::prop_oneof![1u64..80, 80u64..1100, 1100u64..2600],
        width in 0.5f64..60.0,
        seed in proptest::prelude::any::<u64>(),
    ) {
        let x: Vec<f32> = input((rows * cols) as usize, seed)
            .iter()
            .map(|v| (f64::from(*v) / 10.0 * width) as f32)
            .collect();
        let s = softmax_kernel(rows, cols, DType::F32).unwrap();
        let e = worst_error_of(&s, rows, cols, DType::F32, &x);
        proptest::prop_assert!(e <= 1e-6, "[{}, {}] width {}: relative error {}", rows, cols, width, e);
    }
}
