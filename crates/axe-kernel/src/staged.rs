//! `copy.staged`: a global → global copy whose two layouts are contiguous along different dimensions
//! (a transpose), through a shared-memory tile, with vectors on both sides.
//!
//! Let `a` be the dimension the source is contiguous along and `b` the destination's. The logical
//! shape is cut into tiles of `T_a × T_b` (every other dimension 1). Splitting `a` into `(S_a/T_a, T_a)`
//! and `b` likewise keeps each layout's map (row-major flattening is unchanged), so `group` gives each
//! split dimension its iters; putting the tile-grid dimensions first and the two tile dimensions last
//! (the source with `a` innermost, the destination with `b` innermost) gives, for each side, a layout
//! whose flat index is `tile · T_a·T_b + position in the tile`. Within a tile each side's iters are put
//! in that side's memory order (by stride), so a vector is the longest aligned run of memory whatever
//! dimensions it spans: a bf16 `T(8,128)(2,1)` tile's 16-byte vector is 2 rows × 4 columns. Each CTA
//! takes tiles in turn: its threads load source vectors and place their elements in a shared tile stored
//! `a`-contiguous (one vector store when the vector runs along `a`; rows padded by one vector against
//! bank conflicts), synchronise, gather destination vectors element by element into registers, store
//! them, and synchronise again. Tiles are as large as divides the shape, up to 16 KiB.

use axe_layout::{Iter, Layout};

use crate::copy::widest;
use crate::desc::{Buffer, Call, Op, Space, Tensor};
use crate::dispatch::{Ctx, Outcome, Variant};
use crate::error::{layout, Result};
use crate::expr::Expr;
use crate::ir::{Access, LStmt};
use crate::scope::Level;
use crate::spread::{chunk_offset, to_i64};

/// The dimension whose block holds the layout's stride-1 innermost iter, if any.
fn contiguous_dim(t: &Tensor) -> Result<Option<usize>> {
    let g = t
        .layout
        .group(&t.shape)
        .map_err(layout(format!("grouping tensor {}", t.name)))?;
    Ok((0..t.shape.len()).find(|&i| {
        g.block(i)
            .last()
            .is_some_and(|it| it.stride() == 1 && it.extent() > 1)
    }))
}

/// One iter of a tile in a layout: on the tile's `a` dimension or its `b`, its extent, its radix in that
/// dimension (the logical step of one digit), and its memory stride.
#[derive(Debug, Clone, Copy)]
struct TileIter {
    on_a: bool,
    extent: u64,
    radix: u64,
    stride: i64,
}

/// `t` seen over `(grid..., tile in memory order)`: tiles of `ta` along `a` and `tb` along `b`, the
/// tile's iters sorted by stride (innermost last), and those iters innermost first. `None` when
/// grouping by the split shape fails.
fn memory_view(
    t: &Tensor,
    a: usize,
    b: usize,
    ta: u64,
    tb: u64,
) -> Result<Option<(Tensor, Vec<TileIter>)>> {
    let mut split = Vec::new();
    let mut grid_pos = Vec::new();
    let (mut pos_a, mut pos_b) = (0, 0);
    for (i, &e) in t.shape.iter().enumerate() {
        let tile = if i == a {
            ta
        } else if i == b {
            tb
        } else {
            1
        };
        grid_pos.push(split.len());
        split.push(e / tile);
        if i == a {
            pos_a = split.len();
        }
        if i == b {
            pos_b = split.len();
        }
        split.push(tile);
    }
    let Ok(g) = t.layout.group(&split) else {
        return Ok(None);
    };
    let mut iters: Vec<Iter> = Vec::new();
    for &p in &grid_pos {
        iters.extend_from_slice(g.block(p));
    }
    let mut tile: Vec<(TileIter, Iter)> = Vec::new();
    for (pos, on_a) in [(pos_a, true), (pos_b, false)] {
        let mut radix = 1u64;
        for it in g.block(pos).iter().rev() {
            if it.extent() > 1 {
                tile.push((
                    TileIter {
                        on_a,
                        extent: it.extent(),
                        radix,
                        stride: it.stride(),
                    },
                    *it,
                ));
            }
            radix = radix.saturating_mul(it.extent());
        }
    }
    tile.sort_by_key(|(ti, _)| ti.stride.unsigned_abs());
    iters.extend(tile.iter().rev().map(|(_, it)| *it));
    let l = Layout::new(
        iters,
        t.layout.replica().to_vec(),
        t.layout.offset().clone(),
    )
    .map_err(layout(format!("tiling tensor {}", t.name)))?;
    let view = Tensor {
        layout: l,
        shape: vec![t.size()],
        ..t.clone()
    };
    Ok(Some((view, tile.into_iter().map(|(ti, _)| ti).collect())))
}

