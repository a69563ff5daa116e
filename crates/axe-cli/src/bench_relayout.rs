//! `axe bench relayout`: relayout speed on the standard cases (and any given), against memcpy of the
//! same bytes in the same run.

use std::hint::black_box;
use std::time::Instant;

use serde_json::json;

use crate::bench::median;

/// The standard relayout cases: (name, source shape, destination layout).
pub const RELAYOUT_CASES: &[(&str, &str, &str)] = &[
    ("f32 -> T(8,128)", "f32[8192,8192]{1,0}", "{1,0:T(8,128)}"),
    (
        "f32 T(8,128) -> row-major",
        "f32[8192,8192]{1,0:T(8,128)}",
        "{1,0}",
    ),
    (
        "bf16 -> T(8,128)(2,1)",
        "bf16[8192,8192]{1,0}",
        "{1,0:T(8,128)(2,1)}",
    ),
    (
        "bf16 T(8,128)(2,1) -> row-major",
        "bf16[8192,8192]{1,0:T(8,128)(2,1)}",
        "{1,0}",
    ),
    (
        "s8 -> T(8,128)(4,1)",
        "s8[8192,8192]{1,0}",
        "{1,0:T(8,128)(4,1)}",
    ),
    (
        "pred -> T(32,128)(32,1)E(1)",
        "pred[8192,8192]{1,0}",
        "{1,0:T(32,128)(32,1)E(1)}",
    ),
    (
        "pred T(32,128)(32,1)E(1) -> bytes",
        "pred[8192,8192]{1,0:T(32,128)(32,1)E(1)}",
        "{1,0}",
    ),
    ("f32 transpose {1,0}->{0,1}", "f32[8192,8192]{1,0}", "{0,1}"),
    (
        "f32[64,512,32,128] {3,2,1,0}->{3,1,2,0}",
        "f32[64,512,32,128]{3,2,1,0}",
        "{3,1,2,0}",
    ),
    (
        "f32[256]^3 {2,1,0}->{0,1,2}",
        "f32[256,256,256]{2,1,0}",
        "{0,1,2}",
    ),
    (
        "f32[8000,8000] -> T(8,128) (padding)",
        "f32[8000,8000]{1,0}",
        "{1,0:T(8,128)}",
    ),
];

/// Cases `axe bench relayout` measures besides [`RELAYOUT_CASES`] (which the GPU bench shares): a
/// transpose whose rows are not whole cache lines apart (32800 bytes), as most shapes that are not
/// multiples of 16 have; and a long 1-D array padded to its tile (no tile divides 100000001), moved in
/// pieces (a body split into factors, a tail, the padding).
pub const RELAYOUT_CPU_CASES: &[(&str, &str, &str)] = &[
    (
        "f32[8200,8200] transpose (rows off lines)",
        "f32[8200,8200]{1,0}",
        "{0,1}",
    ),
    (
        "f32[100000001] -> T(1024) (long, padded)",
        "f32[100000001]{0}",
        "{0:T(1024)}",
    ),
];

/// What `axe bench relayout` measures.
#[derive(clap::Args)]
pub struct RelayoutBench {
    /// One JSON object per case.
    #[arg(long)]
    json: bool,
    /// Worker threads, 1 to 1024 (memcpy uses as many).
    #[arg(long, default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1024))]
    threads: usize,
    /// Only the cases whose name contains this (one that no case's name contains is an error listing
    /// the cases).
    #[arg(long)]
    only: Option<String>,
    /// Timed runs per case, 1 to 1000 (the fastest is reported).
    #[arg(long, default_value_t = 5, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    runs: usize,
    /// Measure every case this many times over, one round after another, and report each case's
    /// median with the lowest and highest ratio (on a shared machine single rounds vary); 1 to 1000.
    #[arg(long, default_value_t = 1, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    rounds: usize,
    /// The kernels' instruction set: avx512, avx2, sse2, neon or portable (default: the best this
    /// processor runs), to see what each adds.
    #[arg(long)]
    isa: Option<String>,
    /// Write through the cache (no non-temporal stores).
    #[arg(long)]
    cached: bool,
    /// The side run copies walk in order where they may walk either: source or destination
    /// (default: this processor's, the destination on Intel and the source elsewhere).
    #[arg(long, value_parser = ["source", "destination"])]
    walk: Option<String>,
    /// Measure this relayout instead of the standard cases: a source shape, `->`, and the
    /// destination's layout, as in `'f32[256,256,272]{2,1,0}->{0,1,2}'`. May be given more than once.
    #[arg(long = "case", value_name = "SHAPE->LAYOUT")]
    custom: Vec<String>,
}

