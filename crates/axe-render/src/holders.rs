//! Who holds each element of a tensor, as plain data: for each element of the picture's 2-D view (the
//! last two dimensions, leading ones at 0), the hardware inputs — a CuTe (thread, value), a Triton
//! (register, lane, warp, block) — that hold it. The CuTe TV picture ([`crate::tv_picture`]) and the
//! Triton picture ([`crate::hardware_picture`]) draw it; the caller enumerates the layout into it, so this
//! crate needs neither CuTe nor Triton.
//!
//! A [`Holders`] keeps at most [`MAX_HOLDERS`] pairs (16 bytes each), whatever the layout's size.

use crate::error::{RenderError, Result};
use crate::legend::legend_by_colour;
use crate::picture::{
    clip, corner_notes, first_appearances, fold_note, view, visible_covering, Cell, Groups, Kind,
    Mark, Picture, MAX_COLS, MAX_ROWS,
};

/// The most (element, holder) pairs a [`Holders`] keeps.
pub const MAX_HOLDERS: usize = 1 << 22;

fn bad(why: impl Into<String>) -> RenderError {
    RenderError::Input(why.into())
}

/// The hardware inputs holding each element of a tensor's 2-D view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holders {
    shape: Vec<u64>,
    dims: Vec<(String, u64)>,
    rows: u64,
    cols: u64,
    /// (view cell `row·cols + col`, flat holder with the first dim fastest), sorted once drawn.
    entries: Vec<(u64, u64)>,
}

impl Holders {
    /// An empty record for a tensor of `shape` held by the hardware `dims` (name and size, the first
    /// fastest, e.g. `register`, `lane`, `warp`). Every size must be at least 1, and the view's cells and
    /// the hardware inputs must each number at most 2^64.
    pub fn new(shape: &[u64], dims: &[(String, u64)]) -> Result<Holders> {
        if shape.contains(&0) {
            return Err(bad(format!("the shape {shape:?} has an empty dimension")));
        }
        if dims.is_empty() || dims.iter().any(|(_, s)| *s == 0) {
            return Err(bad(
                "hardware dims need at least one dim, each of size 1 or more",
            ));
        }
        let (rows, cols) = view(shape);
        rows.checked_mul(cols)
            .ok_or_else(|| bad(format!("a {rows}×{cols} view has more than 2^64 cells")))?;
        dims.iter()
            .try_fold(1u64, |a, (_, s)| a.checked_mul(*s))
            .ok_or_else(|| bad("more than 2^64 hardware inputs"))?;
        Ok(Holders {
            shape: shape.to_vec(),
            dims: dims.to_vec(),
            rows,
            cols,
            entries: Vec::new(),
        })
    }

    /// Records that the hardware input `holder` (one coordinate per dim) holds the tensor element at
    /// `index` (one coordinate per dimension of the shape). An element outside the 2-D view (a leading
    /// index not 0) is skipped: `Ok(false)`. Errors on a coordinate out of range, or beyond
    /// [`MAX_HOLDERS`] pairs.
    pub fn add(&mut self, index: &[u64], holder: &[u64]) -> Result<bool> {
        if index.len() != self.shape.len() || index.iter().zip(&self.shape).any(|(i, s)| i >= s) {
            return Err(bad(format!(
                "index {index:?} lies outside the shape {:?}",
                self.shape
            )));
        }
        if holder.len() != self.dims.len() || holder.iter().zip(&self.dims).any(|(h, d)| *h >= d.1)
        {
            return Err(bad(format!(
                "hardware input {holder:?} lies outside the dims {:?}",
                self.dims
            )));
        }
        let rank = index.len();
        if rank > 2 && index[..rank - 2].iter().any(|&i| i != 0) {
            return Ok(false);
        }
        if self.entries.len() >= MAX_HOLDERS {
            return Err(RenderError::Input(format!(
                "more than {MAX_HOLDERS} (element, holder) pairs to draw"
            )));
        }
        let (r, c) = match index {
            [] => (0, 0),
            [c] => (0, *c),
            [.., r, c] => (*r, *c),
        };
        // In range by the checks above and in `new`.
        let cell = r * self.cols + c;
        let flat = holder
            .iter()
            .zip(&self.dims)
            .rev()
            .fold(0u64, |k, (&h, (_, s))| k * s + h);
        self.entries.push((cell, flat));
        Ok(true)
    }

