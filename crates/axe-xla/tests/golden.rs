#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The tiling doc's and the blog's examples.

use axe_xla::{element_offset, parse_shape, sizes, to_axe, ArrayShape, Shape, Tiling};

fn array(s: &str) -> ArrayShape {
    match parse_shape(s).unwrap_or_else(|e| panic!("{s}: {e}")) {
        Shape::Array(a) => a,
        other => panic!("{s} is not an array: {other}"),
    }
}

fn tiling(s: &str) -> Tiling {
    Tiling::new(&array(s)).unwrap()
}

/// Memory order of an array: for each slot, the logical element or None for padding.
fn memory_order(s: &str) -> Vec<Option<Vec<i64>>> {
    let t = tiling(s);
    (0..t.expanded_elements().unwrap())
        .map(|x| t.element_at(x).unwrap())
        .collect()
}

#[test]
fn figure_1_f32_3x5_in_2x2_tiles() {
    let t = tiling("f32[3,5]{1,0:T(2,2)}");
    assert_eq!(t.linear_index(&[2, 3]).unwrap(), 17);
    assert_eq!(t.expanded, vec![2, 3, 2, 2]);
    // Tiles in row-major order, elements row-major within each; '.' marks padding.
    let order: Vec<String> = memory_order("f32[3,5]{1,0:T(2,2)}")
        .iter()
        .map(|e| {
            e.as_ref()
                .map_or(".".to_string(), |i| format!("{}{}", i[0], i[1]))
        })
        .collect();
    assert_eq!(
        order.join(" "),
        "00 01 10 11 02 03 12 13 04 . 14 . 20 21 . . 22 23 . . 24 . . ."
    );
}

