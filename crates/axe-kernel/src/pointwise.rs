//! Pointwise `unary`, `binary` and `cast`: one element per thread per round, spread over the scope.

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
                if *op == BinaryOp::Div && a.dtype == DType::S32 {
                    return Ok(Outcome::Declined(
                        "division needs a floating-point dtype, the operands are s32".into(),
                    ));
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
