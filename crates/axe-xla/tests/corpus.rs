#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The conformance corpus (tests/corpus/shapes.jsonl, written by scripts/gen_shape_corpus.py): shape
//! strings from the grammar with XLA's own answer (jaxlib 0.10.2) beside ours. Where XLA accepts a shape
//! we print exactly what XLA prints, except the deliberate differences the corpus notes; where XLA
//! rejects or aborts, we return an error.

use axe_xla::parse_shape;
use serde_json::Value;

#[test]
fn corpus() {
    let text = include_str!("corpus/shapes.jsonl");
    let (mut same_as_xla, mut rejected) = (0, 0);
    for line in text.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        let input = row["input"].as_str().unwrap();
        let xla = row["xla"].as_str().unwrap();
        match (row.get("printed"), row.get("error")) {
            (Some(printed), None) => {
                let printed = printed.as_str().unwrap();
                let shape = parse_shape(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
                assert_eq!(shape.to_string(), printed, "{input:?}");
                assert_eq!(
                    parse_shape(printed).unwrap().to_string(),
                    printed,
                    "fixpoint for {input:?}"
                );
                if xla == "ok" && row.get("note").is_none() {
                    assert_eq!(
                        row["xla_printed"].as_str().unwrap(),
                        printed,
                        "XLA prints {input:?} differently"
                    );
                    same_as_xla += 1;
                }
            }
            (None, Some(error)) => {
                let e = parse_shape(input)
                    .err()
                    .unwrap_or_else(|| panic!("{input:?} should be rejected"));
                let message = e.to_string();
                assert!(
                    message.contains(error.as_str().unwrap().split(" at offset").next().unwrap()),
                    "{input:?}: {message}"
                );
                assert!(message.contains("^"), "no caret for {input:?}: {message}");
                rejected += 1;
            }
            _ => panic!("bad corpus line {line}"),
        }
    }
    assert!(
        same_as_xla >= 450,
        "only {same_as_xla} lines print as XLA does"
    );
    assert!(rejected >= 50, "only {rejected} rejections");
}
