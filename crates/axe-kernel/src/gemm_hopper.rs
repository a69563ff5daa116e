//! The shipped gemm for Hopper (sm_90a): the copy engine fills a ring of shared stages, two consumer
//! warpgroups multiply out of them with `wgmma`. Same operands and result as [`crate::gemm_kernel`]:
//! `C[M, N] = A[M, K]·B[K, N]`, A row-major, B column-major (`[N, K]` row-major), C f32 row-major,
//! A and B bf16 or f16.
//!
//! **Schedule.** A CTA of 384 threads (3 warpgroups) computes a [`TILE_M`]×[`TILE_N`] tile of C. Its
//! tiles are ordered in groups of up to 16 tile rows, column by column within a group, so the CTAs
//! running at once share A and B tiles in L2. Shared memory holds [`STAGES`] stages, each an A tile
//! `[128, 64]` and a Bᵀ tile `[256, 64]` in 128-byte swizzled rows, with two mbarriers per stage:
//! `full` (the copies landed) and `empty` (both consumers are done with it).
//! - Warpgroup 0 produces: it gives up registers (`setmaxnreg` 40), and its first thread, for each K
//!   step `s` of 64, waits until stage `s mod STAGES` is empty, then has the copy engine fetch the
//!   step's A and Bᵀ boxes into it (`copy_async`, completing on `full`: each copy arrives once, and
//!   the phase completes when both boxes have landed).
//! - Warpgroups 1 and 2 consume: they take registers (`setmaxnreg` 232); each waits for `full`, runs
//!   its `gemm` of rows `64·(w−1)..+64` of the A tile by the whole Bᵀ tile at warpgroup scope
//!   (dispatch picks `gemm.wgmma`: four `m64n256k16`), and arrives on `empty`. At the end each stores
//!   its `[64, 256]` accumulator fragment to C in 8-byte vectors.
//!
//! Every layout is an Axe layout: the stages are row-major tiles of swizzled shared buffers, the
//! accumulator is [`crate::wgmma::accumulator`], and the copies and wgmmas are dispatched from them.

use axe_layout::{Axis, Layout};

use crate::desc::{KernelBuilder, Mbar, Space, Swizzle, Value};
use crate::dtype::DType;
use crate::error::{layout, overflow, Result};
use crate::expr::Expr;
use crate::gemm_kernel::Gemm;
use crate::scope::{Launch, Scope};

/// Rows of C per CTA.
pub const TILE_M: u64 = 128;
/// Columns of C per CTA.
pub const TILE_N: u64 = 256;
/// K per step (one 128-byte swizzled row of 16-bit elements).
pub const TILE_K: u64 = 64;
/// Shared stages.
pub const STAGES: u64 = 4;
/// Threads per CTA: a producer warpgroup and two consumers.
pub const THREADS: u32 = 384;
/// Most tile rows in a group of the CTA order.
pub const GROUP: u64 = 16;

fn mem(e: &[u64], s: &[i64]) -> Result<Layout> {
    Layout::strided(e, s, &vec![Axis::memory(); e.len()]).map_err(layout("a tile"))
}

