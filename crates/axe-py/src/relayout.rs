//! Relayout of byte buffers through the Rust kernels, on numpy arrays' own memory, without the GIL.
//!
//! The Python side (`axe/_numpy.py`) checks dtypes and shapes and passes `uint8` views of the arrays;
//! this module parses the layouts, checks the buffer sizes and moves the bytes.

use axe_relayout::split::{self, Side};
use axe_relayout::{Options, TensorLayout};
use axe_xla::ArrayShape;
use numpy::{PyArray1, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;

use crate::errors;
use crate::layout::PyLayout;
use crate::shape::{array, dims_u64, PyShape};

/// Where the bytes go: an XLA array, or an Axe layout on memory over the source's dims.
pub enum Target {
    Xla(Box<ArrayShape>),
    Axe(axe_layout::Layout, Vec<u64>, u32),
}

impl Target {
    fn side(&self) -> Side<'_> {
        match self {
            Target::Xla(a) => Side::Xla(a.as_ref()),
            Target::Axe(layout, dims, bits) => Side::Axe {
                layout,
                dims,
                bits: *bits,
            },
        }
    }
}

/// The source's shape: a `Shape` or its text.
pub fn source(src: &Bound<'_, PyAny>) -> PyResult<ArrayShape> {
    if let Ok(s) = src.cast::<PyShape>() {
        return Ok(s.get().inner.clone());
    }
    array(&src.extract::<String>()?)
}

/// The destination: a `Shape`, an `axe.Layout` (on `m`, over the source's dims), or text: an XLA layout
/// `{1,0:T(8,128)}` for the source's dims and type, a whole XLA shape of the same tensor, or Axe notation.
pub fn target(dst: &Bound<'_, PyAny>, src: &ArrayShape) -> PyResult<Target> {
    let axe = |l: axe_layout::Layout| -> PyResult<Target> {
        let bits = u32::try_from(axe_xla::element_bits(src)).unwrap_or(u32::MAX);
        Ok(Target::Axe(l, dims_u64(src)?, bits))
    };
    if let Ok(l) = dst.cast::<PyLayout>() {
        return axe(l.get().inner.clone());
    }
    let a = if let Ok(s) = dst.cast::<PyShape>() {
        s.get().inner.clone()
    } else {
        let text: String = dst.extract()?;
        let t = text.trim();
        if t.starts_with('{') {
            let layout = axe_xla::parse_layout(t, src.rank()).map_err(errors::xla)?;
            let a = ArrayShape {
                layout,
                ..src.clone()
            };
            axe_xla::validate_array(&a).map_err(errors::xla)?;
            a
        } else if t.starts_with(|c: char| c.is_ascii_lowercase()) {
            array(t)?
        } else if t.starts_with('(') {
            // A tuple: say what dst takes, rather than an Axe-notation error.
            return Err(errors::RelayoutError::new_err(format!(
                "dst {t:?} is not an array shape; dst takes an XLA layout ('{{1,0:T(8,128)}}'), an \
                 array shape of the same tensor ('f32[8,128]{{0,1}}'), or an Axe layout on m \
                 ('S[(8,128):(1,8)]', or an axe.Layout)"
            )));
        } else {
            return axe(t.parse().map_err(errors::layout)?);
        }
    };
    if a.dims != src.dims || a.element_type != src.element_type {
        let why = if a.element_type != src.element_type {
            "the element types differ"
        } else {
            "the dimensions differ"
        };
        return Err(errors::RelayoutError::new_err(format!(
            "{a} is not the same tensor as {src}: {why} (a relayout keeps the tensor and changes its \
             layout)"
        )));
    }
    Ok(Target::Xla(Box::new(a)))
}

/// The byte sizes of both sides and the pieces to move.
fn pieces(src: &ArrayShape, dst: &Target) -> PyResult<Vec<(TensorLayout, TensorLayout)>> {
    let p = split::pieces(Side::Xla(src), dst.side()).map_err(errors::relayout)?;
    if p.is_empty() {
        return Err(errors::RelayoutError::new_err(
            "the relayout has no elements to move",
        ));
    }
    Ok(p)
}

/// The destination's `Shape` for a relayout of `src` to `dst` (`None` for an Axe layout), as
/// `_relayout` reads them: what `axe.relayout` checks an `out=` array against before any byte moves.
#[pyfunction]
pub fn _relayout_target(
    src: &Bound<'_, PyAny>,
    dst: &Bound<'_, PyAny>,
) -> PyResult<Option<PyShape>> {
    let s = source(src)?;
    Ok(match target(dst, &s)? {
        Target::Xla(a) => Some(PyShape { inner: *a }),
        Target::Axe(..) => None,
    })
}

