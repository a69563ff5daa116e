//! A tensor's layout in memory, reduced to per-dimension offset tables.

use axe_layout::{Axis, Layout};
use axe_xla::{to_axe, ArrayShape, Tiling};

use crate::error::{RelayoutError, Result};

/// Where every logical element of a tensor lives: `offset(e) = Σ_i tables[i][e_i]` (+ each replica
/// offset), in elements of `bits` bits each, in a buffer of `slots` elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorLayout {
    /// Logical dimensions.
    pub dims: Vec<u64>,
    /// Bits per element (with packing: `E(n)`).
    pub bits: u32,
    /// Per logical dimension, the element offset of each index (all empty when some dimension is 0:
    /// there is no index to look up).
    pub tables: Vec<Vec<i64>>,
    /// Offsets added to every element, one per copy (`[0]` without replicas).
    pub replicas: Vec<i64>,
    /// Elements the buffer holds (data, padding, tail padding).
    pub slots: u64,
    /// Every slot holds an element (no padding to fill).
    pub dense: bool,
    /// Distinct elements land in distinct slots (checked; destinations must be).
    pub injective: bool,
    /// For layouts whose padding has structure (XLA tiles): per dimension, the offsets of the padded
    /// extent's indices. They cover the slots `[0, padded_slots)` once each; indices past a logical
    /// dimension name padding, and so do the slots from `padded_slots` to `slots` (tail padding).
    pub padded: Option<Vec<Vec<i64>>>,
    /// Where the tail padding begins: the slots from here to `slots` are padding besides the padded
    /// tables' (for a whole XLA layout, the slots its padded tables cover; a piece of one, see
    /// [`crate::split::pieces`], names the tail padding in one piece alone).
    pub padded_slots: u64,
}

impl TensorLayout {
    /// The layout of an XLA array (every tile, `L` and `E` honoured).
    pub fn from_xla(a: &ArrayShape) -> Result<TensorLayout> {
        TensorLayout::from_xla_split(a, None)
    }

    /// [`TensorLayout::from_xla`] with each logical dimension `i` split row-major into the factors
    /// `split[i]` (one factor, the dimension itself, where it has padding): the same elements at the same
    /// offsets, indexed by a finer multi-index (see [`crate::split`]). An error where the layout's tiles
    /// do not follow the factors.
    pub fn from_xla_split(a: &ArrayShape, split: Option<&[Vec<u64>]>) -> Result<TensorLayout> {
        let tiling = Tiling::new(a)?;
        let dims: Vec<u64> = tiling.logical.iter().map(|&d| d as u64).collect();
        let bits = crate::xla_side::element_slot_bits(a)?;
        let expanded = tiling.expanded_elements()?;
        let slots = xla_slots(a, &tiling)?;
        crate::xla_side::check_byte_size(a, slots, bits)?;
        let count: u64 = dims.iter().product();
        if count == 0 {
            // No element to place: every slot (if the tiles leave any) is padding, zeroed whole.
            return Ok(TensorLayout::empty(dims, bits, slots));
        }
        let form = match to_axe(a) {
            Ok(form) => form,
            Err(why) => {
                // No Axe form (a later tile pads inside an earlier one): tables from XLA's index
                // function where they are still separable, the padding zeroed with the whole buffer.
                let tables = crate::xla_side::separable_tables(a, &tiling, &dims, &why)?;
                return Ok(TensorLayout {
                    dims,
                    bits,
                    tables,
                    replicas: vec![0],
                    slots,
                    dense: slots == count,
                    injective: true,
                    padded: None,
                    padded_slots: 0,
                });
            }
        };
        let t = form_tables(&form.layout, &form.padded_shape, &dims, split)?;
        // The padded tables tile [0, expanded) exactly when they reach no further and count as many.
        let exact = t.padded.as_ref().is_some_and(|p| {
            let reach = p.iter().try_fold(0i64, |s, t| {
                s.checked_add(t.iter().copied().max().unwrap_or(0))
            });
            t.covered == expanded as u64
                && reach.and_then(|r| r.checked_add(1)) == Some(t.covered as i64)
        });
        let (dims, tables, covered) = (t.dims, t.tables, t.covered);
        let padded = t.padded.filter(|_| exact);
        Ok(TensorLayout {
            dims,
            bits,
            tables,
            replicas: vec![0],
            slots,
            dense: slots == count,
            injective: true,
            padded,
            padded_slots: covered,
        })
    }

