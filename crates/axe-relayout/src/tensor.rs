//! A tensor's layout in memory, reduced to per-dimension offset tables.

use axe_layout::{Axis, Layout};
use axe_xla::{element_bits, to_axe, ArrayShape, PrimitiveType, Tiling};

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
    /// The slots the padded tables cover.
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
        let bits = element_bits(a) as u32;
        let own = a.element_type.bits();
        if bits < own && a.element_type != PrimitiveType::Pred {
            // XLA gives sizes for such layouts but no values: its CPU and GPU backends refuse custom
            // element sizes on types of a byte or more.
            return Err(RelayoutError::Layout(format!(
                "{a}: E({bits}) keeps {bits} of each {} element's {own} bits, and XLA does not say \
                 which values survive; elements pack narrower than their type only as pred into \
                 E(1)",
                a.element_type.name()
            )));
        }
        let expanded = tiling.expanded_elements()?;
        let slots = xla_slots(a, &tiling)?;
        let count: u64 = dims.iter().product();
        if count == 0 {
            // No element to place: every slot (if the tiles leave any) is padding, zeroed whole.
            return Ok(TensorLayout::empty(dims, bits, slots));
        }
        let Ok(form) = to_axe(a) else {
            return Err(RelayoutError::Layout(format!(
                "{a}: a later tile interleaves elements and padding, which has no per-dimension offsets"
            )));
        };
        let (dims, padded_shape) = match split {
            None => (dims, form.padded_shape.clone()),
            Some(split) => {
                let mut d = Vec::new();
                let mut p = Vec::new();
                for (i, f) in split.iter().enumerate() {
                    if f.len() > 1 {
                        d.extend_from_slice(f);
                        p.extend_from_slice(f);
                    } else {
                        d.push(dims[i]);
                        p.push(form.padded_shape[i]);
                    }
                }
                (d, p)
            }
        };
        let tables = tables_of(&form.layout, &padded_shape, &dims)?;
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
            tables_of(&form.layout, &padded_shape, &padded_shape)?
        } else {
            Vec::new()
        };
        let reach: i64 = padded
            .iter()
            .map(|t| t.iter().copied().max().unwrap_or(0))
            .sum();
        let covered: u64 = padded_shape
            .iter()
            .try_fold(1u64, |p, &d| p.checked_mul(d))
            .unwrap_or(u64::MAX);
        // The padded tables tile [0, expanded) exactly when they reach no further and count as many.
        let exact = small && covered == expanded as u64 && reach + 1 == covered as i64;
        Ok(TensorLayout {
            dims,
            bits,
            tables,
            replicas: vec![0],
            slots,
            dense: slots == count,
            injective: true,
            padded: exact.then_some(padded),
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
                .min_by_key(|&j| {
                    let t = &padded[j];
                    if t.len() < 2 {
                        i64::MAX
                    } else {
                        (t[1] - t[0]).abs()
                    }
                })
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
            // This part's share of the box's rows: a contiguous range of them.
            let others: Vec<usize> = (0..rank).filter(|&j| j != inner).collect();
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
    let count: u64 = tables.iter().map(|t| t.len() as u64).product::<u64>() * replicas.len() as u64;
    if count > slots {
        return false;
    }
    if slots > 1 << 32 {
        return false; // too large to check here; treated as not provably injective
    }
    let mut seen = vec![0u64; (slots as usize).div_ceil(64)];
    let mut idx = vec![0usize; tables.len()];
    loop {
        let base: i64 = idx.iter().zip(tables).map(|(&i, t)| t[i]).sum();
        for r in replicas {
            let o = (base + r) as usize;
            if seen[o / 64] & (1 << (o % 64)) != 0 {
                return false;
            }
            seen[o / 64] |= 1 << (o % 64);
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
