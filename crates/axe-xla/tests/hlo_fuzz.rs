#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Arbitrary and mutated modules into the reader, shardings into their parser: errors, never panics; and
//! whatever reads prints back to a fixpoint.

use axe_testkit::mutate;
use axe_xla::hlo::sharding::parse_sharding;
use axe_xla::hlo::{parse_module, stats::report};
use proptest::prelude::*;

const SEED: &str = include_str!("modules/xla_printed.hlo");

fn check(text: &str) {
    if let Ok(m) = parse_module(text) {
        let printed = m.to_string();
        let again = parse_module(&printed)
            .unwrap_or_else(|e| panic!("printed module does not read back: {e}\n{printed}"));
        assert_eq!(again.to_string(), printed);
        let _ = report(&m, 5);
        for c in &m.computations {
            for i in &c.instructions {
                let _ = i.operand_names().count();
                if let Some(s) = i.attribute("sharding") {
                    if let Ok(sh) = parse_sharding(s) {
                        assert_eq!(parse_sharding(&sh.to_string()).unwrap(), sh);
                        let _ = sh.shards(&[5, 3]);
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_modules(ops in proptest::collection::vec((any::<u8>(), any::<usize>(), prop::sample::select(vec!['(', ')', '[', ']', '{', '}', ',', '=', '"', '\\', '%', '\n', ' ', '/', '*', 'R', 'x', '0', ':'])), 1..8)) {
        check(&mutate(SEED, &ops));
    }

    #[test]
    fn arbitrary_text(s in "\\PC{0,200}") {
        check(&s);
        check(&format!("HloModule m\n\nENTRY %e {{\n  {s}\n}}\n"));
    }

    #[test]
    fn shardings(s in "[{}\\[\\]<=0-9,T() a-z_]{0,40}") {
        if let Ok(sh) = parse_sharding(&s) {
            assert_eq!(parse_sharding(&sh.to_string()).unwrap(), sh);
            let _ = sh.shards(&[7, 2]);
            let _ = sh.shards(&[9223372036854775807, 3]);
        }
    }
}

/// The corpus's own styles, mutated: continued lines, several instructions on a line, headerless modules,
/// host threads, buffers, literals, async pairs.
const STYLES: [&str; 6] = [
    include_str!("hlo_corpus/styles/continued_lines.hlo"),
    include_str!("hlo_corpus/styles/several_per_line.hlo"),
    include_str!("hlo_corpus/styles/bare_entry.hlo"),
    include_str!("hlo_corpus/styles/host_thread.hlo"),
    include_str!("hlo_corpus/styles/buffers.hlo"),
    include_str!("hlo_corpus/styles/attributes_and_literals.hlo"),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_styles(k in 0usize..6, ops in proptest::collection::vec((any::<u8>(), any::<usize>(), prop::sample::select(vec!['(', ')', '{', '}', ',', '=', '\n', ' ', '\t', '\r', '%', '-', '9', 'b'])), 1..6)) {
        check(&mutate(STYLES[k], &ops));
    }

    /// Odd white space anywhere between tokens: the same module, or an error.
    #[test]
    fn odd_white_space(seps in proptest::collection::vec(prop::sample::select(vec![" ", "\n", "\t", "\r\n", "  \n  ", "/* c */"]), 12)) {
        let text = format!(
            "HloModule m\n\nENTRY{}%e{}{{{}%p ={}f32[4]{{0}}{}parameter(0){}ROOT{}%n = f32[4]{{0}} negate(%p){}, metadata={{op_name=\"n\"}}{}}}{}",
            seps[0], seps[1], seps[2], seps[3], seps[4], seps[5], seps[6], seps[7], seps[8], seps[9]
        );
        let m = parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text:?}"));
        assert_eq!(m.computations[0].instructions.len(), 2);
        check(&text);
    }
}

/// Nested instructions as deep as anyone writes them read; deeper is an error, not a stack overflow.
#[test]
fn deeply_nested_operands_are_read_or_refused() {
    for (depth, ok) in [(100, true), (100_000, false)] {
        let inner = format!("{}p{}", "f32[4] negate(".repeat(depth), ")".repeat(depth));
        let text = format!(
            "HloModule m\n\nENTRY e {{\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] negate({inner})\n}}\n"
        );
        let r = parse_module(&text);
        assert_eq!(
            r.is_ok(),
            ok,
            "{depth}: {:?}",
            r.err()
                .map(|e| e.to_string().chars().take(200).collect::<String>())
        );
        if let Err(e) = r {
            assert!(e.to_string().len() < 400, "the error shows a window");
        }
    }
}

/// Huge numbers: in dims, literals, parameter numbers and attribute values they are errors or kept as
/// text, never an overflow.
#[test]
fn huge_numbers_are_errors_or_text() {
    let huge = "99999999999999999999999999999999";
    for body in [
        format!("ROOT p = f32[{huge}] parameter(0)"),
        format!("ROOT c = s32[] constant({huge})"),
        format!("ROOT c = f16[] constant(1e{huge})"),
        format!("ROOT c = f32[2] constant({{1, -{huge}}})"),
        format!("ROOT p = f32[] parameter({huge})"),
        format!("p = f32[4] parameter(0)\n  ROOT s = f32[2] slice(p), slice={{[0:{huge}]}}"),
    ] {
        let text = format!("HloModule m\n\nENTRY e {{\n  {body}\n}}\n");
        check(&text);
    }
    let err = parse_module(&format!(
        "HloModule m\n\nENTRY e {{\n  ROOT c = s8[] constant({huge})\n}}\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("4:") && err.contains("out of range"),
        "{err}"
    );
}
