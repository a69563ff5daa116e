//! The module reader: one pass over the bytes, borrowing every piece of text.

use super::{Attribute, Computation, Instruction, Module};
use crate::error::{Result, XlaError};

/// Reads an HLO text module.
///
/// ```
/// let text = "HloModule m\n\nENTRY %main (p: f32[2]) -> f32[2] {\n  ROOT %p = f32[2]{0} parameter(0)\n}\n\n";
/// let m = axe_xla::hlo::parse_module(text)?;
/// assert_eq!(m.computations[0].instructions[0].opcode, "parameter");
/// assert_eq!(m.to_string(), text);
/// # Ok::<(), axe_xla::XlaError>(())
/// ```
pub fn parse_module(text: &str) -> Result<Module<'_>> {
    let mut r = Reader {
        s: text,
        b: text.as_bytes(),
        pos: 0,
    };
    r.module()
}

struct Reader<'a> {
    s: &'a str,
    b: &'a [u8],
    pos: usize,
}

const TABLE_HEADINGS: [&str; 4] = ["FileNames", "FunctionNames", "FileLocations", "StackFrames"];

fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b'%' | b'$')
}

impl<'a> Reader<'a> {
    fn error<T>(&self, at: usize, message: impl Into<String>) -> Result<T> {
        let at = at.min(self.s.len());
        let line_start = self.s[..at].rfind('\n').map_or(0, |p| p + 1);
        let line_end = self.s[at..].find('\n').map_or(self.s.len(), |p| at + p);
        let line_no = self.b[..line_start].iter().filter(|&&c| c == b'\n').count() + 1;
        let col = self.s[line_start..at].chars().count() + 1;
        let (source_line, caret_column) =
            axe_layout::caret_window(&self.s[line_start..line_end], at - line_start);
        Err(XlaError::Module {
            line: line_no,
            column: col,
            message: message.into(),
            source_line,
            caret_column,
        })
    }

