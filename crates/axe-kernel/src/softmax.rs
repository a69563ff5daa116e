//! The shipped `softmax` kernel: `y[r, c] = exp(x[r, c] - max_c x[r, ·]) / Σ_c exp(x[r, c] - max)` over
//! the rows of a row-major `[rows, cols]` array, written with the description.
//!
//! Each row is read from global memory once into registers (`copy`), reduced to its max (`reduce`),
//! shifted and exponentiated in place (`binary` exp_sub with the max broadcast over the row:
//! `e^(x - max)`; for f16 and bf16 rows `binary` sub then `unary` exp), reduced to its sum, multiplied
//! by the sum's reciprocal (one `binary` div a row in each thread, then `binary` mul) and written back (`copy`). The
//! math is f32; f16 and bf16 rows are cast to f32 in registers after the load and back before the store.
//!
//! **Schedule.** Rows of at most [`WARP_COLS`] columns take one warp each (8 rows per CTA of 256
//! threads; the reductions are lane butterflies, `reduce.shfl`); longer rows take one CTA of 256
//! threads each (the reductions add a shared-memory step across warps, `reduce.smem`). A thread holds
//! its share of the row as chunks of `v` consecutive columns (up to 16 bytes, `v` dividing `cols`),
//! element `chunk·threads·v + thread·v + j`, so neighbouring threads read neighbouring chunks (loads
//! and stores are 16-byte vectors where `v` is). A row that is not whole chunks of every thread is
//! padded in registers with -inf (the max ignores it, exp makes it 0) and moved in up to three
//! pieces: whole chunks (vectors), the last chunk's whole warps, its last warp's threads. The grid has
//! at most [`MAX_GRID`] CTAs; a loop over row blocks covers the rest, each row's global addresses given
//! by a window ([`crate::KernelBuilder::window`]) at `row · cols`.
//!
//! **Accuracy.** Every output of f32 rows measured is within 1e-6 relative of the f64 reference
//! ([`softmax_reference`]) where it is a normal f32. Their shift and exponential are one
//! [`crate::pointwise::exp_sub`] (the same
//! formula in both backends, around each platform's f32 `expf`), which carries the rounding of
//! `x - max` into the exponential: rounding `x - max` alone would cost up to `|x - max|·2⁻²⁴`
//! relative (10⁻⁶ at a distance of 16 from the max); the exponential itself is within 1 ulp on the
//! CPU, 2 on the GPU. Each thread sums its registers pairwise (`reduce`), so the sum of `n` terms
//! over `t` threads takes `log₂(n/t) + log₂ t` roundings, not `n/t + log₂ t`; the reciprocal and the
//! product round once each. For f16 and bf16 outputs the shift is rounded before the exponential:
//! that costs up to `|x - max|·2⁻²⁴` relative (5.2·10⁻⁶ at most wherever the result is a normal f32),
//! far inside the one rounding to 16 bits, and saves the correction's instructions, which with the
//! division's set the pace of 16-bit rows on a GPU.

use axe_layout::{Axis, Coord, Iter, Layout};

use crate::desc::{BinaryOp, Kernel, KernelBuilder, Op, Space, Tensor, UnaryOp, Value};
use crate::dtype::DType;
use crate::error::{layout, overflow, KernelError, Result};
use crate::expr::Expr;
use crate::reduce::ReduceOp;
use crate::scope::{Launch, Scope, WARP};

/// Longest row a warp handles alone.
pub const WARP_COLS: u64 = 1024;
/// Most elements one thread holds (registers).
pub const MAX_PER_THREAD: u64 = 64;
/// Most CTAs in the grid; a loop over row blocks covers more rows.
pub const MAX_GRID: u32 = 65535;
/// Threads per CTA.
pub const THREADS: u32 = 256;

/// How the rows are spread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Threads per CTA.
    pub threads: u32,
    /// Threads per row (32: a warp per row; else the CTA).
    pub row_threads: u32,
    /// Rows per CTA per loop iteration.
    pub rows_per_cta: u32,
    /// CTAs.
    pub grid: u32,
    /// Loop iterations over row blocks.
    pub iterations: u64,
    /// Elements each thread holds.
    pub per_thread: u64,
    /// Consecutive elements per chunk (16 bytes where the row allows).
    pub vector: u64,
    /// The row's length in registers: `cols` rounded up to whole chunks of every thread (the rest
    /// holds -inf, which neither the max nor, after exp, the sum sees).
    pub padded: u64,
}

