//! Layouts with scaled-basis strides, CuTe's `E<m>`: `(4,8):(1@0,1@1)` maps an index to a coordinate
//! `(i % 4, i / 4)` rather than to an offset (CuTe's identity and coordinate layouts).

use std::fmt;
use std::str::FromStr;

use crate::compose::composition;
use crate::error::{add, mul, CuteError, Result};
use crate::fit::MAX_CHECK;
use crate::int_tuple::IntTuple;
use crate::layout::Layout;
use crate::parse::Parser;

/// The most basis directions (`@0` … `@7`).
const MAX_DIMS: usize = 8;

/// A layout whose stride leaves are scaled basis vectors `k@m` (`k·e_m`) or `0`: its value at an index
/// is a coordinate of `dims` integers.
///
/// ```
/// use axe_cute::BasisLayout;
/// let id: BasisLayout = "(4,8):(1@0,1@1)".parse()?;
/// assert_eq!(id.eval(13)?, vec![1, 3]);
/// let r = id.compose(&"(2,4):(4,1)".parse()?)?;   // columns first, then rows
/// assert_eq!(r.to_string(), "(2,4):(1@1,1@0)");
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BasisLayout {
    /// One plain layout per direction, all with the same shape: component `m` of the value.
    parts: Vec<Layout>,
}

impl BasisLayout {
    /// The number of coordinate components.
    pub fn dims(&self) -> usize {
        self.parts.len()
    }

    /// The shape.
    pub fn shape(&self) -> &IntTuple {
        self.parts[0].shape()
    }

    /// The domain size.
    pub fn size(&self) -> i64 {
        self.parts[0].size()
    }

    /// The coordinate at flat index `i ≥ 0` (past the size the last leaf runs on).
    pub fn eval(&self, i: i64) -> Result<Vec<i64>> {
        self.parts.iter().map(|p| p.eval(i)).collect()
    }

    /// `self ∘ B` for a plain `B`.
    ///
    /// **Law**: `R(c) = self(B(c))` for every `c ∈ [0, size(B))` (as vectors), `size(R) = size(B)`,
    /// with the shape of the plain composition. Computed by encoding each vector stride as one integer
    /// in a radix larger than any component the result can take, composing, decoding the strides, and
    /// checking every index (up to [`MAX_CHECK`]); a result whose strides are not single basis vectors
    /// is [`CuteError::Unsupported`].
    pub fn compose(&self, b: &Layout) -> Result<BasisLayout> {
        const OP: &str = "composition";
        if b.size() > MAX_CHECK {
            return Err(CuteError::TooLarge(format!(
                "{} points to check in {self} ∘ {b}",
                b.size()
            )));
        }
        // Every component of a value A(x), x < cosize(B), and of any stride of the result is at most
        // Σ |k|·max(x) in magnitude; the radix exceeds twice that.
        let reach = b.cosize()?;
        let mut bound = 0i64;
        for p in &self.parts {
            for (_, d) in p.modes_flat() {
                bound = add(bound, mul(d.abs(), reach)?)?;
            }
        }
        let radix = add(mul(bound, 2)?, 1)?;
        let mut weight = 1i64;
        let mut weights = Vec::with_capacity(self.dims());
        for _ in 0..self.dims() {
            weights.push(weight);
            weight = mul(weight, radix).map_err(|_| {
                CuteError::TooLarge(format!("{self} ∘ {b}: the strides do not fit one integer"))
            })?;
        }
        let mut enc = Vec::new();
        for v in self.stride_leaves() {
            let mut x = 0i64;
            for (c, w) in v.iter().zip(&weights) {
                x = add(x, mul(*c, *w)?)?;
            }
            enc.push(x);
        }
        let shape = self.shape();
        let encoded = Layout::new(shape.clone(), shape.with_leaves(&mut enc.into_iter()))?;
        let r = composition(&encoded, b)?;
        // Decode each stride in balanced digits.
        let flat = r.modes_flat();
        let mut comps = vec![Vec::with_capacity(flat.len()); self.dims()];
        for &(_, d) in &flat {
            let mut rest = d;
            for comp in comps.iter_mut() {
                let mut digit = rest.rem_euclid(radix);
                if digit > bound {
                    digit -= radix;
                }
                comp.push(digit);
                rest = (rest - digit) / radix;
            }
            if rest != 0 {
                return Err(CuteError::Unsupported {
                    op: OP,
                    reason: format!("the stride {d} of {self} ∘ {b} does not decode"),
                });
            }
        }
        let parts = comps
            .into_iter()
            .map(|c| Layout::new(r.shape().clone(), r.shape().with_leaves(&mut c.into_iter())))
            .collect::<Result<Vec<_>>>()?;
        let out = BasisLayout { parts };
        for i in 0..b.size() {
            if out.eval(i)? != self.eval(b.eval(i)?)? {
                return Err(CuteError::Unsupported {
                    op: OP,
                    reason: format!("{self} ∘ {b}: the decoded result differs at index {i}"),
                });
            }
        }
        if out
            .stride_leaves()
            .iter()
            .any(|v| v.iter().filter(|x| **x != 0).count() > 1)
        {
            return Err(CuteError::Unsupported {
                op: OP,
                reason: format!("{self} ∘ {b} has a stride along several directions"),
            });
        }
        Ok(out)
    }

