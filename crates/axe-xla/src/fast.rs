//! The fast path of shape parsing: an array in XLA's printed form (`bf16[8,128]{1,0:T(8,128)(2,1)S(1)}`,
//! no spaces or comments, attributes among `T L E S`), read straight from the bytes.
//!
//! It either produces exactly the shape the general parser would, or gives up having consumed nothing,
//! and the general parser reads the text instead: every error, and everything rarer (spaces, comments,
//! dynamic dimensions, negative numbers, other attributes, out-of-order or repeated ones, numbers of
//! more than 18 digits), goes that way, so messages and offsets are the general parser's.

use crate::inline::InlineVec;
use crate::primitive::PrimitiveType;
use crate::shape::{ArrayShape, Dim, Layout, MinorToMajor, Shape, Tile, TileDim, Tiles};
use crate::text::Parser;

impl Parser<'_> {
    /// Reads an array in printed form into `out`; `false` (position unchanged, `out` untouched or a
    /// partly filled array the caller overwrites) to let the general parser read it.
    pub(crate) fn array_fast(&mut self, out: &mut Shape) -> bool {
        let mut c = Cursor {
            s: self.s,
            b: self.s.as_bytes(),
            p: self.pos,
        };
        if c.array(out).is_some() {
            self.pos = c.p;
            return true;
        }
        false
    }
}

/// The text and a position in it, kept in registers while the fast path runs.
struct Cursor<'a> {
    s: &'a str,
    b: &'a [u8],
    p: usize,
}

