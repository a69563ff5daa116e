//! The HLO text syntax of shapes and layouts: parsing and printing, kept together.
//!
//! ```text
//! shape   := tuple | 'b(' array ')' | array
//! tuple   := '(' ')' | '(' shape (',' shape)* ')'
//! array   := TYPE '[' (dim (',' dim)*)? ']' layout?
//! dim     := INT | '<=' INT | '?'
//! layout  := '{' (INT (',' INT)*)? (':' attrs)? '}'     -- only when '{' is followed by an INT or ':'
//! attrs   := D? T? L? #? *? E? S? SC? P? M?              -- this order, each at most once
//! ```
//!
//! Printing is byte-identical to XLA's: attributes in the order `T L # * E S SC P M`, each left out at its
//! default, a scalar's `{}` left out, tuples separated by `", "` with `/*index=i*/` before every fifth
//! element. Whitespace and `/* */` or `//` comments may stand between tokens. Where XLA is lenient or
//! aborts (malformed attribute bodies, `L(0)`, negative tile sizes, layouts on `token[]`, literals past
//! `i64::MAX`, attributes out of order or repeated) this parser returns a positioned error instead.

use std::str::FromStr;

use crate::error::{ParseError, Result, XlaError};
use crate::primitive::PrimitiveType;
use crate::shape::{ArrayShape, Dim, Dims, Layout, MinorToMajor, Shape};

/// Parses one shape; the whole input must be consumed (trailing whitespace and comments allowed).
///
/// ```
/// let s = axe_xla::parse_shape("bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}")?;
/// assert_eq!(s.to_string(), "bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}");
/// assert_eq!(axe_xla::parse_shape("f32[2,3]")?.to_string(), "f32[2,3]{1,0}");
/// let e = axe_xla::parse_shape("f32[4]{0:L(0)}").unwrap_err().to_string();
/// assert!(e.contains("offset 11"), "{e}");
/// # Ok::<(), axe_xla::XlaError>(())
/// ```
#[inline]
pub fn parse_shape(text: &str) -> Result<Shape> {
    let mut shape = Shape::Token;
    match Parser::new(text).whole_shape_into(&mut shape) {
        Ok(()) => Ok(shape),
        Err(e) => Err(XlaError::Parse(e)),
    }
}

/// [`parse_shape`] without its fast path for arrays in printed form: the reference the fast path is
/// tested against.
#[doc(hidden)]
pub fn parse_shape_general(text: &str) -> Result<Shape> {
    let mut p = Parser::new(text);
    p.fast = false;
    let mut shape = Shape::Token;
    p.whole_shape_into(&mut shape).map_err(XlaError::Parse)?;
    Ok(shape)
}

/// Parses a layout on its own (`{1,0:T(8,128)}`), for a shape of the given rank.
pub fn parse_layout(text: &str, rank: usize) -> Result<Layout> {
    let mut p = Parser::new(text);
    let mut layout = Layout::with_minor_to_major(MinorToMajor::new());
    p.skip()
        .and_then(|()| p.layout_into(rank, &mut layout))
        .and_then(|()| p.skip())
        .map_err(XlaError::Parse)?;
    if p.pos < text.len() {
        return Err(XlaError::Parse(
            p.error_at(p.pos, format!("expected end of layout{}", p.found())),
        ));
    }
    Ok(layout)
}

