//! A large module read in pieces, in parallel, with the result and the errors of reading it in one go.
//!
//! The text after the header is cut at lines that look like the start of a computation (after a line
//! holding only `}`) or of an instruction (indented `NAME = `), so that one large computation is cut
//! too ([`super::segment`]). Each piece is read from its cut, in the place the cut's line suggests,
//! until it stops at or past the next cut. When a piece stops exactly at the next cut, in the place that
//! piece assumed, the next piece began where a reading from the start is there; when not (the line was
//! inside a string or a multi-line literal, a continued attribute list, a comment), the next piece is
//! read again from where the previous one stopped. A computation read in several pieces is joined: its
//! instructions in order, its names once in the whole (a table of them made on every thread), and the
//! parameter numbers, roots and outside operands of each run checked against the runs before it (an
//! operand may name an instruction of an earlier piece, never of a later one).
//!
//! Any error, any disagreement, and the module is read and checked again in one go, so that the error
//! reported is the first in module order, exactly as a reading from the start reports it.

use rayon::prelude::*;

use super::names::{kept, NameTable};
use super::reader::Reader;
pub(crate) use super::segment::cuts;
use super::segment::{Place, Segment};
use super::validate::{self, Run};
use super::Computation;
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
pub(crate) fn read_checked(text: &str, start: usize) -> Result<Checked<'_>> {
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

/// Computations read and checked, with each one's instructions by name (every one of them, each name
/// once) where [`kept`], in the same order.
pub(crate) type Checked<'a> = (Vec<Computation<'a>>, Vec<Option<NameTable>>);

/// [`read_checked`], in pieces of about `piece_bytes` when given.
pub(crate) fn read_checked_in(
    text: &str,
    start: usize,
    piece_bytes: Option<usize>,
) -> Result<Checked<'_>> {
    let len = text.len();
    if let Some(piece_bytes) = piece_bytes {
        if let Some(checked) = read_in_pieces(text, start, piece_bytes) {
            return Ok(checked);
        }
    }
    let (computations, _) = Reader::at(text, start).computations_until(len)?;
    let tables = validate::check(text, &computations)?;
    Ok((computations, tables))
}

/// One piece read and checked.
struct Piece<'a> {
    seg: Segment<'a>,
    /// The instructions by name of each of its whole computations, where [`kept`].
    tables: Vec<Option<NameTable>>,
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
    // Checked once every computation is known (`called_before`).
    let mut exists = |name| {
        called.push(name);
        validate::Callee::Defined
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
    let mut tables = Vec::with_capacity(seg.computations.len());
    for c in &seg.computations {
        tables.push(kept(checker.computation(c, &mut exists).ok()?));
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
        tables,
        called,
        wrapped: checker.wrapped,
        head_run,
        open_run,
    })
}

/// The computations read and checked in parallel pieces; `None` when anything is wrong.
pub(crate) fn read_in_pieces(text: &str, start: usize, piece_bytes: usize) -> Option<Checked<'_>> {
    let len = text.len();
    let cuts = cuts(text, start, piece_bytes);
    let pieces: Vec<_> = cuts
        .par_windows(2)
        .map(|w| read_piece(text, w[0].0, w[0].1, w[1].0))
        .collect();
    let mut out: Vec<Computation<'_>> = Vec::new();
    let mut tables: Vec<Option<NameTable>> = Vec::new();
    let mut called = Vec::new();
    let mut wrapped = Vec::new();
    // The computation open across cuts, with the checks of its runs and the later runs' instructions.
    let mut open: Option<(Computation<'_>, Vec<Run<'_>>, Vec<Vec<_>>)> = None;
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
                    let (mut c, mut runs, heads) = open.take()?;
                    // Where each run starts in the joined list.
                    let mut starts = Vec::with_capacity(runs.len());
                    let mut n = c.instructions.len();
                    starts.push(0);
                    for head in &heads {
                        starts.push(n);
                        n = n.checked_add(head.len())?;
                    }
                    // The runs' own names freed before the lists are joined (the joined table
                    // answers for them).
                    for run in &mut runs {
                        run.defined = NameTable::default();
                    }
                    append_parallel(&mut c.instructions, heads);
                    tables.push(kept(joined_table(text, &c, &starts, &runs)?));
                    out.push(c);
                }
            }
            (None, None) => {}
            _ => return None,
        }
        out.extend(seg.computations);
        tables.extend(piece.tables);
        if let Some(c) = seg.open {
            open = Some((c, vec![piece.open_run?], Vec::new()));
        }
    }
    if open.is_some() || place != Place::Between || at < len || tables.len() != out.len() {
        return None;
    }
    validate::computation_names(text, &out).ok()?;
    validate::async_wrapped_once(text, &wrapped).ok()?;
    called_before(text, &out, &called).then_some((out, tables))
}

