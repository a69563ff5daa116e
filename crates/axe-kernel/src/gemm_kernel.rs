//! The shipped `gemm` kernel: `C[M, N] = A[M, K]·B[K, N]` with A row-major, B column-major (stored as
//! its transpose, `[N, K]` row-major: element `B[k, n]` at `n·K + k`), C f32 row-major; A and B in bf16
//! or f16, products and sums in f32. Written with the description; dispatch picks `gemm.mma_sync`.
//!
//! **Schedule.** A CTA of 256 threads (8 warps) computes a [`TILE_M`]×[`TILE_N`] tile of C; the grid
//! has `(M/128)·(N/128)` CTAs, CTA `q` taking tile row `q div (N/128)` and column `q mod (N/128)`. Warp
//! `w` computes the 64×32 warp tile `(w div 4, w mod 4)`: 4×4 accumulator atoms of `m16n8k16`, 64 f32
//! registers per thread. The K loop takes steps of [`TILE_K`] through [`STAGES`] shared stages filled
//! by `cp.async` (`copy_async_group`, 16-byte vectors; global addresses from windows at the step's
//! offset), two steps ahead: step `s` waits for its own group, meets the CTA at one barrier (every
//! thread's copies of stage `s` landed, and every warp is done with the stage step `s + 2` refills),
//! issues step `s + 2`'s copies, then loads its A fragments (4×2 atoms, replicated over the 4 warps of
//! its row) and B fragments (2×4 atoms, replicated over the 2 warps of its column) from its stage by
//! `ldmatrix` and runs 32 `mma.sync` per warp. Shared rows are padded from 32 to [`SHARED_ROW`] elements (80 bytes), so the 8 rows of an
//! ldmatrix matrix fall in different banks. The epilogue stores the accumulators to C in 8-byte
//! vectors. The kernel asks for two CTAs per SM.
//!
//! The register layouts are the `m16n8k16` fragments tiled over `reg` and `warp`
//! ([`crate::gemm::atom`] tiled by [`axe_layout::Layout::tile`]), so dispatch finds the mma by
//! `tile_of` and the register copies by enumeration.

use axe_layout::{Axis, Iter, Layout};

use crate::desc::{Kernel, KernelBuilder, Space, Value};
use crate::dtype::DType;
use crate::error::{layout, overflow, KernelError, Result};
use crate::expr::Expr;
use crate::gemm::{atom, Operand};
use crate::scope::{Launch, Scope};

/// Rows of C per CTA.
pub const TILE_M: u64 = 128;
/// Columns of C per CTA.
pub const TILE_N: u64 = 128;
/// K per step.
pub const TILE_K: u64 = 32;
/// Elements per row of the shared A and B tiles (32 used, 8 of padding).
pub const SHARED_ROW: u64 = 40;
/// Threads per CTA.
pub const THREADS: u32 = 256;
/// Shared stages.
pub const STAGES: usize = 3;

/// A gemm kernel and its buffers' sizes.
#[derive(Debug, Clone)]
pub struct Gemm {
    /// The kernel: parameters `a` (`[M, K]` row-major), `b` (B column-major — `[N, K]` row-major — or
    /// row-major `[K, N]`, as [`BMajor`] says), `c` (`[M, N]` f32 row-major), in that order.
    pub kernel: Kernel,
    /// Bytes of `a`.
    pub a_bytes: u64,
    /// Bytes of `b`.
    pub b_bytes: u64,
    /// Bytes of `c`.
    pub c_bytes: u64,
    /// CTAs.
    pub grid: u32,
}

fn ax(n: &str) -> Result<Axis> {
    Axis::new(n).map_err(layout(n))
}

fn it(e: u64, s: i64, a: &str) -> Result<Iter> {
    Iter::new(e, s, ax(a)?).map_err(layout("an iter"))
}

/// The `op` fragment tiled by `outer` (a layout over `outer_shape` on `reg` and `warp`).
fn tiled(op: Operand, outer: Layout, outer_shape: [u64; 2]) -> Result<Layout> {
    let (t, _) = atom(op)?
        .tile(&outer, &op.shape(), &outer_shape)
        .map_err(layout("a fragment tiling"))?;
    Ok(t)
}

/// How B is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BMajor {
    /// Column-major: `B[k, n]` at `n·K + k` (Bᵀ row-major, `[N, K]`); shared rows hold k.
    Col,
    /// Row-major: `B[k, n]` at `k·N + n`; shared rows hold n ([`B_ROW`] elements, 16 of padding), and
    /// the fragments load by `ldmatrix.trans`.
    Row,
}

