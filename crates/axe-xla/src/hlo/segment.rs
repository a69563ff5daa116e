//! Reading from any place a reading of computations passes: between two computations, or inside one
//! before its next instruction; and where to cut a module's text so that pieces begin at such places.
//!
//! A reading stops only where, white space and comments skipped, the next thing is a computation
//! (between) or an instruction or a closing brace (inside). From such a place, what follows reads the
//! same however the reading got there: a piece read from a cut where the reading before it stopped,
//! in the same place, gives what one reading from the start gives there.

use super::reader::Reader;
use super::scan::is_name_byte;
use super::{Attributes, Computation, Instruction};
use crate::error::Result;

/// Where a reading of computations stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// Before a computation (or the end of the text).
    Between,
    /// Inside a computation, before its next instruction or its closing brace.
    Inside,
}

/// What a reading from one place to an end gives.
#[derive(Debug)]
pub(crate) struct Segment<'a> {
    /// Begun inside a computation: the instructions that continue it,
    pub(crate) head: Vec<Instruction<'a>>,
    /// and the attributes after its closing brace once read (`None`: still open where the reading
    /// stopped, and nothing else was read).
    pub(crate) head_close: Option<Attributes<'a>>,
    /// The computations read whole.
    pub(crate) computations: Vec<Computation<'a>>,
    /// A computation begun and not closed where the reading stopped (its attributes empty).
    pub(crate) open: Option<Computation<'a>>,
    /// Where the reading stopped (at or past the end asked for), and in which place.
    pub(crate) stopped: usize,
    pub(crate) place: Place,
}

impl<'a> Reader<'a> {
    /// Reads from here, in `place`, until white space and comments reach `end` (or the text ends) at a
    /// place between computations or before an instruction; the error is the one a reading of the whole
    /// text meets first in this stretch, when the reading before it stopped here in `place`.
    pub(crate) fn segment(&mut self, place: Place, end: usize) -> Result<Segment<'a>> {
        let mut seg = Segment {
            head: Vec::new(),
            head_close: None,
            computations: Vec::new(),
            open: None,
            stopped: self.pos,
            place: Place::Inside,
        };
        if place == Place::Inside {
            match self.body("", &mut seg.head, end)? {
                Some(attributes) => seg.head_close = Some(attributes),
                None => {
                    seg.stopped = self.pos;
                    return Ok(seg);
                }
            }
        }
        loop {
            self.skip(true)?;
            if self.pos >= end || self.pos >= self.b.len() {
                seg.stopped = self.pos;
                seg.place = Place::Between;
                return Ok(seg);
            }
            let mut c = self.computation_head()?;
            match self.body(c.name, &mut c.instructions, end)? {
                Some(attributes) => {
                    c.attributes = attributes;
                    if c.instructions.capacity() - c.instructions.len() > 4096 {
                        c.instructions.shrink_to_fit();
                    }
                    seg.computations.push(c);
                }
                None => {
                    seg.open = Some(c);
                    seg.stopped = self.pos;
                    return Ok(seg);
                }
            }
        }
    }
}

/// Where pieces of about `piece_bytes` (at least 1) begin: `start` (between computations), then at the
/// first line after each stretch of `piece_bytes` that starts a computation after a line holding only
/// `}` (between), or that starts an instruction (indented `ROOT`? NAME ` = `: inside); last the end of the
/// text. A cut is where a reading would be, if the line is what it looks like; whether it is, the reading
/// of the piece before it tells.
pub(crate) fn cuts(text: &str, start: usize, piece_bytes: usize) -> Vec<(usize, Place)> {
    let piece_bytes = piece_bytes.max(1);
    let b = text.as_bytes();
    let mut cuts = vec![(start, Place::Between)];
    let mut from = start;
    'pieces: while from.saturating_add(piece_bytes) < b.len() {
        let mut line = from + piece_bytes;
        loop {
            let Some(k) = memchr::memchr(b'\n', &b[line..]) else {
                break 'pieces;
            };
            line += k + 1;
            if let Some(cut) = cut_at_line(b, line).filter(|&(at, _)| at < b.len()) {
                cuts.push(cut);
                from = cut.0;
                break;
            }
        }
    }
    cuts.push((b.len(), Place::Between));
    cuts
}

/// The cut that the line starting at `line` offers, if any (see [`cuts`]).
fn cut_at_line(b: &[u8], line: usize) -> Option<(usize, Place)> {
    let rest = &b[line.min(b.len())..];
    let blank = |c: &u8| matches!(c, b' ' | b'\t' | b'\r' | b'\n');
    if rest.first() == Some(&b'}') {
        let after = rest[1..].iter().position(|&c| c != b'\r').map(|k| k + 1);
        if after.is_some_and(|k| rest[k] == b'\n') {
            let next = rest[1..].iter().position(|c| !blank(c))?;
            return Some((line + 1 + next, Place::Between));
        }
        return None;
    }
    let indent = rest
        .iter()
        .take_while(|&&c| c == b' ' || c == b'\t')
        .count();
    if indent == 0 {
        return None;
    }
    let mut word = &rest[indent..];
    if let Some(after) = word.strip_prefix(b"ROOT ") {
        word = after;
    }
    let name = word.iter().take_while(|&&c| is_name_byte(c)).count();
    (name > 0 && word[name..].starts_with(b" = ")).then_some((line + indent, Place::Inside))
}