    /// The layout of an Axe layout on the memory axis `m` over `dims`, elements of `bits` bits. Replicas
    /// become extra copies; the offset shifts every element; offsets must not be negative.
    pub fn from_axe(l: &Layout, dims: &[u64], bits: u32) -> Result<TensorLayout> {
        if let Some(a) = l.axes().into_iter().find(|a| !a.is_memory()) {
            return Err(RelayoutError::Layout(format!(
                "{l} uses axis {a}: only the memory axis m has bytes to move"
            )));
        }
        let overflow = || RelayoutError::Layout(format!("{l}: offsets overflow 64 bits"));
        let mut tables = tables_of(l, dims, dims)?;
        let base = l.offset().get(&Axis::memory());
        if let Some(t) = tables.first_mut() {
            for v in t.iter_mut() {
                *v = v.checked_add(base).ok_or_else(overflow)?;
            }
        }
        let replicas: Vec<i64> = l
            .replica_points()?
            .iter()
            .map(|c| c.get(&Axis::memory()))
            .collect();
        // The lowest and highest offsets, as checked sums of each table's extreme.
        let extreme = |pick: fn(&[i64]) -> i64| -> Result<i64> {
            tables
                .iter()
                .map(|t| pick(t))
                .chain([pick(&replicas), if tables.is_empty() { base } else { 0 }])
                .try_fold(0i64, |acc, v| acc.checked_add(v))
                .ok_or_else(overflow)
        };
        let min = extreme(|t| t.iter().copied().min().unwrap_or(0))?;
        if min < 0 {
            return Err(RelayoutError::Layout(format!(
                "{l} reaches the negative offset {min}: add an offset to place it in the buffer"
            )));
        }
        let max = extreme(|t| t.iter().copied().max().unwrap_or(0))?;
        let slots = max.checked_add(1).ok_or_else(overflow)? as u64;
        crate::xla_side::check_byte_size(l, slots, bits)?;
        let count = dims
            .iter()
            .try_fold(replicas.len() as u64, |acc, &d| acc.checked_mul(d))
            .ok_or_else(overflow)?;
        let injective = check_injective(&tables, &replicas, slots);
        Ok(TensorLayout {
            dims: dims.to_vec(),
            bits,
            tables,
            replicas,
            slots,
            dense: injective && count == slots,
            injective,
            padded: None,
            padded_slots: 0,
        })
    }

    /// The layout of a tensor with no elements (a dimension of extent 0) in a buffer of `slots` slots,
    /// all padding: its tables are empty, since no index exists to look up.
    fn empty(dims: Vec<u64>, bits: u32, slots: u64) -> TensorLayout {
        TensorLayout {
            tables: vec![Vec::new(); dims.len()],
            dims,
            bits,
            replicas: vec![0],
            slots,
            dense: slots == 0,
            injective: true,
            padded: None,
            padded_slots: 0,
        }
    }

    /// Bytes the buffer needs (saturating at `u64::MAX`).
    pub fn bytes(&self) -> u64 {
        let bits = u128::from(self.slots) * u128::from(self.bits);
        u64::try_from(bits.div_ceil(8)).unwrap_or(u64::MAX) // past u64: no buffer is that large
    }

    /// Logical elements.
    pub fn count(&self) -> u64 {
        self.dims.iter().product()
    }

