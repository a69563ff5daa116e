//! Linear layouts and Axe layouts.
//!
//! A linear layout maps hardware (in-dims) to tensor coordinates (out-dims). The Axe layout of the same
//! placement maps the other way: tensor index (row-major over the out-dim sizes, `dim0` slowest) → the
//! set of hardware coordinates holding it, on one Axe axis per in-dim (`register` is written `reg`). It is
//! the preimage relation `A(t) = { h : L(h) = t }`. It exists when `L` is surjective (every element has a
//! home), the preimage of each tensor bit lies on one in-dim, the tensor bits that land on one in-dim use
//! disjoint bits of it (so XOR is addition: "affine per in-dim"), and the kernel (broadcast copies) is a
//! set of single-axis replica iters. Every answer is checked by enumeration before it is returned.

use crate::error::{Result, TritonError};
use crate::linear::{Echelon, LinearLayout, MAX_MAP};
use axe_layout::{Axis, Coord, Iter, Layout};

/// The Axe axis name of an in-dim: `register` → `reg`, others unchanged.
pub fn axis_of(in_dim: &str) -> Result<Axis> {
    let name = if in_dim == "register" { "reg" } else { in_dim };
    Ok(Axis::new(name)?)
}

/// The in-dim name of an Axe axis: `reg` → `register`, others unchanged.
pub fn in_dim_of(axis: &Axis) -> String {
    if axis.name() == "reg" {
        "register".to_string()
    } else {
        axis.name().to_string()
    }
}

/// The in-dims a linear layout made from `layout` starts with, in Triton's order: a shared layout's
/// `offset` and `block` when `layout` is on `offset`, else a distributed layout's `register`, `lane`,
/// `warp` and `block` (its other axes follow, as [`LinearLayout::from_axe`] adds them).
pub fn triton_in_dims(layout: &Layout) -> &'static [&'static str] {
    if layout.axes().iter().any(|a| a.name() == "offset") {
        &["offset", "block"]
    } else {
        &["register", "lane", "warp", "block"]
    }
}

/// The tensor shape of a layout: its out-dim sizes, in order.
pub fn out_shape(ll: &LinearLayout) -> Vec<u64> {
    ll.out_dims().iter().map(|(_, s)| *s).collect()
}

