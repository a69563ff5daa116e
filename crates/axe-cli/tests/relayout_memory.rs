#![allow(clippy::unwrap_used, missing_docs)]
//! A relayout's memory is its input and output tensors: a long dimension (a 1-D tensor of 32 M bytes)
//! costs offset tables proportional to the factors both layouts cut it into, not 8 bytes per element,
//! with or without padding, and a prime length (no factors) as little, moved in pieces.
//! (One test alone in this file, so that the children whose peak memory it reads are its own.)

mod common;

use common::children_peak_bytes;

#[test]
fn a_one_dimensional_relayout_costs_its_buffers() {
    let d = common::folder("relayout-memory");
    let size: u64 = 32 << 20;
    let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    std::fs::write(d.join("a.bin"), &data).unwrap();
    let odd = size - 5; // a length no tile divides: the tiled side has padding
    std::fs::write(d.join("odd.bin"), &data[..odd as usize]).unwrap();
    // A prime length with no padding: no factor to split at, so it moves in pieces as well.
    let prime = size - 39;
    std::fs::write(d.join("prime.bin"), &data[..prime as usize]).unwrap();
    for (shape, to, input, output) in [
        (format!("u8[{size}]{{0}}"), "{0:T(1024)}", "a.bin", "b.bin"),
        (format!("u8[{size}]{{0:T(1024)}}"), "{0}", "b.bin", "c.bin"),
        (format!("u8[{odd}]{{0}}"), "{0:T(1024)}", "odd.bin", "odd.t"),
        (
            format!("u8[{odd}]{{0:T(1024)}}"),
            "{0}",
            "odd.t",
            "odd.back",
        ),
        (format!("u8[{prime}]{{0}}"), "{0}", "prime.bin", "prime.out"),
    ] {
        let out = assert_cmd::Command::cargo_bin("axe")
            .unwrap()
            .current_dir(&d)
            .args(["relayout", "--shape", &shape, "--to", to, input, output])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(
        std::fs::read(d.join("c.bin")).unwrap() == data,
        "round trip"
    );
    let back = std::fs::read(d.join("odd.back")).unwrap();
    assert!(back == data[..odd as usize], "padded round trip");
    let copy = std::fs::read(d.join("prime.out")).unwrap();
    assert!(copy == data[..prime as usize], "prime-length copy");
    let tiled = std::fs::read(d.join("odd.t")).unwrap();
    assert!(tiled[..odd as usize] == data[..odd as usize]);
    assert!(
        tiled[odd as usize..].iter().all(|&b| b == 0),
        "padding zeroed"
    );
    drop(d);
    // Input and output make 2 × size; whole-dimension tables would add 32 bytes per element.
    let peak = children_peak_bytes();
    assert!(
        peak < size * 5 / 2,
        "peak {} MiB for {} MiB in and out",
        peak >> 20,
        size >> 20
    );
}
