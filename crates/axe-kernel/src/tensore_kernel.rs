//! The shipped `gemm` on trn1: `C[M, N] += A[M, K]·B[K, N]` with the parameters of every gemm target
//! ([`crate::gemm_kernel::Gemm`]: A row-major, B stored as `[N, K]` row-major, C f32 row-major).
//!
//! **Schedule.** K splits as `kt × kp` and M as `mt × mp` (`kp`, `mp` the largest divisors within 128
//! partitions). The DMA engines load A into SBUF as `S[(M, kt, kp) : (1@F, M@F, 1@P)]` (k's low part
//! on the partitions, m along the free axis: A stands transposed, as TensorE's stationary operand
//! wants), B as `S[(kt, kp, N) : (N@F, 1@P, 1@F)]`, and C into PSUM as
//! `S[(mt, mp, N) : (N@F, 1@P, 1@F)]`; one `gemm` call, dispatched to `gemm.tensore`, accumulates
//! A·B into PSUM, and C goes back to HBM. C must fit PSUM (`mt·N` f32 a partition: 16 KiB).

use axe_layout::{Axis, Layout};

use crate::desc::KernelBuilder;
use crate::dtype::DType;
use crate::error::{layout, overflow, KernelError, Result};
use crate::gemm_kernel::Gemm;
use crate::scope::{Launch, Scope};
use crate::tensore::{largest_divisor, MAX_K, MAX_M, PARTITIONS};

fn strided(ext: &[u64], strides: &[i64], axes: &[&str]) -> Result<Layout> {
    let axes: Vec<Axis> = axes
        .iter()
        .map(|a| Axis::new(a).map_err(layout(*a)))
        .collect::<Result<_>>()?;
    Layout::strided(ext, strides, &axes).map_err(layout("a trn1 gemm layout"))
}

fn i(x: u64) -> Result<i64> {
    i64::try_from(x).map_err(|_| overflow("computing a gemm size"))
}

/// The trn1 gemm kernel for `m × n × k` with A and B in `dtype` (f16, bf16 or f32).
pub fn gemm_kernel_trn(m: u64, n: u64, k: u64, dtype: DType) -> Result<Gemm> {
    if m == 0 || n == 0 || k == 0 {
        return Err(KernelError::Invalid(format!(
            "gemm {m}×{n}×{k}: every size must be at least 1"
        )));
    }
    let (kp, mp) = (largest_divisor(k, MAX_K), largest_divisor(m, MAX_M));
    for (name, size, part, most) in [("M", m, mp, MAX_M), ("K", k, kp, MAX_K)] {
        if part == 1 && size > most {
            return Err(KernelError::Invalid(format!(
                "gemm {m}×{n}×{k} on trn1: {name} is split over TensorE's partitions by its largest divisor of at most {most}, and {size} has none but 1"
            )));
        }
    }
    let (kt, mt) = (k / kp, m / mp);
    let mul = |a: u64, b: u64| {
        a.checked_mul(b)
            .ok_or_else(|| overflow("computing a gemm size"))
    };
    let mut kb = KernelBuilder::new(
        "gemm_trn1",
        Launch {
            grid: 1,
            cluster: 1,
            threads: 32,
        },
    )?;
    let ga = kb.buffer("a", crate::Space::Global, dtype, mul(m, k)?)?;
    let gb = kb.buffer("b", crate::Space::Global, dtype, mul(n, k)?)?;
    let gc = kb.buffer("c", crate::Space::Global, DType::F32, mul(m, n)?)?;
    let sa = kb.buffer(
        "a_sbuf",
        crate::Space::Sbuf,
        dtype,
        mul(PARTITIONS, mul(kt, m)?)?,
    )?;
    let sb = kb.buffer(
        "b_sbuf",
        crate::Space::Sbuf,
        dtype,
        mul(PARTITIONS, mul(kt, n)?)?,
    )?;
    let pc = kb.buffer(
        "c_psum",
        crate::Space::Psum,
        DType::F32,
        mul(PARTITIONS, mul(mt, n)?)?,
    )?;
    let mem = |ext: &[u64], strides: &[i64]| strided(ext, strides, &vec!["m"; ext.len()]);
    let a = kb.tensor("a", ga, &[m, k], mem(&[m, k], &[i(k)?, 1])?)?;
    let b = kb.tensor("b", gb, &[k, n], mem(&[k, n], &[1, i(k)?])?)?;
    let c = kb.tensor("c", gc, &[m, n], mem(&[m, n], &[i(n)?, 1])?)?;
    let a_s = kb.tensor(
        "a_sbuf",
        sa,
        &[m, k],
        strided(&[m, kt, kp], &[1, i(m)?, 1], &["F", "F", "P"])?,
    )?;
    let b_s = kb.tensor(
        "b_sbuf",
        sb,
        &[k, n],
        strided(&[kt, kp, n], &[i(n)?, 1, 1], &["F", "P", "F"])?,
    )?;
    let c_p = kb.tensor(
        "c_psum",
        pc,
        &[m, n],
        strided(&[mt, mp, n], &[i(n)?, 1, 1], &["F", "P", "F"])?,
    )?;
    kb.copy(Scope::kernel(), &a_s, &a)?;
    kb.copy(Scope::kernel(), &b_s, &b)?;
    kb.copy(Scope::kernel(), &c_p, &c)?;
    kb.gemm(Scope::kernel(), &c_p, &a_s, &b_s)?;
    kb.copy(Scope::kernel(), &c, &c_p)?;
    let bytes = u64::from(dtype.bytes());
    Ok(Gemm {
        kernel: kb.build()?,
        a_bytes: mul(mul(m, k)?, bytes)?,
        b_bytes: mul(mul(n, k)?, bytes)?,
        c_bytes: mul(mul(m, n)?, 4)?,
        grid: 1,
    })
}
