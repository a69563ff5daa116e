//! `axe triton <verb>`: Triton linear layouts and Gluon layouts on the command line.

use axe_triton::gluon::{padded_offset, padded_size, parse_gluon, GluonLayout};
use axe_triton::{hardware_map, out_shape, parse_linear, triton_in_dims, LinearLayout};
use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};

use crate::input::{expand, pairs, several};
use crate::report::{emit, Report};

/// Layouts given one by one.
#[derive(Args)]
pub struct One {
    /// Linear layouts as JSON bases (`{"in": {"register": [[0,1]], ...}, "out": {"dim0": 32, ...}}`) or a
    /// `#ttg.linear<{...}>` attribute, or Gluon layouts (`BlockedLayout(...)` or a TTGIR attribute such as
    /// `#ttg.blocked<{...}>`, after any alias definitions, with --shape); `-` reads one per stdin line.
    #[arg(required = true)]
    layouts: Vec<String>,
    /// The tensor shape a Gluon layout covers (`32,16`).
    #[arg(long)]
    shape: Option<crate::input::Shape>,
    /// One JSON object per input.
    #[arg(long)]
    json: bool,
    /// List every input's coordinates in the text (by default the first 512; --json lists every one).
    #[arg(long)]
    all: bool,
}

/// Two linear layouts.
#[derive(Args)]
pub struct Two {
    /// The layout A (`-`: one per stdin line; `- -`: `A ; B` per line).
    a: String,
    /// The layout B.
    b: String,
    /// The tensor shape Gluon layouts cover (`32,16`).
    #[arg(long)]
    shape: Option<crate::input::Shape>,
    /// One JSON object per pair.
    #[arg(long)]
    json: bool,
    /// List every input's coordinates in the text (by default the first 512; --json lists every one).
    #[arg(long)]
    all: bool,
}

