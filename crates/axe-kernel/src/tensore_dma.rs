//! `copy.dma` on trn1: a copy between HBM (global memory) and SBUF or PSUM, or between SBUF and PSUM,
//! by the DMA engines.
//!
//! **Law.** For every logical index `x` of the shape, `dst[L_dst(x)] = src[L_src(x)]` (the source's
//! base copy when its layout replicates). It lowers to one loop per logical dimension and one element
//! move in the innermost: the interpreter runs it element by element; the NKI-style emission shows
//! each move as a `nisa.dma_copy` of one element, addressed through the two layouts.

use crate::desc::{space_name, Call, Op, Space};
use crate::dispatch::{Ctx, Outcome, Target, Variant};
use crate::error::{overflow, Result};
use crate::expr::Expr;
use crate::ir::{Access, LStmt};
use crate::tensore::{byte_of, free_size, place};

/// The `copy.dma` variant.
pub struct CopyDma;

impl Variant for CopyDma {
    fn name(&self) -> &'static str {
        "copy.dma"
    }
    fn op(&self) -> &'static str {
        "copy"
    }
    fn priority(&self) -> i32 {
        10
    }
    fn targets(&self) -> &'static [Target] {
        &[Target::Trn1]
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let Op::Copy { dst, src } = &call.op else {
            return Ok(Outcome::Declined("not a copy".into()));
        };
        for t in [dst, src] {
            if !matches!(t.space, Space::Global | Space::Sbuf | Space::Psum) {
                return Ok(Outcome::Declined(format!(
                    "{} is in {} memory; the DMA engines move HBM, SBUF and PSUM",
                    t.name,
                    space_name(t.space)
                )));
            }
        }
        if !dst.layout.replica().is_empty() {
            return Ok(Outcome::Declined(format!(
                "the destination {} replicates ({}); copy.dma writes each element once",
                dst.name, dst.layout
            )));
        }
        let buffers = ctx.buffers();
        let mut loops = Vec::new();
        let mut idx = Vec::new();
        for &e in &dst.shape {
            let v = ctx.var();
            loops.push((v, e));
            idx.push(Expr::Var(v));
        }
        let access = |t: &crate::desc::Tensor| -> Result<Access> {
            let free = buffers.get(t.buffer.0).map_or(0, free_size);
            Ok(Access {
                buf: t.buffer.0,
                byte: byte_of(t, free, place(t, &idx, &loops)?),
            })
        };
        let mut code = vec![LStmt::Move {
            call: call.id,
            dst: access(dst)?,
            src: access(src)?,
            bytes: dst.dtype.bytes(),
        }];
        for (var, extent) in loops.into_iter().rev() {
            let extent = i64::try_from(extent).map_err(|_| overflow("converting a loop extent"))?;
            code = vec![LStmt::For {
                var,
                extent,
                body: code,
            }];
        }
        let why = format!(
            "{} ({}) → {} ({}), {} elements of {} bytes",
            src.name,
            space_name(src.space),
            dst.name,
            space_name(dst.space),
            dst.size(),
            dst.dtype.bytes()
        );
        Ok(Outcome::Lowered { why, code })
    }
}
