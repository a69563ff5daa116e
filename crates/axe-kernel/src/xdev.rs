//! Across devices: tensors with device axes, and operators called at the scope of every device of a mesh.
//!
//! A [`DeviceTensor`] is an array distributed over the devices of a [`Mesh`]: its sharding says which
//! device holds which region (split along a dim, replicated, on one device, or holding *partial values*
//! still to be combined — a pending sum), and each device stores its region row-major (or in any Axe or
//! XLA memory layout). Written as an Axe layout, the device axes `gpu_<axis>` sit beside the memory axis
//! `m` ([`DeviceTensor::layout`]; [`DeviceKernelBuilder::tensor_axe`] reads one back).
//!
//! A [`DeviceKernel`] is a list of calls at the device scope ([`XCall`]): `copy` between two
//! distributions of one array (a reshard), `reduce` of a tensor holding pending partial values into one
//! that does not (a reduce-scatter, an all-reduce, or any reshard that combines on arrival), and `kernel`:
//! a single-device [`Kernel`] each device runs on its own shards. [`crate::xdev_lower()`] dispatches
//! every cross-device call to a variant ([`crate::xdev_dispatch`]) whose plan is `axe_shard::plan`, and
//! [`crate::run_devices`] executes the program on one rank of an `axe_reshard` communicator (threads
//! in one process, or MPI ranks).

use axe_layout::Layout;
use axe_reshard::{MemoryLayout, Placement};
use axe_shard::{Mesh, Sharding};
use axe_xla::PrimitiveType;

use crate::desc::{Kernel, Space};
use crate::dtype::DType;
use crate::error::KernelError;
use crate::reduce::ReduceOp;

/// What can go wrong describing, lowering or running a kernel across devices.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum XdevError {
    /// The description or a per-device kernel is wrong, or no variant applies.
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// A mesh or sharding cannot be used.
    #[error("devices: {0}")]
    Shard(#[from] axe_shard::ShardError),
    /// Moving bytes between devices failed (a peer gone, a timeout, a buffer of the wrong size).
    #[error("devices: {0}")]
    Exec(#[from] axe_reshard::ExecError),
}

/// Results across devices.
pub type XResult<T> = std::result::Result<T, XdevError>;

fn invalid(msg: String) -> XdevError {
    XdevError::Kernel(KernelError::Invalid(msg))
}

/// An array distributed over the devices of a kernel's mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceTensor {
    /// Its name in messages.
    pub name: String,
    /// Element type.
    pub dtype: DType,
    /// Who holds what, each device's memory layout, the element type.
    pub placement: Placement,
}

impl DeviceTensor {
    /// The global shape.
    pub fn dims(&self) -> &[u64] {
        self.placement.sharding.dims()
    }

    /// The sharding.
    pub fn sharding(&self) -> &Sharding {
        &self.placement.sharding
    }

    /// The mesh axes holding partial values, with the op that combines them.
    pub fn pending(&self) -> Vec<(usize, axe_shard::ReduceOp)> {
        self.sharding().partial_axes()
    }

    /// The tensor as one Axe layout over device axes and memory (row-major memory), where it has one:
    /// pending partial values, a single holder and uneven splits have none.
    pub fn layout(&self, mesh: &Mesh) -> XResult<Layout> {
        Ok(axe_shard::axe::to_axe(mesh, self.sharding(), None)?)
    }

    /// `c f32[256,128] S[(2,128,128):(1@gpu_x,128,1)]`: name, type and shape, and the distribution as
    /// an Axe layout, else as DTensor placements (`[Partial()]`: pending sums), else as XLA sharding
    /// text; `on device 0` for a tensor one device holds whole.
    pub fn describe(&self, mesh: &Mesh) -> String {
        use axe_shard::Notation;
        let dims: Vec<String> = self.dims().iter().map(u64::to_string).collect();
        if let Some(d) = self.sharding().maximal_device() {
            return format!(
                "{} {}[{}] on device {d}",
                self.name,
                self.dtype,
                dims.join(",")
            );
        }
        let how = [Notation::Axe, Notation::Dtensor, Notation::Hlo]
            .into_iter()
            .find_map(|n| axe_shard::print(n, mesh, self.sharding()).ok())
            .unwrap_or_else(|| "(no text form)".into());
        format!("{} {}[{}] {how}", self.name, self.dtype, dims.join(","))
    }
}

/// A handle to a tensor of a [`DeviceKernelBuilder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceTensorId(pub usize);

/// An operator at the device scope.
#[derive(Debug, Clone, PartialEq)]
pub enum XOp {
    /// `dst = src` redistributed (a reshard).
    Copy,
    /// `dst = op` over the partial values `src` holds along its pending device axes.
    Reduce(ReduceOp),
    /// Every device runs the kernel on its own shards of the bound tensors, one per global buffer of
    /// the kernel, in parameter order (`src` and `dst` unused).
    Kernel {
        /// The single-device kernel.
        kernel: Box<Kernel>,
        /// The tensor bound to each global buffer.
        binds: Vec<usize>,
    },
}

