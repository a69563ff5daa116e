//! `axe.Mesh` and `axe.Sharding`: device meshes, shardings in every notation, who holds what, plans.

use axe_shard::{parse_any, plan, print, CostModel, Mesh, Notation, Sharding};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors;
use crate::shape::{array, dims_u64, PyShape};

/// A device mesh: named axes with sizes and the device id at each position (row-major).
///
/// `Mesh("x=2,y=4")`, `Mesh({"x": 2, "y": 4})`, `Mesh([2, 4])` (axes `d0`, `d1`), with
/// `devices=[...]` for a non-default device order.
#[pyclass(name = "Mesh", module = "axe", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyMesh {
    pub inner: Mesh,
}

fn mesh_from(axes: &Bound<'_, PyAny>, devices: Option<Vec<u64>>) -> PyResult<Mesh> {
    if let Ok(m) = axes.cast::<PyMesh>() {
        return Ok(m.get().inner.clone());
    }
    if let Ok(spec) = axes.extract::<String>() {
        return Mesh::from_spec(&spec, devices).map_err(errors::shard);
    }
    let named: Vec<(String, u64)> = if let Ok(d) = axes.cast::<PyDict>() {
        d.iter()
            .map(|(k, v)| Ok((k.extract::<String>()?, v.extract::<u64>()?)))
            .collect::<PyResult<_>>()?
    } else {
        let sizes: Vec<u64> = axes.extract()?;
        sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| (format!("d{i}"), s))
            .collect()
    };
    let refs: Vec<(&str, u64)> = named.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    match devices {
        None => Mesh::new(&refs),
        Some(d) => Mesh::with_devices(&refs, d),
    }
    .map_err(errors::shard)
}

#[pymethods]
impl PyMesh {
    /// Builds a mesh from `"x=2,y=4"`, `{"x": 2, "y": 4}` or `[2, 4]`; `devices` gives the id at each
    /// position (default `0..N-1`). Raises `ShardingError` for sizes of 0, repeated names or ids.
    #[new]
    #[pyo3(signature = (axes, devices = None))]
    fn new(axes: &Bound<'_, PyAny>, devices: Option<Vec<u64>>) -> PyResult<Self> {
        Ok(PyMesh {
            inner: mesh_from(axes, devices)?,
        })
    }

    /// The axis names.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.inner.names().to_vec()
    }

    /// The axis sizes.
    #[getter]
    fn sizes(&self) -> Vec<u64> {
        self.inner.sizes().to_vec()
    }

    /// The device id at each mesh position, row-major.
    #[getter]
    fn devices(&self) -> Vec<u64> {
        self.inner.devices().to_vec()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __str__(&self) -> String {
        spec(&self.inner)
    }

    fn __repr__(&self) -> String {
        if self.inner.is_default_order() {
            format!("Mesh({:?})", spec(&self.inner))
        } else {
            format!(
                "Mesh({:?}, devices={:?})",
                spec(&self.inner),
                self.inner.devices()
            )
        }
    }
}

