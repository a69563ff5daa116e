//! `intrinsic`: the escape hatch. A statement whose CUDA is given as text (inline `asm`, a CUDA
//! builtin), with `{0}`, `{1}`, ... standing for its operands, run by every thread of a scope.
//!
//! **Law.** In the CUDA source the statement is the text with each `{i}` replaced by operand `i` (an
//! element as an lvalue of its C type, or an integer expression), verbatim otherwise, under a comment
//! naming it. On the CPU interpreter each running thread reads its operands (as `f64`), calls the
//! intrinsic's CPU meaning on them, and writes the element operands back (converted to their dtypes);
//! an intrinsic without a CPU meaning stops the interpreter with an error naming it. The text is
//! checked when the statement is written: no NUL, every `{digits}` names an operand, the other
//! braces, brackets and parentheses balance, strings, character literals and `/* */` comments
//! close (brackets are counted outside strings, character literals and comments only), and no `//`
//! comment ends in a backslash (C++ would join the next line to it).

use std::fmt;
use std::sync::Arc;

use axe_layout::Axis;

use super::{BufferId, KernelBuilder, Space, Stmt, Tensor};
use crate::dtype::DType;
use crate::error::{layout, KernelError, Result};
use crate::expr::Expr;
use crate::ir::Access;
use crate::scope::Scope;

/// What an intrinsic means on the CPU: called once per running thread with its operands' values,
/// in operand order; what it leaves in the element operands is written back.
#[derive(Clone)]
pub struct CpuMeaning(pub Arc<CpuFn>);

/// The function a [`CpuMeaning`] holds.
pub type CpuFn = dyn Fn(&mut [f64]) + Send + Sync;

impl CpuMeaning {
    /// The meaning `f`.
    pub fn new(f: impl Fn(&mut [f64]) + Send + Sync + 'static) -> CpuMeaning {
        CpuMeaning(Arc::new(f))
    }
}

impl fmt::Debug for CpuMeaning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CpuMeaning(..)")
    }
}

impl PartialEq for CpuMeaning {
    /// The same function (the same `Arc`).
    fn eq(&self, other: &CpuMeaning) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// An operand of an intrinsic.
#[derive(Debug, Clone, PartialEq)]
pub enum IntrinsicArg {
    /// Element `index` of `buffer` (of a register buffer: the running thread's own register), read and
    /// written.
    Elem {
        /// The buffer.
        buffer: BufferId,
        /// The element's index in it.
        index: Expr,
    },
    /// An integer value (read only).
    Value(Expr),
}

impl IntrinsicArg {
    /// Element `x` (flat logical index) of tensor `t`: in memory, the element its layout puts `x` at;
    /// in registers, the register it names (in each thread).
    pub fn element(t: &Tensor, x: u64) -> Result<IntrinsicArg> {
        let c = t
            .layout
            .base_at(x)
            .map_err(layout(format!("tensor {}", t.name)))?;
        let index = match t.space {
            Space::Registers => c.get(&Axis::new("reg").map_err(layout("reg"))?),
            _ => c.get(&Axis::memory()),
        };
        Ok(IntrinsicArg::Elem {
            buffer: t.buffer,
            index: Expr::Const(index),
        })
    }
}

/// A piece of an intrinsic's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Verbatim text.
    Text(String),
    /// Operand `i`.
    Arg(usize),
}

/// An intrinsic statement. **Law:** in CUDA it is its text with each `{i}` replaced by operand `i`
/// (an element as an lvalue of its C type — f16 and bf16 as `unsigned short` bits — or an integer
/// expression), under a comment naming it and its operands; on the CPU each thread of its scope
/// reads the operands as `f64`, runs the CPU meaning, and writes the element operands back in their
/// dtypes; without a CPU meaning the interpreter stops with an error naming it.
#[derive(Debug, Clone, PartialEq)]
pub struct Intrinsic {
    /// Its name (letters, digits, `_`, `.`), in comments and errors.
    pub name: String,
    /// The threads that run it.
    pub scope: Scope,
    /// The text, split at its placeholders.
    pub text: Vec<Piece>,
    /// The operands.
    pub args: Vec<IntrinsicArg>,
    /// What it means on the CPU, if anything.
    pub cpu: Option<CpuMeaning>,
}

/// A lowered operand: an element (its address and dtype) or a value.
#[derive(Debug, Clone, PartialEq)]
pub enum LArg {
    /// An element.
    Elem(Access, DType),
    /// An integer value.
    Value(Expr),
}

/// A lowered intrinsic, run by each thread that reaches it.
#[derive(Debug, Clone, PartialEq)]
pub struct LIntrinsic {
    /// Its name.
    pub name: String,
    /// The text, split at its placeholders.
    pub text: Vec<Piece>,
    /// The operands.
    pub args: Vec<LArg>,
    /// What it means on the CPU, if anything.
    pub cpu: Option<CpuMeaning>,
}

/// A `//` comment whose line ends in a backslash: C++ joins the next line to it (the emitted closing
/// brace, or the next line of the text).
const SPLICED: &str =
    "a // comment ending in a backslash, which joins the next line to the comment";

fn bad(name: &str, text: &str, at: usize, what: &str) -> KernelError {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let caret = " ".repeat(text[line_start..at].chars().count());
    KernelError::Invalid(format!(
        "intrinsic {name}: {what} at byte {at}\n  {}\n  {caret}^",
        &text[line_start..line_end]
    ))
}