#[test]
fn figure_2_repeated_tiling() {
    let t = tiling("f32[4,8]{1,0:T(2,4)(2,1)}");
    let row = |r: i64| {
        (0..8)
            .map(|c| t.linear_index(&[r, c]).unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(row(0), vec![0, 2, 4, 6, 8, 10, 12, 14]);
    assert_eq!(row(1), vec![1, 3, 5, 7, 9, 11, 13, 15]);
    assert_eq!(row(2), vec![16, 18, 20, 22, 24, 26, 28, 30]);
    assert_eq!(row(3), vec![17, 19, 21, 23, 25, 27, 29, 31]);
}

#[test]
fn combined_dimensions() {
    let a = tiling("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}");
    let b = tiling("f32[112,110]{1,0:T(2,3)}");
    for (i, j, k, l, m) in [
        (0, 0, 0, 0, 0),
        (1, 6, 7, 10, 9),
        (0, 3, 5, 2, 7),
        (1, 0, 1, 9, 2),
    ] {
        let row = (i * 7 + j) * 8 + k;
        let col = l * 10 + m;
        assert_eq!(
            a.linear_index(&[i, j, k, l, m]).unwrap(),
            b.linear_index(&[row, col]).unwrap()
        );
    }
    assert_eq!(
        a.expanded_elements().unwrap(),
        b.expanded_elements().unwrap()
    );
    // Over the combined (112, 110) view it is an Axe layout; over the 5-D logical box it is not, since the
    // tile of 3 cuts across the (11, 10) pair that forms the padded 110-wide dimension.
    let ax = to_axe(&array("f32[112,110]{1,0:T(2,3)}")).unwrap();
    assert_eq!(ax.padded_shape, vec![112, 111]);
    assert!(to_axe(&array("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}")).is_err());
    let even = to_axe(&array("f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,5)}")).unwrap();
    assert_eq!(even.padded_shape, vec![2, 7, 8, 11, 10]);
}

#[test]
fn spec_index_examples() {
    assert_eq!(
        tiling("f32[8,4]{1,0:T(2,2)}")
            .linear_index(&[3, 1])
            .unwrap(),
        11
    );
    assert_eq!(
        tiling("bf16[2,8,128]{2,1,0:T(8,128)(2,1)}")
            .linear_index(&[0, 2, 0])
            .unwrap(),
        256
    );
    let t = tiling("bf16[2048]{0:T(1024)(128)(2,1)}");
    assert_eq!(t.linear_index(&[128]).unwrap(), 1);
    assert_eq!(t.linear_index(&[1]).unwrap(), 2);
}

#[test]
fn blog_shapes() {
    // add.936: bf16 with a permuted order and TPU 16-bit tiling; 167,772,160 elements, no padding.
    let a = array("bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}");
    let z = sizes(&a).unwrap();
    assert_eq!(z.logical_bytes, 8 * 1280 * 16384 * 2);
    assert_eq!(z.physical_bytes, z.logical_bytes);
    assert_eq!(z.xla_array_size_bytes, z.logical_bytes);
    let t = Tiling::new(&a).unwrap();
    // Physical order major→minor is dims 1, 0, 2, 3: (1, 8, 1280, 16384).
    assert_eq!(t.linear_index(&[0, 0, 0, 1]).unwrap(), 2); // bf16 pairs rows: column 1 is 2 slots on
    assert_eq!(t.linear_index(&[0, 0, 1, 0]).unwrap(), 1);
    assert_eq!(t.linear_index(&[1, 0, 0, 0]).unwrap(), 1280 * 16384);
    let form = to_axe(&a).unwrap();
    assert_eq!(form.padded_shape, vec![8, 1, 1280, 16384]);
    // fusion.3 in fast memory S(1).
    let f = array("bf16[32,32,4096]{2,1,0:T(8,128)(2,1)S(1)}");
    assert_eq!(f.layout.memory_space, 1);
    assert_eq!(sizes(&f).unwrap().physical_bytes, 32 * 32 * 4096 * 2);
}

#[test]
fn spec_size_examples() {
    let elems = |s: &str| {
        let a = array(s);
        sizes(&a).unwrap().xla_array_size_bytes / i64::from(a.element_type.byte_width())
    };
    assert_eq!(elems("f32[3,5]{1,0:T(2,2)}"), 24);
    let bytes = |s: &str| sizes(&array(s)).unwrap();
    assert_eq!(bytes("f32[]{:T(128)}").xla_array_size_bytes, 512);
    assert_eq!(
        bytes("bf16[3,5]{1,0:T(8,128)(2,1)}").xla_array_size_bytes,
        2048
    );
    assert_eq!(
        bytes("u8[3,5]{1,0:T(8,128)L(1024)}").xla_array_size_bytes,
        1024
    );
    assert_eq!(
        bytes("s4[9216,6144]{1,0:T(64,128)(8,1)E(4)}").xla_array_size_bytes,
        28311552
    );
    let nested = bytes("f32[3,5]{1,0:T(8,128)(3,1)}");
    assert_eq!(
        (nested.xla_array_size_bytes, nested.physical_bytes),
        (4096, 4608)
    );
    assert_eq!(bytes("s4[3]").logical_bytes, 3);
    assert_eq!(bytes("s4[3]{0:E(4)}").logical_bytes, 2);
    assert_eq!(bytes("pred[10]{0:E(1)}").logical_bytes, 2);
}

#[test]
fn sub_byte_offsets() {
    let a = array("s4[16]{0:T(8)E(4)}");
    let o = element_offset(&a, &[3]).unwrap();
    assert_eq!((o.linear, o.bit_offset, o.byte_offset), (3, 12, 1));
    let p = array("pred[64]{0:T(32)E(1)}");
    let o = element_offset(&p, &[40]).unwrap();
    assert_eq!((o.bit_offset, o.byte_offset), (40, 5));
    let b = array("bf16[4]");
    assert_eq!(element_offset(&b, &[3]).unwrap().byte_offset, 6);
}

#[test]
fn printing_is_xlas() {
    for (input, printed) in [
        ("f32[2,3]", "f32[2,3]{1,0}"),
        ("f32[]", "f32[]"),
        ("f32[]{:T(128)}", "f32[]{:T(128)}"),
        ("f32[4]{0:L(1)E(0)S(0)M(0)}", "f32[4]{0}"),
        ("f32[4]{0:D(C)T(2)}", "f32[4]{0:T(2)}"),
        ("f32 [ 4 ] /* c */ { 0 }", "f32[4]{0}"),
        (
            "(f32[], f32[], f32[], f32[], f32[], f32[], f32[2]{0})",
            "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], f32[2]{0})",
        ),
        (
            "((f32[1], s32[]), token[])",
            "((f32[1]{0}, s32[]), token[])",
        ),
        ("b(f32[4])", "b(f32[4]{0})"),
        ("f32[<=4,?]", "f32[<=4,?]{1,0}"),
        (
            "f32[150,200,100]{0,1,2:SC(0:30)(1:40,130)}",
            "f32[150,200,100]{0,1,2:SC(0:30)(1:40,130)}",
        ),
        (
            "f32[4]{0:T(2)L(2)#(u16)*(u32)E(8)S(1)SC(0:1)M(4)}",
            "f32[4]{0:T(2)L(2)#(u16)*(u32)E(8)S(1)SC(0:1)M(4)}",
        ),
        ("f32[4]{0:S(200)}", "f32[4]{0:S(200)}"),
    ] {
        assert_eq!(parse_shape(input).unwrap().to_string(), printed, "{input}");
    }
}

#[test]
fn dim_level_types_are_checked_kept_and_not_printed() {
    use axe_xla::{DimLevel, DimLevelType};
    let a = array("f32[3,5]{1,0:D(C+,D~, S+~ ,H)T(2,2)}");
    let level = |level_type, unique, ordered| DimLevel {
        level_type,
        unique,
        ordered,
    };
    assert_eq!(
        a.layout.dim_level_types,
        vec![
            level(DimLevelType::Compressed, false, true),
            level(DimLevelType::Dense, true, false),
            level(DimLevelType::Singleton, false, false),
            level(DimLevelType::LooseCompressed, true, true),
        ]
    );
    let shown: Vec<String> = a
        .layout
        .dim_level_types
        .iter()
        .map(|d| d.to_string())
        .collect();
    assert_eq!(shown, ["C+", "D~", "S+~", "H"]);
    // XLA's printer drops them, and so does ours; they take no part in sizes either.
    assert_eq!(a.to_string(), "f32[3,5]{1,0:T(2,2)}");
    assert_eq!(array("f32[3,5]{1,0:D()}").to_string(), "f32[3,5]{1,0}");
    assert_eq!(array("f32[]{:D(C)}").to_string(), "f32[]");
    assert_eq!(
        sizes(&a).unwrap(),
        sizes(&array("f32[3,5]{1,0:T(2,2)}")).unwrap()
    );
    // What XLA rejects, with where.
    for (text, offset, message) in [
        (
            "f32[3,5]{1,0:D(U)}",
            15,
            "unknown dimension level type \"U\"",
        ),
        (
            "f32[3,5]{1,0:D(c)}",
            15,
            "unknown dimension level type \"c\"",
        ),
        (
            "f32[3,5]{1,0:D(CD)}",
            15,
            "unknown dimension level type \"CD\"",
        ),
        (
            "f32[3,5]{1,0:D(C_)}",
            15,
            "unknown dimension level type \"C_\"",
        ),
        (
            "f32[3,5]{1,0:D(C~+)}",
            17,
            "expected ',' or ')' in D(...), found '+'",
        ),
        (
            "f32[3,5]{1,0:D(C D)}",
            17,
            "expected ',' or ')' in D(...), found 'D'",
        ),
        (
            "f32[3,5]{1,0:D(C,)}",
            17,
            "expected a dimension level type (D, C, S or H)",
        ),
        (
            "f32[3,5]{1,0:D(+)}",
            15,
            "expected a dimension level type (D, C, S or H)",
        ),
        ("f32[3,5]{1,0:D}", 14, "expected '(' after D"),
        (
            "f32[3,5]{1,0:T(2,2)D(C)}",
            19,
            "attribute D must come before T",
        ),
    ] {
        let e = parse_shape(text).unwrap_err().to_string();
        assert!(e.contains(message), "{text}: {e}");
        assert!(e.contains(&format!("offset {offset}")), "{text}: {e}");
    }
}

#[test]
fn xla_array_size_of_untiled_layouts_leaves_out_l() {
    // ShapeUtil::ArraySize: no tiles, so ByteSizeOfElements; L only counts with tiles.
    let z = sizes(&array("f32[3,5]{1,0:L(7)}")).unwrap();
    assert_eq!(
        (z.logical_bytes, z.xla_array_size_bytes, z.physical_bytes),
        (60, 60, 84)
    );
    let z = sizes(&array("s4[3]{0:L(8)E(4)}")).unwrap();
    assert_eq!(
        (z.logical_bytes, z.xla_array_size_bytes, z.physical_bytes),
        (2, 2, 4)
    );
    let z = sizes(&array("f32[]{:L(4)}")).unwrap();
    assert_eq!((z.xla_array_size_bytes, z.physical_bytes), (4, 16));
    // With a tile, L applies after the first tile's padding.
    let z = sizes(&array("f32[3,5]{1,0:T(2,2)L(7)}")).unwrap();
    assert_eq!((z.xla_array_size_bytes, z.physical_bytes), (112, 112));
}

#[test]
fn xla_array_size_counts_a_split_dimension_by_its_largest_split() {
    // SC(0:5): physical dimension 0 (the most major, logical 0 here) split at 5: pieces of 5 and 5.
    let z = sizes(&array("f32[10,128]{1,0:T(8,128)SC(0:5)}")).unwrap();
    assert_eq!(z.xla_array_size_bytes, 8 * 128 * 4);
    assert_eq!(z.physical_bytes, 16 * 128 * 4);
    // Pieces 3, 4, 3: the largest is 4.
    let z = sizes(&array("f32[10,128]{1,0:T(8,128)SC(0:3,7)}")).unwrap();
    assert_eq!(z.xla_array_size_bytes, 8 * 128 * 4);
    // A permuted order: physical dimension 0 is logical dimension 1 (size 40), pieces 30 and 10.
    let z = sizes(&array("f32[8,40]{0,1:T(8,8)SC(0:30)}")).unwrap();
    assert_eq!(z.xla_array_size_bytes, 32 * 8 * 4);
    // Only the first config naming a dimension counts.
    let z = sizes(&array("f32[10,128]{1,0:T(8,128)SC(0:5)(0:1)}")).unwrap();
    assert_eq!(z.xla_array_size_bytes, 8 * 128 * 4);
    // Without tiles the split is ignored, as L is.
    let z = sizes(&array("f32[10,128]{1,0:SC(0:5)}")).unwrap();
    assert_eq!(z.xla_array_size_bytes, z.logical_bytes);
}

#[test]
fn printing_extreme_integers() {
    for text in [
        "f32[2]{0:S(-9223372036854775808)}",
        "f32[2]{0:S(9223372036854775807)}",
        "f32[9223372036854775807]{0}",
        "f32[<=0,1]{1,0:T(1,10)E(-1)}",
        "f32[2]{0:SC(0:-5,0,9223372036854775807)M(1)}",
        "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], f32[], f32[], f32[], f32[], /*index=10*/f32[])",
    ] {
        assert_eq!(parse_shape(text).unwrap().to_string(), text);
    }
}
