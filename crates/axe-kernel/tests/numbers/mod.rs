//! Test inputs for the gemm tests: values exactly representable in a dtype, and their bytes.
#![allow(dead_code)]

use axe_kernel::DType;

/// Values exactly representable in `d`, from a fixed sequence.
pub fn values(n: usize, seed: u64, d: DType) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let v = ((s >> 40) as f64 / (1u64 << 24) as f64 * 4.0 - 2.0) as f32;
            match d {
                DType::F16 => half::f16::from_f32(v).to_f32(),
                DType::BF16 => half::bf16::from_f32(v).to_f32(),
                _ => v,
            }
        })
        .collect()
}

pub fn encode(x: &[f32], d: DType) -> Vec<u8> {
    x.iter()
        .flat_map(|&v| match d {
            DType::F32 => v.to_le_bytes().to_vec(),
            DType::F16 => half::f16::from_f32(v).to_le_bytes().to_vec(),
            _ => half::bf16::from_f32(v).to_le_bytes().to_vec(),
        })
        .collect()
}

pub fn decode_f32(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Asserts `got` (`[M, N]` row-major) is `A·B` (A `[M, K]` row-major, B column-major as `[N, K]`)
/// within the f32 accumulation bound `(K + 1)·2⁻²⁴·Σ|a·b|` of each element.
pub fn assert_gemm_close(got: &[f32], a: &[f32], b: &[f32], m: u64, n: u64, k: u64) {
    let a64: Vec<f64> = a.iter().map(|&v| f64::from(v)).collect();
    let b64: Vec<f64> = b.iter().map(|&v| f64::from(v)).collect();
    let want = axe_kernel::gemm_kernel::gemm_reference(m, n, k, &a64, &b64).unwrap();
    let k = k as usize;
    assert_eq!(got.len(), want.len());
    for (x, (g, w)) in got.iter().zip(&want).enumerate() {
        let (i, j) = (x / n as usize, x % n as usize);
        let mag: f64 = (0..k)
            .map(|kk| (a64[i * k + kk] * b64[j * k + kk]).abs())
            .sum();
        let tol = (k as f64 + 1.0) * 2f64.powi(-24) * mag + 1e-30;
        assert!(
            (f64::from(*g) - w).abs() <= tol,
            "C[{i}, {j}] = {g}, the reference is {w} (tolerance {tol})"
        );
    }
}
