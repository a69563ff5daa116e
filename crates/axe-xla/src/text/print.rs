//! Printing shapes and layouts byte for byte as XLA does.
//!
//! Integers are written through a small buffer and every piece with `write_str`, not through `write!`:
//! printing a shape is mostly integers and punctuation, and the formatting machinery costs more than both.

use std::fmt::{self, Write};

use crate::shape::{ArrayShape, Dim, Layout, Shape, Tile, TileDim};

/// Writes `n` in decimal.
fn int(f: &mut impl Write, n: i64) -> fmt::Result {
    // 20 bytes hold every i64, i64::MIN's sign included.
    let mut buf = [0u8; 20];
    let mut start = buf.len();
    let mut rest = n.unsigned_abs();
    loop {
        start -= 1;
        buf[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        start -= 1;
        buf[start] = b'-';
    }
    f.write_str(std::str::from_utf8(&buf[start..]).map_err(|_| fmt::Error)?)
}

/// Writes `items` separated by commas.
fn list<T>(
    f: &mut fmt::Formatter<'_>,
    items: &[T],
    mut one: impl FnMut(&mut fmt::Formatter<'_>, &T) -> fmt::Result,
) -> fmt::Result {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            f.write_char(',')?;
        }
        one(f, x)?;
    }
    Ok(())
}

/// `name(n)`, as `L(7)`.
fn attribute(f: &mut fmt::Formatter<'_>, name: &str, n: i64) -> fmt::Result {
    f.write_str(name)?;
    f.write_char('(')?;
    int(f, n)?;
    f.write_char(')')
}

impl fmt::Display for TileDim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TileDim::Size(n) => int(f, *n),
            TileDim::Combined => f.write_char('*'),
        }
    }
}

impl fmt::Display for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('(')?;
        list(f, &self.0, |f, d| fmt::Display::fmt(d, f))?;
        f.write_char(')')
    }
}

impl fmt::Display for Layout {
    /// `{minor_to_major:attributes}` exactly as XLA prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('{')?;
        list(f, &self.minor_to_major, |f, d| int(f, *d))?;
        if self.has_attributes() {
            f.write_char(':')?;
            if !self.tiles.is_empty() {
                f.write_char('T')?;
                for t in &self.tiles {
                    fmt::Display::fmt(t, f)?;
                }
            }
            if self.tail_padding_alignment_in_elements != 1 {
                attribute(f, "L", self.tail_padding_alignment_in_elements)?;
            }
            if let Some(t) = self.index_primitive_type {
                write!(f, "#({t})")?;
            }
            if let Some(t) = self.pointer_primitive_type {
                write!(f, "*({t})")?;
            }
            if self.element_size_in_bits != 0 {
                attribute(f, "E", self.element_size_in_bits)?;
            }
            if self.memory_space != 0 {
                attribute(f, "S", self.memory_space)?;
            }
            if !self.split_configs.is_empty() {
                f.write_str("SC")?;
                for c in &self.split_configs {
                    f.write_char('(')?;
                    int(f, c.dimension)?;
                    f.write_char(':')?;
                    list(f, &c.split_indices, |f, x| int(f, *x))?;
                    f.write_char(')')?;
                }
            }
            if let Some(p) = &self.physical_shape {
                write!(f, "P({p})")?;
            }
            if self.dynamic_shape_metadata_prefix_bytes > 0 {
                attribute(f, "M", self.dynamic_shape_metadata_prefix_bytes)?;
            }
        }
        f.write_char('}')
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Static(n) => int(f, *n),
            Dim::Bounded(n) => {
                f.write_str("<=")?;
                int(f, *n)
            }
            Dim::Unbounded => f.write_char('?'),
        }
    }
}

impl fmt::Display for ArrayShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.element_type.name())?;
        f.write_char('[')?;
        list(f, &self.dims, |f, d| fmt::Display::fmt(d, f))?;
        f.write_char(']')?;
        if !self.dims.is_empty() || self.layout.has_attributes() {
            fmt::Display::fmt(&self.layout, f)?;
        }
        Ok(())
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Array(a) => fmt::Display::fmt(a, f),
            Shape::Tuple(elems) => {
                f.write_char('(')?;
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        if i % 5 == 0 {
                            f.write_str(", /*index=")?;
                            int(f, i64::try_from(i).map_err(|_| fmt::Error)?)?;
                            f.write_str("*/")?;
                        } else {
                            f.write_str(", ")?;
                        }
                    }
                    fmt::Display::fmt(e, f)?;
                }
                f.write_char(')')
            }
            Shape::Token => f.write_str("token[]"),
            Shape::Opaque => f.write_str("opaque[]"),
            Shape::Buffer(inner) => {
                f.write_str("b(")?;
                fmt::Display::fmt(inner, f)?;
                f.write_char(')')
            }
        }
    }
}
