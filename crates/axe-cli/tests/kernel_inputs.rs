#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `axe kernel` inputs and buffers: a `.npy` input is read as numpy reads it (its header checked, its
//! data exactly the size the kernel needs, big-endian data swapped), and a relayout of any size is
//! planned from the layouts alone, its buffers refused cleanly where memory cannot hold them.

mod common;

use common::{arg, folder, npy, run};

/// `axe kernel run softmax --rows 2 --cols 4` on `input`: exit code, stderr, and the output's f32s.
fn softmax(d: &std::path::Path, input: &[u8]) -> (i32, String, Option<Vec<f32>>) {
    let (i, o) = (d.join("in.npy"), d.join("out.bin"));
    let _ = std::fs::remove_file(&o);
    std::fs::write(&i, input).unwrap();
    let (code, _, err) = run(&[
        "kernel",
        "run",
        "softmax",
        "--rows",
        "2",
        "--cols",
        "4",
        &arg(&i),
        "-o",
        &arg(&o),
    ]);
    let out = std::fs::read(&o).ok().map(|b| {
        b.chunks(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    });
    (code, err, out)
}

#[test]
fn npy_inputs_are_read_as_numpy_reads_them() {
    let d = folder("kernel-npy");
    let x: [f32; 8] = [0.0, 1.0, 2.0, 3.0, -1.0, 0.5, 0.25, 4.0];
    let le: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    let be: Vec<u8> = x.iter().flat_map(|v| v.to_be_bytes()).collect();
    let (code, err, want) = softmax(&d, &npy("<f4", "(2, 4)", &le));
    assert_eq!(code, 0, "{err}");
    let want = want.unwrap();
    // Each row sums to 1 and follows its inputs' order: the data is the file's, not its header.
    for row in want.chunks(4) {
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6, "{row:?}");
    }
    assert!(want[3] > want[2] && want[7] > want[4], "{want:?}");
    let (code, err, got) = softmax(&d, &npy(">f4", "(2, 4)", &be));
    assert_eq!(code, 0, "{err}");
    assert_eq!(got.unwrap(), want, "big-endian data is swapped");
    // A file cut short, or with bytes past the data, is refused (the data is not taken from its end).
    let whole = npy("<f4", "(2, 4)", &le);
    for (file, what) in [
        (whole[..whole.len() - 4].to_vec(), "28 bytes of data"),
        ([whole.clone(), vec![0; 8]].concat(), "40 bytes of data"),
    ] {
        let (code, err, out) = softmax(&d, &file);
        assert_eq!(code, 1);
        assert!(err.contains(what) && err.contains("needs 32"), "{err}");
        assert!(out.is_none(), "no output is written");
    }
    // Fortran order, another shape, another dtype: each named.
    let at = whole.windows(5).position(|w| w == b"False").unwrap();
    let fortran = [&whole[..at], b"True ", &whole[at + 5..]].concat();
    let (code, err, _) = softmax(&d, &fortran);
    assert_eq!(code, 1);
    assert!(err.contains("column-major (Fortran-order)"), "{err}");
    let (code, err, _) = softmax(&d, &npy("<f4", "(4, 2)", &le));
    assert_eq!(code, 1);
    assert!(
        err.contains("has shape [4,2]") && err.contains("needs [2,4]"),
        "{err}"
    );
    let (code, err, _) = softmax(&d, &npy("<i4", "(2, 4)", &le));
    assert_eq!(code, 1);
    assert!(err.contains("holds '<i4' elements; f32 takes"), "{err}");
}

#[test]
fn relayouts_of_any_size_are_planned_from_the_layouts() {
    // Destinations of 2^32 to 2^40 slots: planned at once, with no memory of their size (an
    // address-space limit of 1 GiB would stop a plan that marked each slot).
    for (src, dst) in [
        ("bf16[65535,65537]{1,0}", "{1,0:T(8,128)(2,1)}"),
        ("f16[2,65535,65533]{2,1,0}", "{1,2,0:T(8,128)(2,1)}"),
        ("f32[100000,100000]{1,0}", "{0,1:T(8,128)}"),
        ("f32[8,16]{1,0}", "{1,0:T(1048576,1048576)}"),
    ] {
        let (code, out, err) = run(&[
            "kernel", "explain", "relayout", "--src", src, "--dst", dst, "--json",
        ]);
        assert_eq!(code, 0, "{src} -> {dst}: {err}");
        assert!(
            out.contains("fill"),
            "{src} -> {dst}: the padding is filled\n{out}"
        );
    }
    // Running one whose destination is larger than the machine: refused before any allocation (and
    // before its input is read).
    let d = folder("kernel-huge");
    let i = d.join("in.bin");
    std::fs::write(&i, [0u8; 512]).unwrap();
    let o = d.join("out.bin");
    let (code, _, err) = run(&[
        "kernel",
        "run",
        "relayout",
        "--src",
        "f32[8,16]{1,0}",
        "--dst",
        "{1,0:T(1048576,1048576)}",
        &arg(&i),
        "-o",
        &arg(&o),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("the interpreter would hold"), "{err}");
    assert!(!o.exists());
}
