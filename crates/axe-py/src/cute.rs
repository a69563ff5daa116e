//! `axe.cute`: CuTe layouts (plain or swizzled), the layout algebra with every result checked, and the
//! conversions to and from Axe layouts (TV layouts too).

use axe_cute::{self as c, AnyLayout, Layout, Tiler};
use numpy::PyArray1;
use pyo3::prelude::*;

use crate::errors;
use crate::layout::PyLayout;
use crate::value::{U64s, I64};

/// A CuTe layout, `Layout("(4,(2,3)):(1,(4,8))")` or swizzled `Layout("Sw<3,3,3> o 0 o (8,64):(64,1)")`,
/// printed as CuTe prints it. Index order is colexicographic (leftmost mode fastest).
#[pyclass(name = "Layout", module = "axe.cute", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct CuteLayout {
    inner: AnyLayout,
}

impl From<Layout> for CuteLayout {
    fn from(l: Layout) -> Self {
        CuteLayout {
            inner: AnyLayout::Plain(l),
        }
    }
}

/// A tiler argument: a `cute.Layout`, or text (a layout or a by-mode tuple `<4:1, 2:1>`).
fn tiler(t: &Bound<'_, PyAny>) -> PyResult<Tiler> {
    if let Ok(l) = t.cast::<CuteLayout>() {
        return Ok(Tiler::Layout(l.get().plain()?.clone()));
    }
    t.extract::<String>()?.parse().map_err(errors::cute)
}

fn plain_arg(t: &Bound<'_, PyAny>) -> PyResult<Layout> {
    if let Ok(l) = t.cast::<CuteLayout>() {
        return Ok(l.get().plain()?.clone());
    }
    t.extract::<String>()?.parse().map_err(errors::cute)
}

impl CuteLayout {
    fn plain(&self) -> PyResult<&Layout> {
        match &self.inner {
            AnyLayout::Plain(l) => Ok(l),
            AnyLayout::Composed(_) => Err(errors::CuteError::new_err(
                "the layout algebra takes plain layouts; this one is swizzled",
            )),
        }
    }
}

type Op = fn(&Layout, &Tiler) -> c::Result<Layout>;

#[pymethods]
impl CuteLayout {
    /// Parses CuTe's printed form. Raises `ParseError` with `.offset`.
    #[new]
    fn new(text: &str) -> PyResult<Self> {
        Ok(CuteLayout {
            inner: text.parse().map_err(errors::cute)?,
        })
    }

    /// The domain size: the product of the shape.
    #[getter]
    fn size(&self) -> i64 {
        self.inner.size()
    }

    /// One more than the largest value (`None` for a swizzled layout past 2^20 elements).
    #[getter]
    fn cosize(&self) -> PyResult<Option<i64>> {
        match &self.inner {
            AnyLayout::Plain(l) => l.cosize().map(Some).map_err(errors::cute),
            AnyLayout::Composed(_) if self.inner.size() <= 1 << 20 => {
                let mut m = 0;
                for i in 0..self.inner.size() {
                    m = m.max(self.inner.eval(i).map_err(errors::cute)? + 1);
                }
                Ok(Some(m))
            }
            AnyLayout::Composed(_) => Ok(None),
        }
    }

    /// The number of top-level modes.
    #[getter]
    fn rank(&self) -> usize {
        self.inner.layout().rank()
    }

    /// The nesting depth of the shape.
    #[getter]
    fn depth(&self) -> usize {
        self.inner.layout().depth()
    }

    /// The value at flat index `i` (colexicographic).
    fn __call__(&self, i: I64) -> PyResult<i64> {
        self.inner.eval(i.0).map_err(errors::cute)
    }

