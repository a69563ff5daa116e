//! `axe shard <verb>`: device meshes, shardings in every notation, who holds what, reshard plans and runs.

use axe_shard::{parse_any, plan, print, CostModel, DeviceRegion, Mesh, Notation, Sharding};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{json, Map, Value};

use crate::input::{expand, several};
use crate::report::{emit, Report};

/// A sharding notation, as the command line names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum NotationArg {
    /// XLA HloSharding: `{devices=[2,2]<=[4]}`.
    Hlo,
    /// JAX PartitionSpec over the mesh: `P('x', None)`.
    Jax,
    /// PyTorch DTensor placements per mesh dim: `[Shard(0), Replicate()]`.
    Dtensor,
    /// Alpa: `S0R`, `S01`, `RR`.
    Alpa,
    /// An Axe layout over device axes `gpu_<mesh axis>` and memory: `S[(2,32,128):(1@gpu_x,128,1)] + R[2:1@gpu_y]`.
    Axe,
}

impl From<NotationArg> for Notation {
    fn from(n: NotationArg) -> Notation {
        match n {
            NotationArg::Hlo => Notation::Hlo,
            NotationArg::Jax => Notation::Jax,
            NotationArg::Dtensor => Notation::Dtensor,
            NotationArg::Alpa => Notation::Alpa,
            NotationArg::Axe => Notation::Axe,
        }
    }
}

/// What every verb needs besides the shardings: the array and the mesh.
#[derive(Args, Clone)]
pub struct Target {
    /// The array, as an XLA shape: 'f32[64,128]' (its element type sizes bytes).
    #[arg(long)]
    shape: Option<String>,
    /// The mesh: named axes 'x=2,y=4', or sizes '2,4' (axes named d0, d1, ...), or a device count '8'.
    #[arg(long)]
    mesh: Option<String>,
    /// Device ids at the mesh positions, row-major (default 0..N-1): '3,1,0,2'.
    #[arg(long)]
    devices: Option<String>,
    /// Read every sharding in this notation instead of recognising it from its syntax.
    #[arg(long, value_enum)]
    from: Option<NotationArg>,
}

