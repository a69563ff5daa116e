//! Operators: what a call computes ([`Op`]), with the pointwise functions and constants they take.

use super::{Mbar, Tensor};

/// A scalar constant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
}

/// Pointwise unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-x`.
    Neg,
    /// `|x|`.
    Abs,
    /// `e^x` (floating point only).
    Exp,
    /// `max(x, 0)`.
    Relu,
}

impl UnaryOp {
    /// Every unary operator.
    pub const ALL: [UnaryOp; 4] = [UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Exp, UnaryOp::Relu];

    /// Its name: `neg`, `abs`, `exp`, `relu`.
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Abs => "abs",
            UnaryOp::Exp => "exp",
            UnaryOp::Relu => "relu",
        }
    }
}

/// Pointwise binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `max(a, b)`.
    Max,
    /// `min(a, b)`.
    Min,
    /// `a / b` (floating point only).
    Div,
    /// `e^(a - b)`, the difference's rounding carried into the exponential (floating point only; on
    /// f32 [`crate::pointwise::exp_sub`] in every backend).
    ExpSub,
}

impl BinaryOp {
    /// Every binary operator.
    pub const ALL: [BinaryOp; 7] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Max,
        BinaryOp::Min,
        BinaryOp::Div,
        BinaryOp::ExpSub,
    ];

    /// Its name: `add`, `sub`, `mul`, `max`, `min`, `div`, `exp_sub`.
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Max => "max",
            BinaryOp::Min => "min",
            BinaryOp::Div => "div",
            BinaryOp::ExpSub => "exp_sub",
        }
    }
}

/// An operator. Every operand tensor has the destination's logical shape.
///
/// Dispatch, lowering and the backends are keyed by [`Op::kind`]: a new operator is a new variant set.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// `dst[x] = src[x]` for every logical index `x` (same dtype).
    Copy {
        /// Destination.
        dst: Tensor,
        /// Source.
        src: Tensor,
    },
    /// `dst[x] = value`.
    Fill {
        /// Destination.
        dst: Tensor,
        /// The value, converted to the destination's dtype.
        value: Value,
    },
    /// `dst[x] = f(src[x])`.
    Unary {
        /// The function.
        op: UnaryOp,
        /// Destination.
        dst: Tensor,
        /// Source.
        src: Tensor,
    },
    /// `dst[x] = f(a[x], b[x])`.
    Binary {
        /// The function.
        op: BinaryOp,
        /// Destination.
        dst: Tensor,
        /// Left operand.
        a: Tensor,
        /// Right operand.
        b: Tensor,
    },
    /// `dst[x] = convert(src[x])`: to a float, rounded to nearest even; a float to an integer truncates
    /// toward zero and saturates (`cvt.rzi.sat`).
    Cast {
        /// Destination.
        dst: Tensor,
        /// Source.
        src: Tensor,
    },
    /// `dst[i] = op over j of src[i, j]`: see [`crate::reduce`] (`dims` reduced, kept as extent 1).
    Reduce {
        /// Sum or max.
        op: crate::reduce::ReduceOp,
        /// Destination: `src`'s shape with the reduced dims of extent 1.
        dst: Tensor,
        /// Source.
        src: Tensor,
        /// The reduced dims, ascending.
        dims: Vec<usize>,
    },
    /// `dst[x] = src[x]` asynchronously: the copy's bytes complete a transaction on mbarrier `bar`, and
    /// `dst` holds them once a thread has waited for the phase they complete (see [`crate::tma`]).
    CopyAsync {
        /// Destination (shared memory).
        dst: Tensor,
        /// Source (global memory).
        src: Tensor,
        /// The mbarrier whose phase the copy completes.
        bar: Mbar,
    },
    /// `dst[x] = src[x]` asynchronously, completing with the issuing thread's commit groups: the bytes
    /// are in `dst` for a thread once it waited for the group (`async_wait`), and for the CTA after a
    /// barrier that follows those waits (see [`crate::cp_async`]).
    CopyAsyncGroup {
        /// Destination (shared memory).
        dst: Tensor,
        /// Source (global memory).
        src: Tensor,
    },
    /// `dst[j] = Σ_r (src[r, j] & 1)·2^r` for `src: [32, W]`, `dst: [W]` of 32-bit words: see
    /// [`crate::bits`].
    PackBits {
        /// The words.
        dst: Tensor,
        /// The elements, 32 per word.
        src: Tensor,
    },
    /// `dst[r, j] = (src[j] >> r) & 1` for `src: [W]` of 32-bit words, `dst: [32, W]`: see
    /// [`crate::bits`].
    UnpackBits {
        /// The elements, 32 per word.
        dst: Tensor,
        /// The words.
        src: Tensor,
    },
    /// `c[i, j] += Σ_k a[i, k] · b[k, j]`, products and sums in f32: see [`crate::gemm`].
    Gemm {
        /// The accumulator `[M, N]` (f32), read and written.
        c: Tensor,
        /// The left operand `[M, K]`.
        a: Tensor,
        /// The right operand `[K, N]`.
        b: Tensor,
    },
}

impl Op {
    /// The operator's name (`copy`, `copy_async`, `fill`, `unary`, `binary`, `cast`, `reduce`, `gemm`).
    pub fn kind(&self) -> &'static str {
        match self {
            Op::Copy { .. } => "copy",
            Op::CopyAsync { .. } | Op::CopyAsyncGroup { .. } => "copy_async",
            Op::PackBits { .. } => "pack_bits",
            Op::UnpackBits { .. } => "unpack_bits",
            Op::Fill { .. } => "fill",
            Op::Unary { .. } => "unary",
            Op::Binary { .. } => "binary",
            Op::Cast { .. } => "cast",
            Op::Reduce { .. } => "reduce",
            Op::Gemm { .. } => "gemm",
        }
    }

    /// The destination tensor.
    pub fn dst(&self) -> &Tensor {
        match self {
            Op::Copy { dst, .. }
            | Op::CopyAsync { dst, .. }
            | Op::CopyAsyncGroup { dst, .. }
            | Op::PackBits { dst, .. }
            | Op::UnpackBits { dst, .. }
            | Op::Fill { dst, .. }
            | Op::Unary { dst, .. }
            | Op::Binary { dst, .. }
            | Op::Cast { dst, .. }
            | Op::Reduce { dst, .. }
            | Op::Gemm { c: dst, .. } => dst,
        }
    }

    /// The source tensors, in order (a gemm's accumulator, read too, is its destination).
    pub fn sources(&self) -> Vec<&Tensor> {
        match self {
            Op::Copy { src, .. }
            | Op::CopyAsync { src, .. }
            | Op::CopyAsyncGroup { src, .. }
            | Op::PackBits { src, .. }
            | Op::UnpackBits { src, .. }
            | Op::Unary { src, .. }
            | Op::Cast { src, .. }
            | Op::Reduce { src, .. } => vec![src],
            Op::Fill { .. } => vec![],
            Op::Binary { a, b, .. } | Op::Gemm { a, b, .. } => vec![a, b],
        }
    }
}
