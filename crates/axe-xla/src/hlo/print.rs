//! Printing modules as XLA prints them: to a formatter, or streamed through a byte buffer.

use std::fmt;

use super::{Attributes, Computation, Instruction, Module};

/// Where printed text goes: a formatter, or a byte buffer (appended to without a call per piece).
trait Sink {
    type Error;
    fn put(&mut self, s: &str) -> std::result::Result<(), Self::Error>;
}

/// What printing into `S` returns.
type Printed<S> = std::result::Result<(), <S as Sink>::Error>;

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

fn print_attributes<S: Sink>(out: &mut S, attrs: &Attributes<'_>) -> Printed<S> {
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
fn print_instruction<S: Sink>(out: &mut S, i: &Instruction<'_>) -> Printed<S> {
    if i.is_root() {
        out.put("ROOT ")?;
    }
    out.put(i.name())?;
    out.put(" = ")?;
    if !i.shape_text().is_empty() {
        out.put(i.shape_text())?;
        out.put(" ")?;
    }
    out.put(i.opcode())?;
    out.put("(")?;
    if memchr::memchr2(b'\n', b'\r', i.operands_text().as_bytes()).is_some() {
        // Operands continued over lines print on one: each break and the blanks around it become one
        // space (none next to the parentheses).
        let mut parts = i
            .operands_text()
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
        out.put(i.operands_text())?;
    }
    out.put(")")?;
    print_attributes(out, &i.attributes())
}

/// The computation, from `ENTRY` to its closing brace and attributes.
fn print_computation<S: Sink>(out: &mut S, c: &Computation<'_>) -> Printed<S> {
    print_opening(out, c)?;
    for i in &c.instructions {
        out.put("  ")?;
        print_instruction(out, i)?;
        out.put("\n")?;
    }
    print_closing(out, c)
}

/// `ENTRY name signature {` and the line break.
fn print_opening<S: Sink>(out: &mut S, c: &Computation<'_>) -> Printed<S> {
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
fn print_closing<S: Sink>(out: &mut S, c: &Computation<'_>) -> Printed<S> {
    out.put("}")?;
    print_attributes(out, &c.attributes)
}

/// The header line and a blank line, the stack-frame tables and two blank lines.
fn print_header<S: Sink>(out: &mut S, m: &Module<'_>) -> Printed<S> {
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
}
