//! CuTe layouts: a hierarchical shape and a congruent stride. A coordinate is mapped to
//! `Σ coordinate_k · stride_k` over the leaves; a flat index is first turned into a coordinate in
//! colexicographic order (the leftmost leaf fastest).

use std::fmt;
use std::str::FromStr;

use crate::error::{add, mul, overflow, overflow_in, CuteError, Result};
use crate::int_tuple::{IntTuple, MAX_DEPTH};
use crate::parse::Parser;

/// A CuTe layout `shape:stride`, e.g. `(4,(2,3)):(1,(4,8))`.
///
/// ```
/// use axe_cute::Layout;
/// let l: Layout = "(4,(2,3)):(1,(4,8))".parse()?;
/// assert_eq!((l.size(), l.cosize()?, l.rank(), l.depth()), (24, 24, 2, 2));
/// // Flat index 5 is coordinate (1,(1,0)) in colexicographic order: 1·1 + 1·4 = 5.
/// assert_eq!(l.idx2crd(5)?.to_string(), "(1,(1,0))");
/// assert_eq!(l.eval(5)?, 5);
/// assert_eq!(l.eval(9)?, 9 - 8 + 8);
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Layout {
    shape: IntTuple,
    stride: IntTuple,
    size: i64,
}

impl Layout {
    /// A layout from a shape and a congruent stride. Every extent is at least 1, the size fits in `i64`,
    /// nesting is at most [`MAX_DEPTH`], and a tuple shape has at least one mode.
    pub fn new(shape: IntTuple, stride: IntTuple) -> Result<Layout> {
        let size = check(&shape, &stride, 0).map_err(|e| match e {
            Check::Deep => CuteError::BadLayout(format!("nesting deeper than {MAX_DEPTH}")),
            Check::Incongruent => CuteError::BadLayout(format!(
                "shape {shape} and stride {stride} are not congruent"
            )),
            Check::Empty => CuteError::BadLayout(format!("shape {shape} has an empty tuple")),
            Check::Extent(e) => CuteError::BadLayout(format!(
                "extent {e} in shape {shape} (extents are at least 1)"
            )),
            Check::Overflow => overflow(format!(
                "computing the size of the shape {shape}: the product of its extents exceeds {}",
                i64::MAX
            )),
        })?;
        Ok(Layout {
            shape,
            stride,
            size,
        })
    }

    /// The one-mode layout `s:d`.
    pub fn int(s: i64, d: i64) -> Result<Layout> {
        Layout::new(IntTuple::Int(s), IntTuple::Int(d))
    }

    /// `shape` with compact column-major strides (CuTe's `make_layout(shape)`): the first leaf has stride 1.
    ///
    /// ```
    /// assert_eq!(axe_cute::Layout::compact(&axe_cute::parse_int_tuple("(2,(3,4))")?)?.to_string(),
    ///            "(2,(3,4)):(1,(2,6))");
    /// # Ok::<(), axe_cute::CuteError>(())
    /// ```
    pub fn compact(shape: &IntTuple) -> Result<Layout> {
        let mut acc = 1i64;
        let mut strides = Vec::new();
        for e in shape.leaves() {
            strides.push(acc);
            acc = acc
                .checked_mul(e)
                .ok_or_else(|| {
                    overflow(format!(
                        "computing the compact strides of {shape}: the product of its extents exceeds {}",
                        i64::MAX
                    ))
                })?;
        }
        Layout::new(shape.clone(), shape.with_leaves(&mut strides.into_iter()))
    }

    /// A layout from flat `(extent, stride)` leaves: `s:d` for one, `(s0,s1,..):(d0,d1,..)` for several,
    /// `1:0` for none.
    pub fn from_modes(modes: &[(i64, i64)]) -> Result<Layout> {
        match modes {
            [] => Layout::int(1, 0),
            [(s, d)] => Layout::int(*s, *d),
            _ => Layout::new(
                IntTuple::Tuple(modes.iter().map(|m| IntTuple::Int(m.0)).collect()),
                IntTuple::Tuple(modes.iter().map(|m| IntTuple::Int(m.1)).collect()),
            ),
        }
    }

    /// The layout whose mode `i` is `layouts[i]` (CuTe's `make_layout(L0, L1, ...)`).
    pub fn concat(layouts: &[Layout]) -> Result<Layout> {
        Layout::concat_owned(layouts.to_vec())
    }

