//! A small reader for the three text forms this crate accepts: JSON (`{"in": {...}, "out": {...}}`), the
//! TTGIR attribute body (`{register = [[0, 1]], lane = ...}`) and Python constructor calls as Gluon prints
//! them (`BlockedLayout(size_per_thread=[1, 4], ...)`). Values keep the byte offset where they start so
//! that later checks can point into the text. Nesting is bounded, so deep input is an error, not a stack
//! overflow.

use crate::error::{Result, TritonError};
use axe_layout::ParseError;

/// Deepest nesting of lists, maps and calls accepted.
pub const MAX_DEPTH: usize = 64;

/// A parsed value and the byte offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Spanned {
    /// Byte offset of the first character.
    pub at: usize,
    /// The value.
    pub value: Value,
}

/// A value of the small grammar.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer (may be negative).
    Int(i64),
    /// A quoted string or a bare identifier (`None`, `True`, names).
    Word(String),
    /// `[a, b, ...]` or `(a, b, ...)` without a name before it.
    List(Vec<Spanned>),
    /// `{key: value, ...}` or `{key = value, ...}`, keys in written order.
    Map(Vec<(String, Spanned)>),
    /// `Name(arg, key=value, ...)`.
    Call(String, Vec<(Option<String>, Spanned)>),
}

pub(crate) struct Reader<'a> {
    src: &'a str,
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Reader { src, pos: 0 }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn err(&self, at: usize, message: impl Into<String>) -> TritonError {
        TritonError::Parse(ParseError {
            input: self.src.to_string(),
            offset: at,
            message: message.into(),
        })
    }

    pub(crate) fn skip_ws(&mut self) {
        while let Some(c) = self.src[self.pos..].chars().next() {
            if c.is_whitespace() {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.src[self.pos..].chars().next()
    }

    /// Consumes `lit` (after whitespace) or fails naming it.
    pub(crate) fn expect(&mut self, lit: &str) -> Result<()> {
        self.skip_ws();
        if self.src[self.pos..].starts_with(lit) {
            self.pos += lit.len();
            Ok(())
        } else {
            Err(self.err(self.pos, format!("expected `{lit}`")))
        }
    }

    /// Consumes `lit` when it is next.
    pub(crate) fn eat(&mut self, lit: &str) -> bool {
        self.skip_ws();
        if self.src[self.pos..].starts_with(lit) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.pos >= self.src.len()
    }

    fn word(&mut self) -> String {
        let start = self.pos;
        while let Some(c) = self.src[self.pos..].chars().next() {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                self.pos += 1;
            } else {
                break;
            }
        }
        self.src[start..self.pos].to_string()
    }

    fn string(&mut self) -> Result<String> {
        let start = self.pos;
        let quote = self.src[self.pos..].chars().next().unwrap_or('"');
        self.pos += 1;
        let body_start = self.pos;
        while let Some(c) = self.src[self.pos..].chars().next() {
            if c == quote {
                let s = self.src[body_start..self.pos].to_string();
                self.pos += 1;
                return Ok(s);
            }
            if c == '\\' {
                return Err(self.err(self.pos, "escapes are not supported in names"));
            }
            self.pos += c.len_utf8();
        }
        Err(self.err(start, "unterminated string"))
    }

    fn int(&mut self) -> Result<i64> {
        let start = self.pos;
        if self.src[self.pos..].starts_with('-') {
            self.pos += 1;
        }
        while self.src[self.pos..].starts_with(|c: char| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.src[start..self.pos]
            .parse::<i64>()
            .map_err(|_| self.err(start, "integer out of range or malformed"))
    }

    /// Reads one value.
    pub(crate) fn value(&mut self, depth: usize) -> Result<Spanned> {
        let c = self.peek();
        let at = self.pos;
        if depth > MAX_DEPTH {
            return Err(self.err(at, format!("nested deeper than {MAX_DEPTH} levels")));
        }
        let value = match c {
            None => return Err(self.err(at, "expected a value, found the end of the input")),
            Some('[') | Some('(') => {
                let close = if c == Some('[') { "]" } else { ")" };
                self.pos += 1;
                Value::List(self.items(close, depth)?)
            }
            Some('{') => {
                self.pos += 1;
                let mut entries = Vec::new();
                if !self.eat("}") {
                    loop {
                        let key = self.key()?;
                        if !self.eat(":") && !self.eat("=") {
                            return Err(self.err(self.pos, "expected `:` or `=` after a key"));
                        }
                        let v = self.value(depth + 1)?;
                        entries.push((key, v));
                        if self.eat("}") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                Value::Map(entries)
            }
            Some('"') | Some('\'') => Value::Word(self.string()?),
            Some(d) if d.is_ascii_digit() || d == '-' => Value::Int(self.int()?),
            Some(d) if d.is_ascii_alphabetic() || d == '_' => {
                let name = self.word();
                if self.eat("(") {
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            self.skip_ws();
                            let save = self.pos;
                            let key = match self.peek() {
                                Some(k) if k.is_ascii_alphabetic() || k == '_' => {
                                    let w = self.word();
                                    if self.eat("=") {
                                        Some(w)
                                    } else {
                                        self.pos = save;
                                        None
                                    }
                                }
                                _ => None,
                            };
                            let v = self.value(depth + 1)?;
                            args.push((key, v));
                            if self.eat(")") {
                                break;
                            }
                            self.expect(",")?;
                        }
                    }
                    Value::Call(name, args)
                } else {
                    Value::Word(name)
                }
            }
            Some(other) => return Err(self.err(at, format!("unexpected character `{other}`"))),
        };
        Ok(Spanned { at, value })
    }

    fn items(&mut self, close: &str, depth: usize) -> Result<Vec<Spanned>> {
        let mut items = Vec::new();
        if self.eat(close) {
            return Ok(items);
        }
        loop {
            items.push(self.value(depth + 1)?);
            if self.eat(close) {
                return Ok(items);
            }
            self.expect(",")?;
            if self.eat(close) {
                return Ok(items);
            }
        }
    }

    fn key(&mut self) -> Result<String> {
        match self.peek() {
            Some('"') | Some('\'') => self.string(),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => Ok(self.word()),
            _ => Err(self.err(self.pos, "expected a key")),
        }
    }
}

/// Parses a whole input as one value; trailing text is an error.
pub fn parse_value(src: &str) -> Result<Spanned> {
    let mut r = Reader::new(src);
    let v = r.value(0)?;
    if !r.at_end() {
        return Err(r.err(r.pos(), "unexpected text after the value"));
    }
    Ok(v)
}

/// A parse error at `at` in `src`.
pub(crate) fn error_at(src: &str, at: usize, message: impl Into<String>) -> TritonError {
    Reader::new(src).err(at, message)
}
