//! Reading an XLA layout (minor_to_major plus up to two tiles) off an Axe memory layout.
//!
//! `to_axe` lays a tiled array out as a row-major sequence of *current dimensions*, each a run of one
//! logical dimension's digits: for one tile over the last `k` physical dimensions, memory from the most
//! minor end holds the tile's inner dimensions `I_k .. I_1` (each a dimension's fastest digits, padded at
//! its top where the tile is wider than the dimension, with a leading tile dimension's padding above
//! them), then the outer dimensions `O_k .. O_1`, then the untiled dimensions, most minor first. A second
//! tile splits the inner block the same way once more. So the layout's digits sorted by stride fall into
//! *regions* cut at tile boundaries (a stride every digit lies wholly below or wholly above), and each
//! region into *pieces* (runs of one dimension's contiguous digits, each with its span up to the next).
//! Undoing a tile pairs the pieces below a boundary with the pieces just above it: the tile sizes are the
//! spans below, the physical order merges the two sequences. Padding (a span wider than its digits)
//! belongs to its own dimension where that dimension has no piece above the tile; otherwise to a
//! dimension of extent 1, a leading tile dimension (at the tile's top), or, between two tiles' ends, a
//! dimension the second tile holds whole or one the first tile leaves outside. One boundary gives the
//! one-tile candidate, two boundaries the two-tile ones (four ways of placing that padding): `O(n²)`
//! candidates for `n` digits, each built in `O(n²)` and checked against the layout, fewest tiles first.

use std::collections::HashSet;

use axe_layout::{Grouped, Layout as AxeLayout};

use crate::error::{overflow, Result};
use crate::primitive::PrimitiveType;
use crate::shape::{ArrayShape, Dim, Layout, Tile, TileDim};

#[cfg(test)]
pub(crate) mod oracle;
#[cfg(test)]
mod tests;

/// The layout to recognise: its canonical form over `shape`, which every candidate must equal.
pub(crate) struct Target {
    shape: Vec<u64>,
    dims: Vec<i64>,
    canonical: AxeLayout,
}

impl Target {
    pub(crate) fn new(l: &AxeLayout, shape: &[u64]) -> Result<Target> {
        let dims = shape
            .iter()
            .map(|&d| i64::try_from(d).map_err(|_| overflow("converting a shape")))
            .collect::<Result<_>>()?;
        Ok(Target {
            shape: shape.to_vec(),
            dims,
            canonical: l.canonicalize()?,
        })
    }

    /// Whether `layout` over the shape has the target's map (on the shape's region, where the layout's
    /// tiles pad the shape further).
    pub(crate) fn matches(&self, layout: &Layout) -> bool {
        let a = ArrayShape {
            element_type: PrimitiveType::F32,
            dims: self.dims.iter().map(|&d| Dim::Static(d)).collect(),
            layout: layout.clone(),
        };
        let Ok(f) = crate::axe::to_axe(&a) else {
            return false;
        };
        if f.padded_shape == self.shape {
            return f.layout.equivalent(&self.canonical).unwrap_or(false);
        }
        f.layout
            .slice(&f.padded_shape, &f.region)
            .and_then(|s| s.equivalent(&self.canonical))
            .unwrap_or(false)
    }
}

/// One digit of the layout: an iter of dimension `dim` with extent > 1.
#[derive(Clone, Copy, Debug)]
struct Atom {
    dim: usize,
    extent: i64,
    stride: i64,
}

/// A run of one dimension's contiguous digits within a region (or, with `dim: None`, padding at the
/// region's bottom), spanning `span` times its first stride up to the next piece.
#[derive(Clone, Copy, Debug)]
struct Piece {
    dim: Option<usize>,
    real: i64,
    start: i64,
    span: i64,
}

/// A current dimension a tile covers: its tile size, and (when the dimension also has a piece above the
/// tile) that piece's real extent and span.
#[derive(Clone, Copy, Debug)]
struct Entry {
    dim: usize,
    size: i64,
    real: i64,
    outer_real: i64,
    outer_span: i64,
    outer: bool,
}

