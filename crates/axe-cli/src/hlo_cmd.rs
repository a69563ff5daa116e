//! `axe hlo <verb>`: whole HLO modules.

use axe_xla::hlo::parse_module;
use axe_xla::hlo::partitioned::ShapeReading;
use axe_xla::hlo::per_device::{Figure, PerDevice};
use axe_xla::hlo::sharding::parse_sharding;
use axe_xla::hlo::stats::{parse_checked, Relayouts, Totals};
use axe_xla::hlo::synth::{synth_module, synth_one_computation};
use clap::Subcommand;
use serde::Serialize;
use serde_json::{json, Value};

use crate::file::Bytes;
use crate::report::{emit, Report};

#[derive(Subcommand)]
pub enum Verb {
    /// What the module's layouts cost: bytes per memory space, padding, worst tensors, relayouts.
    Stats {
        /// An HLO text file (`-` for stdin).
        file: String,
        /// How many tensors to list by padding waste.
        #[arg(long, default_value_t = 10)]
        top: usize,
        /// One JSON object.
        #[arg(long)]
        json: bool,
        /// How the shapes of a sharded module read: `global` (whole arrays, each device holds its shard
        /// of them) or `per-device` (already cut by XLA's SPMD partitioner, as in `.compile().as_text()`
        /// and `*after_optimizations*` dumps). Decided from the module when absent; the report says
        /// which reading it used and why.
        #[arg(long, value_parser = clap::value_parser!(ShapeReading))]
        shapes: Option<ShapeReading>,
    },
    /// Read and validate the module, and print it back in XLA's layout of the text.
    ///
    /// A module XLA printed comes back byte for byte. Other text is normalized in its layout: one
    /// instruction per line, indented two spaces, operands and attributes as written but joined with ", ",
    /// line breaks inside instructions removed, comments between instructions dropped, a blank line after the header and
    /// after each computation (two after stack-frame tables), and a module without an `HloModule` line
    /// named `module_<entry>` as XLA names it. Not normalized (XLA's printer does these, fmt keeps the text
    /// as written): `%` sigils, layouts left out of shapes, computation signatures and
    /// `entry_computation_layout`, the order of computations, and attribute values.
    Fmt {
        /// An HLO text file (`-` for stdin).
        file: String,
    },
    /// Write a realistic synthetic module (tiled shapes, memory spaces, tuples, metadata, shardings).
    Synth {
        /// About how many instructions (at most 5,000,000: about 900 MB of text).
        #[arg(long, default_value_t = 1000, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=5_000_000))]
        instructions: usize,
        /// Random seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output file (stdout if absent); written atomically.
        #[arg(short, long)]
        output: Option<String>,
        /// One entry computation of all the instructions (the module `axe bench hlo --one-computation`
        /// reads), instead of many computations.
        #[arg(long)]
        one_computation: bool,
    },
    /// Which part of an array each device holds under a sharding.
    Shards {
        /// The sharding, e.g. '{devices=[2,2]<=[4]}'.
        sharding: String,
        /// The array shape, e.g. 'f32[5,3]'.
        #[arg(long)]
        shape: String,
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
}

fn totals_json(t: &Totals) -> Value {
    json!({"arrays": t.arrays, "logical_bytes": t.logical_bytes, "xla_bytes": t.xla_bytes,
           "physical_bytes": t.physical_bytes, "padding_bytes": t.padding_bytes(), "padding_percent": t.padding_percent()})
}

fn human(b: i64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v.abs() >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// Prints the report of `file`, as JSON when `json_mode` (streamed: a module's relayouts may number in
/// the hundreds of thousands); returns whether it succeeded.
fn stats(file: &str, top: usize, json_mode: bool, shapes: Option<ShapeReading>) -> bool {
    let result = (|| -> Result<(), String> {
        let bytes = Bytes::open(file)?;
        let text = bytes.text(file)?;
        let checked = parse_checked(text).map_err(|e| format!("{file}:{e}"))?;
        let r = checked
            .report_with(top, shapes)
            .map_err(|e| e.to_string())?;
        let module = checked.module();
        if json_mode {
            crate::report::stream_stdout(|out| {
                serde_json::to_writer(&mut *out, &StatsJson::new(&module.name, &r))?;
                out.write_all(b"\n")
            });
        } else {
            crate::report::write_stdout(&format!("{}\n", stats_text(&module.name, &r).trim_end()));
        }
        // The process ends after the answer: freeing a module of millions of pieces one by one would
        // cost more than reading it.
        std::mem::forget(r);
        std::mem::forget(checked);
        Ok(())
    })();
    match result {
        Ok(()) => true,
        Err(e) => emit([Err::<Report, String>(e)], json_mode),
    }
}

/// The figures of one reading, by the names Python's `axe.hlo` gives them too ([`PerDevice::figures`]).
fn reading_json(p: &PerDevice) -> Value {
    p.figures()
        .into_iter()
        .map(|(name, figure)| {
            let v = match figure {
                Figure::Number(n) => json!(n),
                Figure::Name(s) => json!(s),
            };
            (name.to_string(), v)
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// `per_device`: the figures of the reading used, why it was used, and both readings.
fn per_device_json(r: &axe_xla::hlo::stats::Report) -> Value {
    let (Some(p), Some(d)) = (&r.per_device, &r.shapes) else {
        return Value::Null;
    };
    let mut v = reading_json(p);
    v["shapes_reason"] = json!(d.reason);
    v["readings"] = r
        .per_device_readings
        .iter()
        .map(|q| (q.reading.name().to_string(), reading_json(q)))
        .collect::<serde_json::Map<_, _>>()
        .into();
    v
}

/// The JSON of a report, fields in the order written.
#[derive(Serialize)]
struct StatsJson<'r> {
    module: &'r str,
    instructions: usize,
    materialized: Value,
    entry: Value,
    total: Value,
    unbounded_skipped: u64,
    meaning: Value,
    memory_spaces: Value,
    per_device: Value,
    top_padding: Value,
    relayouts: RelayoutsJson<'r>,
    computations: Value,
}

/// Every relayout, written one at a time.
struct RelayoutsJson<'r>(&'r Relayouts<'r>);

#[derive(Serialize)]
struct RelayoutJson<'r> {
    computation: &'r str,
    instruction: &'r str,
    opcode: &'r str,
    operand: &'r str,
    from: &'r str,
    to: &'r str,
    bytes: i64,
    kind: &'r str,
}

impl Serialize for RelayoutsJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|x| RelayoutJson {
            computation: x.computation,
            instruction: x.instruction,
            opcode: x.opcode,
            operand: x.operand,
            from: x.from,
            to: x.to,
            bytes: x.bytes,
            kind: x.kind,
        }))
    }
}

