//! Pictures as text: the grid of labels, padding as `·`, optionally coloured with ANSI escapes.

use std::fmt::Write;

use crate::picture::Picture;

/// 256-colour background codes matching the SVG palette's order.
const ANSI: [u8; 12] = [153, 223, 151, 217, 183, 181, 218, 187, 159, 223, 250, 193];

/// The grid as text, with colours when `colour` is set.
pub fn to_text(p: &Picture, colour: bool) -> String {
    let shown = |c: &crate::picture::Cell| match &c.sublabel {
        Some(sub) => format!("{} {sub}", c.label),
        None => c.label.clone(),
    };
    let w = p
        .cells
        .iter()
        .map(|c| shown(c).chars().count())
        .max()
        .unwrap_or(1)
        .max(p.cols.saturating_sub(1).to_string().len())
        + if p
            .cells
            .iter()
            .any(|c| c.sublabel.is_some() || c.label.contains(' '))
        {
            2
        } else {
            1
        };
    let rw = p.rows.saturating_sub(1).to_string().len().max(1);
    let mut s = String::new();
    let _ = writeln!(s, "{}", p.title);
    for n in &p.notes {
        let _ = writeln!(s, "  {n}");
    }
    let _ = write!(s, "{:>rw$}  ", "");
    for c in 0..p.cols {
        let _ = write!(s, "{c:>w$}");
    }
    if p.more_cols {
        s.push_str(" …");
    }
    s.push('\n');
    for r in 0..p.rows {
        let _ = write!(s, "{r:>rw$}  ");
        for c in 0..p.cols {
            let cell = p.cell(r, c);
            let text = if cell.padding && !colour {
                format!("{:>w$}", "·")
            } else {
                format!("{:>w$}", shown(cell))
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
        let _ = writeln!(s, "{:>rw$}  {:>w$}", "⋮", "");
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
                None => format!("{i}:pad"),
            })
            .collect();
        let more = if (p.strip.len() as i64) < p.strip_total {
            format!(" … ({} slots)", p.strip_total)
        } else {
            String::new()
        };
        let _ = writeln!(s, "memory order: {}{more}", slots.join(" "));
    }
    for (g, text) in &p.legend {
        if colour {
            let _ = writeln!(s, "\x1b[48;5;{}m  \x1b[0m {text}", ANSI[g % ANSI.len()]);
        } else {
            let _ = writeln!(s, "[{g}] {text}");
        }
    }
    s
}
