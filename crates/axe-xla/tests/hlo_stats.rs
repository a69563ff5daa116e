#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The cost report's totals: exact sums, and an error (never a wrap) past `i64::MAX` bytes.

use axe_xla::hlo::{parse_module, stats::report};

/// A module whose entry holds `n` parameters of `shape`.
fn module(shape: &str, n: usize) -> String {
    let mut s = String::from("HloModule m\n\nENTRY %e {\n");
    for i in 0..n {
        let root = if i + 1 == n { "ROOT " } else { "" };
        s.push_str(&format!("  {root}%p{i} = {shape} parameter({i})\n"));
    }
    s.push_str("}\n");
    s
}

#[test]
fn totals_add_up() {
    let text = module("f32[1024,1024]{1,0}", 3);
    let r = report(&parse_module(&text).unwrap(), 5).unwrap();
    assert_eq!(r.total.arrays, 3);
    assert_eq!(r.total.logical_bytes, 3 * (4 << 20));
    assert_eq!(r.total.physical_bytes, 3 * (4 << 20));
}

#[test]
fn totals_past_i64_are_an_error() {
    // Each array is 4·(2^58 − 1) = 2^60 − 4 bytes (its bit count just fits i64): eight fit, nine do not.
    let big = "f32[288230376151711743]{0}";
    let eight = report(&parse_module(&module(big, 8)).unwrap(), 5).unwrap();
    assert_eq!(eight.total.logical_bytes, 8 * ((1i64 << 60) - 4));
    let err = report(&parse_module(&module(big, 9)).unwrap(), 5).unwrap_err();
    assert!(err.to_string().contains("exceed 2^63"), "{err}");
}

#[test]
fn materialized_leaves_out_fusion_bodies_and_callee_parameters() {
    let text = "HloModule m\n\n\
        %fused (p: f32[1024]) -> f32[1024] {\n  %p = f32[1024]{0} parameter(0)\n  %a = f32[1024]{0} negate(%p)\n  %b = f32[1024]{0} exponential(%a)\n  ROOT %c = f32[1024]{0} add(%a, %b)\n}\n\n\
        %body (t: f32[1024]) -> f32[1024] {\n  %t = f32[1024]{0} parameter(0)\n  ROOT %f = f32[1024]{0} fusion(%t), kind=kLoop, calls=%fused\n}\n\n\
        %cond (t: f32[1024]) -> pred[] {\n  %t = f32[1024]{0} parameter(0)\n  ROOT %k = pred[] constant(false)\n}\n\n\
        ENTRY %e (x: f32[1024]) -> f32[1024] {\n  %x = f32[1024]{0} parameter(0)\n  %g = f32[1024]{0} fusion(%x), kind=kLoop, calls=%fused\n  ROOT %w = f32[1024]{0} while(%g), condition=%cond, body=%body\n}\n";
    let r = report(&parse_module(text).unwrap(), 5).unwrap();
    // Every instruction: 4 in %fused, 2 in %body, 2 in %cond (one a pred[]), 3 in the entry.
    assert_eq!(r.total.arrays, 11);
    // Held in memory: the entry's x, g, w; the while body's fusion result; the condition's constant.
    assert_eq!(r.materialized.arrays, 5);
    assert_eq!(r.materialized.logical_bytes, 4 * 4096 + 1);
    assert_eq!(r.entry.arrays, 3);
    assert_eq!(r.entry.logical_bytes, 3 * 4096);
    assert_eq!(r.materialized_computations, [false, true, true, true]);
    assert_eq!(r.spaces[&0], r.materialized);
}
