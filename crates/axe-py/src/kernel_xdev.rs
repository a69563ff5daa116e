//! `axe.kernel.DeviceKernel`: a kernel across the devices of a mesh — the shipped
//! `gemm_reduce_scatter` (the paper's §4.2) — with its device tensors and their distributions, every
//! dispatch decision (the cross-device calls' and the per-device gemm's), and a run with one thread
//! per device (without the GIL). The Python side (`axe/kernel.py`) checks the numpy arrays.

use std::time::Duration;

use axe_kernel::gemm_rs::GemmReduceScatter;
use axe_kernel::xdev_dispatch::Step;
use axe_kernel::{run_devices_threads, xdev_lower, DeviceKernel, RunLimits, Target, XdevError};
use axe_xla::{ArrayShape, PrimitiveType};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::errors;
use crate::shape::PyShape;
use crate::value::U64;

/// How long one device waits for a peer (each device interprets its gemm meanwhile).
const THREADS_TIMEOUT: Duration = Duration::from_secs(600);

/// An error across devices as a Python `axe.KernelError`.
pub(crate) fn xdev(e: XdevError) -> PyErr {
    match e {
        XdevError::Kernel(k) => errors::kernel(k),
        other => errors::KernelError::new_err(errors::pythonize(&other.to_string())),
    }
}

/// What `gemm_reduce_scatter` adds to its kernel: its tensors' roles and its arrays.
struct GemmParts {
    g: GemmReduceScatter,
    /// `(name, array, bytes, is_input)` of A, B (inputs) and C (the output), as device 0 holds them.
    params: Vec<(String, ArrayShape, u64, bool)>,
}

/// A kernel across devices: the shipped `gemm_reduce_scatter` for one problem, device count and
/// target, or one described with `axe.kernel.DeviceBuilder`.
#[pyclass(name = "DeviceKernel", module = "axe.kernel", frozen)]
pub struct PyDeviceKernel {
    kernel: DeviceKernel,
    /// The target per-device kernels are lowered for unless a call names one.
    target: Target,
    gemm: Option<GemmParts>,
}

impl PyDeviceKernel {
    /// A kernel described in Python, lowered for `target` unless a call names another.
    pub fn built(kernel: DeviceKernel, target: Target) -> PyDeviceKernel {
        PyDeviceKernel {
            kernel,
            target,
            gemm: None,
        }
    }

    fn gemm(&self) -> PyResult<&GemmParts> {
        self.gemm.as_ref().ok_or_else(|| {
            errors::KernelError::new_err(format!(
                "{} was described with axe.kernel.DeviceBuilder: run it with run_devices",
                self.kernel.name
            ))
        })
    }

    fn target_or(&self, target: Option<&str>) -> PyResult<Target> {
        match target {
            None => Ok(self.target),
            Some(t) => t.parse().map_err(errors::kernel),
        }
    }
}

fn array(t: PrimitiveType, rows: u64, cols: u64) -> PyResult<ArrayShape> {
    let d = |x: u64| {
        i64::try_from(x).map_err(|_| errors::KernelError::new_err(format!("{x} is too large")))
    };
    Ok(ArrayShape::new(t, &[d(rows)?, d(cols)?]))
}

/// The bytes of a row-major `rows × cols` array of `elem_bytes`-byte elements.
fn bytes_of(rows: u64, cols: u64, elem_bytes: u64) -> PyResult<u64> {
    rows.checked_mul(cols)
        .and_then(|x| x.checked_mul(elem_bytes))
        .ok_or_else(|| errors::KernelError::new_err(format!("{rows}×{cols} is too large")))
}

#[pymethods]
impl PyDeviceKernel {
    /// The kernel's name (`gemm_reduce_scatter`).
    #[getter]
    fn name(&self) -> String {
        self.kernel.name.clone()
    }

    /// How many devices it spans (the mesh `x=P`).
    #[getter]
    fn devices(&self) -> usize {
        self.kernel.mesh.len()
    }

    /// The scope its calls run at (`devices(x=P)`).
    #[getter]
    fn scope(&self) -> String {
        self.kernel.scope()
    }

    /// The target its per-device gemm is shipped and lowered for.
    #[getter]
    fn target(&self) -> String {
        self.target.name().to_string()
    }

    /// `(M, N, K)` of `gemm_reduce_scatter` (None for a described kernel).
    #[getter]
    fn mnk(&self) -> Option<(u64, u64, u64)> {
        self.gemm.as_ref().map(|g| g.g.mnk)
    }

    /// Its device tensors in order: `(name, distribution)`, the distribution as `axe kernel explain`
    /// writes it (the sharding over the mesh and each device's memory layout).
    #[getter]
    fn tensors(&self) -> Vec<(String, String)> {
        let k = &self.kernel;
        k.tensors
            .iter()
            .map(|t| (t.name.clone(), t.describe(&k.mesh)))
            .collect()
    }

