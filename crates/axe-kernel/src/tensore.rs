//! Trainium's TensorE: `gemm` on a 128×128 systolic array, dispatched from the operands' Axe layouts
//! (the paper's §3.4 and Appendix H).
//!
//! **Memory.** Trainium 1 (`trn1`, one NeuronCore) keeps tiles in two on-chip memories, each 128
//! partitions (axis `P`) by a free dimension (axis `F`): SBUF ([`Space::Sbuf`], 192 KiB a partition)
//! and PSUM ([`Space::Psum`], 16 KiB a partition). A buffer there holds `elems` elements, `elems / 128`
//! in each partition; element `(p, f)` is at `p·(elems/128) + f`.
//!
//! **The instruction** ([`Matmul`], NKI's `nc_matmul`): `C[M, N] += Aᵀ·B` where the stationary tile
//! `A[K, M]` and the moving tile `B[K, N]` are in SBUF with K on `K` consecutive partitions (the same
//! partition holds the same `k` in both) and M, N along the free axis (each a run with a constant
//! step ≥ 1), and `C` is in PSUM with M on `M` consecutive partitions and N along the free axis.
//! `K ≤ 128`, `M ≤ 128` (the array's rows and columns), `N ≤ 512` (f32 in a 2 KiB PSUM bank). The
//! paper's Appendix H writes the bound as "128x128x512 (MxNxK)"; K sits on the partitions, so it is at
//! most 128, and the 512 belongs to the moving operand's free size N.
//!
//! **`gemm.tensore`** lowers `gemm(c, a, b)` (`c[i,j] += Σ_k a[i,k]·b[k,j]`, f32) as Appendix H says
//! ([`plan`], in `tensore_plan`):
//! 1. *Group* each layout by its shape (`group`): A's `[M, K]`, B's `[K, N]`, C's `[M, N]`, one block
//!    of iters per logical dimension.
//! 2. *K intersection*: A's and B's K iters refined to common digits of the logical index ([`Part`]s:
//!    one iter of each operand, or a span only a loop can cover); the parts on `P` in both can feed
//!    the array's rows.
//! 3. *MN intersection*: the same for M (on `F` in A with a positive stride, on `P` in C) and for N
//!    (on `F` with positive strides in B and C).
//! 4. *Finalize*: in each dimension the instruction takes the longest chain of shared parts whose
//!    strides grow by the extents before them (one iter in each operand, stride 1 on a partition
//!    axis), the last cut to a divisor within the bound; every other part is a loop (M and N outside,
//!    K inside), the tile's base index the sum of the loop variables times their logical weights.
//!
//! The tile is the largest legal one: a set of logical indices, position `i` at `x0 + i·sX` in one
//! operand and `y0 + i·sY` in the other, whose translates cover the dimension, each mapping the same
//! way (`tests/tensore_props.rs` checks this against brute force over the layouts' maps). Every
//! instruction accumulates its products in ascending `k` into f32.

use axe_layout::{Axis, Layout};

use crate::desc::{space_name, Buffer, Call, Kernel, Op, Space, Tensor};
use crate::dispatch::{Ctx, Outcome, Target, Variant};
use crate::dtype::DType;
use crate::error::{overflow, KernelError, Result};
use crate::expr::{BinOp, Expr, Var};
use crate::ir::LStmt;
pub use crate::tensore_plan::{intersect, largest_divisor, plan, DimPlan, Part, Plan};

/// Partitions of SBUF and PSUM.
pub const PARTITIONS: u64 = 128;
/// Bytes of one SBUF partition on trn1.
pub const SBUF_PARTITION_BYTES: u64 = 192 * 1024;
/// Bytes of one PSUM partition on trn1.
pub const PSUM_PARTITION_BYTES: u64 = 16 * 1024;
/// The largest instruction M (PSUM partitions written; the stationary tile's free size).
pub const MAX_M: u64 = 128;
/// The largest instruction N (the moving tile's free size; f32 in one PSUM bank).
pub const MAX_N: u64 = 512;
/// The largest instruction K (the partitions both input tiles span).
pub const MAX_K: u64 = 128;

