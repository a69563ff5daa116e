#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! Hostile layouts and shapes: no panic, and pictures and explanations of bounded size whatever the
//! replica count, extents, strides and spans.

use axe_layout::{Axis, Coord, Iter, Layout};
use axe_render::explain::{explain_axe, explain_xla, to_text_report};
use axe_render::{axe_picture, memory_picture, to_svg, to_text, MAX_COLS, MAX_ROWS};
use proptest::prelude::*;

/// Bounds on what one picture may produce.
const MAX_TEXT: usize = 64 * 1024;
const MAX_SVG: usize = 512 * 1024;

fn axe_all(layout: &Layout, shape: &[u64]) -> (String, String) {
    let e = explain_axe(layout, shape).unwrap();
    let text = to_text_report(&e, false);
    let coloured = to_text_report(&e, true);
    let p = axe_picture(layout, shape).unwrap();
    assert!(p.rows <= MAX_ROWS && p.cols <= MAX_COLS);
    assert_eq!(p.cells.len(), p.rows * p.cols);
    let svg = to_svg(&p);
    roxmltree::Document::parse(&svg).unwrap();
    assert!(coloured.len() < 4 * MAX_TEXT);
    assert!(to_text(&p, true).len() < 4 * MAX_TEXT);
    (text, svg)
}

#[test]
fn many_replicas_on_a_device_axis_do_not_panic() {
    // The text picture used to format a label of every device with a width beyond the formatter's.
    let (text, _) = axe_all(&"S[2:1] + R[15000:1@dev]".parse().unwrap(), &[2]);
    assert!(text.contains("R 0,1,2,3,…"), "{text}");
    assert!(text.contains("15000 times"), "{text}");
}

#[test]
fn a_million_replicas_cost_what_a_thousand_do() {
    let small = axe_all(&"S[2:1] + R[1000:1@dev]".parse().unwrap(), &[2]);
    let large = axe_all(&"S[2:1] + R[1000000:1@dev]".parse().unwrap(), &[2]);
    assert!(large.0.len() < MAX_TEXT && large.1.len() < MAX_SVG);
    // The same picture, up to the count's digits.
    assert!(large.1.len() <= small.1.len() + 64, "{}", large.1.len());
    assert!(large.0.contains("1000000 times"), "{}", large.0);
    // A trillion replica points on two device axes, and a huge mesh of devices.
    axe_all(
        &"S[(1000,1000):(1@dev0,1@dev1)] + R[(1000000,1000000):(1@dev0,1@dev1)]"
            .parse()
            .unwrap(),
        &[1000, 1000],
    );
    axe_all(
        &"S[(1000000,1000000):(1000000@gpuid,1@gpuid)]"
            .parse()
            .unwrap(),
        &[1000000, 1000000],
    );
}

#[test]
fn the_legend_lists_each_colour_once_and_says_owners_share_them() {
    let layout: Layout = "S[(16,16):(1@gpuid,16@gpuid)]".parse().unwrap();
    let p = axe_picture(&layout, &[16, 16]).unwrap();
    assert_eq!(p.legend.len(), axe_render::MAX_LEGEND);
    // One entry per colour: no colour listed twice.
    let mut colours: Vec<usize> = p
        .legend
        .iter()
        .map(|(g, _)| g % axe_render::COLOURS)
        .collect();
    colours.sort_unstable();
    colours.dedup();
    assert_eq!(colours.len(), p.legend.len());
    assert!(
        p.notes
            .iter()
            .any(|n| n.starts_with("colours: 256 owners share the 12 colours")),
        "{:?}",
        p.notes
    );
}

#[test]
fn huge_logical_shapes_draw_a_bounded_picture() {
    for shape in [
        "f32[100000,100000]{1,0:T(8,128)}",
        "f32[100000,100000]{0,1:T(8,128)}",
        "f32[2,3,100000,100000]{3,2,1,0:T(8,128)(2,1)}",
        "f32[100000000000]{0:T(1024)}",
    ] {
        let s = axe_xla::parse_shape(shape).unwrap();
        let a = s.as_array().unwrap();
        let p = memory_picture(a).unwrap();
        assert!(p.rows <= MAX_ROWS && p.cols <= MAX_COLS, "{shape}");
        let svg = to_svg(&p);
        assert!(svg.len() < MAX_SVG, "{shape}: {}", svg.len());
        let text = to_text_report(&explain_xla(a).unwrap(), false);
        assert!(text.len() < MAX_TEXT, "{shape}: {}", text.len());
    }
}