/// An array that another call (on another thread) holds, or that overlaps the other array of this call.
fn in_use(what: &str, e: impl std::fmt::Display) -> PyErr {
    errors::RelayoutError::new_err(format!(
        "{what} is in use: it overlaps the other array of this call, or another thread is reading or \
         writing it ({e})"
    ))
}

/// Moves the bytes of `src_bytes` (laid out as `src`) into `out` (laid out as `dst`), or into a new
/// zeroed `uint8` array of the destination's size when `out` is `None`, padding zeroed, with the GIL
/// released. Returns the destination buffer and its `Shape` (`None` for an Axe layout). The layouts are
/// read and the pieces planned once per call.
#[pyfunction]
#[pyo3(signature = (src_bytes, src, dst, out = None, threads = crate::value::Usize(0)))]
pub fn _relayout<'py>(
    py: Python<'py>,
    src_bytes: Bound<'py, PyArray1<u8>>,
    src: &Bound<'py, PyAny>,
    dst: &Bound<'py, PyAny>,
    out: Option<Bound<'py, PyArray1<u8>>>,
    threads: crate::value::Usize,
) -> PyResult<(Bound<'py, PyArray1<u8>>, Option<PyShape>)> {
    let s = source(src)?;
    let t = target(dst, &s)?;
    let p = pieces(&s, &t)?;
    let (need_in, need_out) = (p[0].0.bytes(), p[0].1.bytes());
    let src_bytes = src_bytes
        .try_readonly()
        .map_err(|e| in_use("the input", e))?;
    let input = src_bytes
        .as_slice()
        .map_err(|e| errors::RelayoutError::new_err(format!("source: {e}")))?;
    if input.len() as u64 != need_in {
        return Err(errors::RelayoutError::new_err(format!(
            "the source has {} bytes, {s} needs {need_in}",
            input.len()
        )));
    }
    if let Some(bits) = axe_relayout::value_bits(s.element_type) {
        // An element narrower than its byte (pred's 0 or 1, s4's four bits) has the rest zero, as
        // numpy's bool and ml_dtypes write them: any other byte would read one way copied and another
        // packed, so it is refused, naming where it is.
        let sources: Vec<&TensorLayout> = p.iter().map(|(src, _)| src).collect();
        let found = py.detach(|| axe_relayout::first_out_of_range(input, &sources, bits));
        if let Some((at, v)) = found {
            let what = if s.element_type == axe_xla::PrimitiveType::Pred {
                "not 0 or 1 (numpy's bool holds only those; a view of other bytes as bool does \
                 not): pass (x != 0) to read nonzero as true"
                    .to_string()
            } else {
                format!(
                    "past {} elements' {bits} bits (kept in a byte, their bits are low and the rest \
                     zero, as ml_dtypes and XLA write them)",
                    s.element_type
                )
            };
            return Err(errors::RelayoutError::new_err(format!(
                "the {} source's byte at offset {at} is {v}, {what}",
                s.element_type
            )));
        }
    }
    let out = match out {
        Some(o) => {
            if o.len() as u64 != need_out {
                return Err(errors::RelayoutError::new_err(format!(
                    "out has {} bytes, the destination takes {need_out}",
                    o.len()
                )));
            }
            o
        }
        None => {
            // numpy refuses an array past isize::MAX bytes with a ValueError ("Maximum allowed
            // dimension exceeded"); no machine holds one, so it is the MemoryError of any other size
            // past memory.
            let n = usize::try_from(need_out)
                .ok()
                .filter(|&n| isize::try_from(n).is_ok())
                .ok_or_else(|| {
                    pyo3::exceptions::PyMemoryError::new_err(format!(
                        "the destination takes {need_out} bytes, past any memory"
                    ))
                })?;
            // numpy's own allocation: a size the machine cannot hold raises MemoryError.
            py.import("numpy")?
                .call_method1("zeros", (n, "uint8"))?
                .cast_into::<PyArray1<u8>>()?
        }
    };
    {
        let mut w = out.try_readwrite().map_err(|e| in_use("out", e))?;
        let output = w
            .as_slice_mut()
            .map_err(|e| errors::RelayoutError::new_err(format!("destination: {e}")))?;
        let opts = Options {
            threads: threads.0,
            ..Options::default()
        };
        py.detach(|| split::relayout_pieces(input, output, &p, &opts))
            .map_err(errors::relayout)?;
    }
    let shape = match t {
        Target::Xla(a) => Some(PyShape { inner: *a }),
        Target::Axe(..) => None,
    };
    Ok((out, shape))
}
