#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `exp_sub`, the f32 exponential both backends compute: its accuracy against f64, its edge values,
//! that it carries the rounding of the difference, and that the CUDA text is the same formula.

use axe_kernel::pointwise::{exp_sub, exp_sub_cuda};
use proptest::prelude::*;

/// The distance from `got` to `want` in units of the f32 ulp at `want` (the least normal's ulp below).
fn ulps(got: f32, want: f64) -> f64 {
    let w = want.abs().max(f64::from(f32::MIN_POSITIVE));
    let ulp = 2f64.powi(w.log2().floor() as i32 - 23);
    (f64::from(got) - want).abs() / ulp
}

#[test]
fn exp_is_within_one_ulp_on_a_dense_grid() {
    let mut worst = 0f64;
    let mut x = -87.0f32;
    while x < 88.7 {
        let e = ulps(exp_sub(x, 0.0), f64::from(x).exp());
        worst = worst.max(e);
        assert!(e <= 1.0, "exp({x}): {e} ulp");
        x += 0.000_731;
    }
    assert!(worst > 0.0);
}

#[test]
fn edges_are_zero_infinity_nan_and_one() {
    assert_eq!(exp_sub(0.0, 0.0), 1.0);
    assert_eq!(exp_sub(3.5, 3.5), 1.0);
    assert_eq!(exp_sub(f32::NEG_INFINITY, 0.0), 0.0);
    assert_eq!(exp_sub(f32::NEG_INFINITY, 2.0), 0.0);
    assert_eq!(exp_sub(-104.5, 0.0), 0.0);
    assert_eq!(exp_sub(89.0, 0.0), f32::INFINITY);
    assert_eq!(exp_sub(f32::INFINITY, 0.0), f32::INFINITY);
    assert!(exp_sub(f32::NAN, 0.0).is_nan());
    assert!(exp_sub(f32::INFINITY, f32::INFINITY).is_nan());
    // Subnormal results: within one subnormal step.
    for x in [-88.0f32, -95.0, -100.0, -103.0] {
        let got = f64::from(exp_sub(x, 0.0));
        assert!(
            (got - f64::from(x).exp()).abs() <= 2f64.powi(-149),
            "exp({x}) = {got}"
        );
    }
    assert!(exp_sub(88.7, 0.0).is_finite());
    // Subnormal results of a rounded difference: the rounding of 88.005 (ulp 7.6e-6) is some 16 of
    // their steps; carried, within one.
    let (a, b) = (-33.407_42f32, 54.597_946f32);
    let want = (f64::from(a) - f64::from(b)).exp();
    assert!(
        (f64::from(exp_sub(a, b)) - want).abs() <= 2f64.powi(-149),
        "{want:e}"
    );
    assert!((f64::from((a - b).exp()) - want).abs() > 4.0 * 2f64.powi(-149));
    // Infinite differences: no correction (it would be NaN).
    assert_eq!(exp_sub(f32::MAX, -f32::MAX), f32::INFINITY);
    assert_eq!(exp_sub(-f32::MAX, f32::MAX), 0.0);
}

#[test]
fn the_difference_s_rounding_is_carried() {
    // 1e-7 - (-20): the f32 difference rounds to 20 (ulp 2^-19), yet the result sees the 1e-7.
    let (a, b) = (-20.0f32, 1.0e-7f32);
    let exact = f64::from(a) - f64::from(b);
    assert_ne!(f64::from(a - b), exact);
    assert!(ulps(exp_sub(a, b), exact.exp()) <= 1.5);
    // Rounding the difference first is off by up to |a - b|·2^-24 relative.
    let (a, b) = (-9.876_543f32, 8.123_457f32);
    let exact = (f64::from(a) - f64::from(b)).exp();
    assert!(ulps(exp_sub(a, b), exact) <= 1.5);
    // Far below: 60 + 1.8e-6 rounds by about half of ulp(60) = 3.8e-6, some 15 ulp of the result.
    let (a, b) = (-60.0f32, 1.8e-6f32);
    let exact = (f64::from(a) - f64::from(b)).exp();
    assert!(ulps(exp_sub(a, b), exact) <= 1.5);
    assert!(
        ulps((a - b).exp(), exact) > 4.0,
        "rounding first loses more"
    );
}

#[test]
fn the_cuda_function_is_the_same_formula_around_expf() {
    let src = exp_sub_cuda();
    assert!(src.starts_with("__device__ __forceinline__ float axe_exp_sub(float a, float b)"));
    // No bare multiply that NVRTC could contract with an add: the one product is inside fmaf.
    assert_eq!(src.matches(" * ").count(), 0, "{src}");
    assert_eq!(src.matches("fmaf(").count(), 1, "{src}");
    assert_eq!(src.matches("expf(").count(), 1, "{src}");
}

proptest! {
    #[test]
    fn exp_sub_is_within_one_ulp_of_the_exact_difference_s_exponential(
        a in -50.0f32..40.0,
        b in -40.0f32..40.0,
    ) {
        let want = (f64::from(a) - f64::from(b)).exp();
        let e = ulps(exp_sub(a, b), want);
        // The exponential's own error (the C library's, under 1 ulp) and one rounding of the fma.
        prop_assert!(e <= 1.5, "exp({} - {}) off by {} ulp", a, b, e);
    }
}

