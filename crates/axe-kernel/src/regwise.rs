//! Pointwise `unary`, `binary`, `cast` and `fill` on register tensors: each thread computes the elements
//! its destination registers hold, from the operands' copies in its own registers.
//!
//! Planned by enumeration as `reduce` is ([`crate::reduce`]): every copy of every destination element
//! needs each operand's element in the same thread, and every thread of the scope runs the same
//! register table (straight-line code with constant register offsets). An operand may broadcast: a
//! view of shape `dst.shape` whose layout repeats elements (stride 0), e.g. a row's max over its
//! columns. An operand sharing the destination's buffer must sit in the very registers it is computed
//! into (in place), so no element is overwritten before it is read.

use crate::desc::{BinaryOp, Call, Op, Space, UnaryOp};
use crate::dispatch::{Ctx, Outcome, Variant};
use crate::dtype::DType;
use crate::error::Result;
use crate::expr::Expr;
use crate::ir::{Access, Compute, LStmt};
use crate::places::places;
use crate::pointwise::{ARITH, CASTS};
use crate::scope::{Level, WARP};
use crate::spread::workers;

struct InRegisters {
    name: &'static str,
    op: &'static str,
}

impl Variant for InRegisters {
    fn name(&self) -> &'static str {
        self.name
    }
    fn op(&self) -> &'static str {
        self.op
    }
    fn priority(&self) -> i32 {
        // After the memory variants, which decline register tensors first.
        -1
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let no = |m: String| Ok(Outcome::Declined(m));
        let dst = call.op.dst();
        let srcs = call.op.sources();
        let float = |d: DType| matches!(d, DType::F32 | DType::F64);
        let mut fill = None;
        let f = match &call.op {
            Op::Fill { value, .. } => match crate::copy::encode(dst.dtype, *value) {
                Ok(b) => {
                    fill = Some(b);
                    None
                }
                Err(r) => return no(r),
            },
            Op::Unary { op, src, .. } => {
                if !ARITH.contains(&src.dtype) || (*op == UnaryOp::Exp && !float(src.dtype)) {
                    return no(format!("{op:?} on {} is not lowered in registers (f32, f64, and s32 but for exp, are)", src.dtype));
                }
                Some(Compute::Unary(*op, src.dtype))
            }
            Op::Binary { op, a, .. } => {
                if !ARITH.contains(&a.dtype)
                    || (matches!(op, BinaryOp::Div | BinaryOp::ExpSub) && !float(a.dtype))
                {
                    return no(format!("{op:?} on {} is not lowered in registers (f32, f64, and s32 but for division, are)", a.dtype));
                }
                Some(Compute::Binary(*op, a.dtype))
            }
            Op::Cast { src, .. } => {
                if !CASTS.contains(&src.dtype) || !CASTS.contains(&dst.dtype) {
                    return no(format!(
                        "casts from {} to {} are not lowered (f32, f64, f16, bf16, s32 are)",
                        src.dtype, dst.dtype
                    ));
                }
                Some(Compute::Cast {
                    from: src.dtype,
                    to: dst.dtype,
                })
            }
            _ => return no(format!("{} lowers pointwise operators only", self.name)),
        };
        for t in srcs.iter().chain([&dst]) {
            if t.space != Space::Registers {
                return no(format!(
                    "{} lives in {} memory; this variant computes in registers",
                    t.name,
                    crate::desc::space_name(t.space)
                ));
            }
        }
        let warps = match call.scope.level {
            Level::Warp => 1,
            Level::Warpgroup => 4,
            Level::Cta => ctx.kernel.launch.warps(),
            l => {
                return no(format!(
                    "registers belong to the threads of one CTA; pointwise work on them runs at warp, warpgroup or cta scope, not {}",
                    l.name()
                ))
            }
        };
        let w = match workers(&call.scope, ctx) {
            Ok(w) => w,
            Err(r) => return no(r),
        };
        let pd = match places(dst, warps)? {
            Ok(p) => p,
            Err(r) => return no(r),
        };
        let mut ps = Vec::new();
        for s in &srcs {
            match places(s, warps)? {
                Ok(p) => ps.push(p),
                Err(r) => return no(r),
            }
        }
        let threads = (warps * WARP) as usize;
        let mut tables: Vec<Vec<(i64, Vec<i64>)>> = vec![Vec::new(); threads];
        for (x, v) in pd.iter().enumerate() {
            for &(t, rd) in v {
                let mut rs = Vec::with_capacity(srcs.len());
                for (s, p) in srcs.iter().zip(&ps) {
                    let Some(&(_, r)) = p[x].iter().find(|q| q.0 == t) else {
                        return no(format!(
                            "element {x} of {} has no copy in thread {t} (lane {}, warp {}), which computes it into {}",
                            s.name,
                            t % 32,
                            t / 32,
                            dst.name
                        ));
                    };
                    if s.buffer == dst.buffer && r != rd {
                        return no(format!(
                            "{} shares {}'s register buffer but element {x} sits in register {r}, not {rd}: an in-place operand must be computed where it is",
                            s.name, dst.name
                        ));
                    }
                    rs.push(r);
                }
                tables[t as usize].push((rd, rs));
            }
        }
        if let Some(t) = tables.iter().position(|t| *t != tables[0]) {
            return no(format!(
                "thread {t} of the scope computes other registers ({} elements) than thread 0 ({}); every thread runs the same code",
                tables[t].len(),
                tables[0].len()
            ));
        }
        let at = |buf: usize, r: i64, d: DType| Access {
            buf,
            byte: Expr::Const(r * i64::from(d.bytes())),
        };
        let mut code: Vec<LStmt> = tables[0]
            .iter()
            .map(|(rd, rs)| match f {
                // A fill: the value's bytes.
                None => LStmt::Store {
                    call: call.id,
                    dst: at(dst.buffer.0, *rd, dst.dtype),
                    value: fill.clone().unwrap_or_default(),
                },
                Some(f) => LStmt::Compute {
                    call: call.id,
                    f,
                    dst: at(dst.buffer.0, *rd, dst.dtype),
                    srcs: srcs
                        .iter()
                        .zip(rs)
                        .map(|(s, r)| at(s.buffer.0, *r, s.dtype))
                        .collect(),
                },
            })
            .collect();
        if let Some(g) = w.guard {
            code = vec![LStmt::If {
                cond: g,
                body: code,
            }];
        }
        let n = crate::dispatch::count(tables[0].len(), "element");
        let why = if srcs.is_empty() {
            format!("{n} per thread, each written in the thread's own registers")
        } else {
            format!("{n} per thread, each from the operands' registers in the same thread")
        };
        Ok(Outcome::Lowered { why, code })
    }
}

static VARIANTS: [InRegisters; 4] = [
    InRegisters {
        name: "fill.registers",
        op: "fill",
    },
    InRegisters {
        name: "unary.registers",
        op: "unary",
    },
    InRegisters {
        name: "binary.registers",
        op: "binary",
    },
    InRegisters {
        name: "cast.registers",
        op: "cast",
    },
];

/// The register pointwise variants.
pub fn variants() -> Vec<&'static dyn Variant> {
    VARIANTS.iter().map(|v| v as &'static dyn Variant).collect()
}
