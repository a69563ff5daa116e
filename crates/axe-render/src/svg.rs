//! Pictures as SVG: cells, tile borders by level, padding hatched, the memory-order strip, a legend.

use std::fmt::Write;

use crate::picture::{Kind, Picture};

/// Fill colours for colour groups (light, distinct, readable under black text).
pub const PALETTE: [&str; 12] = [
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d",
    "#9edae5", "#e7cb94", "#bdbdbd", "#cedb9c",
];
/// Stroke colour and width of tile borders, outermost level first.
pub const BORDERS: [(&str, f64); 3] = [("#222222", 2.5), ("#d62728", 2.0), ("#1f77b4", 1.5)];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The fill of a colour group.
pub fn fill(group: Option<usize>) -> &'static str {
    group.map_or("#ffffff", |g| PALETTE[g % PALETTE.len()])
}

const MARGIN: f64 = 20.0;
const CELL_H: f64 = 34.0;
const LABEL_W: f64 = 34.0;
const STRIP_H: f64 = 26.0;
const STRIP_PER_ROW: usize = 16;

/// Draws the picture as an SVG document.
pub fn to_svg(p: &Picture) -> String {
    let longest = p
        .cells
        .iter()
        .flat_map(|c| [c.label.len(), c.sublabel.as_ref().map_or(0, |s| s.len())])
        .max()
        .unwrap_or(1);
    let cell_w = (longest as f64 * 7.4 + 14.0).max(40.0);
    let extra_r = usize::from(p.more_rows);
    let header_h = 30.0 + 18.0 * p.notes.len() as f64 + 8.0;
    let grid_x = MARGIN + LABEL_W;
    let grid_y = MARGIN + header_h + 18.0;
    let grid_w = cell_w * p.cols as f64;
    let grid_h = CELL_H * p.rows as f64 + if extra_r > 0 { 24.0 } else { 0.0 };
    let strip_rows = p.strip.len().div_ceil(STRIP_PER_ROW);
    let strip_label = |e: &[i64]| {
        e.iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let longest_slot = p
        .strip
        .iter()
        .filter_map(|s| s.element.as_ref())
        .map(|e| strip_label(e).len())
        .max()
        .unwrap_or(3);
    let strip_w = (longest_slot as f64 * 6.0 + 10.0).max(40.0);
    let strip_y = grid_y + grid_h + 40.0;
    let legend_y = strip_y
        + if p.strip.is_empty() {
            0.0
        } else {
            28.0 + STRIP_H * strip_rows as f64 + 10.0
        };
    let legend_rows = p.legend.len().min(16);
    let height = legend_y + 22.0 * legend_rows as f64 + MARGIN;
    let title_w = p.title.len() as f64 * 8.5;
    let notes_w = p.notes.iter().map(|n| n.len()).max().unwrap_or(0) as f64 * 6.8;
    let strip_total_w = strip_w * STRIP_PER_ROW.min(p.strip.len()) as f64;
    let more_cols_text = format!(
        "{} more columns",
        p.total_cols.saturating_sub(p.cols as u64)
    );
    let more_rows_text = format!("{} more rows", p.total_rows.saturating_sub(p.rows as u64));
    let ellipsis_w = if p.more_cols {
        more_cols_text.len() as f64 * 7.0 + 16.0
    } else {
        0.0
    };
    let width = (grid_x + grid_w + ellipsis_w)
        .max(MARGIN + title_w)
        .max(MARGIN + notes_w)
        .max(MARGIN + strip_total_w)
        + MARGIN;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace">"#
    );
    s.push_str(concat!(
        r#"<defs><pattern id="pad" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">"#,
        r##"<rect width="8" height="8" fill="#ffffff"/><line x1="0" y1="0" x2="0" y2="8" stroke="#c8c8c8" stroke-width="3"/></pattern></defs>"##,
        "\n"
    ));
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    let _ = writeln!(
        s,
        r##"<text id="title" x="{MARGIN}" y="{:.0}" font-size="15" font-weight="bold" fill="#111111">{}</text>"##,
        MARGIN + 14.0,
        esc(&p.title)
    );
    for (i, n) in p.notes.iter().enumerate() {
        let _ = writeln!(
            s,
            r##"<text class="note" x="{MARGIN}" y="{:.0}" font-size="12" fill="#555555">{}</text>"##,
            MARGIN + 36.0 + 18.0 * i as f64,
            esc(n)
        );
    }
    // Column and row indices.
    for c in 0..p.cols {
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="10" fill="#777777" text-anchor="middle">{c}</text>"##,
            grid_x + cell_w * (c as f64 + 0.5),
            grid_y - 6.0
        );
    }
    for r in 0..p.rows {
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="10" fill="#777777" text-anchor="end">{r}</text>"##,
            grid_x - 8.0,
            grid_y + CELL_H * (r as f64 + 0.5) + 4.0
        );
    }
    // Cells.
    for r in 0..p.rows {
        for c in 0..p.cols {
            let cell = p.cell(r, c);
            let (x, y) = (grid_x + cell_w * c as f64, grid_y + CELL_H * r as f64);
            let fill = if cell.padding {
                "url(#pad)".to_string()
            } else {
                fill(cell.group).to_string()
            };
            let dash = if cell.replicated && p.kind == Kind::Devices {
                r#" stroke-dasharray="4 2""#
            } else {
                ""
            };
            let _ = writeln!(
                s,
                r##"<rect class="{}" data-row="{r}" data-col="{c}" x="{x:.1}" y="{y:.1}" width="{cell_w:.1}" height="{CELL_H:.1}" fill="{fill}" stroke="#9a9a9a" stroke-width="0.6"{dash}/>"##,
                if cell.padding { "cell padding" } else { "cell" }
            );
            let (ty, color) = if cell.padding {
                (y + 21.0, "#9a9a9a")
            } else {
                (
                    y + if cell.sublabel.is_some() { 15.0 } else { 21.0 },
                    "#111111",
                )
            };
            let _ = writeln!(
                s,
                r##"<text class="label" data-row="{r}" data-col="{c}" x="{:.1}" y="{ty:.1}" font-size="12" fill="{color}" text-anchor="middle">{}</text>"##,
                x + cell_w / 2.0,
                esc(&cell.label)
            );
            if let Some(sub) = &cell.sublabel {
                let _ = writeln!(
                    s,
                    r##"<text class="sublabel" x="{:.1}" y="{:.1}" font-size="9" fill="#333333" text-anchor="middle">{}</text>"##,
                    x + cell_w / 2.0,
                    y + 28.0,
                    esc(sub)
                );
            }
        }
    }
    // Ellipses for what is not shown, with how much.
    if p.more_cols {
        let (x, y) = (
            grid_x + cell_w * p.cols as f64 + 10.0,
            grid_y + CELL_H * (p.rows as f64 / 2.0),
        );
        let _ = writeln!(
            s,
            r##"<text class="ellipsis" x="{x:.1}" y="{y:.1}" font-size="18" fill="#555555">⋯</text><text x="{x:.1}" y="{:.1}" font-size="11" fill="#555555">{}</text>"##,
            y + 16.0,
            esc(&more_cols_text)
        );
    }
    if p.more_rows {
        let (x, y) = (
            grid_x + cell_w * (p.cols as f64 / 2.0),
            grid_y + CELL_H * p.rows as f64 + 20.0,
        );
        let _ = writeln!(
            s,
            r##"<text class="ellipsis" x="{x:.1}" y="{y:.1}" font-size="18" fill="#555555" text-anchor="middle">⋮</text><text x="{:.1}" y="{:.1}" font-size="11" fill="#555555">{}</text>"##,
            x + 12.0,
            y - 2.0,
            esc(&more_rows_text)
        );
    }
    // Tile borders: between neighbours in different tiles, by the outermost level that differs.
    let edge = |s: &mut String, level: usize, x1: f64, y1: f64, x2: f64, y2: f64| {
        let (color, w) = BORDERS[level.min(BORDERS.len() - 1)];
        let _ = writeln!(
            s,
            r#"<line class="tile-border level{level}" x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{color}" stroke-width="{w}" stroke-linecap="square"/>"#
        );
    };
    for r in 0..p.rows {
        for c in 0..p.cols {
            let (x, y) = (grid_x + cell_w * c as f64, grid_y + CELL_H * r as f64);
            if c + 1 < p.cols {
                if let Some(level) = p.boundary(p.cell(r, c), p.cell(r, c + 1)) {
                    edge(&mut s, level, x + cell_w, y, x + cell_w, y + CELL_H);
                }
            }
            if r + 1 < p.rows {
                if let Some(level) = p.boundary(p.cell(r, c), p.cell(r + 1, c)) {
                    edge(&mut s, level, x, y + CELL_H, x + cell_w, y + CELL_H);
                }
            }
        }
    }
    let _ = writeln!(
        s,
        r##"<rect x="{grid_x:.1}" y="{grid_y:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#222222" stroke-width="2.5"/>"##,
        cell_w * p.cols as f64,
        CELL_H * p.rows as f64
    );
    // The memory-order strip.
    if !p.strip.is_empty() {
        let _ = writeln!(
            s,
            r##"<text x="{MARGIN}" y="{:.1}" font-size="12" fill="#333333">memory order: slots 0–{} of {} (each slot: the element stored there)</text>"##,
            strip_y - 8.0,
            p.strip.len() - 1,
            p.strip_total
        );
        for (i, slot) in p.strip.iter().enumerate() {
            let (x, y) = (
                MARGIN + strip_w * (i % STRIP_PER_ROW) as f64,
                strip_y + 8.0 + STRIP_H * (i / STRIP_PER_ROW) as f64,
            );
            let fill = if slot.element.is_none() {
                "url(#pad)"
            } else {
                fill(slot.group)
            };
            let label = slot
                .element
                .as_ref()
                .map_or(String::new(), |e| strip_label(e));
            let _ = writeln!(
                s,
                r##"<rect class="slot" data-slot="{i}" x="{x:.1}" y="{y:.1}" width="{strip_w:.1}" height="{STRIP_H}" fill="{fill}" stroke="#9a9a9a" stroke-width="0.6"/><text class="slot-label" x="{:.1}" y="{:.1}" font-size="9" fill="#111111" text-anchor="middle">{}</text>"##,
                x + strip_w / 2.0,
                y + 16.0,
                esc(&label)
            );
        }
    }
    // Legend.
    for (i, (group, text)) in p.legend.iter().take(16).enumerate() {
        let y = legend_y + 22.0 * i as f64;
        let _ = writeln!(
            s,
            r##"<rect x="{MARGIN}" y="{y:.1}" width="16" height="16" fill="{}" stroke="#9a9a9a"/><text x="{:.1}" y="{:.1}" font-size="12" fill="#111111">{}</text>"##,
            fill(Some(*group)),
            MARGIN + 24.0,
            y + 13.0,
            esc(text)
        );
    }
    s.push_str("</svg>\n");
    s
}
