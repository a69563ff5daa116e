#![allow(clippy::unwrap_used, missing_docs)]
//! Writing a `.npy` output streams the header and the data into the file: the job's memory is its
//! input and output tensors, with no third copy of the data. (One test alone in this file, so that
//! the children whose peak memory it reads are its own.)

mod common;

use common::children_peak_bytes;

#[test]
fn a_npy_output_takes_no_extra_copy_of_the_tensor() {
    let d = common::folder("npy-memory");
    let size: u64 = 128 << 20;
    std::fs::write(d.join("a.bin"), vec![3u8; size as usize]).unwrap();
    let out = assert_cmd::Command::cargo_bin("axe")
        .unwrap()
        .current_dir(&d)
        .args([
            "relayout",
            "--shape",
            "u8[8192,16384]",
            "--to",
            "{1,0}",
            "a.bin",
            "b.npy",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::metadata(d.join("b.npy")).unwrap().len();
    assert!(written > size && written < size + 256, "{written}");
    drop(d);
    // Input and output buffers make 2 × size; a copy of the data for the file would make 3.
    let peak = children_peak_bytes();
    assert!(
        peak < size * 5 / 2,
        "peak {} MiB for {} MiB in and out",
        peak >> 20,
        size >> 20
    );
}