    /// The arrays device 0 holds before and after a run of `gemm_reduce_scatter`, `(name, shape,
    /// bytes, is_input)`: A `[M,K]`, B as `[N,K]`, and C `[M,N]` f32 gathered there (empty for a
    /// described kernel).
    #[getter]
    fn params(&self) -> Vec<(String, PyShape, u64, bool)> {
        self.gemm
            .iter()
            .flat_map(|g| g.params.iter())
            .map(|(n, a, bytes, i)| (n.clone(), PyShape { inner: a.clone() }, *bytes, *i))
            .collect()
    }

    /// Every dispatch decision, in call order: dicts of `op`, `scope`, `variant`, `why` and `declined`
    /// (a list of `(variant, reason)`); the cross-device copies and reduction (at `devices(x=P)`) also
    /// carry `collective` and `bytes`, their plan's collective and the bytes it moves; the per-device
    /// gemm's own decisions follow its `kernel` call, prefixed by its name. `target` (default: the
    /// kernel's) is what the per-device kernels are lowered for.
    #[pyo3(signature = (target = None))]
    fn explain<'py>(
        &self,
        py: Python<'py>,
        target: Option<&str>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let t = self.target_or(target)?;
        let p = py.detach(|| xdev_lower(&self.kernel, t)).map_err(xdev)?;
        let moves: Vec<(usize, &str, u64)> = p
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Move { call, plan, .. } => Some((*call, plan.collective.name(), plan.bytes)),
                Step::Local { .. } => None,
            })
            .collect();
        p.decisions
            .iter()
            .map(|d| {
                let o = PyDict::new(py);
                o.set_item("op", &d.op)?;
                o.set_item("scope", &d.scope)?;
                o.set_item("variant", &d.variant)?;
                o.set_item("why", &d.why)?;
                o.set_item("declined", d.declined.clone())?;
                let call = p.kernel.calls.iter().find(|c| c.label() == d.op);
                if let Some((_, collective, bytes)) =
                    call.and_then(|c| moves.iter().find(|(i, _, _)| *i == c.index))
                {
                    o.set_item("collective", *collective)?;
                    o.set_item("bytes", *bytes)?;
                }
                Ok(o)
            })
            .collect()
    }

    /// Runs it with one thread per device, every per-device gemm on the CPU interpreter: `a` and `b`
    /// are device 0's inputs (the bytes of A `[M,K]` and B `[N,K]`, row-major). Returns `(c, shards)`:
    /// the bytes of C gathered on device 0, and each device's shard of C split along M (`c_m`).
    fn _run<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyBytes>,
        b: &Bound<'py, PyBytes>,
    ) -> PyResult<(Bound<'py, PyBytes>, Vec<Bound<'py, PyBytes>>)> {
        let g = &self.gemm()?.g;
        let inputs = vec![vec![
            (g.a, a.as_bytes().to_vec()),
            (g.b, b.as_bytes().to_vec()),
        ]];
        let out = py
            .detach(|| {
                let p = xdev_lower(&self.kernel, self.target)?;
                run_devices_threads(&p, inputs, RunLimits::default(), THREADS_TIMEOUT)
            })
            .map_err(xdev)?;
        let missing =
            || errors::KernelError::new_err("a device returned fewer tensors than it has");
        let c = out.first().and_then(|d| d.get(g.c)).ok_or_else(missing)?;
        let shards = out
            .iter()
            .map(|d| d.get(g.c_m).map(|s| PyBytes::new(py, s)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(missing)?;
        Ok((PyBytes::new(py, c), shards))
    }

    /// Runs it on numpy arrays `a` `[M,K]` and `b` `[N,K]` (bf16 as `ml_dtypes.bfloat16` or its
    /// `uint16` bits, f16 as `float16`), one thread per device; returns C `[M,N]` (f32) as gathered on
    /// device 0.
    fn run<'py>(
        slf: &Bound<'py, Self>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        call_python(slf, a, b, false)
    }

    /// Runs it as `run` does; returns every device's shard of C split along M after the
    /// reduce-scatter, device by device (f32 arrays `[rows of device d, N]`).
    fn run_shards<'py>(
        slf: &Bound<'py, Self>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        call_python(slf, a, b, true)
    }

    /// Per tensor, in order: `(name, dtype, bytes of each device's shard)` (a device's shard is its
    /// region in the tensor's memory layout, padded as XLA pads uneven shards).
    #[getter]
    fn _shards(&self) -> PyResult<Vec<(String, String, Vec<usize>)>> {
        let k = &self.kernel;
        k.tensors
            .iter()
            .map(|t| {
                let sizes = (0..k.mesh.len() as u64)
                    .map(|d| {
                        let b = t.placement.buffer(&k.mesh, d).and_then(|b| b.bytes());
                        b.map_err(|e| xdev(XdevError::Exec(e)))
                    })
                    .collect::<PyResult<Vec<usize>>>()?;
                Ok((t.name.clone(), t.dtype.name().to_string(), sizes))
            })
            .collect()
    }

    /// Runs it with one thread per device, per-device kernels on the CPU interpreter lowered for
    /// `target` (default: the kernel's): `inputs[d]` holds device `d`'s `(tensor index, shard bytes)`
    /// (every other shard starts at zero). Returns every device's shard of every tensor afterwards.
    #[pyo3(signature = (inputs, target = None))]
    fn _run_devices<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Vec<(usize, Bound<'py, PyBytes>)>>,
        target: Option<&str>,
    ) -> PyResult<Vec<Vec<Bound<'py, PyBytes>>>> {
        let t = self.target_or(target)?;
        let inputs: Vec<Vec<(usize, Vec<u8>)>> = inputs
            .iter()
            .map(|d| d.iter().map(|(i, b)| (*i, b.as_bytes().to_vec())).collect())
            .collect();
        let out = py
            .detach(|| {
                let p = xdev_lower(&self.kernel, t)?;
                run_devices_threads(&p, inputs, RunLimits::default(), THREADS_TIMEOUT)
            })
            .map_err(xdev)?;
        Ok(out
            .iter()
            .map(|d| d.iter().map(|s| PyBytes::new(py, s)).collect())
            .collect())
    }

    /// Runs it on `{tensor name: [device 0's shard, device 1's, ...]}` (numpy arrays of the tensor's
    /// dtype, taken row-major, each exactly its device's shard; `None` or a short list leaves the
    /// others at zero), one thread per device; returns `{tensor name: [each device's shard]}` (1-D
    /// arrays) afterwards.
    #[pyo3(signature = (inputs, target = None))]
    fn run_devices<'py>(
        slf: &Bound<'py, Self>,
        inputs: &Bound<'py, PyAny>,
        target: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        py.import("axe.kernel")?
            .getattr("_run_by_device")?
            .call1((slf.clone(), inputs, target))
    }

    fn __repr__(&self) -> String {
        match &self.gemm {
            Some(g) => {
                let (m, n, k) = g.g.mnk;
                format!(
                    "axe.kernel.DeviceKernel({} {m}×{n}×{k} on {} devices, per-device gemm for {})",
                    self.kernel.name,
                    self.kernel.mesh.len(),
                    self.target
                )
            }
            None => format!(
                "axe.kernel.DeviceKernel({} on {}, {} tensors, {} calls)",
                self.kernel.name,
                self.kernel.scope(),
                self.kernel.tensors.len(),
                self.kernel.calls.len()
            ),
        }
    }
}

