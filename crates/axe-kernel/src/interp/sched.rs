//! Running one CTA: threads run one at a time until they stop (a CTA barrier, a collective, an
//! unsatisfied mbarrier wait, the end); a warp's collective runs when all its lanes reached it, a
//! warpgroup's wgmma when all 128 threads did; waiting threads are retried while any thread makes
//! progress. When none can, every thread must be at the same CTA barrier (then all pass it) or at the
//! end; a thread still waiting is a deadlock, reported with the mbarrier it waits on.

use super::asynch::Async;
use super::{Ins, Machine, Stop, NONE};
use crate::error::{KernelError, Result};
use crate::ir::LStmt;

fn is_group(code: &[Ins<'_>], pc: usize) -> bool {
    matches!(code.get(pc), Some(Ins::Collective(LStmt::Wgmma { .. })))
}

fn said(s: Option<Stop>) -> String {
    match s {
        Some(Stop::Barrier(pc)) => format!("waits at the barrier #{pc}"),
        Some(Stop::Collective(pc)) => format!("waits at the collective instruction #{pc}"),
        Some(Stop::Wait(pc)) => format!("waits on the mbarrier at #{pc}"),
        Some(Stop::End) | None => "reached the end".to_string(),
    }
}

impl Machine<'_> {
    /// Runs CTA `self.cta` from the start to the end.
    pub(super) fn run_cta(
        &mut self,
        code: &[Ins<'_>],
        threads: usize,
        reg_bytes: usize,
    ) -> Result<()> {
        let cta = self.cta;
        self.shared.fill(0);
        self.asy = Async::new(threads, self.shared.len());
        self.regs = vec![vec![0; reg_bytes]; threads];
        let mut pcs = vec![0usize; threads];
        let mut vars = vec![vec![0i64; self.prog.vars as usize]; threads];
        let warps = threads / 32;
        loop {
            self.phase += 1;
            self.shared_writer.fill(NONE);
            self.shared_reader.fill(NONE);
            let mut stops: Vec<Option<Stop>> = vec![None; threads];
            loop {
                let mut progress = false;
                for t in 0..threads {
                    if matches!(stops[t], None | Some(Stop::Wait(_))) {
                        let before = (pcs[t], stops[t]);
                        self.tid = t as i64;
                        let s = self.step_until_sync(code, &mut pcs[t], &mut vars[t])?;
                        stops[t] = Some(s);
                        progress |= (pcs[t], stops[t]) != before;
                    }
                }
                for w in 0..warps {
                    let lanes = w * 32..(w + 1) * 32;
                    let Some(ls) = stops[lanes.clone()]
                        .iter()
                        .copied()
                        .collect::<Option<Vec<Stop>>>()
                    else {
                        continue;
                    };
                    if ls.iter().any(|s| matches!(s, Stop::Wait(_))) {
                        continue;
                    }
                    let Some(pc) = ls.iter().find_map(|s| match s {
                        Stop::Collective(p) => Some(*p),
                        _ => None,
                    }) else {
                        continue;
                    };
                    if is_group(code, pc) {
                        continue;
                    }
                    self.collective(code, &ls, w, &pcs, &vars)?;
                    for t in lanes {
                        pcs[t] += 1;
                        stops[t] = None;
                    }
                    progress = true;
                }
                for g in 0..warps / 4 {
                    let ts = g * 128..(g + 1) * 128;
                    let pc = match stops[g * 128] {
                        Some(Stop::Collective(p)) if is_group(code, p) => p,
                        _ => continue,
                    };
                    if ts.clone().all(|t| stops[t] == Some(Stop::Collective(pc))) {
                        if let Some(Ins::Collective(s)) = code.get(pc) {
                            self.wgmma(s, g, &vars)?;
                        }
                        for t in ts {
                            pcs[t] += 1;
                            stops[t] = None;
                        }
                        progress = true;
                    }
                }
                if !progress {
                    break;
                }
            }
            if let Some(t) = stops.iter().position(|s| matches!(s, Some(Stop::Wait(_)))) {
                let others = (0..threads)
                    .find(|&u| !matches!(stops[u], Some(Stop::Wait(_))))
                    .map_or(String::new(), |u| {
                        format!("; thread {u} {}", said(stops[u]))
                    });
                return Err(KernelError::Run {
                    op: format!("mbarrier wait (CTA {cta})"),
                    message: format!(
                        "deadlock: thread {t} {} and no thread can complete that phase{others}",
                        said(stops[t])
                    ),
                });
            }
            if let Some(t) = stops
                .iter()
                .position(|s| matches!(s, Some(Stop::Collective(p)) if is_group(code, *p)))
            {
                return Err(KernelError::Run {
                    op: format!("wgmma (CTA {cta})"),
                    message: format!(
                        "warpgroup {} diverges: thread {t} {} but not every thread of its warpgroup reached it; a wgmma is issued by all 128 threads together",
                        t / 128,
                        said(stops[t])
                    ),
                });
            }
            let first = stops[0];
            if let Some(t) = stops.iter().position(|s| *s != first) {
                return Err(KernelError::Run {
                    op: format!("barrier (CTA {cta})"),
                    message: format!(
                        "thread 0 {} but thread {t} {}: every thread of a CTA must reach each barrier",
                        said(first),
                        said(stops[t])
                    ),
                });
            }
            if matches!(first, Some(Stop::End) | None) {
                return Ok(());
            }
            for pc in pcs.iter_mut() {
                *pc += 1;
            }
            self.asy.barrier();
        }
    }
}
