//! `axe explain` and `axe render`: a layout in plain words, and as a picture.

use std::io::IsTerminal;

use axe_render::explain::{explain_axe, explain_xla, to_text_report, Explanation, Field};
use axe_render::{axe_picture, memory_picture, to_png, to_svg, to_text, Picture};
use clap::{Args, ValueEnum};
use serde_json::json;

use crate::input::Shape as ShapeArg;
use crate::render_format::{picture_format, Format};
use crate::render_kernel::{self, Source};
use crate::report::{emit, Answer, Report};

/// The seed's example, explained when no input is given.
pub const DEFAULT_INPUT: &str = "f32[3,5]{1,0:T(2,2)}";

#[derive(Clone, Copy, ValueEnum)]
pub enum Colour {
    /// In a terminal only.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

#[derive(Args)]
pub struct ExplainArgs {
    /// An XLA shape with layout ('bf16[8,128]{1,0:T(8,128)(2,1)}'), an Axe layout (with --shape), or a
    /// CuTe ('(8,(4,2)):(4,(1,32))'), Triton or Gluon layout (with --shape), explained through its Axe form.
    /// Default: f32[3,5]{1,0:T(2,2)}, the XLA tiling doc's Figure 1. Several may be given, and `-` reads
    /// one per line from stdin.
    inputs: Vec<String>,
    /// The logical shape an Axe layout is viewed over (default: one dimension of its size).
    #[arg(long)]
    shape: Option<ShapeArg>,
    /// The same facts as one JSON object per input (errors as {"error": ...}).
    #[arg(long)]
    json: bool,
    /// Colour the output.
    #[arg(long, value_enum, default_value = "auto")]
    color: Colour,
}

#[derive(Args)]
pub struct RenderArgs {
    /// An XLA shape with layout, an Axe layout (with --shape), a CuTe layout ('(4,2):(2,1)',
    /// 'Sw<3,3,3> o 0 o (8,64):(64,1)'; a TV layout with --tv --shape M,N), a Triton linear layout
    /// ('{"in": ...}', '#ttg.linear<{...}>'), a Gluon layout ('BlockedLayout(...)' or TTGIR
    /// '#ttg.blocked<{...}>', with --shape), or a sharding in any notation (with --shape and, but for HLO
    /// text, --mesh).
    input: String,
    /// The logical shape an Axe layout is viewed over; the tensor shape of a Gluon layout; the tile
    /// (M,N) of a CuTe TV layout.
    #[arg(long)]
    shape: Option<ShapeArg>,
    /// The device mesh a sharding (`P('x', None)`, `{devices=[2,1]<=[2]}`, `[Shard(0)]`) is drawn over:
    /// 'x=2,y=4', sizes '2,4' or a device count '8' (with --shape, the array's dims).
    #[arg(long)]
    mesh: Option<String>,
    /// The input's notation, when not the one it looks like.
    #[arg(long, value_enum)]
    from: Option<Source>,
    /// The CuTe layout is a TV layout, (thread, value) → index in the --shape tile: draw each tile
    /// element's thread and value.
    #[arg(long)]
    tv: bool,
    /// Output file, in the format its extension names (.svg, .png, .txt) or --format gives (stdout for
    /// svg and txt if absent); written atomically.
    #[arg(short, long)]
    output: Option<String>,
    /// Picture format (default: from the output's extension: .svg, .png or .txt; svg to stdout). A name
    /// with another extension or none needs --format.
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// PNG scale (pixels per SVG unit), 0.1 to 16; the picture may have at most 64 megapixels.
    #[arg(long, default_value_t = 2.0, value_parser = scale)]
    scale: f32,
}

/// `--scale`: a number in [0.1, 16] (below 0.1 a picture shrinks to a few pixels).
fn scale(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(x) if (0.1..=16.0).contains(&x) => Ok(x),
        _ => Err(format!("{s} is not a scale from 0.1 to 16")),
    }
}

#[allow(clippy::large_enum_variant, reason = "one value per command")]
enum Input {
    Xla(axe_xla::ArrayShape),
    Axe(axe_layout::Layout, Vec<u64>),
}

