//! The names Python gives the pointwise and reduction functions and the constants of `fill`.

use axe_kernel::{BinaryOp, ReduceOp, UnaryOp, Value};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};

use crate::errors::KernelError;
use crate::value::U64;

/// `neg`, `abs`, `exp`, `relu` ([`UnaryOp::name`]).
pub fn unary(name: &str) -> PyResult<UnaryOp> {
    UnaryOp::ALL
        .into_iter()
        .find(|o| o.name() == name)
        .ok_or_else(|| {
            KernelError::new_err(format!(
                "unknown unary operator {name:?}; expected neg, abs, exp or relu"
            ))
        })
}

/// `add`, `sub`, `mul`, `max`, `min`, `div`, `exp_sub` (`e^(a - b)`; [`BinaryOp::name`]).
pub fn binary(name: &str) -> PyResult<BinaryOp> {
    BinaryOp::ALL
        .into_iter()
        .find(|o| o.name() == name)
        .ok_or_else(|| {
            KernelError::new_err(format!(
                "unknown binary operator {name:?}; expected add, sub, mul, max, min, div or exp_sub"
            ))
        })
}

/// `sum`, `max`.
pub fn reduce(name: &str) -> PyResult<ReduceOp> {
    match name {
        "sum" => Ok(ReduceOp::Sum),
        "max" => Ok(ReduceOp::Max),
        _ => Err(KernelError::new_err(format!(
            "unknown reduction {name:?}; expected sum or max"
        ))),
    }
}

/// A constant: a Python `int` (64-bit signed) or `float`.
pub fn value(v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_instance_of::<PyBool>() {
        return Err(KernelError::new_err(
            "fill takes an int or a float, not a bool",
        ));
    }
    if v.is_instance_of::<PyInt>() {
        return v.extract::<i64>().map(Value::Int).map_err(|_| {
            KernelError::new_err(format!(
                "the constant {v} is out of range: from -2**63 to 2**63-1"
            ))
        });
    }
    if v.is_instance_of::<PyFloat>() {
        return v.extract::<f64>().map(Value::Float);
    }
    Err(KernelError::new_err(format!(
        "fill takes an int or a float, not {}",
        v.get_type().name()?
    )))
}

/// A count argument as `u32`, or a `KernelError` naming it (negative or huge ints are `AxeError`s of
/// the extraction).
pub fn u32_arg(what: &str, v: U64) -> PyResult<u32> {
    u32::try_from(v.0).map_err(|_| {
        KernelError::new_err(format!("{what} is {}; it must be from 0 to 2**32-1", v.0))
    })
}
