//! `copy.registers.vector`: copies between memory and a register tensor in the widest vectors (16, 8,
//! 4 or 2 bytes) both sides allow, every thread running the same straight-line code.
//!
//! Planned by enumeration as `reduce` is ([`crate::reduce`]): each element's register (thread, offset)
//! and memory offset. For a width of `w` elements, every thread's elements, ordered by register, must
//! fall into runs of `w` that are consecutive and `w`-aligned both in its registers and in memory; the
//! registers and the memory steps between runs must be the same in every thread; and the memory
//! offset of a thread's first element must be `A0 + α·lane + β·warp`, or else `A0 + Σ c_b·bit_b(thread)`
//! (checked for every thread), so one expression addresses every thread's vectors. A load writes every replica of a register element;
//! stores from replicated registers, and into replicated memory, are left to `copy.registers`.

use crate::desc::{Call, Op, Space, Tensor};
use crate::dispatch::{Ctx, Outcome, Variant};
use crate::error::{layout, Result};
use crate::expr::Expr;
use crate::ir::{Access, LStmt};
use crate::places::places;
use crate::scope::{Level, WARP};
use crate::spread::workers;

struct Vector;

/// Each thread's (register, memory element) pairs, ordered by register.
type Table = Vec<Vec<(i64, i64)>>;

/// Whether `w`-element runs fit every thread's table (see the module docs).
fn runs_fit(tables: &Table, w: i64) -> bool {
    tables.iter().all(|t| {
        t.len() % w as usize == 0
            && t.chunks(w as usize).all(|c| {
                c[0].0 % w == 0
                    && c[0].1 % w == 0
                    && c.iter()
                        .enumerate()
                        .all(|(i, p)| p.0 == c[0].0 + i as i64 && p.1 == c[0].1 + i as i64)
            })
    })
}