impl<'r> StatsJson<'r> {
    fn new(name: &'r str, r: &'r axe_xla::hlo::stats::Report<'r>) -> Self {
        StatsJson {
            module: name,
            instructions: r.instructions,
            materialized: totals_json(&r.materialized),
            entry: totals_json(&r.entry),
            total: totals_json(&r.total),
            unbounded_skipped: r.unbounded_skipped,
            meaning: json!({
                "materialized": "values held in memory, summed with no liveness (an upper bound, not XLA's peak): the entry and the computations it runs as programs (while, conditional, call, async), each value once; fusion bodies, reducers and the parameters of called computations left out",
                "entry": "the part of materialized in the entry computation, its parameters included",
                "total": "every instruction of every computation, fusion bodies included: a bound on what the text describes, not a footprint",
                "unbounded_skipped": "arrays with an unbounded dynamic dimension (?) among the values held in memory: they have no size and every figure leaves them out",
                "memory_spaces": "materialized bytes per memory space S(n)",
                "per_device": "for a module with sharding= attributes or num_partitions above one: the sum of the materialized values' bytes on each device (no liveness: an upper bound, not XLA's peak), and the entry's parameters (argument_bytes) and result (output_bytes) on the device holding the most of each (exact, as XLA's memory_analysis()); shapes says how the module's shapes were read: global (each device holds its shard of each value, ceil(D/n) per sharded dim in the value's layout; values without sharding= whole on every device) or per-device (shapes already cut by XLA's SPMD partitioner: every value whole on every device); shapes_reason says why; readings holds the figures in both readings"
            }),
            memory_spaces: Value::Object(
                r.spaces
                    .iter()
                    .map(|(s, t)| (s.to_string(), totals_json(t)))
                    .collect(),
            ),
            per_device: per_device_json(r),
            top_padding: r.top_waste.iter().map(|w| json!({"computation": w.computation, "instruction": w.instruction,
                "shape": w.shape, "logical_bytes": w.totals.logical_bytes, "physical_bytes": w.totals.physical_bytes,
                "padding_bytes": w.totals.padding_bytes()})).collect(),
            relayouts: RelayoutsJson(&r.relayouts),
            computations: r.computations.iter().zip(&r.materialized_computations).map(|((n, t), m)| { let mut v = totals_json(t); v["name"] = json!(n); v["materialized"] = json!(m); v }).collect(),
        }
    }
}

