#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `axe hlo stats` on a JAX matmul whose result carries no sharding: the sharding XLA gives it is
//! inferred from the operands' (rows from the lhs, columns from the rhs), and the per-device output
//! bytes are `compiled.memory_analysis()`'s (jaxlib 0.10.2, 8 CPU devices, GSPMD and Shardy alike).

mod common;

use common::run;
use serde_json::Value;

/// JAX's `a @ b`, `a: f32[32,64] P('x', None)`, `b: f32[64,16] P(None, 'y')` on a 4×2 mesh
/// (`lower().as_text(dialect="hlo")`).
const ROWS_COLS: &str = r##"HloModule jit__lambda, entry_computation_layout={(f32[32,64]{1,0}, f32[64,16]{1,0})->f32[32,16]{1,0}}, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=4, "y"=2]>}}

ENTRY main.1 {
  a.1 = f32[32,64]{1,0} parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\"x\"}, {}]>"}
  b.1 = f32[64,16]{1,0} parameter(1), sharding={devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{}, {\"y\"}]>"}
  ROOT dot_general.1 = f32[32,16]{1,0} dot(a.1, b.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"##;

fn stats(name: &str, text: &str, json: bool) -> (i32, String, String) {
    let dir = std::env::temp_dir().join(format!("axe-hlo-dot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.hlo"));
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap();
    let mut args = vec!["hlo", "stats", path];
    if json {
        args.insert(2, "--json");
    }
    run(&args)
}

#[test]
fn a_dot_result_takes_its_operands_tiling() {
    let (code, out, err) = stats("rows_cols", ROWS_COLS, true);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let p = &v["per_device"];
    assert_eq!(p["output_sharding"], "inferred");
    // 32×16 f32 over a 4×2 grid: 8×8 a device.
    assert_eq!(p["output_bytes"], 256);
    assert_eq!(p["output_whole_bytes"], 2048);
    // Text: said to be inferred.
    let (code, out, err) = stats("rows_cols", ROWS_COLS, false);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("inferred"), "{out}");
}

#[test]
fn a_dot_whose_operands_conflict_is_counted_whole() {
    // Both operands cut over `x`, on different result dims: GSPMD and Shardy decide by operand size
    // (and differ elsewhere), so nothing is inferred.
    let conflict = ROWS_COLS.replace(
        "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}",
        "{devices=[1,4,2]<=[8] last_tile_dim_replicate}",
    );
    let (code, out, err) = stats("conflict", &conflict, true);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["per_device"]["output_sharding"], "whole");
    assert_eq!(v["per_device"]["output_bytes"], 2048);
}
