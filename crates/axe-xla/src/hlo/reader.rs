//! The module reader: one pass over the bytes, borrowing every piece of text.

use super::ident::{self, Named};
use super::instruction::Parts;
use super::names::NameTable;
use super::scan::module_error;
use super::{Attribute, Attributes, Computation, Instruction, Module};
use crate::error::Result;

/// Reads an HLO text module.
///
/// ```
/// let text = "HloModule m\n\nENTRY %main (p: f32[2]) -> f32[2] {\n  ROOT %p = f32[2]{0} parameter(0)\n}\n\n";
/// let m = axe_xla::hlo::parse_module(text)?;
/// assert_eq!(m.computations[0].instructions[0].opcode(), "parameter");
/// assert_eq!(m.to_string(), text);
/// # Ok::<(), axe_xla::XlaError>(())
/// ```
///
/// MLIR text (JAX's default `lower(...).as_text()`) is an error that says so, and how to get HLO text.
pub fn parse_module(text: &str) -> Result<Module<'_>> {
    parse_module_named(text).map(|(m, _)| m)
}

/// [`parse_module`], with each computation's instructions by name (every one of them, each name once)
/// where [`super::names::kept`], as checking the module found them, in the order of the computations.
pub(crate) fn parse_module_named(text: &str) -> Result<(Module<'_>, Vec<Option<NameTable>>)> {
    Reader::new(text)
        .module()
        .map_err(|e| super::mlir::explained(text, e))
}

/// A position in a text being read.
#[derive(Clone)]
pub(crate) struct Reader<'a> {
    pub(super) s: &'a str,
    pub(super) b: &'a [u8],
    pub(super) pos: usize,
    /// The last two shapes read, most recent first: dumps repeat a few shapes over and over, and a shape
    /// that is the same text again needs no bracket scan.
    recent: [&'a str; 2],
}

use super::header::TABLE_HEADINGS;

/// The attribute names of one list, to find one given twice (XLA: "attribute X already exists"): the
/// first few compared in place (a list holds one to four), the rest hashed.
#[derive(Default)]
struct SeenNames<'a> {
    few: [&'a str; 4],
    count: usize,
    more: Option<foldhash::HashSet<&'a str>>,
}

impl<'a> SeenNames<'a> {
    /// Notes `name`: `false` exactly when it was noted before.
    fn insert(&mut self, name: &'a str) -> bool {
        let few = &self.few[..self.count.min(self.few.len())];
        if few.iter().any(|n| super::opcheck::same(n, name)) {
            return false;
        }
        if let Some(slot) = self.few.get_mut(self.count) {
            *slot = name;
            self.count += 1;
            return true;
        }
        self.more.get_or_insert_with(Default::default).insert(name)
    }
}