impl LinearLayout {
    /// The Axe layout `A` over [`out_shape`] with `A(t) = { h : L(h) = t }` (see the module docs), or why
    /// none exists: [`TritonError::NotSurjective`], [`TritonError::NotAffine`] naming the in-dims where
    /// XOR is not addition, or [`TritonError::NotExpressible`]. Checked by enumeration of all inputs.
    pub fn to_axe(&self) -> Result<Layout> {
        if self.in_size() > MAX_MAP {
            return Err(TritonError::TooLarge(format!(
                "{} inputs to check",
                self.in_size()
            )));
        }
        let mut echelon = Echelon::new();
        let mut kernel = Vec::new();
        for (i, c) in self.columns().into_iter().enumerate() {
            if let Some(k) = echelon.insert(c, 1u64 << i) {
                kernel.push(k);
            }
        }
        if echelon.rank() != self.out_bits() {
            return Err(TritonError::NotSurjective(format!(
                "only 2^{} of the 2^{} tensor elements are held, an Axe layout places every element",
                echelon.rank(),
                self.out_bits()
            )));
        }
        let mut free = Echelon::new();
        for k in &kernel {
            free.insert(*k, 0);
        }
        // Bit offsets of the in-dims in a packed input.
        let mut offsets = Vec::new();
        let mut off = 0u32;
        for d in self.in_dims() {
            offsets.push((off, d.bases.len() as u32));
            off += d.bases.len() as u32;
        }
        let split = |packed: u64| -> Vec<(usize, u64)> {
            offsets
                .iter()
                .enumerate()
                .filter_map(|(k, (o, n))| {
                    let v = (packed >> o) & ((1u64 << n) - 1);
                    (v != 0).then_some((k, v))
                })
                .collect()
        };
        let mut used = vec![0u64; self.in_dims().len()];
        let mut not_affine = Vec::new();
        let mut shard = Vec::new();
        let mut out_off = 0u32;
        let mut per_dim: Vec<Vec<Iter>> = Vec::new();
        for (name, size) in self.out_dims() {
            let bits = size.trailing_zeros();
            let mut iters = Vec::new();
            for b in (0..bits).rev() {
                let target = 1u64 << (out_off + b);
                let pre = echelon
                    .solve(target)
                    .map(|c| free.minimize(c))
                    .ok_or_else(|| {
                        TritonError::NotSurjective(format!("{name} bit {b} is not reached"))
                    })?;
                let parts = split(pre);
                if parts.len() != 1 {
                    let names: Vec<&str> = parts
                        .iter()
                        .map(|(k, _)| self.in_dims()[*k].name.as_str())
                        .collect();
                    return Err(TritonError::NotExpressible(format!(
                        "{name} = {} is held at a combination of in-dims {}; an Axe iter moves on one axis",
                        1u64 << b,
                        names.join(" and ")
                    )));
                }
                let (k, v) = parts[0];
                if used[k] & v != 0 {
                    let n = self.in_dims()[k].name.clone();
                    if !not_affine.contains(&n) {
                        not_affine.push(n);
                    }
                }
                used[k] |= v;
                let stride =
                    i64::try_from(v).map_err(|_| TritonError::TooLarge(format!("stride {v}")))?;
                iters.push(Iter::new(2, stride, axis_of(&self.in_dims()[k].name)?)?);
            }
            out_off += bits;
            per_dim.push(iters);
        }
        if !not_affine.is_empty() {
            return Err(TritonError::NotAffine(not_affine));
        }
        for iters in per_dim {
            shard.extend(iters);
        }
        let mut replica = Vec::new();
        for k in &kernel {
            let parts = split(*k);
            if parts.len() != 1 {
                let names: Vec<&str> = parts
                    .iter()
                    .map(|(k, _)| self.in_dims()[*k].name.as_str())
                    .collect();
                return Err(TritonError::NotExpressible(format!(
                    "copies of one element differ on several in-dims at once ({}); an Axe replica iter moves on one axis",
                    names.join(" and ")
                )));
            }
            let (d, v) = parts[0];
            let stride =
                i64::try_from(v).map_err(|_| TritonError::TooLarge(format!("stride {v}")))?;
            replica.push(Iter::new(2, stride, axis_of(&self.in_dims()[d].name)?)?);
        }
        let layout = Layout::new(shard, replica, Coord::zero())?.canonicalize()?;
        self.check_axe(&layout)?;
        Ok(layout)
    }

    /// Checks `A(t) = { h : L(h) = t }` for every tensor index `t`, by enumeration.
    fn check_axe(&self, layout: &Layout) -> Result<()> {
        let shape = out_shape(self);
        let size: u64 = layout.size();
        let expected: u64 = shape.iter().product();
        if size != expected {
            return Err(TritonError::NotExpressible(format!(
                "the Axe layout has {size} elements, the tensor {expected}"
            )));
        }
        let mut seen = vec![false; self.in_size() as usize];
        let mut count = 0u64;
        for x in 0..size {
            let t = axe_layout::unflatten(x, &shape)?;
            for h in layout.apply(x)? {
                let mut inputs = Vec::new();
                for d in self.in_dims() {
                    let v = h.get(&axis_of(&d.name)?);
                    let v = u64::try_from(v)
                        .ok()
                        .filter(|v| v >> d.bases.len() == 0)
                        .ok_or_else(|| {
                            TritonError::NotExpressible(format!("{h} is outside the hardware"))
                        })?;
                    inputs.push(v);
                }
                if h.components().count() > inputs.iter().filter(|v| **v != 0).count() {
                    return Err(TritonError::NotExpressible(format!(
                        "{h} uses an axis with no in-dim"
                    )));
                }
                if self.apply(&inputs)? != t {
                    return Err(TritonError::NotExpressible(format!(
                        "the candidate sends {t:?} to {h}, which holds another element"
                    )));
                }
                let mut flat = 0u64;
                let mut shift = 0;
                for (v, d) in inputs.iter().zip(self.in_dims()) {
                    flat |= v << shift;
                    shift += d.bases.len();
                }
                if !seen[flat as usize] {
                    seen[flat as usize] = true;
                    count += 1;
                }
            }
        }
        if count != self.in_size() {
            return Err(TritonError::NotExpressible(format!(
                "the candidate reaches {count} of {} hardware slots",
                self.in_size()
            )));
        }
        Ok(())
    }