/// An input to `explain`: its Axe or XLA reading, and for a CuTe, Triton or Gluon layout the note that
/// says which notation it was read in and what its Axe form is.
struct Read {
    input: Input,
    from: Option<String>,
}

/// The input of `explain`, in whichever notation it is written: an XLA shape, an Axe layout, or a CuTe,
/// Triton or Gluon layout (explained through its Axe form). A sharding is refused with the command
/// that explains it.
fn read_input(text: &str, shape: &Option<ShapeArg>) -> Result<Read, String> {
    let t = text.trim();
    if looks_like_sharding(t) {
        return Err(format!(
            "{t} is a sharding; `axe shard show \"{t}\" --shape 'f32[64,128]' --mesh x=2,y=4` explains it \
             (every notation, and who holds what), and `axe render` draws it"
        ));
    }
    let dims = shape.as_ref().map(|s| s.0.as_slice());
    match render_kernel::detect(t) {
        Some(Source::Cute) => {
            if t.starts_with("Sw<") {
                return Err(
                    "a swizzled CuTe layout is not affine, so it has no Axe form to explain: \
                     `axe cute show` lists its offsets and `axe render` draws it"
                        .into(),
                );
            }
            let l: axe_cute::Layout = t.parse().map_err(|e: axe_cute::CuteError| e.to_string())?;
            let axe = l.to_axe().map_err(|e| e.to_string())?;
            let note = format!("CuTe layout {l}, explained through its Axe form {axe} (index i in CuTe's colexicographic order)");
            Ok(Read {
                input: axe_over(axe, shape)?,
                from: Some(note),
            })
        }
        Some(Source::Triton) => {
            let (axe, over) = if axe_triton::gluon::is_linear_text(t) {
                let ll = axe_triton::parse_linear(t).map_err(|e| e.to_string())?;
                let axe = ll.to_axe().map_err(|e| e.to_string())?;
                (axe, axe_triton::out_shape(&ll))
            } else {
                let g = axe_triton::gluon::parse_gluon(t).map_err(|e| e.to_string())?;
                let dims = dims.ok_or("a Gluon layout needs the tensor shape: --shape 32,16")?;
                (g.to_axe(dims).map_err(|e| e.to_string())?, dims.to_vec())
            };
            let note = format!(
                "Triton layout, explained through its Axe form {axe} over the tensor {over:?}"
            );
            Ok(Read {
                input: Input::Axe(axe, over),
                from: Some(note),
            })
        }
        _ => Ok(Read {
            input: read_as(text, shape, None)?,
            from: None,
        }),
    }
}

/// An Axe layout over `--shape`, or over one dimension of its size.
fn axe_over(l: axe_layout::Layout, shape: &Option<ShapeArg>) -> Result<Input, String> {
    let s = shape
        .as_ref()
        .map_or_else(|| vec![l.size()], |s| s.0.clone());
    Ok(Input::Axe(l, s))
}

/// Text in one of the sharding notations that no layout notation shares: JAX's `P(...)`, DTensor's
/// `[Shard(0), ...]`, HloSharding's `{devices=...}` and its other forms, Alpa's `S0R`.
fn looks_like_sharding(t: &str) -> bool {
    let head = t.split('(').next().unwrap_or("").trim();
    // Alpa's `S0R`, `RS01`, `RR`: letters R and S with mesh-axis digits, nothing else.
    let alpa = t.starts_with(['R', 'S'])
        && t.bytes()
            .all(|b| b == b'R' || b == b'S' || b.is_ascii_digit());
    alpa || (t.contains('(') && (head == "P" || head == "PartitionSpec" || head.ends_with(".P")))
        || ["[Shard", "[Replicate", "[Partial", "[_StridedShard"]
            .iter()
            .any(|p| t.starts_with(p))
        || [
            "{devices=",
            "{replicated",
            "{maximal",
            "{manual",
            "{unknown",
            "{{",
        ]
        .iter()
        .any(|p| t.starts_with(p))
}

