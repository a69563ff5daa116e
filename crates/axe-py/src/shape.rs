//! `axe.Shape`: an XLA array shape with its layout, exactly as XLA reads, sizes and indexes it.

use axe_xla::{ArrayShape, Dim, TileDim};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors;
use crate::layout::PyLayout;
use crate::value::I64s;

/// An XLA array shape and layout: `Shape("bf16[8,128]{1,0:T(8,128)(2,1)}")`, parsed and validated
/// as XLA does. `str()` prints it as XLA prints it; `repr()` round-trips.
#[pyclass(name = "Shape", module = "axe", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyShape {
    pub inner: ArrayShape,
}

/// XLA's sizes of any shape, `axe xla size --json`'s dict: `byte_size_of` (XLA's `ByteSizeOf` with
/// 8-byte pointers: a tuple's own index table), `index_table_bytes` and the arrays' `logical_bytes`,
/// `xla_array_size_bytes`, `physical_bytes`, `padding_bytes` and `padding_percent` over every part,
/// and `parts`: the shape and, recursively, each tuple's elements (`index`, `shape`, `kind`,
/// `byte_size_of`, and an array's three sizes).
#[pyfunction]
pub fn xla_size<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    let s = axe_xla::parse_shape(text).map_err(errors::xla)?;
    axe_xla::validate(&s).map_err(errors::xla)?;
    let parts = axe_xla::part_sizes(&s).map_err(errors::xla)?;
    let t = axe_xla::part_totals(&parts).map_err(errors::xla)?;
    let list = pyo3::types::PyList::empty(py);
    for p in &parts {
        let d = PyDict::new(py);
        d.set_item("index", &p.index)?;
        d.set_item("shape", p.shape.to_string())?;
        d.set_item("kind", p.kind())?;
        d.set_item("byte_size_of", p.byte_size_of)?;
        if let Some(z) = &p.sizes {
            d.set_item("logical_bytes", z.logical_bytes)?;
            d.set_item("xla_array_size_bytes", z.xla_array_size_bytes)?;
            d.set_item("physical_bytes", z.physical_bytes)?;
        }
        list.append(d)?;
    }
    let d = PyDict::new(py);
    d.set_item("shape", s.to_string())?;
    d.set_item("byte_size_of", t.byte_size_of)?;
    d.set_item("index_table_bytes", t.index_table_bytes)?;
    d.set_item("logical_bytes", t.logical_bytes)?;
    d.set_item("xla_array_size_bytes", t.xla_array_size_bytes)?;
    d.set_item("physical_bytes", t.physical_bytes)?;
    d.set_item("padding_bytes", t.padding_bytes())?;
    d.set_item("padding_percent", t.padding_percent())?;
    d.set_item("parts", list)?;
    Ok(d)
}

/// Parses and validates an array shape (a tuple or token is an `XlaError`).
pub fn array(text: &str) -> PyResult<ArrayShape> {
    let s = axe_xla::parse_shape(text).map_err(errors::xla)?;
    axe_xla::validate(&s).map_err(errors::xla)?;
    match s {
        axe_xla::Shape::Array(a) => Ok(a),
        other => Err(errors::XlaError::new_err(format!(
            "{other} is not an array shape (axe.xla_size sizes any shape, a tuple's parts included)"
        ))),
    }
}

/// The static dims of an array, as `u64` (a dynamic `?` dim is an error).
pub fn dims_u64(a: &ArrayShape) -> PyResult<Vec<u64>> {
    Ok(axe_xla::static_dims(a)
        .map_err(errors::xla)?
        .into_iter()
        .map(|d| d.max(0) as u64)
        .collect())
}

#[pymethods]
impl PyShape {
    /// Parses an XLA array shape such as `"f32[3,5]{1,0:T(2,2)}"` (layout optional: row-major).
    /// Raises `ParseError` (with `.offset`) or `XlaError` for a shape XLA rejects.
    #[new]
    fn new(text: &str) -> PyResult<Self> {
        Ok(PyShape {
            inner: array(text)?,
        })
    }