/// One call at the device scope.
#[derive(Debug, Clone, PartialEq)]
pub struct XCall {
    /// Its index among the kernel's calls.
    pub index: usize,
    /// The operator.
    pub op: XOp,
    /// The destination tensor (copy, reduce).
    pub dst: usize,
    /// The source tensor (copy, reduce).
    pub src: usize,
    /// A variant the caller forces (it must still apply).
    pub force: Option<String>,
}

impl XCall {
    /// The operator's name: `copy`, `reduce`, `kernel`.
    pub fn kind(&self) -> &'static str {
        match self.op {
            XOp::Copy => "copy",
            XOp::Reduce(_) => "reduce",
            XOp::Kernel { .. } => "kernel",
        }
    }

    /// `copy #0`.
    pub fn label(&self) -> String {
        format!("{} #{}", self.kind(), self.index)
    }
}

/// A kernel across the devices of a mesh: its tensors and calls.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceKernel {
    /// The kernel's name.
    pub name: String,
    /// The devices (device id `r` runs on rank `r`).
    pub mesh: Mesh,
    /// The tensors.
    pub tensors: Vec<DeviceTensor>,
    /// The calls, in order.
    pub calls: Vec<XCall>,
}

impl DeviceKernel {
    /// `devices(x=4)`: the scope every call runs at.
    pub fn scope(&self) -> String {
        let axes: Vec<String> = self
            .mesh
            .names()
            .iter()
            .zip(self.mesh.sizes())
            .map(|(n, s)| format!("{n}={s}"))
            .collect();
        format!("devices({})", axes.join(","))
    }
}

/// Builds a [`DeviceKernel`], checking each tensor and call as it is added.
#[derive(Debug)]
pub struct DeviceKernelBuilder {
    kernel: DeviceKernel,
}

impl DeviceKernelBuilder {
    /// A kernel named `name` over `mesh`, whose device ids must be `0..N` (device `r` runs on rank `r`).
    pub fn new(name: &str, mesh: Mesh) -> XResult<DeviceKernelBuilder> {
        let mut ids = mesh.devices().to_vec();
        ids.sort_unstable();
        if ids.iter().enumerate().any(|(i, &d)| d != i as u64) {
            return Err(invalid(format!(
                "kernel {name}: device r runs on rank r, so the mesh's device ids must be 0 to {} in some order, one per rank",
                mesh.len().saturating_sub(1)
            )));
        }
        Ok(DeviceKernelBuilder {
            kernel: DeviceKernel {
                name: name.to_string(),
                mesh,
                tensors: Vec::new(),
                calls: Vec::new(),
            },
        })
    }

    /// The mesh.
    pub fn mesh(&self) -> &Mesh {
        &self.kernel.mesh
    }

    /// A tensor of `dtype` distributed as `sharding` says (a sharding of this kernel's mesh), each
    /// device storing its region row-major.
    pub fn tensor(
        &mut self,
        name: &str,
        dtype: DType,
        sharding: Sharding,
    ) -> XResult<DeviceTensorId> {
        self.tensor_in(name, dtype, sharding, MemoryLayout::RowMajor)
    }

    /// A tensor of `dtype` and shape `dims` given as one Axe layout over device axes (`gpu_<axis>` of
    /// this kernel's mesh) and memory, e.g. `S[(2,32,128):(1@gpu_x,128,1)]`; each device stores its
    /// region in the layout's memory part.
    pub fn tensor_axe(
        &mut self,
        name: &str,
        dtype: DType,
        dims: &[u64],
        layout: &Layout,
    ) -> XResult<DeviceTensorId> {
        let a = axe_shard::axe::from_axe(layout, dims, Some(&self.kernel.mesh))?;
        self.tensor_in(name, dtype, a.sharding, MemoryLayout::Axe(a.local))
    }

    fn tensor_in(
        &mut self,
        name: &str,
        dtype: DType,
        sharding: Sharding,
        memory: MemoryLayout,
    ) -> XResult<DeviceTensorId> {
        let t = PrimitiveType::from_name(dtype.name()).ok_or_else(|| {
            invalid(format!(
                "tensor {name}: {dtype} has no element type across devices"
            ))
        })?;
        let placement = Placement::new(sharding, memory, t)?;
        // Every device's shard must be addressable (the sharding fits the mesh, sizes fit in memory).
        for b in placement.buffers(&self.kernel.mesh)? {
            b.bytes()?;
        }
        self.kernel.tensors.push(DeviceTensor {
            name: name.to_string(),
            dtype,
            placement,
        });
        Ok(DeviceTensorId(self.kernel.tensors.len() - 1))
    }