fn stats_text(name: &str, r: &axe_xla::hlo::stats::Report) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut t = format!(
        "module {} ({}, {})\n\n",
        name,
        plural(r.instructions, "instruction", "instructions"),
        plural(r.computations.len(), "computation", "computations")
    );
    t.push_str(&format!(
        "{:<8} {:>8} {:>12} {:>12} {:>12} {:>12} {:>8}\n",
        "space", "arrays", "logical", "XLA padded", "physical", "padding", "pad %"
    ));
    let row = |name: String, x: &Totals| {
        format!(
            "{:<8} {:>8} {:>12} {:>12} {:>12} {:>12} {:>7.1}%\n",
            name,
            x.arrays,
            human(x.logical_bytes),
            human(x.xla_bytes),
            human(x.physical_bytes),
            human(x.padding_bytes()),
            x.padding_percent()
        )
    };
    for (s, x) in &r.spaces {
        t.push_str(&row(format!("S({s})"), x));
    }
    t.push_str(&row("memory".into(), &r.materialized));
    t.push_str(&row("entry".into(), &r.entry));
    t.push_str(&row("all".into(), &r.total));
    t.push_str(
        "  S(n), memory: values held in memory (the entry and what it runs as programs: while, conditional,\n  \
         call, async), each once; fusion bodies, reducers and callee parameters left out; a sum with no\n  \
         liveness: an upper bound, not XLA's peak\n  \
         entry: the entry computation's share, its parameters included\n  \
         all: every instruction of every computation, fusion bodies included (not a footprint)\n",
    );
    if r.unbounded_skipped > 0 {
        t.push_str(&format!(
            "  skipped: {} held in memory with an unbounded dynamic dimension (`?`): no size, no figure counts it\n",
            plural(
                usize::try_from(r.unbounded_skipped).unwrap_or(usize::MAX),
                "array",
                "arrays"
            )
        ));
    }
    if let (Some(p), Some(d)) = (&r.per_device, &r.shapes) {
        t.push_str(&format!(
            "\nper device ({} devices): largest {} (device {}), smallest {}\n  \
             sum of every value's bytes, no liveness: an upper bound, not XLA's peak\n  \
             arguments {}, outputs {} (exact, as XLA's memory_analysis(); the device holding the most)\n  \
             shapes read {}: {}\n",
            p.devices,
            human(p.largest_bytes),
            p.largest_device,
            human(p.smallest_bytes),
            human(p.argument_bytes),
            human(p.output_bytes),
            d.reading.name(),
            d.reason,
        ));
        match p.reading {
            ShapeReading::Global => {
                t.push_str(&format!(
                    "  {}, each device's shard; {} without sharding= counted whole on every device\n",
                    plural(p.sharded_values, "sharded value", "sharded values"),
                    plural(p.unannotated_values, "value", "values")
                ));
                if p.output_sharding == axe_xla::hlo::per_device::OutputSharding::Inferred {
                    t.push_str(&format!(
                        "  outputs: the result carries no sharding=, so its sharding is inferred \
                         (XLA may choose another): {}, at most {} (whole)\n",
                        human(p.output_bytes),
                        human(p.output_whole_bytes)
                    ));
                }
            }
            ShapeReading::PerDevice => t.push_str(
                "  every value whole on every device (its shape is already the device's shard)\n",
            ),
        }
        if let Some(other) = r
            .per_device_readings
            .iter()
            .find(|q| q.reading != p.reading)
        {
            t.push_str(&format!(
                "  read {} instead (--shapes {}): largest {}, arguments {}, outputs {}\n",
                other.reading.name(),
                other.reading.name(),
                human(other.largest_bytes),
                human(other.argument_bytes),
                human(other.output_bytes)
            ));
        }
    }
    if !r.top_waste.is_empty() {
        t.push_str(&format!(
            "\ntop {} by padding (values held in memory):\n",
            plural(r.top_waste.len(), "tensor", "tensors")
        ));
        for w in &r.top_waste {
            t.push_str(&format!(
                "  {:>12}  {} = {}  ({})\n",
                human(w.totals.padding_bytes()),
                w.instruction,
                w.shape,
                w.computation
            ));
        }
    }
    if r.relayouts.is_empty() {
        t.push_str("\nno relayouts (no result's layout differs from an operand's)\n");
    } else {
        t.push_str(&format!(
            "\n{} (result layout differs from an operand's):\n",
            plural(r.relayouts.len(), "relayout", "relayouts")
        ));
    }
    for x in r.relayouts.iter().take(50) {
        t.push_str(&format!(
            "  {:>12}  {:<12} {} {}: {} -> {}\n",
            human(x.bytes),
            x.kind,
            x.opcode,
            x.instruction,
            x.from,
            x.to
        ));
    }
    if r.relayouts.len() > 50 {
        t.push_str(&format!(
            "  ... and {} more (see --json)\n",
            r.relayouts.len() - 50
        ));
    }
    t.push_str("\nper computation (every instruction; * = its values are held in memory):\n");
    for ((n, x), m) in r.computations.iter().zip(&r.materialized_computations) {
        t.push_str(&format!(
            "  {:>12} physical, {:>12} padding {} {n}\n",
            human(x.physical_bytes),
            human(x.padding_bytes()),
            if *m { '*' } else { ' ' }
        ));
    }
    t
}

