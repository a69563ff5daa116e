//! `copy.registers`: copies between memory and a register tensor, each thread moving the elements its
//! register layout gives it.
//!
//! A register tensor's layout maps each element to coordinates on `reg`, `lane` and `warp`. The thread
//! axes must split into digits: on each of `lane` and `warp`, the iters (shard and replica) sorted by
//! stride form an exact mixed radix `1, e_0, e_0·e_1, ...` starting at the offset, so a thread's lane and
//! warp give each of its digits by division and remainder. The thread then loops over the `reg` iters;
//! element `x = Σ_j digit_j · rad_j` (the shard's mixed radix). Loads into registers are made by every
//! replica; stores from registers by the replica whose replica digits are 0 only, into every copy of a
//! replicated memory tensor (loads read its first).

use axe_layout::{Axis, Iter};

use crate::desc::{Call, Op};
use crate::dispatch::{Ctx, Outcome, Variant};
use crate::error::{layout, Result};
use crate::expr::{BinOp, Expr};
use crate::ir::{Access, LStmt};
use crate::scope::{Level, WARP};
use crate::spread::{chunk_offset, replica_offsets, to_i64, workers};

/// The digits of one thread axis: `(stride, extent)` sorted by stride, and the axis' span.
fn radix(iters: &[&Iter], name: &str) -> std::result::Result<u64, String> {
    let mut v: Vec<(i64, u64)> = iters.iter().map(|it| (it.stride(), it.extent())).collect();
    v.sort_unstable();
    let mut next = 1i64;
    for (s, e) in &v {
        if *s != next {
            let strides: Vec<String> = v.iter().map(|(s, e)| format!("{e}:{s}")).collect();
            return Err(format!(
                "the register layout's {name} iters ({}) do not split {name}s into digits (a gap, an overlap or a negative stride)",
                strides.join(", ")
            ));
        }
        next = next.saturating_mul(*e as i64);
    }
    Ok(next as u64)
}

/// This thread's digit on iter `it` of thread axis `axis` (coordinate `coord`).
fn digit(it: &Iter, coord: &Expr) -> Expr {
    coord
        .clone()
        .over(Expr::Const(it.stride()))
        .modulo(Expr::Const(it.extent() as i64))
}

struct Registers;

