//! One instruction, held compactly: the text it spans and where its parts lie in it.

use super::{scan, Attributes};
use crate::error::{overflow, Result};
use crate::shape::Shape;

/// Where a part lies in an instruction's text: byte offsets from the start of its name.
#[derive(Clone, Copy, Debug, Default)]
struct Span {
    start: u32,
    end: u32,
}

/// One instruction: `ROOT %add.1 = f32[2]{0} add(%a, %b), metadata={...}`.
///
/// It holds the text from its name to the end of its last attribute and the offsets of its parts (56
/// bytes, however long the text): a dump of millions of instructions takes less memory than its text.
/// Two instructions are equal when their parts are, however they were spaced.
#[derive(Clone, Copy, Debug)]
pub struct Instruction<'a> {
    text: &'a str,
    name_end: u32,
    shape: Span,
    opcode: Span,
    operands: Span,
    attributes_start: u32,
    is_root: bool,
    attribute_flags: u8,
    /// [`super::names::hash`] of the bare name, worked out while the name is at hand (it fits the
    /// padding the other fields leave).
    name_hash: u32,
}

/// The pieces of an instruction, as the reader found them (slices of one text).
pub(crate) struct Parts<'a> {
    pub(crate) is_root: bool,
    pub(crate) name: &'a str,
    pub(crate) shape: &'a str,
    pub(crate) opcode: &'a str,
    pub(crate) operands: &'a str,
    pub(crate) attributes: Attributes<'a>,
}

impl<'a> Instruction<'a> {
    /// The instruction of `parts`, all slices of `text` in the order they are written; an error for an
    /// instruction of 4 GiB or more.
    pub(crate) fn new(text: &'a str, parts: Parts<'a>) -> Result<Self> {
        let at = |piece: &str| piece.as_ptr() as usize - text.as_ptr() as usize;
        let start = at(parts.name);
        let attributes = parts.attributes.as_str();
        // An empty list lies where the operands end.
        let end = if attributes.is_empty() {
            at(parts.operands) + parts.operands.len() + 1
        } else {
            at(attributes) + attributes.len()
        };
        // Every part lies in `start..end`: when that span fits a `u32`, so does every offset in it.
        u32::try_from(end - start).map_err(|_| overflow("an instruction of 4 GiB or more"))?;
        let offset = |piece: &str| {
            let from = at(piece) - start;
            Span {
                start: from as u32,
                end: (from + piece.len()) as u32,
            }
        };
        let shape = if parts.shape.is_empty() {
            Span::default()
        } else {
            offset(parts.shape)
        };
        Ok(Instruction {
            text: &text[start..end],
            name_end: offset(parts.name).end,
            shape,
            opcode: offset(parts.opcode),
            operands: offset(parts.operands),
            attributes_start: if attributes.is_empty() {
                (end - start) as u32
            } else {
                offset(attributes).start
            },
            is_root: parts.is_root,
            attribute_flags: parts.attributes.flags(),
            name_hash: super::names::hash(parts.name.strip_prefix('%').unwrap_or(parts.name)),
        })
    }

    fn part(&self, s: Span) -> &'a str {
        &self.text[s.start as usize..s.end as usize]
    }

    /// Whether it is the computation's root.
    pub fn is_root(&self) -> bool {
        self.is_root
    }

    /// The name as written (with its `%`, if any).
    pub fn name(&self) -> &'a str {
        &self.text[..self.name_end as usize]
    }

    /// Whether the text gives a result shape (without reading the text).
    pub(crate) fn has_shape(&self) -> bool {
        self.shape.start != self.shape.end
    }

    /// [`super::names::hash`] of [`Instruction::bare_name`] (without reading the text).
    pub(crate) fn name_hash(&self) -> u32 {
        self.name_hash
    }

    /// The result shape as written; empty when the text leaves it out.
    pub fn shape_text(&self) -> &'a str {
        self.part(self.shape)
    }

    /// The opcode (`add`, `fusion`, `get-tuple-element`, ...).
    pub fn opcode(&self) -> &'a str {
        self.part(self.opcode)
    }

    /// Everything between the operand parentheses, verbatim.
    pub fn operands_text(&self) -> &'a str {
        self.part(self.operands)
    }

    /// The attributes after the operands, values verbatim.
    pub fn attributes(&self) -> Attributes<'a> {
        Attributes::with_flags(
            &self.text[self.attributes_start as usize..],
            self.attribute_flags,
        )
    }

    /// The parsed result shape (`None` when the text gives none).
    pub fn shape(&self) -> Result<Option<Shape>> {
        let text = self.shape_text();
        if text.is_empty() {
            return Ok(None);
        }
        crate::text::parse_shape(text).map(Some)
    }

    /// The value of attribute `name`, if present.
    pub fn attribute(&self, name: &str) -> Option<&'a str> {
        self.attributes().get(name)
    }

    /// The instruction names among the operands (`%a` and `a` alike, without the `%`), in order.
    /// Operands written with their shape (`f32[2]{0} %a`) give the name after the shape.
    pub fn operand_names(&self) -> impl Iterator<Item = &'a str> + 'a {
        scan::TopLevel::new(self.operands_text(), b',').filter_map(|op| {
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
        let name = self.name();
        name.strip_prefix('%').unwrap_or(name)
    }
}

impl PartialEq for Instruction<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.is_root == other.is_root
            && self.name() == other.name()
            && self.shape_text() == other.shape_text()
            && self.opcode() == other.opcode()
            && self.operands_text() == other.operands_text()
            && self.attributes() == other.attributes()
    }
}

impl Eq for Instruction<'_> {}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    fn an_instruction_takes_56_bytes() {
        assert_eq!(std::mem::size_of::<super::Instruction<'_>>(), 56);
    }
}