    /// Each leaf's stride as a vector.
    fn stride_leaves(&self) -> Vec<Vec<i64>> {
        let per: Vec<Vec<i64>> = self
            .parts
            .iter()
            .map(|p| p.modes_flat().into_iter().map(|m| m.1).collect())
            .collect();
        (0..per[0].len())
            .map(|k| per.iter().map(|c| c[k]).collect())
            .collect()
    }
}

fn parse_strides(
    p: &mut Parser<'_>,
    out: &mut Vec<(i64, usize)>,
    tree: &mut Vec<usize>,
) -> Result<IntTuple> {
    if p.eat('(') {
        p.enter()?;
        let mut v = vec![parse_strides(p, out, tree)?];
        while p.eat(',') {
            v.push(parse_strides(p, out, tree)?);
        }
        p.expect(')')?;
        p.leave();
        Ok(IntTuple::Tuple(v))
    } else {
        let at = p.pos();
        let k = p.int()?;
        let m = if p.eat('@') {
            let m = p.int()?;
            usize::try_from(m)
                .ok()
                .filter(|&m| m < MAX_DIMS)
                .ok_or_else(|| p.err(at, format!("a basis direction is 0..{MAX_DIMS}")))?
        } else if k == 0 {
            0
        } else {
            return Err(p.err(at, "a stride here is k@m (a scaled basis vector) or 0"));
        };
        tree.push(m);
        out.push((k, m));
        Ok(IntTuple::Int(0))
    }
}

impl FromStr for BasisLayout {
    type Err = CuteError;

    /// Parses `shape:stride` with stride leaves `k@m` or `0`.
    fn from_str(s: &str) -> Result<BasisLayout> {
        let mut p = Parser::new(s);
        let start = p.pos();
        let shape = p.int_tuple()?;
        p.expect(':')?;
        let mut leaves = Vec::new();
        let mut dirs = Vec::new();
        let tree = parse_strides(&mut p, &mut leaves, &mut dirs)?;
        p.end()?;
        let dims = leaves.iter().map(|l| l.1 + 1).max().unwrap_or(1);
        let parts = (0..dims)
            .map(|m| {
                let mut vals = leaves.iter().map(|&(k, d)| if d == m { k } else { 0 });
                Layout::new(shape.clone(), tree.with_leaves(&mut vals))
            })
            .collect::<Result<Vec<_>>>()
            .map_err(|e| p.err(start, e.to_string()))?;
        Ok(BasisLayout { parts })
    }
}

impl fmt::Display for BasisLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let leaves = self.stride_leaves();
        let text: Vec<String> = leaves
            .iter()
            .map(|v| {
                let nz: Vec<(usize, i64)> =
                    v.iter().copied().enumerate().filter(|x| x.1 != 0).collect();
                match nz.as_slice() {
                    [] => "0".to_string(),
                    [(m, k)] => format!("{k}@{m}"),
                    _ => {
                        let parts: Vec<String> =
                            nz.iter().map(|(m, k)| format!("{k}@{m}")).collect();
                        parts.join("+")
                    }
                }
            })
            .collect();
        let mut it = text.into_iter();
        let stride = write_tree(self.shape(), &mut it);
        write!(f, "{}:{stride}", self.shape())
    }
}

fn write_tree(t: &IntTuple, leaves: &mut impl Iterator<Item = String>) -> String {
    match t {
        IntTuple::Int(_) => leaves.next().unwrap_or_default(),
        IntTuple::Tuple(v) => {
            let inner: Vec<String> = v.iter().map(|x| write_tree(x, leaves)).collect();
            format!("({})", inner.join(","))
        }
    }
}
