//! The picture of an Axe layout over a shape: the devices holding each cell, the threads holding it, or
//! its coordinates. Replicas are taken from a bounded sample ([`crate::replicas`]), so the cost does not
//! grow with the replica count.

use axe_layout::{flatten, Axis, AxisKind, Coord, Layout};

use crate::error::Result;
use crate::legend::legend_by_colour;
use crate::picture::{
    clip, corner_notes, first_appearances, first_boundary, fold_note, index_of, view, visible,
    visible_covering, Cell, Groups, Kind, Mark, Picture, MAX_COLS, MAX_ROWS, MAX_SCAN,
};
use crate::replicas::Replicas;

/// The most devices a cell label or legend entry names before `…`.
const NAMED_DEVICES: usize = 4;

/// Short names for labels, one per axis: `W` for warps, `L` for lanes, `r` for registers, `x` for a mesh
/// axis's device axis `gpu_x`, ...; an axis whose short name another one shares keeps its full name.
fn shorts(axes: &[Axis]) -> Vec<String> {
    let s: Vec<String> = axes.iter().map(short).collect();
    s.iter()
        .zip(axes)
        .map(|(x, a)| {
            if s.iter().filter(|y| *y == x).count() > 1 {
                a.name().to_string()
            } else {
                x.clone()
            }
        })
        .collect()
}

