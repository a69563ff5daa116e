//! `axe.kernel.Kernel`: a kernel of `axe-kernel` — a shipped one or one written with
//! `axe.kernel.Builder` — with its parameters, every dispatch decision, its CUDA source, and runs on
//! the CPU interpreter (without the GIL). The Python side (`axe/kernel.py`) checks numpy arrays against
//! the parameters and passes their bytes.

use axe_kernel::shipped::{BuiltFor, Shipped};
use axe_kernel::{emit_cuda, lower, run, DType, Kernel, RunLimits, Space, Target};
use axe_xla::{ArrayShape, PrimitiveType};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::errors;
use crate::layout::PyLayout;
use crate::relayout::source;
use crate::shape::{array, PyShape};
use crate::value::U64;

/// One global buffer of a kernel, as Python sees it.
struct Param {
    name: String,
    bytes: u64,
    array: ArrayShape,
    input: bool,
    accumulates: bool,
}

/// A kernel with its parameters: a shipped one, or one built in Python.
#[pyclass(name = "Kernel", module = "axe.kernel", frozen)]
pub struct PyKernel {
    kernel: Kernel,
    params: Vec<Param>,
    describe: String,
    built: bool,
    /// The targets a shipped kernel is built for (`None`: one built in Python, for any target).
    built_for: Option<BuiltFor>,
}

impl From<Shipped> for PyKernel {
    fn from(s: Shipped) -> Self {
        PyKernel {
            params: s
                .params
                .into_iter()
                .map(|p| Param {
                    name: p.name.to_string(),
                    bytes: p.bytes,
                    array: p.array,
                    input: p.input,
                    accumulates: p.accumulates,
                })
                .collect(),
            kernel: s.kernel,
            describe: s.describe,
            built: false,
            built_for: Some(s.built_for),
        }
    }
}

impl PyKernel {
    /// The kernel description.
    pub(crate) fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// A kernel built with `axe.kernel.Builder`: every global buffer is a parameter holding a 1-D
    /// array of its elements; any of them may be given to `run`, the others start at zero.
    pub fn from_built(kernel: Kernel) -> PyResult<PyKernel> {
        let mut params = Vec::new();
        for b in kernel.buffers.iter().filter(|b| b.space == Space::Global) {
            let t = PrimitiveType::from_name(b.dtype.name()).ok_or_else(|| {
                errors::KernelError::new_err(format!("{} has no XLA element type", b.dtype))
            })?;
            let elems = i64::try_from(b.elems).map_err(|_| {
                errors::KernelError::new_err(format!("buffer {} is too large", b.name))
            })?;
            params.push(Param {
                name: b.name.clone(),
                bytes: b.bytes().map_err(errors::kernel)?,
                array: ArrayShape::new(t, &[elems]),
                input: true,
                accumulates: false,
            });
        }
        Ok(PyKernel {
            describe: format!("{}, built with axe.kernel.Builder", kernel.name),
            kernel,
            params,
            built: true,
            built_for: None,
        })
    }
}

impl PyKernel {
    /// Target `t`, where this kernel is built for it.
    fn target(&self, t: &str) -> PyResult<Target> {
        let t: Target = t.parse().map_err(errors::kernel)?;
        if let Some(b) = &self.built_for {
            b.check(t).map_err(errors::kernel)?;
        }
        Ok(t)
    }
}

#[pymethods]
impl PyKernel {
    /// The kernel's name (`relayout`, `softmax`, `gemm`).
    #[getter]
    fn name(&self) -> String {
        self.kernel.name.clone()
    }