/// Elements per row of the shared B tile when B is row-major (128 used, 8 of padding).
pub const B_ROW: u64 = 136;

/// A gemm's launch and buffers: CTAs, bytes per element of A and B, elements of A, B and C.
pub(crate) struct Sized {
    pub(crate) grid: u32,
    pub(crate) eb: u64,
    pub(crate) a_n: u64,
    pub(crate) b_n: u64,
    pub(crate) c_n: u64,
}

/// Checks a gemm's `(M, N, K)` and `dtype` against a kernel's `tiles` (M, N and K must be multiples of
/// them; `tiles_rule` says so in the error) and sizes its launch and buffers.
pub(crate) fn sized(
    (m, n, k): (u64, u64, u64),
    dtype: DType,
    [tm, tn, tk]: [u64; 3],
    tiles_rule: &str,
) -> Result<Sized> {
    let bad = |msg: &str| {
        Err(KernelError::Invalid(format!(
            "gemm {m}×{n}×{k} {dtype}: {msg}"
        )))
    };
    if !matches!(dtype, DType::BF16 | DType::F16) {
        return bad("A and B must be bf16 or f16");
    }
    if m == 0 || n == 0 || k == 0 {
        return bad("M, N and K must be at least 1");
    }
    if !m.is_multiple_of(tm) || !n.is_multiple_of(tn) || !k.is_multiple_of(tk) {
        return bad(tiles_rule);
    }
    let grid = u32::try_from((m / tm).saturating_mul(n / tn))
        .ok()
        .filter(|g| *g <= i32::MAX as u32)
        .ok_or_else(|| KernelError::Invalid(format!("gemm {m}×{n}×{k}: too many CTAs")))?;
    let [Some(a_n), Some(b_n), Some(c_n)] = [m.checked_mul(k), n.checked_mul(k), m.checked_mul(n)]
    else {
        return Err(overflow("sizing the gemm buffers"));
    };
    Ok(Sized {
        grid,
        eb: u64::from(dtype.bytes()),
        a_n,
        b_n,
        c_n,
    })
}

/// The gemm kernel for `C[M, N] = A[M, K]·B[K, N]` in `dtype` (bf16 or f16) with B column-major; see
/// the module docs.
pub fn gemm_kernel(m: u64, n: u64, k: u64, dtype: DType) -> Result<Gemm> {
    gemm_kernel_b(m, n, k, dtype, BMajor::Col)
}

