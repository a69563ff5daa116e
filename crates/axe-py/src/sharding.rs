//! `axe.Mesh` and `axe.Sharding`: device meshes, shardings in every notation, who holds what, plans.

use axe_shard::{parse_any, parse_pair, plan_stages, print, CostModel, Mesh, Notation, Sharding};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::errors;
use crate::shape::{array, dims_u64, PyShape};
use crate::value::{U64s, U64};

/// A device mesh: named axes with sizes and the device id at each position (row-major).
///
/// `Mesh("x=2,y=4")`, `Mesh({"x": 2, "y": 4})`, `Mesh([2, 4])` (axes `d0`, `d1`), with
/// `devices=[...]` for a non-default device order.
#[pyclass(name = "Mesh", module = "axe", frozen, eq)]
#[derive(Clone, PartialEq, Eq)]
pub struct PyMesh {
    pub inner: Mesh,
}

fn mesh_from(axes: &Bound<'_, PyAny>, devices: Option<Vec<u64>>) -> PyResult<Mesh> {
    let py_dict_value = |v: Bound<'_, PyAny>| -> PyResult<u64> { Ok(v.extract::<U64>()?.0) };
    if let Ok(m) = axes.cast::<PyMesh>() {
        return Ok(m.get().inner.clone());
    }
    if let Ok(spec) = axes.extract::<String>() {
        return Mesh::from_spec(&spec, devices).map_err(errors::shard);
    }
    let named: Vec<(String, u64)> = if let Ok(d) = axes.cast::<PyDict>() {
        d.iter()
            .map(|(k, v)| Ok((k.extract::<String>()?, py_dict_value(v)?)))
            .collect::<PyResult<_>>()?
    } else {
        let sizes: Vec<u64> = axes.extract::<U64s>()?.0;
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

/// What a pickled `Mesh` is rebuilt from: its axes `{name: size}`, its devices, and the axis each
/// axis was split from (`_mesh_split`'s arguments).
type MeshArgs<'py> = (Bound<'py, PyDict>, Vec<u64>, Vec<Option<String>>);

#[pymethods]
impl PyMesh {
    /// Builds a mesh from `"x=2,y=4"`, `{"x": 2, "y": 4}` or `[2, 4]`; `devices` gives the id at each
    /// position (default `0..N-1`). Raises `ShardingError` for sizes of 0, repeated names or ids.
    #[new]
    #[pyo3(signature = (axes, devices = None))]
    fn new(axes: &Bound<'_, PyAny>, devices: Option<U64s>) -> PyResult<Self> {
        Ok(PyMesh {
            inner: mesh_from(axes, devices.map(|d| d.0))?,
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

    fn __hash__(&self) -> u64 {
        crate::value::hash_of(&(self.inner.names(), self.inner.sizes(), self.inner.devices()))
    }

    /// Pickles as `Mesh({name: size, ...}, devices=[...])`, through `_mesh_split` where a read split an
    /// axis (so that the copy prints the pieces to Shardy as sub-axes, as the original does).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> crate::value::Reduced<'py, MeshArgs<'py>> {
        let py = slf.py();
        let m = &slf.get().inner;
        let axes = PyDict::new(py);
        for (n, s) in m.names().iter().zip(m.sizes()) {
            axes.set_item(n, s)?;
        }
        let split: Vec<Option<String>> = (0..m.rank())
            .map(|a| m.split_of(a).map(str::to_string))
            .collect();
        let make = py.import("axe._axe")?.getattr("_mesh_split")?;
        Ok((make, (axes, m.devices().to_vec(), split)))
    }

    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    fn __str__(&self) -> String {
        spec(&self.inner)
    }

    fn __repr__(&self) -> String {
        let axes = if self.inner.rank() == 0 {
            "[]".to_string()
        } else {
            format!("{:?}", spec(&self.inner))
        };
        if self.inner.is_default_order() {
            format!("Mesh({axes})")
        } else {
            format!("Mesh({axes}, devices={:?})", self.inner.devices())
        }
    }
}

/// `Mesh(axes, devices)` whose axis `a` is a piece of axis `split_of[a]` where a read split it (what
/// `Mesh.__reduce__` pickles).
#[pyfunction]
pub fn _mesh_split(
    axes: &Bound<'_, PyAny>,
    devices: U64s,
    split_of: Vec<Option<String>>,
) -> PyResult<PyMesh> {
    Ok(PyMesh {
        inner: mesh_from(axes, Some(devices.0))?.with_split_of(split_of),
    })
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
///
/// Shardings are values: equal when they are on the same mesh, of the same array, and give every
/// device the same part (whatever notation they were read from); they hash, pickle and copy.
#[pyclass(name = "Sharding", module = "axe", frozen)]
pub struct PySharding {
    mesh: Mesh,
    sharding: Sharding,
    shape: axe_xla::ArrayShape,
    text: String,
    notation: Option<Notation>,
}

impl PySharding {
    /// The sharding itself.
    pub(crate) fn sharding(&self) -> &Sharding {
        &self.sharding
    }
}

fn notation(name: &str) -> PyResult<Notation> {
    Notation::from_name(name).ok_or_else(|| {
        errors::ShardingError::new_err(format!(
            "unknown notation {name:?}: one of hlo, sdy, jax, dtensor, alpa, axe"
        ))
    })
}

pub(crate) fn ranges(r: &[std::ops::Range<u64>]) -> Vec<(u64, u64)> {
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
        py: Python<'_>,
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
            let dims: Vec<i64> = shape.extract::<crate::value::I64s>()?.0;
            let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
            array(&format!("f32[{}]", dims.join(",")))?
        };
        let dims = dims_u64(&shape)?;
        let mesh = mesh.map(|m| mesh_from(m, None)).transpose()?;
        let n = notation.map(self::notation).transpose()?;
        let (mesh, sharding) = py
            .detach(|| parse_any(text, n, mesh.as_ref(), &dims))
            .map_err(errors::shard)?;
        Ok(PySharding {
            mesh,
            sharding,
            shape,
            text: text.to_string(),
            notation: n,
        })
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PySharding>().is_ok_and(|o| {
            let o = o.get();
            o.mesh == self.mesh && o.shape == self.shape && o.key() == self.key()
        })
    }

    fn __hash__(&self) -> u64 {
        crate::value::hash_of(&(
            self.mesh.names(),
            self.mesh.sizes(),
            self.mesh.devices(),
            self.key(),
            self.shape.to_string(),
        ))
    }

    /// Pickles as the text it was read from, with its shape, mesh and notation.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> crate::value::Reduced<'py, (String, String, PyMesh, Option<&'static str>)> {
        let py = slf.py();
        let s = slf.get();
        Ok((
            py.get_type::<PySharding>().into_any(),
            (
                s.text.clone(),
                s.shape.to_string(),
                PyMesh {
                    inner: s.mesh.clone(),
                },
                s.notation.map(|n| n.name()),
            ),
        ))
    }

    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
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

    /// The sharding in `notation` (`"hlo"`, `"sdy"`, `"jax"`, `"dtensor"`, `"alpa"`, `"axe"`). Raises
    /// `ShardingError` saying why when the notation cannot express it. Shardy's open dims and priorities
    /// print in `"sdy"` only: the other notations have no form for them and print the axes listed.
    fn to(&self, py: Python<'_>, notation: &str) -> PyResult<String> {
        let n = self::notation(notation)?;
        py.detach(|| print(n, &self.mesh, &self.sharding))
            .map_err(errors::shard)
    }

    /// Every notation: `{name: text or None}` (None where the notation cannot say it; `to()` says why).
    fn notations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let texts: Vec<(&str, Option<String>)> = py.detach(|| {
            Notation::ALL
                .into_iter()
                .map(|n| (n.name(), print(n, &self.mesh, &self.sharding).ok()))
                .collect()
        });
        let d = PyDict::new(py);
        for (name, text) in texts {
            d.set_item(name, text)?;
        }
        Ok(d)
    }

    /// Who holds what: per device its id, `region` (a `(start, end)` per dim), `replica_group` (the
    /// devices holding the same data, a tuple: the members of one group share one tuple object, so
    /// the answer's memory is proportional to the number of devices, not to its square),
    /// `local_shape`, and `padded_shape` (what it allocates).
    fn devices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let regions = py
            .detach(|| self.sharding.regions(&self.mesh))
            .map_err(errors::shard)?;
        let out = PyList::empty(py);
        // One tuple per replica group, keyed by the library's shared list.
        let mut groups: std::collections::HashMap<*const u64, Bound<'py, PyTuple>> =
            std::collections::HashMap::new();
        for r in &regions {
            let d = PyDict::new(py);
            d.set_item("device", r.device)?;
            d.set_item("region", ranges(&r.region))?;
            let key = r.replica_group.as_ptr();
            let group = match groups.get(&key) {
                Some(g) => g.clone(),
                None => {
                    let g = PyTuple::new(py, r.replica_group.iter())?;
                    // The key stays valid: every region, and so every group, lives until the loop ends.
                    groups.insert(key, g.clone());
                    g
                }
            };
            d.set_item("replica_group", group)?;
            d.set_item("local_shape", &r.local_shape)?;
            d.set_item("padded_shape", &r.padded_shape)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// The plan resharding this array to `other` (same mesh and shape): `collective`, `bytes` moved,
    /// `transfers` (`from`, `to`, `region`, `bytes`, `reduce`), `locals` (copies a device makes from its
    /// own shard: `device`, `region`, `bytes`, `reduce`) and `estimate_us` (alpha-beta: `alpha_us` per
    /// message, `bytes_per_us` per link).
    ///
    /// A source partial with different ops on different mesh axes (DTensor's `[Partial(max),
    /// Partial(sum)]`) is reduced in stages, one op a stage, the first mesh axis first (as `axe shard
    /// plan` plans it): then the dict is `bytes` and `estimate_us` (the stages' totals) and `stages`, each
    /// stage a plan dict as above after `reduces` (`'max over "x"'`). Law: the keys and values are those
    /// of `axe shard plan --json` on the same shardings (`reduce` is `None` where the CLI leaves it out).
    /// Raises `ShardingError` where the CLI refuses: reducing an axis while an earlier one with another
    /// op stays partial has no meaning.
    #[pyo3(signature = (other, alpha_us = None, bytes_per_us = None))]
    fn plan<'py>(
        &self,
        py: Python<'py>,
        other: &PySharding,
        alpha_us: Option<f64>,
        bytes_per_us: Option<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        if other.shape.dims != self.shape.dims
            || other.shape.element_type != self.shape.element_type
        {
            return Err(errors::ShardingError::new_err(format!(
                "the two shardings are of different arrays: {} and {} (a plan moves one array; \
                 the dims and the element type must agree)",
                self.shape, other.shape
            )));
        }
        // Shardings on two meshes (an FSDP mesh and a TP one, or one device order and another) are
        // planned over device ids: each as its HloSharding, read onto one mesh as `axe shard plan`
        // reads two HloShardings.
        let onto_one;
        let (mesh, src, dst) = if other.mesh == self.mesh {
            (&self.mesh, &self.sharding, &other.sharding)
        } else {
            let (mut a, mut b) = (self.mesh.devices().to_vec(), other.mesh.devices().to_vec());
            a.sort_unstable();
            b.sort_unstable();
            let meshes = format!("{} and {}", spec(&self.mesh), spec(&other.mesh));
            if a != b {
                return Err(errors::ShardingError::new_err(format!(
                    "the two shardings are on meshes over different devices ({meshes}): a plan \
                     moves data among one set of devices"
                )));
            }
            let hlo = |s: &PySharding, which: &str| {
                print(Notation::Hlo, &s.mesh, &s.sharding).map_err(|e| {
                    errors::ShardingError::new_err(format!(
                        "the two shardings are on different meshes ({meshes}), so the plan goes \
                         through device ids, their HloShardings, which the {which} has none of: {e}"
                    ))
                })
            };
            let (ta, tb) = (hlo(self, "source")?, hlo(other, "destination")?);
            let dims = dims_u64(&self.shape)?;
            onto_one = py
                .detach(|| parse_pair(&ta, &tb, Some(Notation::Hlo), None, &dims))
                .map_err(errors::shard)?;
            (&onto_one.0, &onto_one.1, &onto_one.2)
        };
        let mut cost = CostModel::default();
        if let Some(a) = alpha_us {
            if !(a.is_finite() && a >= 0.0) {
                return Err(errors::ShardingError::new_err(format!(
                    "alpha_us={a}: the time per message is a finite number of microseconds, 0 or more"
                )));
            }
            cost.alpha_us = a;
        }
        if let Some(b) = bytes_per_us {
            if !(b.is_finite() && b > 0.0) {
                return Err(errors::ShardingError::new_err(format!(
                    "bytes_per_us={b}: the bandwidth is a finite number of bytes per microsecond, more than 0"
                )));
            }
            cost.bytes_per_us = b;
        }
        let bytes = u64::from(self.shape.element_type.byte_width());
        // A source partial with several ops is reduced in stages, one op at a time, in mesh order, as
        // `axe shard plan` plans it (and refused where the order has no meaning, with its message).
        let stages = py
            .detach(|| plan_stages(mesh, src, dst, bytes, &cost))
            .map_err(errors::shard)?;
        if let [only] = stages.as_slice() {
            return crate::sharding_plan::plan_dict(py, &only.plan, bytes, None);
        }
        let d = PyDict::new(py);
        let (mut total, mut us) = (0u64, 0f64);
        let list = PyList::empty(py);
        for st in &stages {
            list.append(crate::sharding_plan::plan_dict(
                py,
                &st.plan,
                bytes,
                Some(st.reduced_text(mesh)),
            )?)?;
            total = total.saturating_add(st.plan.bytes);
            us += st.plan.estimate_us;
        }
        d.set_item("bytes", total)?;
        d.set_item("estimate_us", us)?;
        d.set_item("stages", list)?;
        Ok(d)
    }

    /// The picture of which device holds which block, as SVG text: one block per device region for
    /// arrays of rank 1 and 2 (as `axe shard show -o FILE.svg` and JAX draw them), else element by element.
    fn svg(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| match self.blocks()? {
            Some(svg) => Ok(svg),
            None => Ok(axe_render::to_svg(&self.picture()?)),
        })
    }

    /// Draws which device holds which block into `path` (a `str` or `os.PathLike`; `.svg` and `.png`
    /// as [`svg`](Self::svg) draws it, `.txt` element by element, or its pieces listed by region where
    /// the cuts are uneven).
    fn render(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        py.detach(|| {
            let txt = path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("txt"));
            if txt {
                let bytes = axe_render::sharding_txt(
                    &self.mesh,
                    &self.sharding,
                    &dims_u64(&self.shape)?,
                    &self.title(),
                )
                .map_err(crate::picture::render_error)?;
                return crate::picture::write_bytes(&path, bytes.as_bytes());
            }
            let blocks = self.blocks()?;
            crate::picture::write_drawing(
                blocks.as_deref(),
                || self.picture().map(std::borrow::Cow::Owned),
                &path,
            )
        })
    }

    fn _repr_svg_(&self, py: Python<'_>) -> PyResult<String> {
        self.svg(py)
    }

    fn __str__(&self) -> String {
        print(Notation::Hlo, &self.mesh, &self.sharding).unwrap_or_else(|_| self.text.clone())
    }

    fn __repr__(&self) -> String {
        let notation = self
            .notation
            .map(|n| format!(", notation={:?}", n.name()))
            .unwrap_or_default();
        format!(
            "Sharding({:?}, shape={:?}, mesh={}{notation})",
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
    /// What the sharding gives each device, as text equal for equal shardings: the device holding
    /// everything, or per dim the mesh axes splitting it and the use of the other axes, axes of one
    /// device left out (they change nothing), and the uneven rule where a dim is cut unevenly (the
    /// rules' shards or padding may differ there).
    fn key(&self) -> String {
        let s = &self.sharding;
        if let Some(d) = s.maximal_device() {
            return format!("maximal {d}");
        }
        let sizes = self.mesh.sizes();
        let big = |a: usize| sizes.get(a).is_some_and(|&n| n > 1);
        let dims: Vec<Vec<usize>> = s
            .dim_axes()
            .iter()
            .map(|axes| axes.iter().copied().filter(|&a| big(a)).collect())
            .collect();
        let others: Vec<(usize, String)> = s
            .axis_use()
            .iter()
            .enumerate()
            .filter(|&(a, u)| big(a) && !matches!(u, axe_shard::AxisUse::Split(_)))
            .map(|(a, u)| (a, format!("{u:?}")))
            .collect();
        let uneven = dims.iter().zip(s.dims()).any(|(axes, &len)| {
            let n = axes
                .iter()
                .try_fold(1u64, |n, &a| n.checked_mul(sizes[a]))
                .unwrap_or(0);
            n == 0 || len % n != 0
        });
        let rule = if uneven {
            format!("{:?}", s.uneven())
        } else {
            String::new()
        };
        format!("{:?} {dims:?} {others:?} {rule}", s.dims())
    }

    /// A picture's title: the sharding as typed, the array and the mesh.
    fn title(&self) -> String {
        let mesh: Vec<String> = self
            .mesh
            .names()
            .iter()
            .zip(self.mesh.sizes())
            .map(|(n, s)| format!("{n}={s}"))
            .collect();
        format!(
            "{} over {} on mesh {}",
            self.text.trim(),
            self.shape,
            mesh.join(",")
        )
    }

    /// The block picture, for arrays of rank 1 and 2.
    fn blocks(&self) -> PyResult<Option<String>> {
        let dims = dims_u64(&self.shape)?;
        axe_render::sharding_svg(&self.mesh, &self.sharding, &dims, &self.title())
            .map_err(crate::picture::render_error)
    }

    fn picture(&self) -> PyResult<axe_render::Picture> {
        let layout =
            axe_shard::axe::to_axe(&self.mesh, &self.sharding, None).map_err(errors::shard)?;
        let dims = dims_u64(&self.shape)?;
        axe_render::axe_picture(&layout, &dims).map_err(crate::picture::render_error)
    }
}
