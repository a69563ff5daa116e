//! `reduce`: sum or max over logical dims of a register tensor, within a thread, across the lanes of a
//! warp by butterfly shuffles, and across the warps of a CTA through shared memory.
//!
//! **Law.** `reduce(dst, src, dims, op)` with `dst.shape = src.shape` where each reduced dim has extent
//! 1 (the dims are kept, so `dst` broadcasts back over `src`): for every index `i` of `dst`,
//! `dst[i] = op over every j of src[i with the reduced dims set to j]` (sum: `+`; max: `max`).
//!
//! **Planning by enumeration.** Both layouts are applied to every element (a register tensor holds at
//! most the CTA's registers), giving each element's thread (warp·32 + lane) and register. A variant
//! applies when, step by step, the partial results it builds provably hold the whole reduced set:
//! 1. each thread folds the source registers of each destination register it holds (every source
//!    element needs a copy of its destination element in its own thread — `dst` replicated over the
//!    lanes and warps the reduced dims occupy, and over those a replicated source's copies occupy),
//!    the same registers in every thread of the scope (a sum pairwise: `log₂ n` roundings for `n`
//!    registers, not `n - 1`); each thread folds one copy of each source element it holds;
//! 2. (`reduce.shfl`, `reduce.smem`) for each lane bit `m` across which every register holds the same
//!    destination element, and the two partials hold different source elements (not copies of the
//!    same ones, as across the lanes a replicated source repeats on), an xor-butterfly step
//!    `acc = op(acc, shfl_xor(acc, m))`;
//! 3. (`reduce.smem`, CTA scope) each thread stores its partials to a shared scratch, a barrier, and
//!    each thread combines the partials of the warps that differ from its own in the warp bits found as
//!    in step 2, in ascending warp order (so every replica is bit-identical); a barrier ends it.
//!
//! Then every copy of every destination element must combine partials of exactly that element whose
//! counts add up to the reduced extent, and (for a replicated source) hold that many distinct
//! elements, so that the set combined is the whole reduced set, each element once; otherwise the
//! variant declines and says which element and thread fall short.
//! Every thread of the scope runs the same code (shuffles need the whole warp), so every thread of the
//! scope must hold the same source registers.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::desc::{BinaryOp, Buffer, Call, KernelBuilder, Op, Space, Tensor};
use crate::dispatch::{Ctx, Outcome, Variant};
use crate::dtype::DType;
use crate::error::{KernelError, Result};
use crate::expr::Expr;
use crate::ir::{Access, Compute, LStmt};
use crate::places::places;
use crate::scope::{Level, Scope, WARP};
use crate::spread::workers;

mod pairwise;
use pairwise::pairwise;

pub use crate::places::MAX_PLACES;

/// Dtypes reduced.
pub const REDUCE_DTYPES: [DType; 3] = [DType::F32, DType::F64, DType::S32];

/// The reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// `+`.
    Sum,
    /// `max`.
    Max,
}

impl ReduceOp {
    /// The pointwise operator that combines two partials.
    pub fn combine(self) -> BinaryOp {
        match self {
            ReduceOp::Sum => BinaryOp::Add,
            ReduceOp::Max => BinaryOp::Max,
        }
    }
}

/// Checks a reduce's operands: `dims` ascending, distinct and in range; `dst.shape` is `src.shape` with
/// those dims of extent 1; one dtype.
pub(crate) fn check_shapes(label: &str, dst: &Tensor, src: &Tensor, dims: &[usize]) -> Result<()> {
    let bad = |m: String| Err(KernelError::Invalid(format!("{label}: {m}")));
    if dims.is_empty() || dims.windows(2).any(|w| w[0] >= w[1]) {
        return bad(format!(
            "reduced dims {dims:?} must be non-empty and strictly ascending"
        ));
    }
    if let Some(d) = dims.iter().find(|&&d| d >= src.shape.len()) {
        return bad(format!(
            "dim {d} is not a dim of source {} (rank {})",
            src.name,
            src.shape.len()
        ));
    }
    let want: Vec<u64> = (0..src.shape.len())
        .map(|j| if dims.contains(&j) { 1 } else { src.shape[j] })
        .collect();
    if dst.shape != want {
        return bad(format!(
            "destination {} has shape {:?}; reducing dims {dims:?} of {} {:?} keeps them as extent 1: {want:?}",
            dst.name, dst.shape, src.name, src.shape
        ));
    }
    if dst.dtype != src.dtype {
        return bad(format!(
            "source {} is {}, the destination {} is {}",
            src.name, src.dtype, dst.name, dst.dtype
        ));
    }
    Ok(())
}