fn axis() -> impl Strategy<Value = Axis> {
    prop::sample::select(vec![
        "m", "lane", "warp", "dev", "dev0", "dev1", "gpuid", "reg", "tid",
    ])
    .prop_map(|n| Axis::new(n).unwrap())
}

fn extent() -> impl Strategy<Value = u64> {
    prop_oneof![
        1u64..9,
        prop::sample::select(vec![16u64, 128, 15000, 1 << 20, 1_000_000_007, 1 << 40])
    ]
}

fn stride() -> impl Strategy<Value = i64> {
    prop_oneof![
        -4i64..5,
        prop::sample::select(vec![
            128i64,
            -1 << 20,
            1 << 40,
            i64::MAX / 2,
            i64::MAX,
            i64::MIN + 1
        ])
    ]
}

fn iters(max: usize) -> impl Strategy<Value = Vec<Iter>> {
    prop::collection::vec(
        (extent(), stride(), axis())
            .prop_filter_map("valid iter", |(e, s, a)| Iter::new(e, s, a).ok()),
        0..=max,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Any layout the layout crate accepts, over its own extents or flattened: explained and drawn
    /// without a panic, in bounded size.
    #[test]
    fn any_layout_explains_and_draws_in_bounded_size(
        shard in iters(4),
        replica in iters(3),
        offset in (axis(), stride()),
        flat in any::<bool>(),
    ) {
        let Ok(offset) = Coord::from_pairs([(&offset.0, offset.1)]) else { return Ok(()) };
        let Ok(layout) = Layout::new(shard, replica, offset) else { return Ok(()) };
        let shape: Vec<u64> = if flat {
            vec![layout.size()]
        } else {
            layout.shard().iter().map(|it| it.extent()).collect()
        };
        // Errors are fine (an overflow is reported); a panic or an unbounded answer is not.
        if let Ok(e) = explain_axe(&layout, &shape) {
            let text = to_text_report(&e, true);
            prop_assert!(text.len() < 4 * MAX_TEXT, "{}", text.len());
        }
        if let Ok(p) = axe_picture(&layout, &shape) {
            prop_assert!(p.rows <= MAX_ROWS && p.cols <= MAX_COLS);
            prop_assert!(to_svg(&p).len() < MAX_SVG);
            prop_assert!(to_text(&p, false).len() < MAX_TEXT);
        }
    }

    /// A tiled 2-D array shows both sides of its first tile boundary in each dimension that has one.
    #[test]
    fn tiled_arrays_show_their_first_tile_boundary(
        rows in 1u64..5000,
        cols in 1u64..5000,
        t0 in prop::sample::select(vec![1u64, 2, 3, 8, 16, 100, 128, 256, 1024]),
        t1 in prop::sample::select(vec![1u64, 2, 3, 8, 16, 100, 128, 256, 1024]),
        column_major in any::<bool>(),
    ) {
        let order = if column_major { "0,1" } else { "1,0" };
        let shape = format!("f32[{rows},{cols}]{{{order}:T({t0},{t1})}}");
        let s = axe_xla::parse_shape(&shape).unwrap();
        let p = memory_picture(s.as_array().unwrap()).unwrap();
        prop_assert!(p.rows <= MAX_ROWS && p.cols <= MAX_COLS);
        // The tile's minor size runs along the layout's minor dimension.
        let (row_t, col_t) = if column_major { (t1, t0) } else { (t0, t1) };
        for (index, t, n) in [(&p.row_index, row_t, p.total_rows), (&p.col_index, col_t, p.total_cols)] {
            if t < n {
                prop_assert!(
                    index.contains(&(t - 1)) && index.contains(&t),
                    "{shape}: boundary {t} not in {index:?}"
                );
            }
        }
        prop_assert!(to_svg(&p).len() < MAX_SVG);
    }
}
