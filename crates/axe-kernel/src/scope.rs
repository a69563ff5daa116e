//! Execution scopes and the launch shape.
//!
//! A kernel runs as a grid of CTAs (optionally grouped in clusters); each CTA has `threads` threads in
//! warps of 32 and warpgroups of 4 warps. An operator is called at a [`Scope`]: the units of that level
//! (all selected when `units` is `None`) each run the operator once, cooperatively with their threads.
//! `Scope::warps(0..4)` is the paper's "warps 0–3 produce".

use std::fmt;
use std::ops::Range;

use crate::error::{KernelError, Result};

/// Threads per warp.
pub const WARP: u32 = 32;
/// Threads per warpgroup.
pub const WARPGROUP: u32 = 128;

/// A level of the execution hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    /// The whole grid: one call, all threads of all CTAs.
    Kernel,
    /// A cluster of CTAs.
    Cluster,
    /// One CTA.
    Cta,
    /// Four consecutive warps of a CTA.
    Warpgroup,
    /// 32 consecutive threads of a CTA.
    Warp,
    /// One thread.
    Thread,
}

impl Level {
    /// The level's name.
    pub fn name(self) -> &'static str {
        match self {
            Level::Kernel => "kernel",
            Level::Cluster => "cluster",
            Level::Cta => "cta",
            Level::Warpgroup => "warpgroup",
            Level::Warp => "warp",
            Level::Thread => "thread",
        }
    }
}

/// Where an operator runs: a level and optionally a slice of its units within the enclosing CTA
/// (warps 4..8, threads 0..1); for `Cta`, a slice of CTAs of the grid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scope {
    /// The level.
    pub level: Level,
    /// The units of that level that run the operator; `None`: all of them.
    pub units: Option<Range<u32>>,
}

impl Scope {
    /// The whole grid.
    pub fn kernel() -> Scope {
        Scope {
            level: Level::Kernel,
            units: None,
        }
    }
    /// Every CTA.
    pub fn cta() -> Scope {
        Scope {
            level: Level::Cta,
            units: None,
        }
    }
    /// Every warp.
    pub fn warp() -> Scope {
        Scope {
            level: Level::Warp,
            units: None,
        }
    }
    /// The warps `r` of each CTA.
    pub fn warps(r: Range<u32>) -> Scope {
        Scope {
            level: Level::Warp,
            units: Some(r),
        }
    }
    /// The warpgroups `r` of each CTA.
    pub fn warpgroups(r: Range<u32>) -> Scope {
        Scope {
            level: Level::Warpgroup,
            units: Some(r),
        }
    }
    /// The threads `r` of each CTA, each on its own.
    pub fn threads(r: Range<u32>) -> Scope {
        Scope {
            level: Level::Thread,
            units: Some(r),
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.units {
            None => f.write_str(self.level.name()),
            Some(r) => write!(f, "{}[{}..{}]", self.level.name(), r.start, r.end),
        }
    }
}

/// The launch shape: CTAs in the grid, CTAs per cluster, threads per CTA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    /// CTAs in the (one-dimensional) grid.
    pub grid: u32,
    /// CTAs per cluster (1: no clusters); divides `grid`.
    pub cluster: u32,
    /// Threads per CTA, a multiple of 32, at most 1024.
    pub threads: u32,
}

impl Launch {
    /// Checks the hardware's rules on the launch shape.
    pub fn check(&self) -> Result<()> {
        let bad = |m: String| Err(KernelError::Invalid(format!("launch: {m}")));
        if self.grid == 0 || self.cluster == 0 || self.threads == 0 {
            return bad(format!(
                "grid {}, cluster {}, threads {}: each must be at least 1",
                self.grid, self.cluster, self.threads
            ));
        }
        if self.threads > 1024 || !self.threads.is_multiple_of(WARP) {
            return bad(format!(
                "{} threads per CTA: a multiple of 32 up to 1024 is needed",
                self.threads
            ));
        }
        if !self.grid.is_multiple_of(self.cluster) || self.cluster > 16 {
            return bad(format!(
                "clusters of {} CTAs must divide the grid of {} and hold at most 16",
                self.cluster, self.grid
            ));
        }
        Ok(())
    }

    /// Warps per CTA.
    pub fn warps(&self) -> u32 {
        self.threads / WARP
    }

    /// How many units a level has in one CTA (for `Kernel`, `Cluster` and `Cta`: in the grid).
    pub fn units(&self, level: Level) -> u32 {
        match level {
            Level::Kernel => 1,
            Level::Cluster => self.grid / self.cluster.max(1),
            Level::Cta => self.grid,
            Level::Warpgroup => self.threads.div_ceil(WARPGROUP),
            Level::Warp => self.warps(),
            Level::Thread => self.threads,
        }
    }

    /// Checks that a scope names units this launch has.
    pub fn check_scope(&self, scope: &Scope) -> Result<()> {
        if scope.level == Level::Warpgroup && !self.threads.is_multiple_of(WARPGROUP) {
            return Err(KernelError::Invalid(format!(
                "scope {scope}: warpgroups need a multiple of 128 threads per CTA, the launch has {}",
                self.threads
            )));
        }
        if let Some(r) = &scope.units {
            let n = self.units(scope.level);
            if r.start >= r.end || r.end > n {
                return Err(KernelError::Invalid(format!(
                    "scope {scope}: the launch has {n} {}s, so the units must be a non-empty part of 0..{n}",
                    scope.level.name()
                )));
            }
        }
        Ok(())
    }
}
