//! mbarriers and warpgroup register allocation: the statements that order a producer's asynchronous
//! copies with the consumers that read them (Hopper's `mbarrier`, `setmaxnreg`).
//!
//! **Law.** An mbarrier counts, per phase, the arrivals it expects (set at `init`) and the transaction
//! bytes announced to it (`expect_tx`, or a `copy_async` on it). A phase completes when every expected
//! arrival has come and every announced byte has landed; then the next phase starts with the same
//! count. `wait(bar, p)` returns once the phase of parity `p` has completed (phases alternate parity
//! 0, 1, 0, ... from `init`). Bytes a `copy_async` wrote are visible to a thread that waited for the
//! phase they completed.

use crate::dtype::DType;
use crate::error::{KernelError, Result};
use crate::expr::Expr;

use super::{BufferId, KernelBuilder, Space, Stmt};

/// An mbarrier: element `index` of a shared buffer of s64 (8 bytes each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mbar {
    /// The shared buffer holding the mbarriers.
    pub buffer: BufferId,
    /// Which of its elements.
    pub index: u64,
}

/// A statement on mbarriers, commit groups or the warpgroup's registers.
#[derive(Debug, Clone, PartialEq)]
pub enum SyncStmt {
    /// Closes the running thread's group of asynchronous copies (`cp.async.commit_group`).
    Commit,
    /// Waits until at most `pending` of the running thread's committed groups are in flight
    /// (`cp.async.wait_group`).
    WaitGroups {
        /// Groups that may stay in flight.
        pending: u32,
    },
    /// Initialises `bar` to expect `count` arrivals per phase (run by one thread, then a CTA barrier).
    Init {
        /// The mbarrier.
        bar: Mbar,
        /// Arrivals per phase.
        count: u32,
    },
    /// Makes initialised mbarriers visible to the copy engine (before the CTA barrier that follows).
    FenceInit,
    /// One arrival on `bar`.
    Arrive {
        /// The mbarrier.
        bar: Mbar,
    },
    /// Waits for the phase of parity `parity` of `bar`.
    Wait {
        /// The mbarrier.
        bar: Mbar,
        /// 0 or 1.
        parity: Expr,
    },
    /// The warpgroup's registers per thread become `regs` (`setmaxnreg`; every thread of the warpgroup
    /// runs it).
    MaxRegisters {
        /// Raise rather than lower.
        inc: bool,
        /// Registers per thread (24 to 256, a multiple of 8).
        regs: u32,
    },
}

impl KernelBuilder {
    /// Checks `bar` names an s64 element of a shared buffer.
    pub(crate) fn check_mbar(&self, bar: Mbar) -> Result<()> {
        let b = self.kernel.buffers.get(bar.buffer.0).ok_or_else(|| {
            KernelError::Invalid(format!("mbarrier: no buffer #{}", bar.buffer.0))
        })?;
        if !matches!(b.space, Space::Shared(None)) || b.dtype != DType::S64 || bar.index >= b.elems
        {
            return Err(KernelError::Invalid(format!(
                "mbarrier {}[{}]: mbarriers are elements of an unswizzled shared s64 buffer ({} is {} {} of {} elements)",
                b.name,
                bar.index,
                b.name,
                super::space_name(b.space),
                b.dtype,
                b.elems
            )));
        }
        Ok(())
    }

    /// `mbarrier.init(bar, count)`.
    pub fn mbar_init(&mut self, bar: Mbar, count: u32) -> Result<()> {
        self.check_mbar(bar)?;
        if count == 0 || count >= 1 << 20 {
            return Err(KernelError::Invalid(format!(
                "mbarrier init: {count} arrivals per phase; an mbarrier counts 1 to 2^20 - 1"
            )));
        }
        self.push(Stmt::Sync(SyncStmt::Init { bar, count }));
        Ok(())
    }

    /// `fence.mbarrier_init`.
    pub fn mbar_fence_init(&mut self) {
        self.push(Stmt::Sync(SyncStmt::FenceInit));
    }

    /// One arrival on `bar`.
    pub fn mbar_arrive(&mut self, bar: Mbar) -> Result<()> {
        self.check_mbar(bar)?;
        self.push(Stmt::Sync(SyncStmt::Arrive { bar }));
        Ok(())
    }

    /// Waits for the phase of parity `parity` of `bar`.
    pub fn mbar_wait(&mut self, bar: Mbar, parity: Expr) -> Result<()> {
        self.check_mbar(bar)?;
        self.push(Stmt::Sync(SyncStmt::Wait { bar, parity }));
        Ok(())
    }

    /// `setmaxnreg`: the running warpgroup's registers per thread become `regs`.
    pub fn max_registers(&mut self, inc: bool, regs: u32) -> Result<()> {
        if !(24..=256).contains(&regs) || !regs.is_multiple_of(8) {
            return Err(KernelError::Invalid(format!(
                "setmaxnreg {regs}: registers per thread must be a multiple of 8 from 24 to 256"
            )));
        }
        self.push(Stmt::Sync(SyncStmt::MaxRegisters { inc, regs }));
        Ok(())
    }

    /// Closes the running thread's group of `copy_async_group` copies.
    pub fn async_commit(&mut self) {
        self.push(Stmt::Sync(SyncStmt::Commit));
    }

    /// Waits until at most `pending` of the running thread's committed groups are in flight.
    pub fn async_wait(&mut self, pending: u32) {
        self.push(Stmt::Sync(SyncStmt::WaitGroups { pending }));
    }

    /// `copy_async_group(dst, src)` at `scope`: see [`crate::cp_async`].
    pub fn copy_async_group(
        &mut self,
        scope: crate::scope::Scope,
        dst: &super::Tensor,
        src: &super::Tensor,
    ) -> Result<usize> {
        self.call(
            scope,
            super::Op::CopyAsyncGroup {
                dst: dst.clone(),
                src: src.clone(),
            },
        )
    }

    /// `copy_async(dst, src, bar)` at `scope`: see [`crate::tma`].
    pub fn copy_async(
        &mut self,
        scope: crate::scope::Scope,
        dst: &super::Tensor,
        src: &super::Tensor,
        bar: Mbar,
    ) -> Result<usize> {
        self.check_mbar(bar)?;
        self.call(
            scope,
            super::Op::CopyAsync {
                dst: dst.clone(),
                src: src.clone(),
                bar,
            },
        )
    }
}

/// The lowered access of `bar`'s 8 bytes.
pub(crate) fn mbar_access(bar: Mbar) -> Result<crate::ir::Access> {
    let byte = bar
        .index
        .checked_mul(8)
        .and_then(|b| i64::try_from(b).ok())
        .ok_or_else(|| crate::error::overflow("computing an mbarrier's address"))?;
    Ok(crate::ir::Access {
        buf: bar.buffer.0,
        byte: Expr::Const(byte),
    })
}
