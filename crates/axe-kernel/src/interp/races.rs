//! Races on global memory (and on the SBUF and PSUM buffers kept beside it) in the interpreter.
//!
//! **Law**: two accesses to one global byte, at least one a write, by different threads race unless
//! the threads are of one CTA and a CTA barrier lies between the accesses (nothing orders different
//! CTAs). Such a pair is an error whichever ran first in the simulation — a write then another
//! thread's read (read after write), a read then another thread's write (write after read), two
//! writes — and the first the run meets is reported with the buffer, the byte and its element, both
//! threads and both calls. Two writes race whatever their values — the CUDA memory model counts any
//! two unordered conflicting accesses a data race — but the report of a write-after-write says what
//! it found ([`waw`]): of *equal* values (the write leaves every byte another thread wrote as it
//! was: the result cannot depend on the order) or of *different* ones.
//! A thread reading back what it wrote itself, in this call or an earlier one, and any number of
//! threads reading a byte nobody writes, are not races; nor is a copy's destination replica, which the
//! thread writing the element writes too.
//!
//! Each global byte keeps its last writer and its last reader as one stamp each (8 bytes): the phase
//! (the CTA's barrier interval, counted over the whole run, so CTAs run earlier have smaller phases),
//! the call and the thread. Readers of one phase beyond the first collapse to "several threads"; a
//! read by an earlier CTA is kept (any later write by another CTA races with it). The copy engine's
//! and the tensor cores' own accesses are not tracked.

use super::asynch::SYNC;
use super::intrinsic::CALL;
use super::Machine;
use crate::error::{KernelError, Result};

/// Bits of a stamp holding the thread (a CTA has at most 1024), and the call.
const TID_BITS: u32 = 11;
const CALL_BITS: u32 = 16;
/// The thread field of a stamp read by several threads of its phase.
const SEVERAL: u64 = (1 << TID_BITS) - 1;
/// Phases a stamp can hold.
const MAX_PHASE: u64 = 1 << (64 - TID_BITS - CALL_BITS);
/// Call fields of the statements outside operator calls.
const CALL_SYNC: u64 = (1 << CALL_BITS) - 1;
const CALL_INTRINSIC: u64 = (1 << CALL_BITS) - 2;
const CALL_LATER: u64 = (1 << CALL_BITS) - 3;

/// A byte nobody accessed yet (phases start at 1).
const UNTOUCHED: u64 = 0;

/// The last writer and reader of every global byte, by buffer, and each CTA's first phase.
#[derive(Debug, Default)]
pub(super) struct Globals {
    writer: Vec<Vec<u64>>,
    reader: Vec<Vec<u64>>,
    cta_first: Vec<u64>,
}

impl Globals {
    /// Stamps for buffers of these sizes, nothing accessed.
    pub(super) fn new(sizes: impl Iterator<Item = usize> + Clone) -> Globals {
        Globals {
            writer: sizes.clone().map(|n| vec![UNTOUCHED; n]).collect(),
            reader: sizes.map(|n| vec![UNTOUCHED; n]).collect(),
            cta_first: Vec::new(),
        }
    }

    /// A CTA starts; its phases are `first` and later.
    pub(super) fn start_cta(&mut self, first: u64) {
        self.cta_first.push(first);
    }

    /// The CTA that ran `phase`.
    fn cta_of(&self, phase: u64) -> usize {
        self.cta_first
            .partition_point(|&f| f <= phase)
            .saturating_sub(1)
    }
}

fn phase(s: u64) -> u64 {
    s >> (TID_BITS + CALL_BITS)
}

fn tid(s: u64) -> u64 {
    s & SEVERAL
}

fn call_of(s: u64) -> usize {
    match (s >> TID_BITS) & ((1 << CALL_BITS) - 1) {
        CALL_SYNC => SYNC,
        CALL_INTRINSIC => CALL,
        c => c as usize,
    }
}

