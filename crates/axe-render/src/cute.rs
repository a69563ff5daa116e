//! CuTe's pictures without LaTeX: the `print_layout` grid of a layout (each coordinate's offset) and the
//! thread/value picture of a TV layout over its tile (CuTe's `print_latex_tv`, in the warp, lane and
//! register words of every picture of threads). The caller evaluates the CuTe layout; this module draws
//! plain data.

use crate::error::Result;
use crate::holders::Holders;
use crate::picture::{
    clip, corner_notes, visible, Cell, Groups, Kind, Picture, MAX_COLS, MAX_ROWS,
};

/// Draws CuTe's `print_layout` grid: a `rows × cols` grid whose cell (m, n) shows `offset(m, n)`, the
/// layout's offset at that coordinate (`L(m + rows·n)` for a rank-2 layout, swizzle applied), coloured
/// by `(offset / unit) mod count` for `(unit, count)` = `colour`: `(1, 8)`, the offset mod 8, for a plain
/// layout (as CuTe's LaTeX pictures colour it); e.g. `(2^M, 2^B)` for `Sw<B,M,S>`, the unit a swizzle moves,
/// so that its pattern shows. At most [`MAX_ROWS`]×[`MAX_COLS`] cells are evaluated — the first rows and
/// columns of a larger grid — so the cost does not grow with the layout.
pub fn cute_layout_picture(
    title: &str,
    (rows, cols): (u64, u64),
    colour: (u64, u64),
    offset: &dyn Fn(u64, u64) -> Result<i64>,
) -> Result<Picture> {
    let row_index = visible(rows, MAX_ROWS, None);
    let col_index = visible(cols, MAX_COLS, None);
    let big = |x: u64| i64::try_from(x).unwrap_or(i64::MAX).max(1);
    let (unit, count) = (big(colour.0), big(colour.1));
    let colour = if unit > 1 {
        format!("the {unit}-element unit the offset lies in (offset / {unit}) mod {count}")
    } else {
        format!("the offset mod {count}")
    };
    let mut notes = vec![format!(
        "CuTe print_layout: each cell (m, n) is the layout's offset at coordinate (m, n); colour: {colour}"
    )];
    corner_notes(&mut notes, 2, (rows, cols), (&row_index, &col_index));
    let mut groups = Groups::default();
    let mut cells = Vec::with_capacity(row_index.len() * col_index.len());
    for &r in &row_index {
        for &c in &col_index {
            let o = offset(r, c)?;
            let (group, _) = groups.of(&[o.div_euclid(unit).rem_euclid(count)]);
            cells.push(Cell {
                label: clip(o.to_string()),
                sublabel: None,
                group: Some(group),
                padding: false,
                replicated: false,
                tiles: Vec::new(),
            });
        }
    }
    let mut p = Picture::grid(
        Kind::Memory,
        title.to_string(),
        notes,
        (row_index, col_index),
        (rows, cols),
        cells,
    );
    p.add_common_marks();
    Ok(p)
}

/// The threads of a warp: CuTe's thread `T` is lane `T mod 32` of warp `T / 32`.
pub const WARP_THREADS: u64 = 32;

