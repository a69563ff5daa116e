//! Warp-collective instructions in the interpreter: every lane of a warp runs to the instruction (a
//! shuffle, an mma), then it runs for the whole warp.

use super::{Ins, Machine, Num, Stop};
use crate::desc::Space;
use crate::dtype::DType;
use crate::error::{KernelError, Result};
use crate::expr::Expr;
use crate::gemm::{fragment, Operand};
use crate::ir::{Access, LStmt};

impl Machine<'_> {
    /// Runs the collective instruction every lane of warp `w` stopped at. Lanes elsewhere (divergence)
    /// are an error.
    pub(super) fn collective(
        &mut self,
        code: &[Ins<'_>],
        stops: &[Stop],
        w: usize,
        pcs: &[usize],
        vars: &[Vec<i64>],
    ) -> Result<()> {
        let pc = pcs[w * 32];
        let Some(Ins::Collective(s)) = code.get(pc) else {
            return Err(KernelError::Invalid(format!(
                "no collective instruction at #{pc}"
            )));
        };
        let (call, what) = match s {
            LStmt::Shuffle { call, .. } => (*call, "shuffle"),
            LStmt::Mma { call, .. } => (*call, "mma"),
            LStmt::LdMatrix { call, .. } => (*call, "ldmatrix"),
            LStmt::StMatrix { call, .. } => (*call, "stmatrix"),
            LStmt::Ballot { call, .. } => (*call, "ballot"),
            _ => return Err(KernelError::Invalid(format!("#{pc} is not collective"))),
        };
        if let Some(l) = stops.iter().position(|s| *s != Stop::Collective(pc)) {
            return Err(KernelError::Run {
                op: self.op_name(call),
                message: format!(
                    "warp {w} of CTA {} diverges: lane 0 is at the {what} #{pc} but lane {l} is {}; every lane of the warp must run a {what} together",
                    self.cta,
                    match stops[l] {
                        Stop::Barrier(p) => format!("at the barrier #{p}"),
                        Stop::Collective(p) => format!("at the warp-wide instruction #{p}"),
                        Stop::Wait(p) => format!("waiting on an mbarrier at #{p}"),
                        Stop::End => "at the end".to_string(),
                    }
                ),
            });
        }
        match s {
            LStmt::Shuffle {
                call,
                dst,
                src,
                lane_xor,
                bytes,
            } => self.shuffle(*call, dst, src, *lane_xor, *bytes, w, vars),
            LStmt::Mma {
                call,
                dtype,
                c,
                a,
                b,
            } => self.mma(*call, *dtype, [a, b, c], w, vars),
            LStmt::LdMatrix {
                call,
                trans,
                dst,
                src,
            } => self.ldmatrix(*call, *trans, dst, src, w, vars),
            LStmt::StMatrix {
                call,
                trans,
                src,
                dst,
            } => self.stmatrix(*call, *trans, src, dst, w, vars),
            LStmt::Ballot {
                call,
                dst,
                src,
                bytes,
                bit,
                keep,
            } => self.ballot(*call, (dst, src), *bytes, *bit, *keep, w, vars),
            _ => Ok(()),
        }
    }

    /// Each lane votes (its register non-zero, or its bit `bit` set); lane `keep` stores the word.
    #[allow(clippy::too_many_arguments)]
    fn ballot(
        &mut self,
        call: usize,
        (dst, src): (&Access, &Access),
        bytes: u32,
        bit: Option<u32>,
        keep: u32,
        w: usize,
        vars: &[Vec<i64>],
    ) -> Result<()> {
        let mut word = 0u32;
        for l in 0..32 {
            let t = w * 32 + l;
            self.tid = t as i64;
            let b = self.read(src, bytes as usize, &vars[t], call)?;
            let mut v = [0u8; 4];
            v[..b.len().min(4)].copy_from_slice(&b[..b.len().min(4)]);
            let v = u32::from_le_bytes(v);
            let vote = match bit {
                None => v != 0,
                Some(k) => (v >> k) & 1 == 1,
            };
            word |= u32::from(vote) << l;
        }
        let t = w * 32 + keep as usize;
        self.tid = t as i64;
        self.write(dst, &word.to_le_bytes(), &vars[t], call)
    }

    /// Each lane reads the 16-byte row it supplies; then each lane takes its pairs of the matrices.
    fn ldmatrix(
        &mut self,
        call: usize,
        trans: bool,
        dst: &[Access],
        src: &Access,
        w: usize,
        vars: &[Vec<i64>],
    ) -> Result<()> {
        if self.prog.buffers.get(src.buf).map(|b| b.space) == Some(Space::Registers)
            || dst
                .iter()
                .any(|d| self.prog.buffers.get(d.buf).map(|b| b.space) != Some(Space::Registers))
        {
            return Err(KernelError::Run {
                op: self.op_name(call),
                message: "ldmatrix loads registers from memory".into(),
            });
        }
        let n = dst.len();
        let mut rows = Vec::with_capacity(32);
        for l in 0..32 {
            self.tid = (w * 32 + l) as i64;
            rows.push(self.read(src, 16, &vars[w * 32 + l], call)?);
        }
        for l in 0..32usize {
            self.tid = (w * 32 + l) as i64;
            for (i, d) in dst.iter().enumerate().take(n) {
                let mut word = [0u8; 4];
                for e in 0..2 {
                    let (r, c) = if trans {
                        (2 * (l % 4) + e, l / 4)
                    } else {
                        (l / 4, 2 * (l % 4) + e)
                    };
                    let row = &rows[i * 8 + r];
                    word[2 * e..2 * e + 2].copy_from_slice(&row[2 * c..2 * c + 2]);
                }
                self.write(d, &word, &vars[w * 32 + l], call)?;
            }
        }
        Ok(())
    }

    /// stmatrix by its definition: every lane's words give its pairs of the `src.len()` 8×8 matrices;
    /// then lane `l < 8·n` writes row `l mod 8` of matrix `l div 8` at the address it supplies.
    fn stmatrix(
        &mut self,
        call: usize,
        trans: bool,
        src: &[Access],
        dst: &Access,
        w: usize,
        vars: &[Vec<i64>],
    ) -> Result<()> {
        if self.prog.buffers.get(dst.buf).map(|b| b.space) == Some(Space::Registers)
            || src
                .iter()
                .any(|d| self.prog.buffers.get(d.buf).map(|b| b.space) != Some(Space::Registers))
        {
            return Err(KernelError::Run {
                op: self.op_name(call),
                message: "stmatrix stores registers to memory".into(),
            });
        }
        let n = src.len();
        let mut rows = vec![[0u8; 16]; 8 * n];
        for l in 0..32usize {
            self.tid = (w * 32 + l) as i64;
            for (i, a) in src.iter().enumerate() {
                let word = self.read(a, 4, &vars[w * 32 + l], call)?;
                for e in 0..2 {
                    let (r, c) = if trans {
                        (2 * (l % 4) + e, l / 4)
                    } else {
                        (l / 4, 2 * (l % 4) + e)
                    };
                    rows[i * 8 + r][2 * c..2 * c + 2].copy_from_slice(&word[2 * e..2 * e + 2]);
                }
            }
        }
        for (l, row) in rows.iter().enumerate() {
            self.tid = (w * 32 + l) as i64;
            self.write(dst, row, &vars[w * 32 + l], call)?;
        }
        Ok(())
    }

    /// Each lane reads its partner's source register, then each writes its destination.
    #[allow(clippy::too_many_arguments)]
    fn shuffle(
        &mut self,
        call: usize,
        dst: &Access,
        src: &Access,
        lane_xor: u32,
        bytes: u32,
        w: usize,
        vars: &[Vec<i64>],
    ) -> Result<()> {
        for a in [dst, src] {
            if self.prog.buffers.get(a.buf).map(|b| b.space) != Some(Space::Registers) {
                return Err(KernelError::Run {
                    op: self.op_name(call),
                    message: "a shuffle moves registers only".into(),
                });
            }
        }
        let mut vals = Vec::with_capacity(32);
        for l in 0..32 {
            self.tid = (w * 32 + l) as i64;
            vals.push(self.read(src, bytes as usize, &vars[w * 32 + l], call)?);
        }
        for l in 0..32usize {
            self.tid = (w * 32 + l) as i64;
            let from = l ^ (lane_xor as usize % 32);
            self.write(dst, &vals[from], &vars[w * 32 + l], call)?;
        }
        Ok(())
    }

    /// The m16n8k16 mma of warp `w`: gathers A (16×16), B (16×8) and C (16×8) from the lanes' registers
    /// by the fragment layouts ([`fragment`]), computes `C[i, j] += Σ_k A[i, k]·B[k, j]` in f32 (k in
    /// order, each step one fused multiply-add), and scatters C back the same way.
    fn mma(
        &mut self,
        call: usize,
        dtype: DType,
        [a, b, c]: [&Access; 3],
        w: usize,
        vars: &[Vec<i64>],
    ) -> Result<()> {
        for x in [a, b, c] {
            if self.prog.buffers.get(x.buf).map(|b| b.space) != Some(Space::Registers) {
                return Err(KernelError::Run {
                    op: self.op_name(call),
                    message: "an mma reads and writes registers only".into(),
                });
            }
        }
        let gather = |m: &mut Self, op: Operand, at: &Access, d: DType| -> Result<Vec<f32>> {
            let table = fragment(op)?;
            let mut v = vec![0f32; table.len()];
            let eb = i64::from(d.bytes());
            for &(x, reg, lane) in &table {
                let t = w * 32 + lane as usize;
                m.tid = t as i64;
                let r = Access {
                    buf: at.buf,
                    byte: at.byte.clone().plus(Expr::Const(reg * eb)),
                };
                let bytes = m.read(&r, d.bytes() as usize, &vars[t], call)?;
                v[x] = Num::decode(d, &bytes).f() as f32;
            }
            Ok(v)
        };
        let am = gather(self, Operand::A, a, dtype)?;
        let bm = gather(self, Operand::B, b, dtype)?;
        let mut cm = gather(self, Operand::C, c, DType::F32)?;
        for i in 0..16 {
            for j in 0..8 {
                let mut acc = cm[i * 8 + j];
                for k in 0..16 {
                    acc = am[i * 16 + k].mul_add(bm[k * 8 + j], acc);
                }
                cm[i * 8 + j] = acc;
            }
        }
        for &(x, reg, lane) in &fragment(Operand::C)? {
            let t = w * 32 + lane as usize;
            self.tid = t as i64;
            let r = Access {
                buf: c.buf,
                byte: c.byte.clone().plus(Expr::Const(reg * 4)),
            };
            self.write(&r, &cm[x].to_le_bytes(), &vars[t], call)?;
        }
        Ok(())
    }
}
