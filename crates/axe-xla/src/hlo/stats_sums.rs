//! Where the cost report adds up values: the sums of the values held in memory, the values of a
//! computation counted per shape, and the list of the most padded tensors.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use super::stats::Totals;
use super::stats_shapes::Info;
use crate::error::Result;

/// Where the sizes of values held in memory add up: per memory space, in all, and (for the values of
/// the entry computation) the entry's.
pub(super) struct Held<'s> {
    pub(super) spaces: &'s mut BTreeMap<i64, Totals>,
    pub(super) materialized: &'s mut Totals,
    pub(super) entry: Option<&'s mut Totals>,
}

impl Held<'_> {
    /// Adds `t`, sizes in memory space `space`, to each sum.
    pub(super) fn add(&mut self, space: i64, t: &Totals) -> Result<()> {
        self.spaces.entry(space).or_default().add(t)?;
        self.materialized.add(t)?;
        if let Some(entry) = self.entry.as_deref_mut() {
            entry.add(t)?;
        }
        Ok(())
    }
}

/// The values of one computation (or of the part of it a chunk holds) counted per shape id: how many,
/// and how many of them are held in memory, to be multiplied out at its end.
#[derive(Default)]
pub(super) struct Counts {
    /// Per shape id: the values counted, and those of them held.
    counts: Vec<[u64; 2]>,
    /// The ids counted, in the order first counted.
    counted: Vec<usize>,
}

impl Counts {
    /// No values counted, with room for the shape ids below `n`.
    pub(super) fn with_room(n: usize) -> Counts {
        Counts {
            counts: vec![[0, 0]; n],
            counted: Vec::new(),
        }
    }

    /// Counts a value of shape `id`, `held` in memory or not.
    pub(super) fn bump(&mut self, id: usize, held: bool) {
        if self.counts.len() <= id {
            self.counts.resize(id + 1, [0, 0]);
        }
        if self.counts[id] == [0, 0] {
            self.counted.push(id);
        }
        self.counts[id][0] += 1;
        self.counts[id][1] += u64::from(held);
    }

    /// Adds the values counted, each shape's sizes (`infos`) times its count, to `total`, and those
    /// held to `held`; then no values are counted.
    pub(super) fn multiply_out(
        &mut self,
        infos: &[Info],
        total: &mut Totals,
        mut held: Held<'_>,
    ) -> Result<()> {
        for id in self.counted.drain(..) {
            let [all, kept] = std::mem::take(&mut self.counts[id]);
            for (_, space, t) in &infos[id].leaves {
                total.add(&t.times(all)?)?;
                if kept > 0 {
                    held.add(*space, &t.times(kept)?)?;
                }
            }
        }
        Ok(())
    }
}

/// The `top` most padded leaves offered, each kept as a `T` the caller makes; one that cannot make
/// the list is never made.
pub(super) struct TopPadded<T> {
    top: usize,
    /// Least padded first: (padding, reverse order offered, index into `kept`).
    heap: BinaryHeap<Reverse<(i64, usize, usize)>>,
    kept: Vec<T>,
    /// How many padded leaves were offered.
    seen: usize,
}

impl<T: Copy> TopPadded<T> {
    /// None offered yet, for a list of `top`.
    pub(super) fn new(top: usize) -> TopPadded<T> {
        TopPadded {
            top,
            heap: BinaryHeap::with_capacity(top.saturating_add(1).min(1 << 16)),
            kept: Vec::new(),
            seen: 0,
        }
    }

    /// Offers the padded leaves of `leaves` (a shape's, in order) that `keep` takes (by their
    /// position among [`Shape::arrays`], the first of each leaf): `make(leaf, order, sizes)` makes
    /// what is kept of one that makes the list so far, `leaf` its position in `leaves`, `order` its
    /// place among the padded leaves offered. Law: leaves `keep` refuses change nothing.
    ///
    /// [`Shape::arrays`]: crate::shape::Shape::arrays
    pub(super) fn offer_where(
        &mut self,
        leaves: &[(usize, i64, Totals)],
        keep: impl Fn(usize) -> bool,
        mut make: impl FnMut(usize, usize, &Totals) -> T,
    ) {
        for (leaf, (k, _, t)) in leaves.iter().enumerate() {
            let pad = t.padding_bytes();
            if pad <= 0 || !keep(*k) {
                continue;
            }
            let least = self.heap.peek().map(|w| w.0 .0);
            if self.heap.len() < self.top || least.is_some_and(|l| pad > l) {
                self.kept.push(make(leaf, self.seen, t));
                self.heap
                    .push(Reverse((pad, usize::MAX - self.seen, self.kept.len() - 1)));
                if self.heap.len() > self.top {
                    self.heap.pop();
                }
            }
            self.seen += 1;
        }
    }

    /// How many padded leaves were offered.
    pub(super) fn seen(&self) -> usize {
        self.seen
    }

    /// The list: most padded first; among equals, the first offered.
    pub(super) fn into_best(self) -> Vec<T> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|Reverse((_, _, k))| self.kept[k])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The top list against sorting every padded leaf offered: most padded first, among equals
        /// the first offered, `top` of them; leaves without padding never offered.
        #[test]
        fn the_top_list_is_the_most_padded_first_offered(
            shapes in proptest::collection::vec(proptest::collection::vec(-3i64..6, 0..4), 0..40),
            top in 1usize..8,
        ) {
            let mut list = TopPadded::new(top);
            let mut all = Vec::new();
            for (s, pads) in shapes.iter().enumerate() {
                let leaves: Vec<(usize, i64, Totals)> = pads
                    .iter()
                    .map(|&pad| (0, 0, Totals { physical_bytes: pad, ..Totals::default() }))
                    .collect();
                list.offer_where(&leaves, |_| true, |leaf, order, t| (t.padding_bytes(), order, s, leaf));
                for (leaf, &pad) in pads.iter().enumerate() {
                    if pad > 0 {
                        all.push((pad, all.len(), s, leaf));
                    }
                }
            }
            prop_assert_eq!(list.seen(), all.len());
            all.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            all.truncate(top);
            prop_assert_eq!(list.into_best(), all);
        }
    }
}