    fn line_col(&self, at: usize) -> (usize, usize) {
        let line_start = self.s[..at].rfind('\n').map_or(0, |p| p + 1);
        let line = self.b[..line_start].iter().filter(|&&c| c == b'\n').count() + 1;
        (line, self.s[line_start..at].chars().count() + 1)
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn found(&self) -> String {
        match self.s[self.pos..].chars().next() {
            Some('\n') => ", found end of line".to_string(),
            Some(c) => format!(", found {c:?}"),
            None => ", found end of input".to_string(),
        }
    }

    /// Skips a comment at `pos`, if there is one. Returns whether it did.
    fn skip_comment(&mut self) -> Result<bool> {
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
    fn skip(&mut self, lines: bool) -> Result<()> {
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

    fn eat_word(&mut self, word: &str) -> bool {
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

    fn name(&mut self, what: &str) -> Result<&'a str> {
        let start = self.pos;
        while self.peek().is_some_and(is_name_byte) {
            self.pos += 1;
        }
        if self.pos == start {
            return self.error(start, format!("expected {what}{}", self.found()));
        }
        Ok(&self.s[start..self.pos])
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<()> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            self.error(self.pos, format!("expected {what}{}", self.found()))
        }
    }

    /// From an opening bracket at `pos`, the position just after its matching close (strings, nested
    /// brackets and comments respected).
    fn balanced(&mut self) -> Result<usize> {
        let open_at = self.pos;
        let mut stack: Vec<u8> = Vec::with_capacity(8);
        while let Some(c) = self.peek() {
            match c {
                b'(' | b'[' | b'{' => {
                    stack.push(match c {
                        b'(' => b')',
                        b'[' => b']',
                        _ => b'}',
                    });
                    self.pos += 1;
                }
                b')' | b']' | b'}' => {
                    if stack.pop() != Some(c) {
                        let (line, col) = self.line_col(self.pos);
                        let open = self.b[open_at] as char;
                        return self.error(
                            open_at,
                            format!(
                                "this {open:?} is not closed before the {:?} at {line}:{col}",
                                c as char
                            ),
                        );
                    }
                    self.pos += 1;
                    if stack.is_empty() {
                        return Ok(self.pos);
                    }
                }
                b'"' => self.string()?,
                b'/' if self.b[self.pos..].starts_with(b"/*") => {
                    self.skip_comment()?;
                }
                _ => self.pos += 1,
            }
        }
        self.error(open_at, "this bracket is never closed")
    }

    /// A string literal at `pos` (with backslash escapes).
    fn string(&mut self) -> Result<()> {
        let start = self.pos;
        self.pos += 1;
        while let Some(c) = self.peek() {
            match c {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => self.pos += 1,
            }
        }
        self.error(start, "this string is never closed")
    }

    /// An attribute value: until a top-level ',' or the end of the line.
    fn value(&mut self) -> Result<&'a str> {
        let start = self.pos;
        loop {
            match self.peek() {
                None | Some(b',') | Some(b'\n') | Some(b'\r') => break,
                Some(b'(' | b'[' | b'{') => {
                    self.balanced()?;
                }
                Some(b')' | b']' | b'}') => {
                    return self.error(
                        self.pos,
                        format!("unbalanced {:?}", self.b[self.pos] as char),
                    )
                }
                Some(b'"') => self.string()?,
                Some(_) => self.pos += 1,
            }
        }
        let v = self.s[start..self.pos].trim_end();
        if v.is_empty() {
            return self.error(start, "expected an attribute value");
        }
        Ok(v)
    }

    /// `, name=value` pairs up to the end of the line.
    fn attributes(&mut self) -> Result<Vec<Attribute<'a>>> {
        let mut out = Vec::new();
        loop {
            self.skip(false)?;
            if self.peek() != Some(b',') {
                return Ok(out);
            }
            self.pos += 1;
            self.skip(false)?;
            let start = self.pos;
            while self
                .peek()
                .is_some_and(|c| c != b'=' && c != b',' && c != b'\n' && c != b' ')
            {
                self.pos += 1;
            }
            let name = &self.s[start..self.pos];
            if name.is_empty() || self.peek() != Some(b'=') {
                return self.error(
                    self.pos,
                    format!("expected an attribute name=value{}", self.found()),
                );
            }
            self.pos += 1;
            let value = self.value()?;
            out.push(Attribute { name, value });
        }
    }

