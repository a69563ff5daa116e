//! A copy of a box between two shard buffers ([`crate::radix`]) cut into pieces whose offset tables
//! stay short whatever the extents.
//!
//! Copying a box between two such buffers (or between one and a row-major message) goes in pieces,
//! each an `axe-relayout` call over [`TensorLayout`]s built for the piece alone. A dimension shorter than
//! [`SPLIT_MIN`] is one table. A longer one is walked ([`stretches`]): from each position, the longest
//! stretch that, on both sides, crosses no carry out of the digit of some iter level (place value `p`:
//! the product of the extents inside it) into the digits outside it. Over such a stretch each side's
//! offset is `off(start) + S·(x div q) + G(x mod q)` for `q = lcm(p_a, p_b)` (at most [`FACTOR_MAX`]),
//! wherever the stretch starts within a tile — `G` tables one period from the start, carries into the
//! digit included — so its
//! `m·q` indices are tabled as the row-major factors `(m1, m2, q)` with `m1·m2` near `m` split at its
//! square root (a tail of fewer than `m2` blocks is its own stretch): `O(√m + q)` entries for `m·q`
//! elements. Stretches too short to gain from factors are joined into plain ones of at most
//! [`SPLIT_MIN`] indices. The same elements land at the same slots (a row-major split of an index
//! changes no element), so the bytes moved are those of the whole box; the work is one step per tile
//! boundary the walk crosses plus the bytes, the memory `O(√n + q)` per piece and dimension.

use std::ops::Range;

use axe_relayout::split::{FACTOR_MAX, SPLIT_MIN};
use axe_relayout::TensorLayout;

use crate::exec_error::{dims_text, region_text, ExecError, ExecResult};
use crate::radix::{Radix, ShardLayout};

/// The walk's thresholds: dimensions shorter than `split_min` are one table, and so are plain
/// stretches at most; a factored stretch's innermost factor is at most `q_max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    pub split_min: u64,
    pub q_max: u64,
}

impl Limits {
    /// [`SPLIT_MIN`] and [`FACTOR_MAX`], as `axe-relayout` splits its own tensors.
    pub(crate) const DEFAULT: Limits = Limits {
        split_min: SPLIT_MIN,
        q_max: FACTOR_MAX,
    };
}

/// A stretch of a box along one dimension: box-relative indices `at..at + Π factors`, tabled as the
/// row-major `factors` (outermost first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stretch {
    /// The first index, relative to the box.
    pub at: u64,
    /// The factors its indices are tabled as.
    pub factors: Vec<u64>,
}

/// The levels a stretch starting at index `u` of a dimension may follow: per iter, its place value
/// `p` (the product of the extents inside it) and the indices left before the digit outside it
/// carries (unbounded for the outermost). Over indices `u..u + room`, `off(u + x) = off(u + x mod p)`
/// plus a stride times `x div p` more steps of that digit, for `x` counted in whole `p`s past any
/// start: the digits outside stay put, the digit itself does not wrap.
fn levels(r: &Radix, u: u64) -> Vec<(u64, u64)> {
    let places = r.places();
    if places.is_empty() {
        return vec![(1, u64::MAX)];
    }
    places
        .iter()
        .enumerate()
        .map(|(j, &p)| match j {
            0 => (p, u64::MAX),
            _ => (p, places[j - 1] - u % places[j - 1]),
        })
        .collect()
}

