//! `copy_async`: a global tile copied into shared memory by the copy engine (TMA), completing on an
//! mbarrier.
//!
//! **Law.** `copy_async(dst, src, bar)`: `dst[x] = src[x]` for every logical index `x`; the copy's bytes
//! complete a transaction on `bar` ([`crate::desc::SyncStmt`]), and a thread sees them in `dst` once it
//! has waited for the phase they complete. Until then `dst` must not be read, nor `src` written.
//!
//! **`copy_async.tma`** (sm_90a, and the interpreter) applies when, over `[R, C]`:
//! - `src` is a strided view of a global buffer: element `(i, j)` at `o + i·S + j` (`S` elements per
//!   row, a multiple of 16 bytes, dividing the buffer), no replicas — the buffer read as a row-major
//!   `[elems/S, S]` array is the tensor map, the tensor the box `[R, C]` at its coordinates (a single
//!   row, `R = 1`, reads the buffer as one row of all its elements);
//! - `dst` is a dense row-major tile in shared memory (`(i, j)` at `p + i·C + j`), starting on a whole
//!   swizzle atom; with a swizzle each row is exactly its span (`C·eb` = 32, 64 or 128 bytes), without
//!   one `C·eb` is a multiple of 16;
//! - `R, C ≤ 256`, and the scope is one thread (the copy engine is driven by a single thread).
//!
//! One thread announces the box's bytes to `bar` (`mbarrier.expect_tx`) and issues
//! `cp.async.bulk.tensor.2d`; the box's coordinates come from its first element's offset at run time
//! (`x = o mod S`, `y = o div S`). The interpreter checks the box stays inside the array (a box that
//! ran past a row's end would be filled with zeros by the copy engine, not wrap like the law).

use crate::desc::{space_name, Call, Op, Space, Swizzle, Tensor};
use crate::dispatch::{Ctx, Outcome, Target, Variant};
use crate::error::{layout, overflow, Result};
use crate::expr::Expr;
use crate::ir::{Access, LStmt, TensorMap};
use crate::lower::shared_align;
use crate::scope::Level;
use crate::spread::workers;

/// Largest box extent per dimension.
pub const MAX_BOX: u64 = 256;

/// Element offsets on `m` of every element of a rank-2 tensor, row-major, or why not one copy each.
fn offsets(t: &Tensor) -> Result<std::result::Result<Vec<i64>, String>> {
    if !t.layout.replica().is_empty() {
        return Ok(Err(format!(
            "{} has replicas; a copy engine box holds each element once",
            t.name
        )));
    }
    let m = axe_layout::Axis::memory();
    (0..t.size())
        .map(|x| {
            Ok(t.layout
                .base_at(x)
                .map_err(layout(format!("tensor {}", t.name)))?
                .get(&m))
        })
        .collect::<Result<Vec<i64>>>()
        .map(Ok)
}

/// `Ok((o, S))` when element `(i, j)` of `offs` (over `[r, c]`) is at `o + i·S + j`.
fn strided(offs: &[i64], r: u64, c: u64) -> Option<(i64, i64)> {
    let o = *offs.first()?;
    let s = if r > 1 {
        offs[c as usize] - o
    } else {
        c as i64
    };
    let ok = offs.iter().enumerate().all(|(x, &v)| {
        let (i, j) = ((x as u64 / c) as i64, (x as u64 % c) as i64);
        v == o + i * s + j
    });
    ok.then_some((o, s))
}

struct Tma;