impl Machine<'_> {
    /// The stamp of the running thread's access in `call` now (or of several threads, `thread`
    /// [`SEVERAL`]).
    fn stamp(&self, call: usize, thread: u64) -> Result<u64> {
        if self.phase >= MAX_PHASE {
            return Err(KernelError::TooLarge(format!(
                "the interpreter's race check counts at most {MAX_PHASE} barrier intervals"
            )));
        }
        let c = match call {
            SYNC => CALL_SYNC,
            CALL => CALL_INTRINSIC,
            c => (c as u64).min(CALL_LATER),
        };
        Ok(self.phase << (TID_BITS + CALL_BITS) | c << TID_BITS | thread)
    }

    /// Whether an access stamped `s` is ordered before the running thread's access now: by the same
    /// thread, or by a thread of this CTA before a barrier since.
    fn ordered(&self, s: u64) -> bool {
        let first = self.glob.cta_first.last().copied().unwrap_or(0);
        s == UNTOUCHED
            || (phase(s) >= first && (phase(s) < self.phase || tid(s) == self.tid as u64))
    }

    /// Checks and records the running thread's read of bytes `at..at + n` of global buffer `buf`.
    pub(super) fn global_read(
        &mut self,
        buf: usize,
        at: usize,
        n: usize,
        call: usize,
    ) -> Result<()> {
        let first = self.glob.cta_first.last().copied().unwrap_or(0);
        let me = self.stamp(call, self.tid as u64)?;
        let several = self.stamp(call, SEVERAL)?;
        for i in at..at + n {
            let w = self.glob.writer[buf][i];
            if !self.ordered(w) {
                return Err(self.global_race(call, "reads", buf, i, w, "wrote"));
            }
            let r = &mut self.glob.reader[buf][i];
            if *r == UNTOUCHED || (phase(*r) >= first && phase(*r) < self.phase) {
                *r = me;
            } else if phase(*r) == self.phase && tid(*r) != self.tid as u64 {
                *r = several;
            }
            // Else the same thread again, or a read by an earlier CTA, kept: a write by this one
            // races with it.
        }
        Ok(())
    }

    /// Checks and records the running thread's write of `bytes` at bytes `at..at + bytes.len()` of
    /// global buffer `buf` (before they are stored, so a write-after-write can compare values).
    pub(super) fn global_write(
        &mut self,
        buf: usize,
        at: usize,
        bytes: &[u8],
        call: usize,
    ) -> Result<()> {
        let me = self.stamp(call, self.tid as u64)?;
        for i in at..at + bytes.len() {
            let (w, r) = (self.glob.writer[buf][i], self.glob.reader[buf][i]);
            if !self.ordered(w) {
                // Equal when every byte an unordered write of another thread left is rewritten as is.
                let equal = (at..at + bytes.len())
                    .filter(|&j| !self.ordered(self.glob.writer[buf][j]))
                    .all(|j| self.globals[buf][j] == bytes[j - at]);
                let e = self.global_race(call, "writes", buf, i, w, "wrote");
                return Err(with_tail(e, waw(equal)));
            }
            if !self.ordered(r) {
                return Err(self.global_race(call, "writes", buf, i, r, "read"));
            }
            self.glob.writer[buf][i] = me;
        }
        Ok(())
    }

    /// The report of a race on byte `at` of global buffer `buf` between the running thread's access
    /// in `call` and the access stamped `other`.
    fn global_race(
        &self,
        call: usize,
        what: &str,
        buf: usize,
        at: usize,
        other: u64,
        did: &str,
    ) -> KernelError {
        let b = &self.prog.buffers[buf];
        let who = if tid(other) == SEVERAL {
            "other threads".to_string()
        } else {
            format!(
                "thread {} of CTA {}",
                tid(other),
                self.glob.cta_of(phase(other))
            )
        };
        let order = if self.glob.cta_of(phase(other)) as i64 == self.cta {
            "with no barrier between"
        } else {
            "in another CTA (nothing orders CTAs)"
        };
        KernelError::Run {
            op: self.op_name(call),
            message: format!(
                "race on {} buffer {}: thread {} of CTA {} {what} byte {at} (element {}) that {who} {did} in {} {order}",
                crate::desc::space_name(b.space),
                b.name,
                self.tid,
                self.cta,
                at / b.dtype.bytes().max(1) as usize,
                self.op_name(call_of(other)),
            ),
        }
    }

    /// The report of a race on shared buffer `buf` between the running thread's access in `call` and
    /// thread `other` (or several, [`super::MANY`]).
    pub(super) fn race(&self, call: usize, what: &str, buf: usize, other: u64) -> KernelError {
        let b = &self.prog.buffers[buf];
        let other = if other == super::MANY {
            "other threads".to_string()
        } else {
            format!("thread {} of CTA {}", other & 0xfffff, other >> 20)
        };
        KernelError::Run {
            op: self.op_name(call),
            message: format!(
                "race on {} buffer {}: thread {} of CTA {} {what} bytes that {other} also touched with no barrier between",
                crate::desc::space_name(b.space),
                b.name,
                self.tid,
                self.cta
            ),
        }
    }
}

/// What a write-after-write found, appended to its race report. **Law**: `equal` exactly when the
/// racing write puts back, in every byte another thread's unordered write left, the value already
/// there; then the report says the values are equal (the result is the same in either order, yet
/// it is a data race in the CUDA memory model), else that they differ.
pub(super) fn waw(equal: bool) -> &'static str {
    if equal {
        ": a write-after-write of equal values (it writes the bytes already there, so either order \
         leaves the same result), benign in practice but a data race in the CUDA memory model, which \
         orders no two unsynchronised writes to one location whatever their values"
    } else {
        ": a write-after-write of different values (which one memory keeps depends on the order the \
         threads run in)"
    }
}

/// `e` with `tail` appended to its message.
pub(super) fn with_tail(e: KernelError, tail: &str) -> KernelError {
    match e {
        KernelError::Run { op, message } => KernelError::Run {
            op,
            message: message + tail,
        },
        e => e,
    }
}
