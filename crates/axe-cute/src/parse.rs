//! The text notation, as CuTe prints it: `(4,(2,3)):(1,(4,8))`, static integers `_4`, a shape alone
//! (compact column-major strides), by-mode tilers `<2:1,(2,2):(1,4)>`, swizzles `Sw<3,3,3>` and composed
//! layouts `Sw<3,3,3> o 0 o (8,64):(64,1)`. Errors carry the byte offset; nesting is bounded by
//! [`MAX_DEPTH`].

use axe_layout::ParseError;

use crate::error::{CuteError, Result};
use crate::int_tuple::{IntTuple, MAX_DEPTH};

pub(crate) struct Parser<'a> {
    s: &'a str,
    pos: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(s: &'a str) -> Self {
        Parser {
            s,
            pos: 0,
            depth: 0,
        }
    }

    pub(crate) fn err(&self, at: usize, message: impl Into<String>) -> CuteError {
        CuteError::from(ParseError {
            input: self.s.to_string(),
            offset: at,
            message: message.into(),
        })
    }

    pub(crate) fn ws(&mut self) {
        while let Some(c) = self.s[self.pos..].chars().next() {
            if c.is_whitespace() {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
    }

    pub(crate) fn peek(&mut self) -> Option<char> {
        self.ws();
        self.s[self.pos..].chars().next()
    }

    pub(crate) fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    pub(crate) fn eat_str(&mut self, t: &str) -> bool {
        self.ws();
        if self.s[self.pos..].starts_with(t) {
            self.pos += t.len();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect(&mut self, c: char) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("expected '{c}'")))
        }
    }

    fn unexpected(&mut self, what: &str) -> CuteError {
        let at = {
            self.ws();
            self.pos
        };
        match self.s[at..].chars().next() {
            Some(c) => self.err(at, format!("{what}, found '{}'", c.escape_debug())),
            None => self.err(at, format!("{what}, found end of input")),
        }
    }

    pub(crate) fn end(&mut self) -> Result<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.unexpected("expected end of input")),
        }
    }

    /// `_`? `-`? digits
    pub(crate) fn int(&mut self) -> Result<i64> {
        self.ws();
        let start = self.pos;
        if self.s[self.pos..].starts_with('_') {
            self.pos += 1;
        }
        let neg = if self.s[self.pos..].starts_with('-') {
            self.pos += 1;
            true
        } else {
            false
        };
        let digits_at = self.pos;
        let n = self.s[self.pos..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if n == 0 {
            self.pos = start;
            return Err(self.unexpected("expected an integer"));
        }
        self.pos += n;
        let text = &self.s[digits_at..self.pos];
        let v: i128 = text
            .parse::<i128>()
            .ok()
            .filter(|_| n <= 20)
            .ok_or_else(|| self.err(start, "integer does not fit in 64 bits"))?;
        let v = if neg { -v } else { v };
        i64::try_from(v).map_err(|_| self.err(start, "integer does not fit in 64 bits"))
    }

    pub(crate) fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let at = self.pos;
            return Err(self.err(at, format!("nesting deeper than {MAX_DEPTH}")));
        }
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    pub(crate) fn int_tuple(&mut self) -> Result<IntTuple> {
        if self.eat('(') {
            self.enter()?;
            let mut v = Vec::new();
            if !self.eat(')') {
                loop {
                    v.push(self.int_tuple()?);
                    if self.eat(')') {
                        break;
                    }
                    self.expect(',')?;
                }
            }
            self.depth -= 1;
            Ok(IntTuple::Tuple(v))
        } else {
            Ok(IntTuple::Int(self.int()?))
        }
    }

    pub(crate) fn set_pos(&mut self, pos: usize) {
        self.pos = pos;
    }

    pub(crate) fn pos(&mut self) -> usize {
        self.ws();
        self.pos
    }
}

/// Parses an [`IntTuple`] such as `(4,(2,_3))`.
///
/// ```
/// let t = axe_cute::parse_int_tuple("(4,(2,_3))")?;
/// assert_eq!(t.to_string(), "(4,(2,3))");
/// assert_eq!(t.depth(), 2);
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn parse_int_tuple(s: &str) -> Result<IntTuple> {
    let mut p = Parser::new(s);
    let t = p.int_tuple()?;
    p.end()?;
    Ok(t)
}