/// One round of one relayout case.
struct CaseRun {
    /// The relayout's GB/s (bytes read + written), fastest of the runs.
    gbs: f64,
    /// memcpy's GB/s in the same run.
    memcpy: f64,
    plan: String,
    /// The share of the relayout's buffers on huge pages, where the system tells.
    huge: Option<f64>,
}

impl CaseRun {
    fn ratio(&self) -> f64 {
        self.gbs / self.memcpy
    }
}

/// The layouts of a relayout case (a source shape and the destination's layout), as the pieces
/// `axe relayout` moves it in (one, but where a long dimension has padding: see
/// `axe_relayout::split::pieces`), with the source's and destination's bytes; refused where it is not an
/// array, moves no bytes, or needs more memory than this process may use for its source, destination
/// and memcpy's copy.
fn case_layouts((shape, to): (&str, &str)) -> Result<CaseLayouts, String> {
    use axe_relayout::split::{pieces, Side};
    let src_shape = axe_xla::parse_shape(shape).map_err(|e| e.to_string())?;
    let src = src_shape
        .as_array()
        .ok_or_else(|| format!("{shape} is not an array shape"))?;
    let dst_layout = axe_xla::parse_layout(to, src.rank()).map_err(|e| e.to_string())?;
    let dst = axe_xla::ArrayShape {
        layout: dst_layout,
        ..src.clone()
    };
    // The buffers' sizes first, from the shapes: nothing is built for a case that cannot fit.
    let size = |a: &axe_xla::ArrayShape| -> Result<u64, String> {
        let bytes = axe_xla::sizes(a).map_err(|e| e.to_string())?.physical_bytes;
        u64::try_from(bytes).map_err(|_| format!("{a} has a negative size"))
    };
    let (ab, bb) = (size(src)?, size(&dst)?);
    if ab == 0 || bb == 0 {
        return Err(format!("{shape} has no elements: nothing to time"));
    }
    let total = ab.saturating_add(bb).saturating_add(ab.max(bb));
    crate::kernel_shipped::buffers_fit_in_memory("the source, destination and copy", total)?;
    let pieces = pieces(Side::Xla(src), Side::Xla(&dst)).map_err(|e| e.to_string())?;
    let (a, b) = pieces
        .first()
        .ok_or_else(|| format!("{shape} has no elements: nothing to time"))?;
    if a.bytes() == 0 || b.bytes() == 0 {
        return Err(format!("{shape} has no elements: nothing to time"));
    }
    Ok(CaseLayouts {
        src_bytes: a.bytes(),
        dst_bytes: b.bytes(),
        pieces,
    })
}

/// A relayout case's layouts: the pieces it moves in, and its buffers' bytes.
struct CaseLayouts {
    pieces: Vec<(axe_relayout::TensorLayout, axe_relayout::TensorLayout)>,
    src_bytes: u64,
    dst_bytes: u64,
}

