//! The text notation: parsing and printing.
//!
//! ```text
//! layout  := term ('+' term)*            -- at most one S[...] and one R[...]
//! term    := 'S[' iters ']' | 'R[' iters ']' | offset
//! iters   := INT ':' stride
//!          | '(' INT (',' INT)* ')' ':' '(' stride (',' stride)* ')'
//!          | '(' INT (',' INT)* ')' | INT      -- extents only: row-major strides on m
//! stride  := INT ('@' AXIS)?             -- no axis means m
//! offset  := INT ('@' AXIS)? | '(' offset ('+' offset)* ')'
//! ```
//!
//! The printed form is `S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp`: a single iter prints
//! without parentheses, `@m` is left out, zero offsets are left out, and an empty layout prints `S[]`.
//! Parsing the printed form gives back the same layout, so `print(parse(s))` is a fixpoint.
//!
//! The parser also reads the form Apache TVM prints,
//! `T.TileLayout(T.S[(8, 2):(4 @ Axis.laneid, 1)] + 5 @ Axis.warpid)`, keeping axis names as written;
//! [`Layout::to_tvm`] prints that form.

use std::fmt;
use std::str::FromStr;

use crate::axis::{is_identifier, Axis};
use crate::coord::Coord;
use crate::error::{LayoutError, ParseError, Result};
use crate::iter::Iter;
use crate::layout::{row_major_strides, Layout};

impl FromStr for Layout {
    type Err = LayoutError;

    fn from_str(s: &str) -> Result<Layout> {
        parse(s)
    }
}

/// Parses a layout from the notation (ours or TVM's).
///
/// ```
/// let l = axe_layout::parse("S[(8, 16)] + R[2:4@warp] + 5@warp")?;
/// assert_eq!(l.to_string(), "S[(8,16):(16,1)] + R[2:4@warp] + 5@warp");
/// let e = axe_layout::parse("S[(8,2):(4@lane,1] ").unwrap_err().to_string();
/// assert!(e.contains("offset 17"), "{e}");
/// # Ok::<(), axe_layout::LayoutError>(())
/// ```
pub fn parse(s: &str) -> Result<Layout> {
    let mut p = Parser {
        s,
        pos: 0,
        depth: 0,
    };
    let layout = p.layout()?;
    Ok(layout)
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
    /// Parenthesised offsets open around the current position.
    depth: usize,
}

/// How deeply parenthesised offsets `((5@w + 1) + 2)` may nest: far beyond any real layout, and it keeps
/// the recursion shallow whatever the input.
const MAX_NESTING: usize = 64;