    /// [`Layout::concat`] taking the modes by value (no copies of their trees).
    pub(crate) fn concat_owned(layouts: Vec<Layout>) -> Result<Layout> {
        let mut size = 1i64;
        let mut shapes = Vec::with_capacity(layouts.len());
        let mut strides = Vec::with_capacity(layouts.len());
        if layouts.is_empty() {
            return Err(CuteError::BadLayout("a layout of no modes".into()));
        }
        for l in layouts {
            if valid_depth(&l.shape) >= MAX_DEPTH {
                return Err(CuteError::BadLayout(format!(
                    "nesting deeper than {MAX_DEPTH}"
                )));
            }
            size = size.checked_mul(l.size).ok_or_else(|| {
                overflow(format!(
                    "computing the size of a layout of modes of sizes {size} and {}: it exceeds {}",
                    l.size,
                    i64::MAX
                ))
            })?;
            shapes.push(l.shape);
            strides.push(l.stride);
        }
        Ok(Layout {
            shape: IntTuple::Tuple(shapes),
            stride: IntTuple::Tuple(strides),
            size,
        })
    }

    /// The shape.
    pub fn shape(&self) -> &IntTuple {
        &self.shape
    }

    /// The stride.
    pub fn stride(&self) -> &IntTuple {
        &self.stride
    }

    /// Number of indices: the product of the shape.
    pub fn size(&self) -> i64 {
        self.size
    }

    /// One past the largest value the layout takes (`L(size−1)+1`, CuTe's `cosize`, when every stride is
    /// nonnegative); 1 + the sum of `(s−1)·d` over the leaves with `d > 0`.
    pub fn cosize(&self) -> Result<i64> {
        self.modes_flat()
            .into_iter()
            .filter(|m| m.1 > 0)
            .try_fold(1i64, |acc, (s, d)| add(acc, mul(s - 1, d)?))
            .map_err(|e| overflow_in(e, || format!("computing the cosize of {self}")))
    }

    /// The smallest value the layout takes (0 unless a stride is negative).
    pub fn min_value(&self) -> Result<i64> {
        self.modes_flat()
            .into_iter()
            .filter(|m| m.1 < 0)
            .try_fold(0i64, |acc, (s, d)| add(acc, mul(s - 1, d)?))
            .map_err(|e| overflow_in(e, || format!("computing the smallest value of {self}")))
    }

    /// Number of top-level modes.
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    /// Nesting depth of the shape (0 for `s:d`).
    pub fn depth(&self) -> usize {
        self.shape.depth()
    }

    /// Mode `i` as a layout (`s:d` is its own mode 0).
    pub fn mode(&self, i: usize) -> Result<Layout> {
        match (self.shape.mode(i), self.stride.mode(i)) {
            // A mode of a valid layout is valid; its size is the product of its leaves.
            (Some(s), Some(d)) => Ok(Layout {
                size: tree_size(s),
                shape: s.clone(),
                stride: d.clone(),
            }),
            _ => Err(CuteError::RankMismatch(format!(
                "mode {i} of a rank-{} layout",
                self.rank()
            ))),
        }
    }

    /// The top-level modes, taken apart without copying (`s:d` is its own only mode).
    pub fn into_modes(self) -> Vec<Layout> {
        match (self.shape, self.stride) {
            (IntTuple::Tuple(s), IntTuple::Tuple(d)) => s
                .into_iter()
                .zip(d)
                .map(|(shape, stride)| Layout {
                    size: tree_size(&shape),
                    shape,
                    stride,
                })
                .collect(),
            (shape, stride) => vec![Layout {
                size: tree_size(&shape),
                shape,
                stride,
            }],
        }
    }

    /// The top-level modes.
    pub fn modes(&self) -> Result<Vec<Layout>> {
        (0..self.rank()).map(|i| self.mode(i)).collect()
    }

    /// The leaves as `(extent, stride)` pairs, leftmost (fastest) first.
    pub fn modes_flat(&self) -> Vec<(i64, i64)> {
        let mut out = Vec::with_capacity(8);
        push_leaves(&self.shape, &self.stride, &mut out);
        out
    }

    /// The layout with its leaves as top-level modes (CuTe's `flatten`).
    pub fn flatten(&self) -> Result<Layout> {
        let m = self.modes_flat();
        if m.len() == 1 && matches!(self.shape, IntTuple::Int(_)) {
            return Ok(self.clone());
        }
        Layout::new(
            IntTuple::Tuple(m.iter().map(|x| IntTuple::Int(x.0)).collect()),
            IntTuple::Tuple(m.iter().map(|x| IntTuple::Int(x.1)).collect()),
        )
    }