/// Draws a CuTe TV layout over its tile, as CuTe's `print_latex_tv` does, in the words every picture
/// of threads uses ([`crate::hardware_picture`]): thread `T` is lane `L = T mod 32` of warp
/// `W = T / 32` and value `V` is register `r = V`, so each element of the tile shows `W1 L5` (only the
/// warp and lane dims of size above 1, e.g. `L5` for 32 threads or fewer) over its register (`r2`),
/// coloured by warp (by lane for one warp), with borders between warps and lanes. A note says how
/// CuTe's `T` and `V` read in these words. An element several (thread, value) pairs map to shows the
/// least thread, then value, and how many (`L1 ×2`); one none maps to is hatched. `holders` has two
/// dims, the thread then the value, over the tile's shape. At most [`MAX_ROWS`]×[`MAX_COLS`] cells,
/// folded to show a boundary between owners.
pub fn tv_picture(title: &str, holders: Holders) -> Result<Picture> {
    let &[(_, threads), (_, values)] = holders.dims() else {
        return Err(crate::RenderError::Input(format!(
            "a TV picture needs two dims (thread, value), not {}",
            holders.dims().len()
        )));
    };
    let lanes = threads.min(WARP_THREADS);
    let warps = threads.div_ceil(WARP_THREADS);
    let dims = [
        ("register".to_string(), values),
        ("lane".to_string(), lanes),
        ("warp".to_string(), warps),
    ];
    let hw = holders.regroup(&dims, |tv| {
        let (t, v) = (
            tv.first().copied().unwrap_or(0),
            tv.get(1).copied().unwrap_or(0),
        );
        vec![v, t % WARP_THREADS, t / WARP_THREADS]
    })?;
    let mut p = crate::hardware_picture(title, hw)?;
    let thread = match (warps > 1, lanes > 1) {
        (true, _) => "CuTe's thread T is lane L of warp W (T = 32·W + L)",
        (false, true) => "CuTe's thread T is lane L (T = L)",
        (false, false) => "CuTe's one thread T0 is lane 0",
    };
    let value = if values > 1 {
        "its value V is register r (V = r)"
    } else {
        "its one value V0 is register 0"
    };
    p.notes
        .insert(1.min(p.notes.len()), format!("{thread}; {value}"));
    Ok(p)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::picture::Mark;

    /// The marks a picture keys.
    fn marks(p: &Picture) -> Vec<Mark> {
        p.marks.iter().map(|(m, _)| *m).collect()
    }

    /// `(4,2):(2,1)`: offset of (m, n) is 2m + n.
    #[test]
    fn print_layout_grid() {
        let p = cute_layout_picture("(4,2):(2,1)", (4, 2), (1, 8), &|m, n| {
            Ok(2 * m as i64 + n as i64)
        })
        .unwrap();
        assert_eq!((p.rows, p.cols), (4, 2));
        assert_eq!(p.cell(1, 0).label, "2");
        assert_eq!(p.cell(3, 1).label, "7");
        assert_ne!(p.cell(0, 0).group, p.cell(0, 1).group);
        assert!(marks(&p).is_empty());
    }

    /// `Sw<1,1,1> o 0 o (2,4):(4,1)`: units of two offsets; row 1 swaps them.
    #[test]
    fn a_swizzle_is_coloured_by_unit() {
        let sw = |x: i64| x ^ ((x >> 1) & 2);
        let p = cute_layout_picture("sw", (2, 4), (2, 2), &|m, n| {
            Ok(sw(4 * m as i64 + n as i64))
        })
        .unwrap();
        assert_eq!(p.cell(1, 0).label, "6");
        assert_eq!(p.cell(0, 0).group, p.cell(0, 1).group);
        assert_eq!(p.cell(1, 0).group, p.cell(0, 2).group);
        assert_ne!(p.cell(1, 0).group, p.cell(0, 0).group);
        assert!(p.notes[0].contains("2-element unit"));
    }

    #[test]
    fn a_large_grid_evaluates_only_its_corner() {
        let calls = std::cell::Cell::new(0u64);
        let p = cute_layout_picture("big", (1 << 40, 1 << 40), (1, 8), &|m, n| {
            calls.set(calls.get() + 1);
            Ok((m + n) as i64)
        })
        .unwrap();
        assert_eq!((p.rows, p.cols), (MAX_ROWS, MAX_COLS));
        assert_eq!(calls.get(), (MAX_ROWS * MAX_COLS) as u64);
        assert!(p.more_rows && p.more_cols);
    }

    #[test]
    fn errors_pass_through() {
        let e = cute_layout_picture("x", (2, 2), (1, 8), &|_, _| {
            Err(crate::RenderError::Input("no".into()))
        });
        assert!(e.is_err());
    }

    fn tv(shape: &[u64], t: u64, v: u64, place: impl Fn(u64, u64) -> Vec<u64>) -> Picture {
        let dims = [("thread".to_string(), t), ("value".to_string(), v)];
        let mut h = Holders::new(shape, &dims).unwrap();
        for vi in 0..v {
            for ti in 0..t {
                h.add(&place(ti, vi), &[ti, vi]).unwrap();
            }
        }
        tv_picture("tv", h).unwrap()
    }

    /// `((2,2),2):((1,0),2)` over a 2×2 tile: threads 1 and 3 both hold (1, 0). Four threads are
    /// four lanes of one warp; values are registers.
    #[test]
    fn tv_cells_name_lane_and_register() {
        let p = tv(&[2, 2], 4, 2, |t, v| {
            let x = t % 2 + 2 * v;
            vec![x % 2, x / 2]
        });
        assert_eq!(p.cell(1, 0).label, "L1");
        assert_eq!(p.cell(1, 0).sublabel.as_deref(), Some("r0 ×2"));
        assert_eq!(p.cell(0, 1).label, "L0");
        assert_eq!(p.cell(0, 1).sublabel.as_deref(), Some("r1 ×2"));
        assert!(p.notes.iter().any(|n| n.starts_with("×N")));
        assert_eq!(
            p.notes[1],
            "CuTe's thread T is lane L (T = L); its value V is register r (V = r)"
        );
        // Coloured by lane: lanes 0 and 1 hold the tile.
        assert_eq!(p.legend.len(), 2);
        assert_eq!(p.legend[1].1, "lane 1");
        for r in 0..2 {
            for c in 0..2 {
                let l = p.cell(r, c).label.clone();
                assert!(!l.contains('T') && !l.contains('V'), "{l}");
            }
        }
    }

    /// 64 threads, one value each, over a 4×16 tile (thread t at row t mod 4, column t / 4): threads
    /// 32–63 are warp 1, so cells name warp and lane and are coloured by warp.
    #[test]
    fn tv_threads_past_a_warp_are_warps_and_lanes() {
        let p = tv(&[4, 16], 64, 1, |t, _| vec![t % 4, t / 4]);
        // Thread 37 = lane 5 of warp 1 sits at (1, 9).
        assert_eq!(p.cell(1, 9).label, "W1 L5");
        assert_eq!(p.cell(1, 9).sublabel, None);
        assert_eq!(p.cell(3, 7).label, "W0 L31");
        assert_ne!(p.cell(3, 7).group, p.cell(0, 8).group);
        assert_eq!(p.cell(0, 0).group, p.cell(3, 7).group);
        assert_eq!(
            p.legend.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(),
            ["warp 0", "warp 1"]
        );
        assert_eq!(
            p.notes[1],
            "CuTe's thread T is lane L of warp W (T = 32·W + L); its one value V0 is register 0"
        );
        assert!(marks(&p).contains(&Mark::Border(0)));
    }

    /// Brute force: every shown cell names the least (thread, value) pair mapping to it, as warp,
    /// lane and register.
    #[test]
    fn tv_labels_are_the_least_pair_in_warp_lane_register_words() {
        // 96 threads × 2 values over an 8×16 tile, threads 64–95 repeating threads 0–31.
        let place = |t: u64, v: u64| {
            let t = t % 64;
            let x = t + 64 * v;
            vec![x % 8, x / 8]
        };
        let p = tv(&[8, 16], 96, 2, place);
        for (ri, &r) in p.row_index.iter().enumerate() {
            for (ci, &c) in p.col_index.iter().enumerate() {
                let pairs: Vec<(u64, u64)> = (0..96)
                    .flat_map(|t| (0..2).map(move |v| (t, v)))
                    .filter(|&(t, v)| place(t, v) == vec![r, c])
                    .collect();
                let (t, v) = pairs.iter().min().copied().unwrap();
                let cell = p.cell(ri, ci);
                assert_eq!(cell.label, format!("W{} L{}", t / 32, t % 32));
                let times = if pairs.len() > 1 {
                    format!(" ×{}", pairs.len())
                } else {
                    String::new()
                };
                assert_eq!(cell.sublabel.clone().unwrap(), format!("r{v}{times}"));
            }
        }
    }

    #[test]
    fn tv_holes_are_hatched() {
        // Two threads, one value each, over a 1×3 tile: element 2 is held by nobody.
        let p = tv(&[1, 3], 2, 1, |t, _| vec![0, t]);
        assert_eq!(p.cell(0, 1).label, "L1");
        assert!(p.cell(0, 2).padding);
        assert!(marks(&p).contains(&Mark::Padding));
        assert!(marks(&p).contains(&Mark::Border(0)));
    }

    #[test]
    fn tv_needs_two_dims() {
        let h = Holders::new(&[2, 2], &[("t".to_string(), 4)]).unwrap();
        assert!(tv_picture("x", h).is_err());
    }

    /// A thread boundary beyond the corner is folded into view.
    #[test]
    fn tv_folds_to_a_thread_boundary() {
        // One thread per 40 columns of a 1×80 tile.
        let p = tv(&[1, 80], 2, 40, |t, v| vec![0, 40 * t + v]);
        assert!(p.is_folded());
        assert!(p.col_index.contains(&39) && p.col_index.contains(&40));
        assert!(marks(&p).contains(&Mark::Fold));
    }
}
