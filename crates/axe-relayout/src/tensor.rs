//! A tensor's layout in memory, reduced to per-dimension offset tables.

use axe_layout::{Axis, Layout};
use axe_xla::{element_bits, to_axe, ArrayShape, Tiling};

use crate::error::{RelayoutError, Result};

/// Where every logical element of a tensor lives: `offset(e) = Σ_i tables[i][e_i]` (+ each replica
/// offset), in elements of `bits` bits each, in a buffer of `slots` elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorLayout {
    /// Logical dimensions.
    pub dims: Vec<u64>,
    /// Bits per element (with packing: `E(n)`).
    pub bits: u32,
    /// Per logical dimension, the element offset of each index.
    pub tables: Vec<Vec<i64>>,
    /// Offsets added to every element, one per copy (`[0]` without replicas).
    pub replicas: Vec<i64>,
    /// Elements the buffer holds (data, padding, tail padding).
    pub slots: u64,
    /// Every slot holds an element (no padding to fill).
    pub dense: bool,
    /// Distinct elements land in distinct slots (checked; destinations must be).
    pub injective: bool,
}

impl TensorLayout {
    /// The layout of an XLA array (every tile, `L` and `E` honoured).
    pub fn from_xla(a: &ArrayShape) -> Result<TensorLayout> {
        let tiling = Tiling::new(a)?;
        let dims: Vec<u64> = tiling.logical.iter().map(|&d| d as u64).collect();
        let bits = element_bits(a) as u32;
        let expanded = tiling.expanded_elements()?;
        let l = a.layout.tail_padding_alignment_in_elements.max(1);
        let slots = (expanded + (l - expanded % l) % l) as u64;
        let count: u64 = dims.iter().product();
        let tables = match to_axe(a) {
            Ok(form) => tables_of(&form.layout, &form.padded_shape, &dims)?,
            Err(_) => {
                return Err(RelayoutError::Layout(format!(
                    "{a}: a later tile interleaves elements and padding, which has no per-dimension offsets"
                )))
            }
        };
        Ok(TensorLayout {
            dims,
            bits,
            tables,
            replicas: vec![0],
            slots,
            dense: slots == count,
            injective: true,
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
        let mut tables = tables_of(l, dims, dims)?;
        let base = l.offset().get(&Axis::memory());
        if let Some(t) = tables.first_mut() {
            for v in t.iter_mut() {
                *v += base;
            }
        }
        let replicas: Vec<i64> = l
            .replica_points()?
            .iter()
            .map(|c| c.get(&Axis::memory()))
            .collect();
        let min: i64 = tables
            .iter()
            .map(|t| t.iter().copied().min().unwrap_or(0))
            .sum::<i64>()
            + replicas.iter().copied().min().unwrap_or(0)
            + if tables.is_empty() { base } else { 0 };
        if min < 0 {
            return Err(RelayoutError::Layout(format!(
                "{l} reaches the negative offset {min}: add an offset to place it in the buffer"
            )));
        }
        let max: i64 = tables
            .iter()
            .map(|t| t.iter().copied().max().unwrap_or(0))
            .sum::<i64>()
            + replicas.iter().copied().max().unwrap_or(0)
            + if tables.is_empty() { base } else { 0 };
        let slots = (max + 1) as u64;
        let count: u64 = dims.iter().product::<u64>() * replicas.len() as u64;
        let injective = check_injective(&tables, &replicas, slots);
        Ok(TensorLayout {
            dims: dims.to_vec(),
            bits,
            tables,
            replicas,
            slots,
            dense: injective && count == slots,
            injective,
        })
    }

    /// Bytes the buffer needs.
    pub fn bytes(&self) -> u64 {
        (self.slots * u64::from(self.bits)).div_ceil(8)
    }

    /// Logical elements.
    pub fn count(&self) -> u64 {
        self.dims.iter().product()
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

/// Per dimension, the offsets of indices `[0, dims_i)` of `l` grouped by `shape` (which may be padded).
fn tables_of(l: &Layout, shape: &[u64], dims: &[u64]) -> Result<Vec<Vec<i64>>> {
    let g = l.group(shape)?;
    let mut tables = Vec::with_capacity(dims.len());
    for (i, &d) in dims.iter().enumerate() {
        let block = g.block(i);
        let mut t = Vec::with_capacity(d as usize);
        for x in 0..d {
            let mut rest = x;
            let mut off = 0i64;
            for it in block.iter().rev() {
                off += (rest % it.extent()) as i64 * it.stride();
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
