//! The fast path of shape parsing: an array in XLA's printed form (`bf16[8,128]{1,0:T(8,128)(2,1)S(1)}`,
//! no spaces or comments, attributes among `T L E S`), read straight from the bytes.
//!
//! It either produces exactly the shape the general parser would, or gives up having consumed nothing,
//! and the general parser reads the text instead: every error, and everything rarer (spaces, comments,
//! dynamic dimensions, negative numbers, other attributes, out-of-order or repeated ones, long numbers),
//! goes that way, so messages and offsets are the general parser's.

use crate::primitive::PrimitiveType;
use crate::shape::{ArrayShape, Dim, Layout, MinorToMajor, Shape, Tile, TileDim, Tiles};
use crate::text::Parser;

impl Parser<'_> {
    /// Reads an array in printed form into `out`; `false` (position unchanged, `out` untouched or a
    /// partly filled array the caller overwrites) to let the general parser read it.
    pub(crate) fn array_fast(&mut self, out: &mut Shape) -> bool {
        let start = self.pos;
        if self.array_fast_inner(out).is_none() {
            self.pos = start;
            return false;
        }
        true
    }

    /// A non-negative integer of at most 18 digits; one digit (most of them in printed shapes:
    /// orders, small tiles, memory spaces) without a call.
    #[inline(always)]
    fn uint_fast(&mut self) -> Option<i64> {
        let b = self.s.as_bytes();
        let d0 = b.get(self.pos)?.wrapping_sub(b'0');
        if d0 > 9 {
            return None;
        }
        match b.get(self.pos + 1) {
            Some(c) if c.is_ascii_digit() => self.small_uint(),
            _ => {
                self.pos += 1;
                Some(i64::from(d0))
            }
        }
    }

    #[inline(always)]
    fn next_is(&mut self, c: u8) -> Option<()> {
        if self.s.as_bytes().get(self.pos) == Some(&c) {
            self.pos += 1;
            Some(())
        } else {
            None
        }
    }

    #[inline(always)]
    fn byte(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    fn array_fast_inner(&mut self, out: &mut Shape) -> Option<()> {
        let b = self.s.as_bytes();
        let word_len = b
            .get(self.pos..)?
            .iter()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            .count();
        let ty = PrimitiveType::from_name(self.s.get(self.pos..self.pos + word_len)?)?;
        if !ty.is_array_type() {
            return None;
        }
        self.pos += word_len;
        self.next_is(b'[')?;
        *out = Shape::Array(ArrayShape {
            element_type: ty,
            dims: Default::default(),
            layout: Layout::with_minor_to_major(MinorToMajor::new()),
        });
        let Shape::Array(a) = out else {
            return None;
        };
        if self.next_is(b']').is_none() {
            loop {
                a.dims.push(Dim::Static(self.uint_fast()?));
                match self.byte()? {
                    b',' => self.pos += 1,
                    b']' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        let rank = a.dims.len();
        match self.byte() {
            Some(b'{') => {}
            // Something the general parser must look at: a layout may follow a space or a comment.
            Some(c) if c <= b' ' || c == b'/' => return None,
            _ => {
                a.layout.minor_to_major.extend((0..rank as i64).rev());
                return Some(());
            }
        }
        self.pos += 1;
        let layout = &mut a.layout;
        // A layout only when `{` is followed by an integer or `:`, as in the general parser.
        let first = self.byte()?;
        if first != b':' && !first.is_ascii_digit() {
            return None;
        }
        if first.is_ascii_digit() {
            loop {
                layout.minor_to_major.push(self.uint_fast()?);
                if self.next_is(b',').is_none() {
                    break;
                }
            }
        }
        if layout.minor_to_major.len() != rank {
            return None;
        }
        if self.next_is(b':').is_some() {
            // Attributes in XLA's order, each at most once: T, L, E, S (0..4).
            let mut next_allowed = 0;
            loop {
                let (key, c) = match self.byte()? {
                    b'T' => (0, b'T'),
                    b'L' => (1, b'L'),
                    b'E' => (2, b'E'),
                    b'S' if self.s.as_bytes().get(self.pos + 1) != Some(&b'C') => (3, b'S'),
                    _ => break,
                };
                if key < next_allowed {
                    return None;
                }
                next_allowed = key + 1;
                self.next_is(c)?;
                if c == b'T' {
                    self.tiles_fast(&mut layout.tiles)?;
                    continue;
                }
                self.next_is(b'(')?;
                let v = self.uint_fast()?;
                self.next_is(b')')?;
                match c {
                    b'L' if v > 0 => layout.tail_padding_alignment_in_elements = v,
                    b'E' => layout.element_size_in_bits = v,
                    b'S' => layout.memory_space = v,
                    _ => return None,
                }
            }
        }
        self.next_is(b'}')
    }

    fn tiles_fast(&mut self, tiles: &mut Tiles) -> Option<()> {
        self.next_is(b'(')?;
        loop {
            tiles.push(Tile::default());
            let Tile(dims) = tiles.last_mut()?;
            if self.next_is(b')').is_none() {
                loop {
                    if self.next_is(b'*').is_some() {
                        dims.push(TileDim::Combined);
                    } else {
                        dims.push(TileDim::Size(self.uint_fast()?));
                    }
                    match self.byte()? {
                        b',' => self.pos += 1,
                        b')' => {
                            self.pos += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
            }
            if self.next_is(b'(').is_none() {
                return Some(());
            }
        }
    }
}