    /// The element type's name (`"f32"`, `"bf16"`, `"pred"`, `"s4"`, ...).
    #[getter]
    fn dtype(&self) -> &'static str {
        self.inner.element_type.name()
    }

    /// The dimension sizes (the bound, for a bounded dynamic `<=n`; `None` for `?`).
    #[getter]
    fn dims(&self) -> Vec<Option<i64>> {
        self.inner.dims.iter().map(|d| d.bound()).collect()
    }

    /// Per dimension, whether it is dynamic (`<=n` or `?`).
    #[getter]
    fn dynamic(&self) -> Vec<bool> {
        self.inner
            .dims
            .iter()
            .map(|d| !matches!(d, Dim::Static(_)))
            .collect()
    }

    /// The rank.
    #[getter]
    fn rank(&self) -> usize {
        self.inner.rank()
    }

    /// The layout's dimension order, most minor first.
    #[getter]
    fn minor_to_major(&self) -> Vec<i64> {
        self.inner.layout.minor_to_major.iter().copied().collect()
    }

    /// The tiles, applied in turn; a combined dimension `*` is -1.
    #[getter]
    fn tiles(&self) -> Vec<Vec<i64>> {
        self.inner
            .layout
            .tiles
            .iter()
            .map(|t| {
                t.0.iter()
                    .map(|d| match d {
                        TileDim::Size(n) => *n,
                        TileDim::Combined => -1,
                    })
                    .collect()
            })
            .collect()
    }

    /// `E(n)`: the element size in bits in memory (the type's own width when the layout does not say).
    #[getter]
    fn element_bits(&self) -> i64 {
        axe_xla::element_bits(&self.inner)
    }

    /// `S(n)`: the memory space (0 by default).
    #[getter]
    fn memory_space(&self) -> i64 {
        self.inner.layout.memory_space
    }

    /// `L(n)`: the tail padding alignment in elements (1 by default).
    #[getter]
    fn tail_padding_alignment(&self) -> i64 {
        self.inner.layout.tail_padding_alignment_in_elements
    }

    /// XLA's `ByteSizeOf`: the elements alone.
    #[getter]
    fn logical_bytes(&self) -> PyResult<i64> {
        Ok(self.sizes_rs()?.logical_bytes)
    }

    /// The bytes the layout really occupies, every tile and `L` applied.
    #[getter]
    fn physical_bytes(&self) -> PyResult<i64> {
        Ok(self.sizes_rs()?.physical_bytes)
    }

    /// XLA's `ShapeUtil::ArraySize` (first tile only).
    #[getter]
    fn xla_array_size_bytes(&self) -> PyResult<i64> {
        Ok(self.sizes_rs()?.xla_array_size_bytes)
    }

    /// Physical minus logical bytes.
    #[getter]
    fn padding_bytes(&self) -> PyResult<i64> {
        Ok(self.sizes_rs()?.padding_bytes())
    }

    /// Every size as a dict: `logical_bytes`, `xla_array_size_bytes`, `physical_bytes`,
    /// `padding_bytes`.
    fn sizes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let z = self.sizes_rs()?;
        let d = PyDict::new(py);
        d.set_item("logical_bytes", z.logical_bytes)?;
        d.set_item("xla_array_size_bytes", z.xla_array_size_bytes)?;
        d.set_item("physical_bytes", z.physical_bytes)?;
        d.set_item("padding_bytes", z.padding_bytes())?;
        Ok(d)
    }

    /// The position in memory, in elements, of the element at multi-index `index` (XLA's tiled
    /// linear index). Raises `XlaError` for an index outside the shape.
    fn index(&self, index: I64s) -> PyResult<i64> {
        Ok(axe_xla::element_offset(&self.inner, &index.0)
            .map_err(errors::xla)?
            .linear)
    }

    /// The byte offset of the element at `index` (its bit offset divided by 8, for sub-byte types).
    fn byte_offset(&self, index: I64s) -> PyResult<i64> {
        Ok(axe_xla::element_offset(&self.inner, &index.0)
            .map_err(errors::xla)?
            .byte_offset)
    }

    /// The Axe layout of this shape on the memory axis `m`, in elements, over `padded_shape`.
    fn to_axe(&self, py: Python<'_>) -> PyResult<PyLayout> {
        Ok(py
            .detach(|| axe_xla::to_axe(&self.inner))
            .map_err(errors::xla)?
            .layout
            .into())
    }

    /// The logical dims rounded up by the tiles' padding: the shape `to_axe()` is over.
    #[getter]
    fn padded_shape(&self) -> PyResult<Vec<u64>> {
        Ok(axe_xla::to_axe(&self.inner)
            .map_err(errors::xla)?
            .padded_shape)
    }

    /// A numpy program (pad / reshape / transpose) that produces this layout's bytes from a
    /// row-major array: the recipe `axe.to_physical` replaces.
    fn numpy_program(&self) -> PyResult<String> {
        axe_xla::numpy_program(&self.inner).map_err(errors::xla)
    }

    /// The picture of the memory layout (tiles, padding) as SVG text.
    fn svg(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| Ok(axe_render::to_svg(&self.picture()?)))
    }

    /// Draws the memory layout into `path` (a `str` or `os.PathLike`; `.svg`, `.png` or `.txt`).
    fn render(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        py.detach(|| crate::picture::write(&self.picture()?, &path))
    }

    fn _repr_svg_(&self, py: Python<'_>) -> PyResult<String> {
        self.svg(py)
    }

    /// XLA's default TPU layout for this shape's element type and dims (what `axe xla tpu-layout`
    /// prints): the same array with the tiles XLA's TPU compiler picks by default for its element
    /// width and rank, in this shape's dimension order (row-major when the text gave no layout); tiles
    /// the shape already had are replaced.
    fn tpu_layout(&self) -> PyResult<PyShape> {
        tpu_default(&self.inner)
    }

    /// Pickles as its text.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyAny>, (String,)) {
        let py = slf.py();
        (
            py.get_type::<PyShape>().into_any(),
            (slf.get().inner.to_string(),),
        )
    }

    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Shape({:?})", self.inner.to_string())
    }
}

impl PyShape {
    fn sizes_rs(&self) -> PyResult<axe_xla::Sizes> {
        axe_xla::sizes(&self.inner).map_err(errors::xla)
    }

    fn picture(&self) -> PyResult<axe_render::Picture> {
        axe_render::memory_picture(&self.inner).map_err(crate::picture::render_error)
    }
}

/// `a` with XLA/TPU's default layout for its element type and dims, validated.
fn tpu_default(a: &ArrayShape) -> PyResult<PyShape> {
    let layout = axe_xla::tpu_default_layout(a).map_err(errors::xla)?;
    let inner = ArrayShape {
        layout,
        ..a.clone()
    };
    axe_xla::validate_array(&inner).map_err(errors::xla)?;
    Ok(PyShape { inner })
}