    /// The linear layout of an Axe layout `A` over `shape` (every extent a power of two): `L(h) = t` for
    /// every `h ∈ A(t)`, in-dims named after the axes (`reg` → `register`), first those in `in_dims` in that
    /// order (present even when `A` does not use them, with no bases), then the other axes by first use;
    /// out-dims `dim0..`. Errors when a size is not a power of two, `A` has an offset, a tensor bit or a
    /// replica bit lands on a non-power-of-two hardware index or on two axes, or some hardware slot holds
    /// nothing. Checked by enumeration.
    pub fn from_axe(layout: &Layout, shape: &[u64], in_dims: &[&str]) -> Result<LinearLayout> {
        layout.check_admits(shape)?;
        for (i, s) in shape.iter().enumerate() {
            crate::error::log2_exact(*s, || format!("tensor dim {i}"))?;
        }
        let layout = layout.canonicalize()?;
        if !layout.offset().is_zero() {
            return Err(TritonError::NotExpressible(format!(
                "the layout has offset {}; a linear layout maps 0 to 0",
                layout.offset()
            )));
        }
        let mut names: Vec<String> = in_dims.iter().map(|s| s.to_string()).collect();
        for a in layout.axes() {
            let n = in_dim_of(&a);
            if !names.contains(&n) {
                names.push(n);
            }
        }
        // claims[dim][bit] = Some(tensor coords) for a shard bit, Some(zeros) for a replica bit.
        let rank = shape.len();
        let mut claims: Vec<Vec<Option<Vec<u64>>>> = vec![Vec::new(); names.len()];
        let claim = |claims: &mut Vec<Vec<Option<Vec<u64>>>>,
                     c: &Coord,
                     image: Vec<u64>|
         -> Result<()> {
            let comps: Vec<(&Axis, i64)> = c.components().collect();
            if comps.len() != 1 {
                return Err(TritonError::NotExpressible(format!(
                    "a tensor or replica bit moves to {c}, not one power of two on one axis"
                )));
            }
            let (axis, v) = comps[0];
            let v = u64::try_from(v)
                .ok()
                .filter(|v| v.is_power_of_two())
                .ok_or_else(|| {
                    TritonError::NotExpressible(format!("a bit moves to {c}, not a power of two"))
                })?;
            let n = in_dim_of(axis);
            let d = names.iter().position(|x| *x == n).unwrap_or(0);
            let bit = v.trailing_zeros() as usize;
            if claims[d].len() <= bit {
                claims[d].resize(bit + 1, None);
            }
            if claims[d][bit].is_some() {
                return Err(TritonError::NotExpressible(format!("two bits move to {c}")));
            }
            claims[d][bit] = Some(image);
            Ok(())
        };
        let mut stride_of_bit = 1u64;
        for j in (0..rank).rev() {
            let bits = shape[j].trailing_zeros();
            for b in 0..bits {
                let x = stride_of_bit << b;
                let c = layout.shard_at(x)?;
                let mut image = vec![0u64; rank];
                image[j] = 1u64 << b;
                claim(&mut claims, &c, image)?;
            }
            stride_of_bit <<= bits;
        }
        for r in layout.replica() {
            let e = r.extent();
            crate::error::log2_exact(e, || format!("replica extent on {}", r.axis()))?;
            for b in 0..e.trailing_zeros() {
                let v = r
                    .stride()
                    .checked_mul(1i64 << b)
                    .ok_or_else(|| TritonError::TooLarge("replica stride".into()))?;
                claim(&mut claims, &Coord::on(*r.axis(), v), vec![0u64; rank])?;
            }
        }
        let mut dims = Vec::new();
        for (n, cl) in names.iter().zip(claims) {
            let mut bases = Vec::new();
            for (bit, c) in cl.into_iter().enumerate() {
                bases.push(c.ok_or_else(|| {
                    TritonError::NotExpressible(format!(
                        "{n} = {} holds no element; a linear layout places something at every input",
                        1u64 << bit
                    ))
                })?);
            }
            dims.push((n.clone(), bases));
        }
        let out: Vec<(String, u64)> = shape
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("dim{i}"), *s))
            .collect();
        let ll = LinearLayout::new(dims, out)?;
        ll.check_axe(&layout)?;
        Ok(ll)
    }
}
