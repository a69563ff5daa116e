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
impl Ord for Coord {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let mut axes: Vec<&Axis> = self.0.iter().chain(&other.0).map(|(a, _)| a).collect();
        axes.sort();
        axes.dedup();
        axes.into_iter()
            .map(|a| self.get(a).cmp(&other.get(a)))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
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
