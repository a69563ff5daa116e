//! The lowered program: per-thread loops, conditions and memory instructions, one per chosen variant.
//! Both backends (the CPU interpreter and CUDA emission) read only this.

use crate::desc::{BinaryOp, Buffer, Swizzle, UnaryOp};
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
    /// `(src >> bit) & 1` of a 32-bit word, as `out` (0 or 1).
    Bit {
        /// The bit.
        bit: u32,
        /// The result's dtype.
        out: DType,
    },
    /// `dst = dst | ((src & 1) << bit)` for operands `[dst, src]`: `dst` a 32-bit word, `src` of `elem`.
    OrBit {
        /// The bit.
        bit: u32,
        /// The element's dtype.
        elem: DType,
    },
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
            Compute::Bit { out, .. } => (vec![DType::S32], *out),
            Compute::OrBit { elem, .. } => (vec![DType::S32, *elem], DType::S32),
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
    /// `stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16` by the whole warp (sm_90): the mirror of
    /// [`LStmt::LdMatrix`]. Lane `l` supplies in word `src[i]` the elements `(l div 4, 2(l mod 4) + e)`
    /// of matrix `i` (`.trans`: `(2(l mod 4) + e, l div 4)`), `e = 0, 1` low half first; lane `l`
    /// (`l < 8·src.len()`) gives (at `dst`) the 16-byte shared row `l mod 8` of matrix `l div 8`.
    StMatrix {
        /// The call it lowers.
        call: usize,
        /// Transposed.
        trans: bool,
        /// Each matrix's source word (4 bytes of registers).
        src: Vec<Access>,
        /// This lane's row address in shared memory.
        dst: Access,
    },
    /// Text given by the kernel's author, run by each thread that reaches it
    /// ([`crate::Intrinsic`]).
    Intrinsic(crate::desc::intrinsic::LIntrinsic),
    /// `__ballot_sync` by the whole warp: lane `l` contributes bit `l` — its `bytes`-byte register at
    /// `src` is non-zero (`bit: None`), or that register's bit `bit` is set — and lane `keep` stores the
    /// 32-bit word at `dst`.
    Ballot {
        /// The call it lowers.
        call: usize,
        /// The kept word's register (4 bytes).
        dst: Access,
        /// Each lane's predicate register.
        src: Access,
        /// The predicate register's bytes (1 or 4).
        bytes: u32,
        /// Test this bit of the register instead of the whole register.
        bit: Option<u32>,
        /// The lane that keeps the word.
        keep: u32,
    },
    /// `cp.async`: `bytes` (4, 8 or 16) from global `src` to shared `dst`, asynchronously, in the
    /// thread's open commit group.
    CpAsync {
        /// The call it lowers.
        call: usize,
        /// Destination (shared).
        dst: Access,
        /// Source (global).
        src: Access,
        /// Vector bytes.
        bytes: u32,
    },
    /// `cp.async.mbarrier.arrive.noinc`: once every `cp.async` the thread issued before it has landed,
    /// one arrival (of those the phase expects) on the mbarrier at `bar`.
    CpAsyncArrive {
        /// The mbarrier.
        bar: Access,
    },
    /// `cp.async.commit_group`.
    AsyncCommit,
    /// `cp.async.wait_group n`.
    AsyncWait(u32),
    /// CTA barrier.
    Barrier,
    /// `mbarrier.init`: the mbarrier at `bar` (8 bytes of shared memory) expects `count` arrivals per
    /// phase and starts in phase 0.
    MbarInit {
        /// The mbarrier.
        bar: Access,
        /// Arrivals per phase.
        count: u32,
    },
    /// `fence.mbarrier_init`: initialised mbarriers are visible to the copy engine (before a barrier).
    FenceMbarInit,
    /// One arrival on the mbarrier at `bar`; the phase completes when every expected arrival came and
    /// no transaction bytes are pending.
    MbarArrive {
        /// The mbarrier.
        bar: Access,
    },
    /// `mbarrier.expect_tx`: the current phase also waits for `bytes` more transaction bytes.
    MbarExpectTx {
        /// The mbarrier.
        bar: Access,
        /// Bytes.
        bytes: u32,
    },
    /// Waits until the phase of parity `parity` (0 or 1) of the mbarrier at `bar` has completed.
    MbarWait {
        /// The mbarrier.
        bar: Access,
        /// The parity.
        parity: Expr,
    },
    /// `cp.async.bulk.tensor` by one thread: the box of tensor map `map` whose first element is at
    /// `src` (a byte of the map's buffer) is copied to shared memory at `dst` (the map's swizzle
    /// applied), its bytes completing a transaction on the mbarrier at `bar`.
    TmaLoad {
        /// The call it lowers.
        call: usize,
        /// The tensor map's index in [`Program::tensor_maps`].
        map: usize,
        /// The box's shared destination (before any swizzle; aligned to the swizzle's atom).
        dst: Access,
        /// The box's first element in the map's global buffer.
        src: Access,
        /// The mbarrier.
        bar: Access,
    },
    /// `wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{dtype}` by a whole warpgroup: `C += A·B` with A
    /// `64×16` and B `16×n` read from shared memory through their descriptors (both K-major) and the
    /// accumulator fragment in each thread's registers from `c` on ([`crate::wgmma::accumulator`]).
    Wgmma {
        /// The call it lowers.
        call: usize,
        /// A and B's dtype (f16 or bf16).
        dtype: DType,
        /// N (8 to 256, a multiple of 8).
        n: u32,
        /// The accumulator's first register (`n/2` f32 per thread).
        c: Access,
        /// A's descriptor: row `i`, column `k` at `start + (i div 8)·sbo + (i mod 8)·span + k·eb`.
        a: SmemDesc,
        /// B's descriptor, over B's columns: column `j`, row `k` at the same place as A's `(j, k)`.
        b: SmemDesc,
    },
    /// `wgmma.fence`: orders earlier register and shared-memory accesses before the next wgmma, whose
    /// accumulators are the `regs` f32 from `acc` on.
    WgmmaFence {
        /// The accumulators' first register.
        acc: Access,
        /// How many f32 registers.
        regs: u32,
    },
    /// `wgmma.commit_group`: the wgmmas issued since the last commit form a group.
    WgmmaCommit,
    /// `wgmma.wait_group pending`: waits until at most `pending` groups are in flight; the `regs` f32
    /// accumulators from `acc` on are read only after it.
    WgmmaWait {
        /// Groups that may stay in flight.
        pending: u32,
        /// The accumulators' first register.
        acc: Access,
        /// How many f32 registers.
        regs: u32,
    },
    /// `setmaxnreg`: the warpgroup's registers per thread become `regs` (raised or lowered).
    SetMaxNReg {
        /// Raise (`inc`) rather than lower (`dec`).
        inc: bool,
        /// Registers per thread.
        regs: u32,
    },
    /// One TensorE matrix multiply on trn1 ([`crate::tensore::Matmul`]).
    Matmul(Box<crate::tensore::Matmul>),
    /// A comment in emitted code (names the operator and variant).
    Comment(String),
}

