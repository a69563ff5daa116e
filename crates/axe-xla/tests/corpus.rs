#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The conformance corpus (tests/corpus/shapes.jsonl, written by scripts/gen_shape_corpus.py): shape
//! strings from the grammar with XLA's own answer (jaxlib 0.10.2) beside ours. Where XLA accepts a shape
//! we print exactly what XLA prints, except the deliberate differences the corpus notes; where XLA
//! rejects or aborts, we return an error. Where XLA accepts a single array, our "XLA ArraySize" is XLA's
//! (`xla_array_size_bytes`: XLA's `ShapeUtil::ArraySize` rule applied to XLA's parse).

use axe_xla::{parse_shape, parse_shape_general, sizes};
use serde_json::Value;

#[test]
fn corpus() {
    let text = include_str!("corpus/shapes.jsonl");
    let (mut same_as_xla, mut rejected, mut sized) = (0, 0, 0);
    for line in text.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        let input = row["input"].as_str().unwrap();
        let xla = row["xla"].as_str().unwrap();
        assert_eq!(
            parse_shape(input).map_err(|e| e.to_string()),
            parse_shape_general(input).map_err(|e| e.to_string()),
            "the fast path differs on {input:?}"
        );
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
                if let Some(bytes) = row.get("xla_array_size_bytes") {
                    let array = shape.as_array().unwrap();
                    let ours = sizes(array).unwrap_or_else(|e| panic!("{input:?}: {e}"));
                    assert_eq!(
                        ours.xla_array_size_bytes,
                        bytes.as_i64().unwrap(),
                        "XLA's ArraySize of {input:?}"
                    );
                    sized += 1;
                }
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
    assert!(sized >= 400, "only {sized} sizes checked against XLA's");
}