/// A softmax kernel and its buffers' sizes.
#[derive(Debug, Clone)]
pub struct Softmax {
    /// The kernel: parameters `x`, `y`.
    pub kernel: Kernel,
    /// Bytes of `x` (and of `y`).
    pub bytes: u64,
    /// The schedule chosen.
    pub schedule: Schedule,
}

/// The softmax kernel over the rows of a row-major `[rows, cols]` array of `dtype` (f32, f16, bf16).
pub fn softmax_kernel(rows: u64, cols: u64, dtype: DType) -> Result<Softmax> {
    softmax_kernel_grid(rows, cols, dtype, MAX_GRID)
}

/// [`softmax_kernel`] with at most `max_grid` CTAs (the rest of the rows by the row loop).
pub fn softmax_kernel_grid(rows: u64, cols: u64, dtype: DType, max_grid: u32) -> Result<Softmax> {
    let s = schedule(rows, cols, dtype, max_grid)?;
    let bytes = rows
        .checked_mul(cols)
        .and_then(|n| n.checked_mul(u64::from(dtype.bytes())))
        .ok_or_else(|| overflow("sizing the softmax buffers"))?;
    let mut k = KernelBuilder::new(
        "softmax",
        Launch {
            grid: s.grid,
            cluster: 1,
            threads: s.threads,
        },
    )?;
    let n = rows * cols;
    let xb = k.buffer("x", Space::Global, dtype, n)?;
    let yb = k.buffer("y", Space::Global, dtype, n)?;
    let gl = Layout::row_major(&[1, cols]).map_err(layout("a row"))?;
    let xg = k.tensor("x", xb, &[1, cols], gl.clone())?;
    let yg = k.tensor("y", yb, &[1, cols], gl)?;
    let warps = s.row_threads / WARP;
    let (v, chunks) = (s.vector, s.per_thread / s.vector);
    let ax = |n: &str| Axis::new(n).map_err(layout(n));
    let (reg, lane, warp) = (ax("reg")?, ax("lane")?, ax("warp")?);
    let it = |e: u64, st: i64, a: &Axis| Iter::new(e, st, *a).map_err(layout("an iter"));
    // The row in registers: chunk · threads · v + warp · 32v + lane · v + j.
    let row_layout = Layout::from_shard(vec![
        it(chunks, v as i64, &reg)?,
        it(u64::from(warps), 1, &warp)?,
        it(u64::from(WARP), 1, &lane)?,
        it(v, 1, &reg)?,
    ])
    .map_err(layout("the row's register layout"))?;
    let p = s.padded;
    // A per-row scalar, replicated over the row's threads, and its broadcast over the row.
    let spread_over = vec![
        it(u64::from(warps), 1, &warp)?,
        it(u64::from(WARP), 1, &lane)?,
    ];
    let scalar = |k: &mut KernelBuilder, name: &str| -> Result<(Tensor, Tensor)> {
        let b = k.buffer(name, Space::Registers, DType::F32, 1)?;
        let one = Layout::new(vec![it(1, 0, &reg)?], spread_over.clone(), Coord::zero())
            .map_err(layout(name))?;
        let all = Layout::new(vec![it(p, 0, &reg)?], spread_over.clone(), Coord::zero())
            .map_err(layout(name))?;
        Ok((
            k.tensor(name, b, &[1, 1], one)?,
            k.tensor(&format!("{name}_row"), b, &[1, p], all)?,
        ))
    };
    let xf_b = k.buffer("xf", Space::Registers, DType::F32, s.per_thread)?;
    let xf = k.tensor("xf", xf_b, &[1, p], row_layout.clone())?;
    let xio = if dtype == DType::F32 {
        None
    } else {
        let b = k.buffer("xio", Space::Registers, dtype, s.per_thread)?;
        Some(k.tensor("xio", b, &[1, p], row_layout)?)
    };
    let (m, m_row) = scalar(&mut k, "row_max")?;
    let (sum, _) = scalar(&mut k, "row_sum")?;
    let (inv, inv_row) = scalar(&mut k, "row_inv")?;
    let scope = if s.row_threads == WARP {
        Scope::warp()
    } else {
        Scope::cta()
    };
    let (grid, rpc, iters) = (i64::from(s.grid), i64::from(s.rows_per_cta), s.iterations);
    let rows_i = i64::try_from(rows).map_err(|_| overflow("converting the row count"))?;
    let cols_i = i64::try_from(cols).map_err(|_| overflow("converting the column count"))?;
    let cuts = pieces(&s, cols);
    k.for_loop(iters, |k, i| {
        let block = Expr::Var(i).times(Expr::Const(grid)).plus(Expr::Cta);
        let row = if s.row_threads == WARP {
            block
                .times(Expr::Const(rpc))
                .plus(Expr::Thread.over(Expr::Const(i64::from(WARP))))
        } else {
            block
        };
        let row = k.let_(row);
        k.if_then(Expr::Var(row).lt(Expr::Const(rows_i)), |k| {
            let base = Expr::Var(row).times(Expr::Const(cols_i));
            k.window(xb, base.clone(), cols, |k| {
                k.window(yb, base, cols, |k| {
                    let row = Row {
                        scope: &scope,
                        xg: &xg,
                        yg: &yg,
                        xio: xio.as_ref(),
                        xf: &xf,
                        pieces: &cuts,
                        pad: s.padded != cols,
                        inv: (&inv, &inv_row),
                    };
                    body(k, &row, (&m, &m_row), &sum)
                })
            })
        })
    })?;
    Ok(Softmax {
        kernel: k.build()?,
        bytes,
        schedule: s,
    })
}

