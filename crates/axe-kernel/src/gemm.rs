//! `gemm`: `C += A·B` on register tensors, and the `m16n8k16` fragment layouts of `mma.sync`.
//!
//! **Law.** `gemm(c, a, b)` with `a: [M, K]`, `b: [K, N]` (f16, bf16 or f32, one dtype) and `c: [M, N]`
//! (f32): for every `(i, j)`, `c[i, j] += Σ_k a[i, k]·b[k, j]`, each product and sum in f32, with `a`
//! and `b` as they were before the call (so `c` may not share storage with them: refused when the
//! call is written). Every
//! variant computes exactly this; they differ in how the sum is ordered (f32 rounding) and in which
//! thread does what:
//! - `gemm.fma` (every target): each thread computes the copies of `c` its registers hold, one fused
//!   multiply-add per `k` in ascending order, from the copies of `a[i, ·]` and `b[·, j]` in its own
//!   registers; every thread of the scope runs the same register table (straight-line code). It is
//!   planned by enumeration, like `reduce` ([`crate::reduce`]).
//! - `gemm.mma_sync` ([`crate::mma`]): a warp-wide `mma.sync.aligned.m16n8k16` per atom when the three
//!   register layouts are tiles of the instruction's fragment layouts ([`atom`]).

use axe_layout::{Axis, Iter, Layout};

use crate::desc::{Call, KernelBuilder, Op, Space, Tensor};
use crate::dispatch::{Ctx, Outcome, Variant};
use crate::dtype::DType;
use crate::error::{layout, KernelError, Result};
use crate::expr::Expr;
use crate::ir::{Access, Compute, LStmt};
use crate::places::places;
use crate::scope::{Level, Scope, WARP};
use crate::spread::workers;

/// The dtypes of `a` and `b`.
pub const GEMM_DTYPES: [DType; 3] = [DType::F16, DType::BF16, DType::F32];
/// Most multiply-adds `gemm.fma` emits per thread (straight-line code).
pub const MAX_FMA: usize = 1 << 16;

/// Checks a gemm's operands: `c: [M, N]` f32, `a: [M, K]`, `b: [K, N]` of one dtype among
/// [`GEMM_DTYPES`], and `c` apart from `a` and `b` (a variant writes C while it still reads them).
pub(crate) fn check_shapes(label: &str, c: &Tensor, a: &Tensor, b: &Tensor) -> Result<()> {
    let bad = |m: String| Err(KernelError::Invalid(format!("{label}: {m}")));
    for t in [c, a, b] {
        if t.shape.len() != 2 {
            return bad(format!(
                "{} has shape {:?}; gemm takes matrices (rank 2)",
                t.name, t.shape
            ));
        }
    }
    let (m, n, k) = (c.shape[0], c.shape[1], a.shape[1]);
    if a.shape[0] != m || b.shape != [k, n] {
        return bad(format!(
            "C {} is {:?}, A {} is {:?} and B {} is {:?}; C[M, N] += A[M, K]·B[K, N] needs A [{m}, K] and B [K, {n}] with one K",
            c.name, c.shape, a.name, a.shape, b.name, b.shape
        ));
    }
    if c.dtype != DType::F32 {
        return bad(format!(
            "the accumulator {} is {}; gemm accumulates in f32",
            c.name, c.dtype
        ));
    }
    if a.dtype != b.dtype || !GEMM_DTYPES.contains(&a.dtype) {
        return bad(format!(
            "A {} is {} and B {} is {}; they must be one of f16, bf16, f32",
            a.name, a.dtype, b.name, b.dtype
        ));
    }
    for (role, t) in [("A", a), ("B", b)] {
        if let Some(why) = crate::desc::overlap(c, t)? {
            return bad(format!(
                "C {} and {role} {} {why}: gemm writes C while it still reads {role}, so give C storage of its own",
                c.name, t.name
            ));
        }
    }
    Ok(())
}

impl KernelBuilder {
    /// `gemm(c, a, b)` at `scope`: `c[i, j] += Σ_k a[i, k]·b[k, j]` in f32 (see [`crate::gemm`]).
    pub fn gemm(&mut self, scope: Scope, c: &Tensor, a: &Tensor, b: &Tensor) -> Result<usize> {
        self.call(
            scope,
            Op::Gemm {
                c: c.clone(),
                a: a.clone(),
                b: b.clone(),
            },
        )
    }
}

/// An operand of `mma.sync.m16n8k16`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    /// A: `16×16` (M×K), 8 elements per lane.
    A,
    /// B: `16×8` (K×N), 4 elements per lane.
    B,
    /// C and D: `16×8` (M×N) f32, 4 elements per lane.
    C,
}

