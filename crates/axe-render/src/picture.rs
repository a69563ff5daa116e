//! The picture model: a grid of labelled, coloured cells with tile borders and a memory-order strip,
//! built from an XLA array shape or an Axe layout. The SVG, PNG and text renderers draw this model.

use axe_layout::{Axis, AxisKind, Coord, Layout};
use axe_xla::{to_axe, ArrayShape, Tiling};

use crate::error::{RenderError, Result};

/// The most rows and columns a picture shows; larger layouts show a labelled corner with an ellipsis.
pub const MAX_ROWS: usize = 16;
/// See [`MAX_ROWS`].
pub const MAX_COLS: usize = 24;
/// The most memory slots the memory-order strip shows.
pub const MAX_STRIP: usize = 48;

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
    /// Rows exist below the visible ones.
    pub more_rows: bool,
    /// Columns exist right of the visible ones.
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
    /// Colour legend: (group, text).
    pub legend: Vec<(usize, String)>,
}

impl Picture {
    /// A grid of `shown` (rows, columns) cells out of a view of `total`, with no strip and no legend.
    fn grid(
        kind: Kind,
        title: String,
        notes: Vec<String>,
        (rows, cols): (usize, usize),
        (total_rows, total_cols): (u64, u64),
        cells: Vec<Cell>,
    ) -> Picture {
        Picture {
            kind,
            title,
            notes,
            rows,
            cols,
            more_rows: (rows as u64) < total_rows,
            more_cols: (cols as u64) < total_cols,
            total_rows,
            total_cols,
            cells,
            strip: Vec::new(),
            strip_total: 0,
            legend: Vec::new(),
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
}

/// Rows and columns of a 2-D view of `dims`: the last two dimensions (leading ones fixed at 0).
fn view(dims: &[u64]) -> (u64, u64) {
    match dims {
        [] => (1, 1),
        [n] => (1, *n),
        [.., r, c] => (*r, *c),
    }
}

/// The full index of view cell (r, c) in an array of rank `rank`.
fn index_of(rank: usize, r: u64, c: u64) -> Vec<u64> {
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

fn corner_notes(
    notes: &mut Vec<String>,
    dims: &[u64],
    rows: u64,
    cols: u64,
    shown_r: usize,
    shown_c: usize,
) {
    if dims.len() > 2 {
        let lead = vec!["0"; dims.len() - 2].join(", ");
        notes.push(format!("the last two dimensions at [{lead}, :, :]"));
    }
    if (shown_r as u64) < rows || (shown_c as u64) < cols {
        notes.push(format!(
            "showing the first {shown_r} of {rows} rows and {shown_c} of {cols} columns"
        ));
    }
}

/// Colour groups: distinct keys in order of first appearance.
struct Groups(Vec<Vec<i64>>);

impl Groups {
    fn of(&mut self, key: &[i64]) -> usize {
        match self.0.iter().position(|k| k == key) {
            Some(i) => i,
            None => {
                self.0.push(key.to_vec());
                self.0.len() - 1
            }
        }
    }
}

/// The memory picture of an XLA array: each cell's memory offset (all tiles applied), coloured by the
/// first tile, tile borders per level, padding cells from the tiles' rounding, and the memory order.
pub fn memory_picture(a: &ArrayShape) -> Result<Picture> {
    let tiling = Tiling::new(a)?;
    let logical: Vec<u64> = tiling.logical.iter().map(|&d| d as u64).collect();
    // Padding cells come from the Axe form's padded shape (when the layout has one).
    let padded: Vec<u64> = match to_axe(a) {
        Ok(f) => f.padded_shape,
        Err(_) => logical.clone(),
    };
    let form = to_axe(a).ok();
    let (rows, cols) = view(&padded);
    let (shown_r, shown_c) = (
        rows.min(MAX_ROWS as u64) as usize,
        cols.min(MAX_COLS as u64) as usize,
    );
    let mut notes = vec![
        "each cell: its offset in memory, in elements; colour: its tile; hatched or ·: padding"
            .to_string(),
    ];
    corner_notes(&mut notes, &logical, rows, cols, shown_r, shown_c);
    let mut groups = Groups(Vec::new());
    let mut cells = Vec::with_capacity(shown_r * shown_c);
    for r in 0..shown_r as u64 {
        for c in 0..shown_c as u64 {
            let idx = index_of(logical.len(), r, c);
            let inside = idx.iter().zip(&logical).all(|(i, d)| i < d);
            let signed: Vec<i64> = idx.iter().map(|&i| i as i64).collect();
            let tiles = tiling.tile_path(&signed);
            let offset = if inside {
                Some(tiling.linear_index(&signed)?)
            } else {
                form.as_ref()
                    .and_then(|f| f.layout.apply_multi(&idx, &f.padded_shape).ok())
                    .map(|cs| cs[0].get(&Axis::memory()))
            };
            let group = if inside {
                Some(groups.of(tiles.first().map_or(&[][..], |t| t)))
            } else {
                None
            };
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
        let group = element
            .as_ref()
            .map(|e| groups.of(tiling.tile_path(e).first().map_or(&[][..], |t| t)));
        strip.push(Slot { element, group });
    }
    Ok(Picture {
        strip,
        strip_total: total,
        ..Picture::grid(
            Kind::Memory,
            a.to_string(),
            notes,
            (shown_r, shown_c),
            (rows, cols),
            cells,
        )
    })
}

/// A short name for labels: `W` for warps, `L` for lanes, `r` for registers, ...
fn short(axis: &Axis) -> String {
    let n = axis.name();
    let base = n.strip_suffix("id").filter(|b| !b.is_empty()).unwrap_or(n);
    match base.to_ascii_lowercase().as_str() {
        "lane" => "L".into(),
        "warp" => "W".into(),
        "thread" | "tid" => "T".into(),
        "cta" | "block" => "B".into(),
        "wg" | "warpgroup" => "WG".into(),
        "reg" => "r".into(),
        _ if base.len() <= 3 => base.to_string(),
        _ => base[..3].to_string(),
    }
}

/// How coarse a thread axis is (smaller = coarser): blocks, warp groups, warps, then lanes and threads.
fn coarseness(axis: &Axis) -> usize {
    let n = axis.name().to_ascii_lowercase();
    let n = n.trim_end_matches("id");
    match n {
        "cluster" | "cta" | "block" | "blockidx" | "ctaid" | "sm" => 0,
        "wg" | "warpgroup" => 1,
        "warp" | "wid_in_wg" => 2,
        _ => 3,
    }
}

/// The picture of an Axe layout over `shape`: threads (when it maps to thread axes), devices (device
/// axes), or memory offsets on `m`.
pub fn axe_picture(layout: &Layout, shape: &[u64]) -> Result<Picture> {
    layout.check_admits(shape)?;
    let axes = layout.axes();
    let devices: Vec<Axis> = axes
        .iter()
        .filter(|a| a.kind() == AxisKind::Device)
        .copied()
        .collect();
    let mut threads: Vec<Axis> = axes
        .iter()
        .filter(|a| a.kind() == AxisKind::Thread)
        .copied()
        .collect();
    threads.sort_by_key(coarseness);
    let kind = if !devices.is_empty() {
        Kind::Devices
    } else if !threads.is_empty() {
        Kind::Threads
    } else {
        Kind::Memory
    };
    let (rows, cols) = view(shape);
    let (shown_r, shown_c) = (
        rows.min(MAX_ROWS as u64) as usize,
        cols.min(MAX_COLS as u64) as usize,
    );
    let mut notes = vec![match kind {
        Kind::Devices => format!(
            "each cell: the {} holding it (R: replicated on several)",
            names(&devices)
        ),
        Kind::Threads => format!(
            "each cell: the {} holding it ({}), coloured by {}",
            names(&threads),
            threads
                .iter()
                .map(|a| format!("{} = {}", short(a), a.name()))
                .collect::<Vec<_>>()
                .join(", "),
            threads[0].name()
        ),
        Kind::Memory => "each cell: its coordinates".to_string(),
    }];
    corner_notes(&mut notes, shape, rows, cols, shown_r, shown_c);
    let key_axes: &[Axis] = match kind {
        Kind::Devices => &devices,
        Kind::Threads => &threads[..1],
        Kind::Memory => &[],
    };
    let labelled: &[Axis] = match kind {
        Kind::Devices => &devices,
        Kind::Threads => &threads,
        Kind::Memory => &axes,
    };
    let others: Vec<Axis> = axes
        .iter()
        .filter(|a| !labelled.contains(a))
        .copied()
        .collect();
    let mut groups = Groups(Vec::new());
    let mut legend = Vec::new();
    let mut cells = Vec::with_capacity(shown_r * shown_c);
    for r in 0..shown_r as u64 {
        for c in 0..shown_c as u64 {
            let idx = index_of(shape.len(), r, c);
            let coords = layout.apply_multi(&idx, shape)?;
            let first = &coords[0];
            let key: Vec<i64> = if kind == Kind::Devices {
                // The set of devices holding the cell (all replicas).
                let mut k: Vec<i64> = coords
                    .iter()
                    .flat_map(|c| key_axes.iter().map(|a| c.get(a)))
                    .collect();
                k.sort_unstable();
                k.dedup();
                k
            } else {
                key_axes.iter().map(|a| first.get(a)).collect()
            };
            let group = groups.of(&key);
            if legend.len() < groups.0.len() {
                let text = if kind == Kind::Devices {
                    let ids: Vec<String> = key.iter().map(|v| v.to_string()).collect();
                    let which = if ids.len() > 1 { " (replicated)" } else { "" };
                    format!("{} {}{which}", names(key_axes), ids.join(", "))
                } else {
                    key_axes
                        .iter()
                        .zip(&key)
                        .map(|(a, v)| format!("{} {v}", a.name()))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                legend.push((group, text));
            }
            let replicated = coords.len() > 1;
            let label = match kind {
                Kind::Memory => compact(first, &axes),
                Kind::Threads => compact(first, &threads),
                Kind::Devices => {
                    let mut ids: Vec<String> = coords
                        .iter()
                        .map(|c| {
                            devices
                                .iter()
                                .map(|a| c.get(a).to_string())
                                .collect::<Vec<_>>()
                                .join("/")
                        })
                        .collect();
                    ids.dedup();
                    if replicated {
                        format!("R {}", ids.join(","))
                    } else {
                        ids.join(",")
                    }
                }
            };
            let sub = compact(first, &others);
            cells.push(Cell {
                label,
                sublabel: (!sub.is_empty() && kind != Kind::Memory).then_some(sub),
                group: Some(group),
                padding: false,
                replicated,
                tiles: vec![key.clone()],
            });
        }
    }
    if kind != Kind::Memory && !others.is_empty() {
        notes.push(format!(
            "also shown: the coordinate on {}",
            others
                .iter()
                .map(|a| a.name())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let replicas: usize = cells.iter().filter(|c| c.replicated).count();
    if replicas > 0 && kind == Kind::Threads {
        let r = layout.replica_points()?;
        let shifts: Vec<String> = r
            .iter()
            .filter(|p| !p.is_zero())
            .map(|p| {
                p.components()
                    .map(|(a, v)| format!("{a} {v:+}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        notes.push(format!(
            "every element is held {} times: as shown, and again at {}",
            r.len(),
            shifts.join("; ")
        ));
    }
    let title = format!("{layout} over {shape:?}");
    Ok(Picture {
        legend,
        ..Picture::grid(kind, title, notes, (shown_r, shown_c), (rows, cols), cells)
    })
}

fn names(axes: &[Axis]) -> String {
    axes.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
}

/// `w5 l5`-style compact coordinates over some axes (zero components included).
fn compact(c: &Coord, axes: &[Axis]) -> String {
    axes.iter()
        .map(|a| format!("{}{}", short(a), c.get(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

impl From<axe_layout::LayoutError> for RenderError {
    fn from(e: axe_layout::LayoutError) -> Self {
        RenderError::Layout(e.to_string())
    }
}
