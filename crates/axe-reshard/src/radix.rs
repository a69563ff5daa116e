//! A shard's buffer as one mixed radix per dimension.
//!
//! Any layout a device may hold — row-major, an XLA layout (tiles included) or an Axe layout on the
//! memory axis — grouped by the shard's padded shape is separable: the slot of local index `x` is
//! `Σ_i off_i(x_i)` plus a copy's base, and `off_i(u)` is the digits of `u` over dimension `i`'s iters
//! (extents outermost first, the outermost taking the rest) times their strides ([`Radix`]). A
//! [`ShardLayout`] keeps only those iters: a few words per dimension, not one offset per index.
//!
//! Copies between such buffers go in pieces: see [`crate::stretch`].

use axe_layout::{Axis, Layout};
use axe_xla::{element_bits, to_axe, ArrayShape, Tiling};

use crate::exec_error::{dims_text, ExecError, ExecResult};

/// Along one dimension of a buffer, where each index lies: the digits of index `u` over `iters`'
/// extents (outermost first, the outermost digit taking the rest) times their strides, summed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Radix {
    /// `(extent, stride)` per iter, outermost first (empty for a dimension of extent 1).
    pub iters: Vec<(u64, i64)>,
}

impl Radix {
    /// The offset of index `u` (wrapping arithmetic: [`ShardLayout`]'s constructors check that every
    /// index of the shard stays in range).
    pub fn offset(&self, u: u64) -> i64 {
        let mut rest = u;
        let mut off = 0i64;
        for (j, &(e, s)) in self.iters.iter().enumerate().rev() {
            let e = e.max(1);
            let digit = if j == 0 { rest } else { rest % e };
            rest /= e;
            off = off.wrapping_add((digit as i64).wrapping_mul(s));
        }
        off
    }

    /// Per level, the place value (product of the extents inside it), outermost first.
    pub(crate) fn places(&self) -> Vec<u64> {
        let mut out = vec![1u64; self.iters.len()];
        let mut p = 1u64;
        for (o, &(e, _)) in out.iter_mut().zip(&self.iters).rev() {
            *o = p;
            p = p.saturating_mul(e);
        }
        out
    }

    /// The lowest and highest offsets over every digit (saturating in `i128`).
    fn span(&self) -> (i128, i128) {
        self.iters.iter().fold((0, 0), |(lo, hi), &(e, s)| {
            let reach = i128::from(e.saturating_sub(1)) * i128::from(s);
            (lo + reach.min(0), hi + reach.max(0))
        })
    }
}

/// Where every element of a shard lies in its buffer: element `x` (a local index within `shape`) at
/// slot `Σ_i dims[i].offset(x_i) + r` for each `r` of `replicas`, in a buffer of `slots` elements of
/// `bits` bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardLayout {
    /// The padded local shape every box lies within.
    pub shape: Vec<u64>,
    /// Per dimension of `shape`, its mixed radix.
    pub dims: Vec<Radix>,
    /// The slot of local index 0 in each copy (the layout's offset plus its replica points).
    pub replicas: Vec<i64>,
    /// Slots the buffer holds (elements, padding, tail padding).
    pub slots: u64,
    /// Bits per element.
    pub bits: u32,
}

fn layout_error(what: impl std::fmt::Display) -> ExecError {
    ExecError::Input(what.to_string())
}

impl ShardLayout {
    /// The row-major layout of `shape`; an error where its size overflows 64 bits.
    pub fn row_major(shape: &[u64], bits: u32) -> ExecResult<ShardLayout> {
        let mut dims = vec![Radix { iters: Vec::new() }; shape.len()];
        let mut stride: u64 = 1;
        for (r, &d) in dims.iter_mut().zip(shape).rev() {
            let s = i64::try_from(stride).map_err(|_| overflows(shape))?;
            if d > 1 {
                r.iters.push((d, s));
            }
            stride = stride.checked_mul(d).ok_or_else(|| overflows(shape))?;
        }
        i64::try_from(stride).map_err(|_| overflows(shape))?;
        Ok(ShardLayout {
            shape: shape.to_vec(),
            dims,
            replicas: vec![0],
            slots: stride,
            bits,
        })
    }