/// One undone tile: the dimensions it covers (most minor first), the pieces above it that it does not
/// cover, and the leading tile dimension's size (1 when none).
struct Undone {
    covered: Vec<Entry>,
    rest: Vec<Piece>,
    lead: i64,
}

/// The layout's digits sorted by stride, or `None` when no XLA layout has them (a stride that is not
/// positive, or digits that overlap).
fn atoms(grouped: &Grouped, shape: &[u64]) -> Result<Option<Vec<Atom>>> {
    let mut atoms = Vec::new();
    for dim in 0..shape.len() {
        for it in grouped.block(dim) {
            if it.extent() == 1 {
                continue;
            }
            let Ok(extent) = i64::try_from(it.extent()) else {
                return Ok(None);
            };
            if it.stride() <= 0 {
                return Ok(None);
            }
            atoms.push(Atom {
                dim,
                extent,
                stride: it.stride(),
            });
        }
    }
    atoms.sort_by_key(|a| a.stride);
    for w in atoms.windows(2) {
        let end = w[0]
            .stride
            .checked_mul(w[0].extent)
            .ok_or_else(|| overflow("computing a digit's end"))?;
        if end > w[1].stride {
            return Ok(None);
        }
    }
    Ok(Some(atoms))
}

/// Strides at which a tile may end: every digit's stride and end that no digit straddles, above 1.
fn boundaries(atoms: &[Atom]) -> Result<Vec<i64>> {
    let mut out = Vec::with_capacity(2 * atoms.len());
    for a in atoms {
        out.push(a.stride);
        out.push(
            a.stride
                .checked_mul(a.extent)
                .ok_or_else(|| overflow("computing a digit's end"))?,
        );
    }
    out.sort_unstable();
    out.dedup();
    // A digit's own end never cuts it; a stride strictly inside one does.
    out.retain(|&b| {
        b > 1
            && atoms
                .iter()
                .all(|a| b <= a.stride || b >= a.stride.saturating_mul(a.extent))
    });
    Ok(out)
}

/// The pieces of the region `[lo, hi)` (`hi: None`: unbounded), most minor first; `None` when a
/// dimension's digits there are not one contiguous run or spans do not divide.
fn pieces(atoms: &[Atom], lo: i64, hi: Option<i64>) -> Option<Vec<Piece>> {
    let mut out: Vec<Piece> = Vec::new();
    let mut seen = HashSet::new();
    let mut pos = lo;
    let mut closed = true;
    for a in atoms
        .iter()
        .filter(|a| a.stride >= lo && hi.is_none_or(|h| a.stride < h))
    {
        if a.stride != pos {
            closed = true;
            if out.is_empty() {
                out.push(Piece {
                    dim: None,
                    real: 1,
                    start: lo,
                    span: 1,
                });
            }
        }
        match out.last_mut() {
            Some(p) if !closed && p.dim == Some(a.dim) => p.real = p.real.checked_mul(a.extent)?,
            _ => {
                if !seen.insert(a.dim) {
                    return None;
                }
                out.push(Piece {
                    dim: Some(a.dim),
                    real: a.extent,
                    start: a.stride,
                    span: 1,
                });
            }
        }
        closed = false;
        pos = a.stride.checked_mul(a.extent)?;
    }
    if out.is_empty() {
        if let Some(h) = hi.filter(|&h| h > lo) {
            out.push(Piece {
                dim: None,
                real: 1,
                start: lo,
                span: 1,
            });
            pos = h;
        }
    }
    let tops: Vec<i64> = out
        .iter()
        .skip(1)
        .map(|p| p.start)
        .chain([hi.unwrap_or(pos)])
        .collect();
    for (p, top) in out.iter_mut().zip(tops) {
        if top % p.start != 0 {
            return None;
        }
        p.span = top / p.start;
        if p.span < p.real {
            return None;
        }
    }
    Some(out)
}

