//! `axe.kernel.Expr`: the integer expressions of a kernel description (`axe_kernel::Expr`) — the thread
//! and CTA indices, loop and `let` variables, constants — built with Python's operators.
//!
//! `a + b`, `a - b`, `a * b`, `a // b`, `a % b` are the 64-bit integer operators of the generated C
//! (`//` and `%` truncate, as C's do: operands are non-negative where kernels use them); `a < b` (and
//! `>`, `<=`, `>=` written with it) is 1 or 0; `a & b` is the logical and. Constants fold as
//! `axe_kernel::Expr::bin` folds them, so an expression written in Python is the one its Rust twin builds.

use axe_kernel::{BinOp, Expr};
use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;

use crate::errors::KernelError;

/// An integer expression of a kernel description.
#[pyclass(name = "Expr", module = "axe.kernel", frozen)]
#[derive(Clone)]
pub struct PyExpr {
    pub inner: Expr,
}

/// An expression operand: an `Expr` or a Python `int` (a constant).
pub struct ExprArg(pub Expr);

impl<'a, 'py> FromPyObject<'a, 'py> for ExprArg {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(e) = obj.cast::<PyExpr>() {
            return Ok(ExprArg(e.get().inner.clone()));
        }
        if obj.is_instance_of::<pyo3::types::PyBool>() {
            return Err(KernelError::new_err(
                "a kernel expression takes an int or an axe.kernel.Expr, not a bool",
            ));
        }
        // Any integer (`int`, numpy's): `__index__`, as Python's own int arguments take them.
        match obj.extract::<i64>() {
            Ok(c) => return Ok(ExprArg(Expr::Const(c))),
            Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
                return Err(KernelError::new_err(
                    "a constant is out of range: kernel expressions are 64-bit signed",
                ))
            }
            Err(_) => {}
        }
        Err(KernelError::new_err(format!(
            "a kernel expression takes an int or an axe.kernel.Expr, not {}",
            obj.get_type().name()?
        )))
    }
}

/// An operand of an operator: a `KernelError` for anything but an int or an `Expr` (rather than
/// Python's `TypeError`, so every misuse of a description raises `axe.AxeError`).
fn operand(o: &Bound<'_, PyAny>) -> PyResult<ExprArg> {
    o.extract::<ExprArg>()
}

/// `a op b`, refused past [`axe_kernel::MAX_EXPR_DEPTH`] (an expression grown term by term in a
/// Python loop would otherwise reach depths the compiler cannot walk).
fn bin(op: BinOp, a: Expr, b: Expr) -> PyResult<PyExpr> {
    let inner = Expr::bin(op, a, b);
    if inner.depth() > axe_kernel::MAX_EXPR_DEPTH {
        return Err(KernelError::new_err(format!(
            "an expression nested more than {} deep; a kernel takes at most that (sum terms in a balanced tree, or use a loop variable)",
            axe_kernel::MAX_EXPR_DEPTH
        )));
    }
    Ok(PyExpr { inner })
}

#[pymethods]
impl PyExpr {
    /// A constant expression.
    #[new]
    fn new(value: ExprArg) -> Self {
        PyExpr { inner: value.0 }
    }

    fn __add__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(BinOp::Add, self.inner.clone(), o.0)
    }
    fn __radd__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(BinOp::Add, o.0, self.inner.clone())
    }
    fn __sub__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(BinOp::Sub, self.inner.clone(), o.0)
    }
    fn __rsub__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(BinOp::Sub, o.0, self.inner.clone())
    }
    fn __mul__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(BinOp::Mul, self.inner.clone(), o.0)
    }
    fn __rmul__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(BinOp::Mul, o.0, self.inner.clone())
    }
    fn __floordiv__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(BinOp::Div, self.inner.clone(), o.0)
    }
    fn __rfloordiv__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(BinOp::Div, o.0, self.inner.clone())
    }
    fn __mod__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(BinOp::Rem, self.inner.clone(), o.0)
    }
    fn __rmod__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(BinOp::Rem, o.0, self.inner.clone())
    }
    fn __and__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(BinOp::And, self.inner.clone(), o.0)
    }
    fn __rand__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(BinOp::And, o.0, self.inner.clone())
    }
    /// `self < o`: 1 or 0.
    fn __lt__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(BinOp::Lt, self.inner.clone(), o.0)
    }
    /// `self > o`, written `o < self`.
    fn __gt__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(BinOp::Lt, o.0, self.inner.clone())
    }
    /// `self <= o`, written `self < o + 1`.
    fn __le__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(
            BinOp::Lt,
            self.inner.clone(),
            Expr::bin(BinOp::Add, o.0, Expr::Const(1)),
        )
    }
    /// `self >= o`, written `o < self + 1`.
    fn __ge__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let o = operand(o)?;
        bin(
            BinOp::Lt,
            o.0,
            Expr::bin(BinOp::Add, self.inner.clone(), Expr::Const(1)),
        )
    }

    /// Refused: an expression's value is known only when the kernel runs (use `Builder.if_`).
    fn __bool__(&self) -> PyResult<bool> {
        Err(KernelError::new_err(format!(
            "the kernel expression {} has no value in Python; branch with `with k.if_(cond):`",
            self.inner
        )))
    }

    /// The constant's value, or None for an expression of variables.
    #[getter]
    fn value(&self) -> Option<i64> {
        match self.inner {
            Expr::Const(c) => Some(c),
            _ => None,
        }
    }

    /// The expression in C (`((tid / 128LL) < 1LL)`), as the CUDA source writes it.
    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        format!("axe.kernel.Expr({})", self.inner)
    }
}

/// `threadIdx.x`: the thread's index in its CTA.
pub fn tid() -> PyExpr {
    PyExpr {
        inner: Expr::Thread,
    }
}

/// `blockIdx.x`: the CTA's index in the grid.
pub fn cta() -> PyExpr {
    PyExpr { inner: Expr::Cta }
}
