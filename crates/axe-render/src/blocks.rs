//! Sharding pictures as blocks: one rectangle per distinct piece of a 1-D or 2-D array, sized by its
//! extent, labelled with the devices holding it (replicas listed once), the way
//! `jax.debug.visualize_array_sharding` draws shardings — a picture whose size does not grow with the
//! array. Axes with many pieces are folded in the middle.

use std::fmt::Write;
use std::ops::Range;

use crate::error::{RenderError, Result};
use crate::png::FONT_FAMILY;
use crate::svg::PALETTE;

/// One device's piece of the array: its id and the index range it holds along each dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The device id.
    pub device: u64,
    /// The range held along each dimension (1 or 2 of them).
    pub region: Vec<Range<u64>>,
}

/// The most pieces drawn along one axis; past it the middle ones are folded.
pub const MAX_BLOCKS: usize = 24;
const MIN_W: f64 = 52.0;
const MIN_H: f64 = 30.0;
const GRID_W: f64 = 880.0;
const GRID_H: f64 = 560.0;
const MARGIN: f64 = 20.0;
const LABEL_W: f64 = 64.0;
const TITLE_H: f64 = 30.0;
const TOP_H: f64 = 22.0;
const FOLD: f64 = 26.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `0–3,6,8–9`: ascending ids with consecutive runs joined.
pub fn id_list(ids: &[u64]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        out.push(match j - i {
            0 => ids[i].to_string(),
            1 => format!("{},{}", ids[i], ids[j]),
            _ => format!("{}–{}", ids[i], ids[j]),
        });
        i = j + 1;
    }
    out.join(",")
}

/// The cut points of one axis: every region's start and end, with 0 and `n`.
fn cuts(pieces: &[Piece], dim: usize, n: u64) -> Vec<u64> {
    let mut c: Vec<u64> = vec![0, n];
    for p in pieces {
        if let Some(r) = p.region.get(dim) {
            if r.start < r.end {
                c.push(r.start.min(n));
                c.push(r.end.min(n));
            }
        }
    }
    c.sort_unstable();
    c.dedup();
    c
}

/// The blocks drawn along an axis of `cuts`: their index (into the cuts' intervals), or `None` for the
/// fold.
fn visible(intervals: usize) -> Vec<Option<usize>> {
    if intervals <= MAX_BLOCKS {
        return (0..intervals).map(Some).collect();
    }
    let half = MAX_BLOCKS / 2;
    (0..half)
        .map(Some)
        .chain(std::iter::once(None))
        .chain((intervals - half..intervals).map(Some))
        .collect()
}

/// Sizes of the visible blocks: the minimum plus a share of the rest by extent.
fn sizes(cuts: &[u64], vis: &[Option<usize>], total: f64, min: f64) -> Vec<f64> {
    let shown: Vec<u64> = vis
        .iter()
        .flatten()
        .map(|&i| cuts[i + 1] - cuts[i])
        .collect();
    let sum: u64 = shown.iter().sum::<u64>().max(1);
    let spare = (total - min * shown.len() as f64).max(0.0);
    let mut it = shown.iter();
    vis.iter()
        .map(|v| match v {
            Some(_) => min + spare * (*it.next().unwrap_or(&0) as f64) / sum as f64,
            None => FOLD,
        })
        .collect()
}

/// The block picture (SVG) of an array of `dims` (rank 1 or 2) whose devices hold `pieces`, titled
/// `title`. Every device holding a block is named in it; blocks held by the same devices share a colour.
pub fn sharding_blocks(title: &str, dims: &[u64], pieces: &[Piece]) -> Result<String> {
    sharding_blocks_labelled(title, dims, pieces, &|_| None)
}