    /// Its global buffers in parameter order: `(name, shape, bytes, is_input)`; `shape` is an
    /// `axe.Shape` (with its layout).
    #[getter]
    fn params(&self) -> Vec<(String, PyShape, u64, bool)> {
        self.params
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    PyShape {
                        inner: p.array.clone(),
                    },
                    p.bytes,
                    p.input,
                )
            })
            .collect()
    }

    /// Whether parameter `name` starts at zero because the kernel adds to it. Raises `KernelError`
    /// (listing the parameters) for a name that is not one of `params`.
    fn accumulates(&self, name: &str) -> PyResult<bool> {
        match self.params.iter().find(|p| p.name == name) {
            Some(p) => Ok(p.accumulates),
            None => Err(errors::KernelError::new_err(format!(
                "{} has no parameter {name:?}; its parameters are {}",
                self.kernel.name,
                self.params
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Every dispatch decision for `target` (`cpu`, `sm_80`, `sm_90a`): dicts of `op`, `scope`,
    /// `variant`, `why` and `declined` (a list of `(variant, reason)`).
    #[pyo3(signature = (target = "sm_90a"))]
    fn explain<'py>(&self, py: Python<'py>, target: &str) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let t = self.target(target)?;
        let p = py
            .detach(|| lower(&self.kernel, t))
            .map_err(errors::kernel)?;
        p.decisions
            .iter()
            .map(|d| {
                let o = PyDict::new(py);
                o.set_item("op", &d.op)?;
                o.set_item("scope", &d.scope)?;
                o.set_item("variant", &d.variant)?;
                o.set_item("why", &d.why)?;
                o.set_item("declined", d.declined.clone())?;
                Ok(o)
            })
            .collect()
    }

    /// The CUDA C++ source for `target` (`sm_80` or `sm_90a`), as `axe kernel emit` writes it; any
    /// other target (`cpu`: the interpreter's; `trn1`: NKI, see `nki`) is a `KernelError` naming the
    /// CUDA targets.
    #[pyo3(signature = (target = "sm_90a"))]
    fn cuda(&self, py: Python<'_>, target: &str) -> PyResult<String> {
        let asked: Target = target.parse().map_err(errors::kernel)?;
        asked.check_cuda().map_err(errors::kernel)?;
        let t = self.target(target)?;
        py.detach(|| lower(&self.kernel, t).and_then(|p| emit_cuda(&p)))
            .map_err(errors::kernel)
    }

    /// The NKI-style text of the kernel lowered for Trainium (`trn1`), as `axe kernel emit --target
    /// trn1` writes it.
    fn nki(&self, py: Python<'_>) -> PyResult<String> {
        let t = self.target("trn1")?;
        py.detach(|| lower(&self.kernel, t).and_then(|p| axe_kernel::emit_nki(&p)))
            .map_err(errors::kernel)
    }

    /// Runs the kernel once on the CPU interpreter, lowered for `target`: `buffers` holds every
    /// parameter's bytes in order (`None`: zeros, made once the run's memory is admitted); returns them
    /// afterwards.
    #[pyo3(signature = (buffers, target = "cpu"))]
    fn _run<'py>(
        &self,
        py: Python<'py>,
        buffers: Vec<Option<Bound<'py, PyBytes>>>,
        target: &str,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let t = self.target(target)?;
        let limits = RunLimits::default();
        // The run's memory is checked before the buffers are copied for it.
        let p = py
            .detach(|| {
                let p = lower(&self.kernel, t)?;
                limits.admit(&p)?;
                Ok(p)
            })
            .map_err(errors::kernel)?;
        if buffers.len() != self.params.len() {
            return Err(errors::KernelError::new_err(format!(
                "{} takes {} buffers; {} given",
                self.kernel.name,
                self.params.len(),
                buffers.len()
            )));
        }
        let mut bytes = Vec::with_capacity(buffers.len());
        for (b, p) in buffers.iter().zip(&self.params) {
            bytes.push(match b {
                Some(b) => b.as_bytes().to_vec(),
                None => vec![
                    0;
                    usize::try_from(p.bytes).map_err(|_| {
                        errors::KernelError::new_err(format!("buffer {} is too large", p.name))
                    })?
                ],
            });
        }
        let buffers = bytes;
        let out = py
            .detach(|| run(&p, buffers, limits))
            .map_err(errors::kernel)?;
        Ok(out.iter().map(|b| PyBytes::new(py, b)).collect())
    }

    /// Runs the kernel on the CPU interpreter (`axe.kernel.run`): with numpy arrays, one per input
    /// parameter, it returns the output; with one dict `{buffer name: array}`, a dict of every global
    /// buffer afterwards.
    #[pyo3(signature = (*inputs, target = "cpu"))]
    fn run<'py>(
        slf: &Bound<'py, Self>,
        inputs: &Bound<'py, PyTuple>,
        target: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let mut args: Vec<Bound<'py, PyAny>> = vec![slf.clone().into_any()];
        args.extend(inputs.iter());
        let kw = PyDict::new(py);
        kw.set_item("target", target)?;
        py.import("axe.kernel")?
            .getattr("run")?
            .call(PyTuple::new(py, args)?, Some(&kw))
    }

    /// Whether it was written with `axe.kernel.Builder` (its parameters are its global buffers).
    #[getter]
    fn built(&self) -> bool {
        self.built
    }

    fn __repr__(&self) -> String {
        format!("axe.kernel.Kernel({})", self.describe)
    }
}

fn dtype(d: &str) -> PyResult<DType> {
    d.parse().map_err(errors::kernel)
}

