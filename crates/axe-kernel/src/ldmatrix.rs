//! `copy.ldmatrix`: shared memory → registers by `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16`.
//!
//! **The instruction.** Each of `n` (1, 2, 4) 8×8 matrices of 16-bit elements is given by 8 row
//! addresses (16 contiguous, 16-byte aligned bytes each): lane `l` supplies row `l mod 8` of matrix
//! `l div 8`. Lane `l` receives in its 32-bit register `i` the elements `(l div 4, 2·(l mod 4) + e)` of
//! matrix `i`, `e = 0, 1` in the low and high half; with `.trans` the elements `(2·(l mod 4) + e, l div 4)`.
//!
//! **Planning by enumeration**, as for the other register variants: the destination's layout gives each
//! element's thread and register, the source's its shared-memory element. Every thread must hold the same
//! registers, in pairs `2j, 2j + 1` (one 32-bit word each). Word `j` is an ldmatrix matrix in warp `w`
//! when the 32 lanes' pairs are the 8×8 pattern above (plain or transposed) over 8 rows that start at
//! multiples of 8 elements. Consecutive words of one kind go four (two, one) to an instruction; the
//! address each lane supplies must be `A0 + Σ c_b·bit_b(tid)` for every thread of the scope, so one
//! expression serves all. Whatever does not fit declines, saying which word, warp and lane.

use crate::desc::{Call, Op, Space, Tensor};
use crate::dispatch::{Ctx, Outcome, Variant};
use crate::error::{layout, Result};
use crate::expr::Expr;
use crate::ir::{Access, LStmt};
use crate::places::places;
use crate::scope::{Level, WARP};
use crate::spread::workers;

/// One word's matrix: plain or transposed, and its 8 row starts (elements) per warp.
type Word = (bool, Vec<[i64; 8]>);

/// The 8 row starts of word `j` in one warp, if the lanes' pairs form an ldmatrix matrix (`trans` or
/// not); else why not. `mem(l, e)` is the element lane `l` holds in register `2j + e`.
fn rows(
    mem: &dyn Fn(usize, usize) -> i64,
    trans: bool,
    what: &str,
) -> std::result::Result<[i64; 8], String> {
    let mut r = [0i64; 8];
    for (q, slot) in r.iter_mut().enumerate() {
        *slot = if trans {
            mem(q / 2, q % 2)
        } else {
            mem(4 * q, 0)
        };
        if slot.rem_euclid(8) != 0 {
            return Err(format!(
                "row {q} starts at element {slot}, not a multiple of 8 (16 bytes)"
            ));
        }
    }
    for l in 0..32 {
        for e in 0..2 {
            let want = if trans {
                r[2 * (l % 4) + e] + (l / 4) as i64
            } else {
                r[l / 4] + (2 * (l % 4) + e) as i64
            };
            if mem(l, e) != want {
                return Err(format!(
                    "lane {l} holds element {} in its half {e}, where {what}{} puts element {want}",
                    mem(l, e),
                    if trans { ".trans" } else { "" }
                ));
            }
        }
    }
    Ok(r)
}

struct LdMatrix;

impl Variant for LdMatrix {
    fn name(&self) -> &'static str {
        "copy.ldmatrix"
    }
    fn op(&self) -> &'static str {
        "copy"
    }
    fn priority(&self) -> i32 {
        1
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let no = |m: String| Ok(Outcome::Declined(m));
        let Op::Copy { dst, src } = &call.op else {
            return no("copy.ldmatrix lowers copy only".into());
        };
        if dst.space != Space::Registers || !matches!(src.space, Space::Shared(_)) {
            return no("ldmatrix loads registers from shared memory".into());
        }
        matrices(call, ctx, dst, src, false)
    }
}

