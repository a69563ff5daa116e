//! Hierarchical integer tuples: CuTe's `IntTuple`, the type of shapes, strides and coordinates.

use std::fmt;

use crate::error::{mul, Result};

/// The deepest nesting accepted anywhere (parsing and construction), so recursion stays bounded.
pub const MAX_DEPTH: usize = 64;

/// An integer or a tuple of `IntTuple`s, e.g. `(4,(2,3))`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum IntTuple {
    /// A leaf.
    Int(i64),
    /// A tuple of any length (the empty tuple `()` is allowed as a value, not as a layout shape).
    Tuple(Vec<IntTuple>),
}

impl IntTuple {
    /// Number of top-level modes: 1 for an integer, the length for a tuple.
    pub fn rank(&self) -> usize {
        match self {
            IntTuple::Int(_) => 1,
            IntTuple::Tuple(v) => v.len(),
        }
    }

    /// Nesting depth: 0 for an integer, `1 + max depth of the elements` for a tuple (1 for `()`).
    /// Computed without recursion, so any tree can be measured before it is walked.
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self, 0usize)];
        while let Some((t, d)) = stack.pop() {
            if let IntTuple::Tuple(v) = t {
                deepest = deepest.max(d + 1);
                stack.extend(v.iter().map(|c| (c, d + 1)));
            }
        }
        deepest
    }

    /// The leaves, left to right.
    pub fn leaves(&self) -> Vec<i64> {
        let mut out = Vec::new();
        self.collect_leaves(&mut out);
        out
    }

    fn collect_leaves(&self, out: &mut Vec<i64>) {
        match self {
            IntTuple::Int(x) => out.push(*x),
            IntTuple::Tuple(v) => v.iter().for_each(|t| t.collect_leaves(out)),
        }
    }

    /// The product of the leaves (checked); 1 for `()`.
    pub fn product(&self) -> Result<i64> {
        self.leaves().into_iter().try_fold(1i64, mul)
    }

    /// Mode `i` (an integer is its own mode 0).
    pub fn mode(&self, i: usize) -> Option<&IntTuple> {
        match self {
            IntTuple::Int(_) if i == 0 => Some(self),
            IntTuple::Int(_) => None,
            IntTuple::Tuple(v) => v.get(i),
        }
    }

    /// Whether `self` and `other` have the same tree (both integers, or tuples of equal length whose
    /// elements are congruent).
    pub fn congruent(&self, other: &IntTuple) -> bool {
        match (self, other) {
            (IntTuple::Int(_), IntTuple::Int(_)) => true,
            (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.congruent(y))
            }
            _ => false,
        }
    }

    /// The same tree with the leaves replaced, left to right, by `leaves` (which must have enough).
    pub(crate) fn with_leaves(&self, leaves: &mut impl Iterator<Item = i64>) -> IntTuple {
        match self {
            IntTuple::Int(_) => IntTuple::Int(leaves.next().unwrap_or(0)),
            IntTuple::Tuple(v) => {
                IntTuple::Tuple(v.iter().map(|t| t.with_leaves(leaves)).collect())
            }
        }
    }

    /// The printed form with every integer written as CuTe writes a static one (`_4`).
    pub fn to_static_string(&self) -> String {
        let mut s = String::new();
        // Writing into a String cannot fail.
        let _ = self.write(&mut s, true);
        s
    }

    pub(crate) fn write(&self, out: &mut impl fmt::Write, underscore: bool) -> fmt::Result {
        match self {
            IntTuple::Int(x) => {
                if underscore {
                    out.write_char('_')?;
                }
                write!(out, "{x}")
            }
            IntTuple::Tuple(v) => {
                out.write_char('(')?;
                for (i, t) in v.iter().enumerate() {
                    if i > 0 {
                        out.write_char(',')?;
                    }
                    t.write(out, underscore)?;
                }
                out.write_char(')')
            }
        }
    }
}

impl From<i64> for IntTuple {
    fn from(x: i64) -> Self {
        IntTuple::Int(x)
    }
}

impl fmt::Display for IntTuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, false)
    }
}