/// Undoes a tile whose inner pieces are `inner` (most minor first; `top` indexes the one at the tile's
/// top) under the pieces `outer` above it. Padding that a dimension with an outer piece cannot hold
/// goes, at the tile's top and with `allow_lead`, to a leading tile dimension, and otherwise to the last
/// dimension of `free` (taken from it).
fn undo(
    inner: &[Piece],
    top: Option<usize>,
    outer: &[Piece],
    free: &mut Vec<usize>,
    allow_lead: bool,
) -> Option<Undone> {
    let in_inner: HashSet<usize> = inner.iter().filter_map(|p| p.dim).collect();
    let split = outer
        .iter()
        .rposition(|p| p.dim.is_some_and(|d| in_inner.contains(&d)))
        .map_or(0, |j| j + 1);
    let (prefix, rest) = outer.split_at(split);
    let mut prefix_dims = Vec::with_capacity(prefix.len());
    for p in prefix {
        prefix_dims.push(p.dim?);
    }
    let in_prefix: HashSet<usize> = prefix_dims.iter().copied().collect();
    let mut lead = 1;
    let mut entries = Vec::with_capacity(inner.len() + 1);
    let entry = |dim, size, real| Entry {
        dim,
        size,
        real,
        outer_real: 1,
        outer_span: 1,
        outer: false,
    };
    for (n, p) in inner.iter().enumerate() {
        let top = top == Some(n);
        let (own, pad) = match p.dim {
            None => (None, p.span),
            Some(d) if in_prefix.contains(&d) => {
                if p.span % p.real != 0 {
                    return None;
                }
                (Some(entry(d, p.real, p.real)), p.span / p.real)
            }
            Some(d) => (Some(entry(d, p.span, p.real)), 1),
        };
        entries.extend(own);
        if pad > 1 {
            if top && allow_lead {
                lead = pad;
            } else {
                entries.push(entry(free.pop()?, pad, 1));
            }
        }
    }
    // Merge the inner order with the outer pieces' order; dimensions only above get tile size 1.
    let mut covered = Vec::with_capacity(entries.len() + prefix.len());
    let (mut i, mut j) = (0, 0);
    loop {
        if i < entries.len() && !in_prefix.contains(&entries[i].dim) {
            covered.push(entries[i]);
            i += 1;
        } else if j < prefix.len() && !in_inner.contains(&prefix_dims[j]) {
            covered.push(Entry {
                outer_real: prefix[j].real,
                outer_span: prefix[j].span,
                outer: true,
                ..entry(prefix_dims[j], 1, 1)
            });
            j += 1;
        } else if i < entries.len() && j < prefix.len() {
            if entries[i].dim != prefix_dims[j] {
                return None;
            }
            covered.push(Entry {
                outer_real: prefix[j].real,
                outer_span: prefix[j].span,
                outer: true,
                ..entries[i]
            });
            i += 1;
            j += 1;
        } else if i < entries.len() || j < prefix.len() {
            return None;
        } else {
            break;
        }
    }
    Some(Undone {
        covered,
        rest: rest.to_vec(),
        lead,
    })
}

/// An order of `0..n` that keeps each chain's order (the first available index first), or `None` when
/// the chains contradict each other.
fn merge_chains(n: usize, chains: &[Vec<usize>]) -> Option<Vec<usize>> {
    let mut before: Vec<Vec<usize>> = vec![Vec::new(); n];
    for chain in chains {
        for w in chain.windows(2) {
            before.get_mut(w[1])?.push(w[0]);
        }
    }
    let mut placed = vec![false; n];
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let next = (0..n).find(|&i| !placed[i] && before[i].iter().all(|&b| placed[b]))?;
        placed[next] = true;
        out.push(next);
    }
    Some(out)
}

/// The XLA layout of a tile undone over the whole layout: `covered` holds the tiled dimensions (most
/// minor first), `rest` the pieces above the tile, `free` the dimensions of extent 1 left over.
/// Returns the layout and the minor-to-major order.
fn tiled_layout(rank: usize, top: &Undone, free: &[usize]) -> Option<(Layout, Vec<usize>)> {
    let mut order: Vec<usize> = top.covered.iter().map(|e| e.dim).collect();
    for p in &top.rest {
        order.push(p.dim?);
    }
    order.extend(free.iter().rev());
    let mut seen = vec![false; rank];
    for &d in &order {
        if std::mem::replace(seen.get_mut(d)?, true) {
            return None;
        }
    }
    if order.len() != rank {
        return None;
    }
    let sizes: Vec<i64> = if top.lead > 1 {
        let mut s = vec![1; rank];
        for (n, e) in top.covered.iter().enumerate() {
            *s.get_mut(n)? = e.size;
        }
        s.push(top.lead);
        s
    } else {
        top.covered.iter().map(|e| e.size).collect()
    };
    if sizes.iter().all(|&t| t == 1) {
        return None;
    }
    let mut layout =
        Layout::with_minor_to_major(order.iter().map(|&d| d as i64).collect::<Vec<_>>());
    layout.tiles.push(Tile(
        sizes.iter().rev().map(|&t| TileDim::Size(t)).collect(),
    ));
    Some((layout, order))
}

