//! `copy_async` by `cp.async` (sm_80 and newer): each thread copies its vectors of a global tile into
//! shared memory asynchronously, completing with its commit groups.
//!
//! **Law** (`copy_async_group(dst, src)`): `dst[x] = src[x]` for every `x`. A thread sees the bytes it
//! copied once it waited for their group (`async_commit`, then `async_wait(n)` leaving at most `n`
//! groups in flight); the other threads of the CTA see them after a CTA barrier that follows that wait.
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
        let (dst, src) = match &call.op {
            Op::CopyAsyncGroup { dst, src } => (dst, src),
            Op::CopyAsync { .. } => {
                return Ok(Outcome::Declined(
                    "cp.async completes with commit groups; this copy completes on an mbarrier (use copy_async_group)".into(),
                ))
            }
            _ => return Ok(Outcome::Declined("this variant lowers copy_async only".into())),
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
                    return Ok(Outcome::Lowered {
                        why: format!("cp.async: {why}"),
                        code: to_cp_async(code),
                    })
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
