//! A large module read in pieces, in parallel, with the result and the errors of reading it in one go.
//!
//! The text after the header is cut at lines that look like the start of a computation (after a line
//! holding only `}`) or of an instruction (indented `NAME = `), so that one large computation is cut
//! too ([`super::segment`]). Each piece is read from its cut, in the place the cut's line suggests,
//! until it stops at or past the next cut. When a piece stops exactly at the next cut, in the place that
//! piece assumed, the next piece began where a reading from the start is there; when not (the line was
//! inside a string or a multi-line literal, a continued attribute list, a comment), the next piece is
//! read again from where the previous one stopped. A computation read in several pieces is joined: its
//! instructions in order, and the names, parameter numbers and roots of each run checked against the
//! runs before it (an operand may name an instruction of an earlier piece, never of a later one).
//!
//! Any error, any disagreement, and the module is read and checked again in one go, so that the error
//! reported is the first in module order, exactly as a reading from the start reports it.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::reader::Reader;
pub(crate) use super::segment::cuts;
use super::segment::{Place, Segment};
use super::validate::{self, Run};
use super::{Computation, Instruction};
use crate::error::Result;

/// Below this many bytes, a module is read in one piece.
const PARALLEL_BYTES: usize = 1 << 20;

/// The fewest bytes a piece holds.
const PIECE_BYTES: usize = 1 << 20;

/// The computations of `text` from byte `start` (just after the header and tables) to the end, read and
/// checked as XLA's parser does ([`super::validate`]).
///
/// A large module is read and checked in pieces of a megabyte or more (about four a thread), in
/// parallel; should anything be wrong, it is read and checked again one computation after the other, so
/// that the error reported is the first one in module order (every syntax error before any other, as a
/// reading from the start meets them).
pub(crate) fn read_checked(text: &str, start: usize) -> Result<Vec<Computation<'_>>> {
    #[cfg(test)]
    if let Some(piece) = PIECES_FOR_TESTS.with(std::cell::Cell::get) {
        return read_checked_in(text, start, Some(piece));
    }
    let bytes = text.len().saturating_sub(start);
    let threads = rayon::current_num_threads();
    let parallel = bytes >= PARALLEL_BYTES && threads >= 2;
    let piece = PIECE_BYTES.max(bytes / threads.saturating_mul(4).max(1));
    read_checked_in(text, start, parallel.then_some(piece))
}

#[cfg(test)]
thread_local! {
    /// In tests: the piece size [`read_checked`] uses on this thread, whatever the module's size.
    pub(crate) static PIECES_FOR_TESTS: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// [`read_checked`], in pieces of about `piece_bytes` when given.
pub(crate) fn read_checked_in(
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

/// One piece read and checked.
struct Piece<'a> {
    seg: Segment<'a>,
    /// The computations its instructions call, checked once every name is known.
    called: Vec<&'a str>,
    /// The `calls=` of its async-starts, in order.
    wrapped: Vec<&'a str>,
    /// The check of the instructions continuing a computation begun before the piece, if it began inside
    /// one, and of those of the computation it leaves open.
    head_run: Option<Run<'a>>,
    open_run: Option<Run<'a>>,
}

/// The piece of `text` read from `from`, in `place`, to `to`, and checked; `None` when anything is wrong.
fn read_piece(text: &str, from: usize, place: Place, to: usize) -> Option<Piece<'_>> {
    let mut seg = Reader::at(text, from).segment(place, to).ok()?;
    // Held until its computation is joined: without the room it grew into.
    seg.head.shrink_to_fit();
    let mut called = Vec::new();
    let mut checker = validate::Checker::new(text);
    let mut exists = |name| {
        called.push(name);
        true
    };
    let head_run = match place {
        Place::Inside => {
            let mut run = Run::with_capacity(seg.head.len()).ok()?;
            run.outside = Some(Vec::new());
            checker.run(&seg.head, &mut run, &mut exists).ok()?;
            Some(run)
        }
        Place::Between => None,
    };
    for c in &seg.computations {
        checker.computation(c, &mut exists).ok()?;
    }
    let open_run = match &seg.open {
        Some(c) => {
            // The computation's first run: every name it uses is its own.
            let mut run = Run::with_capacity(c.instructions.len()).ok()?;
            checker.run(&c.instructions, &mut run, &mut exists).ok()?;
            Some(run)
        }
        None => None,
    };
    Some(Piece {
        seg,
        called,
        wrapped: checker.wrapped,
        head_run,
        open_run,
    })
}