/// Splits `text` at its placeholders, checking it (see the module's law) for `operands` operands.
pub fn parse_text(name: &str, text: &str, operands: usize) -> Result<Vec<Piece>> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        return Err(KernelError::Invalid(format!(
            "intrinsic name {name:?}: use letters, digits, '_' and '.'"
        )));
    }
    if let Some(at) = text.find('\0') {
        return Err(bad(name, text, at, "a NUL character"));
    }
    let mut pieces = Vec::new();
    let mut lit = String::new();
    let mut open: Vec<(char, usize)> = Vec::new();
    // An open string ('"') or character literal ('\''), and where it opened.
    let mut quote: Option<(char, usize)> = None;
    // An open comment: `true` for `//` (to the end of the line), `false` for `/* */`; where it opened.
    let mut comment: Option<(bool, usize)> = None;
    // Whether the open `//` comment's last non-blank character so far is a backslash.
    let mut spliced = false;
    let mut prev = ' ';
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c == '{' {
            let digits: String = text[at + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if !digits.is_empty() && text[at + 1 + digits.len()..].starts_with('}') {
                let i = digits.parse::<usize>().ok().filter(|&i| i < operands);
                let Some(i) = i else {
                    return Err(bad(
                        name,
                        text,
                        at,
                        &format!("placeholder {{{digits}}} names no operand (it has {operands})"),
                    ));
                };
                pieces.push(Piece::Text(std::mem::take(&mut lit)));
                pieces.push(Piece::Arg(i));
                for _ in 0..digits.len() + 1 {
                    chars.next();
                }
                prev = '}';
                continue;
            }
        }
        lit.push(c);
        let before = std::mem::replace(&mut prev, c);
        if let Some((line, _)) = comment {
            if line && c == '\n' {
                if spliced {
                    return Err(bad(name, text, at, SPLICED));
                }
                comment = None;
            } else if line && !matches!(c, ' ' | '\t' | '\r') {
                spliced = c == '\\';
            } else if !line && c == '*' && chars.peek().is_some_and(|&(_, n)| n == '/') {
                if let Some((_, n)) = chars.next() {
                    lit.push(n);
                }
                comment = None;
                prev = ' ';
            }
            continue;
        }
        if let Some((qc, q)) = quote {
            let what = if qc == '"' {
                "a string"
            } else {
                "a character literal"
            };
            match c {
                '\\' => {
                    if let Some((_, e)) = chars.next() {
                        lit.push(e);
                        prev = e;
                    }
                }
                '\n' => {
                    return Err(bad(
                        name,
                        text,
                        q,
                        &format!("{what} not closed on its line"),
                    ))
                }
                _ if c == qc => quote = None,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => quote = Some((c, at)),
            // A quote after a digit or letter is a digit separator (`1'000`), not a literal.
            '\'' if !before.is_ascii_alphanumeric() => quote = Some((c, at)),
            '/' if matches!(chars.peek(), Some(&(_, '/' | '*'))) => {
                if let Some((_, n)) = chars.next() {
                    lit.push(n);
                    comment = Some((n == '/', at));
                    spliced = false;
                }
            }
            '{' | '(' | '[' => open.push((c, at)),
            '}' | ')' | ']' => {
                let want = match c {
                    '}' => '{',
                    ')' => '(',
                    _ => '[',
                };
                match open.pop() {
                    Some((o, _)) if o == want => {}
                    _ => return Err(bad(name, text, at, &format!("an unmatched '{c}'"))),
                }
            }
            _ => {}
        }
    }
    if let Some((qc, q)) = quote {
        let what = if qc == '"' {
            "a string"
        } else {
            "a character literal"
        };
        return Err(bad(name, text, q, &format!("{what} not closed")));
    }
    if let Some((false, at)) = comment {
        return Err(bad(name, text, at, "a comment not closed"));
    }
    if comment.is_some() && spliced {
        return Err(bad(name, text, text.len(), SPLICED));
    }
    if let Some((c, at)) = open.pop() {
        return Err(bad(name, text, at, &format!("an unclosed '{c}'")));
    }
    pieces.push(Piece::Text(lit));
    pieces.retain(|p| *p != Piece::Text(String::new()));
    Ok(pieces)
}

impl KernelBuilder {
    /// `intrinsic(scope, name, text, args, cpu)`: every thread of `scope` runs `text` (CUDA, `{i}` for
    /// operand `i`); on the CPU, `cpu` if given (see [`Intrinsic`]). Errors: a bad
    /// name or text (with its offset), a scope naming units the launch has not, an operand in no
    /// buffer.
    pub fn intrinsic(
        &mut self,
        scope: Scope,
        name: &str,
        text: &str,
        args: &[IntrinsicArg],
        cpu: Option<CpuMeaning>,
    ) -> Result<()> {
        let text = parse_text(name, text, args.len())?;
        self.kernel
            .launch
            .check_scope(&scope)
            .map_err(|e| KernelError::Invalid(format!("intrinsic {name}: {e}")))?;
        for a in args {
            if let IntrinsicArg::Elem { buffer, .. } = a {
                if self.kernel.buffers.get(buffer.0).is_none() {
                    return Err(KernelError::Invalid(format!(
                        "intrinsic {name}: no buffer #{}",
                        buffer.0
                    )));
                }
            }
        }
        self.push(Stmt::Intrinsic(Intrinsic {
            name: name.to_string(),
            scope,
            text,
            args: args.to_vec(),
            cpu,
        }));
        Ok(())
    }

    /// Writes an intrinsic already checked (a description's statement, replayed).
    pub fn push_intrinsic(&mut self, i: Intrinsic) {
        self.push(Stmt::Intrinsic(i));
    }
}
