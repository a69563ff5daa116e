//! `axe.kernel.Scope`: where an operator runs — the kernel, every CTA, every warp(group) or thread, or a
//! slice of them within each CTA (`Scope.warps(0, 4)`: warps 0–3). The launch checks the slice when the
//! operator is called.

use std::ops::Range;

use axe_kernel::{Level, Scope};
use pyo3::prelude::*;

use crate::errors::KernelError;
use crate::value::U64;

/// An execution scope: a level and optionally the units `a..b` of it.
#[pyclass(name = "Scope", module = "axe.kernel", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyScope {
    pub inner: Scope,
}

fn units(level: &str, a: U64, b: U64) -> PyResult<Range<u32>> {
    let u = |v: u64| u32::try_from(v).ok();
    let (a, b) = (a.0, b.0);
    match (u(a), u(b)) {
        (Some(a), Some(b)) if a < b => Ok(a..b),
        _ => Err(KernelError::new_err(format!(
            "Scope.{level}({a}, {b}): the units are a non-empty range a..b of indices from 0 to 2**32-1"
        ))),
    }
}

fn of(level: Level, units: Option<Range<u32>>) -> PyScope {
    PyScope {
        inner: Scope { level, units },
    }
}

#[pymethods]
impl PyScope {
    /// The whole grid: one call over all threads of all CTAs.
    #[staticmethod]
    fn kernel() -> Self {
        of(Level::Kernel, None)
    }
    /// Every CTA.
    #[staticmethod]
    fn cta() -> Self {
        of(Level::Cta, None)
    }
    /// Every warpgroup of each CTA.
    #[staticmethod]
    fn warpgroup() -> Self {
        of(Level::Warpgroup, None)
    }
    /// Every warp of each CTA.
    #[staticmethod]
    fn warp() -> Self {
        of(Level::Warp, None)
    }
    /// Every thread, each on its own.
    #[staticmethod]
    fn thread() -> Self {
        of(Level::Thread, None)
    }
    /// The warps `a..b` of each CTA.
    #[staticmethod]
    fn warps(a: U64, b: U64) -> PyResult<Self> {
        Ok(of(Level::Warp, Some(units("warps", a, b)?)))
    }
    /// The warpgroups `a..b` of each CTA.
    #[staticmethod]
    fn warpgroups(a: U64, b: U64) -> PyResult<Self> {
        Ok(of(Level::Warpgroup, Some(units("warpgroups", a, b)?)))
    }
    /// The threads `a..b` of each CTA, each on its own.
    #[staticmethod]
    fn threads(a: U64, b: U64) -> PyResult<Self> {
        Ok(of(Level::Thread, Some(units("threads", a, b)?)))
    }

    /// The level: `kernel`, `cta`, `warpgroup`, `warp` or `thread`.
    #[getter]
    fn level(&self) -> &'static str {
        self.inner.level.name()
    }

    /// The units `(a, b)`, or None for all of them.
    #[getter]
    fn units(&self) -> Option<(u32, u32)> {
        self.inner.units.as_ref().map(|r| (r.start, r.end))
    }

    /// `warpgroup[1..3]`, as explanations name it.
    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        format!("axe.kernel.Scope({})", self.inner)
    }
}
