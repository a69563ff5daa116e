//! A bounded view of a layout's replica set: at most [`MAX_REPLICAS`] distinct points, however many the
//! layout has, so that a picture of `R[1000000:1@dev]` costs what a picture of `R[2:1@dev]` does.

use axe_layout::{Coord, Layout};

use crate::error::{RenderError, Result};

/// The most distinct replica points a picture or explanation enumerates.
pub const MAX_REPLICAS: usize = 256;

/// Some of a layout's replica points.
#[derive(Clone, Debug)]
pub(crate) struct Replicas {
    /// Distinct replica points, sorted: all of them when `complete`, else a sample.
    pub points: Vec<Coord>,
    /// Whether `points` is the whole replica set.
    pub complete: bool,
    /// The lexicographically least replica point (the offset of the first copy of every element).
    pub least: Coord,
    /// The number of replica points counted with multiplicity (`Π e` over `R`, saturating).
    pub count: u64,
    /// The number of distinct replica points, when known without enumerating them (each axis moved by
    /// at most one iter with a non-zero stride), saturating.
    pub distinct: Option<u64>,
}

impl Replicas {
    /// Enumerates the replica set of `layout` up to [`MAX_REPLICAS`] distinct points.
    pub(crate) fn of(layout: &Layout) -> Result<Replicas> {
        let overflow = || RenderError::Layout("integer overflow enumerating replicas".into());
        let mut points = vec![Coord::zero()];
        let mut complete = true;
        let mut least = Coord::zero();
        let mut count: u64 = 1;
        for it in layout.replica() {
            count = count.saturating_mul(it.extent());
            // The least point is the sum of each iter's least contribution (iters are independent).
            let low = if it.stride() < 0 {
                i64::try_from(it.extent() - 1)
                    .ok()
                    .and_then(|e| e.checked_mul(it.stride()))
                    .ok_or_else(overflow)?
            } else {
                0
            };
            least.add_on(it.axis(), low)?;
            let distinct = if it.stride() == 0 { 1 } else { it.extent() };
            let mut next = Vec::with_capacity(MAX_REPLICAS);
            'fill: for p in &points {
                for y in 0..distinct {
                    if next.len() == MAX_REPLICAS {
                        complete = false;
                        break 'fill;
                    }
                    let v = i64::try_from(y)
                        .ok()
                        .and_then(|y| y.checked_mul(it.stride()))
                        .ok_or_else(overflow)?;
                    let mut q = p.clone();
                    q.add_on(it.axis(), v)?;
                    next.push(q);
                }
            }
            next.sort();
            next.dedup();
            points = next;
        }
        let moving: Vec<_> = layout
            .replica()
            .iter()
            .filter(|it| it.stride() != 0)
            .collect();
        let one_per_axis = moving
            .iter()
            .enumerate()
            .all(|(i, it)| moving[..i].iter().all(|o| o.axis() != it.axis()));
        let distinct = if complete {
            Some(points.len() as u64)
        } else {
            one_per_axis.then(|| {
                moving
                    .iter()
                    .fold(1u64, |p, it| p.saturating_mul(it.extent()))
            })
        };
        Ok(Replicas {
            points,
            complete,
            least,
            count,
            distinct,
        })
    }

    /// Whether every element is held more than once (at more than one point).
    pub(crate) fn several(&self) -> bool {
        self.points.len() > 1
    }

    /// How often every element is held: "3 times", or "at least 256 times (1000000 replica points
    /// counted with multiplicity)" when the set is too large to count.
    pub(crate) fn times(&self) -> String {
        match self.distinct {
            Some(n) => format!("{n} times"),
            None => format!(
                "at least {} times ({} replica points counted with multiplicity)",
                self.points.len(),
                self.count
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn of(l: &str) -> Replicas {
        Replicas::of(&l.parse().unwrap()).unwrap()
    }

    #[test]
    fn small_sets_are_exact_and_match_the_layout() {
        for l in [
            "S[2:1] + R[2:1@dev]",
            "S[2:1] + R[(2,3):(1@dev,-2@dev)]",
            "S[2:1] + R[(2,2):(1@dev,1@dev)]",
            "S[2:1] + R[(4,2):(0@dev,1@gpu)]",
            "S[2:1]",
        ] {
            let layout: Layout = l.parse().unwrap();
            let r = of(l);
            assert!(r.complete, "{l}");
            assert_eq!(r.points, layout.replica_points().unwrap(), "{l}");
            assert_eq!(Some(&r.least), r.points.first(), "{l}");
        }
    }

    #[test]
    fn large_sets_are_sampled() {
        let r = of("S[2:1] + R[1000000:1@dev]");
        assert!(!r.complete);
        assert_eq!(r.points.len(), MAX_REPLICAS);
        assert_eq!(r.count, 1_000_000);
        assert_eq!(r.distinct, Some(1_000_000));
        assert_eq!(r.times(), "1000000 times");
        let r = of("S[2:1] + R[(1000000,1000000,1000000):(-1@dev,1@gpu,0@dev)]");
        assert!(!r.complete && r.points.len() <= MAX_REPLICAS);
        assert_eq!(
            r.least.get(&axe_layout::Axis::new("dev").unwrap()),
            -999_999
        );
        assert_eq!(r.count, 1_000_000_000_000_000_000);
        assert_eq!(r.distinct, Some(1_000_000_000_000));
        let r = of("S[2:1] + R[(1000,1000):(1@dev,1@dev)]");
        assert_eq!(r.distinct, None);
        assert!(r.times().starts_with("at least 256 times"));
        // Zero strides add no points.
        let r = of("S[2:1] + R[1000000:0@dev]");
        assert!(r.complete && !r.several());
    }
}