/// A wgmma shared-memory matrix descriptor: a K-major operand in a swizzled shared buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmemDesc {
    /// The operand's first element (a logical byte of a shared buffer, before its swizzle).
    pub at: Access,
    /// Bytes between groups of 8 rows (the stride byte offset).
    pub sbo: u32,
    /// The buffer's swizzle: rows of `swizzle.bytes()` bytes.
    pub swizzle: Swizzle,
}

/// A TMA tensor map: a row-major global array of `dims` (innermost first) in buffer `buf`, copied in
/// boxes of `box_dims` into shared memory with `swizzle`. The host encodes it
/// (`cuTensorMapEncodeTiled`) from the buffer's device address and passes it by value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorMap {
    /// The global buffer's index.
    pub buf: usize,
    /// Bytes per element.
    pub elem_bytes: u32,
    /// Extents, innermost first (dense: each dim's stride is the product of the inner extents).
    pub dims: Vec<u64>,
    /// The box, innermost first.
    pub box_dims: Vec<u32>,
    /// The shared-memory swizzle.
    pub swizzle: Option<Swizzle>,
}

impl TensorMap {
    /// Bytes of one box.
    pub fn box_bytes(&self) -> u64 {
        self.box_dims
            .iter()
            .fold(u64::from(self.elem_bytes), |a, &b| a * u64::from(b))
    }
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
    /// TMA tensor maps, passed after the global buffers.
    pub tensor_maps: Vec<TensorMap>,
}

/// The largest count an mbarrier holds: arrivals per phase (`mbarrier.init` takes 1 to this), the
/// transaction bytes one `mbarrier.expect_tx` announces (0 to this), and the pending transaction
/// count of a phase either way (PTX: `2^20 − 1`).
pub(crate) const MBAR_MAX: u32 = (1 << 20) - 1;

impl Program {
    /// **Law**: `Ok` exactly when every `MbarInit` of the body (at any depth) counts 1 to
    /// `2^20 − 1` arrivals and every `MbarExpectTx` announces at most `2^20 − 1` bytes, the ranges
    /// PTX gives `mbarrier.init` and `mbarrier.expect_tx` (a count is a `u32`, so never negative);
    /// else an error naming the statement, its count and the range. Lowering, the interpreter and
    /// the CUDA emission check it, so a program built by hand or by a variant of one's own never
    /// reaches either backend with a count the hardware does not take.
    pub fn check_mbarriers(&self) -> crate::error::Result<()> {
        let mut stack: Vec<&[LStmt]> = vec![&self.body];
        while let Some(body) = stack.pop() {
            for s in body {
                match s {
                    LStmt::For { body, .. } | LStmt::If { body, .. } => stack.push(body),
                    LStmt::MbarInit { count, .. } if *count == 0 || *count > MBAR_MAX => {
                        return Err(crate::error::KernelError::Invalid(format!(
                            "{}: mbarrier.init with {count} arrivals per phase; an mbarrier counts 1 to 2^20 - 1",
                            self.name
                        )));
                    }
                    LStmt::MbarExpectTx { bytes, .. } if *bytes > MBAR_MAX => {
                        return Err(crate::error::KernelError::Invalid(format!(
                            "{}: mbarrier.expect_tx of {bytes} bytes; a phase's transaction count is 0 to 2^20 - 1 bytes (1048575)",
                            self.name
                        )));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}
