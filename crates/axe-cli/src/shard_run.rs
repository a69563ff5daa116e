//! `axe shard run`: a reshard executed on a real engine (threads in this process, or MPI ranks) and
//! checked element by element; and `axe bench shard`.

use std::time::Duration;

use axe_reshard::{MemoryLayout, Placement, RunStage, Verified};
use axe_shard::{plan_stages, CostModel, Mesh, Sharding};
use clap::{Args, ValueEnum};
use serde_json::json;

use crate::report::{emit, Report};

/// Where a reshard runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// One thread per device in this process, each owning only its own shard.
    Threads,
    /// One MPI rank per device (run under `mpirun -n N`; needs an axe built with `--features mpi`).
    Mpi,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Threads => "threads",
            Backend::Mpi => "mpi",
        }
    }
}

/// How a reshard runs.
#[derive(Args, Clone)]
pub struct RunArgs {
    /// The engine.
    #[arg(long, value_enum, default_value_t = Backend::Threads)]
    pub backend: Backend,
    /// The longest any rank waits for a peer, in seconds (a dead rank ends the run within it); while
    /// peers fill or check their shards, a grace of the largest shard's bytes at 8 MiB/s is added.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
}

/// Per-device memory layouts of the source and the destination.
#[derive(Args, Clone, Default)]
pub struct Layouts {
    /// Each device's memory layout of its shard on both sides, as `shard show --layout` takes it: an
    /// XLA layout of the padded local shape ('{1,0:T(8,128)}'), 'row-major' (the default), or an Axe
    /// layout on the memory axis m. `run` lays each buffer out so; `plan` checks it and adds each
    /// side's buffer per device and its bytes (padding included). The transfers are the same under any
    /// layout: they are boxes of the array, sent packed.
    #[arg(long, value_name = "LAYOUT")]
    pub layout: Option<String>,
    /// The source side's layout (as --layout; over --layout for the source).
    #[arg(long, value_name = "LAYOUT")]
    pub src_layout: Option<String>,
    /// The destination side's layout (as --layout; over --layout for the destination).
    #[arg(long, value_name = "LAYOUT")]
    pub dst_layout: Option<String>,
}

impl Layouts {
    /// Whether any side's layout was given.
    pub fn any(&self) -> bool {
        self.layout.is_some() || self.src_layout.is_some() || self.dst_layout.is_some()
    }

    /// The option giving side `which`'s layout (`src` or `dst`): its own, else `--layout`.
    pub fn flag(&self, which: &str) -> &'static str {
        let own = match which {
            "src" => self.src_layout.is_some(),
            _ => self.dst_layout.is_some(),
        };
        match (own, which) {
            (true, "src") => "--src-layout",
            (true, _) => "--dst-layout",
            (false, _) => "--layout",
        }
    }

    /// The source and destination placements of `src` and `dst` holding `ty` elements.
    pub fn placements(
        &self,
        src: Sharding,
        dst: Sharding,
        ty: axe_xla::PrimitiveType,
    ) -> Result<(Placement, Placement), String> {
        let rank = src.dims().len();
        // One side's layout: its own option, else --layout, else row-major; an error names the option.
        let layout = |side: &Option<String>, which: &str| {
            let (text, flag) = match (side, &self.layout) {
                (Some(t), _) => (t, format!("--{which}-layout")),
                (None, Some(t)) => (t, "--layout".to_string()),
                (None, None) => return Ok(MemoryLayout::RowMajor),
            };
            MemoryLayout::parse(text, rank).map_err(|e| format!("{flag}: {e}"))
        };
        let s = Placement::new(src, layout(&self.src_layout, "src")?, ty)
            .map_err(|e| format!("source: {e}"))?;
        let d = Placement::new(dst, layout(&self.dst_layout, "dst")?, ty)
            .map_err(|e| format!("destination: {e}"))?;
        Ok((s, d))
    }
}

/// What a run needs, read from the arguments: the mesh and the two placements.
pub type Setup = (Mesh, (Placement, Placement));

/// `axe shard run`: sets the run up from the arguments, runs it and reports; returns whether it
/// succeeded. Under MPI, MPI starts first (watched by `--timeout`), so that every rank takes part in
/// agreeing on the inputs even when its own arguments are unusable, and every rank reports its error
/// as one line of its own (`error: rank R: ...`).
pub fn run_verb(
    setup: impl FnOnce() -> Result<Setup, String>,
    cost: &CostModel,
    args: &RunArgs,
    json: bool,
) -> bool {
    match args.backend {
        Backend::Threads => {
            let run = launched_alone()
                .and_then(|()| setup())
                .and_then(|(mesh, placements)| run(&mesh, placements, cost, args));
            match run {
                Ok(None) => true,
                Ok(Some(r)) => emit([Ok(r)], json),
                Err(e) => emit([Err(e)], json),
            }
        }
        Backend::Mpi => mpi_verb(setup, cost, args, json),
    }
}

