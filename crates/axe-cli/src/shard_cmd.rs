//! `axe shard <verb>`: device meshes, shardings in every notation, who holds what, reshard plans and runs.

use axe_shard::{parse_any, parse_any_local, print_local, CostModel, Mesh, Notation, Sharding};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;

use crate::input::{expand, several};
use crate::report::{emit, Report};
use crate::shard_picture::picture;
use crate::shard_plan::{plan_report, PlanArgs};
use crate::shard_show::show;

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
    /// A Shardy tensor sharding, as JAX 0.10 lowers: `#sdy.sharding<@mesh, [{"x"}, {"y", ?}]>`.
    Sdy,
}

impl From<NotationArg> for Notation {
    fn from(n: NotationArg) -> Notation {
        match n {
            NotationArg::Hlo => Notation::Hlo,
            NotationArg::Jax => Notation::Jax,
            NotationArg::Dtensor => Notation::Dtensor,
            NotationArg::Alpa => Notation::Alpa,
            NotationArg::Axe => Notation::Axe,
            NotationArg::Sdy => Notation::Sdy,
        }
    }
}

/// What every verb needs besides the shardings: the array and the mesh.
#[derive(Args, Clone)]
pub struct Target {
    /// The array, as an XLA shape: 'f32[64,128]' (its element type sizes bytes).
    #[arg(long)]
    pub(crate) shape: Option<String>,
    /// The mesh: named axes 'x=2,y=4', or sizes '2,4' (axes named d0, d1, ...), or a device count '8', or
    /// a Shardy mesh '<["x"=2, "y"=4]>' (with device_ids=[...] or not; a whole 'sdy.mesh @mesh = <...>'
    /// line too).
    #[arg(long)]
    pub(crate) mesh: Option<String>,
    /// Device ids at the mesh positions, row-major (default 0..N-1): '3,1,0,2'. HloSharding text names
    /// these ids (P('x') on x=4 with '3,1,0,2' is {devices=[4]3,1,0,2}); JAX's lowering names mesh
    /// positions instead ({devices=[4]<=[4]}, its device assignment mapping position to id).
    #[arg(long)]
    pub(crate) devices: Option<String>,
    /// Read every sharding in this notation instead of recognising it from its syntax.
    #[arg(long, value_enum)]
    pub(crate) from: Option<NotationArg>,
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
        /// Also draw which device holds which block into this file, in the format its extension names
        /// (.svg, .png, .txt) or --format gives: one rectangle per piece, named by the devices holding
        /// it (ranks above 2, and text: the Axe form's elements, as `axe render` draws them). One
        /// sharding; needs --shape. Written atomically.
        #[arg(short = 'o', long = "output", alias = "svg", value_name = "FILE")]
        output: Option<String>,
        /// The picture's format, where -o's name does not say it (default: from its extension).
        #[arg(long, value_enum, requires = "output")]
        format: Option<crate::render_format::Format>,
        /// Each device's memory layout of its shard, as in `shard plan`/`run` (needs --shape): an XLA
        /// layout of the padded local shape ('{1,0:T(8,128)}'), 'row-major', or an Axe layout on the
        /// memory axis m; shows each device's buffer and bytes, and the Axe form's memory iters (by
        /// default an Axe layout input's own, else row-major).
        #[arg(long, alias = "src-layout", value_name = "LAYOUT")]
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
    /// Reshard plan: the transfers (from, to, region, bytes) and local copies, the collective, and an
    /// alpha-beta estimate in µs; with a layout, each side's buffer per device.
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
        /// The most transfers, and the most local copies, listed in text (all are in --json).
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
    pub(crate) fn model(self) -> Result<CostModel, String> {
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
pub(crate) fn mesh_arg(mesh: &str, devices: Option<&str>) -> Result<Mesh, String> {
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
pub(crate) fn shape_arg(shape: &str) -> Result<(Vec<u64>, axe_xla::PrimitiveType), String> {
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
pub(crate) fn read(
    text: &str,
    from: Option<NotationArg>,
    mesh: Option<&Mesh>,
    dims: &[u64],
) -> Result<(Mesh, Sharding), String> {
    parse_any(text, from.map(Notation::from), mesh, dims).map_err(|e| e.to_string())
}

/// [`read`], with the per-device memory layout the text gives (an Axe layout's memory iters).
pub(crate) fn read_local(
    text: &str,
    from: Option<NotationArg>,
    mesh: Option<&Mesh>,
    dims: &[u64],
) -> Result<(Mesh, Sharding, Option<axe_layout::Layout>), String> {
    parse_any_local(text, from.map(Notation::from), mesh, dims).map_err(|e| e.to_string())
}

pub(crate) struct Array {
    pub(crate) dims: Vec<u64>,
    pub(crate) elem_bytes: Option<u64>,
}

pub(crate) fn array(target: &Target, text: &str, mesh: Option<&Mesh>) -> Result<Array, String> {
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
/// (HloSharding), the spec's entries (JAX), the highest `Shard(d)` plus one (DTensor), the tokens (Alpa),
/// the dims' axis lists (Shardy).
pub(crate) fn apparent_rank(text: &str, notation: Notation) -> usize {
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
                // Shard(d) needs d + 1 dims; Shard(-d) (counted from the last) needs d.
                let d = rest[..end]
                    .trim()
                    .trim_start_matches("dim=")
                    .trim()
                    .parse::<i64>()
                    .ok()?;
                Some(if d < 0 {
                    d.unsigned_abs()
                } else {
                    d as u64 + 1
                })
            })
            .max()
            .map_or(0, |d| d.min(64) as usize),
        Notation::Alpa => text.chars().filter(|c| matches!(c, 'R' | 'S')).count(),
        Notation::Axe => 0,
        // The dims' list `[{...}, ...]` after the mesh: one `{` per dim.
        Notation::Sdy => {
            let after = ["#sdy.sharding<", "<@", "<mesh<"]
                .iter()
                .find_map(|p| text.rfind(p))
                .unwrap_or(0);
            let body = &text[after..];
            let list = body.find(", [").map_or("", |i| &body[i + 3..]);
            let end = list.find(']').unwrap_or(list.len());
            list[..end].matches('{').count()
        }
    }
}

fn convert(
    text: &str,
    to: Notation,
    target: &Target,
    mesh: Option<&Mesh>,
    json_mode: bool,
) -> Result<Report, String> {
    let arr = array(target, text, mesh)?;
    // An Axe layout's memory iters are kept in the Axe form.
    let (mesh, s, local) = read_local(text, target.from, mesh, &arr.dims)?;
    let w = print_local(to, &mesh, &s, local.as_ref()).map_err(|e| e.to_string())?;
    // Open dims and priorities have no form outside Shardy's: said on stderr (stdout stays the result),
    // and in the JSON object.
    if let Some(note) = hints_note(&s, Some(to)) {
        if !json_mode {
            eprintln!("note: {note}");
        }
        return Ok(Report {
            json: json!({"result": w, "note": note}),
            text: w,
        });
    }
    Ok(Report {
        json: json!({"result": w}),
        text: w,
    })
}

/// What a user reading `s` in `to` (every notation where `None`) should know where it has Shardy's open
/// dims or priorities and `to` is not Shardy: the other notations have no form for them and print the
/// sharding they leave (the axes listed), so `?` and `pN` are dropped there.
pub(crate) fn hints_note(s: &Sharding, to: Option<Notation>) -> Option<String> {
    if !s.has_hints() || to == Some(Notation::Sdy) {
        return None;
    }
    let (open, prio) = (0..s.dims().len()).fold((0, 0), |(o, p), d| {
        let h = s.dim_hint(d);
        (
            o + usize::from(h.open),
            p + usize::from(h.priority.is_some()),
        )
    });
    let what = match (open > 0, prio > 0) {
        (true, true) => "open dims (?) and priorities (pN)",
        (true, false) => "open dims (?)",
        _ => "priorities (pN)",
    };
    let whom = match to {
        Some(n) => format!("{} has no form for them and prints", n.name()),
        None => "the notations other than sdy have no form for them and print".to_string(),
    };
    Some(format!(
        "the sharding's {what} only steer Shardy's propagation: {whom} the axes listed (who holds \
         what is the same)"
    ))
}

/// Reads a source and a destination sharding onto one mesh: `--mesh`, or the one the source brings.
pub(crate) fn pair(
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

pub(crate) fn mesh_of(target: &Target) -> Result<Option<Mesh>, String> {
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
            output,
            format,
            layout,
            json,
        } => {
            if let Some(path) = &output {
                if let Err(e) = picture(&shardings, &target, path, format) {
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
                        convert(&t, to.into(), &target, m.as_ref(), json)
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
                json,
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
