//! Pictures as text: the grid of labels, padding as `·`, folds as `…` and `⋮`, optionally coloured with
//! ANSI escapes.

use std::fmt::Write;

use crate::picture::{Cell, Mark, Picture};

/// 256-colour background codes matching the SVG palette's order.
const ANSI: [u8; crate::COLOURS] = [153, 223, 151, 217, 183, 181, 218, 187, 159, 223, 250, 193];

/// `s` right-aligned in `w` characters (never truncated).
fn right(s: &str, w: usize) -> String {
    let n = s.chars().count();
    let mut out = " ".repeat(w.saturating_sub(n));
    out.push_str(s);
    out
}

fn shown(c: &Cell) -> String {
    match &c.sublabel {
        Some(sub) => format!("{} {sub}", c.label),
        None => c.label.clone(),
    }
}

/// The grid as text, with colours when `colour` is set.
pub fn to_text(p: &Picture, colour: bool) -> String {
    let spaced = p
        .cells
        .iter()
        .any(|c| c.sublabel.is_some() || c.label.contains(' '));
    let w = p
        .cells
        .iter()
        .map(|c| shown(c).chars().count())
        .chain(p.col_index.iter().map(|c| c.to_string().len()))
        .max()
        .unwrap_or(1)
        + if spaced { 2 } else { 1 };
    let rw = p
        .row_index
        .iter()
        .map(|r| r.to_string().len())
        .max()
        .unwrap_or(1);
    let fold_col = " …";
    let mut s = String::new();
    let _ = writeln!(s, "{}", p.title);
    for n in &p.notes {
        // Without colours, a note's clause about them says nothing.
        let n = if colour {
            n.clone()
        } else {
            n.split("; ")
                .filter(|part| !part.starts_with("colour: ") && !part.starts_with("colours: "))
                .collect::<Vec<_>>()
                .join("; ")
        };
        if !n.is_empty() {
            let _ = writeln!(s, "  {n}");
        }
    }
    s.push_str(&right("", rw + 2));
    for (c, index) in p.col_index.iter().enumerate() {
        if p.col_folded_before(c) {
            s.push_str(fold_col);
        }
        s.push_str(&right(&index.to_string(), w));
    }
    if p.more_cols {
        s.push_str(" …");
    }
    s.push('\n');
    for (r, index) in p.row_index.iter().enumerate() {
        if p.row_folded_before(r) {
            let _ = writeln!(s, "{}", right("⋮", rw));
        }
        s.push_str(&right(&index.to_string(), rw));
        s.push_str("  ");
        for c in 0..p.cols {
            if p.col_folded_before(c) {
                s.push_str(fold_col);
            }
            let cell = p.cell(r, c);
            let text = if cell.padding && !colour {
                right("·", w)
            } else {
                right(&shown(cell), w)
            };
            match (colour, cell.group, cell.padding) {
                (true, Some(g), false) => {
                    let _ = write!(
                        s,
                        "\x1b[48;5;{}m\x1b[30m{text}\x1b[0m",
                        ANSI[g % ANSI.len()]
                    );
                }
                (true, _, true) => {
                    let _ = write!(s, "\x1b[2m{text}\x1b[0m");
                }
                _ => s.push_str(&text),
            }
        }
        if p.more_cols {
            s.push_str(" …");
        }
        s.push('\n');
    }
    if p.more_rows {
        let _ = writeln!(s, "{}", right("⋮", rw));
    }
    if !p.strip.is_empty() {
        let slots: Vec<String> = p
            .strip
            .iter()
            .take(24)
            .enumerate()
            .map(|(i, slot)| match &slot.element {
                Some(e) => format!(
                    "{i}:({})",
                    e.iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                None => format!("{i}:·"),
            })
            .collect();
        let more = if (slots.len() as i64) < p.strip_total {
            format!(" … ({} slots)", p.strip_total)
        } else {
            String::new()
        };
        let _ = writeln!(s, "memory order: {}{more}", slots.join(" "));
    }
    // A legend without colours says nothing the labels do not: it is left out.
    for (g, text) in p.legend.iter().filter(|_| colour) {
        let _ = writeln!(s, "\x1b[48;5;{}m  \x1b[0m {text}", ANSI[g % ANSI.len()]);
    }
    for (mark, text) in &p.marks {
        let sign = match mark {
            // Borders are drawn in SVG and PNG only.
            Mark::Border(_) => continue,
            Mark::Padding => "·",
            Mark::Replicated => "R",
            Mark::Fold => "…",
        };
        let _ = writeln!(s, "{sign} {text}");
    }
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Lanes 0–15 of a 4×4 tile, one each: 16 owners over 12 colours.
    fn lanes() -> Picture {
        let dims = [("lane".to_string(), 16)];
        let mut h = crate::Holders::new(&[4, 4], &dims).unwrap();
        for l in 0..16 {
            h.add(&[l / 4, l % 4], &[l]).unwrap();
        }
        crate::hardware_picture("lanes", h).unwrap()
    }

    /// Without colours the legend and the notes about colours are left out; with them, each colour is
    /// listed once.
    #[test]
    fn a_legend_only_with_colours() {
        let p = lanes();
        let plain = to_text(&p, false);
        assert!(!plain.contains("lane 0"), "{plain}");
        assert!(!plain.contains("colour"), "{plain}");
        let coloured = to_text(&p, true);
        assert!(coloured.contains("lane 0, 12"), "{coloured}");
        assert!(
            coloured.contains("colours: 16 owners share the 12 colours"),
            "{coloured}"
        );
        assert_eq!(
            coloured.matches("\x1b[48;5;153m  ").count(),
            1,
            "{coloured}"
        );
    }
}