/// A short name for labels (see [`shorts`]).
fn short(axis: &Axis) -> String {
    let n = axis.name();
    let n = n
        .strip_prefix("gpu_")
        .filter(|b| !b.is_empty())
        .unwrap_or(n);
    if n.eq_ignore_ascii_case("tid") {
        return "T".into();
    }
    let base = n.strip_suffix("id").filter(|b| !b.is_empty()).unwrap_or(n);
    match base.to_ascii_lowercase().as_str() {
        "lane" => "L".into(),
        "warp" => "W".into(),
        "thread" | "tid" => "T".into(),
        "cta" | "block" => "B".into(),
        "wg" | "warpgroup" => "WG".into(),
        "reg" => "r".into(),
        _ if base.chars().count() <= 3 => base.to_string(),
        _ => base.chars().take(3).collect(),
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

fn names(axes: &[Axis]) -> String {
    axes.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
}

/// `w5 l5`-style compact coordinates over some axes (zero components included).
fn compact(c: &Coord, axes: &[Axis]) -> String {
    axes.iter()
        .zip(shorts(axes))
        .map(|(a, s)| format!("{s}{}", c.get(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What the compact labels mean: `m5 = 5 on axis m (memory)`, one entry per axis.
fn label_key(axes: &[Axis]) -> String {
    axes.iter()
        .zip(shorts(axes))
        .map(|(a, s)| {
            if a.is_memory() {
                format!("{s}5 = offset 5 in memory (axis {})", a.name())
            } else {
                format!("{s}5 = 5 on axis {}", a.name())
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A device tuple, `0/1` on a 2-D mesh.
fn tuple(t: &[i64]) -> String {
    t.iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join("/")
}

/// The first few device tuples of a set, then `…` (with how many more when the set is complete).
fn device_list(set: &[Vec<i64>], complete: bool, sep: &str) -> String {
    let mut s = set
        .iter()
        .take(NAMED_DEVICES)
        .map(|t| tuple(t))
        .collect::<Vec<_>>()
        .join(sep);
    if set.len() > NAMED_DEVICES || !complete {
        s.push_str(sep);
        s.push('…');
        if complete {
            s.push_str(&format!("+{}", set.len() - NAMED_DEVICES));
        }
    }
    s
}

/// The picture of an Axe layout over `shape`: threads (when it maps to thread axes), devices (device
/// axes), or memory offsets on `m`. At most [`MAX_ROWS`]×[`MAX_COLS`] cells, [`crate::MAX_LEGEND`] legend
/// entries and a bounded sample of the replicas, whatever the layout's sizes.
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
    let replicas = Replicas::of(layout)?;
    // The device tuples of the replica points, sorted (a cell's set is these shifted by its base).
    let mut device_shifts: Vec<Vec<i64>> = replicas
        .points
        .iter()
        .map(|p| devices.iter().map(|a| p.get(a)).collect())
        .collect();
    device_shifts.sort();
    device_shifts.dedup();
    let rank = shape.len();
    // Everything the picture says about view cell (r, c): its colour key, first copy, device set.
    let cell_at = |r: u64, c: u64| -> Result<(Vec<i64>, Coord, Vec<Vec<i64>>)> {
        let base = layout.base_at(flatten(&index_of(rank, r, c), shape)?)?;
        let first = base.checked_add(&replicas.least)?;
        let mut set = Vec::new();
        if kind == Kind::Devices {
            for s in &device_shifts {
                let t = devices
                    .iter()
                    .zip(s)
                    .map(|(a, v)| base.get(a).checked_add(*v))
                    .collect::<Option<Vec<i64>>>()
                    .ok_or_else(|| {
                        crate::RenderError::Layout("integer overflow shifting replicas".into())
                    })?;
                set.push(t);
            }
        }
        let key = match kind {
            // The set of device tuples holding the cell: one colour per device (or set of devices).
            Kind::Devices => set.concat(),
            Kind::Threads => vec![first.get(&threads[0])],
            Kind::Memory => Vec::new(),
        };
        Ok((key, first, set))
    };
    let (rows, cols) = view(shape);
    let origin = cell_at(0, 0)?.0;
    let bounded = |n: u64, f: &dyn Fn(u64) -> Result<bool>| {
        if kind == Kind::Memory {
            Ok(None)
        } else {
            first_boundary(n, f)
        }
    };
    // Owners: devices (or sets of devices) or the coarsest thread axis. A view of at most MAX_SCAN cells
    // is compared row by row and column by column, and only rows and columns that repeat the owners of
    // one shown are left out; a larger one is folded around its first boundary.
    let cut = rows > MAX_ROWS as u64 || cols > MAX_COLS as u64;
    let work = rows
        .saturating_mul(cols)
        .saturating_mul(device_shifts.len() as u64 + 1);
    let scan = kind != Kind::Memory && cut && work <= MAX_SCAN;
    let (row_index, col_index, fold) = if scan {
        let mut ids = Groups::default();
        let mut owner = Vec::with_capacity((rows * cols) as usize);
        for r in 0..rows {
            for c in 0..cols {
                owner.push(ids.of(&cell_at(r, c)?.0).0);
            }
        }
        let cols_us = cols as usize;
        let by_row = (0..rows).map(|r| {
            let at = r as usize * cols_us;
            (r, &owner[at..at + cols_us])
        });
        let row_firsts = first_appearances(rows, by_row, &[][..]);
        let by_col = (0..cols).map(|c| {
            let col: Vec<usize> = owner
                .iter()
                .skip(c as usize)
                .step_by(cols_us)
                .copied()
                .collect();
            (c, col)
        });
        let col_firsts = first_appearances(cols, by_col, Vec::new());
        let (ri, rc) = visible_covering(rows, MAX_ROWS, &row_firsts);
        let (ci, cc) = visible_covering(cols, MAX_COLS, &col_firsts);
        (ri, ci, Some((rc, cc)))
    } else {
        let row_b = bounded(rows, &|r| Ok(cell_at(r, 0)?.0 != origin))?;
        let col_b = bounded(cols, &|c| Ok(cell_at(0, c)?.0 != origin))?;
        (
            visible(rows, MAX_ROWS, row_b),
            visible(cols, MAX_COLS, col_b),
            None,
        )
    };
    let mut notes = vec![match kind {
        Kind::Devices => format!(
            "each cell: the {} holding it{}; colour: the device or set of devices",
            if devices.len() > 1 {
                format!("device ({} on the mesh)", devices_name(&devices))
            } else {
                names(&devices)
            },
            if replicas.several() {
                " (R: replicated on several)"
            } else {
                ""
            }
        ),
        Kind::Threads => format!(
            "each cell: the {} holding it ({}), coloured by {}",
            names(&threads),
            threads
                .iter()
                .zip(shorts(&threads))
                .map(|(a, s)| format!("{s} = {}", a.name()))
                .collect::<Vec<_>>()
                .join(", "),
            threads[0].name()
        ),
        Kind::Memory => format!("each cell: its coordinates ({})", label_key(&axes)),
    }];
    corner_notes(&mut notes, rank, (rows, cols), (&row_index, &col_index));
    if kind != Kind::Memory {
        let what = match kind {
            Kind::Devices => "devices".to_string(),
            _ => format!("{}s", threads[0].name()),
        };
        let (rc, cc) = fold.unwrap_or((true, true));
        notes.extend(fold_note(
            &what,
            fold.is_some() || !cut,
            (rows, &row_index, rc),
            (cols, &col_index, cc),
        ));
    }
    let mut groups = Groups::default();
    let mut legend = Vec::new();
    let mut cells = Vec::with_capacity(row_index.len() * col_index.len());
    for &r in &row_index {
        for &c in &col_index {
            let (key, first, set) = cell_at(r, c)?;
            let (group, new) = groups.of(&key);
            if new && kind != Kind::Memory {
                let text = match kind {
                    Kind::Devices => {
                        let several = set.len() > 1 || !replicas.complete;
                        format!(
                            "{} {}{}",
                            devices_name(&devices),
                            device_list(&set, replicas.complete, ", "),
                            if several { " (replicated)" } else { "" }
                        )
                    }
                    _ => format!("{} {}", threads[0].name(), key.first().unwrap_or(&0)),
                };
                legend.push((group, text));
            }
            let label = match kind {
                Kind::Memory => compact(&first, &axes),
                Kind::Threads => compact(&first, &threads),
                Kind::Devices if replicas.several() => {
                    format!("R {}", device_list(&set, replicas.complete, ","))
                }
                Kind::Devices => device_list(&set, true, ","),
            };
            let sub = compact(&first, &others);
            cells.push(Cell {
                label: clip(label),
                sublabel: (!sub.is_empty() && kind != Kind::Memory).then(|| clip(sub)),
                group: Some(group),
                padding: false,
                replicated: replicas.several(),
                tiles: vec![key],
            });
        }
    }
    let (legend, shared) = legend_by_colour(&legend);
    notes.extend(shared);
    if kind != Kind::Memory && !others.is_empty() {
        notes.push(format!("small text: {}", label_key(&others)));
    }
    if replicas.several() {
        notes.push(replica_note(&replicas));
    }
    let title = format!("{layout} over {shape:?}");
    let mut p = Picture {
        legend,
        ..Picture::grid(
            kind,
            title,
            notes,
            (row_index, col_index),
            (rows, cols),
            cells,
        )
    };
    p.marks = match kind {
        _ if !p.draws_border(0) => Vec::new(),
        Kind::Devices => vec![(
            Mark::Border(0),
            "a boundary between cells held by different devices".to_string(),
        )],
        Kind::Threads => vec![(
            Mark::Border(0),
            format!("a boundary between different {}s", threads[0].name()),
        )],
        Kind::Memory => Vec::new(),
    };
    if replicas.several() && kind == Kind::Devices {
        p.marks.push((
            Mark::Replicated,
            "replicated (every element is held more than once, here by the devices named)"
                .to_string(),
        ));
    }
    p.add_common_marks();
    Ok(p)
}

/// `dev0/dev1` for a 2-D mesh's axes.
fn devices_name(devices: &[Axis]) -> String {
    devices
        .iter()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join("/")
}

/// How often each element is held, and the first few shifts between the copies.
fn replica_note(r: &Replicas) -> String {
    const SHOWN: usize = 8;
    let shifts: Vec<String> = r
        .points
        .iter()
        .filter(|p| **p != r.least)
        .take(SHOWN)
        .filter_map(|p| p.checked_sub(&r.least).ok())
        .map(|d| {
            d.components()
                .map(|(a, v)| format!("{a} {v:+}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let more = if r.points.len() > SHOWN + 1 || !r.complete {
        "; …"
    } else {
        ""
    };
    format!(
        "every element is held {}: as shown, and again at {}{more}",
        r.times(),
        shifts.join("; ")
    )
}
