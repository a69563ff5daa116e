//! Lowering a description for a target: shared memory is laid out, each call is dispatched, and the
//! statements around the calls carry over.

use crate::desc::{Kernel, Space, Stmt};
use crate::dispatch::{Ctx, Registry, Target};
use crate::error::{overflow, KernelError, Result};
use crate::ir::{LStmt, Program};

/// Alignment of each shared buffer (the widest swizzle span).
pub const SHARED_ALIGN: u64 = 128;

/// Lowers `kernel` for `target` with the standard variants.
pub fn lower(kernel: &Kernel, target: Target) -> Result<Program> {
    lower_with(kernel, target, &Registry::standard())
}

/// Lowers `kernel` for `target` with the variants of `registry`.
pub fn lower_with(kernel: &Kernel, target: Target, registry: &Registry) -> Result<Program> {
    let mut ctx = Ctx::new(kernel, target);
    let mut decisions = Vec::new();
    let body = lower_block(&kernel.body, &mut ctx, registry, &mut decisions)?;
    let buffers = ctx.buffers();
    let mut shared_offsets = Vec::with_capacity(buffers.len());
    let mut shared: u64 = 0;
    for b in &buffers {
        if let Space::Shared(_) = b.space {
            shared = shared
                .div_ceil(SHARED_ALIGN)
                .checked_mul(SHARED_ALIGN)
                .ok_or_else(|| overflow("laying out shared memory"))?;
            shared_offsets.push(shared);
            shared = shared
                .checked_add(b.bytes()?)
                .ok_or_else(|| overflow("laying out shared memory"))?;
        } else {
            shared_offsets.push(0);
        }
    }
    if shared > target.shared_capacity() {
        return Err(KernelError::SharedCapacity {
            bytes: shared,
            target: target.to_string(),
            capacity: target.shared_capacity(),
        });
    }
    Ok(Program {
        name: kernel.name.clone(),
        target: target.to_string(),
        launch: kernel.launch,
        buffers,
        shared_offsets,
        shared_bytes: shared,
        vars: ctx.vars(),
        body,
        decisions,
    })
}

fn lower_block(
    body: &[Stmt],
    ctx: &mut Ctx<'_>,
    registry: &Registry,
    decisions: &mut Vec<crate::ir::Decision>,
) -> Result<Vec<LStmt>> {
    let mut out = Vec::new();
    for s in body {
        match s {
            Stmt::For { var, extent, body } => {
                let extent = i64::try_from(*extent).map_err(|_| overflow("a loop extent"))?;
                let body = lower_block(body, ctx, registry, decisions)?;
                out.push(LStmt::For {
                    var: *var,
                    extent,
                    body,
                });
            }
            Stmt::If { cond, body } => {
                let body = lower_block(body, ctx, registry, decisions)?;
                out.push(LStmt::If {
                    cond: cond.clone(),
                    body,
                });
            }
            Stmt::Let { var, value } => out.push(LStmt::Let {
                var: *var,
                value: value.clone(),
            }),
            Stmt::Barrier => out.push(LStmt::Barrier),
            Stmt::Call(call) => {
                let (d, code) = registry.dispatch(call, ctx)?;
                out.push(LStmt::Comment(format!(
                    "{} at {} scope: {} — {}",
                    d.op, d.scope, d.variant, d.why
                )));
                out.extend(code);
                decisions.push(d);
            }
        }
    }
    Ok(out)
}
