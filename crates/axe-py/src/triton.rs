//! `axe.triton`: Triton linear layouts and Gluon layouts, Triton's operators, and Axe conversions.

use axe_triton::gluon::{padded_offset, padded_size, parse_gluon, GluonLayout};
use axe_triton::{hardware_map, parse_linear, LinearLayout as Ll};
use numpy::PyArrayMethods;
use pyo3::prelude::*;

use crate::errors;
use crate::layout::PyLayout;
use crate::value::{U64s, U64};

/// A Triton linear layout: `LinearLayout('{"in": {"register": [[0,1]], ...}, "out": {"dim0": 4, ...}}')`,
/// a `#ttg.linear<{...}>` attribute, or a Gluon layout's constructor text with `shape=`.
///
/// Linear layouts are values: equal when their in-dims, bases and out-dims are equal; they hash,
/// pickle and copy.
#[pyclass(name = "LinearLayout", module = "axe.triton", frozen, eq)]
#[derive(PartialEq, Eq)]
pub struct LinearLayout {
    inner: Ll,
}

impl From<Ll> for LinearLayout {
    fn from(inner: Ll) -> Self {
        LinearLayout { inner }
    }
}

#[pymethods]
impl LinearLayout {
    /// Reads JSON bases, a `#ttg.linear` attribute, or a Gluon layout (`BlockedLayout(...)`, ..., or a
    /// TTGIR attribute such as `#ttg.blocked<{...}>`) over `shape`. Raises `ParseError` with `.offset`, or `TritonError` (e.g. a size not a power of two).
    #[new]
    #[pyo3(signature = (text, shape = None))]
    fn new(text: &str, shape: Option<U64s>) -> PyResult<Self> {
        let shape = shape.map(|s| s.0);
        let t = text.trim();
        if axe_triton::gluon::is_linear_text(t) {
            return Ok(parse_linear(t).map_err(errors::triton)?.into());
        }
        let g = parse_gluon(t).map_err(errors::triton)?;
        let shape = match (shape, &g) {
            (Some(s), _) => s,
            // A padded shared layout carries its shape.
            (None, GluonLayout::PaddedShared { shape, .. }) => shape.clone(),
            (None, _) => {
                return Err(errors::TritonError::new_err(
                    "a Gluon layout needs the tensor shape: shape=[32, 16]",
                ))
            }
        };
        Ok(g.to_linear(&shape).map_err(errors::triton)?.into())
    }

    /// The in-dims in Triton's order with their sizes.
    #[getter]
    fn in_dims(&self) -> Vec<(String, u64)> {
        self.inner.in_dim_sizes()
    }

    /// The out-dims with their sizes.
    #[getter]
    fn out_dims(&self) -> Vec<(String, u64)> {
        self.inner.out_dims().to_vec()
    }

    fn __hash__(&self) -> u64 {
        crate::value::hash_of(&self.inner.to_json())
    }

    /// Pickles as its JSON bases.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyAny>, (String,)) {
        let py = slf.py();
        (
            py.get_type::<LinearLayout>().into_any(),
            (slf.get().inner.to_json(),),
        )
    }

    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    /// The out coordinates of flat input `k` (first in-dim fastest).
    fn __call__(&self, k: U64) -> PyResult<Vec<u64>> {
        self.inner.apply_flat(k.0).map_err(errors::triton)
    }

    /// `map[k]`: the out coordinates of every flat input `k`, first in-dim fastest, as a `uint64`
    /// numpy array of shape `(inputs, out-dims)` (computed without the GIL; 8 bytes per coordinate).
    fn map<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let cols = self.inner.out_dims().len();
        let flat = py
            .detach(|| -> axe_triton::Result<Vec<u64>> {
                Ok(self.inner.map()?.into_iter().flatten().collect())
            })
            .map_err(errors::triton)?;
        let rows = flat.len().checked_div(cols).unwrap_or(0);
        Ok(numpy::PyArray1::from_vec(py, flat)
            .reshape([rows, cols])?
            .into_any())
    }

    /// Whether distinct inputs reach distinct outputs (rank over GF(2)).
    #[getter]
    fn injective(&self) -> bool {
        self.inner.is_injective()
    }

    /// Whether every output is reached.
    #[getter]
    fn surjective(&self) -> bool {
        self.inner.is_surjective()
    }

    /// Triton's `A.compose(B)`: `B(A(x))`.
    fn compose(&self, py: Python<'_>, other: &LinearLayout) -> PyResult<Self> {
        Ok(py
            .detach(|| self.inner.compose(&other.inner))
            .map_err(errors::triton)?
            .into())
    }

    /// Triton's `A.invertAndCompose(B)`: `C` with `A(x) = B(C(x))`.
    fn invert_and_compose(&self, py: Python<'_>, other: &LinearLayout) -> PyResult<Self> {
        Ok(py
            .detach(|| self.inner.invert_and_compose(&other.inner))
            .map_err(errors::triton)?
            .into())
    }

    /// The inverse: `A⁻¹(A(x)) = x` (`A` bijective).
    fn invert(&self) -> PyResult<Self> {
        Ok(self.inner.invert().map_err(errors::triton)?.into())
    }

    /// A right inverse: `A(A⁺(y)) = y` (`A` surjective).
    fn pseudoinvert(&self) -> PyResult<Self> {
        Ok(self.inner.pseudoinvert().map_err(errors::triton)?.into())
    }

    /// The Axe layout of the same placement (tensor index → hardware), where it is affine per in-dim;
    /// raises `TritonError` naming the in-dims where it is not (XOR swizzles).
    fn to_axe(&self, py: Python<'_>) -> PyResult<PyLayout> {
        Ok(py
            .detach(|| self.inner.to_axe())
            .map_err(errors::triton)?
            .into())
    }

    /// The linear layout of an Axe layout over `reg`/`lane`/`warp`/`block` and a tensor `shape`
    /// (every extent a power of two). Converted without the GIL.
    #[staticmethod]
    fn from_axe(py: Python<'_>, layout: &PyLayout, shape: U64s) -> PyResult<Self> {
        Ok(py
            .detach(|| {
                Ll::from_axe(
                    &layout.inner,
                    &shape.0,
                    axe_triton::triton_in_dims(&layout.inner),
                )
            })
            .map_err(errors::triton)?
            .into())
    }

    /// The bases as Triton's JSON.
    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    /// The `#ttg.linear<{...}>` attribute, which reads back as this same layout; a `TritonError` saying
    /// why when it cannot (out-dims not named `dim0, dim1, ...` in order, or sizes past the bases' reach):
    /// `to_json()` keeps every layout.
    fn to_ttg(&self) -> PyResult<String> {
        self.inner.ttg().map_err(errors::triton)
    }

    /// The picture as SVG text: which register, lane and warp hold each tensor element.
    fn svg(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| Ok(axe_render::to_svg(&self.picture()?)))
    }

    /// Draws the layout into `path` (a `str` or `os.PathLike`; `.svg`, `.png` or `.txt`).
    fn render(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        py.detach(|| crate::picture::write(&self.picture()?, &path))
    }

    fn _repr_svg_(&self, py: Python<'_>) -> PyResult<String> {
        self.svg(py)
    }

    /// The `#ttg.linear` attribute where it reads back as this layout, else the JSON bases.
    fn __str__(&self) -> String {
        self.inner.ttg().unwrap_or_else(|_| self.inner.to_json())
    }

    fn __repr__(&self) -> String {
        format!("triton.LinearLayout({:?})", self.inner.to_json())
    }
}