    /// The layout of an XLA array whose dims are a shard's padded shape (tiles, `L` and `E` honoured);
    /// an error where a later tile interleaves elements and padding.
    pub fn of_xla(a: &ArrayShape) -> ExecResult<ShardLayout> {
        let shape: Vec<u64> = axe_xla::static_dims(a)
            .map_err(layout_error)?
            .iter()
            .map(|&d| d as u64)
            .collect();
        let form = to_axe(a).map_err(|_| {
            layout_error(format!(
                "{a}: a later tile interleaves elements and padding, which has no per-dimension offsets"
            ))
        })?;
        let mut l = Self::grouped(&form.layout, &form.padded_shape, element_bits(a) as u32)?;
        let tiling = Tiling::new(a).map_err(layout_error)?;
        let expanded = tiling.expanded_elements().map_err(layout_error)?;
        let align = a.layout.tail_padding_alignment_in_elements.max(1);
        l.slots = expanded
            .checked_add((align - expanded % align) % align)
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| overflows(&shape))?;
        l.shape = shape;
        Ok(l)
    }

    /// The layout of an Axe layout on the memory axis over `shape`, elements of `bits` bits: its iters
    /// grouped by `shape`, replicas as extra copies, its offset shifting every element. An error where
    /// it uses another axis, does not group by `shape`, reaches a negative offset or puts two elements
    /// (or copies) in one slot.
    pub fn of_axe(l: &Layout, shape: &[u64], bits: u32) -> ExecResult<ShardLayout> {
        if let Some(a) = l.axes().into_iter().find(|a| !a.is_memory()) {
            return Err(layout_error(format!(
                "{l} uses axis {a}: only the memory axis m has bytes to move"
            )));
        }
        let out = Self::grouped(l, shape, bits)?;
        if !out.injective() {
            return Err(layout_error(format!(
                "{l} puts several elements in one slot"
            )));
        }
        Ok(out)
    }

    /// The iters of `l` grouped by `shape`, its offset and replicas, and the slots its offsets reach.
    fn grouped(l: &Layout, shape: &[u64], bits: u32) -> ExecResult<ShardLayout> {
        let g = l
            .group(shape)
            .map_err(|e| layout_error(format!("{l} over {}: {e}", dims_text(shape))))?;
        let m = Axis::memory();
        let dims: Vec<Radix> = (0..shape.len())
            .map(|i| Radix {
                iters: g
                    .block(i)
                    .iter()
                    .filter(|it| it.extent() > 1)
                    .map(|it| (it.extent(), it.stride()))
                    .collect(),
            })
            .collect();
        let base = l.offset().get(&m);
        let replicas: Vec<i64> = l
            .replica_points()
            .map_err(layout_error)?
            .iter()
            .map(|c| c.get(&m).checked_add(base))
            .collect::<Option<_>>()
            .ok_or_else(|| overflows(shape))?;
        let (lo, hi) = dims.iter().fold((0i128, 0i128), |(lo, hi), r| {
            let (a, b) = r.span();
            (lo + a, hi + b)
        });
        let rmin = replicas.iter().copied().min().unwrap_or(0);
        let rmax = replicas.iter().copied().max().unwrap_or(0);
        let (lo, hi) = (lo + i128::from(rmin), hi + i128::from(rmax));
        if lo < 0 {
            return Err(layout_error(format!(
                "{l} reaches the negative offset {lo}: add an offset to place it in the buffer"
            )));
        }
        if hi >= i128::from(i64::MAX) {
            return Err(overflows(shape));
        }
        Ok(ShardLayout {
            shape: shape.to_vec(),
            dims,
            replicas,
            slots: (hi + 1) as u64,
            bits,
        })
    }

    /// Whether distinct elements and copies land in distinct slots: by the gap rule (every iter's
    /// stride, by size, passes the reach of the smaller ones) where it holds, else one bit per slot
    /// (refused above 2^32 slots, as not provably injective).
    fn injective(&self) -> bool {
        let mut steps: Vec<(u64, u64)> = self
            .dims
            .iter()
            .flat_map(|r| r.iters.iter())
            .map(|&(e, s)| (s.unsigned_abs(), e))
            .collect();
        let mut reps = self.replicas.clone();
        reps.sort_unstable();
        reps.dedup();
        if reps.len() == self.replicas.len() {
            steps.sort_unstable();
            let mut reach: u128 = 0;
            let mut gaps = true;
            for &(s, e) in &steps {
                if u128::from(s) <= reach {
                    gaps = false;
                    break;
                }
                reach += u128::from(e - 1) * u128::from(s);
            }
            // The copies must also lie further apart than one copy's reach.
            let apart = reps
                .windows(2)
                .all(|w| (w[1] - w[0]).unsigned_abs() as u128 > reach);
            if gaps && apart {
                return true;
            }
        } else {
            return false;
        }
        if self.slots > 1 << 32 {
            return false;
        }
        let mut seen = vec![0u64; (self.slots as usize).div_ceil(64)];
        let mut ok = true;
        each_index(&self.shape, |x| {
            let base: i64 = self.dims.iter().zip(x).map(|(r, &u)| r.offset(u)).sum();
            for r in &self.replicas {
                let o = (base + r) as usize;
                if seen[o / 64] & (1 << (o % 64)) != 0 {
                    ok = false;
                }
                seen[o / 64] |= 1 << (o % 64);
            }
            ok
        });
        ok
    }

    /// The slot of the element at local index `local` (first copy).
    pub fn offset(&self, local: &[u64]) -> i64 {
        let base = self.replicas.first().copied().unwrap_or(0);
        self.dims
            .iter()
            .zip(local)
            .fold(base, |a, (r, &u)| a.wrapping_add(r.offset(u)))
    }

    /// Bytes the buffer needs (saturating).
    pub fn bytes(&self) -> u64 {
        let bits = u128::from(self.slots) * u128::from(self.bits);
        u64::try_from(bits.div_ceil(8)).unwrap_or(u64::MAX)
    }

    /// Whether every slot holds an element of the box `0..local` (no padding to zero).
    pub(crate) fn dense_over(&self, local: &[u64]) -> bool {
        local == self.shape.as_slice()
            && local
                .iter()
                .try_fold(self.replicas.len() as u64, |a, &d| a.checked_mul(d))
                == Some(self.slots)
    }
}

