//! `axe.kernel.Buffer` and `axe.kernel.Tensor`: the storage a kernel description declares and the views
//! over it whose Axe layouts say where each element lives. Each remembers the builder it came from, so
//! a buffer or tensor of one kernel is never used, silently, as another kernel's.

use std::ops::Range;

use axe_kernel::{space_name, BufferId, DType, Space, Swizzle, Tensor};
use axe_layout::Layout;
use pyo3::prelude::*;

use crate::errors::{self, KernelError};
use crate::layout::PyLayout;
use crate::value::Ranges;

/// A buffer of a kernel being built (`Builder.buffer`).
#[pyclass(name = "Buffer", module = "axe.kernel", frozen)]
#[derive(Clone)]
pub struct PyBuffer {
    /// The builder that declared it.
    pub owner: u64,
    pub id: BufferId,
    pub name: String,
    pub space: Space,
    pub dtype: DType,
    pub elems: u64,
}

/// A tensor of a kernel being built (`Builder.tensor`, `Tensor.region`).
#[pyclass(name = "Tensor", module = "axe.kernel", frozen)]
#[derive(Clone)]
pub struct PyTensor {
    /// The builder whose buffer it views.
    pub owner: u64,
    pub inner: Tensor,
}

/// The space's text: `global`, `shared`, `shared:128B`, `registers`.
pub fn space_text(s: Space) -> String {
    match s {
        Space::Shared(Some(w)) => format!("shared:{}B", w.bytes()),
        _ => space_name(s).to_string(),
    }
}

const SPACES: &str =
    "\"global\", \"shared\", (\"shared\", \"128B\" | \"64B\" | \"32B\") or \"registers\"";

/// A space: `"global"`, `"shared"`, `("shared", "128B")` (or 64B, 32B) or `"registers"`.
pub fn space(s: &Bound<'_, PyAny>) -> PyResult<Space> {
    if let Ok(t) = s.extract::<String>() {
        return match t.as_str() {
            "global" => Ok(Space::Global),
            "shared" => Ok(Space::Shared(None)),
            "registers" => Ok(Space::Registers),
            _ => Err(KernelError::new_err(format!(
                "unknown space {t:?}; a space is {SPACES}"
            ))),
        };
    }
    if let Ok((what, swizzle)) = s.extract::<(String, String)>() {
        let w = match swizzle.as_str() {
            "128B" => Some(Swizzle::B128),
            "64B" => Some(Swizzle::B64),
            "32B" => Some(Swizzle::B32),
            _ => None,
        };
        if let (Some(w), "shared") = (w, what.as_str()) {
            return Ok(Space::Shared(Some(w)));
        }
        return Err(KernelError::new_err(format!(
            "unknown space ({what:?}, {swizzle:?}); a space is {SPACES}"
        )));
    }
    Err(KernelError::new_err(format!(
        "a space is {SPACES}, not {}",
        s.repr()?
    )))
}

/// A dtype by name (`f32`, `bf16`, ...).
pub fn dtype(d: &str) -> PyResult<DType> {
    d.parse().map_err(errors::kernel)
}

/// An Axe layout: an `axe.Layout` or its notation.
pub fn layout(l: &Bound<'_, PyAny>) -> PyResult<Layout> {
    if let Ok(p) = l.cast::<PyLayout>() {
        return Ok(p.get().inner.clone());
    }
    match l.extract::<String>() {
        Ok(t) => t.parse::<Layout>().map_err(errors::layout),
        Err(_) => Err(KernelError::new_err(format!(
            "a layout is an axe.Layout or its notation, not {}",
            l.repr()?
        ))),
    }
}

/// Checks `owner` built this value; `what` names it in the message.
pub fn check_owner(owner: u64, builder: u64, what: &str) -> PyResult<()> {
    if owner != builder {
        return Err(KernelError::new_err(format!(
            "{what} belongs to another axe.kernel.Builder"
        )));
    }
    Ok(())
}

#[pymethods]
impl PyBuffer {
    /// Its name (a kernel parameter's name for a global buffer).
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }
    /// `global`, `shared`, `shared:128B` (a swizzled one) or `registers`.
    #[getter]
    fn space(&self) -> String {
        space_text(self.space)
    }
    /// Its element type.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.dtype.name()
    }
    /// Its elements (per thread for registers).
    #[getter]
    fn elems(&self) -> u64 {
        self.elems
    }
    fn __repr__(&self) -> String {
        format!(
            "axe.kernel.Buffer({}, {}, {}, {})",
            self.name,
            space_text(self.space),
            self.dtype,
            self.elems
        )
    }
}

#[pymethods]
impl PyTensor {
    /// Its name in messages and explanations (a region's says its ranges: `A[0:64,0:64]`).
    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }
    /// The logical shape.
    #[getter]
    fn shape(&self) -> Vec<u64> {
        self.inner.shape.clone()
    }
    /// The element type.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.inner.dtype.name()
    }
    /// Where its buffer lives.
    #[getter]
    fn space(&self) -> String {
        space_text(self.inner.space)
    }
    /// Its Axe layout over `shape`.
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout::from(self.inner.layout.clone())
    }

    /// The region `Π [a_i, b_i)` as a tensor of shape `(b_i - a_i)`: element `x` of it is element
    /// `a + x` of this one (the layout's `slice`).
    fn region(&self, ranges: Ranges) -> PyResult<PyTensor> {
        if let Some((a, b)) = ranges.0.iter().find(|(a, b)| a > b) {
            return Err(KernelError::new_err(format!(
                "region of tensor {}: the range ({a}, {b}) ends before it starts",
                self.inner.name
            )));
        }
        let r: Vec<Range<u64>> = ranges.0.iter().map(|&(a, b)| a..b).collect();
        Ok(PyTensor {
            owner: self.owner,
            inner: self.inner.region(&r).map_err(errors::kernel)?,
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "axe.kernel.Tensor({}: {}{:?} {} in {})",
            self.inner.name,
            self.inner.dtype,
            self.inner.shape,
            self.inner.layout,
            space_text(self.inner.space)
        )
    }
}