/// [`sharding_blocks`], a block held by the devices `holders` (ascending) named `label(holders)` where
/// that is `Some` (as devices holding partial sums are named `0+2`), else by the devices' ids.
pub fn sharding_blocks_labelled(
    title: &str,
    dims: &[u64],
    pieces: &[Piece],
    label: &dyn Fn(&[u64]) -> Option<String>,
) -> Result<String> {
    let (rows, cols, two) = match dims {
        [n] => (1, *n, false),
        [r, c] => (*r, *c, true),
        _ => {
            return Err(RenderError::Input(format!(
                "block pictures draw 1-D and 2-D arrays, not rank {}",
                dims.len()
            )))
        }
    };
    // A 1-D array is one row: its pieces' only range is the column range.
    let region = |p: &Piece| -> (Range<u64>, Range<u64>) {
        if two {
            (
                p.region.first().cloned().unwrap_or(0..0),
                p.region.get(1).cloned().unwrap_or(0..0),
            )
        } else {
            (0..1, p.region.first().cloned().unwrap_or(0..0))
        }
    };
    let norm: Vec<Piece> = pieces
        .iter()
        .map(|p| {
            let (r, c) = region(p);
            Piece {
                device: p.device,
                region: vec![r, c],
            }
        })
        .collect();
    let (rc, cc) = (cuts(&norm, 0, rows), cuts(&norm, 1, cols));
    let (rv, cv) = (visible(rc.len() - 1), visible(cc.len() - 1));
    let (hs, ws) = (
        sizes(&rc, &rv, if two { GRID_H } else { MIN_H * 2.0 }, MIN_H),
        sizes(&cc, &cv, GRID_W, MIN_W),
    );
    let (gw, gh): (f64, f64) = (ws.iter().sum(), hs.iter().sum());
    let (x0, y0) = (MARGIN + LABEL_W, MARGIN + TITLE_H + TOP_H);
    let (w, h) = (x0 + gw + MARGIN, y0 + gh + MARGIN + 18.0);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="{FONT_FAMILY}, sans-serif">"#
    );
    let _ = write!(s, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    let title = crate::picture::one_line(title);
    let mut shown_title: String = title.chars().take(150).collect();
    if title.chars().count() > 150 {
        shown_title.push('…');
    }
    let _ = write!(
        s,
        r#"<text x="{MARGIN}" y="{:.1}" font-size="15">{}</text>"#,
        MARGIN + 16.0,
        esc(&shown_title)
    );
    // Colours by the set of devices holding a block, in first-seen order.
    let mut sets: Vec<Vec<u64>> = Vec::new();
    let mut y = y0;
    for (ri, rvis) in rv.iter().enumerate() {
        let mut x = x0;
        for (ci, cvis) in cv.iter().enumerate() {
            let (bw, bh) = (ws[ci], hs[ri]);
            match (rvis, cvis) {
                (Some(r), Some(c)) => {
                    let (r0, r1, c0, c1) = (rc[*r], rc[r + 1], cc[*c], cc[c + 1]);
                    let mut holders: Vec<u64> = norm
                        .iter()
                        .filter(|p| {
                            p.region[0].start <= r0
                                && r1 <= p.region[0].end
                                && p.region[1].start <= c0
                                && c1 <= p.region[1].end
                        })
                        .map(|p| p.device)
                        .collect();
                    holders.sort_unstable();
                    holders.dedup();
                    let fill = if holders.is_empty() {
                        "#ffffff".to_string()
                    } else {
                        let g = sets.iter().position(|x| *x == holders).unwrap_or_else(|| {
                            sets.push(holders.clone());
                            sets.len() - 1
                        });
                        PALETTE[g % PALETTE.len()].to_string()
                    };
                    let _ = write!(
                        s,
                        r##"<rect x="{x:.1}" y="{y:.1}" width="{bw:.1}" height="{bh:.1}" fill="{fill}" stroke="#222222" stroke-width="1.5"/>"##
                    );
                    // Characters that fit the block at 12 px (about 7 px each).
                    let fit = ((bw - 6.0) / 7.0).max(1.0) as usize;
                    // Every id where they fit, else runs joined (0–3), else cut short.
                    let every: Vec<String> = holders.iter().map(u64::to_string).collect();
                    let every = every.join(",");
                    let named = label(&holders);
                    let label = if holders.is_empty() {
                        "none".to_string()
                    } else if let Some(l) = &named {
                        l.clone()
                    } else if every.chars().count() <= fit {
                        every
                    } else {
                        id_list(&holders)
                    };
                    let text: String = if label.chars().count() > fit {
                        let mut t: String = label.chars().take(fit.saturating_sub(1)).collect();
                        t.push('…');
                        t
                    } else {
                        label
                    };
                    let _ = write!(
                        s,
                        r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"#,
                        x + bw / 2.0,
                        y + bh / 2.0 + 4.0,
                        esc(&text)
                    );
                    if let Some(l) = named {
                        let _ = write!(s, "<title>{}</title>", esc(&l));
                    } else if holders.len() > 1 || text.ends_with('…') {
                        let _ = write!(s, "<title>{}</title>", esc(&id_list(&holders)));
                    }
                }
                _ => {
                    let _ = write!(
                        s,
                        r##"<text x="{:.1}" y="{:.1}" font-size="14" text-anchor="middle" fill="#666666">⋯</text>"##,
                        x + bw / 2.0,
                        y + bh / 2.0 + 4.0
                    );
                }
            }
            x += bw;
        }
        y += hs[ri];
    }
    // Index labels: column cuts on top, row cuts on the left.
    let mut x = x0;
    for (ci, cvis) in cv.iter().enumerate() {
        if let Some(c) = cvis {
            let _ = write!(
                s,
                r#"<text x="{x:.1}" y="{:.1}" font-size="11">{}</text>"#,
                y0 - 6.0,
                cc[*c]
            );
        }
        x += ws[ci];
    }
    let _ = write!(
        s,
        r#"<text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="end">{cols}</text>"#,
        y0 - 6.0
    );
    if two {
        let mut y = y0;
        for (ri, rvis) in rv.iter().enumerate() {
            if let Some(r) = rvis {
                let _ = write!(
                    s,
                    r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"#,
                    x0 - 6.0,
                    y + 11.0,
                    rc[*r]
                );
            }
            y += hs[ri];
        }
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{y:.1}" font-size="11" text-anchor="end">{rows}</text>"#,
            x0 - 6.0
        );
    }
    let folded = rv.contains(&None) || cv.contains(&None);
    let mut note = if folded {
        format!(
            "{} × {} blocks; the middle ones are folded (⋯)",
            rc.len() - 1,
            cc.len() - 1
        )
    } else {
        format!("{} × {} blocks", rc.len() - 1, cc.len() - 1)
    };
    // Devices an uneven sharding leaves without data are named too.
    let mut empty: Vec<u64> = norm
        .iter()
        .filter(|p| p.region.iter().any(|r| r.start >= r.end))
        .map(|p| p.device)
        .collect();
    empty.sort_unstable();
    empty.dedup();
    if !empty.is_empty() {
        note.push_str(&format!("; holding nothing: {}", id_list(&empty)));
    }
    let _ = write!(
        s,
        r##"<text x="{x0:.1}" y="{:.1}" font-size="11" fill="#555555">{}</text>"##,
        y0 + gh + 16.0,
        esc(&note)
    );
    s.push_str("</svg>\n");
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_lists_join_runs() {
        assert_eq!(id_list(&[0, 1, 2, 3, 6, 8, 9]), "0–3,6,8,9");
        assert_eq!(id_list(&[4]), "4");
        assert_eq!(id_list(&[]), "");
    }

    #[test]
    fn every_device_is_named_and_the_picture_stays_small() {
        // 8 devices, each a row band of a 64 × 128 array.
        let pieces: Vec<Piece> = (0..8)
            .map(|d| Piece {
                device: d,
                region: vec![d * 8..d * 8 + 8, 0..128],
            })
            .collect();
        let svg = sharding_blocks("P('x')", &[64, 128], &pieces).unwrap();
        for d in 0..8 {
            assert!(svg.contains(&format!(">{d}</text>")), "device {d}: {svg}");
        }
        let w: f64 = svg
            .split("width=\"")
            .nth(1)
            .and_then(|t| t.split('"').next())
            .and_then(|t| t.parse().ok())
            .unwrap();
        assert!(w <= 2000.0, "{w}");
    }

    #[test]
    fn many_pieces_fold_in_the_middle() {
        let pieces: Vec<Piece> = (0..100)
            .map(|d| Piece {
                device: d,
                region: std::iter::once(d..d + 1).collect(),
            })
            .collect();
        let svg = sharding_blocks("P('x')", &[100], &pieces).unwrap();
        assert!(svg.contains("⋯") && svg.contains("folded"), "{svg}");
        assert!(svg.contains(">0</text>") && svg.contains(">99</text>"));
        assert!(!svg.contains(">50</text>"));
        assert!(sharding_blocks("t", &[2, 2, 2], &[]).is_err());
    }
}