/// The computations read and checked in parallel pieces; `None` when anything is wrong.
pub(crate) fn read_in_pieces(
    text: &str,
    start: usize,
    piece_bytes: usize,
) -> Option<Vec<Computation<'_>>> {
    let len = text.len();
    let cuts = cuts(text, start, piece_bytes);
    let pieces: Vec<_> = cuts
        .par_windows(2)
        .map(|w| read_piece(text, w[0].0, w[0].1, w[1].0))
        .collect();
    let mut out: Vec<Computation<'_>> = Vec::new();
    let mut called = Vec::new();
    let mut wrapped = Vec::new();
    // The computation open across cuts, with the checks of its runs; the computations joined so.
    let mut open: Option<(Computation<'_>, Vec<Run<'_>>, Vec<Vec<Instruction<'_>>>)> = None;
    let (mut at, mut place) = (start, Place::Between);
    for (piece, w) in pieces.into_iter().zip(cuts.windows(2)) {
        let (begin, end) = (w[0], w[1].0);
        let piece = if (at, place) == begin {
            piece?
        } else if at >= end {
            // The reading before went past this piece.
            continue;
        } else {
            // The cut was not where a reading stops: read again from where the previous piece stopped.
            read_piece(text, at, place, end)?
        };
        (at, place) = (piece.seg.stopped, piece.seg.place);
        called.extend(piece.called);
        wrapped.extend(piece.wrapped);
        let seg = piece.seg;
        match (piece.head_run, open.as_mut()) {
            (Some(run), Some((c, runs, heads))) => {
                heads.push(seg.head);
                runs.push(run);
                if let Some(attributes) = seg.head_close {
                    c.attributes = attributes;
                    let (mut c, runs, heads) = open.take()?;
                    let lists: Vec<&[Instruction<'_>]> = std::iter::once(&c.instructions[..])
                        .chain(heads.iter().map(Vec::as_slice))
                        .collect();
                    if !joined_runs_agree(text, &c, &lists, &runs) {
                        return None;
                    }
                    // The checks' names freed before the lists are joined.
                    drop((lists, runs));
                    append_parallel(&mut c.instructions, heads);
                    out.push(c);
                }
            }
            (None, None) => {}
            _ => return None,
        }
        out.extend(seg.computations);
        if let Some(c) = seg.open {
            open = Some((c, vec![piece.open_run?], Vec::new()));
        }
    }
    if open.is_some() || place != Place::Between || at < len {
        return None;
    }
    let names = validate::computation_names(text, &out).ok()?;
    validate::async_wrapped_once(text, &wrapped).ok()?;
    called
        .iter()
        .all(|name| names.contains(name))
        .then_some(out)
}

/// `lists` appended to `to` in order, each list split among the threads of the pool and freed once
/// copied: a large computation's instructions fill fresh pages, whose first touch costs more than the
/// copy, and the threads touch theirs at once.
fn append_parallel<T: Copy + Send + Sync>(to: &mut Vec<T>, lists: Vec<Vec<T>>) {
    to.reserve_exact(lists.iter().map(Vec::len).sum());
    for list in lists {
        to.par_extend(list.par_iter().copied());
    }
}

/// Whether the runs of computation `c`, checked each on its own (`runs[k]` the check of `lists[k]`, the
/// computation's instructions in order), make a computation that checks: one root at most; each run's
/// names, and parameter numbers, new to the other runs; the operands it does not define, defined in a
/// run before it (and the async operands it completes, of the right opcode); the signature agrees with
/// the root.
fn joined_runs_agree(
    text: &str,
    c: &Computation<'_>,
    lists: &[&[Instruction<'_>]],
    runs: &[Run<'_>],
) -> bool {
    let mut roots = runs.iter().filter_map(|r| r.root.as_ref());
    let root = roots.next();
    let last = lists.iter().rev().find_map(|l| l.last());
    if roots.next().is_some() || last.is_none() || runs.len() != lists.len() {
        return false;
    }
    let before_agrees = |k: usize| {
        let (before, run) = (&runs[..k], &runs[k]);
        let opcode = |name: &str| {
            before
                .iter()
                .zip(lists)
                .find_map(|(r, list)| validate::opcode_in(r, list, name))
        };
        run.parameters
            .iter()
            .all(|p| before.iter().all(|r| !r.parameters.contains(p)))
            && run
                .outside
                .iter()
                .flatten()
                .all(|name| opcode(name).is_some())
            && run
                .outside_pairs
                .iter()
                .all(|(name, base)| opcode(name).is_some_and(|op| validate::completes(op, base)))
    };
    runs[0].outside.as_ref().is_none_or(Vec::is_empty)
        && names_once(lists, runs)
        && (1..runs.len()).into_par_iter().all(before_agrees)
        && validate::signature(text, c, root.or(last)).is_ok()
}

/// Whether no name is defined by two of `runs`, the checks of `lists`, a computation's instructions in
/// order (each defines a name once at most).
///
/// Every name sets two bits of one word of a shared filter, both in one atomic step: of two runs
/// defining the same name, the one setting its bits later finds them set already. Only names that find
/// their bits set (those, and a few others that share them by chance) are looked up in the other runs.
/// The names are read in text order (the bytes of a piece one after the other): a hash and a word per
/// name, in parallel.
fn names_once(lists: &[&[Instruction<'_>]], runs: &[Run<'_>]) -> bool {
    if lists.len() != runs.len()
        || lists
            .iter()
            .zip(runs)
            .any(|(l, r)| l.len() != r.defined.len())
    {
        return false;
    }
    let at: usize = lists.iter().map(|l| l.len()).sum();
    // About 16 bits a name.
    let words = (at / 4).max(1).next_power_of_two();
    let filter: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(0)).collect();
    let mask = words - 1;
    // The hash each instruction keeps of its bare name, spread over 64 bits: no name's text is read.
    let seen_before = |inst: &Instruction<'_>| {
        let h = u64::from(inst.name_hash()).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let word = (h as usize) & mask;
        let bits = (1u64 << ((h >> 52) & 63)) | (1u64 << ((h >> 58) & 63));
        filter[word].fetch_or(bits, Ordering::Relaxed) & bits == bits
    };
    let candidates: Vec<(usize, &str)> = lists
        .par_iter()
        .enumerate()
        .flat_map_iter(|(k, list)| {
            list.iter()
                .filter(move |inst| seen_before(inst))
                .map(move |inst| (k, inst.bare_name()))
        })
        .collect();
    candidates.par_iter().all(|(k, name)| {
        runs.iter()
            .zip(lists)
            .enumerate()
            .all(|(j, (r, list))| j == *k || r.defined.get(list, name).is_none())
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whether a name is defined by two runs is what counting each name's runs says.
        #[test]
        fn names_once_counts_names(
            sets in proptest::collection::vec(proptest::collection::btree_set(0usize..60, 1..30), 1..5),
        ) {
            let mut text = String::from("ENTRY %e {\n");
            for n in sets.iter().flatten() {
                text.push_str(&format!("  %n{n} = f32[] constant(0)\n"));
            }
            text.push_str("}\n");
            let (computations, _) = Reader::at(&text, 0).computations_until(text.len()).unwrap();
            let insts = &computations[0].instructions;
            let mut lists: Vec<&[Instruction<'_>]> = Vec::new();
            let mut from = 0;
            for set in &sets {
                lists.push(&insts[from..from + set.len()]);
                from += set.len();
            }
            let mut checker = validate::Checker::new(&text);
            let mut runs = Vec::new();
            for (k, list) in lists.iter().enumerate() {
                let mut run = Run::with_capacity(list.len()).unwrap();
                if k > 0 {
                    run.outside = Some(Vec::new());
                }
                checker.run(list, &mut run, &mut |_| true).unwrap();
                runs.push(run);
            }
            let mut owners: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
            for list in &lists {
                for inst in *list {
                    *owners.entry(inst.bare_name()).or_default() += 1;
                }
            }
            let want = owners.values().all(|&n| n == 1);
            prop_assert_eq!(names_once(&lists, &runs), want);
        }
    }

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
