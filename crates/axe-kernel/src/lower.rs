//! Lowering a description for a target: shared memory is laid out, each call is dispatched, and the
//! statements around the calls carry over.

use crate::desc::{Kernel, Space, Stmt};
use crate::dispatch::{Ctx, Registry, Target};
use crate::error::{overflow, KernelError, Result};
use crate::expr::Expr;
use crate::ir::{Access, Decision, LStmt, Program};

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
        min_ctas_per_sm: kernel.min_ctas_per_sm,
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
            Stmt::Window {
                buffer,
                base,
                align,
                body,
            } => {
                let mut body = lower_block(body, ctx, registry, decisions)?;
                let eb = ctx
                    .kernel
                    .buffers
                    .get(buffer.0)
                    .map(|b| u64::from(b.dtype.bytes()))
                    .ok_or_else(|| KernelError::Invalid(format!("no buffer #{}", buffer.0)))?;
                let align_bytes = align
                    .checked_mul(eb)
                    .ok_or_else(|| overflow("a window's alignment"))?;
                let shift = base.clone().times(Expr::Const(
                    i64::try_from(eb).map_err(|_| overflow("a window"))?,
                ));
                rebase(&mut body, buffer.0, &shift, align_bytes, &decisions[..])?;
                out.extend(body);
            }
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

/// Adds `shift` bytes to every access of buffer `buf` in `body`; each vector moved there must divide
/// `align` bytes (the window's base keeps it aligned).
fn rebase(
    body: &mut [LStmt],
    buf: usize,
    shift: &Expr,
    align: u64,
    decisions: &[Decision],
) -> Result<()> {
    let name = |call: usize| {
        decisions.get(call).map_or(format!("call #{call}"), |d| {
            format!("{} ({})", d.op, d.variant)
        })
    };
    let fix = |a: &mut Access, bytes: u64, call: usize| -> Result<()> {
        if a.buf != buf {
            return Ok(());
        }
        if !align.is_multiple_of(bytes) {
            return Err(KernelError::Invalid(format!(
                "{}: moves {bytes}-byte vectors through a window whose base is a multiple of only {align} bytes",
                name(call)
            )));
        }
        a.byte = a.byte.clone().plus(shift.clone());
        Ok(())
    };
    for s in body {
        match s {
            LStmt::For { body, .. } | LStmt::If { body, .. } => {
                rebase(body, buf, shift, align, decisions)?
            }
            LStmt::Move {
                call,
                dst,
                src,
                bytes,
            } => {
                fix(dst, u64::from(*bytes), *call)?;
                fix(src, u64::from(*bytes), *call)?;
            }
            LStmt::Store { call, dst, value } => fix(dst, value.len() as u64, *call)?,
            LStmt::Compute {
                call, dst, srcs, ..
            } => {
                // Elements: each naturally aligned by its dtype, which divides any whole-element base.
                fix(dst, 1, *call)?;
                for a in srcs {
                    fix(a, 1, *call)?;
                }
            }
            LStmt::LdMatrix { call, src, .. } => fix(src, 16, *call)?,
            LStmt::Shuffle { .. }
            | LStmt::Mma { .. }
            | LStmt::Let { .. }
            | LStmt::Barrier
            | LStmt::Comment(_) => {}
        }
    }
    Ok(())
}
