//! `axe.kernel.Builder`: a kernel description written in Python, a thin layer over
//! `axe_kernel::KernelBuilder`.
//!
//! Every buffer, tensor, statement and operator call is checked when it is written, by the
//! `KernelBuilder` the Python builder feeds as it goes (so an error points at the Python line that
//! caused it), and recorded as the statement tree it adds to. `build()` replays that tree — the same
//! buffers, variables and calls in the same order — through a fresh `KernelBuilder`'s `for_loop`,
//! `if_then`, `window` and operator methods: a kernel written in Python is the kernel its Rust twin
//! builds, statement for statement, and emits the same CUDA.

use std::sync::atomic::{AtomicU64, Ordering};

use axe_kernel::{
    Call, DType, Expr, Kernel, KernelBuilder, Launch, Mbar, Op, Space, Stmt, SyncStmt, Var,
};
use pyo3::prelude::*;

use crate::errors::{self, KernelError};
use crate::kernel::PyKernel;
use crate::kernel_block::{Head, PyBlock};
use crate::kernel_expr::{ExprArg, PyExpr};
use crate::kernel_ops::{self, u32_arg};
use crate::kernel_scope::PyScope;
use crate::kernel_tensor::{self, check_owner, PyBuffer, PyTensor};
use crate::value::{U64s, U64};

/// Tells builders apart: buffers and tensors carry their builder's serial.
static SERIAL: AtomicU64 = AtomicU64::new(1);

/// An open block: the statements written inside it so far.
pub(crate) struct Frame {
    /// Which `with` block opened it (0: the kernel's body).
    pub id: u64,
    pub body: Vec<Stmt>,
}

/// A kernel description being written in Python.
#[pyclass(name = "Builder", module = "axe.kernel")]
pub struct PyBuilder {
    serial: u64,
    name: String,
    launch: Launch,
    min_ctas: u32,
    buffers: Vec<(String, Space, DType, u64)>,
    /// Checks each piece as it is written (its own statements are flat and never built).
    pub(crate) checker: KernelBuilder,
    /// The open blocks, the kernel's body first.
    pub(crate) open: Vec<Frame>,
    pub(crate) next_block: u64,
}

impl PyBuilder {
    pub(crate) fn push(&mut self, s: Stmt) {
        if let Some(f) = self.open.last_mut() {
            f.body.push(s);
        }
    }

    fn buffer_of(&self, b: &PyBuffer) -> PyResult<()> {
        check_owner(b.owner, self.serial, &format!("buffer {}", b.name))
    }

    fn tensors(&self, ts: &[&PyTensor]) -> PyResult<()> {
        ts.iter().try_for_each(|t| {
            check_owner(t.owner, self.serial, &format!("tensor {}", t.inner.name))
        })
    }

    fn mbar(&self, bars: &PyBuffer, index: U64) -> PyResult<Mbar> {
        self.buffer_of(bars)?;
        Ok(Mbar {
            buffer: bars.id,
            index: index.0,
        })
    }

    /// Checks and records a call of `op` at `scope`; returns its index.
    fn call(&mut self, scope: &PyScope, op: Op, force: Option<String>) -> PyResult<usize> {
        let scope = scope.inner.clone();
        let id = self
            .checker
            .call_forced(scope.clone(), op.clone(), force.as_deref())
            .map_err(errors::kernel)?;
        self.push(Stmt::Call(Box::new(Call {
            id,
            op,
            scope,
            force,
        })));
        Ok(id)
    }

    /// A fresh `KernelBuilder` fed the recorded description.
    fn replay(&self) -> axe_kernel::Result<Kernel> {
        let mut kb = KernelBuilder::new(&self.name, self.launch)?;
        kb.min_ctas_per_sm(self.min_ctas);
        for (name, space, dtype, elems) in &self.buffers {
            kb.buffer(name, *space, *dtype, *elems)?;
        }
        let body = self.open.first().map(|f| f.body.as_slice()).unwrap_or(&[]);
        replay(&mut kb, body)?;
        kb.build()
    }
}

fn renumbered(want: Var, got: Var) -> axe_kernel::Result<()> {
    if want == got {
        return Ok(());
    }
    Err(axe_kernel::KernelError::Invalid(format!(
        "internal: variable v{} was replayed as v{}",
        want.0, got.0
    )))
}

