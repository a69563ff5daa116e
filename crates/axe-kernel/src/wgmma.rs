//! `gemm.wgmma`: `C += A·B` by a warpgroup's `wgmma.mma_async` (sm_90a), A and B read by the tensor
//! cores straight from swizzled shared memory, C in the warpgroup's registers.
//!
//! **Applies** (at warpgroup scope, A and B f16 or bf16) when:
//! - C `[64, N]` (`N` a multiple of 8 up to 256) is laid out as [`accumulator`]`(N)` from some first
//!   register — the instruction's accumulator fragment;
//! - A `[64, K]` and B `[K, N]` (`K` a multiple of 16) are K-major tiles of a shared buffer with a
//!   swizzle of span `w` bytes: A's row `i` (B's column `j`) holds its K elements consecutively, rows
//!   `w` bytes apart, `K` elements fitting in one row, the first row starting a swizzle atom (`8·w`
//!   bytes). These are the layouts the copy engine writes with the same swizzle ([`crate::tma`]).
//!
//! **Schedule.** `wgmma.fence`, one `m64nNk16` per 16 of K (each descriptor's start 16 elements
//! further along the rows; stride between 8-row groups `8·w`), `commit_group`, `wait_group 0`: the call
//! has finished when it returns, as every operator's law requires. The interpreter runs each wgmma when
//! all 128 threads of the warpgroup reached it, reading A and B through the same descriptors.

use axe_layout::{Axis, Iter, Layout};

use crate::desc::{space_name, Call, Op, Space, Tensor};
use crate::dispatch::{Ctx, Outcome, Target, Variant};
use crate::dtype::DType;
use crate::error::{layout, overflow, KernelError, Result};
use crate::expr::Expr;
use crate::ir::{Access, LStmt, SmemDesc};
use crate::scope::Level;
use crate::spread::workers;

/// Rows of the accumulator of one warpgroup's wgmma.
pub const M: u64 = 64;
/// K per instruction.
pub const K: u64 = 16;

/// The accumulator fragment of `wgmma.m64nNk16` with f32 accumulators over `[64, N]` on `reg`, `lane`
/// and `warp` (warps of the warpgroup): thread `32w + l` holds in register `4j + 2i + e` the element
/// (row `16w + 8i + l div 4`, column `8j + 2(l mod 4) + e`):
/// `S[(4, 2, 8, N/8, 4, 2) : (1@warp, 2@reg, 4@lane, 4@reg, 1@lane, 1@reg)]`. `n` is wgmma's N: a
/// multiple of 8 from 8 to 256, and anything else is an error.
pub fn accumulator(n: u64) -> Result<Layout> {
    if n == 0 || !n.is_multiple_of(8) || n > 256 {
        return Err(KernelError::Invalid(format!(
            "a wgmma accumulator of N = {n}: wgmma's N is a multiple of 8 from 8 to 256"
        )));
    }
    let ax = |s: &str| Axis::new(s).map_err(layout(s));
    let (reg, lane, warp) = (ax("reg")?, ax("lane")?, ax("warp")?);
    let it = |e: u64, s: i64, a: &Axis| Iter::new(e, s, *a).map_err(layout("a wgmma accumulator"));
    Layout::from_shard(vec![
        it(4, 1, &warp)?,
        it(2, 2, &reg)?,
        it(8, 4, &lane)?,
        it(n / 8, 4, &reg)?,
        it(4, 1, &lane)?,
        it(2, 1, &reg)?,
    ])
    .map_err(layout("a wgmma accumulator"))
}

/// The element offset of `t`'s first element if every `(r, k)` (rows of `rows`, K of `k`, read through
/// `at(r, k)` as logical indices) sits at `first + r·pitch + k`, else why not.
fn k_major(
    t: &Tensor,
    rows: u64,
    k: u64,
    pitch: i64,
    at: impl Fn(u64, u64) -> [u64; 2],
) -> Result<std::result::Result<i64, String>> {
    let m = Axis::memory();
    let off = |r: u64, kk: u64| -> Result<i64> {
        let cs = t
            .layout
            .apply_multi(&at(r, kk), &t.shape)
            .map_err(layout(format!("tensor {}", t.name)))?;
        Ok(cs.first().map_or(0, |c| c.get(&m)))
    };
    if !t.layout.replica().is_empty() {
        return Ok(Err(format!("{} has replicas", t.name)));
    }
    let first = off(0, 0)?;
    for r in 0..rows {
        for kk in 0..k {
            let v = off(r, kk)?;
            if v != first + r as i64 * pitch + kk as i64 {
                return Ok(Err(format!(
                    "{}: element {:?} is at offset {v}, not {} — wgmma reads K-major rows {pitch} elements apart",
                    t.name,
                    at(r, kk),
                    first + r as i64 * pitch + kk as i64
                )));
            }
        }
    }
    Ok(Ok(first))
}

struct Wgmma;

