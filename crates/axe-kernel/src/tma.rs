//! `copy_async`: a global box copied into shared memory by the copy engine (TMA), completing on an
//! mbarrier.
//!
//! **Law.** `copy_async(dst, src, bar)`: `dst[x] = src[x]` for every logical index `x`; each thread of
//! the call's scope arrives once on `bar`, and the phase that arrival belongs to completes only once
//! the copy's bytes have landed (so `mbar_init(bar, count)` counts one arrival per thread of the scope
//! of each `copy_async` completing on it, as under [`crate::cp_async`], whichever variant copies). A
//! thread sees the bytes in `dst` once it has waited for that phase. Until then `dst` must not be
//! read, nor `src` written.
//!
//! **`copy_async.tma`** (sm_90a, and the interpreter) plans the copy by the Axe paper's §3.4 steps,
//! over the dims of extent above 1 (`src` and `dst` are already slices of their buffers: regions and
//! windows):
//! 1. *Global box by grouping.* `src`'s layout grouped by its shape (`group`) must give each dim one
//!    iter on memory (`S_k` elements apart), the innermost contiguous (`S_0 = 1`), each stride a
//!    multiple of the next inner one with room for its box (`S_{k+1} ≥ S_k·b_k`), no replicas. The
//!    tensor map is then the buffer read as a dense array of extents `S_1/S_0, S_2/S_1, …,
//!    elems/S_{n-1}` (innermost first), and the box `b_0, …, b_{n-1}` sits at the coordinates of its
//!    first element (from its offset at run time).
//! 2. *Shared atom.* The copy engine writes the box densely in atoms: a swizzle's atom is 8 rows of
//!    its span (a box may hold part of one: `gcd(rows, 8)` rows), unswizzled a row. `dst` viewed as
//!    `[rows, b_0]` must be a tile of that atom (`tile_of`), the atoms one after another (the outer
//!    layout one unit-stride run), starting on a whole swizzle atom; with a 32/64/128-byte swizzle
//!    each box row is exactly the span.
//! 3. *The hardware's rules*, each broken one a reason: at most 5 dims; at most [`MAX_BOX`] elements
//!    per box dim; global strides (bytes) multiples of 16 below 2⁴⁰; global extents at most 2³²;
//!    inner box bytes a multiple of 16, and within the swizzle span; one thread drives the engine.
//!
//! One thread announces the box's bytes to `bar` (`mbarrier.expect_tx`), issues
//! `cp.async.bulk.tensor.{1..5}d` (a box of one dim above 1 keeps two map dims, the outer of extent 1)
//! and arrives on `bar`, its one arrival; the interpreter copies the box element by element and checks it stays inside the map (a box
//! running past a dim's end would be filled with zeros by the copy engine, not wrap like the law).

use axe_layout::{Axis, Coord, Iter, Layout};

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
/// Most dimensions of a tensor map.
pub const MAX_RANK: usize = 5;
/// Global strides (bytes) stay below this.
pub const MAX_STRIDE: u64 = 1 << 40;
/// Global extents stay at most this.
pub const MAX_EXTENT: u64 = 1 << 32;

/// A plan, or why the variant declines.
type Plan<T> = std::result::Result<T, String>;
/// Per box dim (innermost first) its extent and stride (elements), and the first element's offset.
type GlobalBox = (Vec<(u64, u64)>, i64);

/// The global side (step 1): per dim of extent above 1, innermost first, `(box extent, stride in
/// elements)`, and the first element's offset.
fn global_box(t: &Tensor) -> Result<Plan<GlobalBox>> {
    if !t.layout.replica().is_empty() {
        return Ok(Err(format!(
            "{} has replicas; a copy engine box holds each element once",
            t.name
        )));
    }
    let m = Axis::memory();
    let first = t
        .layout
        .base_at(0)
        .map_err(layout(format!("tensor {}", t.name)))?
        .get(&m);
    let g = match t.layout.group(&t.shape) {
        Ok(g) => g,
        Err(e) => {
            return Ok(Err(format!(
                "{}'s layout {} does not group by its shape {:?}: {e}",
                t.name, t.layout, t.shape
            )))
        }
    };
    let mut dims = Vec::new();
    for k in (0..t.shape.len()).rev() {
        let block: &[Iter] = g.block(k);
        match block {
            [] => {}
            [it] if it.axis().is_memory() && it.stride() > 0 => {
                dims.push((it.extent(), it.stride() as u64));
            }
            _ => {
                return Ok(Err(format!(
                    "dim {k} of {} is {} in its layout {}; a tensor map's dim is one positive stride in memory",
                    t.name,
                    block
                        .iter()
                        .map(|i| format!("{}:{}@{}", i.extent(), i.stride(), i.axis()))
                        .collect::<Vec<_>>()
                        .join(" "),
                    t.layout
                )))
            }
        }
    }
    Ok(Ok((dims, first)))
}

