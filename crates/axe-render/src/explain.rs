//! A layout's facts in plain words: each field and what it does here, the padded shape and tile grid,
//! the bytes and padding, the Axe form, the numpy recipe, and a grid of memory offsets.

use std::fmt::Write;

use axe_layout::{AxisKind, Layout};
use axe_xla::{numpy_program, sizes, to_axe, ArrayShape, Sizes, TileDim, Tiling};

use crate::axe::axe_picture;
use crate::error::Result;
use crate::memory::memory_picture;
use crate::picture::Picture;
use crate::replicas::Replicas;
use crate::text::to_text;

/// Everything `axe explain` says about an input.
#[derive(Clone, Debug)]
pub struct Explanation {
    /// The input, printed canonically.
    pub title: String,
    /// The facts, in reading order.
    pub fields: Vec<Field>,
    /// Sizes in bytes (XLA inputs).
    pub sizes: Option<Sizes>,
    /// The Axe form and its padded shape (XLA inputs that have one).
    pub axe: Option<(String, Vec<u64>)>,
    /// The numpy program (XLA inputs).
    pub numpy: Option<String>,
    /// The picture of the layout.
    pub picture: Picture,
}

/// One fact of an explanation: its label in the text report (`tile (2,2)`), its key in JSON, fixed
/// whatever the input (`tiles`), what the label names that varies with the input (`(2,2)`), and what it
/// means here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// The label the text report shows.
    pub label: String,
    /// The JSON key: one of a fixed set, the same for every input.
    pub key: &'static str,
    /// What the label names that varies with the input (a tile, an axis, a number), or `None` when the
    /// label is the key itself.
    pub of: Option<String>,
    /// What the fact means here.
    pub text: String,
}

impl Field {
    /// A fact whose label is its key.
    pub fn plain(key: &'static str, text: String) -> Field {
        Field {
            label: key.to_string(),
            key,
            of: None,
            text,
        }
    }

    /// A fact about `of` (a tile, an axis, a number), labelled `label` in text and keyed `key` in JSON.
    fn about(label: String, key: &'static str, of: String, text: String) -> Field {
        Field {
            label,
            key,
            of: Some(of),
            text,
        }
    }
}

/// The JSON keys of facts that name something varying (`of`): each holds a list of `{of, text}`.
pub const LISTED_KEYS: [&str; 7] = [
    "tiles",
    "tail padding alignment",
    "element size in bits",
    "memory space",
    "split configs",
    "dynamic shape metadata bytes",
    "axes",
];