/// Variables through which MPI launchers tell each process how many they started (Open MPI, MPICH's
/// Hydra and Slurm's PMI, MVAPICH).
const LAUNCHED_SIZE: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"];

/// A threads run is one process holding every device: refused when an MPI launcher started this
/// process as one of several, where its peers (started with `--backend mpi`, or each running the
/// whole reshard alone) would wait for a rank that never joins MPI. Refused at once, so the launcher
/// ends the job rather than the peers waiting out their `--timeout`.
fn launched_alone() -> Result<(), String> {
    let size = LAUNCHED_SIZE
        .iter()
        .find_map(|v| Some((*v, std::env::var(v).ok()?.trim().parse::<u64>().ok()?)));
    match size {
        Some((var, n)) if n > 1 => Err(format!(
            "--backend threads runs every device in this one process, but an MPI launcher \
             started {n} processes ({var}={n}): use --backend mpi on every rank, or run it \
             without mpirun"
        )),
        _ => Ok(()),
    }
}

/// The plan of `src` → `dst` on `mesh`, in stages where the source is partial with several ops (one op a
/// stage, in mesh order), once the mesh is known to put device id `r` on rank `r`.
fn plan_of(
    mesh: &Mesh,
    src: &Placement,
    dst: &Placement,
    cost: &CostModel,
) -> Result<Vec<RunStage>, String> {
    let ids_are_ranks = {
        let mut ids = mesh.devices().to_vec();
        ids.sort_unstable();
        ids.iter().enumerate().all(|(i, &d)| d == i as u64)
    };
    if !ids_are_ranks {
        return Err(format!(
            "a run puts device id r on rank r: the mesh's device ids must be 0 to {} in some order, one per rank",
            mesh.len().saturating_sub(1)
        ));
    }
    let stages = plan_stages(mesh, &src.sharding, &dst.sharding, src.elem_bytes(), cost)
        .map_err(|e| e.to_string())?;
    axe_reshard::run_stages_of(src, dst, stages).map_err(|e| e.to_string())
}

/// The collective of a run: its plan's, or each stage's in turn (`all-reduce then all-reduce`).
fn collective_of(stages: &[RunStage]) -> String {
    let names: Vec<&str> = stages.iter().map(|s| s.plan.collective.name()).collect();
    names.join(" then ")
}

/// The report of a verified run.
fn report(mesh: &Mesh, stages: &[RunStage], backend: Backend, verified: Verified) -> Report {
    let collective = collective_of(stages);
    let Verified { bytes, seconds } = verified;
    let gbps = if seconds > 0.0 {
        bytes as f64 / seconds / 1e9
    } else {
        0.0
    };
    Report {
        json: json!({"verified": true, "bytes": bytes, "seconds": seconds, "gb_per_second": gbps,
                     "collective": collective, "backend": backend.name(),
                     "devices": mesh.len()}),
        text: format!(
            "verified: every destination element on {} device{} ({}, {} backend)\n{bytes} bytes moved in {:.6} s: {gbps:.2} GB/s",
            mesh.len(),
            if mesh.len() == 1 { "" } else { "s" },
            collective,
            backend.name(),
            seconds
        ),
    }
}

/// Runs `src` → `dst` on `mesh` on the threads backend and checks every destination element.
fn run(
    mesh: &Mesh,
    placements: (Placement, Placement),
    cost: &CostModel,
    args: &RunArgs,
) -> Result<Option<Report>, String> {
    let (src, dst) = placements;
    let p = plan_of(mesh, &src, &dst, cost)?;
    let timeout = Duration::from_secs(args.timeout);
    match args.backend {
        Backend::Threads => {
            let v =
                axe_reshard::verify_staged_threads(mesh, &p, timeout).map_err(|e| e.to_string())?;
            Ok(Some(report(mesh, &p, args.backend, v)))
        }
        Backend::Mpi => Err("an MPI run is set up by `run_verb`".into()),
    }
}

