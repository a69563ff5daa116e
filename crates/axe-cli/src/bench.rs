//! `axe bench ...`: timings with a reference measured in the same run, reported as a ratio.

use std::hint::black_box;
use std::time::{Duration, Instant};

use clap::Subcommand;
use serde_json::json;

#[derive(Subcommand)]
pub enum What {
    /// Reshard throughput on 2 and 4 ranks against the communicator's own all-to-all / all-gather of the
    /// same bytes in the same run, and planning time on meshes of 8 to 4,096 devices.
    Shard(crate::bench_shard::ShardBench),
    /// ns per call of each CuTe layout operator against pycute (the pure-Python CuTe algebra of
    /// nvidia-cutlass) on the same inputs in the same run, and whether both answer the same.
    Cute(crate::bench_cute::CuteBench),
    /// Relayout speed on the standard cases: GB/s (bytes read + written) against memcpy of the same
    /// bytes in the same run.
    Relayout(RelayoutBench),
    /// The shipped kernels on the first NVIDIA GPU: relayout on the standard cases at 256 MiB and more,
    /// GB/s against the driver's device-to-device copy of the same bytes, every output checked against
    /// the CPU.
    Kernel(crate::bench_kernel::KernelBench),
    /// Read an HLO module (a synthetic one by default): MB/s and peak memory, against memcpy of the same
    /// bytes in the same run.
    Hlo {
        /// One JSON object.
        #[arg(long)]
        json: bool,
        /// Instructions in the synthetic module (at most 5,000,000).
        #[arg(long, default_value_t = 100_000, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=5_000_000))]
        instructions: usize,
        /// Read this file instead of a synthetic module.
        #[arg(long)]
        file: Option<String>,
        /// Timed runs (the fastest is reported; 1 to 1000).
        #[arg(long, default_value_t = 5, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
        runs: usize,
        /// A synthetic module whose entry is one computation of all the instructions.
        #[arg(long, conflicts_with = "file")]
        one_computation: bool,
    },
    /// XLA shape strings parsed, parsed and validated, and printed per second (and MB/s), against memcpy
    /// of the same bytes in the same run.
    Xla {
        /// One JSON object per measurement.
        #[arg(long)]
        json: bool,
        /// How many shape strings to generate (at most 10,000,000).
        #[arg(long, default_value_t = 20000, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000_000))]
        shapes: usize,
    },
    /// ns per call of each layout operator on layouts of 4–8 iters (target: under 1 µs), against the cost
    /// of cloning a layout measured in the same run.
    Layout {
        /// One JSON object per operator.
        #[arg(long)]
        json: bool,
        /// Measuring time per operator, in milliseconds (at most 60,000).
        #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=60_000))]
        millis: u64,
    },
}

/// Median ns per call over several timed batches of about `budget / 7` each.
fn time_ns(f: &dyn Fn() -> u64, budget: Duration) -> f64 {
    let mut n: u64 = 1;
    loop {
        let t = Instant::now();
        for _ in 0..n {
            black_box(f());
        }
        if t.elapsed() > budget / 70 || n > 1 << 30 {
            break;
        }
        n *= 2;
    }
    let mut samples: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                black_box(f());
            }
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[3]
}

