//! Typed errors. Every fallible operation in this crate returns [`LayoutError`]; its message says what was
//! wrong and, for text input, where (byte offset and a caret under the offending character).

use std::fmt;

/// A position in notation text where parsing failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The whole input that was being parsed.
    pub input: String,
    /// Byte offset of the offending character (may equal `input.len()` at end of input).
    pub offset: usize,
    /// What was expected or what was wrong.
    pub message: String,
}

/// Characters of context shown before and after the offending offset.
const BEFORE: usize = 60;
const AFTER: usize = 20;

/// The largest char boundary of `s` at or below `i`.
fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The part of `line` to show around byte offset `at` (floored to a character boundary): the whole
/// line when it has at most 80 characters, else 80 of them, 60 before it and 20 from it on where both
/// sides have that many (the rest going to the other side where one has fewer), `…` marking what is
/// cut. Returns the text and the caret's column in it, in characters, so an error in a huge one-line
/// input stays short and the caret lines up for non-ASCII input too.
pub fn caret_window(line: &str, at: usize) -> (String, usize) {
    let at = floor_boundary(line, at);
    let (n_before, n_after) = (line[..at].chars().count(), line[at..].chars().count());
    let after = n_after.min((BEFORE + AFTER).saturating_sub(n_before.min(BEFORE)));
    let before = n_before.min(BEFORE + AFTER - after);
    let (start, cut_before) = match line[..at].char_indices().rev().nth(before) {
        Some((i, c)) if before < n_before => (i + c.len_utf8(), true),
        _ => (0, false),
    };
    let (end, cut_after) = match line[at..].char_indices().nth(after) {
        Some((i, _)) => (at + i, true),
        None => (line.len(), false),
    };
    let lead = if cut_before { "…" } else { "" };
    let tail = if cut_after { "…" } else { "" };
    let col = line[start..at].chars().count() + usize::from(cut_before);
    (format!("{lead}{}{tail}", visible(&line[start..end])), col)
}

/// The text to put before the `^` under `shown` (a line as [`caret_window`] returns it) so the caret
/// sits under its character `col`: one character for each of the first `col` characters of `shown`, a
/// tab for a tab and a space for anything else. Law: a terminal expands both lines' tabs alike, so the
/// caret lands under character `col` however wide a tab is.
pub fn caret_pad(shown: &str, col: usize) -> String {
    let mut pad: String = shown
        .chars()
        .take(col)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    // A caret at the end of the line (past its last character) sits one column further.
    let short = col.saturating_sub(pad.chars().count());
    pad.extend(std::iter::repeat_n(' ', short));
    pad
}

/// `s` with each control character but tab (a NUL, an escape, a carriage return, DEL) shown as its
/// Unicode control picture (`␀`, `␛`, `␍`, `␡`): one character for one, so that a caret under a line
/// stays in place, and an error quoting raw input neither hides a byte nor moves the terminal.
pub fn visible(s: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| (c.is_ascii_control() && c != '\t') || c == '\u{7f}';
    if !s.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(s);
    }
    s.chars()
        .map(|c| match c {
            '\u{7f}' => '\u{2421}',
            c if hidden(c) => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
            c => c,
        })
        .collect()
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at offset {}", visible(&self.message), self.offset)?;
        // The line holding the offset, windowed, with a caret under the offset.
        let at = floor_boundary(&self.input, self.offset);
        let line_start = self.input[..at].rfind('\n').map_or(0, |p| p + 1);
        let line_end = self.input[at..]
            .find('\n')
            .map_or(self.input.len(), |p| at + p);
        let (shown, col) = caret_window(&self.input[line_start..line_end], at - line_start);
        write!(f, "\n  {shown}\n  {}^", caret_pad(&shown, col))
    }
}

/// Everything that can go wrong in the layout algebra.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// Notation text could not be parsed.
    #[error("{0}")]
    Parse(Box<ParseError>),
    /// An iter was given extent 0 (extents are at least 1).
    #[error("iter extent must be at least 1, got 0")]
    ZeroExtent,
    /// An axis name is not an identifier `[A-Za-z_][A-Za-z0-9_]*`.
    #[error("invalid axis name {0:?}: expected an identifier [A-Za-z_][A-Za-z0-9_]*")]
    InvalidAxis(String),
    /// An axis name the layout does not mention (see [`crate::Layout::axis`]).
    #[error("{}", unknown_axis(.axis, .axes))]
    UnknownAxis {
        /// The name asked for.
        axis: String,
        /// The axes the layout mentions, sorted by name.
        axes: Vec<String>,
    },
    /// A checked integer operation overflowed.
    #[error("integer overflow while {0}")]
    Overflow(String),
    /// A flat index outside `[0, size)`.
    #[error("index {index} is out of range for a layout of size {size}")]
    IndexOutOfRange {
        /// The offending index.
        index: u64,
        /// The layout's size.
        size: u64,
    },
    /// A multi-index whose rank or components do not fit the shape.
    #[error("multi-index {index:?} does not fit shape {shape:?}")]
    MultiIndexOutOfRange {
        /// The offending multi-index.
        index: Vec<u64>,
        /// The shape it was evaluated over.
        shape: Vec<u64>,
    },
    /// A shape whose product is not the layout size.
    #[error(
        "shape {shape:?} is not admitted by a layout of size {size} (its product is {product})"
    )]
    NotAdmitted {
        /// The shape.
        shape: Vec<u64>,
        /// Product of the shape, saturating.
        product: u64,
        /// The layout size.
        size: u64,
    },
    /// Two shapes or a shape and a region of different rank.
    #[error("rank mismatch: {0}")]
    RankMismatch(String),
    /// The layout cannot be grouped by the shape.
    #[error("cannot group by shape {shape:?}: {reason}")]
    NoGrouping {
        /// The target shape.
        shape: Vec<u64>,
        /// Why.
        reason: String,
    },
    /// No layout satisfies the tile equation.
    #[error("no such layout: {0}")]
    NoTile(String),
    /// The region has no layout describing it.
    #[error("no slice: {0}")]
    NoSlice(String),
    /// The region is empty or leaves the shape.
    #[error("invalid region: {0}")]
    BadRegion(String),
    /// A set too large to enumerate was asked for.
    #[error("too large: {0}")]
    TooLarge(String),
}