    /// `L(i)` for a flat index `i ≥ 0`: `i` written colexicographically in the leaves' radix, each
    /// digit times its stride. Past the size the last leaf runs on, as CuTe evaluates it: its digit is
    /// whatever is left of `i` after the other leaves (`(4,1):(1,0)` at 4 is 0, `4:1` at 4 is 4).
    /// Negative indices are errors.
    pub fn eval(&self, i: i64) -> Result<i64> {
        if i < 0 {
            return Err(CuteError::IndexOutOfRange {
                index: i,
                size: self.size,
            });
        }
        let context = || format!("evaluating {self} at index {i}");
        if i >= self.size {
            return eval_modes(&self.modes_flat(), i).map_err(|e| overflow_in(e, context));
        }
        let (mut rest, mut acc) = (i, 0i64);
        eval_tree(&self.shape, &self.stride, &mut rest, &mut acc)
            .map_err(|e| overflow_in(e, context))?;
        Ok(acc)
    }

    /// The value at a coordinate, which may be hierarchical (congruent to the shape) or coarser: an
    /// integer where the shape has a tuple is that mode's flat index. Same as [`crd2idx`].
    pub fn eval_coord(&self, coord: &IntTuple) -> Result<i64> {
        crd2idx(coord, &self.shape, &self.stride)
    }

    /// The coordinate (congruent to the shape) of flat index `i ≥ 0` (CuTe's `idx2crd`); past the size
    /// the last leaf's component runs on.
    pub fn idx2crd(&self, i: i64) -> Result<IntTuple> {
        if i < 0 {
            return Err(CuteError::IndexOutOfRange {
                index: i,
                size: self.size,
            });
        }
        Ok(idx2crd(i, &self.shape))
    }

    /// Every value, in flat index order, or [`CuteError::TooLarge`] past `limit` points.
    pub fn values(&self, limit: i64) -> Result<Vec<i64>> {
        if self.size > limit {
            return Err(CuteError::TooLarge(format!(
                "{} points to enumerate (limit {limit})",
                self.size
            )));
        }
        let modes = self.modes_flat();
        let mut out = vec![0i64];
        for (s, d) in modes {
            let prev = out.clone();
            for k in 1..s {
                let off = mul(k, d)?;
                for &v in &prev {
                    out.push(add(v, off)?);
                }
            }
        }
        Ok(out)
    }

    /// The printed form with every integer static (`(_4,_2):(_1,_4)`), as CuTe prints `Int<N>`.
    pub fn to_static_string(&self) -> String {
        format!(
            "{}:{}",
            self.shape.to_static_string(),
            self.stride.to_static_string()
        )
    }
}

/// The depth of a tree already known to be at most [`MAX_DEPTH`] deep (bounded recursion).
fn valid_depth(t: &IntTuple) -> usize {
    match t {
        IntTuple::Int(_) => 0,
        IntTuple::Tuple(v) => 1 + v.iter().map(valid_depth).max().unwrap_or(0),
    }
}

/// The product of the leaves of a subtree of a valid shape (at most the layout's size, so no overflow).
fn tree_size(t: &IntTuple) -> i64 {
    match t {
        IntTuple::Int(s) => *s,
        IntTuple::Tuple(v) => v.iter().map(tree_size).product(),
    }
}

enum Check {
    Deep,
    Incongruent,
    Empty,
    Extent(i64),
    Overflow,
}

/// One pass over shape and stride: congruence, extents ≥ 1, no empty tuple, depth ≤ [`MAX_DEPTH`]
/// (never recursing past it), and the size.
fn check(shape: &IntTuple, stride: &IntTuple, depth: usize) -> std::result::Result<i64, Check> {
    match (shape, stride) {
        (IntTuple::Int(s), IntTuple::Int(_)) => {
            if *s < 1 {
                Err(Check::Extent(*s))
            } else {
                Ok(*s)
            }
        }
        (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
            if depth >= MAX_DEPTH {
                return Err(Check::Deep);
            }
            if a.len() != b.len() {
                return Err(Check::Incongruent);
            }
            if a.is_empty() {
                return Err(Check::Empty);
            }
            let mut size = 1i64;
            for (x, y) in a.iter().zip(b) {
                let s = check(x, y, depth + 1)?;
                size = size.checked_mul(s).ok_or(Check::Overflow)?;
            }
            Ok(size)
        }
        _ => Err(Check::Incongruent),
    }
}

fn push_leaves(shape: &IntTuple, stride: &IntTuple, out: &mut Vec<(i64, i64)>) {
    match (shape, stride) {
        (IntTuple::Int(s), IntTuple::Int(d)) => out.push((*s, *d)),
        (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
            a.iter().zip(b).for_each(|(x, y)| push_leaves(x, y, out));
        }
        _ => {}
    }
}

