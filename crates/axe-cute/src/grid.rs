//! The data behind CuTe's pictures: the `print_layout` grid of a rank-2 layout and the thread/value
//! picture of a TV layout. Drawing is left to the caller.

use std::collections::BTreeSet;

use crate::error::{CuteError, Result};
use crate::fit::MAX_CHECK;
use crate::int_tuple::IntTuple;
use crate::layout::Layout;
use crate::swizzle::AnyLayout;

/// The grid CuTe's `print_layout` draws: `grid[r][c]` is the value at coordinate `(r, c)`, `r` the flat
/// index in mode 0 and `c` in mode 1 (a rank-1 layout is one column). Swizzled layouts included.
///
/// ```
/// let l: axe_cute::AnyLayout = "Sw<1,0,1> o 0 o (2,2):(2,1)".parse()?;
/// assert_eq!(axe_cute::layout_grid(&l)?, vec![vec![0, 1], vec![3, 2]]);
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn layout_grid(l: &AnyLayout) -> Result<Vec<Vec<i64>>> {
    let inner = match l {
        AnyLayout::Plain(p) => p,
        AnyLayout::Composed(c) => &c.layout,
    };
    let (rows, cols) = rows_cols(inner)?;
    if l.size() > MAX_CHECK {
        return Err(CuteError::TooLarge(format!("a grid of {} cells", l.size())));
    }
    (0..rows)
        .map(|r| (0..cols).map(|c| l.eval(r + rows * c)).collect())
        .collect()
}

fn rows_cols(l: &Layout) -> Result<(i64, i64)> {
    match l.rank() {
        1 => Ok((l.size(), 1)),
        2 => Ok((l.mode(0)?.size(), l.mode(1)?.size())),
        r => Err(CuteError::RankMismatch(format!(
            "a grid needs rank 1 or 2, {l} has rank {r}"
        ))),
    }
}

/// The thread/value picture of a TV layout over a `rows × cols` tile whose index is `row + rows·col`
/// (column-major, as CuTe's TV pictures): `cells[r][c]` lists every `(thread, value)` mapped there, in
/// increasing order (several under replication, none where the tile has a hole). Indices outside the
/// tile are an error.
///
/// ```
/// let tv: axe_cute::Layout = "((2,2),2):((1,0),2)".parse()?;
/// let cells = axe_cute::tv_grid(&tv, 2, 2)?;
/// assert_eq!(cells[1][0], vec![(1, 0), (3, 0)]);
/// assert_eq!(cells[0][1], vec![(0, 1), (2, 1)]);
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
#[allow(clippy::type_complexity)]
pub fn tv_grid(tv: &Layout, rows: i64, cols: i64) -> Result<Vec<Vec<Vec<(i64, i64)>>>> {
    if tv.rank() != 2 {
        return Err(CuteError::RankMismatch(format!(
            "a TV layout has two modes, {tv} has {}",
            tv.rank()
        )));
    }
    let n = rows
        .checked_mul(cols)
        .filter(|&n| rows >= 1 && cols >= 1 && n <= MAX_CHECK)
        .ok_or_else(|| CuteError::TooLarge(format!("a {rows}×{cols} tile")))?;
    if tv.size() > MAX_CHECK {
        return Err(CuteError::TooLarge(format!(
            "{} (thread, value) pairs",
            tv.size()
        )));
    }
    let (t, v) = (tv.mode(0)?.size(), tv.mode(1)?.size());
    let mut cells = vec![
        vec![BTreeSet::new(); usize::try_from(cols).unwrap_or(0)];
        usize::try_from(rows).unwrap_or(0)
    ];
    for vi in 0..v {
        for ti in 0..t {
            let x = tv.eval_coord(&IntTuple::Tuple(vec![IntTuple::Int(ti), IntTuple::Int(vi)]))?;
            if !(0..n).contains(&x) {
                return Err(CuteError::RankMismatch(format!(
                    "thread {ti}, value {vi} maps to {x}, outside the {rows}×{cols} tile"
                )));
            }
            let (r, c) = (x % rows, x / rows);
            let cell = usize::try_from(r)
                .ok()
                .and_then(|r| cells.get_mut(r))
                .and_then(|row| usize::try_from(c).ok().and_then(|c| row.get_mut(c)));
            if let Some(cell) = cell {
                cell.insert((ti, vi));
            }
        }
    }
    Ok(cells
        .into_iter()
        .map(|row| row.into_iter().map(|s| s.into_iter().collect()).collect())
        .collect())
}
