//! `axe.hlo`: HLO modules read, validated and costed (the report of `axe hlo stats`).

use axe_xla::hlo::partitioned::ShapeReading;
use axe_xla::hlo::per_device::{Figure, PerDevice};
use axe_xla::hlo::stats::{parse_checked, Report, Totals};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors;

fn totals<'py>(py: Python<'py>, t: &Totals) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("arrays", t.arrays)?;
    d.set_item("logical_bytes", t.logical_bytes)?;
    d.set_item("xla_bytes", t.xla_bytes)?;
    d.set_item("physical_bytes", t.physical_bytes)?;
    d.set_item("padding_bytes", t.padding_bytes())?;
    Ok(d)
}

/// The figures of one reading, by the names `axe hlo stats --json` gives them ([`PerDevice::figures`]).
fn figures<'py>(py: Python<'py>, p: &PerDevice) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, figure) in p.figures() {
        match figure {
            Figure::Number(n) => d.set_item(name, n)?,
            Figure::Name(s) => d.set_item(name, s)?,
        }
    }
    Ok(d)
}

fn to_dict<'py>(py: Python<'py>, name: &str, r: &Report) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("module", name)?;
    d.set_item("instructions", r.instructions)?;
    d.set_item("materialized", totals(py, &r.materialized)?)?;
    d.set_item("entry", totals(py, &r.entry)?)?;
    d.set_item("total", totals(py, &r.total)?)?;
    let spaces = PyDict::new(py);
    for (s, t) in &r.spaces {
        spaces.set_item(s, totals(py, t)?)?;
    }
    d.set_item("memory_spaces", spaces)?;
    let per_device = match (&r.per_device, &r.shapes) {
        (Some(p), Some(decision)) => {
            let v = figures(py, p)?;
            v.set_item("shapes_reason", &decision.reason)?;
            let readings = PyDict::new(py);
            for q in &r.per_device_readings {
                readings.set_item(q.reading.name(), figures(py, q)?)?;
            }
            v.set_item("readings", readings)?;
            Some(v)
        }
        _ => None,
    };
    d.set_item("per_device", per_device)?;
    let top = PyList::empty(py);
    for w in &r.top_waste {
        let v = totals(py, &w.totals)?;
        v.set_item("computation", &w.computation)?;
        v.set_item("instruction", &w.instruction)?;
        v.set_item("shape", &w.shape)?;
        top.append(v)?;
    }
    d.set_item("top_padding", top)?;
    let relayouts = PyList::empty(py);
    for x in &r.relayouts {
        let v = PyDict::new(py);
        v.set_item("computation", x.computation)?;
        v.set_item("instruction", x.instruction)?;
        v.set_item("opcode", x.opcode)?;
        v.set_item("operand", x.operand)?;
        v.set_item("from_shape", x.from)?;
        v.set_item("to_shape", x.to)?;
        v.set_item("bytes", x.bytes)?;
        v.set_item("kind", x.kind)?;
        relayouts.append(v)?;
    }
    d.set_item("relayouts", relayouts)?;
    let comps = PyList::empty(py);
    for ((n, t), m) in r.computations.iter().zip(&r.materialized_computations) {
        let v = totals(py, t)?;
        v.set_item("name", n)?;
        v.set_item("materialized", *m)?;
        comps.append(v)?;
    }
    d.set_item("computations", comps)?;
    d.set_item("unbounded_skipped", r.unbounded_skipped)?;
    Ok(d)
}

/// The cost report of the HLO module text `text` as a dict (see `axe.hlo.Stats`); `top` wasteful
/// tensors are kept; `shapes` is how a sharded module's shapes read (`"global"` or `"per-device"`, as
/// `axe hlo stats --shapes`; `None`: decided from the module). Raises `ParseError` / `XlaError` for a
/// module XLA would reject, `ValueError` for another `shapes`.
#[pyfunction]
#[pyo3(signature = (text, top = crate::value::Usize(10), shapes = None))]
pub fn _hlo_stats<'py>(
    py: Python<'py>,
    text: &str,
    top: crate::value::Usize,
    shapes: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let reading = shapes
        .map(|s| s.parse::<ShapeReading>())
        .transpose()
        .map_err(|e| errors::AxeError::new_err(format!("shapes={e}")))?;
    let (name, r) = py
        .detach(|| -> axe_xla::Result<(String, Report)> {
            let checked = parse_checked(text)?;
            let r = checked.report_with(top.0, reading)?;
            Ok((checked.module().name.to_string(), r))
        })
        .map_err(errors::xla)?;
    to_dict(py, &name, &r)
}

/// The module printed as XLA prints it (what `axe hlo fmt` writes).
#[pyfunction]
pub fn _hlo_format(py: Python<'_>, text: &str) -> PyResult<String> {
    py.detach(|| -> axe_xla::Result<String> { Ok(axe_xla::hlo::parse_module(text)?.to_string()) })
        .map_err(errors::xla)
}