impl Tma {
    fn plan(
        &self,
        call: &Call,
        ctx: &mut Ctx<'_>,
    ) -> Result<std::result::Result<(Vec<LStmt>, String), String>> {
        let (dst, src, bar) = match &call.op {
            Op::CopyAsync { dst, src, bar } => (dst, src, bar),
            Op::CopyAsyncGroup { .. } => return Ok(Err(
                "the copy engine completes on an mbarrier; this copy completes by commit groups"
                    .into(),
            )),
            _ => return Ok(Err("this variant lowers copy_async only".into())),
        };
        if src.space != Space::Global || !matches!(dst.space, Space::Shared(_)) {
            return Ok(Err(format!(
                "the copy engine copies global to shared memory; {} is in {} and {} in {} memory",
                src.name,
                space_name(src.space),
                dst.name,
                space_name(dst.space)
            )));
        }
        if call.scope.level != Level::Thread
            || call.scope.units.as_ref().is_none_or(|u| u.len() != 1)
        {
            return Ok(Err(format!(
                "the copy engine is driven by one thread; call copy_async at thread scope on a single thread, not at {}",
                call.scope
            )));
        }
        let [r, c] = match src.shape[..] {
            [r, c] => [r, c],
            [c] => [1, c],
            _ => {
                return Ok(Err(format!(
                    "{} has rank {}; copy_async.tma copies boxes of rank 1 or 2",
                    src.name,
                    src.shape.len()
                )))
            }
        };
        if r > MAX_BOX || c > MAX_BOX {
            return Ok(Err(format!(
                "the box is {r}×{c}; the copy engine's boxes have at most {MAX_BOX} elements per dimension"
            )));
        }
        let eb = i64::from(src.dtype.bytes());
        let so = match offsets(src)? {
            Ok(o) => o,
            Err(e) => return Ok(Err(e)),
        };
        let Some((o, s)) = strided(&so, r, c) else {
            return Ok(Err(format!(
                "{}'s layout {} is not rows of consecutive elements at one stride; a tensor map describes a strided array",
                src.name, src.layout
            )));
        };
        let gbuf = &ctx.kernel.buffers[src.buffer.0];
        // One row shows no row stride: the map is then the whole buffer as one row.
        let s = if r == 1 {
            i64::try_from(gbuf.elems).map_err(|_| overflow("a buffer"))?
        } else {
            s
        };
        if s < c as i64 || (s * eb) % 16 != 0 || !gbuf.elems.is_multiple_of(s as u64) {
            return Ok(Err(format!(
                "{}'s rows are {s} elements apart; a tensor map's rows hold at least the box's {c} elements, are a multiple of 16 bytes apart, and divide buffer {} ({} elements)",
                src.name, gbuf.name, gbuf.elems
            )));
        }
        let sw = match dst.space {
            Space::Shared(sw) => sw,
            _ => None,
        };
        let row_bytes = c as i64 * eb;
        match sw {
            Some(sw) if row_bytes != sw.bytes() as i64 => {
                return Ok(Err(format!(
                    "{}'s rows are {row_bytes} bytes; a {}-byte swizzle takes rows of exactly {} bytes",
                    dst.name,
                    sw.bytes(),
                    sw.bytes()
                )))
            }
            None if row_bytes % 16 != 0 => {
                return Ok(Err(format!(
                    "{}'s rows are {row_bytes} bytes; the copy engine writes rows of a multiple of 16 bytes",
                    dst.name
                )))
            }
            _ => {}
        }
        let d = match offsets(dst)? {
            Ok(o) => o,
            Err(e) => return Ok(Err(e)),
        };
        let Some((p, pitch)) = strided(&d, r, c) else {
            return Ok(Err(format!(
                "{}'s layout {} is not a row-major tile",
                dst.name, dst.layout
            )));
        };
        let align = shared_align(dst.space) as i64;
        if (r > 1 && pitch != c as i64) || (p * eb) % align != 0 {
            return Ok(Err(format!(
                "{} is not a dense row-major tile starting on a multiple of {align} bytes (rows {pitch} elements apart, first at byte {}); the copy engine writes the box densely",
                dst.name,
                p * eb
            )));
        }
        let map = TensorMap {
            buf: src.buffer.0,
            elem_bytes: src.dtype.bytes(),
            dims: vec![s as u64, gbuf.elems / s as u64],
            box_dims: vec![c as u32, r as u32],
            swizzle: sw,
        };
        let bytes = u32::try_from(map.box_bytes()).map_err(|_| overflow("a box"))?;
        let w = match workers(&call.scope, ctx) {
            Ok(w) => w,
            Err(e) => return Ok(Err(e)),
        };
        let bar = crate::desc::sync_access(*bar)?;
        let index = ctx.tensor_map(map);
        let mut code = vec![
            LStmt::MbarExpectTx {
                bar: bar.clone(),
                bytes,
            },
            LStmt::TmaLoad {
                call: call.id,
                map: index,
                dst: Access {
                    buf: dst.buffer.0,
                    byte: Expr::Const(p * eb),
                },
                src: Access {
                    buf: src.buffer.0,
                    byte: Expr::Const(o * eb),
                },
                bar,
            },
        ];
        if let Some(g) = w.guard {
            code = vec![LStmt::If {
                cond: g,
                body: code,
            }];
        }
        let swz = sw.map_or("no swizzle".to_string(), |s: Swizzle| {
            format!("{}-byte swizzle", s.bytes())
        });
        Ok(Ok((
            code,
            format!(
                "a {r}×{c} box of a [{}, {s}] tensor map ({swz}), {bytes} bytes on the mbarrier",
                gbuf.elems / s as u64
            ),
        )))
    }
}

impl Variant for Tma {
    fn name(&self) -> &'static str {
        "copy_async.tma"
    }
    fn op(&self) -> &'static str {
        "copy_async"
    }
    fn priority(&self) -> i32 {
        10
    }
    fn targets(&self) -> &'static [Target] {
        &[Target::Cpu, Target::Sm90a]
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        Ok(Outcome::of(self.plan(call, ctx)?))
    }
}

static VARIANTS: [Tma; 1] = [Tma];

/// The `copy_async` variants.
pub fn variants() -> Vec<&'static dyn Variant> {
    VARIANTS.iter().map(|v| v as &'static dyn Variant).collect()
}
