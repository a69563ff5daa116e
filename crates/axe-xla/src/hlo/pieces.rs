//! A large module's computations read in pieces, in parallel, with the result and the errors of reading
//! them one after the other.
//!
//! The text after the header is cut where a line holding only `}` ends a computation. Reading is the same
//! from any position between two computations, so a piece read from where the previous one stopped is
//! exactly what a reading from the start gives there. Each piece reads whole computations until it stops
//! at or past the next cut; when a piece stops exactly at the cut, the next piece began at the right
//! place. When it stops past it (the cut was inside a computation, in a string or a nested bracket), the
//! pieces after it are discarded and the rest is read in one go from where it stopped. The first error in
//! text order is the one a reading from the start would meet.

use rayon::prelude::*;

use super::reader::Reader;
use super::{validate, Computation};
use crate::error::Result;

/// Below this many bytes, a module is read in one piece.
const PARALLEL_BYTES: usize = 1 << 20;

/// About how many bytes each piece holds.
const PIECE_BYTES: usize = 1 << 20;

/// The computations of `text` from byte `start` (just after the header and tables) to the end, read and
/// checked as XLA's parser does ([`super::validate`]).
///
/// A large module is read and checked in pieces, in parallel; should anything be wrong, it is read and
/// checked again one computation after the other, so that the error reported is the first one in module
/// order (every syntax error before any other, as a reading from the start meets them).
pub(crate) fn read_checked(text: &str, start: usize) -> Result<Vec<Computation<'_>>> {
    let parallel =
        text.len().saturating_sub(start) >= PARALLEL_BYTES && rayon::current_num_threads() >= 2;
    read_checked_in(text, start, parallel.then_some(PIECE_BYTES))
}

/// [`read_checked`], in pieces of about `piece_bytes` when given.
fn read_checked_in(
    text: &str,
    start: usize,
    piece_bytes: Option<usize>,
) -> Result<Vec<Computation<'_>>> {
    let len = text.len();
    if let Some(piece_bytes) = piece_bytes {
        if let Some(computations) = read_in_pieces(text, start, piece_bytes) {
            return Ok(computations);
        }
    }
    let (computations, _) = Reader::at(text, start).computations_until(len)?;
    validate::check(text, &computations)?;
    Ok(computations)
}

/// The computations read and checked in parallel pieces; `None` when anything is wrong.
fn read_in_pieces(text: &str, start: usize, piece_bytes: usize) -> Option<Vec<Computation<'_>>> {
    let len = text.len();
    let cuts = cuts(text, start, piece_bytes);
    // Each piece: its computations, where it stopped, and the computations they call (checked at the end,
    // once every name is known).
    let read_piece = |from: usize, to: usize| {
        let (computations, stopped) = Reader::at(text, from).computations_until(to).ok()?;
        let mut called = Vec::new();
        let mut checker = validate::Checker::new(text);
        for c in &computations {
            checker
                .computation(c, &mut |name| {
                    called.push(name);
                    true
                })
                .ok()?;
        }
        Some((computations, stopped, (called, checker.wrapped)))
    };
    let pieces: Vec<_> = cuts
        .par_windows(2)
        .map(|w| read_piece(w[0], w[1]))
        .collect();
    let mut out: Vec<Computation<'_>> = Vec::new();
    let mut called = Vec::new();
    let mut wrapped = Vec::new();
    let mut at = start;
    for (piece, &begin) in pieces.into_iter().zip(&cuts) {
        if at != begin {
            // The previous piece read past this cut: read the rest from where it stopped.
            let (rest, _, (more, wraps)) = read_piece(at, len)?;
            out.extend(rest);
            called.extend(more);
            wrapped.extend(wraps);
            break;
        }
        let (computations, stopped, (more, wraps)) = piece?;
        out.extend(computations);
        called.extend(more);
        wrapped.extend(wraps);
        at = stopped;
    }
    let names = validate::computation_names(text, &out).ok()?;
    validate::async_wrapped_once(text, &wrapped).ok()?;
    called
        .iter()
        .all(|name| names.contains(name))
        .then_some(out)
}

