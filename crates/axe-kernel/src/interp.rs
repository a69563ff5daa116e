//! The CPU interpreter: runs a lowered [`Program`] by simulating every CTA, warp and thread.
//!
//! Threads of a CTA run one at a time up to the next barrier; then the next thread runs. Every thread
//! must reach the same barrier (or the end) — a barrier some threads skip is an error. Between two
//! barriers, two threads touching the same shared byte with at least one write is a race; two threads
//! of different CTAs, or of one CTA between the same barriers, touching the same global byte with at
//! least one write is a race, whichever ran first ([`races`]: a read of another thread's write, a write
//! over another thread's read or write); any access outside its buffer is an error. Each names the
//! operator and the variant it runs.

use crate::desc::Space;
use crate::error::{KernelError, Result};
use crate::expr::{eval_bin, Expr};
use crate::ir::{Access, LStmt, Program};
use num::{compute, Num};

mod asynch;
pub(crate) mod intrinsic;
mod num;
mod races;
mod sched;
mod tensore;
mod warp;

/// Bounds on a simulation.
#[derive(Debug, Clone, Copy)]
pub struct RunLimits {
    /// Most instructions executed by all threads together.
    pub max_steps: u64,
    /// Most bytes of memory the run may hold ([`footprint`]): the buffers and what the interpreter
    /// keeps beside them.
    pub max_bytes: u64,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            max_steps: 200_000_000,
            max_bytes: 16 << 30,
        }
    }
}

impl RunLimits {
    /// Refuses a run of `prog` whose [`footprint`] passes `max_bytes`, before anything is allocated.
    pub fn admit(&self, prog: &Program) -> Result<()> {
        let need = footprint(prog)?;
        if need > self.max_bytes {
            return Err(KernelError::TooLarge(format!(
                "{}: the interpreter would hold {need} bytes (17 a byte of global and shared memory, and every thread's registers), more than its limit of {}",
                prog.name, self.max_bytes
            )));
        }
        Ok(())
    }
}

/// The bytes a run of `prog` holds: each global and shared byte with its last writer and reader
/// (17 bytes each), the on-chip buffers, and every thread's registers. A run is refused before
/// anything is allocated where this passes [`RunLimits::max_bytes`].
pub fn footprint(prog: &Program) -> Result<u64> {
    let too_large = || KernelError::TooLarge("the interpreter's memory".into());
    let mut total = prog.shared_bytes.checked_mul(17).ok_or_else(too_large)?;
    let mut regs = 0u64;
    for b in &prog.buffers {
        let bytes = b.bytes()?;
        let add = match b.space {
            Space::Global => bytes.checked_mul(17),
            Space::Sbuf | Space::Psum => Some(bytes),
            Space::Registers => {
                regs = regs.checked_add(bytes).ok_or_else(too_large)?;
                Some(0)
            }
            Space::Shared(_) => Some(0),
        };
        total = add
            .and_then(|a| total.checked_add(a))
            .ok_or_else(too_large)?;
    }
    regs.checked_mul(tensore::threads(prog) as u64)
        .and_then(|r| total.checked_add(r))
        .ok_or_else(too_large)
}

