#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Fixes from the HLO review: split layouts' physical size, `L` slots, sub-byte sizes near `i64::MAX`,
//! overflow messages naming the shape, layout equality as printed, `f8e8m0fnu` literals, carets under
//! tabs, and unbounded dynamic arrays in the cost report.

use std::hash::{BuildHasher, RandomState};

use axe_xla::hlo::{parse_module, stats::report};
use axe_xla::{
    element_offset, memory_slots, parse_shape, sizes, static_dims, ArrayShape, Dim, SplitConfig,
    Tile, TileDim, Tiling,
};
use proptest::prelude::*;

fn array(text: &str) -> ArrayShape {
    parse_shape(text).unwrap().as_array().unwrap().clone()
}

fn triple(text: &str) -> (i64, i64, i64) {
    let z = sizes(&array(text)).unwrap();
    (z.logical_bytes, z.xla_array_size_bytes, z.physical_bytes)
}

#[test]
fn split_layouts_are_sized_split_by_split() {
    // Splits of 4 and 12 on T(8): 8 + 16 slots; unsplit, 16.
    assert_eq!(triple("f32[16]{0:T(8)SC(0:4)}"), (64, 64, 96));
    assert_eq!(triple("f32[16]{0:T(8)}"), (64, 64, 64));
    // Physical dimension 0 is logical 0 here: splits of 3 and 7 rows, each one (8,128) tile.
    assert_eq!(triple("f32[10,20]{1,0:T(8,128)SC(0:3)}"), (800, 4096, 8192));
    // Physical dimension 0 of {0,1} is logical 1 (20): splits of 3 and 17, one and three tile rows;
    // ArraySize sizes the 17 alone.
    assert_eq!(
        triple("f32[10,20]{0,1:T(8,128)SC(0:3)}"),
        (800, 4 * 24 * 128, 4 * (8 + 24) * 128)
    );
    // Untiled: the pieces hold the elements, each packed on its own (5 four-bit elements: 1 + 2 bytes).
    assert_eq!(triple("s4[5]{0:E(4)SC(0:1)}"), (3, 3, 3));
    assert_eq!(triple("s4[2]{0:E(4)SC(0:1)}"), (1, 1, 2));
    // L pads every piece: 3 → 4 and 13 → 16.
    assert_eq!(triple("f32[16]{0:L(4)SC(0:3)}"), (64, 64, 80));
    // Points out of order or past the size cut empty pieces (XLA sizes such configs too).
    assert_eq!(triple("f32[3,5]{1,0:SC(0:30)}"), (60, 60, 60));
    assert_eq!(triple("f32[16]{0:T(8)SC(0:12,4)}"), (64, 64, 96));
}

/// The pieces of a dimension of `extent` cut at `points`, each point clamped between the previous one
/// and the extent (the rule `sizes` documents), one by one.
fn cuts(extent: i64, points: &[i64]) -> Vec<i64> {
    let mut out = Vec::new();
    let mut last = 0;
    for &p in points.iter().chain([extent].iter()) {
        let p = p.clamp(last, extent.max(last));
        out.push(p - last);
        last = p;
    }
    out
}