/// Where pieces begin: `start`, then about every `piece_bytes` (at least 1) the first non-blank byte after
/// a line holding only `}`, and last the end of the text.
fn cuts(text: &str, start: usize, piece_bytes: usize) -> Vec<usize> {
    let piece_bytes = piece_bytes.max(1);
    let b = text.as_bytes();
    let mut cuts = vec![start];
    let mut from = start;
    let finder = memchr::memmem::Finder::new(b"\n}\n");
    while from + piece_bytes < b.len() {
        let target = from + piece_bytes;
        let Some(k) = finder.find(&b[target..]) else {
            break;
        };
        let mut q = target + k + 3;
        while q < b.len() && matches!(b[q], b' ' | b'\t' | b'\r' | b'\n') {
            q += 1;
        }
        if q >= b.len() {
            break;
        }
        cuts.push(q);
        from = q;
    }
    cuts.push(b.len());
    cuts
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Pieces read in parallel give what one reading gives, wherever the cuts fall (here: inside a string
    /// holding a line with only `}`, and inside an unclosed computation).
    #[test]
    fn pieces_read_as_one_reading() {
        let mut text = String::from("HloModule m\n\n");
        for i in 0..30_000 {
            text.push_str(&format!(
                "%c{i} (p: f32[2]) -> f32[2] {{\n  ROOT %p = f32[2]{{0}} parameter(0), metadata={{op_name=\"a\n}}\nb\"}}\n}}\n\n"
            ));
        }
        let start = "HloModule m\n\n".len();
        let whole = Reader::at(&text, start)
            .computations_until(text.len())
            .unwrap()
            .0;
        assert!(cuts(&text, start, PIECE_BYTES).len() > 3);
        assert_eq!(read_in_pieces(&text, start, PIECE_BYTES).unwrap(), whole);
        assert_eq!(read_checked(&text, start).unwrap(), whole);
        let broken = format!("{text}%open (p: f32[2]) -> f32[2] {{\n");
        let one = Reader::at(&broken, start)
            .computations_until(broken.len())
            .unwrap_err();
        assert_eq!(
            read_checked(&broken, start).unwrap_err().to_string(),
            one.to_string()
        );
    }

    /// Whatever is wrong, and wherever, the error is the one a reading from the start reports.
    #[test]
    fn errors_are_those_of_one_reading() {
        let body = |i: usize| {
            format!("%c{i} (p: f32[2]) -> f32[2] {{\n  ROOT %p = f32[2]{{0}} parameter(0)\n}}\n\n")
        };
        let start = "HloModule m\n\n".len();
        let faults = [
            // an undefined operand late, a syntax error later: the syntax error wins
            (
                20_000,
                "%u (p: f32[2]) -> f32[2] {\n  ROOT %n = f32[2]{0} negate(%q)\n}\n\n",
            ),
            (
                25_000,
                "%s (p: f32[2]) -> f32[2] {\n  ROOT %n = f32[2]{0} negate(\n}\n\n",
            ),
        ];
        let calls = "%k (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n  ROOT %f = f32[2]{0} fusion(%p), kind=kLoop, calls=%nowhere\n}\n\n";
        let twice = body(3);
        // The same computation wrapped by async-starts in two pieces; a second ENTRY; an operand count.
        let wrap = |n: &str| {
            format!("%{n} (p: f32[2]) -> f32[2] {{\n  %p = f32[2]{{0}} parameter(0)\n  %st = ((f32[2]{{0}}), f32[2]{{0}}, s32[]) async-start(%p), calls=%c5\n  ROOT %d = f32[2]{{0}} async-done(%st)\n}}\n\n")
        };
        let (w1, w2) = (wrap("w1"), wrap("w2"));
        let entry = "ENTRY %e1 (p: f32[2]) -> f32[2] {\n  ROOT %p = f32[2]{0} parameter(0)\n}\n\n";
        let entry2 = entry.replace("%e1", "%e2");
        let arity = "%a (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n  ROOT %n = f32[2]{0} add(%p)\n}\n\n";
        let cases: Vec<Vec<(usize, &str)>> = vec![
            faults.to_vec(),
            vec![faults[0]],
            vec![(29_000, calls)],
            vec![(10, calls), (29_000, twice.as_str())],
            vec![(10, w1.as_str()), (29_000, w2.as_str())],
            vec![(10, entry), (29_000, entry2.as_str())],
            vec![(10, w1.as_str()), (20_000, w2.as_str()), (29_000, arity)],
        ];
        for case in cases {
            let mut text = String::from("HloModule m\n\n");
            for i in 0..30_000 {
                for (at, extra) in &case {
                    if *at == i {
                        text.push_str(extra);
                    }
                }
                text.push_str(&body(i));
            }
            let one = Reader::at(&text, start)
                .computations_until(text.len())
                .and_then(|(c, _)| validate::check(&text, &c));
            let got = read_checked(&text, start).map(|_| ());
            assert!(one.is_err());
            assert_eq!(got.unwrap_err().to_string(), one.unwrap_err().to_string());
        }
    }

    /// One reading of `text` from `start`, checked: the computations or the error's text.
    fn one_reading(text: &str, start: usize) -> std::result::Result<Vec<Computation<'_>>, String> {
        Reader::at(text, start)
            .computations_until(text.len())
            .and_then(|(c, _)| validate::check(text, &c).map(|()| c))
            .map_err(|e| e.to_string())
    }

    const STYLES: [&str; 4] = [
        include_str!("../../tests/hlo_corpus/styles/continued_lines.hlo"),
        include_str!("../../tests/hlo_corpus/styles/host_thread.hlo"),
        include_str!("../../tests/hlo_corpus/styles/nested_instructions.hlo"),
        include_str!("../../tests/hlo_corpus/styles/attributes_and_literals.hlo"),
    ];

    /// `copies` copies of the computations of style `style` (names with `%` renamed, so that they stay
    /// unique), and where the computations start.
    fn copies_of(style: usize, copies: usize) -> (String, usize) {
        let source = STYLES[style];
        let body_at = source.find("\n\n").map_or(0, |p| p + 2);
        let mut text = source[..body_at].to_string();
        for k in 0..copies {
            text.push_str(
                &source[body_at..]
                    .replace("ENTRY ", "")
                    .replace('%', &format!("%k{k}_")),
            );
        }
        (text, body_at)
    }

    #[test]
    fn copies_of_the_styles_read_in_small_pieces() {
        let mut cut = 0;
        for style in 0..STYLES.len() {
            let (text, start) = copies_of(style, 1);
            cut += cuts(&text, start, 20).len() - 2;
            let whole = one_reading(&text, start).unwrap();
            let pieces = read_in_pieces(&text, start, 20).unwrap();
            assert_eq!(pieces, whole, "style {style}");
        }
        assert!(cut >= 4, "{cut} cuts");
    }

    proptest::proptest! {
        /// Modules of XLA's styles, cut into pieces of any size and damaged anywhere: the pieces give the
        /// computations, or the error, of one reading.
        #[test]
        fn any_cut_of_any_module_reads_as_one_reading(
            style in 0..STYLES.len(),
            copies in 1usize..4,
            piece in 1usize..400,
            damage in proptest::collection::vec((0usize..100_000, proptest::sample::select(vec!["}", "\n}\n", "\"", "(", ")", "{", "/*", "%x", ",", ""])), 0..3),
        ) {
            let (mut text, body_at) = copies_of(style, copies);
            for (at, piece_text) in &damage {
                let mut at = at % (text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                text.insert_str(at, piece_text);
            }
            let start = body_at.min(text.len());
            let pieces = read_checked_in(&text, start, Some(piece)).map_err(|e| e.to_string());
            proptest::prop_assert_eq!(pieces, one_reading(&text, start));
        }
    }
}
