#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]
//! The seed figures drawn, parsed back with real SVG libraries (roxmltree for the document, usvg/resvg to
//! rasterise), and checked: labels' text, a padding cell against a data cell, tiles in different colours,
//! repeated-tile borders, devices and threads.

use axe_render::{axe_picture, memory_picture, to_png, to_svg, BORDERS, PALETTE};
use resvg::tiny_skia::Pixmap;

fn xla_svg(shape: &str) -> String {
    let s = axe_xla::parse_shape(shape).unwrap();
    to_svg(&memory_picture(s.as_array().unwrap()).unwrap())
}

fn axe_svg(layout: &str, shape: &[u64]) -> String {
    to_svg(&axe_picture(&layout.parse().unwrap(), shape).unwrap())
}

/// The text of the label in cell (r, c).
fn label(doc: &roxmltree::Document, r: usize, c: usize) -> String {
    doc.descendants()
        .find(|n| {
            n.has_tag_name("text")
                && n.attribute("class") == Some("label")
                && n.attribute("data-row") == Some(&r.to_string())
                && n.attribute("data-col") == Some(&c.to_string())
        })
        .and_then(|n| n.text())
        .unwrap_or_else(|| panic!("no label at ({r}, {c})"))
        .to_string()
}

/// The rectangle of cell (r, c): x, y, width, height.
fn cell_rect(doc: &roxmltree::Document, r: usize, c: usize) -> (f32, f32, f32, f32) {
    let n = doc
        .descendants()
        .find(|n| {
            n.has_tag_name("rect")
                && n.attribute("data-row") == Some(&r.to_string())
                && n.attribute("data-col") == Some(&c.to_string())
        })
        .unwrap();
    let f = |a: &str| n.attribute(a).unwrap().parse::<f32>().unwrap();
    (f("x"), f("y"), f("width"), f("height"))
}

fn raster(svg: &str) -> Pixmap {
    Pixmap::decode_png(&to_png(svg, 1.0).unwrap()).unwrap()
}

fn pixel(p: &Pixmap, x: f32, y: f32) -> (u8, u8, u8) {
    let c = p.pixel(x as u32, y as u32).unwrap();
    (c.red(), c.green(), c.blue())
}

fn hex(h: &str) -> (u8, u8, u8) {
    let v = u32::from_str_radix(&h[1..], 16).unwrap();
    ((v >> 16) as u8, (v >> 8) as u8, v as u8)
}

/// A point inside cell (r, c), clear of its label and borders.
fn inside(doc: &roxmltree::Document, r: usize, c: usize) -> (f32, f32) {
    let (x, y, _, _) = cell_rect(doc, r, c);
    (x + 5.0, y + 5.0)
}

#[test]
fn figure_1_padding_and_tiles() {
    let svg = xla_svg("f32[3,5]{1,0:T(2,2)}");
    let doc = roxmltree::Document::parse(&svg).unwrap();
    // Labels: memory offsets, element (2,3) at 17, and a padding cell's offset in the tile.
    assert_eq!(label(&doc, 2, 3), "17");
    assert_eq!(label(&doc, 0, 0), "0");
    assert_eq!(label(&doc, 1, 4), "10");
    assert_eq!(label(&doc, 0, 5), "9");
    let title = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("title"))
        .unwrap();
    assert_eq!(title.text(), Some("f32[3,5]{1,0:T(2,2)}"));
    // usvg reads it as a valid SVG.
    let tree = resvg::usvg::Tree::from_str(&svg, &resvg::usvg::Options::default()).unwrap();
    assert!(tree.size().width() > 100.0);
    let img = raster(&svg);
    let data = pixel(&img, inside(&doc, 0, 0).0, inside(&doc, 0, 0).1);
    let next_tile = pixel(&img, inside(&doc, 0, 2).0, inside(&doc, 0, 2).1);
    let (px, py) = inside(&doc, 3, 0);
    let pad_a = pixel(&img, px, py);
    let pad_b = pixel(&img, px + 3.0, py);
    assert_eq!(data, hex(PALETTE[0]), "the first tile has the first colour");
    assert_eq!(
        next_tile,
        hex(PALETTE[1]),
        "the next tile has another colour"
    );
    assert_ne!(data, next_tile);
    for p in [pad_a, pad_b] {
        assert!(
            !PALETTE.iter().any(|c| hex(c) == p),
            "padding is not filled with a tile colour: {p:?}"
        );
        assert!(
            p.0 == p.1 && p.1 == p.2,
            "padding is white or grey hatching: {p:?}"
        );
    }
    // The tile boundary between columns 1 and 2 is drawn in the outer-tile colour.
    let (x, y, w, h) = cell_rect(&doc, 0, 1);
    assert_eq!(pixel(&img, x + w, y + h / 2.0), hex(BORDERS[0].0));
}

