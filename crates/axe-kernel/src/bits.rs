//! `pack_bits` and `unpack_bits`: 32 elements to the bits of a 32-bit word and back, by warp ballots —
//! what moves bit-packed `pred` layouts (`E(1)`) on the GPU.
//!
//! **Laws.** `pack_bits(dst, src)` with `src: [32, W]` (1-byte elements) and `dst: [W]` (32-bit words):
//! `dst[j] = Σ_r (src[r, j] & 1)·2^r` (a pred byte's value is its low bit, as `axe relayout` reads it). `unpack_bits(dst, src)` with `src: [W]` words and `dst: [32, W]`:
//! `dst[r, j] = (src[j] >> r) & 1`.
//!
//! Variants (every target; warp scope), tried in this order:
//! - **`*.thread`** applies when every element is in the thread holding its word, and every lane holds
//!   the same registers: packing clears each word and ORs in each element's low bit; unpacking takes
//!   each element from its word's bit. No lane talks to another.
//! - **`*.ballot`** applies when row `r` of the elements is in lane `r` (column `j` at one register of
//!   every lane) and word `j` in lane `j mod 32` (32 words to a register) — a 32×32 bit transpose across
//!   the warp. Packing is one `__ballot_sync` per word (lane `r` votes its element's low bit; lane
//!   `j mod 32` keeps the word); unpacking is one ballot per row of each 32 words (lane `j` votes bit `r`
//!   of its word; lane `r` keeps the row's 32 bits), then each lane spreads its bits to its elements.

use crate::desc::{Buffer, Call, KernelBuilder, Op, Space, Tensor};
use crate::dispatch::{Ctx, Outcome, Variant};
use crate::dtype::DType;
use crate::error::{KernelError, Result};
use crate::expr::Expr;
use crate::ir::{Access, Compute, LStmt};
use crate::places::places;
use crate::scope::{Level, Scope};
use crate::spread::workers;

/// Checks a pack's or an unpack's operands: elements `[32, W]` of 1 byte, words `[W]` of 4 bytes.
pub(crate) fn check_shapes(label: &str, op: &Op) -> Result<()> {
    let (elems, words) = match op {
        Op::PackBits { dst, src } => (src, dst),
        Op::UnpackBits { dst, src } => (dst, src),
        _ => return Ok(()),
    };
    let w = words.shape.first().copied().unwrap_or(0);
    if words.shape.len() != 1 || elems.shape != [32, w] || w == 0 {
        return Err(KernelError::Invalid(format!(
            "{label}: the words {} are {:?} and the elements {} {:?}; 32 elements [32, W] go to each word of [W]",
            words.name, words.shape, elems.name, elems.shape
        )));
    }
    if elems.dtype.bytes() != 1 || words.dtype.bytes() != 4 {
        return Err(KernelError::Invalid(format!(
            "{label}: the elements {} are {} and the words {} {}; elements of 1 byte, words of 4",
            elems.name, elems.dtype, words.name, words.dtype
        )));
    }
    Ok(())
}

impl KernelBuilder {
    /// `pack_bits(dst, src)` at `scope` (see [`crate::bits`]).
    pub fn pack_bits(&mut self, scope: Scope, dst: &Tensor, src: &Tensor) -> Result<usize> {
        self.call(
            scope,
            Op::PackBits {
                dst: dst.clone(),
                src: src.clone(),
            },
        )
    }

    /// `unpack_bits(dst, src)` at `scope` (see [`crate::bits`]).
    pub fn unpack_bits(&mut self, scope: Scope, dst: &Tensor, src: &Tensor) -> Result<usize> {
        self.call(
            scope,
            Op::UnpackBits {
                dst: dst.clone(),
                src: src.clone(),
            },
        )
    }
}

type Placed = std::result::Result<Vec<Vec<(u32, i64)>>, String>;

fn placed(t: &Tensor) -> Result<Placed> {
    if t.space != Space::Registers {
        return Ok(Err(format!(
            "{} lives in {} memory; the bit variants work on registers",
            t.name,
            crate::desc::space_name(t.space)
        )));
    }
    places(t, 1)
}

/// For the ballot variants: the register each lane holds column `j` of the elements at (the same in
/// every lane), and the register of word `j` in lane `j mod 32` (per group of 32 words, the same in
/// every lane); or why the layouts are not the warp's 32×32 transposes.
/// Each column's register, and each group of 32 words' register.
type BallotRegisters = (Vec<i64>, Vec<i64>);

