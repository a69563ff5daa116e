//! The shipped kernel `gemm_reduce_scatter` (the paper's §4.2): `C = A·B` over `P` devices, each
//! holding a K-slice of A and B, reduced and scattered along M.
//!
//! Written with the cross-device description ([`crate::xdev`]), on a mesh `x=P`:
//!
//! 1. `copy a_k ← a`, `copy b_k ← b`: A `[M,K]` and B (given as `[N,K]`, B column-major) arrive on
//!    device 0 and are split along K over `x` (`copy.reshard`: a scatter);
//! 2. `kernel gemm`: each device multiplies its slices, `C_d = A[:, K_d]·B[K_d, :]`, with the shipped
//!    gemm (`M×N×K/P`, f32 accumulate) into `c_part`, an `[M,N]` f32 tensor holding partial sums over
//!    `x` (`[Partial(sum)]`);
//! 3. `reduce c_m ← c_part (sum)`: the partial sums combined and left split along M over `x`
//!    (`reduce.reduce_scatter`): device `d` holds rows `d·⌈M/P⌉ ..` of `C`;
//! 4. `copy c ← c_m`: the rows gathered onto device 0 (`copy.reshard`).
//!
//! Law: on every device, its shard of `c_m` equals its rows of `Σ_d A[:, K_d]·B[K_d, :]` (each partial
//! product accumulated in f32 by the per-device gemm, the `P` partials summed in f32), and device 0's
//! `c` is the whole of it.

use axe_shard::{AxisUse, Mesh, Sharding};

use crate::dispatch::Target;
use crate::dtype::DType;
use crate::error::KernelError;
use crate::reduce::ReduceOp;
use crate::xdev::{DeviceKernel, DeviceKernelBuilder, XResult, XdevError};

/// The most devices [`gemm_reduce_scatter`] spreads over: planning its reduce-scatter takes time and
/// memory in proportion to them (16384 devices: about a second).
pub const MAX_DEVICES: u64 = 16384;
/// The kernel and its tensors.
#[derive(Debug, Clone)]
pub struct GemmReduceScatter {
    /// The kernel across devices.
    pub kernel: DeviceKernel,
    /// `a`: A `[M,K]` on device 0 (an input).
    pub a: usize,
    /// `b`: B as `[N,K]` on device 0 (an input).
    pub b: usize,
    /// `c_m`: C `[M,N]` f32 split along M over the devices (each device's result).
    pub c_m: usize,
    /// `c`: C `[M,N]` f32 gathered on device 0 (the output).
    pub c: usize,
    /// M, N, K.
    pub mnk: (u64, u64, u64),
}

/// `gemm_reduce_scatter` for `C[M,N] (f32) = A[M,K]·B` (B given as `[N,K]`) of `dtype` (bf16 or f16) over
/// `devices` devices, the per-device gemm as shipped for `target` (see [`crate::shipped::gemm_for`]).
/// K must split into `devices` slices the per-device gemm accepts (each a multiple of 32; M and N
/// multiples of 128).
pub fn gemm_reduce_scatter(
    m: u64,
    n: u64,
    k: u64,
    dtype: DType,
    devices: u64,
    target: Target,
) -> XResult<GemmReduceScatter> {
    let bad = |msg: String| {
        XdevError::Kernel(KernelError::Invalid(format!(
            "gemm_reduce_scatter {m}×{n}×{k} on {devices} devices: {msg}"
        )))
    };
    if devices == 0 {
        return Err(bad("at least one device is needed".into()));
    }
    if devices > MAX_DEVICES {
        return Err(bad(format!(
            "the shipped kernel takes at most {MAX_DEVICES} devices"
        )));
    }
    if !k.is_multiple_of(devices) {
        return Err(bad(format!(
            "K must split evenly into {devices} slices, one per device"
        )));
    }
    let local = crate::shipped::gemm_for(m, n, k / devices, dtype, target)
        .map_err(|e| bad(format!("the per-device gemm: {e}")))?;
    let mesh = Mesh::new(&[("x", devices)])?;
    let mut kb = DeviceKernelBuilder::new("gemm_reduce_scatter", mesh.clone())?;
    let on0 = |dims: Vec<u64>| Sharding::maximal(&mesh, dims, 0);
    let split = |dims: Vec<u64>, d: usize| Sharding::new(&mesh, dims, split_dim(2, d), &[]);
    let a = kb.tensor("a", dtype, on0(vec![m, k])?)?;
    let b = kb.tensor("b", dtype, on0(vec![n, k])?)?;
    let a_k = kb.tensor("a_k", dtype, split(vec![m, k], 1)?)?;
    let b_k = kb.tensor("b_k", dtype, split(vec![n, k], 1)?)?;
    let partial = Sharding::new(
        &mesh,
        vec![m, n],
        vec![Vec::new(), Vec::new()],
        &[(0, AxisUse::Partial(axe_shard::ReduceOp::Sum))],
    )?;
    let c_part = kb.tensor("c_part", DType::F32, partial)?;
    let c_m = kb.tensor("c_m", DType::F32, split(vec![m, n], 0)?)?;
    let c = kb.tensor("c", DType::F32, on0(vec![m, n])?)?;
    kb.copy(a_k, a)?;
    kb.copy(b_k, b)?;
    kb.kernel(local.kernel, &[a_k, b_k, c_part])?;
    kb.reduce(c_m, c_part, ReduceOp::Sum)?;
    kb.copy(c, c_m)?;
    Ok(GemmReduceScatter {
        kernel: kb.build(),
        a: a.0,
        b: b.0,
        c_m: c_m.0,
        c: c.0,
        mnk: (m, n, k),
    })
}

/// Per tensor dim (of `rank`), the mesh axes splitting it: mesh axis 0 splits dim `d`.
fn split_dim(rank: usize, d: usize) -> Vec<Vec<usize>> {
    (0..rank)
        .map(|i| if i == d { vec![0] } else { Vec::new() })
        .collect()
}
