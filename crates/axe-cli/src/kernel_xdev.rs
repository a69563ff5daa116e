//! `axe kernel run|explain gemm_reduce_scatter`: the kernel across devices, one thread per device
//! (`--backend cpu --devices P`) or one MPI rank per device (`--backend mpi` under `mpirun -n P`; an
//! axe built with `--features mpi`). A and B are read by device 0 (rank 0) and scattered by the
//! kernel itself; rank 0 writes the gathered C.

use std::time::Duration;

use axe_kernel::gemm_rs::GemmReduceScatter;
use axe_kernel::xdev_dispatch::Step;
use axe_kernel::{xdev_lower, DType, DeviceProgram, RunLimits, Target};
use axe_xla::{ArrayShape, PrimitiveType};
use serde_json::{json, Value};

use crate::kernel_shipped::{gemm_rs_params, read_input, write_output, Params};
use crate::report::Report;
#[cfg(feature = "mpi")]
use crate::shard_run::rank_error;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// How long a threads run waits for a peer (each device interprets its gemm meanwhile).
const THREADS_TIMEOUT: Duration = Duration::from_secs(600);

/// The kernel for `params` on `devices` devices, lowered for `target`.
fn build(
    params: &Params,
    devices: u64,
    target: Target,
) -> Result<(GemmReduceScatter, DeviceProgram), String> {
    let (m, n, k, dtype, _) = gemm_rs_params(params)?;
    let g =
        axe_kernel::shipped::gemm_reduce_scatter((m, n, k), dtype, devices, target).map_err(err)?;
    let p = xdev_lower(&g.kernel, target).map_err(err)?;
    Ok((g, p))
}

/// `axe kernel explain gemm_reduce_scatter`: the tensors and their distributions, then every decision
/// (the cross-device calls' variants and plans, and the per-device gemm's own).
pub fn explain(params: &Params, target: Target) -> Result<Report, String> {
    let devices = gemm_rs_params(params)?.4;
    let (_, p) = build(params, devices, target)?;
    let k = &p.kernel;
    let tensors: Vec<Value> = k
        .tensors
        .iter()
        .map(|t| json!({"name": t.name, "describe": t.describe(&k.mesh)}))
        .collect();
    let calls: Vec<Value> = p
        .decisions
        .iter()
        .map(|d| {
            let declined: Vec<Value> = d
                .declined
                .iter()
                .map(|(v, r)| json!({"variant": v, "reason": r}))
                .collect();
            json!({"op": d.op, "scope": d.scope, "variant": d.variant, "why": d.why, "declined": declined})
        })
        .collect();
    let mut text = format!(
        "{} on {} devices ({} per device): {} calls\ntensors\n",
        k.name,
        k.mesh.len(),
        p.target,
        p.decisions.len()
    );
    for t in &k.tensors {
        text.push_str(&format!("  {}\n", t.describe(&k.mesh)));
    }
    for d in &p.decisions {
        text.push_str(&format!(
            "{} at {} scope → {}\n  because {}\n",
            d.op, d.scope, d.variant, d.why
        ));
        for (v, r) in &d.declined {
            text.push_str(&format!("  not {v}: {r}\n"));
        }
    }
    Ok(Report {
        json: json!({"kernel": k.name, "target": p.target.name(), "devices": k.mesh.len(),
                     "tensors": tensors, "calls": calls}),
        text,
    })
}

fn array(t: PrimitiveType, dims: [u64; 2]) -> Result<ArrayShape, String> {
    let d: Vec<i64> = dims
        .iter()
        .map(|&x| i64::try_from(x).map_err(err))
        .collect::<Result<_, _>>()?;
    Ok(ArrayShape::new(t, &d))
}

/// Device 0's inputs: A and B read from their files.
fn read_ab(
    g: &GemmReduceScatter,
    dtype: DType,
    files: &[String],
) -> Result<Vec<(usize, Vec<u8>)>, String> {
    let [a_path, b_path] = files else {
        return Err(format!(
            "gemm_reduce_scatter takes 2 input files (a, b); {} given",
            files.len()
        ));
    };
    let (m, n, k) = g.mnk;
    let t = PrimitiveType::from_name(dtype.name())
        .ok_or_else(|| format!("{dtype} has no array element type"))?;
    let eb = u64::from(dtype.bytes());
    let a = read_input(a_path, &array(t, [m, k])?, m * k * eb)?;
    let b = crate::kernel_shipped::read_gemm_b(b_path, &array(t, [n, k])?, n * k * eb)?;
    Ok(vec![(g.a, a), (g.b, b)])
}

/// The report of a finished run (device 0's view).
fn report(g: &GemmReduceScatter, p: &DeviceProgram, backend: &str, c_bytes: usize) -> Report {
    let (m, n, k) = g.mnk;
    let moves: Vec<Value> = p
        .steps
        .iter()
        .zip(&p.decisions)
        .filter_map(|(s, _)| match s {
            Step::Move { call, plan, .. } => Some(
                json!({"call": call, "collective": plan.collective.name(), "bytes": plan.bytes}),
            ),
            Step::Local { .. } => None,
        })
        .collect();
    let moved: u64 = p
        .steps
        .iter()
        .map(|s| match s {
            Step::Move { plan, .. } => plan.bytes,
            Step::Local { .. } => 0,
        })
        .sum();
    let devices = p.kernel.mesh.len();
    Report {
        json: json!({"kernel": "gemm_reduce_scatter", "backend": backend, "devices": devices,
                     "m": m, "n": n, "k": k, "bytes_out": c_bytes, "bytes_moved": moved,
                     "moves": moves, "calls": p.decisions.len()}),
        text: format!(
            "gemm_reduce_scatter {m}×{n}×{k} on {devices} devices ({backend}): each device's gemm on the cpu interpreter, {moved} bytes moved between devices, C ({c_bytes} bytes) gathered on device 0"
        ),
    }
}