fn ballot_registers(
    elems: &Tensor,
    words: &Tensor,
) -> Result<std::result::Result<BallotRegisters, String>> {
    let no = |m: String| Ok(Err(m));
    let (pe, pw) = match (placed(elems)?, placed(words)?) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return no(e),
    };
    let w = words.shape[0] as usize;
    if !w.is_multiple_of(32) {
        return no(format!(
            "{} holds {w} words; ballots make them 32 at a time",
            words.name
        ));
    }
    let mut cols = vec![None; w];
    for (x, copies) in pe.iter().enumerate() {
        let (r, j) = (x / w, x % w);
        match copies[..] {
            [(t, reg)] if t as usize == r && cols[j].is_none_or(|c| c == reg) => cols[j] = Some(reg),
            _ => {
                return no(format!(
                    "{}[{r}, {j}] is at {copies:?} (thread, register); for ballots row r lives in lane r, each column at one register of every lane",
                    elems.name
                ))
            }
        }
    }
    let mut regs = vec![None; w / 32];
    for (j, copies) in pw.iter().enumerate() {
        match copies[..] {
            [(t, reg)] if t as usize == j % 32 && regs[j / 32].is_none_or(|c| c == reg) => {
                regs[j / 32] = Some(reg)
            }
            _ => {
                return no(format!(
                    "{}[{j}] is at {copies:?} (thread, register); for ballots word j lives in lane j mod 32, 32 words to a register",
                    words.name
                ))
            }
        }
    }
    Ok(Ok((
        cols.into_iter().map(|c| c.unwrap_or(0)).collect(),
        regs.into_iter().map(|c| c.unwrap_or(0)).collect(),
    )))
}

/// One thread's table for the thread variants: (element register, word register, bit), or why the
/// words and their elements are not in the same threads with the same registers everywhere.
type BitTable = Vec<(i64, i64, u32)>;

fn thread_table(elems: &Tensor, words: &Tensor) -> Result<std::result::Result<BitTable, String>> {
    let no = |m: String| Ok(Err(m));
    let (pe, pw) = match (placed(elems)?, placed(words)?) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return no(e),
    };
    let w = words.shape[0] as usize;
    let mut tables: Vec<BitTable> = vec![Vec::new(); 32];
    for (x, copies) in pe.iter().enumerate() {
        let (r, j) = (x / w, x % w);
        match (&copies[..], &pw[j][..]) {
            ([(t, re)], [(u, rw)]) if t == u => tables[*t as usize].push((*re, *rw, r as u32)),
            _ => {
                return no(format!(
                    "{}[{r}, {j}] is at {copies:?} and its word {}[{j}] at {:?} (thread, register); each element must be in its word's thread, once",
                    elems.name, words.name, pw[j]
                ))
            }
        }
    }
    for t in &mut tables {
        t.sort_unstable();
    }
    if let Some(t) = tables.iter().position(|t| *t != tables[0]) {
        return no(format!(
            "lane {t} holds other registers than lane 0; every lane runs the same code"
        ));
    }
    Ok(Ok(tables.swap_remove(0)))
}

fn reg(t: &Tensor, r: i64) -> Access {
    Access {
        buf: t.buffer.0,
        byte: Expr::Const(r * i64::from(t.dtype.bytes())),
    }
}

/// The ballot and thread variants: `thread` picks the per-thread schedule.
struct Plan {
    thread: bool,
}

