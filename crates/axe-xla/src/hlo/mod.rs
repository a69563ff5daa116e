//! Whole HLO text modules: read (zero-copy, borrowing from the text), printed back the way XLA prints.
//!
//! ```text
//! module      := 'HloModule' NAME (',' ATTR '=' VALUE)* tables? computation*
//! computation := 'ENTRY'? NAME signature? '{' instruction* '}'
//! instruction := 'ROOT'? NAME '=' shape? OPCODE '(' operands? ')' (',' ATTR '=' VALUE)*
//! ```
//!
//! Names may carry a `%` prefix. Attribute values nest brackets and hold strings with escapes; unknown
//! attributes are kept verbatim. Shapes are kept as text and parsed on demand ([`Instruction::shape`]),
//! so reading a large dump is a single scan. Errors carry `line:col`, the line and a caret.

pub mod calls;
mod literal;
pub mod per_device;
mod pieces;
mod reader;
pub mod sharding;
pub mod stats;
pub mod synth;
mod validate;

use std::fmt;

pub use reader::parse_module;

use crate::error::Result;
use crate::shape::Shape;

/// An HLO module: header, optional stack-frame tables, computations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module<'a> {
    /// The module name (for a module without an `HloModule` line, `module_` and the entry's name, as XLA
    /// names it).
    pub name: std::borrow::Cow<'a, str>,
    /// Header attributes (`entry_computation_layout={...}`, ...), values verbatim.
    pub attributes: Attributes<'a>,
    /// Text between the header and the first computation (the stack-frame tables of newer dumps),
    /// verbatim, without surrounding blank lines.
    pub tables: &'a str,
    /// The computations in the order written.
    pub computations: Vec<Computation<'a>>,
}

/// `name=value` with the value as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attribute<'a> {
    /// The attribute name.
    pub name: &'a str,
    /// Its value, verbatim.
    pub value: &'a str,
}

/// A list of attributes: the text `, a=b, c={...}` the reader checked, read again on each iteration, so that
/// a module of millions of instructions holds no list per instruction. Two lists are equal when they hold
/// the same names and values in the same order, however they were spaced.
#[derive(Clone, Copy, Debug, Default)]
pub struct Attributes<'a> {
    text: &'a str,
    /// What the reader saw: [`Attributes::CANONICAL`], [`Attributes::CALLS`], [`Attributes::SHARDING`].
    flags: u8,
}

impl<'a> Attributes<'a> {
    /// The text is written as printed (`, a=b, c=d`).
    pub(crate) const CANONICAL: u8 = 1;
    /// Some attribute names called computations (`calls=`, `to_apply=`, ...).
    pub(crate) const CALLS: u8 = 2;
    /// There is a `sharding=`.
    pub(crate) const SHARDING: u8 = 4;

    /// The list spanning `text`, which the reader has checked and found to be as `flags` say.
    pub(crate) fn with_flags(text: &'a str, flags: u8) -> Self {
        Attributes { text, flags }
    }

    /// Whether the text is written exactly as it prints.
    pub(crate) fn is_canonical(&self) -> bool {
        self.flags & Self::CANONICAL != 0
    }

    /// Whether some attribute names called computations.
    pub(crate) fn has_calls(&self) -> bool {
        self.flags & Self::CALLS != 0
    }

    /// The attributes in the order written.
    pub fn iter(&self) -> AttributeIter<'a> {
        AttributeIter {
            reader: reader::Reader::new(self.text),
        }
    }

    /// The value of attribute `name`, if present (the first, if written twice).
    pub fn get(&self, name: &str) -> Option<&'a str> {
        if name == "sharding" && self.flags & Self::SHARDING == 0 {
            return None;
        }
        self.iter().find(|a| a.name == name).map(|a| a.value)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// The text the list spans, from its first ',' to the end of its last value.
    pub fn as_str(&self) -> &'a str {
        self.text
    }
}

impl PartialEq for Attributes<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Attributes<'_> {}

impl<'a> IntoIterator for &Attributes<'a> {
    type Item = Attribute<'a>;
    type IntoIter = AttributeIter<'a>;
    fn into_iter(self) -> AttributeIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for Attributes<'a> {
    type Item = Attribute<'a>;
    type IntoIter = AttributeIter<'a>;
    fn into_iter(self) -> AttributeIter<'a> {
        self.iter()
    }
}