/// A random 1–3-dimensional array with one tile, `L`, and split configs on up to two dimensions.
fn split_strategy() -> impl Strategy<Value = ArrayShape> {
    (1usize..=3)
        .prop_flat_map(|rank| {
            (
                proptest::collection::vec(1i64..=12, rank),
                Just((0..rank as i64).collect::<Vec<_>>()).prop_shuffle(),
                proptest::collection::vec(1i64..=5, rank.min(2)),
                1i64..=5,
                proptest::collection::vec(
                    (0..rank as i64, proptest::collection::vec(0i64..=14, 0..4)),
                    0..3,
                ),
            )
        })
        .prop_map(|(dims, order, tile, l, splits)| {
            let mut a = ArrayShape::new(axe_xla::PrimitiveType::F32, &dims);
            a.layout.minor_to_major = order.into_iter().collect();
            a.layout
                .tiles
                .push(Tile(tile.into_iter().map(TileDim::Size).collect()));
            a.layout.tail_padding_alignment_in_elements = l;
            a.layout.split_configs = splits
                .into_iter()
                .map(|(dimension, split_indices)| SplitConfig {
                    dimension,
                    split_indices,
                })
                .collect();
            a
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    /// Physical = Σ over every piece, enumerated one by one (no grouping), of the unsplit size of the
    /// piece; the pieces hold every element once.
    #[test]
    fn physical_is_the_sum_of_the_pieces(a in split_strategy()) {
        let dims = static_dims(&a).unwrap();
        let rank = a.rank();
        let mut per_dim: Vec<Vec<i64>> = dims.iter().map(|&d| vec![d]).collect();
        let mut seen = Vec::new();
        for c in &a.layout.split_configs {
            let logical = a.layout.minor_to_major[rank - 1 - c.dimension as usize] as usize;
            if !seen.contains(&logical) {
                seen.push(logical);
                per_dim[logical] = cuts(dims[logical], &c.split_indices);
            }
        }
        let mut pieces: Vec<Vec<i64>> = vec![vec![]];
        for options in &per_dim {
            pieces = pieces
                .iter()
                .flat_map(|p| options.iter().map(move |&o| [p.clone(), vec![o]].concat()))
                .collect();
        }
        let mut physical = 0;
        let mut elements = 0;
        for p in &pieces {
            let mut piece = a.clone();
            piece.layout.split_configs.clear();
            piece.dims = p.iter().map(|&d| Dim::Static(d)).collect();
            physical += sizes(&piece).unwrap().physical_bytes;
            elements += p.iter().product::<i64>();
        }
        let z = sizes(&a).unwrap();
        prop_assert_eq!(z.physical_bytes, physical, "{}", a);
        prop_assert_eq!(elements, dims.iter().product::<i64>());
        prop_assert!(z.logical_bytes <= z.physical_bytes);
        if a.layout.split_configs.is_empty() {
            prop_assert_eq!(z.physical_bytes, memory_slots(&a).unwrap() * 4);
        }
    }

    /// The memory slots are the expanded tiles then the `L` tail: a multiple of `L`, less than `L`
    /// past the tiles, and the physical size in f32s.
    #[test]
    fn memory_slots_are_the_tiles_then_the_tail(a in split_strategy()) {
        let mut a = a;
        a.layout.split_configs.clear();
        let slots = memory_slots(&a).unwrap();
        let tiled = Tiling::new(&a).unwrap().expanded_elements().unwrap();
        let l = a.layout.tail_padding_alignment_in_elements;
        prop_assert_eq!(slots % l, 0);
        prop_assert!(tiled <= slots && slots < tiled + l);
        prop_assert_eq!(slots * 4, sizes(&a).unwrap().physical_bytes);
    }
}

#[test]
fn sub_byte_sizes_up_to_i64_max_elements() {
    let z = sizes(&array("s4[9223372036854775807]{0:E(4)}")).unwrap();
    assert_eq!(z.logical_bytes, 1 << 62);
    assert_eq!(z.physical_bytes, 1 << 62);
    // 2^63 − 1 one-byte elements fit; eight bits each, still bytes.
    assert_eq!(
        triple("u8[9223372036854775807]"),
        (i64::MAX, i64::MAX, i64::MAX)
    );
    // A byte count past i64 is still an overflow, naming the shape.
    let e = sizes(&array("s4[9223372036854775807]{0:E(16)}")).unwrap_err();
    assert!(
        e.to_string().contains("s4[9223372036854775807]{0:E(16)}"),
        "{e}"
    );
}

#[test]
fn overflows_name_the_shape() {
    let text = "f32[9223372036854775807]{0:T(1024)}";
    let a = array(text);
    let e = Tiling::new(&a).unwrap_err().to_string();
    assert_eq!(
        e,
        format!("integer overflow while multiplying dimensions of {text}")
    );
    let e = element_offset(&a, &[1]).unwrap_err().to_string();
    assert_eq!(
        e,
        format!("integer overflow while multiplying dimensions of {text}")
    );
    // Named once, however many layers pass it on.
    let e = sizes(&a).unwrap_err().to_string();
    assert_eq!(e.matches(text).count(), 1, "{e}");
    let e = element_offset(&array("f32[4611686018427387904]"), &[4611686018427387903])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bit offset of f32[4611686018427387904]{0}"),
        "{e}"
    );
}

#[test]
fn layouts_that_print_alike_are_equal() {
    let state = RandomState::new();
    for (a, b) in [
        ("f32[3,5]{1,0:D(C)T(2,2)}", "f32[3,5]{1,0:T(2,2)}"),
        ("f32[8]{0:M(-1)}", "f32[8]{0}"),
        ("f32[8]{0:M(0)}", "f32[8]{0:D(S+~)M(-7)}"),
        ("f32[]{:D(C)}", "f32[]"),
    ] {
        let (x, y) = (array(a), array(b));
        assert_eq!(x.to_string(), y.to_string());
        assert_eq!(x, y, "{a} vs {b}");
        assert_eq!(state.hash_one(&x), state.hash_one(&y), "{a} vs {b}");
        assert_eq!(array(&x.to_string()), x, "reading back {a}");
    }
    // What prints differently stays unequal.
    for (a, b) in [
        ("f32[8]{0:M(4)}", "f32[8]{0}"),
        ("f32[8]{0:S(1)}", "f32[8]{0}"),
        ("f32[3,5]{1,0:T(2,2)}", "f32[3,5]{0,1:T(2,2)}"),
    ] {
        assert_ne!(array(a), array(b), "{a} vs {b}");
    }
}

#[test]
fn reading_back_the_corpus_gives_equal_shapes() {
    for line in include_str!("corpus/shapes.jsonl").lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        let Ok(shape) = parse_shape(row["input"].as_str().unwrap()) else {
            continue;
        };
        assert_eq!(parse_shape(&shape.to_string()).unwrap(), shape, "{shape}");
    }
}

