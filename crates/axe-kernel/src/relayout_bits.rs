//! The relayout kernel for bit-packed `pred`: row-major bytes to and from `T(32,128)(32,1)E(1)`, where
//! each 32×128 tile holds, per column, the 32 rows' elements as the bits of one 32-bit word.
//!
//! A warp step takes regions of `s` tiles side by side (32 rows × 128·s columns): lane `l` holds columns
//! `4s·l .. 4s·(l+1)` of a region's 32 rows (registers `4s·r + c mod 4s`) and their `4s` words. Packing
//! takes two one-tile regions `step` regions apart, each region's loads in a branch of their own, so the
//! GPU compiler issues every load of the step before the first bit operation (on sm_90a: 256 bytes a
//! thread in flight). Unpacking takes one region of 4 tiles, fewer where the row of tiles does not
//! divide by 4.
//!
//! Packing, the warp loads each row in `4s`-byte vectors (`128·s` contiguous bytes a row). `pack_bits`
//! ORs each element's bit into its word in the same thread (`pack_bits.thread`). The warp then stores
//! the region's words (consecutive tiles' words are consecutive) in 16-byte vectors. Unpacking runs the
//! other way.
//!
//! Steps go round the warps of the grid; consecutive warps take consecutive regions. On an H100
//! (docs/kernel.md): packing 0.99 of the device copy, unpacking 0.91.

use axe_layout::Layout;
use axe_xla::{ArrayShape, PrimitiveType};

use crate::desc::{KernelBuilder, Space};
use crate::dtype::DType;
use crate::error::{layout, overflow, KernelError, Result};
use crate::expr::Expr;
use crate::relayout::{Relayout, THREADS};
use crate::scope::{Launch, Scope};

/// Which way the bits go.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    Pack,
    Unpack,
}

fn layout_text(rank: usize, tiled: bool) -> String {
    let mm: Vec<String> = (0..rank).rev().map(|d| d.to_string()).collect();
    if tiled {
        format!("{{{}:T(32,128)(32,1)E(1)}}", mm.join(","))
    } else {
        format!("{{{}}}", mm.join(","))
    }
}