/// A tile in SBUF or PSUM: partitions `partition .. partition + rows` (consecutive) by free elements
/// `free + j·free_step` for `j` below the tile's columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ap {
    /// The buffer's index.
    pub buf: usize,
    /// The first partition.
    pub partition: Expr,
    /// The first free element.
    pub free: Expr,
    /// Elements between consecutive columns on the free axis (≥ 1).
    pub free_step: i64,
}

/// One TensorE matrix multiply (NKI `nc_matmul`): for `i < m`, `j < n`,
/// `psum[i, j] += Σ_{q<k} stationary[q, i]·moving[q, j]`, in f32, `q` ascending; `stationary` is
/// `k` partitions by `m` columns, `moving` `k` by `n`, `psum` `m` by `n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matmul {
    /// The call it lowers.
    pub call: usize,
    /// The inputs' dtype (f16, bf16 or f32).
    pub dtype: DType,
    /// Rows of the result (≤ 128).
    pub m: u32,
    /// Columns of the result (≤ 512).
    pub n: u32,
    /// The contraction (≤ 128 partitions).
    pub k: u32,
    /// A: `k × m` in SBUF.
    pub stationary: Ap,
    /// B: `k × n` in SBUF.
    pub moving: Ap,
    /// C: `m × n` f32 in PSUM.
    pub psum: Ap,
}

/// Checks a buffer in SBUF or PSUM holds whole partitions.
pub(crate) fn check_partitioned(name: &str, space: Space, elems: u64) -> Result<()> {
    if matches!(space, Space::Sbuf | Space::Psum) && !elems.is_multiple_of(PARTITIONS) {
        return Err(KernelError::Invalid(format!(
            "buffer {name} in {} has {elems} elements; it spans all {PARTITIONS} partitions, so a multiple of {PARTITIONS} is needed",
            space_name(space)
        )));
    }
    Ok(())
}

/// Elements of one partition of a buffer in SBUF or PSUM.
pub fn free_size(b: &Buffer) -> u64 {
    b.elems / PARTITIONS
}

/// Checks a tensor in SBUF or PSUM stays within the partitions and the free size.
pub(crate) fn check_bounds(name: &str, b: &Buffer, layout: &Layout) -> Result<()> {
    for (axis, limit) in [("P", PARTITIONS), ("F", free_size(b))] {
        let ax = Axis::new(axis).map_err(crate::error::layout(axis))?;
        let (lo, hi) = crate::desc::extent_on(layout, &ax)?;
        if lo < 0 || hi >= limit as i64 {
            return Err(KernelError::Invalid(format!(
                "tensor {name}: its layout {layout} reaches {axis} {lo}..={hi}, outside buffer {} ({}: {PARTITIONS} partitions of {} elements)",
                b.name,
                space_name(b.space),
                free_size(b)
            )));
        }
    }
    Ok(())
}

/// Checks the kernel's buffers suit `target`: SBUF and PSUM only on trn1, within their capacity; on
/// trn1 no shared memory or registers, and one program (a grid of one CTA).
pub(crate) fn check_program(kernel: &Kernel, target: Target) -> Result<()> {
    for b in &kernel.buffers {
        let trn = matches!(b.space, Space::Sbuf | Space::Psum);
        if trn != (target == Target::Trn1) && b.space != Space::Global {
            return Err(KernelError::Invalid(format!(
                "buffer {} is in {} memory, which {target} does not have{}",
                b.name,
                space_name(b.space),
                if trn {
                    " (SBUF and PSUM are trn1's)"
                } else {
                    " (trn1 keeps tiles in SBUF and PSUM)"
                }
            )));
        }
        let cap = match b.space {
            Space::Sbuf => SBUF_PARTITION_BYTES,
            Space::Psum => PSUM_PARTITION_BYTES,
            _ => continue,
        };
        let per = free_size(b)
            .checked_mul(u64::from(b.dtype.bytes()))
            .ok_or_else(|| overflow("sizing a partition"))?;
        if per > cap {
            return Err(KernelError::Invalid(format!(
                "buffer {} needs {per} bytes in each {} partition; trn1 has {cap}",
                b.name,
                space_name(b.space)
            )));
        }
    }
    if target == Target::Trn1 && kernel.launch.grid != 1 {
        return Err(KernelError::Invalid(format!(
            "kernel {}: trn1 runs one program on one NeuronCore, but the launch has a grid of {}",
            kernel.name, kernel.launch.grid
        )));
    }
    Ok(())
}