/// Variables through which MPI launchers tell each process how many they started.
const LAUNCHED_SIZE: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"];

/// `--backend cpu` runs every device in this process: refused when an MPI launcher started several.
fn launched_alone() -> Result<(), String> {
    let size = LAUNCHED_SIZE
        .iter()
        .find_map(|v| Some((*v, std::env::var(v).ok()?.trim().parse::<u64>().ok()?)));
    match size {
        Some((var, n)) if n > 1 => Err(format!(
            "--backend cpu runs every device in this one process, but an MPI launcher started {n} \
             processes ({var}={n}): use --backend mpi on every rank"
        )),
        _ => Ok(()),
    }
}

/// `axe kernel run gemm_reduce_scatter --backend cpu --devices P A B -o C`: one thread per device.
pub fn run_threads(
    params: &Params,
    target: Target,
    files: &[String],
    output: &str,
) -> Result<Report, String> {
    launched_alone()?;
    let (_, _, _, dtype, devices) = gemm_rs_params(params)?;
    // Said before A and B are read: one thread a device, as many as a thread group holds.
    let most = axe_reshard::MAX_THREAD_RANKS;
    if devices > most as u64 {
        return Err(format!(
            "--devices {devices}: --backend cpu runs one thread a device, at most {most}; more \
             devices run under MPI (mpirun -n {devices} axe kernel run ... --backend mpi) or are \
             explained without running (axe kernel explain)"
        ));
    }
    let (g, p) = build(params, devices, target)?;
    let inputs = read_ab(&g, dtype, files)?;
    let out =
        axe_kernel::run_devices_threads(&p, vec![inputs], RunLimits::default(), THREADS_TIMEOUT)
            .map_err(err)?;
    let c = out
        .first()
        .and_then(|d| d.get(g.c))
        .ok_or("device 0 returned no C")?;
    let (m, n, _) = g.mnk;
    write_output(output, &array(PrimitiveType::F32, [m, n])?, c)?;
    Ok(report(&g, &p, "threads", c.len()))
}

/// `mpirun -n P axe kernel run gemm_reduce_scatter --backend mpi A B -o C`: this rank is device
/// `rank`; the ranks agree on the arguments first (rank 0 also on having read A and B), so a rank that
/// cannot start makes every rank fail at once; rank 0 writes C and reports.
#[cfg(feature = "mpi")]
pub fn run_mpi(
    params: &Params,
    target: Target,
    files: &[String],
    output: &str,
    json_mode: bool,
) -> bool {
    use axe_reshard::{Communicator, InputHash};
    let comm = match axe_reshard::MpiComm::init() {
        Ok(c) => c,
        Err(e) => {
            rank_error(None, &e.to_string(), json_mode);
            return false;
        }
    };
    let rank = comm.rank();
    let size = comm.size() as u64;
    let setup = gemm_rs_params(params).and_then(|(m, n, k, dtype, _)| {
        if let Some(d) = params.devices.filter(|&d| d != size) {
            return Err(format!(
                "--devices {d}, but mpirun started {size} ranks (one rank per device: mpirun -n {d})"
            ));
        }
        let (g, p) = build(params, size, target)?;
        let inputs = if rank == 0 {
            read_ab(&g, dtype, files)?
        } else {
            Vec::new()
        };
        Ok((g, p, inputs, (m, n, k, dtype.name(), target.name())))
    });
    let hashes = setup
        .as_ref()
        .ok()
        .map(|(_, _, _, args)| vec![("the arguments", InputHash::of_debug(args))]);
    let outcome = match (setup, axe_reshard::agree(&comm, hashes.as_deref())) {
        (Err(e), _) => Err(e),
        (Ok(_), Err(e)) => Err(e.to_string()),
        (Ok((g, p, inputs, _)), Ok(())) => {
            axe_kernel::run_devices(&comm, &p, inputs, RunLimits::default())
                .map_err(err)
                .and_then(|bufs| {
                    if rank != 0 {
                        return Ok(None);
                    }
                    let c = bufs.get(g.c).ok_or("device 0 returned no C")?;
                    let (m, n, _) = g.mnk;
                    write_output(output, &array(PrimitiveType::F32, [m, n])?, c)?;
                    Ok(Some(report(&g, &p, "mpi", c.len())))
                })
        }
    };
    match outcome {
        Ok(None) => true,
        Ok(Some(r)) => crate::report::emit([Ok::<Report, String>(r)], json_mode),
        Err(e) => {
            rank_error(Some(rank), &e, json_mode);
            false
        }
    }
}

/// Without the `mpi` feature: a clear error.
#[cfg(not(feature = "mpi"))]
pub fn run_mpi(_: &Params, _: Target, _: &[String], _: &str, json_mode: bool) -> bool {
    crate::report::emit(
        [Err::<Report, String>(crate::shard_run::NO_MPI.into())],
        json_mode,
    )
}