impl Wgmma {
    fn plan(
        &self,
        call: &Call,
        ctx: &Ctx<'_>,
    ) -> Result<std::result::Result<(Vec<LStmt>, String), String>> {
        let Op::Gemm { c, a, b } = &call.op else {
            return Ok(Err("this variant lowers gemm only".into()));
        };
        if call.scope.level != Level::Warpgroup {
            return Ok(Err(format!(
                "wgmma is issued by a whole warpgroup; the call is at {} scope",
                call.scope
            )));
        }
        if !matches!(a.dtype, DType::F16 | DType::BF16) {
            return Ok(Err(format!(
                "A {} is {}; wgmma here takes f16 or bf16",
                a.name, a.dtype
            )));
        }
        if c.space != Space::Registers {
            return Ok(Err(format!(
                "C {} lives in {} memory; wgmma accumulates in registers",
                c.name,
                space_name(c.space)
            )));
        }
        let (mm, n, kk) = (c.shape[0], c.shape[1], a.shape[1]);
        if mm != M || n % 8 != 0 || n > 256 || kk % K != 0 {
            return Ok(Err(format!(
                "C is {mm}×{n} and K is {kk}; wgmma computes 64×N (N a multiple of 8 up to 256) in steps of 16 of K"
            )));
        }
        let mut sw = None;
        for t in [a, b] {
            match t.space {
                Space::Shared(Some(s)) => {
                    if sw.is_some_and(|x| x != s) {
                        return Ok(Err("A and B have different swizzles".into()));
                    }
                    sw = Some(s);
                }
                _ => {
                    return Ok(Err(format!(
                        "{} is in {} memory; wgmma reads A and B from swizzled shared memory",
                        t.name,
                        match t.space {
                            Space::Shared(None) => "unswizzled shared",
                            s => space_name(s),
                        }
                    )))
                }
            }
        }
        let Some(sw) = sw else {
            return Ok(Err("no operand in shared memory".into()));
        };
        let eb = u64::from(a.dtype.bytes());
        let pitch = (sw.bytes() / eb) as i64;
        if kk > pitch as u64 {
            return Ok(Err(format!(
                "K is {kk}; a {}-byte swizzle row holds {pitch} elements, and wgmma reads K within one row",
                sw.bytes()
            )));
        }
        // C: the accumulator fragment from its first register.
        let acc = accumulator(n)?;
        let (reg, lane, warp) = (
            Axis::new("reg").map_err(layout("reg"))?,
            Axis::new("lane").map_err(layout("lane"))?,
            Axis::new("warp").map_err(layout("warp"))?,
        );
        if !c.layout.replica().is_empty() {
            return Ok(Err(format!(
                "C {} has replicas; wgmma holds each element once",
                c.name
            )));
        }
        let r0 = c.layout.base_at(0).map_err(layout("C"))?.get(&reg);
        for x in 0..mm * n {
            let got = c.layout.base_at(x).map_err(layout("C"))?;
            let want = acc.base_at(x).map_err(layout("the accumulator"))?;
            let g = (got.get(&reg) - r0, got.get(&lane), got.get(&warp));
            let w = (want.get(&reg), want.get(&lane), want.get(&warp));
            if g != w {
                return Ok(Err(format!(
                    "C {}'s register layout is not the wgmma accumulator: element ({}, {}) sits on warp {} lane {} at register +{}, the fragment puts it on warp {} lane {} at register +{}",
                    c.name, x / n, x % n, g.2, g.1, g.0, w.2, w.1, w.0
                )));
            }
        }
        let pa = match k_major(a, mm, kk, pitch, |r, k| [r, k])? {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        let pb = match k_major(b, n, kk, pitch, |j, k| [k, j])? {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        let atom = 8 * sw.bytes() as i64;
        for (t, p) in [(a, pa), (b, pb)] {
            if (p * eb as i64) % atom != 0 {
                return Ok(Err(format!(
                    "{}'s first row is at byte {} of its buffer; wgmma's rows start a {atom}-byte swizzle atom",
                    t.name,
                    p * eb as i64
                )));
            }
        }
        let w = match workers(&call.scope, ctx) {
            Ok(w) => w,
            Err(e) => return Ok(Err(e)),
        };
        let regs = u32::try_from(n / 2).map_err(|_| overflow("counting wgmma registers"))?;
        let acc_at = Access {
            buf: c.buffer.0,
            byte: Expr::Const(r0 * 4),
        };
        let sbo = u32::try_from(atom).map_err(|_| overflow("encoding a descriptor"))?;
        let desc = |t: &Tensor, p: i64, step: u64| SmemDesc {
            at: Access {
                buf: t.buffer.0,
                byte: Expr::Const((p + (step * K) as i64) * eb as i64),
            },
            sbo,
            swizzle: sw,
        };
        let mut code = vec![LStmt::WgmmaFence {
            acc: acc_at.clone(),
            regs,
        }];
        for step in 0..kk / K {
            code.push(LStmt::Wgmma {
                call: call.id,
                dtype: a.dtype,
                n: n as u32,
                c: acc_at.clone(),
                a: desc(a, pa, step),
                b: desc(b, pb, step),
            });
        }
        code.push(LStmt::WgmmaCommit);
        code.push(LStmt::WgmmaWait {
            pending: 0,
            acc: acc_at,
            regs,
        });
        if let Some(g) = w.guard {
            code = vec![LStmt::If {
                cond: g,
                body: code,
            }];
        }
        let why = format!(
            "C is the m64n{n} accumulator fragment; A and B are K-major in {}-byte swizzled shared memory: {} wgmma m64n{n}k16",
            sw.bytes(),
            kk / K
        );
        Ok(Ok((code, why)))
    }
}

impl Variant for Wgmma {
    fn name(&self) -> &'static str {
        "gemm.wgmma"
    }
    fn op(&self) -> &'static str {
        "gemm"
    }
    fn priority(&self) -> i32 {
        20
    }
    fn targets(&self) -> &'static [Target] {
        &[Target::Cpu, Target::Sm90a]
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        Ok(Outcome::of(self.plan(call, ctx)?))
    }
}

static VARIANTS: [Wgmma; 1] = [Wgmma];

/// The `gemm.wgmma` variant.
pub fn variants() -> Vec<&'static dyn Variant> {
    VARIANTS.iter().map(|v| v as &'static dyn Variant).collect()
}
