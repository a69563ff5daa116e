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

/// A CuTe TV layout's Axe form (tile onto `tid` and `val`) names its threads `T`, as every picture
/// names a thread axis, and its notes read in plain plurals.
#[test]
fn a_tid_axis_is_labelled_t() {
    let p = axe_picture(
        &"S[(4,2,2,8):(1@tid,1@val,2@val,4@tid)]".parse().unwrap(),
        &[128],
    )
    .unwrap();
    assert_eq!(p.cells[0].label, "T0");
    assert_eq!(p.cells[1].label, "T4");
    assert!(p.notes[0].contains("(T = tid)"), "{:?}", p.notes);
    assert!(
        p.notes.iter().all(|n| !n.contains("every tids")),
        "{:?}",
        p.notes
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

/// Cells (r, c) whose view column is `col` (for folded pictures).
fn visible_col(p: &axe_render::Picture, col: u64) -> usize {
    p.col_index
        .iter()
        .position(|&c| c == col)
        .unwrap_or_else(|| panic!("column {col} not shown: {:?}", p.col_index))
}

#[test]
fn a_tpu_layout_shows_its_128_wide_tile_boundary() {
    let s = axe_xla::parse_shape("f32[256,512]{1,0:T(8,128)}").unwrap();
    let p = memory_picture(s.as_array().unwrap()).unwrap();
    assert!(p.cols <= axe_render::MAX_COLS && p.rows <= axe_render::MAX_ROWS);
    let (before, after) = (visible_col(&p, 127), visible_col(&p, 128));
    assert_eq!(after, before + 1);
    assert!(p.row_index.contains(&7) && p.row_index.contains(&8));
    assert!(p.is_folded());
    assert!(
        p.notes.iter().any(|n| n.contains("folded")),
        "the picture says it is folded: {:?}",
        p.notes
    );
    let svg = to_svg(&p);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    // Offsets: (0,127) is the last of the first tile row, (0,128) starts the next tile (8×128 later).
    assert_eq!(label(&doc, 0, before), "127");
    assert_eq!(label(&doc, 0, after), "1024");
    // The header names the view's columns, and dots fill the fold.
    let headers: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("col-index"))
        .filter_map(|n| n.text())
        .collect();
    assert!(headers.contains(&"128"), "{headers:?}");
    assert!(doc
        .descendants()
        .any(|n| n.attribute("class") == Some("fold")));
    // The tile boundary is drawn between columns 127 and 128, in the outer-tile colour.
    let img = raster(&svg);
    let (x, y, w, h) = cell_rect(&doc, 0, before);
    assert_eq!(pixel(&img, x + w, y + h / 2.0), hex(BORDERS[0].0));
    let (a, b) = (inside(&doc, 0, before), inside(&doc, 0, after));
    assert_ne!(
        pixel(&img, a.0, a.1),
        pixel(&img, b.0, b.1),
        "two tiles, two colours"
    );
}

#[test]
fn a_2d_mesh_gives_each_device_its_colour_and_explains_its_marks() {
    let layout = "S[(2,4,2,8):(1@dev0,8,1@dev1,1)]";
    let p = axe_picture(&layout.parse().unwrap(), &[8, 16]).unwrap();
    let corners = [(0, 0), (0, 8), (4, 0), (4, 8)];
    let groups: Vec<Option<usize>> = corners.iter().map(|&(r, c)| p.cell(r, c).group).collect();
    let mut distinct = groups.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "four devices, four colours: {groups:?}");
    let legend: Vec<&str> = p.legend.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        legend,
        [
            "dev0/dev1 0/0",
            "dev0/dev1 0/1",
            "dev0/dev1 1/0",
            "dev0/dev1 1/1"
        ]
    );
    let svg = to_svg(&p);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let img = raster(&svg);
    let fills: Vec<(u8, u8, u8)> = corners
        .iter()
        .map(|&(r, c)| {
            let (x, y) = inside(&doc, r, c);
            pixel(&img, x, y)
        })
        .collect();
    for i in 0..4 {
        for j in 0..i {
            assert_ne!(fills[i], fills[j], "devices {i} and {j} share a colour");
        }
    }
    // Every swatch has its label, and the key explains the borders and the small text.
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(String::from)
        .collect();
    assert_eq!(
        doc.descendants()
            .filter(|n| n.attribute("class") == Some("swatch"))
            .count(),
        doc.descendants()
            .filter(|n| n.attribute("class") == Some("legend"))
            .count()
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("black line") && t.contains("different devices")),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t.contains("m5 = offset 5 in memory")));

    // Replicated cells: dashed, marked R, and the key says so.
    let svg = axe_svg("S[(2,4,16):(2@gpuid,16,1)] + R[2:1@gpuid]", &[8, 16]);
    assert!(svg.contains("dashed outline, R: replicated ("), "{svg}");
}

