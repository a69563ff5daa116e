//! Triton's `LinearLayout`: a linear map over GF(2) from named in-dims to named out-dims.
//!
//! Each in-dim of size `2^k` has `k` bases; a base is a vector of out-dim coordinates. The image of an input
//! is the XOR of the bases of its set bits: `L(x) = ⊕_{in-dims d} ⊕_{bit i of x_d} base_{d,i}`.
//! Out-dim sizes are powers of two and every base coordinate is below its out-dim's size.

use crate::error::{log2_exact, Result, TritonError};

/// Most in-bits or out-bits (all dims together) a layout may have.
pub const MAX_BITS: u32 = 62;
/// Most inputs [`LinearLayout::map`] enumerates.
pub const MAX_MAP: u64 = 1 << 22;

/// One in-dim: its name and its bases (base `i` is the image of input `2^i`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InDim {
    /// Name (`register`, `lane`, `warp`, `block`, `offset`, ...).
    pub name: String,
    /// Bases, each with one coordinate per out-dim.
    pub bases: Vec<Vec<u64>>,
}

/// A Triton linear layout. Build with [`LinearLayout::new`], which checks every invariant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinearLayout {
    in_dims: Vec<InDim>,
    out_dims: Vec<(String, u64)>,
}

/// Row-reduced set of vectors over GF(2), each tagged with the combination of inputs that makes it.
#[derive(Default)]
pub(crate) struct Echelon {
    rows: Vec<Option<(u64, u64)>>,
}

impl Echelon {
    pub(crate) fn new() -> Self {
        Echelon {
            rows: vec![None; 64],
        }
    }
    fn reduce(&self, mut v: u64, mut c: u64) -> (u64, u64) {
        while v != 0 {
            let lead = 63 - v.leading_zeros() as usize;
            match self.rows[lead] {
                Some((rv, rc)) => {
                    v ^= rv;
                    c ^= rc;
                }
                None => break,
            }
        }
        (v, c)
    }
    /// Adds `v` made by combination `c`; returns the kernel combination when `v` is dependent.
    pub(crate) fn insert(&mut self, v: u64, c: u64) -> Option<u64> {
        let (v, c) = self.reduce(v, c);
        if v == 0 {
            return Some(c);
        }
        let lead = 63 - v.leading_zeros() as usize;
        self.rows[lead] = Some((v, c));
        None
    }
    /// A combination whose vector is `t`, if `t` is in the span.
    pub(crate) fn solve(&self, t: u64) -> Option<u64> {
        let (v, c) = self.reduce(t, 0);
        (v == 0).then_some(c)
    }
    /// `v` with every lead bit of the set cleared: the smallest element of `v + span`.
    pub(crate) fn minimize(&self, v: u64) -> u64 {
        self.reduce(v, 0).0
    }
    pub(crate) fn rank(&self) -> u32 {
        self.rows.iter().filter(|r| r.is_some()).count() as u32
    }
}

impl LinearLayout {
    /// A layout from in-dims (name, bases) and out-dims (name, size). Errors when a name repeats, a size
    /// is not a power of two, a base has the wrong length or a coordinate beyond its out-dim, or the
    /// layout has more than [`MAX_BITS`] in-bits or out-bits.
    pub fn new(
        in_dims: Vec<(String, Vec<Vec<u64>>)>,
        out_dims: Vec<(String, u64)>,
    ) -> Result<Self> {
        let mut out_bits = 0u32;
        for (i, (name, size)) in out_dims.iter().enumerate() {
            if out_dims[..i].iter().any(|(n, _)| n == name) {
                return Err(TritonError::Invalid(format!(
                    "out-dim `{name}` is named twice"
                )));
            }
            out_bits += log2_exact(*size, || format!("the size of out-dim `{name}`"))?;
        }
        if out_bits > MAX_BITS {
            return Err(TritonError::TooLarge(format!(
                "{out_bits} out-bits (at most {MAX_BITS})"
            )));
        }
        let mut in_bits = 0usize;
        for (i, (name, bases)) in in_dims.iter().enumerate() {
            if in_dims[..i].iter().any(|(n, _)| n == name) {
                return Err(TritonError::Invalid(format!(
                    "in-dim `{name}` is named twice"
                )));
            }
            in_bits += bases.len();
            for (b, base) in bases.iter().enumerate() {
                if base.len() != out_dims.len() {
                    return Err(TritonError::Invalid(format!(
                        "base {b} of in-dim `{name}` has {} coordinates, but there are {} out-dims",
                        base.len(),
                        out_dims.len()
                    )));
                }
                for (v, (oname, size)) in base.iter().zip(&out_dims) {
                    if v >= size {
                        return Err(TritonError::Invalid(format!(
                            "base {b} of in-dim `{name}` has {oname} = {v}, beyond its size {size}"
                        )));
                    }
                }
            }
        }
        if in_bits > MAX_BITS as usize {
            return Err(TritonError::TooLarge(format!(
                "{in_bits} in-bits (at most {MAX_BITS})"
            )));
        }
        let in_dims = in_dims
            .into_iter()
            .map(|(name, bases)| InDim { name, bases })
            .collect();
        Ok(LinearLayout { in_dims, out_dims })
    }