    /// The value of every index, `map[i] = L(i)`, as an `int64` numpy array (at most 2^26 elements).
    fn map<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let n = self.inner.size();
        if n > 1 << 26 {
            return Err(errors::CuteError::new_err(format!(
                "{n} elements: map lists at most 2^26"
            )));
        }
        let v = py
            .detach(|| {
                (0..n)
                    .map(|i| self.inner.eval(i))
                    .collect::<c::Result<Vec<i64>>>()
            })
            .map_err(errors::cute)?;
        Ok(PyArray1::from_vec(py, v))
    }

    /// Merges modes without changing the map: `coalesce(L)(i) = L(i)` for every `i`; with a profile
    /// (CuTe's notation, e.g. `"(1,1)"`) mode by mode, keeping each mode's size.
    #[pyo3(signature = (profile = None))]
    fn coalesce(&self, profile: Option<&str>) -> PyResult<Self> {
        let l = self.plain()?;
        let r = match profile {
            None => l.coalesce(),
            Some(p) => l.coalesce_by(&c::parse_int_tuple(p).map_err(errors::cute)?),
        };
        Ok(r.map_err(errors::cute)?.into())
    }

    /// CuTe's `filter`: the stride-0 and extent-1 leaves removed, then coalesced; with a profile mode by
    /// mode.
    #[pyo3(signature = (profile = None))]
    fn filter(&self, profile: Option<&str>) -> PyResult<Self> {
        let l = self.plain()?;
        let r = match profile {
            None => l.filter(),
            Some(p) => l.filter_by(&c::parse_int_tuple(p).map_err(errors::cute)?),
        };
        Ok(r.map_err(errors::cute)?.into())
    }

    /// `self ∘ other`: `(A ∘ B)(i) = A(B(i))` for every `i` of `B`'s domain; `other` may be a by-mode
    /// tiler. Raises `CuteError` naming the reason where no layout has that map.
    fn composition(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        let r = c::composition_tiler(self.plain()?, &tiler(other)?).map_err(errors::cute)?;
        Ok(r.into())
    }

    /// The complement within `bound` (default: the cosize): the layout `C` whose values, with `self`'s,
    /// cover `[0, bound)` disjointly, ordered and as compact as CuTe's.
    #[pyo3(signature = (bound = None))]
    fn complement(&self, bound: Option<I64>) -> PyResult<Self> {
        let l = self.plain()?;
        let m = match bound {
            Some(m) => m.0,
            None => l.cosize().map_err(errors::cute)?,
        };
        Ok(c::complement(l, m).map_err(errors::cute)?.into())
    }

    /// `R` with `self(R(i)) = i` on `R`'s domain, the largest such contiguous domain.
    fn right_inverse(&self) -> PyResult<Self> {
        Ok(c::right_inverse(self.plain()?)
            .map_err(errors::cute)?
            .into())
    }

    /// `L` with `L(self(i)) = i` for every `i` when `self` is injective; otherwise CuTe's generalised
    /// inverse (`self(L(self(i))) = self(i)`, not a true inverse), or with `strict=True` an error.
    #[pyo3(signature = (strict = false))]
    fn left_inverse(&self, strict: bool) -> PyResult<Self> {
        let l = self.plain()?;
        let r = if strict {
            c::left_inverse_strict(l)
        } else {
            c::left_inverse(l)
        };
        Ok(r.map_err(errors::cute)?.into())
    }

    /// Whether `self` is injective, so that `left_inverse()` is a true left inverse.
    #[getter]
    fn injective(&self) -> PyResult<bool> {
        c::is_true_left_inverse(self.plain()?).map_err(errors::cute)
    }

    /// `self ∘ (T, complement(T))`: the tiles of `tiler` first, then their repetitions.
    fn logical_divide(&self, tiler: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.op(c::logical_divide, tiler)
    }

    /// `logical_divide` with the tile modes gathered into mode 0 and the rest into mode 1.
    fn zipped_divide(&self, tiler: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.op(c::zipped_divide, tiler)
    }

    /// `zipped_divide` with the rest modes unpacked.
    fn tiled_divide(&self, tiler: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.op(c::tiled_divide, tiler)
    }

    /// `zipped_divide` with every mode unpacked.
    fn flat_divide(&self, tiler: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.op(c::flat_divide, tiler)
    }

    /// `(self, complement(self) ∘ tiler)`: `self` repeated as `tiler` says.
    fn logical_product(&self, tiler: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.op(c::logical_product, tiler)
    }

    /// `logical_product` by modes, gathered into (tile, rest).
    fn zipped_product(&self, tiler: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.op(c::zipped_product, tiler)
    }

    /// `zipped_product` with the rest modes unpacked.
    fn tiled_product(&self, tiler: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.op(c::tiled_product, tiler)
    }

    /// `zipped_product` with every mode unpacked.
    fn flat_product(&self, tiler: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.op(c::flat_product, tiler)
    }

    /// The product with each mode of `self` inside the matching mode of `other` (blocks of `self`).
    fn blocked_product(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        let b = plain_arg(other)?;
        Ok(c::blocked_product(self.plain()?, &b)
            .map_err(errors::cute)?
            .into())
    }

    /// The product with each mode of `other` inside the matching mode of `self` (`self` interleaved).
    fn raked_product(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        let b = plain_arg(other)?;
        Ok(c::raked_product(self.plain()?, &b)
            .map_err(errors::cute)?
            .into())
    }

    /// The Axe layout of the same map on memory (mode order reversed: colex → lex), or with `tv=True`
    /// the Axe layout of a TV layout's tile onto `tid`/`val` axes.
    #[pyo3(signature = (tv = false))]
    fn to_axe(&self, tv: bool) -> PyResult<PyLayout> {
        let l = self.plain()?;
        let r = if tv { c::tv_to_axe(l) } else { l.to_axe() };
        Ok(r.map_err(errors::cute)?.into())
    }

    /// The CuTe layout of an Axe layout on one axis (over `shape`, a CuTe shape text, if given), or
    /// with `tv=True` the TV layout of an Axe layout over `tid`/`val`.
    #[staticmethod]
    #[pyo3(signature = (layout, shape = None, tv = false))]
    fn from_axe(layout: &PyLayout, shape: Option<&str>, tv: bool) -> PyResult<Self> {
        let r = if tv {
            c::tv_from_axe(&layout.inner)
        } else {
            let shape = shape
                .map(|s| c::parse_int_tuple(s).map_err(errors::cute))
                .transpose()?;
            Layout::from_axe(&layout.inner, shape.as_ref())
        };
        Ok(r.map_err(errors::cute)?.into())
    }

    /// The picture as SVG text: CuTe's `print_layout` grid, or with `tv=True` the thread/value picture
    /// of a TV layout over its tile `shape` (`[M, N]`). Drawn without the GIL.
    #[pyo3(signature = (tv = false, shape = None))]
    fn svg(&self, py: Python<'_>, tv: bool, shape: Option<U64s>) -> PyResult<String> {
        let shape = shape.map(|s| s.0);
        py.detach(|| Ok(axe_render::to_svg(&self.picture(tv, shape)?)))
    }

    /// Draws the layout into `path` (`.svg`, `.png` or `.txt`); `tv` and `shape` as for `svg`. Drawn
    /// and written without the GIL.
    #[pyo3(signature = (path, tv = false, shape = None))]
    fn render(&self, py: Python<'_>, path: &str, tv: bool, shape: Option<U64s>) -> PyResult<()> {
        let shape = shape.map(|s| s.0);
        py.detach(|| crate::picture::write(&self.picture(tv, shape)?, path))
    }

    fn _repr_svg_(&self, py: Python<'_>) -> PyResult<String> {
        self.svg(py, false, None)
    }

    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        format!("cute.Layout({:?})", self.inner.to_string())
    }
}

impl CuteLayout {
    fn picture(&self, tv: bool, shape: Option<Vec<u64>>) -> PyResult<axe_render::Picture> {
        axe_render::cute_picture(&self.inner.to_string(), tv, shape.as_deref())
            .map_err(crate::picture::render_error)
    }

    fn op(&self, f: Op, t: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(f(self.plain()?, &tiler(t)?).map_err(errors::cute)?.into())
    }
}

/// `Sw<a> ∘ Sw<b>` as one swizzle `(B, M, S)` ([`axe_cute::Swizzle::compose`]); `CuteError` where no
/// swizzle does both.
#[pyfunction]
pub fn _cute_swizzle_compose(a: (u32, u32, i32), b: (u32, u32, i32)) -> PyResult<(u32, u32, i32)> {
    let sw = |(b, m, s)| c::Swizzle::new(b, m, s).map_err(errors::cute);
    Ok(sw(a)?.compose(&sw(b)?).map_err(errors::cute)?.params())
}