    /// The offsets this layout keeps in memory (its tables, padded tables and replica offsets): what
    /// a relayout's plan costs beside its buffers, 8 bytes each. Law: the sum of those lists' lengths.
    pub fn table_entries(&self) -> u64 {
        let len = |t: &[Vec<i64>]| t.iter().map(|v| v.len() as u64).sum::<u64>();
        len(&self.tables)
            .saturating_add(self.padded.as_deref().map_or(0, len))
            .saturating_add(self.replicas.len() as u64)
    }

    /// The padding slots [`TensorLayout::padding_runs`] zeroes (saturating): the padded tables' indices
    /// that are not logical ones, and the tail padding; without padded tables, every slot no element
    /// takes (`slots − count`, counting each copy once).
    pub fn padding_slots(&self) -> u64 {
        match &self.padded {
            Some(p) => p
                .iter()
                .try_fold(1u64, |n, t| n.checked_mul(t.len() as u64))
                .unwrap_or(u64::MAX)
                .saturating_sub(self.count())
                .saturating_add(self.slots.saturating_sub(self.padded_slots)),
            None => self.slots.saturating_sub(self.count()),
        }
    }

    /// Whether a relayout into this layout zeroes its padding slots alone ([`crate::ZeroFill::Padding`])
    /// rather than the whole buffer first: where it has padded tables, whole-byte elements, and padding
    /// under [`PADDING_ALONE_MAX`] of its slots (more is zeroed faster with the whole buffer). Law: true only where [`TensorLayout::padding_runs`]
    /// finds the padding (`padded` is some).
    pub fn zeroes_padding_alone(&self) -> bool {
        self.padded.is_some()
            && self.bits.is_multiple_of(8)
            && padding_alone(self.padding_slots(), self.slots)
    }

    /// Whether the padded tables (where there are any) can be walked inside the buffer: one per
    /// dimension, each at least as long as its dimension, every sum of their offsets in `[0, slots)`, and
    /// the tail padding inside the buffer. Law: when true, [`TensorLayout::padding_runs`] calls `f`
    /// only with runs inside `[0, slots)`.
    pub fn padded_in_bounds(&self) -> bool {
        let Some(p) = &self.padded else {
            return true;
        };
        let sum = |pick: fn(&[i64]) -> Option<i64>| {
            p.iter()
                .try_fold(0i64, |acc, t| pick(t).and_then(|v| acc.checked_add(v)))
        };
        let (lo, hi) = (
            sum(|t| t.iter().copied().min()),
            sum(|t| t.iter().copied().max()),
        );
        // (An empty padded table leaves no padded index to walk: only the tail padding.)
        let empty = p.iter().any(Vec::is_empty);
        p.len() == self.dims.len()
            && p.iter().zip(&self.dims).all(|(t, &d)| t.len() as u64 >= d)
            && self.padded_slots <= self.slots
            && (empty
                || lo.is_some_and(|lo| lo >= 0) && hi.is_some_and(|hi| (hi as u64) < self.slots))
    }