fn plural(n: i64, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

fn dims_text(d: &[i64]) -> String {
    format!(
        "[{}]",
        d.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn times(d: &[i64]) -> String {
    d.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("×")
}

fn memory_space(s: i64) -> &'static str {
    match s {
        0 => "the default memory (device HBM)",
        1 => "fast memory (on TPU: VMEM)",
        5 => "host memory",
        6 => "unpinned host memory",
        _ => "a device-specific memory",
    }
}

/// Explains an XLA array shape with its layout.
pub fn explain_xla(a: &ArrayShape) -> Result<Explanation> {
    let tiling = Tiling::new(a)?;
    let l = &a.layout;
    let dims = &tiling.logical;
    let mut f: Vec<Field> = Vec::new();
    let ty = a.element_type;
    f.push(Field::plain(
        "element type",
        format!(
            "{ty}: {} bits, stored in {} each",
            ty.bits(),
            plural(i64::from(ty.byte_width()), "byte")
        ),
    ));
    let n: i64 = dims.iter().product();
    f.push(Field::plain(
        "dimensions",
        format!("{} = {}", dims_text(dims), plural(n, "element")),
    ));
    let order: Vec<String> = l.minor_to_major.iter().map(|d| d.to_string()).collect();
    let physical: Vec<i64> = tiling.physical.iter().map(|&d| dims[d]).collect();
    let style = if l
        .minor_to_major
        .iter()
        .rev()
        .copied()
        .eq(0..l.minor_to_major.len() as i64)
    {
        " (row-major)"
    } else if l
        .minor_to_major
        .iter()
        .copied()
        .eq(0..l.minor_to_major.len() as i64)
        && l.minor_to_major.len() > 1
    {
        " (column-major)"
    } else {
        ""
    };
    if !dims.is_empty() {
        f.push(Field::plain(
            "minor_to_major",
            format!(
                "{{{}}}: dimension {} varies fastest{style}; in memory order, major to minor, the dimensions are {} of sizes {}",
                order.join(","),
                l.minor_to_major[0],
                tiling.physical.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", "),
                dims_text(&physical)
            ),
        ));
    }
    let mut shape = physical.clone();
    for (k, tile) in l.tiles.iter().enumerate() {
        let sizes: Vec<String> = tile.0.iter().map(|d| d.to_string()).collect();
        let covered = tile.0.len().min(shape.len());
        let what = if k == 0 { "the" } else { "then the" };
        let combined = tile.0.iter().filter(|d| **d == TileDim::Combined).count();
        let mut text = format!(
            "{what} last {} dimensions of {} are cut into {} tiles",
            tile.0.len(),
            dims_text(&shape),
            sizes.join("×")
        );
        if tile.0.len() > shape.len() {
            text.push_str(&format!(
                " (the shape is first extended with {} leading 1s)",
                tile.0.len() - shape.len()
            ));
        }
        if combined > 0 {
            text.push_str(&format!(
                " after combining {combined} '*' dimension(s) into the next more minor one"
            ));
        }
        if k == 0 {
            text.push_str("; tiles are stored one after another in row-major order, the elements of each tile row-major inside it");
        } else if covered > 0 {
            text.push_str(
                " (a later tile rearranges the expanded shape: within tiles, or across them)",
            );
        }
        let label = if k == 0 {
            format!("tile {}", tile)
        } else {
            format!("then {}", tile)
        };
        f.push(Field::about(label, "tiles", tile.to_string(), text));
        shape = tiling_shape_after(&tiling, k);
    }
    if l.tail_padding_alignment_in_elements != 1 {
        f.push(Field::about(
            format!("L({})", l.tail_padding_alignment_in_elements),
            "tail padding alignment",
            l.tail_padding_alignment_in_elements.to_string(),
            format!(
                "the element count is rounded up to a multiple of {}",
                l.tail_padding_alignment_in_elements
            ),
        ));
    }
    if l.element_size_in_bits != 0 {
        f.push(Field::about(
            format!("E({})", l.element_size_in_bits),
            "element size in bits",
            l.element_size_in_bits.to_string(),
            format!(
                "elements are packed {} bits apart (element i starts at bit i×{})",
                l.element_size_in_bits, l.element_size_in_bits
            ),
        ));
    }
    if l.memory_space != 0 {
        f.push(Field::about(
            format!("S({})", l.memory_space),
            "memory space",
            l.memory_space.to_string(),
            format!(
                "the array lives in memory space {}: {}",
                l.memory_space,
                memory_space(l.memory_space)
            ),
        ));
    }
    for c in &l.split_configs {
        f.push(Field::about(
            format!("SC({}:...)", c.dimension),
            "split configs",
            c.dimension.to_string(),
            format!(
                "physical dimension {} is split at {:?}",
                c.dimension, c.split_indices
            ),
        ));
    }
    if l.dynamic_shape_metadata_prefix_bytes > 0 {
        f.push(Field::about(
            format!("M({})", l.dynamic_shape_metadata_prefix_bytes),
            "dynamic shape metadata bytes",
            l.dynamic_shape_metadata_prefix_bytes.to_string(),
            format!(
                "{} bytes of dynamic-shape metadata come before the data",
                l.dynamic_shape_metadata_prefix_bytes
            ),
        ));
    }
    let expanded = tiling.expanded.clone();
    let z = sizes(a)?;
    let form_or_why = to_axe(a);
    let why_none = form_or_why.as_ref().err().map(|e| e.to_string());
    let form = form_or_why.ok();
    if let Some(form) = &form {
        let padded: Vec<i64> = form.padded_shape.iter().map(|&p| p as i64).collect();
        f.push(Field::plain(
            "padded shape",
            if padded == *dims {
                format!("{}: no dimension needs padding", dims_text(dims))
            } else {
                format!("{} rounded up to {}", dims_text(dims), dims_text(&padded))
            },
        ));
    }
    if let (Some(first), Some(tile)) = (tiling.shapes_after_tiles().first(), l.tiles.first()) {
        let rank = tile.0.iter().filter(|d| **d != TileDim::Combined).count();
        let count = first.len() - rank;
        let mut text = format!(
            "{} tiles of {}",
            times(&first[..count]),
            times(&first[count..])
        );
        if l.tiles.len() > 1 {
            text.push_str(&format!(
                "; after every tile, memory holds {} in row-major order",
                dims_text(&expanded)
            ));
        }
        f.push(Field::plain("tile grid", text));
    }
    let pct = if z.physical_bytes > 0 {
        100.0 * z.padding_bytes() as f64 / z.physical_bytes as f64
    } else {
        0.0
    };
    f.push(Field::plain(
        "bytes",
        format!(
            "logical {} B, XLA ArraySize {} B, physical {} B: {} B of padding ({pct:.1}% of the physical bytes){}",
            z.logical_bytes,
            z.xla_array_size_bytes,
            z.physical_bytes,
            z.padding_bytes(),
            if z.xla_array_size_bytes != z.physical_bytes {
                format!("; XLA's ArraySize {}", axe_xla::array_size_reasons(&a.layout).join(", "))
            } else {
                String::new()
            }
        ),
    ));
    match &form {
        Some(form) => f.push(Field::plain(
            "Axe form",
            format!(
                "{} over {:?}, the elements being [{}]",
                form.layout,
                form.padded_shape,
                form.region
                    .iter()
                    .map(|r| format!("{}:{}", r.start, r.end))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
        None => f.push(Field::plain(
            "Axe form",
            format!(
                "none over a padded box: {}",
                why_none.as_deref().unwrap_or("no Axe layout describes it")
            ),
        )),
    }
    Ok(Explanation {
        title: a.to_string(),
        fields: f,
        sizes: Some(z),
        axe: form.map(|f| (f.layout.to_string(), f.padded_shape)),
        numpy: numpy_program(a).ok(),
        picture: memory_picture(a)?,
    })
}

/// The expanded shape after tile `k`.
fn tiling_shape_after(t: &Tiling, k: usize) -> Vec<i64> {
    t.shapes_after_tiles()
        .get(k)
        .cloned()
        .unwrap_or_else(|| t.expanded.clone())
}

/// Explains an Axe layout over a shape.
pub fn explain_axe(l: &Layout, shape: &[u64]) -> Result<Explanation> {
    l.check_admits(shape)?;
    let mut f: Vec<Field> = Vec::new();
    f.push(Field::plain(
        "size",
        format!("{} elements, viewed as {:?}", l.size(), shape),
    ));
    for a in l.axes() {
        let register = matches!(a.to_string().as_str(), "reg" | "register" | "registers");
        let kind = match a.kind() {
            AxisKind::Memory if register => "registers (each thread's own storage)",
            AxisKind::Memory => "memory",
            AxisKind::Thread => "threads",
            AxisKind::Device => "devices",
        };
        f.push(Field::about(
            format!("axis {a}"),
            "axes",
            a.to_string(),
            format!("{kind}; the layout spans {} positions on it", l.span(&a)?),
        ));
    }
    let d: Vec<String> = l.shard().iter().map(|it| it.to_string()).collect();
    f.push(Field::plain(
        "shard D",
        format!(
            "{} iters; the index is written in their mixed radix, last fastest ({})",
            l.shard().len(),
            d.join(" ")
        ),
    ));
    if !l.replica().is_empty() {
        f.push(Field::plain(
            "replica R",
            format!("every element is held {}", Replicas::of(l)?.times()),
        ));
    }
    if !l.offset().is_zero() {
        f.push(Field::plain(
            "offset O",
            format!("{} is added to every coordinate", l.offset()),
        ));
    }
    let c = l.canonicalize()?;
    f.push(Field::plain("canonical", c.to_string()));
    match l.group(shape) {
        Ok(g) => f.push(Field::plain(
            "grouped",
            format!(
                "{} ({})",
                g.layout,
                (0..g.blocks.len())
                    .map(|i| format!("dim {i}: {} iters", g.blocks[i].len()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
        Err(e) => f.push(Field::plain(
            "grouped",
            format!("does not group by {shape:?}: {e}"),
        )),
    }
    Ok(Explanation {
        title: format!("{l} over {shape:?}"),
        fields: f,
        sizes: None,
        axe: None,
        numpy: None,
        picture: axe_picture(l, shape)?,
    })
}

/// The explanation as text (with ANSI colours when `colour`).
pub fn to_text_report(e: &Explanation, colour: bool) -> String {
    let (b, r) = if colour {
        ("\x1b[1m", "\x1b[0m")
    } else {
        ("", "")
    };
    let mut s = format!("{b}{}{r}\n\n", e.title);
    let w = e
        .fields
        .iter()
        .map(|f| f.label.chars().count())
        .max()
        .unwrap_or(0);
    for f in &e.fields {
        let (k, v) = (&f.label, &f.text);
        let _ = writeln!(s, "  {b}{k:<w$}{r}  {v}");
    }
    if let Some(p) = &e.numpy {
        let _ = writeln!(s, "\n{b}pad / reshape / transpose{r} (numpy)\n");
        for line in p.lines() {
            // (Blank lines stay empty: no trailing white space to copy along with the program.)
            if line.is_empty() {
                s.push('\n');
            } else {
                let _ = writeln!(s, "    {line}");
            }
        }
    }
    let _ = writeln!(s, "\n{b}picture{r}\n");
    for line in to_text(&e.picture, colour).lines().skip(1) {
        let _ = writeln!(s, "  {line}");
    }
    s
}