/// `axe.kernel._run_devices(kernel, (a, b), shards)`: the numpy side of a run.
fn call_python<'py>(
    slf: &Bound<'py, PyDeviceKernel>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    shards: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let inputs = PyTuple::new(py, [a.clone(), b.clone()])?;
    py.import("axe.kernel")?
        .getattr("_run_devices")?
        .call1((slf.clone(), inputs, shards))
}

/// The shipped `gemm_reduce_scatter`: `C[M,N] (f32) = A[M,K]·B` (B given as `[N,K]`, bf16 or f16) over
/// `devices` devices, each multiplying its K-slices with the gemm shipped for `target`, the partial
/// sums reduced and scattered along M, then gathered on device 0.
#[pyfunction]
#[pyo3(signature = (m, n, k, dtype = "bf16", devices = U64(1), target = "sm_80"))]
pub fn _kernel_gemm_reduce_scatter(
    py: Python<'_>,
    m: U64,
    n: U64,
    k: U64,
    dtype: &str,
    devices: U64,
    target: &str,
) -> PyResult<PyDeviceKernel> {
    let (m, n, k, devices) = (m.0, n.0, k.0, devices.0);
    let t: Target = target.parse().map_err(errors::kernel)?;
    let d: axe_kernel::DType = dtype.parse().map_err(errors::kernel)?;
    let elem = PrimitiveType::from_name(d.name())
        .ok_or_else(|| errors::KernelError::new_err(format!("{d} has no XLA element type")))?;
    let g = py
        .detach(|| axe_kernel::shipped::gemm_reduce_scatter((m, n, k), d, devices, t))
        .map_err(xdev)?;
    let eb = u64::from(d.bytes());
    let params = vec![
        (
            "a".to_string(),
            array(elem, m, k)?,
            bytes_of(m, k, eb)?,
            true,
        ),
        (
            "b".to_string(),
            array(elem, n, k)?,
            bytes_of(n, k, eb)?,
            true,
        ),
        (
            "c".to_string(),
            array(PrimitiveType::F32, m, n)?,
            bytes_of(m, n, 4)?,
            false,
        ),
    ];
    Ok(PyDeviceKernel {
        kernel: g.kernel.clone(),
        target: t,
        gemm: Some(GemmParts { g, params }),
    })
}