    /// The tensor shape.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The hardware dims (name, size), first fastest.
    pub fn dims(&self) -> &[(String, u64)] {
        &self.dims
    }

    /// The same pairs over other hardware `dims`: each holder's coordinates go through `f`, which must
    /// give one coordinate per new dim, within its size. Errors as [`Holders::new`] and
    /// [`Holders::add`] do (e.g. a coordinate `f` puts out of range).
    pub(crate) fn regroup(
        &self,
        dims: &[(String, u64)],
        f: impl Fn(&[u64]) -> Vec<u64>,
    ) -> Result<Holders> {
        let mut out = Holders::new(&self.shape, dims)?;
        out.entries.reserve(self.entries.len());
        for &(cell, flat) in &self.entries {
            let holder = f(&self.unpack(flat));
            if holder.len() != dims.len() || holder.iter().zip(dims).any(|(h, d)| *h >= d.1) {
                return Err(bad(format!(
                    "hardware input {holder:?} lies outside the dims {dims:?}"
                )));
            }
            let flat = holder
                .iter()
                .zip(dims)
                .rev()
                .fold(0u64, |k, (&h, (_, s))| k * s + h);
            out.entries.push((cell, flat));
        }
        Ok(out)
    }

    /// Sorts the pairs, so that [`Holders::at`] can find them.
    fn sort(&mut self) {
        self.entries.sort_unstable();
        self.entries.dedup();
    }

    /// The flat holders of view cell (r, c), increasing (after [`Holders::sort`]).
    fn at(&self, r: u64, c: u64) -> &[(u64, u64)] {
        let cell = r.saturating_mul(self.cols).saturating_add(c);
        let lo = self.entries.partition_point(|e| e.0 < cell);
        let hi = self.entries.partition_point(|e| e.0 <= cell);
        &self.entries[lo..hi]
    }

    /// The coordinates of flat holder `k`, one per dim.
    fn unpack(&self, mut k: u64) -> Vec<u64> {
        self.dims
            .iter()
            .map(|(_, s)| {
                let v = k % s;
                k /= s;
                v
            })
            .collect()
    }
}

/// The owners along one row (column): (column (row), the owners at each level) of each held cell.
type Pattern<'a> = Vec<(u64, &'a [Vec<i64>])>;

/// A cell's label and sublabel from its first holder's coordinates and its holder count.
pub(crate) type LabelFn<'a> = &'a dyn Fn(&[u64], usize) -> (String, Option<String>);

/// How a holders picture labels and colours its cells.
pub(crate) struct Style<'a> {
    /// Whether the holder shown is the one with the least coordinates compared first dim first (a
    /// CuTe thread before its values), rather than the least flat input (first dim fastest: a Triton
    /// warp, then lane, before registers).
    pub first_dim_major: bool,
    /// The label and sublabel of a cell from its first holder's coordinates and its holder count.
    pub label: LabelFn<'a>,
    /// The tile levels, coarsest first: each a list of dims whose coordinates make the level's key.
    /// The first is the colour.
    pub levels: Vec<Vec<usize>>,
    /// The legend text of a colour key (the coordinates of the first level's dims).
    pub legend: &'a dyn Fn(&[u64]) -> String,
    /// The key text of the border between cells that differ at each level.
    pub borders: Vec<String>,
    /// The notes under the title.
    pub notes: Vec<String>,
    /// What the levels name, for the fold note: entry `k` names levels `0..=k` together (`warps`, `warps
    /// and lanes`).
    pub owners: Vec<String>,
    /// What a cell held by several inputs shows, for a note.
    pub replicated: String,
    /// What a cell held by no input means, for the key.
    pub empty: String,
}

