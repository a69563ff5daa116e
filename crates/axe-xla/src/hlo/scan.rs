//! Scanning HLO text: blanks and comments, names, brackets, strings, attribute values, top-level
//! splitting, and errors that point at a byte with `line:col` and a caret.

use super::reader::Reader;
use crate::error::{Result, XlaError};

/// Bytes the bracket scanner stops at: brackets, quotes, '/' (a comment may start there).
const SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    let special = b"()[]{}\"/";
    while i < special.len() {
        t[special[i] as usize] = true;
        i += 1;
    }
    t
};

/// What [`Reader::skip_more`] skips: 1 for spaces, tabs and '\r', 2 for '\n'.
const BLANKS: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b' ' as usize] = 1;
    t[b'\t' as usize] = 1;
    t[b'\r' as usize] = 1;
    t[b'\n' as usize] = 2;
    t
};

/// How many brackets [`Reader::balanced`] tracks without allocating.
const INLINE_DEPTH: usize = 64;

/// The bytes of names: letters, digits, `_ . - % $`.
const NAME_BYTES: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'%' | b'$');
        c += 1;
    }
    t
};

#[inline]
pub(super) fn is_name_byte(c: u8) -> bool {
    NAME_BYTES[c as usize]
}

/// The first '"' or '\\' in `b` at or after `i`, looked for eight bytes at a time (strings in dumps are
/// short: no call, no setup).
#[inline]
pub(crate) fn quote_or_escape(b: &[u8], i: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let rest = b.get(i..)?;
    let mut words = rest.chunks_exact(8);
    let mut at = i;
    for chunk in words.by_ref() {
        let w = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).unwrap_or_default());
        let q = w ^ (ONES * u64::from(b'"'));
        let e = w ^ (ONES * u64::from(b'\\'));
        // The lowest byte flagged is the first zero byte of `q` or `e` (flags above it may be borrows).
        let hit = ((q.wrapping_sub(ONES) & !q) | (e.wrapping_sub(ONES) & !e)) & HIGHS;
        if hit != 0 {
            return Some(at + (hit.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&c| c == b'"' || c == b'\\')
        .map(|k| at + k)
}

/// The bytes of opcodes: letters, digits, `-`, `_`, `.`.
pub(super) const OPCODE_BYTES: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
        c += 1;
    }
    t
};

/// Bytes that end an attribute name (see [`Reader::attribute`]).
pub(super) const NAME_END: [bool; 256] = {
    let mut t = [false; 256];
    let ends = b"=,\n\r \t{}()";
    let mut k = 0;
    while k < ends.len() {
        t[ends[k] as usize] = true;
        k += 1;
    }
    t
};

/// Byte classes of plain operand lists (see [`plain_pieces`]).
const PLAIN_NAME: u8 = 0;
const PLAIN_BLANK: u8 = 1;
const PLAIN_COMMA: u8 = 2;
const PLAIN_OTHER: u8 = 3;

const PLAIN: [u8; 256] = {
    let mut t = [PLAIN_OTHER; 256];
    let mut c = 0;
    while c < 256 {
        if NAME_BYTES[c] {
            t[c] = PLAIN_NAME;
        }
        c += 1;
    }
    t[b' ' as usize] = PLAIN_BLANK;
    t[b',' as usize] = PLAIN_COMMA;
    t
};

/// The pieces of `text` between commas, in one pass, as long as they hold only name bytes and spaces:
/// `each` gets every piece that is not blank, without the spaces around it, in order (what splitting at
/// each ',' and trimming spaces gives). Answers how many pieces `each` got, and where the first piece
/// holding any other byte starts (`None` when there is none): before that piece no bracket or string was
/// opened, so the general reader takes over there as if it had read from the start.
pub(crate) fn plain_pieces<'s, E>(
    text: &'s str,
    mut each: impl FnMut(&'s str) -> std::result::Result<(), E>,
) -> std::result::Result<(usize, Option<usize>), E> {
    let b = text.as_bytes();
    let mut count = 0;
    // The start of the piece at hand, and of its first and past its last name byte.
    let mut piece = 0;
    let mut first = usize::MAX;
    let mut last = 0;
    let mut i = 0;
    while i < b.len() {
        match PLAIN[usize::from(b[i])] {
            PLAIN_NAME => {
                if first == usize::MAX {
                    first = i;
                }
                i += 1;
                // Four bytes at a time while all are name bytes, then one at a time.
                while let Some(&[p, q, r, s]) = b.get(i..i + 4) {
                    let t = |c: u8| PLAIN[usize::from(c)];
                    if t(p) | t(q) | t(r) | t(s) != PLAIN_NAME {
                        break;
                    }
                    i += 4;
                }
                while i < b.len() && PLAIN[usize::from(b[i])] == PLAIN_NAME {
                    i += 1;
                }
                last = i;
                continue;
            }
            PLAIN_BLANK => {}
            PLAIN_COMMA => {
                if first != usize::MAX {
                    // ASCII bytes only: `first..last` lies on char boundaries.
                    each(&text[first..last])?;
                    count += 1;
                    first = usize::MAX;
                }
                piece = i + 1;
            }
            _ => return Ok((count, Some(piece))),
        }
        i += 1;
    }
    if first != usize::MAX {
        each(&text[first..last])?;
        count += 1;
    }
    Ok((count, None))
}

