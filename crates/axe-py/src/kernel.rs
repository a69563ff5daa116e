//! `axe.kernel`: the shipped kernels of `axe-kernel` — their parameters, every dispatch decision, their
//! CUDA source, and runs on the CPU interpreter (without the GIL). The Python side (`axe/kernel.py`)
//! checks numpy arrays against the parameters and passes their bytes.

use axe_kernel::shipped::Shipped;
use axe_kernel::{emit_cuda, lower, run, DType, RunLimits, Target};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::errors;
use crate::relayout::source;
use crate::shape::{array, PyShape};

/// A shipped kernel with its parameters.
#[pyclass(name = "Kernel", module = "axe.kernel", frozen)]
pub struct PyKernel {
    inner: Shipped,
}

fn target(t: &str) -> PyResult<Target> {
    t.parse().map_err(errors::kernel)
}

#[pymethods]
impl PyKernel {
    /// The kernel's name (`relayout`, `softmax`, `gemm`).
    #[getter]
    fn name(&self) -> String {
        self.inner.kernel.name.clone()
    }

    /// Its global buffers in parameter order: `(name, shape, bytes, is_input)`; `shape` is an
    /// `axe.Shape` (with its layout).
    #[getter]
    fn params(&self) -> Vec<(String, PyShape, u64, bool)> {
        self.inner
            .params
            .iter()
            .map(|p| {
                (
                    p.name.to_string(),
                    PyShape {
                        inner: p.array.clone(),
                    },
                    p.bytes,
                    p.input,
                )
            })
            .collect()
    }

    /// Whether parameter `name` starts at zero because the kernel adds to it.
    fn accumulates(&self, name: &str) -> bool {
        self.inner
            .params
            .iter()
            .any(|p| p.name == name && p.accumulates)
    }

    /// Every dispatch decision for `target` (`cpu`, `sm_80`, `sm_90a`): dicts of `op`, `scope`,
    /// `variant`, `why` and `declined` (a list of `(variant, reason)`).
    #[pyo3(signature = (target = "sm_90a"))]
    fn explain<'py>(&self, py: Python<'py>, target: &str) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let t = self::target(target)?;
        let p = py
            .detach(|| lower(&self.inner.kernel, t))
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

    /// The CUDA C++ source for `target` (`sm_80` or `sm_90a`), as `axe kernel emit` writes it.
    #[pyo3(signature = (target = "sm_90a"))]
    fn cuda(&self, py: Python<'_>, target: &str) -> PyResult<String> {
        let t = self::target(target)?;
        py.detach(|| lower(&self.inner.kernel, t).and_then(|p| emit_cuda(&p)))
            .map_err(errors::kernel)
    }

    /// Runs the kernel once on the CPU interpreter: `buffers` holds every parameter's bytes in order;
    /// returns them afterwards.
    fn _run<'py>(
        &self,
        py: Python<'py>,
        buffers: Vec<Bound<'py, PyBytes>>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let buffers: Vec<Vec<u8>> = buffers.iter().map(|b| b.as_bytes().to_vec()).collect();
        let out = py
            .detach(|| {
                let p = lower(&self.inner.kernel, Target::Cpu)?;
                run(&p, buffers, RunLimits::default())
            })
            .map_err(errors::kernel)?;
        Ok(out.iter().map(|b| PyBytes::new(py, b)).collect())
    }

    /// Runs the kernel on the CPU interpreter with numpy arrays, one per input parameter, and returns
    /// its output (`axe.kernel.run`).
    #[pyo3(signature = (*inputs))]
    fn run<'py>(
        slf: &Bound<'py, Self>,
        inputs: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let mut args: Vec<Bound<'py, PyAny>> = vec![slf.clone().into_any()];
        args.extend(inputs.iter());
        py.import("axe.kernel")?
            .getattr("run")?
            .call1(PyTuple::new(py, args)?)
    }

    fn __repr__(&self) -> String {
        format!("axe.kernel.Kernel({})", self.inner.describe)
    }
}

fn dtype(d: &str) -> PyResult<DType> {
    d.parse().map_err(errors::kernel)
}

/// The relayout kernel from array `src` (a `Shape` or its text) into `dst` (a layout such as
/// `'{1,0:T(8,128)}'`, or a whole shape).
#[pyfunction]
pub fn _kernel_relayout(src: &Bound<'_, PyAny>, dst: &str) -> PyResult<PyKernel> {
    let s = source(src)?;
    let t = dst.trim();
    let d = if t.starts_with('{') {
        axe_xla::ArrayShape {
            layout: axe_xla::parse_layout(t, s.rank()).map_err(errors::xla)?,
            ..s.clone()
        }
    } else {
        array(t)?
    };
    Ok(PyKernel {
        inner: Shipped::relayout(&s, &d).map_err(errors::kernel)?,
    })
}

/// The softmax kernel over the rows of a row-major `[rows, cols]` array of `dtype`.
#[pyfunction]
#[pyo3(signature = (rows, cols, dtype = "f32"))]
pub fn _kernel_softmax(rows: u64, cols: u64, dtype: &str) -> PyResult<PyKernel> {
    Ok(PyKernel {
        inner: Shipped::softmax(rows, cols, self::dtype(dtype)?).map_err(errors::kernel)?,
    })
}

/// The gemm kernel `C[M,N] (f32) += A[M,K] · B`, B given as `[N,K]`.
#[pyfunction]
#[pyo3(signature = (m, n, k, dtype = "bf16"))]
pub fn _kernel_gemm(m: u64, n: u64, k: u64, dtype: &str) -> PyResult<PyKernel> {
    Ok(PyKernel {
        inner: Shipped::gemm(m, n, k, self::dtype(dtype)?).map_err(errors::kernel)?,
    })
}