impl Operand {
    /// `A`, `B`, `C`.
    pub fn name(self) -> &'static str {
        match self {
            Operand::A => "A",
            Operand::B => "B",
            Operand::C => "C",
        }
    }

    /// The atom's shape.
    pub fn shape(self) -> [u64; 2] {
        match self {
            Operand::A => [16, 16],
            Operand::B | Operand::C => [16, 8],
        }
    }

    /// Registers per lane (elements).
    pub fn regs(self) -> i64 {
        match self {
            Operand::A => 8,
            Operand::B | Operand::C => 4,
        }
    }
}

/// The fragment layout of `op` in `mma.sync.aligned.m16n8k16` (PTX ISA, "Matrix Fragments for
/// mma.m16n8k16"), over the atom's shape onto `reg` and `lane`; `g = lane / 4`, `t = lane mod 4`:
/// - A `[16, 16]`: element `i` of 8 holds row `g + 8·bit1(i)`, column `2t + bit0(i) + 8·bit2(i)`:
///   `S[(2, 8, 2, 4, 2) : (2@reg, 4@lane, 4@reg, 1@lane, 1@reg)]`;
/// - B `[16, 8]`: element `i` of 4 holds row (k) `2t + bit0(i) + 8·bit1(i)`, column `g`:
///   `S[(2, 4, 2, 8) : (2@reg, 1@lane, 1@reg, 4@lane)]`;
/// - C `[16, 8]`: element `i` of 4 holds row `g + 8·bit1(i)`, column `2t + bit0(i)`:
///   `S[(2, 8, 4, 2) : (2@reg, 4@lane, 1@lane, 1@reg)]`.
pub fn atom(op: Operand) -> Result<Layout> {
    let ax = |n: &str| Axis::new(n).map_err(layout(n));
    let (reg, lane) = (ax("reg")?, ax("lane")?);
    let it = |e: u64, s: i64, a: &Axis| Iter::new(e, s, *a).map_err(layout("an mma atom"));
    let shard = match op {
        Operand::A => vec![
            it(2, 2, &reg)?,
            it(8, 4, &lane)?,
            it(2, 4, &reg)?,
            it(4, 1, &lane)?,
            it(2, 1, &reg)?,
        ],
        Operand::B => vec![
            it(2, 2, &reg)?,
            it(4, 1, &lane)?,
            it(2, 1, &reg)?,
            it(8, 4, &lane)?,
        ],
        Operand::C => vec![
            it(2, 2, &reg)?,
            it(8, 4, &lane)?,
            it(4, 1, &lane)?,
            it(2, 1, &reg)?,
        ],
    };
    Layout::from_shard(shard).map_err(layout("an mma atom"))
}

/// The atom of `op` as `(flat index in the atom, register, lane)` for each element, from [`atom`].
pub fn fragment(op: Operand) -> Result<Vec<(usize, i64, i64)>> {
    let l = atom(op)?;
    let ax = |n: &str| Axis::new(n).map_err(layout(n));
    let (reg, lane) = (ax("reg")?, ax("lane")?);
    let [r, c] = op.shape();
    (0..r * c)
        .map(|x| {
            let p = l.base_at(x).map_err(layout("an mma atom"))?;
            Ok((x as usize, p.get(&reg), p.get(&lane)))
        })
        .collect()
}

/// The number of warps of a register scope, or why the scope holds no registers.
pub(crate) fn scope_warps(call: &Call, ctx: &Ctx<'_>) -> std::result::Result<u32, String> {
    match call.scope.level {
        Level::Thread => Ok(0),
        Level::Warp => Ok(1),
        Level::Warpgroup => Ok(4),
        Level::Cta => Ok(ctx.kernel.launch.warps()),
        l => Err(format!(
            "registers belong to the threads of one CTA; a gemm on them runs at thread, warp, warpgroup or cta scope, not {}",
            l.name()
        )),
    }
}

/// The operands if all are register tensors, else why not.
pub(crate) fn operands(call: &Call) -> std::result::Result<[&Tensor; 3], String> {
    let Op::Gemm { c, a, b } = &call.op else {
        return Err("this variant lowers gemm only".into());
    };
    for t in [c, a, b] {
        if t.space != Space::Registers {
            return Err(format!(
                "{} lives in {} memory; gemm computes on register tensors (copy the operands in first)",
                t.name,
                crate::desc::space_name(t.space)
            ));
        }
    }
    Ok([c, a, b])
}

struct Fma;