enum Ins<'a> {
    Set(u32, &'a Expr),
    Incr(u32),
    JumpUnless(&'a Expr, usize),
    JumpUnlessLt(u32, i64, usize),
    Jump(usize),
    Mem(&'a LStmt),
    Collective(&'a LStmt),
    Wait(&'a LStmt),
    Barrier,
}

/// Where a thread stopped: at a barrier, a warp- or warpgroup-collective instruction (a shuffle, an
/// mma, a wgmma; its pc), an mbarrier wait not yet satisfied, or the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Barrier(usize),
    Collective(usize),
    Wait(usize),
    End,
}

fn flatten<'a>(body: &'a [LStmt], out: &mut Vec<Ins<'a>>) {
    for s in body {
        match s {
            LStmt::For { var, extent, body } => {
                static ZERO: Expr = Expr::Const(0);
                out.push(Ins::Set(var.0, &ZERO));
                let head = out.len();
                out.push(Ins::JumpUnlessLt(var.0, *extent, 0));
                flatten(body, out);
                out.push(Ins::Incr(var.0));
                out.push(Ins::Jump(head));
                let end = out.len();
                out[head] = Ins::JumpUnlessLt(var.0, *extent, end);
            }
            LStmt::If { cond, body } => {
                let at = out.len();
                out.push(Ins::JumpUnless(cond, 0));
                flatten(body, out);
                let end = out.len();
                out[at] = Ins::JumpUnless(cond, end);
            }
            LStmt::Let { var, value } => out.push(Ins::Set(var.0, value)),
            LStmt::Move { .. }
            | LStmt::Store { .. }
            | LStmt::Compute { .. }
            | LStmt::Intrinsic(_) => out.push(Ins::Mem(s)),
            LStmt::Shuffle { .. }
            | LStmt::Mma { .. }
            | LStmt::LdMatrix { .. }
            | LStmt::StMatrix { .. }
            | LStmt::Wgmma { .. }
            | LStmt::Ballot { .. } => out.push(Ins::Collective(s)),
            LStmt::MbarWait { .. } => out.push(Ins::Wait(s)),
            LStmt::MbarInit { .. }
            | LStmt::CpAsync { .. }
            | LStmt::CpAsyncArrive { .. }
            | LStmt::AsyncCommit
            | LStmt::AsyncWait(_)
            | LStmt::FenceMbarInit
            | LStmt::MbarArrive { .. }
            | LStmt::MbarExpectTx { .. }
            | LStmt::TmaLoad { .. }
            | LStmt::WgmmaFence { .. }
            | LStmt::WgmmaCommit
            | LStmt::WgmmaWait { .. }
            | LStmt::SetMaxNReg { .. }
            | LStmt::Matmul(_) => out.push(Ins::Mem(s)),
            LStmt::Barrier => out.push(Ins::Barrier),
            LStmt::Comment(_) => {}
        }
    }
}

const NONE: u64 = u64::MAX;
const MANY: u64 = u64::MAX - 1;

struct Machine<'p> {
    prog: &'p Program,
    globals: Vec<Vec<u8>>,
    glob: races::Globals,
    shared: Vec<u8>,
    shared_writer: Vec<u64>,
    shared_reader: Vec<u64>,
    regs: Vec<Vec<u8>>,
    cta: i64,
    tid: i64,
    phase: u64,
    steps: u64,
    limits: RunLimits,
    asy: asynch::Async,
}

/// Runs `prog` on `globals` (one byte vector per global buffer, in buffer order, each exactly the
/// buffer's size). Returns the global buffers after the kernel.
pub fn run(prog: &Program, globals: Vec<Vec<u8>>, limits: RunLimits) -> Result<Vec<Vec<u8>>> {
    let expected: Vec<(usize, u64)> = prog
        .buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| b.space == Space::Global)
        .map(|(i, b)| Ok((i, b.bytes()?)))
        .collect::<Result<_>>()?;
    if expected.len() != globals.len() {
        return Err(KernelError::Invalid(format!(
            "{} takes {} global buffers, {} were given",
            prog.name,
            expected.len(),
            globals.len()
        )));
    }
    limits.admit(prog)?;
    prog.check_mbarriers()?;
    let mut full: Vec<Vec<u8>> = tensore::on_chip(prog)?;
    for ((i, bytes), g) in expected.iter().zip(globals) {
        if g.len() as u64 != *bytes {
            return Err(KernelError::Invalid(format!(
                "buffer {} needs {bytes} bytes, {} were given",
                prog.buffers[*i].name,
                g.len()
            )));
        }
        full[*i] = g;
    }
    let shared_len = usize::try_from(prog.shared_bytes)
        .map_err(|_| KernelError::TooLarge("shared memory".into()))?;
    let mut m = Machine {
        prog,
        glob: races::Globals::new(full.iter().map(Vec::len)),
        globals: full,
        shared: vec![0; shared_len],
        shared_writer: vec![NONE; shared_len],
        shared_reader: vec![NONE; shared_len],
        regs: Vec::new(),
        cta: 0,
        tid: 0,
        phase: 0,
        steps: 0,
        limits,
        asy: asynch::Async::default(),
    };
    let mut code = Vec::new();
    flatten(&prog.body, &mut code);
    let threads = tensore::threads(prog);
    let reg_bytes: usize = prog
        .buffers
        .iter()
        .filter(|b| b.space == Space::Registers)
        .map(|b| b.bytes().map(|v| v as usize))
        .sum::<Result<usize>>()?;
    for cta in 0..i64::from(prog.launch.grid) {
        m.cta = cta;
        m.glob.start_cta(m.phase + 1);
        m.run_cta(&code, threads, reg_bytes)?;
    }
    Ok(m.globals
        .into_iter()
        .zip(&prog.buffers)
        .filter(|(_, b)| b.space == Space::Global)
        .map(|(g, _)| g)
        .collect())
}