impl KernelBuilder {
    /// `reduce(dst, src, dims, op)` at `scope`: `dst[i] = op over the dims of src[i, j]` (see
    /// [`crate::reduce`]; `dst` keeps the reduced dims with extent 1).
    pub fn reduce(
        &mut self,
        scope: Scope,
        dst: &Tensor,
        src: &Tensor,
        dims: &[usize],
        op: ReduceOp,
    ) -> Result<usize> {
        self.call(
            scope,
            Op::Reduce {
                op,
                dst: dst.clone(),
                src: src.clone(),
                dims: dims.to_vec(),
            },
        )
    }
}

/// How far a variant combines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    Thread,
    Lanes,
    Warps,
}

struct Reduce {
    name: &'static str,
    reach: Reach,
    priority: i32,
}

/// The flat index of `dst` that source element `x` reduces into.
fn target_of(x: u64, src: &[u64], dims: &[usize]) -> u64 {
    let (mut rest, mut y, mut rad) = (x, 0u64, 1u64);
    for j in (0..src.len()).rev() {
        let d = rest % src[j];
        rest /= src[j];
        if !dims.contains(&j) {
            y += d * rad;
            rad *= src[j];
        }
    }
    y
}

/// Whether ascending lists `a` and `b` share no element, in one pass over both.
fn disjoint(a: &[u64], b: &[u64]) -> bool {
    let (mut i, mut j) = (0, 0);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        match x.cmp(y) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return false,
        }
    }
    true
}

/// The sums of every subset of `bits`, ascending.
fn subset_sums(bits: &[u32]) -> Vec<u32> {
    let mut v = vec![0u32];
    for b in bits {
        let more: Vec<u32> = v.iter().map(|s| s + b).collect();
        v.extend(more);
    }
    v.sort_unstable();
    v
}

