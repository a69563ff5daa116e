//! The memory picture of an XLA array (the XLA tiling doc's Figures 1 and 2): each cell's memory offset,
//! coloured by its first-level tile, tile borders per level, padding, and the memory order.

use axe_layout::Axis;
use axe_xla::{to_axe, ArrayShape, Tiling};

use crate::error::Result;
use crate::picture::{
    corner_notes, first_boundary, index_of, view, visible, Cell, Groups, Kind, Mark, Picture, Slot,
    MAX_COLS, MAX_ROWS, MAX_STRIP,
};

/// What each tile level's border separates, outermost first.
const LEVELS: [&str; 3] = [
    "a boundary between tiles",
    "a boundary between second-level tiles, inside a tile",
    "a boundary between deeper tiles",
];

/// The memory picture of an XLA array: each cell's memory offset (all tiles applied), coloured by the
/// first tile, tile borders per level, padding cells from the tiles' rounding, and the memory order.
/// Large arrays show a corner of at most [`MAX_ROWS`]×[`MAX_COLS`] cells that includes the first tile
/// boundary of each view dimension (folded when it lies beyond the corner).
pub fn memory_picture(a: &ArrayShape) -> Result<Picture> {
    let tiling = Tiling::new(a)?;
    let logical: Vec<u64> = tiling
        .logical
        .iter()
        .map(|&d| u64::try_from(d).unwrap_or(0))
        .collect();
    // Padding cells come from the Axe form's padded shape (when the layout has one).
    let form = to_axe(a).ok();
    let padded: Vec<u64> = form
        .as_ref()
        .map_or_else(|| logical.clone(), |f| f.padded_shape.clone());
    let rank = logical.len();
    let (rows, cols) = view(&padded);
    let first_tile = |r: u64, c: u64| {
        let idx: Vec<i64> = index_of(rank, r, c)
            .iter()
            .map(|&i| i64::try_from(i).unwrap_or(i64::MAX))
            .collect();
        tiling.tile_path(&idx).into_iter().next()
    };
    let origin = first_tile(0, 0);
    let row_b = first_boundary(rows, |r| Ok(first_tile(r, 0) != origin))?;
    let col_b = first_boundary(cols, |c| Ok(first_tile(0, c) != origin))?;
    let row_index = visible(rows, MAX_ROWS, row_b);
    let col_index = visible(cols, MAX_COLS, col_b);
    let mut notes = vec![
        "each cell: its offset in memory, in elements; colour: its tile; hatched or ·: padding"
            .to_string(),
    ];
    corner_notes(&mut notes, rank, (rows, cols), (&row_index, &col_index));
    let mut groups = Groups::default();
    let mut group_of = |tiles: &[Vec<i64>]| groups.of(tiles.first().map_or(&[][..], |t| t)).0;
    let mut cells = Vec::with_capacity(row_index.len() * col_index.len());
    for &r in &row_index {
        for &c in &col_index {
            let idx = index_of(rank, r, c);
            let inside = idx.iter().zip(&logical).all(|(i, d)| i < d);
            let signed: Vec<i64> = idx
                .iter()
                .map(|&i| i64::try_from(i).unwrap_or(i64::MAX))
                .collect();
            let tiles = tiling.tile_path(&signed);
            let offset = if inside {
                Some(tiling.linear_index(&signed)?)
            } else {
                form.as_ref()
                    .and_then(|f| f.layout.base_at(flat(&idx, &f.padded_shape)?).ok())
                    .map(|c| c.get(&Axis::memory()))
            };
            let group = inside.then(|| group_of(&tiles));
            cells.push(Cell {
                label: offset.map_or("·".to_string(), |o| o.to_string()),
                sublabel: None,
                group,
                padding: !inside,
                replicated: false,
                tiles,
            });
        }
    }
    let total = tiling.expanded_elements()?;
    let mut strip = Vec::new();
    for x in 0..total.min(MAX_STRIP as i64) {
        let element = tiling.element_at(x)?;
        let group = element.as_ref().map(|e| group_of(&tiling.tile_path(e)));
        strip.push(Slot { element, group });
    }
    let levels = a.layout.tiles.len().min(LEVELS.len());
    let mut p = Picture {
        strip,
        strip_total: total,
        ..Picture::grid(
            Kind::Memory,
            a.to_string(),
            notes,
            (row_index, col_index),
            (rows, cols),
            cells,
        )
    };
    p.marks = (0..levels)
        .filter(|&l| p.draws_border(l))
        .map(|l| (Mark::Border(l), LEVELS[l].to_string()))
        .collect();
    p.add_common_marks();
    Ok(p)
}

/// Row-major flattening, `None` when out of range.
fn flat(index: &[u64], shape: &[u64]) -> Option<u64> {
    axe_layout::flatten(index, shape).ok()
}
