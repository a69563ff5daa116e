#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! `axe relayout` on what the bytes mean and on what it is asked to write: pred bytes other than 0 and
//! 1 refused with their offset on every path, attributes that leave bytes alone (`S(1)`) accepted for
//! .npy, overflowing sizes, tuples and too-wide element sizes refused saying why, layouts whose later
//! tile pads inside an earlier one moved, `-` as stdin and stdout, and sub-byte integers in `.npy`
//! files (int8 values, uint8 and ml_dtypes' void bits).

mod common;

use common::run;

/// `axe relayout --shape SHAPE --to TO IN OUT` in `dir`: exit code and stderr.
fn relayout(dir: &std::path::Path, shape: &str, to: &str, input: &str, out: &str) -> (i32, String) {
    let p = |n: &str| dir.join(n).to_string_lossy().to_string();
    let (code, _, err) = run(&["relayout", "--shape", shape, "--to", to, &p(input), &p(out)]);
    (code, err)
}

/// The review's pred bytes (1 0 2 / 0 255 1): refused whatever the destination, naming offset 2, and
/// nothing written; 0/1 bytes pack and copy.
#[test]
fn pred_bytes_other_than_0_and_1_are_refused_on_every_path() {
    let d = common::folder("relayout-pred");
    std::fs::write(d.join("bad.bin"), [1u8, 0, 2, 0, 255, 1]).unwrap();
    for to in ["{1,0:E(1)}", "{1,0}", "{0,1}", "{1,0:T(2,2)}"] {
        for out in ["o.bin", "o.npy"] {
            let (code, err) = relayout(&d, "pred[2,3]", to, "bad.bin", out);
            assert_eq!(code, 1, "{to} {out}");
            if out == "o.npy" && (to.contains("T(") || to.contains("E(")) {
                continue; // refused for the layout first
            }
            assert!(
                err.contains("offset 2 is 2, not a pred value (0 or 1)"),
                "{to}: {err}"
            );
            assert!(!d.join(out).exists());
        }
    }
    // A .npy bool with a byte 2 (numpy can hold one through a view): offset into the data.
    std::fs::write(
        d.join("bad.npy"),
        common::npy("|b1", "(2, 3)", &[0, 1, 0, 1, 2, 0]),
    )
    .unwrap();
    let (code, err) = relayout(&d, "pred[2,3]", "{1,0:E(1)}", "bad.npy", "o.bin");
    assert_eq!(code, 1);
    assert!(err.contains("offset 4 of the data is 2"), "{err}");
    std::fs::write(d.join("ok.bin"), [1u8, 0, 1, 0, 1, 1]).unwrap();
    let (code, err) = relayout(&d, "pred[2,3]", "{1,0:E(1)}", "ok.bin", "p.bin");
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(d.join("p.bin")).unwrap(), [0b110101]);
    let (code, err) = relayout(&d, "pred[2,3]{1,0:E(1)}", "{1,0}", "p.bin", "back.npy");
    assert_eq!(code, 0, "{err}");
    let back = std::fs::read(d.join("back.npy")).unwrap();
    assert_eq!(back[back.len() - 6..], [1, 0, 1, 0, 1, 1]);
    // Padding bytes of a tiled source may hold anything: only elements are checked.
    std::fs::write(d.join("t.bin"), [1u8, 0, 0, 1, 1, 7, 1, 7]).unwrap();
    let (code, err) = relayout(&d, "pred[2,3]{1,0:T(2,2)}", "{1,0}", "t.bin", "u.bin");
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(d.join("u.bin")).unwrap(), [1, 0, 1, 0, 1, 1]);
}

/// `S(1)` (a memory space), split configs and an element size of the type's own width leave the bytes
/// alone, so a .npy holds them.
#[test]
fn npy_takes_layouts_whose_attributes_leave_bytes_alone() {
    let d = common::folder("relayout-space");
    let data: Vec<u8> = (0..12u32).flat_map(|v| (v as f32).to_le_bytes()).collect();
    std::fs::write(d.join("a.npy"), common::npy("<f4", "(3, 4)", &data)).unwrap();
    let (code, err) = relayout(&d, "f32[3,4]{1,0:S(1)}", "{0,1}", "a.npy", "o.bin");
    assert_eq!(code, 0, "{err}");
    let (code, err) = relayout(&d, "f32[3,4]", "{1,0:S(1)}", "a.npy", "b.npy");
    assert_eq!(code, 0, "{err}");
    let b = std::fs::read(d.join("b.npy")).unwrap();
    assert_eq!(b[b.len() - 48..], data[..]);
    let (code, err) = relayout(&d, "f32[3,4]", "{0,1:S(1)}", "a.npy", "f.npy");
    assert_eq!(code, 0, "{err}");
    assert!(String::from_utf8_lossy(&std::fs::read(d.join("f.npy")).unwrap()).contains("True"));
    std::fs::write(
        d.join("p.npy"),
        common::npy("|b1", "(2, 3)", &[0, 1, 1, 0, 0, 1]),
    )
    .unwrap();
    let (code, err) = relayout(&d, "pred[2,3]", "{1,0:E(8)}", "p.npy", "q.npy");
    assert_eq!(code, 0, "{err}");
    // A tiled layout still is not a .npy.
    let (code, err) = relayout(&d, "f32[3,4]", "{1,0:T(2,2)S(1)}", "a.npy", "t.npy");
    assert_eq!(code, 1);
    assert!(err.contains(".bin"), "{err}");
}