impl Variant for Reduce {
    fn name(&self) -> &'static str {
        self.name
    }
    fn op(&self) -> &'static str {
        "reduce"
    }
    fn priority(&self) -> i32 {
        self.priority
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let Op::Reduce { op, dst, src, dims } = &call.op else {
            return Ok(Outcome::Declined(format!(
                "{} lowers reduce only",
                self.name
            )));
        };
        let no = |m: String| Ok(Outcome::Declined(m));
        if !REDUCE_DTYPES.contains(&src.dtype) {
            return no(format!(
                "reductions of {} are not lowered yet (f32, f64, s32 are)",
                src.dtype
            ));
        }
        for t in [dst, src] {
            if t.space != Space::Registers {
                return no(format!(
                    "{} lives in {} memory; reduce works on register tensors (copy it into registers first)",
                    t.name,
                    crate::desc::space_name(t.space)
                ));
            }
        }
        if dst.buffer == src.buffer {
            return no(format!(
                "{} and {} share a register buffer; the reduction needs its destination apart",
                dst.name, src.name
            ));
        }
        let (warps, tid) = match call.scope.level {
            Level::Warp => (1, Expr::Thread.modulo(Expr::Const(32))),
            Level::Warpgroup => (4, Expr::Thread.modulo(Expr::Const(128))),
            Level::Cta => (ctx.kernel.launch.warps(), Expr::Thread),
            l => {
                return no(format!(
                    "registers belong to the threads of one CTA; a reduce of them runs at warp, warpgroup or cta scope, not {}",
                    l.name()
                ))
            }
        };
        if self.reach == Reach::Warps && call.scope.level != Level::Cta {
            return no(format!(
                "combining warps through shared memory needs a CTA barrier, so cta scope; this call is at {} scope",
                call.scope
            ));
        }
        let w = match workers(&call.scope, ctx) {
            Ok(w) => w,
            Err(r) => return no(r),
        };
        let threads = warps * WARP;
        let (ps, pd) = match (places(src, warps)?, places(dst, warps)?) {
            (Ok(s), Ok(d)) => (s, d),
            (Err(r), _) | (_, Err(r)) => return no(r),
        };
        let mut owner: HashMap<(u32, i64), u64> = HashMap::new();
        for (y, v) in pd.iter().enumerate() {
            for p in v {
                if let Some(o) = owner.insert(*p, y as u64) {
                    if o != y as u64 {
                        return no(format!(
                            "{} puts elements {o} and {y} in one register (thread {}, register {})",
                            dst.name, p.0, p.1
                        ));
                    }
                }
            }
        }
        // Step 1: each thread's table register of dst -> registers of src folded into it, one copy of
        // each source element the thread holds (a replicated source has copies in several threads);
        // and, for a replicated source, which elements those are (each list ascending, as `x` is).
        let replicated = src.layout.replica_count() > 1;
        let mut dst_reg: HashMap<(u64, u32), i64> = HashMap::new();
        for (y, v) in pd.iter().enumerate() {
            for &(t, r) in v {
                dst_reg.entry((y as u64, t)).or_insert(r);
            }
        }
        let mut tables: Vec<BTreeMap<i64, Vec<i64>>> = vec![BTreeMap::new(); threads as usize];
        let mut held: Vec<BTreeMap<i64, Vec<u64>>> = vec![BTreeMap::new(); threads as usize];
        let mut folded: HashSet<u32> = HashSet::new();
        for (x, v) in ps.iter().enumerate() {
            let y = target_of(x as u64, &src.shape, dims);
            folded.clear();
            for &(t, rs) in v {
                if !folded.insert(t) {
                    continue;
                }
                let Some(&rd) = dst_reg.get(&(y, t)) else {
                    return no(format!(
                        "element {y} of {} has no copy in thread {t} (lane {}, warp {}), which holds element {x} of {}: the destination must be replicated over the lanes and warps the reduced dims occupy, and over those the source's copies occupy",
                        dst.name,
                        t % 32,
                        t / 32,
                        src.name
                    ));
                };
                tables[t as usize].entry(rd).or_default().push(rs);
                if replicated {
                    held[t as usize].entry(rd).or_default().push(x as u64);
                }
            }
        }
        let regs_of = |t: &BTreeMap<i64, Vec<i64>>| -> Vec<(i64, usize)> {
            t.iter().map(|(k, v)| (*k, v.len())).collect()
        };
        let first = regs_of(&tables[0]);
        if let Some(t) = tables.iter().position(|t| regs_of(t) != first) {
            return no(format!(
                "thread {t} of the scope folds {:?} (destination register, source count) but thread 0 folds {first:?}; every thread of the scope runs the same reduction",
                regs_of(&tables[t])
            ));
        }
        let slots: Vec<i64> = tables[0].keys().copied().collect();
        if tables.iter().any(|t| t.values().ne(tables[0].values())) {
            return no("threads of the scope fold different source registers into one destination register".into());
        }
        let tag = |t: u32, k: usize| owner.get(&(t, slots[k])).copied();
        // Whether threads `t` and `o` fold no source element in common into slot `k` (always, for a
        // source without replicas: each element is then folded in one thread).
        let apart = |t: u32, o: u32, k: usize| {
            let of = |t: u32| {
                held[t as usize]
                    .get(&slots[k])
                    .map_or(&[][..], Vec::as_slice)
            };
            disjoint(of(t), of(o))
        };
        // Steps 2 and 3: the lane and warp bits across which every register holds one element, and
        // the partials combined hold different source elements (not copies of the same ones).
        let bits = |n: u32, other: &dyn Fn(u32, u32) -> u32| -> Vec<u32> {
            (0..5)
                .map(|b| 1u32 << b)
                .filter(|&m| m < n)
                .filter(|&m| {
                    (0..threads).all(|t| {
                        let o = other(t, m);
                        o < threads
                            && (0..slots.len()).all(|k| tag(t, k) == tag(o, k) && apart(t, o, k))
                    })
                })
                .collect()
        };
        let lane_bits = if self.reach == Reach::Thread {
            Vec::new()
        } else {
            bits(WARP, &|t, m| t ^ m)
        };
        let warp_bits = if self.reach == Reach::Warps {
            bits(warps, &|t, m| ((t / 32) ^ m) * 32 + t % 32)
        } else {
            Vec::new()
        };
        // The final check: every copy of every element combines its whole reduced set.
        let row: u64 = dims.iter().map(|&d| src.shape[d]).product();
        let (lanes, ws) = (subset_sums(&lane_bits), subset_sums(&warp_bits));
        let (lane_mask, warp_mask) = (
            lane_bits.iter().fold(0, |m, b| m | b),
            warp_bits.iter().fold(0, |m, b| m | b),
        );
        let mut distinct: HashMap<(u32, usize), u64> = HashMap::new();
        for (y, v) in pd.iter().enumerate() {
            for &(t, r) in v {
                let Some(k) = slots.iter().position(|&s| s == r) else {
                    return no(format!("thread {t} holds element {y} of {} in register {r}, which no source register folds into", dst.name));
                };
                let (mut n, mut others) = (0u64, 0u64);
                for a in &ws {
                    for b in &lanes {
                        let p = (((t / 32) ^ a) * 32) + ((t % 32) ^ b);
                        let c = tables[p as usize]
                            .get(&slots[k])
                            .map_or(0, |v| v.len() as u64);
                        if tag(p, k) == Some(y as u64) {
                            n += c;
                        } else {
                            others += c;
                        }
                    }
                }
                // A replicated source: the partials must also hold `n` distinct elements, or some are
                // counted twice (and others, perhaps, never). The threads combined together (one
                // group, named by its lowest thread) share the answer.
                let group = ((t / 32) & !warp_mask) * 32 + ((t % 32) & !lane_mask);
                let twice = if replicated {
                    *distinct.entry((group, k)).or_insert_with(|| {
                        let mut xs: Vec<u64> = Vec::new();
                        for a in &ws {
                            for b in &lanes {
                                let p = (((t / 32) ^ a) * 32) + ((t % 32) ^ b);
                                if tag(p, k) == Some(y as u64) {
                                    xs.extend(
                                        held[p as usize].get(&slots[k]).into_iter().flatten(),
                                    );
                                }
                            }
                        }
                        let all = xs.len();
                        xs.sort_unstable();
                        xs.dedup();
                        (all - xs.len()) as u64
                    })
                } else {
                    0
                };
                if twice > 0 {
                    // (`apart` keeps copies out of each butterfly step; this catches copies that
                    // two steps together would bring into one partial.)
                    return no(format!(
                        "thread {t} (lane {}, warp {}) would combine {twice} surplus copies of source elements of {}[{y}]: {} is replicated over lanes or warps that {} combines",
                        t % 32,
                        t / 32,
                        dst.name,
                        src.name,
                        self.name
                    ));
                }
                if n != row || others != 0 {
                    return no(format!(
                        "thread {t} (lane {}, warp {}) would combine {n} of the {row} source elements of {}[{y}]{}: {}",
                        t % 32,
                        t / 32,
                        dst.name,
                        if others > 0 { format!(" and {others} of other elements") } else { String::new() },
                        match self.reach {
                            Reach::Thread => "the reduced dims leave the thread (reduce.thread folds registers only)",
                            Reach::Lanes => "the reduced dims leave the warp or do not split lanes by bits (reduce.shfl combines lanes of a warp by xor)",
                            Reach::Warps => "the reduced dims do not split lanes and warps by bits",
                        }
                    ));
                }
            }
        }
        let code = emit(
            call, ctx, *op, dst, src, &tables[0], &lane_bits, &warp_bits, &ws, &tid,
        )?;
        let code = match w.guard {
            Some(g) => vec![LStmt::If {
                cond: g,
                body: code,
            }],
            None => code,
        };
        let why = format!(
            "{} of {} over dims {dims:?}: {} per thread, {} folded in each thread{}{}",
            match op {
                ReduceOp::Sum => "sum",
                ReduceOp::Max => "max",
            },
            src.name,
            crate::dispatch::count(slots.len(), "destination register"),
            crate::dispatch::count(
                tables[0].values().map(Vec::len).sum::<usize>(),
                "source register"
            ),
            if lane_bits.is_empty() {
                String::new()
            } else {
                format!(", lanes combined by xor shuffles {lane_bits:?}")
            },
            if warp_bits.is_empty() {
                String::new()
            } else {
                format!(", warps {warp_bits:?} (xor bits) combined through shared memory")
            },
        );
        Ok(Outcome::Lowered { why, code })
    }
}

