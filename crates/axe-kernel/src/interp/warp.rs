//! Warp shuffles in the interpreter: every lane of a warp runs to the shuffle, then the values move.

use super::{Ins, Machine, Stop};
use crate::desc::Space;
use crate::error::{KernelError, Result};
use crate::ir::LStmt;

impl Machine<'_> {
    /// Runs the shuffle every lane of warp `w` stopped at: each lane reads its partner's source register,
    /// then each writes its destination. Lanes elsewhere (divergence) are an error.
    pub(super) fn shuffle(
        &mut self,
        code: &[Ins<'_>],
        stops: &[Stop],
        w: usize,
        pcs: &[usize],
        vars: &[Vec<i64>],
    ) -> Result<()> {
        let pc = pcs[w * 32];
        let Some(Ins::Shuffle(LStmt::Shuffle {
            call,
            dst,
            src,
            lane_xor,
            bytes,
        })) = code.get(pc)
        else {
            return Err(KernelError::Invalid(format!("no shuffle at #{pc}")));
        };
        if let Some(l) = stops.iter().position(|s| *s != Stop::Shuffle(pc)) {
            return Err(KernelError::Run {
                op: self.op_name(*call),
                message: format!(
                    "warp {w} of CTA {} diverges: lane 0 is at the shuffle #{pc} but lane {l} is {}; every lane of the warp must run a shuffle together",
                    self.cta,
                    match stops[l] {
                        Stop::Barrier(p) => format!("at the barrier #{p}"),
                        Stop::Shuffle(p) => format!("at the shuffle #{p}"),
                        Stop::End => "at the end".to_string(),
                    }
                ),
            });
        }
        for a in [dst, src] {
            if self.prog.buffers.get(a.buf).map(|b| b.space) != Some(Space::Registers) {
                return Err(KernelError::Run {
                    op: self.op_name(*call),
                    message: "a shuffle moves registers only".into(),
                });
            }
        }
        let mut vals = Vec::with_capacity(32);
        for l in 0..32 {
            self.tid = (w * 32 + l) as i64;
            vals.push(self.read(src, *bytes as usize, &vars[w * 32 + l], *call)?);
        }
        for l in 0..32usize {
            self.tid = (w * 32 + l) as i64;
            let from = l ^ (*lane_xor as usize % 32);
            self.write(dst, &vals[from], &vars[w * 32 + l], *call)?;
        }
        Ok(())
    }
}