/// The value and length of the run of 1 to 7 decimal digits that starts `word` (8 bytes of text, the
/// first in the lowest byte), without a branch per digit; `None` when it starts with no digit or with 8
/// (the caller then reads digit by digit).
#[inline]
fn swar_digits(word: u64) -> Option<(i64, usize)> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let low7 = word & !HIGH;
    // Per byte, with no carry between bytes (each sum stays below 0x100): the high bit says
    // `b >= '0'`, then `b <= '9'`, then that the byte is ASCII.
    let at_least_0 = low7.wrapping_add(0x5050_5050_5050_5050) & HIGH;
    let at_most_9 = !low7.wrapping_add(0x4646_4646_4646_4646) & HIGH;
    let ascii = !word & HIGH;
    let digits = at_least_0 & at_most_9 & ascii;
    let n = ((!digits & HIGH).trailing_zeros() / 8) as usize;
    if n == 0 || n == 8 {
        return None;
    }
    // Keep the n digit values, moved to the top bytes: the low bytes become leading zeros.
    let mut v = (word & 0x0F0F_0F0F_0F0F_0F0F) << (8 * (8 - n));
    // Pairs, then quads, then all eight (the first digit is the most significant).
    v = v.wrapping_mul(10).wrapping_add(v >> 8);
    let pairs = 0x0000_00FF_0000_00FF;
    v = ((v & pairs)
        .wrapping_mul(0x000F_4240_0000_0064)
        .wrapping_add(((v >> 16) & pairs).wrapping_mul(0x0000_2710_0000_0001)))
        >> 32;
    // At most 7 digits: below 10^7.
    Some((v as i64, n))
}

/// The parser's own result: a boxed error keeps `Result<i64>` and `Result<()>` in registers on the hot
/// path; [`parse_shape`] and [`parse_layout`] turn it into an [`XlaError`].
type PResult<T> = std::result::Result<T, Box<ParseError>>;

mod attrs;
mod print;

impl FromStr for Shape {
    type Err = XlaError;
    fn from_str(s: &str) -> Result<Shape> {
        parse_shape(s)
    }
}

pub(crate) struct Parser<'a> {
    pub(crate) s: &'a str,
    pub(crate) pos: usize,
    /// Tuples, buffers and physical shapes `P(...)` open around the current position.
    depth: usize,
    /// Whether arrays in printed form take the fast path (`crate::fast`); off only to test it.
    fast: bool,
}

/// How deeply tuples, buffers and physical shapes (`{...:P(shape)}`) may nest in one shape. XLA's own shapes nest a few levels; the limit
/// keeps the work of parsing, printing and dropping a shape linear in its text and its recursion shallow.
pub const MAX_NESTING: usize = 128;

