//! Pictures as SVG: cells, tile borders by level, padding hatched, folds dotted, the memory-order strip,
//! a colour legend and a key to the marks. Text is set in the embedded font's family first.

use std::fmt::Write;

use crate::picture::{Kind, Mark, Picture};
use crate::png::FONT_FAMILY;

/// Fill colours for colour groups (light, distinct, readable under black text).
pub const PALETTE: [&str; crate::COLOURS] = [
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
/// The width of the gap drawn where rows or columns are folded away.
const FOLD: f64 = 16.0;
/// The most characters of the title drawn (a longer one ends in `…`).
const MAX_TITLE: usize = 160;
const LINE_H: f64 = 22.0;

/// Where the grid's rows (or columns) start: one offset per visible index, plus the end.
fn offsets(n: usize, size: f64, folded: impl Fn(usize) -> bool) -> Vec<f64> {
    let mut at = Vec::with_capacity(n + 1);
    let mut x = 0.0;
    for i in 0..n {
        if folded(i) {
            x += FOLD;
        }
        at.push(x);
        x += size;
    }
    at.push(x);
    at
}

/// Where the grid lies: its corner, each visible column's and row's offset (folds included), the cell
/// width.
struct Grid {
    x0: f64,
    y0: f64,
    xs: Vec<f64>,
    ys: Vec<f64>,
    cell_w: f64,
}

impl Grid {
    /// The left edge of visible column `c` (`c == cols`: the right edge of the grid).
    fn x(&self, c: usize) -> f64 {
        self.x0 + self.xs[c]
    }

    /// The top edge of visible row `r` (`r == rows`: the bottom edge of the grid).
    fn y(&self, r: usize) -> f64 {
        self.y0 + self.ys[r]
    }
}

/// Runs of visible indices without a fold inside: (first, last + 1).
fn blocks(n: usize, folded: impl Fn(usize) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=n {
        if i == n || folded(i) {
            out.push((start, i));
            start = i;
        }
    }
    out
}

/// Three dots, horizontal or vertical, centred at (x, y).
fn dots(s: &mut String, x: f64, y: f64, vertical: bool) {
    for k in [-1.0, 0.0, 1.0] {
        let (cx, cy) = if vertical {
            (x, y + 4.5 * k)
        } else {
            (x + 4.5 * k, y)
        };
        let _ = write!(
            s,
            r##"<circle class="fold" cx="{cx:.1}" cy="{cy:.1}" r="1.4" fill="#555555"/>"##
        );
    }
    s.push('\n');
}

fn clip_title(t: &str) -> String {
    if t.chars().count() <= MAX_TITLE {
        return t.to_string();
    }
    let mut s: String = t.chars().take(MAX_TITLE - 1).collect();
    s.push('…');
    s
}

/// Draws the picture as an SVG document.
pub fn to_svg(p: &Picture) -> String {
    let chars = |t: &str| t.chars().count() as f64;
    let longest = p
        .cells
        .iter()
        .flat_map(|c| {
            [
                c.label.chars().count(),
                c.sublabel.as_ref().map_or(0, |s| s.chars().count()),
            ]
        })
        .max()
        .unwrap_or(1);
    let cell_w = (longest as f64 * 7.4 + 14.0).max(40.0);
    let xs = offsets(p.cols, cell_w, |c| p.col_folded_before(c));
    let ys = offsets(p.rows, CELL_H, |r| p.row_folded_before(r));
    let title = clip_title(&p.title);
    let header_h = 30.0 + 18.0 * p.notes.len() as f64 + 8.0;
    let grid_x = MARGIN + LABEL_W;
    let grid_y = MARGIN + header_h + 18.0;
    let grid_w = xs[p.cols];
    let grid_h = ys[p.rows] + if p.more_rows { 24.0 } else { 0.0 };
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
    let marks_y =
        legend_y + LINE_H * p.legend.len() as f64 + if p.legend.is_empty() { 0.0 } else { 8.0 };
    let height = marks_y + LINE_H * p.marks.len() as f64 + MARGIN;
    let title_w = chars(&title) * 9.2;
    let notes_w = p.notes.iter().map(|n| chars(n)).fold(0.0, f64::max) * 7.3;
    let key_w = p
        .legend
        .iter()
        .map(|(_, t)| chars(t))
        .chain(p.marks.iter().map(|(_, t)| chars(t) + 4.0))
        .fold(0.0, f64::max)
        * 7.3
        + 24.0;
    let strip_total_w = strip_w * STRIP_PER_ROW.min(p.strip.len()) as f64;
    let more_cols_text = format!(
        "{} more columns",
        p.total_cols
            .saturating_sub(p.col_index.last().map_or(0, |l| l + 1))
    );
    let more_rows_text = format!(
        "{} more rows",
        p.total_rows
            .saturating_sub(p.row_index.last().map_or(0, |l| l + 1))
    );
    let ellipsis_w = if p.more_cols {
        chars(&more_cols_text) * 7.0 + 16.0
    } else {
        0.0
    };
    let width = (grid_x + grid_w + ellipsis_w)
        .max(MARGIN + title_w)
        .max(MARGIN + notes_w)
        .max(MARGIN + strip_total_w)
        .max(MARGIN + key_w)
        + MARGIN;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="{FONT_FAMILY}, Menlo, Consolas, monospace">"#
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
        esc(&title)
    );
    for (i, n) in p.notes.iter().enumerate() {
        let _ = writeln!(
            s,
            r##"<text class="note" x="{MARGIN}" y="{:.0}" font-size="12" fill="#555555">{}</text>"##,
            MARGIN + 36.0 + 18.0 * i as f64,
            esc(n)
        );
    }
    let g = Grid {
        x0: grid_x,
        y0: grid_y,
        xs,
        ys,
        cell_w,
    };
    // Column and row indices: the view's own, so a folded corner says where it is.
    for (c, index) in p.col_index.iter().enumerate() {
        let _ = writeln!(
            s,
            r##"<text class="col-index" x="{:.1}" y="{:.1}" font-size="10" fill="#777777" text-anchor="middle">{index}</text>"##,
            g.x(c) + cell_w / 2.0,
            grid_y - 6.0
        );
    }
    for (r, index) in p.row_index.iter().enumerate() {
        let _ = writeln!(
            s,
            r##"<text class="row-index" x="{:.1}" y="{:.1}" font-size="10" fill="#777777" text-anchor="end">{index}</text>"##,
            grid_x - 8.0,
            g.y(r) + CELL_H / 2.0 + 4.0
        );
    }
    cells(&mut s, p, &g);
    // Folds: dots in the gaps.
    for c in (0..p.cols).filter(|&c| p.col_folded_before(c)) {
        for r in 0..p.rows {
            dots(&mut s, g.x(c) - FOLD / 2.0, g.y(r) + CELL_H / 2.0, false);
        }
    }
    for r in (0..p.rows).filter(|&r| p.row_folded_before(r)) {
        for c in 0..p.cols {
            dots(&mut s, g.x(c) + cell_w / 2.0, g.y(r) - FOLD / 2.0, true);
        }
    }
    // Ellipses for what is not shown, with how much.
    if p.more_cols {
        let (x, y) = (grid_x + grid_w + 10.0, g.y(p.rows) / 2.0);
        let _ = writeln!(
            s,
            r##"<text class="ellipsis" x="{x:.1}" y="{y:.1}" font-size="18" fill="#555555">⋯</text><text x="{x:.1}" y="{:.1}" font-size="11" fill="#555555">{}</text>"##,
            y + 16.0,
            esc(&more_cols_text)
        );
    }
    if p.more_rows {
        let (x, y) = (grid_x + grid_w / 2.0, g.y(p.rows) + 12.0);
        let _ = write!(s, r#"<g class="ellipsis">"#);
        dots(&mut s, x, y, true);
        let _ = writeln!(
            s,
            r##"</g><text x="{:.1}" y="{:.1}" font-size="11" fill="#555555">{}</text>"##,
            x + 10.0,
            y + 4.0,
            esc(&more_rows_text)
        );
    }
    borders(&mut s, p, &g);
    strip(&mut s, p, strip_y, strip_w, &strip_label);
    key(&mut s, p, legend_y, marks_y);
    s.push_str("</svg>\n");
    s
}

/// The cells: fill, outline (dashed when replicated on devices), label and sublabel.
fn cells(s: &mut String, p: &Picture, g: &Grid) {
    let cell_w = g.cell_w;
    for r in 0..p.rows {
        for c in 0..p.cols {
            let cell = p.cell(r, c);
            let (x, y) = (g.x(c), g.y(r));
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
}

fn edge(s: &mut String, level: usize, (x1, y1): (f64, f64), (x2, y2): (f64, f64)) {
    let (color, w) = BORDERS[level.min(BORDERS.len() - 1)];
    let _ = writeln!(
        s,
        r#"<line class="tile-border level{level}" x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{color}" stroke-width="{w}" stroke-linecap="square"/>"#
    );
}

/// Tile borders between neighbours in different tiles, by the outermost level that differs (none across
/// a fold), and an outline around each unfolded block of the grid.
fn borders(s: &mut String, p: &Picture, g: &Grid) {
    let cell_w = g.cell_w;
    for r in 0..p.rows {
        for c in 0..p.cols {
            let (x, y) = (g.x(c), g.y(r));
            if c + 1 < p.cols && !p.col_folded_before(c + 1) {
                if let Some(level) = p.boundary(p.cell(r, c), p.cell(r, c + 1)) {
                    edge(s, level, (x + cell_w, y), (x + cell_w, y + CELL_H));
                }
            }
            if r + 1 < p.rows && !p.row_folded_before(r + 1) {
                if let Some(level) = p.boundary(p.cell(r, c), p.cell(r + 1, c)) {
                    edge(s, level, (x, y + CELL_H), (x + cell_w, y + CELL_H));
                }
            }
        }
    }
    for (r0, r1) in blocks(p.rows, |r| p.row_folded_before(r)) {
        for (c0, c1) in blocks(p.cols, |c| p.col_folded_before(c)) {
            let _ = writeln!(
                s,
                r##"<rect class="block" x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#222222" stroke-width="2.5"/>"##,
                g.x(c0),
                g.y(r0),
                cell_w * (c1 - c0) as f64,
                CELL_H * (r1 - r0) as f64
            );
        }
    }
}

/// The memory-order strip.
fn strip(
    s: &mut String,
    p: &Picture,
    strip_y: f64,
    strip_w: f64,
    label: &dyn Fn(&[i64]) -> String,
) {
    if p.strip.is_empty() {
        return;
    }
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
        let text = slot.element.as_ref().map_or(String::new(), |e| label(e));
        let _ = writeln!(
            s,
            r##"<rect class="slot" data-slot="{i}" x="{x:.1}" y="{y:.1}" width="{strip_w:.1}" height="{STRIP_H}" fill="{fill}" stroke="#9a9a9a" stroke-width="0.6"/><text class="slot-label" x="{:.1}" y="{:.1}" font-size="9" fill="#111111" text-anchor="middle">{}</text>"##,
            x + strip_w / 2.0,
            y + 16.0,
            esc(&text)
        );
    }
}

/// The colour legend (a swatch and its text per colour) and the key to the marks (a sample and its
/// meaning per mark).
fn key(s: &mut String, p: &Picture, legend_y: f64, marks_y: f64) {
    for (i, (group, text)) in p.legend.iter().enumerate() {
        let y = legend_y + LINE_H * i as f64;
        let _ = writeln!(
            s,
            r##"<rect class="swatch" x="{MARGIN}" y="{y:.1}" width="16" height="16" fill="{}" stroke="#9a9a9a"/><text class="legend" x="{:.1}" y="{:.1}" font-size="12" fill="#111111">{}</text>"##,
            fill(Some(*group)),
            MARGIN + 24.0,
            y + 13.0,
            esc(text)
        );
    }
    for (i, (mark, text)) in p.marks.iter().enumerate() {
        let y = marks_y + LINE_H * i as f64;
        let (sample, what) = match mark {
            Mark::Border(level) => {
                let (color, w) = BORDERS[(*level).min(BORDERS.len() - 1)];
                let name = ["black line", "red line", "blue line"][(*level).min(2)];
                (
                    format!(
                        r#"<line x1="{MARGIN}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="{w}"/>"#,
                        y + 8.0,
                        MARGIN + 16.0,
                        y + 8.0
                    ),
                    name,
                )
            }
            Mark::Padding => (
                format!(
                    r##"<rect x="{MARGIN}" y="{y:.1}" width="16" height="16" fill="url(#pad)" stroke="#9a9a9a"/>"##
                ),
                "hatched",
            ),
            Mark::Replicated => (
                format!(
                    r##"<rect x="{MARGIN}" y="{y:.1}" width="16" height="16" fill="#ffffff" stroke="#9a9a9a" stroke-dasharray="4 2"/>"##
                ),
                "dashed outline, R",
            ),
            Mark::Fold => {
                let mut d = String::new();
                dots(&mut d, MARGIN + 8.0, y + 8.0, false);
                (d, "dots")
            }
        };
        let _ = writeln!(
            s,
            r##"<g class="mark">{sample}<text x="{:.1}" y="{:.1}" font-size="12" fill="#111111">{what}: {}</text></g>"##,
            MARGIN + 24.0,
            y + 13.0,
            esc(text)
        );
    }
}