/// The tensors of one row.
struct Row<'a> {
    scope: &'a Scope,
    xg: &'a Tensor,
    yg: &'a Tensor,
    /// The row in registers in the array's dtype (f16, bf16), if not f32.
    xio: Option<&'a Tensor>,
    /// The row in registers in f32.
    xf: &'a Tensor,
    /// Column ranges that slice the register layout.
    pieces: &'a [std::ops::Range<u64>],
    /// Whether the registers hold more than the row (filled with -inf first).
    pad: bool,
    /// The row sum's reciprocal, and its broadcast over the row.
    inv: (&'a Tensor, &'a Tensor),
}

/// One row: load, max, shift and exp, sum, its reciprocal, product, store.
fn body(
    k: &mut KernelBuilder,
    r: &Row<'_>,
    (m, m_row): (&Tensor, &Tensor),
    sum: &Tensor,
) -> Result<()> {
    let sc = || r.scope.clone();
    let xf = r.xf;
    let io = r.xio.unwrap_or(xf);
    if r.pad {
        k.fill(sc(), io, Value::Float(f64::NEG_INFINITY))?;
    }
    for c in r.pieces {
        let at = [0..1, c.clone()];
        k.copy(sc(), &io.region(&at)?, &r.xg.region(&at)?)?;
    }
    if let Some(io) = r.xio {
        k.call(
            sc(),
            Op::Cast {
                dst: xf.clone(),
                src: io.clone(),
            },
        )?;
    }
    k.reduce(sc(), m, xf, &[1], ReduceOp::Max)?;
    let bin = |op, b: &Tensor| Op::Binary {
        op,
        dst: xf.clone(),
        a: xf.clone(),
        b: b.clone(),
    };
    if r.xio.is_none() {
        // f32 out: the shift's rounding carried into the exponential.
        k.call(sc(), bin(BinaryOp::ExpSub, m_row))?;
    } else {
        // 16-bit out: the shift rounded, then the exponential (their f32 roundings are far inside
        // the one rounding to f16 or bf16).
        k.call(sc(), bin(BinaryOp::Sub, m_row))?;
        k.call(
            sc(),
            Op::Unary {
                op: UnaryOp::Exp,
                dst: xf.clone(),
                src: xf.clone(),
            },
        )?;
    }
    k.reduce(sc(), sum, xf, &[1], ReduceOp::Sum)?;
    // One reciprocal a row, then a product each.
    let (inv, inv_row) = r.inv;
    k.fill(sc(), inv, Value::Float(1.0))?;
    k.call(
        sc(),
        Op::Binary {
            op: BinaryOp::Div,
            dst: inv.clone(),
            a: inv.clone(),
            b: sum.clone(),
        },
    )?;
    k.call(sc(), bin(BinaryOp::Mul, inv_row))?;
    if let Some(io) = r.xio {
        k.call(
            sc(),
            Op::Cast {
                dst: io.clone(),
                src: xf.clone(),
            },
        )?;
    }
    for c in r.pieces {
        let at = [0..1, c.clone()];
        k.copy(sc(), &r.yg.region(&at)?, &io.region(&at)?)?;
    }
    Ok(())
}

