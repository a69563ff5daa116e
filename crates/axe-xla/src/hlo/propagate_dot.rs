//! The sharding of a `dot` whose operands' shardings are known and whose own is not, in the cases
//! where XLA's two propagations (GSPMD's `ShardingPropagation` and Shardy, JAX's default) agree.
//!
//! A `dot`'s result dims are its batch dims (in the order `lhs_batch_dims` lists them), then the lhs's
//! other non-contracting dims, then the rhs's, each in increasing order. Seen from one operand, the
//! result is tiled as that operand is on the dims it shares with the result; its tiles along
//! contracting dims add up to partial sums (the partitioner all-reduces them), so they replicate the
//! result; its devices hold the whole of the dims that come from the other operand
//! (`InferDotShardingFromOperands`: `PartiallyReplicateTiledShardingOnDims` of the contracting dims,
//! then the operand dims moved to their result dims). The two views then combine:
//!
//! * one operand replicated, or tiled only along contracting dims: the other's view;
//! * both views the same, or tiling different result dims, or one refining the other on a dim both
//!   divide evenly: each device holds the intersection of its two tiles, when these make one tile grid
//!   held by equally many devices each (`{devices=[4,1,2]<=[8] last_tile_dim_replicate}` rows and
//!   `{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}` columns make `{devices=[4,2]<=[8]}`);
//! * otherwise (both views tile one dim differently, or use the same devices on different dims) the
//!   two propagations answer differently, by operand size (GSPMD), merged in part (Shardy), or after
//!   what the dot's users want: nothing is inferred.
//!
//! An elementwise instruction's operands combine the same way ([`merged_elementwise`]).
//!
//! Checked against jaxlib 0.10.2 on 8 CPU devices, both partitioners (`propagate_dot_tests.rs`).

use super::sharding::{Sharding, TileAssignment};
use super::Instruction;

/// Which operand dims of a `dot` are batch and contracting dims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DotDims {
    pub(crate) lhs_batch: Vec<usize>,
    pub(crate) rhs_batch: Vec<usize>,
    pub(crate) lhs_contracting: Vec<usize>,
    pub(crate) rhs_contracting: Vec<usize>,
}

/// A `{1,2}` dimension list (absent: empty).
fn dim_list(value: Option<&str>) -> Option<Vec<usize>> {
    let Some(value) = value else {
        return Some(Vec::new());
    };
    let inner = value.trim().strip_prefix('{')?.strip_suffix('}')?.trim();
    if inner.is_empty() {
        return Some(Vec::new());
    }
    inner.split(',').map(|x| x.trim().parse().ok()).collect()
}

impl DotDims {
    /// The dimension numbers of `dot` instruction `inst`, as its attributes give them; `None` for a
    /// sparse dot (`sparsity=`) or lists that do not parse.
    pub(crate) fn of(inst: &Instruction<'_>) -> Option<DotDims> {
        if inst.attribute("sparsity").is_some() {
            return None;
        }
        Some(DotDims {
            lhs_batch: dim_list(inst.attribute("lhs_batch_dims"))?,
            rhs_batch: dim_list(inst.attribute("rhs_batch_dims"))?,
            lhs_contracting: dim_list(inst.attribute("lhs_contracting_dims"))?,
            rhs_contracting: dim_list(inst.attribute("rhs_contracting_dims"))?,
        })
    }

    /// Per dim of operand `rhs` (false: the lhs) of rank `rank`, the result dim it becomes (`None`:
    /// contracted), given the other operand's rank `other`; `None` when the lists do not fit the ranks
    /// (a dim out of range or named twice, batch or contracting lists of different lengths).
    pub(crate) fn result_dims(
        &self,
        rhs: bool,
        rank: usize,
        other: usize,
    ) -> Option<Vec<Option<usize>>> {
        if self.lhs_batch.len() != self.rhs_batch.len()
            || self.lhs_contracting.len() != self.rhs_contracting.len()
        {
            return None;
        }
        let (batch, contracting) = if rhs {
            (&self.rhs_batch, &self.rhs_contracting)
        } else {
            (&self.lhs_batch, &self.lhs_contracting)
        };
        let fixed = batch.len() + contracting.len();
        // The lhs's non-contracting dims come first, so the rhs's start after them.
        let start = if rhs {
            batch.len() + other.checked_sub(fixed)?
        } else {
            batch.len()
        };
        let mut out: Vec<Option<usize>> = vec![None; rank];
        let mut seen = vec![false; rank];
        for (i, &d) in batch.iter().enumerate() {
            if std::mem::replace(seen.get_mut(d)?, true) {
                return None;
            }
            out[d] = Some(i);
        }
        for &d in contracting {
            if std::mem::replace(seen.get_mut(d)?, true) {
                return None;
            }
        }
        let mut next = start;
        for d in 0..rank {
            if !seen[d] {
                out[d] = Some(next);
                next += 1;
            }
        }
        Some(out)
    }
}

