//! The attributes of a layout after its `:`: `D(...)`, `T(...)...`, `L`, `#`, `*`, `E`, `S`, `SC`, `P`, `M`.

use super::{PResult, Parser};
use crate::primitive::PrimitiveType;
use crate::shape::{DimLevel, DimLevelType, Layout, Shape, SplitConfig, Tile, TileDim, Tiles};

const ATTRS: [&str; 10] = ["D", "T", "L", "#", "*", "E", "S", "SC", "P", "M"];
const D: usize = 0;
const T: usize = 1;
const L: usize = 2;
const INDEX: usize = 3;
const POINTER: usize = 4;
const E: usize = 5;
const S: usize = 6;
const SC: usize = 7;
const P: usize = 8;
const M: usize = 9;

impl Parser<'_> {
    fn attribute_key(&self) -> Option<usize> {
        match self.bytes() {
            [b'S', b'C', ..] => Some(SC),
            [b'D', ..] => Some(D),
            [b'T', ..] => Some(T),
            [b'L', ..] => Some(L),
            [b'#', ..] => Some(INDEX),
            [b'*', ..] => Some(POINTER),
            [b'E', ..] => Some(E),
            [b'S', ..] => Some(S),
            [b'P', ..] => Some(P),
            [b'M', ..] => Some(M),
            _ => None,
        }
    }

    pub(super) fn attributes(&mut self, layout: &mut Layout) -> PResult<()> {
        let mut last: Option<usize> = None;
        loop {
            self.skip()?;
            let at = self.pos;
            let Some(key) = self.attribute_key() else {
                return Ok(());
            };
            if let Some(prev) = last {
                if key == prev {
                    return self.err(at, format!("attribute {} is repeated", ATTRS[key]));
                }
                if key < prev {
                    return self.err(
                        at,
                        format!(
                            "attribute {} must come before {} (order: T L # * E S SC P M)",
                            ATTRS[key], ATTRS[prev]
                        ),
                    );
                }
            }
            last = Some(key);
            self.pos += ATTRS[key].len();
            match key {
                D => layout.dim_level_types = self.dim_level_types()?,
                T => self.tiles_into(&mut layout.tiles)?,
                L => {
                    self.expect_byte(b'(', "'(' after L")?;
                    self.skip()?;
                    let v_at = self.pos;
                    let v = self.int()?;
                    if v <= 0 {
                        return self.err(
                            v_at,
                            format!("L (tail padding alignment) must be positive, got {v}"),
                        );
                    }
                    layout.tail_padding_alignment_in_elements = v;
                    self.expect_byte(b')', "')' closing L(")?;
                }
                INDEX | POINTER => {
                    let (open, close) = if key == INDEX {
                        ("'(' after #", "')' closing #(")
                    } else {
                        ("'(' after *", "')' closing *(")
                    };
                    self.expect_byte(b'(', open)?;
                    self.skip()?;
                    let t_at = self.pos;
                    let word = self.word();
                    match PrimitiveType::from_name(word) {
                        Some(t) if t.is_integer() => {
                            if key == INDEX {
                                layout.index_primitive_type = Some(t);
                            } else {
                                layout.pointer_primitive_type = Some(t);
                            }
                        }
                        _ => {
                            return self.err(
                                t_at,
                                format!("{}(...) takes an integer type such as u32", ATTRS[key]),
                            )
                        }
                    }
                    self.expect_byte(b')', close)?;
                }
                E | S | M => {
                    let (open, close) = match key {
                        E => ("'(' after E", "')' closing E("),
                        S => ("'(' after S", "')' closing S("),
                        _ => ("'(' after M", "')' closing M("),
                    };
                    self.expect_byte(b'(', open)?;
                    let v = self.int()?;
                    match key {
                        E => layout.element_size_in_bits = v,
                        S => layout.memory_space = v,
                        _ => layout.dynamic_shape_metadata_prefix_bytes = v,
                    }
                    self.expect_byte(b')', close)?;
                }
                SC => {
                    let mut configs = Vec::new();
                    while self.eat_byte(b'(')? {
                        let dimension = self.non_negative("a split config dimension")?;
                        self.expect_byte(b':', "':' after the split config dimension")?;
                        let mut split_indices = Vec::new();
                        self.skip()?;
                        if self.peek() != Some(b')') {
                            loop {
                                split_indices.push(self.int()?);
                                if !self.eat_byte(b',')? {
                                    break;
                                }
                            }
                        }
                        self.expect_byte(b')', "',' or ')' in the split config")?;
                        configs.push(SplitConfig {
                            dimension,
                            split_indices,
                        });
                    }
                    if configs.is_empty() {
                        return self.expected("'(' after SC");
                    }
                    layout.split_configs = configs;
                }
                _ => {
                    self.nest(at)?;
                    self.expect_byte(b'(', "'(' after P")?;
                    let mut physical = Box::new(Shape::Token);
                    self.shape_into(&mut physical)?;
                    layout.physical_shape = Some(physical);
                    self.expect_byte(b')', "')' closing P(")?;
                    self.depth -= 1;
                }
            }
        }
    }

    /// `('(' tile_dims? ')')+` after `T`, appended to `tiles` (empty).
    fn tiles_into(&mut self, tiles: &mut Tiles) -> PResult<()> {
        while self.eat_byte(b'(')? {
            tiles.push(Tile::default());
            let Some(Tile(dims)) = tiles.last_mut() else {
                break;
            };
            if !self.eat_byte(b')')? {
                loop {
                    if let Some(v) = self.small_uint() {
                        dims.push(TileDim::Size(v));
                        if self.eat_separator(b')')? {
                            break;
                        }
                        continue;
                    }
                    self.skip()?;
                    if self.peek() == Some(b'*') {
                        self.pos += 1;
                        dims.push(TileDim::Combined);
                    } else {
                        let at = self.pos;
                        let v = self.int()?;
                        if v < 0 {
                            return self.err(
                                at,
                                format!(
                                    "tile sizes must not be negative (only * combines), got {v}"
                                ),
                            );
                        }
                        dims.push(TileDim::Size(v));
                    }
                    if self.eat_byte(b',')? {
                        continue;
                    }
                    self.expect_byte(b')', "',' or ')' in the tile")?;
                    break;
                }
            }
        }
        if tiles.is_empty() {
            return self.expected("'(' after T");
        }
        Ok(())
    }

    /// `D(...)`: legacy dimension level types, checked as XLA's parser checks them: a possibly empty,
    /// comma-separated list of `D`, `C`, `S` or `H` (each a whole name: `CD`, `C1` or `c` are not), each
    /// followed by an optional `+` and then an optional `~`.
    fn dim_level_types(&mut self) -> PResult<Vec<DimLevel>> {
        self.expect_byte(b'(', "'(' after D")?;
        let mut levels = Vec::new();
        if self.eat_byte(b')')? {
            return Ok(levels);
        }
        loop {
            self.skip()?;
            let at = self.pos;
            // XLA's lexer reads a name as letters, digits, `_`, `.` and `-`: `C_` is one (unknown) name.
            let name_len = self
                .bytes()
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
                .count();
            let level_type = match &self.bytes()[..name_len] {
                b"D" => DimLevelType::Dense,
                b"C" => DimLevelType::Compressed,
                b"S" => DimLevelType::Singleton,
                b"H" => DimLevelType::LooseCompressed,
                [] => return self.expected("a dimension level type (D, C, S or H) in D(...)"),
                name => {
                    return self.err(
                        at,
                        format!(
                            "unknown dimension level type {:?} in D(...) (XLA knows D, C, S and H)",
                            String::from_utf8_lossy(name)
                        ),
                    )
                }
            };
            self.pos += name_len;
            let unique = !self.eat_byte(b'+')?;
            let ordered = !self.eat_byte(b'~')?;
            levels.push(DimLevel {
                level_type,
                unique,
                ordered,
            });
            if self.eat_byte(b',')? {
                continue;
            }
            self.expect_byte(b')', "',' or ')' in D(...)")?;
            return Ok(levels);
        }
    }
}
