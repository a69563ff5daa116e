//! `axe.Layout`: an Axe layout (shard / replica / offset over named axes) and its operators.

use axe_layout::{Coord, Layout};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors;
use crate::value::{Ranges, U64s, U64};

/// An Axe layout: a logical index maps to coordinates on named axes (memory `m`, threads, devices)
/// through shard iters (extent : stride @ axis), replica iters and an offset.
///
/// `Layout("S[(8,2):(4@lane,1)] + R[2:4@warp]")`; `str()` is the notation, `repr()` round-trips.
#[pyclass(name = "Layout", module = "axe", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyLayout {
    pub inner: Layout,
}

impl From<Layout> for PyLayout {
    fn from(inner: Layout) -> Self {
        PyLayout { inner }
    }
}

/// A coordinate as `{axis: value}` over `axes` (zeros included), plus any other axis it has.
fn coord_dict<'py>(
    py: Python<'py>,
    c: &Coord,
    axes: &[axe_layout::Axis],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for a in axes {
        d.set_item(a.name(), c.get(a))?;
    }
    for (a, v) in c.components() {
        d.set_item(a.name(), v)?;
    }
    Ok(d)
}

fn iters(its: &[axe_layout::Iter]) -> Vec<(u64, i64, &'static str)> {
    its.iter()
        .map(|i| (i.extent(), i.stride(), i.axis().name()))
        .collect()
}

#[pymethods]
impl PyLayout {
    /// Parses the Axe notation, e.g. `"S[(4,8):(8,1)] + R[2:1@warp] + 16"`. Raises `ParseError`
    /// (with `.offset`) on malformed text.
    #[new]
    fn new(text: &str) -> PyResult<Self> {
        text.parse::<Layout>()
            .map(Self::from)
            .map_err(errors::layout)
    }

    /// The row-major layout of `shape` on memory: `S[(d0,...,dn):(d1···dn,...,1)]`.
    #[staticmethod]
    fn row_major(shape: U64s) -> PyResult<Self> {
        Layout::row_major(&shape.0)
            .map(Self::from)
            .map_err(errors::layout)
    }

    /// The column-major layout of `shape` on memory (first dim fastest).
    #[staticmethod]
    fn column_major(shape: U64s) -> PyResult<Self> {
        Layout::column_major(&shape.0)
            .map(Self::from)
            .map_err(errors::layout)
    }

    /// The number of logical elements: the product of the shard extents.
    #[getter]
    fn size(&self) -> u64 {
        self.inner.size()
    }

    /// How many copies of each element the replica iters make.
    #[getter]
    fn replica_count(&self) -> u64 {
        self.inner.replica_count()
    }

