//! The picture of a Triton or Gluon layout over a tensor: which register, lane and warp hold each
//! element. The caller lists the layout's placement (from a linear layout's map, or a Gluon layout's
//! hardware map); this module draws plain data.

use crate::error::Result;
use crate::holders::{holders_picture, Holders, Style};
use crate::picture::Picture;

/// A short name for labels, as Axe pictures name the same axes: `r` for registers, `L` for lanes
/// (threads), `W` for warps, `B` for blocks, otherwise the name itself, cut to three characters.
fn short(name: &str) -> String {
    match name.to_ascii_lowercase().as_str() {
        "register" | "reg" => "r".into(),
        "lane" | "thread" => "L".into(),
        "warp" => "W".into(),
        "block" | "cta" => "B".into(),
        _ => name.chars().take(3).collect(),
    }
}

/// `lanes`, `blocks or warps`: the names of a level, plural.
fn plural(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("{n}s"))
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Draws which hardware inputs hold each tensor element, as a Triton linear layout or a Gluon layout
/// places it: each cell shows its warp and lane (`W0 L1`, in general every hardware dim of size above 1
/// but the first, coarsest first) over its register in small text (`r1`, the first dim). Cells are
/// coloured by warp (by block and warp; by lane when there is one warp), with black borders between warps
/// and red ones between lanes. An element held several times (broadcast) shows its first holder (the least
/// warp, then lane, then register) and how many (`r0 ×4`); one held by none is hatched. `holders` lists the
/// hardware dims first fastest, as Triton does (`register`, `lane`, `warp`, `block`). At most
/// [`crate::MAX_ROWS`]×[`crate::MAX_COLS`] cells, folded to show a colour boundary beyond the corner.
pub fn hardware_picture(title: &str, holders: Holders) -> Result<Picture> {
    let dims: Vec<(String, u64)> = holders.dims().to_vec();
    let mut shorts: Vec<String> = dims.iter().map(|(n, _)| short(n)).collect();
    for i in 0..shorts.len() {
        if shorts.iter().filter(|s| **s == shorts[i]).count() > 1 {
            shorts[i] = dims[i].0.clone();
        }
    }
    // The dims worth showing (size above 1); the first one (registers) goes to the small text.
    let mut shown: Vec<usize> = (0..dims.len()).filter(|&d| dims[d].1 > 1).collect();
    if shown.is_empty() {
        shown.push(0);
    }
    let small = shown
        .first()
        .copied()
        .filter(|&d| d == 0 && shown.len() > 1);
    // Coarsest first.
    let main: Vec<usize> = shown
        .iter()
        .rev()
        .copied()
        .filter(|&d| Some(d) != small)
        .collect();
    let levels: Vec<Vec<usize>> = if main.len() >= 2 {
        vec![main[..main.len() - 1].to_vec(), main.clone()]
    } else {
        vec![main.clone()]
    };
    let name = |d: usize| dims[d].0.as_str();
    let level_names = |l: &[usize]| l.iter().map(|&d| name(d)).collect::<Vec<_>>();
    let colour_names = level_names(&levels[0]);
    let borders: Vec<String> = levels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let names = if i == 0 {
                colour_names.clone()
            } else {
                l.last().map(|&d| vec![name(d)]).unwrap_or_default()
            };
            format!("a boundary between {}", plural(&names))
        })
        .collect();
    let label = |h: &[u64], n: usize| {
        let part = |d: usize| format!("{}{}", shorts[d], h.get(d).copied().unwrap_or(0));
        let top = main.iter().map(|&d| part(d)).collect::<Vec<_>>().join(" ");
        let times = if n > 1 {
            format!(" ×{n}")
        } else {
            String::new()
        };
        match small {
            Some(d) => (top, Some(format!("{}{times}", part(d)))),
            None => (format!("{top}{times}"), None),
        }
    };
    let colour_dims = levels[0].clone();
    let legend = |k: &[u64]| {
        colour_dims
            .iter()
            .zip(k)
            .map(|(&d, v)| format!("{} {v}", name(d)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let key = |ds: &[usize]| {
        ds.iter()
            .map(|&d| format!("{} = {}", shorts[d], name(d)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut note = format!(
        "each cell: the {} holding it ({})",
        level_names(&main).join(", "),
        key(&main)
    );
    if let Some(d) = small {
        note.push_str(&format!(
            " and in small text its {} ({})",
            name(d),
            key(&[d])
        ));
    }
    note.push_str(&format!("; colour: the {}", colour_names.join(" and ")));
    let owners: Vec<String> = levels
        .iter()
        .map(|l| {
            let names: Vec<String> = l.iter().map(|&d| format!("{}s", name(d))).collect();
            match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
                _ => names.join(""),
            }
        })
        .collect();
    let style = Style {
        owners,
        first_dim_major: false,
        label: &label,
        levels,
        legend: &legend,
        borders,
        notes: vec![note],
        replicated: format!(
            "×N: the element is held N times (broadcast); the cell shows the first holder (least {})",
            shown.iter().rev().map(|&d| name(d)).collect::<Vec<_>>().join(", then ")
        ),
        empty: "held by no hardware input".into(),
    };
    holders_picture(title.to_string(), holders, style)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::picture::Mark;

    fn hw(sizes: [u64; 3]) -> Vec<(String, u64)> {
        ["register", "lane", "warp"]
            .iter()
            .zip(sizes)
            .map(|(n, s)| (n.to_string(), s))
            .collect()
    }

    /// Gluon `BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1],
    /// order=[1, 0])` over 32×16: register r of lane l of warp w holds (8w + l/4, 4(l%4) + r).
    fn blocked() -> Holders {
        let mut h = Holders::new(&[32, 16], &hw([4, 32, 4])).unwrap();
        for w in 0..4 {
            for l in 0..32 {
                for r in 0..4 {
                    h.add(&[8 * w + l / 4, 4 * (l % 4) + r], &[r, l, w])
                        .unwrap();
                }
            }
        }
        h
    }

    #[test]
    fn cells_name_warp_lane_and_register() {
        let p = hardware_picture("blocked", blocked()).unwrap();
        assert_eq!((p.rows, p.cols), (16, 16));
        assert_eq!(p.cell(0, 5).label, "W0 L1");
        assert_eq!(p.cell(0, 5).sublabel.as_deref(), Some("r1"));
        assert_eq!(p.cell(8, 0).label, "W1 L0");
        assert_eq!(p.cell(8, 0).sublabel.as_deref(), Some("r0"));
        assert_ne!(p.cell(8, 0).group, p.cell(7, 0).group);
        assert_eq!(p.cell(0, 0).group, p.cell(7, 15).group);
        assert_eq!(p.legend[0].1, "warp 0");
        let marks: Vec<Mark> = p.marks.iter().map(|(m, _)| *m).collect();
        // 32 rows of 4 warps: rows 12–14, 17–22 and 25–31 repeat the warps of rows shown, and every
        // warp appears.
        assert_eq!(marks, vec![Mark::Border(0), Mark::Border(1), Mark::Fold]);
        assert_eq!(
            p.row_index,
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 16, 23, 24]
        );
        assert_eq!(p.legend.len(), 4);
        assert!(
            p.notes
                .iter()
                .any(|n| n
                    == "every row and column left out repeats the warps of a row or column shown"),
            "{:?}",
            p.notes
        );
        assert!(p.notes[0].contains("W = warp"), "{:?}", p.notes);
    }

    #[test]
    fn broadcast_shows_the_first_holder_and_a_count() {
        // Two warps hold the same 4×4 tensor, one element per lane.
        let mut h = Holders::new(&[4, 4], &hw([1, 16, 2])).unwrap();
        for w in 0..2 {
            for l in 0..16 {
                h.add(&[l / 4, l % 4], &[0, l, w]).unwrap();
            }
        }
        let p = hardware_picture("bcast", h).unwrap();
        // Registers are one: no small text; the count goes in the label.
        assert_eq!(p.cell(1, 2).label, "W0 L6 ×2");
        assert_eq!(p.cell(1, 2).sublabel, None);
        assert!(p.cell(1, 2).replicated);
        assert!(p.notes.iter().any(|n| n.starts_with("×N")));
    }

    #[test]
    fn one_warp_is_coloured_by_lane() {
        let mut h = Holders::new(&[2, 2], &hw([1, 4, 1])).unwrap();
        for l in 0..4 {
            h.add(&[l / 2, l % 2], &[0, l, 0]).unwrap();
        }
        let p = hardware_picture("lanes", h).unwrap();
        assert_eq!(p.cell(1, 1).label, "L3");
        assert_eq!(p.legend.len(), 4);
        assert_eq!(p.legend[3].1, "lane 3");
    }

    #[test]
    fn other_in_dims_and_holes() {
        // A shared-memory layout: in-dim `offset`; element (0, 1) held by none.
        let mut h = Holders::new(&[2, 2], &[("offset".to_string(), 3)]).unwrap();
        for (k, idx) in [[0, 0], [1, 0], [1, 1]].iter().enumerate() {
            h.add(idx, &[k as u64]).unwrap();
        }
        let p = hardware_picture("shared", h).unwrap();
        assert_eq!(p.cell(1, 1).label, "off2");
        assert!(p.cell(0, 1).padding);
        assert!(p.marks.iter().any(|(m, _)| *m == Mark::Padding));
    }

    #[test]
    fn a_rank_three_tensor_shows_its_first_slice() {
        let mut h = Holders::new(&[2, 2, 2], &hw([8, 1, 1])).unwrap();
        for r in 0..8u64 {
            h.add(&[r / 4, r / 2 % 2, r % 2], &[r, 0, 0]).unwrap();
        }
        let p = hardware_picture("3d", h).unwrap();
        assert_eq!(p.cell(1, 1).label, "r3");
        assert!(p.notes.iter().any(|n| n.contains("[0, :, :]")));
    }
}