/// The error for byte `at` of module `text`: `line:col`, the message, the line and a caret.
pub(crate) fn module_error(text: &str, at: usize, message: impl Into<String>) -> XlaError {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let line_start = text[..at].rfind('\n').map_or(0, |p| p + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |p| at + p);
    let line_no = text.as_bytes()[..line_start]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
        + 1;
    let col = text[line_start..at].chars().count() + 1;
    let line = text[line_start..line_end].trim_end_matches('\r');
    let (source_line, caret_column) =
        axe_layout::caret_window(line, (at - line_start).min(line.len()));
    XlaError::Module {
        line: line_no,
        column: col,
        message: axe_layout::visible(&message.into()).into_owned(),
        source_line,
        caret_column,
    }
}

impl<'a> Reader<'a> {
    pub(super) fn error<T>(&self, at: usize, message: impl Into<String>) -> Result<T> {
        Err(module_error(self.s, at, message))
    }

    pub(super) fn line_col(&self, at: usize) -> (usize, usize) {
        let line_start = self.s[..at].rfind('\n').map_or(0, |p| p + 1);
        let line = self.b[..line_start].iter().filter(|&&c| c == b'\n').count() + 1;
        (line, self.s[line_start..at].chars().count() + 1)
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    pub(super) fn found(&self) -> String {
        match self.s[self.pos..].chars().next() {
            Some('\n') => ", found end of line".to_string(),
            Some(c) => format!(", found {c:?}"),
            None => ", found end of input".to_string(),
        }
    }

    /// Skips a comment at `pos`, if there is one. Returns whether it did.
    pub(super) fn skip_comment(&mut self) -> Result<bool> {
        if self.b[self.pos..].starts_with(b"/*") {
            match self.s[self.pos + 2..].find("*/") {
                Some(e) => self.pos += e + 4,
                None => return self.error(self.pos, "unterminated /* comment"),
            }
            Ok(true)
        } else if self.b[self.pos..].starts_with(b"//") {
            self.pos = self.s[self.pos..]
                .find('\n')
                .map_or(self.b.len(), |e| self.pos + e);
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Skips spaces, tabs and comments, and newlines too when `lines` is set.
    #[inline]
    pub(super) fn skip(&mut self, lines: bool) -> Result<()> {
        match self.peek() {
            // One space before a word (the common case) needs no loop.
            Some(b' ')
                if !matches!(
                    self.b.get(self.pos + 1),
                    Some(b' ' | b'\t' | b'\r' | b'\n' | b'/')
                ) =>
            {
                self.pos += 1;
                Ok(())
            }
            Some(b' ' | b'\t' | b'\r' | b'\n' | b'/') => self.skip_more(lines),
            _ => Ok(()),
        }
    }

    pub(super) fn skip_more(&mut self, lines: bool) -> Result<()> {
        // Bit 1: a blank; bit 2: a line break.
        let skipped = if lines { 3 } else { 1 };
        let b = self.b;
        let mut i = self.pos;
        loop {
            while i < b.len() && BLANKS[usize::from(b[i])] & skipped != 0 {
                i += 1;
            }
            self.pos = i;
            if i < b.len() && b[i] == b'/' && self.skip_comment()? {
                i = self.pos;
                continue;
            }
            return Ok(());
        }
    }

    pub(super) fn eat_word(&mut self, word: &str) -> bool {
        let end = self.pos + word.len();
        if self.b[self.pos..].starts_with(word.as_bytes())
            && self.b.get(end).is_none_or(|c| !is_name_byte(*c))
        {
            self.pos = end;
            true
        } else {
            false
        }
    }

    pub(super) fn name(&mut self, what: &str) -> Result<&'a str> {
        let start = self.pos;
        let b = self.b;
        let mut i = start;
        let t = |c: u8| NAME_BYTES[usize::from(c)];
        while let Some(&[p, q, r, s]) = b.get(i..i + 4) {
            if !(t(p) & t(q) & t(r) & t(s)) {
                break;
            }
            i += 4;
        }
        while i < b.len() && t(b[i]) {
            i += 1;
        }
        self.pos = i;
        if self.pos == start {
            return self.error(start, format!("expected {what}{}", self.found()));
        }
        Ok(&self.s[start..self.pos])
    }

    pub(super) fn expect(&mut self, byte: u8, what: &str) -> Result<()> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            self.error(self.pos, format!("expected {what}{}", self.found()))
        }
    }

