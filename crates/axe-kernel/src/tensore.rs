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
//! **`gemm.tensore`** lowers `gemm(c, a, b)` (`c[i,j] += Σ_k a[i,k]·b[k,j]`, f32) as Appendix H says:
//! 1. *Group* each layout by its shape (`group`): A's `[M, K]`, B's `[K, N]`, C's `[M, N]`, one block
//!    of iters per logical dimension.
//! 2. *K intersection*: the common refinement of A's and B's K iters (each iter split until both
//!    lists have the same extents; none exists when an extent of one neither divides nor is divided by
//!    the other's), then fused where both chain. A sub-iter on `P` with stride 1 in both A and B can
//!    feed the array's rows.
//! 3. *MN intersection*: the same for M (on `F` in A with a positive stride, on `P` with stride 1 in
//!    C) and for N (on `F` with positive strides in B and C).
//! 4. *Finalize*: in each dimension the instruction takes the largest divisor of a qualifying
//!    sub-iter's extent within the hardware bound (the largest over the qualifying sub-iters); the
//!    remaining iters become the loop nest — for each dimension, `size / (tile·step)` outer tiles and
//!    `step` interleaved ones, where `step` is the logical distance between the tile's elements (the
//!    product of the extents inside the chosen sub-iter). M and N loops are outside, K innermost.
//!
//! The tile is the largest legal one: a tile along a dimension is an arithmetic progression of
//! logical indices whose translates tile the dimension, and it is legal when every translate maps to
//! consecutive partitions (or a constant-step run of the free axis) as the instruction needs
//! (`tests/tensore_props.rs` checks this against brute force). Every instruction accumulates its
//! products in ascending `k` into f32.

use axe_layout::{Axis, Iter, Layout};

use crate::desc::{space_name, Buffer, Call, Kernel, Op, Space, Tensor};
use crate::dispatch::{Ctx, Outcome, Target, Variant};
use crate::dtype::DType;
use crate::error::{overflow, KernelError, Result};
use crate::expr::{BinOp, Expr, Var};
use crate::ir::LStmt;

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

/// A logical dimension's instruction tile and loop nest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimPlan {
    /// `M`, `N` or `K`.
    pub name: &'static str,
    /// The dimension's extent.
    pub size: u64,
    /// The instruction's extent along it.
    pub tile: u64,
    /// The logical distance between the tile's consecutive elements.
    pub step: u64,
    /// The chosen sub-iter in the first and the second operand (full extent, before the tile).
    pub chosen: (Iter, Iter),
    /// The two operands' intersected iters, outer to inner.
    pub joint: Vec<(Iter, Iter)>,
}

impl DimPlan {
    /// Tiles of `tile·step` consecutive indices (the outer loop).
    pub fn outer(&self) -> u64 {
        self.size / (self.tile * self.step)
    }
}

/// The TensorE schedule of a gemm: one instruction shape and its loop nest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// M: A's free axis, C's partitions (operands A, C).
    pub m: DimPlan,
    /// N: the free axis of B and C (operands B, C).
    pub n: DimPlan,
    /// K: the partitions of A and B (operands A, B).
    pub k: DimPlan,
}

fn show(iters: &[Iter]) -> String {
    if iters.is_empty() {
        return "(1)".into();
    }
    let parts: Vec<String> = iters
        .iter()
        .map(|i| format!("{}:{}@{}", i.extent(), i.stride(), i.axis()))
        .collect();
    format!("({})", parts.join(", "))
}

fn split(it: &Iter, inner: u64) -> Result<(Iter, Iter)> {
    let stride = it
        .stride()
        .checked_mul(inner as i64)
        .ok_or_else(|| overflow("splitting an iter"))?;
    let err = || crate::error::layout("splitting an iter");
    Ok((
        Iter::new(it.extent() / inner, stride, it.axis().clone()).map_err(err())?,
        Iter::new(inner, it.stride(), it.axis().clone()).map_err(err())?,
    ))
}

