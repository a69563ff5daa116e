//! MLIR text given to the HLO reader (JAX's default `lower(...).as_text()` is StableHLO, not HLO): an
//! error at the reader's `line:col` that says the text is MLIR and how to get HLO text from JAX. The
//! texts are jax 0.10.2's own output for `f(a, b) = jnp.sin(a) @ b` on `f32[4,8]` and `f32[8,2]`, and
//! for `a * 2` sharded `P('x')` over 2 devices (Shardy, JAX's default partitioner).
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use axe_xla::hlo::parse_module;
use axe_xla::hlo::stats::parse_checked;
use axe_xla::XlaError;

/// `jax.jit(f).lower(a, b).as_text()`.
const STABLEHLO: &str = include_str!("hlo_mlir/jax_default.mlir");

/// `jax.jit(f).lower(a, b).as_text(debug_info=True)`: location aliases before the module.
const STABLEHLO_DEBUG: &str = r##"#loc1 = loc("a")
#loc2 = loc("b")
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32> loc("a"), %arg1: tensor<8x2xf32> loc("b")) -> (tensor<4x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.sine %arg0 : tensor<4x8xf32> loc(#loc12)
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32> loc(#loc13)
    return %1 : tensor<4x2xf32> loc(#loc11)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("/tmp/hlo3/gen.py":5:11 to :21)
#loc4 = loc("/tmp/hlo3/gen.py":7:5 to :27)
#loc5 = loc("/tmp/hlo3/gen.py":5:11 to :25)
#loc6 = loc("f"(#loc3))
#loc7 = loc("<module>"(#loc4))
#loc8 = loc("f"(#loc5))
#loc9 = loc(callsite(#loc6 at #loc7))
#loc10 = loc(callsite(#loc8 at #loc7))
#loc11 = loc("jit(f)"(#loc7))
#loc12 = loc("jit(f)/sin"(#loc9))
#loc13 = loc("jit(f)/dot_general"(#loc10))
"##;

/// `jax.jit(lambda a: a * 2, out_shardings=s).lower(a).as_text()`, `a` sharded `P('x')` on 2 devices.
const SHARDY: &str = r##"module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x8xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<4x8xf32>
    %2 = stablehlo.multiply %arg0, %1 : tensor<4x8xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{"x"}, {}]> : tensor<4x8xf32>
    return %3 : tensor<4x8xf32>
  }
}
"##;

/// `jax.jit(f).lower(a, b).as_text(dialect="hlo")`: what axe reads.
const HLO: &str = r##"HloModule jit_f, entry_computation_layout={(f32[4,8]{1,0}, f32[8,2]{1,0})->f32[4,2]{1,0}}

ENTRY main.1 {
  a.1 = f32[4,8]{1,0} parameter(0)
  sin.1 = f32[4,8]{1,0} sine(a.1)
  b.1 = f32[8,2]{1,0} parameter(1)
  ROOT dot_general.1 = f32[4,2]{1,0} dot(sin.1, b.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

"##;

/// The reader's error for `text`: its line, column and message.
fn refused(text: &str) -> (usize, usize, String) {
    let e = parse_module(text).unwrap_err();
    // Every reader says the same: the cost report's too.
    assert_eq!(parse_checked(text).err(), Some(e.clone()));
    match e {
        XlaError::Module {
            line,
            column,
            message,
            ..
        } => (line, column, message),
        e => panic!("not a module error: {e}"),
    }
}

#[test]
fn jax_stablehlo_is_an_error_that_names_mlir_and_the_way_to_hlo() {
    for (text, at, parser) in [
        (
            STABLEHLO,
            (1, 8),
            "expected '{' opening the computation, found '@'",
        ),
        (
            STABLEHLO_DEBUG,
            (1, 1),
            "expected a computation name, found '#'",
        ),
        (
            SHARDY,
            (1, 8),
            "expected '{' opening the computation, found '@'",
        ),
    ] {
        let (line, column, message) = refused(text);
        assert_eq!((line, column), at, "{message}");
        assert!(
            message.starts_with("this is MLIR (StableHLO), not HLO text; "),
            "{message}"
        );
        for hint in [
            "as_text(dialect=\"hlo\")",
            ".compile().as_text()",
            "XLA_FLAGS=--xla_dump_to=DIR",
        ] {
            assert!(message.contains(hint), "{hint}: {message}");
        }
        // The reader's own words are kept.
        assert!(
            message.ends_with(&format!("(read as HLO: {parser})")),
            "{message}"
        );
    }
    // The same program as HLO text reads.
    let m = parse_module(HLO).unwrap();
    assert_eq!(m.instruction_count(), 4);
}

#[test]
fn the_error_shows_the_line_and_a_caret_under_the_place() {
    let shown = parse_module(STABLEHLO).unwrap_err().to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert!(
        lines[0].starts_with("1:8: this is MLIR (StableHLO)"),
        "{shown}"
    );
    assert!(
        lines[1].starts_with("  module @jit_f attributes"),
        "{shown}"
    );
    assert_eq!(lines[2], "         ^", "{shown}");
}

#[test]
fn hlo_errors_say_nothing_of_mlir() {
    // A broken HLO module is not taken for MLIR, and its error is what it was.
    let broken = HLO.replace("sine(a.1)", "sine(a.2)");
    let e = parse_module(&broken).unwrap_err().to_string();
    assert!(!e.contains("MLIR"), "{e}");
}