/// Writes `body` into `kb` through its public statement methods.
fn replay(kb: &mut KernelBuilder, body: &[Stmt]) -> axe_kernel::Result<()> {
    for s in body {
        match s {
            Stmt::For { var, extent, body } => kb.for_loop(*extent, |kb, v| {
                renumbered(*var, v)?;
                replay(kb, body)
            })?,
            Stmt::If { cond, body } => kb.if_then(cond.clone(), |kb| replay(kb, body))?,
            Stmt::Let { var, value } => renumbered(*var, kb.let_(value.clone()))?,
            Stmt::Barrier => kb.barrier(),
            Stmt::Window {
                buffer,
                base,
                align,
                body,
            } => kb.window(*buffer, base.clone(), *align, |kb| replay(kb, body))?,
            Stmt::Sync(SyncStmt::Init { bar, count }) => kb.mbar_init(*bar, *count)?,
            Stmt::Sync(SyncStmt::FenceInit) => kb.mbar_fence_init(),
            Stmt::Sync(SyncStmt::Arrive { bar }) => kb.mbar_arrive(*bar)?,
            Stmt::Sync(SyncStmt::Wait { bar, parity }) => kb.mbar_wait(*bar, parity.clone())?,
            Stmt::Sync(SyncStmt::MaxRegisters { inc, regs }) => kb.max_registers(*inc, *regs)?,
            Stmt::Sync(SyncStmt::Commit) => kb.async_commit(),
            Stmt::Sync(SyncStmt::WaitGroups { pending }) => kb.async_wait(*pending),
            Stmt::Intrinsic(i) => kb.push_intrinsic(i.clone()),
            // A `copy_async`'s mbarrier was checked when the call was written.
            Stmt::Call(c) => {
                kb.call_forced(c.scope.clone(), c.op.clone(), c.force.as_deref())?;
            }
        }
    }
    Ok(())
}

#[pymethods]
impl PyBuilder {
    /// A kernel named `name` (a C identifier) launched as `grid` CTAs of `threads` threads, in
    /// clusters of `cluster` CTAs.
    #[new]
    #[pyo3(signature = (name, *, grid, threads, cluster = U64(1)))]
    fn new(name: &str, grid: U64, threads: U64, cluster: U64) -> PyResult<Self> {
        let launch = Launch {
            grid: u32_arg("grid", grid)?,
            cluster: u32_arg("cluster", cluster)?,
            threads: u32_arg("threads", threads)?,
        };
        let checker = KernelBuilder::new(name, launch).map_err(errors::kernel)?;
        Ok(PyBuilder {
            serial: SERIAL.fetch_add(1, Ordering::Relaxed),
            name: name.to_string(),
            launch,
            min_ctas: 0,
            buffers: Vec::new(),
            checker,
            open: vec![Frame {
                id: 0,
                body: Vec::new(),
            }],
            next_block: 1,
        })
    }

    /// The kernel's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Declares a buffer of `elems` elements of `dtype` in `space` (`"global"`: a kernel parameter;
    /// `"shared"`, `("shared", "128B")` swizzled; `"registers"`: `elems` per thread).
    fn buffer(
        &mut self,
        name: &str,
        space: &Bound<'_, PyAny>,
        dtype: &str,
        elems: U64,
    ) -> PyResult<PyBuffer> {
        let (space, dtype) = (kernel_tensor::space(space)?, kernel_tensor::dtype(dtype)?);
        let id = self
            .checker
            .buffer(name, space, dtype, elems.0)
            .map_err(errors::kernel)?;
        self.buffers.push((name.to_string(), space, dtype, elems.0));
        Ok(PyBuffer {
            owner: self.serial,
            id,
            name: name.to_string(),
            space,
            dtype,
            elems: elems.0,
        })
    }

    /// A tensor of `shape` in `buffer` whose Axe `layout` (an `axe.Layout` or its notation) maps each
    /// index to its element: on `m` (in elements) in memory, on `reg`/`lane`/`warp` in registers.
    fn tensor(
        &self,
        name: &str,
        buffer: &PyBuffer,
        shape: U64s,
        layout: &Bound<'_, PyAny>,
    ) -> PyResult<PyTensor> {
        self.buffer_of(buffer)?;
        let layout = kernel_tensor::layout(layout)?;
        let inner = self
            .checker
            .tensor(name, buffer.id, &shape.0, layout)
            .map_err(errors::kernel)?;
        Ok(PyTensor {
            owner: self.serial,
            inner,
        })
    }

