//! `axe layout <verb>`: the Axe layout operators on the command line.

use axe_layout::{unflatten, Axis, Coord, Layout};
use clap::Subcommand;
use serde_json::{json, Map, Value};

use crate::input::{self, Region, Shape};
use crate::report::{emit, Answer, Common, Report};

/// The built-in example: the Axe paper's tensor-core tile (8×16 over 2 warps × 32 lanes × 2 registers,
/// replicated to warps +4, offset to warp 5).
const TENSOR_CORE: &str = "S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp";

/// The most coordinates `axe layout map` prints without `--index`.
const MAP_LIMIT: u64 = 1 << 20;

#[derive(Subcommand)]
pub enum Verb {
    /// Size, per-axis span and canonical form (with no layout: the paper's tensor-core tile).
    Show {
        /// Layouts (`S[(8,16):(16,1)] + R[2:4@warp] + 5@warp`, or TVM's form); `-` reads one per line from stdin.
        layouts: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// The coordinates of every element (or of one with --index), replicas expanded.
    Map {
        /// Layouts in the Axe notation (or TVM's form); `-` reads one per line from stdin.
        #[arg(required = true)]
        layouts: Vec<String>,
        /// Logical shape to evaluate multi-indices over (its product must be the layout size).
        #[arg(long)]
        shape: Option<Shape>,
        /// Evaluate only this (multi-)index, e.g. `1,3`.
        #[arg(long)]
        index: Option<Shape>,
        #[command(flatten)]
        common: Common,
    },
    /// The canonical form and whether it satisfies the gap condition.
    Canon {
        /// Layouts in the Axe notation (or TVM's form); `-` reads one per line from stdin.
        #[arg(required = true)]
        layouts: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Whether two layouts induce the same map (exact). Exit status as cmp's and diff's: 0 when every
    /// pair is equivalent, 1 when one is not (or could not be read).
    Equiv {
        /// The first layout (`-`: one per stdin line; `- -`: `A ; B` per line).
        a: String,
        /// The second layout (`-`: one per stdin line).
        b: String,
        #[command(flatten)]
        common: Common,
    },
    /// Split the shard iters into one block per dimension of a shape.
    Group {
        /// Layouts in the Axe notation (or TVM's form); `-` reads one per line from stdin.
        #[arg(required = true)]
        layouts: Vec<String>,
        /// The shape whose dimensions the blocks follow (its product must be the layout size), e.g. `5,21`.
        #[arg(long)]
        shape: Shape,
        #[command(flatten)]
        common: Common,
    },
    /// Kronecker product: INNER tiled over OUTER.
    Tile {
        /// The inner layout A (the tile); `-`: one per stdin line.
        inner: String,
        /// The outer layout B (the grid of tiles); `-`: one per stdin line.
        outer: String,
        /// Logical shape of the inner layout, e.g. `2,2`.
        #[arg(long)]
        inner_shape: Shape,
        /// Logical shape of the outer layout, e.g. `2,3`.
        #[arg(long)]
        outer_shape: Shape,
        #[command(flatten)]
        common: Common,
    },
    /// Recover the outer layout B with tile(INNER, B) = TILED (with --outer: the inner A from an outer).
    TileOf {
        /// The tiled layout T; `-`: one per stdin line.
        tiled: String,
        /// The inner layout (the outer one with --outer).
        part: String,
        /// Logical shape of the tiled layout.
        #[arg(long)]
        tiled_shape: Shape,
        /// Shape of the inner layout.
        #[arg(long, required_unless_present = "outer", conflicts_with = "outer")]
        inner_shape: Option<Shape>,
        /// The second layout is the outer one: recover the inner.
        #[arg(long)]
        outer: bool,
        /// Shape of the outer layout (with --outer).
        #[arg(long, required_if_eq("outer", "true"), requires = "outer")]
        outer_shape: Option<Shape>,
        #[command(flatten)]
        common: Common,
    },
    /// The layout of a rectangular region.
    Slice {
        /// Layouts in the Axe notation (or TVM's form); `-` reads one per line from stdin.
        #[arg(required = true)]
        layouts: Vec<String>,
        /// Logical shape the region is taken in, e.g. `8,8`.
        #[arg(long)]
        shape: Shape,
        /// Per dimension `begin:end` (end exclusive), e.g. `2:6,0:8`.
        #[arg(long)]
        region: Region,
        #[command(flatten)]
        common: Common,
    },
    /// Direct sum A ⊕ B (tiling without span scaling; A outer).
    Sum {
        /// The outer summand A; `-`: one per stdin line.
        a: String,
        /// The inner summand B; `-`: one per stdin line.
        b: String,
        /// Logical shape of A.
        #[arg(long)]
        a_shape: Shape,
        /// Logical shape of B.
        #[arg(long)]
        b_shape: Shape,
        #[command(flatten)]
        common: Common,
    },
}

/// An Axe layout; text that does not read as one but does as a CuTe layout (`(8,2):(4,1)`) is told
/// where CuTe layouts are read.
fn parse(s: &str) -> Result<Layout, String> {
    s.parse::<Layout>().map_err(|e| {
        let mut m = e.to_string();
        if s.parse::<axe_cute::AnyLayout>().is_ok() {
            m.push_str(&format!(
                "\n  ('{s}' is a CuTe layout: `axe cute show` reads it, and `axe cute to-axe` gives its \
                 Axe form)"
            ));
        }
        m
    })
}

fn each<'a>(
    layouts: &'a [String],
    f: impl Fn(&Layout) -> Result<Report, String> + 'a,
) -> impl Iterator<Item = Answer> + 'a {
    let label = input::several(layouts);
    input::expand(layouts).map(move |s| match s {
        Ok(s) => {
            let r = parse(&s).and_then(|l| f(&l));
            (label.then_some(s), r).into()
        }
        Err(e) => Err(e).into(),
    })
}