/// Plans the 8×8-matrix instructions that move register tensor `dst` (a fragment) from shared
/// tensor `src` (`store`: false, ldmatrix) or register tensor `dst` to shared tensor `src`
/// (`store`: true, stmatrix); the lane ↔ element pattern is the same both ways.
pub(crate) fn matrices(
    call: &Call,
    ctx: &mut Ctx<'_>,
    dst: &Tensor,
    src: &Tensor,
    store: bool,
) -> Result<Outcome> {
    let no = |m: String| Ok(Outcome::Declined(m));
    let what = if store { "stmatrix" } else { "ldmatrix" };
    if dst.dtype.bytes() != 2 {
        return no(format!(
            "{what} moves 16-bit elements; {} is {}",
            dst.name, dst.dtype
        ));
    }
    let warps = match call.scope.level {
        Level::Warp => 1,
        Level::Warpgroup => 4,
        Level::Cta => ctx.kernel.launch.warps(),
        l => return no(format!("{what} is warp-wide; not at {} scope", l.name())),
    };
    let w = match workers(&call.scope, ctx) {
        Ok(w) => w,
        Err(r) => return no(r),
    };
    let ps = match places(dst, warps)? {
        Ok(p) => p,
        Err(r) => return no(r),
    };
    if store {
        if let Some((x, c)) = ps.iter().enumerate().find(|(_, c)| c.len() > 1) {
            return no(format!(
                "{} holds element {x} in {} places; stmatrix would store it more than once",
                dst.name,
                c.len()
            ));
        }
    }
    let threads = (warps * WARP) as usize;
    let mut tables: Vec<Vec<(i64, i64)>> = vec![Vec::new(); threads];
    for (x, copies) in ps.iter().enumerate() {
        let m = element(src, x as u64)?;
        for &(t, r) in copies {
            tables[t as usize].push((r, m));
        }
    }
    for t in &mut tables {
        t.sort_unstable();
    }
    let regs: Vec<i64> = tables[0].iter().map(|p| p.0).collect();
    if let Some(t) = tables
        .iter()
        .position(|t| t.iter().map(|p| p.0).ne(regs.iter().copied()))
    {
        return no(format!(
            "thread {t} holds other registers of {} than thread 0; every lane runs the same {what}",
            dst.name
        ));
    }
    let words = regs.len() / 2;
    if regs.is_empty()
        || !regs.len().is_multiple_of(2)
        || (0..words).any(|j| regs[2 * j] % 2 != 0 || regs[2 * j + 1] != regs[2 * j] + 1)
    {
        return no(format!(
            "{}'s registers in each thread are not whole pairs 2j, 2j+1 (32-bit words)",
            dst.name
        ));
    }
    let mut plan: Vec<Word> = Vec::with_capacity(words);
    for j in 0..words {
        let mut kind: Option<Word> = None;
        let mut why = String::new();
        for trans in [false, true] {
            let mut per_warp = Vec::with_capacity(warps as usize);
            for wp in 0..warps as usize {
                let mem = |l: usize, e: usize| tables[wp * 32 + l][2 * j + e].1;
                match rows(&mem, trans, what) {
                    Ok(r) => per_warp.push(r),
                    Err(r) => {
                        why = format!(
                            "word {j} (registers {}, {}) of warp {wp}: {r}",
                            regs[2 * j],
                            regs[2 * j] + 1
                        );
                        break;
                    }
                }
            }
            if per_warp.len() == warps as usize {
                kind = Some((trans, per_warp));
                break;
            }
        }
        match kind {
            Some(k) => plan.push(k),
            None => return no(format!("{} is not {what} fragments: {why}", dst.name)),
        }
    }
    // Instructions: runs of up to 4 words of one kind.
    let eb = 2i64;
    let mut code = Vec::new();
    let mut j = 0;
    while j < words {
        let trans = plan[j].0;
        let mut n = 1;
        while n < 4 && j + n < words && plan[j + n].0 == trans {
            n += 1;
        }
        if n == 3 {
            n = 2;
        }
        // Lane l of warp w supplies row l mod 8 of the group's matrix (l div 8) mod n.
        let addr = |t: usize| plan[j + (t % 32 / 8) % n].1[t / 32][t % 8];
        let a0 = addr(0);
        let bits: Vec<(usize, i64)> = (0..usize::BITS)
            .map(|b| 1usize << b)
            .take_while(|&m| m < threads)
            .map(|m| (m, addr(m) - a0))
            .collect();
        let by_bits = |t: usize| {
            a0 + bits
                .iter()
                .map(|&(m, c)| if t & m != 0 { c } else { 0 })
                .sum::<i64>()
        };
        if let Some(t) = (0..threads).find(|&t| addr(t) != by_bits(t)) {
            return no(format!(
                "thread {t}'s row address ({}) is not a sum over the bits of the thread index; one expression must serve every lane",
                addr(t)
            ));
        }
        let tid = if call.scope.level == Level::Cta {
            Expr::Thread
        } else {
            Expr::Thread.modulo(Expr::Const(i64::from(WARP) * i64::from(warps)))
        };
        let mut e = Expr::Const(a0);
        for &(m, c) in bits.iter().filter(|b| b.1 != 0) {
            let bit = tid
                .clone()
                .over(Expr::Const(m as i64))
                .modulo(Expr::Const(2));
            e = e.plus(bit.times(Expr::Const(c)));
        }
        let words: Vec<Access> = (j..j + n)
            .map(|k| Access {
                buf: dst.buffer.0,
                byte: Expr::Const(regs[2 * k] * eb),
            })
            .collect();
        let row = Access {
            buf: src.buffer.0,
            byte: e.times(Expr::Const(eb)),
        };
        code.push(if store {
            LStmt::StMatrix {
                call: call.id,
                trans,
                src: words,
                dst: row,
            }
        } else {
            LStmt::LdMatrix {
                call: call.id,
                trans,
                dst: words,
                src: row,
            }
        });
        j += n;
    }
    let n = code.len();
    if let Some(g) = w.guard {
        code = vec![LStmt::If {
            cond: g,
            body: code,
        }];
    }
    let trans = plan.iter().filter(|p| p.0).count();
    let why = format!(
        "{} holds {words} 32-bit words per thread, each an 8×8 {what} matrix of {} ({trans} transposed): {n} {what} per warp",
        dst.name, src.name
    );
    Ok(Outcome::Lowered { why, code })
}

/// The shared-memory element of flat index `x` of `t` (its first copy).
fn element(t: &Tensor, x: u64) -> Result<i64> {
    Ok(t.layout
        .base_at(x)
        .map_err(layout(format!("tensor {}", t.name)))?
        .get(&axe_layout::Axis::memory()))
}

static VARIANTS: [LdMatrix; 1] = [LdMatrix];

/// The ldmatrix variant.
pub fn variants() -> Vec<&'static dyn Variant> {
    VARIANTS.iter().map(|v| v as &'static dyn Variant).collect()
}