impl Variant for Vector {
    fn name(&self) -> &'static str {
        "copy.registers.vector"
    }
    fn op(&self) -> &'static str {
        "copy"
    }
    fn priority(&self) -> i32 {
        0
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let no = |m: String| Ok(Outcome::Declined(m));
        let Op::Copy { dst, src } = &call.op else {
            return no("copy.registers.vector lowers copy only".into());
        };
        let (reg, mem, load): (&Tensor, &Tensor, bool) =
            match (dst.space == Space::Registers, src.space == Space::Registers) {
                (true, false) => (dst, src, true),
                (false, true) => (src, dst, false),
                _ => return no("one side must be registers and the other memory".into()),
            };
        if matches!(mem.space, Space::Shared(Some(_))) {
            return no(format!(
                "{} is swizzled shared memory; vectors through a swizzle are left to copy.registers",
                mem.name
            ));
        }
        if !load && (reg.layout.replica_count() > 1 || mem.layout.replica_count() > 1) {
            return no("a store from replicated registers or into replicated memory needs one writer per element; copy.registers guards it".into());
        }
        let (warps, tid) = match call.scope.level {
            Level::Warp => (1, Expr::Thread.modulo(Expr::Const(32))),
            Level::Warpgroup => (4, Expr::Thread.modulo(Expr::Const(128))),
            Level::Cta => (ctx.kernel.launch.warps(), Expr::Thread),
            l => {
                return no(format!(
                    "registers belong to the threads of one CTA; a copy to or from them runs at warp, warpgroup or cta scope, not {}",
                    l.name()
                ))
            }
        };
        let w = match workers(&call.scope, ctx) {
            Ok(w) => w,
            Err(r) => return no(r),
        };
        let rp = match places(reg, warps)? {
            Ok(p) => p,
            Err(r) => return no(r),
        };
        let m_axis = axe_layout::Axis::memory();
        let threads = (warps * WARP) as usize;
        let mut tables: Table = vec![Vec::new(); threads];
        for (x, v) in rp.iter().enumerate() {
            let m = mem
                .layout
                .base_at(x as u64)
                .map_err(layout(format!("tensor {}", mem.name)))?
                .get(&m_axis);
            for &(t, r) in v {
                tables[t as usize].push((r, m));
            }
        }
        for t in &mut tables {
            t.sort_unstable();
        }
        let regs = |t: &Vec<(i64, i64)>| -> Vec<i64> { t.iter().map(|p| p.0).collect() };
        let steps = |t: &Vec<(i64, i64)>| -> Vec<i64> {
            t.iter()
                .map(|p| p.1 - t.first().map_or(0, |f| f.1))
                .collect()
        };
        let (r0, s0) = (regs(&tables[0]), steps(&tables[0]));
        if r0.is_empty() {
            return no(format!("thread 0 holds no element of {}", reg.name));
        }
        if let Some(t) = tables.iter().position(|t| regs(t) != r0 || steps(t) != s0) {
            return no(format!(
                "thread {t} holds other registers, or other memory steps, than thread 0; every thread runs the same code"
            ));
        }
        // The first element's memory offset as A0 + α·lane + β·warp, or else as A0 + Σ c_b·bit_b(thread).
        let first = |t: usize| tables[t][0].1;
        let a0 = first(0);
        let alpha = if threads > 1 { first(1) - a0 } else { 0 };
        let beta = if threads > 32 { first(32) - a0 } else { 0 };
        let lane = tid.clone().modulo(Expr::Const(32));
        let warp = tid.clone().over(Expr::Const(32));
        let bits: Vec<(usize, i64)> = (0..usize::BITS)
            .map(|b| 1usize << b)
            .take_while(|&m| m < threads)
            .map(|m| (m, first(m) - a0))
            .collect();
        let linear = |t: usize| a0 + alpha * (t % 32) as i64 + beta * (t / 32) as i64;
        let by_bits = |t: usize| {
            a0 + bits
                .iter()
                .map(|&(m, c)| if t & m != 0 { c } else { 0 })
                .sum::<i64>()
        };
        let (base, form) = if (0..threads).all(|t| first(t) == linear(t)) {
            (
                Expr::Const(a0)
                    .plus(lane.times(Expr::Const(alpha)))
                    .plus(warp.times(Expr::Const(beta))),
                format!("{a0} + {alpha}·lane + {beta}·warp"),
            )
        } else if (0..threads).all(|t| first(t) == by_bits(t)) {
            let mut e = Expr::Const(a0);
            for &(m, c) in &bits {
                let bit = tid
                    .clone()
                    .over(Expr::Const(m as i64))
                    .modulo(Expr::Const(2));
                e = e.plus(bit.times(Expr::Const(c)));
            }
            let terms: Vec<String> = bits
                .iter()
                .filter(|b| b.1 != 0)
                .map(|(m, c)| format!("{c}·bit{}", m.trailing_zeros()))
                .collect();
            (e, format!("{a0} + {}", terms.join(" + ")))
        } else {
            let t = (0..threads).find(|&t| first(t) != by_bits(t)).unwrap_or(0);
            return no(format!(
                "thread {t}'s first element is at {} in memory, neither linear in lane and warp nor in the thread index' bits",
                first(t)
            ));
        };
        let eb = i64::from(reg.dtype.bytes());
        let Some(wv) = [16i64, 8, 4, 2]
            .into_iter()
            .filter(|b| *b > eb && b % eb == 0)
            .map(|b| b / eb)
            .find(|&wv| runs_fit(&tables, wv))
        else {
            return no(format!(
                "no thread's elements of {} form runs of 2 or more consecutive, aligned registers and memory elements",
                reg.name
            ));
        };
        let bytes = u32::try_from(wv * eb).unwrap_or(16);
        let mut code = Vec::new();
        for (c, s) in r0.chunks(wv as usize).zip(s0.chunks(wv as usize)) {
            let r = Access {
                buf: reg.buffer.0,
                byte: Expr::Const(c[0] * eb),
            };
            let m = Access {
                buf: mem.buffer.0,
                byte: base.clone().plus(Expr::Const(s[0])).times(Expr::Const(eb)),
            };
            let (d, s) = if load { (r, m) } else { (m, r) };
            code.push(LStmt::Move {
                call: call.id,
                dst: d,
                src: s,
                bytes,
            });
        }
        let n = code.len();
        if let Some(g) = w.guard {
            code = vec![LStmt::If {
                cond: g,
                body: code,
            }];
        }
        let why = format!(
            "{} {} in {} of {bytes} bytes per thread, at {form} elements in {}",
            if load { "loads" } else { "stores" },
            reg.name,
            crate::dispatch::count(n, "vector"),
            mem.name
        );
        Ok(Outcome::Lowered { why, code })
    }
}

static VARIANTS: [Vector; 1] = [Vector];

/// The vectorised register copy.
pub fn variants() -> Vec<&'static dyn Variant> {
    VARIANTS.iter().map(|v| v as &'static dyn Variant).collect()
}
