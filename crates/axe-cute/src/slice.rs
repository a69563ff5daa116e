//! Slicing a layout by a coordinate with `_` (CuTe's `Underscore`): `L(_, 2)` keeps mode 0 and fixes
//! mode 1.

use std::fmt;
use std::str::FromStr;

use crate::error::{add, CuteError, Result};
use crate::int_tuple::IntTuple;
use crate::layout::{crd2idx, Layout};
use crate::parse::Parser;

/// A coordinate that may keep modes: `_` keeps a mode whole, an integer (or int tuple) fixes it.
/// Written as CuTe writes one, `(_,(1,_))`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum SliceCoord {
    /// `_`: the mode is kept.
    All,
    /// A fixed coordinate of the mode (an integer is the mode's flat index).
    At(IntTuple),
    /// One element per top-level mode.
    Modes(Vec<SliceCoord>),
}

fn parse_coord(p: &mut Parser<'_>) -> Result<SliceCoord> {
    if p.eat('(') {
        p.enter()?;
        let mut v = vec![parse_coord(p)?];
        while p.eat(',') {
            v.push(parse_coord(p)?);
        }
        p.expect(')')?;
        p.leave();
        Ok(SliceCoord::Modes(v))
    } else {
        let save = p.pos();
        if p.eat('_') && !matches!(p.peek(), Some(c) if c.is_ascii_digit() || c == '-') {
            return Ok(SliceCoord::All);
        }
        p.set_pos(save);
        Ok(SliceCoord::At(IntTuple::Int(p.int()?)))
    }
}

impl FromStr for SliceCoord {
    type Err = CuteError;

    /// Parses `_`, an integer, or a parenthesised list of them.
    fn from_str(s: &str) -> Result<SliceCoord> {
        let mut p = Parser::new(s);
        let c = parse_coord(&mut p)?;
        p.end()?;
        Ok(c)
    }
}

impl fmt::Display for SliceCoord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SliceCoord::All => f.write_str("_"),
            SliceCoord::At(t) => write!(f, "{t}"),
            SliceCoord::Modes(v) => {
                f.write_str("(")?;
                for (i, c) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{c}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// The kept parts of `(shape, stride)` (CuTe's `slice`: each `_` contributes its mode, tuples
/// concatenate their parts) and the offset of the fixed parts.
fn walk(
    c: &SliceCoord,
    shape: &IntTuple,
    stride: &IntTuple,
    kept: &mut Vec<(IntTuple, IntTuple)>,
) -> Result<i64> {
    match (c, shape, stride) {
        (SliceCoord::All, _, _) => {
            kept.push((shape.clone(), stride.clone()));
            Ok(0)
        }
        (SliceCoord::At(x), _, _) => crd2idx(x, shape, stride),
        (SliceCoord::Modes(cs), IntTuple::Tuple(ss), IntTuple::Tuple(ds))
            if cs.len() == ss.len() =>
        {
            let mut off = 0i64;
            for ((ci, si), di) in cs.iter().zip(ss).zip(ds) {
                off = add(off, walk(ci, si, di, kept)?)?;
            }
            Ok(off)
        }
        _ => Err(CuteError::BadCoord {
            coord: c.to_string(),
            shape: shape.to_string(),
        }),
    }
}

impl Layout {
    /// `L(c)` with `_` in `c`: the layout of the kept modes and the offset of the fixed ones
    /// (CuTe's `slice_and_offset`). The kept modes form a tuple in order, as CuTe builds it (one kept
    /// mode `4:1` gives `(4):(1)`).
    ///
    /// **Law**: for every index `j` of the slice, `offset + R(j) = L(c[_ ← j])`, the coordinate with the
    /// kept modes' coordinates taken from `j`.
    ///
    /// ```
    /// use axe_cute::{Layout, SliceCoord};
    /// let l: Layout = "(4,(2,3)):(1,(4,8))".parse()?;
    /// let (r, off) = l.slice_and_offset(&"(_,(1,_))".parse::<SliceCoord>()?)?;
    /// assert_eq!((r.to_string(), off), ("(4,3):(1,8)".to_string(), 4));
    /// # Ok::<(), axe_cute::CuteError>(())
    /// ```
    pub fn slice_and_offset(&self, c: &SliceCoord) -> Result<(Layout, i64)> {
        let mut kept = Vec::new();
        let off = walk(c, self.shape(), self.stride(), &mut kept)?;
        if kept.is_empty() {
            return Err(CuteError::BadCoord {
                coord: c.to_string(),
                shape: format!("{} (a slice keeps at least one mode)", self.shape()),
            });
        }
        let (s, d): (Vec<_>, Vec<_>) = kept.into_iter().unzip();
        Ok((Layout::new(IntTuple::Tuple(s), IntTuple::Tuple(d))?, off))
    }

    /// The sliced layout of [`Layout::slice_and_offset`].
    pub fn slice(&self, c: &SliceCoord) -> Result<Layout> {
        Ok(self.slice_and_offset(c)?.0)
    }
}
