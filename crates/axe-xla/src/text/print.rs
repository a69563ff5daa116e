//! Printing shapes and layouts byte for byte as XLA does.

use std::fmt;

use crate::shape::{ArrayShape, Dim, Layout, Shape, Tile, TileDim};

impl fmt::Display for TileDim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TileDim::Size(n) => write!(f, "{n}"),
            TileDim::Combined => f.write_str("*"),
        }
    }
}

impl fmt::Display for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str(")")
    }
}

impl fmt::Display for Layout {
    /// `{minor_to_major:attributes}` exactly as XLA prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, d) in self.minor_to_major.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        if self.has_attributes() {
            f.write_str(":")?;
            if !self.tiles.is_empty() {
                f.write_str("T")?;
                for t in &self.tiles {
                    write!(f, "{t}")?;
                }
            }
            if self.tail_padding_alignment_in_elements != 1 {
                write!(f, "L({})", self.tail_padding_alignment_in_elements)?;
            }
            if let Some(t) = self.index_primitive_type {
                write!(f, "#({t})")?;
            }
            if let Some(t) = self.pointer_primitive_type {
                write!(f, "*({t})")?;
            }
            if self.element_size_in_bits != 0 {
                write!(f, "E({})", self.element_size_in_bits)?;
            }
            if self.memory_space != 0 {
                write!(f, "S({})", self.memory_space)?;
            }
            if !self.split_configs.is_empty() {
                f.write_str("SC")?;
                for c in &self.split_configs {
                    write!(f, "({}:", c.dimension)?;
                    for (i, x) in c.split_indices.iter().enumerate() {
                        if i > 0 {
                            f.write_str(",")?;
                        }
                        write!(f, "{x}")?;
                    }
                    f.write_str(")")?;
                }
            }
            if let Some(p) = &self.physical_shape {
                write!(f, "P({p})")?;
            }
            if self.dynamic_shape_metadata_prefix_bytes > 0 {
                write!(f, "M({})", self.dynamic_shape_metadata_prefix_bytes)?;
            }
        }
        f.write_str("}")
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Static(n) => write!(f, "{n}"),
            Dim::Bounded(n) => write!(f, "<={n}"),
            Dim::Unbounded => f.write_str("?"),
        }
    }
}

impl fmt::Display for ArrayShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.element_type)?;
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")?;
        if !self.dims.is_empty() || self.layout.has_attributes() {
            write!(f, "{}", self.layout)?;
        }
        Ok(())
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Array(a) => write!(f, "{a}"),
            Shape::Tuple(elems) => {
                f.write_str("(")?;
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        if i % 5 == 0 {
                            write!(f, ", /*index={i}*/")?;
                        } else {
                            f.write_str(", ")?;
                        }
                    }
                    write!(f, "{e}")?;
                }
                f.write_str(")")
            }
            Shape::Token => f.write_str("token[]"),
            Shape::Opaque => f.write_str("opaque[]"),
            Shape::Buffer(inner) => write!(f, "b({inner})"),
        }
    }
}
