//! `axe shard show`: who holds what — every device's region, local shape and replica group, and each
//! device's buffer under a memory layout; large meshes folded.

use axe_shard::{print, print_local, DeviceRegion, Mesh, Notation, RegionView};
use serde_json::{json, Map, Value};

use crate::report::Report;
use crate::shard_cmd::*;
use crate::shard_picture::mesh_text;

/// Text lists every device of a mesh up to this size; past it, the first [`HEAD_ROWS`] and the last
/// [`TAIL_ROWS`] devices and a line counting the rest (`--json` lists every device).
const LISTED_ROWS: usize = 64;
const HEAD_ROWS: usize = 32;
const TAIL_ROWS: usize = 8;

pub(crate) fn ranges(r: &[std::ops::Range<u64>]) -> Vec<[u64; 2]> {
    r.iter().map(|r| [r.start, r.end]).collect()
}

/// A replica group in text: every member up to 8, else the first four, `…` and the count.
fn group_text(g: &[u64]) -> String {
    let ids = |g: &[u64]| g.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    if g.len() <= 8 {
        ids(g)
    } else {
        format!("{},… ({} devices)", ids(&g[..4]), g.len())
    }
}

/// The most device ids the replica groups of one answer list in all (each group once per member): past
/// it, each device gives the index of its group in `replica_groups`, which lists each group once.
const LISTED_MEMBERS: usize = 1 << 20;

/// Writes `ids` as a JSON array of numbers.
fn id_list(out: &mut String, ids: impl Iterator<Item = u64>) {
    use std::fmt::Write;
    out.push('[');
    for (k, id) in ids.enumerate() {
        if k > 0 {
            out.push(',');
        }
        let _ = write!(out, "{id}");
    }
    out.push(']');
}

/// Every device of `view` as the JSON text of `devices` (each as [`device_json`] writes it), device by
/// device without building their regions at once; and, where the replica groups would list more than
/// [`LISTED_MEMBERS`] ids in all, the text of `replica_groups` (each group once, in order of first
/// use) with each device naming its group's index. Work and memory: the text written.
fn devices_json(view: &RegionView<'_>, with_shape: bool) -> (String, Option<String>) {
    use std::fmt::Write;
    let indexed = view.len().saturating_mul(view.group_len()) > LISTED_MEMBERS;
    let mut index: Vec<usize> = if indexed {
        vec![usize::MAX; view.group_count()]
    } else {
        Vec::new()
    };
    let mut groups = String::from("[");
    let mut listed = 0usize;
    let mut out = String::from("[");
    for p in view.places() {
        if p.position > 0 {
            out.push(',');
        }
        let _ = write!(out, "{{\"device\":{}", p.device);
        match index.get_mut(p.group) {
            Some(slot) => {
                if *slot == usize::MAX {
                    if listed > 0 {
                        groups.push(',');
                    }
                    id_list(&mut groups, view.group_members(p.group));
                    *slot = listed;
                    listed += 1;
                }
                let _ = write!(out, ",\"replica_group_index\":{slot}");
            }
            None => {
                out.push_str(",\"replica_group\":");
                id_list(&mut out, view.group_members(p.group));
            }
        }
        if with_shape {
            out.push_str(",\"region\":");
            crate::shard_plan::box_json(&mut out, &p.region);
            out.push_str(",\"local_shape\":");
            id_list(&mut out, p.local_shape.iter().copied());
            if p.padded_shape != p.local_shape {
                out.push_str(",\"padded_shape\":");
                id_list(&mut out, p.padded_shape.iter().copied());
            }
        } else {
            out.push_str(",\"shard\":");
            id_list(&mut out, p.region.iter().map(|r| r.start));
        }
        out.push('}');
    }
    out.push(']');
    groups.push(']');
    (out, indexed.then_some(groups))
}

fn device_json(d: &DeviceRegion, with_shape: bool, group_index: Option<usize>) -> Value {
    let mut v = json!({"device": d.device});
    match group_index {
        None => v["replica_group"] = json!(&*d.replica_group),
        Some(i) => v["replica_group_index"] = json!(i),
    }
    if with_shape {
        v["region"] = json!(ranges(&d.region));
        v["local_shape"] = json!(d.local_shape);
        if d.padded_shape != d.local_shape {
            v["padded_shape"] = json!(d.padded_shape);
        }
    } else {
        // Without a shape each dim is as long as its shard count: the region is the shard index.
        v["shard"] = json!(d.region.iter().map(|r| r.start).collect::<Vec<_>>());
    }
    v
}