    /// The axes the layout uses, in order of first appearance.
    #[getter]
    fn axes(&self) -> Vec<&'static str> {
        self.inner.axes().iter().map(|a| a.name()).collect()
    }

    /// The shard iters as `(extent, stride, axis)`, outermost first.
    #[getter]
    fn shard(&self) -> Vec<(u64, i64, &'static str)> {
        iters(self.inner.shard())
    }

    /// The replica iters as `(extent, stride, axis)`.
    #[getter]
    fn replica(&self) -> Vec<(u64, i64, &'static str)> {
        iters(self.inner.replica())
    }

    /// The offset as `{axis: value}`.
    #[getter]
    fn offset<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        coord_dict(py, self.inner.offset(), &[])
    }

    /// The canonical form: equal canonical forms mean the same map (fuse iters, drop unit extents,
    /// sort replicas).
    fn canonicalize(&self, py: Python<'_>) -> PyResult<Self> {
        py.detach(|| self.inner.canonicalize())
            .map(Self::from)
            .map_err(errors::layout)
    }

    /// Whether both layouts map every index to the same set of coordinates.
    fn equivalent(&self, py: Python<'_>, other: &PyLayout) -> PyResult<bool> {
        py.detach(|| self.inner.equivalent(&other.inner))
            .map_err(errors::layout)
    }

    /// Regroups the shard into one block per dimension of `shape` (iters split as needed, same map).
    /// Returns `(layout, blocks)` where `blocks[i] = (start, end)` are the shard iters of dimension `i`.
    /// Raises `LayoutError` when no iter boundaries fit the shape.
    fn group(&self, shape: U64s) -> PyResult<(Self, Vec<(usize, usize)>)> {
        let g = self.inner.group(&shape.0).map_err(errors::layout)?;
        let blocks = g.blocks.iter().map(|b| (b.start, b.end)).collect();
        Ok((g.layout.into(), blocks))
    }

    /// Tiles `self` (the inner layout, over `inner_shape`) by `outer` (over `outer_shape`): the
    /// direct sum with `outer` scaled by the inner span. Law: at index `(y, z)` the result is
    /// `σ·outer(y) + self(z)` per dimension. Returns `(layout, shape)` with `shape[i] =
    /// outer_shape[i]·inner_shape[i]`.
    fn tile(
        &self,
        outer: &PyLayout,
        inner_shape: U64s,
        outer_shape: U64s,
    ) -> PyResult<(Self, Vec<u64>)> {
        let (l, s) = self
            .inner
            .tile(&outer.inner, &inner_shape.0, &outer_shape.0)
            .map_err(errors::layout)?;
        Ok((l.into(), s))
    }

    /// The outer layout `B` with `inner.tile(B, ...) ≡ self` over `tiled_shape`, given the inner
    /// layout `inner` over `inner_shape`; returns `(B, outer_shape)`. Raises `LayoutError` when `self`
    /// is not such a tiling.
    fn tile_of(
        &self,
        inner: &PyLayout,
        tiled_shape: U64s,
        inner_shape: U64s,
    ) -> PyResult<(Self, Vec<u64>)> {
        let (l, s) = self
            .inner
            .tile_of(&inner.inner, &tiled_shape.0, &inner_shape.0)
            .map_err(errors::layout)?;
        Ok((l.into(), s))
    }

    /// The direct sum `self ⊕ other` over `self_shape` and `other_shape`: per dimension
    /// `(A⊕B)(x) = A(x div S_B) + B(x mod S_B)`. Returns `(layout, shape)`.
    fn direct_sum(
        &self,
        other: &PyLayout,
        self_shape: U64s,
        other_shape: U64s,
    ) -> PyResult<(Self, Vec<u64>)> {
        let (l, s) = self
            .inner
            .direct_sum(&other.inner, &self_shape.0, &other_shape.0)
            .map_err(errors::layout)?;
        Ok((l.into(), s))
    }

    /// The layout of the sub-array `region` (a `(start, end)` per dimension) of the array `shape`:
    /// `slice(x) = self(region_start + x)` with `x` row-major over the region.
    fn slice(&self, shape: U64s, region: Ranges) -> PyResult<Self> {
        let region: Vec<std::ops::Range<u64>> = region.0.iter().map(|&(a, b)| a..b).collect();
        self.inner
            .slice(&shape.0, &region)
            .map(Self::from)
            .map_err(errors::layout)
    }

    /// The coordinates of flat index `index` (or of the multi-index `index` over `shape`), one
    /// `{axis: value}` per replica, every axis of the layout present.
    #[pyo3(signature = (index, shape=None))]
    fn apply<'py>(
        &self,
        py: Python<'py>,
        index: Bound<'py, PyAny>,
        shape: Option<U64s>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let coords = match shape {
            Some(s) => {
                let idx: U64s = index.extract()?;
                self.inner.apply_multi(&idx.0, &s.0)
            }
            None => self.inner.apply(index.extract::<U64>()?.0),
        }
        .map_err(errors::layout)?;
        let axes = self.inner.axes();
        coords.iter().map(|c| coord_dict(py, c, &axes)).collect()
    }

    /// The coordinate on `axis` (default: the layout's only axis) of every element, as an `int64`
    /// numpy array of `shape` (default `(size,)`), row-major. `axis` must be one of `axes`: any other
    /// name raises `LayoutError` naming it and listing the layout's axes (only `Layout("S[]")`, which
    /// mentions no axis, takes any name, its one element being 0 on every axis). Raises `LayoutError`
    /// too for a layout with replicas (an element has several coordinates) or past 2^26 elements.
    #[pyo3(signature = (shape=None, axis=None))]
    fn map<'py>(
        &self,
        py: Python<'py>,
        shape: Option<U64s>,
        axis: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let l = &self.inner;
        let shape = shape.map_or_else(|| vec![l.size()], |s| s.0);
        l.check_admits(&shape).map_err(errors::layout)?;
        if l.replica_count() > 1 {
            return Err(errors::LayoutError::new_err(
                "the layout has replicas: an element has several coordinates (use apply)",
            ));
        }
        const MAX: u64 = 1 << 26;
        if l.size() > MAX {
            return Err(errors::LayoutError::new_err(format!(
                "{} elements: map lists at most {MAX}",
                l.size()
            )));
        }
        let axes = l.axes();
        let axis = match axis {
            Some(a) => l.axis(a).map_err(errors::layout)?,
            None if axes.len() <= 1 => axes
                .first()
                .copied()
                .unwrap_or_else(axe_layout::Axis::memory),
            None => {
                return Err(errors::LayoutError::new_err(format!(
                    "the layout uses the axes {}: name one with axis=",
                    axes.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
                )))
            }
        };
        let values = py.detach(|| -> axe_layout::Result<Vec<i64>> {
            (0..l.size())
                .map(|x| Ok(l.base_at(x)?.get(&axis)))
                .collect()
        });
        let values = values.map_err(errors::layout)?;
        let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        Ok(PyArray1::from_vec(py, values).reshape(dims)?.into_any())
    }

    /// The length of the footprint the layout covers on `axis`, from its lowest coordinate to its
    /// highest: `1 + Σ (e − 1)·|s|` over the iters on `axis` (the offset not counted; 1 for an axis only
    /// the offset mentions). Gaps count: `S[(8,2):(4@lane,1)]` spans 29 lanes though it uses 8. `axis` must be one of `axes`: any other name raises `LayoutError`
    /// naming it and listing the layout's axes (`Layout("S[]")`, which mentions none, takes any name).
    fn span(&self, axis: &str) -> PyResult<u64> {
        let a = self.inner.axis(axis).map_err(errors::layout)?;
        self.inner.span(&a).map_err(errors::layout)
    }

    /// The layout in Apache TVM's `tvm.tirx.layout` Python notation.
    fn to_tvm(&self) -> String {
        self.inner.to_tvm()
    }

    /// The picture of the layout over `shape` (default `(size,)`) as SVG text.
    #[pyo3(signature = (shape=None))]
    fn svg(&self, py: Python<'_>, shape: Option<U64s>) -> PyResult<String> {
        let shape = shape.map(|s| s.0);
        py.detach(|| Ok(axe_render::to_svg(&self.picture(shape)?)))
    }

    /// Draws the layout over `shape` into `path` (a `str` or `os.PathLike`; `.svg`, `.png` or `.txt`).
    #[pyo3(signature = (path, shape=None))]
    fn render(
        &self,
        py: Python<'_>,
        path: std::path::PathBuf,
        shape: Option<U64s>,
    ) -> PyResult<()> {
        let shape = shape.map(|s| s.0);
        py.detach(|| crate::picture::write(&self.picture(shape)?, &path))
    }

    fn _repr_svg_(&self, py: Python<'_>) -> PyResult<String> {
        self.svg(py, None)
    }

    /// Pickles as its notation.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> (Bound<'py, PyAny>, (String,)) {
        let py = slf.py();
        (
            py.get_type::<PyLayout>().into_any(),
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
        format!("Layout({:?})", self.inner.to_string())
    }
}

impl PyLayout {
    fn picture(&self, shape: Option<Vec<u64>>) -> PyResult<axe_render::Picture> {
        let shape = shape.unwrap_or_else(|| vec![self.inner.size()]);
        axe_render::axe_picture(&self.inner, &shape).map_err(crate::picture::render_error)
    }
}