/// The kernel when `src → dst` is one this module moves; `Ok(Err(where it moves them))` otherwise, a
/// phrase completing "bit-packed pred only ...".
pub fn bits_kernel(
    src: &ArrayShape,
    dst: &ArrayShape,
    max_ctas: u32,
) -> Result<std::result::Result<Relayout, String>> {
    let rank = src.rank();
    let (plain, packed) = (layout_text(rank, false), layout_text(rank, true));
    let (s, d) = (src.layout.to_string(), dst.layout.to_string());
    let way = if s == plain && d == packed {
        Way::Pack
    } else if s == packed && d == plain {
        Way::Unpack
    } else {
        return Ok(Err(format!("between row-major bytes {plain} and {packed}")));
    };
    let dims: Option<Vec<u64>> = src
        .dims
        .iter()
        .map(|d| d.bound().and_then(|b| u64::try_from(b).ok()))
        .collect();
    let dims = dims.unwrap_or_default();
    if src.element_type != PrimitiveType::Pred || rank < 2 || dims.len() != rank {
        return Ok(Err("in pred arrays of rank 2 or more".into()));
    }
    let (r, c) = (dims[rank - 2], dims[rank - 1]);
    if r == 0 || c == 0 || !r.is_multiple_of(32) || !c.is_multiple_of(128) {
        return Ok(Err(format!(
            "in whole tiles (the last two dimensions multiples of 32 and 128, not {r} and {c})"
        )));
    }
    let batch = dims[..rank - 2]
        .iter()
        .try_fold(1u64, |a, &b| a.checked_mul(b))
        .ok_or_else(|| overflow("counting elements"))?;
    let elems = batch
        .checked_mul(r)
        .and_then(|x| x.checked_mul(c))
        .ok_or_else(|| overflow("counting elements"))?;
    if elems == 0 {
        return Ok(Err("in non-empty arrays".into()));
    }
    let words = elems / 32;
    // Tiles side by side per region, and regions in flight per warp step: packing takes one tile a
    // region and two regions `step` apart (each region's loads in their own branch, so the GPU compiler
    // issues all of a step's loads before the first bit is packed); unpacking the widest region the row
    // of tiles divides into.
    let tiles_c = c / 128;
    let (span, ahead): (u64, u64) = match way {
        Way::Pack => (1, 2),
        Way::Unpack => (
            [4, 2]
                .into_iter()
                .find(|s| tiles_c.is_multiple_of(*s))
                .unwrap_or(1),
            1,
        ),
    };
    let blocks = elems / (4096 * span);
    let warps = u64::from(THREADS / 32);
    let per_cta = warps * ahead;
    let grid = u32::try_from(
        blocks
            .div_ceil(per_cta)
            .clamp(1, u64::from(max_ctas.max(1))),
    )
    .map_err(|_| overflow("sizing the grid"))?;
    let step = u64::from(grid) * warps;
    let rounds = blocks.div_ceil(step * ahead);
    let mut k = KernelBuilder::new(
        "relayout",
        Launch {
            grid,
            cluster: 1,
            threads: THREADS,
        },
    )?;
    let (sb, db) = match way {
        Way::Pack => (
            k.buffer("src", Space::Global, DType::U8, elems)?,
            k.buffer("dst", Space::Global, DType::S32, words)?,
        ),
        Way::Unpack => (
            k.buffer("src", Space::Global, DType::S32, words)?,
            k.buffer("dst", Space::Global, DType::U8, elems)?,
        ),
    };
    let (bytes_buf, words_buf) = match way {
        Way::Pack => (sb, db),
        Way::Unpack => (db, sb),
    };
    let ci = i64::try_from(c).map_err(|_| overflow("converting a dimension"))?;
    let m = |e: &[u64], st: &[i64]| {
        Layout::strided(e, st, &vec![axe_layout::Axis::memory(); e.len()])
            .map_err(layout("a block"))
    };
    let width = 128 * span;
    let per_lane = 4 * span;
    let rows = k.tensor("rows", bytes_buf, &[32, width], m(&[32, width], &[ci, 1])?)?;
    let packed_t = k.tensor("words", words_buf, &[width], m(&[width], &[1])?)?;
    // Lane `l` holds columns `4s·l..4s·(l+1)` of the 32 rows: one `4s`-byte vector a row.
    let block_layout: Layout = format!("S[(32,32,{per_lane}):({per_lane}@reg,1@lane,1@reg)]")
        .parse()
        .map_err(layout("a block"))?;
    let word_layout: Layout = format!("S[(32,{per_lane}):(1@lane,1@reg)]")
        .parse()
        .map_err(layout("a word"))?;
    let mut regs = Vec::new();
    for j in 0..ahead {
        let rb = k.buffer(&format!("block{j}"), Space::Registers, DType::U8, width)?;
        let rw = k.buffer(&format!("word{j}"), Space::Registers, DType::S32, per_lane)?;
        let block = k.tensor("block", rb, &[32, width], block_layout.clone())?;
        let word = k.tensor("word", rw, &[width], word_layout.clone())?;
        regs.push((block, word));
    }
    let i = |v: u64| i64::try_from(v).map_err(|_| overflow("converting a kernel constant"));
    let tile_rows = ci
        .checked_mul(32)
        .ok_or_else(|| overflow("sizing a row of tiles"))?;
    let regions_c = i(tiles_c / span)?;
    let width_i = i(width)?;
    let (step_i, blocks_i, ahead_i) = (i(step)?, i(blocks)?, i(ahead)?);
    let warp = Scope::warp;
    k.for_loop(rounds, |k, t| {
        // The step's regions: q, q + step, ...; region q is row of tiles q div (C/128s) (over batch
        // and rows), column of regions q mod (C/128s).
        let first = k.let_(
            Expr::Var(t)
                .times(Expr::Const(step_i * ahead_i))
                .plus(Expr::Cta.times(Expr::Const(warps as i64)))
                .plus(Expr::Thread.over(Expr::Const(32))),
        );
        let qs: Vec<_> = (0..ahead_i)
            .map(|j| {
                if j == 0 {
                    first
                } else {
                    k.let_(Expr::Var(first).plus(Expr::Const(step_i * j)))
                }
            })
            .collect();
        let byte_base = |q| {
            Expr::Var(q)
                .over(Expr::Const(regions_c))
                .times(Expr::Const(tile_rows))
                .plus(
                    Expr::Var(q)
                        .modulo(Expr::Const(regions_c))
                        .times(Expr::Const(width_i)),
                )
        };
        let word_base = |q| Expr::Var(q).times(Expr::Const(width_i));
        let live = |q| Expr::Var(q).lt(Expr::Const(blocks_i));
        // Loads of every region first, each in its own branch; then the bits and the stores.
        for (&q, (block, word)) in qs.iter().zip(&regs) {
            k.if_then(live(q), |k| match way {
                Way::Pack => k.window(bytes_buf, byte_base(q), 128, |k| {
                    k.copy(warp(), block, &rows).map(drop)
                }),
                Way::Unpack => k.window(words_buf, word_base(q), 128, |k| {
                    k.copy(warp(), word, &packed_t).map(drop)
                }),
            })?;
        }
        for (&q, (block, word)) in qs.iter().zip(&regs) {
            k.if_then(live(q), |k| match way {
                Way::Pack => {
                    k.pack_bits(warp(), word, block)?;
                    k.window(words_buf, word_base(q), 128, |k| {
                        k.copy(warp(), &packed_t, word).map(drop)
                    })
                }
                Way::Unpack => {
                    k.unpack_bits(warp(), block, word)?;
                    k.window(bytes_buf, byte_base(q), 128, |k| {
                        k.copy(warp(), &rows, block).map(drop)
                    })
                }
            })?;
        }
        Ok(())
    })?;
    let bytes = elems;
    let (src_bytes, dst_bytes) = match way {
        Way::Pack => (bytes, words * 4),
        Way::Unpack => (words * 4, bytes),
    };
    if src_bytes == 0 {
        return Err(KernelError::Invalid("an empty array".into()));
    }
    Ok(Ok(Relayout {
        kernel: k.build()?,
        src_bytes,
        dst_bytes,
    }))
}