/// A divisor of `m` between half its square root and its square root (the largest), looking at no
/// more than 2^16 candidates: `m` then splits exactly into two factors near its root.
fn root_divisor(m: u64) -> Option<u64> {
    let r = m.isqrt();
    (r / 2 + 1..=r)
        .rev()
        .take(1 << 16)
        .find(|&h| h > 1 && m.is_multiple_of(h))
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Cuts `n` indices of one dimension, starting at index `a` of radix `ra` and at `b` of `rb`, into
/// stretches each side can table as their factors (see the module doc). Shorter than [`SPLIT_MIN`]:
/// one plain stretch.
pub(crate) fn stretches(
    ra: &Radix,
    a: u64,
    rb: &Radix,
    b: u64,
    n: u64,
    lim: Limits,
) -> Vec<Stretch> {
    let Limits { split_min, q_max } = lim;
    if n < split_min {
        return vec![Stretch {
            at: 0,
            factors: vec![n],
        }];
    }
    let mut out = Vec::new();
    let mut plain = 0u64; // where the plain stretch being gathered starts
    let mut x = 0u64;
    let flush = |out: &mut Vec<Stretch>, from: u64, to: u64| {
        if to > from {
            out.push(Stretch {
                at: from,
                factors: vec![to - from],
            });
        }
    };
    while x < n {
        let rest = n - x;
        let (mut len, mut q) = (0u64, 1u64);
        let lb = levels(rb, b + x);
        for (pa, room_a) in levels(ra, a + x) {
            for &(pb, room_b) in &lb {
                let l = (pa / gcd(pa, pb)).checked_mul(pb);
                let Some(l) = l.filter(|&l| l <= q_max) else {
                    continue;
                };
                let run = rest.min(room_a).min(room_b) / l * l;
                if run > len || (run == len && l < q) {
                    (len, q) = (run, l);
                }
            }
        }
        let len = len.max(1);
        if len >= split_min && len / q >= 2 {
            flush(&mut out, plain, x);
            let m = len / q;
            let m2 = root_divisor(m).unwrap_or_else(|| m.isqrt().max(1));
            let m1 = m / m2;
            let body = m1 * m2 * q;
            let keep = |f: [u64; 3]| f.into_iter().filter(|&v| v > 1).collect::<Vec<_>>();
            out.push(Stretch {
                at: x,
                factors: keep([m1, m2, q]),
            });
            if body < len {
                out.push(Stretch {
                    at: x + body,
                    factors: keep([1, (len - body) / q, q]),
                });
            }
            x += len;
            plain = x;
        } else {
            if x + len - plain > split_min {
                flush(&mut out, plain, x);
                plain = x;
            }
            x += len;
        }
    }
    flush(&mut out, plain, n);
    for s in &mut out {
        if s.factors.is_empty() {
            s.factors.push(1);
        }
    }
    out
}

/// A copy of the box `ra` of one buffer to the box `rb` of another (local indices, equal extents) as
/// pieces: per dimension its stretches, every combination of them one piece.
pub(crate) struct Pieces<'a> {
    a: &'a ShardLayout,
    b: &'a ShardLayout,
    starts: (Vec<u64>, Vec<u64>),
    per_dim: Vec<Vec<Stretch>>,
}

impl<'a> Pieces<'a> {
    /// The pieces of a copy of `ra` in `a` to `rb` in `b`; an error where a box leaves its shape or the
    /// extents differ.
    pub(crate) fn new(
        a: &'a ShardLayout,
        ra: &[Range<u64>],
        b: &'a ShardLayout,
        rb: &[Range<u64>],
    ) -> ExecResult<Pieces<'a>> {
        Self::with_limits(a, ra, b, rb, Limits::DEFAULT)
    }

    /// [`Pieces::new`] with the walk's thresholds `lim`.
    pub(crate) fn with_limits(
        a: &'a ShardLayout,
        ra: &[Range<u64>],
        b: &'a ShardLayout,
        rb: &[Range<u64>],
        lim: Limits,
    ) -> ExecResult<Pieces<'a>> {
        for (l, r) in [(a, ra), (b, rb)] {
            let inside = r.len() == l.shape.len()
                && l.dims.len() == r.len()
                && r.iter()
                    .zip(&l.shape)
                    .all(|(r, &d)| r.start <= r.end && r.end <= d);
            if !inside {
                return Err(ExecError::Plan(format!(
                    "the local box {} leaves the buffer's shape {}",
                    region_text(r),
                    dims_text(&l.shape)
                )));
            }
        }
        let ext: Vec<u64> = ra.iter().map(|r| r.end - r.start).collect();
        if rb.iter().zip(&ext).any(|(r, &e)| r.end - r.start != e) {
            return Err(ExecError::Plan(format!(
                "the boxes {} and {} differ in extents",
                region_text(ra),
                region_text(rb)
            )));
        }
        let per_dim = if ext.contains(&0) {
            Vec::new()
        } else {
            (0..ext.len())
                .map(|i| {
                    stretches(
                        &a.dims[i],
                        ra[i].start,
                        &b.dims[i],
                        rb[i].start,
                        ext[i],
                        lim,
                    )
                })
                .collect()
        };
        Ok(Pieces {
            a,
            b,
            starts: (
                ra.iter().map(|r| r.start).collect(),
                rb.iter().map(|r| r.start).collect(),
            ),
            per_dim,
        })
    }

    /// How many pieces (0 for an empty box).
    pub(crate) fn count(&self) -> u64 {
        if self.per_dim.is_empty() && !self.starts.0.is_empty() {
            return 0;
        }
        self.per_dim
            .iter()
            .fold(1u64, |p, s| p.saturating_mul(s.len() as u64))
    }

    /// Offset-table entries the pieces build on both sides together.
    pub(crate) fn entries(&self) -> u64 {
        let mut total = 0u64;
        for (i, s) in self.per_dim.iter().enumerate() {
            let others: u64 = self
                .per_dim
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .fold(1u64, |p, (_, s)| p.saturating_mul(s.len() as u64));
            let mine: u64 = s.iter().map(|s| s.factors.iter().sum::<u64>()).sum();
            total = total.saturating_add(mine.saturating_mul(others).saturating_mul(2));
        }
        total
    }

    /// Whether the pieces, taken in order, follow the box's row-major order: only one dimension has
    /// several stretches, and every dimension before it has extent 1.
    pub(crate) fn in_order(&self) -> bool {
        match self.per_dim.iter().position(|s| s.len() > 1) {
            None => true,
            Some(i) => {
                self.per_dim[i + 1..].iter().all(|s| s.len() == 1)
                    && self.per_dim[..i]
                        .iter()
                        .all(|s| s.iter().all(|s| s.factors.iter().product::<u64>() == 1))
            }
        }
    }

    /// Offset-table entries the largest piece builds on both sides together (what one copy holds).
    pub(crate) fn largest(&self) -> u64 {
        self.per_dim
            .iter()
            .map(|s| {
                s.iter()
                    .map(|s| s.factors.iter().sum::<u64>())
                    .max()
                    .unwrap_or(0)
            })
            .fold(0u64, u64::saturating_add)
            .saturating_mul(2)
    }

    /// Calls `f` with the layouts of each piece in the two buffers.
    pub(crate) fn each(
        &self,
        mut f: impl FnMut(&TensorLayout, &TensorLayout) -> ExecResult<()>,
    ) -> ExecResult<()> {
        if self.count() == 0 {
            return Ok(());
        }
        let n = self.per_dim.len();
        let mut pick = vec![0usize; n];
        loop {
            let chosen: Vec<&Stretch> = (0..n).map(|i| &self.per_dim[i][pick[i]]).collect();
            let ta = piece(self.a, &self.starts.0, &chosen)?;
            let tb = piece(self.b, &self.starts.1, &chosen)?;
            f(&ta, &tb)?;
            let mut k = n;
            loop {
                if k == 0 {
                    return Ok(());
                }
                k -= 1;
                pick[k] += 1;
                if pick[k] < self.per_dim[k].len() {
                    break;
                }
                pick[k] = 0;
            }
        }
    }
}