fn spec(m: &Mesh) -> String {
    m.names()
        .iter()
        .zip(m.sizes())
        .map(|(n, s)| format!("{n}={s}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// A sharding of an array over a mesh, read from any notation: XLA `HloSharding` (`{devices=[2,2]<=[4]}`),
/// JAX `PartitionSpec` (`P('x', None)`), DTensor placements (`[Shard(0), Replicate()]`), Alpa (`S0R`) or
/// an Axe layout over device axes (`S[...]`).
///
/// `Sharding("P('x', 'y')", mesh="x=2,y=2", shape="f32[64,128]")`; the notation is recognised from the
/// syntax, or forced with `notation="jax"`.
#[pyclass(name = "Sharding", module = "axe", frozen)]
pub struct PySharding {
    mesh: Mesh,
    sharding: Sharding,
    shape: axe_xla::ArrayShape,
    text: String,
}

fn notation(name: &str) -> PyResult<Notation> {
    Notation::from_name(name).ok_or_else(|| {
        errors::ShardingError::new_err(format!(
            "unknown notation {name:?}: one of hlo, jax, dtensor, alpa, axe"
        ))
    })
}

fn ranges(r: &[std::ops::Range<u64>]) -> Vec<(u64, u64)> {
    r.iter().map(|r| (r.start, r.end)).collect()
}

#[pymethods]
impl PySharding {
    /// Reads `text` for an array of `shape` (an `axe.Shape`, its text, or a list of dims, taken as
    /// `f32`) on `mesh` (an `axe.Mesh` or what `Mesh()` takes; optional where the notation fixes the
    /// devices, as `{devices=[2,2]<=[4]}` does). Raises `ParseError` or `ShardingError`.
    #[new]
    #[pyo3(signature = (text, shape, mesh = None, notation = None))]
    fn new(
        text: &str,
        shape: &Bound<'_, PyAny>,
        mesh: Option<&Bound<'_, PyAny>>,
        notation: Option<&str>,
    ) -> PyResult<Self> {
        let shape = if let Ok(s) = shape.cast::<PyShape>() {
            s.get().inner.clone()
        } else if let Ok(t) = shape.extract::<String>() {
            array(&t)?
        } else {
            // Through the shape reader, which refuses negative and oversized dims.
            let dims: Vec<i64> = shape.extract()?;
            let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
            array(&format!("f32[{}]", dims.join(",")))?
        };
        let dims = dims_u64(&shape)?;
        let mesh = mesh.map(|m| mesh_from(m, None)).transpose()?;
        let n = notation.map(self::notation).transpose()?;
        let (mesh, sharding) = parse_any(text, n, mesh.as_ref(), &dims).map_err(errors::shard)?;
        Ok(PySharding {
            mesh,
            sharding,
            shape,
            text: text.to_string(),
        })
    }

    /// The mesh.
    #[getter]
    fn mesh(&self) -> PyMesh {
        PyMesh {
            inner: self.mesh.clone(),
        }
    }

    /// The array's shape.
    #[getter]
    fn shape(&self) -> PyShape {
        PyShape {
            inner: self.shape.clone(),
        }
    }

    /// The sharding in `notation` (`"hlo"`, `"jax"`, `"dtensor"`, `"alpa"`, `"axe"`). Raises
    /// `ShardingError` saying why when the notation cannot express it.
    fn to(&self, notation: &str) -> PyResult<String> {
        print(self::notation(notation)?, &self.mesh, &self.sharding).map_err(errors::shard)
    }

    /// Every notation: `{name: text or None}` (None where the notation cannot say it; `to()` says why).
    fn notations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for n in Notation::ALL {
            d.set_item(n.name(), print(n, &self.mesh, &self.sharding).ok())?;
        }
        Ok(d)
    }

    /// Who holds what: per device its id, `region` (a `(start, end)` per dim), `replica_group` (the
    /// devices holding the same data), `local_shape`, and `padded_shape` (what it allocates).
    fn devices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let regions = self.sharding.regions(&self.mesh).map_err(errors::shard)?;
        let out = PyList::empty(py);
        for r in regions {
            let d = PyDict::new(py);
            d.set_item("device", r.device)?;
            d.set_item("region", ranges(&r.region))?;
            d.set_item("replica_group", r.replica_group.to_vec())?;
            d.set_item("local_shape", &r.local_shape)?;
            d.set_item("padded_shape", &r.padded_shape)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// The plan resharding this array to `other` (same mesh and shape): `collective`, `bytes` moved,
    /// `transfers` (`from`, `to`, `region`, `bytes`), `locals` (copies a device makes from its own
    /// shard) and `estimate_us` (alpha-beta: `alpha_us` per message, `bytes_per_us` per link).
    #[pyo3(signature = (other, alpha_us = None, bytes_per_us = None))]
    fn plan<'py>(
        &self,
        py: Python<'py>,
        other: &PySharding,
        alpha_us: Option<f64>,
        bytes_per_us: Option<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        if other.mesh != self.mesh {
            return Err(errors::ShardingError::new_err(
                "the two shardings are on different meshes",
            ));
        }
        if other.shape.dims != self.shape.dims {
            return Err(errors::ShardingError::new_err(format!(
                "the two shardings are of different arrays: {} and {}",
                self.shape, other.shape
            )));
        }
        let mut cost = CostModel::default();
        if let Some(a) = alpha_us {
            cost.alpha_us = a;
        }
        if let Some(b) = bytes_per_us {
            cost.bytes_per_us = b;
        }
        let bytes = u64::from(self.shape.element_type.byte_width());
        let p = py
            .detach(|| plan(&self.mesh, &self.sharding, &other.sharding, bytes, &cost))
            .map_err(errors::shard)?;
        let d = PyDict::new(py);
        d.set_item("collective", p.collective.name())?;
        d.set_item("bytes", p.bytes)?;
        let transfers = PyList::empty(py);
        for t in &p.transfers {
            let v = PyDict::new(py);
            v.set_item("from", t.from)?;
            v.set_item("to", t.to)?;
            v.set_item("region", ranges(&t.region))?;
            v.set_item("bytes", t.bytes)?;
            v.set_item("reduce", t.reduce.map(|op| op.name()))?;
            transfers.append(v)?;
        }
        d.set_item("transfers", transfers)?;
        let locals = PyList::empty(py);
        for l in &p.locals {
            let v = PyDict::new(py);
            v.set_item("device", l.device)?;
            v.set_item("region", ranges(&l.region))?;
            locals.append(v)?;
        }
        d.set_item("locals", locals)?;
        d.set_item("estimate_us", p.estimate_us)?;
        Ok(d)
    }

    /// The picture of which device holds which block, as SVG text.
    fn svg(&self) -> PyResult<String> {
        Ok(axe_render::to_svg(&self.picture()?))
    }

    /// Draws which device holds which block into `path` (`.svg`, `.png` or `.txt`).
    fn render(&self, path: &str) -> PyResult<()> {
        crate::picture::write(&self.picture()?, path)
    }

    fn _repr_svg_(&self) -> PyResult<String> {
        self.svg()
    }

    fn __str__(&self) -> String {
        print(Notation::Hlo, &self.mesh, &self.sharding).unwrap_or_else(|_| self.text.clone())
    }

    fn __repr__(&self) -> String {
        format!(
            "Sharding({:?}, shape={:?}, mesh={})",
            self.text,
            self.shape.to_string(),
            PyMesh {
                inner: self.mesh.clone()
            }
            .__repr__()
        )
    }
}

impl PySharding {
    fn picture(&self) -> PyResult<axe_render::Picture> {
        let layout =
            axe_shard::axe::to_axe(&self.mesh, &self.sharding, None).map_err(errors::shard)?;
        let dims = dims_u64(&self.shape)?;
        axe_render::axe_picture(&layout, &dims).map_err(crate::picture::render_error)
    }
}
