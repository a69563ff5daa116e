//! Spreading an elementwise operator over the threads of its scope, and addressing tensor elements.
//!
//! The logical elements are cut into chunks of `w` consecutive flat indices (row-major over the shape);
//! chunk `c` goes to participant `c mod n` of the scope's `n` threads, in `ceil(chunks/n)` rounds. The
//! address of a chunk comes from the tensor's canonical layout: flat index `x = c·w` has digits
//! `(x div rad_j) mod e_j` on the canonical iters `(e_j, s_j)`.

use axe_layout::Axis;

use crate::desc::{Space, Tensor};
use crate::dispatch::Ctx;
use crate::error::{layout, overflow, KernelError, Result};
use crate::expr::{BinOp, Expr};
use crate::ir::{Access, LStmt};
use crate::scope::{Level, Scope, WARP, WARPGROUP};

/// Most replica copies a destination may have (each is one more store per element).
pub const MAX_REPLICAS: usize = 64;

/// The threads that run one unit of a scope.
#[derive(Debug, Clone)]
pub struct Workers {
    /// This thread's index among them.
    pub index: Expr,
    /// How many there are.
    pub count: i64,
    /// Whether this thread's unit is selected (`None`: every unit).
    pub guard: Option<Expr>,
}

/// The workers of `scope`, or why a scope is not handled (clusters need distributed shared memory).
pub fn workers(scope: &Scope, ctx: &Ctx<'_>) -> std::result::Result<Workers, String> {
    let threads = i64::from(ctx.kernel.launch.threads);
    let per = |n: u32| Expr::Thread.modulo(Expr::Const(i64::from(n)));
    let (index, count, unit) = match scope.level {
        Level::Kernel => (
            Expr::Cta.times(Expr::Const(threads)).plus(Expr::Thread),
            threads * i64::from(ctx.kernel.launch.grid),
            Expr::Const(0),
        ),
        Level::Cluster => {
            return Err("cluster scope needs distributed shared memory, not lowered yet".into())
        }
        Level::Cta => (Expr::Thread, threads, Expr::Cta),
        Level::Warpgroup => (
            per(WARPGROUP),
            i64::from(WARPGROUP),
            Expr::Thread.over(Expr::Const(i64::from(WARPGROUP))),
        ),
        Level::Warp => (
            per(WARP),
            i64::from(WARP),
            Expr::Thread.over(Expr::Const(i64::from(WARP))),
        ),
        Level::Thread => (Expr::Const(0), 1, Expr::Thread),
    };
    let guard = scope.units.as_ref().map(|r| {
        let lo = Expr::bin(BinOp::Lt, Expr::Const(i64::from(r.start) - 1), unit.clone());
        lo.and(unit.lt(Expr::Const(i64::from(r.end))))
    });
    Ok(Workers {
        index,
        count,
        guard,
    })
}

/// Runs `body(chunk)` for chunks `0..chunks` spread over the scope's workers.
pub fn spread(
    ctx: &mut Ctx<'_>,
    w: &Workers,
    chunks: u64,
    body: impl FnOnce(&mut Ctx<'_>, Expr) -> Result<Vec<LStmt>>,
) -> Result<Vec<LStmt>> {
    let count = u64::try_from(w.count)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| overflow("counting a scope's threads"))?;
    let rounds = i64::try_from(chunks.div_ceil(count)).map_err(|_| overflow("counting rounds"))?;
    let chunks = i64::try_from(chunks).map_err(|_| overflow("counting chunks"))?;
    let c = ctx.var();
    let i = ctx.var();
    let value = Expr::Var(i)
        .times(Expr::Const(w.count))
        .plus(w.index.clone());
    let inner = body(ctx, Expr::Var(c))?;
    let mut round = vec![LStmt::Let { var: c, value }];
    if chunks % w.count == 0 {
        round.extend(inner);
    } else {
        round.push(LStmt::If {
            cond: Expr::Var(c).lt(Expr::Const(chunks)),
            body: inner,
        });
    }
    let looped = if rounds == 1 {
        // One round: the loop variable is 0.
        let mut r = vec![LStmt::Let {
            var: i,
            value: Expr::Const(0),
        }];
        r.extend(round);
        r
    } else {
        vec![LStmt::For {
            var: i,
            extent: rounds,
            body: round,
        }]
    };
    Ok(match &w.guard {
        None => looped,
        Some(g) => vec![LStmt::If {
            cond: g.clone(),
            body: looped,
        }],
    })
}

/// The element offset (on `m`) of the first element of chunk `c` of `w` elements, in the base copy.
/// Requires (checked by the vector predicates) `w` to divide the innermost canonical extent when `w > 1`.
pub fn chunk_offset(t: &Tensor, c: &Expr, w: u64) -> Result<Expr> {
    let canon = t
        .layout
        .canonicalize()
        .map_err(layout(format!("tensor {}", t.name)))?;
    let axis = Axis::memory();
    let mut sum = Expr::Const(canon.offset().get(&axis));
    let shard = canon.shard();
    let mut rad: u64 = 1;
    let w = w.max(1);
    for (j, it) in shard.iter().enumerate().rev() {
        let e = it.extent();
        let digit = if rad.is_multiple_of(w) {
            let d = c.clone().over(Expr::Const(to_i64(rad / w)?));
            if j == 0 {
                d
            } else {
                d.modulo(Expr::Const(to_i64(e)?))
            }
        } else if rad == 1 && e % w == 0 {
            let d = if j == 0 {
                c.clone()
            } else {
                c.clone().modulo(Expr::Const(to_i64(e / w)?))
            };
            d.times(Expr::Const(to_i64(w)?))
        } else {
            return Err(KernelError::Invalid(format!(
                "tensor {}: chunks of {w} do not follow its layout {canon} (a dispatch bug)",
                t.name
            )));
        };
        sum = sum.plus(digit.times(Expr::Const(it.stride())));
        rad = rad
            .checked_mul(e)
            .ok_or_else(|| overflow("addressing a chunk"))?;
    }
    Ok(sum)
}

/// The replica offsets (on `m`) of a destination: every copy must be written.
pub fn replica_offsets(t: &Tensor) -> Result<Vec<i64>> {
    if t.layout.replica_count() > MAX_REPLICAS as u64 {
        return Err(KernelError::TooLarge(format!(
            "tensor {} has {} replicas; at most {MAX_REPLICAS} are written",
            t.name,
            t.layout.replica_count()
        )));
    }
    let pts = t
        .layout
        .replica_points()
        .map_err(layout(format!("tensor {}", t.name)))?;
    Ok(pts.iter().map(|p| p.get(&Axis::memory())).collect())
}

/// The byte access of chunk `c` of tensor `t` (plus `extra` elements, for a replica).
pub fn access(t: &Tensor, c: &Expr, w: u64, extra: i64) -> Result<Access> {
    let elems = chunk_offset(t, c, w)?.plus(Expr::Const(extra));
    let bytes = i64::from(t.dtype.bytes());
    debug_assert!(!matches!(t.space, Space::Registers));
    Ok(Access {
        buf: t.buffer.0,
        byte: elems.times(Expr::Const(bytes)),
    })
}

pub(crate) fn to_i64(v: u64) -> Result<i64> {
    i64::try_from(v).map_err(|_| overflow("converting an extent"))
}
