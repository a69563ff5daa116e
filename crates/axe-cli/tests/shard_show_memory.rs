#![allow(clippy::unwrap_used, missing_docs)]
//! `shard show --json` on a large mesh costs about what it prints: each device's object is written as
//! text place by place, neither held as a JSON value per device (which cost about thirty times the
//! output) nor built from every device's region at once (six times).
//! (One test alone in this file, so that the children whose peak memory it reads are its own.)

mod common;

use common::children_peak_bytes;

#[test]
fn json_for_a_large_mesh_costs_about_its_output() {
    let out = assert_cmd::Command::cargo_bin("axe")
        .unwrap()
        .args([
            "shard", "show", "P('x')", "--mesh", "x=262144", "--shape", "f32[4]", "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = out.stdout.len() as u64;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["devices"].as_array().unwrap().len(), 262144);
    assert_eq!(v["devices"][262143]["device"], 262143);
    let peak = children_peak_bytes();
    assert!(
        peak < printed * 3,
        "peak {} MiB for {} MiB of output",
        peak >> 20,
        printed >> 20
    );
}
