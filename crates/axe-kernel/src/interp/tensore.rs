//! trn1 programs in the interpreter: SBUF and PSUM start zeroed beside the global buffers, one
//! instruction stream runs them (thread 0 of the one CTA), and a TensorE [`Matmul`] runs by its
//! definition: `psum[i, j] += Σ_q stationary[q, i]·moving[q, j]` in f32, `q` ascending, one fused
//! multiply-add a step.

use super::{Machine, Num};
use crate::desc::Space;
use crate::dispatch::Target;
use crate::dtype::DType;
use crate::error::{KernelError, Result};
use crate::ir::{Access, Program};
use crate::tensore::{free_size, Ap, Matmul, PARTITIONS};

/// Storage for every buffer: SBUF and PSUM zeroed, the rest empty (global buffers are filled in).
pub(super) fn on_chip(prog: &Program) -> Result<Vec<Vec<u8>>> {
    prog.buffers
        .iter()
        .map(|b| {
            Ok(match b.space {
                Space::Sbuf | Space::Psum => {
                    let n = usize::try_from(b.bytes()?)
                        .map_err(|_| KernelError::TooLarge(format!("buffer {}", b.name)))?;
                    vec![0; n]
                }
                _ => Vec::new(),
            })
        })
        .collect()
}

/// Threads that run the program: one instruction stream on trn1, else the launch's.
pub(super) fn threads(prog: &Program) -> usize {
    if prog.target == Target::Trn1.name() {
        1
    } else {
        prog.launch.threads as usize
    }
}

impl Machine<'_> {
    /// The `rows × cols` tile at `ap`, row-major, as numbers.
    fn tile(
        &mut self,
        ap: &Ap,
        (rows, cols): (u32, u32),
        dtype: DType,
        vars: &[i64],
        call: usize,
    ) -> Result<(Vec<Num>, Vec<Access>)> {
        let buf = self
            .prog
            .buffers
            .get(ap.buf)
            .ok_or_else(|| KernelError::Run {
                op: self.op_name(call),
                message: format!("buffer #{} does not exist", ap.buf),
            })?;
        let free = free_size(buf) as i64;
        let name = buf.name.clone();
        let p0 = self.eval(&ap.partition, vars, Some(call))?;
        let f0 = self.eval(&ap.free, vars, Some(call))?;
        let (mut vals, mut at) = (Vec::new(), Vec::new());
        for r in 0..i64::from(rows) {
            for c in 0..i64::from(cols) {
                let (p, f) = (
                    p0.saturating_add(r),
                    f0.saturating_add(c.saturating_mul(ap.free_step)),
                );
                if p < 0 || p >= PARTITIONS as i64 || f < 0 || f >= free {
                    return Err(KernelError::Run {
                        op: self.op_name(call),
                        message: format!(
                            "the TensorE tile reaches partition {p}, free element {f} of {name} ({PARTITIONS} partitions of {free})"
                        ),
                    });
                }
                let a = Access {
                    buf: ap.buf,
                    byte: crate::expr::Expr::Const((p * free + f) * i64::from(dtype.bytes())),
                };
                let b = self.read(&a, dtype.bytes() as usize, vars, call)?;
                vals.push(Num::decode(dtype, &b));
                at.push(a);
            }
        }
        Ok((vals, at))
    }

    /// Runs one TensorE matmul by its definition.
    pub(super) fn matmul(&mut self, ins: &Matmul, vars: &[i64]) -> Result<()> {
        let (m, n, k) = (ins.m as usize, ins.n as usize, ins.k as usize);
        let (a, _) = self.tile(&ins.stationary, (ins.k, ins.m), ins.dtype, vars, ins.call)?;
        let (b, _) = self.tile(&ins.moving, (ins.k, ins.n), ins.dtype, vars, ins.call)?;
        let (c, at) = self.tile(&ins.psum, (ins.m, ins.n), DType::F32, vars, ins.call)?;
        for i in 0..m {
            for j in 0..n {
                let mut acc = c[i * n + j].f() as f32;
                for q in 0..k {
                    acc = (a[q * m + i].f() as f32).mul_add(b[q * n + j].f() as f32, acc);
                }
                self.write(
                    &at[i * n + j],
                    &Num::F(f64::from(acc)).encode(DType::F32),
                    vars,
                    ins.call,
                )?;
            }
        }
        Ok(())
    }
}
