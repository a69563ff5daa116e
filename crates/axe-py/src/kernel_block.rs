//! The `with` blocks of `axe.kernel.Builder`: `for_`, `if_` and `window`. Entering one opens a block
//! the statements written inside it go to; leaving it (even by an exception) closes it into the
//! statement it heads. Blocks close innermost first, each once.

use axe_kernel::{BufferId, Expr, Stmt};
use pyo3::prelude::*;

use crate::errors::KernelError;
use crate::kernel_builder::{Frame, PyBuilder};
use crate::kernel_expr::PyExpr;

/// What a block is the body of.
pub enum Head {
    /// `for var in 0..extent`.
    For(u64),
    /// `if cond`.
    If(Expr),
    /// `window(buffer, base, align)`.
    Window(BufferId, Expr, u64),
}

/// Where a block is in its life.
enum State {
    Ready,
    /// Entered as block `id`; a `for` with its variable.
    Open(u64, Option<axe_kernel::Var>),
    Closed,
}

/// A `with` block of a kernel description (`Builder.for_`, `.if_`, `.window`).
#[pyclass(name = "Block", module = "axe.kernel")]
pub struct PyBlock {
    builder: Py<PyBuilder>,
    head: Option<Head>,
    state: State,
}

impl PyBlock {
    /// A block of `builder` headed by `head`, not yet entered.
    pub fn new(builder: Py<PyBuilder>, head: Head) -> PyBlock {
        PyBlock {
            builder,
            head: Some(head),
            state: State::Ready,
        }
    }
}

#[pymethods]
impl PyBlock {
    /// Opens the block; a `for_` block gives its loop variable.
    fn __enter__(&mut self, py: Python<'_>) -> PyResult<Option<PyExpr>> {
        if !matches!(self.state, State::Ready) {
            return Err(KernelError::new_err(
                "a kernel's with-block is entered once; write another k.for_/if_/window",
            ));
        }
        let mut b = self.builder.bind(py).borrow_mut();
        if b.open.len() > axe_kernel::MAX_NESTING {
            return Err(KernelError::new_err(format!(
                "blocks (for_, if_, window) nested more than {} deep; a kernel takes at most that",
                axe_kernel::MAX_NESTING
            )));
        }
        let var = matches!(self.head, Some(Head::For(_))).then(|| b.checker.var());
        let id = b.next_block;
        b.next_block += 1;
        b.open.push(Frame {
            id,
            body: Vec::new(),
        });
        self.state = State::Open(id, var);
        Ok(var.map(|v| PyExpr {
            inner: Expr::Var(v),
        }))
    }

    /// Closes the block into its statement; an exception raised inside goes on.
    #[pyo3(signature = (*_exc))]
    fn __exit__(
        &mut self,
        py: Python<'_>,
        _exc: &Bound<'_, pyo3::types::PyTuple>,
    ) -> PyResult<bool> {
        let State::Open(id, var) = self.state else {
            return Err(KernelError::new_err(
                "a kernel's with-block closes once, after it opened",
            ));
        };
        let mut b = self.builder.bind(py).borrow_mut();
        if b.open.last().map(|f| f.id) != Some(id) {
            return Err(KernelError::new_err(
                "kernel with-blocks close innermost first; an inner block is still open",
            ));
        }
        let body = b.open.pop().map(|f| f.body).unwrap_or_default();
        self.state = State::Closed;
        let stmt = match (self.head.take(), var) {
            (Some(Head::For(extent)), Some(var)) => Stmt::For { var, extent, body },
            (Some(Head::If(cond)), _) => Stmt::If { cond, body },
            (Some(Head::Window(buffer, base, align)), _) => Stmt::Window {
                buffer,
                base,
                align,
                body,
            },
            _ => return Err(KernelError::new_err("internal: a block lost its head")),
        };
        b.push(stmt);
        Ok(false)
    }
}
