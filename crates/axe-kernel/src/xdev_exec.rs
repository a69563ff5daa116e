//! Executing a kernel across devices on one rank: each rank is one device (device id `r` on rank `r`)
//! and owns only its own shard of every tensor. Cross-device steps run `axe_reshard::reshard` over the
//! communicator it is given (threads in one process, or MPI ranks: the caller picks); per-device
//! kernels run on the CPU interpreter.

use std::time::Duration;

use axe_reshard::{reshard, run_threads, Communicator};

use crate::error::KernelError;
use crate::interp::{run, RunLimits};
use crate::xdev::{XResult, XdevError};
use crate::xdev_dispatch::{DeviceProgram, Step};

/// One device's inputs: (tensor, bytes of its shard).
pub type Inputs = Vec<(usize, Vec<u8>)>;

fn invalid(msg: String) -> XdevError {
    XdevError::Kernel(KernelError::Invalid(msg))
}

/// The bytes of device `device`'s shard of tensor `tensor` (zero where it holds nothing).
pub fn shard_bytes(p: &DeviceProgram, tensor: usize, device: u64) -> XResult<usize> {
    let t = p
        .kernel
        .tensors
        .get(tensor)
        .ok_or_else(|| invalid(format!("no tensor {tensor} in {}", p.kernel.name)))?;
    Ok(t.placement.buffer(&p.kernel.mesh, device)?.bytes()?)
}

/// Runs `p` on this rank (device id `comm.rank()`): `inputs` gives this device's shard of some tensors
/// (tensor index, bytes: exactly the shard's bytes, laid out as the tensor's memory layout says); every
/// other shard starts at zero. Returns this device's shard of every tensor after the last step.
///
/// Law: when every rank runs `run_devices` with the same program, each call takes effect as its law
/// says ([`crate::DeviceKernelBuilder::copy`], [`crate::DeviceKernelBuilder::reduce`], a per-device
/// kernel on the device's own shards), in call order. A rank that fails makes its peers fail within the
/// communicator's timeout, never hang.
pub fn run_devices<C: Communicator + ?Sized>(
    comm: &C,
    p: &DeviceProgram,
    inputs: Vec<(usize, Vec<u8>)>,
    limits: RunLimits,
) -> XResult<Vec<Vec<u8>>> {
    let k = &p.kernel;
    if comm.size() != k.mesh.len() {
        return Err(invalid(format!(
            "{} runs on {} devices, one per rank, but there are {} ranks",
            k.name,
            k.mesh.len(),
            comm.size()
        )));
    }
    let me = comm.rank() as u64;
    let sizes: Vec<usize> = (0..k.tensors.len())
        .map(|t| shard_bytes(p, t, me))
        .collect::<XResult<_>>()?;
    // The shards, and the copies a local kernel's run makes of them, within the run's memory.
    let total = sizes
        .iter()
        .try_fold(0u64, |a, &n| a.checked_add(n as u64)?.checked_add(n as u64));
    if total.is_none_or(|t| t > limits.max_bytes) {
        return Err(XdevError::Kernel(KernelError::TooLarge(format!(
            "{}: device {me}'s shards take more than the run's limit of {} bytes",
            k.name, limits.max_bytes
        ))));
    }
    let mut bufs: Vec<Vec<u8>> = sizes.into_iter().map(|n| vec![0u8; n]).collect();
    for (t, data) in inputs {
        let slot = bufs
            .get_mut(t)
            .ok_or_else(|| invalid(format!("an input for tensor {t}, which {} lacks", k.name)))?;
        if slot.len() != data.len() {
            return Err(invalid(format!(
                "device {me}'s shard of {} has {} bytes; the input has {}",
                k.tensors[t].name,
                slot.len(),
                data.len()
            )));
        }
        *slot = data;
    }
    for step in &p.steps {
        match step {
            Step::Move { src, dst, plan, .. } => {
                let mut out = std::mem::take(&mut bufs[*dst]);
                let (s, d) = (&k.tensors[*src], &k.tensors[*dst]);
                let r = reshard(
                    comm,
                    &k.mesh,
                    plan,
                    &s.placement,
                    &d.placement,
                    &bufs[*src],
                    &mut out,
                );
                bufs[*dst] = out;
                r?;
            }
            Step::Local { program, binds, .. } => {
                let globals: Vec<Vec<u8>> = binds.iter().map(|&b| bufs[b].clone()).collect();
                let out = run(program, globals, limits)?;
                for (&b, data) in binds.iter().zip(out) {
                    bufs[b] = data;
                }
            }
        }
    }
    Ok(bufs)
}

/// Runs `p` on every device at once, one thread per device: `inputs[r]` are device `r`'s inputs (as
/// [`run_devices`] takes them; missing entries mean none). Returns every device's shards, device by
/// device, or the first error (by rank).
pub fn run_devices_threads(
    p: &DeviceProgram,
    inputs: Vec<Vec<(usize, Vec<u8>)>>,
    limits: RunLimits,
    timeout: Duration,
) -> XResult<Vec<Vec<Vec<u8>>>> {
    let n = p.kernel.mesh.len();
    if inputs.len() > n {
        return Err(invalid(format!(
            "inputs for {} devices; {} runs on {n}",
            inputs.len(),
            p.kernel.name
        )));
    }
    let mut inputs = inputs;
    inputs.resize_with(n, Vec::new);
    let inputs: Vec<std::sync::Mutex<Inputs>> =
        inputs.into_iter().map(std::sync::Mutex::new).collect();
    let results = run_threads(n, timeout, |comm| -> XResult<Vec<Vec<u8>>> {
        let mine = inputs
            .get(comm.rank())
            .and_then(|m| m.lock().ok().map(|mut v| std::mem::take(&mut *v)))
            .unwrap_or_default();
        // The ranks share this process's memory.
        let limits = RunLimits {
            max_bytes: limits.max_bytes / n.max(1) as u64,
            ..limits
        };
        run_devices(&comm, p, mine, limits)
    });
    // A rank that fails makes its peers fail with a communication error: report the cause.
    let mut first_comm = None;
    let mut all = Vec::with_capacity(n);
    for r in results {
        match r {
            Ok(v) => all.push(v),
            Err(e @ XdevError::Exec(axe_reshard::ExecError::Comm(_))) => {
                first_comm.get_or_insert(e);
            }
            Err(e) => return Err(e),
        }
    }
    match first_comm {
        Some(e) => Err(e),
        None => Ok(all),
    }
}

impl From<axe_reshard::CommError> for XdevError {
    fn from(e: axe_reshard::CommError) -> XdevError {
        XdevError::Exec(axe_reshard::ExecError::Comm(e))
    }
}
