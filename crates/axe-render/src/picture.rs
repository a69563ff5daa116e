//! The picture model: a grid of labelled, coloured cells with tile borders, a memory-order strip, a colour
//! legend and a key to the marks, built from an XLA array shape ([`crate::memory_picture`]), an Axe
//! layout ([`crate::axe_picture`]), a CuTe layout ([`crate::cute_layout_picture`], [`crate::tv_picture`])
//! or a Triton placement ([`crate::hardware_picture`]). The SVG, PNG and text renderers draw this model.
//!
//! Every picture is bounded: at most [`MAX_ROWS`]×[`MAX_COLS`] cells, [`MAX_STRIP`] memory slots,
//! [`MAX_LEGEND`] legend entries and labels of at most [`MAX_LABEL`] characters, whatever the shape, the
//! extents or the replica count. A dimension larger than the grid shows its first indices and, when a tile
//! boundary lies beyond them, a window around that boundary (folded in between).

use std::collections::HashMap;

use crate::error::{RenderError, Result};

/// The most rows a picture shows; larger views show a corner, folded around a tile boundary.
pub const MAX_ROWS: usize = 16;
/// The most columns a picture shows (see [`MAX_ROWS`]).
pub const MAX_COLS: usize = 24;
/// The most memory slots the memory-order strip shows.
pub const MAX_STRIP: usize = 48;
/// The most colour-legend entries a picture lists: one per colour ([`crate::COLOURS`]), never two for one colour.
pub const MAX_LEGEND: usize = crate::legend::COLOURS;
/// The most characters of a cell label (longer ones end in `…`).
pub const MAX_LABEL: usize = 32;

/// What a picture shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Each cell's memory offset, coloured by tile (XLA Figures 1 and 2).
    Memory,
    /// Each cell's thread and register, coloured by thread group.
    Threads,
    /// Which device holds each cell.
    Devices,
}

/// One cell of the grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The main label (a memory offset, a thread, a device).
    pub label: String,
    /// A second, smaller line (register, replicas, offset on the device), if any.
    pub sublabel: Option<String>,
    /// Colour group (an index into the palette); `None` for padding.
    pub group: Option<usize>,
    /// A padding slot: memory the layout reserves that holds no element.
    pub padding: bool,
    /// Held more than once (replicas).
    pub replicated: bool,
    /// For each tile level, the tile holding this cell (cells in one tile share it).
    pub tiles: Vec<Vec<i64>>,
}

/// One slot of the memory-order strip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    /// The logical index stored there (`None`: padding).
    pub element: Option<Vec<i64>>,
    /// The colour group of that element.
    pub group: Option<usize>,
}

/// A mark drawn in the picture, explained in its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A border between tiles (or colour groups) at a level, outermost 0.
    Border(usize),
    /// A padding cell (hatched, `·` in text).
    Padding,
    /// A cell held several times (dashed outline, `R` in its label).
    Replicated,
    /// Rows or columns left out between two shown ones.
    Fold,
}

/// A picture of a layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    /// What kind of picture.
    pub kind: Kind,
    /// The title (the shape or layout).
    pub title: String,
    /// Lines under the title: what the picture shows, what was left out.
    pub notes: Vec<String>,
    /// Visible rows.
    pub rows: usize,
    /// Visible columns.
    pub cols: usize,
    /// The row of the view each visible row shows, increasing (a jump is a fold).
    pub row_index: Vec<u64>,
    /// The column of the view each visible column shows, increasing (a jump is a fold).
    pub col_index: Vec<u64>,
    /// Rows exist below the last visible one.
    pub more_rows: bool,
    /// Columns exist right of the last visible one.
    pub more_cols: bool,
    /// Rows of the whole view (the picture may show fewer).
    pub total_rows: u64,
    /// Columns of the whole view.
    pub total_cols: u64,
    /// Row `r`, column `c` is `cells[r * cols + c]`.
    pub cells: Vec<Cell>,
    /// The first memory slots in order (memory pictures).
    pub strip: Vec<Slot>,
    /// Total memory slots (the strip may show fewer).
    pub strip_total: i64,
    /// Colour legend: (group, text), at most [`MAX_LEGEND`] entries.
    pub legend: Vec<(usize, String)>,
    /// The key: what each mark drawn in this picture means.
    pub marks: Vec<(Mark, String)>,
}