/// [`gemm_kernel`] with B stored as `b_major` says.
pub fn gemm_kernel_b(m: u64, n: u64, k: u64, dtype: DType, b_major: BMajor) -> Result<Gemm> {
    let Sized {
        grid,
        eb,
        a_n,
        b_n,
        c_n,
    } = sized(
        (m, n, k),
        dtype,
        [TILE_M, TILE_N, TILE_K],
        &format!(
            "M and N must be multiples of {TILE_M} and {TILE_N} (the CTA tile) and K of {TILE_K} (the K step)"
        ),
    )?;
    let ki = i64::try_from(k).map_err(|_| overflow("converting K"))?;
    let ni = i64::try_from(n).map_err(|_| overflow("converting N"))?;
    let mut kb = KernelBuilder::new(
        "gemm",
        Launch {
            grid,
            cluster: 1,
            threads: THREADS,
        },
    )?;
    // Two CTAs per SM: at most 128 registers per thread.
    kb.min_ctas_per_sm(2);
    let ga = kb.buffer("a", Space::Global, dtype, a_n)?;
    let gb = kb.buffer("b", Space::Global, dtype, b_n)?;
    let gc = kb.buffer("c", Space::Global, DType::F32, c_n)?;
    let mut sa = Vec::new();
    let mut sb = Vec::new();
    for p in 0..STAGES {
        let sh = Space::Shared(None);
        sa.push(kb.buffer(&format!("sa{p}"), sh, dtype, TILE_M * SHARED_ROW)?);
        let elems = match b_major {
            BMajor::Col => TILE_N * SHARED_ROW,
            BMajor::Row => TILE_K * B_ROW,
        };
        sb.push(kb.buffer(&format!("sb{p}"), sh, dtype, elems)?);
    }
    let ra = kb.buffer("fa", Space::Registers, dtype, 64)?;
    let rb = kb.buffer("fb", Space::Registers, dtype, 32)?;
    let rc = kb.buffer("acc", Space::Registers, DType::F32, 64)?;
    let row = SHARED_ROW as i64;
    let mem = |e: &[u64], s: &[i64]| {
        Layout::strided(e, s, &vec![Axis::memory(); e.len()]).map_err(layout("a tile"))
    };
    // Global tiles (from the window's base): A [128, 32], B^T [128 (n), 32 (k)], C [128, 128].
    let a_g = kb.tensor(
        "A",
        ga,
        &[TILE_M, TILE_K],
        mem(&[TILE_M, TILE_K], &[ki, 1])?,
    )?;
    let (nk, kn) = ([TILE_N, TILE_K], [TILE_K, TILE_N]);
    let bt_g = match b_major {
        BMajor::Col => kb.tensor("Bt", gb, &nk, mem(&nk, &[ki, 1])?)?,
        BMajor::Row => kb.tensor("B", gb, &kn, mem(&kn, &[ni, 1])?)?,
    };
    let c_g = kb.tensor(
        "C",
        gc,
        &[TILE_M, TILE_N],
        mem(&[TILE_M, TILE_N], &[ni, 1])?,
    )?;
    // Shared tiles: rows of 32 padded to 40; B also viewed as [32 (k), 128 (n)].
    let (mut a_s, mut bt_s, mut b_s) = (Vec::new(), Vec::new(), Vec::new());
    for p in 0..STAGES {
        let (rows, cols) = ([TILE_M, TILE_K], [TILE_N, TILE_K]);
        a_s.push(kb.tensor("A_s", sa[p], &rows, mem(&rows, &[row, 1])?)?);
        match b_major {
            BMajor::Col => {
                bt_s.push(kb.tensor("Bt_s", sb[p], &cols, mem(&cols, &[row, 1])?)?);
                b_s.push(kb.tensor("B_s", sb[p], &kn, mem(&kn, &[1, row])?)?);
            }
            BMajor::Row => {
                let t = kb.tensor("B_s", sb[p], &kn, mem(&kn, &[B_ROW as i64, 1])?)?;
                bt_s.push(t.clone());
                b_s.push(t);
            }
        }
    }
    // Fragments. Warp w = 4·wm + wn. A: m tile 4·wm + mi (mi on reg), k tile on reg, replicated over
    // wn. B: k tile on reg, n tile 4·wn + ni, replicated over wm. C: m tile 4·wm + mi, n tile 4·wn + ni.
    let a_outer = Layout::new(
        vec![it(2, 4, "warp")?, it(4, 2, "reg")?, it(2, 1, "reg")?],
        vec![it(4, 1, "warp")?],
        axe_layout::Coord::zero(),
    )
    .map_err(layout("A's tiles"))?;
    let b_outer = Layout::new(
        vec![it(2, 4, "reg")?, it(4, 1, "warp")?, it(4, 1, "reg")?],
        vec![it(2, 4, "warp")?],
        axe_layout::Coord::zero(),
    )
    .map_err(layout("B's tiles"))?;
    let c_outer = Layout::from_shard(vec![
        it(2, 4, "warp")?,
        it(4, 4, "reg")?,
        it(4, 1, "warp")?,
        it(4, 1, "reg")?,
    ])
    .map_err(layout("C's tiles"))?;
    let fa = kb.tensor(
        "A_frag",
        ra,
        &[TILE_M, TILE_K],
        tiled(Operand::A, a_outer, [TILE_M / 16, TILE_K / 16])?,
    )?;
    let fb = kb.tensor(
        "B_frag",
        rb,
        &[TILE_K, TILE_N],
        tiled(Operand::B, b_outer, [TILE_K / 16, TILE_N / 8])?,
    )?;
    let acc = kb.tensor(
        "acc",
        rc,
        &[TILE_M, TILE_N],
        tiled(Operand::C, c_outer, [TILE_M / 16, TILE_N / 8])?,
    )?;
    let cta = || Scope::cta();
    let tiles_n = i64::try_from(n / TILE_N).map_err(|_| overflow("converting N"))?;
    let bm = kb.let_(Expr::Cta.over(Expr::Const(tiles_n)));
    let bn = kb.let_(Expr::Cta.modulo(Expr::Const(tiles_n)));
    let (tm, tn, tk) = (TILE_M as i64, TILE_N as i64, TILE_K as i64);
    kb.fill(cta(), &acc, Value::Float(0.0))?;
    // Step s's A and B tiles, global → shared stage p by cp.async, in this thread's open group.
    let fetch = |kb: &mut KernelBuilder, s: Expr, p: usize| -> Result<()> {
        let kofs = s.times(Expr::Const(tk));
        let a_base = Expr::Var(bm).times(Expr::Const(tm * ki)).plus(kofs.clone());
        let b_base = match b_major {
            BMajor::Col => Expr::Var(bn).times(Expr::Const(tn * ki)).plus(kofs),
            BMajor::Row => Expr::Var(bn)
                .times(Expr::Const(tn))
                .plus(kofs.times(Expr::Const(ni))),
        };
        kb.window(ga, a_base, TILE_K, |kb| {
            kb.window(gb, b_base, TILE_K, |kb| {
                kb.copy_async_group(cta(), &a_s[p], &a_g)?;
                kb.copy_async_group(cta(), &bt_s[p], &bt_g)?;
                Ok(())
            })
        })
    };
    // Fragments from shared stage p, then the mmas.
    let compute = |kb: &mut KernelBuilder, p: usize| -> Result<()> {
        kb.copy(cta(), &fa, &a_s[p])?;
        kb.copy(cta(), &fb, &b_s[p])?;
        kb.gemm(cta(), &acc, &fa, &fb)?;
        Ok(())
    };
    let steps = k / TILE_K;
    let steps_i = i64::try_from(steps).map_err(|_| overflow("converting K"))?;
    let ahead = (STAGES - 1) as i64;
    // Groups 0 and 1: steps 0 and 1 (an empty group when there is one step).
    for s in 0..ahead {
        kb.if_then(Expr::Const(s).lt(Expr::Const(steps_i)), |kb| {
            fetch(kb, Expr::Const(s), s as usize)
        })?;
        kb.async_commit();
    }
    // Step s = STAGES·r + p uses stage p; before it, groups 0..=s+1 are committed, so waiting until one
    // is in flight completes step s's.
    kb.for_loop(steps.div_ceil(STAGES as u64), |kb, r| {
        for p in 0..STAGES {
            let s = Expr::Var(r)
                .times(Expr::Const(STAGES as i64))
                .plus(Expr::Const(p as i64));
            kb.if_then(s.clone().lt(Expr::Const(steps_i)), |kb| {
                kb.async_wait(1);
                kb.barrier();
                let next = s.clone().plus(Expr::Const(ahead));
                kb.if_then(next.clone().lt(Expr::Const(steps_i)), |kb| {
                    fetch(kb, next, (p + STAGES - 1) % STAGES)
                })?;
                kb.async_commit();
                compute(kb, p)
            })?;
        }
        Ok(())
    })?;
    let c_base = Expr::Var(bm)
        .times(Expr::Const(tm * ni))
        .plus(Expr::Var(bn).times(Expr::Const(tn)));
    kb.window(gc, c_base, TILE_N, |kb| {
        kb.copy(cta(), &c_g, &acc)?;
        Ok(())
    })?;
    Ok(Gemm {
        kernel: kb.build()?,
        a_bytes: a_n * eb,
        b_bytes: b_n * eb,
        c_bytes: c_n * 4,
        grid,
    })
}