/// The untiled candidate: dimensions by stride, those of extent 1 most major.
fn untiled(atoms: &[Atom], rank: usize) -> Option<Layout> {
    let mut order: Vec<usize> = atoms.iter().map(|a| a.dim).collect();
    let mut seen = vec![false; rank];
    for &d in &order {
        if std::mem::replace(&mut seen[d], true) {
            return None;
        }
    }
    order.extend((0..rank).filter(|&d| !seen[d]));
    Some(Layout::with_minor_to_major(
        order.into_iter().map(|d| d as i64).collect::<Vec<_>>(),
    ))
}

/// One-tile candidate with the tile ending at `s1`.
fn one_tile(atoms: &[Atom], free: &[usize], rank: usize, s1: i64) -> Option<Layout> {
    let inner = pieces(atoms, 1, Some(s1))?;
    let outer = pieces(atoms, s1, None)?;
    let mut free = free.to_vec();
    let top = undo(&inner, inner.len().checked_sub(1), &outer, &mut free, true)?;
    tiled_layout(rank, &top, &free).map(|(l, _)| l)
}

/// Gives the padding between the tiles' ends (above a piece, or below them all) to the dimensions the
/// second tile holds whole, in their order: their outer part in the second tile is that padding alone.
fn pads_to_whole(a: &[Piece], b: &[Piece]) -> Vec<Piece> {
    let mut whole: std::collections::VecDeque<usize> = a
        .iter()
        .filter_map(|p| p.dim)
        .filter(|&d| b.iter().all(|q| q.dim != Some(d)))
        .collect();
    let mut out = Vec::with_capacity(b.len() + whole.len());
    for p in b {
        match p.dim {
            None => out.push(Piece {
                dim: whole.pop_front(),
                ..*p
            }),
            Some(_) if p.span > p.real && p.span % p.real == 0 && !whole.is_empty() => {
                out.push(Piece { span: p.real, ..*p });
                out.push(Piece {
                    dim: whole.pop_front(),
                    real: 1,
                    start: p.start.saturating_mul(p.real),
                    span: p.span / p.real,
                });
            }
            Some(_) => out.push(*p),
        }
    }
    out
}