impl Variant for Registers {
    fn name(&self) -> &'static str {
        "copy.registers"
    }
    fn op(&self) -> &'static str {
        "copy"
    }
    fn priority(&self) -> i32 {
        // After the memory variants, which decline register tensors first.
        -1
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let Op::Copy { dst, src } = &call.op else {
            return Ok(Outcome::Declined("copy.registers lowers copy only".into()));
        };
        let (reg, mem, load) = match (dst.in_memory(), src.in_memory()) {
            (false, true) => (dst, src, true),
            (true, false) => (src, dst, false),
            (true, true) => {
                return Ok(Outcome::Declined(
                    "neither tensor lives in registers".into(),
                ))
            }
            (false, false) => {
                return Ok(Outcome::Declined(
                    "register-to-register copies (shuffles) are not lowered yet".into(),
                ))
            }
        };
        let (lane_n, warp_n, warp_of) = match call.scope.level {
            Level::Warp => (WARP, 1, Expr::Const(0)),
            Level::Warpgroup => (WARP, 4, Expr::Thread.over(Expr::Const(32)).modulo(Expr::Const(4))),
            Level::Cta => (WARP, ctx.kernel.launch.warps(), Expr::Thread.over(Expr::Const(32))),
            l => {
                return Ok(Outcome::Declined(format!(
                    "registers belong to the threads of one CTA; a copy to or from them runs at warp, warpgroup or cta scope, not {}",
                    l.name()
                )))
            }
        };
        let w = match workers(&call.scope, ctx) {
            Ok(w) => w,
            Err(r) => return Ok(Outcome::Declined(r)),
        };
        let canon = reg
            .layout
            .canonicalize()
            .map_err(layout(format!("tensor {}", reg.name)))?;
        let (lane_ax, warp_ax, reg_ax) = (ax("lane")?, ax("warp")?, ax("reg")?);
        let on = |a: &Axis| -> Vec<&Iter> {
            canon
                .shard()
                .iter()
                .chain(canon.replica())
                .filter(|it| it.axis() == a)
                .collect()
        };
        let mut spans = Vec::new();
        for (a, have, unit) in [
            (&lane_ax, lane_n, "a warp has"),
            (
                &warp_ax,
                warp_n,
                &*format!("the {} scope has", call.scope.level.name()),
            ),
        ] {
            let span = match radix(&on(a), a.name()) {
                Ok(s) => s,
                Err(r) => return Ok(Outcome::Declined(r)),
            };
            let need = span.saturating_add(canon.offset().get(a).max(0) as u64);
            if need > u64::from(have) {
                return Ok(Outcome::Declined(format!(
                    "the register layout of {} needs {need} {}s; {unit} {have}, so it does not cover the tile with these threads",
                    reg.name,
                    a.name()
                )));
            }
            spans.push(span);
        }
        let lane = Expr::Thread
            .modulo(Expr::Const(i64::from(WARP)))
            .plus(Expr::Const(-canon.offset().get(&lane_ax)));
        let warp = warp_of.plus(Expr::Const(-canon.offset().get(&warp_ax)));
        let coord = |a: &Axis| {
            if *a == lane_ax {
                lane.clone()
            } else {
                warp.clone()
            }
        };
        // Threads inside the spans hold elements; a store is made by replica digits 0 only.
        let mut guard = Expr::bin(BinOp::Lt, Expr::Const(-1), lane.clone())
            .and(lane.clone().lt(Expr::Const(spans[0] as i64)))
            .and(Expr::bin(BinOp::Lt, Expr::Const(-1), warp.clone()))
            .and(warp.clone().lt(Expr::Const(spans[1] as i64)));
        if !load {
            for it in canon.replica().iter().filter(|it| it.axis() != &reg_ax) {
                guard = guard.and(digit(it, &coord(it.axis())).lt(Expr::Const(1)));
            }
        }
        if canon.replica().iter().any(|it| it.axis() == &reg_ax) {
            return Ok(Outcome::Declined(
                "replicas along reg are not lowered yet".into(),
            ));
        }
        // Loops over the reg iters; the element index and register offset as sums of digits.
        let eb = i64::from(reg.dtype.bytes());
        let mut x = Expr::Const(0);
        let mut r = Expr::Const(canon.offset().get(&reg_ax));
        let mut loops = Vec::new();
        let mut rad: u64 = 1;
        for it in canon.shard().iter().rev() {
            let d = if it.axis() == &reg_ax {
                let v = ctx.var();
                loops.push((v, it.extent()));
                r = r.plus(Expr::Var(v).times(Expr::Const(it.stride())));
                Expr::Var(v)
            } else {
                digit(it, &coord(it.axis()))
            };
            x = x.plus(d.times(Expr::Const(to_i64(rad)?)));
            rad = rad.saturating_mul(it.extent());
        }
        // A load reads the memory tensor's first copy; a store writes every copy of it.
        let copies = if load { vec![0] } else { replica_offsets(mem)? };
        let base = chunk_offset(mem, &x, 1)?;
        let rg = Access {
            buf: reg.buffer.0,
            byte: r.times(Expr::Const(eb)),
        };
        let mut body = Vec::new();
        for extra in copies {
            let m = Access {
                buf: mem.buffer.0,
                byte: base.clone().plus(Expr::Const(extra)).times(Expr::Const(eb)),
            };
            let (dst, src) = if load {
                (rg.clone(), m)
            } else {
                (m, rg.clone())
            };
            body.push(LStmt::Move {
                call: call.id,
                dst,
                src,
                bytes: reg.dtype.bytes(),
            });
        }
        for (v, e) in loops {
            body = vec![LStmt::For {
                var: v,
                extent: to_i64(e)?,
                body,
            }];
        }
        let mut code = vec![LStmt::If { cond: guard, body }];
        if let Some(g) = w.guard {
            code = vec![LStmt::If {
                cond: g,
                body: code,
            }];
        }
        let why = format!(
            "{} {} {} by the register layout {canon}: {} × {}, {} per thread",
            if load { "load into" } else { "store from" },
            reg.name,
            if load { "from memory" } else { "to memory" },
            crate::dispatch::count(spans[0], "lane"),
            crate::dispatch::count(spans[1], "warp"),
            crate::dispatch::count(
                reg.size() * canon.replica_count() / (spans[0] * spans[1]).max(1),
                "element"
            )
        );
        Ok(Outcome::Lowered { why, code })
    }
}

fn ax(n: &str) -> Result<Axis> {
    Axis::new(n).map_err(layout(n))
}

static VARIANTS: [Registers; 1] = [Registers];

/// The register copy variants.
pub fn variants() -> Vec<&'static dyn Variant> {
    VARIANTS.iter().map(|v| v as &'static dyn Variant).collect()
}