/// The emitted device function, compiled for the host by a C compiler (CUDA's intrinsics shimmed by
/// their IEEE meanings, no contraction, `expf` the C library's as Rust's `f32::exp` is), returns the
/// bits `exp_sub` returns on edge values and on a quarter of a million random pairs: the two backends
/// compute the same formula. And `axe_exp_sub(x, 0)` is the C library's `expf(x)` bit for bit, which
/// lets the CUDA source write `unary exp` as `expf`. Skipped without `cc`.
#[test]
fn the_cuda_function_computes_the_rust_bits_on_the_host() {
    use std::process::Command;
    if Command::new("cc").arg("--version").output().is_err() {
        eprintln!("skipped: no cc");
        return;
    }
    // Removed when dropped, also when an assertion below fails.
    let dir = tempfile::Builder::new()
        .prefix("axe_exp_sub_")
        .tempdir()
        .unwrap();
    let c = format!(
        "#include <math.h>\n#include <stdio.h>\n#include <string.h>\n#define __device__\n#define __forceinline__ static inline\n\
         static inline float __int_as_float(int i) {{ float f; memcpy(&f, &i, 4); return f; }}\n\
         static inline float __fmul_rn(float a, float b) {{ return a * b; }}\n\
         static inline float __fadd_rn(float a, float b) {{ return a + b; }}\n{}\n\
         int main(int argc, char** argv) {{\n  FILE* in = fopen(argv[1], \"rb\"); FILE* out = fopen(argv[2], \"wb\");\n  float ab[2];\n\
         while (fread(ab, 4, 2, in) == 2) {{ float y[3] = {{ axe_exp_sub(ab[0], ab[1]), axe_exp_sub(ab[0], 0.0f), expf(ab[0]) }}; fwrite(y, 4, 3, out); }}\n  fclose(out); return 0;\n}}\n",
        exp_sub_cuda()
    );
    let (src, exe, input, output) = (
        dir.path().join("e.c"),
        dir.path().join("e"),
        dir.path().join("in.bin"),
        dir.path().join("out.bin"),
    );
    std::fs::write(&src, c).unwrap();
    let built = Command::new("cc")
        .args([
            "-O2",
            "-std=c11",
            "-ffp-contract=off",
            "-fno-fast-math",
            "-o",
        ])
        .arg(&exe)
        .arg(&src)
        .arg("-lm")
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let mut pairs: Vec<(f32, f32)> = vec![
        (0.0, 0.0),
        (f32::NEG_INFINITY, 1.0),
        (f32::INFINITY, 0.0),
        (f32::NAN, 0.0),
        (88.7, 0.0),
        (88.9, 0.0),
        (-103.9, 0.0),
        (-104.1, 0.0),
        (-20.0, 1.0e-7),
        (-0.0, 0.0),
        (1.0e-45, 0.0),
        (-1.0e-40, 0.0),
        (f32::NEG_INFINITY, 0.0),
        (f32::MAX, 0.0),
        (-f32::MAX, 0.0),
    ];
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 40) as f32 / (1u64 << 24) as f32
    };
    for _ in 0..250_000 {
        let (a, b) = (next() * 200.0 - 110.0, next() * 80.0 - 40.0);
        pairs.push((a, b));
    }
    let bytes: Vec<u8> = pairs
        .iter()
        .flat_map(|(a, b)| [a.to_le_bytes(), b.to_le_bytes()].concat())
        .collect();
    std::fs::write(&input, bytes).unwrap();
    let ran = Command::new(&exe)
        .arg(&input)
        .arg(&output)
        .output()
        .unwrap();
    assert!(ran.status.success());
    let got = std::fs::read(&output).unwrap();
    drop(dir);
    assert_eq!(got.len(), pairs.len() * 12);
    let same = |x: f32, y: f32| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
    for (i, ((a, b), y)) in pairs.iter().zip(got.chunks(12)).enumerate() {
        let [c, c0, e] =
            [0, 4, 8].map(|k| f32::from_le_bytes([y[k], y[k + 1], y[k + 2], y[k + 3]]));
        let r = exp_sub(*a, *b);
        assert!(same(c, r), "exp_sub({a}, {b}): CUDA text {c:e}, Rust {r:e}");
        // `unary exp` is emitted as `expf(x)`: the device function with 0 gives the same bits.
        assert!(
            same(c0, e),
            "pair {i}: axe_exp_sub({a}, 0) = {c0:e}, expf = {e:e}"
        );
    }
}

/// `exp(x)` is `exp_sub(x, 0)`: the correction is exactly 0, so the CUDA source calls `expf(x)` and
/// the two backends still compute the same function. Every f32 of a strided sweep of the bit
/// patterns (both signs, zeros, subnormals, infinities and NaNs among them) gives the same bits.
#[test]
fn exp_of_x_is_exp_sub_of_x_and_zero_bit_for_bit() {
    let mut n = 0u64;
    for bits in (0..=u32::MAX)
        .step_by(997)
        .chain([0x8000_0000, 0x7f80_0000, 0xff80_0000, 1])
    {
        let x = f32::from_bits(bits);
        let (a, b) = (exp_sub(x, 0.0), x.exp());
        assert!(
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            "x = {x:e} ({bits:#010x}): exp_sub(x, 0) = {a:e}, exp(x) = {b:e}"
        );
        n += 1;
    }
    assert!(n > 4_000_000);
}