/// The input read as an XLA shape or an Axe layout: either (`from` absent), or only the one named.
fn read_as(text: &str, shape: &Option<ShapeArg>, from: Option<Source>) -> Result<Input, String> {
    if from == Some(Source::Axe) {
        return read_axe(text, shape).map_err(|e| e.to_string());
    }
    match axe_xla::parse_shape(text) {
        Ok(axe_xla::Shape::Array(a)) if shape.is_some() => Err(format!(
            "--shape is for Axe layouts; the XLA shape {a} has its own dimensions"
        )),
        Ok(axe_xla::Shape::Array(a)) => Ok(Input::Xla(a)),
        Ok(other) => Err(format!("{other} is not an array shape")),
        Err(xla_err) if from == Some(Source::Xla) => Err(xla_err.to_string()),
        Err(xla_err) => match read_axe(text, shape) {
            Ok(input) => Ok(input),
            Err(axe_err) => {
                let looks_axe = text.trim_start().starts_with(['S', 'R', 'T']);
                Err(if looks_axe {
                    axe_err.to_string()
                } else {
                    xla_err.to_string()
                })
            }
        },
    }
}

fn read_axe(text: &str, shape: &Option<ShapeArg>) -> Result<Input, axe_layout::LayoutError> {
    let l = text.parse::<axe_layout::Layout>()?;
    let s = shape
        .as_ref()
        .map_or_else(|| vec![l.size()], |s| s.0.clone());
    Ok(Input::Axe(l, s))
}

fn explanation(input: &Input) -> Result<Explanation, String> {
    match input {
        Input::Xla(a) => explain_xla(a),
        Input::Axe(l, s) => explain_axe(l, s),
    }
    .map_err(|e| e.to_string())
}

fn picture(input: &Input) -> Result<Picture, String> {
    match input {
        Input::Xla(a) => memory_picture(a),
        Input::Axe(l, s) => axe_picture(l, s),
    }
    .map_err(|e| e.to_string())
}

fn explain_one(text: &str, args: &ExplainArgs, colour: bool) -> Result<Report, String> {
    let read = read_input(text, &args.shape)?;
    let mut e = explanation(&read.input)?;
    if let Some(note) = &read.from {
        e.title = text.trim().to_string();
        e.fields.insert(0, Field::plain("notation", note.clone()));
    }
    // Fixed keys: a fact about something that varies (a tile, an axis) is listed under its key.
    let mut fields = serde_json::Map::new();
    for f in &e.fields {
        match &f.of {
            None => {
                fields.insert(f.key.to_string(), json!(f.text));
            }
            Some(of) => {
                let list = fields.entry(f.key).or_insert_with(|| json!([]));
                if let Some(list) = list.as_array_mut() {
                    list.push(json!({"of": of, "text": f.text}));
                }
            }
        }
    }
    let grid: Vec<Vec<serde_json::Value>> = (0..e.picture.rows)
        .map(|r| {
            (0..e.picture.cols)
                .map(|c| {
                    let cell = e.picture.cell(r, c);
                    json!({"label": cell.label, "sublabel": cell.sublabel, "padding": cell.padding, "group": cell.group})
                })
                .collect()
        })
        .collect();
    let json = json!({
        "input": e.title,
        "fields": fields,
        "sizes": e.sizes.map(|z| json!({"logical_bytes": z.logical_bytes, "xla_array_size_bytes": z.xla_array_size_bytes,
            "physical_bytes": z.physical_bytes, "padding_bytes": z.padding_bytes()})),
        "axe": e.axe.as_ref().map(|(l, p)| json!({"layout": l, "padded_shape": p})),
        "numpy": e.numpy,
        "grid": grid,
        "grid_notes": e.picture.notes,
    });
    Ok(Report {
        json,
        text: to_text_report(&e, colour),
    })
}