    /// Calls `f(offset, len)` for runs of padding slots that together cover every slot no element maps
    /// to, each once, `None` when the layout's padding has no structure to follow. The runs are split
    /// into `parts` independent groups (`part` selects one) so workers can share them.
    pub fn padding_runs(
        &self,
        part: usize,
        parts: usize,
        mut f: impl FnMut(u64, u64),
    ) -> Option<()> {
        let padded = self.padded.as_ref()?;
        let rank = padded.len();
        // The padded space minus the logical box is a disjoint union of boxes: box i holds the indices
        // below the logical extent in dimensions before i, past it in dimension i, anything after.
        for i in 0..rank {
            let (l, p) = (self.dims[i] as usize, padded[i].len());
            if l == p {
                continue;
            }
            let ranges: Vec<std::ops::Range<usize>> = (0..rank)
                .map(|j| match j.cmp(&i) {
                    std::cmp::Ordering::Less => 0..self.dims[j] as usize,
                    std::cmp::Ordering::Equal => l..p,
                    std::cmp::Ordering::Greater => 0..padded[j].len(),
                })
                .collect();
            if ranges.iter().any(|r| r.is_empty()) {
                continue;
            }
            // The innermost dimension: the one with the smallest step; runs where it steps by one.
            let inner = (0..rank)
                .min_by_key(|&j| stride_of(&padded[j]))
                .unwrap_or(0);
            let t = &padded[inner];
            let r = ranges[inner].clone();
            let mut runs = Vec::new();
            let mut start = r.start;
            for x in r.start + 1..=r.end {
                if x == r.end || t[x] != t[x - 1] + 1 {
                    runs.push((t[start], (x - start) as u64));
                    start = x;
                }
            }
            // This part's share of the box's rows: a contiguous range of them, walked with the
            // farthest-apart dimension outermost, so the runs go out in memory order (a tile's padding
            // rows one after another, rather than one row of every tile, then the next).
            let mut others: Vec<usize> = (0..rank).filter(|&j| j != inner).collect();
            others.sort_by_key(|&j| std::cmp::Reverse(stride_of(&padded[j])));
            let n: usize = others.iter().map(|&j| ranges[j].len()).product();
            let (first, last) = (n * part / parts, n * (part + 1) / parts);
            let mut idx = vec![0usize; others.len()];
            let mut rest = first;
            for k in (0..others.len()).rev() {
                let r = &ranges[others[k]];
                idx[k] = r.start + rest % r.len();
                rest /= r.len();
            }
            for _ in first..last {
                let base: i64 = others.iter().zip(&idx).map(|(&j, &x)| padded[j][x]).sum();
                for &(o, len) in &runs {
                    f((base + o) as u64, len);
                }
                for k in (0..others.len()).rev() {
                    idx[k] += 1;
                    if idx[k] < ranges[others[k]].end {
                        break;
                    }
                    idx[k] = ranges[others[k]].start;
                }
            }
        }
        if self.slots > self.padded_slots && part == 0 {
            f(self.padded_slots, self.slots - self.padded_slots);
        }
        Some(())
    }

    /// The offset of logical element `index` (first copy).
    pub fn offset(&self, index: &[u64]) -> i64 {
        index
            .iter()
            .zip(&self.tables)
            .map(|(&i, t)| t[i as usize])
            .sum::<i64>()
            + self.replicas[0]
    }
}

/// The share of a destination's slots from which its padding is zeroed with the whole buffer first, in
/// one pass, rather than alone, run by run (see [`TensorLayout::zeroes_padding_alone`]). Measured on a
/// Zen 4 (one thread, ratio to memcpy, 3 rounds): `f32[7,4000000]` into `{1,0:T(8,128)}` (1 row of each
/// 8 padding) 0.76 alone against 1.18 whole; `f32[15,4000000]` into `{1,0:T(16,128)}` (1 of 16) 0.94
/// either way; `f32[3,8000000]` into `{1,0:T(8,128)}` (5 of 8) 0.56 alone against 1.36 whole. Zeroing
/// padding run by run and then writing the elements between the runs passes over the buffer twice in
/// pieces; one pass of zeros first runs at the memory's full write speed.
pub const PADDING_ALONE_MAX: (u64, u64) = (1, 16);

/// Whether `padding` slots of `slots` are few enough to zero alone (under [`PADDING_ALONE_MAX`]).
pub(crate) fn padding_alone(padding: u64, slots: u64) -> bool {
    let (num, den) = PADDING_ALONE_MAX;
    u128::from(padding) * u128::from(den) < u128::from(slots) * u128::from(num)
}

/// The step between a table's first two offsets (`i64::MAX` for fewer than two: no step).
fn stride_of(t: &[i64]) -> i64 {
    match t {
        [a, b, ..] => b.checked_sub(*a).map_or(i64::MAX, i64::saturating_abs),
        _ => i64::MAX,
    }
}

/// The fewest offsets the padded tables of a layout may list however small its dims: below this they
/// are always made.
const PADDED_TABLES_MIN: u64 = 1 << 16;

