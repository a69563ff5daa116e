//! A reshard plan as the dict `Sharding.plan` returns (the keys of `axe shard plan --json`).

use axe_shard::Plan;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::sharding::ranges;

/// One plan as a dict: `collective`, `bytes`, `transfers` (`from`, `to`, `region`, `bytes`, `reduce`),
/// `locals` (`device`, `region`, `bytes`, `reduce`; `bytes` of `elem_bytes`-byte elements) and
/// `estimate_us`, after `reduces` (what the stage reduces, as `axe shard plan --json` names it) for a
/// stage of several.
pub(crate) fn plan_dict<'py>(
    py: Python<'py>,
    p: &Plan,
    elem_bytes: u64,
    reduces: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    if let Some(r) = reduces {
        d.set_item("reduces", r)?;
    }
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
        v.set_item("bytes", l.bytes(elem_bytes))?;
        v.set_item("reduce", l.reduce.map(|op| op.name()))?;
        locals.append(v)?;
    }
    d.set_item("locals", locals)?;
    d.set_item("estimate_us", p.estimate_us)?;
    Ok(d)
}
