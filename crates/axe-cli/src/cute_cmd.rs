//! `axe cute <verb>`: CuTe layouts and their algebra on the command line.

use axe_cute::{AnyLayout, ComposedLayout, IntTuple, Layout, Swizzle, Tiler};
use clap::{Args, Subcommand};
use serde_json::{json, Value};

use crate::input::{expand, pairs, several};
use crate::report::{emit, Report};

/// The most offsets `axe cute show` lists in its map (the layout's size may be larger).
const MAP_LIMIT: i64 = 1 << 20;

/// Layouts given one by one.
#[derive(Args)]
pub struct One {
    /// Layouts as CuTe prints them (`((2,4),8):((1,16),2)`, `Sw<3,3,3> o 0 o (8,64):(64,1)`); `-` reads one
    /// per stdin line.
    #[arg(required = true)]
    layouts: Vec<String>,
    /// One JSON object per input ({"result"} or {"error"}).
    #[arg(long)]
    json: bool,
}

/// A layout and a tiler.
#[derive(Args)]
pub struct Two {
    /// The layout A (`-`: one per stdin line; `- -`: `A ; B` per line).
    a: String,
    /// The tiler B, as CuTe takes it: a layout (`4:2`), a by-mode tiler `<L0, L1, ...>`, or a shape alone,
    /// which is CuTe's tuple tiler by mode and recursively (`(2,(2,3))` is `<2:1,<2:1,3:1>>`; write the
    /// stride, `(2,4):(1,2)`, for one layout).
    b: String,
    /// One JSON object per pair ({"result"} or {"error"}).
    #[arg(long)]
    json: bool,
}

/// Two layouts (the blocked and raked products, which CuTe defines on layouts only).
#[derive(Args)]
pub struct TwoLayouts {
    /// The layout A (`-`: one per stdin line; `- -`: `A ; B` per line).
    a: String,
    /// The layout B: a layout only, as in CuTe (no by-mode tiler `<...>`); a shape alone is its compact
    /// column-major layout (`(3,4)` is `(3,4):(1,3)`).
    b: String,
    /// One JSON object per pair ({"result"} or {"error"}).
    #[arg(long)]
    json: bool,
}

impl From<TwoLayouts> for Two {
    fn from(t: TwoLayouts) -> Two {
        Two {
            a: t.a,
            b: t.b,
            json: t.json,
        }
    }
}

/// Axe layouts given one by one (the input of `from-axe`).
#[derive(Args)]
pub struct AxeInputs {
    /// Axe layouts on one axis (`S[(8,4,2):(2,16,1)]`), or with --tv a tile's layout onto tid/val
    /// (`S[(2,2,2,4):(2@val,1@tid,1@val,2@tid)]`); `-` reads one per stdin line.
    #[arg(required = true)]
    layouts: Vec<String>,
    /// One JSON object per input ({"result"} or {"error"}).
    #[arg(long)]
    json: bool,
}

impl From<AxeInputs> for One {
    fn from(a: AxeInputs) -> One {
        One {
            layouts: a.layouts,
            json: a.json,
        }
    }
}

