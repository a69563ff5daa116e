//! `axe.kernel.DeviceBuilder`: a kernel across the devices of a mesh described in Python, a thin layer
//! over `axe_kernel::DeviceKernelBuilder` — device tensors (a sharding, optionally holding partial
//! values, or one Axe layout over device axes and memory), `copy`, `reduce` and per-device `kernel`
//! calls, each checked as it is added (an `axe.KernelError` saying what was wrong).

use axe_kernel::{DeviceKernelBuilder, DeviceTensorId, ReduceOp, Target};
use axe_shard::{AxisUse, Sharding};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors;
use crate::kernel::PyKernel;
use crate::kernel_tensor::{dtype, layout};
use crate::kernel_xdev::{xdev, PyDeviceKernel};
use crate::sharding::{PyMesh, PySharding};
use crate::value::{U64s, Usize, Usizes};

/// The description being written; `None` once built.
#[pyclass(name = "DeviceBuilder", module = "axe.kernel")]
pub struct PyDeviceBuilder {
    inner: Option<DeviceKernelBuilder>,
    tensors: usize,
}

fn reduce_op(op: &str) -> PyResult<ReduceOp> {
    match op {
        "sum" => Ok(ReduceOp::Sum),
        "max" => Ok(ReduceOp::Max),
        _ => Err(errors::KernelError::new_err(format!(
            "unknown reduction {op:?}; expected sum or max"
        ))),
    }
}

fn shard_op(op: ReduceOp) -> axe_shard::ReduceOp {
    match op {
        ReduceOp::Sum => axe_shard::ReduceOp::Sum,
        ReduceOp::Max => axe_shard::ReduceOp::Max,
    }
}

impl PyDeviceBuilder {
    fn builder(&mut self) -> PyResult<&mut DeviceKernelBuilder> {
        self.inner.as_mut().ok_or_else(|| {
            errors::KernelError::new_err("this DeviceBuilder was already built; start a new one")
        })
    }

    fn id(&self, t: usize) -> PyResult<DeviceTensorId> {
        if t < self.tensors {
            Ok(DeviceTensorId(t))
        } else {
            Err(errors::KernelError::new_err(format!(
                "no device tensor {t}: this description has {} (tensor() returns their indices)",
                self.tensors
            )))
        }
    }

    /// `sharding` with the mesh axes of `partial` holding partial values pending `op`.
    fn with_partial(
        &mut self,
        sharding: &Sharding,
        partial: &Bound<'_, PyDict>,
    ) -> PyResult<Sharding> {
        let mesh = self.builder()?.mesh().clone();
        if sharding.placement().is_some() || sharding.maximal_device().is_some() {
            return Err(errors::KernelError::new_err(
                "partial values need a sharding split along dims or replicated, not one held by \
                 one device or placed on named devices",
            ));
        }
        let mut uses = Vec::new();
        for (axis, op) in partial.iter() {
            let name: String = axis.extract()?;
            let op: String = op.extract()?;
            let a = mesh
                .names()
                .iter()
                .position(|n| *n == name)
                .ok_or_else(|| {
                    errors::KernelError::new_err(format!(
                        "the mesh has no axis {name:?}; its axes are {}",
                        mesh.names().join(", ")
                    ))
                })?;
            if sharding.dim_axes().iter().any(|d| d.contains(&a)) {
                return Err(errors::KernelError::new_err(format!(
                    "mesh axis {name} splits a dim of the sharding; it cannot also hold partial values"
                )));
            }
            uses.push((a, AxisUse::Partial(shard_op(reduce_op(&op)?))));
        }
        Sharding::new(
            &mesh,
            sharding.dims().to_vec(),
            sharding.dim_axes().to_vec(),
            &uses,
        )
        .map(|s| s.with_uneven(sharding.uneven()))
        .map_err(errors::shard)
    }
}

#[pymethods]
impl PyDeviceBuilder {
    /// A kernel named `name` across the devices of `mesh` (an `axe.Mesh` whose device ids are
    /// `0..N`: device `r` runs as thread or rank `r`).
    #[new]
    fn new(name: &str, mesh: &PyMesh) -> PyResult<Self> {
        let inner = DeviceKernelBuilder::new(name, mesh.inner.clone()).map_err(xdev)?;
        Ok(PyDeviceBuilder {
            inner: Some(inner),
            tensors: 0,
        })
    }