#[derive(Subcommand)]
pub enum Verb {
    /// In- and out-dims, the bases as JSON and as a `#ttg.linear` attribute (where one stands for the
    /// layout), injectivity, surjectivity, the Axe form, and the out coordinates of every flat input (first
    /// in-dim fastest; for Gluon layouts register, lane, warp, block). A Gluon layout over a
    /// shape Triton cannot lay out (not powers of two) gives its Axe layout alone.
    Show(One),
    /// Triton's `A.compose(B)`: B after A.
    Compose(Two),
    /// The Axe layout alone: tensor index to the hardware axes (reg/lane/warp/block, or the layout's
    /// other in-dims), for linear layouts and for Gluon layouts over any shape they tile (with --shape);
    /// refused with the reason where none exists (an XOR swizzle is not a sum of strides).
    ToAxe(One),
    /// The inverse of an invertible layout.
    Invert(One),
    /// A right inverse: A(A⁺(y)) = y.
    Pseudoinvert(One),
    /// Triton's `A.invertAndCompose(B)`: C with A(x) = B(C(x)).
    InvertAndCompose(Two),
    /// The linear layout of an Axe layout over reg/lane/warp/block (every extent a power of two).
    FromAxe {
        /// Axe layouts; `-` reads one per stdin line.
        #[arg(required = true)]
        layouts: Vec<String>,
        /// The tensor shape (`32,16`).
        #[arg(long)]
        shape: crate::input::Shape,
        /// One JSON object per input.
        #[arg(long)]
        json: bool,
        /// List every input's coordinates in the text (by default the first 512; --json lists every one).
        #[arg(long)]
        all: bool,
    },
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A linear layout from any accepted text; Gluon layouts need the shape.
fn linear(text: &str, shape: Option<&[u64]>) -> Result<LinearLayout, String> {
    let t = text.trim();
    if axe_triton::gluon::is_linear_text(t) {
        return parse_linear(t).map_err(err);
    }
    let g = parse_gluon(t).map_err(err)?;
    let shape = match (&g, shape) {
        (_, Some(s)) => s,
        // A padded shared layout carries its shape.
        (GluonLayout::PaddedShared { shape, .. }, None) => shape.as_slice(),
        _ => return Err("a Gluon layout needs the tensor shape: --shape 32,16".into()),
    };
    g.to_linear(shape).map_err(err)
}

/// The padding of a `PaddedSharedLayout`: its linear component's answer, with `axe` the placement in
/// padded memory and `padding` the pairs, the padded size and where each logical offset is stored.
fn padded(text: &str, ll: &LinearLayout, all: bool) -> Result<Option<Report>, String> {
    let t = text.trim();
    if axe_triton::gluon::is_linear_text(t) {
        return Ok(None);
    }
    let Ok(g) = parse_gluon(t) else {
        return Ok(None);
    };
    let GluonLayout::PaddedShared {
        interval_padding_pairs: pairs,
        ..
    } = &g
    else {
        return Ok(None);
    };
    let shape = out_shape(ll);
    let mut report = describe(ll, all)?;
    let axe = g.to_axe(&shape).map_err(err)?.to_string();
    let offsets = ll.in_dim_sizes().first().map_or(1, |(_, n)| *n);
    let stored: Vec<u64> = (0..offsets)
        .map(|o| padded_offset(pairs, o))
        .collect::<Result<_, _>>()
        .map_err(err)?;
    let size = padded_size(pairs, offsets).map_err(err)?;
    let pairs_text = pairs
        .iter()
        .map(|(i, p)| format!("{i}:+{p}"))
        .collect::<Vec<_>>()
        .join(", ");
    report.json["axe"] = json!(axe);
    report.json["logical_axe"] = json!(ll.to_axe().map(|a| a.to_string()).ok());
    report.json["padding"] = json!({
        "interval_padding_pairs": pairs.iter().map(|(i, p)| [*i, *p]).collect::<Vec<_>>(),
        "padded_size": size,
        "offsets": stored,
    });
    let mut lines: Vec<String> = report.text.lines().map(str::to_string).collect();
    for l in lines.iter_mut() {
        if l.starts_with("axe ") {
            *l = format!("axe         {axe}");
        }
    }
    let at = lines
        .iter()
        .position(|l| l.starts_with("axe "))
        .map_or(lines.len(), |k| k + 1);
    lines.insert(
        at,
        format!("padding     [{pairs_text}]: {offsets} offsets per CTA stored in {size}"),
    );
    report.text = lines.join("\n");
    Ok(Some(report))
}

/// `name=size` pairs, space-separated.
fn dims_text(dims: &[(String, u64)]) -> String {
    dims.iter()
        .map(|(n, s)| format!("{n}={s}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The map as text: a header naming the out-dims, then the out coordinates of every flat input, eight per
/// line, each line led by the flat input of its first entry.
/// Inputs the text lists without --all.
const TEXT_MAP: usize = 512;

/// The text of a map: each flat input's out coordinates, eight a line; the first [`TEXT_MAP`] unless
/// `all`, then how many there are.
fn map_text(map: &[Vec<u64>], in_dims: &[(String, u64)], out_dims: &[String], all: bool) -> String {
    let mut s = format!(
        "map         flat input ({}, first fastest) -> ({})",
        in_dims
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        out_dims.join(", ")
    );
    let shown = if all {
        map
    } else {
        &map[..map.len().min(TEXT_MAP)]
    };
    for (k, chunk) in shown.chunks(8).enumerate() {
        let cells: Vec<String> = chunk
            .iter()
            .map(|c| {
                let c: Vec<String> = c.iter().map(u64::to_string).collect();
                format!("({})", c.join(", "))
            })
            .collect();
        s.push_str(&format!("\n  {:>6}: {}", k * 8, cells.join(" ")));
    }
    if shown.len() < map.len() {
        s.push_str(&format!(
            "\n  ... {} inputs in all: --all lists every one (--json always does)",
            map.len()
        ));
    }
    s
}

/// The answer about one linear layout: its dims, map, properties, text forms and Axe form.
fn describe(ll: &LinearLayout, all: bool) -> Result<Report, String> {
    let dims = |d: Vec<(String, u64)>| -> Map<String, Value> {
        d.into_iter().map(|(n, s)| (n, json!(s))).collect()
    };
    let map = ll.map().map_err(err)?;
    let axe = ll.to_axe().map(|a| a.to_string()).map_err(err);
    let ttg = ll.ttg().map_err(err);
    let mut json = json!({
        "in_dims": dims(ll.in_dim_sizes()),
        "out_dims": dims(ll.out_dims().to_vec()),
        "map": map,
        "injective": ll.is_injective(),
        "surjective": ll.is_surjective(),
        "axe": axe.as_ref().ok(),
        "linear": ll.to_json(),
        "ttg": ttg.as_ref().ok(),
    });
    if let Err(why) = &axe {
        json["axe_why"] = json!(why);
    }
    if let Err(why) = &ttg {
        json["ttg_why"] = json!(why);
    }
    let out_names: Vec<String> = ll.out_dims().iter().map(|(n, _)| n.clone()).collect();
    let text = format!(
        "in dims     {}\nout dims    {}\nlinear      {}\nttg         {}\ninjective   {}\nsurjective  {}\naxe         {}\n{}",
        dims_text(&ll.in_dim_sizes()),
        dims_text(ll.out_dims()),
        ll.to_json(),
        ttg.unwrap_or_else(|why| format!("- ({why})")),
        ll.is_injective(),
        ll.is_surjective(),
        axe.unwrap_or_else(|why| format!("- ({why})")),
        map_text(&map, &ll.in_dim_sizes(), &out_names, all)
    );
    Ok(Report { json, text })
}

/// The Axe layout of a Gluon layout over a shape Triton cannot lay out, with its hardware map.
fn gluon_beyond_triton(
    text: &str,
    shape: &[u64],
    why: String,
    all: bool,
) -> Result<Report, String> {
    let g = parse_gluon(text.trim()).map_err(err)?;
    let axe = g.to_axe(shape).map_err(err)?;
    let hw = hardware_map(&axe, shape, &["register", "lane", "warp", "block"]).map_err(err)?;
    let out: Vec<(String, u64)> = shape
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("dim{i}"), *s))
        .collect();
    let out_dims: Map<String, Value> = out.iter().map(|(n, s)| (n.clone(), json!(s))).collect();
    let in_dims: Map<String, Value> = hw
        .in_dims
        .iter()
        .map(|(n, s)| (n.clone(), json!(s)))
        .collect();
    let injective = hw.map.len() as u64 == axe.size();
    let out_names: Vec<String> = out.iter().map(|(n, _)| n.clone()).collect();
    Ok(Report {
        json: json!({
            "in_dims": in_dims, "out_dims": out_dims, "map": hw.map,
            "injective": injective, "surjective": true,
            "axe": axe.to_string(), "linear": null, "linear_why": why,
        }),
        text: format!(
            "in dims     {}\nout dims    {}\nlinear      - ({why})\ninjective   {injective}\nsurjective  true\naxe         {axe}\n{}",
            dims_text(&hw.in_dims),
            dims_text(&out),
            map_text(&hw.map, &hw.in_dims, &out_names, all)
        ),
    })
}

fn show(text: &str, shape: Option<&[u64]>, all: bool) -> Result<Report, String> {
    match linear(text, shape) {
        Ok(ll) => match padded(text, &ll, all)? {
            Some(report) => Ok(report),
            None => describe(&ll, all),
        },
        Err(why) => {
            // A Gluon layout Triton cannot lay out may still have an Axe form.
            let (Ok(_), Some(shape)) = (parse_gluon(text.trim()), shape) else {
                return Err(why);
            };
            gluon_beyond_triton(text, shape, why, all)
        }
    }
}

/// The Axe layout alone: from tensor index to the hardware axes `reg`/`lane`/`warp`/`block` (or the
/// layout's other in-dims), for linear layouts and for Gluon layouts over any shape they tile.
fn to_axe(text: &str, shape: Option<&[u64]>, _all: bool) -> Result<Report, String> {
    let axe = match linear(text, shape) {
        Ok(ll) => match parse_gluon(text.trim()) {
            // The placement in padded memory, not the logical offsets.
            Ok(g @ GluonLayout::PaddedShared { .. }) => g.to_axe(&out_shape(&ll)).map_err(err)?,
            _ => ll.to_axe().map_err(err)?,
        },
        Err(why) => {
            let (Ok(g), Some(shape)) = (parse_gluon(text.trim()), shape) else {
                return Err(why);
            };
            g.to_axe(shape).map_err(err)?
        }
    };
    Ok(Report {
        json: json!({ "axe": axe.to_string() }),
        text: axe.to_string(),
    })
}

fn each(one: One, f: impl Fn(&str, Option<&[u64]>, bool) -> Result<Report, String>) -> bool {
    let label = several(&one.layouts);
    let shape = one.shape.map(|s| s.0);
    emit(
        expand(&one.layouts).map(|item| {
            let input = item.as_ref().ok().cloned();
            (
                input.filter(|_| label),
                item.and_then(|t| f(&t, shape.as_deref(), one.all)),
            )
        }),
        one.json,
    )
}

fn each_pair(
    two: Two,
    f: impl Fn(&LinearLayout, &LinearLayout) -> Result<LinearLayout, String>,
) -> bool {
    let label = two.a == "-" || two.b == "-";
    let shape = two.shape.map(|s| s.0);
    emit(
        pairs(&two.a, &two.b).map(|item| {
            let input = item.as_ref().ok().map(|(a, b)| format!("{a} ; {b}"));
            let r = item.and_then(|(a, b)| {
                let a = linear(&a, shape.as_deref())?;
                let b = linear(&b, shape.as_deref())?;
                describe(&f(&a, &b)?, two.all)
            });
            (input.filter(|_| label), r)
        }),
        two.json,
    )
}

pub fn run(verb: Verb) -> bool {
    match verb {
        Verb::Show(one) => each(one, show),
        Verb::ToAxe(one) => each(one, to_axe),
        Verb::Compose(two) => each_pair(two, |a, b| a.compose(b).map_err(err)),
        Verb::Invert(one) => each(one, |t, s, all| {
            describe(&linear(t, s)?.invert().map_err(err)?, all)
        }),
        Verb::Pseudoinvert(one) => each(one, |t, s, all| {
            describe(&linear(t, s)?.pseudoinvert().map_err(err)?, all)
        }),
        Verb::InvertAndCompose(two) => each_pair(two, |a, b| a.invert_and_compose(b).map_err(err)),
        Verb::FromAxe {
            layouts,
            shape,
            json,
            all,
        } => {
            let label = several(&layouts);
            emit(
                expand(&layouts).map(|item| {
                    let input = item.as_ref().ok().cloned();
                    let r = item.and_then(|t| {
                        let l: axe_layout::Layout = t.parse().map_err(err)?;
                        let ll = LinearLayout::from_axe(&l, &shape.0, triton_in_dims(&l))
                            .map_err(err)?;
                        describe(&ll, all)
                    });
                    (input.filter(|_| label), r)
                }),
                json,
            )
        }
    }
}