/// One thread's table: for each C register, the (A, B) registers of `k = 0, 1, ...`.
type FmaTable = Vec<(i64, Vec<(i64, i64)>)>;

impl Variant for Fma {
    fn name(&self) -> &'static str {
        "gemm.fma"
    }
    fn op(&self) -> &'static str {
        "gemm"
    }
    fn priority(&self) -> i32 {
        0
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let no = |m: String| Ok(Outcome::Declined(m));
        let [c, a, b] = match operands(call) {
            Ok(t) => t,
            Err(r) => return no(r),
        };
        let warps = match scope_warps(call, ctx) {
            Ok(w) => w,
            Err(r) => return no(r),
        };
        let w = match workers(&call.scope, ctx) {
            Ok(w) => w,
            Err(r) => return no(r),
        };
        // At thread scope each thread's tensors are its own: every element on lane 0 of warp 0.
        let mut ps = Vec::new();
        for t in [c, a, b] {
            match places(t, warps.max(1))? {
                Ok(p) => ps.push(p),
                Err(r) if warps == 0 => {
                    return no(format!(
                        "at thread scope a tensor lives in one thread's registers (no lane or warp axis): {r}"
                    ))
                }
                Err(r) => return no(r),
            }
        }
        let (n, k) = (c.shape[1] as usize, a.shape[1] as usize);
        let threads = if warps == 0 {
            1
        } else {
            (warps * WARP) as usize
        };
        let mut tables: Vec<FmaTable> = vec![Vec::new(); threads];
        let find = |p: &Vec<(u32, i64)>, t: u32| p.iter().find(|q| q.0 == t).map(|q| q.1);
        let mut count = 0usize;
        for (x, copies) in ps[0].iter().enumerate() {
            let (i, j) = (x / n, x % n);
            for &(t, rc) in copies {
                if t as usize >= threads {
                    return no(format!(
                        "at thread scope each thread computes on its own registers, but {} puts C[{i}, {j}] on lane {} of warp {}",
                        c.name,
                        t % 32,
                        t / 32
                    ));
                }
                let mut row = Vec::with_capacity(k);
                for kk in 0..k {
                    let (Some(ra), Some(rb)) =
                        (find(&ps[1][i * k + kk], t), find(&ps[2][kk * n + j], t))
                    else {
                        return no(format!(
                            "thread {t} (lane {}, warp {}) holds C[{i}, {j}] but not both A[{i}, {kk}] and B[{kk}, {j}]; gemm.fma needs every product of its C elements in the thread",
                            t % 32,
                            t / 32
                        ));
                    };
                    row.push((ra, rb));
                }
                count = count.saturating_add(k);
                tables[t as usize].push((rc, row));
            }
        }
        for t in &mut tables {
            t.sort_unstable();
        }
        if let Some(t) = tables.iter().position(|t| *t != tables[0]) {
            return no(format!(
                "thread {t} computes other registers than thread 0; every thread of the scope runs the same code"
            ));
        }
        if tables[0].is_empty() {
            return no(format!("thread 0 holds no element of {}", c.name));
        }
        if count / threads > MAX_FMA {
            return no(format!(
                "{} multiply-adds per thread; gemm.fma emits at most {MAX_FMA}",
                count / threads
            ));
        }
        let at = |buf: usize, r: i64, d: DType| Access {
            buf,
            byte: Expr::Const(r * i64::from(d.bytes())),
        };
        let mut code = Vec::new();
        for (rc, row) in &tables[0] {
            for (ra, rb) in row {
                let dst = at(c.buffer.0, *rc, DType::F32);
                code.push(LStmt::Compute {
                    call: call.id,
                    f: Compute::MulAdd(a.dtype),
                    dst: dst.clone(),
                    srcs: vec![
                        dst,
                        at(a.buffer.0, *ra, a.dtype),
                        at(b.buffer.0, *rb, b.dtype),
                    ],
                });
            }
        }
        if let Some(g) = w.guard {
            code = vec![LStmt::If {
                cond: g,
                body: code,
            }];
        }
        let why = format!(
            "{} per thread, each {} from A and B in the same thread",
            crate::dispatch::count(tables[0].len(), "C element"),
            crate::dispatch::count(k, "fused multiply-add")
        );
        Ok(Outcome::Lowered { why, code })
    }
}

static VARIANTS: [Fma; 1] = [Fma];

/// The gemm variants: `gemm.mma_sync` first, then `gemm.fma`.
pub fn variants() -> Vec<&'static dyn Variant> {
    let mut v: Vec<&'static dyn Variant> = crate::mma::variants();
    v.extend(VARIANTS.iter().map(|v| v as &'static dyn Variant));
    v
}
