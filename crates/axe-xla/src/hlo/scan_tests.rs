//! Tests of the scanning fast paths against the general scans they stand in for.
#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;

/// The pieces as split and trimmed one by one, when every byte is a name byte, ',' or ' '.
fn pieces_slowly(text: &str) -> Option<Vec<&str>> {
    text.bytes()
        .all(|c| is_name_byte(c) || c == b',' || c == b' ')
        .then(|| {
            text.split(',')
                .map(|p| p.trim_matches(' '))
                .filter(|p| !p.is_empty())
                .collect()
        })
}

proptest! {
    /// Plain lists give the pieces splitting and trimming gives; any other list gives the plain
    /// pieces before the first piece that is not plain, and where that piece starts.
    #[test]
    fn plain_pieces_split_as_split_and_trim(
        text in "([a-c%.$ ,]|\\(|\\[|\"|\t|é){0,24}",
    ) {
        let mut got = Vec::new();
        let (count, rest) = plain_pieces(&text, |p| {
            got.push(p);
            Ok::<(), ()>(())
        })
        .unwrap();
        prop_assert_eq!(count, got.len());
        match rest {
            None => prop_assert_eq!(Some(got), pieces_slowly(&text)),
            Some(at) => {
                prop_assert!(at == 0 || text.as_bytes()[at - 1] == b',');
                prop_assert_eq!(Some(got), pieces_slowly(&text[..at.saturating_sub(1)]));
                let piece = text[at..].split(',').next().unwrap();
                prop_assert!(pieces_slowly(piece).is_none());
            }
        }
    }
}

proptest! {
    /// The SWAR search finds what a byte-by-byte search finds, from any start.
    #[test]
    fn quote_or_escape_finds_the_first(
        text in proptest::collection::vec(prop_oneof![Just(b'"'), Just(b'\\'), any::<u8>()], 0..40),
        from in 0usize..45,
    ) {
        let want = text
            .get(from..)
            .and_then(|r| r.iter().position(|&c| c == b'"' || c == b'\\'))
            .map(|k| from + k);
        prop_assert_eq!(quote_or_escape(&text, from), want);
    }
}

proptest! {
    /// Brackets are matched as the general scan matches them, errors included.
    #[test]
    fn balanced_as_the_general_scan(text in "[(\\[{][a-z(){}\\[\\]\"/*\t ]{0,40}") {
        let fast = Reader::new(&text).balanced_with_pos();
        let mut slow = Reader::new(&text);
        let slow = (slow.balanced_slowly(), slow.pos);
        prop_assert_eq!(format!("{fast:?}"), format!("{slow:?}"));
    }
}

impl Reader<'_> {
    fn balanced_with_pos(mut self) -> (Result<usize>, usize) {
        (self.balanced(), self.pos)
    }
}

#[test]
fn plain_pieces_stop_at_the_first_error() {
    let mut seen = Vec::new();
    let r = plain_pieces("%a , b c,, %d", |p| {
        seen.push(p);
        if p == "b c" {
            Err(p)
        } else {
            Ok(())
        }
    });
    assert_eq!(r, Err("b c"));
    assert_eq!(seen, ["%a", "b c"]);
    let r = plain_pieces("x, y, f32[2] z", |_| Ok::<(), ()>(()));
    assert_eq!(r, Ok((2, Some(5))));
}