impl From<ParseError> for LayoutError {
    fn from(e: ParseError) -> Self {
        LayoutError::Parse(Box::new(e))
    }
}

/// Shorthand for `Result<T, LayoutError>`.
pub type Result<T> = std::result::Result<T, LayoutError>;

/// `the layout has no axis "lnae"; its axes are lane, m, warp`.
fn unknown_axis(axis: &str, axes: &[String]) -> String {
    format!(
        "the layout has no axis {axis:?}; its axes are {}",
        axes.join(", ")
    )
}

pub(crate) fn overflow(what: &str) -> LayoutError {
    LayoutError::Overflow(what.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(input: &str, offset: usize) -> String {
        ParseError {
            input: input.to_string(),
            offset,
            message: "bad".to_string(),
        }
        .to_string()
    }

    #[test]
    fn the_caret_sits_under_the_offset_in_a_window() {
        assert_eq!(shown("S[4:x]", 4), "bad at offset 4\n  S[4:x]\n      ^");
        let long = format!("{}x{}", "a".repeat(1000), "b".repeat(1000));
        let e = shown(&long, 1000);
        let lines: Vec<&str> = e.lines().collect();
        assert_eq!(
            lines[1],
            format!("  …{}x{}…", "a".repeat(BEFORE), "b".repeat(AFTER - 1))
        );
        assert_eq!(
            lines[2].find('^'),
            lines[1].find('x').map(|i| i - "…".len() + 1)
        );
        // A line of at most 80 characters is shown whole, wherever the caret is; a longer one keeps
        // 80, the side with fewer characters than its share giving the rest to the other.
        let short = format!("x{}", "b".repeat(79));
        assert_eq!(
            shown(&short, 0).lines().nth(1),
            Some(format!("  {short}").as_str())
        );
        let e = shown(&format!("x{}", "b".repeat(200)), 0);
        assert_eq!(
            e.lines().nth(1),
            Some(format!("  x{}…", "b".repeat(79)).as_str())
        );
        let e = shown(&format!("{}x", "a".repeat(200)), 200);
        assert_eq!(
            e.lines().nth(1),
            Some(format!("  …{}x", "a".repeat(79)).as_str())
        );
        // Offsets inside a character, past the end, and on other lines never panic.
        let _ = shown("é€x\nyz", 1);
        let _ = shown("é€x\nyz", 99);
        assert_eq!(shown("ab\ncd", 4), "bad at offset 4\n  cd\n   ^");
    }

    /// The caret line copies the tabs before the caret, so both lines expand alike in a terminal.
    #[test]
    fn the_caret_line_copies_tabs() {
        assert_eq!(caret_pad("\ta\tbc", 3), "\t \t");
        assert_eq!(
            caret_pad("ab", 4),
            "    ",
            "past the end: one column per position"
        );
        assert_eq!(
            shown("\tS[4:x]", 5),
            "bad at offset 5\n  \tS[4:x]\n  \t    ^"
        );
        // Expanded at any tab width, the caret is under the `x`.
        for width in [1, 4, 8] {
            let e = shown("\t\tS[4:\tx]", 7).replace('\t', &" ".repeat(width));
            let lines: Vec<&str> = e.lines().collect();
            let col = lines[2].find('^').unwrap();
            assert_eq!(&lines[1][col..=col], "x", "tab width {width}");
        }
    }

    /// Control characters are shown as their pictures, one for one, so the caret stays under its byte.
    #[test]
    fn control_characters_show_as_pictures() {
        assert_eq!(visible("a\tb"), "a\tb");
        assert_eq!(visible("(4,2)\0:\x1b[2J\x7f"), "(4,2)␀:␛[2J␡");
        assert_eq!(
            shown("(4\0,2)x", 6),
            "bad at offset 6\n  (4␀,2)x\n        ^"
        );
    }
}