    /// From a layout's `{` at `pos`, the position just after its `}`. Outside parentheses a layout
    /// holds only dimension numbers, `,`, `:`, whitespace, comments and attributes (`T(...)`,
    /// `SC(...)`, `#(...)`, `*(...)`: capitals, `#` or `*` and a parenthesized group, skipped as
    /// [`Reader::balanced`] does, since `P(...)` holds a shape); anything else there, such as the
    /// opcode after a layout whose `}` was left out (`f32[3,4]{1,0 parameter(0)`), is reported where
    /// it stands, rather than where some later `}` would have closed the layout.
    pub(crate) fn layout(&mut self) -> Result<usize> {
        let open_at = self.pos;
        let b = self.b;
        let mut i = open_at + 1;
        loop {
            match b.get(i) {
                Some(b'}') => {
                    self.pos = i + 1;
                    return Ok(self.pos);
                }
                Some(b'(') => {
                    self.pos = i;
                    i = self.balanced()?;
                }
                Some(b'/') => {
                    self.pos = i;
                    if !self.skip_comment()? {
                        break;
                    }
                    i = self.pos;
                }
                Some(
                    b'0'..=b'9'
                    | b','
                    | b':'
                    | b'-'
                    | b'#'
                    | b'*'
                    | b'A'..=b'Z'
                    | b' '
                    | b'\t'
                    | b'\n'
                    | b'\r',
                ) => i += 1,
                _ => break,
            }
        }
        self.pos = i;
        let word: String = self.s[i..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
            .take(40)
            .collect();
        let found = if word.is_empty() {
            self.found()
        } else {
            format!(", found {word:?}")
        };
        let (line, col) = self.line_col(open_at);
        self.error(
            i,
            format!("expected '}}' closing the layout opened at {line}:{col}{found}"),
        )
    }

    /// From an opening bracket at `pos`, the position just after its matching close (strings, nested
    /// brackets and comments respected).
    pub(crate) fn balanced(&mut self) -> Result<usize> {
        let open_at = self.pos;
        let b = self.b;
        // Brackets without strings or comments, nested 32 deep at most (`(%a, %b)`, `{1,0:T(8,128)}`,
        // `{devices=[2,2]<=[4]}`): the open ones held two bits each in a word. Anything else, or a
        // mismatch, goes to the general scan, which reads from the start again.
        let code = |c: u8| match c {
            b'(' | b')' => 1u64,
            b'[' | b']' => 2,
            _ => 3,
        };
        if !matches!(b.get(open_at), Some(b'(' | b'[' | b'{')) {
            return self.balanced_slowly();
        }
        let mut open = code(b[open_at]);
        let mut depth = 1u32;
        let mut i = open_at + 1;
        loop {
            // Four bytes at a time while none is special, then one at a time.
            while let Some(&[p, q, r, s]) = b.get(i..i + 4) {
                let t = |c: u8| SPECIAL[usize::from(c)];
                if t(p) | t(q) | t(r) | t(s) {
                    break;
                }
                i += 4;
            }
            while i < b.len() && !SPECIAL[usize::from(b[i])] {
                i += 1;
            }
            match b.get(i) {
                Some(&c @ (b'(' | b'[' | b'{')) if depth < 32 => {
                    open = open << 2 | code(c);
                    depth += 1;
                }
                Some(&c @ (b')' | b']' | b'}')) if open & 3 == code(c) => {
                    open >>= 2;
                    depth -= 1;
                    if depth == 0 {
                        self.pos = i + 1;
                        return Ok(i + 1);
                    }
                }
                _ => return self.balanced_slowly(),
            }
            i += 1;
        }
    }

    /// [`Reader::balanced`], for any bracket.
    fn balanced_slowly(&mut self) -> Result<usize> {
        let open_at = self.pos;
        // The closing bracket each open one expects: the first INLINE_DEPTH in place, deeper ones spilled.
        let mut inline = [0u8; INLINE_DEPTH];
        let mut spilled: Vec<u8> = Vec::new();
        let mut depth = 0usize;
        let b = self.b;
        let mut i = self.pos;
        while i < b.len() {
            let c = b[i];
            if !SPECIAL[c as usize] {
                i += 1;
                continue;
            }
            match c {
                b'(' | b'[' | b'{' => {
                    let want = match c {
                        b'(' => b')',
                        b'[' => b']',
                        _ => b'}',
                    };
                    if depth < INLINE_DEPTH {
                        inline[depth] = want;
                    } else {
                        spilled.push(want);
                    }
                    depth += 1;
                    i += 1;
                }
                b')' | b']' | b'}' => {
                    let want = match depth {
                        0 => None,
                        d if d <= INLINE_DEPTH => Some(inline[d - 1]),
                        _ => spilled.pop(),
                    };
                    if want != Some(c) {
                        self.pos = i;
                        let (line, col) = self.line_col(i);
                        let open = b[open_at] as char;
                        return self.error(
                            open_at,
                            format!(
                                "this {open:?} is not closed before the {:?} at {line}:{col}",
                                c as char
                            ),
                        );
                    }
                    depth -= 1;
                    i += 1;
                    if depth == 0 {
                        self.pos = i;
                        return Ok(i);
                    }
                }
                b'"' => {
                    self.pos = i;
                    self.string()?;
                    i = self.pos;
                }
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    self.pos = i;
                    self.skip_comment()?;
                    i = self.pos;
                }
                _ => i += 1,
            }
        }
        self.pos = i;
        self.error(open_at, "this bracket is never closed")
    }