/// `C = A·B` in f64: `a` is `[M, K]` row-major, `b` is B column-major (`[N, K]` row-major, as
/// [`gemm_kernel`]'s `b`; transpose a row-major B first), the result `[M, N]` row-major.
pub fn gemm_reference(m: u64, n: u64, k: u64, a: &[f64], b: &[f64]) -> Result<Vec<f64>> {
    let size = |x: u64, y: u64| {
        x.checked_mul(y)
            .and_then(|v| usize::try_from(v).ok())
            .ok_or_else(|| overflow("sizing the reference"))
    };
    let (an, bn, cn) = (size(m, k)?, size(n, k)?, size(m, n)?);
    if a.len() != an || b.len() != bn {
        return Err(KernelError::Invalid(format!(
            "gemm reference {m}×{n}×{k}: A needs {an} values and B {bn}; {} and {} were given",
            a.len(),
            b.len()
        )));
    }
    let (n, k) = (n as usize, k as usize);
    let mut c = Vec::with_capacity(cn);
    for i in 0..m as usize {
        for j in 0..n {
            let ar = &a[i * k..(i + 1) * k];
            let br = &b[j * k..(j + 1) * k];
            c.push(ar.iter().zip(br).map(|(x, y)| x * y).sum());
        }
    }
    Ok(c)
}