/// The array a verb works on: `--shape`'s dims, or (without one) one element per shard of each dim,
/// with the rank the sharding's text fixes.
pub(crate) fn show(
    text: &str,
    target: &Target,
    mesh: Option<&Mesh>,
    layout: Option<&str>,
    json_mode: bool,
) -> Result<Report, String> {
    let arr = array(target, text, mesh)?;
    let with_shape = arr.elem_bytes.is_some();
    let (mesh, s, own_local) = read_local(text, target.from, mesh, &arr.dims)?;
    let view = s.region_view(&mesh).map_err(|e| e.to_string())?;
    // Text past LISTED_ROWS devices (without --layout, which sums every device) shows only the rows it
    // prints: the regions of the devices between are never computed.
    let folded = !json_mode && layout.is_none() && view.len() > LISTED_ROWS;
    let shown: Vec<usize> = if folded {
        (0..HEAD_ROWS)
            .chain(view.len() - TAIL_ROWS..view.len())
            .collect()
    } else {
        (0..view.len()).collect()
    };
    let regions: Vec<DeviceRegion> = if folded {
        shown
            .iter()
            .filter_map(|&p| {
                let place = view.place(p)?;
                // The group's first members and its size are all a row prints.
                let mut group: Vec<u64> = view.group_members(place.group).take(9).collect();
                if view.group_len() > 8 {
                    group.truncate(4);
                }
                Some((place, group))
            })
            .map(|(p, g)| DeviceRegion {
                device: p.device,
                position: p.position,
                region: p.region,
                replica_group: g.into(),
                local_shape: p.local_shape,
                padded_shape: p.padded_shape,
            })
            .collect()
    } else if json_mode && layout.is_none() {
        Vec::new() // the JSON is written place by place below
    } else {
        s.regions(&mesh).map_err(|e| e.to_string())?
    };
    let group_size = view.group_len();
    let memory = match (layout, &target.shape) {
        (None, _) => None,
        (Some(_), None) => return Err("--layout needs the array: --shape 'f32[64,128]'".into()),
        (Some(l), Some(shape)) => Some(crate::shard_memory::memory(
            &mesh,
            &s,
            &regions,
            l,
            shape_arg(shape)?.1,
        )?),
    };
    // The Axe form's memory part: each device's buffer under --layout, else the input's own memory
    // iters (an Axe layout), else row-major.
    let local = match (layout, &target.shape) {
        (Some(l), Some(shape)) => crate::shard_memory::axe_local(&mesh, &s, l, shape_arg(shape)?.1),
        _ => Ok(own_local),
    };
    let mut obj = Map::new();
    let mut t = String::new();
    for n in Notation::ALL {
        let written = match (&local, n) {
            (Err(why), Notation::Axe) => Err(why.clone()),
            (Ok(l), _) => print_local(n, &mesh, &s, l.as_ref()).map_err(|e| e.to_string()),
            (Err(_), _) => print(n, &mesh, &s).map_err(|e| e.to_string()),
        };
        match written {
            Ok(w) => {
                t.push_str(&format!("{:<8} {w}\n", n.name()));
                obj.insert(n.name().into(), json!(w));
            }
            Err(why) => {
                t.push_str(&format!("{:<8} - ({why})\n", n.name()));
                obj.insert(n.name().into(), Value::Null);
                obj.insert(format!("{}_why", n.name()), json!(why));
            }
        }
    }
    if let Some(note) = crate::shard_cmd::hints_note(&s, None) {
        t.push_str(&format!("note     {note}\n"));
        obj.insert("note".into(), json!(note));
    }
    let mesh_desc = mesh_text(&mesh);
    let mesh_json = (!folded).then(|| {
        // Written as text: a JSON value per device id would cost several times the output.
        let mut m = format!(
            "{{\"axes\":{},\"sizes\":{},\"devices\":",
            json!(mesh.names()),
            json!(mesh.sizes())
        );
        id_list(&mut m, mesh.devices().iter().copied());
        m.push('}');
        m
    });
    t.push_str(&format!("mesh     {mesh_desc}\n"));
    if let Some(mem) = &memory {
        // Each distinct buffer once, with the devices that allocate it: its bytes are each one's own.
        let ids: Vec<u64> = regions.iter().map(|r| r.device).collect();
        for (l, b, devices) in crate::shard_memory::kinds(mem, &ids) {
            let each = crate::shard_memory::per_device_text(b, &devices);
            t.push_str(&format!("memory   {l}: {each}\n"));
        }
    }
    // The table of devices is text alone: `--json` lists them below and prints no text.
    if !json_mode {
        let rows: Vec<[String; 4]> = regions
            .iter()
            .map(|d| {
                let list = |v: Vec<String>| format!("[{}]", v.join(", "));
                let reg = if with_shape {
                    list(
                        d.region
                            .iter()
                            .map(|r| format!("{}:{}", r.start, r.end))
                            .collect(),
                    )
                } else {
                    list(d.region.iter().map(|r| r.start.to_string()).collect())
                };
                let local = if with_shape {
                    list(d.local_shape.iter().map(u64::to_string).collect())
                } else {
                    String::new()
                };
                let group = if folded && group_size > 8 {
                    format!("{},… ({group_size} devices)", {
                        let ids: Vec<String> = d.replica_group.iter().map(u64::to_string).collect();
                        ids.join(",")
                    })
                } else {
                    group_text(&d.replica_group)
                };
                [d.device.to_string(), reg, local, group]
            })
            .collect();
        let head = [
            "device",
            if with_shape { "region" } else { "shard index" },
            if with_shape { "local shape" } else { "" },
            "replica group",
        ];
        let width = |i: usize| {
            rows.iter()
                .map(|r| r[i].len())
                .chain([head[i].len()])
                .max()
                .unwrap_or(0)
        };
        let (w0, w1, w2) = (width(0), width(1), width(2));
        t.push('\n');
        for (i, r) in std::iter::once(head.map(String::from))
            .chain(rows)
            .enumerate()
        {
            if folded && i == HEAD_ROWS + 1 {
                t.push_str(&format!(
                    "{:>w0$}  ({} more devices; --json lists every one)\n",
                    "…",
                    view.len() - HEAD_ROWS - TAIL_ROWS
                ));
            }
            let line = format!("{:>w0$}  {:<w1$}  {:<w2$}  {}", r[0], r[1], r[2], r[3]);
            t.push_str(line.trim_end());
            t.push('\n');
        }
    }
    if folded {
        // Only the text is printed; the JSON below is built for `--json` alone.
        return Ok(Report {
            json: Value::Object(obj),
            text: t,
        });
    }
    if memory.is_none() {
        // Streamed place by place: memory is the output's text and one device at a time.
        let (devices, groups) = devices_json(&view, with_shape);
        if let Some(g) = groups {
            crate::report::raw_member(&mut obj, "replica_groups", g);
        }
        if let Some(m) = mesh_json {
            crate::report::raw_member(&mut obj, "mesh", m);
        }
        crate::report::raw_member(&mut obj, "devices", devices);
        return Ok(Report {
            json: Value::Object(obj),
            text: t,
        });
    }
    if let Some(m) = mesh_json {
        obj.insert(
            "mesh".into(),
            serde_json::from_str(&m).map_err(|e| e.to_string())?,
        );
    }
    let members: usize = regions.iter().map(|d| d.replica_group.len()).sum();
    let indices: Option<Vec<usize>> = (members > LISTED_MEMBERS).then(|| {
        let mut seen: std::collections::HashMap<*const u64, usize> =
            std::collections::HashMap::new();
        let mut groups: Vec<Value> = Vec::new();
        let idx = regions
            .iter()
            .map(|d| {
                *seen.entry(d.replica_group.as_ptr()).or_insert_with(|| {
                    groups.push(json!(&*d.replica_group));
                    groups.len() - 1
                })
            })
            .collect();
        obj.insert("replica_groups".into(), Value::Array(groups));
        idx
    });
    // Written device by device as text: a `Value` per device would cost tens of times the output.
    let mut devices = String::from("[");
    for (i, d) in regions.iter().enumerate() {
        let mut v = device_json(d, with_shape, indices.as_ref().map(|x| x[i]));
        if let Some(m) = memory.as_ref().and_then(|m| m.get(i)) {
            v["memory"] = json!({"layout": m.layout, "bytes": m.bytes});
        }
        if i > 0 {
            devices.push(',');
        }
        devices.push_str(&v.to_string());
    }
    devices.push(']');
    crate::report::raw_member(&mut obj, "devices", devices);
    Ok(Report {
        json: Value::Object(obj),
        text: t,
    })
}