impl Picture {
    /// A grid of cells at the visible `row_index` × `col_index` of a view of `total`, with no strip,
    /// legend or marks.
    pub(crate) fn grid(
        kind: Kind,
        title: String,
        notes: Vec<String>,
        (row_index, col_index): (Vec<u64>, Vec<u64>),
        (total_rows, total_cols): (u64, u64),
        cells: Vec<Cell>,
    ) -> Picture {
        let after = |idx: &[u64], total: u64| idx.last().map_or(total > 0, |&l| l + 1 < total);
        Picture {
            kind,
            title: one_line(&title),
            notes: notes.iter().map(|n| one_line(n)).collect(),
            rows: row_index.len(),
            cols: col_index.len(),
            more_rows: after(&row_index, total_rows),
            more_cols: after(&col_index, total_cols),
            row_index,
            col_index,
            total_rows,
            total_cols,
            cells,
            strip: Vec::new(),
            strip_total: 0,
            legend: Vec::new(),
            marks: Vec::new(),
        }
    }

    /// The cell at row `r`, column `c`.
    pub fn cell(&self, r: usize, c: usize) -> &Cell {
        &self.cells[r * self.cols + c]
    }

    /// The deepest tile level at which neighbouring cells lie in different tiles, counting from the
    /// outermost (0); `None` when they share every tile.
    pub fn boundary(&self, a: &Cell, b: &Cell) -> Option<usize> {
        a.tiles.iter().zip(&b.tiles).position(|(x, y)| x != y)
    }

    /// Whether some pair of neighbouring cells (not across a fold) is separated by a border of `level`.
    pub fn draws_border(&self, level: usize) -> bool {
        (0..self.rows).any(|r| {
            (0..self.cols).any(|c| {
                let right = c + 1 < self.cols
                    && !self.col_folded_before(c + 1)
                    && self.boundary(self.cell(r, c), self.cell(r, c + 1)) == Some(level);
                let below = r + 1 < self.rows
                    && !self.row_folded_before(r + 1)
                    && self.boundary(self.cell(r, c), self.cell(r + 1, c)) == Some(level);
                right || below
            })
        })
    }

    /// Whether rows are left out between visible row `r` and the one before it.
    pub fn row_folded_before(&self, r: usize) -> bool {
        folded_before(&self.row_index, r)
    }

    /// Whether columns are left out between visible column `c` and the one before it.
    pub fn col_folded_before(&self, c: usize) -> bool {
        folded_before(&self.col_index, c)
    }

    /// Whether the picture folds any rows or columns.
    pub fn is_folded(&self) -> bool {
        (1..self.rows).any(|r| self.row_folded_before(r))
            || (1..self.cols).any(|c| self.col_folded_before(c))
    }

    /// Adds the key entries that every picture's grid may need: folds and padding.
    pub(crate) fn add_common_marks(&mut self) {
        if self.cells.iter().any(|c| c.padding) {
            self.marks.push((
                Mark::Padding,
                "padding (memory the layout reserves that holds no element)".into(),
            ));
        }
        if self.is_folded() {
            self.marks.push((
                Mark::Fold,
                "rows or columns left out between the two shown beside them".into(),
            ));
        }
    }
}

fn folded_before(index: &[u64], i: usize) -> bool {
    i > 0 && i < index.len() && index[i] > index[i - 1].saturating_add(1)
}

/// Rows and columns of a 2-D view of `dims`: the last two dimensions (leading ones fixed at 0).
pub(crate) fn view(dims: &[u64]) -> (u64, u64) {
    match dims {
        [] => (1, 1),
        [n] => (1, *n),
        [.., r, c] => (*r, *c),
    }
}

/// The full index of view cell (r, c) in an array of rank `rank`.
pub(crate) fn index_of(rank: usize, r: u64, c: u64) -> Vec<u64> {
    let mut idx = vec![0u64; rank];
    match rank {
        0 => {}
        1 => idx[0] = c,
        _ => {
            idx[rank - 2] = r;
            idx[rank - 1] = c;
        }
    }
    idx
}

/// The visible indices of a view dimension of `n`, at most `budget` of them: all when they fit; else the
/// first `budget`, unless the first tile boundary `b` lies beyond those: then `0..budget-2w` and a window
/// `b-w..b+w` around the boundary (`w = budget/4`), so the picture shows a tile edge.
pub(crate) fn visible(n: u64, budget: usize, boundary: Option<u64>) -> Vec<u64> {
    let budget = budget.max(4) as u64;
    if n <= budget {
        return (0..n).collect();
    }
    match boundary {
        Some(b) if b >= budget && b < n => {
            let w = budget / 4;
            let head = 0..budget - 2 * w;
            let window = b - w..b.saturating_add(w).min(n);
            head.chain(window).collect()
        }
        _ => (0..budget).collect(),
    }
}

/// The most work (view cells times the replicas each one names) an Axe picture spends comparing rows
/// and columns, to fold only rows and columns that repeat ones it shows; a larger view is folded around
/// its first boundary and says that not every row was compared.
pub const MAX_SCAN: u64 = 1 << 18;