impl Plan {
    fn plan(
        &self,
        call: &Call,
        ctx: &mut Ctx<'_>,
    ) -> Result<std::result::Result<(Vec<LStmt>, String), String>> {
        if call.scope.level != Level::Warp {
            return Ok(Err(format!(
                "the bit variants run at warp scope; the call is at {} scope",
                call.scope
            )));
        }
        let w = match workers(&call.scope, ctx) {
            Ok(w) => w,
            Err(e) => return Ok(Err(e)),
        };
        let (elems, words, pack) = match &call.op {
            Op::PackBits { dst, src } => (src, dst, true),
            Op::UnpackBits { dst, src } => (dst, src, false),
            _ => {
                return Ok(Err(
                    "this variant lowers pack_bits and unpack_bits only".into()
                ))
            }
        };
        let mut code = Vec::new();
        let why;
        if self.thread {
            let table = match thread_table(elems, words)? {
                Ok(t) => t,
                Err(e) => return Ok(Err(e)),
            };
            if pack {
                let mut ws: Vec<i64> = table.iter().map(|e| e.1).collect();
                ws.sort_unstable();
                ws.dedup();
                for wr in ws {
                    code.push(LStmt::Store {
                        call: call.id,
                        dst: reg(words, wr),
                        value: vec![0; 4],
                    });
                }
            }
            for &(re, rw, bit) in &table {
                code.push(if pack {
                    LStmt::Compute {
                        call: call.id,
                        f: Compute::OrBit {
                            bit,
                            elem: elems.dtype,
                        },
                        dst: reg(words, rw),
                        srcs: vec![reg(words, rw), reg(elems, re)],
                    }
                } else {
                    LStmt::Compute {
                        call: call.id,
                        f: Compute::Bit {
                            bit,
                            out: elems.dtype,
                        },
                        dst: reg(elems, re),
                        srcs: vec![reg(words, rw)],
                    }
                });
            }
            why = format!(
                "each element in its word's thread: {} bit operations per thread",
                table.len()
            );
        } else {
            let (cols, regs) = match ballot_registers(elems, words)? {
                Ok(x) => x,
                Err(e) => return Ok(Err(e)),
            };
            if pack {
                for (j, c) in cols.iter().enumerate() {
                    code.push(LStmt::Ballot {
                        call: call.id,
                        dst: reg(words, regs[j / 32]),
                        src: reg(elems, *c),
                        bytes: 1,
                        bit: Some(0),
                        keep: (j % 32) as u32,
                    });
                }
                why = "row r in lane r, word j in lane j mod 32: one ballot per word".to_string();
            } else {
                let mask = ctx.add_buffer(Buffer {
                    name: format!("_bits{}", call.id),
                    space: Space::Registers,
                    dtype: DType::S32,
                    elems: 1,
                });
                let m = Access {
                    buf: mask,
                    byte: Expr::Const(0),
                };
                for (g, wr) in regs.iter().enumerate() {
                    for r in 0..32u32 {
                        code.push(LStmt::Ballot {
                            call: call.id,
                            dst: m.clone(),
                            src: reg(words, *wr),
                            bytes: 4,
                            bit: Some(r),
                            keep: r,
                        });
                    }
                    for j in 0..32 {
                        code.push(LStmt::Compute {
                            call: call.id,
                            f: Compute::Bit {
                                bit: j as u32,
                                out: elems.dtype,
                            },
                            dst: reg(elems, cols[32 * g + j]),
                            srcs: vec![m.clone()],
                        });
                    }
                }
                why = "word j in lane j mod 32, row r in lane r: one ballot per row of each 32 words, then each lane spreads its bits".to_string();
            }
        }
        if let Some(g) = w.guard {
            code = vec![LStmt::If {
                cond: g,
                body: code,
            }];
        }
        Ok(Ok((code, why)))
    }
}

struct BitVariant {
    name: &'static str,
    op: &'static str,
    priority: i32,
    thread: bool,
}

impl Variant for BitVariant {
    fn name(&self) -> &'static str {
        self.name
    }
    fn op(&self) -> &'static str {
        self.op
    }
    fn priority(&self) -> i32 {
        self.priority
    }
    fn lower(&self, call: &Call, ctx: &mut Ctx<'_>) -> Result<Outcome> {
        let plan = Plan {
            thread: self.thread,
        };
        Ok(Outcome::of(plan.plan(call, ctx)?))
    }
}

static VARIANTS: [BitVariant; 4] = [
    BitVariant {
        name: "pack_bits.thread",
        op: "pack_bits",
        priority: 20,
        thread: true,
    },
    BitVariant {
        name: "pack_bits.ballot",
        op: "pack_bits",
        priority: 10,
        thread: false,
    },
    BitVariant {
        name: "unpack_bits.thread",
        op: "unpack_bits",
        priority: 20,
        thread: true,
    },
    BitVariant {
        name: "unpack_bits.ballot",
        op: "unpack_bits",
        priority: 10,
        thread: false,
    },
];

/// The `pack_bits` and `unpack_bits` variants.
pub fn variants() -> Vec<&'static dyn Variant> {
    VARIANTS.iter().map(|v| v as &'static dyn Variant).collect()
}