/// The slots of an XLA array's buffer: every tile expanded, then rounded up to the tail padding's
/// alignment (`L`).
pub(crate) fn xla_slots(a: &ArrayShape, tiling: &Tiling) -> Result<u64> {
    let expanded = tiling.expanded_elements()?;
    let l = a.layout.tail_padding_alignment_in_elements.max(1);
    expanded
        .checked_add((l - expanded % l) % l)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| RelayoutError::Layout(format!("{a}: its size overflows 64 bits")))
}

/// The tables of a layout over a padded box (see [`form_tables`]).
pub(crate) struct FormTables {
    /// The logical dimensions, each split into its factors where asked.
    pub dims: Vec<u64>,
    /// Per (split) dimension, the offsets of the logical indices.
    pub tables: Vec<Vec<i64>>,
    /// Per (split) dimension, the offsets of the padded indices; `None` where they would not stay small
    /// beside the logical ones (a tile far larger than its dims).
    pub padded: Option<Vec<Vec<i64>>>,
    /// Indices in the padded box (its extents' product, saturating at `u64::MAX`).
    pub covered: u64,
}

/// The offset tables of `l`, a layout over the padded box `padded_shape` that holds the logical box `dims`
/// (`dims_i ≤ padded_i`), with each dimension `i` split row-major into the factors `split[i]` where that
/// lists more than one (only where `dims_i = padded_i`; else the dimension stays whole). Law: for every
/// logical index `e` (and every padded one, where `padded` is made), `Σ_i tables[i][e_i] = l(e)` indexed
/// by the finer multi-index, the layout's offset included (in the first dimension's offsets).
pub(crate) fn form_tables(
    l: &Layout,
    padded_shape: &[u64],
    dims: &[u64],
    split: Option<&[Vec<u64>]>,
) -> Result<FormTables> {
    let (dims, padded_shape) = match split {
        None => (dims.to_vec(), padded_shape.to_vec()),
        Some(split) => {
            let mut d = Vec::new();
            let mut p = Vec::new();
            for (i, f) in split.iter().enumerate() {
                let (Some(&di), Some(&pi)) = (dims.get(i), padded_shape.get(i)) else {
                    return Err(RelayoutError::Layout(format!(
                        "{l}: a split of {} dimensions for {} of them",
                        split.len(),
                        dims.len()
                    )));
                };
                if f.len() > 1 && di == pi {
                    d.extend_from_slice(f);
                    p.extend_from_slice(f);
                } else {
                    d.push(di);
                    p.push(pi);
                }
            }
            (d, p)
        }
    };
    // The layout's offset (a slice's first element) goes into the first dimension's offsets.
    let base = l.offset().get(&Axis::memory());
    let shifted = |mut t: Vec<Vec<i64>>| -> Result<Vec<Vec<i64>>> {
        let overflow = || RelayoutError::Layout(format!("{l}: offsets overflow 64 bits"));
        match t.first_mut() {
            Some(first) => {
                for v in first.iter_mut() {
                    *v = v.checked_add(base).ok_or_else(overflow)?;
                }
            }
            None if base != 0 => {
                return Err(RelayoutError::Layout(format!(
                    "{l}: an offset with no dimension to carry it"
                )))
            }
            None => {}
        }
        Ok(t)
    };
    let tables = shifted(tables_of(l, &padded_shape, &dims)?)?;
    // The padded tables, which let the padding be zeroed alone, are made where they stay small
    // beside the logical ones: a tile far larger than its dims (`{0,1:T(8,166666666228)}` of an
    // `f32[3,5]`) would otherwise list 1.6·10^11 offsets before any buffer size is checked; without
    // them the destination is zeroed whole.
    let entries = |shape: &[u64]| shape.iter().try_fold(0u64, |s, &d| s.checked_add(d));
    let small = match (entries(&padded_shape), entries(&dims)) {
        (Some(p), Some(d)) => p <= d.saturating_mul(4).max(PADDED_TABLES_MIN),
        _ => false,
    };
    let padded = if small {
        Some(shifted(tables_of(l, &padded_shape, &padded_shape)?)?)
    } else {
        None
    };
    let covered = padded_shape
        .iter()
        .try_fold(1u64, |p, &d| p.checked_mul(d))
        .unwrap_or(u64::MAX);
    Ok(FormTables {
        dims,
        tables,
        padded,
        covered,
    })
}

