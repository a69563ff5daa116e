//! # axe-kernel: kernels described with Axe layouts
//!
//! A kernel is described ([`KernelBuilder`]) as buffers, tensors whose Axe layouts say where each element
//! lives (global or shared memory on axis `m`, registers on `reg`/`lane`/`warp`), and statements: `for`,
//! `if`, `let`, CTA barriers and operators (`copy`, `fill`, pointwise, `cast`, `reduce`, `gemm`) called at a scope (kernel,
//! CTA, warpgroup, warp, thread, or a slice of them). [`lower`] dispatches every call to the first
//! variant registered for the target that applies ([`Registry`]); each declining variant says why. The
//! lowered [`Program`] runs on the CPU interpreter ([`run`]) — every CTA, warp and thread simulated,
//! out-of-bounds accesses and races in shared and global memory reported by operator — or is emitted as CUDA C++
//! ([`emit_cuda`]) and compiled by NVRTC in a child process ([`nvrtc`]). On Trainium (`trn1`), tensors
//! live in SBUF and PSUM, `gemm` runs on the TensorE ([`tensore`]) and the program is emitted as
//! NKI-style text ([`emit_nki()`]). Across devices ([`xdev`]), tensors carry device axes, `copy` is a
//! reshard and `reduce` of pending partial sums a reduce-scatter or all-reduce, planned by `axe-shard`
//! and executed by `axe-reshard` over threads or MPI ranks ([`run_devices`]).
//!
//! ```
//! use axe_kernel::{DType, KernelBuilder, Launch, Scope, Space, Target};
//! use axe_layout::Layout;
//! let mut k = KernelBuilder::new("transpose_copy", Launch { grid: 1, cluster: 1, threads: 64 })?;
//! let a = k.buffer("a", Space::Global, DType::F32, 64)?;
//! let b = k.buffer("b", Space::Global, DType::F32, 64)?;
//! let ta = k.tensor("a", a, &[8, 8], Layout::row_major(&[8, 8]).unwrap())?;
//! let tb = k.tensor("b", b, &[8, 8], Layout::row_major(&[8, 8]).unwrap())?;
//! k.copy(Scope::cta(), &tb, &ta)?;
//! let p = axe_kernel::lower(&k.build()?, Target::Sm80)?;
//! assert_eq!(p.decisions[0].variant, "copy.vec16");
//! # Ok::<(), axe_kernel::KernelError>(())
//! ```

pub mod bits;
pub mod copy;
pub mod cp_async;
#[cfg(feature = "cuda")]
pub mod cuda;
mod desc;
pub mod dispatch;
mod dtype;
mod emit;
pub mod emit_nki;
mod error;
mod expr;
pub mod gemm;
pub mod gemm_hopper;
pub mod gemm_kernel;
pub mod gemm_rs;
mod interp;
mod ir;
pub mod ldmatrix;
mod lower;
pub mod mma;
pub mod nvrtc;
mod places;
pub mod pointwise;
pub mod range;
pub mod reduce;
pub mod regcopy;
pub mod registers;
pub mod regwise;
pub mod relayout;
pub mod relayout_bits;
pub mod round;
mod scope;
pub mod shipped;
pub mod softmax;
pub mod spread;
pub mod staged;
pub mod stmatrix;
pub mod tensore;
pub mod tensore_dma;
pub mod tensore_kernel;
mod tensore_plan;
pub mod tma;
pub mod wgmma;
pub mod xdev;
pub mod xdev_dispatch;
pub mod xdev_exec;

pub use desc::intrinsic::{
    parse_text as parse_intrinsic_text, CpuMeaning, Intrinsic, IntrinsicArg, LArg, LIntrinsic,
    Piece,
};
pub use desc::{
    extent_on, space_name, BinaryOp, Buffer, BufferId, Call, Kernel, KernelBuilder, Mbar, Op,
    Space, Stmt, Swizzle, SyncStmt, Tensor, UnaryOp, Value, MAX_NESTING,
};
pub use dispatch::{Ctx, Outcome, Registry, Target, Variant};
pub use dtype::DType;
pub use emit::{emit_cuda, emit_cuda_with, IndexWidth};
pub use emit_nki::emit_nki;
pub use error::{KernelError, Result};
pub use expr::{BinOp, Expr, Var, MAX_DEPTH as MAX_EXPR_DEPTH};
pub use interp::{footprint, run, RunLimits};
pub use ir::{Access, Compute, Decision, LStmt, Program, SmemDesc, TensorMap};
pub use lower::{lower, lower_with, SHARED_ALIGN};
pub use reduce::ReduceOp;
pub use scope::{Launch, Level, Scope, WARP, WARPGROUP};
pub use xdev::{DeviceKernel, DeviceKernelBuilder, DeviceTensor, DeviceTensorId, XdevError};
pub use xdev_dispatch::{xdev_lower, DeviceProgram};
pub use xdev_exec::{run_devices, run_devices_threads};