/// Where logical index `idx` (one expression per dimension, over loop variables of the extents in
/// `ranges`) of `t` lives: `(P, F)` in SBUF or PSUM, `(0, m)` in global memory. The layout's replicas
/// are not included (its base copy). The expressions are simplified by the variables' ranges.
pub(crate) fn place(t: &Tensor, idx: &[Expr], ranges: &[(Var, u64)]) -> Result<(Expr, Expr)> {
    let g = t
        .layout
        .group(&t.shape)
        .map_err(crate::error::layout(format!("tensor {}", t.name)))?;
    let (pa, fa) = if matches!(t.space, Space::Sbuf | Space::Psum) {
        ("P", "F")
    } else {
        ("", "m")
    };
    let off = t.layout.offset();
    let at = |name: &str| -> Result<i64> {
        if name.is_empty() {
            return Ok(0);
        }
        Ok(off.get(&Axis::new(name).map_err(crate::error::layout(name))?))
    };
    let (mut p, mut f) = (Expr::Const(at(pa)?), Expr::Const(at(fa)?));
    for (d, x) in idx.iter().enumerate() {
        let mut inner: u64 = 1;
        for it in g.block(d).iter().rev() {
            let digit = simplify(
                &x.clone()
                    .over(Expr::Const(inner as i64))
                    .modulo(Expr::Const(it.extent() as i64)),
                ranges,
            );
            let term = digit.times(Expr::Const(it.stride()));
            if it.axis().name() == pa {
                p = p.plus(term);
            } else {
                f = f.plus(term);
            }
            inner = inner
                .checked_mul(it.extent())
                .ok_or_else(|| overflow("addressing a tensor"))?;
        }
    }
    Ok((p, f))
}

/// The range `[lo, hi]` of `e` when its variables lie in `ranges` (`0..extent`); `None` if unknown.
fn range_of(e: &Expr, ranges: &[(Var, u64)]) -> Option<(i64, i64)> {
    match e {
        Expr::Const(c) => Some((*c, *c)),
        Expr::Var(v) => ranges
            .iter()
            .find(|(w, _)| w == v)
            .map(|(_, n)| (0, *n as i64 - 1)),
        Expr::Bin(op, a, b) => {
            let (x, y) = (range_of(a, ranges)?, range_of(b, ranges)?);
            match op {
                BinOp::Add => Some((x.0.checked_add(y.0)?, x.1.checked_add(y.1)?)),
                BinOp::Mul if x.0 >= 0 && y.0 >= 0 => {
                    Some((x.0.checked_mul(y.0)?, x.1.checked_mul(y.1)?))
                }
                BinOp::Div if x.0 >= 0 && y.0 > 0 => Some((x.0 / y.1, x.1 / y.0)),
                BinOp::Rem if x.0 >= 0 && y.0 > 0 => Some((0, x.1.min(y.1 - 1))),
                _ => None,
            }
        }
        Expr::Thread | Expr::Cta => None,
    }
}

/// `e` with divisions and remainders by constants removed where the ranges of `ranges` decide them:
/// `x / c = 0` and `x % c = x` for `0 ≤ x < c`; `(x·k) / c = x·(k/c)` and `(x·k) % c = 0` for `c | k`.
pub(crate) fn simplify(e: &Expr, ranges: &[(Var, u64)]) -> Expr {
    let Expr::Bin(op, a, b) = e else {
        return e.clone();
    };
    let (a, b) = (simplify(a, ranges), simplify(b, ranges));
    if let (BinOp::Div | BinOp::Rem, Expr::Const(c)) = (op, &b) {
        let c = *c;
        let below = range_of(&a, ranges).is_some_and(|(lo, hi)| c > 0 && lo >= 0 && hi < c);
        if below {
            return if *op == BinOp::Div { Expr::Const(0) } else { a };
        }
        if let Expr::Bin(BinOp::Mul, x, k) = &a {
            if let Expr::Const(k) = **k {
                if c > 0 && k % c == 0 {
                    return if *op == BinOp::Div {
                        (**x).clone().times(Expr::Const(k / c))
                    } else {
                        Expr::Const(0)
                    };
                }
            }
        }
    }
    Expr::bin(*op, a, b)
}

