#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Arbitrary and mutated text into the shape parser, and every function on whatever parses: errors, never
//! panics; overflow is an error.

use axe_testkit::mutate;
use axe_xla::{numpy_program, parse_shape, sizes, to_axe, tpu_default_layout, validate, Tiling};
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

fn exercise(input: &str) {
    let Ok(shape) = parse_shape(input) else {
        return;
    };
    let printed = shape.to_string();
    // Printing is a fixpoint (a value XLA does not print, such as M(-3), is not read back).
    assert_eq!(
        parse_shape(&printed).map(|s| s.to_string()).ok().as_deref(),
        Some(printed.as_str()),
        "{input}"
    );
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

    #[test]
    fn huge_dimensions(d in prop_oneof![Just(i64::MAX), Just(i64::MAX / 2), Just(1i64 << 62), Just(3037000500i64)], t in 1i64..200) {
        for text in [format!("f32[{d},{d}]"), format!("f32[{d}]{{0:T({t})}}"), format!("s4[{d},3]{{0,1:T(8,{t})(8,1)E(4)L(7)}}"), format!("f32[{d},2]{{1,0:T(*,{t})}}")] {
            exercise(&text);
        }
    }
}