/// The common refinement of two factorizations of one extent (outer to inner), fused where both
/// chain; `Ok(Err(why))` when none exists.
pub fn intersect(x: &[Iter], y: &[Iter]) -> Result<std::result::Result<Vec<(Iter, Iter)>, String>> {
    let mut xs: Vec<Iter> = x.iter().filter(|i| i.extent() > 1).cloned().collect();
    let mut ys: Vec<Iter> = y.iter().filter(|i| i.extent() > 1).cloned().collect();
    let mut out: Vec<(Iter, Iter)> = Vec::new();
    while let (Some(a), Some(b)) = (xs.pop(), ys.pop()) {
        let (ea, eb) = (a.extent(), b.extent());
        if ea == eb {
            out.push((a, b));
        } else if eb.is_multiple_of(ea) {
            let (outer, inner) = split(&b, ea)?;
            out.push((a, inner));
            ys.push(outer);
        } else if ea.is_multiple_of(eb) {
            let (outer, inner) = split(&a, eb)?;
            out.push((inner, b));
            xs.push(outer);
        } else {
            return Ok(Err(format!(
                "{} and {} have no common factorization (extents {ea} and {eb})",
                show(x),
                show(y)
            )));
        }
    }
    // Inner to outer so far; fuse an outer pair into the inner one when both sides chain.
    let mut fused: Vec<(Iter, Iter)> = Vec::new();
    for (a, b) in out {
        let chains = |inner: &Iter, outer: &Iter| {
            inner.axis() == outer.axis()
                && inner.stride().checked_mul(inner.extent() as i64) == Some(outer.stride())
        };
        if let Some((ia, ib)) = fused.last() {
            if chains(ia, &a) && chains(ib, &b) {
                let e = ia.extent() * a.extent();
                let err = || crate::error::layout("fusing iters");
                let na = Iter::new(e, ia.stride(), ia.axis().clone()).map_err(err())?;
                let nb = Iter::new(e, ib.stride(), ib.axis().clone()).map_err(err())?;
                let last = fused.len() - 1;
                fused[last] = (na, nb);
                continue;
            }
        }
        fused.push((a, b));
    }
    fused.reverse();
    Ok(Ok(fused))
}

/// The largest divisor of `e` that is at most `limit`.
pub fn largest_divisor(e: u64, limit: u64) -> u64 {
    (1..=limit.min(e))
        .rev()
        .find(|d| e.is_multiple_of(*d))
        .unwrap_or(1)
}

fn consecutive_partitions(i: &Iter) -> bool {
    i.axis().name() == "P" && i.stride() == 1
}

fn free_run(i: &Iter) -> bool {
    i.axis().name() == "F" && i.stride() >= 1
}

type Rule = fn(&Iter) -> bool;

/// One dimension: intersect, keep the sub-iters both rules accept, take the largest tile.
fn dim(
    name: &'static str,
    (first, second): (&str, &str),
    (x, y): (&[Iter], &[Iter]),
    (rx, ry): (Rule, Rule),
    need: &str,
    limit: u64,
) -> Result<std::result::Result<DimPlan, String>> {
    let size: u64 = x.iter().map(Iter::extent).product();
    let joint = match intersect(x, y)? {
        Ok(j) => j,
        Err(why) => return Ok(Err(format!("{name} of {first} and {second}: {why}"))),
    };
    let mut best: Option<(u64, usize)> = None;
    for (at, (a, b)) in joint.iter().enumerate().rev() {
        if rx(a) && ry(b) {
            let t = largest_divisor(a.extent(), limit);
            if best.is_none_or(|(bt, _)| t > bt) {
                best = Some((t, at));
            }
        }
    }
    let Some((tile, at)) = best else {
        return Ok(Err(format!(
            "{name} is not {need}: {first}'s {name} is {}, {second}'s is {}",
            show(x),
            show(y)
        )));
    };
    let step = joint[at + 1..].iter().map(|(a, _)| a.extent()).product();
    Ok(Ok(DimPlan {
        name,
        size,
        tile,
        step,
        chosen: joint[at].clone(),
        joint,
    }))
}