/// The visible indices of a view dimension of `n` whose index `i` has a pattern (its owners across the
/// whole other dimension) first seen at the indices `firsts` (increasing, `0` first). Law: when the
/// answer is complete (`true`), every index left out has the pattern of one shown. At most `budget`:
/// all when they fit; the first `budget` when every pattern appears among them; else a head `0..h`
/// and each later first appearance (with the index before it, showing the boundary, when that fits).
/// With more patterns than `budget`, the first appearances of the first `budget` patterns, incomplete.
pub(crate) fn visible_covering(n: u64, budget: usize, firsts: &[u64]) -> (Vec<u64>, bool) {
    let budget = budget.max(4) as u64;
    if n <= budget {
        return ((0..n).collect(), true);
    }
    if firsts.iter().all(|&f| f < budget) {
        return ((0..budget).collect(), true);
    }
    if firsts.len() as u64 <= budget {
        for (pairs, least_head) in [(true, budget / 4), (false, 1)] {
            for h in (least_head.max(1)..=budget).rev() {
                let mut extra: Vec<u64> = Vec::new();
                for &f in firsts.iter().filter(|&&f| f >= h) {
                    if pairs && f > h && extra.last() != Some(&(f - 1)) {
                        extra.push(f - 1);
                    }
                    extra.push(f);
                }
                if h + extra.len() as u64 <= budget {
                    return ((0..h).chain(extra).collect(), true);
                }
            }
        }
    }
    let shown = firsts.len().min(budget as usize);
    (firsts[..shown].to_vec(), false)
}

/// The first index of each distinct pattern among `patterns` (index, pattern), in increasing index;
/// indices that `patterns` leaves out (below `n`) share the pattern `absent`.
pub(crate) fn first_appearances<P: std::hash::Hash + Eq>(
    n: u64,
    patterns: impl IntoIterator<Item = (u64, P)>,
    absent: P,
) -> Vec<u64> {
    let mut seen: HashMap<P, u64> = HashMap::new();
    let mut listed = std::collections::BTreeSet::new();
    for (i, p) in patterns {
        listed.insert(i);
        let e = seen.entry(p).or_insert(i);
        *e = (*e).min(i);
    }
    // The least index not listed, if any: it has the pattern `absent`.
    let mut gap = 0u64;
    for &i in &listed {
        if i != gap {
            break;
        }
        gap += 1;
    }
    if gap < n {
        let e = seen.entry(absent).or_insert(gap);
        *e = (*e).min(gap);
    }
    let mut firsts: Vec<u64> = seen.into_values().collect();
    firsts.sort_unstable();
    firsts
}

/// The note on what a fold leaves out: every row and column left out repeats the `what` of one shown;
/// or, where there are more patterns than fit, how many are shown; or, where the view was too large to
/// compare (`compared` false), that the left-out rows and columns were not compared.
pub(crate) fn fold_note(
    what: &str,
    compared: bool,
    (rows, row_index, rows_complete): (u64, &[u64], bool),
    (cols, col_index, cols_complete): (u64, &[u64], bool),
) -> Option<String> {
    let cut = (row_index.len() as u64) < rows || (col_index.len() as u64) < cols;
    if !cut {
        return None;
    }
    if !compared {
        return Some(format!(
            "the view is too large to compare every row and column: rows and columns left out may hold \
             {what} not shown"
        ));
    }
    let mut parts = Vec::new();
    if !rows_complete {
        parts.push(format!(
            "{} rows with different {what} patterns are shown, more are left out",
            row_index.len()
        ));
    }
    if !cols_complete {
        parts.push(format!(
            "{} columns with different {what} patterns are shown, more are left out",
            col_index.len()
        ));
    }
    Some(if parts.is_empty() {
        format!("every row and column left out repeats the {what} of a row or column shown")
    } else {
        format!("not all {what} are shown: {}", parts.join("; "))
    })
}