/// Sizes past 64 bits, tuples, and element sizes wider or narrower than kernels move are refused
/// saying what is wrong.
#[test]
fn refusals_say_what_is_wrong() {
    let d = common::folder("relayout-refusals");
    std::fs::write(d.join("one.bin"), [0u8; 4]).unwrap();
    std::fs::write(d.join("two.bin"), [1u8, 0]).unwrap();
    std::fs::write(d.join("d.bin"), [0u8; 48]).unwrap();
    let (code, err) = relayout(
        &d,
        "f32[1]",
        "{0:T(4611686018427387904)}",
        "one.bin",
        "o.bin",
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("integer overflow") && err.contains("f32[1]{0:T("),
        "{err}"
    );
    assert!(!err.contains("18446744073709551615"), "{err}");
    let (code, err) = relayout(&d, "f32[3,4]", "(f32[3,4])", "d.bin", "o.bin");
    assert_eq!(code, 1);
    assert!(err.contains("is not an array shape; --to takes"), "{err}");
    let (code, err) = relayout(&d, "f32[3,4]", "nonsense[", "d.bin", "o.bin");
    assert_eq!(code, 1, "{err}");
    let (code, err) = relayout(&d, "f32[1]", "{0:E(64)}", "one.bin", "o.bin");
    assert_eq!(code, 1);
    assert!(err.contains("E(64) is wider than f32's 32 bits"), "{err}");
    for e in ["E(2)", "E(4)"] {
        let (code, err) = relayout(&d, "pred[2]", &format!("{{0:{e}}}"), "two.bin", "o.bin");
        assert_eq!(code, 1);
        assert!(err.contains("only as pred into E(1)"), "{e}: {err}");
    }
    assert!(!d.join("o.bin").exists());
}

/// A later tile that pads inside an earlier one (`T(2)(3)`) moves as XLA's index function says; a `*`
/// merge cut across is refused naming it, not blaming padding.
#[test]
fn later_tiles_that_pad_move_and_star_merges_are_named() {
    let d = common::folder("relayout-tiles");
    let f = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    std::fs::write(d.join("f3.bin"), f(&[1.0, 2.0, 3.0])).unwrap();
    let (code, err) = relayout(&d, "f32[3]", "{0:T(2)(3)}", "f3.bin", "o.bin");
    assert_eq!(code, 0, "{err}");
    // `axe xla index --all`: [0], [1], padding, [2], padding, padding.
    let want = f(&[1.0, 2.0, 0.0, 3.0, 0.0, 0.0]);
    assert_eq!(std::fs::read(d.join("o.bin")).unwrap(), want);
    let (code, err) = relayout(&d, "f32[3]{0:T(2)(3)}", "{0}", "o.bin", "back.bin");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(d.join("back.bin")).unwrap(),
        f(&[1.0, 2.0, 3.0])
    );
    std::fs::write(
        d.join("d.bin"),
        f(&(0..24).map(|v| v as f32).collect::<Vec<_>>()),
    )
    .unwrap();
    let (code, err) = relayout(&d, "f32[2,3,4]", "{2,1,0:T(*,2,2)}", "d.bin", "o.bin");
    assert_eq!(code, 1);
    assert!(err.contains("merges dimensions with `*`"), "{err}");
    assert!(
        !err.contains("a later tile") && !err.contains("padding"),
        "{err}"
    );
}

