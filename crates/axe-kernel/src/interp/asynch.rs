//! Hopper's asynchronous machinery in the interpreter: mbarriers (arrivals, transaction bytes,
//! phases), the copy engine (a box copied when it is issued, its bytes completing a transaction) and
//! wgmma (run when the whole warpgroup reached it).
//!
//! Bytes the copy engine wrote stay *pending* on the mbarrier phase their transaction completes: a
//! thread may read them only after it waited for that phase (or after a CTA barrier that follows the
//! phase's completion); reading them earlier is reported as a missing wait. Bytes a `cp.async` wrote
//! are pending on the issuing thread's commit group: that thread sees them once it waited for the
//! group, the others after a CTA barrier that follows the wait.

use std::collections::HashMap;

use super::{Machine, Num};
use crate::desc::Space;
use crate::dtype::DType;
use crate::error::{KernelError, Result};
use crate::expr::Expr;
use crate::ir::{Access, LStmt};

/// Marks a shared byte no copy is pending on.
pub(super) const CLEAR: u64 = u64::MAX;
/// The call index of statements outside operator calls (mbarrier statements).
pub(super) const SYNC: usize = usize::MAX;
/// Marks a pending byte's key as a thread's commit group rather than an mbarrier.
const GROUP: u64 = 1 << 31;

/// One mbarrier's state.
#[derive(Debug, Clone)]
struct Bar {
    count: u32,
    pending: u32,
    tx: i64,
    completed: u64,
}

/// The CTA's mbarriers and what each thread has seen of them.
#[derive(Debug, Default)]
pub(super) struct Async {
    bars: HashMap<usize, Bar>,
    seen: Vec<HashMap<usize, u64>>,
    /// Per thread: groups committed, and groups known complete (after its waits).
    groups: Vec<(u64, u64)>,
    /// Per thread: the shared bytes (start, length) of its `cp.async`s since its last
    /// `cp.async.mbarrier.arrive`.
    tracked: Vec<Vec<(usize, usize)>>,
    /// Per shared byte: `(mbarrier << 32) | phase` of the copy that wrote it, or [`CLEAR`].
    pub(super) pending: Vec<u64>,
}

impl Async {
    /// A fresh state for a CTA of `threads` threads and `shared` bytes.
    pub(super) fn new(threads: usize, shared: usize) -> Async {
        Async {
            bars: HashMap::new(),
            seen: vec![HashMap::new(); threads],
            groups: vec![(0, 0); threads],
            tracked: vec![Vec::new(); threads],
            pending: vec![CLEAR; shared],
        }
    }

    fn complete(b: &mut Bar) {
        if b.pending == 0 && b.tx == 0 {
            b.completed += 1;
            b.pending = b.count;
        }
    }

    /// Whether thread `t` may read a byte marked `mark`.
    pub(super) fn visible(&self, t: usize, mark: u64) -> bool {
        let (key, phase) = ((mark >> 32) as usize, mark & 0xffff_ffff);
        if key as u64 & GROUP != 0 {
            let owner = (key as u64 & !GROUP) as usize;
            return owner == t && self.groups.get(owner).is_some_and(|g| g.1 > phase);
        }
        self.seen
            .get(t)
            .and_then(|s| s.get(&key))
            .is_some_and(|&c| c > phase)
    }

    /// At a CTA barrier: bytes of completed phases become visible to every thread.
    pub(super) fn barrier(&mut self) {
        let (bars, groups) = (&self.bars, &self.groups);
        for m in self.pending.iter_mut().filter(|m| **m != CLEAR) {
            let (key, phase) = ((*m >> 32) as usize, *m & 0xffff_ffff);
            let done = if key as u64 & GROUP != 0 {
                groups
                    .get((key as u64 & !GROUP) as usize)
                    .is_some_and(|g| g.1 > phase)
            } else {
                bars.get(&key).is_some_and(|b| b.completed > phase)
            };
            if done {
                *m = CLEAR;
            }
        }
    }
}

