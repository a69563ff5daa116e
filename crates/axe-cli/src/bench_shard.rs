//! `axe bench shard`: reshard throughput against the communicator's own collectives of the same bytes,
//! and planning time on meshes of 8 to 4,096 devices.

use std::time::{Duration, Instant};

use clap::Args;
use serde_json::json;

/// What `axe bench shard` measures.
#[derive(Args)]
pub struct ShardBench {
    /// One JSON object per case, each with "case" and "ratio".
    #[arg(long)]
    json: bool,
    /// Rank counts to run the threads backend on (under `--backend mpi`, the ranks mpirun started).
    #[arg(long, value_delimiter = ',', default_value = "2,4",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    ranks: Vec<usize>,
    /// About how many MiB each device's shard holds (1 to 1024).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=1024))]
    shard_mib: u64,
    /// Timed rounds per case; the median is reported (1 to 1000).
    #[arg(long, default_value_t = 7, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    rounds: usize,
    /// The engine: threads in this process, or MPI ranks (under mpirun, with an axe built with --features mpi).
    #[arg(long, value_enum, default_value_t = crate::shard_run::Backend::Threads)]
    backend: crate::shard_run::Backend,
    /// Only the planning times.
    #[arg(long)]
    plans_only: bool,
}

/// The planning time's budget: a plan for 4,096 devices in well under this.
const PLAN_BUDGET_S: f64 = 1.0;

/// Prints one case; returns false on an error.
fn emit_case(json_mode: bool, v: serde_json::Value, text: String) {
    if json_mode {
        crate::outln!("{v}");
    } else {
        crate::outln!("{text}");
    }
}

fn throughput(b: &ShardBench, rank0: bool, cases: Vec<axe_reshard::BenchCase>, ranks: usize) {
    if !rank0 {
        return;
    }
    for c in cases {
        let gbps = if c.reshard_s > 0.0 {
            c.bytes as f64 / c.reshard_s / 1e9
        } else {
            0.0
        };
        emit_case(
            b.json,
            json!({"case": format!("{} {} ranks", c.case, ranks), "ranks": ranks, "backend": b.backend_name(),
                   "dims": c.dims, "bytes": c.bytes, "reshard_s": c.reshard_s, "raw_s": c.raw_s,
                   "ratio": c.ratio, "reference": "the communicator's own collective of the same bytes"}),
            format!(
                "{:<44} {:>2} ranks {:>10.3} ms {:>8.2} GB/s  {:>5.2}x raw",
                c.case,
                ranks,
                c.reshard_s * 1e3,
                gbps,
                c.ratio
            ),
        );
    }
}

impl ShardBench {
    fn backend_name(&self) -> &'static str {
        match self.backend {
            crate::shard_run::Backend::Threads => "threads",
            crate::shard_run::Backend::Mpi => "mpi",
        }
    }
}

fn plans(b: &ShardBench) -> Result<(), String> {
    let cases = axe_shard::bench_plans().map_err(|e| e.to_string())?;
    for (name, mesh, src, dst) in cases {
        let mut times = Vec::new();
        let mut transfers = 0;
        for _ in 0..b.rounds.clamp(1, 7) {
            let t = Instant::now();
            let p = axe_shard::plan(&mesh, &src, &dst, 4, &axe_shard::CostModel::default())
                .map_err(|e| format!("{name}: {e}"))?;
            times.push(t.elapsed().as_secs_f64());
            transfers = p.transfers.len();
        }
        let s = crate::bench::median(times);
        emit_case(
            b.json,
            json!({"case": name, "devices": mesh.len(), "seconds": s, "transfers": transfers,
                   "ratio": PLAN_BUDGET_S / s.max(1e-9), "reference": "the 1 s budget"}),
            format!(
                "{name:<44} {:>10.3} ms {transfers:>9} transfers  {:>8.0}x under 1 s",
                s * 1e3,
                PLAN_BUDGET_S / s.max(1e-9)
            ),
        );
    }
    Ok(())
}

pub fn run(b: ShardBench) -> bool {
    let shard_bytes = b.shard_mib << 20;
    let result = (|| -> Result<(), String> {
        let mut rank0 = true;
        if !b.plans_only {
            match b.backend {
                crate::shard_run::Backend::Threads => {
                    for &n in &b.ranks {
                        let cases = axe_reshard::bench_threads(
                            n,
                            &axe_reshard::default_planner,
                            shard_bytes,
                            b.rounds,
                            Duration::from_secs(600),
                        )
                        .map_err(|e| e.to_string())?;
                        throughput(&b, true, cases, n);
                    }
                }
                crate::shard_run::Backend::Mpi => {
                    let (cases, rank, size) = crate::shard_run::mpi_bench(shard_bytes, b.rounds)?;
                    rank0 = rank == 0;
                    throughput(&b, rank0, cases, size);
                }
            }
        }
        if rank0 {
            plans(&b)?;
        }
        Ok(())
    })();
    match result {
        Ok(()) => true,
        Err(e) => {
            eprintln!("error: {e}");
            false
        }
    }
}
