//! Coordinates: sparse vectors in Z^axes.
//!
//! A [`Coord`] maps axis → integer with every absent axis meaning 0. It is kept normalized (sorted by axis,
//! no zero entries), so structural equality is equality of vectors.

use std::fmt;

use crate::axis::Axis;
use crate::error::{overflow, Result};

/// A point of the axis space, e.g. `{lane: 5, warp: 9, m: 1}`.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Coord(Vec<(Axis, i64)>);

impl Coord {
    /// The origin (every component 0).
    pub fn zero() -> Coord {
        Coord(Vec::new())
    }

    /// `v` on `axis`, 0 elsewhere.
    pub fn on(axis: Axis, v: i64) -> Coord {
        let mut c = Coord::zero();
        if v != 0 {
            c.0.push((axis, v));
        }
        c
    }

    /// The component on `axis` (0 when absent).
    pub fn get(&self, axis: &Axis) -> i64 {
        self.0
            .binary_search_by(|(a, _)| a.cmp(axis))
            .map_or(0, |i| self.0[i].1)
    }

    /// Whether every component is 0.
    pub fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// The non-zero components, sorted by axis.
    pub fn components(&self) -> impl Iterator<Item = (&Axis, i64)> {
        self.0.iter().map(|(a, v)| (a, *v))
    }

    /// Adds `v` on `axis` (checked).
    pub fn add_on(&mut self, axis: &Axis, v: i64) -> Result<()> {
        if v == 0 {
            return Ok(());
        }
        match self.0.binary_search_by(|(a, _)| a.cmp(axis)) {
            Ok(i) => {
                let s = self.0[i]
                    .1
                    .checked_add(v)
                    .ok_or_else(|| overflow("adding coordinates"))?;
                if s == 0 {
                    self.0.remove(i);
                } else {
                    self.0[i].1 = s;
                }
            }
            Err(i) => self.0.insert(i, (*axis, v)),
        }
        Ok(())
    }

    /// Component-wise sum (checked).
    pub fn checked_add(&self, other: &Coord) -> Result<Coord> {
        let mut out = self.clone();
        for (a, v) in other.components() {
            out.add_on(a, v)?;
        }
        Ok(out)
    }

    /// Component-wise difference (checked).
    pub fn checked_sub(&self, other: &Coord) -> Result<Coord> {
        let mut out = self.clone();
        for (a, v) in other.components() {
            out.add_on(
                a,
                v.checked_neg()
                    .ok_or_else(|| overflow("negating a coordinate"))?,
            )?;
        }
        Ok(out)
    }

    /// Hadamard product with a per-axis factor (`factor(axis)`), checked.
    pub fn scaled(&self, factor: impl Fn(&Axis) -> i64) -> Result<Coord> {
        let mut out = Coord::zero();
        for (a, v) in self.components() {
            let s = v
                .checked_mul(factor(a))
                .ok_or_else(|| overflow("scaling a coordinate"))?;
            out.add_on(a, s)?;
        }
        Ok(out)
    }

    /// Builds a coordinate from (axis, value) pairs, summing repeated axes.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a Axis, i64)>) -> Result<Coord> {
        let mut c = Coord::zero();
        for (a, v) in pairs {
            c.add_on(a, v)?;
        }
        Ok(c)
    }
}

/// Coordinates order as integer tuples over the union of their axes in axis order (absent axes are 0),
/// so `{gpu: 0, m: 1} < {gpu: 1, m: 1}` and `{m: -1} < {} < {m: 1}`.
///
/// One walk over both sorted component lists, allocating nothing: an axis held by one side only is
/// non-zero there (coordinates keep no zero components), so it decides the order at once.
impl Ord for Coord {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        use std::cmp::Ordering::{Equal, Greater, Less};
        let (mut a, mut b) = (self.0.iter().peekable(), other.0.iter().peekable());
        loop {
            let order = match (a.peek(), b.peek()) {
                (None, None) => return Equal,
                (Some(&&(_, x)), None) => x.cmp(&0),
                (None, Some(&&(_, y))) => 0.cmp(&y),
                (Some(&&(p, x)), Some(&&(q, y))) => match p.cmp(&q) {
                    Less => x.cmp(&0),
                    Greater => 0.cmp(&y),
                    Equal => {
                        a.next();
                        b.next();
                        x.cmp(&y)
                    }
                },
            };
            // A component one side lacks is non-zero, so only a shared axis can leave the order open.
            if order != Equal {
                return order;
            }
        }
    }
}

impl PartialOrd for Coord {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Coord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (a, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{a}: {v}")?;
        }
        f.write_str("}")
    }
}

impl fmt::Debug for Coord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    /// A coordinate of values in -2..=2 on some of four axes.
    fn coord() -> impl Strategy<Value = Coord> {
        proptest::collection::vec((0usize..4, -2i64..=2), 0..6).prop_map(|pairs| {
            let axes = ["m", "lane", "warp", "gpu"].map(|n| Axis::new(n).unwrap());
            Coord::from_pairs(pairs.iter().map(|&(a, v)| (&axes[a], v))).unwrap()
        })
    }

    proptest! {
        /// As the definition: the integer tuples over the union of both coordinates' axes, in axis
        /// order, compared lexicographically.
        #[test]
        fn orders_as_tuples_over_the_union_of_axes(a in coord(), b in coord()) {
            let mut axes: Vec<Axis> = a.components().chain(b.components()).map(|(x, _)| *x).collect();
            axes.sort();
            axes.dedup();
            let tuple = |c: &Coord| axes.iter().map(|x| c.get(x)).collect::<Vec<i64>>();
            prop_assert_eq!(a.cmp(&b), tuple(&a).cmp(&tuple(&b)));
            prop_assert_eq!(a.cmp(&b) == std::cmp::Ordering::Equal, a == b);
        }
    }
}
