//! `gemm.mma_sync`: `C += A·B` by warp-wide `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}` when the
//! three register layouts are tiles of the instruction's fragment layouts ([`crate::gemm::atom`]).
//!
//! **Matching.** For each operand `X` of shape `[R, S]` with atom `F` of shape `[r, s]`, dispatch asks
//! [`axe_layout::Layout::tile_of`] for the outer layout `B` with `tile(F, B) = X`: then every `r×s`
//! tile of `X` is the fragment `F`, its registers a whole run of the lane's registers starting at the
//! tile's first element (`span(F)` on `reg` scales `B`), and `B` says on which warp and at which
//! register each tile lives (replicas of `B` on `warp`: several warps hold a copy). If no `B` exists the
//! variant compares the first tile with `F` element by element and names the first element that sits
//! elsewhere.
//!
//! **Schedule.** Every warp of the scope computes the C tiles it holds: for each `k` tile and each of its
//! C tiles `(i, j)`, one mma on C tile `(i, j)`, its own copy of A tile `(i, k)` and of B tile `(k, j)`.
//! C tiles are held once (no replicas). Every warp runs the same code, so every warp's list of
//! (C, A, B) registers must be the same; the variant declines otherwise. The CPU interpreter runs each
//! mma when the whole warp reached it, gathering the fragments by the same layouts, so the variant is
//! registered for the interpreter too.

use axe_layout::Axis;

use crate::desc::{Call, Tensor};
use crate::dispatch::{Ctx, Outcome, Variant};
use crate::dtype::DType;
use crate::error::{layout, Result};
use crate::expr::Expr;
use crate::gemm::{atom, fragment, operands, scope_warps, Operand};
use crate::ir::{Access, LStmt};
use crate::spread::workers;

/// Each tile's copies: (warp, register of its first element).
type Tiles = Vec<Vec<(i64, i64)>>;

/// Where each `op` tile of `t` lives, or why `t` is not a tiling of the `op` fragment.
pub fn fragment_tiles(
    t: &Tensor,
    op: Operand,
    warps: u32,
) -> Result<std::result::Result<Tiles, String>> {
    let [r, s] = op.shape();
    let (name, sh) = (op.name(), &t.shape);
    if sh.len() != 2 || !sh[0].is_multiple_of(r) || !sh[1].is_multiple_of(s) {
        return Ok(Err(format!(
            "{name} {} has shape {sh:?}; the m16n8k16 {name} fragment tiles it in {r}×{s} pieces",
            t.name
        )));
    }
    let f = atom(op)?;
    if t.layout.tile_of(&f, sh, &[r, s]).is_err() {
        return Ok(Err(mismatch(t, op)?));
    }
    let ax = |n: &str| Axis::new(n).map_err(layout(n));
    let (reg, lane, warp) = (ax("reg")?, ax("lane")?, ax("warp")?);
    let (tr, ts) = (sh[0] / r, sh[1] / s);
    let mut tiles = Vec::with_capacity((tr * ts) as usize);
    for i in 0..tr {
        for j in 0..ts {
            let cs = t
                .layout
                .apply_multi(&[i * r, j * s], sh)
                .map_err(layout(format!("tensor {}", t.name)))?;
            let mut v = Vec::with_capacity(cs.len());
            for c in cs {
                let (l, w) = (c.get(&lane), c.get(&warp));
                if l != 0 || !(0..i64::from(warps)).contains(&w) {
                    return Ok(Err(format!(
                        "{name} {}'s tile ({i}, {j}) starts on lane {l} of warp {w}; a fragment starts on lane 0, and the scope has {warps} warps",
                        t.name
                    )));
                }
                if c.get(&reg) % 2 != 0 {
                    return Ok(Err(format!(
                        "{name} {}'s tile ({i}, {j}) starts at register {}; mma.sync takes pairs of 16-bit elements from 32-bit registers, so it must be even",
                        t.name,
                        c.get(&reg)
                    )));
                }
                v.push((w, c.get(&reg)));
            }
            tiles.push(v);
        }
    }
    Ok(Ok(tiles))
}

/// The first element of `t`'s first tile that is not where the `op` fragment puts it.
fn mismatch(t: &Tensor, op: Operand) -> Result<String> {
    let [_, s] = op.shape();
    let ax = |n: &str| Axis::new(n).map_err(layout(n));
    let (reg, lane) = (ax("reg")?, ax("lane")?);
    let name = op.name();
    let at = |x: usize| -> Result<(i64, i64)> {
        let (i, j) = (x as u64 / s, x as u64 % s);
        let c = t
            .layout
            .apply_multi(&[i, j], &t.shape)
            .map_err(layout(format!("tensor {}", t.name)))?;
        Ok(c.first().map_or((0, 0), |c| (c.get(&reg), c.get(&lane))))
    };
    let (r0, _) = at(0)?;
    for (x, fr, fl) in fragment(op)? {
        let (tr, tl) = at(x)?;
        if (tr - r0, tl) != (fr, fl) {
            let (i, j) = (x as u64 / s, x as u64 % s);
            return Ok(format!(
                "{name}'s register layout is not the m16n8k16 {name} fragment: element ({i}, {j}) sits on lane {tl} at register +{}, the fragment puts it on lane {fl} at register +{fr}",
                tr - r0
            ));
        }
    }
    Ok(format!(
        "{name}'s first tile is the m16n8k16 {name} fragment, but the layout does not repeat it over whole runs of {} registers",
        op.regs()
    ))
}