#[derive(Subcommand)]
pub enum Verb {
    /// Size, cosize, rank, depth, the offset of every 1-D index (colexicographic), and the Axe form.
    ///
    /// A bare swizzle (`Sw<3,3,3>`) is shown as the bits it reads and writes, its size 2^(B+M+|S|)
    /// and its value at each offset below that.
    Show {
        #[command(flatten)]
        one: One,
        /// The most offsets listed in the map (at most 1,048,576).
        #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(i64).range(0..=MAP_LIMIT))]
        max_map: i64,
    },
    /// Fewest modes, same map (`coalesce`).
    Coalesce(One),
    /// The stride-0 and extent-1 modes removed, then coalesced (`filter`).
    Filter(One),
    /// A ∘ B: B's offsets fed to A.
    ///
    /// A may be a swizzle, as in CuTe: Sw ∘ Sw2 is one swizzle where one exists (else refused), Sw ∘ L
    /// is `Sw o 0 o L`, and Sw ∘ (Sw2 o off o L) is `(Sw ∘ Sw2) o off o L`.
    Composition(Two),
    /// CuTe's complement of A up to a bound M: what fills in around A's values.
    ///
    /// R is increasing, meets A's values only at 0, and has size(R) >= M / size(filter(A)) and
    /// cosize((A, R)) >= M; a construction that breaks one of these is refused, naming it. When A's
    /// strides, sorted, are each a multiple of the span of the smaller leaves, (filter(A), R) covers
    /// 0..N once for some N >= M; otherwise it leaves gaps (the complement of (4,6):(1,6) is 1:0).
    Complement {
        #[command(flatten)]
        one: One,
        /// The cosize bound M, at least 1 (default: A's cosize).
        #[arg(long)]
        bound: Option<i64>,
    },
    /// R with A(R(i)) = i on R's domain, by CuTe's construction.
    ///
    /// A's leaves are taken in stride order while each stride is the product reached so far. For an
    /// injective A no longer R exists; for a non-injective A one may: (4,2):(1,2) gives 4:1, though
    /// (3,2):(1,5) also satisfies the law.
    RightInverse(One),
    /// L with L(A(i)) = i on A's domain; for a non-injective A, a generalised inverse (A(L(A(i))) =
    /// A(i), CuTe's where it obeys that; noted as not a true inverse) unless --strict.
    LeftInverse {
        #[command(flatten)]
        one: One,
        /// Refuse a non-injective layout (no true left inverse exists) instead of answering with a
        /// generalised inverse.
        #[arg(long)]
        strict: bool,
    },
    /// A ∘ (B, complement(B)): A's elements grouped by the tiles of B.
    LogicalDivide(Two),
    /// The logical divide with tiles and rest gathered: ((tile), (rest)).
    ZippedDivide(Two),
    /// The zipped divide with the rest's modes flattened.
    TiledDivide(Two),
    /// The zipped divide with every mode flattened.
    FlatDivide(Two),
    /// (A, complement(A) ∘ B): A repeated over B.
    LogicalProduct(Two),
    /// The logical product with A and the repeats gathered.
    ZippedProduct(Two),
    /// The zipped product with the repeats' modes flattened.
    TiledProduct(Two),
    /// The zipped product with every mode flattened.
    FlatProduct(Two),
    /// A repeated over B, mode by mode, A's modes minor: blocks of A.
    BlockedProduct(TwoLayouts),
    /// A repeated over B, mode by mode, B's modes minor: A's elements interleaved.
    RakedProduct(TwoLayouts),
    /// The Axe layout of a CuTe layout (one axis, modes reversed); with --tv, a (thread, value) → index
    /// layout as the tile's layout onto tid/val.
    ToAxe {
        #[command(flatten)]
        one: One,
        /// Read the layout as a TV layout ((thread, value) → tile index).
        #[arg(long)]
        tv: bool,
    },
    /// The CuTe layout of an Axe layout on one axis (or of a tile on tid/val, with --tv).
    FromAxe {
        #[command(flatten)]
        one: AxeInputs,
        /// The CuTe shape to give it (`(4,(2,3))`); default: one mode per iter.
        #[arg(long)]
        shape: Option<String>,
        /// Read a tile's layout onto tid/val and give its TV layout.
        #[arg(long)]
        tv: bool,
    },
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A plain layout; a swizzled one is refused for what it is (not affine), not as a parse error.
fn layout(text: &str) -> Result<Layout, String> {
    text.parse::<Layout>()
        .map_err(|e| match text.parse::<AnyLayout>() {
            Ok(AnyLayout::Composed(c)) => format!(
                "{c} is swizzled, so not affine: this takes plain layouts (shape:stride); \
             `axe cute show` lists a swizzled layout's offsets and `axe render` draws it"
            ),
            _ => err(e),
        })
}

fn answer(l: Result<Layout, String>) -> Result<Report, String> {
    l.map(|l| {
        let s = l.to_string();
        Report {
            json: json!({"result": s}),
            text: s,
        }
    })
}

/// The bits `mask` covers, as `lo–hi` (one contiguous run: a swizzle's masks are).
fn bit_range(mask: u64) -> String {
    let (lo, hi) = (mask.trailing_zeros(), 63 - mask.leading_zeros());
    if lo == hi {
        format!("bit {lo}")
    } else {
        format!("bits {lo}–{hi}")
    }
}

/// A bare swizzle: the bits it reads and writes, its span and its values on the first offsets.
fn show_swizzle(sw: Swizzle, max_map: i64) -> Result<Report, String> {
    let (yyy, zzz) = sw.masks();
    let size = sw.size();
    let n = i64::try_from(size).unwrap_or(i64::MAX).min(max_map);
    let map: Vec<i64> = (0..n)
        .map(|x| sw.apply(x))
        .collect::<axe_cute::Result<_>>()
        .map_err(err)?;
    let does = if yyy == 0 {
        "nothing: the identity".to_string()
    } else {
        format!(
            "XORs {} (mask {yyy:#x}) into {} (mask {zzz:#x}); applied twice it is the identity",
            bit_range(yyy),
            bit_range(zzz)
        )
    };
    let mut json = json!({"swizzle": sw.to_string(), "yyy_mask": yyy, "zzz_mask": zzz, "size": size,
        "map": map});
    if (n as u64) < size {
        json["map_truncated"] = json!(true);
    }
    let shown: Vec<String> = map.iter().take(64).map(i64::to_string).collect();
    let text = format!(
        "swizzle {sw}\ndoes    {does}\nsize    {size} (2^(B+M+|S|), as CuTe's size())\naxe     - (a swizzle is not affine: it has no Axe form)\nmap     [{}{}]",
        shown.join(", "),
        if size > 64 { format!(", … ({size} in all; --json lists {n})") } else { String::new() }
    );
    Ok(Report { json, text })
}

fn show(text: &str, max_map: i64) -> Result<Report, String> {
    if let Ok(sw) = text.trim().parse::<Swizzle>() {
        return show_swizzle(sw, max_map);
    }
    let any: AnyLayout = text.parse().map_err(err)?;
    let size = any.size();
    let l = any.layout();
    let n = size.min(max_map);
    let map: Vec<i64> = (0..n)
        .map(|i| any.eval(i))
        .collect::<axe_cute::Result<_>>()
        .map_err(err)?;
    let cosize = match &any {
        AnyLayout::Plain(l) => l.cosize().map_err(err)?,
        AnyLayout::Composed(_) if size <= MAP_LIMIT => (0..size)
            .map(|i| any.eval(i))
            .try_fold(0i64, |m, v| Ok::<i64, axe_cute::CuteError>(m.max(v? + 1)))
            .map_err(err)?,
        AnyLayout::Composed(_) => -1,
    };
    let axe = match &any {
        AnyLayout::Plain(l) => l.to_axe().map(|a| a.to_string()).map_err(err),
        AnyLayout::Composed(_) => {
            Err("a swizzled layout is not affine: it has no Axe form".to_string())
        }
    };
    let mut json = json!({"layout": any.to_string(), "size": size, "rank": l.rank(), "depth": l.depth(),
        "map": map, "axe": axe.as_ref().ok()});
    json["cosize"] = if cosize >= 0 {
        json!(cosize)
    } else {
        Value::Null
    };
    if let Err(why) = &axe {
        json["axe_why"] = json!(why);
    }
    if n < size {
        json["map_truncated"] = json!(true);
    }
    let shown: Vec<String> = map.iter().take(64).map(i64::to_string).collect();
    let text = format!(
        "layout  {any}\nsize    {size}\ncosize  {}\nrank    {}\ndepth   {}\naxe     {}\nmap     [{}{}]",
        if cosize >= 0 { cosize.to_string() } else { "-".into() },
        l.rank(),
        l.depth(),
        axe.unwrap_or_else(|why| format!("- ({why})")),
        shown.join(", "),
        if size > 64 { format!(", … ({size} in all; --json lists {n})") } else { String::new() }
    );
    Ok(Report { json, text })
}

fn each(one: One, f: impl Fn(&str) -> Result<Report, String>) -> bool {
    let label = several(&one.layouts);
    emit(
        expand(&one.layouts).map(|item| {
            let input = item.as_ref().ok().cloned();
            (input.filter(|_| label), item.and_then(|t| f(&t)))
        }),
        one.json,
    )
}

fn each_pair(two: Two, f: impl Fn(&Layout, &str) -> Result<Layout, String>) -> bool {
    let label = two.a == "-" || two.b == "-";
    emit(
        pairs(&two.a, &two.b).map(|item| {
            let input = item.as_ref().ok().map(|(a, b)| format!("{a} ; {b}"));
            let r = item.and_then(|(a, b)| answer(layout(&a).and_then(|a| f(&a, &b))));
            (input.filter(|_| label), r)
        }),
        two.json,
    )
}

/// The left inverse, with a note when it is only a generalised inverse (a non-injective layout).
fn left_inverse(text: &str, strict: bool) -> Result<Report, String> {
    let l = layout(text)?;
    if strict {
        return answer(axe_cute::left_inverse_strict(&l).map_err(err));
    }
    let r = axe_cute::left_inverse(&l).map_err(err)?.to_string();
    if axe_cute::is_true_left_inverse(&l).map_err(err)? {
        return Ok(Report {
            json: json!({"result": r}),
            text: r,
        });
    }
    let note = "not a true inverse: the layout is not injective; L(R(L(i))) = L(i) holds (--strict refuses)";
    Ok(Report {
        json: json!({"result": r, "generalised": true, "note": note}),
        text: format!("{r}\nnote: {note}"),
    })
}

/// Like `each_pair`, for operators that also take a swizzled A (the swizzle kept outermost).
fn each_any_pair(two: Two, f: impl Fn(&Layout, &str) -> Result<Layout, String>) -> bool {
    let label = two.a == "-" || two.b == "-";
    emit(
        pairs(&two.a, &two.b).map(|item| {
            let input = item.as_ref().ok().map(|(a, b)| format!("{a} ; {b}"));
            let r = item.and_then(|(a, b)| {
                if let Ok(sw) = a.trim().parse::<Swizzle>() {
                    return swizzle_first(sw, &b);
                }
                if let Ok(sw) = b.trim().parse::<Swizzle>() {
                    return Err(format!(
                        "A ∘ {sw} is no CuTe layout: a swizzle composes on the left only ({sw} ∘ A is `{sw} o 0 o A`)"
                    ));
                }
                let s = match a.parse::<AnyLayout>().map_err(err)? {
                    AnyLayout::Plain(l) => f(&l, &b)?.to_string(),
                    AnyLayout::Composed(c) => {
                        ComposedLayout::new(c.swizzle, c.offset, f(&c.layout, &b)?).to_string()
                    }
                };
                Ok(Report {
                    json: json!({"result": s}),
                    text: s,
                })
            });
            (input.filter(|_| label), r)
        }),
        two.json,
    )
}

/// `Sw ∘ B` as CuTe composes a swizzle on the left: with a swizzle, one swizzle where one does it
/// ([`Swizzle::compose`]); with a layout `L`, `Sw o 0 o L`; with `Sw2 o off o L`, `(Sw ∘ Sw2) o off o L`.
fn swizzle_first(sw: Swizzle, b: &str) -> Result<Report, String> {
    let s = if let Ok(sw2) = b.trim().parse::<Swizzle>() {
        sw.compose(&sw2).map_err(err)?.to_string()
    } else {
        match b
            .parse::<AnyLayout>()
            .map_err(|e| format!("{sw} ∘ B takes a swizzle or a layout B (not a tiler): {e}"))?
        {
            AnyLayout::Plain(l) => ComposedLayout::new(sw, 0, l).to_string(),
            AnyLayout::Composed(c) => {
                ComposedLayout::new(sw.compose(&c.swizzle).map_err(err)?, c.offset, c.layout)
                    .to_string()
            }
        }
    };
    Ok(Report {
        json: json!({"result": s}),
        text: s,
    })
}

fn tiler(b: &str) -> Result<Tiler, String> {
    b.parse::<Tiler>().map_err(err)
}

/// Layouts `A M` where `M` is a bare integer: CuTe's `complement(A, M)` typed the CuTe way, which the
/// verb would read as two layouts to complement; the first such pair, where there is one.
fn bare_bound(layouts: &[String]) -> Option<(String, String)> {
    layouts.windows(2).find_map(|w| {
        let m = w[1].trim();
        (m.parse::<i64>().is_ok() && !w[0].trim().chars().all(|c| c.is_ascii_digit()))
            .then(|| (w[0].clone(), m.to_string()))
    })
}

/// Operand B of an operator CuTe defines on layouts only: a by-mode tiler is refused, naming the operator.
fn layout_operand(op: &str, b: &str) -> Result<Layout, String> {
    if b.trim_start().starts_with('<') {
        return Err(format!(
            "{op}: B = {b} is a by-mode tiler, but {op} takes a layout B, as in CuTe (write one layout, \
             e.g. (2,3):(1,2); `axe cute zipped-product` and `tiled-product` take tilers)"
        ));
    }
    layout(b)
}

pub fn run(verb: Verb) -> bool {
    use axe_cute as c;
    match verb {
        Verb::Show { one, max_map } => each(one, |t| show(t, max_map)),
        Verb::Filter(one) => each(one, |t| answer(layout(t)?.filter().map_err(err))),
        Verb::Coalesce(one) => each(one, |t| {
            let any: AnyLayout = t.parse().map_err(err)?;
            let s = any.map_inner(Layout::coalesce).map_err(err)?.to_string();
            Ok(Report {
                json: json!({"result": s}),
                text: s,
            })
        }),
        Verb::Composition(two) => {
            each_any_pair(two, |a, b| c::composition_tiler(a, &tiler(b)?).map_err(err))
        }
        Verb::Complement { one, bound }
            if bound.is_none() && bare_bound(&one.layouts).is_some() =>
        {
            let (a, m) = bare_bound(&one.layouts).unwrap_or_default();
            eprintln!(
                "error: `{m}` after {a} reads as a second layout ({m}:1), not a bound: CuTe's \
                 complement(A, {m}) is `axe cute complement '{a}' --bound {m}` (several layouts \
                 given here are each complemented on their own)"
            );
            false
        }
        Verb::Complement { one, bound } => each(one, |t| {
            let l = layout(t)?;
            let m = match bound {
                Some(m) => m,
                None => l.cosize().map_err(err)?,
            };
            answer(c::complement(&l, m).map_err(err))
        }),
        Verb::RightInverse(one) => {
            each(one, |t| answer(c::right_inverse(&layout(t)?).map_err(err)))
        }
        Verb::LeftInverse { one, strict } => each(one, |t| left_inverse(t, strict)),
        Verb::LogicalDivide(two) => {
            each_any_pair(two, |a, b| c::logical_divide(a, &tiler(b)?).map_err(err))
        }
        Verb::ZippedDivide(two) => {
            each_any_pair(two, |a, b| c::zipped_divide(a, &tiler(b)?).map_err(err))
        }
        Verb::TiledDivide(two) => {
            each_any_pair(two, |a, b| c::tiled_divide(a, &tiler(b)?).map_err(err))
        }
        Verb::FlatDivide(two) => {
            each_any_pair(two, |a, b| c::flat_divide(a, &tiler(b)?).map_err(err))
        }
        Verb::LogicalProduct(two) => {
            each_pair(two, |a, b| c::logical_product(a, &tiler(b)?).map_err(err))
        }
        Verb::ZippedProduct(two) => {
            each_pair(two, |a, b| c::zipped_product(a, &tiler(b)?).map_err(err))
        }
        Verb::TiledProduct(two) => {
            each_pair(two, |a, b| c::tiled_product(a, &tiler(b)?).map_err(err))
        }
        Verb::FlatProduct(two) => {
            each_pair(two, |a, b| c::flat_product(a, &tiler(b)?).map_err(err))
        }
        Verb::BlockedProduct(two) => each_pair(two.into(), |a, b| {
            c::blocked_product(a, &layout_operand("blocked_product", b)?).map_err(err)
        }),
        Verb::RakedProduct(two) => each_pair(two.into(), |a, b| {
            c::raked_product(a, &layout_operand("raked_product", b)?).map_err(err)
        }),
        Verb::ToAxe { one, tv } => each(one, |t| {
            let l = layout(t)?;
            let r = if tv { c::tv_to_axe(&l) } else { l.to_axe() };
            let s = r.map_err(err)?.to_string();
            Ok(Report {
                json: json!({"result": s}),
                text: s,
            })
        }),
        Verb::FromAxe { one, shape, tv } => each(one.into(), |t| {
            let l: axe_layout::Layout = t.parse().map_err(err)?;
            let r = if tv {
                c::tv_from_axe(&l)
            } else {
                let shape: Option<IntTuple> = match &shape {
                    Some(s) => Some(c::parse_int_tuple(s).map_err(err)?),
                    None => None,
                };
                Layout::from_axe(&l, shape.as_ref())
            };
            answer(r.map_err(err))
        }),
    }
}
