//! Reading in pieces cut inside computations: the result, or the error, of one reading.

#![allow(clippy::unwrap_used)]

use super::pieces::{cuts, found, read_checked_in, read_in_pieces};
use super::reader::Reader;
use super::segment::Place;
use super::{validate, Computation};
use crate::error::XlaError;

/// One reading of `text` from `start`, checked.
fn one_reading(text: &str, start: usize) -> Result<Vec<Computation<'_>>, XlaError> {
    Reader::at(text, start)
        .computations_until(text.len())
        .and_then(|(c, _)| validate::check(text, &c).map(|_| c))
}

const HEADER: &str = "HloModule m\n\n";

/// The faults injected into a generated module, one at a time.
const FAULTS: usize = 15;

/// A module whose entry is one computation of about `n` instructions in many styles (multi-line
/// literals, strings holding lines that look like instructions and closing braces, comments holding
/// instructions, continued operand lists, async pairs far apart, calls), small computations around it,
/// deterministic for `seed`; with fault `fault` (below [`FAULTS`]) injected at instruction `at`, if given.
fn module(n: usize, seed: u64, fault: Option<(usize, usize)>) -> String {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move |m: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % m.max(1) as u64) as usize
    };
    let mut t = String::from(HEADER);
    t.push_str("%fused (a: f32[2]) -> f32[2] {\n  ROOT %a = f32[2]{0} parameter(0)\n}\n\n");
    t.push_str("ENTRY %main (p0: f32[2], p1: f32[2]) -> f32[2] {\n");
    t.push_str("  %p0 = f32[2]{0} parameter(0)\n  %p1 = f32[2]{0} parameter(1)\n");
    let mut names = vec!["p0".to_string(), "p1".to_string()];
    let mut starts: Vec<String> = Vec::new();
    for i in 0..n {
        let pick = |k: usize| names[names.len() - 1 - k.min(names.len() - 1)].clone();
        let (x, y) = (pick(next(3)), pick(next(names.len())));
        let name = format!("i{i}");
        let mut line = match next(9) {
            0 => format!("  %{name} = f32[2]{{0}} constant({{1,\n    2}})\n"),
            1 => format!(
                "  %{name} = f32[2]{{0}} exponential(%{x}), metadata={{op_name=\"a\n  %fake.{i} = f32[2]{{0}} add(%{x}, %{y})\n}}\n\n%c{i} (a: f32[2]) -> f32[2] {{\"}}\n"
            ),
            2 => format!(
                "  /* %{name} = f32[2]{{0}} add(%{x}, %nowhere)\n  ROOT %r = f32[2]{{0}} add(%{x}) */\n  %{name} = f32[2]{{0}} negate(%{x}), sharding={{replicated}}\n"
            ),
            3 => format!("  %{name} = f32[2]{{0}} multiply(%{x},\n      %{y})\n"),
            4 => {
                starts.push(name.clone());
                format!("  %{name} = (f32[2]{{0}}, f32[2]{{0}}, u32[]) copy-start(%{x})\n")
            }
            5 if !starts.is_empty() => {
                let s = starts.swap_remove(next(starts.len()));
                // The pair's result is no operand for what follows.
                format!("  %{name} = f32[2]{{0}} copy-done(%{s})\n")
            }
            6 => format!("  %{name} = f32[2]{{0}} fusion(%{x}), kind=kLoop, calls=%fused\n"),
            _ => format!(
                "  %{name} = f32[2]{{0}} add(%{x}, %{y}), metadata={{op_name=\"n\" source_file=\"f.py\" source_line={i}}}\n"
            ),
        };
        if let Some((fault, at)) = fault.filter(|&(_, at)| at == i) {
            let some = pick(next(names.len()));
            line = match fault {
                0 => format!("  %{name} = f32[2]{{0}} add(%{x}, %undefined)\n"),
                1 => format!(
                    "  %{name} = f32[2]{{0}} add(%{x}, %i{})\n",
                    at + 1 + next(5)
                ),
                2 => format!("  %{some} = f32[2]{{0}} negate(%{x})\n"),
                3 => format!("  ROOT %{name} = f32[2]{{0}} negate(%{x})\n"),
                4 => format!("  %{name} = f32[2]{{0}} parameter({})\n", next(2)),
                5 => format!("  %{name} = f32[2]{{0,1}} negate(%{x})\n"),
                6 => format!("  %{name} = f32[2]{{0}} frobnicate(%{x})\n"),
                7 => format!("  %{name} = f32[2]{{0}} add(%{x}, %{y}\n"),
                8 => format!("  %{name} = f32[2]{{0}} negate(%{x}), metadata={{op_name=\"open\n"),
                9 => format!("  %{name} = f32[2]{{0}} copy-done(%{some})\n"),
                10 => format!("  %{name} = f32[2]{{0}} fusion(%{x}), kind=kLoop, calls=%missing\n"),
                11 => format!("}}\n\n  %{name} = f32[2]{{0}} negate(%{x})\n"),
                12 => format!("  %{name} = f32[2]{{0}} negate(%{x}) %{y}\n"),
                // Calls of a computation defined after the caller, and of the caller itself.
                13 => format!("  %{name} = f32[2]{{0}} fusion(%{x}), kind=kLoop, calls=%after\n"),
                _ => format!("  %{name} = f32[2]{{0}} call(%{x}), to_apply=%main\n"),
            };
        }
        // Names of instructions whose result is an f32[2] (not async starts) serve as operands.
        if !line.contains("copy-start") {
            names.push(name);
        }
        t.push_str(&line);
    }
    let last = names.last().cloned().unwrap_or_default();
    t.push_str(&format!(
        "  ROOT %r = f32[2]{{0}} add(%{last}, %p1)\n}}\n\n"
    ));
    t.push_str("%after (a: f32[2]) -> f32[2] {\n  %a = f32[2]{0} parameter(0)\n  ROOT %n = f32[2]{0} negate(%a)\n}\n\n");
    t
}