/// `-` is stdin as an input and stdout as an output (raw bytes), as `-` is stdin elsewhere in the CLI.
#[test]
fn dash_is_stdin_and_stdout() {
    let data: Vec<u8> = (0..12u8).collect();
    let out = assert_cmd::Command::cargo_bin("axe")
        .unwrap()
        .args(["relayout", "--shape", "u8[3,4]", "--to", "{0,1}", "-", "-"])
        .write_stdin(data)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(out.stdout, [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
    assert!(
        err.contains("u8[3,4]{0,1}"),
        "the summary goes to stderr: {err}"
    );
    let d = common::folder("relayout-dash");
    assert!(!d.join("-").exists());
}

/// s4 as numpy holds it: an int8 array of values (-8..7) packs into E(4) and comes back as int8
/// values; uint8 and ml_dtypes' `|V1` arrays are the bits (-1 the byte 0x0f) and pack the same; a
/// value out of range is refused at its index, never wrapped; u4 from int8 is bits.
#[test]
fn sub_byte_integers_come_from_and_go_to_npy_files() {
    let d = common::folder("relayout-s4-npy");
    let values: [i8; 6] = [-1, 7, -8, 0, 3, -5];
    let bits: Vec<u8> = values.iter().map(|&v| v as u8 & 0x0f).collect();
    // Packed E(4), row-major: element i at bits 4(i % 2) of byte i / 2.
    let packed: Vec<u8> = bits.chunks(2).map(|p| p[0] | p[1] << 4).collect();
    let ints: Vec<u8> = values.iter().map(|&v| v as u8).collect();
    std::fs::write(d.join("i8.npy"), common::npy("|i1", "(2, 3)", &ints)).unwrap();
    std::fs::write(d.join("u8.npy"), common::npy("|u1", "(2, 3)", &bits)).unwrap();
    std::fs::write(d.join("v1.npy"), common::npy("|V1", "(2, 3)", &bits)).unwrap();
    for input in ["i8.npy", "u8.npy", "v1.npy"] {
        let (code, err) = relayout(&d, "s4[2,3]", "{1,0:E(4)}", input, "p.bin");
        assert_eq!(code, 0, "{input}: {err}");
        assert_eq!(std::fs::read(d.join("p.bin")).unwrap(), packed, "{input}");
    }
    let (code, err) = relayout(&d, "s4[2,3]{1,0:E(4)}", "{1,0}", "p.bin", "back.npy");
    assert_eq!(code, 0, "{err}");
    let back = std::fs::read(d.join("back.npy")).unwrap();
    let header = String::from_utf8_lossy(&back[..back.len() - 6]).to_string();
    assert!(header.contains("'descr': '|i1'"), "{header}");
    assert_eq!(back[back.len() - 6..], ints[..]);
    // Transposed on the way: the values follow their elements.
    let (code, err) = relayout(&d, "s4[2,3]", "{0,1}", "i8.npy", "t.npy");
    assert_eq!(code, 0, "{err}");
    let t = std::fs::read(d.join("t.npy")).unwrap();
    assert_eq!(
        t[t.len() - 6..],
        [ints[0], ints[3], ints[1], ints[4], ints[2], ints[5]]
    );
    // Out of range as int8 values: 8 at [1,1]; as bits: 16 at offset 4 of the data.
    let mut bad = ints.clone();
    bad[4] = 8;
    std::fs::write(d.join("bad.npy"), common::npy("|i1", "(2, 3)", &bad)).unwrap();
    let (code, err) = relayout(&d, "s4[2,3]", "{1,0:E(4)}", "bad.npy", "x.bin");
    assert_eq!(code, 1);
    assert!(
        err.contains("element [1,1] is 8") && err.contains("-8..7"),
        "{err}"
    );
    assert!(!d.join("x.bin").exists());
    let mut bad = bits.clone();
    bad[4] = 16;
    std::fs::write(d.join("badu.npy"), common::npy("|u1", "(2, 3)", &bad)).unwrap();
    let (code, err) = relayout(&d, "s4[2,3]", "{1,0:E(4)}", "badu.npy", "x.bin");
    assert_eq!(code, 1);
    assert!(err.contains("offset 4 of the data is 16"), "{err}");
    // u4 in an int8 array is its bits: 15 stays 15, and comes back as uint8.
    std::fs::write(d.join("u4.npy"), common::npy("|i1", "(2,)", &[15, 1])).unwrap();
    let (code, err) = relayout(&d, "u4[2]", "{0:E(4)}", "u4.npy", "u4.bin");
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(d.join("u4.bin")).unwrap(), [0x1f]);
    let (code, err) = relayout(&d, "u4[2]{0:E(4)}", "{0}", "u4.bin", "u4b.npy");
    assert_eq!(code, 0, "{err}");
    let u = std::fs::read(d.join("u4b.npy")).unwrap();
    assert!(String::from_utf8_lossy(&u).contains("'descr': '|u1'"));
    assert_eq!(u[u.len() - 2..], [15, 1]);
}
