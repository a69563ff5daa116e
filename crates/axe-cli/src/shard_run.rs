//! `axe shard run`: a reshard executed on a real engine (threads in this process, or MPI ranks) and
//! checked element by element; and `axe bench shard`.

use std::time::Duration;

use axe_reshard::{MemoryLayout, Placement, Verified};
use axe_shard::{plan, CostModel, Mesh, Sharding};
use clap::{Args, ValueEnum};
use serde_json::json;

use crate::report::Report;

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
    /// The longest any rank waits for a peer, in seconds (a dead rank ends the run within it).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
}

/// Per-device memory layouts of the source and the destination.
#[derive(Args, Clone, Default)]
pub struct Layouts {
    /// Each device's memory layout of its source shard: an XLA layout of the local shape
    /// ('{1,0:T(8,128)}'), 'row-major' (the default), or an Axe layout on the memory axis.
    #[arg(long)]
    pub src_layout: Option<String>,
    /// Each device's memory layout of its destination shard (as --src-layout).
    #[arg(long)]
    pub dst_layout: Option<String>,
}

impl Layouts {
    /// The source and destination placements of `src` and `dst` holding `ty` elements.
    pub fn placements(
        &self,
        src: Sharding,
        dst: Sharding,
        ty: axe_xla::PrimitiveType,
    ) -> Result<(Placement, Placement), String> {
        let rank = src.dims().len();
        let layout = |l: &Option<String>, which: &str| match l {
            None => Ok(MemoryLayout::RowMajor),
            Some(t) => MemoryLayout::parse(t, rank).map_err(|e| format!("--{which}-layout: {e}")),
        };
        let s = Placement::new(src, layout(&self.src_layout, "src")?, ty)
            .map_err(|e| format!("source: {e}"))?;
        let d = Placement::new(dst, layout(&self.dst_layout, "dst")?, ty)
            .map_err(|e| format!("destination: {e}"))?;
        Ok((s, d))
    }
}

/// Runs `src` → `dst` on `mesh` on the backend and checks every destination element. Under MPI every
/// rank runs this; only rank 0 reports (the others return `None`).
pub fn run(
    mesh: &Mesh,
    placements: (Placement, Placement),
    cost: &CostModel,
    args: &RunArgs,
) -> Result<Option<Report>, String> {
    let (src, dst) = placements;
    let ids_are_ranks = {
        let mut ids = mesh.devices().to_vec();
        ids.sort_unstable();
        ids.iter().enumerate().all(|(i, &d)| d == i as u64)
    };
    if !ids_are_ranks {
        return Err(format!(
            "a run puts device id r on rank r: the mesh's device ids must be 0..{} in some order",
            mesh.len()
        ));
    }
    let p = plan(mesh, &src.sharding, &dst.sharding, src.elem_bytes(), cost)
        .map_err(|e| e.to_string())?;
    let timeout = Duration::from_secs(args.timeout);
    let (verified, rank) = match args.backend {
        Backend::Threads => (
            axe_reshard::verify_threads(mesh, &p, &src, &dst, timeout)
                .map_err(|e| e.to_string())?,
            0,
        ),
        Backend::Mpi => mpi_run(mesh, &p, &src, &dst, timeout)?,
    };
    if rank != 0 {
        return Ok(None);
    }
    let Verified { bytes, seconds } = verified;
    let gbps = if seconds > 0.0 {
        bytes as f64 / seconds / 1e9
    } else {
        0.0
    };
    Ok(Some(Report {
        json: json!({"verified": true, "bytes": bytes, "seconds": seconds, "gb_per_second": gbps,
                     "collective": p.collective.name(), "backend": args.backend.name(),
                     "devices": mesh.len()}),
        text: format!(
            "verified: every destination element on {} devices ({}, {} backend)\n{bytes} bytes moved in {:.6} s: {gbps:.2} GB/s",
            mesh.len(),
            p.collective.name(),
            args.backend.name(),
            seconds
        ),
    }))
}

#[cfg(not(feature = "mpi"))]
fn mpi_run(
    _mesh: &Mesh,
    _plan: &axe_shard::Plan,
    _src: &Placement,
    _dst: &Placement,
    _timeout: Duration,
) -> Result<(Verified, usize), String> {
    Err(
        "this axe was built without MPI: build it with `cargo build --release --features mpi` \
         (needs Open MPI: scripts/install-mpi) and run it under `mpirun -n N`"
            .into(),
    )
}

/// The bench of `axe bench shard --backend mpi` on this rank: the cases, this rank and the rank count.
#[cfg(not(feature = "mpi"))]
pub fn mpi_bench(
    _shard_bytes: u64,
    _rounds: usize,
) -> Result<(Vec<axe_reshard::BenchCase>, usize, usize), String> {
    Err(
        "this axe was built without MPI: build it with `cargo build --release --features mpi` \
         (needs Open MPI: scripts/install-mpi) and run it under `mpirun -n N`"
            .into(),
    )
}

#[cfg(feature = "mpi")]
fn mpi_run(
    mesh: &Mesh,
    plan: &axe_shard::Plan,
    src: &Placement,
    dst: &Placement,
    timeout: Duration,
) -> Result<(Verified, usize), String> {
    use axe_reshard::Communicator;
    let comm = axe_reshard::MpiComm::with_timeout(timeout).map_err(|e| e.to_string())?;
    if comm.size() != mesh.len() {
        return Err(format!(
            "the mesh has {} devices but mpirun started {} ranks (one rank per device: mpirun -n {})",
            mesh.len(),
            comm.size(),
            mesh.len()
        ));
    }
    let rank = comm.rank();
    match axe_reshard::verify_run(&comm, mesh, plan, src, dst) {
        Ok(v) => Ok((v, rank)),
        // Every rank reaches the same verdict; one of them says it.
        Err(e) if rank == 0 => Err(e.to_string()),
        Err(_) => std::process::exit(1),
    }
}

/// The bench of `axe bench shard --backend mpi` on this rank: the cases, this rank and the rank count.
#[cfg(feature = "mpi")]
pub fn mpi_bench(
    shard_bytes: u64,
    rounds: usize,
) -> Result<(Vec<axe_reshard::BenchCase>, usize, usize), String> {
    use axe_reshard::Communicator;
    let comm = axe_reshard::MpiComm::init().map_err(|e| e.to_string())?;
    let cases =
        axe_reshard::bench_reshard(&comm, &axe_reshard::default_planner, shard_bytes, rounds)
            .map_err(|e| e.to_string())?;
    Ok((cases, comm.rank(), comm.size()))
}