/// The tensor map's dims (innermost first) and strides (bytes, dims 1 and up) for the box `dims`
/// (step 1 and the rules of step 3 on the global side), over a buffer of `elems` elements.
fn tensor_map_dims(dims: &[(u64, u64)], elems: u64, eb: u64, src: &str) -> Plan<Vec<u64>> {
    let Some(&(_, s0)) = dims.first() else {
        return Ok(vec![elems]);
    };
    if s0 != 1 {
        return Err(format!(
            "{src}'s innermost dim is {s0} elements apart; the copy engine reads runs of consecutive elements"
        ));
    }
    let mut out = Vec::with_capacity(dims.len());
    for (k, w) in dims.windows(2).enumerate() {
        let ((b, s), (_, next)) = (w[0], w[1]);
        if next % s != 0 || next / s < b {
            return Err(format!(
                "{src}'s dim {} is {next} elements apart, dim {k} {s} apart with a box of {b}; a tensor map's strides each divide the next, with room for the box between",
                k + 1
            ));
        }
        out.push(next / s);
    }
    let last = dims[dims.len() - 1].1;
    if !elems.is_multiple_of(last) {
        return Err(format!(
            "{src}'s outermost stride {last} does not divide its buffer's {elems} elements; the tensor map is the buffer as a dense array"
        ));
    }
    out.push(elems / last);
    for &(_, s) in &dims[1..] {
        let bytes = s.saturating_mul(eb);
        if bytes % 16 != 0 || bytes >= MAX_STRIDE {
            return Err(format!(
                "{src} has a dim {s} elements ({bytes} bytes) apart; a tensor map's global strides are multiples of 16 bytes below 2^40"
            ));
        }
    }
    if let Some(d) = out.iter().find(|&&d| d > MAX_EXTENT) {
        return Err(format!(
            "the tensor map would have a dim of {d} elements; at most 2^32"
        ));
    }
    Ok(out)
}

/// The shared side (step 2): `t` as box rows of `w` elements, tiled by the shared-memory atom — `a`
/// rows of `w` (`a = gcd(rows, 8)`: a swizzle atom is 8 rows of its span, a box may hold part of
/// one; unswizzled, a row) — found with `tile_of`; the atoms must follow each other densely (the
/// outer layout one unit-stride run). Returns the first element's offset and the atom's rows.
fn shared_atoms(t: &Tensor, w: u64, swizzled: bool) -> Result<Plan<(i64, u64)>> {
    if !t.layout.replica().is_empty() {
        return Ok(Err(format!("{} has replicas", t.name)));
    }
    let rows = t.size() / w.max(1);
    let a = if swizzled { gcd(rows, 8) } else { 1 };
    let atom = Layout::row_major(&[a, w]).map_err(layout("a shared-memory atom"))?;
    let shard = Layout::new(t.layout.shard().to_vec(), Vec::new(), Coord::zero())
        .map_err(layout(format!("tensor {}", t.name)))?;
    let outer = match shard.tile_of(&atom, &[rows, w], &[a, w]) {
        Ok((b, _)) => b
            .canonicalize()
            .map_err(layout(format!("tensor {}'s atoms", t.name)))?,
        Err(e) => {
            return Ok(Err(format!(
                "{}'s layout {} is not made of {a}×{w} shared-memory atoms (rows of {w} consecutive elements): {e}",
                t.name, t.layout
            )))
        }
    };
    let dense = match outer.shard() {
        [] => true,
        [it] => it.axis().is_memory() && it.stride() == 1,
        _ => false,
    };
    if !dense {
        return Ok(Err(format!(
            "{}'s {a}×{w} atoms are laid out as {outer}, not one after another; the copy engine writes the box densely",
            t.name
        )));
    }
    let p = t
        .layout
        .base_at(0)
        .map_err(layout(format!("tensor {}", t.name)))?
        .get(&Axis::memory());
    Ok(Ok((p, a)))
}

fn gcd(x: u64, y: u64) -> u64 {
    if y == 0 {
        x.max(1)
    } else {
        gcd(y, x % y)
    }
}