fn each_pair<'a>(
    a: &'a str,
    b: &'a str,
    f: impl Fn(&Layout, &Layout) -> Result<Report, String> + 'a,
) -> impl Iterator<Item = Answer> + 'a {
    let label = a == "-" || b == "-";
    input::pairs(a, b).map(move |p| match p {
        Ok((a, b)) => {
            let r = (|| f(&parse(&a)?, &parse(&b)?))();
            (label.then(|| format!("{a} ; {b}")), r).into()
        }
        Err(e) => Err(e).into(),
    })
}

fn err(e: axe_layout::LayoutError) -> String {
    e.to_string()
}

/// A coordinate as a JSON object over `axes` (zeros included).
fn coord_json(c: &Coord, axes: &[Axis]) -> Value {
    let mut m = Map::new();
    for a in axes {
        m.insert(a.name().to_string(), json!(c.get(a)));
    }
    Value::Object(m)
}

fn show(l: &Layout) -> Result<Report, String> {
    let spans = l.spans().map_err(err)?;
    let canonical = l.canonicalize().map_err(err)?;
    let span_json: Map<String, Value> = spans
        .iter()
        .map(|(a, s)| (a.name().to_string(), json!(s)))
        .collect();
    let span_text: Vec<String> = spans.iter().map(|(a, s)| format!("{a} {s}")).collect();
    let text = format!(
        "layout     {l}\nsize       {}\nspan       {}\ncanonical  {canonical}\n",
        l.size(),
        if span_text.is_empty() {
            "-".to_string()
        } else {
            span_text.join(", ")
        }
    );
    Ok(Report {
        json: json!({ "layout": l.to_string(), "size": l.size(), "span": span_json, "canonical": canonical.to_string() }),
        text,
    })
}