    /// A shape at `pos`: a tuple `( ... )` or `type[...]` with an optional layout `{...}`.
    fn shape(&mut self) -> Result<&'a str> {
        let start = self.pos;
        if self.peek() == Some(b'(') {
            self.balanced()?;
            return Ok(&self.s[start..self.pos]);
        }
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric()) {
            self.pos += 1;
        }
        if self.peek() != Some(b'[') {
            return self.error(start, format!("expected a shape{}", self.found()));
        }
        self.balanced()?;
        if self.peek() == Some(b'{') {
            self.balanced()?;
        }
        Ok(&self.s[start..self.pos])
    }

    fn instruction(&mut self) -> Result<Instruction<'a>> {
        let is_root = self.eat_word("ROOT");
        self.skip(false)?;
        let name = self.name("an instruction name")?;
        self.skip(false)?;
        self.expect(b'=', "'=' after the instruction name")?;
        self.skip(false)?;
        // A shape, unless the next word is directly the opcode.
        let word_start = self.pos;
        let shape_text = if self.peek() == Some(b'(') {
            self.shape()?
        } else {
            while self.peek().is_some_and(|c| c.is_ascii_alphanumeric()) {
                self.pos += 1;
            }
            let is_shape = self.peek() == Some(b'[');
            self.pos = word_start;
            if is_shape {
                self.shape()?
            } else {
                ""
            }
        };
        self.skip(false)?;
        let op_start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        {
            self.pos += 1;
        }
        let opcode = &self.s[op_start..self.pos];
        if opcode.is_empty() {
            return self.error(op_start, format!("expected an opcode{}", self.found()));
        }
        if self.peek() != Some(b'(') {
            return self.error(
                self.pos,
                format!("expected '(' after the opcode {opcode}{}", self.found()),
            );
        }
        let open = self.pos;
        let close = self.balanced()?;
        let operands_text = &self.s[open + 1..close - 1];
        let attributes = self.attributes()?;
        self.skip(false)?;
        match self.peek() {
            None | Some(b'\n') | Some(b'}') => {}
            _ => {
                return self.error(
                    self.pos,
                    format!(
                        "expected ', attribute=value' or the end of the instruction{}",
                        self.found()
                    ),
                )
            }
        }
        Ok(Instruction {
            is_root,
            name,
            shape_text,
            opcode,
            operands_text,
            attributes,
        })
    }

    fn computation(&mut self) -> Result<Computation<'a>> {
        let is_entry = self.eat_word("ENTRY");
        self.skip(false)?;
        let name = self.name("a computation name")?;
        self.skip(false)?;
        let sig_start = self.pos;
        let signature = if self.peek() == Some(b'(') {
            self.balanced()?;
            self.skip(false)?;
            if !self.b[self.pos..].starts_with(b"->") {
                return self.error(
                    self.pos,
                    format!("expected '->' and the result shape{}", self.found()),
                );
            }
            self.pos += 2;
            self.skip(false)?;
            self.shape()?;
            &self.s[sig_start..self.pos]
        } else {
            ""
        };
        self.skip(false)?;
        self.expect(b'{', "'{' opening the computation")?;
        let mut instructions = Vec::new();
        loop {
            self.skip(true)?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                None => {
                    return self.error(
                        self.pos,
                        format!("computation {name} is never closed with '}}'"),
                    )
                }
                _ => instructions.push(self.instruction()?),
            }
        }
        Ok(Computation {
            is_entry,
            name,
            signature,
            instructions,
        })
    }

    fn module(&mut self) -> Result<Module<'a>> {
        self.skip(true)?;
        if !self.eat_word("HloModule") {
            return self.error(self.pos, format!("expected 'HloModule'{}", self.found()));
        }
        self.skip(false)?;
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| !matches!(c, b',' | b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.pos += 1;
        }
        let name = &self.s[start..self.pos];
        if name.is_empty() {
            return self.error(start, "expected the module name");
        }
        let attributes = self.attributes()?;
        self.skip(false)?;
        if self.peek().is_some_and(|c| c != b'\n') {
            return self.error(
                self.pos,
                format!(
                    "expected ', attribute=value' or the end of the header{}",
                    self.found()
                ),
            );
        }
        // Stack-frame tables: heading lines and their numbered entries, blank lines between.
        self.skip(true)?;
        let tables_start = self.pos;
        let mut tables_end = tables_start;
        let mut cursor = tables_start;
        while cursor < self.b.len() {
            let line_end = self.s[cursor..]
                .find('\n')
                .map_or(self.b.len(), |e| cursor + e);
            let line = self.s[cursor..line_end].trim();
            let in_tables = tables_end > tables_start;
            let heading = TABLE_HEADINGS.contains(&line);
            let entry = in_tables && line.as_bytes().first().is_some_and(|c| c.is_ascii_digit());
            if heading || entry {
                tables_end = line_end;
            } else if !(in_tables && line.is_empty()) {
                break;
            }
            cursor = line_end + 1;
        }
        let tables = &self.s[tables_start..tables_end];
        self.pos = tables_end;
        let mut computations = Vec::new();
        loop {
            self.skip(true)?;
            if self.pos >= self.b.len() {
                break;
            }
            computations.push(self.computation()?);
        }
        Ok(Module {
            name,
            attributes,
            tables,
            computations,
        })
    }
}

/// Splits `s` at top-level occurrences of `sep` (outside brackets and strings).
pub(crate) fn split_top_level(s: &str, sep: u8) -> Vec<&str> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut i = 0;
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
            c if c == sep && depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < s.len() || !out.is_empty() {
        out.push(&s[start.min(s.len())..]);
    }
    out.retain(|p| !p.trim().is_empty());
    out
}