impl<'p> Machine<'p> {
    /// Runs one thread until a barrier or a warp-collective instruction (at its pc) or the end.
    fn step_until_sync(
        &mut self,
        code: &[Ins<'_>],
        pc: &mut usize,
        vars: &mut [i64],
    ) -> Result<Stop> {
        while *pc < code.len() {
            self.steps += 1;
            if self.steps > self.limits.max_steps {
                return Err(KernelError::TooLarge(format!(
                    "the simulation passed {} steps",
                    self.limits.max_steps
                )));
            }
            match &code[*pc] {
                Ins::Set(v, e) => {
                    let value = self.eval(e, vars, None)?;
                    *slot(vars, *v)? = value;
                }
                Ins::Incr(v) => *slot(vars, *v)? += 1,
                Ins::JumpUnless(e, to) => {
                    if self.eval(e, vars, None)? == 0 {
                        *pc = *to;
                        continue;
                    }
                }
                Ins::JumpUnlessLt(v, n, to) => {
                    if *slot(vars, *v)? >= *n {
                        *pc = *to;
                        continue;
                    }
                }
                Ins::Jump(to) => {
                    *pc = *to;
                    continue;
                }
                Ins::Mem(s) => self.mem(s, vars)?,
                Ins::Wait(s) => {
                    if !self.wait_ready(s, vars)? {
                        return Ok(Stop::Wait(*pc));
                    }
                }
                Ins::Barrier => return Ok(Stop::Barrier(*pc)),
                Ins::Collective(_) => return Ok(Stop::Collective(*pc)),
            }
            *pc += 1;
        }
        Ok(Stop::End)
    }

    fn op_name(&self, call: usize) -> String {
        if call == asynch::SYNC {
            return "an mbarrier statement".into();
        }
        if call == intrinsic::CALL {
            return "an intrinsic".into();
        }
        match self.prog.decisions.get(call) {
            Some(d) => format!("{} ({})", d.op, d.variant),
            None => format!("call #{call}"),
        }
    }

    fn eval(&self, e: &Expr, vars: &[i64], call: Option<usize>) -> Result<i64> {
        Ok(match e {
            Expr::Const(c) => *c,
            Expr::Var(v) => *vars.get(v.0 as usize).ok_or_else(|| undeclared(v.0))?,
            Expr::Thread => self.tid,
            Expr::Cta => self.cta,
            Expr::Bin(op, a, b) => {
                let (a, b) = (self.eval(a, vars, call)?, self.eval(b, vars, call)?);
                eval_bin(*op, a, b).ok_or_else(|| KernelError::Run {
                    op: call.map_or("an expression".to_string(), |c| self.op_name(c)),
                    message: format!(
                        "integer overflow or division by zero computing {a} {} {b}",
                        op.c()
                    ),
                })?
            }
        })
    }

    /// Locates `n` bytes at `a`: (is_global, buffer, physical byte offset), checking bounds.
    fn locate(
        &self,
        a: &Access,
        n: usize,
        vars: &[i64],
        call: usize,
        write: bool,
    ) -> Result<(u8, usize, usize)> {
        let buf = self
            .prog
            .buffers
            .get(a.buf)
            .ok_or_else(|| KernelError::Run {
                op: self.op_name(call),
                message: format!("buffer #{} does not exist", a.buf),
            })?;
        let logical = self.eval(&a.byte, vars, Some(call))?;
        let size = buf.bytes()? as i64;
        if logical < 0
            || logical.checked_add(n as i64).is_none_or(|end| end > size)
            || logical % n as i64 != 0
        {
            return Err(KernelError::Run {
                op: self.op_name(call),
                message: format!(
                    "thread {} of CTA {} {} {n} bytes at byte {logical} of {} buffer {} ({size} bytes){}",
                    self.tid,
                    self.cta,
                    if write { "writes" } else { "reads" },
                    crate::desc::space_name(buf.space),
                    buf.name,
                    if logical % n as i64 != 0 { ": misaligned vector" } else { ": out of bounds" }
                ),
            });
        }
        Ok(match buf.space {
            // SBUF and PSUM: one program's on-chip memories, kept beside the global buffers.
            Space::Global | Space::Sbuf | Space::Psum => (0, a.buf, logical as usize),
            Space::Shared(sw) => {
                let phys = sw.map_or(logical, |s| s.apply(logical));
                let base = self
                    .prog
                    .shared_offsets
                    .get(a.buf)
                    .copied()
                    .unwrap_or(u64::MAX);
                if base.saturating_add(phys as u64).saturating_add(n as u64)
                    > self.shared.len() as u64
                {
                    return Err(KernelError::Run {
                        op: self.op_name(call),
                        message: format!(
                            "shared buffer {} lies outside the program's {} bytes of shared memory",
                            buf.name,
                            self.shared.len()
                        ),
                    });
                }
                (
                    1,
                    a.buf,
                    (self.prog.shared_offsets.get(a.buf).copied().unwrap_or(0) as i64 + phys)
                        as usize,
                )
            }
            Space::Registers => {
                let base: u64 = self.prog.buffers[..a.buf]
                    .iter()
                    .filter(|b| b.space == Space::Registers)
                    .map(|b| b.bytes().unwrap_or(0))
                    .sum();
                (2, a.buf, base as usize + logical as usize)
            }
        })
    }

    fn read(&mut self, a: &Access, n: usize, vars: &[i64], call: usize) -> Result<Vec<u8>> {
        let (kind, buf, at) = self.locate(a, n, vars, call, false)?;
        let me = (self.cta as u64) << 20 | self.tid as u64;
        Ok(match kind {
            0 => {
                self.global_read(buf, at, n, call)?;
                self.globals[buf][at..at + n].to_vec()
            }
            1 => {
                for i in at..at + n {
                    let mark = self.asy.pending.get(i).copied().unwrap_or(asynch::CLEAR);
                    if mark != asynch::CLEAR && !self.asy.visible(self.tid as usize, mark) {
                        return Err(KernelError::Run {
                            op: self.op_name(call),
                            message: format!(
                                "thread {} of CTA {} reads shared buffer {} where an asynchronous copy writes, without waiting for the mbarrier phase that completes it",
                                self.tid, self.cta, self.prog.buffers[a.buf].name
                            ),
                        });
                    }
                    let w = self.shared_writer[i];
                    if w != NONE && w != me {
                        return Err(self.race(call, "reads", a.buf, w));
                    }
                    let r = &mut self.shared_reader[i];
                    *r = if *r == NONE || *r == me { me } else { MANY };
                }
                self.shared[at..at + n].to_vec()
            }
            _ => self.regs[self.tid as usize][at..at + n].to_vec(),
        })
    }

    fn write(&mut self, a: &Access, bytes: &[u8], vars: &[i64], call: usize) -> Result<()> {
        let n = bytes.len();
        let (kind, buf, at) = self.locate(a, n, vars, call, true)?;
        let me = (self.cta as u64) << 20 | self.tid as u64;
        match kind {
            0 => {
                self.global_write(buf, at, bytes, call)?;
                self.globals[buf][at..at + n].copy_from_slice(bytes);
            }
            1 => {
                let other = |w: u64| w != NONE && w != me;
                for i in at..at + n {
                    let (w, r) = (self.shared_writer[i], self.shared_reader[i]);
                    if other(w) {
                        // Equal when every byte another thread wrote is rewritten as is.
                        let equal = (at..at + n)
                            .filter(|&j| other(self.shared_writer[j]))
                            .all(|j| self.shared[j] == bytes[j - at]);
                        let e = self.race(call, "writes", a.buf, w);
                        return Err(races::with_tail(e, races::waw(equal)));
                    }
                    if other(r) {
                        return Err(self.race(call, "writes", a.buf, r));
                    }
                    self.shared_writer[i] = me;
                }
                self.shared[at..at + n].copy_from_slice(bytes);
            }
            _ => self.regs[self.tid as usize][at..at + n].copy_from_slice(bytes),
        }
        Ok(())
    }

    fn mem(&mut self, s: &LStmt, vars: &[i64]) -> Result<()> {
        match s {
            LStmt::Move {
                call,
                dst,
                src,
                bytes,
            } => {
                let v = self.read(src, *bytes as usize, vars, *call)?;
                self.write(dst, &v, vars, *call)
            }
            LStmt::Store { call, dst, value } => self.write(dst, value, vars, *call),
            LStmt::Matmul(m) => self.matmul(m, vars),
            LStmt::Intrinsic(i) => self.intrinsic(i, vars),
            s if self.async_mem(s, vars)? => Ok(()),
            LStmt::Compute { call, f, dst, srcs } => {
                let (ins, out) = f.types();
                let mut vals = Vec::new();
                for (a, d) in srcs.iter().zip(&ins) {
                    let b = self.read(a, d.bytes() as usize, vars, *call)?;
                    vals.push(Num::decode(*d, &b));
                }
                let r = compute(f, &vals);
                self.write(dst, &r.encode(out), vars, *call)
            }
            _ => Ok(()),
        }
    }
}

fn undeclared(v: u32) -> KernelError {
    KernelError::Invalid(format!(
        "variable v{v} is used but the program declares fewer variables"
    ))
}

fn slot(vars: &mut [i64], v: u32) -> Result<&mut i64> {
    vars.get_mut(v as usize).ok_or_else(|| undeclared(v))
}
