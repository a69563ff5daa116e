//! The module reader: one pass over the bytes, borrowing every piece of text.

use super::instruction::Parts;
use super::{Attribute, Attributes, Computation, Instruction, Module};
use crate::error::{Result, XlaError};

/// Reads an HLO text module.
///
/// ```
/// let text = "HloModule m\n\nENTRY %main (p: f32[2]) -> f32[2] {\n  ROOT %p = f32[2]{0} parameter(0)\n}\n\n";
/// let m = axe_xla::hlo::parse_module(text)?;
/// assert_eq!(m.computations[0].instructions[0].opcode(), "parameter");
/// assert_eq!(m.to_string(), text);
/// # Ok::<(), axe_xla::XlaError>(())
/// ```
pub fn parse_module(text: &str) -> Result<Module<'_>> {
    Reader::new(text).module()
}

/// A position in a text being read.
#[derive(Clone)]
pub(crate) struct Reader<'a> {
    s: &'a str,
    b: &'a [u8],
    pos: usize,
    /// The last two shapes read, most recent first: dumps repeat a few shapes over and over, and a shape
    /// that is the same text again needs no bracket scan.
    recent: [&'a str; 2],
}

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

const TABLE_HEADINGS: [&str; 4] = ["FileNames", "FunctionNames", "FileLocations", "StackFrames"];

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
fn is_name_byte(c: u8) -> bool {
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
    /// A reader at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Reader::at(text, 0)
    }

    fn error<T>(&self, at: usize, message: impl Into<String>) -> Result<T> {
        Err(module_error(self.s, at, message))
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
    #[inline]
    fn skip(&mut self, lines: bool) -> Result<()> {
        match self.peek() {
            Some(b' ' | b'\t' | b'\r' | b'\n' | b'/') => self.skip_more(lines),
            _ => Ok(()),
        }
    }

    fn skip_more(&mut self, lines: bool) -> Result<()> {
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
    fn string(&mut self) -> Result<()> {
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
    fn value(&mut self) -> Result<&'a str> {
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

    /// `, name=value` pairs, as long as a ',' follows (line breaks are white space): the text they span.
    fn attributes(&mut self) -> Result<Attributes<'a>> {
        let mut first = None;
        let mut end = self.pos;
        let mut flags = Attributes::CANONICAL;
        loop {
            let before = self.pos;
            self.skip(true)?;
            let comma = self.pos;
            self.pos = before;
            let Some(a) = self.attribute()? else {
                self.pos = before;
                let start = first.unwrap_or(end);
                return Ok(Attributes::with_flags(&self.s[start..end], flags));
            };
            let name_at = a.name.as_ptr() as usize - self.s.as_ptr() as usize;
            let value_at = a.value.as_ptr() as usize - self.s.as_ptr() as usize;
            // Written as printed: `, name=value` right after the previous value.
            let printed = (first.is_none() || comma == end)
                && name_at == comma + 2
                && self.b[comma + 1] == b' '
                && value_at == name_at + a.name.len() + 1;
            if !printed {
                flags &= !Attributes::CANONICAL;
            }
            if super::validate::CALLS.contains(&a.name) {
                flags |= Attributes::CALLS;
            }
            if a.name == "sharding" {
                flags |= Attributes::SHARDING;
            }
            first.get_or_insert(comma);
            end = self.pos;
        }
    }

    /// The next `, name=value` (blanks and line breaks before it skipped), or `None` where no ',' follows.
    pub(crate) fn attribute(&mut self) -> Result<Option<Attribute<'a>>> {
        self.skip(true)?;
        if self.peek() != Some(b',') {
            return Ok(None);
        }
        self.pos += 1;
        self.skip(true)?;
        let start = self.pos;
        while self.peek().is_some_and(|c| {
            !matches!(
                c,
                b'=' | b',' | b'\n' | b'\r' | b' ' | b'\t' | b'{' | b'}' | b'(' | b')'
            )
        }) {
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
        self.skip(true)?;
        let value = self.value()?;
        Ok(Some(Attribute { name, value }))
    }

    /// A shape at `pos`: a tuple `( ... )` or `type[...]` with an optional layout `{...}`.
    fn shape(&mut self) -> Result<&'a str> {
        let start = self.pos;
        for k in 0..2 {
            let seen = self.recent[k];
            let end = start + seen.len();
            // A shape read before, again: scanning it would end at the same place, unless an array shape
            // without a layout is followed by one here.
            if !seen.is_empty()
                && self.b[start..].starts_with(seen.as_bytes())
                && (self.b.get(end) != Some(&b'{') || seen.ends_with('}'))
            {
                self.pos = end;
                self.recent = [seen, self.recent[0]];
                // The text at its own place: errors and positions refer to where each piece is.
                return Ok(&self.s[start..end]);
            }
        }
        let shape = self.scan_shape()?;
        self.recent = [shape, self.recent[0]];
        Ok(shape)
    }

    fn scan_shape(&mut self) -> Result<&'a str> {
        let start = self.pos;
        if self.peek() == Some(b'(') {
            self.balanced()?;
            return Ok(&self.s[start..self.pos]);
        }
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric()) {
            self.pos += 1;
        }
        if &self.s[start..self.pos] == "b" && self.peek() == Some(b'(') {
            // A buffer shape: b(array shape).
            self.balanced()?;
            return Ok(&self.s[start..self.pos]);
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

    /// Whether the word at `pos` opens a shape (`f32[`, `b(`, a tuple's `(`), rather than an opcode.
    fn at_shape(&mut self) -> bool {
        if self.peek() == Some(b'(') {
            return true;
        }
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric()) {
            self.pos += 1;
        }
        let word = &self.s[start..self.pos];
        let next = self.peek();
        self.pos = start;
        next == Some(b'[') || (word == "b" && next == Some(b'('))
    }

    fn instruction(&mut self) -> Result<Instruction<'a>> {
        let is_root = self.eat_word("ROOT");
        self.skip(true)?;
        let name_at = self.pos;
        let name = self.name("an instruction name")?;
        let bare = name.strip_prefix('%').unwrap_or(name);
        if crate::PrimitiveType::from_name(bare).is_some() || bare.is_empty() {
            return self.error(
                name_at,
                format!("expected an instruction name, found the element type {bare:?}"),
            );
        }
        self.skip(true)?;
        self.expect(b'=', "'=' after the instruction name")?;
        self.skip(true)?;
        // A shape, unless the next word is directly the opcode.
        let shape_text = if self.at_shape() { self.shape()? } else { "" };
        self.skip(true)?;
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
        self.skip(true)?;
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
        Instruction::new(
            self.s,
            Parts {
                is_root,
                name,
                shape: shape_text,
                opcode,
                operands: operands_text,
                attributes,
            },
        )
        .map_err(|e| module_error(self.s, name_at, e.to_string()))
    }

    /// A reader at byte `pos` of `text`.
    pub(crate) fn at(text: &'a str, pos: usize) -> Self {
        Reader {
            s: text,
            b: text.as_bytes(),
            pos,
            recent: [""; 2],
        }
    }

    /// Computations from `pos` on, until white space and comments after one reach `end` (or the text
    /// ends): the computations and the position where reading stopped (at or past `end`).
    pub(crate) fn computations_until(
        &mut self,
        end: usize,
    ) -> Result<(Vec<Computation<'a>>, usize)> {
        let mut computations = Vec::new();
        loop {
            self.skip(true)?;
            if self.pos >= end || self.pos >= self.b.len() {
                return Ok((computations, self.pos));
            }
            computations.push(self.computation()?);
        }
    }

    fn computation(&mut self) -> Result<Computation<'a>> {
        let is_entry = self.eat_word("ENTRY");
        self.skip(true)?;
        let name = self.name("a computation name")?;
        self.skip(true)?;
        let sig_start = self.pos;
        let signature = if self.peek() == Some(b'(') {
            self.balanced()?;
            self.skip(true)?;
            if !self.b[self.pos..].starts_with(b"->") {
                return self.error(
                    self.pos,
                    format!("expected '->' and the result shape{}", self.found()),
                );
            }
            self.pos += 2;
            self.skip(true)?;
            self.shape()?;
            &self.s[sig_start..self.pos]
        } else {
            ""
        };
        self.skip(true)?;
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
        // `}, execution_thread="host"`.
        let attributes = self.attributes()?;
        Ok(Computation {
            is_entry,
            name,
            signature,
            instructions,
            attributes,
        })
    }

    fn module(&mut self) -> Result<Module<'a>> {
        self.skip(true)?;
        let mut name = std::borrow::Cow::Borrowed("");
        let mut attributes = Attributes::default();
        let header = self.eat_word("HloModule");
        if header {
            self.skip(false)?;
            let start = self.pos;
            while self
                .peek()
                .is_some_and(|c| !matches!(c, b',' | b' ' | b'\t' | b'\n' | b'\r'))
            {
                self.pos += 1;
            }
            if self.pos == start {
                return self.error(start, "expected the module name");
            }
            name = std::borrow::Cow::Borrowed(&self.s[start..self.pos]);
            attributes = self.attributes()?;
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
        let computations = super::pieces::read_checked(self.s, self.pos)?;
        if !header {
            // XLA names a module without a header after its entry computation.
            let entry = computations
                .iter()
                .find(|c| c.is_entry)
                .or(computations.last())
                .map_or("", |c| c.name);
            name = std::borrow::Cow::Owned(format!(
                "module_{}",
                entry.strip_prefix('%').unwrap_or(entry)
            ));
        }
        let module = Module {
            name,
            attributes,
            tables,
            computations,
        };
        Ok(module)
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
