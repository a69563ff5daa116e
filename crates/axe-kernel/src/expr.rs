//! Integer expressions over loop variables and thread coordinates, shared by the description and the
//! lowered program.

use std::fmt;

/// A variable introduced by `for` or `let`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Var(pub u32);

/// A binary integer operator (64-bit, checked in the interpreter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b` (both non-negative where used).
    Div,
    /// `a % b`.
    Rem,
    /// `1` when `a < b`, else `0`.
    Lt,
    /// `1` when both are non-zero.
    And,
}

impl BinOp {
    /// The operator in C: `+ - * / % < &&`.
    pub fn c(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Lt => "<",
            BinOp::And => "&&",
        }
    }
}

/// An integer expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// A constant.
    Const(i64),
    /// A variable.
    Var(Var),
    /// The thread's index in its CTA (`threadIdx.x`).
    Thread,
    /// The CTA's index in the grid (`blockIdx.x`).
    Cta,
    /// `a op b`.
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

/// The deepest expression a kernel may hold (operators nested in operators): lowering, emitting and
/// interpreting walk expressions recursively, so depth is bounded where they are built.
pub const MAX_DEPTH: usize = 256;

impl Expr {
    /// The nesting depth: 1 for a leaf, one more than the deeper operand for an operator. Counted
    /// without recursion, so that any expression can be measured.
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self, 1usize)];
        while let Some((e, d)) = stack.pop() {
            deepest = deepest.max(d);
            if let Expr::Bin(_, a, b) = e {
                stack.push((a, d + 1));
                stack.push((b, d + 1));
            }
        }
        deepest
    }

    /// `self op other`, folding constants and the identities `x+0`, `x*1`, `x*0`, `x/1`.
    pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        use BinOp::*;
        match (op, &a, &b) {
            (Add, Expr::Const(0), _) | (Mul, Expr::Const(1), _) => b,
            (Add | Sub, _, Expr::Const(0)) | (Mul | Div, _, Expr::Const(1)) => a,
            (Mul, Expr::Const(0), _) | (Mul, _, Expr::Const(0)) | (Rem, _, Expr::Const(1)) => {
                Expr::Const(0)
            }
            (_, Expr::Const(x), Expr::Const(y)) => match eval_bin(op, *x, *y) {
                Some(v) => Expr::Const(v),
                None => Expr::Bin(op, Box::new(a), Box::new(b)),
            },
            _ => Expr::Bin(op, Box::new(a), Box::new(b)),
        }
    }

    /// `self + other`.
    pub fn plus(self, other: Expr) -> Expr {
        Expr::bin(BinOp::Add, self, other)
    }
    /// `self * other`.
    pub fn times(self, other: Expr) -> Expr {
        Expr::bin(BinOp::Mul, self, other)
    }
    /// `self / other`.
    pub fn over(self, other: Expr) -> Expr {
        Expr::bin(BinOp::Div, self, other)
    }
    /// `self % other`.
    pub fn modulo(self, other: Expr) -> Expr {
        Expr::bin(BinOp::Rem, self, other)
    }
    /// `self < other`.
    pub fn lt(self, other: Expr) -> Expr {
        Expr::bin(BinOp::Lt, self, other)
    }
    /// `self && other`.
    pub fn and(self, other: Expr) -> Expr {
        Expr::bin(BinOp::And, self, other)
    }
}

/// Applies `op`, `None` on overflow or division by zero.
pub fn eval_bin(op: BinOp, a: i64, b: i64) -> Option<i64> {
    match op {
        BinOp::Add => a.checked_add(b),
        BinOp::Sub => a.checked_sub(b),
        BinOp::Mul => a.checked_mul(b),
        BinOp::Div => a.checked_div(b),
        BinOp::Rem => a.checked_rem(b),
        BinOp::Lt => Some(i64::from(a < b)),
        BinOp::And => Some(i64::from(a != 0 && b != 0)),
    }
}

/// An expression in C with 32-bit arithmetic, for programs whose values all fit
/// ([`crate::range::narrow_type`]): constants suffixed `u` when `.1` (unsigned), bare otherwise.
pub struct Narrow<'a>(pub &'a Expr, pub bool);

impl fmt::Display for Narrow<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_c(self.0, if self.1 { "u" } else { "" }, f)
    }
}

/// `e` in C, its constants suffixed `suffix` (`LL`: 64-bit arithmetic), fully parenthesised.
fn write_c(e: &Expr, suffix: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match e {
        Expr::Const(c) => write!(f, "{c}{suffix}"),
        Expr::Var(v) => write!(f, "v{}", v.0),
        Expr::Thread => f.write_str("tid"),
        Expr::Cta => f.write_str("cta"),
        Expr::Bin(op, a, b) => {
            let o = op.c();
            f.write_str("(")?;
            write_c(a, suffix, f)?;
            write!(f, " {o} ")?;
            write_c(b, suffix, f)?;
            f.write_str(")")
        }
    }
}

impl fmt::Display for Expr {
    /// C syntax with 64-bit arithmetic (`v3`, `tid`, constants `…LL`, fully parenthesised).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_c(self, "LL", f)
    }
}