#[test]
fn memory_pictures_explain_their_borders_and_padding() {
    let svg = xla_svg("f32[3,5]{1,0:T(2,2)(2,1)}");
    for key in [
        "black line: a boundary between tiles",
        "red line: a boundary between second-level tiles",
        "hatched: padding",
    ] {
        assert!(svg.contains(key), "{key}: {svg}");
    }
}

#[test]
fn pngs_over_the_pixel_budget_are_refused() {
    let svg = xla_svg("bf16[16,256]{1,0:T(8,128)(2,1)}");
    match to_png(&svg, 50.0) {
        Err(axe_render::RenderError::PngTooLarge {
            width,
            height,
            max_pixels,
        }) => {
            assert!(width * height > max_pixels);
            assert_eq!(max_pixels, axe_render::MAX_PNG_PIXELS);
        }
        other => panic!("expected PngTooLarge, got {:?}", other.map(|v| v.len())),
    }
    let e = to_png(&svg, 50.0).unwrap_err().to_string();
    assert!(e.contains("exceeds the limit"), "{e}");
    assert!(to_png(&svg, 2.0).is_ok());
}

/// Dark pixels (text, borders) in a box of the picture.
fn dark(img: &Pixmap, (x0, y0, x1, y1): (u32, u32, u32, u32)) -> usize {
    (y0..y1)
        .flat_map(|y| (x0..x1).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let c = img.pixel(x, y).unwrap();
            u32::from(c.red()) + u32::from(c.green()) + u32::from(c.blue()) < 3 * 100
        })
        .count()
}

#[test]
fn labels_are_drawn_with_the_embedded_font_alone() {
    use axe_render::{to_png_with, Fonts};
    let svg = xla_svg("f32[3,5]{1,0:T(2,2)}");
    assert!(svg.contains(r#"font-family="DejaVu Sans Mono,"#));
    // Without any system font, as in a slim container.
    let img = Pixmap::decode_png(&to_png_with(&svg, 1.0, Fonts::EmbeddedOnly).unwrap()).unwrap();
    let mut bare = svg.clone();
    while let Some(start) = bare.find("<text") {
        let end = start + bare[start..].find("</text>").unwrap() + "</text>".len();
        bare.replace_range(start..end, "");
    }
    let no_text =
        Pixmap::decode_png(&to_png_with(&bare, 1.0, Fonts::EmbeddedOnly).unwrap()).unwrap();
    // The title's box: dark glyphs with the font, nothing without text.
    let title = (20, 20, 200, 40);
    assert_eq!(dark(&no_text, title), 0);
    assert!(
        dark(&img, title) > 100,
        "title drawn: {}",
        dark(&img, title)
    );
    // A cell's label: the "17" of element (2,3) is drawn in its cell.
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let (x, y, w, h) = cell_rect(&doc, 2, 3);
    let cell = (
        x as u32 + 4,
        y as u32 + 4,
        (x + w) as u32 - 4,
        (y + h) as u32 - 4,
    );
    assert_eq!(dark(&no_text, cell), 0);
    assert!(dark(&img, cell) > 10, "label drawn: {}", dark(&img, cell));
}