/// The layout of one piece of a buffer: per dimension the stretch `chosen[i]` of the box starting at
/// `start[i]`, its indices tabled as the stretch's factors.
fn piece(l: &ShardLayout, start: &[u64], chosen: &[&Stretch]) -> ExecResult<TensorLayout> {
    let mut dims = Vec::new();
    let mut tables = Vec::new();
    let mut base = 0i64;
    for ((r, &s), st) in l.dims.iter().zip(start).zip(chosen) {
        let u0 = s + st.at;
        let o0 = r.offset(u0);
        base = base.wrapping_add(o0);
        let mut place: u64 = st.factors.iter().product();
        for &f in &st.factors {
            place /= f.max(1);
            let mut t = Vec::new();
            t.try_reserve_exact(f as usize)
                .map_err(|_| ExecError::Input("a piece's offsets do not fit in memory".into()))?;
            t.extend((0..f).map(|y| r.offset(u0 + y * place).wrapping_sub(o0)));
            tables.push(t);
            dims.push(f);
        }
    }
    Ok(TensorLayout {
        dims,
        bits: l.bits,
        tables,
        replicas: l.replicas.iter().map(|r| r.wrapping_add(base)).collect(),
        slots: l.slots,
        dense: false,
        injective: true,
        padded: None,
        padded_slots: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::radix::tests::{indices, layouts};
    use axe_relayout::{relayout, Options};
    use proptest::prelude::*;

    proptest! {
        /// Copying a box between two buffers in pieces moves exactly the bytes an element-by-element
        /// copy moves (each element of the box from its slot to every copy's slot, nothing else), the
        /// stretches cover every index once, and no piece's table outgrows its bound.
        #[test]
        fn pieces_move_the_bytes_an_element_copy_moves(
            sa in prop::collection::vec(1u64..40, 1..3),
            grow in prop::collection::vec(0u64..12, 2),
            pick in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
            corner in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 2),
            ext in prop::collection::vec(any::<prop::sample::Index>(), 2),
            lim in (2u64..10, 1u64..17),
        ) {
            let rank = sa.len();
            let sb: Vec<u64> = sa.iter().zip(&grow).map(|(&d, &g)| d + g).collect();
            let (la, lb) = (layouts(&sa), layouts(&sb));
            let (a, _) = &la[pick.0.index(la.len())];
            let (b, _) = &lb[pick.1.index(lb.len())];
            // A box of `sa` and one of the same extents in `sb`.
            let e: Vec<u64> = (0..rank).map(|i| 1 + ext[i].index(sa[i] as usize) as u64).collect();
            let ra: Vec<Range<u64>> = (0..rank)
                .map(|i| {
                    let s = corner[i].0.index((sa[i] - e[i] + 1) as usize) as u64;
                    s..s + e[i]
                })
                .collect();
            let rb: Vec<Range<u64>> = (0..rank)
                .map(|i| {
                    let s = corner[i].1.index((sb[i] - e[i] + 1) as usize) as u64;
                    s..s + e[i]
                })
                .collect();
            let lim = Limits { split_min: lim.0, q_max: lim.1 };
            let p = Pieces::with_limits(a, &ra, b, &rb, lim).expect("pieces");
            for (i, st) in p.per_dim.iter().enumerate() {
                let mut next = 0;
                for s in st {
                    prop_assert_eq!(s.at, next);
                    let n: u64 = s.factors.iter().product();
                    next += n;
                    // Plain: at most the short dimension, or a stretch of at most the thresholds;
                    // factored: m1 + m2 for m = m1·m2 ≤ n (m2 ≤ r = ⌊√m⌋ and, from `root_divisor`,
                    // m2 > r/2, so m1 < 2(r + 1)): below three times the square root, and the period.
                    let entries: u64 = s.factors.iter().sum();
                    let plain = match e[i] < lim.split_min {
                        true => e[i],
                        false => lim.split_min.max(lim.q_max),
                    };
                    prop_assert!(
                        entries <= plain.max(3 * (n.isqrt() + 1) + lim.q_max),
                        "{:?}", s
                    );
                }
                prop_assert_eq!(next, e[i]);
            }
            let src: Vec<u8> = (0..a.bytes()).map(|i| (i % 251) as u8 + 1).collect();
            let mut got = vec![0u8; b.bytes() as usize];
            let opts = Options { zero_padding: false, threads: 1, ..Options::default() };
            p.each(|ta, tb| {
                relayout(&src, ta, &mut got, tb, &opts)?;
                Ok(())
            })
            .expect("copied");
            let mut want = vec![0u8; b.bytes() as usize];
            for x in indices(&e) {
                let xa: Vec<u64> = x.iter().zip(&ra).map(|(x, r)| x + r.start).collect();
                let xb: Vec<u64> = x.iter().zip(&rb).map(|(x, r)| x + r.start).collect();
                let v = src[a.offset(&xa) as usize];
                let base = b.offset(&xb) - b.replicas[0];
                for r in &b.replicas {
                    want[(base + r) as usize] = v;
                }
            }
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn a_stretch_whose_root_divisor_is_small_stays_within_three_roots() {
        // 33 = 11·3: its divisor 3 lies between half its square root and its square root, so the
        // factors sum to 14, more than twice the root (2·(5 + 1) = 12) and less than three times.
        let r = Radix {
            iters: vec![(33, 1)],
        };
        let lim = Limits {
            split_min: 2,
            q_max: 1,
        };
        let st = stretches(&r, 0, &r, 0, 33, lim);
        assert_eq!(st.len(), 1);
        assert_eq!(st[0].factors, vec![11, 3]);
        assert!(14 <= 3 * (33u64.isqrt() + 1) + lim.q_max);
    }

    #[test]
    fn a_long_odd_tiled_dimension_walks_its_tiles() {
        // 2^23 - 6 indices of a dimension tiled by 128 (T(8,128)'s columns), from index 5 of the
        // tiled side (inside its first tile) into a row-major one: whole periods of 128 from there,
        // factored, then the rest plain.
        let tiled = Radix {
            iters: vec![(1 << 16, 1024), (128, 1)],
        };
        let rows = Radix {
            iters: vec![(1 << 23, 1)],
        };
        let n = (1 << 23) - 1 - 5;
        let st = stretches(&tiled, 5, &rows, 0, n, Limits::DEFAULT);
        assert_eq!(st[0].at, 0);
        assert_eq!(st[0].factors.len(), 3);
        assert_eq!(st[0].factors.last(), Some(&128));
        let last = st.last().expect("stretches");
        assert_eq!(last.factors, [n % 128]);
        let covered: u64 = st.iter().map(|s| s.factors.iter().product::<u64>()).sum();
        assert_eq!(covered, n);
        let entries: u64 = st.iter().map(|s| s.factors.iter().sum::<u64>()).sum();
        assert!(st.len() <= 3 && entries < 1 << 12, "{st:?}");
        // Inside one tile of an inner level, a stretch stops at the tile's end.
        let nested = Radix {
            iters: vec![(1 << 10, 1 << 14), (1 << 7, 1), (1 << 7, 128)],
        };
        let st = stretches(&nested, 3 << 14, &rows, 0, 1 << 16, Limits::DEFAULT);
        let covered: u64 = st.iter().map(|s| s.factors.iter().product::<u64>()).sum();
        assert_eq!(covered, 1 << 16);
        // The same length with no tiles is one factored body and a short tail.
        let st = stretches(&rows, 0, &rows, 1, n, Limits::DEFAULT);
        assert!(st.len() <= 2 && st[0].factors.len() == 2, "{st:?}");
    }
}