/// The generated modules read and check as one reading says; cut into any pieces, they read so in
/// parallel (joined across cuts inside the entry, no falling back), and every fault is found.
#[test]
fn generated_modules_read_as_one_reading() {
    for seed in 1..6 {
        let text = module(3000, seed, None);
        let start = HEADER.len();
        let one = one_reading(&text, start);
        assert!(one.is_ok(), "{:?}", one.err());
        for piece in [200, 1000, 7000, 60_000] {
            let inside = cuts(&text, start, piece)
                .iter()
                .filter(|c| c.1 == Place::Inside)
                .count();
            assert!(inside > 0, "piece {piece}");
            let pieces = read_in_pieces(&text, start, piece).map(found);
            assert_eq!(pieces.as_ref().ok_or(()), one.as_ref().map_err(|_| ()));
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(192))]

    /// Random modules with one fault at a random place, cut into pieces of random sizes: the pieces give
    /// the error of one reading (message, line and column), and never accept the module.
    #[test]
    fn a_fault_anywhere_is_the_error_of_one_reading(
        seed in 1u64..1_000_000,
        n in 40usize..400,
        fault in 0..FAULTS,
        at in 0usize..400,
        piece in 1usize..3000,
    ) {
        let text = module(n, seed, Some((fault, at % n)));
        let start = HEADER.len();
        let one = one_reading(&text, start);
        proptest::prop_assert!(one.is_err(), "fault {} not found", fault);
        proptest::prop_assert!(read_in_pieces(&text, start, piece).is_none());
        proptest::prop_assert_eq!(read_checked_in(&text, start, Some(piece)).map(found), one);
    }

    /// Random bytes inserted anywhere into a generated module: the pieces give what one reading gives.
    #[test]
    fn damage_anywhere_reads_as_one_reading(
        seed in 1u64..1_000_000,
        n in 20usize..200,
        damage in proptest::collection::vec((0usize..1_000_000, proptest::sample::select(vec!["}", "\n}\n", "\"", "(", ")", "{", "/*", "%x", ",", "\n  %q = ", "ROOT ", "\n"])), 1..3),
        piece in 1usize..2000,
    ) {
        let mut text = module(n, seed, None);
        for (at, piece_text) in &damage {
            let at = HEADER.len() + at % (text.len() - HEADER.len() + 1);
            text.insert_str(at, piece_text);
        }
        let start = HEADER.len();
        proptest::prop_assert_eq!(
            read_checked_in(&text, start, Some(piece)).map(found),
            one_reading(&text, start)
        );
    }
}

/// An operand written `%` alone names nothing, at the start of a computation as anywhere.
#[test]
fn a_bare_percent_is_no_operand() {
    let text = "HloModule m\n\nENTRY %e (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n  ROOT %n = f32[2]{0} negate(%)\n}\n";
    let e = crate::hlo::parse_module(text).unwrap_err().to_string();
    assert!(e.contains("not an instruction defined before"), "{e}");
}

/// Every module of the test corpora (JAX and XLA dumps, XLA's print styles, invalid modules), read in
/// pieces of any size: the module, or the error, of one reading.
#[test]
fn corpus_modules_read_in_pieces_as_in_one() {
    fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files(&path, out);
            } else if path.extension().is_some_and(|e| e == "hlo") {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    files(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"),
        &mut paths,
    );
    assert!(paths.len() > 100, "{}", paths.len());
    let (mut inside, mut failed) = (0, 0);
    for path in &paths {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let one = crate::hlo::parse_module(&text);
        failed += usize::from(one.is_err());
        // Where the first computation starts (`ENTRY` or its name).
        let start = one.as_ref().ok().and_then(|m| {
            let c = m.computations.first()?;
            let name_at = c.name.as_ptr() as usize - text.as_ptr() as usize;
            Some(if c.is_entry {
                text[..name_at].rfind("ENTRY")?
            } else {
                name_at
            })
        });
        for piece in [1, 37, 300, 5000] {
            super::pieces::PIECES_FOR_TESTS.with(|p| p.set(Some(piece)));
            let pieces = crate::hlo::parse_module(&text);
            super::pieces::PIECES_FOR_TESTS.with(|p| p.set(None));
            assert_eq!(pieces, one, "{} in pieces of {piece}", path.display());
            if let Some(start) = start {
                // A module that reads reads in pieces without falling back to one reading.
                let joined = read_in_pieces(&text, start, piece).map(found);
                let want = one.as_ref().map(|m| &m.computations).ok();
                assert_eq!(joined.as_ref(), want, "{}: {piece}", path.display());
            }
            inside += cuts(&text, 0, piece)
                .iter()
                .filter(|c| c.1 == Place::Inside)
                .count();
        }
    }
    assert!(
        inside > 1000 && failed > 5,
        "{inside} cuts inside, {failed} invalid"
    );
}