impl<'a> Parser<'a> {
    fn err<T>(&self, at: usize, message: impl Into<String>) -> Result<T> {
        Err(ParseError {
            input: self.s.to_string(),
            offset: at,
            message: message.into(),
        }
        .into())
    }

    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn ws(&mut self) {
        let bytes = self.s.as_bytes();
        while self.pos < bytes.len() && bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    /// Skips whitespace, then consumes `tok` if it is next.
    fn eat(&mut self, tok: &str) -> bool {
        self.ws();
        if self.s.as_bytes()[self.pos..].starts_with(tok.as_bytes()) {
            self.pos += tok.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: &str, what: &str) -> Result<()> {
        if self.eat(tok) {
            Ok(())
        } else {
            self.err(self.pos, format!("expected {what}{}", self.found()))
        }
    }

    fn found(&self) -> String {
        match self.peek() {
            Some(c) => format!(", found {c:?}"),
            None => ", found end of input".to_string(),
        }
    }

    fn layout(&mut self) -> Result<Layout> {
        self.ws();
        let wrapped = self.eat("T.TileLayout") || self.eat("TileLayout");
        if wrapped {
            self.expect("(", "'(' after TileLayout")?;
        }
        let mut shard: Option<Vec<Iter>> = None;
        let mut replica: Option<Vec<Iter>> = None;
        let mut offset = Coord::zero();
        loop {
            self.ws();
            let start = self.pos;
            let is_s = self.eat("T.S[") || self.eat("S[");
            let is_r = !is_s && (self.eat("T.R[") || self.eat("R["));
            if is_s || is_r {
                let iters = self.iters()?;
                let slot = if is_s { &mut shard } else { &mut replica };
                if slot.is_some() {
                    let which = if is_s { "S[...]" } else { "R[...]" };
                    return self.err(
                        start,
                        format!("a layout has at most one {which} term; found a second one"),
                    );
                }
                *slot = Some(iters);
            } else {
                let c = self.offset()?;
                offset = offset
                    .checked_add(&c)
                    .or_else(|e| self.err(start, e.to_string()))?;
            }
            if !self.eat("+") {
                break;
            }
        }
        if wrapped {
            self.expect(")", "')' closing TileLayout(")?;
        }
        self.ws();
        if self.pos < self.s.len() {
            return self.err(
                self.pos,
                format!("expected '+' or end of layout{}", self.found()),
            );
        }
        Layout::new(
            shard.unwrap_or_default(),
            replica.unwrap_or_default(),
            offset,
        )
        .or_else(|e| self.err(0, e.to_string()))
    }

    /// After `S[` or `R[`: the iters and the closing `]`.
    fn iters(&mut self) -> Result<Vec<Iter>> {
        if self.eat("]") {
            return Ok(Vec::new());
        }
        let (extents, at) = if self.eat("(") {
            let list = self.list(Self::extent)?;
            self.expect(")", "')' or ','")?;
            list
        } else {
            self.ws();
            let at = self.pos;
            (vec![self.extent()?], vec![at])
        };
        let strides = if self.eat(":") {
            let (strides, _) = if self.eat("(") {
                let list = self.list(Self::stride)?;
                self.expect(")", "')' or ','")?;
                list
            } else {
                (vec![self.stride()?], vec![])
            };
            if strides.len() != extents.len() {
                return self.err(
                    at[0],
                    format!("{} extents but {} strides", extents.len(), strides.len()),
                );
            }
            strides
        } else {
            let rm = row_major_strides(&extents).or_else(|e| self.err(at[0], e.to_string()))?;
            rm.into_iter().map(|s| (s, Axis::memory())).collect()
        };
        self.expect("]", "']'")?;
        extents
            .into_iter()
            .zip(strides)
            .map(|(e, (s, a))| Iter::new(e, s, a))
            .collect()
    }

    /// `item (',' item)*`, returning the items and their offsets.
    fn list<T>(&mut self, item: fn(&mut Self) -> Result<T>) -> Result<(Vec<T>, Vec<usize>)> {
        let mut out = Vec::new();
        let mut at = Vec::new();
        loop {
            self.ws();
            at.push(self.pos);
            out.push(item(self)?);
            if !self.eat(",") {
                return Ok((out, at));
            }
        }
    }

    fn extent(&mut self) -> Result<u64> {
        self.ws();
        let at = self.pos;
        let v = self.int()?;
        match u64::try_from(v) {
            Ok(0) => self.err(at, "iter extent must be at least 1, got 0"),
            Ok(e) => Ok(e),
            Err(_) => self.err(at, format!("iter extent must be positive, got {v}")),
        }
    }

    fn stride(&mut self) -> Result<(i64, Axis)> {
        self.ws();
        let at = self.pos;
        let v = self.int()?;
        let s = i64::try_from(v)
            .or_else(|_| self.err(at, format!("stride {v} does not fit in a 64-bit integer")))?;
        let axis = if self.eat("@") {
            self.axis()?
        } else {
            Axis::memory()
        };
        Ok((s, axis))
    }

    fn offset(&mut self) -> Result<Coord> {
        self.ws();
        if self.eat("(") {
            if self.depth == MAX_NESTING {
                return self.err(
                    self.pos - 1,
                    format!("offsets nest at most {MAX_NESTING} parentheses deep"),
                );
            }
            self.depth += 1;
            let mut c = self.offset()?;
            while self.eat("+") {
                self.ws();
                let at = self.pos;
                c = c
                    .checked_add(&self.offset()?)
                    .or_else(|e| self.err(at, e.to_string()))?;
            }
            self.expect(")", "')' or '+' in the offset")?;
            self.depth -= 1;
            return Ok(c);
        }
        match self.peek() {
            Some(c) if c.is_ascii_digit() || c == '-' => {}
            Some(c @ ('S' | 'R')) if !self.rest()[1..].trim_start().starts_with('[') => {
                let what = if c == 'S' { "shard" } else { "replica" };
                return self.err(
                    self.pos + 1,
                    format!(
                        "expected '[' after {c}: a {what} is written {c}[(extents):(strides)]{}",
                        match self.rest()[1..].chars().next() {
                            Some(n) => format!(", found {n:?}"),
                            None => ", found end of input".to_string(),
                        }
                    ),
                );
            }
            _ => {
                return self.err(
                    self.pos,
                    format!(
                        "expected S[...], R[...] or an offset like 5@warp{}",
                        self.found()
                    ),
                )
            }
        }
        let (v, axis) = self.stride()?;
        Ok(Coord::on(axis, v))
    }

    fn axis(&mut self) -> Result<Axis> {
        self.ws();
        if self.rest().starts_with("Axis.") {
            self.pos += "Axis.".len();
        }
        let at = self.pos;
        let len = self.s.as_bytes()[self.pos..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count();
        let name = &self.rest()[..len];
        if !is_identifier(name) {
            return self.err(at, format!("expected an axis name{}", self.found()));
        }
        self.pos += len;
        Axis::new(name)
    }

    /// An optionally negative decimal integer, as i128 (range-checked by the caller).
    fn int(&mut self) -> Result<i128> {
        self.ws();
        let at = self.pos;
        let neg = self.rest().starts_with('-');
        if neg {
            self.pos += 1;
            self.ws();
        }
        let bytes = &self.s.as_bytes()[self.pos..];
        let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            return self.err(self.pos, format!("expected an integer{}", self.found()));
        }
        let mut v: i128 = 0;
        for &b in &bytes[..digits] {
            v = v * 10 + i128::from(b - b'0');
            if v > i128::from(u64::MAX) {
                let text = &self.s[self.pos..self.pos + digits];
                return self.err(at, format!("integer {text} is out of range"));
            }
        }
        self.pos += digits;
        Ok(if neg { -v } else { v })
    }
}

fn write_iters(f: &mut fmt::Formatter<'_>, iters: &[Iter], tvm: bool) -> fmt::Result {
    let axis = |f: &mut fmt::Formatter<'_>, it: &Iter| -> fmt::Result {
        match (it.axis().is_memory(), tvm) {
            (true, _) => write!(f, "{}", it.stride()),
            (false, false) => write!(f, "{}@{}", it.stride(), it.axis()),
            (false, true) => write!(f, "{} @ Axis.{}", it.stride(), it.axis()),
        }
    };
    let sep = if tvm { ", " } else { "," };
    match iters {
        [] => Ok(()),
        [it] => {
            write!(f, "{}:", it.extent())?;
            axis(f, it)
        }
        _ => {
            f.write_str("(")?;
            for (i, it) in iters.iter().enumerate() {
                if i > 0 {
                    f.write_str(sep)?;
                }
                write!(f, "{}", it.extent())?;
            }
            f.write_str("):(")?;
            for (i, it) in iters.iter().enumerate() {
                if i > 0 {
                    f.write_str(sep)?;
                }
                axis(f, it)?;
            }
            f.write_str(")")
        }
    }
}

fn write_layout(f: &mut fmt::Formatter<'_>, l: &Layout, tvm: bool) -> fmt::Result {
    let (s, r, at) = if tvm {
        ("T.S[", "T.R[", " @ Axis.")
    } else {
        ("S[", "R[", "@")
    };
    f.write_str(s)?;
    write_iters(f, l.shard(), tvm)?;
    f.write_str("]")?;
    if !l.replica().is_empty() {
        write!(f, " + {r}")?;
        write_iters(f, l.replica(), tvm)?;
        f.write_str("]")?;
    }
    for (a, v) in l.offset().components() {
        if a.is_memory() {
            write!(f, " + {v}")?;
        } else {
            write!(f, " + {v}{at}{a}")?;
        }
    }
    Ok(())
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_layout(f, self, false)
    }
}