/// Adds `digit·stride` for each leaf, digits of `rest` taken colexicographically (no allocation).
fn eval_tree(shape: &IntTuple, stride: &IntTuple, rest: &mut i64, acc: &mut i64) -> Result<()> {
    match (shape, stride) {
        (IntTuple::Int(s), IntTuple::Int(d)) => {
            *acc = add(*acc, mul(*rest % s, *d)?)?;
            *rest /= s;
        }
        (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
            for (x, y) in a.iter().zip(b) {
                eval_tree(x, y, rest, acc)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Colex evaluation of flat leaves at `i` (the caller bounds `i`; the last leaf absorbs any excess).
pub(crate) fn eval_modes(modes: &[(i64, i64)], mut i: i64) -> Result<i64> {
    let mut v = 0i64;
    for (k, &(s, d)) in modes.iter().enumerate() {
        let digit = if k + 1 == modes.len() { i } else { i % s };
        v = add(v, mul(digit, d)?)?;
        if k + 1 < modes.len() {
            i /= s;
        }
    }
    Ok(v)
}

/// The coordinate of flat index `i` over `shape`, colexicographic; the outermost leaf absorbs any excess.
pub fn idx2crd(i: i64, shape: &IntTuple) -> IntTuple {
    let leaves = shape.leaves();
    let mut rest = i;
    let mut digits = Vec::with_capacity(leaves.len());
    for (k, s) in leaves.iter().enumerate() {
        if k + 1 == leaves.len() {
            digits.push(rest);
        } else {
            digits.push(rest % s);
            rest /= s;
        }
    }
    shape.with_leaves(&mut digits.into_iter())
}

/// `Σ coord_k · stride_k` for a coordinate into `shape` (CuTe's `crd2idx`). An integer coordinate where
/// the shape has a tuple is that mode's colexicographic flat index; every component must lie in its
/// range.
///
/// ```
/// use axe_cute::{crd2idx, parse_int_tuple as p};
/// assert_eq!(crd2idx(&p("(1,(1,2))")?, &p("(4,(2,3))")?, &p("(1,(4,8))")?)?, 1 + 4 + 16);
/// assert_eq!(crd2idx(&p("(1,3)")?, &p("(4,(2,3))")?, &p("(1,(4,8))")?)?, 1 + 4 + 8);
/// assert!(crd2idx(&p("(4,0)")?, &p("(4,(2,3))")?, &p("(1,(4,8))")?).is_err());
/// # Ok::<(), axe_cute::CuteError>(())
/// ```
pub fn crd2idx(coord: &IntTuple, shape: &IntTuple, stride: &IntTuple) -> Result<i64> {
    let bad = || CuteError::BadCoord {
        coord: coord.to_string(),
        shape: shape.to_string(),
    };
    match (coord, shape, stride) {
        (IntTuple::Int(c), IntTuple::Int(s), IntTuple::Int(d)) => {
            if *c < 0 || c >= s {
                return Err(bad());
            }
            mul(*c, *d)
        }
        (IntTuple::Int(c), IntTuple::Tuple(_), _) => {
            let size = shape.product()?;
            if *c < 0 || *c >= size {
                return Err(bad());
            }
            let modes: Vec<(i64, i64)> = shape.leaves().into_iter().zip(stride.leaves()).collect();
            eval_modes(&modes, *c)
        }
        (IntTuple::Tuple(cs), IntTuple::Tuple(ss), IntTuple::Tuple(ds)) => {
            if cs.len() != ss.len() || ds.len() != ss.len() {
                return Err(bad());
            }
            let mut v = 0i64;
            for ((c, s), d) in cs.iter().zip(ss).zip(ds) {
                v = add(v, crd2idx(c, s, d).map_err(|_| bad())?)?;
            }
            Ok(v)
        }
        _ => Err(bad()),
    }
}

pub(crate) fn parse_layout(p: &mut Parser<'_>) -> Result<Layout> {
    let start = p.pos();
    let shape = p.int_tuple()?;
    let layout = if p.eat(':') {
        let stride = p.int_tuple()?;
        Layout::new(shape, stride)
    } else {
        Layout::compact(&shape)
    };
    layout.map_err(|e| match e {
        CuteError::BadLayout(m) => p.err(start, m),
        CuteError::Overflow(m) => p.err(start, format!("integer overflow while {m}")),
        other => other,
    })
}

impl FromStr for Layout {
    type Err = CuteError;

    /// Parses `shape:stride` (or a shape alone, with compact strides).
    fn from_str(s: &str) -> Result<Layout> {
        let mut p = Parser::new(s);
        let l = parse_layout(&mut p)?;
        p.end()?;
        Ok(l)
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.shape.write(f, false)?;
        f.write_str(":")?;
        self.stride.write(f, false)
    }
}