/// Appendix H's dispatch of `c += a·b` (`a: [M, K]`, `b: [K, N]`, `c: [M, N]`) onto TensorE: the
/// instruction shape and loop nest, or why there is none.
pub fn plan(c: &Tensor, a: &Tensor, b: &Tensor) -> Result<std::result::Result<Plan, String>> {
    for (role, t, want) in [
        ("A", a, Space::Sbuf),
        ("B", b, Space::Sbuf),
        ("C", c, Space::Psum),
    ] {
        if t.space != want {
            return Ok(Err(format!(
                "{role} {} is in {} memory; TensorE reads A and B from SBUF and accumulates C in PSUM",
                t.name,
                space_name(t.space)
            )));
        }
        if !t.layout.replica().is_empty() {
            return Ok(Err(format!(
                "{role} {} has replicas ({}); a TensorE tile holds each element once",
                t.name, t.layout
            )));
        }
    }
    let mut groups = Vec::new();
    for (role, t) in [("A", a), ("B", b), ("C", c)] {
        match t.layout.group(&t.shape) {
            Ok(g) => groups.push(g),
            Err(e) => {
                return Ok(Err(format!(
                    "{role} {}'s layout {} does not group by {:?}: {e}",
                    t.name, t.layout, t.shape
                )))
            }
        }
    }
    let (ga, gb, gc) = (&groups[0], &groups[1], &groups[2]);
    let k = match dim(
        "K",
        ("A", "B"),
        (ga.block(1), gb.block(0)),
        (consecutive_partitions, consecutive_partitions),
        "on the partition axis (stride 1) of both A and B",
        MAX_K,
    )? {
        Ok(d) => d,
        Err(why) => return Ok(Err(why)),
    };
    let m = match dim(
        "M",
        ("A", "C"),
        (ga.block(0), gc.block(0)),
        (free_run, consecutive_partitions),
        "on the free axis of A (a positive stride) and the partition axis (stride 1) of C",
        MAX_M,
    )? {
        Ok(d) => d,
        Err(why) => return Ok(Err(why)),
    };
    let n = match dim(
        "N",
        ("B", "C"),
        (gb.block(1), gc.block(1)),
        (free_run, free_run),
        "on the free axis (a positive stride) of both B and C",
        MAX_N,
    )? {
        Ok(d) => d,
        Err(why) => return Ok(Err(why)),
    };
    Ok(Ok(Plan { m, n, k }))
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

/// Loop variable `o·(tile·step) + r` of one dimension, pushing its loops (outer tiles, interleaved
/// tiles) into `loops`.
fn base(d: &DimPlan, ctx: &mut Ctx<'_>, loops: &mut Vec<(Var, u64, String)>) -> Expr {
    let mut e = Expr::Const(0);
    if d.outer() > 1 {
        let v = ctx.var();
        loops.push((
            v,
            d.outer(),
            format!("{}: {} tiles of {}", d.name, d.outer(), d.tile * d.step),
        ));
        e = Expr::Var(v).times(Expr::Const((d.tile * d.step) as i64));
    }
    if d.step > 1 {
        let v = ctx.var();
        loops.push((
            v,
            d.step,
            format!(
                "{}: {} interleaved tiles, elements {} apart",
                d.name, d.step, d.step
            ),
        ));
        e = e.plus(Expr::Var(v));
    }
    e
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
        let bm = base(&p.m, ctx, &mut loops);
        let bn = base(&p.n, ctx, &mut loops);
        let bk = base(&p.k, ctx, &mut loops);
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
            stationary: ap(a, [bm.clone(), bk.clone()], p.m.chosen.0.stride())?,
            moving: ap(b, [bk, bn.clone()], p.n.chosen.0.stride())?,
            psum: ap(c, [bm, bn], p.n.chosen.1.stride())?,
        };
        let mut code = vec![LStmt::Matmul(Box::new(ins))];
        for (var, extent, what) in loops.into_iter().rev() {
            let extent = i64::try_from(extent).map_err(|_| overflow("a loop extent"))?;
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
            "instruction M×N×K = {}×{}×{}: K {} of A and B {}, M {} of A and C {}, N {} of B and C {}; loops: M {}×{}, N {}×{}, K {}×{}",
            p.m.tile,
            p.n.tile,
            p.k.tile,
            p.k.tile,
            pair(&p.k.chosen),
            p.m.tile,
            pair(&p.m.chosen),
            p.n.tile,
            pair(&p.n.chosen),
            p.m.outer(),
            p.m.step,
            p.n.outer(),
            p.n.step,
            p.k.outer(),
            p.k.step
        );
        Ok(Outcome::Lowered { why, code })
    }
}

fn pair((x, y): &(Iter, Iter)) -> String {
    format!(
        "from ({}:{}@{} | {}:{}@{})",
        x.extent(),
        x.stride(),
        x.axis(),
        y.extent(),
        y.stride(),
        y.axis()
    )
}

/// The variants on trn1: `gemm.tensore` and `copy.dma` ([`crate::tensore_dma`]).
pub fn variants() -> Vec<&'static dyn Variant> {
    vec![&GemmTensorE, &crate::tensore_dma::CopyDma]
}