/// The schedule for `[rows, cols]` of `dtype`, or why the kernel cannot do it.
pub fn schedule(rows: u64, cols: u64, dtype: DType, max_grid: u32) -> Result<Schedule> {
    let bad = |m: String| {
        Err(KernelError::Invalid(format!(
            "softmax [{rows}, {cols}] {dtype}: {m}"
        )))
    };
    if !matches!(dtype, DType::F32 | DType::F16 | DType::BF16) {
        return bad("the dtype must be f32, f16 or bf16".into());
    }
    if rows == 0 || cols == 0 || max_grid == 0 {
        return bad("rows, columns and the grid must be at least 1".into());
    }
    let row_threads = if cols <= WARP_COLS { WARP } else { THREADS };
    // The widest chunk (at most 16 bytes, and no more than a thread's share of the row) dividing the
    // row, so rows start on chunk boundaries.
    let widest = (16 / u64::from(dtype.bytes())).min(cols.div_ceil(u64::from(row_threads)));
    let vector = (0..=widest.ilog2())
        .rev()
        .map(|b| 1u64 << b)
        .find(|v| cols.is_multiple_of(*v))
        .unwrap_or(1);
    let tile = u64::from(row_threads) * vector;
    let padded = cols.div_ceil(tile).saturating_mul(tile);
    let per_thread = padded / u64::from(row_threads);
    if per_thread > MAX_PER_THREAD {
        return bad(format!(
            "a row takes {row_threads} threads, so each would hold {per_thread} elements in registers; at most {MAX_PER_THREAD} fit (rows of up to {} columns)",
            MAX_PER_THREAD * u64::from(THREADS)
        ));
    }
    let rows_per_cta = if row_threads == WARP {
        THREADS / WARP
    } else {
        1
    };
    let blocks = rows.div_ceil(u64::from(rows_per_cta));
    let grid = u32::try_from(blocks.min(u64::from(max_grid))).unwrap_or(max_grid);
    Ok(Schedule {
        threads: THREADS,
        row_threads,
        rows_per_cta,
        grid,
        iterations: blocks.div_ceil(u64::from(grid)),
        per_thread,
        vector,
        padded,
    })
}

/// The column ranges of a row that each slice the register layout as one box: whole chunks, then the
/// last chunk's whole warps, then its last warp's threads.
fn pieces(s: &Schedule, cols: u64) -> Vec<std::ops::Range<u64>> {
    let tile = u64::from(s.row_threads) * s.vector;
    let warp = u64::from(WARP) * s.vector;
    let full = cols / tile * tile;
    let warps = full + (cols - full) / warp * warp;
    [0..full, full..warps, warps..cols]
        .into_iter()
        .filter(|r| r.start < r.end)
        .collect()
}

/// The softmax of each row of the row-major `[rows, cols]` array `x`, computed in f64.
pub fn softmax_reference(rows: u64, cols: u64, x: &[f64]) -> Result<Vec<f64>> {
    let n = rows
        .checked_mul(cols)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| overflow("sizing the reference"))?;
    if x.len() != n || cols == 0 {
        return Err(KernelError::Invalid(format!(
            "softmax reference: [{rows}, {cols}] needs {n} values (and a column), {} were given",
            x.len()
        )));
    }
    let mut y = Vec::with_capacity(n);
    for row in x.chunks(cols as usize) {
        let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = row.iter().map(|v| (v - m).exp()).collect();
        let s: f64 = e.iter().sum();
        y.extend(e.iter().map(|v| v / s));
    }
    Ok(y)
}