#[test]
fn figure_2_repeated_tiles_have_inner_borders() {
    let svg = xla_svg("f32[4,8]{1,0:T(2,4)(2,1)}");
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let row0: Vec<String> = (0..8).map(|c| label(&doc, 0, c)).collect();
    let row1: Vec<String> = (0..8).map(|c| label(&doc, 1, c)).collect();
    assert_eq!(row0, ["0", "2", "4", "6", "8", "10", "12", "14"]);
    assert_eq!(row1, ["1", "3", "5", "7", "9", "11", "13", "15"]);
    let inner = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("tile-border level1"))
        .count();
    assert!(
        inner >= 12,
        "the 2×1 sub-tiles are outlined ({inner} inner borders)"
    );
    let img = raster(&svg);
    let (x, y, w, h) = cell_rect(&doc, 0, 0);
    assert_eq!(
        pixel(&img, x + w, y + h / 2.0),
        hex(BORDERS[1].0),
        "a red 2×1 border between (0,0) and (0,1)"
    );
    let strip = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("slot"))
        .count();
    assert_eq!(strip, 32);
}

#[test]
fn tensor_core_threads_and_mesh_devices() {
    let svg = axe_svg(
        "S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp",
        &[8, 16],
    );
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(label(&doc, 1, 3), "W5 L5");
    assert_eq!(label(&doc, 0, 8), "W6 L0");
    let notes: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("note"))
        .filter_map(|n| n.text())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("again at warp +4")),
        "{notes:?}"
    );
    let img = raster(&svg);
    let (a, b) = (inside(&doc, 0, 0), inside(&doc, 0, 8));
    assert_ne!(
        pixel(&img, a.0, a.1),
        pixel(&img, b.0, b.1),
        "warps 5 and 6 in different colours"
    );

    let svg = axe_svg("S[(2,4,16):(2@gpuid,16,1)] + R[2:1@gpuid]", &[8, 16]);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(label(&doc, 0, 0), "R 0,1");
    assert_eq!(label(&doc, 7, 15), "R 2,3");
    let svg = axe_svg("S[(2,4,2,8):(2@gpuid,8,1@gpuid,1)]", &[8, 16]);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(
        (
            label(&doc, 0, 0),
            label(&doc, 0, 8),
            label(&doc, 4, 0),
            label(&doc, 4, 8)
        ),
        ("0".into(), "1".into(), "2".into(), "3".into())
    );
}

#[test]
fn large_layouts_show_a_labelled_corner() {
    let s = axe_xla::parse_shape("bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}").unwrap();
    let p = memory_picture(s.as_array().unwrap()).unwrap();
    assert!(p.more_rows && p.more_cols);
    assert!(p.rows * p.cols <= axe_render::MAX_ROWS * axe_render::MAX_COLS);
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("of 1280 rows") && n.contains("of 16384 columns")),
        "{:?}",
        p.notes
    );
    let svg = to_svg(&p);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(
        doc.descendants()
            .filter(|n| n.attribute("class") == Some("ellipsis"))
            .count(),
        2
    );
    assert!(svg.len() < 200_000, "a corner, not 167 million cells");
}