impl LinearLayout {
    fn picture(&self) -> PyResult<axe_render::Picture> {
        axe_render::triton_picture(&self.inner.to_json(), None)
            .map_err(crate::picture::render_error)
    }
}

/// The Axe layout of a Gluon layout over `shape`, including shapes Triton cannot lay out (48×64).
#[pyfunction]
pub fn gluon_to_axe(py: Python<'_>, text: &str, shape: U64s) -> PyResult<PyLayout> {
    let shape = shape.0;
    let g = parse_gluon(text.trim()).map_err(errors::triton)?;
    Ok(py
        .detach(|| g.to_axe(&shape))
        .map_err(errors::triton)?
        .into())
}

/// The interval/padding pairs, the padded offset of each logical offset, and the padded size.
type Padding = (Vec<(u64, u64)>, Vec<u64>, u64);

/// For a `PaddedSharedLayout(...)`: `(interval_padding_pairs, offsets, padded_size)`, `offsets[o]` where
/// logical offset `o` of one CTA is stored (`o + Σ (o // interval) * padding`) and `padded_size` the
/// elements one CTA's buffer takes. Its linear component is `LinearLayout(text)`, its placement in padded
/// memory `gluon_to_axe(text, shape)`.
#[pyfunction]
pub fn padding_of(text: &str) -> PyResult<Padding> {
    let g = parse_gluon(text.trim()).map_err(errors::triton)?;
    let GluonLayout::PaddedShared {
        interval_padding_pairs: pairs,
        offset_bases,
        ..
    } = &g
    else {
        return Err(errors::TritonError::new_err(
            "padding_of takes a PaddedSharedLayout(...)",
        ));
    };
    let n = 1u64
        .checked_shl(offset_bases.len() as u32)
        .filter(|n| *n <= 1 << 30)
        .ok_or_else(|| errors::TritonError::new_err("too many offsets"))?;
    let offsets = (0..n)
        .map(|o| padded_offset(pairs, o))
        .collect::<Result<Vec<u64>, _>>()
        .map_err(errors::triton)?;
    let size = padded_size(pairs, n).map_err(errors::triton)?;
    Ok((pairs.clone(), offsets, size))
}

/// In-dims with their sizes, and the tensor coordinates of each flat input.
type HardwareMap = (Vec<(String, u64)>, Vec<Vec<u64>>);

/// For an Axe layout over `reg`/`lane`/`warp`/`block`: `(in_dims, map)` with `map[k]` the tensor
/// coordinates held by flat hardware input `k` (register fastest), for any sizes.
#[pyfunction]
pub fn hardware_map_of(py: Python<'_>, layout: &PyLayout, shape: U64s) -> PyResult<HardwareMap> {
    let shape = shape.0;
    let h = py
        .detach(|| {
            hardware_map(
                &layout.inner,
                &shape,
                &["register", "lane", "warp", "block"],
            )
        })
        .map_err(errors::triton)?;
    Ok((h.in_dims, h.map))
}
