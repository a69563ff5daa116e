//! Intrinsics ([`crate::Intrinsic`]): lowered to a guarded statement per running thread, and run
//! on the interpreter by their CPU meaning.

use super::{Machine, Num};
use crate::desc::intrinsic::{Intrinsic, IntrinsicArg, LArg, LIntrinsic};
use crate::dispatch::Ctx;
use crate::error::{overflow, KernelError, Result};
use crate::expr::Expr;
use crate::ir::{Access, LStmt};

/// The call index an intrinsic's memory accesses report (it is no operator call).
pub(super) const CALL: usize = usize::MAX - 1;

/// The lowered statement: the operands' addresses, under the scope's guard.
pub(crate) fn lower(i: &Intrinsic, ctx: &Ctx<'_>) -> Result<Vec<LStmt>> {
    let w = crate::spread::workers(&i.scope, ctx)
        .map_err(|r| KernelError::Invalid(format!("intrinsic {}: {r}", i.name)))?;
    let mut args = Vec::with_capacity(i.args.len());
    for a in &i.args {
        args.push(match a {
            IntrinsicArg::Elem { buffer, index } => {
                let d = ctx
                    .kernel
                    .buffers
                    .get(buffer.0)
                    .ok_or_else(|| {
                        KernelError::Invalid(format!(
                            "intrinsic {}: no buffer #{}",
                            i.name, buffer.0
                        ))
                    })?
                    .dtype;
                let eb = i64::from(d.bytes());
                if let Expr::Const(c) = index {
                    c.checked_mul(eb)
                        .ok_or_else(|| overflow("computing an intrinsic's operand address"))?;
                }
                LArg::Elem(
                    Access {
                        buf: buffer.0,
                        byte: index.clone().times(Expr::Const(eb)),
                    },
                    d,
                )
            }
            IntrinsicArg::Value(e) => LArg::Value(e.clone()),
        });
    }
    let s = LStmt::Intrinsic(LIntrinsic {
        name: i.name.clone(),
        text: i.text.clone(),
        args,
        cpu: i.cpu.clone(),
    });
    Ok(vec![
        LStmt::Comment(format!("intrinsic {} at {} scope", i.name, i.scope)),
        match w.guard {
            Some(cond) => LStmt::If {
                cond,
                body: vec![s],
            },
            None => s,
        },
    ])
}

impl Machine<'_> {
    /// Runs intrinsic `i` in the current thread by its CPU meaning, or stops naming it.
    pub(super) fn intrinsic(&mut self, i: &LIntrinsic, vars: &[i64]) -> Result<()> {
        let Some(cpu) = &i.cpu else {
            return Err(KernelError::Run {
                op: format!("intrinsic {}", i.name),
                message:
                    "has no CPU meaning; the interpreter cannot run it (give one when writing it)"
                        .into(),
            });
        };
        let mut vals = Vec::with_capacity(i.args.len());
        for a in &i.args {
            vals.push(match a {
                LArg::Elem(a, d) => {
                    Num::decode(*d, &self.read(a, d.bytes() as usize, vars, CALL)?).f()
                }
                LArg::Value(e) => self.eval(e, vars, Some(CALL))? as f64,
            });
        }
        (cpu.0)(&mut vals);
        for (a, v) in i.args.iter().zip(vals) {
            if let LArg::Elem(a, d) = a {
                self.write(a, &Num::F(v).encode(*d), vars, CALL)?;
            }
        }
        Ok(())
    }
}