/// Times the relayout of `shape` into `to` against memcpy of its larger buffer, in turn, `runs` times
/// each (after one warm-up), and keeps the fastest of each.
fn relayout_case(
    case: (&str, &str),
    opts: &axe_relayout::Options,
    pool: &rayon::ThreadPool,
    runs: usize,
) -> Result<CaseRun, String> {
    use axe_relayout::split::relayout_pieces;
    let threads = pool.current_num_threads();
    let CaseLayouts {
        pieces,
        src_bytes,
        dst_bytes,
    } = case_layouts(case)?;
    // Every buffer, memcpy's too, comes from the same allocator (huge pages where the kernel gives
    // them).
    let mut input = crate::file::tensor_buffer(src_bytes as usize)?;
    for (i, x) in input.iter_mut().enumerate() {
        *x = (i * 131 % 251) as u8;
    }
    let mut output = crate::file::tensor_buffer(dst_bytes as usize)?;
    // memcpy of the larger buffer's bytes (the source's, unless the relayout unpacks), with as many
    // threads, timed in turn with the relayout so that both see the same machine (the fastest of each
    // is kept; the first of each warms up).
    let reference = input.len().max(output.len());
    let mut copy = crate::file::tensor_buffer(reference)?;
    let (mut best, mut mc) = (f64::INFINITY, f64::INFINITY);
    let mut plan = String::new();
    for _ in 0..runs.max(1) + 1 {
        let t = Instant::now();
        let p = relayout_pieces(&input, &mut output, &pieces, opts)
            .map_err(|e| e.to_string())?
            .ok_or("the relayout has no elements to move")?;
        best = best.min(t.elapsed().as_secs_f64());
        plan = p.explain();
        if pieces.len() > 1 {
            plan.push_str(&format!(
                " (the first of {} pieces: a long padded dimension is moved as a body and a tail)",
                pieces.len()
            ));
        }
        black_box(&output);
        let from: &[u8] = if input.len() >= output.len() {
            &input
        } else {
            &output
        };
        let t = Instant::now();
        pool.install(|| {
            use rayon::prelude::*;
            let chunk = reference.div_ceil(threads).max(1);
            copy[..reference]
                .par_chunks_mut(chunk)
                .zip(from[..reference].par_chunks(chunk))
                .for_each(|(d, s)| d.copy_from_slice(s));
        });
        mc = mc.min(t.elapsed().as_secs_f64());
    }
    black_box(&copy);
    let moved = (src_bytes + dst_bytes) as f64;
    // How much of the relayout's buffers the kernel backed with huge pages (it matters to the
    // transposes, which touch many pages).
    let huge = match (
        crate::file::huge_page_share(&input),
        crate::file::huge_page_share(&output),
    ) {
        (Some(i), Some(o)) => Some((i * input.len() as f64 + o * output.len() as f64) / moved),
        _ => None,
    };
    Ok(CaseRun {
        gbs: moved / best / 1e9,
        memcpy: 2.0 * reference as f64 / mc / 1e9,
        plan,
        huge,
    })
}