/// Whether each name in `called` (slices of `text`, each in a call of an instruction of `out`, the
/// computations in module order) names a computation defined before the one the call is in: what
/// [`validate::callee`] answers [`validate::Callee::Defined`] for.
fn called_before(text: &str, out: &[Computation<'_>], called: &[&str]) -> bool {
    let pos = |piece: &str| (piece.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    let index: foldhash::HashMap<&str, usize> = out
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.strip_prefix('%').unwrap_or(c.name), i))
        .collect();
    called.iter().all(|name| {
        // The computation holding the call: the last one whose name is written before it.
        let caller = out.partition_point(|c| pos(c.name) < pos(name));
        index.get(name).is_some_and(|&i| i + 1 < caller)
    })
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

/// The instructions of computation `c` by name, when the runs its instructions were checked in, each
/// on its own (`runs[k]` the check of those from `starts[k]` on), make a computation that checks: each
/// name once in the whole (the table, made on every thread, finds a name given twice); one root at
/// most; each run's parameter numbers new to the runs before it; the operands a run does not define,
/// defined in a run before it (and the async operands it completes, of the right opcode); the
/// signature agrees with the root.
fn joined_table(
    text: &str,
    c: &Computation<'_>,
    starts: &[usize],
    runs: &[Run<'_>],
) -> Option<NameTable> {
    let insts = &c.instructions;
    let mut roots = runs.iter().filter_map(|r| r.root.as_ref());
    let root = roots.next();
    if roots.next().is_some() || insts.is_empty() || starts.len() != runs.len() {
        return None;
    }
    let chunk = insts
        .len()
        .div_ceil(rayon::current_num_threads().max(1) * 4);
    let table = NameTable::of_parallel(insts, |_| true, chunk).ok()??;
    let before_agrees = |k: usize| {
        let (before, run) = (&runs[..k], &runs[k]);
        // The opcode of the instruction `name` names, when a run before this one defines it.
        let opcode = |name: &str| {
            table
                .get(insts, name)
                .filter(|&j| j < starts[k])
                .map(|j| insts[j].opcode())
        };
        run.parameters
            .keys()
            .all(|p| before.iter().all(|r| !r.parameters.contains_key(p)))
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
    (runs[0].outside.as_ref().is_none_or(Vec::is_empty)
        && (1..runs.len()).into_par_iter().all(before_agrees)
        && validate::parameter_numbers(text, c, runs.iter().map(|r| &r.parameters)).is_ok()
        && validate::signature(text, c, root.or(insts.last())).is_ok())
    .then_some(table)
}

/// In tests: the computations of `checked`, once its tables are seen to find every instruction of their
/// computation by its name, and nothing more.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) fn found(checked: Checked<'_>) -> Vec<Computation<'_>> {
    let (computations, tables) = checked;
    assert_eq!(computations.len(), tables.len());
    for (c, t) in computations.iter().zip(&tables) {
        let t = t.as_ref().unwrap();
        assert_eq!(t.len(), c.instructions.len(), "{}", c.name);
        for (k, inst) in c.instructions.iter().enumerate() {
            assert_eq!(t.get(&c.instructions, inst.bare_name()), Some(k));
        }
    }
    computations
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
        assert_eq!(
            found(read_in_pieces(&text, start, PIECE_BYTES).unwrap()),
            whole
        );
        assert_eq!(found(read_checked(&text, start).unwrap()), whole);
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
                .and_then(|(c, _)| validate::check(&text, &c).map(|_| ()));
            let got = read_checked(&text, start).map(|_| ());
            assert!(one.is_err());
            assert_eq!(got.unwrap_err().to_string(), one.unwrap_err().to_string());
        }
    }

    /// One reading of `text` from `start`, checked: the computations or the error's text.
    fn one_reading(text: &str, start: usize) -> std::result::Result<Vec<Computation<'_>>, String> {
        Reader::at(text, start)
            .computations_until(text.len())
            .and_then(|(c, _)| validate::check(text, &c).map(|_| c))
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
            let pieces = found(read_in_pieces(&text, start, 20).unwrap());
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
            let pieces = read_checked_in(&text, start, Some(piece))
                .map(found)
                .map_err(|e| e.to_string());
            proptest::prop_assert_eq!(pieces, one_reading(&text, start));
        }
    }
}
