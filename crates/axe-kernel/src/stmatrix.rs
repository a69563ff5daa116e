//! `copy.stmatrix`: registers → shared memory by `stmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16`
//! (sm_90 and later), the mirror of [`crate::ldmatrix`].
//!
//! **The instruction.** Lane `l` supplies in its 32-bit register `i` the elements
//! `(l div 4, 2·(l mod 4) + e)` of 8×8 matrix `i` of 16-bit elements (`e = 0, 1` low and high half;
//! with `.trans` the elements `(2·(l mod 4) + e, l div 4)`); lanes 0–7, 8–15, 16–23, 24–31 give the 8
//! row addresses (16 contiguous, 16-byte aligned bytes each) of matrices 0, 1, 2, 3.
//!
//! **Planning** is ldmatrix's, read the other way: the source's layout gives each element's thread
//! and register, the destination's its shared-memory element, and the same enumeration decides
//! (whole 32-bit words, each word an 8×8 matrix over 8 rows starting at multiples of 8 elements, one
//! row-address expression over the thread index's bits). So the law is
//! `stmatrix ∘ ldmatrix = identity` on every tile both accept. It declines on sm_80, which has no
//! stmatrix.

use crate::desc::{Call, Op, Space};
use crate::dispatch::{Ctx, Outcome, Target, Variant};
use crate::error::Result;

struct StMatrix;

impl Variant for StMatrix {
    fn name(&self) -> &'static str {
        "copy.stmatrix"
    }
    fn op(&self) -> &'static str {
        "copy"
    }
    fn priority(&self) -> i32 {
        1
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let no = |m: String| Ok(Outcome::Declined(m));
        let Op::Copy { dst, src } = &call.op else {
            return no("copy.stmatrix lowers copy only".into());
        };
        if src.space != Space::Registers || !matches!(dst.space, Space::Shared(_)) {
            return no("stmatrix stores registers to shared memory".into());
        }
        if ctx.target == Target::Sm80 {
            return no("stmatrix needs sm_90 or later; sm_80 has none".into());
        }
        crate::ldmatrix::matrices(call, ctx, src, dst, true)
    }
}

static VARIANTS: [StMatrix; 1] = [StMatrix];

/// The stmatrix variant.
pub fn variants() -> Vec<&'static dyn Variant> {
    VARIANTS.iter().map(|v| v as &'static dyn Variant).collect()
}
