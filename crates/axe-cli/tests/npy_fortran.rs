//! A `.npy` file saved in Fortran order (`fortran_order: True`) is the column-major layout: `axe
//! relayout --to '{0,1,...}'` takes it as it is, whatever `--shape` (row-major by default) says, for every
//! rank and byte order, and writes the same elements back.
#![allow(clippy::unwrap_used)]

mod common;

use common::run;

/// A version-1 `.npy` file of `dtype` holding `data` (in the file's order) with the given shape and
/// order: the header as numpy writes it, padded so the data starts at a multiple of 64.
fn npy_bytes(dtype: &str, fortran: bool, shape: &[u64], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let tuple = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let order = if fortran { "True" } else { "False" };
    let mut h = format!("{{'descr': '{dtype}', 'fortran_order': {order}, 'shape': {tuple}, }}");
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend((h.len() as u16).to_le_bytes());
    v.extend(h.as_bytes());
    v.extend(data);
    v
}

/// The elements 0, 1, 2, ... of an array of `dims` (row-major numbering), listed column-major: the
/// order a Fortran-order file keeps them in.
fn column_major_values(dims: &[u64]) -> Vec<f32> {
    let n: u64 = dims.iter().product();
    (0..n)
        .map(|k| {
            // The column-major position k is the multi-index (i0, i1, ...) with i0 fastest.
            let (mut rest, mut row_major, mut stride) = (k, 0u64, 1u64);
            let mut idx = vec![0u64; dims.len()];
            for (d, &e) in dims.iter().enumerate() {
                idx[d] = rest % e;
                rest /= e;
            }
            for d in (0..dims.len()).rev() {
                row_major += idx[d] * stride;
                stride *= dims[d];
            }
            row_major as f32
        })
        .collect()
}

fn le(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn be(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_be_bytes()).collect()
}

#[test]
fn a_fortran_order_file_relayouts_to_column_major_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    for dims in [&[2u64, 3][..], &[2, 3, 4], &[3, 1, 2, 2], &[5]] {
        let rank = dims.len();
        let values = column_major_values(dims);
        let shape = format!(
            "f32[{}]",
            dims.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        );
        let to = format!(
            "{{{}}}",
            (0..rank)
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
        for (dtype, data) in [("<f4", le(&values)), (">f4", be(&values))] {
            let input = dir.path().join("in.npy");
            std::fs::write(&input, npy_bytes(dtype, true, dims, &data)).unwrap();
            let input = input.to_str().unwrap();
            // To raw bytes: the column-major bytes, little-endian.
            let bin = dir.path().join("out.bin");
            let (code, _, err) = run(&[
                "relayout",
                "--shape",
                &shape,
                "--to",
                &to,
                input,
                bin.to_str().unwrap(),
            ]);
            assert_eq!(code, 0, "{shape} {dtype}: {err}");
            assert_eq!(std::fs::read(&bin).unwrap(), le(&values), "{shape} {dtype}");
            // To .npy: a Fortran-order file of the same elements.
            let out = dir.path().join("out.npy");
            let (code, _, err) = run(&[
                "relayout",
                "--shape",
                &shape,
                "--to",
                &to,
                input,
                out.to_str().unwrap(),
            ]);
            assert_eq!(code, 0, "{shape} {dtype}: {err}");
            let f = npyz::NpyFile::new(std::fs::File::open(&out).unwrap()).unwrap();
            let want_order = if rank > 1 {
                npyz::Order::Fortran
            } else {
                npyz::Order::C
            };
            assert_eq!(
                (f.shape().to_vec(), f.order()),
                (dims.to_vec(), want_order),
                "{shape}"
            );
            assert_eq!(f.into_vec::<f32>().unwrap(), values, "{shape} {dtype}");
        }
    }
}

#[test]
fn a_fortran_order_file_is_not_read_as_another_layout() {
    let dir = tempfile::tempdir().unwrap();
    let values = column_major_values(&[2, 3]);
    let input = dir.path().join("in.npy");
    std::fs::write(&input, npy_bytes("<f4", true, &[2, 3], &le(&values))).unwrap();
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        "f32[2,3]{1,0:T(2,2)}",
        "--to",
        "{0,1}",
        input.to_str().unwrap(),
        dir.path().join("x.bin").to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("column-major (Fortran order)"), "{err}");
    // A C-order file given a column-major --shape: refused the same way.
    std::fs::write(&input, npy_bytes("<f4", false, &[2, 3], &le(&values))).unwrap();
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        "f32[2,3]{0,1}",
        "--to",
        "{0,1}",
        input.to_str().unwrap(),
        dir.path().join("x.bin").to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("holds a row-major array"), "{err}");
    // A Fortran-order file given a --shape that spells out row-major: refused, not overridden (a
    // --shape without a layout, or with {0,1}, reads it as column-major).
    std::fs::write(&input, npy_bytes("<f4", true, &[2, 3], &le(&values))).unwrap();
    for (shape, ok) in [
        ("f32[2,3]{1,0}", false),
        ("f32[2,3]", true),
        ("f32[2,3]{0,1}", true),
    ] {
        let (code, _, err) = run(&[
            "relayout",
            "--shape",
            shape,
            "--to",
            "{0,1}",
            input.to_str().unwrap(),
            dir.path().join("x.bin").to_str().unwrap(),
        ]);
        assert_eq!(code == 0, ok, "{shape}: {err}");
        if !ok {
            assert!(err.contains("but --shape says f32[2,3]{1,0}"), "{err}");
        }
    }
}