fn bench_xla(json: bool, n: usize) -> bool {
    let shapes = axe_xla::bench_cases::bench_shapes(n.max(1));
    let bytes: usize = shapes.iter().map(|s| s.len() + 1).sum();
    let text = shapes.join("\n");
    let parsed: Vec<axe_xla::Shape> = match shapes.iter().map(|s| axe_xla::parse_shape(s)).collect()
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: a generated shape does not parse: {e}");
            return false;
        }
    };
    let budget = Duration::from_millis(400);
    let parse_ns = time_ns(
        &|| {
            shapes
                .iter()
                .map(|s| axe_xla::parse_shape(s).map_or(0, |_| 1))
                .sum::<u64>()
        },
        budget,
    );
    let validate_ns = time_ns(
        &|| {
            shapes
                .iter()
                .map(|s| match &axe_xla::parse_shape(s) {
                    Ok(shape) => u64::from(axe_xla::validate(shape).is_ok()),
                    Err(_) => 0,
                })
                .sum::<u64>()
        },
        budget,
    );
    let print_ns = time_ns(
        &|| {
            parsed
                .iter()
                .map(|s| s.to_string().len() as u64)
                .sum::<u64>()
        },
        budget,
    );
    let dst = std::cell::RefCell::new(vec![0u8; text.len()]);
    let memcpy_ns = time_ns(
        &|| {
            let mut d = dst.borrow_mut();
            d.copy_from_slice(black_box(text.as_bytes()));
            u64::from(black_box(d[0]))
        },
        budget,
    );
    let mb = |ns: f64| bytes as f64 / ns * 1e3; // bytes per ns → MB/s
    let rows = [
        ("parse", parse_ns),
        ("parse + validate", validate_ns),
        ("print", print_ns),
        ("memcpy (reference)", memcpy_ns),
    ];
    if !json {
        crate::outln!("{} shapes, {} bytes ({})", n, bytes, shapes[2]);
        crate::outln!(
            "{:<20} {:>14} {:>10} {:>12}",
            "operation",
            "shapes/s",
            "MB/s",
            "x memcpy"
        );
    }
    for (name, ns) in rows {
        let per_sec = n as f64 / ns * 1e9;
        let ratio = memcpy_ns / ns;
        if json {
            crate::outln!(
                "{}",
                json!({"operation": name, "shapes_per_second": per_sec, "mb_per_second": mb(ns),
                                  "ratio_to_memcpy": ratio, "shapes": n, "bytes": bytes})
            );
        } else {
            crate::outln!("{name:<20} {per_sec:>14.0} {:>10.1} {ratio:>12.4}", mb(ns));
        }
    }
    true
}

/// The median of some numbers (the mean of the middle two for an even count).
pub(crate) fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

pub use crate::bench_relayout::RelayoutBench;

pub fn run(what: What) -> bool {
    match what {
        What::Relayout(b) => crate::bench_relayout::run(b),
        What::Kernel(b) => crate::bench_kernel::run(b),
        What::Shard(b) => crate::bench_shard::run(b),
        What::Cute(b) => crate::bench_cute::run(b),
        What::Hlo {
            json,
            instructions,
            file,
            runs,
            one_computation,
        } => crate::bench_hlo::run(json, instructions, file, runs, one_computation),
        What::Xla { json, shapes } => bench_xla(json, shapes),
        What::Layout { json, millis } => {
            let cases = match axe_layout::bench_cases::bench_cases() {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("error: {e}");
                    return false;
                }
            };
            let budget = Duration::from_millis(millis.max(10));
            let mut timed = Vec::new();
            for case in &cases {
                if let Err(e) = (case.run)() {
                    eprintln!("error: {} failed: {e}", case.name);
                    return false;
                }
                let f = || (case.run)().unwrap_or(0);
                timed.push((case, time_ns(&f, budget)));
            }
            let reference = timed
                .iter()
                .find(|(c, _)| c.name.starts_with("clone"))
                .map_or(1.0, |(_, t)| *t);
            if !json {
                crate::outln!(
                    "{:<20} {:>10} {:>10} {:>8}  input",
                    "operator",
                    "ns/op",
                    "x clone",
                    "< 1 µs"
                );
            }
            for (case, ns) in &timed {
                let ratio = ns / reference;
                if json {
                    crate::outln!(
                        "{}",
                        json!({ "operator": case.name, "ns_per_op": ns, "reference": "clone", "reference_ns": reference,
                                "ratio": ratio, "under_1us": *ns < 1000.0, "input": case.input })
                    );
                } else {
                    crate::outln!(
                        "{:<20} {:>10.1} {:>10.2} {:>8}  {}",
                        case.name,
                        ns,
                        ratio,
                        if *ns < 1000.0 { "yes" } else { "NO" },
                        case.input
                    );
                }
            }
            true
        }
    }
}
