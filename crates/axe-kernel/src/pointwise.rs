//! Pointwise `unary`, `binary` and `cast`: one element per thread per round, spread over the scope.
//!
//! **`exp` on f32** is [`exp_sub`] in both backends, the same formula around each platform's f32
//! exponential (the C library's `expf` on the CPU, within 1 ulp; CUDA's `expf` on the GPU, within 2):
//! `binary exp_sub(a, b)` is `e^(a - b)` with the rounding of `a - b` carried into the exponential
//! (softmax's shift by the row max); the interpreter runs the Rust function, the CUDA source the
//! device function [`exp_sub_cuda`]. `unary exp(x)` is `exp_sub(x, 0)`, whose correction is exactly
//! 0: the platform's `expf(x)` bit for bit, which the CUDA source calls directly.

use crate::desc::{BinaryOp, Call, Op, UnaryOp};
use crate::dispatch::{Ctx, Outcome, Variant};
use crate::dtype::DType;
use crate::error::Result;
use crate::ir::{Compute, LStmt};
use crate::spread::{access, replica_offsets, spread, workers};

/// Dtypes pointwise arithmetic is lowered for.
pub const ARITH: [DType; 3] = [DType::F32, DType::F64, DType::S32];
/// Dtypes `cast` converts between.
pub const CASTS: [DType; 5] = [DType::F32, DType::F64, DType::F16, DType::BF16, DType::S32];

/// `e^(a - b)` in f32 with the difference carried exactly.
///
/// **Law.** For finite `a`, `b` with `a - b < 88` and finite: `s = a - b` rounded and its rounding error `t`
/// (two-sum, exact: `s + t = a - b`, `|t| ≤ ulp(s)/2 < 2.7·10⁻⁶`); the result is `e^s + e^s·t` by one
/// fused multiply-add, which is `e^(a-b)` up to `t²/2 < 4·10⁻¹²` relative plus one rounding and the
/// error of the f32 exponential `e^s` itself. Rounding `a - b` first instead costs up to
/// `|a - b|·2⁻²⁴` relative — 10⁻⁶ once `a` is 16 below `b` (softmax's elements below the row max).
/// For `a - b ≥ 88` (results beyond f32), infinite or NaN differences it is the exponential of the
/// rounded difference. [`exp_sub_cuda`] is the same formula in CUDA.
pub fn exp_sub(a: f32, b: f32) -> f32 {
    let s = a - b;
    let e = s.exp();
    // The correction wherever the exponential is finite, subnormal results included (there the
    // rounding of `a - b` is still many of their ulps); not for NaN or infinite differences.
    if s.is_nan() || s.is_infinite() || s >= 88.0 {
        return e;
    }
    let nb = -b;
    let av = s - nb;
    let bv = s - av;
    let t = (a - av) + (nb - bv);
    e.mul_add(t, e)
}

/// [`exp_sub`] as a CUDA device function `axe_exp_sub(a, b)`: the same operations in the same order
/// around CUDA's `expf`. No multiply is left for NVRTC to contract: the one product is inside `fmaf`.
/// (A polynomial exponential giving the CPU's bits on the GPU too measured 1545–1583 GB/s against
/// 1943–1968 for this one on bf16 softmax on an H100: the exponential's work, not memory, set the pace.)
pub fn exp_sub_cuda() -> String {
    String::from(
        "__device__ __forceinline__ float axe_exp_sub(float a, float b) {\n  const float s = a - b;\n  const float e = expf(s);\n  if (!(s < 88.0f) || isinf(s)) return e;\n  const float nb = -b, av = s - nb, bv = s - av;\n  const float t = __fadd_rn(a - av, nb - bv);\n  return fmaf(e, t, e);\n}\n",
    )
}

struct Element {
    name: &'static str,
    op: &'static str,
}

impl Variant for Element {
    fn name(&self) -> &'static str {
        self.name
    }
    fn op(&self) -> &'static str {
        self.op
    }
    fn priority(&self) -> i32 {
        0
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let dst = call.op.dst();
        let srcs = call.op.sources();
        let f = match &call.op {
            Op::Unary { op, src, .. } => {
                if !ARITH.contains(&src.dtype) {
                    return Ok(Outcome::Declined(format!(
                        "pointwise arithmetic on {} is not lowered yet (f32, f64, s32 are)",
                        src.dtype
                    )));
                }
                if *op == UnaryOp::Exp && src.dtype == DType::S32 {
                    return Ok(Outcome::Declined(
                        "exp needs a floating-point dtype, the operand is s32".into(),
                    ));
                }
                Compute::Unary(*op, src.dtype)
            }
            Op::Binary { op, a, .. } => {
                if !ARITH.contains(&a.dtype) {
                    return Ok(Outcome::Declined(format!(
                        "pointwise arithmetic on {} is not lowered yet (f32, f64, s32 are)",
                        a.dtype
                    )));
                }
                if matches!(op, BinaryOp::Div | BinaryOp::ExpSub) && a.dtype == DType::S32 {
                    let what = if *op == BinaryOp::Div {
                        "division"
                    } else {
                        "exp_sub"
                    };
                    return Ok(Outcome::Declined(format!(
                        "{what} needs a floating-point dtype, the operands are s32"
                    )));
                }
                Compute::Binary(*op, a.dtype)
            }
            Op::Cast { src, .. } => {
                for d in [src.dtype, dst.dtype] {
                    if !CASTS.contains(&d) {
                        return Ok(Outcome::Declined(format!("casts from or to {d} are not lowered yet (f32, f64, f16, bf16, s32 are)")));
                    }
                }
                Compute::Cast {
                    from: src.dtype,
                    to: dst.dtype,
                }
            }
            _ => {
                return Ok(Outcome::Declined(format!(
                    "{} lowers pointwise operators only",
                    self.name
                )))
            }
        };
        for t in srcs.iter().chain([&dst]) {
            if !t.in_memory() {
                return Ok(Outcome::Declined(format!(
                    "{} lives in registers, which this variant does not address",
                    t.name
                )));
            }
        }
        let workers = match workers(&call.scope, ctx) {
            Ok(w) => w,
            Err(reason) => return Ok(Outcome::Declined(reason)),
        };
        let reps = replica_offsets(dst)?;
        let id = call.id;
        let code = spread(ctx, &workers, dst.size(), |_, c| {
            let mut ins = Vec::new();
            for s in &srcs {
                ins.push(access(s, &c, 1, 0)?);
            }
            let mut out = Vec::new();
            for r in &reps {
                out.push(LStmt::Compute {
                    call: id,
                    f,
                    dst: access(dst, &c, 1, *r)?,
                    srcs: ins.clone(),
                });
            }
            Ok(out)
        })?;
        let why = format!(
            "one element per thread per round, {} elements over {} threads",
            dst.size(),
            workers.count
        );
        Ok(Outcome::Lowered { why, code })
    }
}

static VARIANTS: [Element; 3] = [
    Element {
        name: "unary.element",
        op: "unary",
    },
    Element {
        name: "binary.element",
        op: "binary",
    },
    Element {
        name: "cast.element",
        op: "cast",
    },
];

/// The pointwise variants.
pub fn variants() -> Vec<&'static dyn Variant> {
    VARIANTS.iter().map(|v| v as &'static dyn Variant).collect()
}
