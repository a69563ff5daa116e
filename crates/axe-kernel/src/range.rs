//! Value ranges of a lowered program's index arithmetic, so that CUDA emission can use 32-bit integers
//! where every value provably fits ([`crate::IndexWidth::Narrow`]): unsigned where no value is negative,
//! since signed division by a constant needs fix-ups for negative operands that the compiler cannot
//! drop once a value's sign is unknown.
//!
//! Law: for every assignment of the variables within their ranges (`threadIdx.x` in `0..threads`,
//! `blockIdx.x` in `0..grid`, a loop variable in `0..extent`, a `let` in its value's range),
//! `range(e)` contains the value of `e` and of each of its subexpressions.

use std::collections::HashMap;

use crate::expr::{BinOp, Expr, Var};
use crate::ir::{Access, LStmt, Program};

/// A closed interval of integers.
pub type Interval = (i128, i128);

const I32: Interval = (i32::MIN as i128, i32::MAX as i128);

/// Variable ranges, and the smallest and largest value seen so far.
struct Ranges {
    vars: HashMap<Var, Interval>,
    thread: Interval,
    cta: Interval,
    seen: Interval,
}

impl Ranges {
    fn note(&mut self, r: Interval) -> Interval {
        self.seen = (self.seen.0.min(r.0), self.seen.1.max(r.1));
        r
    }

    /// The range of `e`, noting every subexpression's.
    fn of(&mut self, e: &Expr) -> Interval {
        let r = match e {
            Expr::Const(c) => (i128::from(*c), i128::from(*c)),
            Expr::Var(v) => self
                .vars
                .get(v)
                .copied()
                .unwrap_or((i128::from(i64::MIN), i128::from(i64::MAX))),
            Expr::Thread => self.thread,
            Expr::Cta => self.cta,
            Expr::Bin(op, a, b) => {
                let (a, b) = (self.of(a), self.of(b));
                bin(*op, a, b)
            }
        };
        self.note(r)
    }

    fn access(&mut self, a: &Access) {
        let r = self.of(&a.byte);
        // A swizzled shared address XORs bits below the value's highest bit: it stays below the next
        // power of two.
        if r.0 >= 0 {
            let p = (r.1.max(1) as u128).next_power_of_two() as i128;
            self.note((0, p));
        }
    }

    fn block(&mut self, body: &[LStmt]) {
        for st in body {
            match st {
                LStmt::For { var, extent, body } => {
                    let e = i128::from(*extent);
                    self.note((0, e));
                    self.vars.insert(*var, (0, (e - 1).max(0)));
                    self.block(body);
                }
                LStmt::If { cond, body } => {
                    self.of(cond);
                    self.block(body);
                }
                LStmt::Let { var, value } => {
                    let r = self.of(value);
                    self.vars.insert(*var, r);
                }
                LStmt::Move { dst, src, .. } => {
                    self.access(dst);
                    self.access(src);
                }
                LStmt::Store { dst, .. } => self.access(dst),
                LStmt::Ballot { dst, src, .. }
                | LStmt::Shuffle { dst, src, .. }
                | LStmt::CpAsync { dst, src, .. } => {
                    self.access(dst);
                    self.access(src);
                }
                LStmt::LdMatrix { dst, src, .. } => {
                    for d in dst {
                        self.access(d);
                    }
                    self.access(src);
                }
                LStmt::Intrinsic(i) => {
                    for a in &i.args {
                        match a {
                            crate::desc::intrinsic::LArg::Elem(a, _) => self.access(a),
                            crate::desc::intrinsic::LArg::Value(e) => {
                                self.of(e);
                            }
                        }
                    }
                }
                LStmt::StMatrix { src, dst, .. } => {
                    for a in src {
                        self.access(a);
                    }
                    self.access(dst);
                }
                LStmt::Mma { c, a, b, .. } => {
                    self.access(c);
                    self.access(a);
                    self.access(b);
                }
                LStmt::Compute { dst, srcs, .. } => {
                    self.access(dst);
                    for s in srcs {
                        self.access(s);
                    }
                }
                LStmt::MbarInit { bar, .. }
                | LStmt::MbarArrive { bar }
                | LStmt::CpAsyncArrive { bar }
                | LStmt::MbarExpectTx { bar, .. } => self.access(bar),
                LStmt::MbarWait { bar, parity } => {
                    self.access(bar);
                    self.of(parity);
                }
                LStmt::TmaLoad { dst, src, bar, .. } => {
                    self.access(dst);
                    self.access(src);
                    self.access(bar);
                }
                LStmt::Wgmma { c, a, b, .. } => {
                    self.access(c);
                    self.access(&a.at);
                    self.access(&b.at);
                }
                LStmt::WgmmaFence { acc, .. } | LStmt::WgmmaWait { acc, .. } => self.access(acc),
                LStmt::FenceMbarInit
                | LStmt::AsyncCommit
                | LStmt::AsyncWait(_)
                | LStmt::WgmmaCommit
                | LStmt::SetMaxNReg { .. }
                | LStmt::Barrier
                | LStmt::Matmul(_)
                | LStmt::Comment(_) => {}
            }
        }
    }
}