    fn check_pair(&self, what: &str, dst: DeviceTensorId, src: DeviceTensorId) -> XResult<()> {
        let (Some(d), Some(s)) = (
            self.kernel.tensors.get(dst.0),
            self.kernel.tensors.get(src.0),
        ) else {
            return Err(invalid(format!(
                "{what}: no such tensor in kernel {}",
                self.kernel.name
            )));
        };
        if d.dims() != s.dims() || d.dtype != s.dtype {
            return Err(invalid(format!(
                "{what} {} ← {}: the shapes and element types must match, not {}{:?} and {}{:?}",
                d.name,
                s.name,
                d.dtype,
                d.dims(),
                s.dtype,
                s.dims()
            )));
        }
        Ok(())
    }

    fn push(&mut self, op: XOp, dst: usize, src: usize, force: Option<&str>) {
        let index = self.kernel.calls.len();
        self.kernel.calls.push(XCall {
            index,
            op,
            dst,
            src,
            force: force.map(str::to_string),
        });
    }

    /// `copy(dst, src)` across devices: `dst` holds the values of `src` redistributed.
    ///
    /// Law: after the call every device holds, at each element of its region of `dst`, the value that
    /// element has in `src` (`src` must not hold pending partial values that `dst` does not: combining
    /// them is [`DeviceKernelBuilder::reduce`]).
    pub fn copy(&mut self, dst: DeviceTensorId, src: DeviceTensorId) -> XResult<()> {
        self.copy_forced(dst, src, None)
    }

    /// [`DeviceKernelBuilder::copy`] with a forced variant.
    pub fn copy_forced(
        &mut self,
        dst: DeviceTensorId,
        src: DeviceTensorId,
        force: Option<&str>,
    ) -> XResult<()> {
        self.check_pair("copy", dst, src)?;
        self.push(XOp::Copy, dst.0, src.0, force);
        Ok(())
    }

    /// `reduce(dst, src, op)` across devices: `src` holds partial values along its pending device axes;
    /// `dst` (without them) holds their combination by `op`.
    ///
    /// Law: after the call every device holds, at each element `e` of its region of `dst`, `op` over
    /// the values of `e` on the devices that hold partial contributions of it.
    pub fn reduce(
        &mut self,
        dst: DeviceTensorId,
        src: DeviceTensorId,
        op: ReduceOp,
    ) -> XResult<()> {
        self.reduce_forced(dst, src, op, None)
    }

    /// [`DeviceKernelBuilder::reduce`] with a forced variant.
    pub fn reduce_forced(
        &mut self,
        dst: DeviceTensorId,
        src: DeviceTensorId,
        op: ReduceOp,
        force: Option<&str>,
    ) -> XResult<()> {
        self.check_pair("reduce", dst, src)?;
        self.push(XOp::Reduce(op), dst.0, src.0, force);
        Ok(())
    }

    /// Every device runs `kernel` on its own shards of `binds`, one tensor per global buffer of the
    /// kernel in parameter order; each must hold, on every device, a row-major shard of exactly that
    /// buffer's element type and bytes.
    pub fn kernel(&mut self, kernel: Kernel, binds: &[DeviceTensorId]) -> XResult<()> {
        let globals: Vec<_> = kernel
            .buffers
            .iter()
            .filter(|b| b.space == Space::Global)
            .collect();
        if globals.len() != binds.len() {
            return Err(invalid(format!(
                "kernel {}: it has {} global buffers, {} tensors are bound",
                kernel.name,
                globals.len(),
                binds.len()
            )));
        }
        for (b, t) in globals.iter().zip(binds) {
            let tensor =
                self.kernel.tensors.get(t.0).ok_or_else(|| {
                    invalid(format!("kernel {}: no such tensor bound", kernel.name))
                })?;
            if tensor.dtype != b.dtype || tensor.placement.layout != MemoryLayout::RowMajor {
                return Err(invalid(format!(
                    "kernel {}: buffer {} holds {}; tensor {} is {} stored {}",
                    kernel.name,
                    b.name,
                    b.dtype,
                    tensor.name,
                    tensor.dtype,
                    if tensor.placement.layout == MemoryLayout::RowMajor {
                        "row-major"
                    } else {
                        "in another layout (a kernel's buffer is row-major)"
                    }
                )));
            }
            let need = b.bytes()?;
            for d in tensor.placement.buffers(&self.kernel.mesh)? {
                let has = d.bytes()? as u64;
                if has != need {
                    return Err(invalid(format!(
                        "kernel {}: buffer {} has {need} bytes, but device {}'s shard of {} has {has}",
                        kernel.name, b.name, d.region.device, tensor.name
                    )));
                }
            }
        }
        let binds = binds.iter().map(|t| t.0).collect();
        self.push(
            XOp::Kernel {
                kernel: Box::new(kernel),
                binds,
            },
            0,
            0,
            None,
        );
        Ok(())
    }

    /// The kernel.
    pub fn build(self) -> DeviceKernel {
        self.kernel
    }
}