/// The byte of element `(p, f)` of a tensor's buffer (`f` alone for global memory).
pub(crate) fn byte_of(t: &Tensor, free: u64, (p, f): (Expr, Expr)) -> Expr {
    let elem = if matches!(t.space, Space::Sbuf | Space::Psum) {
        p.times(Expr::Const(free as i64)).plus(f)
    } else {
        f
    };
    elem.times(Expr::Const(i64::from(t.dtype.bytes())))
}

/// The `gemm.tensore` variant.
pub struct GemmTensorE;

/// The base index `Σ var·weight` of one dimension's tile, pushing its loops into `loops`.
fn base(d: &DimPlan, ctx: &mut Ctx<'_>, loops: &mut Vec<(Var, u64, String)>) -> Result<Expr> {
    let mut e = Expr::Const(0);
    for &(extent, weight) in &d.loops {
        let v = ctx.var();
        loops.push((
            v,
            extent,
            format!("{}: {extent} tiles, {weight} apart in {}", d.name, d.name),
        ));
        let w = i64::try_from(weight).map_err(|_| overflow("computing a loop weight"))?;
        e = e.plus(Expr::Var(v).times(Expr::Const(w)));
    }
    Ok(e)
}

impl Variant for GemmTensorE {
    fn name(&self) -> &'static str {
        "gemm.tensore"
    }
    fn op(&self) -> &'static str {
        "gemm"
    }
    fn priority(&self) -> i32 {
        30
    }
    fn targets(&self) -> &'static [Target] {
        &[Target::Trn1]
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let Op::Gemm { c, a, b } = &call.op else {
            return Ok(Outcome::Declined("not a gemm".into()));
        };
        let p = match plan(c, a, b)? {
            Ok(p) => p,
            Err(why) => return Ok(Outcome::Declined(why)),
        };
        let mut loops = Vec::new();
        let bm = base(&p.m, ctx, &mut loops)?;
        let bn = base(&p.n, ctx, &mut loops)?;
        let bk = base(&p.k, ctx, &mut loops)?;
        let ranges: Vec<(Var, u64)> = loops.iter().map(|(v, n, _)| (*v, *n)).collect();
        let ap = |t: &Tensor, idx: [Expr; 2], step: i64| -> Result<Ap> {
            let (partition, free) = place(t, &idx, &ranges)?;
            Ok(Ap {
                buf: t.buffer.0,
                partition,
                free,
                free_step: step,
            })
        };
        let ins = Matmul {
            call: call.id,
            dtype: a.dtype,
            m: p.m.tile as u32,
            n: p.n.tile as u32,
            k: p.k.tile as u32,
            stationary: ap(a, [bm.clone(), bk.clone()], p.m.steps().0)?,
            moving: ap(b, [bk, bn.clone()], p.n.steps().0)?,
            psum: ap(c, [bm, bn], p.n.steps().1)?,
        };
        let mut code = vec![LStmt::Matmul(Box::new(ins))];
        for (var, extent, what) in loops.into_iter().rev() {
            let extent = i64::try_from(extent).map_err(|_| overflow("converting a loop extent"))?;
            code = vec![
                LStmt::Comment(what),
                LStmt::For {
                    var,
                    extent,
                    body: code,
                },
            ];
        }
        let why = format!(
            "instruction M×N×K = {}×{}×{}: K {} of A and B {}, M {} of A and C {}, N {} of B and C {}; {} loops",
            p.m.tile,
            p.n.tile,
            p.k.tile,
            p.k.tile,
            chain(&p.k),
            p.m.tile,
            chain(&p.m),
            p.n.tile,
            chain(&p.n),
            p.m.loops.len() + p.n.loops.len() + p.k.loops.len()
        );
        Ok(Outcome::Lowered { why, code })
    }
}

fn chain(d: &DimPlan) -> String {
    let parts: Vec<String> = d
        .chain
        .iter()
        .map(|(x, y)| {
            format!(
                "{}:{}@{} | {}:{}@{}",
                x.extent(),
                x.stride(),
                x.axis(),
                y.extent(),
                y.stride(),
                y.axis()
            )
        })
        .collect();
    format!("from ({})", parts.join(", "))
}

/// The variants on trn1: `gemm.tensore` and `copy.dma` ([`crate::tensore_dma`]).
pub fn variants() -> Vec<&'static dyn Variant> {
    vec![&GemmTensorE, &crate::tensore_dma::CopyDma]
}
