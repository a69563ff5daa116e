//! Element values in the interpreter: decoding a dtype's bytes to an exact value, computing on it
//! as the CUDA emission does, and encoding the result back, every float result rounded once.

use crate::desc::{BinaryOp, UnaryOp};
use crate::dtype::DType;
use crate::ir::Compute;
use crate::round;

/// An element value during computation.
#[derive(Debug, Clone, Copy)]
pub(super) enum Num {
    F(f64),
    I(i64),
}

impl Num {
    pub(super) fn decode(d: DType, b: &[u8]) -> Num {
        let arr = |n: usize| -> [u8; 8] {
            let mut a = [0u8; 8];
            a[..n].copy_from_slice(&b[..n]);
            a
        };
        match d {
            DType::F64 => Num::F(f64::from_le_bytes(arr(8))),
            DType::F32 => Num::F(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            DType::F16 => Num::F(half::f16::from_le_bytes([b[0], b[1]]).to_f64()),
            DType::BF16 => Num::F(half::bf16::from_le_bytes([b[0], b[1]]).to_f64()),
            DType::S32 => Num::I(i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            DType::S64 => Num::I(i64::from_le_bytes(arr(8))),
            DType::S16 => Num::I(i64::from(i16::from_le_bytes([b[0], b[1]]))),
            DType::S8 => Num::I(i64::from(b[0] as i8)),
            DType::U8 | DType::F8E4M3 => Num::I(i64::from(b[0])),
        }
    }

    pub(super) fn f(self) -> f64 {
        match self {
            Num::F(f) => f,
            Num::I(i) => i as f64,
        }
    }

    pub(super) fn encode(self, d: DType) -> Vec<u8> {
        let int = || match self {
            Num::I(i) => i,
            Num::F(f) => f as i64, // truncates toward zero, saturates, NaN → 0 (cvt.rzi.sat)
        };
        // Every float result is rounded once from the exact value (an i64, or the f64 computed), to
        // nearest even (f16 and bf16 by [`crate::round`], whose NaN is the canonical one PTX's `cvt`
        // gives).
        match d {
            DType::F64 => match self {
                Num::I(i) => (i as f64).to_le_bytes().to_vec(),
                Num::F(f) => f.to_le_bytes().to_vec(),
            },
            DType::F32 => match self {
                Num::I(i) => (i as f32).to_le_bytes().to_vec(),
                Num::F(f) => (f as f32).to_le_bytes().to_vec(),
            },
            DType::F16 => match self {
                Num::I(i) => round::i64_to_f16(i).to_le_bytes().to_vec(),
                Num::F(f) => round::f64_to_f16(f).to_le_bytes().to_vec(),
            },
            DType::BF16 => match self {
                Num::I(i) => round::i64_to_bf16(i).to_le_bytes().to_vec(),
                Num::F(f) => round::f64_to_bf16(f).to_le_bytes().to_vec(),
            },
            DType::S32 => match self {
                Num::I(i) => (i as i32).to_le_bytes().to_vec(),
                Num::F(f) => (f as i32).to_le_bytes().to_vec(),
            },
            DType::S64 => int().to_le_bytes().to_vec(),
            DType::S16 => (int() as i16).to_le_bytes().to_vec(),
            DType::S8 | DType::U8 | DType::F8E4M3 => vec![int() as u8],
        }
    }
}

pub(super) fn compute(f: &Compute, v: &[Num]) -> Num {
    let f32op = |d: DType, x: f64| {
        if d == DType::F32 {
            f64::from(x as f32)
        } else {
            x
        }
    };
    match (f, v) {
        (Compute::Unary(op, d), [Num::F(x)]) => Num::F(f32op(
            *d,
            match op {
                UnaryOp::Neg => -x,
                UnaryOp::Abs => x.abs(),
                UnaryOp::Exp => {
                    if *d == DType::F32 {
                        f64::from(crate::pointwise::exp_sub(*x as f32, 0.0))
                    } else {
                        x.exp()
                    }
                }
                UnaryOp::Relu => x.max(0.0),
            },
        )),
        (Compute::Unary(op, _), [Num::I(x)]) => Num::I(match op {
            UnaryOp::Neg => (*x as i32).wrapping_neg().into(),
            UnaryOp::Abs => (*x as i32).wrapping_abs().into(),
            UnaryOp::Exp | UnaryOp::Relu => (*x).max(0),
        }),
        (Compute::Binary(op, d), [Num::F(a), Num::F(b)]) => Num::F(f32op(
            *d,
            match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                BinaryOp::Max => a.max(*b),
                BinaryOp::Min => a.min(*b),
                BinaryOp::Div => a / b,
                BinaryOp::ExpSub if *d == DType::F32 => {
                    f64::from(crate::pointwise::exp_sub(*a as f32, *b as f32))
                }
                BinaryOp::ExpSub => (a - b).exp(),
            },
        )),
        (Compute::Binary(op, _), [Num::I(a), Num::I(b)]) => {
            let (a, b) = (*a as i32, *b as i32);
            Num::I(i64::from(match op {
                BinaryOp::Add => a.wrapping_add(b),
                BinaryOp::Sub => a.wrapping_sub(b),
                BinaryOp::Mul => a.wrapping_mul(b),
                BinaryOp::Max => a.max(b),
                BinaryOp::Min => a.min(b),
                // Dispatch declines integer division; never reached.
                BinaryOp::Div | BinaryOp::ExpSub => a.checked_div(b).unwrap_or(0),
            }))
        }
        (Compute::Cast { .. }, [x]) => *x,
        (Compute::Bit { bit, .. }, [x]) => Num::I(((x.f() as i64 as u32) >> bit & 1).into()),
        (Compute::OrBit { bit, .. }, [w, x]) => {
            let w = w.f() as i64 as u32 | ((x.f() as i64 as u32) & 1) << bit;
            Num::I(i64::from(w as i32))
        }
        (Compute::MulAdd(_), [c, a, b]) => Num::F(f64::from(
            (a.f() as f32).mul_add(b.f() as f32, c.f() as f32),
        )),
        (_, [x, ..]) => *x,
        (_, []) => Num::I(0),
    }
}
