//! `copy.staged`: a global → global copy whose two layouts are contiguous along different dimensions
//! (a transpose), through a shared-memory tile, with vectors on both sides.
//!
//! Let `a` be the dimension the source is contiguous along and `b` the destination's. The logical
//! shape is cut into tiles of `T_a × T_b` (every other dimension 1). Splitting `a` into `(S_a/T_a, T_a)`
//! and `b` likewise keeps each layout's map (row-major flattening is unchanged), so `group` gives each
//! split dimension its iters; putting the tile-grid dimensions first and the two tile dimensions last
//! (the source with `a` innermost, the destination with `b` innermost) gives, for each side, a layout
//! whose flat index is `tile · T_a·T_b + position in the tile`. Each CTA takes tiles in turn: its threads
//! load source vectors into a shared tile stored `a`-contiguous (rows padded by one vector against bank
//! conflicts), synchronise, gather destination vectors along `b` into registers, store them, and
//! synchronise again.

use axe_layout::{Iter, Layout};

use crate::copy::widest;
use crate::desc::{Buffer, Call, Op, Space, Tensor};
use crate::dispatch::{Ctx, Outcome, Target, Variant};
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

/// `t` seen over `(grid..., T_x, T_y)`: tiles of `ta` along `a` and `tb` along `b`, with `inner` the
/// innermost tile dimension. `None` when grouping by the split shape fails.
fn tile_view(
    t: &Tensor,
    a: usize,
    b: usize,
    ta: u64,
    tb: u64,
    inner: usize,
) -> Result<Option<Tensor>> {
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
    let mut shape = Vec::new();
    for &p in &grid_pos {
        iters.extend_from_slice(g.block(p));
        shape.push(split[p]);
    }
    let (outer, inn) = if inner == a {
        (pos_b, pos_a)
    } else {
        (pos_a, pos_b)
    };
    for p in [outer, inn] {
        iters.extend_from_slice(g.block(p));
        shape.push(split[p]);
    }
    let l = Layout::new(
        iters,
        t.layout.replica().to_vec(),
        t.layout.offset().clone(),
    )
    .map_err(layout(format!("tiling tensor {}", t.name)))?;
    Ok(Some(Tensor {
        layout: l,
        shape: vec![shape.iter().product()],
        ..t.clone()
    }))
}

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
    fn targets(&self) -> &'static [Target] {
        &[Target::Cpu, Target::Sm80, Target::Sm90a]
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
        let pick = |e: u64| [32u64, 16, 8, 4].into_iter().find(|t| e.is_multiple_of(*t));
        let (Some(ta), Some(tb)) = (pick(src.shape[a]), pick(dst.shape[b])) else {
            return no(format!(
                "tiles need dimensions {a} and {b} to be multiples of 4; they are {} and {}",
                src.shape[a], src.shape[b]
            ));
        };
        let (Some(vs), Some(vd)) = (
            tile_view(src, a, b, ta, tb, a)?,
            tile_view(dst, a, b, ta, tb, b)?,
        ) else {
            return no(format!("the layouts do not split into {ta}×{tb} tiles"));
        };
        let ws = widest(&[(&vs, "the source", false)], src.dtype)? / eb;
        let wd = widest(&[(&vd, "the destination", true)], dst.dtype)? / eb;
        if ws < 2 && wd < 2 {
            return no(format!(
                "{ta}×{tb} tiles give no vectors wider than one element on either side"
            ));
        }
        if dst.layout.replica_count() > 1 {
            return no("replicated destinations are written by the direct variants".into());
        }
        // A vector stays inside its tile row (widths and tile sides are powers of two).
        let (ws, wd) = (u64::from(ws).min(ta), u64::from(wd).min(tb));
        let threads = i64::from(ctx.kernel.launch.threads);
        let (units, unit) = if call.scope.level == Level::Kernel {
            (i64::from(ctx.kernel.launch.grid), Expr::Cta)
        } else {
            (1, Expr::Const(0))
        };
        let tiles = to_i64(src.size() / (ta * tb))?;
        let row = to_i64(ta + ws)?; // shared row: T_a elements plus one vector of padding
        let ebi = i64::from(eb);
        let tile = ctx.scratch(Buffer {
            name: format!("_stage{}_tile", ctx.buffers().len()),
            space: Space::Shared(None),
            dtype: src.dtype,
            elems: (tb * (ta + ws)),
        });
        let regs = ctx.scratch(Buffer {
            name: format!("_stage{}_regs", ctx.buffers().len()),
            space: Space::Registers,
            dtype: src.dtype,
            elems: wd,
        });
        let (round, t) = (ctx.var(), ctx.var());
        let (i1, c1, i2, c2, k) = (ctx.var(), ctx.var(), ctx.var(), ctx.var(), ctx.var());
        let per = |n: u64| -> Result<(i64, i64)> {
            let n = to_i64(n)?;
            Ok(((n + threads - 1) / threads, n))
        };
        let id = call.id;
        // Phase 1: source vectors into the tile.
        let (r1, n1) = per(ta * tb / ws)?;
        let c1e = Expr::Var(c1);
        let src_chunk = Expr::Var(t)
            .times(Expr::Const(to_i64(ta * tb / ws)?))
            .plus(c1e.clone());
        let elem1 = c1e.times(Expr::Const(to_i64(ws)?));
        let sh1 = elem1
            .clone()
            .over(Expr::Const(to_i64(ta)?))
            .times(Expr::Const(row))
            .plus(elem1.modulo(Expr::Const(to_i64(ta)?)));
        let load = LStmt::Move {
            call: id,
            dst: Access {
                buf: tile,
                byte: sh1.times(Expr::Const(ebi)),
            },
            src: Access {
                buf: src.buffer.0,
                byte: chunk_offset(&vs, &src_chunk, ws)?.times(Expr::Const(ebi)),
            },
            bytes: (ws as u32) * eb,
        };
        // Phase 2: destination vectors gathered along b.
        let (r2, n2) = per(ta * tb / wd)?;
        let c2e = Expr::Var(c2);
        let dst_chunk = Expr::Var(t)
            .times(Expr::Const(to_i64(ta * tb / wd)?))
            .plus(c2e.clone());
        let elem2 = c2e.times(Expr::Const(to_i64(wd)?));
        let ia = elem2.clone().over(Expr::Const(to_i64(tb)?));
        let ib = elem2.modulo(Expr::Const(to_i64(tb)?)).plus(Expr::Var(k));
        let gather = LStmt::For {
            var: k,
            extent: to_i64(wd)?,
            body: vec![LStmt::Move {
                call: id,
                dst: Access {
                    buf: regs,
                    byte: Expr::Var(k).times(Expr::Const(ebi)),
                },
                src: Access {
                    buf: tile,
                    byte: ib.times(Expr::Const(row)).plus(ia).times(Expr::Const(ebi)),
                },
                bytes: eb,
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
            phase(i1, c1, r1, n1, vec![load]),
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
            "the source is contiguous along dimension {a}, the destination along {b}: {tiles} tiles of {ta}×{tb} through shared memory, {}-byte loads and {}-byte stores",
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