fn map(l: &Layout, shape: &Option<Shape>, index: &Option<Shape>) -> Result<Report, String> {
    let shape = shape.clone().map_or_else(|| vec![l.size()], |s| s.0);
    l.check_admits(&shape).map_err(err)?;
    let axes = l.axes();
    let show_coords = |cs: &[Coord]| {
        let each: Vec<String> = cs
            .iter()
            .map(|c| {
                format!(
                    "{{{}}}",
                    axes.iter()
                        .map(|a| format!("{a}: {}", c.get(a)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .collect();
        each.join(" ")
    };
    if let Some(Shape(idx)) = index {
        let cs = l.apply_multi(idx, &shape).map_err(err)?;
        let set: Vec<Value> = cs.iter().map(|c| coord_json(c, &axes)).collect();
        return Ok(Report {
            json: json!({ "layout": l.to_string(), "shape": shape, "index": idx, "coords": set }),
            text: format!("{idx:?} -> {}", show_coords(&cs)),
        });
    }
    let points = l.size().saturating_mul(l.replica_count());
    if points > MAP_LIMIT {
        return Err(format!(
            "{l} maps {} elements to {points} coordinates, more than the {MAP_LIMIT} printed at once; use --index",
            l.size()
        ));
    }
    let mut entries = Vec::new();
    let mut text = String::new();
    for x in 0..l.size() {
        let cs = l.apply(x).map_err(err)?;
        let idx = unflatten(x, &shape).map_err(err)?;
        text.push_str(&format!("{idx:?} -> {}\n", show_coords(&cs)));
        entries.push(Value::Array(
            cs.iter().map(|c| coord_json(c, &axes)).collect(),
        ));
    }
    Ok(Report {
        json: json!({ "layout": l.to_string(), "shape": shape, "map": entries }),
        text,
    })
}

pub fn run(verb: Verb) -> bool {
    match verb {
        Verb::Show { layouts, common } => {
            let layouts = if layouts.is_empty() {
                vec![TENSOR_CORE.to_string()]
            } else {
                layouts
            };
            emit(each(&layouts, show), common.json)
        }
        Verb::Map {
            layouts,
            shape,
            index,
            common,
        } => emit(each(&layouts, |l| map(l, &shape, &index)), common.json),
        Verb::Canon { layouts, common } => emit(
            each(&layouts, |l| {
                let c = l.canonicalize().map_err(err)?;
                let gc = l.satisfies_gap_condition().map_err(err)?;
                Ok(Report {
                    json: json!({ "canonical": c.to_string(), "gap_condition": gc }),
                    text: format!("{c}\ngap condition: {}", if gc { "holds" } else { "fails" }),
                })
            }),
            common.json,
        ),
        Verb::Equiv { a, b, common } => {
            // As cmp and diff: success only when every pair is equivalent.
            let all_equivalent = std::cell::Cell::new(true);
            let ok = emit(
                each_pair(&a, &b, |a, b| {
                    let eq = a.equivalent(b).map_err(err)?;
                    all_equivalent.set(all_equivalent.get() && eq);
                    Ok(Report {
                        json: json!({ "equivalent": eq }),
                        text: if eq { "equivalent" } else { "not equivalent" }.into(),
                    })
                }),
                common.json,
            );
            ok && all_equivalent.get()
        }
        Verb::Group {
            layouts,
            shape,
            common,
        } => emit(
            each(&layouts, |l| {
                let g = l.group(&shape.0).map_err(err)?;
                let blocks: Vec<[usize; 2]> = g.blocks.iter().map(|r| [r.start, r.end]).collect();
                let text_blocks: Vec<String> = (0..g.blocks.len())
                    .map(|i| {
                        let its: Vec<String> = g.block(i).iter().map(|it| it.to_string()).collect();
                        format!(
                            "  dim {i} ({}): {}",
                            shape.0[i],
                            if its.is_empty() {
                                "-".into()
                            } else {
                                its.join(" ")
                            }
                        )
                    })
                    .collect();
                Ok(Report {
                    json: json!({ "grouped": g.layout.to_string(), "blocks": blocks }),
                    text: format!("{}\n{}", g.layout, text_blocks.join("\n")),
                })
            }),
            common.json,
        ),
        Verb::Tile {
            inner,
            outer,
            inner_shape,
            outer_shape,
            common,
        } => emit(
            each_pair(&inner, &outer, |a, b| {
                let (t, shape) = a.tile(b, &inner_shape.0, &outer_shape.0).map_err(err)?;
                Ok(layout_and_shape("layout", &t, &shape))
            }),
            common.json,
        ),
        Verb::TileOf {
            tiled,
            part,
            tiled_shape,
            inner_shape,
            outer,
            outer_shape,
            common,
        } => emit(
            each_pair(&tiled, &part, |t, p| {
                if outer {
                    let os = outer_shape.as_ref().map_or(&[][..], |s| &s.0);
                    let (a, shape) = t.tile_of_outer(p, &tiled_shape.0, os).map_err(err)?;
                    Ok(layout_and_shape("inner", &a, &shape))
                } else {
                    let is = inner_shape.as_ref().map_or(&[][..], |s| &s.0);
                    let (b, shape) = t.tile_of(p, &tiled_shape.0, is).map_err(err)?;
                    Ok(layout_and_shape("outer", &b, &shape))
                }
            }),
            common.json,
        ),
        Verb::Slice {
            layouts,
            shape,
            region,
            common,
        } => emit(
            each(&layouts, |l| {
                let s = l.slice(&shape.0, &region.0).map_err(err)?;
                let sh: Vec<u64> = region
                    .0
                    .iter()
                    .map(|r| r.end.saturating_sub(r.start))
                    .collect();
                Ok(layout_and_shape("layout", &s, &sh))
            }),
            common.json,
        ),
        Verb::Sum {
            a,
            b,
            a_shape,
            b_shape,
            common,
        } => emit(
            each_pair(&a, &b, |a, b| {
                let (s, shape) = a.direct_sum(b, &a_shape.0, &b_shape.0).map_err(err)?;
                Ok(layout_and_shape("layout", &s, &shape))
            }),
            common.json,
        ),
    }
}

fn layout_and_shape(key: &str, l: &Layout, shape: &[u64]) -> Report {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    Report {
        json: json!({ key: l.to_string(), "shape": shape }),
        text: format!("{l}\nshape: ({})", dims.join(", ")),
    }
}