/// What the relayout kernel's destination may be: it moves one array between XLA layouts (it builds
/// each side's Axe form from the XLA tiling and padding, `axe_kernel::relayout`).
const RELAYOUT_DST: &str =
    "the relayout kernel moves an array between XLA layouts, so dst takes an \
     XLA layout for the source's dims ('{1,0:T(8,128)}'), an XLA array shape of the same tensor \
     ('f32[8,128]{0,1}'), or an axe.Shape; axe.relayout (on the CPU) also takes Axe layouts";

/// The relayout kernel from array `src` (a `Shape` or its text) into `dst`: an XLA layout such as
/// `'{1,0:T(8,128)}'`, a whole XLA shape (text or `Shape`). Anything else — an `axe.Layout`, an
/// `axe.cute.Layout`, Axe or CuTe notation — is a `KernelError` naming it and listing what `dst`
/// takes.
#[pyfunction]
pub fn _kernel_relayout(src: &Bound<'_, PyAny>, dst: &Bound<'_, PyAny>) -> PyResult<PyKernel> {
    let s = source(src)?;
    let d = relayout_dst(dst, &s)?;
    Ok(Shipped::relayout(&s, &d).map_err(errors::kernel)?.into())
}

/// The relayout kernel's destination array for source `src`: **law**: an `axe.Shape` is itself, text
/// starting with `{` is `src` with that XLA layout, text starting with a lowercase letter is that XLA
/// shape; everything else is refused with [`RELAYOUT_DST`].
fn relayout_dst(dst: &Bound<'_, PyAny>, src: &ArrayShape) -> PyResult<ArrayShape> {
    let refuse = |what: String| {
        Err(errors::KernelError::new_err(format!(
            "dst is {what}; {RELAYOUT_DST}"
        )))
    };
    if let Ok(s) = dst.cast::<PyShape>() {
        return Ok(s.get().inner.clone());
    }
    let Ok(text) = dst.extract::<String>() else {
        // Any other object (an axe.Layout, an axe.cute.Layout, ...) by its type's qualified name.
        let ty = dst.get_type();
        let name = ty.name().map(|n| n.to_string()).unwrap_or_default();
        let name = match ty.module().map(|m| m.to_string()) {
            Ok(m) if m != "builtins" => format!("{m}.{name}"),
            _ => name,
        };
        let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        return refuse(format!("{article} {name}"));
    };
    let t = text.trim();
    if t.starts_with('{') {
        Ok(ArrayShape {
            layout: axe_xla::parse_layout(t, src.rank()).map_err(errors::xla)?,
            ..src.clone()
        })
    } else if t.starts_with(|c: char| c.is_ascii_lowercase()) {
        array(t)
    } else {
        refuse(format!(
            "{t:?}, not an XLA layout or array shape (Axe and CuTe notation are not taken)"
        ))
    }
}

/// The softmax kernel over the rows of a row-major `[rows, cols]` array of `dtype`.
#[pyfunction]
#[pyo3(signature = (rows, cols, dtype = "f32"))]
pub fn _kernel_softmax(rows: U64, cols: U64, dtype: &str) -> PyResult<PyKernel> {
    Ok(Shipped::softmax(rows.0, cols.0, self::dtype(dtype)?)
        .map_err(errors::kernel)?
        .into())
}

/// The gemm kernel `C[M,N] (f32) += A[M,K] · B`, B given as `[N,K]`, as shipped for `target`
/// (`sm_90a`: the copy-engine and wgmma kernel where M, N, K are multiples of 128, 256, 64; else the
/// `mma.sync` one).
#[pyfunction]
#[pyo3(signature = (m, n, k, dtype = "bf16", target = "sm_80"))]
pub fn _kernel_gemm(m: U64, n: U64, k: U64, dtype: &str, target: &str) -> PyResult<PyKernel> {
    let t: Target = target.parse().map_err(errors::kernel)?;
    Ok(Shipped::gemm_for(m.0, n.0, k.0, self::dtype(dtype)?, t)
        .map_err(errors::kernel)?
        .into())
}

/// The layout of a `wgmma` m64nNk16 accumulator `[64, n]` over a warpgroup's `reg`, `lane`, `warp`;
/// `n` a multiple of 8 from 8 to 256, as wgmma takes it (anything else is a `KernelError`).
#[pyfunction]
pub fn _kernel_wgmma_accumulator(n: U64) -> PyResult<PyLayout> {
    axe_kernel::wgmma::accumulator(n.0)
        .map(PyLayout::from)
        .map_err(errors::kernel)
}
