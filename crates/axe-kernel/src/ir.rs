//! The lowered program: per-thread loops, conditions and memory instructions, one per chosen variant.
//! Both backends (the CPU interpreter and CUDA emission) read only this.

use crate::desc::{BinaryOp, Buffer, UnaryOp};
use crate::dtype::DType;
use crate::expr::{Expr, Var};
use crate::scope::Launch;

/// A byte address in a buffer (before the buffer's swizzle).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// The buffer's index.
    pub buf: usize,
    /// Byte offset; for register buffers, into the thread's own registers.
    pub byte: Expr,
}

/// A pointwise computation on one element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compute {
    /// `f(x)` in `DType`.
    Unary(UnaryOp, DType),
    /// `f(a, b)` in `DType`.
    Binary(BinaryOp, DType),
    /// `dst = fma(a, b, dst)` in f32 for operands `[dst, a, b]`: `a` and `b` of this dtype (f16, bf16,
    /// f32), `dst` f32, the product and sum rounded once (products of f16 or bf16 are exact in f32).
    MulAdd(DType),
    /// Conversion.
    Cast {
        /// From.
        from: DType,
        /// To.
        to: DType,
    },
}

impl Compute {
    /// The operands' dtypes and the result's.
    pub fn types(&self) -> (Vec<DType>, DType) {
        match self {
            Compute::Unary(_, d) => (vec![*d], *d),
            Compute::Binary(_, d) => (vec![*d, *d], *d),
            Compute::MulAdd(d) => (vec![DType::F32, *d, *d], DType::F32),
            Compute::Cast { from, to } => (vec![*from], *to),
        }
    }
}

/// A lowered statement, executed by each thread.
#[derive(Debug, Clone, PartialEq)]
pub enum LStmt {
    /// `for var in 0..extent`.
    For {
        /// Loop variable.
        var: Var,
        /// Iterations.
        extent: i64,
        /// Body.
        body: Vec<LStmt>,
    },
    /// `if cond != 0`.
    If {
        /// Condition.
        cond: Expr,
        /// Body.
        body: Vec<LStmt>,
    },
    /// `let var = value`.
    Let {
        /// Variable.
        var: Var,
        /// Value.
        value: Expr,
    },
    /// Moves `bytes` bytes (one vector of 1, 2, 4, 8 or 16 bytes, naturally aligned).
    Move {
        /// The call it lowers.
        call: usize,
        /// Destination.
        dst: Access,
        /// Source.
        src: Access,
        /// Vector bytes.
        bytes: u32,
    },
    /// Stores the constant bytes `value` (a vector).
    Store {
        /// The call it lowers.
        call: usize,
        /// Destination.
        dst: Access,
        /// The bytes.
        value: Vec<u8>,
    },
    /// `dst = f(srcs)` on one element.
    Compute {
        /// The call it lowers.
        call: usize,
        /// The computation.
        f: Compute,
        /// Destination.
        dst: Access,
        /// Operands.
        srcs: Vec<Access>,
    },
    /// `dst = src` of lane `lane ^ lane_xor` of this warp (`bytes` of 2, 4 or 8, registers only): every
    /// lane of the warp runs it together (`__shfl_xor_sync` with the full mask).
    Shuffle {
        /// The call it lowers.
        call: usize,
        /// Destination register.
        dst: Access,
        /// Source register (read in the partner lane).
        src: Access,
        /// The partner lane's xor distance (1..32).
        lane_xor: u32,
        /// Bytes moved.
        bytes: u32,
    },
    /// One `m16n8k16` matrix multiply-accumulate by the whole warp (every lane runs it together):
    /// `C += A·B` on the atom whose fragments are this warp's registers from `a`, `b` and `c` on, each
    /// lane's fragment laid out as [`crate::gemm::atom`] says (A `16×16` and B `16×8` of `dtype`, C
    /// `16×8` f32).
    Mma {
        /// The call it lowers.
        call: usize,
        /// A and B's dtype (f16 or bf16).
        dtype: DType,
        /// The accumulator fragment's first register (4 f32).
        c: Access,
        /// The A fragment's first register (8 elements).
        a: Access,
        /// The B fragment's first register (4 elements).
        b: Access,
    },
    /// `ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16` by the whole warp: `dst.len()` 8×8
    /// matrices of 16-bit elements, lane `l` supplying (at `src`) the 16-byte row `l mod 8` of matrix
    /// `l div 8`; lane `l` receives in word `dst[i]` the elements `(l div 4, 2(l mod 4) + e)` of matrix
    /// `i` (`.trans`: `(2(l mod 4) + e, l div 4)`), `e = 0, 1` low half first.
    LdMatrix {
        /// The call it lowers.
        call: usize,
        /// Transposed.
        trans: bool,
        /// Each matrix's destination word (4 bytes of registers).
        dst: Vec<Access>,
        /// This lane's row address in shared memory.
        src: Access,
    },
    /// CTA barrier.
    Barrier,
    /// A comment in emitted code (names the operator and variant).
    Comment(String),
}

/// What dispatch decided for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// `copy #0`.
    pub op: String,
    /// The scope.
    pub scope: String,
    /// The variant chosen.
    pub variant: String,
    /// Why it applies.
    pub why: String,
    /// Higher-priority variants that declined, with reasons.
    pub declined: Vec<(String, String)>,
}

/// A lowered kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    /// Kernel name.
    pub name: String,
    /// Target it was lowered for.
    pub target: String,
    /// Launch shape.
    pub launch: Launch,
    /// Buffers (global ones are the parameters).
    pub buffers: Vec<Buffer>,
    /// Byte offset of each shared buffer in the CTA's shared memory (0 for others).
    pub shared_offsets: Vec<u64>,
    /// Shared bytes per CTA.
    pub shared_bytes: u64,
    /// Variables used.
    pub vars: u32,
    /// The body.
    pub body: Vec<LStmt>,
    /// One decision per call, in call order.
    pub decisions: Vec<Decision>,
    /// CTAs per SM the GPU compiler must fit (0: no bound).
    pub min_ctas_per_sm: u32,
}