    /// The identity on the given dims: in-dim `d` maps onto out-dim `d` bit for bit.
    pub fn identity(dims: &[(String, u64)]) -> Result<Self> {
        let mut in_dims = Vec::new();
        for (k, (name, size)) in dims.iter().enumerate() {
            let bits = log2_exact(*size, || format!("the size of dim `{name}`"))?;
            let bases = (0..bits)
                .map(|i| {
                    (0..dims.len())
                        .map(|j| if j == k { 1u64 << i } else { 0 })
                        .collect()
                })
                .collect();
            in_dims.push((name.clone(), bases));
        }
        LinearLayout::new(in_dims, dims.to_vec())
    }

    /// The in-dims, in order.
    pub fn in_dims(&self) -> &[InDim] {
        &self.in_dims
    }
    /// The out-dims (name, size), in order.
    pub fn out_dims(&self) -> &[(String, u64)] {
        &self.out_dims
    }
    /// `(name, size)` of every in-dim, size `2^(number of bases)`.
    pub fn in_dim_sizes(&self) -> Vec<(String, u64)> {
        self.in_dims
            .iter()
            .map(|d| (d.name.clone(), 1u64 << d.bases.len()))
            .collect()
    }
    /// Total number of in-bits.
    pub fn in_bits(&self) -> u32 {
        self.in_dims.iter().map(|d| d.bases.len() as u32).sum()
    }
    /// Total number of out-bits.
    pub fn out_bits(&self) -> u32 {
        self.out_dims.iter().map(|(_, s)| s.trailing_zeros()).sum()
    }
    /// Number of inputs, `2^in_bits`.
    pub fn in_size(&self) -> u64 {
        1u64 << self.in_bits()
    }
    /// Number of outputs, `2^out_bits`.
    pub fn out_size(&self) -> u64 {
        1u64 << self.out_bits()
    }