/// One operand's view of the result's tiling: per result dim the number of tiles, and per device
/// (in increasing order) its tile's index on each result dim.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Grid {
    counts: Vec<i64>,
    tiles: Vec<(i64, Vec<i64>)>,
}

/// What one operand says of the result: nothing (every device may hold it whole) or a tiling.
enum View {
    Whole,
    Tiled(Grid),
}

/// Operand sharding `s` of an operand of rank `to.len()` seen from the result (of rank `out_rank`),
/// its dim `d` becoming result dim `to[d]`; `None` for a sharding this does not follow (maximal,
/// manual, unreduced, unknown, a tuple, manual subgroups) or one that does not fit.
fn view(s: &Sharding, to: &[Option<usize>], out_rank: usize) -> Option<View> {
    let Sharding::Tiled {
        tile_assignment,
        last_tile_dims,
        ..
    } = s
    else {
        return matches!(s, Sharding::Replicated { .. }).then_some(View::Whole);
    };
    if !last_tile_dims.is_empty() {
        return None;
    }
    let devices = s.tile_devices(to.len()).ok()?;
    let grid = tile_assignment.dims();
    let mut counts = vec![1i64; out_rank];
    for (d, &k) in to.iter().enumerate() {
        if let Some(k) = k {
            *counts.get_mut(k)? = grid[d];
        }
    }
    if counts.iter().all(|&c| c == 1) {
        return Some(View::Whole);
    }
    let mut pos = vec![0i64; grid.len()];
    let mut tiles = Vec::with_capacity(devices.len());
    for &device in &devices {
        let mut index = vec![0i64; out_rank];
        for (d, &k) in to.iter().enumerate() {
            if let Some(k) = k {
                index[k] = pos[d];
            }
        }
        tiles.push((device, index));
        for k in (0..pos.len()).rev() {
            pos[k] += 1;
            if pos[k] < grid[k] {
                break;
            }
            pos[k] = 0;
        }
    }
    tiles.sort_unstable_by_key(|t| t.0);
    Some(View::Tiled(Grid { counts, tiles }))
}

/// The grid where each device holds the intersection of its tiles in `a` and `b` (result dims
/// `dims`), when that intersection is itself one tile on every dim: the counts equal (then the indices
/// must too), one of them 1, or one dividing the other and the dim (the finer tile inside the coarser).
/// `None` when the two name different devices or a device's tiles do not nest.
fn intersect(a: &Grid, b: &Grid, dims: &[i64]) -> Option<Grid> {
    if a.tiles.len() != b.tiles.len() || a.tiles.iter().zip(&b.tiles).any(|(x, y)| x.0 != y.0) {
        return None;
    }
    let mut counts = Vec::with_capacity(dims.len());
    for ((&ca, &cb), &d) in a.counts.iter().zip(&b.counts).zip(dims) {
        let (lo, hi) = (ca.min(cb), ca.max(cb));
        if lo != 1 && lo != hi && (hi % lo != 0 || d % hi != 0) {
            return None;
        }
        counts.push(hi);
    }
    let mut tiles = Vec::with_capacity(a.tiles.len());
    for ((device, ia), (_, ib)) in a.tiles.iter().zip(&b.tiles) {
        let mut index = Vec::with_capacity(counts.len());
        for k in 0..counts.len() {
            let (ca, cb) = (a.counts[k], b.counts[k]);
            // The finer index, which must lie in the coarser tile.
            let (fine, coarse, cf, cc) = if ca >= cb {
                (ia[k], ib[k], ca, cb)
            } else {
                (ib[k], ia[k], cb, ca)
            };
            if fine / (cf / cc) != coarse {
                return None;
            }
            index.push(fine);
        }
        tiles.push((*device, index));
    }
    Some(Grid { counts, tiles })
}