impl Machine<'_> {
    /// The mbarrier at `bar`: its physical shared byte.
    fn bar_key(&self, bar: &Access, vars: &[i64], call: usize) -> Result<usize> {
        let (kind, _, at) = self.locate(bar, 8, vars, call, true)?;
        if kind != 1 {
            return Err(self.sync_err(call, "an mbarrier lives in shared memory".into()));
        }
        Ok(at)
    }

    fn sync_err(&self, call: usize, message: String) -> KernelError {
        KernelError::Run {
            op: self.op_name(call),
            message: format!("thread {} of CTA {}: {message}", self.tid, self.cta),
        }
    }

    fn bar_mut(&mut self, key: usize, call: usize) -> Result<&mut Bar> {
        if !self.asy.bars.contains_key(&key) {
            return Err(self.sync_err(
                call,
                format!("the mbarrier at shared byte {key} is used before it is initialised"),
            ));
        }
        self.asy
            .bars
            .get_mut(&key)
            .ok_or_else(|| KernelError::Invalid("mbarrier vanished".into()))
    }

    /// Whether the wait `s` of the running thread is satisfied (then the thread has seen the phase).
    pub(super) fn wait_ready(&mut self, s: &LStmt, vars: &[i64]) -> Result<bool> {
        let LStmt::MbarWait { bar, parity } = s else {
            return Ok(true);
        };
        let key = self.bar_key(bar, vars, SYNC)?;
        let p = self.eval(parity, vars, None)?;
        let completed = self.bar_mut(key, SYNC)?.completed;
        if (completed & 1) as i64 == (p & 1) {
            return Ok(false);
        }
        let t = self.tid as usize;
        if let Some(s) = self.asy.seen.get_mut(t) {
            s.insert(key, completed);
        }
        Ok(true)
    }

    /// The asynchronous statements one thread runs by itself; false for others.
    pub(super) fn async_mem(&mut self, s: &LStmt, vars: &[i64]) -> Result<bool> {
        match s {
            LStmt::MbarInit { bar, count } => {
                let key = self.bar_key(bar, vars, SYNC)?;
                self.asy.bars.insert(
                    key,
                    Bar {
                        count: *count,
                        pending: *count,
                        tx: 0,
                        completed: 0,
                    },
                );
            }
            LStmt::MbarArrive { bar } => {
                let key = self.bar_key(bar, vars, SYNC)?;
                self.arrive(key, "mbarrier.arrive")?;
            }
            LStmt::MbarExpectTx { bar, bytes } => {
                let key = self.bar_key(bar, vars, SYNC)?;
                self.add_tx(key, i64::from(*bytes), SYNC, "mbarrier.expect_tx")?;
            }
            LStmt::TmaLoad {
                call,
                map,
                dst,
                src,
                bar,
            } => self.tma_load(*call, *map, dst, src, bar, vars)?,
            LStmt::CpAsync {
                call,
                dst,
                src,
                bytes,
            } => {
                let v = self.read(src, *bytes as usize, vars, *call)?;
                self.write(dst, &v, vars, *call)?;
                let (_, _, p) = self.locate(dst, *bytes as usize, vars, *call, true)?;
                let t = self.tid as usize;
                let group = self.asy.groups.get(t).map_or(0, |g| g.0);
                for q in p..p + *bytes as usize {
                    self.asy.pending[q] = (GROUP | t as u64) << 32 | (group & 0xffff_ffff);
                }
                if let Some(v) = self.asy.tracked.get_mut(t) {
                    v.push((p, *bytes as usize));
                }
            }
            LStmt::CpAsyncArrive { bar } => self.cp_async_arrive(bar, vars)?,
            LStmt::AsyncCommit => {
                if let Some(g) = self.asy.groups.get_mut(self.tid as usize) {
                    g.0 += 1;
                }
            }
            LStmt::AsyncWait(n) => {
                if let Some(g) = self.asy.groups.get_mut(self.tid as usize) {
                    g.1 = g.1.max(g.0.saturating_sub(u64::from(*n)));
                }
            }
            LStmt::FenceMbarInit
            | LStmt::WgmmaFence { .. }
            | LStmt::WgmmaCommit
            | LStmt::WgmmaWait { .. }
            | LStmt::SetMaxNReg { .. } => {}
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `cp.async.mbarrier.arrive.noinc` by the running thread: the bytes of its `cp.async`s since its
    /// last such arrive that are still pending on its commit groups become pending on the mbarrier's
    /// current phase instead (a thread sees them after waiting for that phase, and they are no
    /// longer the thread's writes to race with: the mbarrier orders them, as the copy engine's), and
    /// the mbarrier gets one arrival (copies land when issued here, so the arrival is immediate).
    fn cp_async_arrive(&mut self, bar: &Access, vars: &[i64]) -> Result<()> {
        let key = self.bar_key(bar, vars, SYNC)?;
        let phase = self.bar_mut(key, SYNC)?.completed;
        let t = self.tid as usize;
        let mine = (GROUP | t as u64) << 32;
        let done = self.asy.groups.get(t).map_or(0, |g| g.1);
        let ranges = self
            .asy
            .tracked
            .get_mut(t)
            .map(std::mem::take)
            .unwrap_or_default();
        for (p, n) in ranges {
            for q in p..p + n {
                let Some(m) = self.asy.pending.get_mut(q) else {
                    continue;
                };
                if *m >> 32 == mine >> 32 && *m & 0xffff_ffff >= done {
                    *m = (key as u64) << 32 | (phase & 0xffff_ffff);
                    // The mbarrier orders the bytes for their readers, as the copy engine's.
                    if let Some(w) = self.shared_writer.get_mut(q) {
                        *w = super::NONE;
                    }
                }
            }
        }
        self.arrive(key, "cp.async.mbarrier.arrive")
    }

    /// One arrival (by the instruction `what`) on the mbarrier at `key`, completing its phase when it
    /// was the last one expected and no transaction bytes are pending. An arrival on a phase that
    /// expects no more (its count met, waiting only for bytes) is an error: PTX leaves it undefined,
    /// so a kernel that does it is wrong on the GPU whatever the interpreter would make of it.
    fn arrive(&mut self, key: usize, what: &str) -> Result<()> {
        let b = self.bar_mut(key, SYNC)?;
        if b.pending == 0 {
            return Err(self.sync_err(
                SYNC,
                format!("{what} on the mbarrier at shared byte {key}, whose phase expects no more arrivals (init counts each thread's arrival)"),
            ));
        }
        b.pending -= 1;
        Async::complete(b);
        Ok(())
    }

    fn tma_load(
        &mut self,
        call: usize,
        map: usize,
        dst: &Access,
        src: &Access,
        bar: &Access,
        vars: &[i64],
    ) -> Result<()> {
        let m = self
            .prog
            .tensor_maps
            .get(map)
            .cloned()
            .ok_or_else(|| self.sync_err(call, format!("tensor map {map} does not exist")))?;
        let rank = m.dims.len();
        if rank == 0 || rank > crate::tma::MAX_RANK || m.box_dims.len() != rank {
            return Err(self.sync_err(
                call,
                format!(
                    "tensor map {map} has dims {:?} and box {:?}; 1 to 5 dims, one box extent each",
                    m.dims, m.box_dims
                ),
            ));
        }
        if src.buf != m.buf
            || self.prog.buffers.get(dst.buf).map(|b| b.space) != Some(Space::Shared(m.swizzle))
        {
            return Err(self.sync_err(
                call,
                "the copy's buffers are not the tensor map's (global) and a shared buffer of its swizzle".into(),
            ));
        }
        let eb = i64::from(m.elem_bytes);
        let origin = self.eval(&src.byte, vars, Some(call))?;
        // The box's coordinates: its first element's index, mixed radix over the map's dims.
        let mut at = vec![0u64; rank];
        let mut rest = origin.div_euclid(eb.max(1));
        for (k, &d) in m.dims.iter().enumerate() {
            let d = d.max(1) as i64;
            at[k] = if k + 1 == rank {
                rest
            } else {
                rest.rem_euclid(d)
            } as u64;
            rest = rest.div_euclid(d);
        }
        let outside = m
            .dims
            .iter()
            .zip(&m.box_dims)
            .zip(&at)
            .any(|((&d, &b), &x)| x + u64::from(b) > d);
        if origin < 0 || origin % eb != 0 || outside {
            let rev = |v: Vec<String>| v.into_iter().rev().collect::<Vec<_>>().join(", ");
            return Err(self.sync_err(
                call,
                format!(
                    "the box [{}] at ({}) leaves the [{}] array of its tensor map (the copy engine would fill zeros there)",
                    rev(m.box_dims.iter().map(u32::to_string).collect()),
                    rev(at.iter().map(u64::to_string).collect()),
                    rev(m.dims.iter().map(u64::to_string).collect()),
                ),
            ));
        }
        let key = self.bar_key(bar, vars, call)?;
        let phase = self.bar_mut(key, call)?.completed;
        let d = self.eval(&dst.byte, vars, Some(call))?;
        let e = m.elem_bytes as usize;
        let total: u64 = m.box_dims.iter().map(|&b| u64::from(b)).product();
        for x in 0..total {
            // Element x of the box (dense, innermost first) and its element in the map's array.
            let (mut r, mut g, mut radix) = (x, 0u64, 1u64);
            for ((&b, &d), &a) in m.box_dims.iter().zip(&m.dims).zip(&at) {
                let b = u64::from(b).max(1);
                g += (a + r % b) * radix;
                r /= b;
                radix *= d;
            }
            let g = (g * u64::from(m.elem_bytes)) as usize;
            let bytes = self.globals[m.buf]
                .get(g..g + e)
                .ok_or_else(|| self.sync_err(call, "the box leaves its buffer".into()))?
                .to_vec();
            let at = Access {
                buf: dst.buf,
                byte: Expr::Const(d + x as i64 * eb),
            };
            let (_, _, p) = self.locate(&at, e, vars, call, true)?;
            self.shared[p..p + e].copy_from_slice(&bytes);
            for q in p..p + e {
                self.asy.pending[q] = (key as u64) << 32 | (phase & 0xffff_ffff);
            }
        }
        let landed = i64::try_from(total)
            .ok()
            .and_then(|t| t.checked_mul(eb))
            .ok_or_else(|| self.sync_err(call, "the box's bytes overflow a count".into()))?;
        self.add_tx(key, -landed, call, "the copy engine's complete_tx")?;
        Async::complete(self.bar_mut(key, call)?);
        Ok(())
    }

    /// Adds `delta` bytes to the pending transaction count of the mbarrier at `key` (announced by
    /// `expect_tx`: positive; landed by the copy engine: negative). **Law**: the count after is the
    /// count before plus `delta`, or an error (and no change) when that leaves `±(2^20 − 1)`, the range
    /// PTX gives a phase's transaction count (checked arithmetic: it never wraps).
    fn add_tx(&mut self, key: usize, delta: i64, call: usize, what: &str) -> Result<()> {
        let max = i64::from(crate::ir::MBAR_MAX);
        let before = self.bar_mut(key, call)?.tx;
        let Some(after) = before.checked_add(delta).filter(|t| t.abs() <= max) else {
            return Err(self.sync_err(
                call,
                format!(
                    "{what} of {} bytes takes the transaction count of the mbarrier at shared byte {key} from {before} past ±{max} (2^20 - 1), the most a phase counts",
                    delta.unsigned_abs()
                ),
            ));
        };
        self.bar_mut(key, call)?.tx = after;
        Ok(())
    }

    /// The wgmma of warpgroup `g` (threads `128g..128g+128`, all at it): C += A·B, A `64×16` and B
    /// `16×n` read through their descriptors, C in each thread's accumulator fragment; each element a
    /// chain of f32 fused multiply-adds in ascending k.
    pub(super) fn wgmma(&mut self, s: &LStmt, g: usize, vars: &[Vec<i64>]) -> Result<()> {
        let LStmt::Wgmma {
            call,
            dtype,
            n,
            c,
            a,
            b,
        } = s
        else {
            return Ok(());
        };
        let (call, n) = (*call, *n as usize);
        let first = g * 128;
        self.tid = first as i64;
        let eb = i64::from(dtype.bytes());
        let read = |m: &mut Self, d: &crate::ir::SmemDesc, rows: usize| -> Result<Vec<f32>> {
            let span = d.swizzle.bytes() as i64;
            let mut v = vec![0f32; rows * 16];
            for r in 0..rows {
                for k in 0..16 {
                    let at = Access {
                        buf: d.at.buf,
                        byte: d.at.byte.clone().plus(Expr::Const(
                            (r as i64 / 8) * i64::from(d.sbo) + (r as i64 % 8) * span + k * eb,
                        )),
                    };
                    let bytes = m.read(&at, eb as usize, &vars[first], call)?;
                    v[r * 16 + k as usize] = Num::decode(*dtype, &bytes).f() as f32;
                }
            }
            Ok(v)
        };
        let am = read(self, a, 64)?;
        let bm = read(self, b, n)?;
        for t in 0..128usize {
            let (w, l) = (t / 32, t % 32);
            self.tid = (first + t) as i64;
            for j in 0..n / 8 {
                for i in 0..2 {
                    for e in 0..2 {
                        let (row, col) = (16 * w + 8 * i + l / 4, 8 * j + 2 * (l % 4) + e);
                        let reg = (4 * j + 2 * i + e) as i64;
                        let at = Access {
                            buf: c.buf,
                            byte: c.byte.clone().plus(Expr::Const(reg * 4)),
                        };
                        let old = self.read(&at, 4, &vars[first + t], call)?;
                        let mut acc = Num::decode(DType::F32, &old).f() as f32;
                        for k in 0..16 {
                            acc = am[row * 16 + k].mul_add(bm[col * 16 + k], acc);
                        }
                        self.write(&at, &acc.to_le_bytes(), &vars[first + t], call)?;
                    }
                }
            }
        }
        Ok(())
    }
}