/// The range of `a op b` for `a` in `x` and `b` in `y` (division truncates, as in C).
pub fn bin(op: BinOp, x: Interval, y: Interval) -> Interval {
    let corners = |f: &dyn Fn(i128, i128) -> i128| {
        let v = [f(x.0, y.0), f(x.0, y.1), f(x.1, y.0), f(x.1, y.1)];
        (
            v.iter().copied().min().unwrap_or(0),
            v.iter().copied().max().unwrap_or(0),
        )
    };
    let sat = |v: i128| v.clamp(-(1 << 100), 1 << 100);
    match op {
        BinOp::Add => (sat(x.0 + y.0), sat(x.1 + y.1)),
        BinOp::Sub => (sat(x.0 - y.1), sat(x.1 - y.0)),
        BinOp::Mul => corners(&|a, b| sat(a.saturating_mul(b))),
        BinOp::Div if y.0 > 0 || y.1 < 0 => corners(&|a, b| a / b),
        // A divisor that may be zero or change sign: at most |a|.
        BinOp::Div => {
            let m = x.0.abs().max(x.1.abs());
            (-m, m)
        }
        BinOp::Rem => {
            let m = (y.0.abs().max(y.1.abs()) - 1).max(0);
            let a = x.0.abs().max(x.1.abs());
            let m = m.min(a);
            if x.0 >= 0 {
                (0, m)
            } else if x.1 <= 0 {
                (-m, 0)
            } else {
                (-m, m)
            }
        }
        BinOp::Lt | BinOp::And => (0, 1),
    }
}

/// The 32-bit type every integer the program computes (addresses, loop bounds, conditions, lets) fits:
/// `unsigned` when none is negative and all are below 2^32, `int` when all fit it, else none.
pub fn narrow_type(prog: &Program) -> Option<&'static str> {
    let mut r = Ranges {
        vars: HashMap::new(),
        thread: (0, i128::from(prog.launch.threads.max(1)) - 1),
        cta: (0, i128::from(prog.launch.grid.max(1)) - 1),
        seen: (0, 0),
    };
    r.note((0, i128::from(prog.launch.threads)));
    r.note((0, i128::from(prog.launch.grid)));
    r.block(&prog.body);
    let (lo, hi) = r.seen;
    if lo >= 0 && hi <= i128::from(u32::MAX) {
        Some("unsigned")
    } else if lo >= I32.0 && hi <= I32.1 {
        Some("int")
    } else {
        None
    }
}

/// Whether every integer the program computes fits a 32-bit `int` or `unsigned` ([`narrow_type`]).
pub fn fits_i32(prog: &Program) -> bool {
    narrow_type(prog).is_some()
}

/// The range of `e` with `vars` in the given ranges (tests and callers outside emission).
pub fn range_of(
    e: &Expr,
    vars: &HashMap<Var, Interval>,
    thread: Interval,
    cta: Interval,
) -> Interval {
    let mut r = Ranges {
        vars: vars.clone(),
        thread,
        cta,
        seen: (0, 0),
    };
    r.of(e)
}