/// The attributes of an [`Attributes`] list, one at a time.
#[derive(Clone)]
pub struct AttributeIter<'a> {
    reader: reader::Reader<'a>,
}

impl<'a> Iterator for AttributeIter<'a> {
    type Item = Attribute<'a>;
    fn next(&mut self) -> Option<Attribute<'a>> {
        // The text was checked when the module was read: an error cannot occur, and ends the list.
        self.reader.attribute().ok().flatten()
    }
}

/// A computation: `ENTRY %main (p: f32[2]) -> f32[2] { ... }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Computation<'a> {
    /// Whether this is the entry computation.
    pub is_entry: bool,
    /// The name as written (with its `%`, if any).
    pub name: &'a str,
    /// The signature `(p: f32[2]) -> f32[2]`, verbatim; empty when absent.
    pub signature: &'a str,
    /// The instructions in the order written.
    pub instructions: Vec<Instruction<'a>>,
    /// Attributes after the closing brace (`}, execution_thread="host"`), values verbatim.
    pub attributes: Attributes<'a>,
}

/// One instruction: `ROOT %add.1 = f32[2]{0} add(%a, %b), metadata={...}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction<'a> {
    /// Whether it is the computation's root.
    pub is_root: bool,
    /// The name as written (with its `%`, if any).
    pub name: &'a str,
    /// The result shape as written; empty when the text leaves it out.
    pub shape_text: &'a str,
    /// The opcode (`add`, `fusion`, `get-tuple-element`, ...).
    pub opcode: &'a str,
    /// Everything between the operand parentheses, verbatim.
    pub operands_text: &'a str,
    /// The attributes after the operands, values verbatim.
    pub attributes: Attributes<'a>,
}

impl<'a> Instruction<'a> {
    /// The parsed result shape (`None` when the text gives none).
    pub fn shape(&self) -> Result<Option<Shape>> {
        if self.shape_text.is_empty() {
            return Ok(None);
        }
        crate::text::parse_shape(self.shape_text).map(Some)
    }

    /// The value of attribute `name`, if present.
    pub fn attribute(&self, name: &str) -> Option<&'a str> {
        self.attributes.get(name)
    }

    /// The instruction names among the operands (`%a` and `a` alike, without the `%`), in order.
    /// Operands written with their shape (`f32[2]{0} %a`) give the name after the shape.
    pub fn operand_names(&self) -> impl Iterator<Item = &'a str> + 'a {
        reader::TopLevel::new(self.operands_text, b',').filter_map(|op| {
            let op = op.trim();
            let last = op.rsplit(|c: char| c.is_whitespace()).next().unwrap_or(op);
            let name = last.strip_prefix('%').unwrap_or(last);
            let ok = !name.is_empty()
                && name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
            ok.then_some(name)
        })
    }

    /// The name without a leading `%`.
    pub fn bare_name(&self) -> &'a str {
        self.name.strip_prefix('%').unwrap_or(self.name)
    }
}

/// Where printed text goes: a formatter, or a byte buffer (appended to without a call per piece).
trait Sink {
    type Error;
    fn put(&mut self, s: &str) -> std::result::Result<(), Self::Error>;
}

impl Sink for fmt::Formatter<'_> {
    type Error = fmt::Error;
    fn put(&mut self, s: &str) -> fmt::Result {
        self.write_str(s)
    }
}