fn constant(ty: &str, value: &str) -> String {
    format!("HloModule m\n\nENTRY e {{\n  ROOT c = {ty}[1]{{0}} constant({{{value}}})\n}}\n")
}

#[test]
fn e8m0_constants_have_no_zero_and_no_sign() {
    // As jaxlib 0.10.2 answers (`/work/review/hlo/t/rej/lit.sh f8e8m0fnu ...`).
    for v in [
        "0", "-0", "-1", "-0.0", "0e5", "00", "-1e-50", "1e-400", "-2.5e38",
    ] {
        let e = parse_module(&constant("f8e8m0fnu", v))
            .err()
            .unwrap_or_else(|| panic!("{v} read as an f8e8m0fnu"))
            .to_string();
        assert!(
            e.contains("out of range for f8e8m0fnu") && e.contains("no zero"),
            "{v}: {e}"
        );
        assert!(e.starts_with("4:38:"), "{v}: {e}");
    }
    // Positive numbers too small round to 2^-127 and are taken; 2^127 is the largest.
    for v in [
        "1e-50",
        "1e-320",
        "5.9e-39",
        "0.5",
        "1",
        "1.70141e+38",
        "2.5e38",
    ] {
        parse_module(&constant("f8e8m0fnu", v)).unwrap_or_else(|e| panic!("{v}: {e}"));
    }
    // Other types keep their zero and sign.
    for ty in ["f8e4m3fn", "f8e5m2", "bf16", "f4e2m1fn"] {
        for v in ["0", "-0", "-1"] {
            parse_module(&constant(ty, v)).unwrap_or_else(|e| panic!("{ty} {v}: {e}"));
        }
    }
}

#[test]
fn the_caret_copies_the_tabs_before_it() {
    let text = "HloModule m\n\nENTRY e {\n\tp = f32[4]{0} parameter(0)\n\tROOT r = f32[4]{0} negat(p)\n}\n";
    let e = parse_module(text).unwrap_err().to_string();
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines[1], "  \tROOT r = f32[4]{0} negat(p)", "{e}");
    assert_eq!(lines[2], format!("  \t{}^", " ".repeat(19)), "{e}");
    // With tabs expanded alike, the caret is under `negat`.
    let expand = |s: &str| s.replace('\t', "        ");
    let col = expand(lines[2]).find('^').unwrap();
    assert_eq!(&expand(lines[1])[col..col + 5], "negat");
}

#[test]
fn unbounded_dynamic_arrays_are_skipped_by_the_report() {
    let text = "HloModule m\nENTRY e {\n  p = f32[?,3]{1,0} parameter(0)\n  q = f32[<=8,3]{1,0:T(8,128)} parameter(1)\n  ROOT t = (f32[?,3]{1,0}, f32[<=8,3]{1,0:T(8,128)}) tuple(p, q)\n}\n";
    let r = report(&parse_module(text).unwrap(), 5).unwrap();
    assert_eq!(r.entry.arrays, 1);
    assert_eq!(r.entry.physical_bytes, 4096);
}