impl Cursor<'_> {
    #[inline(always)]
    fn byte(&self) -> Option<u8> {
        self.b.get(self.p).copied()
    }

    #[inline(always)]
    fn eat(&mut self, c: u8) -> Option<()> {
        if self.byte() == Some(c) {
            self.p += 1;
            Some(())
        } else {
            None
        }
    }

    /// A non-negative integer of at most 18 digits (`None` for more, or none: the general parser
    /// reads it); one digit (most of them in printed shapes: orders, small tiles, memory spaces) at once.
    #[inline(always)]
    fn uint(&mut self) -> Option<i64> {
        let d0 = self.byte()?.wrapping_sub(b'0');
        if d0 > 9 {
            return None;
        }
        self.p += 1;
        let mut v = i64::from(d0);
        let mut n = 1;
        while let Some(d) = self.byte().map(|c| c.wrapping_sub(b'0')) {
            if d > 9 {
                break;
            }
            if n == 18 {
                return None;
            }
            // At most 18 digits: below 10^18, no overflow.
            v = v * 10 + i64::from(d);
            n += 1;
            self.p += 1;
        }
        Some(v)
    }

    /// After a list item: `,` (false: more follow) or `close` (true: the list ends); `None` otherwise.
    #[inline(always)]
    fn separator(&mut self, close: u8) -> Option<bool> {
        let c = self.byte()?;
        self.p += 1;
        if c == b',' {
            Some(false)
        } else if c == close {
            Some(true)
        } else {
            None
        }
    }

    #[inline(always)]
    fn array(&mut self, out: &mut Shape) -> Option<()> {
        let start = self.p;
        while self
            .byte()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        {
            self.p += 1;
        }
        let ty = PrimitiveType::from_name(self.s.get(start..self.p)?)?;
        if !ty.is_array_type() {
            return None;
        }
        self.eat(b'[')?;
        *out = Shape::Array(ArrayShape {
            element_type: ty,
            dims: Default::default(),
            layout: Layout::with_minor_to_major(MinorToMajor::new()),
        });
        let Shape::Array(a) = out else {
            return None;
        };
        if self.eat(b']').is_none() {
            loop {
                a.dims.push(Dim::Static(self.uint()?));
                if self.separator(b']')? {
                    break;
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
        self.p += 1;
        let layout = &mut a.layout;
        // A layout only when `{` is followed by an integer or `:`, as in the general parser.
        let first = self.byte()?;
        if first.is_ascii_digit() {
            loop {
                layout.minor_to_major.push(self.uint()?);
                if self.eat(b',').is_none() {
                    break;
                }
            }
        } else if first != b':' {
            return None;
        }
        if layout.minor_to_major.len() != rank {
            return None;
        }
        if self.eat(b':').is_some() {
            // Attributes in XLA's order, each at most once: T, L, E, S (0..4).
            let mut next_allowed = 0;
            loop {
                // Compared in turn, most frequent first (a jump table here mispredicts).
                let c = self.byte()?;
                let key = if c == b'T' {
                    0
                } else if c == b'S' && self.b.get(self.p + 1) != Some(&b'C') {
                    3
                } else if c == b'L' {
                    1
                } else if c == b'E' {
                    2
                } else {
                    break;
                };
                if key < next_allowed {
                    return None;
                }
                next_allowed = key + 1;
                self.p += 1;
                if key == 0 {
                    self.tiles(&mut layout.tiles)?;
                    continue;
                }
                self.eat(b'(')?;
                let v = self.uint()?;
                self.eat(b')')?;
                match key {
                    1 if v > 0 => layout.tail_padding_alignment_in_elements = v,
                    2 => layout.element_size_in_bits = v,
                    3 => layout.memory_space = v,
                    _ => return None,
                }
            }
        }
        self.eat(b'}')
    }

    fn tiles(&mut self, tiles: &mut Tiles) -> Option<()> {
        loop {
            if let Some(tile) = self.common_tile() {
                tiles.push(tile);
            } else {
                self.eat(b'(')?;
                // At most 2 sizes (XLA's inline room; more go to the general parser), in one piece.
                let mut dims = [TileDim::Size(0); 2];
                let mut len = 0;
                if self.eat(b')').is_none() {
                    loop {
                        *dims.get_mut(len)? = if self.eat(b'*').is_some() {
                            TileDim::Combined
                        } else {
                            TileDim::Size(self.uint()?)
                        };
                        len += 1;
                        if self.separator(b')')? {
                            break;
                        }
                    }
                }
                tiles.push(Tile(InlineVec::from_prefix(dims, len)));
            }
            if self.byte() != Some(b'(') {
                return Some(());
            }
        }
    }

    /// One of the tiles TPU layouts use most, `(8,128)` or `(2,1)` say, compared as a whole word
    /// (when 8 bytes of text are left); `None` to read the tile number by number.
    #[inline(always)]
    fn common_tile(&mut self) -> Option<Tile> {
        let chunk = self.b.get(self.p..self.p + 8)?;
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        COMMON_TILES.iter().find_map(|&(pattern, mask, len, dims)| {
            (word & mask == pattern).then(|| {
                self.p += len;
                let sizes = [TileDim::Size(dims[0]), TileDim::Size(dims[1])];
                Tile(InlineVec::from_prefix(
                    sizes,
                    if dims[1] == 0 { 1 } else { 2 },
                ))
            })
        })
    }
}

/// The text of a common tile as a little-endian word, the mask of its bytes, its length and its sizes
/// (a second size of 0: a one-dimensional tile).
type CommonTile = (u64, u64, usize, [i64; 2]);

const fn common_tile(text: &[u8], dims: [i64; 2]) -> CommonTile {
    let mut word = 0u64;
    let mut i = 0;
    while i < text.len() {
        word |= (text[i] as u64) << (8 * i);
        i += 1;
    }
    let mask = if text.len() >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * text.len())) - 1
    };
    (word, mask, text.len(), dims)
}

/// Tiles XLA's TPU layouts are made of, most frequent first.
const COMMON_TILES: [CommonTile; 8] = [
    common_tile(b"(8,128)", [8, 128]),
    common_tile(b"(2,1)", [2, 1]),
    common_tile(b"(4,1)", [4, 1]),
    common_tile(b"(8,1)", [8, 1]),
    common_tile(b"(128)", [128, 0]),
    common_tile(b"(1024)", [1024, 0]),
    common_tile(b"(16,128)", [16, 128]),
    common_tile(b"(32,128)", [32, 128]),
];