fn overflows(shape: &[u64]) -> ExecError {
    ExecError::Input(format!(
        "a buffer of shape {} overflows 64 bits",
        dims_text(shape)
    ))
}

/// Calls `f` on every index of `shape`, row-major, while it returns true.
fn each_index(shape: &[u64], mut f: impl FnMut(&[u64]) -> bool) {
    if shape.contains(&0) {
        return;
    }
    let mut x = vec![0u64; shape.len()];
    loop {
        if !f(&x) {
            return;
        }
        let mut k = shape.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            x[k] += 1;
            if x[k] < shape[k] {
                break;
            }
            x[k] = 0;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use axe_relayout::TensorLayout;
    use axe_xla::{Dim, PrimitiveType};
    use proptest::prelude::*;

    /// An XLA array of f32 (a u8 for `narrow`) over `shape` with the layout `text`.
    fn xla(shape: &[u64], text: &str) -> Option<ArrayShape> {
        let layout = axe_xla::parse_layout(text, shape.len()).ok()?;
        let dims: Vec<Dim> = shape.iter().map(|&d| Dim::Static(d as i64)).collect();
        let a = ArrayShape {
            element_type: PrimitiveType::U8,
            dims: dims.into(),
            layout,
        };
        axe_xla::validate_array(&a).ok()?;
        to_axe(&a).ok()?;
        Some(a)
    }

    /// Layouts of a shard of `shape`: XLA layouts, tiled or permuted, and Axe layouts (interleaved
    /// halves, and a strided one with an offset).
    pub(crate) fn layouts(shape: &[u64]) -> Vec<(ShardLayout, TensorLayout)> {
        let texts: &[&str] = match shape.len() {
            1 => &["{0}", "{0:T(4)}", "{0:T(2)}", "{0:T(3)}"],
            _ => &[
                "{1,0}",
                "{0,1}",
                "{1,0:T(2,4)}",
                "{1,0:T(4,2)}",
                "{0,1:T(2,2)}",
                "{1,0:T(2,3)}",
            ],
        };
        let mut out: Vec<(ShardLayout, TensorLayout)> = texts
            .iter()
            .filter_map(|t| xla(shape, t))
            .map(|a| {
                (
                    ShardLayout::of_xla(&a).expect("xla"),
                    TensorLayout::from_xla(&a).expect("xla tables"),
                )
            })
            .collect();
        let n: u64 = shape.iter().product();
        let mut axe = vec![format!("S[{n}:2] + 3")];
        if n.is_multiple_of(2) && shape.last().is_some_and(|l| l.is_multiple_of(2)) {
            axe.push(format!("S[(2,{}):(1,2)]", n / 2));
        }
        for t in axe {
            let l: Layout = t.parse().expect("axe");
            if let (Ok(s), Ok(t)) = (
                ShardLayout::of_axe(&l, shape, 8),
                TensorLayout::from_axe(&l, shape, 8),
            ) {
                out.push((s, t));
            }
        }
        out
    }

    /// Every index of `shape`, row-major.
    pub(crate) fn indices(shape: &[u64]) -> Vec<Vec<u64>> {
        let mut out = Vec::new();
        each_index(shape, |x| {
            out.push(x.to_vec());
            true
        });
        out
    }

    fn shape() -> impl Strategy<Value = Vec<u64>> {
        prop::collection::vec(1u64..13, 1..3)
    }

    proptest! {
        /// A shard's mixed radices put every element (every copy) at the slot `axe-relayout`'s
        /// whole-dimension tables give it, in a buffer of as many slots.
        #[test]
        fn radices_address_as_the_tables(shape in shape()) {
            for (s, t) in layouts(&shape) {
                prop_assert_eq!(s.slots, t.slots);
                // The copies lie as far apart (the base offset may sit in a table or in the copies).
                let apart = |r: &[i64]| r.iter().map(|v| v - r[0]).collect::<Vec<_>>();
                prop_assert_eq!(apart(&s.replicas), apart(&t.replicas));
                for x in indices(&shape) {
                    prop_assert_eq!(s.offset(&x), t.offset(&x), "{:?} at {:?}", s, x);
                }
            }
        }
    }

    #[test]
    fn layouts_that_overlap_or_leave_the_buffer_are_refused() {
        let l: Layout = "S[(2,4):(1,1)]".parse().expect("layout");
        assert!(ShardLayout::of_axe(&l, &[8], 32).is_err());
        let l: Layout = "S[4:-1]".parse().expect("layout");
        assert!(ShardLayout::of_axe(&l, &[4], 32).is_err());
        // An interleaving the gap rule cannot prove is checked slot by slot.
        let l: Layout = "S[(2,3):(3,1)] + R[2:7]".parse().expect("layout");
        assert!(ShardLayout::of_axe(&l, &[6], 32).is_ok());
        let l: Layout = "S[(2,3):(2,1)]".parse().expect("layout");
        assert!(ShardLayout::of_axe(&l, &[6], 32).is_err());
    }
}