impl<'a> Reader<'a> {
    /// A reader at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Reader::at(text, 0)
    }

    /// `, name=value` pairs, as long as a ',' follows (line breaks are white space): the text they span.
    fn attributes(&mut self) -> Result<Attributes<'a>> {
        let mut first = None;
        let mut end = self.pos;
        let mut flags = Attributes::CANONICAL;
        let mut seen = SeenNames::default();
        loop {
            let before = self.pos;
            // The end of the line, and the next line starting with no ',' or comment (the common end of
            // a list): no attribute follows, which skipping and looking would find too.
            if self.peek() == Some(b'\n') {
                let mut next = self.pos + 1;
                while matches!(self.b.get(next), Some(b' ' | b'\t' | b'\r')) {
                    next += 1;
                }
                if !matches!(self.b.get(next), Some(b',' | b'/' | b'\n') | None) {
                    let start = first.unwrap_or(end);
                    return Ok(Attributes::with_flags(&self.s[start..end], flags));
                }
            }
            self.skip(true)?;
            let comma = self.pos;
            let Some(a) = self.attribute()? else {
                self.pos = before;
                let start = first.unwrap_or(end);
                return Ok(Attributes::with_flags(&self.s[start..end], flags));
            };
            let name_at = a.name.as_ptr() as usize - self.s.as_ptr() as usize;
            let value_at = a.value.as_ptr() as usize - self.s.as_ptr() as usize;
            if !seen.insert(a.name) {
                return self.error(name_at, format!("attribute {} already exists", a.name));
            }
            // Written as printed: `, name=value` right after the previous value.
            let printed = (first.is_none() || comma == end)
                && name_at == comma + 2
                && self.b[comma + 1] == b' '
                && value_at == name_at + a.name.len() + 1;
            if !printed {
                flags &= !Attributes::CANONICAL;
            }
            // The values XLA reads as data of every instruction, checked while they are at hand.
            let checked = match a.name {
                "sharding" => {
                    flags |= Attributes::SHARDING;
                    Ok(())
                }
                // Read and checked by `attribute`.
                "metadata" => Ok(()),
                "frontend_attributes" => super::attrcheck::frontend_attributes(a.value),
                "statistics" => super::attrcheck::statistics(a.value),
                // Per-opcode values XLA's parser reads as data (the same form wherever they stand);
                // none is an attribute every instruction may carry.
                "channel_id" | "padding" | "window" | "dim_labels" => {
                    flags |= Attributes::EXTRA;
                    super::attrvalues::check(a.name, a.value)
                }
                "control-predecessors" => {
                    flags |= Attributes::CONTROL;
                    Ok(())
                }
                name => {
                    if !super::attrcheck::is_common(name) {
                        flags |= Attributes::EXTRA;
                    }
                    if super::attributes::CALLING_ATTRIBUTES.contains(&name) {
                        flags |= Attributes::CALLS;
                    }
                    Ok(())
                }
            };
            if let Err((off, why)) = checked {
                return self.error(value_at + off, why);
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
        let b = self.b;
        let mut i = start;
        // The two names on most lines, whole, without the byte loop (it would stop at the same '=').
        if matches!(b.get(start..start + 9), Some(b"metadata=" | b"sharding=")) {
            i += 8;
        }
        while i < b.len() && !super::scan::NAME_END[usize::from(b[i])] {
            i += 1;
        }
        self.pos = i;
        let name = &self.s[start..self.pos];
        if name.is_empty() || self.peek() != Some(b'=') {
            return self.error(
                self.pos,
                format!("expected an attribute name=value{}", self.found()),
            );
        }
        self.pos += 1;
        self.skip(true)?;
        if <&[u8; 8]>::try_from(name.as_bytes()).is_ok_and(|n| n == b"metadata") {
            return self.metadata().map(|value| Some(Attribute { name, value }));
        }
        let value = self.value()?;
        Ok(Some(Attribute { name, value }))
    }

    /// A `metadata=` value, read and checked as XLA reads it in one scan where it is written plainly
    /// (`{key=value ...}` followed by the end of the value); otherwise read as any value and checked.
    fn metadata(&mut self) -> Result<&'a str> {
        let start = self.pos;
        if self.peek() == Some(b'{') {
            if let Ok(len) = super::attrcheck::metadata_len(&self.s[start..]) {
                let end = start + len;
                if self.b.get(end).is_none_or(|c| {
                    matches!(c, b' ' | b'\t' | b',' | b'\n' | b'\r' | b')' | b']' | b'}')
                }) && !self.b[end..].starts_with(b" {")
                {
                    self.pos = end;
                    return Ok(&self.s[start..end]);
                }
            }
        }
        let value = self.value()?;
        if let Err((off, why)) = super::attrcheck::metadata(value) {
            return self.error(start + off, why);
        }
        Ok(value)
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
            self.layout()?;
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
        if let Err((off, why)) = ident::check_scanned(name, Named::Instruction) {
            return self.error(name_at + off, why);
        }
        self.skip(true)?;
        self.expect(b'=', "'=' after the instruction name")?;
        self.skip(true)?;
        // A shape, unless the next word is directly the opcode.
        let shape_text = if self.at_shape() { self.shape()? } else { "" };
        self.skip(true)?;
        let op_start = self.pos;
        let b = self.b;
        let mut i = op_start;
        while i < b.len() && super::scan::OPCODE_BYTES[usize::from(b[i])] {
            i += 1;
        }
        self.pos = i;
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

    /// `name`, read at byte `at`, checked as XLA's lexer reads the name of a `named` ([`ident::check`]),
    /// or the error at its first wrong character.
    fn identifier(&self, at: usize, name: &str, named: Named) -> Result<()> {
        match ident::check(name, named) {
            Ok(()) => Ok(()),
            Err((off, why)) => self.error(at + off, why),
        }
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
        let mut c = self.computation_head()?;
        match self.body(c.name, &mut c.instructions, usize::MAX)? {
            Some(attributes) => {
                c.attributes = attributes;
                // A large computation gives back the room its list grew by (up to half of it).
                if c.instructions.capacity() - c.instructions.len() > 4096 {
                    c.instructions.shrink_to_fit();
                }
            }
            None => {
                return self.error(
                    self.pos,
                    format!("computation {} is never closed with '}}'", c.name),
                )
            }
        }
        Ok(c)
    }

    /// `ENTRY? NAME signature? {`: the computation, without instructions yet.
    pub(super) fn computation_head(&mut self) -> Result<Computation<'a>> {
        let is_entry = self.eat_word("ENTRY");
        self.skip(true)?;
        let name_at = self.pos;
        let name = self.name("a computation name")?;
        self.identifier(name_at, name, Named::Computation)?;
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
        Ok(Computation {
            is_entry,
            name,
            signature,
            instructions: Vec::new(),
            attributes: Attributes::default(),
        })
    }

    /// The instructions of computation `name` into `instructions`, until its closing brace (then the
    /// attributes after it, `}, execution_thread="host"`) or until white space and comments before the
    /// next instruction reach `end` (then `None`, the reader before that instruction or the brace).
    pub(super) fn body(
        &mut self,
        name: &str,
        instructions: &mut Vec<Instruction<'a>>,
        end: usize,
    ) -> Result<Option<Attributes<'a>>> {
        loop {
            self.skip(true)?;
            if self.pos >= end {
                return Ok(None);
            }
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    // The list grew by doubling: what it holds, not what it might have held, stays.
                    instructions.shrink_to_fit();
                    return Ok(Some(self.attributes()?));
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
    }

    fn module(&mut self) -> Result<(Module<'a>, Vec<Option<NameTable>>)> {
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
            self.identifier(start, &name, Named::Module)?;
            attributes = self.attributes()?;
            super::header::check_attributes(self.s, &attributes)?;
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
        if !tables.is_empty() {
            let after = self.s[tables_end..]
                .find(|c: char| !c.is_whitespace())
                .map_or(self.s.len(), |k| tables_end + k);
            super::header::check_tables(self.s, tables, after)?;
        }
        let (computations, names) = super::pieces::read_checked(self.s, self.pos)?;
        if computations.is_empty() {
            // As XLA's parser: a module has at least one computation.
            let at = self.s[self.pos..]
                .find(|c: char| !c.is_whitespace())
                .map_or(self.s.len(), |k| self.pos + k);
            return self.error(
                at,
                "expected a computation (ENTRY %main (p: f32[2]) -> f32[2] { ... }): a module has at least one",
            );
        }
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
        Ok((module, names))
    }
}