/// The shared-tile element offset of element `q` (in memory order) of a tile whose iters, innermost
/// first, are `order`: `outer · row + inner`, where the inner (contiguous) dimension of the shared tile is
/// `a` when `a_inner`, else `b`.
fn tile_offset(order: &[TileIter], q: &Expr, row: i64, a_inner: bool) -> Result<Expr> {
    let (mut inner, mut outer) = (Expr::Const(0), Expr::Const(0));
    let mut below = 1u64;
    for (j, ti) in order.iter().enumerate() {
        let mut d = q.clone().over(Expr::Const(to_i64(below)?));
        if j + 1 < order.len() {
            d = d.modulo(Expr::Const(to_i64(ti.extent)?));
        }
        let term = d.times(Expr::Const(to_i64(ti.radix)?));
        if ti.on_a == a_inner {
            inner = inner.plus(term);
        } else {
            outer = outer.plus(term);
        }
        below = below.saturating_mul(ti.extent);
    }
    Ok(outer.times(Expr::Const(row)).plus(inner))
}

/// The longest run (a power of two dividing `w`) of the first elements in memory order that lie
/// consecutively along the shared tile's inner dimension (`a` when `a_inner`): so many elements move
/// between registers and the shared tile as one access.
fn run_along(order: &[TileIter], w: u64, a_inner: bool) -> u64 {
    let (mut run, mut radix) = (1u64, 1u64);
    for ti in order {
        if ti.on_a != a_inner || ti.radix != radix {
            break;
        }
        run = run.saturating_mul(ti.extent);
        radix = radix.saturating_mul(ti.extent);
    }
    let mut g = 1;
    while g * 2 <= run.min(w) && w.is_multiple_of(g * 2) && run.is_multiple_of(g * 2) {
        g *= 2;
    }
    g
}

/// A tile choice: `T_a`, `T_b`, the source's and destination's vector widths, and each side's view and
/// tile iters in memory order.
type Choice = (
    u64,
    u64,
    u64,
    u64,
    Tensor,
    Vec<TileIter>,
    Tensor,
    Vec<TileIter>,
);

/// Largest shared tile, in bytes.
const TILE_BYTES: u64 = 16 * 1024;

struct Staged;