impl<'a> Parser<'a> {
    pub(crate) fn new(s: &'a str) -> Parser<'a> {
        Parser {
            s,
            pos: 0,
            depth: 0,
            fast: true,
        }
    }

    /// Enters a tuple, buffer or physical shape opened at `at`: an error past [`MAX_NESTING`] levels.
    fn nest(&mut self, at: usize) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return self.err(
                at,
                format!(
                    "shapes nest at most {MAX_NESTING} tuples, buffers or physical shapes deep"
                ),
            );
        }
        Ok(())
    }

    /// The error at offset `at`.
    #[cold]
    fn error_at(&self, at: usize, message: impl Into<String>) -> Box<ParseError> {
        Box::new(ParseError {
            input: self.s.to_string(),
            offset: at,
            message: message.into(),
        })
    }

    #[cold]
    pub(crate) fn err<T>(&self, at: usize, message: impl Into<String>) -> PResult<T> {
        Err(self.error_at(at, message))
    }

    /// `expected {what}, found ...` at the current position.
    #[cold]
    fn expected<T>(&self, what: &str) -> PResult<T> {
        self.err(self.pos, format!("expected {what}{}", self.found()))
    }

    fn bytes(&self) -> &'a [u8] {
        &self.s.as_bytes()[self.pos..]
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    #[cold]
    pub(crate) fn found(&self) -> String {
        match self.s[self.pos..].chars().next() {
            Some(c) => format!(", found {c:?}"),
            None => ", found end of input".to_string(),
        }
    }

    /// Skips whitespace and comments.
    #[inline]
    pub(crate) fn skip(&mut self) -> PResult<()> {
        // One comparison for the common case: every whitespace byte is at most b' '.
        match self.peek() {
            Some(b) if b <= b' ' || b == b'/' => self.skip_slow(),
            _ => Ok(()),
        }
    }

    fn skip_slow(&mut self) -> PResult<()> {
        let b = self.s.as_bytes();
        loop {
            while b.get(self.pos).is_some_and(|c| c.is_ascii_whitespace()) {
                self.pos += 1;
            }
            match (b.get(self.pos), b.get(self.pos + 1)) {
                (Some(b'/'), Some(b'*')) => match self.s[self.pos + 2..].find("*/") {
                    Some(end) => self.pos += 2 + end + 2,
                    None => return self.err(self.pos, "unterminated /* comment"),
                },
                (Some(b'/'), Some(b'/')) => {
                    self.pos = self.s[self.pos..]
                        .find('\n')
                        .map_or(self.s.len(), |e| self.pos + e + 1);
                }
                _ => return Ok(()),
            }
        }
    }

    /// Skips, then consumes the byte `c` if it is next.
    #[inline]
    fn eat_byte(&mut self, c: u8) -> PResult<bool> {
        if self.peek() == Some(c) {
            self.pos += 1;
            return Ok(true);
        }
        self.skip()?;
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Skips, then consumes the byte `c` or fails with `expected {what}`.
    #[inline]
    fn expect_byte(&mut self, c: u8, what: &str) -> PResult<()> {
        if self.eat_byte(c)? {
            Ok(())
        } else {
            self.expected(what)
        }
    }

    /// A lowercase word `[a-z][a-z0-9]*` (element types, `b`).
    fn word(&mut self) -> &'a str {
        let b = self.bytes();
        let n = if b.first().is_some_and(|c| c.is_ascii_lowercase()) {
            b.iter()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                .count()
        } else {
            0
        };
        let w = &self.s[self.pos..self.pos + n];
        self.pos += n;
        w
    }

    /// A decimal integer with an optional `-`, within `i64`.
    #[inline]
    pub(crate) fn int(&mut self) -> PResult<i64> {
        self.skip()?;
        let b = self.s.as_bytes();
        let at = self.pos;
        let neg = b.get(at) == Some(&b'-');
        let start = at + usize::from(neg);
        let mut end = start;
        let mut magnitude: u64 = 0;
        while let Some(&c) = b.get(end) {
            let digit = c.wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            magnitude = magnitude.wrapping_mul(10).wrapping_add(u64::from(digit));
            end += 1;
        }
        if end == start {
            self.pos = start;
            return self.expected("an integer");
        }
        self.pos = end;
        // Up to 18 digits cannot overflow; longer literals are re-read with checks.
        let magnitude = if end - start <= 18 {
            Some(magnitude)
        } else {
            b[start..end].iter().try_fold(0u64, |m, &c| {
                m.checked_mul(10)?.checked_add(u64::from(c - b'0'))
            })
        };
        let value = magnitude.and_then(|m| {
            if neg {
                0i64.checked_sub_unsigned(m)
            } else {
                i64::try_from(m).ok()
            }
        });
        match value {
            Some(v) => Ok(v),
            None => self.err(
                at,
                format!(
                    "integer {} does not fit in 64 bits (XLA would silently wrap it)",
                    &self.s[at..end]
                ),
            ),
        }
    }

    /// A run of 1 to 18 digits at the current position, consumed; `None` (nothing consumed) when there
    /// is no digit or more than 18 (then [`Parser::int`] reads it with overflow checks).
    #[inline]
    pub(crate) fn small_uint(&mut self) -> Option<i64> {
        let b = self.bytes();
        if let Some(chunk) = b.get(..8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            if let Some((v, n)) = swar_digits(u64::from_le_bytes(word)) {
                self.pos += n;
                return Some(v);
            }
        }
        let mut v: i64 = 0;
        let mut n = 0;
        while let Some(&c) = b.get(n) {
            let digit = c.wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            if n == 18 {
                return None;
            }
            // At most 18 digits: below 10^18, far from overflow.
            v = v * 10 + i64::from(digit);
            n += 1;
        }
        if n == 0 {
            return None;
        }
        self.pos += n;
        Some(v)
    }

    #[inline]
    fn non_negative(&mut self, what: &str) -> PResult<i64> {
        self.skip()?;
        if let Some(v) = self.small_uint() {
            return Ok(v);
        }
        let at = self.pos;
        let v = self.int()?;
        if v < 0 {
            return self.err(at, format!("{what} must not be negative, got {v}"));
        }
        Ok(v)
    }

    /// Parses the whole text as one shape into `out` (trailing whitespace and comments allowed).
    fn whole_shape_into(&mut self, out: &mut Shape) -> PResult<()> {
        self.shape_into(out)?;
        self.skip()?;
        if self.pos < self.s.len() {
            return self.err(self.pos, format!("expected end of shape{}", self.found()));
        }
        Ok(())
    }

    /// Parses one shape into `out` (built in place: a shape is large, and moving it costs).
    pub(crate) fn shape_into(&mut self, out: &mut Shape) -> PResult<()> {
        self.skip()?;
        if self.fast && self.array_fast(out) {
            return Ok(());
        }
        let at = self.pos;
        if self.peek() == Some(b'(') {
            self.pos += 1;
            self.nest(at)?;
            let mut elems: Vec<Shape> = Vec::new();
            if !self.eat_byte(b')')? {
                loop {
                    elems.push(Shape::Token);
                    if let Some(last) = elems.last_mut() {
                        self.shape_into(last)?;
                    }
                    if self.eat_byte(b',')? {
                        continue;
                    }
                    self.expect_byte(b')', "',' or ')' in the tuple")?;
                    break;
                }
            }
            self.depth -= 1;
            *out = Shape::Tuple(elems);
            return Ok(());
        }
        let word = self.word();
        if word == "b" && self.peek() == Some(b'(') {
            self.nest(self.pos)?;
            self.pos += 1;
            self.skip()?;
            let inner_at = self.pos;
            let mut inner = Box::new(Shape::Token);
            self.shape_into(&mut inner)?;
            if !matches!(*inner, Shape::Array(_)) {
                return self.err(
                    inner_at,
                    "a buffer b(...) holds an array, not a tuple, token or opaque",
                );
            }
            self.expect_byte(b')', "')' closing b(")?;
            self.depth -= 1;
            *out = Shape::Buffer(inner);
            return Ok(());
        }
        let Some(ty) = PrimitiveType::from_name(word) else {
            return self.unknown_type(at);
        };
        self.expect_byte(b'[', "'[' after the element type")?;
        let dims_at = self.pos;
        if !ty.is_array_type() {
            if !self.eat_byte(b']')? {
                // Read the dimensions for their errors first, as for an array.
                let mut dims = Dims::new();
                self.dims_into(&mut dims)?;
                return self.err(dims_at, format!("{ty}[] has no dimensions"));
            }
            self.skip()?;
            if self.layout_follows() {
                return self.err(
                    self.pos,
                    format!("{ty}[] cannot have a layout (XLA aborts on one)"),
                );
            }
            *out = if ty == PrimitiveType::Token {
                Shape::Token
            } else {
                Shape::Opaque
            };
            return Ok(());
        }
        *out = Shape::Array(ArrayShape {
            element_type: ty,
            dims: Dims::new(),
            layout: Layout::with_minor_to_major(MinorToMajor::new()),
        });
        let Shape::Array(a) = out else {
            return Ok(());
        };
        if !self.eat_byte(b']')? {
            self.dims_into(&mut a.dims)?;
        }
        self.skip()?;
        let rank = a.dims.len();
        if self.layout_follows() {
            self.layout_into(rank, &mut a.layout)?;
        } else {
            a.layout.minor_to_major.extend((0..rank as i64).rev());
        }
        Ok(())
    }

    /// `dim (',' dim)* ']'` after a `[` that is not followed by `]`.
    fn dims_into(&mut self, dims: &mut Dims) -> PResult<()> {
        loop {
            // Printed text has no space inside `[...]`: a plain size read directly is the common case.
            let d = match self.small_uint() {
                Some(v) => Dim::Static(v),
                None => self.dim()?,
            };
            dims.push(d);
            if self.eat_separator(b']')? {
                return Ok(());
            }
        }
    }

    /// After a list item: `,` (false: another item follows) or `close` (true: the list ends).
    #[inline]
    fn eat_separator(&mut self, close: u8) -> PResult<bool> {
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(false)
            }
            Some(c) if c == close => {
                self.pos += 1;
                Ok(true)
            }
            _ => {
                if self.eat_byte(b',')? {
                    return Ok(false);
                }
                let what = match close {
                    b']' => "',' or ']' in the dimensions",
                    _ => "',' or ')' in the tile",
                };
                self.expect_byte(close, what).map(|()| true)
            }
        }
    }

    /// The error for a word at `at` that is not an element type.
    #[cold]
    fn unknown_type<T>(&self, at: usize) -> PResult<T> {
        let shown = &self.s[at..];
        let word_end = shown
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(shown.len());
        let w = &shown[..word_end];
        let hint = if PrimitiveType::from_name(&w.to_ascii_lowercase()).is_some() {
            " (element types are lowercase)"
        } else {
            ""
        };
        if w.is_empty() {
            self.err(at, format!("expected a shape{}", self.found()))
        } else if hint.is_empty() {
            let names: Vec<&str> = PrimitiveType::ALL.iter().map(|t| t.name()).collect();
            self.err(
                at,
                format!(
                    "unknown element type {w:?}; the element types are {}",
                    names.join(", ")
                ),
            )
        } else {
            self.err(at, format!("unknown element type {w:?}{hint}"))
        }
    }

    fn dim(&mut self) -> PResult<Dim> {
        self.skip()?;
        match self.peek() {
            Some(b'0'..=b'9') => {
                // The common case: a plain size.
                Ok(Dim::Static(self.non_negative("a dimension size")?))
            }
            Some(b'?') => {
                self.pos += 1;
                Ok(Dim::Unbounded)
            }
            _ if self.bytes().starts_with(b"<=") => {
                self.pos += 2;
                Ok(Dim::Bounded(self.non_negative("a dimension bound")?))
            }
            _ => Ok(Dim::Static(self.non_negative("a dimension size")?)),
        }
    }

    /// `{` starts a layout only when followed by an integer or `:` (as in XLA).
    fn layout_follows(&self) -> bool {
        if self.peek() != Some(b'{') {
            return false;
        }
        let mut probe = Parser::new(self.s);
        probe.pos = self.pos + 1;
        if probe.skip().is_err() {
            return false;
        }
        matches!(probe.peek(), Some(b'0'..=b'9' | b':' | b'-'))
    }

    /// Parses a layout of a rank-`rank` shape into `layout` (which holds an empty `minor_to_major` and
    /// every attribute at its default).
    pub(crate) fn layout_into(&mut self, rank: usize, layout: &mut Layout) -> PResult<()> {
        self.skip()?;
        let open = self.pos;
        self.expect_byte(b'{', "'{' opening the layout")?;
        self.skip()?;
        if self.peek().is_some_and(|c| c.is_ascii_digit() || c == b'-') {
            loop {
                let d = match self.small_uint() {
                    Some(v) => v,
                    None => self.non_negative("a minor_to_major entry")?,
                };
                layout.minor_to_major.push(d);
                if self.peek() == Some(b',') {
                    self.pos += 1;
                } else if !self.eat_byte(b',')? {
                    break;
                }
            }
        }
        if layout.minor_to_major.len() != rank {
            return self.err(
                open,
                format!(
                    "the layout lists {} dimensions but the shape has rank {rank}",
                    layout.minor_to_major.len()
                ),
            );
        }
        if self.eat_byte(b':')? {
            self.attributes(layout)?;
        }
        self.expect_byte(b'}', "'}' or an attribute in the order T L # * E S SC P M")
    }
}
