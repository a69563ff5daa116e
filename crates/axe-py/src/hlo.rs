//! `axe.hlo`: HLO modules read, validated and costed (the report of `axe hlo stats`).

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
    let per_device = match &r.per_device {
        None => None,
        Some(p) => {
            let v = PyDict::new(py);
            v.set_item("devices", p.devices)?;
            v.set_item("largest_bytes", p.largest_bytes)?;
            v.set_item("largest_device", p.largest_device)?;
            v.set_item("smallest_bytes", p.smallest_bytes)?;
            v.set_item("sharded_values", p.sharded_values)?;
            v.set_item("unannotated_values", p.unannotated_values)?;
            Some(v)
        }
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
/// tensors are kept. Raises `ParseError` / `XlaError` for a module XLA would reject.
#[pyfunction]
#[pyo3(signature = (text, top = crate::value::Usize(10)))]
pub fn _hlo_stats<'py>(
    py: Python<'py>,
    text: &str,
    top: crate::value::Usize,
) -> PyResult<Bound<'py, PyDict>> {
    let (name, r) = py
        .detach(|| -> axe_xla::Result<(String, Report)> {
            let checked = parse_checked(text)?;
            let r = checked.report_with(top.0, None)?;
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
