#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `axe relayout` inputs: a `.npy`'s dtype (kind, width, byte order) and every input's size must
//! match the shape, or the input is refused before anything of the shape's size is allocated.

mod common;

use std::path::Path;

use common::{arg, folder, npy, run};

/// Runs `axe relayout --shape SHAPE --to {0} input out.bin` on a `.npy` of `descr` holding `data`:
/// exit code, stderr and the output's bytes (if any).
fn relayout_npy(
    d: &Path,
    shape: &str,
    descr: &str,
    dims: &str,
    data: &[u8],
) -> (i32, String, Option<Vec<u8>>) {
    let input = d.join("in.npy");
    let out = d.join("out.bin");
    let _ = std::fs::remove_file(&out);
    std::fs::write(&input, npy(descr, dims, data)).unwrap();
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        shape,
        "--to",
        "{0}",
        &arg(&input),
        &arg(&out),
    ]);
    (code, err, std::fs::read(&out).ok())
}

#[test]
fn big_endian_data_is_converted() {
    let d = folder("npy-be");
    let values = [1.5f32, -2.0, 3.25];
    let be: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    let le: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let (code, err, out) = relayout_npy(&d, "f32[3]", ">f4", "(3,)", &be);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.unwrap(), le);
    // Complex numbers swap each part.
    let c: Vec<u8> = values[..2].iter().flat_map(|v| v.to_be_bytes()).collect();
    let (code, err, out) = relayout_npy(&d, "c64[1]", ">c8", "(1,)", &c);
    assert_eq!(code, 0, "{err}");
    let want: Vec<u8> = values[..2].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(out.unwrap(), want);
    let (code, err, out) = relayout_npy(&d, "s16[2]", ">i2", "(2,)", &[0x01, 0x02, 0xff, 0xfe]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.unwrap(), [0x02, 0x01, 0xfe, 0xff]);
}

#[test]
fn a_dtype_of_another_kind_is_refused() {
    let d = folder("npy-kind");
    for (shape, descr, width) in [
        ("f32[3]", "<i4", 4),
        ("f32[3]", "<u4", 4),
        ("f32[3]", "|S4", 4),
        ("f32[3]", "<U1", 4),
        ("s32[3]", "<f4", 4),
        ("u16[3]", "<i2", 2),
        ("f16[3]", "<u2", 2),
        ("bf16[3]", "<f2", 2),
        ("pred[3]", "|u1", 1),
        ("f64[3]", "<c8", 8),
    ] {
        let (code, err, out) = relayout_npy(&d, shape, descr, "(3,)", &vec![0u8; 3 * width]);
        assert_eq!(code, 1, "{shape} from {descr}: {err}");
        assert!(err.contains(descr), "{shape} from {descr}: {err}");
        assert!(out.is_none(), "{shape} from {descr}");
    }
    let (_, err, _) = relayout_npy(&d, "bf16[3]", "<f2", "(3,)", &[0; 6]);
    assert!(err.contains("uint16") && err.contains("V2"), "{err}");
}

#[test]
fn bf16_and_pred_come_from_their_numpy_stand_ins() {
    let d = folder("npy-stand-ins");
    let bits = [0x80u8, 0x3f, 0x00, 0xc0, 0x40, 0x40];
    for descr in ["<u2", "|V2", "<V2"] {
        let (code, err, out) = relayout_npy(&d, "bf16[3]", descr, "(3,)", &bits);
        assert_eq!(code, 0, "{descr}: {err}");
        assert_eq!(out.unwrap(), bits, "{descr}");
    }
    let (code, err, out) = relayout_npy(&d, "bf16[3]", ">u2", "(3,)", &bits);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.unwrap(), [0x3f, 0x80, 0xc0, 0x00, 0x40, 0x40]);
    // ml_dtypes saves its 8-bit floats as 1-byte voids.
    let (code, err, out) = relayout_npy(&d, "f8e4m3fn[3]", "<V1", "(3,)", &[0x38, 0xc0, 0x44]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.unwrap(), [0x38, 0xc0, 0x44]);
    let (code, err, out) = relayout_npy(&d, "pred[3]", "|b1", "(3,)", &[1, 0, 1]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.unwrap(), [1, 0, 1]);
}

#[test]
fn an_input_longer_than_its_shape_is_refused() {
    let d = folder("npy-long");
    let out = d.join("out.bin");
    // A .bin of 100 bytes for f32[3,5] (60 bytes).
    std::fs::write(d.join("a.bin"), [0u8; 100]).unwrap();
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        "f32[3,5]",
        "--to",
        "{0,1}",
        &arg(&d.join("a.bin")),
        &arg(&out),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("100 bytes") && err.contains("60"), "{err}");
    assert!(!out.exists());
    // Trailing bytes after a .npy's data.
    let (code, err, out) = relayout_npy(&d, "u8[3]", "|u1", "(3,)", &[1, 2, 3, 4]);
    assert_eq!(code, 1);
    assert!(err.contains("4 bytes") && err.contains('3'), "{err}");
    assert!(out.is_none());
    // A stream (not a regular file) is checked as it is read: one byte too many, one too few.
    for (bytes, says) in [(61, "more than"), (59, "59 bytes")] {
        let o = d.join("s.bin");
        let out = assert_cmd::Command::cargo_bin("axe")
            .unwrap()
            .args([
                "relayout",
                "--shape",
                "f32[3,5]",
                "--to",
                "{0,1}",
                "/dev/stdin",
            ])
            .arg(&o)
            .write_stdin(vec![0u8; bytes])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(says), "{bytes}: {err}");
        assert!(!o.exists());
    }
}

#[test]
fn a_tiny_input_with_a_huge_shape_is_refused_before_allocating() {
    // Under a 2 GiB address-space limit, so that allocating for the shape fails instead of
    // succeeding slowly.
    let d = folder("npy-huge");
    std::fs::write(d.join("a.bin"), [0u8; 60]).unwrap();
    std::fs::write(d.join("a.npy"), npy("<f4", "(300000000000,)", &[0; 60])).unwrap();
    for (input, shape) in [
        ("a.bin", "f32[300000000000]"),
        ("a.bin", "f32[3000000,100000]{0,1}"),
        ("a.npy", "f32[300000000000]"),
    ] {
        let out = std::process::Command::new("sh")
            .current_dir(&d)
            .arg("-c")
            .arg(r#"ulimit -v 2097152; exec "$0" relayout --shape "$1" --to '{0}' "$2" out.bin"#)
            .arg(assert_cmd::cargo::cargo_bin("axe"))
            .arg(shape)
            .arg(input)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{input} {shape}: {err}");
        assert!(
            err.contains("60 bytes") && err.contains("1200000000000"),
            "{input} {shape}: {err}"
        );
        assert!(!d.join("out.bin").exists());
    }
}

#[test]
fn a_file_cut_inside_its_header_says_so() {
    let d = folder("npy-cut");
    let whole = npy("<f4", "(3,)", &[0; 12]);
    let input = d.join("in.npy");
    std::fs::write(&input, &whole[..20]).unwrap();
    let (code, _, err) = run(&[
        "relayout",
        "--shape",
        "f32[3]",
        "--to",
        "{0}",
        &arg(&input),
        &arg(&d.join("out.bin")),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("the file ends inside its .npy header"),
        "{err}"
    );
}