/// Per dimension, the offsets of indices `[0, dims_i)` of `l` grouped by `shape` (which may be padded).
fn tables_of(l: &Layout, shape: &[u64], dims: &[u64]) -> Result<Vec<Vec<i64>>> {
    let g = l.group(shape)?;
    let mut tables = Vec::with_capacity(dims.len());
    for (i, &d) in dims.iter().enumerate() {
        let block = g.block(i);
        let mut t = Vec::new();
        if usize::try_from(d).map_or(true, |d| t.try_reserve_exact(d).is_err()) {
            return Err(RelayoutError::Layout(format!(
                "{l}: the offsets of a dim of {d} indices do not fit in memory"
            )));
        }
        for x in 0..d {
            let mut rest = x;
            let mut off = 0i64;
            for it in block.iter().rev() {
                off = i64::try_from(rest % it.extent())
                    .ok()
                    .and_then(|digit| digit.checked_mul(it.stride()))
                    .and_then(|step| off.checked_add(step))
                    .ok_or_else(|| {
                        RelayoutError::Layout(format!("{l}: offsets overflow 64 bits"))
                    })?;
                rest /= it.extent();
            }
            t.push(off);
        }
        tables.push(t);
    }
    Ok(tables)
}

/// Whether all (element, replica) pairs land in distinct slots (exhaustive, with a bitmap).
fn check_injective(tables: &[Vec<i64>], replicas: &[i64], slots: u64) -> bool {
    injective_together(&[(tables, replicas)], slots)
}

/// Whether the (element, replica) pairs of every layout in `parts` (its tables and replica offsets)
/// land in distinct slots of a buffer of `slots`, all of them together (exhaustive, with one bitmap of
/// `slots` bits). Law: true iff no slot is reached twice and every offset lies in `[0, slots)`; false,
/// as not provably injective, past 2^32 slots.
pub(crate) fn injective_together(parts: &[(&[Vec<i64>], &[i64])], slots: u64) -> bool {
    let count = parts.iter().try_fold(0u64, |n, (tables, replicas)| {
        let c = tables
            .iter()
            .try_fold(replicas.len() as u64, |p, t| p.checked_mul(t.len() as u64))?;
        n.checked_add(c)
    });
    if count.is_none_or(|c| c > slots) || slots > 1 << 32 {
        return false; // too many to be distinct, or too large to check here
    }
    let mut seen = vec![0u64; (slots as usize).div_ceil(64)];
    parts
        .iter()
        .all(|(tables, replicas)| mark(tables, replicas, slots, &mut seen))
}

/// Marks every (element, replica) slot of one layout in `seen`. Law: false as soon as a slot is outside
/// `[0, slots)` or already marked.
fn mark(tables: &[Vec<i64>], replicas: &[i64], slots: u64, seen: &mut [u64]) -> bool {
    if tables.iter().any(Vec::is_empty) {
        return true; // no element
    }
    let mut idx = vec![0usize; tables.len()];
    loop {
        let base: i64 = idx.iter().zip(tables).map(|(&i, t)| t[i]).sum();
        for r in replicas {
            let Some(o) = base
                .checked_add(*r)
                .and_then(|o| u64::try_from(o).ok())
                .filter(|&o| o < slots)
            else {
                return false;
            };
            let (w, b) = ((o / 64) as usize, o % 64);
            if seen[w] & (1 << b) != 0 {
                return false;
            }
            seen[w] |= 1 << b;
        }
        let mut k = tables.len();
        loop {
            if k == 0 {
                return true;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < tables[k].len() {
                break;
            }
            idx[k] = 0;
        }
    }
}
