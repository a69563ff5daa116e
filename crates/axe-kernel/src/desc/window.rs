//! Windows: a global buffer addressed from a per-thread base within a block ([`Stmt::Window`]).

use super::{BufferId, KernelBuilder, Space, Stmt};
use crate::error::{KernelError, Result};
use crate::expr::Expr;

impl KernelBuilder {
    /// Runs `body` with global buffer `buffer` addressed from element `base`, a multiple of `align`
    /// ([`Stmt::Window`]).
    pub fn window(
        &mut self,
        buffer: BufferId,
        base: Expr,
        align: u64,
        body: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        match self.kernel.buffers.get(buffer.0) {
            Some(b) if b.space == Space::Global && align > 0 => {}
            _ => {
                return Err(KernelError::Invalid(format!(
                    "a window needs a global buffer and an alignment of at least 1; buffer #{} and alignment {align}",
                    buffer.0
                )))
            }
        }
        self.open.push(Vec::new());
        body(self)?;
        let b = self.open.pop().unwrap_or_default();
        self.push(Stmt::Window {
            buffer,
            base,
            align,
            body: b,
        });
        Ok(())
    }
}
