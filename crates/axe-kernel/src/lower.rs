//! Lowering a description for a target: shared memory is laid out, each call is dispatched, and the
//! statements around the calls carry over.

use crate::desc::{Kernel, Space, Stmt, SyncStmt};
use crate::dispatch::{Ctx, Registry, Target};
use crate::error::{overflow, KernelError, Result};
use crate::expr::Expr;
use crate::ir::{Access, Decision, LStmt, Program};

/// Alignment of each unswizzled shared buffer.
pub const SHARED_ALIGN: u64 = 128;

/// Alignment of a shared buffer in `space`: a swizzled one starts on a whole swizzle atom (8 rows of
/// its span: 1024 bytes for 128-byte swizzles), as the copy engine and wgmma require.
pub fn shared_align(space: Space) -> u64 {
    match space {
        Space::Shared(Some(sw)) => 8 * sw.bytes(),
        _ => SHARED_ALIGN,
    }
}

/// Lowers `kernel` for `target` with the standard variants.
pub fn lower(kernel: &Kernel, target: Target) -> Result<Program> {
    lower_with(kernel, target, &Registry::standard())
}

/// Lowers `kernel` for `target` with the variants of `registry`.
pub fn lower_with(kernel: &Kernel, target: Target, registry: &Registry) -> Result<Program> {
    crate::tensore::check_program(kernel, target)?;
    let mut ctx = Ctx::new(kernel, target);
    let mut decisions = Vec::new();
    let body = lower_block(&kernel.body, &mut ctx, registry, &mut decisions)?;
    let buffers = ctx.buffers();
    let mut shared_offsets = Vec::with_capacity(buffers.len());
    let mut shared: u64 = 0;
    for b in &buffers {
        if let Space::Shared(_) = b.space {
            let align = shared_align(b.space);
            shared = shared
                .div_ceil(align)
                .checked_mul(align)
                .ok_or_else(|| overflow("laying out shared memory"))?;
            shared_offsets.push(shared);
            shared = shared
                .checked_add(b.bytes()?)
                .ok_or_else(|| overflow("laying out shared memory"))?;
        } else {
            shared_offsets.push(0);
        }
    }
    // Slack to align the dynamic shared memory's start to the strictest buffer (see `emit`).
    let strictest = buffers
        .iter()
        .map(|b| shared_align(b.space))
        .max()
        .unwrap_or(SHARED_ALIGN);
    if strictest > SHARED_ALIGN {
        shared = shared
            .checked_add(strictest)
            .ok_or_else(|| overflow("laying out shared memory"))?;
    }
    if shared > target.shared_capacity() {
        return Err(KernelError::SharedCapacity {
            bytes: shared,
            target: target.to_string(),
            capacity: target.shared_capacity(),
        });
    }
    let program = Program {
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
        tensor_maps: ctx.tensor_maps(),
    };
    // A variant of the caller's registry may have emitted mbarrier counts the hardware does not take.
    program.check_mbarriers()?;
    Ok(program)
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
                let extent =
                    i64::try_from(*extent).map_err(|_| overflow("converting a loop extent"))?;
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
            Stmt::Sync(st) => out.push(lower_sync(st)?),
            Stmt::Intrinsic(i) => out.extend(crate::interp::intrinsic::lower(i, ctx)?),
            Stmt::Window {
                buffer,
                base,
                align,
                body,
            } => {
                let eb = ctx
                    .kernel
                    .buffers
                    .get(buffer.0)
                    .map(|b| u64::from(b.dtype.bytes()))
                    .ok_or_else(|| KernelError::Invalid(format!("no buffer #{}", buffer.0)))?;
                let align_bytes = align
                    .checked_mul(eb)
                    .ok_or_else(|| overflow("computing a window's alignment"))?;
                // Dispatch inside sees the window, so that a variant whose vectors the base would
                // misalign declines and a narrower one lowers the call.
                ctx.windows.push((buffer.0, align_bytes));
                let body = lower_block(body, ctx, registry, decisions);
                ctx.windows.pop();
                let mut body = body?;
                let shift = base.clone().times(Expr::Const(
                    i64::try_from(eb).map_err(|_| overflow("shifting a window"))?,
                ));
                let name = &ctx.kernel.buffers[buffer.0].name;
                rebase(
                    &mut body,
                    buffer.0,
                    name,
                    &shift,
                    align_bytes,
                    &decisions[..],
                )?;
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

fn lower_sync(s: &SyncStmt) -> Result<LStmt> {
    use crate::desc::sync_access as at;
    Ok(match s {
        SyncStmt::Init { bar, count } => LStmt::MbarInit {
            bar: at(*bar)?,
            count: *count,
        },
        SyncStmt::FenceInit => LStmt::FenceMbarInit,
        SyncStmt::Arrive { bar } => LStmt::MbarArrive { bar: at(*bar)? },
        SyncStmt::Wait { bar, parity } => LStmt::MbarWait {
            bar: at(*bar)?,
            parity: parity.clone(),
        },
        SyncStmt::Commit => LStmt::AsyncCommit,
        SyncStmt::WaitGroups { pending } => LStmt::AsyncWait(*pending),
        SyncStmt::MaxRegisters { inc, regs } => LStmt::SetMaxNReg {
            inc: *inc,
            regs: *regs,
        },
    })
}

/// Adds `shift` bytes to every access of buffer `buf` in `body`; each vector moved there must divide
/// `align` bytes (the window's base keeps it aligned).
fn rebase(
    body: &mut [LStmt],
    buf: usize,
    name: &str,
    shift: &Expr,
    align: u64,
    decisions: &[Decision],
) -> Result<()> {
    let op = |call: usize| {
        decisions.get(call).map_or(format!("call #{call}"), |d| {
            format!("{} ({})", d.op, d.variant)
        })
    };
    each_access(body, &mut |a, bytes, call| {
        if a.buf != buf {
            return Ok(());
        }
        if let Some(m) = misaligned(bytes, align, name) {
            return Err(KernelError::Invalid(format!("{}: {m}", op(call))));
        }
        a.byte = a.byte.clone().plus(shift.clone());
        Ok(())
    })
}

/// Why `code` cannot run inside a window over buffer `buf` whose base is a multiple of `align` bytes
/// (a vector it moves there is wider than the base keeps aligned), if it cannot.
pub(crate) fn window_misfit(code: &[LStmt], buf: usize, align: u64, name: &str) -> Option<String> {
    let mut why = None;
    let mut code = code.to_vec();
    let _ = each_access(&mut code, &mut |a, bytes, _| {
        if a.buf == buf && why.is_none() {
            why = misaligned(bytes, align, name);
        }
        Ok(())
    });
    why
}

fn misaligned(bytes: u64, align: u64, name: &str) -> Option<String> {
    (!align.is_multiple_of(bytes)).then(|| {
        format!("moves {bytes}-byte vectors through the window over {name}, whose base is a multiple of only {align} bytes")
    })
}

/// Calls `f` with every memory access of `body`, the bytes it moves in one instruction (the
/// alignment it needs) and its call.
fn each_access(
    body: &mut [LStmt],
    f: &mut dyn FnMut(&mut Access, u64, usize) -> Result<()>,
) -> Result<()> {
    for s in body {
        match s {
            LStmt::For { body, .. } | LStmt::If { body, .. } => each_access(body, f)?,
            LStmt::Move {
                call,
                dst,
                src,
                bytes,
            } => {
                f(dst, u64::from(*bytes), *call)?;
                f(src, u64::from(*bytes), *call)?;
            }
            LStmt::Store { call, dst, value } => f(dst, value.len() as u64, *call)?,
            LStmt::Compute {
                call, dst, srcs, ..
            } => {
                // Elements: each naturally aligned by its dtype, which divides any whole-element base.
                f(dst, 1, *call)?;
                for a in srcs {
                    f(a, 1, *call)?;
                }
            }
            LStmt::LdMatrix { call, src, .. } => f(src, 16, *call)?,
            LStmt::StMatrix { call, dst, .. } => f(dst, 16, *call)?,
            LStmt::Intrinsic(i) => {
                for a in &mut i.args {
                    if let crate::desc::intrinsic::LArg::Elem(a, d) = a {
                        f(a, u64::from(d.bytes()), usize::MAX)?;
                    }
                }
            }
            // The copy engine takes any element of the array the tensor map describes.
            LStmt::TmaLoad { call, src, .. } => f(src, 1, *call)?,
            LStmt::CpAsync {
                call,
                dst,
                src,
                bytes,
            } => {
                f(dst, u64::from(*bytes), *call)?;
                f(src, u64::from(*bytes), *call)?;
            }
            LStmt::AsyncCommit | LStmt::AsyncWait(_) => {}
            LStmt::MbarInit { .. }
            | LStmt::FenceMbarInit
            | LStmt::MbarArrive { .. }
            | LStmt::CpAsyncArrive { .. }
            | LStmt::MbarExpectTx { .. }
            | LStmt::MbarWait { .. }
            | LStmt::Wgmma { .. }
            | LStmt::WgmmaFence { .. }
            | LStmt::WgmmaCommit
            | LStmt::WgmmaWait { .. }
            | LStmt::SetMaxNReg { .. }
            | LStmt::Shuffle { .. }
            | LStmt::Ballot { .. }
            | LStmt::Mma { .. }
            | LStmt::Let { .. }
            | LStmt::Barrier
            | LStmt::Matmul(_)
            | LStmt::Comment(_) => {}
        }
    }
    Ok(())
}