/// The sharding a grid is, when every tile of it is held by equally many devices (trailing
/// replication then); `{replicated}` for a grid of one tile.
fn sharding_of(g: Grid) -> Option<Sharding> {
    let n_tiles = g
        .counts
        .iter()
        .try_fold(1i64, |p, &c| p.checked_mul(c))
        .filter(|&n| n > 0)?;
    if n_tiles == 1 {
        return Some(Sharding::Replicated { metadata: None });
    }
    let n = i64::try_from(g.tiles.len()).ok()?;
    if n % n_tiles != 0 {
        return None;
    }
    let per = n / n_tiles;
    // Row-major tile number, then device: each tile's devices together, in increasing order.
    let mut order: Vec<(i64, i64)> = Vec::with_capacity(g.tiles.len());
    for (device, index) in &g.tiles {
        let at = index
            .iter()
            .zip(&g.counts)
            .try_fold(0i64, |acc, (&i, &c)| acc.checked_mul(c)?.checked_add(i))?;
        order.push((at, *device));
    }
    order.sort_unstable();
    for (t, group) in order.chunks(usize::try_from(per).ok()?).enumerate() {
        if group.iter().any(|&(at, _)| at != t as i64) {
            return None;
        }
    }
    let mut dims = g.counts;
    if per > 1 {
        dims.push(per);
    }
    let devices: Vec<i64> = order.into_iter().map(|x| x.1).collect();
    // Devices in order print as XLA prints them, `<=[n]`.
    let tile_assignment = if devices.iter().zip(0..).all(|(&d, i)| d == i) {
        TileAssignment::Iota {
            dims,
            reshape: vec![n],
            transpose: None,
        }
    } else {
        TileAssignment::Explicit { dims, devices }
    };
    Some(Sharding::Tiled {
        tile_assignment,
        last_tile_dim_replicate: per > 1,
        last_tile_dims: Vec::new(),
        metadata: None,
    })
}

/// The sharding of an elementwise instruction whose operands (of its dims `dims`) have shardings
/// `list`, when two or more of them are tiled and their tiles intersect as a `dot`'s views do (see
/// the module doc): XLA merges them (`a * b` of a `{devices=[4,1,2]<=[8] last_tile_dim_replicate}` and a
/// `{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}` operand is `{devices=[4,2]<=[8]}` under
/// both partitioners). `None` otherwise: the caller picks one operand's.
///
/// Law: as [`dot_sharding`]'s, every dim a batch dim: a device holds an element iff each tiled operand's
/// tile it holds covers it.
pub(crate) fn merged_elementwise(list: &[Sharding], dims: &[i64]) -> Option<Sharding> {
    let same: Vec<Option<usize>> = (0..dims.len()).map(Some).collect();
    let mut grid: Option<Grid> = None;
    let mut tiled = 0;
    for s in list {
        if let View::Tiled(g) = view(s, &same, dims.len())? {
            tiled += 1;
            grid = Some(match grid {
                None => g,
                Some(a) => intersect(&a, &g, dims)?,
            });
        }
    }
    if tiled < 2 {
        return None;
    }
    sharding_of(grid?)
}

/// The sharding XLA's propagation gives a `dot` with dimension numbers `dims`, whose lhs has
/// sharding `lhs.0` and dims `lhs.1`, its rhs `rhs.0` and `rhs.1`, and whose result has dims `out`,
/// where GSPMD and Shardy agree (see the module doc); `None` elsewhere.
///
/// Law: for an answer `s` and any device `d` it names, and any result element `e`, `d` holds `e` under
/// `s` iff for each operand that `d` holds under its sharding, `d`'s tile of it covers `e`'s
/// coordinates on the operand's batch and non-contracting dims (contracting dims left aside: their
/// partial sums are all-reduced), the tiles of a replicated operand covering everything; and the
/// operands' tile assignments name the same devices as `s`. So every device computes its tile of the
/// result from the operand tiles it holds, and holds no more than it can compute.
pub(crate) fn dot_sharding(
    dims: &DotDims,
    lhs: (&Sharding, &[i64]),
    rhs: (&Sharding, &[i64]),
    out: &[i64],
) -> Option<Sharding> {
    let (lr, rr) = (lhs.1.len(), rhs.1.len());
    let to_l = dims.result_dims(false, lr, rr)?;
    let to_r = dims.result_dims(true, rr, lr)?;
    let rank = (lr + rr)
        .checked_sub(dims.lhs_batch.len())?
        .checked_sub(2 * dims.lhs_contracting.len())?;
    if rank != out.len() {
        return None;
    }
    // Each result dim must be as long as the operand dims it comes from.
    for (to, shape) in [(&to_l, lhs.1), (&to_r, rhs.1)] {
        for (d, k) in to.iter().enumerate() {
            if k.is_some_and(|k| out[k] != shape[d]) {
                return None;
            }
        }
    }
    let grid = match (view(lhs.0, &to_l, rank)?, view(rhs.0, &to_r, rank)?) {
        (View::Whole, View::Whole) => return Some(Sharding::Replicated { metadata: None }),
        (View::Tiled(g), View::Whole) | (View::Whole, View::Tiled(g)) => g,
        (View::Tiled(a), View::Tiled(b)) => intersect(&a, &b, out)?,
    };
    sharding_of(grid)
}
