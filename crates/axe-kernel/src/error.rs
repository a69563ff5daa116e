//! Everything that can go wrong describing, lowering, running or compiling a kernel.

use axe_layout::LayoutError;

/// A typed kernel error; every message says what was wrong and where (which tensor, which operator).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// A malformed description: shapes, dtypes, scopes, launch shape.
    #[error("{0}")]
    Invalid(String),
    /// A layout operation failed while describing or dispatching `what`.
    #[error("{what}: {source}")]
    Layout {
        /// What was being computed.
        what: String,
        /// The layout algebra's reason.
        source: LayoutError,
    },
    /// No variant of an operator applies; every variant's reason is listed.
    #[error("no variant of {op} at {scope} scope applies on {target}:{}", list(.declined))]
    NoVariant {
        /// The operator call (e.g. `copy #0`).
        op: String,
        /// Its scope.
        scope: String,
        /// The target.
        target: String,
        /// `(variant, reason)` for every variant considered.
        declined: Vec<(String, String)>,
    },
    /// A forced variant is unknown or does not apply.
    #[error("variant {variant} forced on {op}: {reason}")]
    Forced {
        /// The operator call.
        op: String,
        /// The forced variant.
        variant: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// Shared memory over the target's per-CTA capacity.
    #[error("the kernel needs {bytes} bytes of shared memory per CTA; {target} has {capacity}")]
    SharedCapacity {
        /// Bytes requested.
        bytes: u64,
        /// The target.
        target: String,
        /// Bytes available.
        capacity: u64,
    },
    /// The interpreter found an error while running an operator.
    #[error("{op}: {message}")]
    Run {
        /// The operator (and variant) that was running.
        op: String,
        /// What happened.
        message: String,
    },
    /// Something is too large to lower or simulate.
    #[error("too large: {0}")]
    TooLarge(String),
    /// Compiling with NVRTC failed (its log included).
    #[error("nvrtc: {0}")]
    Nvrtc(String),
    /// The CUDA driver failed (no driver or device, out of memory, a faulting kernel): what was being
    /// done and the driver's name for the error.
    #[error("cuda: {0}")]
    Cuda(String),
    /// An integer overflowed.
    #[error("integer overflow while {0}")]
    Overflow(String),
}

fn list(declined: &[(String, String)]) -> String {
    declined
        .iter()
        .map(|(v, r)| format!("\n  {v}: {r}"))
        .collect()
}

/// Shorthand for `Result<T, KernelError>`.
pub type Result<T> = std::result::Result<T, KernelError>;

/// Wraps a layout error with what was being computed.
pub(crate) fn layout(what: impl Into<String>) -> impl FnOnce(LayoutError) -> KernelError {
    let what = what.into();
    move |source| KernelError::Layout { what, source }
}

/// An overflow error.
pub(crate) fn overflow(what: &str) -> KernelError {
    KernelError::Overflow(what.to_string())
}