    /// `with k.for_(n) as i:` — the block runs for `i` in `0..n`.
    fn for_(slf: Bound<'_, Self>, extent: U64) -> PyBlock {
        PyBlock::new(slf.unbind(), Head::For(extent.0))
    }

    /// `with k.if_(cond):` — the block runs where `cond` is non-zero.
    fn if_(slf: Bound<'_, Self>, cond: ExprArg) -> PyBlock {
        PyBlock::new(slf.unbind(), Head::If(cond.0))
    }

    /// `with k.window(buffer, base, align):` — within the block, global `buffer` is addressed from
    /// element `base` (a multiple of `align`): a tensor's base pointer, per thread.
    fn window(
        slf: Bound<'_, Self>,
        buffer: &PyBuffer,
        base: ExprArg,
        align: U64,
    ) -> PyResult<PyBlock> {
        {
            let mut b = slf.borrow_mut();
            b.buffer_of(buffer)?;
            // Checked now: the block's statements come later.
            b.checker
                .window(buffer.id, base.0.clone(), align.0, |_| Ok(()))
                .map_err(errors::kernel)?;
        }
        Ok(PyBlock::new(
            slf.unbind(),
            Head::Window(buffer.id, base.0, align.0),
        ))
    }

    /// `v = k.let(expr)`: a variable holding `expr`'s value from here on.
    fn r#let(&mut self, value: ExprArg) -> PyExpr {
        let var = self.checker.var();
        self.push(Stmt::Let {
            var,
            value: value.0,
        });
        PyExpr {
            inner: Expr::Var(var),
        }
    }

    /// A CTA barrier (`__syncthreads`).
    fn barrier(&mut self) {
        self.push(Stmt::Barrier);
    }

    /// Asks the GPU compiler to fit `n` CTAs per SM (`__launch_bounds__(threads, n)`).
    fn min_ctas_per_sm(&mut self, n: U64) -> PyResult<()> {
        self.min_ctas = u32_arg("min_ctas_per_sm", n)?;
        self.checker.min_ctas_per_sm(self.min_ctas);
        Ok(())
    }

    /// `mbarrier.init`: mbarrier `bars[index]` (an unswizzled shared s64 buffer) expects `count`
    /// arrivals per phase.
    fn mbar_init(&mut self, bars: &PyBuffer, index: U64, count: U64) -> PyResult<()> {
        let (bar, count) = (self.mbar(bars, index)?, u32_arg("count", count)?);
        self.checker.mbar_init(bar, count).map_err(errors::kernel)?;
        self.push(Stmt::Sync(SyncStmt::Init { bar, count }));
        Ok(())
    }

    /// `fence.mbarrier_init`: initialised mbarriers become visible to the copy engine.
    fn mbar_fence_init(&mut self) {
        self.push(Stmt::Sync(SyncStmt::FenceInit));
    }

    /// One arrival on mbarrier `bars[index]`.
    fn mbar_arrive(&mut self, bars: &PyBuffer, index: U64) -> PyResult<()> {
        let bar = self.mbar(bars, index)?;
        self.checker.mbar_arrive(bar).map_err(errors::kernel)?;
        self.push(Stmt::Sync(SyncStmt::Arrive { bar }));
        Ok(())
    }

    /// Waits for the phase of parity `parity` (0 or 1, an expression) of mbarrier `bars[index]`.
    fn mbar_wait(&mut self, bars: &PyBuffer, index: U64, parity: ExprArg) -> PyResult<()> {
        let bar = self.mbar(bars, index)?;
        self.checker
            .mbar_wait(bar, parity.0.clone())
            .map_err(errors::kernel)?;
        self.push(Stmt::Sync(SyncStmt::Wait {
            bar,
            parity: parity.0,
        }));
        Ok(())
    }

    /// `setmaxnreg`: the running warpgroup's registers per thread become `regs` (raised when `inc`).
    fn max_registers(&mut self, inc: bool, regs: U64) -> PyResult<()> {
        let regs = u32_arg("regs", regs)?;
        self.checker
            .max_registers(inc, regs)
            .map_err(errors::kernel)?;
        self.push(Stmt::Sync(SyncStmt::MaxRegisters { inc, regs }));
        Ok(())
    }

    /// `dst[x] = src[x]` at `scope`; `force` names the variant to use. Returns the call's index.
    #[pyo3(signature = (scope, dst, src, *, force = None))]
    fn copy(
        &mut self,
        scope: &PyScope,
        dst: &PyTensor,
        src: &PyTensor,
        force: Option<String>,
    ) -> PyResult<usize> {
        self.tensors(&[dst, src])?;
        let (dst, src) = (dst.inner.clone(), src.inner.clone());
        self.call(scope, Op::Copy { dst, src }, force)
    }

    /// `dst[x] = src[x]` by the copy engine, its bytes completing a transaction on mbarrier
    /// `bars[index]`.
    #[pyo3(signature = (scope, dst, src, bars, index, *, force = None))]
    fn copy_async(
        &mut self,
        scope: &PyScope,
        dst: &PyTensor,
        src: &PyTensor,
        bars: &PyBuffer,
        index: U64,
        force: Option<String>,
    ) -> PyResult<usize> {
        self.tensors(&[dst, src])?;
        let bar = self.mbar(bars, index)?;
        // The checker's arrival is only its check that `bar` is an mbarrier.
        self.checker.mbar_arrive(bar).map_err(errors::kernel)?;
        let (dst, src) = (dst.inner.clone(), src.inner.clone());
        self.call(scope, Op::CopyAsync { dst, src, bar }, force)
    }

    /// `dst[x] = src[x]` by `cp.async`, completing with the issuing threads' commit groups
    /// (`async_commit`, `async_wait`).
    #[pyo3(signature = (scope, dst, src, *, force = None))]
    fn copy_async_group(
        &mut self,
        scope: &PyScope,
        dst: &PyTensor,
        src: &PyTensor,
        force: Option<String>,
    ) -> PyResult<usize> {
        self.tensors(&[dst, src])?;
        let (dst, src) = (dst.inner.clone(), src.inner.clone());
        self.call(scope, Op::CopyAsyncGroup { dst, src }, force)
    }

    /// Closes the running thread's group of `copy_async_group` copies (`cp.async.commit_group`).
    fn async_commit(&mut self) {
        self.push(Stmt::Sync(SyncStmt::Commit));
    }

    /// Waits until at most `pending` of the running thread's committed groups are in flight
    /// (`cp.async.wait_group`).
    fn async_wait(&mut self, pending: U64) -> PyResult<()> {
        let pending = u32_arg("pending", pending)?;
        self.push(Stmt::Sync(SyncStmt::WaitGroups { pending }));
        Ok(())
    }

    /// `dst[x] = value` (an int or a float, converted to `dst`'s dtype).
    #[pyo3(signature = (scope, dst, value, *, force = None))]
    fn fill(
        &mut self,
        scope: &PyScope,
        dst: &PyTensor,
        value: &Bound<'_, PyAny>,
        force: Option<String>,
    ) -> PyResult<usize> {
        self.tensors(&[dst])?;
        let value = kernel_ops::value(value)?;
        let dst = dst.inner.clone();
        self.call(scope, Op::Fill { dst, value }, force)
    }

    /// `dst[x] = op(src[x])`, `op` one of `neg`, `abs`, `exp`, `relu`.
    #[pyo3(signature = (scope, op, dst, src, *, force = None))]
    fn unary(
        &mut self,
        scope: &PyScope,
        op: &str,
        dst: &PyTensor,
        src: &PyTensor,
        force: Option<String>,
    ) -> PyResult<usize> {
        self.tensors(&[dst, src])?;
        let op = kernel_ops::unary(op)?;
        let (dst, src) = (dst.inner.clone(), src.inner.clone());
        self.call(scope, Op::Unary { op, dst, src }, force)
    }

    /// `dst[x] = op(a[x], b[x])`, `op` one of `add`, `sub`, `mul`, `max`, `min`, `div`.
    #[pyo3(signature = (scope, op, dst, a, b, *, force = None))]
    fn binary(
        &mut self,
        scope: &PyScope,
        op: &str,
        dst: &PyTensor,
        a: &PyTensor,
        b: &PyTensor,
        force: Option<String>,
    ) -> PyResult<usize> {
        self.tensors(&[dst, a, b])?;
        let op = kernel_ops::binary(op)?;
        let (dst, a, b) = (dst.inner.clone(), a.inner.clone(), b.inner.clone());
        self.call(scope, Op::Binary { op, dst, a, b }, force)
    }

    /// `dst[x] = convert(src[x])`: to a float, rounded to nearest even; a float to an integer
    /// truncates toward zero and saturates.
    #[pyo3(signature = (scope, dst, src, *, force = None))]
    fn cast(
        &mut self,
        scope: &PyScope,
        dst: &PyTensor,
        src: &PyTensor,
        force: Option<String>,
    ) -> PyResult<usize> {
        self.tensors(&[dst, src])?;
        let (dst, src) = (dst.inner.clone(), src.inner.clone());
        self.call(scope, Op::Cast { dst, src }, force)
    }

    /// `dst = op over dims of src` (`op` `sum` or `max`; `dst` keeps the reduced dims as extent 1).
    #[pyo3(signature = (scope, op, dst, src, dims, *, force = None))]
    fn reduce(
        &mut self,
        scope: &PyScope,
        op: &str,
        dst: &PyTensor,
        src: &PyTensor,
        dims: U64s,
        force: Option<String>,
    ) -> PyResult<usize> {
        self.tensors(&[dst, src])?;
        let op = kernel_ops::reduce(op)?;
        let dims = dims
            .0
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<Vec<usize>, _>>()
            .map_err(|_| KernelError::new_err("reduce: a dim past the platform's largest size"))?;
        let (dst, src) = (dst.inner.clone(), src.inner.clone());
        self.call(scope, Op::Reduce { op, dst, src, dims }, force)
    }

    /// `c[i, j] += Σ_k a[i, k]·b[k, j]`, products and sums in f32.
    #[pyo3(signature = (scope, c, a, b, *, force = None))]
    fn gemm(
        &mut self,
        scope: &PyScope,
        c: &PyTensor,
        a: &PyTensor,
        b: &PyTensor,
        force: Option<String>,
    ) -> PyResult<usize> {
        self.tensors(&[c, a, b])?;
        let (c, a, b) = (c.inner.clone(), a.inner.clone(), b.inner.clone());
        self.call(scope, Op::Gemm { c, a, b }, force)
    }

    /// `dst[j] = Σ_r (src[r, j] & 1)·2^r`: 32 one-byte elements per 32-bit word.
    #[pyo3(signature = (scope, dst, src, *, force = None))]
    fn pack_bits(
        &mut self,
        scope: &PyScope,
        dst: &PyTensor,
        src: &PyTensor,
        force: Option<String>,
    ) -> PyResult<usize> {
        self.tensors(&[dst, src])?;
        let (dst, src) = (dst.inner.clone(), src.inner.clone());
        self.call(scope, Op::PackBits { dst, src }, force)
    }

    /// `dst[r, j] = (src[j] >> r) & 1`: each 32-bit word into 32 one-byte elements.
    #[pyo3(signature = (scope, dst, src, *, force = None))]
    fn unpack_bits(
        &mut self,
        scope: &PyScope,
        dst: &PyTensor,
        src: &PyTensor,
        force: Option<String>,
    ) -> PyResult<usize> {
        self.tensors(&[dst, src])?;
        let (dst, src) = (dst.inner.clone(), src.inner.clone());
        self.call(scope, Op::UnpackBits { dst, src }, force)
    }

    /// The kernel described so far (every `with` block closed), ready to explain, emit and run.
    fn build(&self, py: Python<'_>) -> PyResult<PyKernel> {
        if self.open.len() != 1 {
            return Err(KernelError::new_err(format!(
                "kernel {}: {} with-block(s) still open; build() after they close",
                self.name,
                self.open.len() - 1
            )));
        }
        let kernel = py.detach(|| self.replay()).map_err(errors::kernel)?;
        PyKernel::from_built(kernel)
    }

    fn __repr__(&self) -> String {
        format!(
            "axe.kernel.Builder({}, grid={}, threads={}, cluster={})",
            self.name, self.launch.grid, self.launch.threads, self.launch.cluster
        )
    }
}
