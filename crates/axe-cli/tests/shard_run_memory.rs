#![allow(clippy::unwrap_used, missing_docs)]
//! A reshard's memory is its shards: a long dimension (a 1-D array of 32 MiB, gathered onto two devices)
//! costs offset tables proportional to the factors its shards are cut into, not 8 bytes per element; an
//! odd length, whose shards are uneven, is copied as runs and costs the same, and so does it with a
//! tiled or Axe layout on either side (copied in pieces walked along the tiles).
//! (One test alone in this file, so that the children whose peak memory it reads are its own.)

mod common;

use common::children_peak_bytes;

#[test]
fn a_one_dimensional_reshard_costs_its_shards() {
    let elements: u64 = 8 << 20;
    let shape = format!("f32[{elements}]");
    let odd = format!("f32[{}]", elements - 1);
    for (shape, extra) in [
        (&shape, &[][..]),
        (&shape, &["--src-layout", "{0:T(1024)}"][..]),
        (&odd, &[][..]),
        (&odd, &["--src-layout", "{0:T(1024)}"][..]),
        (&odd, &["--dst-layout", "{0:T(1024)}"][..]),
        (&odd, &["--src-layout", "S[(2,2097152):(1,2)]"][..]),
        (&odd, &["--dst-layout", "S[8388607:1] + 3"][..]),
    ] {
        let out = assert_cmd::Command::cargo_bin("axe")
            .unwrap()
            .args(["shard", "run", "P('x')", "P()", "--mesh", "x=2"])
            .args(["--shape", shape])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("verified"));
    }
    // Two source halves and two whole destinations make 3 × the array; whole-dimension tables (8 bytes
    // per element per buffer, and copies of them) made about 20 ×.
    let array = elements * 4;
    let peak = children_peak_bytes();
    assert!(
        peak < array * 8,
        "peak {} MiB for an array of {} MiB",
        peak >> 20,
        array >> 20
    );
}