pub fn run(verb: Verb) -> bool {
    match verb {
        Verb::Stats {
            file,
            top,
            json,
            shapes,
        } => stats(&file, top, json, shapes),
        Verb::Fmt { file } => {
            let result = Bytes::open(&file).and_then(|b| {
                let text = b.text(&file)?;
                let module = parse_module(text).map_err(|e| format!("{file}:{e}"))?;
                // Printed straight to stdout: the printed module is never held whole in memory.
                crate::report::stream_stdout(|out| module.write_to(out));
                // The process ends after the answer: freeing a module of millions of pieces one by one
                // would cost more than reading it.
                std::mem::forget(module);
                Ok(())
            });
            match result {
                Ok(()) => true,
                Err(e) => {
                    eprintln!("error: {e}");
                    false
                }
            }
        }
        Verb::Synth {
            instructions,
            seed,
            output,
            one_computation,
        } => {
            let text = if one_computation {
                synth_one_computation(instructions, seed)
            } else {
                synth_module(instructions, seed)
            };
            match output {
                Some(path) => match crate::output::write_atomically(&path, text.as_bytes()) {
                    Ok(()) => true,
                    Err(e) => {
                        eprintln!("error: {e}");
                        false
                    }
                },
                None => {
                    crate::out!("{text}");
                    true
                }
            }
        }
        Verb::Shards {
            sharding,
            shape,
            json,
        } => emit(
            [(|| {
                let s = parse_sharding(&sharding).map_err(|e| {
                    if sharding.trim_start().starts_with('{') {
                        e.to_string()
                    } else {
                        format!(
                            "{e}\n`axe hlo shards` takes XLA's HloSharding ({{devices=[2,1]<=[2]}}); \
                             `axe shard show` reads every notation (P('x'), [Shard(0)], S0R, ...)"
                        )
                    }
                })?;
                let a = axe_xla::parse_shape(&shape).map_err(|e| e.to_string())?;
                let a = a
                    .as_array()
                    .ok_or_else(|| format!("{shape} is not an array"))?;
                let dims = axe_xla::static_dims(a).map_err(|e| e.to_string())?;
                let shards = s.shards(&dims).map_err(|e| e.to_string())?;
                let rows: Vec<Value> = shards
                    .iter()
                    .map(|d| json!({"device": d.device, "region": d.region.iter().map(|r| [r.start, r.end]).collect::<Vec<_>>()}))
                    .collect();
                let mut text = format!("{s} over {a}\n");
                for d in &shards {
                    let dev = d.device.map_or("all".to_string(), |x| x.to_string());
                    let reg: Vec<String> = d
                        .region
                        .iter()
                        .map(|r| format!("{}:{}", r.start, r.end))
                        .collect();
                    text.push_str(&format!("  device {dev:>4}: [{}]\n", reg.join(", ")));
                }
                Ok(Report {
                    json: json!({"sharding": s.to_string(), "shape": a.to_string(), "shards": rows}),
                    text,
                })
            })()],
            json,
        ),
    }
}