/// Runs `axe bench relayout`: every case, every round, a line (or JSON object) per case.
pub fn run(b: RelayoutBench) -> bool {
    let RelayoutBench {
        json,
        threads,
        only,
        runs,
        rounds,
        isa,
        cached,
        walk,
        custom,
    } = b;
    let isa = match isa.as_deref().map(|n| (n, axe_relayout::Isa::from_name(n))) {
        None => None,
        Some((_, Some(i))) => Some(i),
        Some((n, None)) => {
            eprintln!("error: unknown instruction set {n:?} (avx512, avx2, sse2, neon, portable)");
            return false;
        }
    };
    let (threads, rounds) = (threads.max(1), rounds.max(1));
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return false;
        }
    };
    let opts = axe_relayout::Options {
        zero_padding: true,
        threads,
        isa,
        streaming: cached.then_some(false),
        walk: walk.map(|w| match w.as_str() {
            "source" => axe_relayout::Straight::Source,
            _ => axe_relayout::Straight::Destination,
        }),
    };
    let mut given = Vec::new();
    for case in &custom {
        let Some((shape, to)) = case.split_once("->") else {
            eprintln!("error: --case {case:?}: expected SHAPE->LAYOUT, as in 'f32[64,64]{{1,0}}->{{0,1}}'");
            return false;
        };
        given.push((case.as_str(), shape.trim(), to.trim()));
    }
    let standard = RELAYOUT_CASES.iter().chain(RELAYOUT_CPU_CASES).copied();
    let cases = if given.is_empty() {
        standard.collect()
    } else {
        given
    };
    let cases = match crate::only::select(cases, |c| c.0, only.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return false;
        }
    };
    // Every case is read before any is timed, so that a mistyped one is said at once.
    for (name, shape, to) in &cases {
        if let Err(e) = case_layouts((shape, to)) {
            eprintln!("error: {name}: {e}");
            return false;
        }
    }
    if !json {
        let of = if rounds > 1 {
            format!("; the median of {rounds} rounds, the lowest and highest ratio in brackets")
        } else {
            String::new()
        };
        crate::outln!("{threads} thread(s); GB/s counts bytes read + written; memcpy copies the larger buffer with as many threads; huge: the share of the buffers on huge pages; plan: its start (--json: the whole){of}");
        let range = if rounds > 1 { "range" } else { "" };
        crate::outln!(
            "{:<42} {:>9} {:>9} {:>8} {range:>13} {:>6}  plan",
            "case",
            "GB/s",
            "memcpy",
            "ratio",
            "huge"
        );
    }
    // results[case]: one run per round. Rounds go over every case in turn, so that a slow spell of
    // the machine falls on different cases' rounds rather than on all of one case's.
    let mut results: Vec<Vec<CaseRun>> = cases.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for (c, (name, shape, to)) in cases.iter().enumerate() {
            match relayout_case((shape, to), &opts, &pool, runs) {
                Ok(r) => results[c].push(r),
                Err(e) => {
                    eprintln!("error: {name}: {e}");
                    return false;
                }
            }
            if round + 1 < rounds {
                continue;
            }
            let rs = &results[c];
            let gbs = median(rs.iter().map(|r| r.gbs).collect());
            let memcpy = median(rs.iter().map(|r| r.memcpy).collect());
            let ratios: Vec<f64> = rs.iter().map(CaseRun::ratio).collect();
            let ratio = median(ratios.clone());
            let (lo, hi) = ratios
                .iter()
                .fold((f64::INFINITY, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
            let last = &rs[rs.len() - 1];
            if json {
                crate::outln!(
                    "{}",
                    json!({"case": name, "source": shape, "to": to, "threads": threads, "rounds": rounds,
                           "gb_per_second": gbs, "memcpy_gb_per_second": memcpy, "ratio": ratio,
                           "ratios": ratios, "plan": last.plan, "huge_pages": last.huge})
                );
            } else {
                let huge = last
                    .huge
                    .map_or("-".to_string(), |h| format!("{:.0}%", h * 100.0));
                let range = if rounds > 1 {
                    format!("({lo:.2}–{hi:.2})")
                } else {
                    String::new()
                };
                let short = shortened(&last.plan, 60);
                crate::outln!(
                    "{name:<42} {gbs:>9.2} {memcpy:>9.2} {ratio:>8.2} {range:>13} {huge:>6}  {short}"
                );
            }
        }
    }
    true
}

/// `text` cut to at most `max` characters at a word's end, with `…` where anything was cut.
fn shortened(text: &str, max: usize) -> String {
    let max = max.max(1);
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max - 1).collect();
    let cut = head.rfind(' ').unwrap_or(head.len());
    format!("{}…", head[..cut].trim_end_matches([',', ';', ' ']))
}

#[cfg(test)]
mod tests {
    use super::shortened;

    /// Kept whole when it fits; else cut at a word's end, within the width, ending in `…`.
    #[test]
    fn plans_cut_at_words() {
        assert_eq!(shortened("copy 64 runs", 60), "copy 64 runs");
        let plan = "for every index of dimension 0, copy 64 contiguous run(s) of 128 elements";
        let s = shortened(plan, 60);
        assert_eq!(
            s,
            "for every index of dimension 0, copy 64 contiguous run(s)…"
        );
        assert!(s.chars().count() <= 60);
        assert_eq!(shortened("transpose, and more words", 11), "transpose…");
    }
}
