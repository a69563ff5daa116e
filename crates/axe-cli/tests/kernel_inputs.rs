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

/// The same `.npy` file marked Fortran order (its data then read column by column).
fn fortran(file: Vec<u8>) -> Vec<u8> {
    let at = file.windows(5).position(|w| w == b"False").unwrap();
    [&file[..at], b"True ", &file[at + 5..]].concat()
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
    // Fortran order: the same logical array, its data kept column by column, moved into the
    // kernel's row-major layout, so the answer is the same.
    let columns: Vec<u8> = (0..8)
        .flat_map(|p| x[(p % 2) * 4 + p / 2].to_le_bytes())
        .collect();
    let (code, err, got) = softmax(&d, &fortran(npy("<f4", "(2, 4)", &columns)));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        got.unwrap(),
        want,
        "a Fortran-order array is read as numpy reads it"
    );
    // Another shape, another dtype: each named.
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

/// gemm on the interpreter: `C = A · B` with B given as its transpose, an `[N,K]` array, in either
/// order (`np.save` of `B.T` writes a Fortran-order file); B itself (`[K,N]`) is refused, saying so.
#[test]
fn gemm_takes_b_transposed_in_either_order() {
    let d = folder("kernel-gemm-b");
    let (m, n, k) = (128usize, 128usize, 32usize);
    let a: Vec<f32> = (0..m * k).map(|i| ((i * 7) % 5) as f32 - 2.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| ((i * 3) % 7) as f32 - 3.0).collect(); // B[K,N], row-major
    let f16 = |v: f32| half::f16::from_f32(v).to_le_bytes();
    // Bᵀ row-major ([N,K], C order) and the same array in Fortran order (B's own bytes).
    let bt_c: Vec<u8> = (0..n * k)
        .flat_map(|p| f16(b[(p % k) * n + p / k]))
        .collect();
    let bt_f: Vec<u8> = b.iter().flat_map(|&v| f16(v)).collect();
    let a_file = d.join("a.npy");
    std::fs::write(
        &a_file,
        npy(
            "<f2",
            "(128, 32)",
            &a.iter().flat_map(|&v| f16(v)).collect::<Vec<u8>>(),
        ),
    )
    .unwrap();
    let (c_order, f_order) = (
        npy("<f2", "(128, 32)", &bt_c),
        fortran(npy("<f2", "(128, 32)", &bt_f)),
    );
    let mut want = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
        }
    }
    // `axe kernel run gemm` on A and the B file given: exit code and stderr.
    let gemm = |b: &std::path::Path, c: &std::path::Path| {
        let (a, b, c) = (arg(&a_file), arg(b), arg(c));
        let (code, _, err) = run(&[
            "kernel", "run", "gemm", "--m", "128", "--n", "128", "--k", "32", "--dtype", "f16", &a,
            &b, "-o", &c,
        ]);
        (code, err)
    };
    for (name, file) in [("bt_c.npy", c_order), ("bt_f.npy", f_order)] {
        let (bf, o) = (d.join(name), d.join("c.bin"));
        std::fs::write(&bf, file).unwrap();
        let (code, err) = gemm(&bf, &o);
        assert_eq!(code, 0, "{name}: {err}");
        let got: Vec<f32> = std::fs::read(&o)
            .unwrap()
            .chunks(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(got, want, "{name}");
    }
    // B itself, [K,N]: refused, naming what gemm takes.
    let bf = d.join("b.npy");
    std::fs::write(&bf, npy("<f2", "(32, 128)", &bt_f)).unwrap();
    let (code, err) = gemm(&bf, &d.join("c.bin"));
    assert_eq!(code, 1);
    assert!(
        err.contains("has shape [32,128]") && err.contains("B.T"),
        "{err}"
    );
}