struct MmaSync;

impl Variant for MmaSync {
    fn name(&self) -> &'static str {
        "gemm.mma_sync"
    }
    fn op(&self) -> &'static str {
        "gemm"
    }
    fn priority(&self) -> i32 {
        10
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let no = |m: String| Ok(Outcome::Declined(m));
        let [c, a, b] = match operands(call) {
            Ok(t) => t,
            Err(r) => return no(r),
        };
        if !matches!(a.dtype, DType::F16 | DType::BF16) {
            return no(format!(
                "mma.sync m16n8k16 multiplies f16 or bf16; A {} is {}",
                a.name, a.dtype
            ));
        }
        let warps =
            match scope_warps(call, ctx) {
                Ok(0) => return no(
                    "mma.sync is a warp-wide instruction; a gemm at thread scope has one thread"
                        .into(),
                ),
                Ok(w) => w,
                Err(r) => return no(r),
            };
        let w = match workers(&call.scope, ctx) {
            Ok(w) => w,
            Err(r) => return no(r),
        };
        let mut tiles = Vec::new();
        for (t, op) in [(a, Operand::A), (b, Operand::B), (c, Operand::C)] {
            match fragment_tiles(t, op, warps)? {
                Ok(v) => tiles.push(v),
                Err(r) => return no(r),
            }
        }
        let (mt, nt, kt) = (
            (c.shape[0] / 16) as usize,
            (c.shape[1] / 8) as usize,
            (a.shape[1] / 16) as usize,
        );
        if let Some(x) = tiles[2].iter().position(|v| v.len() != 1) {
            return no(format!(
                "C {}'s tile ({}, {}) has {} copies; each C tile must be held by one warp",
                c.name,
                x / nt,
                x % nt,
                tiles[2][x].len()
            ));
        }
        let mut first: Vec<(i64, i64, i64)> = Vec::new();
        for wp in 0..i64::from(warps) {
            let mut prog = Vec::new();
            for ki in 0..kt {
                for mi in 0..mt {
                    for ni in 0..nt {
                        let (cw, creg) = tiles[2][mi * nt + ni][0];
                        if cw != wp {
                            continue;
                        }
                        let find = |v: &Vec<(i64, i64)>| v.iter().find(|p| p.0 == wp).map(|p| p.1);
                        let (Some(ar), Some(br)) =
                            (find(&tiles[0][mi * kt + ki]), find(&tiles[1][ki * nt + ni]))
                        else {
                            return no(format!(
                                "warp {wp} holds C tile ({mi}, {ni}) but no copy of A tile ({mi}, {ki}) or of B tile ({ki}, {ni})"
                            ));
                        };
                        prog.push((creg, ar, br));
                    }
                }
            }
            if wp == 0 {
                first = prog;
            } else if prog != first {
                return no(format!(
                    "warp {wp}'s tiles sit in other registers than warp 0's; every warp runs the same code"
                ));
            }
        }
        if first.is_empty() {
            return no(format!("warp 0 holds no tile of C {}", c.name));
        }
        let eb = i64::from(a.dtype.bytes());
        let at = |buf: usize, r: i64, bytes: i64| Access {
            buf,
            byte: Expr::Const(r * bytes),
        };
        let mut code: Vec<LStmt> = first
            .iter()
            .map(|&(cr, ar, br)| LStmt::Mma {
                call: call.id,
                dtype: a.dtype,
                c: at(c.buffer.0, cr, 4),
                a: at(a.buffer.0, ar, eb),
                b: at(b.buffer.0, br, eb),
            })
            .collect();
        let n = code.len();
        if let Some(g) = w.guard {
            code = vec![LStmt::If {
                cond: g,
                body: code,
            }];
        }
        let why = format!(
            "A, B and C are tiles of the m16n8k16 fragments ({mt}×{kt} A, {kt}×{nt} B, {mt}×{nt} C atoms over {warps} warp(s)): {n} mma.sync per warp"
        );
        Ok(Outcome::Lowered { why, code })
    }
}

static VARIANTS: [MmaSync; 1] = [MmaSync];

/// The mma variants.
pub fn variants() -> Vec<&'static dyn Variant> {
    VARIANTS.iter().map(|v| v as &'static dyn Variant).collect()
}
