//! `copy_async` by `cp.async` (sm_80 and newer): each thread copies its vectors of a global tile into
//! shared memory asynchronously, completing with its commit groups or on an mbarrier.
//!
//! **Law** (`copy_async_group(dst, src)`): `dst[x] = src[x]` for every `x`. A thread sees the bytes it
//! copied once it waited for their group (`async_commit`, then `async_wait(n)` leaving at most `n`
//! groups in flight); the other threads of the CTA see them after a CTA barrier that follows that wait.
//!
//! **Law** (`copy_async(dst, src, bar)`, when the copy engine declines): `dst[x] = src[x]` for every
//! `x`; every thread of the scope, after issuing its vectors, arrives once on `bar` when they have
//! landed (`cp.async.mbarrier.arrive.noinc`: the arrival is one of those the phase expects, so `bar`'s
//! count includes one per thread of the scope, whether or not the thread had a vector to copy). Every
//! thread that waited for the phase those arrivals complete sees the whole tile, with no CTA barrier.
//!
//! **`copy_async.cp_async`** (every target) applies when `dst` is in shared memory, `src` in global
//! memory, and 16-, 8- or 4-byte vectors fit both layouts (the widest that does, as [`crate::copy`]
//! decides for `copy`): the vectors are spread over the scope's threads as `copy.vecN` spreads them,
//! each one `cp.async` (`.cg` for 16 bytes, which bypasses L1; `.ca` otherwise). The interpreter copies
//! each vector when issued and reports any read of its bytes before the waits and barrier above.

use crate::copy::vector_moves;
use crate::desc::{space_name, Call, Op, Space};
use crate::dispatch::{Ctx, Outcome, Variant};
use crate::error::Result;
use crate::ir::LStmt;
use crate::spread::workers;

/// `Move`s become `cp.async`s, in place.
fn to_cp_async(code: Vec<LStmt>) -> Vec<LStmt> {
    code.into_iter()
        .map(|s| match s {
            LStmt::Move {
                call,
                dst,
                src,
                bytes,
            } => LStmt::CpAsync {
                call,
                dst,
                src,
                bytes,
            },
            LStmt::For { var, extent, body } => LStmt::For {
                var,
                extent,
                body: to_cp_async(body),
            },
            LStmt::If { cond, body } => LStmt::If {
                cond,
                body: to_cp_async(body),
            },
            other => other,
        })
        .collect()
}

struct CpAsync;

impl Variant for CpAsync {
    fn name(&self) -> &'static str {
        "copy_async.cp_async"
    }
    fn op(&self) -> &'static str {
        "copy_async"
    }
    fn priority(&self) -> i32 {
        5
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let (dst, src, bar) = match &call.op {
            Op::CopyAsyncGroup { dst, src } => (dst, src, None),
            Op::CopyAsync { dst, src, bar } => (dst, src, Some(*bar)),
            _ => {
                return Ok(Outcome::Declined(
                    "this variant lowers copy_async only".into(),
                ))
            }
        };
        if src.space != Space::Global || !matches!(dst.space, Space::Shared(_)) {
            return Ok(Outcome::Declined(format!(
                "cp.async copies global to shared memory; {} is in {} and {} in {} memory",
                src.name,
                space_name(src.space),
                dst.name,
                space_name(dst.space)
            )));
        }
        let mut reasons = Vec::new();
        for bytes in [16u32, 8, 4] {
            match vector_moves(call, ctx, (dst, Some(src), None), bytes)? {
                Outcome::Lowered { why, code } => {
                    let mut code = to_cp_async(code);
                    let Some(bar) = bar else {
                        return Ok(Outcome::Lowered {
                            why: format!("cp.async: {why}"),
                            code,
                        });
                    };
                    let w = match workers(&call.scope, ctx) {
                        Ok(w) => w,
                        Err(r) => return Ok(Outcome::Declined(r)),
                    };
                    let arrive = vec![LStmt::CpAsyncArrive {
                        bar: crate::desc::sync_access(bar)?,
                    }];
                    code.extend(match w.guard {
                        Some(cond) => vec![LStmt::If { cond, body: arrive }],
                        None => arrive,
                    });
                    return Ok(Outcome::Lowered {
                        why: format!(
                            "cp.async: {why}; each thread of the scope arrives once on the mbarrier when its copies land (cp.async.mbarrier.arrive.noinc)"
                        ),
                        code,
                    });
                }
                Outcome::Declined(r) => reasons.push(format!("{bytes} bytes: {r}")),
            }
        }
        Ok(Outcome::Declined(format!(
            "cp.async moves 4, 8 or 16 bytes: {}",
            reasons.join("; ")
        )))
    }
}

static VARIANTS: [CpAsync; 1] = [CpAsync];

/// The `copy_async.cp_async` variant.
pub fn variants() -> Vec<&'static dyn Variant> {
    VARIANTS.iter().map(|v| v as &'static dyn Variant).collect()
}