impl Sink for Vec<u8> {
    type Error = std::convert::Infallible;
    #[inline]
    fn put(&mut self, s: &str) -> std::result::Result<(), Self::Error> {
        self.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

fn print_attributes<S: Sink>(
    out: &mut S,
    attrs: &Attributes<'_>,
) -> std::result::Result<(), S::Error> {
    if attrs.is_canonical() {
        return out.put(attrs.as_str());
    }
    for a in attrs {
        out.put(", ")?;
        out.put(a.name)?;
        out.put("=")?;
        out.put(a.value)?;
    }
    Ok(())
}

/// `ROOT name = shape opcode(operands), attributes`.
fn print_instruction<S: Sink>(
    out: &mut S,
    i: &Instruction<'_>,
) -> std::result::Result<(), S::Error> {
    if i.is_root {
        out.put("ROOT ")?;
    }
    out.put(i.name)?;
    out.put(" = ")?;
    if !i.shape_text.is_empty() {
        out.put(i.shape_text)?;
        out.put(" ")?;
    }
    out.put(i.opcode)?;
    out.put("(")?;
    if memchr::memchr2(b'\n', b'\r', i.operands_text.as_bytes()).is_some() {
        // Operands continued over lines print on one: each break and the blanks around it become one
        // space (none next to the parentheses).
        let mut parts = i
            .operands_text
            .split(['\n', '\r'])
            .map(str::trim)
            .filter(|p| !p.is_empty());
        if let Some(first) = parts.next() {
            out.put(first)?;
        }
        for p in parts {
            out.put(" ")?;
            out.put(p)?;
        }
    } else {
        out.put(i.operands_text)?;
    }
    out.put(")")?;
    print_attributes(out, &i.attributes)
}

/// The computation, from `ENTRY` to its closing brace and attributes.
fn print_computation<S: Sink>(
    out: &mut S,
    c: &Computation<'_>,
) -> std::result::Result<(), S::Error> {
    print_opening(out, c)?;
    for i in &c.instructions {
        out.put("  ")?;
        print_instruction(out, i)?;
        out.put("\n")?;
    }
    print_closing(out, c)
}

/// `ENTRY name signature {` and the line break.
fn print_opening<S: Sink>(out: &mut S, c: &Computation<'_>) -> std::result::Result<(), S::Error> {
    if c.is_entry {
        out.put("ENTRY ")?;
    }
    out.put(c.name)?;
    if !c.signature.is_empty() {
        out.put(" ")?;
        out.put(c.signature)?;
    }
    out.put(" {\n")
}

/// The closing brace and the computation's attributes.
fn print_closing<S: Sink>(out: &mut S, c: &Computation<'_>) -> std::result::Result<(), S::Error> {
    out.put("}")?;
    print_attributes(out, &c.attributes)
}

/// The header line and a blank line, the stack-frame tables and two blank lines.
fn print_header<S: Sink>(out: &mut S, m: &Module<'_>) -> std::result::Result<(), S::Error> {
    out.put("HloModule ")?;
    out.put(&m.name)?;
    print_attributes(out, &m.attributes)?;
    out.put("\n\n")?;
    if !m.tables.is_empty() {
        // XLA leaves two blank lines after the stack-frame tables.
        out.put(m.tables)?;
        out.put("\n\n\n")?;
    }
    Ok(())
}

impl fmt::Display for Instruction<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        print_instruction(f, self)
    }
}

impl fmt::Display for Computation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        print_computation(f, self)
    }
}

/// Prints the module as XLA prints it: the header line and a blank line, the stack-frame tables and two
/// blank lines, then each computation followed by a blank line.
impl fmt::Display for Module<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        print_header(f, self)?;
        for c in &self.computations {
            print_computation(f, c)?;
            f.write_str("\n\n")?;
        }
        Ok(())
    }
}

impl Module<'_> {
    /// The entry computation (the one marked `ENTRY`, else the last).
    pub fn entry(&self) -> Option<&Computation<'_>> {
        self.computations
            .iter()
            .find(|c| c.is_entry)
            .or(self.computations.last())
    }

    /// The value of header attribute `name`, if present.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.get(name)
    }

    /// Writes the module as its [`Display`](fmt::Display) prints it to `out`, through a buffer of about a
    /// megabyte (the printed module is never held whole).
    pub fn write_to(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        const FLUSH: usize = 1 << 20;
        let mut buf: Vec<u8> = Vec::with_capacity(FLUSH + (FLUSH >> 2));
        let Ok(()) = print_header(&mut buf, self);
        for c in &self.computations {
            let Ok(()) = print_opening(&mut buf, c);
            for i in &c.instructions {
                buf.extend_from_slice(b"  ");
                let Ok(()) = print_instruction(&mut buf, i);
                buf.push(b'\n');
                if buf.len() >= FLUSH {
                    out.write_all(&buf)?;
                    buf.clear();
                }
            }
            let Ok(()) = print_closing(&mut buf, c);
            buf.extend_from_slice(b"\n\n");
        }
        out.write_all(&buf)
    }

    /// Number of instructions in all computations.
    pub fn instruction_count(&self) -> usize {
        self.computations.iter().map(|c| c.instructions.len()).sum()
    }
}