    /// Out coordinates packed into one integer, the first out-dim in the lowest bits.
    pub(crate) fn pack_out(&self, coords: &[u64]) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        for (c, (_, size)) in coords.iter().zip(&self.out_dims) {
            v |= c << shift;
            shift += size.trailing_zeros();
        }
        v
    }
    pub(crate) fn unpack_out(&self, mut v: u64) -> Vec<u64> {
        self.out_dims
            .iter()
            .map(|(_, size)| {
                let c = v & (size - 1);
                v >>= size.trailing_zeros();
                c
            })
            .collect()
    }
    /// Splits a flat input (first in-dim lowest) into one value per in-dim.
    pub(crate) fn unpack_in(&self, mut x: u64) -> Vec<u64> {
        self.in_dims
            .iter()
            .map(|d| {
                let n = d.bases.len() as u32;
                let c = x & ((1u64 << n) - 1);
                x >>= n;
                c
            })
            .collect()
    }
    /// The packed image of every in-bit, in flat order.
    pub(crate) fn columns(&self) -> Vec<u64> {
        self.in_dims
            .iter()
            .flat_map(|d| d.bases.iter().map(|b| self.pack_out(b)))
            .collect()
    }

    /// `L(x)`: the XOR of the bases of the set bits of each in-dim's value. `inputs` has one value per
    /// in-dim; a value beyond its in-dim's size is an error.
    pub fn apply(&self, inputs: &[u64]) -> Result<Vec<u64>> {
        if inputs.len() != self.in_dims.len() {
            return Err(TritonError::Mismatch(format!(
                "{} input values for {} in-dims",
                inputs.len(),
                self.in_dims.len()
            )));
        }
        let mut acc = vec![0u64; self.out_dims.len()];
        for (x, d) in inputs.iter().zip(&self.in_dims) {
            if *x >> d.bases.len() != 0 {
                return Err(TritonError::Invalid(format!(
                    "input {x} is beyond in-dim `{}` of size {}",
                    d.name,
                    1u64 << d.bases.len()
                )));
            }
            for (i, base) in d.bases.iter().enumerate() {
                if x >> i & 1 == 1 {
                    for (a, b) in acc.iter_mut().zip(base) {
                        *a ^= b;
                    }
                }
            }
        }
        Ok(acc)
    }

    /// `L` at a flat input, the first in-dim in the lowest bits (fastest).
    pub fn apply_flat(&self, x: u64) -> Result<Vec<u64>> {
        if x >= self.in_size() {
            return Err(TritonError::Invalid(format!(
                "flat input {x} is beyond {}",
                self.in_size()
            )));
        }
        self.apply(&self.unpack_in(x))
    }

    /// `map[k] = L(k)` for every flat input `k` (first in-dim fastest); at most [`MAX_MAP`] inputs.
    pub fn map(&self) -> Result<Vec<Vec<u64>>> {
        if self.in_size() > MAX_MAP {
            return Err(TritonError::TooLarge(format!(
                "{} inputs to list (at most {MAX_MAP})",
                self.in_size()
            )));
        }
        let cols = self.columns();
        let mut out = Vec::with_capacity(self.in_size() as usize);
        let mut v = 0u64;
        for k in 0..self.in_size() {
            if k > 0 {
                // Gray-code-free incremental XOR: flip the bits that changed from k-1 to k.
                let changed = k ^ (k - 1);
                for (i, c) in cols.iter().enumerate() {
                    if changed >> i & 1 == 1 {
                        v ^= c;
                    }
                }
            }
            out.push(self.unpack_out(v));
        }
        Ok(out)
    }

    fn echelon(&self) -> (Echelon, Vec<u64>) {
        let mut e = Echelon::new();
        let mut kernel = Vec::new();
        for (i, c) in self.columns().into_iter().enumerate() {
            if let Some(k) = e.insert(c, 1u64 << i) {
                kernel.push(k);
            }
        }
        (e, kernel)
    }

    /// Injective: distinct inputs have distinct images (the bases are linearly independent).
    pub fn is_injective(&self) -> bool {
        self.echelon().1.is_empty()
    }

    /// Surjective: every output `< out-dim sizes` is the image of some input (the bases span).
    pub fn is_surjective(&self) -> bool {
        self.echelon().0.rank() == self.out_bits()
    }

    /// The in-dims' names, comma-separated (for errors).
    fn in_dim_list(&self) -> String {
        let names: Vec<&str> = self.in_dims.iter().map(|d| d.name.as_str()).collect();
        names.join(", ")
    }

    /// The out-dims' names, comma-separated (for errors).
    fn out_dim_list(&self) -> String {
        let names: Vec<&str> = self.out_dims.iter().map(|(n, _)| n.as_str()).collect();
        names.join(", ")
    }

    /// Triton's `A.compose(B)`: `B` after `A`, `(A.compose(B))(x) = B(A(x))`. `A`'s out-dims must be `B`'s
    /// in-dims (by name, any order) with `A`'s out size at most `B`'s in size. The result has `A`'s in-dims
    /// and `B`'s out-dims.
    pub fn compose(&self, outer: &LinearLayout) -> Result<LinearLayout> {
        if self.out_dims.len() != outer.in_dims.len() {
            return Err(TritonError::Mismatch(format!(
                "{} out-dims ({}) feed {} in-dims ({})",
                self.out_dims.len(),
                self.out_dim_list(),
                outer.in_dims.len(),
                outer.in_dim_list()
            )));
        }
        let mut position = Vec::new();
        for (name, size) in &self.out_dims {
            let j = outer
                .in_dims
                .iter()
                .position(|d| &d.name == name)
                .ok_or_else(|| {
                    TritonError::Mismatch(format!(
                        "out-dim `{name}` is not an in-dim of the outer layout (its in-dims: {})",
                        outer.in_dim_list()
                    ))
                })?;
            let outer_size = 1u64 << outer.in_dims[j].bases.len();
            if *size > outer_size {
                return Err(TritonError::Mismatch(format!(
                    "out-dim `{name}` has size {size}, the outer in-dim only {outer_size}"
                )));
            }
            position.push(j);
        }
        let mut in_dims = Vec::new();
        for d in &self.in_dims {
            let mut bases = Vec::new();
            for b in &d.bases {
                let mut inputs = vec![0u64; outer.in_dims.len()];
                for (v, j) in b.iter().zip(&position) {
                    inputs[*j] = *v;
                }
                bases.push(outer.apply(&inputs)?);
            }
            in_dims.push((d.name.clone(), bases));
        }
        LinearLayout::new(in_dims, outer.out_dims.clone())
    }

    /// Triton's `A.invertAndCompose(B)`: the `C` with `A(x) = B(C(x))` for every `x`, from `A`'s in-dims to
    /// `B`'s in-dims. `A` and `B` have the same out-dim names, `B` is surjective and each of its out-dims is
    /// at least `A`'s. Where `B` is not injective, `C(x)` is the smallest preimage (flat, first in-dim
    /// lowest) of `A(x)`, except Triton's broadcasting rule: an in-dim that both layouts have with the
    /// same bases, whose image meets the other in-dims' image only in zero (in both), maps to itself, and
    /// the other in-dims are solved without it — unless that leaves some `A(x)` unreached (in-dims that
    /// share names with out-dims, as in an XOR swizzle over `dim0`/`dim1`), when every in-dim is solved.
    pub fn invert_and_compose(&self, outer: &LinearLayout) -> Result<LinearLayout> {
        if self.out_dims.len() != outer.out_dims.len() {
            return Err(TritonError::Mismatch(format!(
                "{} out-dims ({}) against {} ({})",
                self.out_dims.len(),
                self.out_dim_list(),
                outer.out_dims.len(),
                outer.out_dim_list()
            )));
        }
        let mut position = Vec::new();
        for (name, size) in &self.out_dims {
            let j = outer
                .out_dims
                .iter()
                .position(|(n, _)| n == name)
                .ok_or_else(|| {
                    TritonError::Mismatch(format!(
                        "out-dim `{name}` is not an out-dim of the outer layout (its out-dims: {})",
                        outer.out_dim_list()
                    ))
                })?;
            if *size > outer.out_dims[j].1 {
                return Err(TritonError::Mismatch(format!(
                    "out-dim `{name}` has size {size}, the outer layout's only {}",
                    outer.out_dims[j].1
                )));
            }
            position.push(j);
        }
        let (full, _) = outer.echelon();
        if full.rank() != outer.out_bits() {
            return Err(TritonError::NotSurjective(format!(
                "its bases span 2^{} of the 2^{} outputs",
                full.rank(),
                outer.out_bits()
            )));
        }
        // Triton's broadcasting rule: an in-dim both layouts have with identical bases maps to itself,
        // and the rest is solved without it.
        // The rule applies when, in both layouts, the in-dim's image meets the other in-dims' image only
        // in zero.
        let separate = |l: &LinearLayout, name: &str| {
            let (mut all, mut own, mut rest) = (Echelon::new(), Echelon::new(), Echelon::new());
            for d in &l.in_dims {
                for b in &d.bases {
                    let v = l.pack_out(b);
                    all.insert(v, 0);
                    if d.name == name {
                        own.insert(v, 0)
                    } else {
                        rest.insert(v, 0)
                    };
                }
            }
            all.rank() == own.rank() + rest.rank()
        };
        let mut identity_dims = Vec::new();
        for d in &self.in_dims {
            let same = outer
                .in_dims
                .iter()
                .any(|o| o.name == d.name && o.bases == d.bases);
            if same
                && position.iter().enumerate().all(|(i, j)| i == *j)
                && separate(self, &d.name)
                && separate(outer, &d.name)
            {
                identity_dims.push(d.name.clone());
            }
        }
        match self.solve_onto(outer, &position, &identity_dims) {
            // The broadcasting rule is a preference: where keeping those in-dims fixed leaves a target
            // unreached (e.g. an XOR swizzle whose in-dims share the out-dims' names), solve without it.
            Err(TritonError::NotSurjective(_)) if !identity_dims.is_empty() => {
                self.solve_onto(outer, &position, &[])
            }
            other => other,
        }
    }

    /// `C` with `self(x) = outer(C(x))`: the in-dims named in `identity_dims` map to themselves, every
    /// other in-bit to the smallest preimage reached without them. `position[i]` is the outer out-dim of
    /// out-dim `i`.
    fn solve_onto(
        &self,
        outer: &LinearLayout,
        position: &[usize],
        identity_dims: &[String],
    ) -> Result<LinearLayout> {
        let identical = |d: &InDim| {
            identity_dims
                .contains(&d.name)
                .then(|| outer.in_dims.iter().position(|o| o.name == d.name))
                .flatten()
        };
        let mut skip = 0u64;
        let mut offset = 0u32;
        let mut starts = Vec::new();
        for o in &outer.in_dims {
            starts.push(offset);
            if identity_dims.contains(&o.name) {
                skip |= ((1u64 << o.bases.len()) - 1) << offset;
            }
            offset += o.bases.len() as u32;
        }
        let mut echelon = Echelon::new();
        let mut free = Echelon::new();
        for (i, c) in outer.columns().into_iter().enumerate() {
            if skip >> i & 1 == 0 {
                if let Some(k) = echelon.insert(c, 1u64 << i) {
                    free.insert(k, 0);
                }
            }
        }
        let outer_in = outer.in_dim_sizes();
        let mut in_dims = Vec::new();
        for d in &self.in_dims {
            let mut bases = Vec::new();
            if let Some(k) = identical(d) {
                for i in 0..d.bases.len() {
                    bases.push(outer.unpack_in(1u64 << (starts[k] + i as u32)));
                }
                in_dims.push((d.name.clone(), bases));
                continue;
            }
            for b in &d.bases {
                let mut coords = vec![0u64; outer.out_dims.len()];
                for (v, j) in b.iter().zip(position) {
                    coords[*j] = *v;
                }
                let target = outer.pack_out(&coords);
                let combo = echelon.solve(target).ok_or_else(|| {
                    let at: Vec<String> = coords.iter().map(u64::to_string).collect();
                    TritonError::NotSurjective(format!(
                        "({}) is not reached by the in-dims that differ between the two layouts",
                        at.join(", ")
                    ))
                })?;
                bases.push(outer.unpack_in(free.minimize(combo)));
            }
            in_dims.push((d.name.clone(), bases));
        }
        LinearLayout::new(in_dims, outer_in)
    }

    /// Triton's `pseudoinvert`: a `B` from the out-dims to the in-dims with `A(B(y)) = y` for every output
    /// `y`; needs `A` surjective. `B(y)` is the smallest preimage of `y`; for a bijection `B = A⁻¹`.
    pub fn pseudoinvert(&self) -> Result<LinearLayout> {
        LinearLayout::identity(&self.out_dims)?.invert_and_compose(self)
    }

    /// The inverse of a bijective layout: `A⁻¹(A(x)) = x` and `A(A⁻¹(y)) = y`.
    pub fn invert(&self) -> Result<LinearLayout> {
        let (_, kernel) = self.echelon();
        if let Some(k) = kernel.first() {
            let at = |v: &[u64]| -> String {
                let parts: Vec<String> = self
                    .in_dims
                    .iter()
                    .zip(v)
                    .map(|(d, x)| format!("{}={x}", d.name))
                    .collect();
                format!("({})", parts.join(", "))
            };
            let x = self.unpack_in(*k);
            return Err(TritonError::NotInjective(format!(
                "inputs {} and {} have the same image",
                at(&x),
                at(&vec![0; x.len()])
            )));
        }
        self.pseudoinvert()
    }
}