/// Two-tile candidate: the second tile ending at `s2`, the first at `s1 > s2`; with `lead`, padding at
/// the second tile's top is its share of the first tile's leading dimension; with `whole`, padding
/// between the tiles' ends goes to the dimensions the second tile holds whole ([`pads_to_whole`]).
fn two_tiles(
    atoms: &[Atom],
    free: &[usize],
    rank: usize,
    (s2, s1): (i64, i64),
    (lead, whole): (bool, bool),
) -> Option<Layout> {
    let a = pieces(atoms, 1, Some(s2))?;
    let mut b = pieces(atoms, s2, Some(s1))?;
    if whole {
        b = pads_to_whole(&a, &b);
    }
    let c = pieces(atoms, s1, None)?;
    // Padding the second tile cannot give a dimension of extent 1 may be its part of a dimension the
    // first tile leaves outside (tile size 1): one with a piece above both tiles only, the most minor
    // first.
    let mut pool: Vec<usize> = c
        .iter()
        .filter_map(|p| p.dim)
        .filter(|&d| a.iter().chain(&b).all(|q| q.dim != Some(d)))
        .rev()
        .chain(free.iter().copied())
        .collect();
    let second = undo(&a, a.len().checked_sub(1), &b, &mut pool, lead)?;
    let mut free: Vec<usize> = free.iter().copied().filter(|d| pool.contains(d)).collect();
    // The first tile's inner pieces: each dimension the second tile covers, whole, then the rest, in an
    // order that keeps the second tile's order, the pieces' order between the tiles' ends, and the
    // outer pieces' order (a dimension the second tile leaves whole has no piece between the ends, so
    // the rest may pass it).
    // A dimension with a piece above both tiles has no padding in the first tile: padding in its piece
    // below the second tile's end is the second tile's.
    let mut inner: Vec<Piece> = Vec::with_capacity(second.covered.len() + second.rest.len());
    for e in &second.covered {
        let below = if c.iter().any(|p| p.dim == Some(e.dim)) {
            e.real
        } else {
            e.size
        };
        inner.push(Piece {
            dim: Some(e.dim),
            real: e.real.checked_mul(e.outer_real)?,
            start: 1,
            span: below.checked_mul(e.outer_span)?,
        });
    }
    inner.extend(second.rest.iter().copied());
    let n2 = second.covered.len();
    let between: Vec<usize> = (0..inner.len())
        .filter(|&i| i >= n2 || second.covered[i].outer)
        .collect();
    let above: Vec<usize> = c
        .iter()
        .filter_map(|p| inner.iter().position(|q| q.dim.is_some() && q.dim == p.dim))
        .collect();
    let order = merge_chains(inner.len(), &[(0..n2).collect(), between.clone(), above])?;
    let top = between
        .last()
        .and_then(|t| order.iter().position(|i| i == t));
    let inner: Vec<Piece> = order.iter().map(|&i| inner[i]).collect();
    let mut first = undo(&inner, top, &c, &mut free, true)?;
    first.lead = first.lead.checked_mul(second.lead)?;
    let (mut layout, order) = tiled_layout(rank, &first, &free)?;
    // The second tile covers the first's dimensions up to the last it splits (all, and the leading
    // one, when it splits that).
    let k2 = match second.covered.last() {
        _ if second.lead > 1 => rank,
        Some(e) => order.iter().position(|&d| d == e.dim)? + 1,
        None => return None,
    };
    let mut sizes: Vec<i64> = order[..k2]
        .iter()
        .map(|d| {
            second
                .covered
                .iter()
                .find(|e| e.dim == *d)
                .map_or(1, |e| e.size)
        })
        .collect();
    if second.lead > 1 {
        sizes.push(second.lead);
    }
    if sizes.iter().all(|&t| t == 1) {
        return None;
    }
    layout.tiles.push(Tile(
        sizes.iter().rev().map(|&t| TileDim::Size(t)).collect(),
    ));
    Some(layout)
}

/// The XLA layout (fewest tiles first, at most two) whose Axe form over `shape` is `l`, if any; `l` is
/// a plain memory layout (checked by the caller).
pub(crate) fn recognise(l: &AxeLayout, shape: &[u64]) -> Result<Option<Layout>> {
    let grouped = l.group(shape)?;
    let target = Target::new(&grouped.layout, shape)?;
    let Some(atoms) = atoms(&grouped, shape)? else {
        return Ok(None);
    };
    let rank = shape.len();
    let mut has_atoms = vec![false; rank];
    for a in &atoms {
        has_atoms[a.dim] = true;
    }
    let free: Vec<usize> = (0..rank).filter(|&d| !has_atoms[d]).rev().collect();
    if let Some(layout) = untiled(&atoms, rank).filter(|c| target.matches(c)) {
        return Ok(Some(layout));
    }
    let bounds = boundaries(&atoms)?;
    for &s1 in &bounds {
        if let Some(layout) = one_tile(&atoms, &free, rank, s1).filter(|c| target.matches(c)) {
            return Ok(Some(layout));
        }
    }
    for (n, &s1) in bounds.iter().enumerate() {
        for &s2 in &bounds[..n] {
            for variant in [(false, false), (true, false), (false, true), (true, true)] {
                if let Some(layout) =
                    two_tiles(&atoms, &free, rank, (s2, s1), variant).filter(|c| target.matches(c))
                {
                    return Ok(Some(layout));
                }
            }
        }
    }
    Ok(None)
}