/// The Hopper gemm kernel for `C[M, N] = A[M, K]·B[K, N]` in `dtype` (bf16 or f16), B column-major; see
/// the module docs. M must be a multiple of 128, N of 256 and K of 64.
pub fn gemm_kernel_hopper(m: u64, n: u64, k: u64, dtype: DType) -> Result<Gemm> {
    let crate::gemm_kernel::Sized {
        grid,
        eb,
        a_n,
        b_n,
        c_n,
    } = crate::gemm_kernel::sized(
        (m, n, k),
        dtype,
        [TILE_M, TILE_N, TILE_K],
        &format!(
            "the Hopper kernel needs M a multiple of {TILE_M}, N of {TILE_N} and K of {TILE_K}"
        ),
    )?;
    let (tiles_m, tiles_n) = (m / TILE_M, n / TILE_N);
    let i = |v: u64| i64::try_from(v).map_err(|_| overflow("converting a gemm extent"));
    let (ki, ni) = (i(k)?, i(n)?);
    let mut kb = KernelBuilder::new(
        "gemm_sm90",
        Launch {
            grid,
            cluster: 1,
            threads: THREADS,
        },
    )?;
    kb.min_ctas_per_sm(1);
    let ga = kb.buffer("a", Space::Global, dtype, a_n)?;
    let gb = kb.buffer("b", Space::Global, dtype, b_n)?;
    let gc = kb.buffer("c", Space::Global, DType::F32, c_n)?;
    let sw = Space::Shared(Some(Swizzle::B128));
    let full = kb.buffer("full", Space::Shared(None), DType::S64, STAGES)?;
    let empty = kb.buffer("empty", Space::Shared(None), DType::S64, STAGES)?;
    let acc_buf = kb.buffer("acc", Space::Registers, DType::F32, TILE_N / 2)?;
    let (am, bm) = ([TILE_M, TILE_K], [TILE_N, TILE_K]);
    let a_g = kb.tensor("A", ga, &am, mem(&am, &[ki, 1])?)?;
    let bt_g = kb.tensor("Bt", gb, &bm, mem(&bm, &[ki, 1])?)?;
    let (mut a_s, mut bt_s, mut b_s) = (Vec::new(), Vec::new(), Vec::new());
    for p in 0..STAGES {
        let sa = kb.buffer(&format!("sa{p}"), sw, dtype, TILE_M * TILE_K)?;
        let sb = kb.buffer(&format!("sb{p}"), sw, dtype, TILE_N * TILE_K)?;
        let tk = TILE_K as i64;
        a_s.push(kb.tensor("A_s", sa, &am, mem(&am, &[tk, 1])?)?);
        bt_s.push(kb.tensor("Bt_s", sb, &bm, mem(&bm, &[tk, 1])?)?);
        let kn = [TILE_K, TILE_N];
        b_s.push(kb.tensor("B_s", sb, &kn, mem(&kn, &[1, tk])?)?);
    }
    let acc = kb.tensor(
        "acc",
        acc_buf,
        &[64, TILE_N],
        crate::wgmma::accumulator(TILE_N)?,
    )?;
    let cn = [64, TILE_N];
    let c_g = kb.tensor("C", gc, &cn, mem(&cn, &[ni, 1])?)?;
    let bar = |b, p: u64| Mbar {
        buffer: b,
        index: p,
    };
    // CTA q → tile (row, column): groups of g tile rows, column-major inside a group.
    let g = (1..=GROUP.min(tiles_m))
        .rev()
        .find(|g| tiles_m.is_multiple_of(*g))
        .unwrap_or(1);
    let (gi, tn) = (i(g)?, i(tiles_n)?);
    let q = Expr::Cta;
    let row = kb.let_(
        q.clone()
            .over(Expr::Const(gi * tn))
            .times(Expr::Const(gi))
            .plus(q.clone().modulo(Expr::Const(gi))),
    );
    let col = kb.let_(q.over(Expr::Const(gi)).modulo(Expr::Const(tn)));
    let wg = kb.let_(Expr::Thread.over(Expr::Const(128)));
    let (tm, tnn, tk) = (TILE_M as i64, TILE_N as i64, TILE_K as i64);
    kb.if_then(Expr::Thread.lt(Expr::Const(1)), |kb| {
        for p in 0..STAGES {
            // The two copies of a step arrive once each.
            kb.mbar_init(bar(full, p), 2)?;
            kb.mbar_init(bar(empty, p), 2 * 128)?;
        }
        kb.mbar_fence_init();
        Ok(())
    })?;
    kb.barrier();
    let steps = k / TILE_K;
    let rounds = steps.div_ceil(STAGES);
    let is = |w: i64| {
        Expr::Var(wg)
            .lt(Expr::Const(w + 1))
            .and(Expr::Const(w - 1).lt(Expr::Var(wg)))
    };
    // The producer.
    kb.if_then(is(0), |kb| {
        kb.max_registers(false, 40)?;
        kb.if_then(Expr::Thread.lt(Expr::Const(1)), |kb| {
            kb.for_loop(rounds, |kb, r| {
                for p in 0..STAGES {
                    let s = Expr::Var(r)
                        .times(Expr::Const(STAGES as i64))
                        .plus(Expr::Const(p as i64));
                    kb.if_then(s.clone().lt(Expr::Const(i(steps)?)), |kb| {
                        kb.if_then(Expr::Const(0).lt(Expr::Var(r)), |kb| {
                            let parity = Expr::Var(r).plus(Expr::Const(1)).modulo(Expr::Const(2));
                            kb.mbar_wait(bar(empty, p), parity)
                        })?;
                        let kofs = s.times(Expr::Const(tk));
                        let a_base = Expr::Var(row)
                            .times(Expr::Const(tm * ki))
                            .plus(kofs.clone());
                        let b_base = Expr::Var(col).times(Expr::Const(tnn * ki)).plus(kofs);
                        let one = || Scope::threads(0..1);
                        kb.window(ga, a_base, TILE_K, |kb| {
                            kb.copy_async(one(), &a_s[p as usize], &a_g, bar(full, p))
                                .map(|_| ())
                        })?;
                        kb.window(gb, b_base, TILE_K, |kb| {
                            kb.copy_async(one(), &bt_s[p as usize], &bt_g, bar(full, p))
                                .map(|_| ())
                        })
                    })?;
                }
                Ok(())
            })
        })
    })?;
    // The consumers.
    kb.if_then(Expr::Const(0).lt(Expr::Var(wg)), |kb| {
        kb.max_registers(true, 232)?;
        let both = || Scope::warpgroups(1..3);
        kb.fill(both(), &acc, Value::Float(0.0))?;
        kb.for_loop(rounds, |kb, r| {
            for p in 0..STAGES {
                let s = Expr::Var(r)
                    .times(Expr::Const(STAGES as i64))
                    .plus(Expr::Const(p as i64));
                kb.if_then(s.lt(Expr::Const(i(steps)?)), |kb| {
                    kb.mbar_wait(bar(full, p), Expr::Var(r).modulo(Expr::Const(2)))?;
                    for c in 0..2u32 {
                        let rows = u64::from(c) * 64..u64::from(c) * 64 + 64;
                        let a = a_s[p as usize].region(&[rows, 0..TILE_K])?;
                        kb.if_then(is(i64::from(c) + 1), |kb| {
                            kb.gemm(Scope::warpgroups(c + 1..c + 2), &acc, &a, &b_s[p as usize])
                                .map(|_| ())
                        })?;
                    }
                    kb.mbar_arrive(bar(empty, p))
                })?;
            }
            Ok(())
        })?;
        let c_base = Expr::Var(row)
            .times(Expr::Const(tm * ni))
            .plus(Expr::Var(col).times(Expr::Const(tnn)))
            .plus(
                Expr::Var(wg)
                    .plus(Expr::Const(-1))
                    .times(Expr::Const(64 * ni)),
            );
        kb.window(gc, c_base, TILE_N, |kb| {
            kb.copy(both(), &c_g, &acc).map(|_| ())
        })
    })?;
    Ok(Gemm {
        kernel: kb.build()?,
        a_bytes: a_n * eb,
        b_bytes: b_n * eb,
        c_bytes: c_n * 4,
        grid,
    })
}