impl Variant for Staged {
    fn name(&self) -> &'static str {
        "copy.staged"
    }
    fn op(&self) -> &'static str {
        "copy"
    }
    fn priority(&self) -> i32 {
        // After 16-byte direct vectors, before narrower ones.
        12
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let no = |r: String| Ok(Outcome::Declined(r));
        let Op::Copy { dst, src } = &call.op else {
            return no("copy.staged lowers copy only".into());
        };
        if !matches!(call.scope.level, Level::Kernel | Level::Cta) || call.scope.units.is_some() {
            return no(format!(
                "a staged copy runs at kernel or whole-cta scope, not {}",
                call.scope
            ));
        }
        if src.space != Space::Global || dst.space != Space::Global {
            return no("a staged copy goes from global memory to global memory".into());
        }
        let (Some(a), Some(b)) = (contiguous_dim(src)?, contiguous_dim(dst)?) else {
            return no("a layout has no contiguous dimension to vectorise along".into());
        };
        if a == b {
            return no(format!(
                "both layouts are contiguous along dimension {a}: direct vectors apply"
            ));
        }
        let eb = src.dtype.bytes();
        let ebu = u64::from(eb);
        // Every power-of-two tile dividing both dimensions, up to 16 KiB, largest first; the first
        // whose vectors are as wide as any tile gives is used.
        let sides = [128u64, 64, 32, 16, 8, 4, 2];
        let mut cands: Vec<(u64, u64)> = sides
            .iter()
            .flat_map(|&ta| sides.iter().map(move |&tb| (ta, tb)))
            .filter(|&(ta, tb)| {
                src.shape[a].is_multiple_of(ta)
                    && src.shape[b].is_multiple_of(tb)
                    && ta * tb * ebu <= TILE_BYTES
                    && ta * tb >= 16
            })
            .collect();
        cands.sort_by_key(|&(ta, tb)| (std::cmp::Reverse(ta * tb), ta.abs_diff(tb)));
        let mut best: Option<Choice> = None;
        for &(ta, tb) in cands.iter().take(24) {
            let (Some((vs, os)), Some((vd, od))) = (
                memory_view(src, a, b, ta, tb)?,
                memory_view(dst, a, b, ta, tb)?,
            ) else {
                continue;
            };
            let ws = u64::from(widest(&[(&vs, "the source", false)], src.dtype)? / eb);
            let wd = u64::from(widest(&[(&vd, "the destination", true)], dst.dtype)? / eb);
            // Vectors stay inside a tile.
            let (ws, wd) = (ws.min(ta * tb), wd.min(ta * tb));
            let better = best.as_ref().is_none_or(|bst| ws * wd > bst.2 * bst.3);
            if better {
                let full = ws * ebu >= 16 && wd * ebu >= 16;
                best = Some((ta, tb, ws, wd, vs, os, vd, od));
                if full {
                    break;
                }
            }
        }
        let Some((ta, tb, ws, wd, vs, os, vd, od)) = best else {
            return no(format!(
                "no tile of powers of two divides dimensions {a} and {b} ({} and {}) in both layouts",
                src.shape[a], src.shape[b]
            ));
        };
        if ws < 2 && wd < 2 {
            return no(format!(
                "{ta}×{tb} tiles give no vectors wider than one element on either side"
            ));
        }
        if dst.layout.replica_count() > 1 {
            return no("replicated destinations are written by the direct variants".into());
        }
        let threads = i64::from(ctx.kernel.launch.threads);
        let (units, unit) = if call.scope.level == Level::Kernel {
            (i64::from(ctx.kernel.launch.grid), Expr::Cta)
        } else {
            (1, Expr::Const(0))
        };
        let tiles = to_i64(src.size() / (ta * tb))?;
        // The shared tile's contiguous dimension: the one that lets the fewest shared accesses move
        // each element (runs of each side's vectors along it move at once).
        let ops = |a_inner: bool| {
            let (gs, gd) = (run_along(&os, ws, a_inner), run_along(&od, wd, a_inner));
            (ws / gs) * wd + (wd / gd) * ws
        };
        let a_inner = ops(true) <= ops(false);
        let (gs, gd) = (run_along(&os, ws, a_inner), run_along(&od, wd, a_inner));
        // Shared rows: the inner tile side plus one run of padding against bank conflicts (runs stay
        // aligned).
        let (inner_side, outer_side) = if a_inner { (ta, tb) } else { (tb, ta) };
        let pad = gs.max(gd);
        let row = to_i64(inner_side + pad)?;
        let ebi = i64::from(eb);
        let tile = ctx.scratch(Buffer {
            name: format!("_stage{}_tile", ctx.buffers().len()),
            space: Space::Shared(None),
            dtype: src.dtype,
            elems: outer_side * (inner_side + pad),
        });
        let regs = ctx.scratch(Buffer {
            name: format!("_stage{}_regs", ctx.buffers().len()),
            space: Space::Registers,
            dtype: src.dtype,
            elems: ws.max(wd),
        });
        let (round, t) = (ctx.var(), ctx.var());
        let (i1, c1, i2, c2, k) = (ctx.var(), ctx.var(), ctx.var(), ctx.var(), ctx.var());
        let k1 = ctx.var();
        let per = |n: u64| -> Result<(i64, i64)> {
            let n = to_i64(n)?;
            Ok(((n + threads - 1) / threads, n))
        };
        let id = call.id;
        let shared_at = |order: &[TileIter], q: Expr| -> Result<Access> {
            Ok(Access {
                buf: tile,
                byte: tile_offset(order, &q, row, a_inner)?.times(Expr::Const(ebi)),
            })
        };
        // Phase 1: source vectors into the tile, in runs of `gs` elements.
        let (r1, n1) = per(ta * tb / ws)?;
        let c1e = Expr::Var(c1);
        let src_chunk = Expr::Var(t)
            .times(Expr::Const(to_i64(ta * tb / ws)?))
            .plus(c1e.clone());
        let q1 = c1e.times(Expr::Const(to_i64(ws)?));
        let src_at = Access {
            buf: src.buffer.0,
            byte: chunk_offset(&vs, &src_chunk, ws)?.times(Expr::Const(ebi)),
        };
        let load = if gs == ws {
            vec![LStmt::Move {
                call: id,
                dst: shared_at(&os, q1)?,
                src: src_at,
                bytes: (ws as u32) * eb,
            }]
        } else {
            let j = Expr::Var(k1).times(Expr::Const(to_i64(gs)?));
            vec![
                LStmt::Move {
                    call: id,
                    dst: Access {
                        buf: regs,
                        byte: Expr::Const(0),
                    },
                    src: src_at,
                    bytes: (ws as u32) * eb,
                },
                LStmt::For {
                    var: k1,
                    extent: to_i64(ws / gs)?,
                    body: vec![LStmt::Move {
                        call: id,
                        dst: shared_at(&os, q1.plus(j.clone()))?,
                        src: Access {
                            buf: regs,
                            byte: j.times(Expr::Const(ebi)),
                        },
                        bytes: (gs as u32) * eb,
                    }],
                },
            ]
        };
        // Phase 2: destination vectors gathered from the tile in runs of `gd` elements.
        let (r2, n2) = per(ta * tb / wd)?;
        let c2e = Expr::Var(c2);
        let dst_chunk = Expr::Var(t)
            .times(Expr::Const(to_i64(ta * tb / wd)?))
            .plus(c2e.clone());
        let q2 = c2e.times(Expr::Const(to_i64(wd)?));
        let j2 = Expr::Var(k).times(Expr::Const(to_i64(gd)?));
        let gather = LStmt::For {
            var: k,
            extent: to_i64(wd / gd)?,
            body: vec![LStmt::Move {
                call: id,
                dst: Access {
                    buf: regs,
                    byte: j2.clone().times(Expr::Const(ebi)),
                },
                src: shared_at(&od, q2.plus(j2))?,
                bytes: (gd as u32) * eb,
            }],
        };
        let store = LStmt::Move {
            call: id,
            dst: Access {
                buf: dst.buffer.0,
                byte: chunk_offset(&vd, &dst_chunk, wd)?.times(Expr::Const(ebi)),
            },
            src: Access {
                buf: regs,
                byte: Expr::Const(0),
            },
            bytes: (wd as u32) * eb,
        };
        let phase = |i, c, rounds: i64, n: i64, body: Vec<LStmt>| {
            let value = Expr::Var(i).times(Expr::Const(threads)).plus(Expr::Thread);
            LStmt::For {
                var: i,
                extent: rounds,
                body: vec![
                    LStmt::Let { var: c, value },
                    LStmt::If {
                        cond: Expr::Var(c).lt(Expr::Const(n)),
                        body,
                    },
                ],
            }
        };
        let per_tile = vec![
            phase(i1, c1, r1, n1, load),
            LStmt::Barrier,
            phase(i2, c2, r2, n2, vec![gather, store]),
            LStmt::Barrier,
        ];
        let rounds = (tiles + units - 1) / units;
        let code = vec![LStmt::For {
            var: round,
            extent: rounds,
            body: vec![
                LStmt::Let {
                    var: t,
                    value: Expr::Var(round).times(Expr::Const(units)).plus(unit),
                },
                LStmt::If {
                    cond: Expr::Var(t).lt(Expr::Const(tiles)),
                    body: per_tile,
                },
            ],
        }];
        let why = format!(
            "the source is contiguous along dimension {a}, the destination along {b}: {} of {ta}×{tb} through shared memory, {}-byte loads and {}-byte stores",
            crate::dispatch::count(tiles, "tile"),
            ws * u64::from(eb),
            wd * u64::from(eb)
        );
        Ok(Outcome::Lowered { why, code })
    }
}

static VARIANTS: [Staged; 1] = [Staged];

/// The staged copy variants.
pub fn variants() -> Vec<&'static dyn Variant> {
    VARIANTS.iter().map(|v| v as &'static dyn Variant).collect()
}
