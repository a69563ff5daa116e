//! The relayout kernel for bit-packed `pred`: row-major bytes to and from `T(32,128)(32,1)E(1)`, where
//! each 32×128 tile holds, per column, the 32 rows' elements as the bits of one 32-bit word.
//!
//! Each warp step takes a region of `s` tiles side by side (32 rows × 128·s columns; `s` is 2 for
//! packing and 4 for unpacking where the row of tiles divides by it, else less): lane `l` holds columns
//! `4s·l .. 4s·(l+1)` of the 32 rows (registers `4s·r + c mod 4s`) and their `4s` words. Packing, the
//! warp loads each row in `4s`-byte vectors (`128·s` contiguous bytes a row), `pack_bits` ORs each
//! element's bit into its word in the same thread (`pack_bits.thread`), and the warp stores the region's
//! words (consecutive tiles' words are consecutive) in 16-byte vectors; unpacking runs the other way.
//! Wider regions keep more bytes in flight per warp and make each row's access one wide vector (on an
//! H100, 0.84 → 0.91 of the device copy unpacking; a lane holding 4 bytes of each of two tiles instead
//! packed at 0.87 against 0.90). Steps go round the warps of the grid; consecutive warps take
//! consecutive regions.

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

/// The kernel when `src → dst` is one this module moves; `Ok(Err(why not))` otherwise.
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
        return Ok(Err(format!(
            "the GPU moves bit-packed pred between row-major bytes {plain} and {packed}"
        )));
    };
    let dims: Option<Vec<u64>> = src
        .dims
        .iter()
        .map(|d| d.bound().and_then(|b| u64::try_from(b).ok()))
        .collect();
    let dims = dims.unwrap_or_default();
    if src.element_type != PrimitiveType::Pred || rank < 2 || dims.len() != rank {
        return Ok(Err(
            "bit packing is for pred arrays of rank 2 or more".into()
        ));
    }
    let (r, c) = (dims[rank - 2], dims[rank - 1]);
    if r == 0 || c == 0 || !r.is_multiple_of(32) || !c.is_multiple_of(128) {
        return Ok(Err(format!(
            "the last two dimensions are {r} and {c}; the GPU packs whole tiles (multiples of 32 and 128)"
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
        return Ok(Err("the array is empty".into()));
    }
    let words = elems / 32;
    // Tiles side by side per warp step: the widest the row of tiles divides into.
    let tiles_c = c / 128;
    let span: u64 = match way {
        Way::Pack => [2, 1],
        Way::Unpack => [4, 2],
    }
    .into_iter()
    .find(|s| tiles_c.is_multiple_of(*s))
    .unwrap_or(1);
    let blocks = elems / (4096 * span);
    let warps = u64::from(THREADS / 32);
    let grid = u32::try_from(blocks.div_ceil(warps).clamp(1, u64::from(max_ctas.max(1))))
        .map_err(|_| overflow("the grid"))?;
    let step = u64::from(grid) * warps;
    let rounds = blocks.div_ceil(step);
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
    let ci = i64::try_from(c).map_err(|_| overflow("a dimension"))?;
    let m = |e: &[u64], st: &[i64]| {
        Layout::strided(e, st, &vec![axe_layout::Axis::memory(); e.len()])
            .map_err(layout("a block"))
    };
    let width = 128 * span;
    let per_lane = 4 * span;
    let rows = k.tensor("rows", bytes_buf, &[32, width], m(&[32, width], &[ci, 1])?)?;
    let packed_t = k.tensor("words", words_buf, &[width], m(&[width], &[1])?)?;
    let rb = k.buffer("block", Space::Registers, DType::U8, width)?;
    let rw = k.buffer("word", Space::Registers, DType::S32, per_lane)?;
    // Lane `l` holds columns `4s·l..4s·(l+1)` of the 32 rows: one `4s`-byte vector a row.
    let block_layout = format!("S[(32,32,{per_lane}):({per_lane}@reg,1@lane,1@reg)]");
    let word_layout = format!("S[(32,{per_lane}):(1@lane,1@reg)]");
    let block = k.tensor(
        "block",
        rb,
        &[32, width],
        block_layout.parse().map_err(layout("a block"))?,
    )?;
    let word = k.tensor(
        "word",
        rw,
        &[width],
        word_layout.parse().map_err(layout("a word"))?,
    )?;
    let i = |v: u64| i64::try_from(v).map_err(|_| overflow("a kernel constant"));
    let tile_rows = ci
        .checked_mul(32)
        .ok_or_else(|| overflow("a row of tiles"))?;
    let regions_c = i(tiles_c / span)?;
    let width_i = i(width)?;
    let (step_i, blocks_i) = (i(step)?, i(blocks)?);
    k.for_loop(rounds, |k, t| {
        // Region q: row of tiles g (over batch and rows), column of regions q mod (C/128s).
        let q = k.let_(
            Expr::Var(t)
                .times(Expr::Const(step_i))
                .plus(Expr::Cta.times(Expr::Const(warps as i64)))
                .plus(Expr::Thread.over(Expr::Const(32))),
        );
        k.if_then(Expr::Var(q).lt(Expr::Const(blocks_i)), |k| {
            let g = Expr::Var(q).over(Expr::Const(regions_c));
            let tc = Expr::Var(q).modulo(Expr::Const(regions_c));
            let byte_base = g
                .times(Expr::Const(tile_rows))
                .plus(tc.times(Expr::Const(width_i)));
            let word_base = Expr::Var(q).times(Expr::Const(width_i));
            let warp = Scope::warp;
            k.window(bytes_buf, byte_base, 128, |k| {
                k.window(words_buf, word_base, 128, |k| {
                    match way {
                        Way::Pack => {
                            k.copy(warp(), &block, &rows)?;
                            k.pack_bits(warp(), &word, &block)?;
                            k.copy(warp(), &packed_t, &word)?;
                        }
                        Way::Unpack => {
                            k.copy(warp(), &word, &packed_t)?;
                            k.unpack_bits(warp(), &block, &word)?;
                            k.copy(warp(), &rows, &block)?;
                        }
                    }
                    Ok(())
                })
            })
        })
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
