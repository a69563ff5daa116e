//! Pointwise `unary`, `binary` and `cast`: one element per thread per round, spread over the scope.
//!
//! **`exp` on f32** is [`exp_sub`] in both backends: the interpreter runs the Rust function, the CUDA
//! source the device function [`exp_sub_cuda`], the same sequence of IEEE f32 operations (adds,
//! multiplies, fused multiply-adds, `rint`, exact scalings by powers of two), so the two compute the
//! same bits. `exp(x)` is `exp_sub(x, 0)`; `binary exp_sub(a, b)` is `e^(a - b)` with the rounding
//! of `a - b` carried into the exponential (softmax's shift by the row max).

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

/// `ln 2` split for Cody–Waite reduction: the high part (0.693145751953125) has 16 significant
/// bits, so `k · LN2_HI` is exact for `|k| < 2^8`.
const LN2_HI: f32 = f32::from_bits(0x3f31_7200);
/// `ln 2 - LN2_HI`.
const LN2_LO: f32 = f32::from_bits(0x35bf_be8e);
/// `log₂ e`.
const LOG2E: f32 = std::f32::consts::LOG2_E;
/// Taylor coefficients of `e^r`, `1/7!` down to `1/2!` (the last two, 1 and 1, are written out).
const TAYLOR: [f32; 6] = [
    1.0 / 5040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
];

/// `2^j` for `-126 ≤ j ≤ 127`, from its bits.
fn pow2(j: i32) -> f32 {
    f32::from_bits(((j + 127) as u32) << 23)
}

/// `e^(a - b)` in f32 with the difference carried exactly.
///
/// **Law.** For finite `a`, `b`: `s = a - b` rounded and its rounding error `t` (two-sum, exact:
/// `s + t = a - b`); `k = rint(s · log₂e)`; `r = s - k·ln2 + t` (Cody–Waite, by fused multiply-adds);
/// `e^r` by its Taylor polynomial of degree 7 (truncation under 6·10⁻⁹ relative for `|r| ≤ 0.35`),
/// Horner by fused multiply-adds; scaled by `2^k` in two exact-or-once-rounded steps. The result is
/// within about 1 ulp of `e^(a-b)` for every `a - b` whose exponential is a normal f32; `0` below
/// `-104`, `+inf` above `88.8` (beyond f32), NaN for NaN. [`exp_sub_cuda`] is the same function in CUDA.
pub fn exp_sub(a: f32, b: f32) -> f32 {
    let s = a - b;
    if s.is_nan() || s > 88.8 {
        return if s > 0.0 { f32::INFINITY } else { s };
    }
    if s < -104.0 {
        return 0.0;
    }
    let nb = -b;
    let av = s - nb;
    let bv = s - av;
    let t = (a - av) + (nb - bv);
    let k = (s * LOG2E).round_ties_even();
    let mut r = (-k).mul_add(LN2_HI, s);
    r = (-k).mul_add(LN2_LO, r);
    r += t;
    let mut p = TAYLOR[0];
    for c in &TAYLOR[1..] {
        p = p.mul_add(r, *c);
    }
    p = p.mul_add(r, 1.0);
    p = p.mul_add(r, 1.0);
    let k = k as i32;
    let k1 = k / 2;
    p * pow2(k1) * pow2(k - k1)
}

/// [`exp_sub`] as a CUDA device function `axe_exp_sub(a, b)`: the same operations in the same order,
/// its constants printed from the Rust ones (shortest round-trip decimals, so the same f32 values).
/// NVRTC contracts no multiply with an add here: every multiply is `__fmul_rn` or inside an `fmaf`.
pub fn exp_sub_cuda() -> String {
    let f = |x: f32| format!("{x:?}f");
    let mut s = String::from(
        "__device__ __forceinline__ float axe_exp_sub(float a, float b) {\n  const float s = a - b;\n  if (s != s || s > 88.8f) return s > 0.0f ? __int_as_float(0x7f800000) : s;\n  if (s < -104.0f) return 0.0f;\n  const float nb = -b, av = s - nb, bv = s - av;\n  const float t = __fadd_rn(a - av, nb - bv);\n",
    );
    s += &format!(
        "  const float k = rintf(__fmul_rn(s, {}));\n  float r = fmaf(-k, {}, s);\n  r = fmaf(-k, {}, r);\n  r = __fadd_rn(r, t);\n  float p = {};\n",
        f(LOG2E),
        f(LN2_HI),
        f(LN2_LO),
        f(TAYLOR[0])
    );
    for c in &TAYLOR[1..] {
        s += &format!("  p = fmaf(p, r, {});\n", f(*c));
    }
    s += "  p = fmaf(p, r, 1.0f);\n  p = fmaf(p, r, 1.0f);\n  const int ki = (int)k, k1 = ki / 2;\n  return __fmul_rn(__fmul_rn(p, __int_as_float((k1 + 127) << 23)), __int_as_float((ki - k1 + 127) << 23));\n}\n";
    s
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