pub fn explain(args: ExplainArgs) -> bool {
    let colour = match args.color {
        Colour::Always => true,
        Colour::Never => false,
        Colour::Auto => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let inputs = if args.inputs.is_empty() {
        vec![DEFAULT_INPUT.to_string()]
    } else {
        args.inputs.clone()
    };
    let label = crate::input::several(&inputs);
    let answers = crate::input::expand(&inputs).map(|s| -> Answer {
        match s {
            Ok(s) => {
                let r = explain_one(&s, &args, colour);
                Answer::headed(label.then_some(s), r)
            }
            Err(e) => Err(e).into(),
        }
    });
    emit(answers, args.json)
}

/// The picture of the input, in the notation `--from` names or the one it looks like.
fn render_picture(args: &RenderArgs) -> Result<Picture, String> {
    let shape = args.shape.as_ref().map(|s| s.0.as_slice());
    if args.from.is_none() && looks_like_sharding(args.input.trim()) {
        return sharding_picture(&args.input, shape, args.mesh.as_deref());
    }
    if args.mesh.is_some() {
        return Err(
            "--mesh is for shardings (P('x', None), {devices=...}, [Shard(0), ...])".into(),
        );
    }
    match args.from.or_else(|| render_kernel::detect(&args.input)) {
        Some(Source::Cute) => render_kernel::cute(&args.input, args.tv, shape),
        _ if args.tv => {
            Err("--tv is for CuTe TV layouts ('((32,4),8):((4,1),128)' --shape 128,8)".into())
        }
        Some(Source::Triton) => render_kernel::triton(&args.input, shape),
        from => read_as(&args.input, &args.shape, from).and_then(|i| picture(&i)),
    }
}

/// A sharding over an array of rank 1 or 2, drawn as one block per piece (`shard show -o`'s
/// picture); `None` for other inputs, drawn element by element.
fn sharding_blocks(args: &RenderArgs) -> Result<Option<String>, String> {
    let text = args.input.trim();
    if args.from.is_some() || !looks_like_sharding(text) {
        return Ok(None);
    }
    let Some(dims) = args.shape.as_ref().map(|s| s.0.as_slice()) else {
        return Ok(None);
    };
    let mesh = args
        .mesh
        .as_deref()
        .map(|m| axe_shard::Mesh::from_spec(m, None))
        .transpose()
        .map_err(|e| e.to_string())?;
    let (mesh, s) = axe_shard::notation::any::parse_any(text, None, mesh.as_ref(), dims)
        .map_err(|e| e.to_string())?;
    let shape: Vec<String> = dims.iter().map(u64::to_string).collect();
    crate::shard_picture::blocks_svg(text, &format!("[{}]", shape.join(",")), &mesh, &s, dims)
}

/// Which device holds each element of an array of `--shape` under a sharding, over `--mesh`.
fn sharding_picture(
    text: &str,
    dims: Option<&[u64]>,
    mesh: Option<&str>,
) -> Result<Picture, String> {
    let dims = dims.ok_or("a sharding is drawn over an array: --shape 64,128")?;
    let mesh = mesh
        .map(|m| axe_shard::Mesh::from_spec(m, None))
        .transpose()
        .map_err(|e| e.to_string())?;
    let (mesh, s) = axe_shard::notation::any::parse_any(text, None, mesh.as_ref(), dims)
        .map_err(|e| e.to_string())?;
    let layout = axe_shard::axe::to_axe(&mesh, &s, None).map_err(|e| e.to_string())?;
    axe_render::axe_picture(&layout, dims).map_err(|e| e.to_string())
}

pub fn render(args: RenderArgs) -> bool {
    let format = match picture_format("-o", args.output.as_deref(), args.format) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return false;
        }
    };
    let result = match (format, sharding_blocks(&args)) {
        (Format::Txt, _) | (_, Ok(None)) => render_picture(&args).and_then(|p| match format {
            Format::Svg => Ok(to_svg(&p).into_bytes()),
            Format::Txt => Ok(to_text(&p, false).into_bytes()),
            Format::Png => to_png(&to_svg(&p), args.scale).map_err(|e| e.to_string()),
        }),
        (Format::Svg, Ok(Some(svg))) => Ok(svg.into_bytes()),
        (Format::Png, Ok(Some(svg))) => to_png(&svg, args.scale).map_err(|e| e.to_string()),
        (_, Err(e)) => Err(e),
    };
    let written = result.and_then(|bytes| match &args.output {
        Some(path) => crate::output::write_atomically(path, &bytes),
        None if format == Format::Png => {
            Err("PNG needs an output file (-o picture.png)".to_string())
        }
        None => {
            crate::out!("{}", String::from_utf8_lossy(&bytes));
            Ok(())
        }
    });
    match written {
        Ok(()) => true,
        Err(e) => {
            eprintln!("error: {e}");
            false
        }
    }
}