    /// A string literal at `pos` (with backslash escapes).
    pub(super) fn string(&mut self) -> Result<()> {
        let start = self.pos;
        let mut i = self.pos + 1;
        while let Some(k) = quote_or_escape(self.b, i) {
            i = k;
            if self.b[i] == b'"' {
                self.pos = i + 1;
                return Ok(());
            }
            i += 2;
        }
        self.pos = self.b.len();
        self.error(start, "this string is never closed")
    }

    /// An attribute value: one token (brackets and strings may hold anything), ending at top-level
    /// white space, a ',' or a closing bracket it did not open. Line breaks are white space.
    pub(super) fn value(&mut self) -> Result<&'a str> {
        let start = self.pos;
        loop {
            match self.peek() {
                Some(b' ' | b'\t') => {
                    // A value goes on across blanks into a bracket (`mesh['x'=4] {'x'}`): no
                    // instruction or attribute starts with one.
                    let blanks = self.b[self.pos..]
                        .iter()
                        .take_while(|c| matches!(c, b' ' | b'\t'))
                        .count();
                    if self.pos > start
                        && matches!(self.b.get(self.pos + blanks), Some(b'{' | b'['))
                    {
                        self.pos += blanks;
                    } else {
                        break;
                    }
                }
                None | Some(b',' | b'\n' | b'\r' | b')' | b']' | b'}') => break,
                Some(b'(' | b'[' | b'{') => {
                    self.balanced()?;
                }
                Some(b'"') => self.string()?,
                Some(b'/') if self.b[self.pos..].starts_with(b"/*") => break,
                Some(_) => self.pos += 1,
            }
        }
        let v = &self.s[start..self.pos];
        if v.is_empty() {
            return self.error(start, "expected an attribute value");
        }
        Ok(v)
    }
}

/// The pieces of `s` between top-level occurrences of `sep` (outside brackets and strings), blank pieces
/// left out, one at a time (no allocation).
pub(crate) struct TopLevel<'s> {
    s: &'s str,
    sep: u8,
    at: usize,
}

impl<'s> TopLevel<'s> {
    /// The pieces of `s` split at `sep`.
    pub(crate) fn new(s: &'s str, sep: u8) -> Self {
        TopLevel { s, sep, at: 0 }
    }
}

impl<'s> Iterator for TopLevel<'s> {
    type Item = &'s str;

    fn next(&mut self) -> Option<&'s str> {
        let b = self.s.as_bytes();
        while self.at <= b.len() {
            let start = self.at;
            let mut depth = 0i32;
            let mut i = start;
            while i < b.len() {
                match b[i] {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth -= 1,
                    b'"' => {
                        i += 1;
                        while i < b.len() && b[i] != b'"' {
                            i += if b[i] == b'\\' { 2 } else { 1 };
                        }
                    }
                    c if c == self.sep && depth == 0 => break,
                    _ => {}
                }
                i += 1;
            }
            let end = i.min(b.len());
            self.at = end + 1;
            let piece = &self.s[start.min(end)..end];
            if !piece.trim().is_empty() {
                return Some(piece);
            }
        }
        None
    }
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
