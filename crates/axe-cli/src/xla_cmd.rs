//! `axe xla <verb>`: XLA shapes and tiled layouts on the command line.

use axe_xla::{
    element_offset, from_axe, linear_index, memory_slots, numpy_program, parse_shape, sizes,
    to_axe, tpu_default_layout, validate, ArrayShape, Dim, Layout, Shape, TileDim, Tiling,
};
use clap::Subcommand;
use serde_json::{json, Map, Value};

use crate::input::{self, Shape as ShapeArg};
use crate::report::{emit, Answer, Common, Report};

/// The most memory slots `axe xla index --all` lists.
const TABLE_LIMIT: i64 = 1 << 16;

#[derive(Subcommand)]
pub enum Verb {
    /// Parse and print as XLA does; validate (exit 1 when a shape is invalid); list every field.
    Parse {
        /// Shapes such as 'bf16[8,128]{1,0:T(8,128)(2,1)}'; `-` reads one per line from stdin.
        #[arg(required = true)]
        shapes: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Where an element lives: logical and tiled linear index, byte and bit offset (or, with --all, the
    /// whole memory order).
    #[command(group(clap::ArgGroup::new("element").required(true).args(["index", "all"])))]
    Index {
        /// XLA shapes with layouts, e.g. 'f32[3,5]{1,0:T(2,2)}'; `-` reads one per line from stdin.
        #[arg(required = true)]
        shapes: Vec<String>,
        /// The element, e.g. `2,3` (one coordinate per dimension). Either --index or --all is needed.
        #[arg(long, allow_hyphen_values = true)]
        index: Option<input::Index>,
        /// List every memory slot in order: the element it holds, or padding.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Logical bytes, XLA's padded ArraySize, the exact physical size, and the padding.
    Size {
        /// XLA shapes with layouts, e.g. 'f32[3,5]{1,0:T(2,2)}'; `-` reads one per line from stdin.
        #[arg(required = true)]
        shapes: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// The layout as an Axe layout on axis m, over the padded shape.
    ToAxe {
        /// XLA shapes with layouts, e.g. 'f32[3,5]{1,0:T(2,2)}'; `-` reads one per line from stdin.
        #[arg(required = true)]
        shapes: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// The XLA layout (order plus up to two tiles) equal to an Axe memory layout over a shape, if any.
    FromAxe {
        /// Axe layouts on the memory axis; `-` reads one per line from stdin.
        #[arg(required = true)]
        layouts: Vec<String>,
        /// The logical shape the Axe layout admits, e.g. `4,6`.
        #[arg(long)]
        shape: ShapeArg,
        /// Element type to print the shape with.
        #[arg(long, default_value = "f32")]
        r#type: String,
        #[command(flatten)]
        common: Common,
    },
    /// The TPU's default tiled layout for a shape.
    TpuLayout {
        /// XLA shapes, e.g. 'bf16[16,256]' (a layout given is replaced by the TPU's); `-` reads one per line
        /// from stdin.
        #[arg(required = true)]
        shapes: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// The tiling as a numpy pad / reshape / transpose program.
    Numpy {
        /// XLA shapes with layouts, e.g. 'f32[3,5]{1,0:T(2,2)}'; `-` reads one per line from stdin.
        #[arg(required = true)]
        shapes: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn array(text: &str) -> Result<ArrayShape, String> {
    match parse_shape(text).map_err(err)? {
        Shape::Array(a) => Ok(a),
        other => Err(format!("{other} is not an array shape")),
    }
}

fn each<'a>(
    shapes: &'a [String],
    f: impl Fn(&str) -> Result<Report, String> + 'a,
) -> impl Iterator<Item = Answer> + 'a {
    let label = input::several(shapes);
    input::expand(shapes).map(move |s| match s {
        Ok(s) => {
            let r = f(&s);
            (label.then_some(s), r).into()
        }
        Err(e) => Err(e).into(),
    })
}

fn dim_json(d: &Dim) -> Value {
    match d {
        Dim::Static(n) => json!(n),
        Dim::Bounded(n) => json!(format!("<={n}")),
        Dim::Unbounded => json!("?"),
    }
}

fn layout_json(l: &Layout) -> Value {
    let tiles: Vec<Vec<Value>> = l
        .tiles
        .iter()
        .map(|t| {
            t.0.iter()
                .map(|d| match d {
                    TileDim::Size(s) => json!(s),
                    TileDim::Combined => json!("*"),
                })
                .collect()
        })
        .collect();
    json!({
        "minor_to_major": l.minor_to_major.to_vec(),
        "dim_level_types": l.dim_level_types.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
        "tiles": tiles,
        "tail_padding_alignment_in_elements": l.tail_padding_alignment_in_elements,
        "index_primitive_type": l.index_primitive_type.map(|t| t.name()),
        "pointer_primitive_type": l.pointer_primitive_type.map(|t| t.name()),
        "element_size_in_bits": l.element_size_in_bits,
        "memory_space": l.memory_space,
        "split_configs": l.split_configs.iter().map(|c| json!({"dimension": c.dimension, "split_indices": c.split_indices})).collect::<Vec<_>>(),
        "physical_shape": l.physical_shape.as_ref().map(|p| p.to_string()),
        "dynamic_shape_metadata_prefix_bytes": l.dynamic_shape_metadata_prefix_bytes,
    })
}

fn fields(s: &Shape) -> Value {
    match s {
        Shape::Array(a) => json!({
            "kind": "array",
            "element_type": a.element_type.name(),
            "element_bits": a.element_type.bits(),
            "dims": a.dims.iter().map(dim_json).collect::<Vec<_>>(),
            "layout": layout_json(&a.layout),
        }),
        Shape::Tuple(es) => {
            json!({"kind": "tuple", "elements": es.iter().map(fields).collect::<Vec<_>>()})
        }
        Shape::Token => json!({"kind": "token"}),
        Shape::Opaque => json!({"kind": "opaque"}),
        Shape::Buffer(inner) => json!({"kind": "buffer", "element": fields(inner)}),
    }
}

/// Every field of `v` as an aligned `name  value` line, nested objects flattened with dotted names
/// (`layout.minor_to_major`), tuple elements numbered (`elements.0.dims`), lists written compactly.
fn field_lines(v: &Value, prefix: &str, out: &mut String) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                field_lines(x, &name, out);
            }
        }
        Value::Array(xs) if xs.iter().any(Value::is_object) => {
            for (i, x) in xs.iter().enumerate() {
                field_lines(x, &format!("{prefix}.{i}"), out);
            }
        }
        Value::Null => out.push_str(&format!("{prefix:<44} none\n")),
        Value::String(s) => out.push_str(&format!("{prefix:<44} {s}\n")),
        other => out.push_str(&format!("{prefix:<44} {other}\n")),
    }
}

fn parse_verb(text: &str) -> Result<Report, String> {
    let shape = parse_shape(text).map_err(err)?;
    let printed = shape.to_string();
    let validation = validate(&shape);
    let mut obj = Map::new();
    obj.insert("input".into(), json!(text));
    obj.insert("printed".into(), json!(printed));
    obj.insert("valid".into(), json!(validation.is_ok()));
    if let Err(e) = &validation {
        obj.insert("validation_error".into(), json!(e.to_string()));
    }
    let f = fields(&shape);
    let mut text = match &validation {
        Ok(()) => format!("{printed}\nvalid\n"),
        Err(e) => format!("{printed}\n{e}\n"),
    };
    field_lines(&f, "", &mut text);
    obj.insert("fields".into(), f);
    Ok(Report {
        json: Value::Object(obj),
        text,
    })
}

fn index_verb(text: &str, index: &Option<input::Index>, all: bool) -> Result<Report, String> {
    let a = array(text)?;
    let t = Tiling::new(&a).map_err(err)?;
    if all {
        // Every slot `size` counts: the expanded tiles, then the `L` tail padding.
        let total = memory_slots(&a).map_err(err)?;
        let tiled = t.expanded_elements().map_err(err)?;
        if total > TABLE_LIMIT {
            return Err(format!("{a} has {total} memory slots, more than the {TABLE_LIMIT} listed at once; use --index"));
        }
        let mut slots = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
        let mut text = format!("{a}: memory order ({total} slots, '.' = padding)\n");
        if !a.layout.split_configs.is_empty() {
            text.push_str("note: split configs SC(...) are left out: this is the order of the unsplit array\n");
        }
        for x in 0..total {
            let e = if x < tiled {
                t.element_at(x).map_err(err)?
            } else {
                None // L tail padding
            };
            text.push_str(&format!(
                "{x:>6}  {}\n",
                e.as_ref().map_or(".".to_string(), |e| format!("{e:?}"))
            ));
            slots.push(e.map_or(Value::Null, |e| json!(e)));
        }
        return Ok(Report {
            json: json!({"shape": a.to_string(), "memory": slots}),
            text,
        });
    }
    let idx: Vec<i64> = index.as_ref().map(|s| s.0.clone()).unwrap_or_default();
    let logical = linear_index(&a, &idx).map_err(err)?;
    let o = element_offset(&a, &idx).map_err(err)?;
    Ok(Report {
        json: json!({"shape": a.to_string(), "index": idx, "logical_linear": logical, "tiled_linear": o.linear,
                     "byte_offset": o.byte_offset, "bit_offset": o.bit_offset}),
        text: format!(
            "{a} element {idx:?}\nlogical linear  {logical}\ntiled linear    {}\nbyte offset     {}\nbit offset      {}",
            o.linear, o.byte_offset, o.bit_offset
        ),
    })
}

fn size_verb(text: &str) -> Result<Report, String> {
    let shape = parse_shape(text).map_err(err)?;
    if !matches!(shape, Shape::Array(_)) {
        return parts_size(&shape);
    }
    let arrays = shape.arrays();
    let mut total = [0i64; 3];
    let mut lines = Vec::new();
    for (path, a) in &arrays {
        let z = sizes(a).map_err(err)?;
        total[0] += z.logical_bytes;
        total[1] += z.xla_array_size_bytes;
        total[2] += z.physical_bytes;
        let at = if path.is_empty() {
            String::new()
        } else {
            format!("{path:?} ")
        };
        lines.push(format!(
            "{at}{a}: logical {} B, XLA ArraySize {} B, physical {} B",
            z.logical_bytes, z.xla_array_size_bytes, z.physical_bytes
        ));
    }
    let padding = total[2] - total[0];
    let pct = if total[2] > 0 {
        100.0 * padding as f64 / total[2] as f64
    } else {
        0.0
    };
    let mut text = String::new();
    if arrays.len() > 1 {
        text.push_str(&lines.join("\n"));
        text.push('\n');
    }
    text.push_str(&format!(
        "logical bytes         {}\nXLA ArraySize bytes   {}\nphysical bytes        {}\npadding bytes         {} ({pct:.1}% of physical)",
        total[0], total[1], total[2], padding
    ));
    if total[1] != total[2] {
        // Why XLA's ArraySize (ShapeUtil::ArraySize) differs from the bytes the layout occupies.
        let mut reasons: Vec<&str> = Vec::new();
        for (_, a) in &arrays {
            for r in axe_xla::array_size_reasons(&a.layout) {
                if !reasons.contains(&r) {
                    reasons.push(r);
                }
            }
        }
        let gap = total[2] - total[1];
        let (what, more) = (reasons.join(", "), if gap > 0 { "more" } else { "fewer" });
        text.push_str(&if reasons == ["pads with the first tile only"] {
            format!("\nnote: XLA's ArraySize {what}; expanding every tile needs {gap} more bytes")
        } else {
            format!(
                "\nnote: XLA's ArraySize {what}; the layout occupies {} {more} bytes",
                gap.abs()
            )
        });
    }
    Ok(Report {
        json: json!({"shape": shape.to_string(), "logical_bytes": total[0], "xla_array_size_bytes": total[1],
                     "physical_bytes": total[2], "padding_bytes": padding, "padding_percent": pct,
                     "array_size_differs": total[1] != total[2]}),
        text,
    })
}

/// The size of a shape that is not an array (a tuple, a buffer, a token, an opaque value): XLA's
/// `ByteSizeOf` of the shape (for a tuple its index table, 8 bytes an element), each part's size (the
/// arrays' three sizes, the nested tuples' tables), and the totals of the arrays and of the tables.
fn parts_size(shape: &Shape) -> Result<Report, String> {
    let parts = axe_xla::part_sizes(shape).map_err(err)?;
    let t = axe_xla::part_totals(&parts).map_err(err)?;
    let mut lines = Vec::new();
    let mut parts_json = Vec::new();
    for p in &parts {
        let at = if p.index.is_empty() {
            String::new()
        } else {
            format!("{:?} ", p.index)
        };
        let (line, mut v) = match (p.shape, &p.sizes) {
            (Shape::Tuple(es), _) => {
                let n = es.len();
                (
                    format!(
                        "{at}{}: tuple of {n} element{}, index table {} B",
                        p.shape,
                        if n == 1 { "" } else { "s" },
                        p.byte_size_of
                    ),
                    json!({}),
                )
            }
            (_, Some(z)) => (
                format!(
                    "{at}{}: logical {} B, XLA ArraySize {} B, physical {} B",
                    p.shape, z.logical_bytes, z.xla_array_size_bytes, z.physical_bytes
                ),
                json!({"logical_bytes": z.logical_bytes, "xla_array_size_bytes": z.xla_array_size_bytes,
                       "physical_bytes": z.physical_bytes}),
            ),
            (Shape::Token, None) => (
                format!("{at}{}: no data, ByteSizeOf 0 B", p.shape),
                json!({}),
            ),
            _ => (
                format!(
                    "{at}{}: a pointer, ByteSizeOf {} B",
                    p.shape, p.byte_size_of
                ),
                json!({}),
            ),
        };
        v["index"] = json!(p.index);
        v["shape"] = json!(p.shape.to_string());
        v["kind"] = json!(p.kind());
        v["byte_size_of"] = json!(p.byte_size_of);
        parts_json.push(v);
        lines.push(line);
    }
    let (padding, pct) = (t.padding_bytes(), t.padding_percent());
    let mut text = lines.join("\n");
    text.push_str(&format!(
        "\nXLA ByteSizeOf        {} ({})\n\
         arrays: logical bytes {}, XLA ArraySize bytes {}, physical bytes {}, padding bytes {} \
         ({pct:.1}% of physical)",
        t.byte_size_of,
        match shape {
            Shape::Tuple(_) =>
                "the tuple's own index table, 8 B a pointer; its elements are buffers of their own",
            Shape::Token => "a token holds no data",
            Shape::Opaque => "a pointer",
            _ => "the array it holds",
        },
        t.logical_bytes,
        t.xla_array_size_bytes,
        t.physical_bytes,
        padding
    ));
    if t.tuples > 0 {
        text.push_str(&format!(
            "\nindex tables: {} B in {} tuple{} (nested ones included)",
            t.index_table_bytes,
            t.tuples,
            if t.tuples == 1 { "" } else { "s" }
        ));
    }
    Ok(Report {
        json: json!({"shape": shape.to_string(), "byte_size_of": t.byte_size_of,
                     "index_table_bytes": t.index_table_bytes, "logical_bytes": t.logical_bytes,
                     "xla_array_size_bytes": t.xla_array_size_bytes, "physical_bytes": t.physical_bytes,
                     "padding_bytes": padding, "padding_percent": pct, "parts": parts_json}),
        text,
    })
}

fn to_axe_verb(text: &str) -> Result<Report, String> {
    let a = array(text)?;
    let f = to_axe(&a).map_err(err)?;
    let region: Vec<[u64; 2]> = f.region.iter().map(|r| [r.start, r.end]).collect();
    let shown: Vec<String> = f
        .region
        .iter()
        .map(|r| format!("{}:{}", r.start, r.end))
        .collect();
    Ok(Report {
        json: json!({"shape": a.to_string(), "layout": f.layout.to_string(), "padded_shape": f.padded_shape, "region": region}),
        text: format!(
            "{}\npadded shape  {:?}\nregion        {}",
            f.layout,
            f.padded_shape,
            shown.join(",")
        ),
    })
}

pub fn run(verb: Verb) -> bool {
    match verb {
        Verb::Parse { shapes, common } => {
            // Every shape's report is printed; an invalid one fails the command as an error does.
            let invalid = std::cell::Cell::new(false);
            let check = |s: &str| {
                let r = parse_verb(s);
                if r.as_ref().is_ok_and(|r| r.json["valid"] == false) {
                    invalid.set(true);
                }
                r
            };
            emit(each(&shapes, check), common.json) && !invalid.get()
        }
        Verb::Index {
            shapes,
            index,
            all,
            common,
        } => emit(each(&shapes, |s| index_verb(s, &index, all)), common.json),
        Verb::Size { shapes, common } => emit(each(&shapes, size_verb), common.json),
        Verb::ToAxe { shapes, common } => emit(each(&shapes, to_axe_verb), common.json),
        Verb::FromAxe {
            layouts,
            shape,
            r#type,
            common,
        } => emit(
            each(&layouts, |s| {
                let l: axe_layout::Layout = s.parse().map_err(err)?;
                let ty = axe_xla::PrimitiveType::from_name(&r#type).ok_or_else(|| {
                    let names: Vec<&str> = axe_xla::PrimitiveType::ALL
                        .iter()
                        .filter(|t| t.is_array_type())
                        .map(|t| t.name())
                        .collect();
                    format!(
                        "--type {type:?} is not an element type; the element types are {}",
                        names.join(", "),
                        type = r#type
                    )
                })?;
                if !ty.is_array_type() {
                    // `token[]` and `opaque[]` have no dimensions, so no layout to print.
                    return Err(format!(
                        "--type {ty} is not an array element type: {ty}[] has no dimensions"
                    ));
                }
                let found = from_axe(&l, &shape.0).map_err(|e| {
                    // A padded layout's Axe form covers its padded shape, which `to-axe` prints.
                    let product = shape.0.iter().try_fold(1u64, |p, &d| p.checked_mul(d));
                    match product {
                        Some(p) if l.size() > p => format!(
                            "{e}; the Axe form of a padded XLA layout covers the padded shape \
                             (`axe xla to-axe` prints it as `padded shape`): give that as --shape"
                        ),
                        _ => e.to_string(),
                    }
                })?;
                match found {
                    Some(layout) => {
                        let a = ArrayShape {
                            element_type: ty,
                            dims: shape.0.iter().map(|&d| Dim::Static(d as i64)).collect(),
                            layout: layout.clone(),
                        };
                        Ok(Report {
                            json: json!({"layout": layout.to_string(), "shape": a.to_string()}),
                            text: a.to_string(),
                        })
                    }
                    None => Err(format!(
                        "{l} over {:?} is not an XLA layout with at most two tiles",
                        shape.0
                    )),
                }
            }),
            common.json,
        ),
        Verb::TpuLayout { shapes, common } => emit(
            // Each answer is the input with its layout: a line that names its input.
            each(&shapes, |s| {
                let mut a = array(s)?;
                a.layout = tpu_default_layout(&a).map_err(err)?;
                Ok(Report {
                    json: json!({"input": s, "layout": a.layout.to_string(), "shape": a.to_string()}),
                    text: a.to_string(),
                })
            })
            .map(|a| Answer {
                headed: true,
                ..a
            }),
            common.json,
        ),
        Verb::Numpy { shapes, common } => emit(
            each(&shapes, |s| {
                let program = numpy_program(&array(s)?).map_err(err)?;
                Ok(Report {
                    json: json!({"shape": s, "program": program}),
                    text: program,
                })
            }),
            common.json,
        ),
    }
}
