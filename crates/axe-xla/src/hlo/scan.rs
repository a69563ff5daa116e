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
        message: message.into(),
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
            Some(b' ' | b'\t' | b'\r' | b'\n' | b'/') => self.skip_more(lines),
            _ => Ok(()),
        }
    }

    pub(super) fn skip_more(&mut self, lines: bool) -> Result<()> {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'\n' if lines => self.pos += 1,
                b'/' => {
                    if !self.skip_comment()? {
                        return Ok(());
                    }
                }
                _ => return Ok(()),
            }
        }
        Ok(())
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
        while self.peek().is_some_and(is_name_byte) {
            self.pos += 1;
        }
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

    /// From an opening bracket at `pos`, the position just after its matching close (strings, nested
    /// brackets and comments respected).
    pub(crate) fn balanced(&mut self) -> Result<usize> {
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
        while let Some(k) = memchr::memchr2(b'"', b'\\', &self.b[i.min(self.b.len())..]) {
            i += k;
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