/// One rank's error as one whole line, written at once (so ranks' lines never interleave): to stderr,
/// or as a JSON object to stdout.
pub(crate) fn rank_error(rank: Option<usize>, e: &str, json_mode: bool) {
    use std::io::Write as _;
    let line = match (json_mode, rank) {
        (true, Some(r)) => format!("{}\n", json!({"error": e, "rank": r})),
        (true, None) => format!("{}\n", json!({ "error": e })),
        (false, Some(r)) => format!("error: rank {r}: {e}\n"),
        (false, None) => format!("error: {e}\n"),
    };
    let _ = if json_mode {
        std::io::stdout().lock().write_all(line.as_bytes())
    } else {
        std::io::stderr().lock().write_all(line.as_bytes())
    };
}

#[cfg(not(feature = "mpi"))]
fn mpi_verb(
    _setup: impl FnOnce() -> Result<Setup, String>,
    _cost: &CostModel,
    _args: &RunArgs,
    json: bool,
) -> bool {
    rank_error(None, NO_MPI, json);
    false
}

/// What a run on MPI ranks says where this axe has no MPI backend.
#[cfg(not(feature = "mpi"))]
pub(crate) const NO_MPI: &str = "this axe was built without MPI: install an axe with the MPI \
     backend (Open MPI first, `scripts/install-mpi`, then `cargo install --locked --path crates/axe-cli \
     --features mpi`, as the README shows) and run it under `mpirun -n N`";

/// The bench of `axe bench shard --backend mpi` on this rank: the cases, this rank and the rank count.
#[cfg(not(feature = "mpi"))]
pub fn mpi_bench(
    _shard_bytes: u64,
    _rounds: usize,
) -> Result<(Vec<axe_reshard::BenchCase>, usize, usize), String> {
    Err(NO_MPI.into())
}

/// An MPI run on this rank: MPI starts (watched), the arguments are read, every rank agrees on the
/// inputs (or learns which rank failed or differs), then the verified reshard; rank 0 reports.
#[cfg(feature = "mpi")]
fn mpi_verb(
    setup: impl FnOnce() -> Result<Setup, String>,
    cost: &CostModel,
    args: &RunArgs,
    json: bool,
) -> bool {
    use axe_reshard::{Communicator, InputHash};
    let timeout = Duration::from_secs(args.timeout);
    let comm = match axe_reshard::MpiComm::with_timeout(timeout) {
        Ok(c) => c,
        Err(e) => {
            rank_error(None, &e.to_string(), json);
            return false;
        }
    };
    let rank = comm.rank();
    let local = setup().and_then(|(mesh, (src, dst))| {
        if comm.size() != mesh.len() {
            return Err(format!(
                "the mesh has {} devices but mpirun started {} ranks (one rank per device: mpirun -n {})",
                mesh.len(),
                comm.size(),
                mesh.len()
            ));
        }
        let p = plan_of(&mesh, &src, &dst, cost)?;
        Ok((mesh, p))
    });
    let inputs = local.as_ref().ok().map(|(mesh, p)| {
        let mut v = axe_reshard::staged_inputs(mesh, p);
        v.push(("--timeout", InputHash::of_debug(&args.timeout)));
        v
    });
    let agreed = axe_reshard::agree(&comm, inputs.as_deref());
    let outcome = match (local, agreed) {
        (Err(e), _) => Err(e),
        (Ok(_), Err(e)) => Err(e.to_string()),
        (Ok((mesh, p)), Ok(())) => axe_reshard::verify_staged_run(&comm, &mesh, &p)
            .map(|v| report(&mesh, &p, args.backend, v))
            .map_err(|e| e.to_string()),
    };
    match outcome {
        Ok(_) if rank != 0 => true,
        Ok(r) => emit([Ok(r)], json),
        Err(e) => {
            rank_error(Some(rank), &e, json);
            false
        }
    }
}

/// The bench of `axe bench shard --backend mpi` on this rank: the cases, this rank and the rank count.
/// The ranks first agree on the bench's arguments.
#[cfg(feature = "mpi")]
pub fn mpi_bench(
    shard_bytes: u64,
    rounds: usize,
) -> Result<(Vec<axe_reshard::BenchCase>, usize, usize), String> {
    use axe_reshard::{Communicator, InputHash};
    let comm = axe_reshard::MpiComm::init().map_err(|e| e.to_string())?;
    let inputs = [
        ("--shard-mib", InputHash::of_debug(&shard_bytes)),
        ("--rounds", InputHash::of_debug(&rounds)),
    ];
    axe_reshard::agree(&comm, Some(&inputs)).map_err(|e| format!("rank {}: {e}", comm.rank()))?;
    let cases =
        axe_reshard::bench_reshard(&comm, &axe_reshard::default_planner, shard_bytes, rounds)
            .map_err(|e| format!("rank {}: {e}", comm.rank()))?;
    Ok((cases, comm.rank(), comm.size()))
}