/// The first index in `1..n` where `differs` (whether index `i` lies in another tile than index 0)
/// turns true, found by bisection (tiles along one dimension are runs of indices) and checked at the
/// boundary; `None` when there is none. At most about 2·log2(n) calls.
pub(crate) fn first_boundary(
    n: u64,
    mut differs: impl FnMut(u64) -> Result<bool>,
) -> Result<Option<u64>> {
    if n < 2 || !differs(n - 1)? {
        return Ok(None);
    }
    let (mut lo, mut hi) = (1u64, n - 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if differs(mid)? {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let b = lo;
    // When tiles do not form runs, bisection may stop anywhere: keep `b` only at a real boundary.
    let real = differs(b)? && (b == 1 || !differs(b - 1)?);
    Ok(real.then_some(b))
}

/// `a–b, c–d`: the runs of an increasing index list.
pub(crate) fn runs(index: &[u64]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < index.len() {
        let start = index[i];
        let mut j = i;
        while j + 1 < index.len() && index[j + 1] == index[j].saturating_add(1) {
            j += 1;
        }
        out.push(if j == i {
            start.to_string()
        } else {
            format!("{start}–{}", index[j])
        });
        i = j + 1;
    }
    out.join(", ")
}

/// Notes on what part of the view is shown: "the first 16 of 1280 rows", "columns 0–11, 122–133 of
/// 16384 columns".
pub(crate) fn corner_notes(
    notes: &mut Vec<String>,
    rank: usize,
    (rows, cols): (u64, u64),
    (row_index, col_index): (&[u64], &[u64]),
) {
    if rank > 2 {
        let lead = vec!["0"; rank - 2].join(", ");
        notes.push(format!("the last two dimensions at [{lead}, :, :]"));
    }
    if (row_index.len() as u64) < rows || (col_index.len() as u64) < cols {
        let part = |index: &[u64], total: u64, what: &str| {
            if folded_before_any(index) {
                format!("{what} {} of {total} {what}", runs(index))
            } else if total == 1 {
                format!("the one {}", what.trim_end_matches('s'))
            } else if index.len() as u64 == total {
                format!("all {total} {what}")
            } else {
                format!("the first {} of {total} {what}", index.len())
            }
        };
        let folded = folded_before_any(row_index) || folded_before_any(col_index);
        notes.push(format!(
            "showing {} and {}{}",
            part(row_index, rows, "rows"),
            part(col_index, cols, "columns"),
            if folded {
                "; folded (dots) to show a tile boundary"
            } else {
                ""
            }
        ));
    }
}

fn folded_before_any(index: &[u64]) -> bool {
    (1..index.len()).any(|i| folded_before(index, i))
}

/// `text` on one line: its lines, trimmed and without the empty ones, joined with `; ` (a title or note is
/// one line of text, SVG and PNG).
pub fn one_line(text: &str) -> String {
    if !text.contains(['\n', '\r']) {
        return text.to_string();
    }
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// `label` cut to [`MAX_LABEL`] characters (the last one `…` when cut).
pub(crate) fn clip(label: String) -> String {
    if label.chars().count() <= MAX_LABEL {
        return label;
    }
    let mut s: String = label.chars().take(MAX_LABEL - 1).collect();
    s.push('…');
    s
}

/// Colour groups: distinct keys numbered in order of first appearance.
#[derive(Default)]
pub(crate) struct Groups(HashMap<Vec<i64>, usize>);

impl Groups {
    /// The group of `key`, and whether it is new.
    pub(crate) fn of(&mut self, key: &[i64]) -> (usize, bool) {
        let n = self.0.len();
        match self.0.get(key) {
            Some(&g) => (g, false),
            None => {
                self.0.insert(key.to_vec(), n);
                (n, true)
            }
        }
    }
}

impl From<axe_layout::LayoutError> for RenderError {
    fn from(e: axe_layout::LayoutError) -> Self {
        RenderError::Layout(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn small_dimensions_show_whole() {
        assert_eq!(visible(5, 24, Some(2)), (0..5).collect::<Vec<_>>());
    }

    #[test]
    fn a_boundary_beyond_the_corner_gets_a_window() {
        let v = visible(512, 24, Some(128));
        assert_eq!(v.len(), 24);
        assert_eq!(&v[..12], &(0..12).collect::<Vec<_>>()[..]);
        assert_eq!(&v[12..], &(122..134).collect::<Vec<_>>()[..]);
        assert_eq!(runs(&v), "0–11, 122–133");
        // A boundary inside the corner needs no fold.
        assert_eq!(visible(512, 16, Some(8)), (0..16).collect::<Vec<_>>());
        // A boundary near the end is clamped.
        assert_eq!(visible(130, 24, Some(128)).last(), Some(&129));
    }

    #[test]
    fn bisection_finds_the_first_boundary_of_runs() {
        for n in [2u64, 3, 100, 1 << 40] {
            for t in [1u64, 2, 7, 128] {
                let b = first_boundary(n, |i| Ok(i / t != 0)).unwrap();
                assert_eq!(b, (t < n).then_some(t), "n {n} t {t}");
            }
        }
        // Not runs: no false boundary.
        let b = first_boundary(100, |i| Ok(i % 2 == 1 && i > 90)).unwrap();
        assert!(b.is_none_or(|b| b % 2 == 1 && b > 90));
    }

    #[test]
    fn labels_are_clipped() {
        assert_eq!(clip("abc".into()), "abc");
        let long = clip("x".repeat(1000));
        assert_eq!(long.chars().count(), MAX_LABEL);
        assert!(long.ends_with('…'));
    }
}