struct Tma;

impl Tma {
    fn plan(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Plan<(Vec<LStmt>, String)>> {
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
        let (gdims, o) = match global_box(src)? {
            Ok(v) => v,
            Err(e) => return Ok(Err(e)),
        };
        if gdims.len() > MAX_RANK {
            return Ok(Err(format!(
                "{} has {} dims of extent above 1; a tensor map has at most {MAX_RANK}",
                src.name,
                gdims.len()
            )));
        }
        if let Some((b, _)) = gdims.iter().find(|d| d.0 > MAX_BOX) {
            return Ok(Err(format!(
                "the box has a dim of {b} elements; the copy engine's boxes have at most {MAX_BOX} elements per dimension"
            )));
        }
        let eb = u64::from(src.dtype.bytes());
        let gbuf = &ctx.kernel.buffers[src.buffer.0];
        let mut dims = match tensor_map_dims(&gdims, gbuf.elems, eb, &src.name) {
            Ok(d) => d,
            Err(e) => return Ok(Err(e)),
        };
        let mut box_dims: Vec<u64> = gdims.iter().map(|d| d.0).collect();
        if box_dims.is_empty() {
            box_dims.push(1);
        }
        // A box of one dim keeps a second map dim of extent 1 (as two-dimensional maps always had).
        if dims.len() == 1 {
            dims.push(1);
            box_dims.push(1);
        }
        let sw = match dst.space {
            Space::Shared(sw) => sw,
            _ => None,
        };
        let row_bytes = box_dims[0] * eb;
        match sw {
            Some(sw) if row_bytes > sw.bytes() => {
                return Ok(Err(format!(
                    "{}'s rows are {row_bytes} bytes; the copy engine's inner box is within the swizzle span, and a {}-byte swizzle takes rows of exactly {} bytes",
                    dst.name,
                    sw.bytes(),
                    sw.bytes()
                )))
            }
            Some(sw) if row_bytes != sw.bytes() => {
                return Ok(Err(format!(
                    "{}'s rows are {row_bytes} bytes; a {}-byte swizzle takes rows of exactly {} bytes here (a whole swizzle row per box row)",
                    dst.name,
                    sw.bytes(),
                    sw.bytes()
                )))
            }
            None if !row_bytes.is_multiple_of(16) => {
                return Ok(Err(format!(
                    "{}'s rows are {row_bytes} bytes; the copy engine writes rows of a multiple of 16 bytes",
                    dst.name
                )))
            }
            _ => {}
        }
        let (p, atom_rows) = match shared_atoms(dst, box_dims[0], sw.is_some())? {
            Ok(v) => v,
            Err(e) => return Ok(Err(e)),
        };
        let align = shared_align(dst.space) as i64;
        let eb_i = eb as i64;
        if (p * eb_i) % align != 0 {
            return Ok(Err(format!(
                "{} starts at byte {} of its buffer; the copy engine writes whole swizzle atoms from a multiple of {align} bytes",
                dst.name,
                p * eb_i
            )));
        }
        let rank = dims.len();
        let map = TensorMap {
            buf: src.buffer.0,
            elem_bytes: src.dtype.bytes(),
            dims: dims.clone(),
            box_dims: box_dims.iter().map(|&b| b as u32).collect(),
            swizzle: sw,
        };
        let bytes = u32::try_from(map.box_bytes()).map_err(|_| overflow("sizing a box"))?;
        if bytes > crate::ir::MBAR_MAX {
            return Ok(Err(format!(
                "the box is {bytes} bytes; an mbarrier's transaction count takes at most 2^20 - 1 bytes a phase"
            )));
        }
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
                    byte: Expr::Const(p * eb_i),
                },
                src: Access {
                    buf: src.buffer.0,
                    byte: Expr::Const(o * eb_i),
                },
                bar: bar.clone(),
            },
            // The issuing thread's arrival: `copy_async` arrives once for each thread of its scope,
            // whichever variant copies (see `crate::cp_async`).
            LStmt::MbarArrive { bar },
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
        let outer_first = |v: &[u64]| {
            v.iter()
                .rev()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join("×")
        };
        Ok(Ok((
            code,
            format!(
                "a {} box of a rank-{rank} [{}] tensor map ({swz}; shared atoms of {atom_rows}×{}), {bytes} bytes on the mbarrier",
                outer_first(&box_dims),
                outer_first(&dims).replace('×', ", "),
                box_dims[0]
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
