#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `axe hlo stats` and `axe hlo fmt` given StableHLO (JAX's default `lower(...).as_text()`): an error at
//! the reader's `line:col` that says the text is MLIR and how to get HLO text from JAX; and the text
//! report's per-device figures, which say they are a sum without liveness.

mod common;

use common::run;
use serde_json::Value;

/// jax 0.10.2's `jax.jit(lambda a, b: jnp.sin(a) @ b).lower(a, b).as_text()` for `f32[4,8]`, `f32[8,2]`.
const STABLEHLO: &str = include_str!("../../axe-xla/tests/hlo_mlir/jax_default.mlir");

#[test]
fn stablehlo_is_refused_with_the_way_to_hlo_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.mlir");
    std::fs::write(&path, STABLEHLO).unwrap();
    let path = path.to_str().unwrap();
    for args in [
        vec!["hlo", "stats", path],
        vec!["hlo", "fmt", path],
        vec!["hlo", "stats", "--json", path],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        let said = if args.contains(&"--json") {
            let v: Value = serde_json::from_str(&out).unwrap();
            v["error"].as_str().unwrap().to_string()
        } else {
            err
        };
        assert!(
            said.contains("m.mlir:1:8: this is MLIR (StableHLO), not HLO text;"),
            "{args:?}: {said}"
        );
        assert!(said.contains("as_text(dialect=\"hlo\")"), "{said}");
        assert!(said.contains(".compile().as_text()"), "{said}");
        assert!(said.contains("XLA_FLAGS=--xla_dump_to=DIR"), "{said}");
        assert!(said.contains("found '@'"), "{said}");
        assert!(
            said.contains("\n         ^"),
            "the caret under the '@': {said}"
        );
    }
}

/// The figures per device are a sum of every value (an upper bound, not XLA's peak), and the report
/// says so; the arguments and outputs are XLA's.
#[test]
fn per_device_figures_say_they_are_a_sum_without_liveness() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.hlo");
    std::fs::write(
        &path,
        "HloModule m, num_partitions=2\n\nENTRY e {\n  \
         p = f32[8]{0} parameter(0), sharding={devices=[2]<=[2]}\n  \
         n = f32[8]{0} negate(p), sharding={devices=[2]<=[2]}\n  \
         ROOT e = f32[8]{0} exponential(n), sharding={devices=[2]<=[2]}\n}\n",
    )
    .unwrap();
    let (code, out, err) = run(&["hlo", "stats", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("per device (2 devices): largest 48 B (device 0), smallest 48 B\n  \
             sum of every value's bytes, no liveness: an upper bound, not XLA's peak\n  \
             arguments 16 B, outputs 16 B (exact, as XLA's memory_analysis(); the device holding the most)\n"),
        "{out}"
    );
    assert!(
        out.contains("a sum with no\n  liveness: an upper bound, not XLA's peak"),
        "{out}"
    );
}