impl fmt::Debug for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_layout(f, self, false)
    }
}

impl Layout {
    /// The form Apache TVM prints (`T.TileLayout(T.S[(8, 2):(4 @ Axis.laneid, 1)] + 5 @ Axis.warpid)`).
    ///
    /// ```
    /// let l: axe_layout::Layout = "S[(8,2):(4@laneid,1)] + 5@warpid".parse()?;
    /// assert_eq!(l.to_tvm(), "T.TileLayout(T.S[(8, 2):(4 @ Axis.laneid, 1)] + 5 @ Axis.warpid)");
    /// assert_eq!(l.to_tvm().parse::<axe_layout::Layout>()?, l);
    /// # Ok::<(), axe_layout::LayoutError>(())
    /// ```
    pub fn to_tvm(&self) -> String {
        struct Tvm<'a>(&'a Layout);
        impl fmt::Display for Tvm<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write_layout(f, self.0, true)
            }
        }
        format!("T.TileLayout({})", Tvm(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(s: &str) -> String {
        parse(s).unwrap_or_else(|e| panic!("{s}: {e}")).to_string()
    }

    #[test]
    fn prints_canonical_text() {
        assert_eq!(
            round("S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp"),
            "S[(8,2,4,2):(4@lane,1@warp,1@lane,1)] + R[2:4@warp] + 5@warp"
        );
        assert_eq!(round("S[4096:1]"), "S[4096:1]");
        assert_eq!(round("S[(4096):(1@m)]"), "S[4096:1]");
        assert_eq!(round("S[]"), "S[]");
        assert_eq!(round("  S[ ( 3 , 5 ) ]  "), "S[(3,5):(5,1)]");
        assert_eq!(round("S[4]"), "S[4:1]");
        assert_eq!(
            round("S[4:-1] + 0@warp + (3 + 2@lane)"),
            "S[4:-1] + 2@lane + 3"
        );
        assert_eq!(round("5@warp"), "S[] + 5@warp");
        assert_eq!(round("S[2:0@lane] + - 3@lane"), "S[2:0@lane] + -3@lane");
    }

    #[test]
    fn reads_tvm_form() {
        let l = parse("T.TileLayout(T.S[(8, 2):(4 @ Axis.laneid, 1)] + 5 @ Axis.warpid)").unwrap();
        assert_eq!(l.to_string(), "S[(8,2):(4@laneid,1)] + 5@warpid");
        let l = parse("T.TileLayout(T.S[(8, 2, 4, 2):(4 @ Axis.laneid, 1 @ Axis.warpid, 1 @ Axis.laneid, 1)] + T.R[2:4 @ Axis.warpid] + 5 @ Axis.warpid)").unwrap();
        assert_eq!(
            l.to_string(),
            "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)] + R[2:4@warpid] + 5@warpid"
        );
        assert_eq!(parse(&l.to_tvm()).unwrap(), l);
        assert_eq!(parse("T.TileLayout(T.S[4])").unwrap().to_string(), "S[4:1]");
    }

    #[test]
    fn errors_are_positioned() {
        let cases = [
            ("S[(8,2):(4@lane,1] ", 17, "expected ')' or ','"),
            ("S[4:1] + S[2:1]", 9, "at most one S[...]"),
            ("R[4:1] + S[2:1] + R[2:1]", 18, "at most one R[...]"),
            ("S[(0,2):(1,1)]", 3, "at least 1"),
            ("S[(2,2):(1)]", 3, "2 extents but 1 strides"),
            ("S[2:1@9x]", 6, "axis name"),
            ("S[2:99999999999999999999]", 4, "out of range"),
            ("S[2:18446744073709551615]", 4, "does not fit"),
            ("S[2:1] extra", 7, "expected '+'"),
            ("", 0, "expected S[...]"),
            ("S[2:1] +", 8, "expected S[...]"),
            ("T.TileLayout(S[2:1]", 19, "closing TileLayout"),
        ];
        for (input, offset, msg) in cases {
            match parse(input) {
                Err(LayoutError::Parse(e)) => {
                    assert_eq!(e.offset, offset, "{input}: {e}");
                    assert!(e.message.contains(msg), "{input}: {e}");
                    let shown = e.to_string();
                    let caret_line = shown.lines().last().unwrap();
                    assert_eq!(caret_line.find('^'), Some(2 + offset), "{shown}");
                }
                other => panic!("{input}: expected a parse error, got {other:?}"),
            }
        }
    }
}
