#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Arbitrary and mutated text into the shape parser, and every function on whatever parses: errors, never
//! panics; overflow is an error.

use axe_testkit::mutate;
use axe_xla::{
    numpy_program, parse_shape, parse_shape_general, sizes, to_axe, tpu_default_layout, validate,
    Tiling,
};
use proptest::prelude::*;

fn corpus_inputs() -> Vec<String> {
    include_str!("corpus/shapes.jsonl")
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["input"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// The fast path for printed arrays gives exactly the general parser's answer: the same shape, or the
/// same error (message, offset and caret).
fn same_as_general(input: &str) {
    let fast = parse_shape(input).map_err(|e| e.to_string());
    let general = parse_shape_general(input).map_err(|e| e.to_string());
    assert_eq!(fast, general, "{input:?}");
}

fn exercise(input: &str) {
    same_as_general(input);
    let Ok(shape) = parse_shape(input) else {
        return;
    };
    let printed = shape.to_string();
    // Printing is a fixpoint (a value XLA does not print, such as M(-3), is not read back), and what is
    // read back equals the shape: equality ignores what printing drops.
    assert_eq!(
        parse_shape(&printed).map(|s| s.to_string()).ok().as_deref(),
        Some(printed.as_str()),
        "{input}"
    );
    assert_eq!(parse_shape(&printed).ok().as_ref(), Some(&shape), "{input}");
    let _ = validate(&shape);
    for (_, a) in shape.arrays() {
        let _ = sizes(a);
        if let Ok(t) = Tiling::new(a) {
            let zero = vec![0; a.rank()];
            let _ = t.linear_index(&zero);
            let _ = t.element_at(0);
        }
        let _ = to_axe(a);
        let _ = tpu_default_layout(a);
        let _ = numpy_program(a);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings(s in "\\PC{0,60}") {
        exercise(&s);
    }

    #[test]
    fn shape_alphabet(s in "[a-z0-9\\[\\]{}(),:*#<=?TLESCPMD/ -]{0,40}") {
        exercise(&s);
    }

    #[test]
    fn mutated_corpus(k in any::<prop::sample::Index>(), ops in proptest::collection::vec((any::<u8>(), any::<usize>(), prop::sample::select(vec!['(', ')', '[', ']', '{', '}', ':', ',', '*', '-', '0', '9', ' ', 'T', 'S', 'L', 'E', '<', '=', '?', '/', 'é'])), 1..6)) {
        let inputs = corpus_inputs();
        exercise(&mutate(&inputs[k.index(inputs.len())], &ops));
    }

    /// Printed-form pieces, with the near misses the fast path must hand over: spaces, comments,
    /// signs, long numbers, dynamic sizes, attributes out of order, repeated or unknown to it.
    #[test]
    fn printed_pieces(pieces in proptest::collection::vec(prop::sample::select(vec![
        "f32", "bf16", "s4", "pred", "token", "b(", "(", ")", "[", "]", "{", "}", ":", ",", "0", "1", "2", "7",
        "128", "4096", "0000001", "12345678", "9223372036854775807", "9223372036854775808", "-1", "<=", "?",
        "T(", "T(8,128)", "(2,1)", "(*,2)", "L(", "L(7)", "L(0)", "E(", "E(4)", "S(", "S(1)", "SC(0:1)",
        "M(8)", "D(C)", "#(u32)", "P(f32[2])", " ", "/*c*/", "*", "é", "(8,128)", "(8,1280)", "(8,12)",
        "(2,1", "(1024)", "(1024", "(16,128)", "(32,128)(2,1)", "(4,1)(2,1)(2,1)",
    ]), 1..14)) {
        exercise(&pieces.concat());
    }

    /// Well-formed printed arrays (the fast path's own ground), alone and in tuples.
    #[test]
    fn printed_arrays(
        ty in prop::sample::select(vec!["f32", "bf16", "s4", "u8", "pred", "c64", "f8e4m3fn"]),
        dims in proptest::collection::vec(0i64..5000, 0..5),
        rotate in 0usize..5,
        attrs in proptest::collection::vec(prop::sample::select(vec![
            "T(8,128)", "T(8,128)(2,1)", "T(2)", "T(*,2)", "T()", "L(2)", "L(1)", "E(4)", "E(0)", "S(1)",
            "T(8,128)(4,1)(2,1)", "T(1024)(128)", "T(16,128)(8,1)", "T(8,1280)", "T(8,12)(2,1)",
            "S(0)", "M(4)", "SC(0:1)", "D(C)", "#(u8)",
        ]), 0..4),
        tuple in any::<bool>(),
    ) {
        let mut m2m: Vec<usize> = (0..dims.len()).rev().collect();
        if !m2m.is_empty() {
            let r = rotate % m2m.len();
            m2m.rotate_left(r);
        }
        let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
        let m2m: Vec<String> = m2m.iter().map(usize::to_string).collect();
        let attrs = attrs.concat();
        let layout = if attrs.is_empty() { format!("{{{}}}", m2m.join(",")) } else { format!("{{{}:{attrs}}}", m2m.join(",")) };
        let array = format!("{ty}[{}]{layout}", dims.join(","));
        exercise(&array);
        if tuple {
            exercise(&format!("({array}, s32[]{{:T(128)}}, {array})"));
        }
    }

    #[test]
    fn huge_dimensions(d in prop_oneof![Just(i64::MAX), Just(i64::MAX / 2), Just(1i64 << 62), Just(3037000500i64)], t in 1i64..200) {
        for text in [format!("f32[{d},{d}]"), format!("f32[{d}]{{0:T({t})}}"), format!("s4[{d},3]{{0,1:T(8,{t})(8,1)E(4)L(7)}}"), format!("f32[{d},2]{{1,0:T(*,{t})}}")] {
            exercise(&text);
        }
    }
}
