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