/// The picture of `holders` drawn in `style`: at most [`MAX_ROWS`]×[`MAX_COLS`] cells. A larger view
/// leaves out only rows and columns whose owners (cell by cell, at every level, else at the colour level)
/// repeat those of a row or column shown, and says so; where more distinct rows or columns exist than fit,
/// the note says that some are left out. So every owner appears whenever the distinct rows and columns fit.
pub(crate) fn holders_picture(title: String, mut h: Holders, style: Style) -> Result<Picture> {
    h.sort();
    // The holder a cell shows: the least flat input (first dim fastest), or the least coordinates
    // compared first dim first.
    let first_of = |held: &[(u64, u64)]| -> Option<Vec<u64>> {
        if style.first_dim_major {
            held.iter().map(|e| h.unpack(e.1)).min()
        } else {
            held.first().map(|e| h.unpack(e.1))
        }
    };
    let key_of = |r: u64, c: u64, level: usize| -> Option<Vec<i64>> {
        let coords = first_of(h.at(r, c))?;
        Some(style.levels.get(level).map_or_else(Vec::new, |dims| {
            dims.iter()
                .map(|&d| {
                    coords
                        .get(d)
                        .map_or(0, |&v| i64::try_from(v).unwrap_or(i64::MAX))
                })
                .collect()
        }))
    };
    // Every held cell's owners at each level (from the pairs, so bounded by MAX_HOLDERS).
    let mut held_cells: Vec<(u64, u64, Vec<Vec<i64>>)> = Vec::new();
    let mut i = 0;
    while i < h.entries.len() {
        let cell = h.entries[i].0;
        let j = h.entries[i..].partition_point(|e| e.0 == cell) + i;
        let (r, c) = (cell / h.cols, cell % h.cols);
        let keys = (0..style.levels.len())
            .map(|l| key_of(r, c, l).unwrap_or_default())
            .collect();
        held_cells.push((r, c, keys));
        i = j;
    }
    // Rows and columns shown: every row (column) left out has the owners, cell by cell across the other
    // dimension, of one shown — at every level when that fits, else at the colour level.
    let choose = |depth: usize| {
        let mut by_row: Vec<(u64, Pattern)> = Vec::new();
        for (r, c, k) in &held_cells {
            let key = (*c, &k[..depth.min(k.len())]);
            match by_row.last_mut() {
                Some((lr, v)) if lr == r => v.push(key),
                _ => by_row.push((*r, vec![key])),
            }
        }
        let mut sorted: Vec<&(u64, u64, Vec<Vec<i64>>)> = held_cells.iter().collect();
        sorted.sort_by_key(|(r, c, _)| (*c, *r));
        let mut by_col: Vec<(u64, Pattern)> = Vec::new();
        for (r, c, k) in sorted {
            let key = (*r, &k[..depth.min(k.len())]);
            match by_col.last_mut() {
                Some((lc, v)) if lc == c => v.push(key),
                _ => by_col.push((*c, vec![key])),
            }
        }
        let rows = visible_covering(
            h.rows,
            MAX_ROWS,
            &first_appearances(h.rows, by_row, Vec::new()),
        );
        let cols = visible_covering(
            h.cols,
            MAX_COLS,
            &first_appearances(h.cols, by_col, Vec::new()),
        );
        (rows, cols)
    };
    let levels = style.levels.len().max(1);
    let mut depth = levels;
    let ((mut row_index, mut rows_complete), (mut col_index, mut cols_complete)) = choose(depth);
    if !(rows_complete && cols_complete) && levels > 1 {
        depth = 1;
        ((row_index, rows_complete), (col_index, cols_complete)) = choose(depth);
    }
    let mut notes = style.notes;
    let mut groups = Groups::default();
    let mut legend = Vec::new();
    let mut cells = Vec::with_capacity(row_index.len() * col_index.len());
    let (mut replicated, mut empty) = (false, false);
    for &r in &row_index {
        for &c in &col_index {
            let held = h.at(r, c);
            let Some(coords) = first_of(held) else {
                empty = true;
                cells.push(Cell {
                    label: "·".into(),
                    sublabel: None,
                    group: None,
                    padding: true,
                    replicated: false,
                    tiles: Vec::new(),
                });
                continue;
            };
            let tiles: Vec<Vec<i64>> = (0..style.levels.len())
                .map(|l| key_of(r, c, l).unwrap_or_default())
                .collect();
            let key = tiles.first().cloned().unwrap_or_default();
            let (group, new) = groups.of(&key);
            if new {
                let k: Vec<u64> = style.levels.first().map_or_else(Vec::new, |dims| {
                    dims.iter()
                        .map(|&d| coords.get(d).copied().unwrap_or(0))
                        .collect()
                });
                legend.push((group, (style.legend)(&k)));
            }
            replicated |= held.len() > 1;
            let (label, sublabel) = (style.label)(&coords, held.len());
            cells.push(Cell {
                label: clip(label),
                sublabel: sublabel.map(clip),
                group: Some(group),
                padding: false,
                replicated: held.len() > 1,
                tiles,
            });
        }
    }
    let (legend, shared) = legend_by_colour(&legend);
    notes.extend(shared);
    if replicated {
        notes.push(style.replicated);
    }
    corner_notes(
        &mut notes,
        h.shape.len(),
        (h.rows, h.cols),
        (&row_index, &col_index),
    );
    let what = style
        .owners
        .get(depth - 1)
        .cloned()
        .unwrap_or_else(|| "holders".into());
    notes.extend(fold_note(
        &what,
        true,
        (h.rows, &row_index, rows_complete),
        (h.cols, &col_index, cols_complete),
    ));
    let mut p = Picture {
        legend,
        ..Picture::grid(
            Kind::Threads,
            title,
            notes,
            (row_index, col_index),
            (h.rows, h.cols),
            cells,
        )
    };
    for (level, text) in style.borders.into_iter().enumerate() {
        if p.draws_border(level) {
            p.marks.push((Mark::Border(level), text));
        }
    }
    if empty {
        p.marks.push((Mark::Padding, style.empty));
    }
    if p.is_folded() {
        p.marks.push((
            Mark::Fold,
            "rows or columns left out between the two shown beside them".into(),
        ));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn dims() -> Vec<(String, u64)> {
        vec![("a".into(), 2), ("b".into(), 3)]
    }

    #[test]
    fn holders_are_found_in_order() {
        let mut h = Holders::new(&[2, 2], &dims()).unwrap();
        assert!(h.add(&[1, 0], &[1, 2]).unwrap());
        assert!(h.add(&[1, 0], &[0, 1]).unwrap());
        h.sort();
        // Flat holders: first dim fastest.
        assert_eq!(h.at(1, 0), &[(2, 2), (2, 5)]);
        assert_eq!(h.unpack(5), vec![1, 2]);
        assert!(h.at(0, 0).is_empty());
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(Holders::new(&[0, 2], &dims()).is_err());
        assert!(Holders::new(&[2, 2], &[]).is_err());
        assert!(Holders::new(&[u64::MAX, u64::MAX], &dims()).is_err());
        assert!(Holders::new(&[2], &[("x".into(), u64::MAX), ("y".into(), 2)]).is_err());
        let mut h = Holders::new(&[2, 2], &dims()).unwrap();
        assert!(h.add(&[2, 0], &[0, 0]).is_err());
        assert!(h.add(&[0, 0], &[2, 0]).is_err());
        assert!(h.add(&[0], &[0, 0]).is_err());
        assert!(h.add(&[0, 0], &[0]).is_err());
    }

    #[test]
    fn only_the_view_is_kept() {
        let mut h = Holders::new(&[2, 2, 2], &dims()).unwrap();
        assert!(!h.add(&[1, 0, 0], &[0, 0]).unwrap());
        assert!(h.add(&[0, 1, 1], &[0, 0]).unwrap());
        assert_eq!(h.entries.len(), 1);
    }
}