    /// A device tensor of `dtype` distributed as `sharding` (an `axe.Sharding` of this mesh) says,
    /// each device storing its region row-major; `partial` (`{mesh axis: "sum" | "max"}`) makes those
    /// unsplit axes hold partial values still to be combined (DTensor's `Partial()`). Returns its
    /// index.
    #[pyo3(signature = (name, dtype, sharding, partial = None))]
    fn tensor(
        &mut self,
        name: &str,
        dtype: &str,
        sharding: &PySharding,
        partial: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<usize> {
        let d = self::dtype(dtype)?;
        let s = match partial {
            Some(p) if !p.is_empty() => self.with_partial(sharding.sharding(), p)?,
            _ => sharding.sharding().clone(),
        };
        let id = self.builder()?.tensor(name, d, s).map_err(xdev)?;
        self.tensors += 1;
        Ok(id.0)
    }

    /// A device tensor of `dtype` and shape `dims` given as one Axe layout (an `axe.Layout` or its
    /// notation) over the mesh's device axes (`gpu_<axis>`) and memory, e.g.
    /// `"S[(2,64,128):(1@gpu_x,128,1)]"`. Returns its index.
    fn tensor_axe(
        &mut self,
        name: &str,
        dtype: &str,
        dims: U64s,
        layout: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let dims = dims.0;
        let d = self::dtype(dtype)?;
        let l = self::layout(layout)?;
        let id = self
            .builder()?
            .tensor_axe(name, d, &dims, &l)
            .map_err(xdev)?;
        self.tensors += 1;
        Ok(id.0)
    }

    /// `copy(dst, src)`: `dst` holds the values of `src` redistributed (`copy.local` or
    /// `copy.reshard`; `force` names one).
    #[pyo3(signature = (dst, src, force = None))]
    fn copy(&mut self, dst: Usize, src: Usize, force: Option<&str>) -> PyResult<()> {
        let (d, s) = (self.id(dst.0)?, self.id(src.0)?);
        self.builder()?.copy_forced(d, s, force).map_err(xdev)
    }

    /// `reduce(dst, src, op)`: `dst` holds the partial values of `src` combined by `op` (`"sum"` or
    /// `"max"`) along its pending device axes (`reduce.reduce_scatter`, `reduce.all_reduce`,
    /// `reduce.reshard`; `force` names one).
    #[pyo3(signature = (dst, src, op = "sum", force = None))]
    fn reduce(&mut self, dst: Usize, src: Usize, op: &str, force: Option<&str>) -> PyResult<()> {
        let (d, s, op) = (self.id(dst.0)?, self.id(src.0)?, reduce_op(op)?);
        self.builder()?.reduce_forced(d, s, op, force).map_err(xdev)
    }

    /// Every device runs `kernel` (an `axe.kernel.Kernel`) on its own shards of `binds`, one device
    /// tensor per global buffer in parameter order, each a row-major shard of exactly that buffer's
    /// type and bytes.
    fn kernel(&mut self, kernel: &PyKernel, binds: Usizes) -> PyResult<()> {
        let ids = binds
            .0
            .iter()
            .map(|&b| self.id(b))
            .collect::<PyResult<Vec<_>>>()?;
        self.builder()?
            .kernel(kernel.kernel().clone(), &ids)
            .map_err(xdev)
    }

    /// The `axe.kernel.DeviceKernel` described, its per-device kernels lowered for `target` (`cpu`,
    /// `sm_80`, `sm_90a`, `trn1`) unless a call names another. The builder cannot be used afterwards.
    #[pyo3(signature = (target = "cpu"))]
    fn build(&mut self, target: &str) -> PyResult<PyDeviceKernel> {
        let t: Target = target.parse().map_err(errors::kernel)?;
        let b = self.inner.take().ok_or_else(|| {
            errors::KernelError::new_err("this DeviceBuilder was already built; start a new one")
        })?;
        Ok(PyDeviceKernel::built(b.build(), t))
    }
}