#[allow(clippy::too_many_arguments)]
fn emit(
    call: &Call,
    ctx: &mut Ctx<'_>,
    op: ReduceOp,
    dst: &Tensor,
    src: &Tensor,
    table: &BTreeMap<i64, Vec<i64>>,
    lane_bits: &[u32],
    warp_bits: &[u32],
    warp_sums: &[u32],
    tid: &Expr,
) -> Result<Vec<LStmt>> {
    let d = dst.dtype;
    let eb = i64::from(d.bytes());
    let f = Compute::Binary(op.combine(), d);
    let id = call.id;
    let at = |buf: usize, r: i64| Access {
        buf,
        byte: Expr::Const(r * eb),
    };
    let (db, sb) = (dst.buffer.0, src.buffer.0);
    let mut code = Vec::new();
    let longest = table.values().map(Vec::len).max().unwrap_or(0);
    let pairs = (op == ReduceOp::Sum && longest > 2).then(|| {
        ctx.add_buffer(Buffer {
            name: format!("_reduce{id}_pairs"),
            space: Space::Registers,
            dtype: d,
            elems: u64::from(longest.ilog2()) + 1,
        })
    });
    for (&rd, rs) in table {
        if let (Some(tb), true) = (pairs, rs.len() > 2) {
            pairwise(&mut code, id, f, d.bytes(), (db, rd), (sb, rs), tb, eb);
            continue;
        }
        for (i, &r) in rs.iter().enumerate() {
            code.push(if i == 0 {
                LStmt::Move {
                    call: id,
                    dst: at(db, rd),
                    src: at(sb, r),
                    bytes: d.bytes(),
                }
            } else {
                LStmt::Compute {
                    call: id,
                    f,
                    dst: at(db, rd),
                    srcs: vec![at(db, rd), at(sb, r)],
                }
            });
        }
    }
    if !lane_bits.is_empty() {
        let tmp = ctx.add_buffer(Buffer {
            name: format!("_reduce{id}_partner"),
            space: Space::Registers,
            dtype: d,
            elems: 1,
        });
        for &m in lane_bits {
            for &rd in table.keys() {
                code.push(LStmt::Shuffle {
                    call: id,
                    dst: at(tmp, 0),
                    src: at(db, rd),
                    lane_xor: m,
                    bytes: d.bytes(),
                });
                code.push(LStmt::Compute {
                    call: id,
                    f,
                    dst: at(db, rd),
                    srcs: vec![at(db, rd), at(tmp, 0)],
                });
            }
        }
    }
    if !warp_bits.is_empty() {
        let slots = table.len() as u64;
        let elems = u64::from(ctx.kernel.launch.threads) * slots;
        let sh = ctx.scratch(Buffer {
            name: format!("_reduce_smem_{d}_{elems}"),
            space: Space::Shared(None),
            dtype: d,
            elems,
        });
        let n = slots as i64;
        let cell = |thread: Expr, k: usize| Access {
            buf: sh,
            byte: thread
                .times(Expr::Const(n))
                .plus(Expr::Const(k as i64))
                .times(Expr::Const(eb)),
        };
        for (k, &rd) in table.keys().enumerate() {
            code.push(LStmt::Move {
                call: id,
                dst: cell(tid.clone(), k),
                src: at(db, rd),
                bytes: d.bytes(),
            });
        }
        code.push(LStmt::Barrier);
        // The lowest warp of this thread's group: its warp with the combined bits cleared.
        let warp = tid.clone().over(Expr::Const(32));
        let mut base = warp.clone();
        for &m in warp_bits {
            let bit = warp
                .clone()
                .over(Expr::Const(i64::from(m)))
                .modulo(Expr::Const(2));
            base = Expr::bin(
                crate::expr::BinOp::Sub,
                base,
                bit.times(Expr::Const(i64::from(m))),
            );
        }
        let lane = tid.clone().modulo(Expr::Const(32));
        for (k, &rd) in table.keys().enumerate() {
            for (i, &c) in warp_sums.iter().enumerate() {
                let other = base
                    .clone()
                    .plus(Expr::Const(i64::from(c)))
                    .times(Expr::Const(32))
                    .plus(lane.clone());
                code.push(if i == 0 {
                    LStmt::Move {
                        call: id,
                        dst: at(db, rd),
                        src: cell(other, k),
                        bytes: d.bytes(),
                    }
                } else {
                    LStmt::Compute {
                        call: id,
                        f,
                        dst: at(db, rd),
                        srcs: vec![at(db, rd), cell(other, k)],
                    }
                });
            }
        }
        code.push(LStmt::Barrier);
    }
    Ok(code)
}

static VARIANTS: [Reduce; 3] = [
    Reduce {
        name: "reduce.thread",
        reach: Reach::Thread,
        priority: 30,
    },
    Reduce {
        name: "reduce.shfl",
        reach: Reach::Lanes,
        priority: 20,
    },
    Reduce {
        name: "reduce.smem",
        reach: Reach::Warps,
        priority: 10,
    },
];

/// The reduce variants.
pub fn variants() -> Vec<&'static dyn Variant> {
    VARIANTS.iter().map(|v| v as &'static dyn Variant).collect()
}