#[derive(Subcommand)]
pub enum Verb {
    /// Every notation of a sharding and, per device, its region, replica group and local shape.
    Show {
        /// Shardings in any notation ('-' reads one per stdin line).
        #[arg(required = true)]
        shardings: Vec<String>,
        #[command(flatten)]
        target: Target,
        /// Also draw which device holds which block into this file (one rectangle per piece, named by
        /// the devices holding it; ranks above 2: the Axe form, as `axe render` draws it): .svg, or .png
        /// (one sharding; needs --shape); written atomically.
        #[arg(long, value_name = "FILE")]
        svg: Option<String>,
        /// Each device's memory layout of its shard (needs --shape): an XLA layout of the padded local
        /// shape ('{1,0:T(8,128)}'), 'row-major', or an Axe layout on m; shows each device's buffer and bytes.
        #[arg(long)]
        layout: Option<String>,
        /// One JSON object per input.
        #[arg(long)]
        json: bool,
    },
    /// Write a sharding in another notation.
    Convert {
        /// Shardings in any notation ('-' reads one per stdin line).
        #[arg(required = true)]
        shardings: Vec<String>,
        /// The notation to write.
        #[arg(long, value_enum)]
        to: NotationArg,
        #[command(flatten)]
        target: Target,
        /// One JSON object per input.
        #[arg(long)]
        json: bool,
    },
    /// Reshard plan: the transfers (from, to, region, bytes), the collective, and an alpha-beta estimate.
    Plan {
        /// The source sharding, in any notation ('-': one 'SRC ; DST' pair per stdin line with DST '-').
        src: String,
        /// The destination sharding, in any notation.
        dst: String,
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        cost: Cost,
        #[command(flatten)]
        layouts: crate::shard_run::Layouts,
        /// The most transfers listed in text (all are in --json).
        #[arg(long, default_value_t = 40)]
        list: usize,
        /// One JSON object per pair.
        #[arg(long)]
        json: bool,
    },
    /// Execute a reshard: fill each source shard with a known pattern, move the bytes on a real engine
    /// (threads, or MPI ranks under mpirun), check every destination element; bytes, time and GB/s.
    Run {
        /// The source sharding, in any notation.
        src: String,
        /// The destination sharding, in any notation.
        dst: String,
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        layouts: crate::shard_run::Layouts,
        #[command(flatten)]
        run: crate::shard_run::RunArgs,
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// The alpha-beta network model of estimates.
#[derive(Args, Clone, Copy)]
pub struct Cost {
    /// Latency per message, in microseconds.
    #[arg(long, default_value_t = 5.0)]
    alpha_us: f64,
    /// Bandwidth per link, in GB/s.
    #[arg(long, default_value_t = 25.0)]
    gbps: f64,
}

impl Cost {
    fn model(self) -> Result<CostModel, String> {
        if !(self.alpha_us.is_finite() && self.alpha_us >= 0.0) {
            return Err(format!(
                "--alpha-us {} must be a finite number >= 0",
                self.alpha_us
            ));
        }
        if !(self.gbps.is_finite() && self.gbps > 0.0) {
            return Err(format!("--gbps {} must be a finite number > 0", self.gbps));
        }
        Ok(CostModel {
            alpha_us: self.alpha_us,
            bytes_per_us: self.gbps * 1e3,
        })
    }
}

/// `x=2,y=4`, `2,4` or `8`, with optional device ids.
fn mesh_arg(mesh: &str, devices: Option<&str>) -> Result<Mesh, String> {
    let ids = devices
        .map(|d| {
            d.split(',')
                .map(|x| {
                    x.trim().parse::<u64>().map_err(|_| {
                        format!("device id {x:?} in --devices is not a non-negative integer")
                    })
                })
                .collect::<Result<Vec<u64>, String>>()
        })
        .transpose()?;
    Mesh::from_spec(mesh, ids).map_err(|e| format!("--mesh: {e}"))
}

/// The array's dims and element bytes from `--shape`.
fn shape_arg(shape: &str) -> Result<(Vec<u64>, axe_xla::PrimitiveType), String> {
    let s = axe_xla::parse_shape(shape).map_err(|e| e.to_string())?;
    let a = s
        .as_array()
        .ok_or_else(|| format!("--shape {shape}: a sharding needs an array shape, not a tuple"))?;
    let dims = axe_xla::static_dims(a)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|d| u64::try_from(d).map_err(|_| format!("--shape {shape}: dim {d} is negative")))
        .collect::<Result<Vec<u64>, String>>()?;
    Ok((dims, a.element_type))
}

/// Reads a sharding in `from` (or the notation its syntax shows) for an array of `dims`.
fn read(
    text: &str,
    from: Option<NotationArg>,
    mesh: Option<&Mesh>,
    dims: &[u64],
) -> Result<(Mesh, Sharding), String> {
    parse_any(text, from.map(Notation::from), mesh, dims).map_err(|e| e.to_string())
}

fn ranges(r: &[std::ops::Range<u64>]) -> Vec<[u64; 2]> {
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
struct Array {
    dims: Vec<u64>,
    elem_bytes: Option<u64>,
}

fn array(target: &Target, text: &str, mesh: Option<&Mesh>) -> Result<Array, String> {
    if let Some(shape) = &target.shape {
        let (dims, ty) = shape_arg(shape)?;
        return Ok(Array {
            dims,
            elem_bytes: Some(u64::from(ty.byte_width())),
        });
    }
    // Without a shape: the rank the text shows, each dim as long as its shard count.
    let notation = match target.from {
        Some(n) => n.into(),
        None => Notation::detect(text).map_err(|e| e.to_string())?,
    };
    if notation == Notation::Axe {
        return Err("an Axe layout needs --shape (its dims are not in its text)".into());
    }
    let rank = apparent_rank(text, notation);
    let (m, s) = read(text, target.from, mesh, &vec![1u64 << 20; rank])?;
    Ok(Array {
        dims: (0..rank).map(|d| s.shards_of(&m, d)).collect(),
        elem_bytes: None,
    })
}

/// The fewest dims an array sharded by `text` can have: the tile grid's dims less its subgroup dims
/// (HloSharding), the spec's entries (JAX), the highest `Shard(d)` plus one (DTensor), the tokens (Alpa).
fn apparent_rank(text: &str, notation: Notation) -> usize {
    match notation {
        Notation::Hlo => match axe_xla::hlo::sharding::parse_sharding(text) {
            Ok(axe_xla::hlo::sharding::Sharding::Tiled {
                tile_assignment,
                last_tile_dim_replicate,
                last_tile_dims,
                ..
            }) => tile_assignment
                .dims()
                .len()
                .saturating_sub(usize::from(last_tile_dim_replicate) + last_tile_dims.len()),
            _ => 0,
        },
        Notation::Jax => {
            let body = text
                .split_once('(')
                .map_or("", |(_, b)| b.rsplit_once(')').map_or(b, |(b, _)| b));
            let mut depth = 0i32;
            let mut entries = usize::from(!body.trim().is_empty());
            for c in body.chars() {
                match c {
                    '(' | '[' => depth += 1,
                    ')' | ']' => depth -= 1,
                    ',' if depth == 0 => entries += 1,
                    _ => {}
                }
            }
            if body.trim_end().ends_with(',') {
                entries = entries.saturating_sub(1);
            }
            entries
        }
        Notation::Dtensor => text
            .match_indices("Shard(")
            .filter_map(|(i, m)| {
                let rest = &text[i + m.len()..];
                let end = rest.find(')')?;
                rest[..end]
                    .trim()
                    .trim_start_matches("dim=")
                    .parse::<usize>()
                    .ok()
            })
            .max()
            .map_or(0, |d| d.saturating_add(1).min(64)),
        Notation::Alpa => text.chars().filter(|c| matches!(c, 'R' | 'S')).count(),
        Notation::Axe => 0,
    }
}

/// Text lists every device of a mesh up to this size; past it, the first [`HEAD_ROWS`] and the last
/// [`TAIL_ROWS`] devices and a line counting the rest (`--json` lists every device).
const LISTED_ROWS: usize = 64;
const HEAD_ROWS: usize = 32;
const TAIL_ROWS: usize = 8;

fn show(
    text: &str,
    target: &Target,
    mesh: Option<&Mesh>,
    layout: Option<&str>,
    json_mode: bool,
) -> Result<Report, String> {
    let arr = array(target, text, mesh)?;
    let with_shape = arr.elem_bytes.is_some();
    let (mesh, s) = read(text, target.from, mesh, &arr.dims)?;
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
    let mut obj = Map::new();
    let mut t = String::new();
    for n in Notation::ALL {
        match print(n, &mesh, &s).map_err(|e| e.to_string()) {
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
    let mesh_desc = mesh_text(&mesh);
    if !folded {
        obj.insert(
            "mesh".into(),
            json!({"axes": mesh.names(), "sizes": mesh.sizes(), "devices": mesh.devices()}),
        );
    }
    t.push_str(&format!("mesh     {mesh_desc}\n"));
    if let Some(mem) = &memory {
        // Each distinct buffer once, with the devices that allocate it.
        let mut kinds: Vec<(&str, u64, usize)> = Vec::new();
        for m in mem {
            match kinds.iter_mut().find(|k| k.0 == m.layout && k.1 == m.bytes) {
                Some(k) => k.2 += 1,
                None => kinds.push((&m.layout, m.bytes, 1)),
            }
        }
        for (l, b, n) in kinds {
            t.push_str(&format!(
                "memory   {l}: {} on {n} device{}\n",
                human(b),
                if n == 1 { "" } else { "s" }
            ));
        }
    }
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
    if folded {
        // Only the text is printed; the JSON below is built for `--json` alone.
        return Ok(Report {
            json: Value::Object(obj),
            text: t,
        });
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
    obj.insert(
        "devices".into(),
        json!(regions
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let mut v = device_json(d, with_shape, indices.as_ref().map(|x| x[i]));
                if let Some(m) = memory.as_ref().and_then(|m| m.get(i)) {
                    v["memory"] = json!({"layout": m.layout, "bytes": m.bytes});
                }
                v
            })
            .collect::<Vec<_>>()),
    );
    Ok(Report {
        json: Value::Object(obj),
        text: t,
    })
}

fn convert(
    text: &str,
    to: Notation,
    target: &Target,
    mesh: Option<&Mesh>,
) -> Result<Report, String> {
    let arr = array(target, text, mesh)?;
    let (mesh, s) = read(text, target.from, mesh, &arr.dims)?;
    let w = print(to, &mesh, &s).map_err(|e| e.to_string())?;
    Ok(Report {
        json: json!({"result": w}),
        text: w,
    })
}

/// Reads a source and a destination sharding onto one mesh: `--mesh`, or the one the source brings.
fn pair(
    src: &str,
    dst: &str,
    target: &Target,
    mesh: Option<&Mesh>,
) -> Result<(Mesh, Sharding, Sharding, axe_xla::PrimitiveType), String> {
    let shape = target
        .shape
        .as_deref()
        .ok_or("a plan needs the array: --shape 'f32[64,128]'")?;
    let (dims, ty) = shape_arg(shape)?;
    let (m, _) = read(src, target.from, mesh, &dims).map_err(|e| format!("source: {e}"))?;
    // One mesh for both (an HloSharding over the same devices in another order reads onto it); an error
    // says which text it is in where the destination alone fails.
    let (mesh, a, b) =
        axe_shard::parse_pair(src, dst, target.from.map(Notation::from), mesh, &dims).map_err(
            |e| match read(dst, target.from, Some(mesh.unwrap_or(&m)), &dims) {
                Err(d) => format!("destination: {d}"),
                Ok(_) => e.to_string(),
            },
        )?;
    Ok((mesh, a, b, ty))
}

struct PlanArgs<'a> {
    target: &'a Target,
    cost: Cost,
    layouts: &'a crate::shard_run::Layouts,
    list: usize,
}

fn plan_report(
    src: &str,
    dst: &str,
    args: &PlanArgs<'_>,
    mesh: Option<&Mesh>,
) -> Result<Report, String> {
    let model = args.cost.model()?;
    let list = args.list;
    let (mesh, a, b, ty) = pair(src, dst, args.target, mesh)?;
    // Per-device layouts do not change the plan (regions are global boxes); they are checked here so
    // that a plan shown is one `run` can execute.
    let (a, b) = args.layouts.placements(a, b, ty)?;
    let p =
        plan(&mesh, &a.sharding, &b.sharding, a.elem_bytes(), &model).map_err(|e| e.to_string())?;
    let transfers: Vec<Value> = p
        .transfers
        .iter()
        .map(|t| {
            let mut v =
                json!({"from": t.from, "to": t.to, "region": ranges(&t.region), "bytes": t.bytes});
            if let Some(op) = t.reduce {
                v["reduce"] = json!(op.name());
            }
            v
        })
        .collect();
    let locals: Vec<Value> = p
        .locals
        .iter()
        .map(|l| json!({"device": l.device, "region": ranges(&l.region)}))
        .collect();
    let json = json!({
        "collective": p.collective.name(),
        "bytes": p.bytes,
        "transfers": transfers,
        "locals": locals,
        "estimate_us": p.estimate_us,
    });
    let mut t = format!(
        "{}: {} in {} transfers and {} local copies, about {:.1} us\n",
        p.collective.name(),
        human(p.bytes),
        p.transfers.len(),
        p.locals.len(),
        p.estimate_us
    );
    for x in p.transfers.iter().take(list) {
        let reg: Vec<String> = x
            .region
            .iter()
            .map(|r| format!("{}:{}", r.start, r.end))
            .collect();
        t.push_str(&format!(
            "  {:>6} -> {:<6} [{}] {}{}\n",
            x.from,
            x.to,
            reg.join(", "),
            human(x.bytes),
            x.reduce.map_or(String::new(), |op| format!(
                " ({} into the receiver)",
                op.name()
            ))
        ));
    }
    if p.transfers.len() > list {
        t.push_str(&format!(
            "  ... and {} more (see --json)\n",
            p.transfers.len() - list
        ));
    }
    Ok(Report { json, text: t })
}

/// `b` bytes in B, KiB, MiB, GiB.
fn human(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// Draws the one sharding of `shardings` over `--shape` into `path` (SVG, or PNG by its extension).
fn picture(shardings: &[String], target: &Target, path: &str) -> Result<(), String> {
    // The format from the extension, checked before any work (as `render -o` does): SVG, or PNG.
    let ext = std::path::Path::new(path)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let png = match ext.as_deref() {
        None | Some("svg") => false,
        Some("png") => true,
        Some(other) => {
            return Err(format!(
                "--svg {path}: axe draws sharding pictures as .svg or .png, not .{other}; name the file accordingly"
            ))
        }
    };
    let [text] = shardings else {
        return Err("--svg draws one sharding; give one".into());
    };
    if text == "-" {
        return Err("--svg draws one sharding given as an argument, not '-'".into());
    }
    let shape = target
        .shape
        .as_deref()
        .ok_or("--svg needs the array: --shape 'f32[64,128]'")?;
    let (dims, _) = shape_arg(shape)?;
    let mesh = mesh_of(target)?;
    let (mesh, s) = read(text, target.from, mesh.as_ref(), &dims)?;
    let svg = if dims.len() <= 2 {
        // One block per piece, named by the devices holding it (as JAX draws shardings).
        let view = s.region_view(&mesh).map_err(|e| e.to_string())?;
        let pieces: Vec<axe_render::Piece> = (0..view.len())
            .filter_map(|i| view.place(i))
            .map(|p| axe_render::Piece {
                device: p.device,
                region: p.region,
            })
            .collect();
        let title = format!("{} over {shape} on mesh {}", text.trim(), mesh_text(&mesh));
        axe_render::sharding_blocks(&title, &dims, &pieces).map_err(|e| e.to_string())?
    } else {
        let layout = axe_shard::axe::to_axe(&mesh, &s, None).map_err(|e| e.to_string())?;
        let p = axe_render::axe_picture(&layout, &dims).map_err(|e| e.to_string())?;
        axe_render::to_svg(&p)
    };
    let bytes = if png {
        axe_render::to_png(&svg, 2.0).map_err(|e| e.to_string())?
    } else {
        svg.into_bytes()
    };
    crate::output::write_atomically(path, &bytes)
}

/// `data=2,model=4`.
fn mesh_text(mesh: &Mesh) -> String {
    let axes: Vec<String> = mesh
        .names()
        .iter()
        .zip(mesh.sizes())
        .map(|(n, s)| format!("{n}={s}"))
        .collect();
    axes.join(",")
}

fn mesh_of(target: &Target) -> Result<Option<Mesh>, String> {
    match (&target.mesh, &target.devices) {
        (Some(m), d) => mesh_arg(m, d.as_deref()).map(Some),
        (None, Some(_)) => Err("--devices needs --mesh".into()),
        (None, None) => Ok(None),
    }
}

pub fn run(verb: Verb) -> bool {
    match verb {
        Verb::Show {
            shardings,
            target,
            svg,
            layout,
            json,
        } => {
            if let Some(path) = &svg {
                if let Err(e) = picture(&shardings, &target, path) {
                    return emit([Err::<Report, String>(e)], json);
                }
            }
            let label = several(&shardings);
            let mesh = mesh_of(&target);
            emit(
                expand(&shardings).map(|item| {
                    let input = item.as_ref().ok().cloned();
                    let r = item.and_then(|t| {
                        let m = mesh.clone()?;
                        show(&t, &target, m.as_ref(), layout.as_deref(), json)
                    });
                    (input.filter(|_| label), r)
                }),
                json,
            )
        }
        Verb::Convert {
            shardings,
            to,
            target,
            json,
        } => {
            let label = several(&shardings);
            let mesh = mesh_of(&target);
            emit(
                expand(&shardings).map(|item| {
                    let input = item.as_ref().ok().cloned();
                    let r = item.and_then(|t| {
                        let m = mesh.clone()?;
                        convert(&t, to.into(), &target, m.as_ref())
                    });
                    (input.filter(|_| label), r)
                }),
                json,
            )
        }
        Verb::Plan {
            src,
            dst,
            target,
            cost,
            layouts,
            list,
            json,
        } => {
            let args = PlanArgs {
                target: &target,
                cost,
                layouts: &layouts,
                list,
            };
            let mesh = mesh_of(&target);
            let label = src == "-" || dst == "-";
            emit(
                crate::input::pairs(&src, &dst).map(|item| {
                    let input = item.as_ref().ok().map(|(a, b)| format!("{a} ; {b}"));
                    let r = item.and_then(|(a, b)| {
                        let m = mesh.clone()?;
                        plan_report(&a, &b, &args, m.as_ref())
                    });
                    (input.filter(|_| label), r)
                }),
                json,
            )
        }
        Verb::Run {
            src,
            dst,
            target,
            layouts,
            run,
            json,
        } => {
            let setup = || {
                let mesh = mesh_of(&target)?;
                let (mesh, a, b, ty) = pair(&src, &dst, &target, mesh.as_ref())?;
                let placements = layouts.placements(a, b, ty)?;
                Ok((mesh, placements))
            };
            crate::shard_run::run_verb(setup, &CostModel::default(), &run, json)
        }
    }
}
