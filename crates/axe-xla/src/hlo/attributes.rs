//! Attribute lists (`, name=value, ...`), held as the text the reader checked.

use super::reader;

/// Attributes naming called computations (a name, or `{a, b}`).
pub(crate) const CALLING_ATTRIBUTES: &[&str] = &[
    "to_apply",
    "calls",
    "condition",
    "body",
    "branch_computations",
    "true_computation",
    "false_computation",
    "select",
    "scatter",
    "called_computations",
];

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
    /// What the reader saw: [`Attributes::CANONICAL`], [`Attributes::CALLS`], [`Attributes::SHARDING`],
    /// [`Attributes::CONTROL`], [`Attributes::EXTRA`].
    flags: u8,
}

impl<'a> Attributes<'a> {
    /// The text is written as printed (`, a=b, c=d`).
    pub(crate) const CANONICAL: u8 = 1;
    /// Some attribute names called computations (one of [`CALLING_ATTRIBUTES`]).
    pub(crate) const CALLS: u8 = 2;
    /// There is a `sharding=`.
    pub(crate) const SHARDING: u8 = 4;
    /// There is a `control-predecessors=`.
    pub(crate) const CONTROL: u8 = 8;
    /// Some attribute is not one every instruction may carry (see `attrcheck::is_common`).
    pub(crate) const EXTRA: u8 = 16;

    /// The list spanning `text`, which the reader has checked and found to be as `flags` say.
    pub(crate) fn with_flags(text: &'a str, flags: u8) -> Self {
        Attributes { text, flags }
    }

    /// Whether the text is written exactly as it prints.
    pub(crate) fn is_canonical(&self) -> bool {
        self.flags & Self::CANONICAL != 0
    }

    /// The flags the reader set.
    pub(crate) fn flags(&self) -> u8 {
        self.flags
    }

    /// Whether some attribute names called computations.
    pub(crate) fn has_calls(&self) -> bool {
        self.flags & Self::CALLS != 0
    }

    /// Whether there is a `control-predecessors=`.
    pub(crate) fn has_control(&self) -> bool {
        self.flags & Self::CONTROL != 0
    }

    /// Whether some attribute is not one every instruction may carry.
    pub(crate) fn has_extra(&self) -> bool {
        self.flags & Self::EXTRA != 0
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
